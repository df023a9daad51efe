"""What test_emit_build emits as one crate: Phase A (CPU) and the build-only cuda:0 slice
(rank-2 @ rank-2, + rank-1 bias, relu, mean over dim 1, named intermediates)."""

import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cuda0_1D, TensorF32Cuda0_2D


def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


def cuda_head(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_1D:
    product = x @ w
    biased = product + b
    active = biased.relu()
    return active.mean(dim=1, keepdim=False)
