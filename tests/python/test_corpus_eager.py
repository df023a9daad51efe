"""Every native program of the reference's control-flow corpus
(`tests/conformance/control-flow.json`, 283 programs written by someone else) compiled and run
against the eager Python original: the oracle of `tests/tests/control_flow_corpus.rs` and
`tests/tests/end_to_end.rs`, which compare our optimized and unoptimized IR in our own executor.

A function is native when `rextio_torch.compile(fn, source=..., strict=True)` accepts it (the
cuda:0 slice is build-only and skipped). Each runs on the Rust tests' conventional arguments
(`conventional_args` in tests/src/lib.rs: weights `w*` [8, 8], other matrices [rows, 8],
vectors [8], N(0, 1) from `torch.manual_seed(seed * 100 + i)`, ints 3, floats 0.5, bools
True; seeds 1 and 2 with 8 and 3 rows) and on two more sets (1 row, int 0, float -1.25, bool
False; 5 rows, int 7, float 3.0, bool False). The comparison is the differential fuzzer's
(`tests/fuzz/difffuzz.py`, its docstring has the rules): eager's exception type, or eager's
dtype and shape and values within the float32 envelope of the program; both raising counts
only as eager raising the same type (never "both sides of our own executor agree"). A few
programs loop 10**12 times with an early `break` or not at all: an eager run longer than two
seconds is not compared."""

import inspect
import json
import math
import pathlib
import signal
import sys
import warnings

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import difffuzz  # noqa: E402

CORPUS = json.loads((ROOT / "tests/conformance/control-flow.json").read_text())
FEATURES = 8
# (seed, rows, int, float, bool): the Rust tests' two conventional sets, then two more
ARG_SETS = [(1, 8, 3, 0.5, True), (2, 3, 3, 0.5, True), (3, 1, 0, -1.25, False), (4, 5, 7, 3.0, False)]


def case_source(case: dict) -> str:
    """The module of one case, as `tests/tests/control_flow_corpus.rs` builds it."""
    header = CORPUS["module_header"]
    if case.get("source"):
        return f"{header}\n\n{case['source']}"
    body = "".join(f"    {line}\n" for line in (case.get("prelude", "").splitlines() + case.get("body", "").splitlines()))
    returns = f" -> {case['returns']}" if case.get("returns") else ""
    return f"{header}\n\ndef f({case.get('params', '')}){returns}:\n{body}"


def native_functions():
    """(case id, source, function name) of every function that compiles natively."""
    out = []
    for case in CORPUS["cases"]:
        source = case_source(case)
        namespace: dict = {}
        try:
            exec(compile(source, "<corpus>", "exec"), namespace)
        except Exception:  # noqa: BLE001 - a module that does not even run is not native
            continue
        for name, fn in namespace.items():
            if not inspect.isfunction(fn) or fn.__module__ != namespace.get("__name__"):
                continue
            annotations = [getattr(a, "__name__", str(a)) for a in fn.__annotations__.values()]
            if any("Cuda" in a for a in annotations):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    import rextio_torch

                    rextio_torch.compile(fn, source=source, strict=True)
            except Exception:  # noqa: BLE001 - refused or not a candidate
                continue
            out.append((case["id"], source, name, fn))
    return out


def conventional_args(fn, seed: int, rows: int, int_value: int, float_value: float, bool_value: bool) -> dict:
    args = {}
    for i, (name, p) in enumerate(inspect.signature(fn).parameters.items()):
        kind = getattr(p.annotation, "__name__", str(p.annotation))
        if kind in ("TensorF32Cpu2D", "TensorF32Cpu1D", "TensorI64Cpu1D"):
            shape = [FEATURES] if kind != "TensorF32Cpu2D" else [FEATURES if name.startswith("w") else rows, FEATURES]
            torch.manual_seed(seed * 100 + i)
            t = torch.randn(shape)
            args[name] = t.to(torch.int64) if kind == "TensorI64Cpu1D" else t
        elif kind == "int" or p.annotation is int:
            args[name] = int_value
        elif kind == "float" or p.annotation is float:
            args[name] = float_value
        elif kind == "bool" or p.annotation is bool:
            args[name] = bool_value
        elif "list" in str(p.annotation):
            args[name] = [1, 2, 3]
        else:
            raise AssertionError(f"{name}: unexpected annotation {p.annotation!r}")
    return args


class OverBudget(Exception):
    pass


def _alarm(signum, frame):
    raise OverBudget()


def within(seconds: float, thunk):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return thunk()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


NATIVE = native_functions()


def test_the_corpus_has_native_programs():
    # The Rust corpus test finds at least 90 native functions through the analysis.
    assert len(NATIVE) >= 90, len(NATIVE)


@pytest.mark.parametrize("case_id,source,name,fn", NATIVE, ids=[f"{c}:{n}" for c, _, n, _ in NATIVE])
def test_native_corpus_program_matches_eager(case_id, source, name, fn):
    compared = 0
    for seed, rows, i, x, b in ARG_SETS:
        values = conventional_args(fn, seed, rows, i, x, b)
        try:
            _, error = within(2.0, lambda: difffuzz._call(fn, difffuzz.materialize(values, [])))
        except OverBudget:
            error = OverBudget()
        if isinstance(error, OverBudget):
            continue  # an eager loop of 10**12 steps
        outcome = within(30.0, lambda: difffuzz.run_case(source, values, [], name))
        assert outcome.status in ("agree", "explained"), (
            f"{case_id}:{name} seed {seed}: {outcome.status} {outcome.kind}: {outcome.detail}"
        )
        compared += 1
    # range(10**12) and range(2**63) loops never end eagerly (ours raises OverflowError for 2**63)
    assert compared or case_id in ("for_range_huge_literal", "scalar_int_literal_overflow"), case_id


def test_both_raise_counts_only_eager_errors():
    """The oracle never counts our own error as agreement when eager returns."""
    src = difffuzz.HEADER + (
        "\n\ndef f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n"
        "    k = n * 4611686018427387904\n"
        "    if k > 0:\n"
        "        return x.relu()\n"
        "    return x.tanh()\n"
    )
    values = {"x": torch.ones(2, 2), "n": 4}
    outcome = difffuzz.run_case(src, values)
    # eager Python computes a big int; ours raises: a documented difference, not agreement
    assert outcome.status == "explained" and not outcome.both_raised, outcome
    assert "64-bit" in outcome.explanation
