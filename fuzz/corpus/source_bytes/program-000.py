"""Phase A: linear -> relu -> mean, the first workload of docs/benchmarks.md."""

import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)
