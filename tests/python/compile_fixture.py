"""Functions for the compile API tests: ones that compile and ones that stay on Python."""

import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def rejected(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu(x)


def not_covered(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.cumsum(dim=1)


def plain(a, b):
    return a + b


def with_loop(x: TensorF32Cpu2D, depth: int) -> TensorF32Cpu2D:
    for _ in range(depth):
        x = x.relu()
    return x


def scalar_param(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)


def documented(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """A docstring: the extended surface passes over it (the reference host does not)."""
    return x.relu().tanh()


def unpacked(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    rows, cols = x.shape
    h, g = x.relu(), x.tanh() + b
    h, g = g, h  # both right-hand values first, then the names: a swap
    (n,) = b.size()
    return (h - g) * (rows + cols * n)


def unpacked_wrong_count(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    b, t, d = x.shape
    return x * (b + t + d)
