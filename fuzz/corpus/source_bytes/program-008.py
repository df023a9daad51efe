"""A module that defines `f` twice: `first` keeps the first definition's function object."""

import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).relu()


first = f


def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:  # noqa: F811
    return F.linear(x, w, b).sigmoid()
