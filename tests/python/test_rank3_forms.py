"""A transformer's `(B, T, D)` forms at rank 3 (issue 33, item 4), against eager PyTorch.

What works at rank 2 works at rank 3, in marker-annotated functions (`TensorF32Cpu3D`) and in
module forwards typed at the call: `F.layer_norm` over the last dim and a member
`nn.LayerNorm` (with and without affine), RMSNorm written by hand as public code writes it
(LLaMA's `x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight`), reductions along
any dim (`sum`, `mean`, `amax`, `amin`, with and without keepdim), `pow` with a scalar
exponent (`x.pow(2)`, `x ** 3`, `torch.pow`), `softmax`/`log_softmax` over dim -1,
elementwise ops broadcasting a rank-1 weight, `F.linear`, and a GPT-style MLP block with its
residual, `x = x + self.mlp(self.ln(x))`.

Every rank-3 op runs through ATen, the same call eager makes (the dense kernels and the
fusion rules take rank 1/2 only), so each result is eager's bit for bit (`assert_same_bits`:
NaN positions, infinities and signed zeros included), on `(2, 5, 16)` and `(1, 1, 8)` inputs
with and without NaN, +-inf and -0.0 in them. Every function and module here is checked
native: compiled with `strict=True` and called with RextioFallbackWarning as an error.
"""

import warnings

import pytest
import torch
import torch.nn as nn

from conftest import assert_same_bits, compiled_functions, generated_module, seeded_randn as _rand, with_specials

SHAPES = [(2, 5, 16), (1, 1, 8)]

SOURCE = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF64Cpu1D,
                                TensorF64Cpu2D, TensorF64Cpu3D)


def layer_norm(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def layer_norm_weight_shape(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.layer_norm(x, w.shape, w, b, 1e-5)


def layer_norm_plain(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.layer_norm(x, [x.shape[2]])


def layer_norm_keywords(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.layer_norm(x, (x.shape[-1],), weight=w, bias=b, eps=1e-6)


def rms_norm(x: TensorF32Cpu3D, weight: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


def rms_norm_sqrt(x: TensorF32Cpu3D, weight: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return weight * (x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-5))


def sum_last(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x.sum(dim=-1)


def mean_keepdim(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.mean(-1, keepdim=True)


def amax_mid(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.amax(dim=1, keepdim=True)


def amin_batch(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return torch.amin(x, 0)


def sums(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.sum(x, 1, keepdim=True) + x.sum(0, keepdim=True) - torch.mean(x, dim=2, keepdim=True)


def powers(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.pow(2) + x ** 3 - torch.pow(x, 0.5)


def softmax_by_hand(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def softmaxes(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.softmax(x, dim=-1) - F.log_softmax(x, dim=-1) + torch.rsqrt(x)


def scale_shift(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return torch.maximum(x * w + b, w) - torch.where(x > 0, x, 0.0)


def linear(x: TensorF32Cpu3D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.linear(x, w, b)


def mlp_block(x: TensorF32Cpu3D, g: TensorF32Cpu1D, beta: TensorF32Cpu1D, w1: TensorF32Cpu2D,
              b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu3D:
    h = F.layer_norm(x, (x.shape[-1],), g, beta, 1e-5)
    x = x + F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)
    return x


def layer_norm_f64(x: TensorF64Cpu3D, w: TensorF64Cpu1D, b: TensorF64Cpu1D) -> TensorF64Cpu3D:
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def mean_f64(x: TensorF64Cpu3D) -> TensorF64Cpu2D:
    return x.mean(dim=-1) + x.amax(2) - torch.sum(x, 1, keepdim=True).sum(-1)
'''

NAMES = [
    "layer_norm", "layer_norm_weight_shape", "layer_norm_plain", "layer_norm_keywords", "rms_norm", "rms_norm_sqrt",
    "sum_last", "mean_keepdim", "amax_mid", "amin_batch", "sums", "powers", "softmax_by_hand",
    "softmaxes", "scale_shift", "linear", "mlp_block", "layer_norm_f64", "mean_f64",
]


@pytest.fixture(scope="module")
def compiled(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "rank3_forms_fixture", SOURCE, NAMES)


def _specials(t: torch.Tensor) -> torch.Tensor:
    """`t` with NaN, +-inf and -0.0 at a few places."""
    return with_specials(t, 1, 5)


def _same(compiled, name, *args):
    module, fns = compiled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = fns[name](*args)
    assert_same_bits(ours, getattr(module, name)(*args))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("name", [
    "layer_norm_plain", "sum_last", "mean_keepdim", "amax_mid", "amin_batch", "sums", "powers",
    "softmax_by_hand", "softmaxes",
])
def test_one_input_forms_are_eagers_bits(compiled, name, shape, specials):
    x = _rand(*shape) * 3
    _same(compiled, name, _specials(x) if specials else x)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("name", ["layer_norm", "layer_norm_weight_shape", "layer_norm_keywords", "scale_shift"])
def test_affine_forms_are_eagers_bits(compiled, name, shape, specials):
    x = _rand(*shape) * 3
    d = shape[-1]
    w, b = _rand(d, seed=1), _rand(d, seed=2)
    _same(compiled, name, _specials(x) if specials else x, w, b)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("name", ["rms_norm", "rms_norm_sqrt"])
def test_rms_norm_by_hand_is_eagers_bits(compiled, name, shape, specials):
    x = _rand(*shape)
    x[..., 0] = 0.0  # a zero in every row, and a row of zeros: rsqrt(eps)
    x[0, 0] = -0.0
    w = _rand(shape[-1], seed=3)
    _same(compiled, name, _specials(x) if specials else x, w)


@pytest.mark.parametrize("shape", SHAPES)
def test_linear_and_the_mlp_block_are_eagers_bits(compiled, shape):
    d = shape[-1]
    x = _rand(*shape)
    w1, b1 = _rand(4 * d, d, seed=4), _rand(4 * d, seed=5)
    w2, b2 = _rand(d, 4 * d, seed=6), _rand(d, seed=7)
    _same(compiled, "linear", x, w1, b1)
    _same(compiled, "mlp_block", x, _rand(d, seed=8), _rand(d, seed=9), w1, b1, w2, b2)


@pytest.mark.parametrize("shape", SHAPES)
def test_float64_layer_norm_and_reductions_are_eagers(compiled, shape):
    x = _rand(*shape).double()
    w, b = _rand(shape[-1], seed=1).double(), _rand(shape[-1], seed=2).double()
    _same(compiled, "layer_norm_f64", x, w, b)
    _same(compiled, "mean_f64", x)


def test_a_weight_of_another_size_is_eagers_error(compiled):
    # Sizes are not types: a weight whose size is not the normalized one raises eager's error
    # at run time, from the same ATen call.
    module, fns = compiled
    x = _rand(2, 3, 4)
    with pytest.raises(RuntimeError) as ours:
        fns["layer_norm"](x, _rand(5), _rand(5))
    with pytest.raises(RuntimeError) as eager:
        module.layer_norm(x, _rand(5), _rand(5))
    assert str(ours.value).splitlines()[0] == str(eager.value).splitlines()[0]


MODULES = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNormModule(nn.Module):
    def __init__(self, d, affine):
        super().__init__()
        self.ln = nn.LayerNorm(d, elementwise_affine=affine)

    def forward(self, x):
        return self.ln(x)


class FunctionalLayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.d = d
        self.weight = nn.Parameter(torch.randn(d))
        self.bias = nn.Parameter(torch.randn(d))

    def forward(self, x):
        return F.layer_norm(x, (self.d,), self.weight, self.bias, 1e-5)


class GPTLayerNorm(nn.Module):
    """ LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False """

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class GPTMLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * d, d)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class GPTBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln_2 = GPTLayerNorm(d, bias=True)
        self.mlp = GPTMLP(d)

    def forward(self, x):
        x = x + self.mlp(self.ln_2(x))
        return x


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        return x


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.mlp(self.ln(x))
        return x


class Head(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = RMSNorm(d)
        self.proj = nn.Linear(d, 3, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return F.log_softmax(self.proj(h), dim=-1) + h.sum(dim=-1, keepdim=True).amax(1, keepdim=True)
'''


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    with generated_module(tmp_path_factory, "rank3_forms_modules", MODULES) as module:
        yield module


def _native_module(rextio, model, x):
    """`model` compiled (strict) and called on `x` with no fallback; its result, eager's, and
    the compiled object."""
    fast = rextio.compile(model, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = fast(x)
    with torch.no_grad():
        eager = model(x)
    assert all(type(f).__name__ == "CompiledFunction" for f in fast.signatures.values())
    return ours, eager, fast


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("make", [
    lambda m, d: m.LayerNormModule(d, True),
    lambda m, d: m.LayerNormModule(d, False),
    lambda m, d: m.FunctionalLayerNorm(d),
    lambda m, d: m.RMSNorm(d),
    lambda m, d: m.Block(d),
    lambda m, d: m.Head(d),
    lambda m, d: m.GPTLayerNorm(d, True),
    lambda m, d: m.GPTBlock(d),
], ids=["LayerNorm", "LayerNorm-no-affine", "F.layer_norm", "RMSNorm", "Block", "Head", "GPTLayerNorm", "GPTBlock"])
def test_module_forwards_at_rank_3_are_eagers_bits(rextio, modules, make, shape, specials):
    torch.manual_seed(0)
    model = make(modules, shape[-1]).eval()
    with torch.no_grad():  # LayerNorms start at ones and zeros: make them count
        for name, p in model.named_parameters():
            if ("ln" in name or "weight" == name or "bias" == name) and p.dim() == 1:
                p.normal_()
    x = _rand(*shape) * 2
    ours, eager, _ = _native_module(rextio, model, _specials(x) if specials else x)
    assert_same_bits(ours, eager)


def test_a_module_compiles_for_rank_3_and_rank_2_inputs_as_two_signatures(rextio, modules):
    torch.manual_seed(1)
    model = modules.Block(8).eval()
    ours, eager, fast = _native_module(rextio, model, _rand(2, 5, 8))
    assert_same_bits(ours, eager)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours2 = fast(_rand(5, 8))
    # At rank 2 the block fuses into our kernels: held to the module tests' tolerance.
    torch.testing.assert_close(ours2, model(_rand(5, 8)).detach(), rtol=1e-5, atol=1e-5)
    assert len(fast.signatures) == 2


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_sequential_takes_a_rank_3_or_float64_input(rextio, dtype, shape):
    torch.manual_seed(2)
    d = shape[-1]
    model = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d),
                          nn.Softmax(dim=-1)).eval().to(dtype)
    ours, eager, _ = _native_module(rextio, model, _rand(*shape).to(dtype))
    assert_same_bits(ours, eager)
