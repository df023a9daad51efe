"""Per-call cost of a compiled function above the floor of any call that returns a tensor.

The floor is `rextio_torch._native._call_floor`: a PyO3 function that takes the same arguments
and returns a new 1-element float32 tensor, doing nothing else. What a compiled Phase A call
costs above it is argument binding and checks, the computation, and the output allocation.
Both are timed in the same run, interleaved, minimum of repeated timings, one thread.

    python benches/call_floor.py
"""

import sys
import timeit
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import phase_a  # noqa: E402

import rextio_torch  # noqa: E402
from rextio_torch import _native  # noqa: E402
from rextio_torch.benchmark import PHASE_A_CELLS, phase_a_inputs  # noqa: E402

CALLS = 20000


def best_us(fn, rounds: int = 3) -> float:
    return min(min(timeit.repeat(fn, number=CALLS, repeat=5)) for _ in range(rounds)) / CALLS * 1e6


def main() -> None:
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    ours = rextio_torch.compile(phase_a.inference, strict=True)
    floor = _native._call_floor
    print(f"{'cell':<4} {'shape':>11} {'floor us':>9} {'ours us':>8} {'above floor':>12}")
    for cell, batch, k, n in PHASE_A_CELLS:
        args = phase_a_inputs(batch, k, n)
        floor_us, ours_us = float("inf"), float("inf")
        for _ in range(3):  # interleaved, so load hits both alike
            floor_us = min(floor_us, best_us(lambda: floor(*args), 1))
            ours_us = min(ours_us, best_us(lambda: ours(*args), 1))
        print(f"{cell:<4} {f'{batch}x{k}x{n}':>11} {floor_us:9.3f} {ours_us:8.3f} {ours_us - floor_us:12.3f}")


if __name__ == "__main__":
    main()
