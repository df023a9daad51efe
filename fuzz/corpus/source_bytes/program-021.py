import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def f(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    hidden = x.sigmoid()
    return hidden.mean(dim=2)
