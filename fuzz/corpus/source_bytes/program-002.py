"""The seed's Phase A function, and one that the plugin rejects (a rank-3 mean dim)."""

import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


def mean_dim2(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(dim=2, keepdim=False)
