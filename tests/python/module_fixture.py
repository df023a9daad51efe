"""User modules for tests/python/test_module.py: classes at module level, whose `forward`
`rextio_torch.compile(module)` compiles from this file's source."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


class Mlp(nn.Module):
    def __init__(self, d_in: int = 16, d_hidden: int = 32, d_out: int = 8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(d_hidden, d_out, bias=False)
        self.scale = nn.Parameter(torch.ones(d_out))
        self.register_buffer("shift", torch.zeros(d_out))

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = self.drop(self.act(self.fc1(x)))
        return self.fc2(h) * self.scale + self.shift


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
        self.out = nn.Softmax(dim=-1)

    def forward(self, x: TensorF32Cpu2D, depth: int) -> TensorF32Cpu1D:
        h = x
        for _ in range(depth):
            h = h.tanh()
        return self.out(self.body(h)).sum(dim=1)


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = nn.BatchNorm1d(4)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.norm(self.fc(x))


class Unannotated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).relu()


class Affine(nn.Module):
    """Its own parameters, used as tensors (`self.weight`), with torch.nn.functional."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 5) * 0.5)
        self.bias = nn.Parameter(torch.randn(3))

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return F.silu(F.linear(x, self.weight, self.bias))


class TanhGelu(nn.Module):
    """A GELU(approximate="tanh") member: not described to the frontend yet, so its call is a
    diagnostic (never exact GELU)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.act(self.fc(x))


class PreNormBlock(nn.Module):
    """A transformer MLP block: LayerNorm, Linear, GELU, Linear and the skip connection."""

    def __init__(self, d: int = 32, hidden: int = 64):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class BagOfWords(nn.Module):
    """Embedded ids, a LayerNorm without affine parameters, a classifier layer."""

    def __init__(self, vocab: int = 50, d: int = 16, classes: int = 3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-3)
        self.head = nn.Linear(d, classes)

    def forward(self, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
        return F.log_softmax(self.head(self.norm(self.embed(ids))), dim=1)
