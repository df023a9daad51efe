# rextio_torch.compile is this package's own decorator: in every spelling it keeps the function
# native (any other decorator is RXT031).
import torch.nn.functional as F

import rextio
import rextio_torch
import rextio_torch as rt
from rextio_torch import compile as rc
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


@rextio_torch.compile
def bare(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)


@rextio_torch.compile(strict=True)
def called(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu()


@rt.compile(strict=False)
def aliased_module(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.tanh()


@rc
def aliased_function(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sigmoid()


@rextio.native
@rc(strict=True)
def with_host_marker(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.abs()
