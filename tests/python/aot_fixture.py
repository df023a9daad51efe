"""What test_aot.py builds ahead of time: phase A (the fused linear chain), a loop with scalar
parameters, and a function that stays on Python."""

import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


def layers(x: TensorF32Cpu2D, w: TensorF32Cpu2D, depth: int, scale: float) -> TensorF32Cpu2D:
    h = x
    for i in range(depth):
        if i % 2 == 0:
            h = F.linear(h, w).tanh()
        else:
            h = h.sigmoid()
    return h * h


def rejected(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.cumsum(dim=1)
