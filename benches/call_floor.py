"""Per-call cost of a compiled function above the floor of any call that returns a tensor.

The floor is `rextio_torch._native._call_floor`: a PyO3 function that takes the same arguments
and returns a new 1-element float32 tensor, doing nothing else. What a compiled Phase A call
costs above it is argument binding and checks, the computation, and the output allocation.
Both are timed in the same run, interleaved, minimum of repeated timings, one thread.

    python benches/call_floor.py
    python benches/call_floor.py --fallback

`--fallback` measures instead what a compiled module costs when its call runs eagerly (a
forward that does not compile, training mode, a hook, `*args`, a signature no marker type
describes): the module called directly against the same module through
`rextio_torch.compile(model)`, both under `torch.no_grad()`, on the same input, in pairs of runs (`paired`: medians);
the difference is the wrapper's cost per call (its guards, its warning, the call itself).
"""

import sys
import time
import timeit
import warnings
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import phase_a  # noqa: E402

import rextio_torch  # noqa: E402
from rextio_torch import _native  # noqa: E402
from rextio_torch.benchmark import PHASE_A_CELLS, phase_a_inputs  # noqa: E402
from rextio_torch.types import TensorF32Cpu2D  # noqa: E402

CALLS = 20000


def best_us(fn, rounds: int = 3) -> float:
    return min(min(timeit.repeat(fn, number=CALLS, repeat=5)) for _ in range(rounds)) / CALLS * 1e6


class Block(nn.Module):
    """A small block (a Linear, a GELU, a LayerNorm, a residual) of `width`."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.act(self.fc(x)))


class FlipBlock(Block):
    """The block with one `torch.flip`, which does not compile: every call runs eagerly."""

    def forward(self, x):
        return torch.flip(self.norm(x + self.act(self.fc(x))), [1])


class AnnotatedFlipBlock(Block):
    """The same, annotated: refused at `compile`, before any call."""

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return torch.flip(self.norm(x + self.act(self.fc(x))), [1])


class StarBlock(Block):
    """A forward taking `*xs`, which a compiled forward does not."""

    def forward(self, *xs):
        return self.norm(xs[0] + self.act(self.fc(xs[0])))


def fallback_cells(batch: int, width: int) -> list[tuple[str, nn.Module, torch.Tensor]]:
    """(what makes the call eager, the module, its input)."""
    torch.manual_seed(0)
    x = torch.randn(batch, width)
    hooked = Block(width).eval()
    hooked.fc.register_forward_hook(lambda module, args, out: out)
    return [
        ("forward does not compile", FlipBlock(width).eval(), x),
        ("annotated, refused at compile", AnnotatedFlipBlock(width).eval(), x),
        ("training mode", Block(width).train(), x),
        ("a forward hook", hooked, x),
        ("*args", StarBlock(width).eval(), x),
        ("float64 input", Block(width).double().eval(), x.double()),
        ("compiled (for scale)", Block(width).eval(), x),
    ]


def fallback() -> None:
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    # The wrapper's cost is the same at any size; at 1x8 the call itself is cheap enough that
    # its noise does not hide it.
    for batch, width in ((4, 64), (1, 8)):
        print(f"{f'{batch}x{width} block':<30} {'direct us':>10} {'compiled us':>12} {'above direct':>13}")
        for name, model, x in fallback_cells(batch, width):
            # Python's default filter (one warning per place), the warnings kept, not printed.
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("default")
                ours = rextio_torch.compile(model)
                with torch.no_grad():
                    if "compiled" not in name and name != "training mode":  # eager's own result
                        assert torch.equal(ours(x), model(x)), name
                    direct_us, ours_us, above_us = paired(lambda: model(x), lambda: ours(x))
            print(f"{name:<30} {direct_us:10.2f} {ours_us:12.2f} {above_us:13.2f}")


def paired(direct, ours, pairs: int = 600, calls: int = 20) -> tuple[float, float, float]:
    """Medians over `pairs` of (direct, ours, ours - direct), each pair 20 calls of one then
    20 of the other, in the thread's CPU time (`time.thread_time`: what other processes take
    is not counted): the load of a shared machine drifts slowly, so a pair sees one load and
    its difference is the wrapper's cost; the median leaves out the pairs a burst hit."""
    import statistics

    samples = []
    for i in range(pairs):
        first, second = (direct, ours) if i % 2 == 0 else (ours, direct)  # either order alike
        t0 = time.thread_time()
        for _ in range(calls):
            first()
        t1 = time.thread_time()
        for _ in range(calls):
            second()
        t2 = time.thread_time()
        a, b = (t1 - t0, t2 - t1) if i % 2 == 0 else (t2 - t1, t1 - t0)
        samples.append((a / calls * 1e6, b / calls * 1e6))
    return (statistics.median(a for a, _ in samples), statistics.median(b for _, b in samples),
            statistics.median(b - a for a, b in samples))


def main() -> None:
    if "--fallback" in sys.argv[1:]:
        fallback()
        return
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
