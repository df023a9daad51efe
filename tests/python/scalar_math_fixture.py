"""Native functions that call the `math` module on Python scalars (issue 18, "math.sqrt,
math.exp, math.log on int/float values"), in every import form: `import math`, `import math
as m`, `from math import sqrt, pi`, `from math import floor as fl`. Each function is also the
oracle: called directly, it is CPython."""

import math
import math as m
from math import e, floor as fl, inf, log, nan, pi, sqrt

import rextio_torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


# One function of one float (`_f`) or int (`_i`) parameter per math function; the tensor
# parameter is there because a native function takes one.
def sqrt_f(x: TensorF32Cpu2D, v: float) -> float:
    return math.sqrt(v)


def sqrt_i(x: TensorF32Cpu2D, v: int) -> float:
    return math.sqrt(v)


def exp_f(x: TensorF32Cpu2D, v: float) -> float:
    return math.exp(v)


def exp_i(x: TensorF32Cpu2D, v: int) -> float:
    return math.exp(v)


def log_f(x: TensorF32Cpu2D, v: float) -> float:
    return math.log(v)


def log_i(x: TensorF32Cpu2D, v: int) -> float:
    return math.log(v)


def tanh_f(x: TensorF32Cpu2D, v: float) -> float:
    return math.tanh(v)


def tanh_i(x: TensorF32Cpu2D, v: int) -> float:
    return math.tanh(v)


def floor_f(x: TensorF32Cpu2D, v: float) -> int:
    return math.floor(v)


def floor_i(x: TensorF32Cpu2D, v: int) -> int:
    return math.floor(v)


def ceil_f(x: TensorF32Cpu2D, v: float) -> int:
    return math.ceil(v)


def ceil_i(x: TensorF32Cpu2D, v: int) -> int:
    return math.ceil(v)


def fabs_f(x: TensorF32Cpu2D, v: float) -> float:
    return math.fabs(v)


def fabs_i(x: TensorF32Cpu2D, v: int) -> float:
    return math.fabs(v)


UNARY_FUNCTIONS = [
    "sqrt_f", "sqrt_i", "exp_f", "exp_i", "log_f", "log_i", "tanh_f", "tanh_i",
    "floor_f", "floor_i", "ceil_f", "ceil_i", "fabs_f", "fabs_i",
]


def log_base_ff(x: TensorF32Cpu2D, v: float, base: float) -> float:
    return math.log(v, base)


def log_base_if(x: TensorF32Cpu2D, v: int, base: float) -> float:
    return math.log(v, base)


def log_base_ii(x: TensorF32Cpu2D, v: int, base: int) -> float:
    return math.log(v, base)


BASE_FUNCTIONS = ["log_base_ff", "log_base_if", "log_base_ii"]


# Literals and bools.
def literals(x: TensorF32Cpu2D) -> float:
    return math.sqrt(2) + math.exp(0.5) + math.log(10, 10) + math.fabs(-3)


def of_a_bool(x: TensorF32Cpu2D, flag: bool) -> float:
    return math.tanh(flag) + math.sqrt(flag)


def floor_of_a_bool(x: TensorF32Cpu2D, flag: bool) -> int:
    return math.floor(flag) + math.ceil(flag)


# Import forms and constants.
def aliased_module(x: TensorF32Cpu2D, v: float) -> float:
    return m.sqrt(v) * m.pi


def imported_functions(x: TensorF32Cpu2D, v: float) -> float:
    return sqrt(v) + log(v) + pi + e


def imported_floor(x: TensorF32Cpu2D, v: float) -> int:
    return fl(v)


def constants(x: TensorF32Cpu2D) -> float:
    return math.pi + math.e + math.tau


def infinity(x: TensorF32Cpu2D) -> float:
    return math.inf


def minus_infinity(x: TensorF32Cpu2D) -> float:
    return -inf


def not_a_number(x: TensorF32Cpu2D) -> float:
    return math.nan + nan


def below_infinity(x: TensorF32Cpu2D, v: float) -> bool:
    return v < math.inf


# Scalar code around them: arithmetic on the results, control flow, a loop.
def in_control_flow(x: TensorF32Cpu2D, n: int) -> float:
    total = 0.0
    for i in range(n):
        if math.floor(math.sqrt(i)) * math.floor(math.sqrt(i)) == i:
            total = total + math.log(i + 1)
        else:
            total = total - math.tanh(i) * 0.5
    return total


# With tensors: the scalar is an operand of a tensor op.
def scaled_by_sqrt(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu2D:
    return x / math.sqrt(d)


def scaled_by_exp(logits: TensorF32Cpu2D, t: float) -> TensorF32Cpu2D:
    return logits * math.exp(t)


def attention_scores(q: TensorF32Cpu2D, k: TensorF32Cpu2D, d: int) -> TensorF32Cpu2D:
    return (q @ k) / math.sqrt(d)


def shifted_by_pi(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x * math.pi - math.e


@rextio_torch.compile
def decorated(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu2D:
    return x * (1.0 / math.sqrt(d))
