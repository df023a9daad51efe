"""Every dim-taking op of the surface with a negative dim (the extended surface's first
extension outside the op table), each compared with eager in test_surfaces.py."""

import torch
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def sum_last(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=-1)


def sum_first(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.sum(x, -2)


def sum_vector(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.sum(-1, keepdim=True)


def mean_last_keepdim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.mean(dim=-1, keepdim=True)


def mean_last(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(dim=-1, keepdim=False)


def mean_vector(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.mean(v, dim=-1, keepdim=True)


def softmax_last(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.softmax(dim=-1)


def softmax_first(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.softmax(x, -2)


def softmax_vector(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.softmax(-1)


def functional_softmax_last(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.softmax(x, dim=-1)


def functional_softmax_vector(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.softmax(v, dim=-1, dtype=None)


def argmax_last(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmax(dim=-1)


def argmax_first(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.argmax(x, dim=-2, keepdim=False)


def argmax_vector(v: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return v.argmax(dim=-1, keepdim=True)


def out_of_range(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=2)


def silu_softmax(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.silu(x).softmax(dim=1)
