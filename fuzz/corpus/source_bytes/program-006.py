"""The README's decorator, verbatim, and every other spelling of our decorator. Importing this
module compiles each function at decoration time; none may fall back."""

import torch.nn.functional as F

import rextio_torch
import rextio_torch as rt
from rextio_torch import compile as rc
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


@rextio_torch.compile
def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)


@rextio_torch.compile(strict=True)
def strict_score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).tanh().sum(dim=1)


@rt.compile(strict=False)
def aliased_module(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sigmoid()


@rc
def aliased_function(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.abs().sqrt()


@rc(strict=True)
def aliased_called(x: TensorF32Cpu2D, flag: bool) -> TensorF32Cpu2D:
    return x.neg()
