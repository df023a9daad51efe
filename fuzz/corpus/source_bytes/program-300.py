from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D)
import rextio
import torch
import torch.nn.functional as F

def f(flag: bool) -> int:
    k = 0
    if flag:
        t = 1
        k = t + 1
    else:
        t = 2
        k = t * 2
    return k
