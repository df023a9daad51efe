# Forms the host keeps on Python (each function is not a candidate), with its words.
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def documented(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """A docstring is an expression statement to the host."""
    return x.relu()


def floordiv(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    k = n // 2
    return x.relu()


def int_condition(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x.relu()
    if n:
        h = x.tanh()
    return h


def step_param(x: TensorF32Cpu2D, n: int, s: int) -> TensorF32Cpu2D:
    h = x.relu()
    for i in range(0, n, s):
        h = h.tanh()
    return h


def bound_in_arm(x: TensorF32Cpu2D, flag: bool) -> TensorF32Cpu2D:
    if flag:
        t = x.relu()
    else:
        t = x.tanh()
    return t


def alias_after_loop(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x
    for i in range(n):
        h = h.relu()
    return h


def type_change(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x.relu()
    h = h.mean(dim=1, keepdim=False)
    return x.tanh()


def no_return_path(x: TensorF32Cpu2D, flag: bool) -> TensorF32Cpu2D:
    if flag:
        return x.relu()


def rebinds_target(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x.relu()
    for n in range(3):
        h = h.tanh()
    return h


def tensor_condition(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = x.relu()
    if v > v:
        h = x.tanh()
    return h


def mixed_numbers(x: TensorF32Cpu2D, n: int, f: float) -> TensorF32Cpu2D:
    k = n * f
    return x.relu()
