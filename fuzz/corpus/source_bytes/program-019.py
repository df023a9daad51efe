import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu2D


def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(x, weight=w)
