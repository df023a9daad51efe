"""Scalar control flow through `rextio_torch.compile`: the seed's Phase B (six cells) and
scoring pipeline (three entry points, three batch sizes) against eager, loops that run zero,
one and many times, early returns, bad scalar arguments, and Ctrl-C in a long loop."""

import subprocess
import sys
import textwrap

import pytest
import torch

import control_flow_fixture as fx
from conftest import ROOT, assert_parity

PHASE_B_CELLS = [cell[1:] for cell in fx.PHASE_B_CELLS]
phase_b_args = fx.phase_b_args
scoring_args = fx.scoring_args


@pytest.fixture(scope="module")
def compiled(rextio):
    names = ["inference", "score_labels", "score_logits", "score_probabilities", "readme_pattern", "early_exit", "spin", "scaled"]
    return {name: rextio.compile(getattr(fx, name), strict=True) for name in names}


@pytest.mark.parametrize("batch,width,depth,phase", PHASE_B_CELLS)
def test_phase_b_cells_match_eager(compiled, batch, width, depth, phase):
    args = phase_b_args(batch, width, depth, phase)
    assert_parity(compiled["inference"](*args), fx.inference(*args))


@pytest.mark.parametrize("depth", [0, 1, 2, 3, 17])
@pytest.mark.parametrize("phase", [0, 1, -1, 7])
def test_phase_b_loops_run_zero_one_and_many_times(compiled, depth, phase):
    args = phase_b_args(3, 8, depth, phase, seed=depth)
    assert_parity(compiled["inference"](*args), fx.inference(*args))


@pytest.mark.parametrize("batch", [1, 16, 128])
def test_scoring_pipeline_matches_eager(compiled, batch):
    args = scoring_args(batch)
    # Correctness order of the seed: logits, then probabilities, then exact labels.
    assert_parity(compiled["score_logits"](*args), fx.score_logits(*args))
    assert_parity(compiled["score_probabilities"](*args), fx.score_probabilities(*args))
    assert torch.equal(compiled["score_labels"](*args), fx.score_labels(*args))
    for rounds, phase in [(0, 0), (1, 1), (5, 3)]:
        args = scoring_args(batch, rounds, phase)
        assert torch.equal(compiled["score_labels"](*args), fx.score_labels(*args))


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_readme_control_flow_pattern(compiled, steps):
    g = torch.Generator().manual_seed(steps)
    h, w, b = torch.randn(5, 6, generator=g), torch.randn(6, 6, generator=g) * 0.4, torch.randn(6, generator=g)
    assert_parity(compiled["readme_pattern"](h, w, b, steps), fx.readme_pattern(h, w, b, steps))


@pytest.mark.parametrize("limit,stop_at", [(0, 0), (1, 5), (7, 5), (7, 1), (10, 99), (-3, 0)])
def test_while_with_continue_and_early_return(compiled, limit, stop_at):
    g = torch.Generator().manual_seed(limit + 10)
    x, w = torch.randn(4, 6, generator=g), torch.randn(6, 6, generator=g) * 0.4
    assert_parity(compiled["early_exit"](x, w, limit, stop_at), fx.early_exit(x, w, limit, stop_at))


@pytest.mark.parametrize("times", [0, 1, 2, 6])
@pytest.mark.parametrize("flag", [True, False])
def test_elif_and_boolean_operators(compiled, times, flag):
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(times))
    assert_parity(compiled["scaled"](x, times, flag), fx.scaled(x, times, flag))


def test_the_optimized_loop_body_is_fused(compiled):
    ir = compiled["inference"].optimized_ir
    assert ir.count("fused_linear") == 2 and "for %" in ir and "if %" in ir, ir


def test_bad_scalar_arguments_get_pythons_or_the_references_errors(compiled):
    args = list(phase_b_args(2, 8, 3, 0))
    f = compiled["inference"]
    for bad, error, words in [
        (1.5, TypeError, "expected an int (argument 'depth' is a float)"),
        ("3", TypeError, "expected an int (argument 'depth' is a str)"),
        (None, TypeError, "expected an int (argument 'depth' is None)"),
        (True, TypeError, "expected an int (argument 'depth' is a bool)"),
        (2**63, OverflowError, "expected an int that fits in 64 bits (argument 'depth' is an int: 9223372036854775808)"),
    ]:
        with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
            f(*args[:5], bad, 0)
    # A negative depth runs the loop zero times, as `range` does.
    args[5] = -4
    assert_parity(f(*args), fx.inference(*args))


def test_a_huge_loop_can_be_interrupted():
    code = textwrap.dedent(
        f"""
        import _thread, signal, sys, threading, time
        sys.path.insert(0, {str(ROOT / 'tests' / 'python')!r})
        import torch, rextio_torch, control_flow_fixture as fx
        spin = rextio_torch.compile(fx.spin, strict=True)
        # Python's own Ctrl-C handler, whatever this process inherited: a shell that starts
        # the test run in the background (without job control) passes SIGINT on ignored,
        # and `interrupt_main` then does nothing.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Timer(0.5, _thread.interrupt_main).start()
        start = time.monotonic()
        try:
            spin(torch.randn(2, 2), 10**12)
        except KeyboardInterrupt:
            print("interrupted after", round(time.monotonic() - start, 1))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("interrupted after"), result.stdout


def test_check_reports_the_seed_programs_native(rextio):
    report = rextio.check(fx.__file__)
    status = {f["name"]: f["status"] for f in report["functions"]}
    for name in ["inference", "score_labels", "score_logits", "score_probabilities", "readme_pattern", "early_exit", "spin", "scaled"]:
        assert status[name] == "native", (name, report)
