import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def deep(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu1D:
    hidden = x
    for layer in range(depth):
        hidden = F.linear(hidden, w, b).relu()
    return hidden.mean(dim=1, keepdim=False)
