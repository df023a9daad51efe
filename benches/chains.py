"""The `chains` suite of benches/side_by_side.py: many chains and shapes within the compiled
surface, so that no figure is tuned to the six Phase A shapes.

Every chain is an annotated function that `rextio_torch.compile(fn, strict=True)` compiles
natively: linear with relu/tanh/sigmoid/GELU epilogues, sum and mean over dim 1, linear
without bias, the `x @ w + b` and `torch.matmul(x, w) + b` spellings (the weight stored
as [in, out]: `w.t()` is not in the compiled surface, so a transposed weight is passed
instead), elementwise pre-processing `(x - mean) / scale` before a linear, and two-layer
heads ending in softmax or argmax. `CHAIN_CELLS` is the shape grid, generated below: batch 1
to 256, widths 8 to 512, four shapes per chain from small to large.
"""

import math

import torch
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def linear_relu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).relu()


def linear_tanh(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.tanh(F.linear(x, w, b))


def linear_sigmoid(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).sigmoid()


def linear_gelu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.gelu(F.linear(x, w, b))


def linear_relu_sum(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().sum(dim=1)


def linear_sigmoid_mean(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).sigmoid().mean(dim=1, keepdim=False)


def linear_nobias_tanh_sum(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return F.linear(x, w).tanh().sum(dim=1)


def matmul_op_bias_relu(x: TensorF32Cpu2D, wt: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    y = x @ wt + b
    return y.relu()


def torch_matmul_bias_tanh_mean(x: TensorF32Cpu2D, wt: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    y = torch.matmul(x, wt) + b
    return y.tanh().mean(dim=1)


def normalize_linear_relu(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, scale: TensorF32Cpu1D,
                          w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    normalized = (x - mean) / scale
    return F.linear(normalized, w, b).relu()


def head_softmax(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D,
                 w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    hidden = F.linear(x, w1, b1).relu()
    logits = F.linear(hidden, w2, b2)
    return logits.softmax(dim=1)


def head_argmax(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D,
                w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorI64Cpu1D:
    hidden = F.linear(x, w1, b1).tanh()
    logits = F.linear(hidden, w2, b2)
    return logits.argmax(dim=1)


def linear_relu_mean(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


# Each chain and the kind of arguments it takes.
CHAINS = [
    (linear_relu, "linear"),
    (linear_tanh, "linear"),
    (linear_sigmoid, "linear"),
    (linear_gelu, "linear"),
    (linear_relu_sum, "linear"),
    (linear_sigmoid_mean, "linear"),
    (linear_nobias_tanh_sum, "linear_nobias"),
    (matmul_op_bias_relu, "matmul"),
    (torch_matmul_bias_tanh_mean, "matmul"),
    (normalize_linear_relu, "normalize"),
    (head_softmax, "head"),
    (head_argmax, "head"),
]

BATCHES = (1, 4, 16, 64, 256)
WIDTHS = (8, 32, 128, 256, 512)
SEED = 20260801


def _grid():
    """Four shapes per chain, from small to large: level j takes batch 1, 4-16, 16-64 and
    64-256 (alternating between chains), and the widths rotate with the chain's index so
    that every width meets every batch size across the suite."""
    cells = []
    for index, (fn, kind) in enumerate(CHAINS):
        for level in range(4):
            batch = BATCHES[min(len(BATCHES) - 1, level + (index % 2) * (level > 0))]
            k = WIDTHS[(index + level) % len(WIDTHS)]
            n = WIDTHS[(2 * index + level + 2) % len(WIDTHS)]
            dims = {"batch": batch, "in": k, "out": n}
            if kind == "head":
                dims = {"batch": batch, "in": k, "hidden": n, "classes": WIDTHS[(index + level) % 3]}
            shape = "x".join(str(v) for v in dims.values())
            cells.append({
                "id": f"{fn.__name__}/{shape}",
                "family": fn.__name__,
                "kind": kind,
                "fn": fn,
                "dims": dims,
                "shape": shape,
                "seed": SEED + 1000 * index + level,
                "quick": level == index % 4,
            })
    return cells


CHAIN_CELLS = _grid()


def chain_args(kind: str, dims: dict, seed: int):
    """Inputs for one cell: N(0, 1) data, weights scaled by 1/sqrt(fan-in) so activations stay
    in range, small biases, scales in [0.5, 1.5)."""
    g = torch.Generator().manual_seed(seed)
    batch, k = dims["batch"], dims["in"]
    x = torch.randn(batch, k, generator=g)
    if kind == "head":
        hidden, classes = dims["hidden"], dims["classes"]
        return (
            x,
            torch.randn(hidden, k, generator=g) / math.sqrt(k),
            torch.randn(hidden, generator=g) * 0.1,
            torch.randn(classes, hidden, generator=g) / math.sqrt(hidden),
            torch.randn(classes, generator=g) * 0.1,
        )
    n = dims["out"]
    if kind == "matmul":
        return x, torch.randn(k, n, generator=g) / math.sqrt(k), torch.randn(n, generator=g) * 0.1
    w = torch.randn(n, k, generator=g) / math.sqrt(k)
    b = torch.randn(n, generator=g) * 0.1
    if kind == "linear_nobias":
        return x, w
    if kind == "normalize":
        mean = torch.randn(k, generator=g)
        scale = torch.rand(k, generator=g) + 0.5
        return x * scale + mean, mean, scale, w, b
    return x, w, b


# The scale suite's big batches (benches/side_by_side.py --suite scale, docs/benchmarks.md
# "Scale"): issue 17's cells, batch 1,024-8,192, widths 256-1,024, each timed at one thread and
# at every core.
SCALE_SHAPES = [
    (linear_relu_mean, "linear", {"batch": 1024, "in": 256, "out": 256}),
    (linear_relu_mean, "linear", {"batch": 4096, "in": 512, "out": 512}),
    (linear_relu_mean, "linear", {"batch": 2048, "in": 1024, "out": 1024}),
    (head_softmax, "head", {"batch": 1024, "in": 256, "hidden": 256, "classes": 16}),
    (head_softmax, "head", {"batch": 4096, "in": 512, "hidden": 512, "classes": 16}),
    (head_softmax, "head", {"batch": 8192, "in": 256, "hidden": 1024, "classes": 64}),
    (linear_gelu, "linear", {"batch": 1024, "in": 512, "out": 1024}),
    (linear_gelu, "linear", {"batch": 4096, "in": 256, "out": 1024}),
    (linear_gelu, "linear", {"batch": 8192, "in": 512, "out": 512}),
]


def scale_cells(threads: list[int]):
    """One cell per shape and thread count (the thread count is part of the id: `@1t`)."""
    cells = []
    for index, (fn, kind, dims) in enumerate(SCALE_SHAPES):
        shape = "x".join(str(v) for v in dims.values())
        for count in threads:
            cells.append({
                "id": f"{fn.__name__}/{shape}@{count}t",
                "family": fn.__name__,
                "kind": kind,
                "fn": fn,
                "dims": dims,
                "shape": shape,
                "threads": count,
                "seed": SEED + 100_000 + index,
                "quick": index % 3 == 0,
            })
    return cells
