import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def passthrough(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x


def accumulate(a: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    a += b
    return a


def dynamic_receiver(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (a @ b).relu()


def float_param(x: TensorF32Cpu2D, alpha: float) -> TensorF32Cpu2D:
    return x.relu()


def wrong_return(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.relu()
