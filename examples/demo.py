"""`make demo`: compile examples/phase_a.py with rextio-torch and compare it with eager PyTorch
on the six Phase A cells of docs/benchmarks.md (parity and median call time)."""

import pathlib
import sys

import torch

import rextio_torch
from rextio_torch.benchmark import PHASE_A_CELLS, geomean, interleaved_medians, phase_a_inputs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import phase_a  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    compiled = rextio_torch.compile(phase_a.inference, strict=True)
    print("rextio-torch demo: examples/phase_a.py::inference")
    print("  F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)\n")
    print("optimized IR run by the executor:")
    print("  " + compiled.optimized_ir.strip().replace("\n", "\n  ") + "\n")

    def eager(x, w, b):
        with torch.no_grad():
            return phase_a.inference(x, w, b)

    header = f"{'cell':<4} {'batch':>5} {'in':>4} {'out':>4}  {'max |diff|':>10}  {'eager us':>9}  {'ours us':>8}  {'speedup':>7}"
    print(header)
    print("-" * len(header))
    ratios = []
    for cell, batch, k, n in PHASE_A_CELLS:
        args = phase_a_inputs(batch, k, n)
        diff = (compiled(*args) - eager(*args)).abs().max().item()
        times = interleaved_medians({"eager": eager, "ours": compiled}, args, rounds=3)
        ratio = times["eager"] / times["ours"]
        ratios.append(ratio)
        print(f"{cell:<4} {batch:>5} {k:>4} {n:>4}  {diff:>10.2e}  {times['eager']:>9.2f}  {times['ours']:>8.2f}  {ratio:>6.2f}x")
    print(f"\ngeometric mean speedup over eager (torch.no_grad): {geomean(ratios):.2f}x")
    print("(one thread, boundary-inclusive medians; this machine is noisy, see docs/benchmarks.md)")


if __name__ == "__main__":
    main()
