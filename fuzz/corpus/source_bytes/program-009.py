"""Functions over the compiled surface beyond Phase A, each compared with eager."""

import torch
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def named_temps(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    hidden = F.linear(x, w, b)
    active = hidden.relu()
    return active.mean(dim=1, keepdim=False)


def shared_intermediate(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    hidden = F.linear(x, w, b).relu()
    return hidden + hidden.mean(dim=1, keepdim=True)


def no_bias_sum(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return F.linear(x, w).tanh().sum(dim=1)


def elementwise(a: TensorF32Cpu2D, b: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    centered = a - v
    return a.relu() + b.tanh() * centered / (b.abs() + v.exp())


def classify(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorI64Cpu1D:
    logits = F.linear(x, w, b)
    probabilities = logits.softmax(dim=1)
    return probabilities.argmax(dim=1, keepdim=False)


def matmul_mixed(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.sigmoid(a @ v)


def reductions(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.mean(x, dim=0, keepdim=True) + x.sum(dim=1, keepdim=True)


def gelu_sqrt(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x).square().sqrt()


def functional_spellings(a: TensorF32Cpu2D, b: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    product = torch.matmul(a, b) + a.matmul(b)
    shifted = torch.add(product, v) - torch.sub(a, v) * torch.mul(b, b)
    squashed = torch.relu(shifted) + F.relu(torch.div(a, torch.exp(b))) + torch.tanh(a) - torch.sigmoid(b)
    return F.softmax(squashed, dim=1) + torch.softmax(squashed, 0) + torch.sum(a, 1, keepdim=True)


def vector_ops(v: TensorF32Cpu1D, m: TensorF32Cpu2D) -> TensorI64Cpu1D:
    scores = v @ m
    normalized = scores.softmax(dim=0) + torch.abs(scores).sqrt() + scores.neg().negative().square().log()
    return torch.argmax(normalized, dim=0, keepdim=True)


def with_labels(labels: TensorI64Cpu1D, x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.argmax(x, dim=1)
