"""Ours alone on the Phase A, Phase B and scoring cells at 1 and 2 torch threads (issue 17
item 5): these calls are far below the cost model's parallel thresholds, so the thread
setting must not change their time. No eager lane runs in the process (eager's OpenMP
workers spin after each parallel op and would take the second core from the timed calls).

    python benches/small_threads.py [--threads 1,2] [--repeats 7]

Prints, per cell, the best-of-repeats median of calls at each thread count (us) and the
ratio to the first count.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

import rextio_torch
import side_by_side as sbs


def per_call_us(fn, args, min_s=0.02):
    count = 1
    while True:
        start = time.perf_counter()
        for _ in range(count):
            fn(*args)
        elapsed = time.perf_counter() - start
        if elapsed >= min_s:
            return elapsed / count * 1e6
        count *= 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args(argv)
    counts = [int(v) for v in options.threads.split(",")]
    torch.set_num_interop_threads(1)
    cells = [c for s in ("phase-a", "phase-b", "scoring") for c in sbs.suite_cells(s, False)]
    print(f"{'cell':<32} " + " ".join(f"{f'{t} thr us':>10}" for t in counts) + "   ratios")
    ratios = []
    for cell in cells:
        fn = rextio_torch.compile(cell.fn, strict=True)
        args = cell.make_args()
        best = {}
        for t in counts:
            torch.set_num_threads(t)
            fn(*args)
            best[t] = min(statistics.median(per_call_us(fn, args) for _ in range(3)) for _ in range(options.repeats))
        rel = [best[t] / best[counts[0]] for t in counts[1:]]
        ratios.append(rel)
        print(f"{cell.suite + '/' + cell.id:<32} " + " ".join(f"{best[t]:>10.2f}" for t in counts)
              + "   " + " ".join(f"{r:.3f}" for r in rel), flush=True)
    for i, t in enumerate(counts[1:]):
        values = [r[i] for r in ratios]
        geo = statistics.geometric_mean(values)
        print(f"{t} threads / {counts[0]}: geomean {geo:.3f}, max {max(values):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
