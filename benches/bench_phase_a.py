"""Side-by-side Phase A benchmark, one process: eager under no_grad and inference_mode,
torch.jit.script, torch.compile (first call timed separately, results checked) and the
rextio-torch compiled callable. Methodology: rextio_torch.benchmark (boundary-inclusive,
one thread, medians of interleaved rounds).

    make bench-python            # all lanes
    python benches/bench_phase_a.py --no-compile   # skip torch.compile (slow first calls)
"""

import argparse
import pathlib
import sys
import time

import torch
import torch.nn.functional as F

import rextio_torch
from rextio_torch.benchmark import PHASE_A_CELLS, geomean, interleaved_medians, phase_a_inputs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import phase_a  # noqa: E402


def scripted_kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile lane")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    ours = rextio_torch.compile(phase_a.inference, strict=True)
    scripted = torch.jit.script(scripted_kernel)

    def eager_no_grad(x, w, b):
        with torch.no_grad():
            return phase_a.inference(x, w, b)

    def eager_inference_mode(x, w, b):
        with torch.inference_mode():
            return phase_a.inference(x, w, b)

    def jit_script(x, w, b):
        with torch.no_grad():
            return scripted(x, w, b)

    lanes = {"eager": eager_no_grad, "inference_mode": eager_inference_mode, "jit.script": jit_script, "rextio": ours}
    print(f"torch {torch.__version__}, threads 1; medians in us per call (boundary-inclusive)")
    columns = list(lanes) + ([] if options.no_compile else ["torch.compile"])
    print(f"{'cell':<4} {'shape':>11} " + " ".join(f"{c:>14}" for c in columns) + f" {'eager/rextio':>12}  {'compile 1st call':>16}")
    ratios = []
    for cell, batch, k, n in PHASE_A_CELLS:
        args = phase_a_inputs(batch, k, n)
        reference = eager_no_grad(*args)
        assert (ours(*args) - reference).abs().max().item() <= 1e-5 * max(1.0, reference.abs().max().item())
        cell_lanes = dict(lanes)
        first_call = ""
        if not options.no_compile:
            torch._dynamo.reset()
            compiled = torch.compile(scripted_kernel)

            def torch_compile(x, w, b, compiled=compiled):
                with torch.no_grad():
                    return compiled(x, w, b)

            start = time.perf_counter()
            result = torch_compile(*args)
            first_call = f"{time.perf_counter() - start:.2f} s"
            if not torch.allclose(result, reference, rtol=1e-5, atol=1e-6):
                first_call += " (WRONG)"
            cell_lanes["torch.compile"] = torch_compile
        medians = interleaved_medians(cell_lanes, args, rounds=options.rounds)
        ratio = medians["eager"] / medians["rextio"]
        ratios.append(ratio)
        shape = f"{batch}x{k}x{n}"
        print(f"{cell:<4} {shape:>11} " + " ".join(f"{medians[c]:>14.2f}" for c in columns) + f" {ratio:>11.2f}x  {first_call:>16}")
    print(f"geometric mean eager/rextio: {geomean(ratios):.2f}x")


if __name__ == "__main__":
    main()
