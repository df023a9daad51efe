"""Boundary-inclusive timing shared by the demo and the side-by-side harness
(benches/side_by_side.py).

Methodology (docs/benchmarks.md): float32 CPU, torch intra- and inter-op threads = 1,
fixed seeds, timed from the Python call to the returned tensor (`r = fn(*args); del r`),
garbage collection off while timing, compile and first-call warm-up excluded. Each sample
runs enough iterations to last at least `min_sample_s` (calibrated once per lane); lanes
take turns within each round in a counterbalanced order (`balanced_orders`: every lane in
every position and after every other lane equally often over a cycle of rounds), so drift
in machine load hits every lane alike. The figure is the median sample.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import subprocess
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

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


def balanced_orders(n: int) -> list[list[int]]:
    """Lane orders for successive rounds: a Williams design (balanced Latin square). Over one
    cycle every lane runs once in every position and, for an even number of lanes, directly
    after every other lane once; an odd number takes two cycles' worth of rows (the square
    and its mirror), so the cycle is `n` rounds for even `n` and `2n` for odd `n` (ABBA for
    two lanes)."""
    if n <= 0:
        return [[]]
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:
        first.append(low if len(first) % 2 else high)
        if len(first) % 2:
            high -= 1
        else:
            low += 1
    rows = [[(lane + shift) % n for lane in first] for shift in range(n)]
    if n % 2 and n > 1:
        rows += [row[::-1] for row in rows]
    return rows


@dataclass
class LaneTiming:
    """One lane's timing: every sample (us per call) and the iterations per sample."""

    iterations: int
    samples_us: list[float] = field(default_factory=list)

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_us)

    @property
    def min_us(self) -> float:
        return min(self.samples_us)

    def quartiles_us(self) -> tuple[float, float]:
        if len(self.samples_us) < 2:
            return self.samples_us[0], self.samples_us[0]
        q = statistics.quantiles(self.samples_us, n=4, method="inclusive")
        return q[0], q[2]


def _sample(fn: Callable, args: Sequence, iterations: int) -> float:
    start = time.perf_counter()
    for _ in range(iterations):
        r = fn(*args)
        del r
    return (time.perf_counter() - start) / iterations * 1e6


def measure_lanes(
    lanes: dict[str, Callable],
    args: Sequence,
    rounds: int = 10,
    samples: int = 2,
    min_sample_s: float = 0.02,
    warmup: int = 3,
) -> dict[str, LaneTiming]:
    """Time every lane on the same arguments: warm-up calls and calibration per lane first,
    then `rounds` rounds in `balanced_orders`, each lane taking `samples` samples per turn,
    with garbage collection off while timing."""
    names = list(lanes)
    timings: dict[str, LaneTiming] = {}
    for name in names:
        fn = lanes[name]
        for _ in range(warmup):
            fn(*args)
        timings[name] = LaneTiming(iterations=_calibrate(fn, args, min_sample_s))
    orders = balanced_orders(len(names))
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for round_index in range(rounds):
            for lane in orders[round_index % len(orders)]:
                name = names[lane]
                timing = timings[name]
                for _ in range(samples):
                    timing.samples_us.append(_sample(lanes[name], args, timing.iterations))
    finally:
        if enabled:
            gc.enable()
    return timings


def interleaved_medians(lanes: dict[str, Callable], args: Sequence, rounds: int = 5, samples: int = 3, **kwargs) -> dict[str, float]:
    """Medians per lane (`measure_lanes`), lanes alternating within each round in a
    counterbalanced order so machine noise hits all alike."""
    timings = measure_lanes(lanes, args, rounds=rounds, samples=samples, **kwargs)
    return {name: timing.median_us for name, timing in timings.items()}


@dataclass
class Verification:
    """The outcome of comparing one lane's result with eager's."""

    ok: bool
    detail: str
    max_abs_diff: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "detail": self.detail, "max_abs_diff": self.max_abs_diff}


def verify_result(ours: Any, eager: Any, rtol: float = 1e-5) -> Verification:
    """`ours` against eager's result as docs/parity.md states for compiled functions: same
    type, dtype, shape and device, NaN in the same positions, the same infinities, finite
    values within `rtol * max(1, |eager|)` elementwise, integer results (labels, argmax)
    exactly equal."""
    import torch

    if not isinstance(eager, torch.Tensor):
        return Verification(ours == eager, "scalar equal" if ours == eager else f"{ours!r} != {eager!r}")
    if not isinstance(ours, torch.Tensor):
        return Verification(False, f"expected a tensor, got {type(ours).__name__}")
    for what in ("dtype", "shape", "device"):
        if getattr(ours, what) != getattr(eager, what):
            return Verification(False, f"{what} {getattr(ours, what)} != eager's {getattr(eager, what)}")
    if not eager.dtype.is_floating_point:
        if torch.equal(ours, eager):
            return Verification(True, "exactly equal", 0.0)
        return Verification(False, f"{int((ours != eager).sum())} of {eager.numel()} values differ (exact match required)")
    nan = torch.isnan(eager)
    if not torch.equal(torch.isnan(ours), nan):
        return Verification(False, "NaN positions differ")
    inf = torch.isinf(eager)
    if not torch.equal(ours[inf], eager[inf]):
        return Verification(False, "infinities differ")
    finite = ~(nan | inf)
    if not finite.any():
        return Verification(True, "no finite values; NaN and infinities match", 0.0)
    a, b = ours[finite].double(), eager[finite].double()
    diff = (a - b).abs()
    bound = rtol * b.abs().clamp(min=1.0)
    worst = float(diff.max())
    over = diff - bound
    if float(over.max()) > 0:
        i = int(over.argmax())
        return Verification(False, f"difference {float(diff[i]):.3g} > tolerance {float(bound[i]):.3g}", worst)
    return Verification(True, f"within {rtol:g} * max(1, |eager|)", worst)


def machine_facts(repository: str | os.PathLike | None = None) -> dict[str, Any]:
    """What a benchmark figure depends on: CPU, cores, load, Python, torch, threads, commit."""
    import torch

    facts: dict[str, Any] = {
        "cpu_model": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
    }
    try:
        with open("/proc/cpuinfo") as info:
            lines = info.read().splitlines()
        for line in lines:
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
        flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
        facts["cpu_flags"] = [f for f in ("avx2", "fma", "avx512f") if f in flags]
    except OSError:
        pass
    try:
        facts["load_average"] = [round(v, 2) for v in os.getloadavg()]
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as info:
            facts["memory_gib"] = round(int(info.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        import rextio_torch

        facts["rextio_torch"] = getattr(rextio_torch, "__version__", "unknown")
    except ImportError:
        pass
    if repository is not None:
        def git(*command: str) -> str | None:
            try:
                done = subprocess.run(["git", *command], cwd=repository, capture_output=True, text=True, timeout=10)
            except (OSError, subprocess.SubprocessError):
                return None
            return done.stdout.strip() if done.returncode == 0 else None

        facts["commit"] = git("rev-parse", "HEAD")
        facts["commit_subject"] = git("log", "-1", "--format=%s")
        status = git("status", "--porcelain", "--untracked-files=no")
        facts["dirty"] = None if status is None else bool(status)
    return facts


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))
