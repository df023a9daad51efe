"""Elementwise ops with scalar parameters (issue 18: `F.leaky_relu(x, negative_slope)`,
`F.elu(x, alpha)`, `F.hardtanh(x, min_val, max_val)`, `torch.clamp`/`torch.clip`/`.clamp`/
`.clip`), compiled under the extended surface and compared with eager PyTorch bit for bit
(NaN where eager has NaN; the sign of zero counts) over inputs with NaN, +-inf, -0.0,
subnormals and huge values, in 1-element, empty, rank-1 and rank-2 tensors, with literal
parameters of every spelling and with parameters passed at run time (NaN, infinities, values
beyond float32's range, a minimum above the maximum). What eager raises on a parameter value,
compiled code raises with the same class and words. Rejected forms stay on Python with a
diagnostic; the reference surface (and the Rextio plugin) keeps them on Python."""

import math

import pytest
import torch

import param_activations_fixture as fx
from rextio_torch.types import TensorF32Cpu1D
from test_scalar_operands import assert_same_bits, is_compiled, special_values

PARAMS = [0.01, 0.2, -1.5, 0.0, -0.0, 1.0, 6.0, 1e-40, 1e-45, 3.4e38, -3.4e38, math.inf,
          -math.inf, math.nan, 1e300, -1e300, 3.4028235677973366e38, 3.4028236e38, 7, -3]
PAIRS = [(-1.0, 1.0), (0.0, 6.0), (-0.0, 0.0), (0.0, -0.0), (2.0, 1.0), (-math.inf, math.inf),
         (math.nan, 1.0), (1.0, math.nan), (1e-45, 1e-40), (-1e300, 1.0), (1.0, 1e300),
         (-3.4e38, 3.4e38), (5, 5), (-7, 3)]


def inputs(rank, seed):
    shapes = [(37,), (1,), (0,), (4099,)] if rank == 1 else [(5, 33), (1, 1), (3, 0), (64, 129)]
    return [special_values(shape, seed + i) for i, shape in enumerate(shapes)]


def rank_of(fn):
    return 1 if fn.__annotations__["x"] is TensorF32Cpu1D else 2


def same_outcome(compiled, fn, *args):
    """The same bits, or the same exception class and message."""
    try:
        expected = fn(*args)
    except Exception as err:  # noqa: BLE001 - eager's own exception is the oracle
        with pytest.raises(type(err)) as ours:
            compiled(*args)
        assert str(err).splitlines()[0] in str(ours.value), (str(err), str(ours.value))
        return "raised"
    assert_same_bits(compiled(*args), expected)
    return "value"


@pytest.mark.parametrize("name", fx.LITERAL_FUNCTIONS)
def test_literal_parameters_match_eager_bit_for_bit(rextio, name):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    assert is_compiled(compiled)
    for x in inputs(rank_of(fn), seed=len(name)):
        assert_same_bits(compiled(x), fn(x))


@pytest.mark.parametrize("name", fx.ONE_PARAM_FUNCTIONS)
def test_a_parameter_at_run_time_matches_eager(rextio, name):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    outcomes = set()
    for x in inputs(2, seed=len(name)):
        for s in PARAMS:
            outcomes.add(same_outcome(compiled, fn, x, s))
    # 1e300 and 3.4028236e38 do not fit float32: eager raises, and so do we.
    assert outcomes == {"value", "raised"}


@pytest.mark.parametrize("name", fx.TWO_PARAM_FUNCTIONS)
def test_two_parameters_at_run_time_match_eager(rextio, name):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    ints = "int" in name
    pairs = [(-7, 3), (5, 5), (3, -7), (0, 0), (2**40 + 1, 2**41)] if ints else PAIRS
    if name == "hardtanh_mixed_param":
        pairs = [(int(lo), float(hi)) for lo, hi in [(-1, 1.0), (3, 2.5), (0, -0.0), (-1, math.nan)]]
    for x in inputs(2, seed=len(name)):
        for lo, hi in pairs:
            same_outcome(compiled, fn, x, lo, hi)


def test_hardtanh_raises_eagers_value_error_for_min_above_max(rextio):
    compiled = rextio.compile(fx.hardtanh_param, strict=True)
    x = special_values((3, 5), 1)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        fx.hardtanh_param(x, 2.0, 1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        compiled(x, 2.0, 1.0)
    # clamp takes such bounds: every element is the maximum (NaN stays NaN)
    clamp = rextio.compile(fx.clamp_param, strict=True)
    assert_same_bits(clamp(x, 2.0, 1.0), fx.clamp_param(x, 2.0, 1.0))


def test_a_parameter_beyond_float32_raises_eagers_runtime_error(rextio):
    compiled = rextio.compile(fx.leaky_param, strict=True)
    x = special_values((2, 2), 3)
    for fn in (fx.leaky_param, compiled):
        with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
            fn(x, 1e300)


def test_a_nan_bound_fills_with_nan_as_eager(rextio):
    clamp = rextio.compile(fx.clamp_min_param, strict=True)
    x = special_values((4, 9), 5)
    assert torch.isnan(fx.clamp_min_param(x, math.nan)).all()
    assert_same_bits(clamp(x, math.nan), fx.clamp_min_param(x, math.nan))


def test_the_ir_has_the_parameterized_ops(rextio):
    ir = rextio.compile(fx.chained, strict=True).optimized_ir
    for op in ("leaky_relu", "elu", "clamp", "hardtanh"):
        assert f"= {op} %" in ir, ir
    assert "clamp_min %" in rextio.compile(fx.clamp_min_only, strict=True).optimized_ir
    assert "clamp_max %" in rextio.compile(fx.clamp_max_only, strict=True).optimized_ir


@pytest.mark.parametrize("name", sorted(fx.REJECTED))
def test_rejected_forms_stay_on_python_with_a_diagnostic(rextio, name):
    fn = getattr(fx, name)
    code, words = fx.REJECTED[name]
    with pytest.raises(rextio.CompileError, match=code) as err:
        rextio.compile(fn, strict=True)
    assert words in str(err.value)
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(fn)
    assert not is_compiled(kept) and kept.__wrapped__ is fn


@pytest.mark.parametrize("name", ["leaky_positional", "elu_default", "hardtanh_keyword", "clamp_both",
                                  "clip_method", "leaky_param"])
def test_the_reference_surface_keeps_them_on_python(rextio, name):
    fn = getattr(fx, name)
    with pytest.raises(rextio.CompileError):
        rextio.compile(fn, strict=True, surface="reference")
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(fn, surface="reference")
    assert not is_compiled(kept) and kept.__wrapped__ is fn
