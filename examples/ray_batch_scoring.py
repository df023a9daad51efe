"""Batch scoring with Ray Data and a compiled function (docs/scale.md).

    pip install "rextio-torch[ray]"      # or: pip install "ray[data]==2.60.0"
    python examples/ray_batch_scoring.py [--rows 1000000] [--address auto]

Builds a dataset of ROWS rows of 64 float32 features, then scores it twice with the same
`map_batches` pipeline: once with `score` compiled by rextio-torch, once with the original
Python function (eager PyTorch), and prints each one's throughput (rows/s: the whole pipeline,
and the time spent inside the function) and the largest difference between the two. `score` is shipped to the Ray workers as an argument of the batch
function: this script is `__main__`, so it pickles by value (its source text) and each worker
process compiles it once. Without `--address` it starts a local cluster (`ray.init()`); with
`--address auto` or `ray://host:10001` the same code runs on a cluster.
"""

import argparse
import time
import warnings

import numpy as np
import ray
import torch
import torch.nn.functional as F

import rextio_torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D

FEATURES, HIDDEN = 64, 32


@rextio_torch.compile(strict=True)
def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


def make_features(batch: dict) -> dict:
    """Deterministic features for a batch of ids (a stand-in for reading a table)."""
    ids = batch["id"]
    rng = np.random.default_rng(int(ids[0]))
    return {"id": ids, "x": rng.standard_normal((len(ids), FEATURES), dtype=np.float32)}


def score_batch(batch: dict, fn, w: torch.Tensor, b: torch.Tensor) -> dict:
    """One batch's scores, and each row's share of the time `fn` took."""
    with warnings.catch_warnings():
        # Ray hands out read-only arrays; neither function writes its inputs.
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        x = torch.from_numpy(batch["x"])
    started = time.perf_counter()
    with torch.no_grad():
        scores = fn(x, w, b)
    seconds = time.perf_counter() - started
    return {"id": batch["id"], "score": scores.numpy(), "seconds": np.full(len(x), seconds / len(x))}


def run(features, fn, w, b, batch_size):
    """Scores `features` with `fn`: (pipeline seconds, seconds inside `fn`, scores by id)."""
    started = time.perf_counter()
    scored = features.map_batches(
        score_batch, fn_kwargs={"fn": fn, "w": w, "b": b}, batch_size=batch_size, batch_format="numpy"
    ).materialize()
    seconds = time.perf_counter() - started
    ids, scores, inside = [], [], 0.0
    for batch in scored.iter_batches(batch_size=None, batch_format="numpy"):
        ids.append(batch["id"])
        scores.append(batch["score"])
        inside += float(batch["seconds"].sum())
    ids, scores = np.concatenate(ids), np.concatenate(scores)
    return seconds, inside, scores[np.argsort(ids)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="dataset rows (default 1,000,000)")
    parser.add_argument("--batch-size", type=int, default=8192, help="rows per batch (default 8192)")
    parser.add_argument("--address", default=None, help="a Ray cluster to join (default: start a local one)")
    args = parser.parse_args()

    ray.init(address=args.address, include_dashboard=False)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(HIDDEN, FEATURES, generator=g) / FEATURES**0.5
    b = torch.randn(HIDDEN, generator=g)

    features = ray.data.range(args.rows).map_batches(make_features, batch_size=args.batch_size).materialize()
    # Warm-up: the workers start and import torch, and each compiles `score` once.
    for fn in (score.__wrapped__, score):
        run(features.limit(4 * args.batch_size), fn, w, b, args.batch_size)
    results = {}
    for name, fn in (("eager", score.__wrapped__), ("compiled", score)):
        seconds, inside, scores = run(features, fn, w, b, args.batch_size)
        results[name] = scores
        print(f"{name:>8}: {args.rows:,} rows in {seconds:.2f} s = {args.rows / seconds:,.0f} rows/s "
              f"(inside the function: {inside:.3f} s = {args.rows / inside:,.0f} rows/s)", flush=True)
    difference = np.abs(results["compiled"] - results["eager"]).max()
    print(f"max |compiled - eager| over {len(results['eager']):,} rows: {difference:.3g}")
    ray.shutdown()


if __name__ == "__main__":
    main()
