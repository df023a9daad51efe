"""Functions with Python scalar operands of `+ - * /` (issue 18, "Scalar operands"), each
compared with eager in test_scalar_operands.py. Each `*_param` function takes the scalar as a
parameter, so one compiled function is called with every scalar value of the test."""

import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


# x op s and s op x, with a float parameter, rank 2 and rank 1
def add_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x + s


def radd_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return s + x


def sub_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x - s


def rsub_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return s - x


def mul_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x * s


def rmul_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return s * x


def div_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x / s


def rdiv_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return s / x


def div_vector_param(v: TensorF32Cpu1D, s: float) -> TensorF32Cpu1D:
    return v / s


def rdiv_vector_param(v: TensorF32Cpu1D, s: float) -> TensorF32Cpu1D:
    return s / v


def rsub_vector_param(v: TensorF32Cpu1D, s: float) -> TensorF32Cpu1D:
    return s - v


# the same with an int parameter (cast to float32 by eager, not through a double)
def add_int(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return x + n


def rsub_int(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return n - x


def mul_int(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return x * n


def div_int(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return x / n


def rdiv_int(v: TensorF32Cpu1D, n: int) -> TensorF32Cpu1D:
    return n / v


PARAM_FUNCTIONS = [
    "add_param", "radd_param", "sub_param", "rsub_param", "mul_param", "rmul_param",
    "div_param", "rdiv_param", "div_vector_param", "rdiv_vector_param", "rsub_vector_param",
]
INT_FUNCTIONS = ["add_int", "rsub_int", "mul_int", "div_int", "rdiv_int"]


# literals, the spellings
def affine(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * 0.5 + 1.0


def tempered(logits: TensorF32Cpu2D, temperature: float) -> TensorF32Cpu2D:
    return logits / temperature


def standardized(x: TensorF32Cpu2D, mu: TensorF32Cpu1D, sigma: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (x - mu) / (sigma + 1e-5)


def doubled(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 2.0 * x


def complement(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 1.0 - x


def halved(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x / 2


def inverse(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return 1 / v


def odd_literals(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (x * -0.0 + 1e-40) / 1e300 - 16777217 + (3 - x) * 1e-300


LITERAL_FUNCTIONS = ["affine", "doubled", "complement", "halved", "inverse", "odd_literals"]


# scalar operands around fused ops and computed in control flow
def linear_scaled(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, t: float) -> TensorF32Cpu1D:
    h = F.linear(x * 0.5, w, b).relu() / t
    return h.sum(dim=1)


def scaled_softmax(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, t: float) -> TensorF32Cpu2D:
    logits = F.linear(x, w, b) * (1.0 / t)
    return logits.softmax(dim=1)


def computed_scale(x: TensorF32Cpu2D, t: float, n: int) -> TensorF32Cpu2D:
    scale = t * 2.0 + 1.0
    y = x
    for i in range(n):
        y = y * scale - i
        if i % 2 == 0:
            y = 0.5 - y
    return y / scale


# under the extended surface these are rejected with a clear diagnostic
def bool_scalar(x: TensorF32Cpu2D, flag: bool) -> TensorF32Cpu2D:
    return x * flag


def str_scalar(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x + "a"
