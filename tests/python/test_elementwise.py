"""torch.where of an inline comparison, torch.maximum/minimum and pow with a scalar exponent
(issue 18, extended surface) against eager PyTorch.

- `where`: every comparison (`== != < <= > >=`), tensor vs tensor (broadcast M with V),
  tensor vs int/float literal or parameter on either side, branches tensors or int/float
  literals/parameters, the method form `a.where(cond, b)`: eager's bits and dtype exactly
  (ATen's comparison and select), over NaN, infinities, `-0.0`, subnormals and the float32
  neighbours of `0.1` (a float compared with a float32 tensor is rounded to float32 first);
  a float branch beyond float32's range raises eager's `RuntimeError`.
- `maximum`/`minimum` (function and method): NaN-propagating bits, broadcasting, eager's
  error on sizes that do not fit.
- `x ** p`, `torch.pow(x, p)`, `x.pow(p)`: ATen's own `pow(Tensor, Scalar)`, so every special
  exponent (0, 1, 0.5, -0.5, -1, 2, 3, -2) and the general one give eager's bits.
- Inputs are never mutated; strided inputs; the decorator form.
- Refused forms stay on Python with a diagnostic naming the problem: a bool mask passed as a
  value, a comparison used as a tensor value elsewhere, two int branches, `2 ** x`, a tensor
  exponent, a scalar `maximum` operand.
- The Rextio plugin and `surface="reference"` do not claim them.
"""

import math

import numpy as np
import pytest
import torch

from conftest import assert_same_bits, compiled_functions, generated_module

SOURCE = '''
import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def where_gt(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(x > y, x, y)


def where_ge_zero(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(x >= 0, x, 0.0)


def where_lt_float(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(x < 0.1, x, -1)


def where_eq_vec(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.where(x == v, v, x)


def where_ne_param(x: TensorF32Cpu2D, t: float) -> TensorF32Cpu2D:
    return torch.where(x != t, x, t)


def where_le_int_param(x: TensorF32Cpu1D, s: int) -> TensorF32Cpu1D:
    return torch.where(x <= s, 1.0, 0)


def where_scalar_left(x: TensorF32Cpu2D, t: float) -> TensorF32Cpu2D:
    return torch.where(t < x, x * 2.0, x)


def where_both_float_params(x: TensorF32Cpu1D, a: float, b: float) -> TensorF32Cpu1D:
    return torch.where(x > 0.5, a, b)


def where_method(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.where(x > y, y)


def where_method_scalar(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu().where(x != 0.0, -0.0)


def where_vec_mat(v: TensorF32Cpu1D, m: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(v > 0, m, v)


def maximum(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.maximum(a, b)


def minimum(a: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.minimum(a, b)


def maximum_method(a: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return a.maximum(b)


def minimum_method(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return a.minimum(b).relu()


def square(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x ** 2


def root(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x ** 0.5


def inverse(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x ** -1


def pow_function(x: TensorF32Cpu2D, p: float) -> TensorF32Cpu2D:
    return torch.pow(x, p)


def pow_method(x: TensorF32Cpu1D, p: int) -> TensorF32Cpu1D:
    return x.pow(p)


def pow_literals(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return (x ** 3) + x.pow(-0.5) + torch.pow(x, -2) + x ** 1.7 + x ** 0 + x ** 1


def mixed(x: TensorF32Cpu2D, y: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    h = torch.maximum(x, y) ** 2
    return torch.where(h > s, torch.minimum(h, y), x.relu())
'''

NAMES = ["where_gt", "where_ge_zero", "where_lt_float", "where_eq_vec", "where_ne_param",
         "where_le_int_param", "where_scalar_left", "where_both_float_params", "where_method",
         "where_method_scalar", "where_vec_mat", "maximum", "minimum", "maximum_method",
         "minimum_method", "square", "root", "inverse", "pow_function", "pow_method",
         "pow_literals", "mixed"]

REFUSED = '''
import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def mask_value(mask: torch.Tensor, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(mask, x, 0.0)


def compare_as_value(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    m = x > 0
    return torch.where(m, x, 0.0)


def two_ints(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(x > 0, 1, 0)


def no_tensor_compared(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return torch.where(n > 0, x, 0.0)


def bool_branch(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(x > 0, x, True)


def reverse_pow(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 2 ** x


def tensor_exponent(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x ** y


def scalar_maximum(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.maximum(x, 0.0)


def int_tensor_pow(i: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return i ** 2


def keyword_where(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(x > 0, input=x, other=x)
'''

REFUSED_WORDS = {
    "mask_value": ("RXTP-TORCH-100", "bool mask tensor has no marker type"),
    "compare_as_value": ("RXTP-TORCH-100", "condition written as a comparison in the call"),
    "two_ints": ("RXTP-TORCH-100", "two ints"),
    "no_tensor_compared": ("RXTP-TORCH-100", "compares no tensor"),
    "bool_branch": ("RXTP-TORCH-100", "a bool is not taken as a number"),
    "reverse_pow": ("RXTP-TORCH-104", "raised to a tensor power"),
    "tensor_exponent": ("RXTP-TORCH-104", "tensor exponent"),
    "scalar_maximum": ("RXTP-TORCH-101", "two tensors"),
    "int_tensor_pow": ("RXTP-TORCH-010", "outside the float32 CPU tensor surface"),
    "keyword_where": ("RXT", "keyword"),
}

F32_01 = np.float32(0.1)
NEIGHBOURS_01 = [float(np.nextafter(F32_01, np.float32(0))), float(F32_01),
                 float(np.nextafter(F32_01, np.float32(1))), 0.1]
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, 3e38, -3e38, 1.0, -1.0,
           0.5, 2.0, -2.0, 1e-20] + NEIGHBOURS_01


@pytest.fixture(scope="module")
def functions(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "parity_elementwise", SOURCE, NAMES)


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    with generated_module(tmp_path_factory, "refused_elementwise", REFUSED) as module:
        yield module


def tensor(rows, cols, seed):
    """A random rows x cols tensor (rank 1 of cols elements when rows is None) whose first
    elements are the special values (rotated by the seed, so two operands meet different
    specials)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn((1 if rows is None else rows) * cols, generator=g) * 3
    n = min(len(SPECIAL), x.numel())
    shift = seed % len(SPECIAL)
    specials = SPECIAL[shift:] + SPECIAL[:shift]
    x[:n] = torch.tensor(specials[:n])
    return x if rows is None else x.view(rows, cols)


def run(module, compiled, name, *args):
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    ours = compiled[name](*args)
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.view(torch.int32), b.view(torch.int32)), f"{name} mutated an input"
    try:
        assert_same_bits(ours, eager)
    except AssertionError as error:
        shapes = [tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args]
        raise AssertionError(f"{name} on {shapes}: {error}") from None
    return ours


SHAPES = [(1, 1), (3, 4), (5, 19), (17, 33), (0, 4), (2, 0)]
FLOATS = [0.1, float(F32_01), float(np.nextafter(F32_01, np.float32(1))), -0.0, 0.0, math.nan,
          math.inf, -math.inf, 1e-45, 2.5, -3.0]
INTS = [0, 1, -1, 2, 16777217, -(2 ** 40)]


@pytest.mark.parametrize("rows,cols", SHAPES)
def test_where_gives_eager_bits(functions, rows, cols):
    module, compiled = functions
    x, y = tensor(rows, cols, rows * 7 + cols), tensor(rows, cols, rows + cols * 3 + 1)
    v = tensor(None, cols, cols + 5)
    for name in ("where_gt", "where_method"):
        run(module, compiled, name, x, y)
        run(module, compiled, name, x, x)
    for name in ("where_ge_zero", "where_lt_float", "where_method_scalar"):
        run(module, compiled, name, x)
    run(module, compiled, "where_eq_vec", x, v)
    # Equal elements where x and v meet (a row equal to v).
    if rows:
        x2 = x.clone()
        x2[0] = v
        run(module, compiled, "where_eq_vec", x2, v)
    for t in FLOATS:
        run(module, compiled, "where_ne_param", x, t)
        run(module, compiled, "where_scalar_left", x, t)
        run(module, compiled, "where_both_float_params", x.reshape(-1), t, -t)
    for s in INTS:
        run(module, compiled, "where_le_int_param", x.reshape(-1), s)
    run(module, compiled, "where_vec_mat", v, x)


def test_comparison_rounds_the_scalar_to_float32(functions):
    module, compiled = functions
    x = torch.tensor(NEIGHBOURS_01[:3], dtype=torch.float32)
    # eager compares float32 tensors with float32(0.1), not with the double 0.1.
    with torch.no_grad():
        assert (x < 0.1).tolist() == [True, False, False]
    run(module, compiled, "where_lt_float", x.view(1, -1))
    out = compiled["where_ne_param"](x.view(1, -1), 0.1)
    assert out.view(-1)[1].item() == float(F32_01)
    # -0.0 == 0.0 and NaN compares unequal.
    z = torch.tensor([[-0.0, 0.0, math.nan]])
    run(module, compiled, "where_ne_param", z, 0.0)
    run(module, compiled, "where_ne_param", z, math.nan)


def test_where_branch_beyond_float32_raises_eagers_error(functions):
    module, compiled = functions
    x = torch.tensor([1.0, -1.0])
    with pytest.raises(RuntimeError) as eager:
        module.where_both_float_params(x, 1e300, 0.0)
    with pytest.raises(RuntimeError) as ours:
        compiled["where_both_float_params"](x, 1e300, 0.0)
    assert str(ours.value) == str(eager.value)
    # inf is no overflow; a compared 1e300 is float32's inf.
    run(module, compiled, "where_both_float_params", x, math.inf, -math.inf)
    run(module, compiled, "where_scalar_left", torch.tensor([[math.inf, 1.0, -math.inf]]), 1e300)
    run(module, compiled, "where_scalar_left", torch.tensor([[math.inf, 1.0, -math.inf]]), -1e300)


@pytest.mark.parametrize("rows,cols", SHAPES)
def test_maximum_minimum_give_eager_bits(functions, rows, cols):
    module, compiled = functions
    a, b = tensor(rows, cols, rows + 2 * cols), tensor(rows, cols, 3 * rows + cols + 7)
    v = tensor(None, cols, cols + 9)
    for name in ("maximum", "minimum_method"):
        run(module, compiled, name, a, b)
        run(module, compiled, name, a, a)
    run(module, compiled, "minimum", a, v)
    run(module, compiled, "maximum_method", a.reshape(-1), b.reshape(-1))


@pytest.mark.parametrize("name,args", [
    ("maximum", (torch.zeros(2, 3), torch.zeros(3, 3))),
    ("minimum", (torch.zeros(2, 3), torch.zeros(4))),
    ("where_gt", (torch.zeros(2, 3), torch.zeros(2, 4))),
    ("where_eq_vec", (torch.zeros(2, 3), torch.zeros(2))),
])
def test_size_mismatch_raises_eagers_error(functions, name, args):
    module, compiled = functions
    with pytest.raises(Exception) as eager:
        getattr(module, name)(*args)
    with pytest.raises(Exception) as ours:
        compiled[name](*args)
    assert type(ours.value) is type(eager.value) is RuntimeError
    assert str(ours.value) == str(eager.value)


EXPONENTS = [0, 1, 2, 3, -1, -2, 0.0, 1.0, 0.5, -0.5, 2.0, 3.0, -1.0, -2.0, 1.7, -0.3, 1e300,
             -1e300, math.inf, -math.inf, math.nan, 4, 17, -3, 0.25]


@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 5), (9, 37), (0, 3)])
def test_pow_gives_eager_bits(functions, rows, cols):
    module, compiled = functions
    x = tensor(rows, cols, rows * 5 + cols)
    for name in ("square", "root", "inverse"):
        run(module, compiled, name, x)
    for p in EXPONENTS:
        run(module, compiled, "pow_function", x, float(p))
        if isinstance(p, int):
            run(module, compiled, "pow_method", x.reshape(-1), p)
    run(module, compiled, "pow_literals", x.reshape(-1))


def test_strided_inputs_and_chains(functions):
    module, compiled = functions
    a = tensor(6, 4, 3).t()  # 4 x 6, transposed
    b = tensor(12, 6, 4)[::3]  # 4 x 6, strided rows
    for name in ("where_gt", "where_method"):
        run(module, compiled, name, a, b)
    # maximum/minimum of -0.0 and 0.0: which zero eager returns depends on the loop ATen takes
    # (its vector or its scalar one), which depends on the inputs' layout; compiled code keeps
    # strided arguments' strides and runs ATen's op on them, so it gives eager's bits on the
    # strided inputs themselves (it used to read them densely: eager's bits on dense copies).
    for name in ("maximum", "minimum_method"):
        run(module, compiled, name, a, b)
    run(module, compiled, "square", a)
    run(module, compiled, "root", b)
    for s in (0.0, 1.0, math.nan):
        run(module, compiled, "mixed", a, b, s)
    ir = compiled["mixed"].optimized_ir
    assert "where_gt" in ir and "maximum" in ir and "pow" in ir, ir


def test_refused_forms_stay_on_python(rextio, refused):
    for name, (code, words) in REFUSED_WORDS.items():
        fn = getattr(refused, name)
        with pytest.raises(rextio.CompileError) as error:
            rextio.compile(fn, strict=True)
        text = str(error.value)
        assert code in text and words in text, (name, text)
        with pytest.warns(rextio.RextioFallbackWarning):
            fallback = rextio.compile(fn)
        assert fallback.__wrapped__ is fn


def test_a_comparison_used_as_a_value_stays_refused(rextio, refused):
    # A bool tensor has no type: the rank-0 lane refuses the comparison outside a condition,
    # naming the forms that compile; under the reference surface it is not covered.
    why = rextio.explain(refused.compare_as_value)
    assert not why.compiles
    text = str(why)
    assert "RXTP-TORCH-162" in text and "it compiles as an if/while condition" in text, text
    reference = str(rextio.explain(refused.compare_as_value, surface="reference"))
    assert "comparison '>' on plugin types is not covered" in reference, reference


def test_reference_surface_leaves_them_on_python(rextio, functions):
    module, _ = functions
    for name in NAMES:
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name


def test_decorator_form(rextio):
    from rextio_torch.types import TensorF32Cpu2D

    @rextio.compile
    def relu_ish(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return torch.where(x > 0, x, 0.0) ** 2

    x = tensor(4, 5, 11)
    with torch.no_grad():
        eager = relu_ish.__wrapped__(x)
    assert_same_bits(relu_ish(x), eager)


NEW_RULES = {"rextio-torch/where-compare-f32-cpu-rank1-2", "rextio-torch/maximum-f32-cpu-rank1-2",
             "rextio-torch/minimum-f32-cpu-rank1-2", "rextio-torch/pow-scalar-exponent-f32-cpu-rank1-2",
             "rextio-torch/pow-operator-scalar-exponent-f32-cpu-rank1-2"}


def test_check_knows_the_rules_and_the_plugin_does_not():
    import json

    from rextio_torch import _native

    ids = [r["id"] for r in json.loads(_native.plugin_rule_records())]
    assert not NEW_RULES & set(ids), "the plugin's records are the reference's and 049"
    _, symbols, _ = _native.plugin_surface()
    for symbol in ("torch.where", "torch.maximum", "torch.minimum", "torch.pow"):
        assert symbol not in symbols
