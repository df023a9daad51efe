"""More of the surface, through Rextio: a classification head, elementwise/matmul forms, and a
linear whose value two chains read."""

import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def classify(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorI64Cpu1D:
    probs = F.softmax(F.linear(x, w, b), dim=1)
    return probs.argmax(dim=1)


def mix(a: TensorF32Cpu2D, w: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    h = torch.matmul(a, w) + v
    g = F.gelu(torch.sigmoid(h) * h - h.tanh() / h.exp())
    s = g @ v
    return s.abs().sqrt() + g.sum(dim=1)


def shared(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    h = F.linear(x, w, b)
    return h.relu().sum(dim=1) + torch.tanh(h).mean(dim=1)
