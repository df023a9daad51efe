"""The idioms of public module code (issue 33), extended surface, against eager PyTorch:

- dtype plumbing at the dtype a tensor already has (`x.float()`, `x.to(torch.float32)`,
  `x.to(dtype=x.dtype)`, `w.to(dtype=x.dtype)`, `x.type_as(y)`, `x.to(y)`, `x.double()` of
  float64, `x.bfloat16()` of bfloat16): eager's no-op, the same tensor object (returned as
  eager returns it); a real conversion stays on Python with RXTP-TORCH-170;
- `F.sigmoid`, `F.tanh` (the functional spellings);
- methods of an operator's value (`(x + y).relu()`, `(x @ w).softmax(dim=1)`,
  `(x * 2.0).sum()`, `(x - 1.0).exp()`);
- augmented assignment (`y += 1.0`, `h *= s`, `h += f(h)`) lowered as a rebinding where the
  target is a tensor no other name sees; an argument, an alias, a view's input or a
  loop-carried tensor is refused (eager would update it in place), and a broadcast that would
  grow the target raises as eager does.

Each function is compiled alone (marker annotations) and inside a user module's forward
(`rextio_torch.compile(module, strict=True)`, so a fallback would raise). The reference
surface keeps every one of them on Python.
"""

import sys
import warnings

import pytest
import torch

from conftest import assert_parity, assert_same_bits, import_generated

SOURCE = '''
import torch
import torch.nn.functional as F
from torch import nn
from rextio_torch.types import (TensorF32Cpu0D, TensorF32Cpu1D, TensorF32Cpu2D,
                                TensorF32Cpu3D, TensorF64Cpu2D, TensorBF16Cpu2D)


def cast_float(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.float().relu()


def to_float32(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(torch.float32) * 2.0


def to_float(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(torch.float) - 1.0


def to_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(dtype=torch.float32) + 1.0


def to_own_dtype(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(x.dtype).relu()


def weight_to_input_dtype(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x @ w.to(dtype=x.dtype)


def type_as(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.type_as(y) + y


def to_other(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x.to(v) - v


def to_other_dtype(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x.to(v.dtype) * v


def double_of_f64(x: TensorF64Cpu2D) -> TensorF64Cpu2D:
    return x.double() * 2.0


def to_float64(x: TensorF64Cpu2D) -> TensorF64Cpu2D:
    return x.to(torch.float64) + x.to(torch.double)


def bfloat16_of_bf16(x: TensorBF16Cpu2D) -> TensorBF16Cpu2D:
    return x.bfloat16() * 3.0 + x.to(dtype=torch.bfloat16)


def returns_itself(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(torch.float32)


def contiguous_itself(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.contiguous()


def heads_merged(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    b, t, d = x.shape
    return x.transpose(1, 2).contiguous().view(b, t * d)


def aug_contiguous(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    h = (x * 2.0).contiguous()
    h += 1.0
    return h


def f_sigmoid(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.sigmoid(x)


def f_tanh(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.tanh(v)


def f_gate(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.sigmoid(x) * F.tanh(y)


def sum_relu(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (x + y).relu()


def product_softmax(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (x @ w).softmax(dim=1)


def scaled_sum(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return (x * 2.0).sum()


def negated_exp(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (x - 1.0).exp()


def linear_relu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).relu()


def aug_scalars(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    y = x * 2.0
    y += 1.0
    y *= s
    y -= 3
    y /= 4.0
    return y


def aug_tensor(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.linear(x, w, b)
    h += F.linear(h, w, b)
    h *= x
    return h


def aug_vector(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = x - 0.5
    h += v
    return h


def aug_in_loop(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x * 1.0
    for i in range(n):
        t = h * 0.5
        t += 1.0
        h = t
    return h


def aug_broadcast(y: TensorF32Cpu2D, e: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = y * 1.0
    h += e
    return h


def aug_grows_rank(v: TensorF32Cpu1D, e: TensorF32Cpu2D) -> TensorF32Cpu1D:
    h = v * 1.0
    h += e
    return h


def aug_argument(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    x += 1.0
    return x * 1.0


def aug_cast_argument(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x.float()
    h += 1.0
    return h * 1.0


def aug_alias(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a = x * 2.0
    b = a
    a += 1.0
    return b


def aug_view(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a = x * 2.0
    v = a.t()
    a += 1.0
    return v


def aug_carried(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x * 2.0
    for i in range(n):
        h += 1.0
    return h


def aug_if_alias(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu2D:
    a = x * 2.0
    b = x * 3.0
    if c:
        b = a
    a += 1.0
    return b


def convert_to_f64(x: TensorF32Cpu2D) -> TensorF64Cpu2D:
    return x.to(torch.float64)


def convert_float(x: TensorF64Cpu2D) -> TensorF32Cpu2D:
    return x.float()


def convert_copy(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(torch.float32, copy=True)
'''

COMPILED = ["cast_float", "to_float32", "to_float", "to_keyword", "to_own_dtype",
            "weight_to_input_dtype", "type_as", "to_other", "to_other_dtype", "double_of_f64",
            "to_float64", "bfloat16_of_bf16", "returns_itself", "contiguous_itself",
            "heads_merged", "aug_contiguous", "f_sigmoid", "f_tanh", "f_gate",
            "sum_relu", "product_softmax", "scaled_sum", "negated_exp", "linear_relu",
            "aug_scalars", "aug_tensor", "aug_vector", "aug_in_loop", "aug_broadcast"]

# (function, code, words of the refusal)
REFUSED = [
    ("aug_argument", "RXT010", "the caller's tensor `x`"),
    ("aug_cast_argument", "RXT010", "the caller's tensor `h`"),
    ("aug_alias", "RXT010", "which `b` also names"),
    ("aug_view", "RXT010", "which a view shares"),
    ("aug_carried", "RXT010", "which a loop or an `if` passes on"),
    ("aug_if_alias", "RXT010", "which a loop or an `if` passes on"),
    ("aug_grows_rank", "RXT010", "changes its type from"),
    ("convert_to_f64", "RXTP-TORCH-170", "converts TensorF32Cpu2D (float32) to float64"),
    ("convert_float", "RXTP-TORCH-170", "converts TensorF64Cpu2D (float64) to float32"),
    ("convert_copy", "RXTP-TORCH-170", "copy="),
]

SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-40, 3e38, -3e38]


@pytest.fixture(scope="module")
def idioms(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_idioms", SOURCE)
    compiled = {name: rextio.compile(getattr(module, name), strict=True) for name in COMPILED}
    yield module, compiled
    del sys.modules["parity_idioms"]


def matrix(rows=5, cols=4, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g)
    x.view(-1)[: len(SPECIAL)] = torch.tensor(SPECIAL)
    return x.to(dtype)


def arguments(name):
    x, y, w = matrix(seed=1), matrix(seed=2), matrix(4, 4, seed=3)
    v, b = torch.randn(4, generator=torch.Generator().manual_seed(4)), torch.randn(4)
    return {
        # Products sum in the kernels' order (docs/parity.md): finite inputs, parity bounds.
        "weight_to_input_dtype": (torch.randn(5, 4), w.nan_to_num(0.0, 1.0, -1.0)), "type_as": (x, y), "to_other": (x, v),
        "to_other_dtype": (x, v), "double_of_f64": (matrix(dtype=torch.float64),),
        "to_float64": (matrix(dtype=torch.float64),),
        "bfloat16_of_bf16": (matrix(dtype=torch.bfloat16),), "f_tanh": (v,), "f_gate": (x, y),
        "sum_relu": (x, y), "product_softmax": (torch.randn(5, 4), w), "linear_relu": (x, w, b),
        "aug_scalars": (x, 0.3), "aug_tensor": (torch.randn(5, 4), w, b),
        "aug_vector": (x, v), "aug_in_loop": (x, 3), "aug_broadcast": (x, y),
        "heads_merged": (torch.randn(2, 3, 4),), "aug_contiguous": (torch.randn(2, 3, 4),),
    }.get(name, (x,))


# Exact ops (no op, ATen's own, or elementwise with eager's rounding): eager's bits.
EXACT = ["cast_float", "to_float32", "to_float", "to_keyword", "to_own_dtype", "type_as",
         "to_other", "to_other_dtype", "double_of_f64", "to_float64", "bfloat16_of_bf16",
         "returns_itself", "contiguous_itself", "heads_merged", "aug_contiguous", "sum_relu", "scaled_sum", "aug_scalars", "aug_vector", "aug_in_loop",
         "aug_broadcast"]


def same_values(ours, eager):
    """Eager's result exactly, at any dtype: NaN where eager has NaN, every other element
    equal with its sign (so -0.0 and +0.0 differ)."""
    if not isinstance(eager, torch.Tensor) or eager.dtype == torch.float32:
        assert_same_bits(ours, eager)
        return
    assert ours.dtype == eager.dtype and ours.shape == eager.shape
    nan = eager.isnan()
    assert torch.equal(ours.isnan(), nan)
    assert torch.equal(ours[~nan], eager[~nan])
    assert torch.equal(ours[~nan].signbit(), eager[~nan].signbit())


@pytest.mark.parametrize("name", COMPILED)
def test_each_idiom_compiles_and_matches_eager(idioms, name):
    module, compiled = idioms
    args = arguments(name)
    with torch.no_grad():
        eager = getattr(module, name)(*[a.clone() if isinstance(a, torch.Tensor) else a
                                        for a in args])
    before = [a.clone() for a in args if isinstance(a, torch.Tensor)]
    ours = compiled[name](*args)
    if name in EXACT:
        same_values(ours, eager)
    else:
        assert_parity(ours, eager, None if name != "product_softmax" else
                      1e-5 * eager.abs().clamp(min=1.0) + 1e-6)
    # Compiled code never changes its arguments (eager's `+=` above is on locals only).
    after = [a for a in args if isinstance(a, torch.Tensor)]
    for a, b in zip(before, after):
        same_values(b, a)


def test_a_cast_to_the_own_dtype_returns_the_argument_itself_as_eager_does(idioms):
    module, compiled = idioms
    x = matrix()
    assert module.returns_itself(x) is x
    assert compiled["returns_itself"](x) is x


@pytest.mark.parametrize("transposed", [False, True])
def test_contiguous_is_eagers_the_tensor_itself_or_a_dense_copy(idioms, transposed):
    module, compiled = idioms
    x = matrix(4, 5).t() if transposed else matrix()
    eager, ours = module.contiguous_itself(x), compiled["contiguous_itself"](x)
    assert_same_bits(ours, eager)
    assert ours.is_contiguous() and (ours is x) == (eager is x) == (not transposed)


def test_an_in_place_broadcast_that_grows_the_target_raises_as_eager(idioms):
    module, compiled = idioms
    y, e = torch.randn(1, 4), torch.randn(3, 4)
    with pytest.raises(RuntimeError):
        module.aug_broadcast(y, e)
    with pytest.raises(RuntimeError):
        compiled["aug_broadcast"](y, e)
    # A broadcast that keeps the target's shape is eager's answer.
    e = torch.randn(1, 4)
    y = torch.randn(3, 4)
    assert_same_bits(compiled["aug_broadcast"](y, e), module.aug_broadcast(y, e))


@pytest.mark.parametrize("name,code,words", REFUSED)
def test_what_eager_answers_otherwise_stays_on_python(rextio, idioms, name, code, words):
    module, _ = idioms
    fn = getattr(module, name)
    with pytest.raises(rextio.CompileError) as raised:
        rextio.compile(fn, strict=True)
    assert code in str(raised.value) and words in str(raised.value), str(raised.value)
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(fn)
    assert kept.__wrapped__ is fn


@pytest.mark.parametrize("name", ["cast_float", "to_keyword", "to_own_dtype", "type_as",
                                  "f_sigmoid", "f_tanh", "sum_relu", "product_softmax",
                                  "aug_scalars", "aug_tensor"])
def test_the_reference_surface_keeps_the_idioms_on_python(rextio, idioms, name):
    module, _ = idioms
    fn = getattr(module, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = rextio.compile(fn, surface="reference")
    assert kept.__wrapped__ is fn


MODULE_SOURCE = '''
import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    """The mixed-precision norm of LLM code: computed at float32, cast back to the input's."""

    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(d) + 0.5)
        self.eps = 1e-6

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt((h * h).mean(dim=-1, keepdim=True) + self.eps)
        return self.weight.to(dtype=x.dtype) * h.type_as(x)


class Gated(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x):
        h = self.fc(x)
        h += self.fc(h)
        h *= 0.5
        g = F.sigmoid(self.gate(x)) * F.tanh(h)
        return (g + x).relu().to(x.dtype)


class Head(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, k))

    def forward(self, x):
        return (x @ self.w.to(x.dtype)).softmax(dim=1)
'''


@pytest.fixture(scope="module")
def user_modules(tmp_path_factory):
    module = import_generated(tmp_path_factory, "idioms_modules", MODULE_SOURCE)
    yield module
    del sys.modules["idioms_modules"]


@pytest.mark.parametrize("cls,args", [("RMSNorm", (8,)), ("Gated", (8,)), ("Head", (8, 5))])
def test_the_idioms_in_a_module_forward_compile_natively(rextio, user_modules, cls, args):
    torch.manual_seed(33)
    model = getattr(user_modules, cls)(*args).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(6, 8)
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, 1e-40])
    with warnings.catch_warnings():
        warnings.simplefilter("error", rextio.RextioFallbackWarning)
        ours = fast(x)
    with torch.no_grad():
        eager = model(x)
    assert_parity(ours, eager)
    (function,) = fast.signatures.values()
    assert type(function).__name__ == "CompiledFunction", function
