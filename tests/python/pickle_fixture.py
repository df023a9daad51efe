"""Compiled functions for test_pickle.py, in a module that worker processes import: `score`
decorated (the module binds the compiled object: pickled by reference), `gated` compiled under
another name (pickled by value), and `call`, what the pools run."""

import torch
import torch.nn.functional as F

import rextio_torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


@rextio_torch.compile(strict=True)
def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


def gate(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sigmoid(x) * x


gated = rextio_torch.compile(gate, strict=True)


def call(fn, args):
    """What a worker returns: the type of the function it received and its result."""
    with torch.no_grad():
        return type(fn).__name__, fn(*args)


def call_many(fn, batches):
    return [call(fn, args) for args in batches]
