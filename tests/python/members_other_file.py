"""Module classes for tests/python/test_module_members.py that live in a file of their own, as
a library's activations or layers do (transformers' `activations.py`): the user modules of the
test file hold them as members, so their forwards are inlined from this file's source, with
this file's imports (`F`, `math`, which the test file does not import under these names)."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class NewGELUActivation(nn.Module):
    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class SiLUActivation(nn.Module):
    def forward(self, input):
        return F.silu(input)


class ScaledLinear(nn.Module):
    """A layer with parameters and a Python float attribute of its own."""

    def __init__(self, d_in, d_out, scale=0.5):
        super().__init__()
        self.proj = nn.Linear(d_in, d_out)
        self.scale = scale

    def forward(self, x):
        return self.proj(x) * self.scale


GLOBAL_SCALE = 2.0


class ReadsGlobal(nn.Module):
    """Its forward reads a module-level constant of this file: not inlined."""

    def forward(self, x):
        return x * GLOBAL_SCALE


class WithBatchNorm(nn.Module):
    """A member of a kind not compiled, inside a module of this file."""

    def __init__(self, d):
        super().__init__()
        self.norm = nn.BatchNorm1d(d)

    def forward(self, x):
        return self.norm(x) * 2.0
