"""The module differential fuzzer (`tests/fuzz/module_fuzz.py`, rules and tolerances in its
docstring) as a test: a small sample of random module trees (shared instances, tied weights,
odd names, settings and attributes changed between calls, keyword-only arguments, strided
inputs, 1-3 threads) compiled and compared with eager PyTorch at every call."""

import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import module_fuzz  # noqa: E402

SEED, PROGRAMS = 31, 120


def test_module_programs_agree_with_eager():
    summary = module_fuzz.Summary()
    for i in range(PROGRAMS):
        summary.add(module_fuzz.fuzz_one(SEED, i))
    print(summary.text(SEED))
    assert torch.get_num_threads() == 1  # the fuzzer restores the thread count
    assert not summary.mismatches, summary.text(SEED)
    # The sample exercises the compiled path, not only the eager one.
    assert summary.compiled >= PROGRAMS // 2, summary.text(SEED)
    assert summary.calls >= PROGRAMS * 3


def test_the_oracle_rejects_wrong_results():
    x = torch.tensor([1.0, -0.0, float("nan"), 2.0])
    assert module_fuzz.compare(("value", x.clone()), ("value", x), exact=True) is None
    flipped = x.clone()
    flipped[1] = 0.0
    assert module_fuzz.compare(("value", flipped), ("value", x), exact=True)[0] == "bits"
    off = x.clone()
    off[3] = 2.001
    assert module_fuzz.compare(("value", off), ("value", x), exact=False)[0] == "value"
    assert module_fuzz.compare(("value", x), ("raise", RuntimeError("x")), exact=False)[0] == "outcome"
    assert module_fuzz.compare(("raise", ValueError("x")), ("raise", RuntimeError("x")), exact=False)[0] == \
        "exception-class"
