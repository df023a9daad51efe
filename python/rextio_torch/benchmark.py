"""Boundary-inclusive timing shared by the demo and the side-by-side benchmark.

Methodology (docs/benchmarks.md): float32 CPU, torch intra- and inter-op threads = 1,
fixed seeds, timed from the Python call to the returned tensor (`r = fn(*args); del r`),
garbage collection off while timing, compile and first-call warm-up excluded. Each sample
runs enough iterations to last at least `min_sample_s`; the figure is the median sample.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from typing import Callable, Sequence

PHASE_A_CELLS = [
    ("t1", 1, 32, 32),
    ("t2", 1, 128, 64),
    ("t3", 8, 64, 64),
    ("t4", 16, 128, 64),
    ("c1", 64, 128, 64),
    ("c2", 256, 256, 128),
]

SEED = 20260717


def phase_a_inputs(batch: int, k: int, n: int, seed: int = SEED):
    import torch

    generator = torch.Generator().manual_seed(seed + batch * 7919 + k * 104729 + n)
    x = torch.randn(batch, k, generator=generator)
    w = torch.randn(n, k, generator=generator) / math.sqrt(k)
    b = torch.randn(n, generator=generator)
    return x, w, b


def _calibrate(fn: Callable, args: Sequence, min_sample_s: float) -> int:
    iterations = 1
    while True:
        start = time.perf_counter()
        for _ in range(iterations):
            r = fn(*args)
            del r
        if time.perf_counter() - start >= min_sample_s or iterations >= 1 << 22:
            return iterations
        iterations *= 2


def median_us(fn: Callable, args: Sequence, samples: int = 7, min_sample_s: float = 0.02) -> float:
    """Median microseconds per call over `samples` samples."""
    for _ in range(3):  # warm-up, first call excluded
        fn(*args)
    iterations = _calibrate(fn, args, min_sample_s)
    results = []
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(samples):
            start = time.perf_counter()
            for _ in range(iterations):
                r = fn(*args)
                del r
            results.append((time.perf_counter() - start) / iterations * 1e6)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(results)


def interleaved_medians(lanes: dict[str, Callable], args: Sequence, rounds: int = 5, **kwargs) -> dict[str, float]:
    """Medians per lane, lanes alternating within each round so machine noise hits all alike."""
    per_lane: dict[str, list[float]] = {name: [] for name in lanes}
    for _ in range(rounds):
        for name, fn in lanes.items():
            per_lane[name].append(median_us(fn, args, samples=3, **kwargs))
    return {name: statistics.median(values) for name, values in per_lane.items()}


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))
