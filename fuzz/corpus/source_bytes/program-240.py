from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D)
import rextio
import torch
import torch.nn.functional as F

def f(x: TensorF32Cpu2D, weight_a: TensorF32Cpu2D, weight_b: TensorF32Cpu2D, bias_a: TensorF32Cpu1D, bias_b: TensorF32Cpu1D, depth: int, phase: int) -> TensorF32Cpu2D:
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            hidden = F.linear(hidden, weight_a, bias_a).relu()
        else:
            hidden = F.linear(hidden, weight_b, bias_b).relu()
    return hidden
