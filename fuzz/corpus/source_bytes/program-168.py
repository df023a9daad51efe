from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D)
import rextio
import torch
import torch.nn.functional as F

def f(x: TensorF32Cpu2D, t: float) -> TensorF32Cpu2D:
    return x * t
