"""Functions with ops that take scalar parameters (issue 18: `F.leaky_relu(negative_slope)`,
`F.elu(alpha)`, `F.hardtanh(min_val, max_val)`, `torch.clamp`/`clip`), each compared with
eager in test_param_activations.py. `*_param` functions take their parameters as arguments,
so one compiled function is called with every parameter value of the test."""

import torch
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


# Literal parameters, every spelling.
def leaky_default(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.leaky_relu(x)


def leaky_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.leaky_relu(x, 0.2)


def leaky_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.leaky_relu(x, negative_slope=-1.5, inplace=False)


def leaky_int_vector(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.leaky_relu(x, 3)


def elu_default(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.elu(x)


def elu_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.elu(x, alpha=0.5, inplace=False)


def elu_positional_vector(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.elu(x, -2.0)


def hardtanh_default(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.hardtanh(x)


def hardtanh_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.hardtanh(x, min_val=-2.0, max_val=2.0, inplace=False)


def hardtanh_positional_vector(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.hardtanh(x, -0.0, 3)


def clamp_both(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.clamp(x, min=-1.0, max=1.0)


def clamp_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.clamp(x, 0, 6)


def clamp_min_only(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.clamp(x, min=0.0)


def clamp_max_only(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clamp(max=-0.0)


def clamp_method_none(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clamp(None, 1e-40)


def clip_function_vector(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.clip(x, -3.0)


def clip_method(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clip(min=1e30, max=-1e30)


def chained(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = F.leaky_relu(x * 2.0, 0.1)
    h = F.elu(h).clamp(-0.5, 0.5)
    return F.hardtanh(h + 1.0, -1e-45, 1.0)


LITERAL_FUNCTIONS = [
    "leaky_default", "leaky_positional", "leaky_keyword", "leaky_int_vector", "elu_default",
    "elu_keyword", "elu_positional_vector", "hardtanh_default", "hardtanh_keyword",
    "hardtanh_positional_vector", "clamp_both", "clamp_positional", "clamp_min_only",
    "clamp_max_only", "clamp_method_none", "clip_function_vector", "clip_method", "chained",
]


# Parameters passed at run time.
def leaky_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return F.leaky_relu(x, negative_slope=s)


def elu_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return F.elu(x, s)


def clamp_min_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x.clamp(min=s)


def clamp_max_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return torch.clip(x, max=s)


ONE_PARAM_FUNCTIONS = ["leaky_param", "elu_param", "clamp_min_param", "clamp_max_param"]


def clamp_param(x: TensorF32Cpu2D, lo: float, hi: float) -> TensorF32Cpu2D:
    return torch.clamp(x, lo, hi)


def hardtanh_param(x: TensorF32Cpu2D, lo: float, hi: float) -> TensorF32Cpu2D:
    return F.hardtanh(x, min_val=lo, max_val=hi)


def clamp_int_param(x: TensorF32Cpu2D, lo: int, hi: int) -> TensorF32Cpu2D:
    return x.clamp(lo, hi)


def hardtanh_mixed_param(x: TensorF32Cpu2D, lo: int, hi: float) -> TensorF32Cpu2D:
    return F.hardtanh(x, lo, hi)


TWO_PARAM_FUNCTIONS = ["clamp_param", "hardtanh_param", "clamp_int_param", "hardtanh_mixed_param"]


# Rejected forms: each stays on Python with a diagnostic.
def leaky_inplace(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.leaky_relu(x, 0.2, inplace=True)


def clamp_tensor_bound(x: TensorF32Cpu2D, lo: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.clamp(x, min=lo)


def clamp_no_bound(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.clamp(x)


def elu_bool(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.elu(x, True)


def hardtanh_positional_inplace(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.hardtanh(x, -1.0, 1.0, False)


REJECTED = {
    "leaky_inplace": ("RXTP-TORCH-070", "requires literal inplace=False"),
    "clamp_tensor_bound": ("RXTP-TORCH-073", "a tensor bound is not claimed"),
    "clamp_no_bound": ("RXTP-TORCH-073", "at least one of min or max"),
    "elu_bool": ("RXTP-TORCH-071", "alpha to be an int or a float, got 'bool'"),
    "hardtanh_positional_inplace": ("RXTP-TORCH-072", "inplace by keyword only"),
}
