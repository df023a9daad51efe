from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D)
import rextio
import torch
import torch.nn.functional as F

@rextio.exempt
def g(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu()

@rextio.native
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = g(x)
    for i in range(n):
        h = h.tanh()
    return h
