"""Side-by-side benchmark of the control-flow families in one process: the seed's Phase B
(six cells) and the small-batch scoring pipeline (`score_labels`, batch 1/16/128; also
`score_logits` and `score_probabilities`). Eager runs under `torch.no_grad()`; ours is the
`rextio_torch.compile` callable. Same methodology as the Phase A harness
(rextio_torch.benchmark: boundary-inclusive, one thread, interleaved medians); every result
is checked against eager before timing, and compile time is reported.

    make bench-control-flow
"""

import argparse
import pathlib
import sys
import time

import torch

import rextio_torch
from rextio_torch.benchmark import geomean, interleaved_medians

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))
import control_flow_fixture as fx  # noqa: E402

PHASE_B_CELLS = fx.PHASE_B_CELLS
SCORING_CELLS = [("s1", 1), ("s16", 16), ("s128", 128)]
phase_b_args = fx.phase_b_args
scoring_args = fx.scoring_args


def no_grad(fn):
    def run(*args):
        with torch.no_grad():
            return fn(*args)

    return run


def compiled(fn):
    start = time.perf_counter()
    out = rextio_torch.compile(fn, strict=True)
    return out, (time.perf_counter() - start) * 1e3


def family(title, cells, eager, ours, make_args, check, rounds):
    print(f"\n{title}: medians in us per call (boundary-inclusive), eager = torch.no_grad()")
    print(f"{'cell':<5} {'eager':>10} {'rextio':>10} {'eager/rextio':>13}")
    ratios = []
    for cell in cells:
        name, *shape = cell
        args = make_args(*shape)
        check(ours(*args), eager(*args))
        medians = interleaved_medians({"eager": eager, "rextio": ours}, args, rounds=rounds)
        ratio = medians["eager"] / medians["rextio"]
        ratios.append(ratio)
        print(f"{name:<5} {medians['eager']:>10.2f} {medians['rextio']:>10.2f} {ratio:>12.2f}x")
    print(f"geomean {geomean(ratios):.2f}x, slowest cell {min(ratios):.2f}x")
    return ratios


def close(ours, eager):
    assert ours.dtype == eager.dtype and ours.shape == eager.shape
    if ours.dtype.is_floating_point:
        assert torch.allclose(ours, eager, rtol=1e-5, atol=1e-6), (ours - eager).abs().max()
    else:
        assert torch.equal(ours, eager)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    phase_b, phase_b_ms = compiled(fx.inference)
    labels, labels_ms = compiled(fx.score_labels)
    logits, logits_ms = compiled(fx.score_logits)
    probabilities, probabilities_ms = compiled(fx.score_probabilities)
    print(f"torch {torch.__version__}, threads 1")
    print(f"compile time: Phase B {phase_b_ms:.2f} ms, score_labels {labels_ms:.2f} ms, "
          f"score_logits {logits_ms:.2f} ms, score_probabilities {probabilities_ms:.2f} ms")
    family("Phase B", PHASE_B_CELLS, no_grad(fx.inference), phase_b, phase_b_args, close, options.rounds)
    family("score_labels", SCORING_CELLS, no_grad(fx.score_labels), labels, scoring_args, close, options.rounds)
    family("score_logits", SCORING_CELLS, no_grad(fx.score_logits), logits, scoring_args, close, options.rounds)
    family("score_probabilities", SCORING_CELLS, no_grad(fx.score_probabilities), probabilities, scoring_args, close, options.rounds)


if __name__ == "__main__":
    main()
