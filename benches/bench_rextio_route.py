"""Phase A through the Rextio route, side by side with eager PyTorch (torch.no_grad()) and
`rextio_torch.compile`, one process, torch threads 1, medians of interleaved samples.

Needs the Rextio project built first (`make rextio-example` builds target/rextio_project):

    python benches/bench_rextio_route.py
"""

import os
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROJECT = ROOT / "target" / "rextio_project"


def main() -> None:
    built = PROJECT / ".rextio" / "build" / "python"
    if not built.exists():
        sys.exit(f"{built} not found: run `make rextio-example` first")
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    sys.path.insert(0, str(built))
    os.environ["REXTIO_NATIVE_MODE"] = "native"
    from phase_a import kernels  # the Rextio-built package (not examples/phase_a.py)

    import importlib.util

    spec = importlib.util.spec_from_file_location("phase_a_example", ROOT / "examples" / "phase_a.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    import rextio_torch
    from rextio_torch.benchmark import PHASE_A_CELLS, geomean, interleaved_medians, phase_a_inputs

    ours = rextio_torch.compile(example.inference, strict=True)

    def eager(x, w, b):
        with torch.no_grad():
            return example.inference(x, w, b)

    lanes = {"eager": eager, "rextio route": kernels.inference, "compile()": ours}
    print(f"{'cell':<4} {'shape':>11} " + " ".join(f"{k:>13}" for k in lanes) + f" {'eager/route':>12} {'eager/compile':>14}")
    route, direct = [], []
    for cell, batch, k, n in PHASE_A_CELLS:
        args = phase_a_inputs(batch, k, n)
        want = eager(*args)
        for name, fn in lanes.items():
            got = fn(*args)
            assert torch.allclose(got, want, rtol=1e-5, atol=1e-5), (cell, name)
        medians = interleaved_medians(lanes, args)
        route.append(medians["eager"] / medians["rextio route"])
        direct.append(medians["eager"] / medians["compile()"])
        print(f"{cell:<4} {f'{batch}x{k}x{n}':>11} " + " ".join(f"{medians[k]:13.2f}" for k in lanes)
              + f" {route[-1]:11.2f}x {direct[-1]:13.2f}x")
    print(f"geomean eager/route {geomean(route):.2f}x, eager/compile() {geomean(direct):.2f}x")


if __name__ == "__main__":
    main()
