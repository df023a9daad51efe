import torch
from rextio_torch.types import TensorF32Cpu2D


def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.transpose(0, 1).relu()
