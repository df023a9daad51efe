"""Python scalar operands of `+ - * /` (issue 18, "Scalar operands"): a float32 tensor with
an `int` or `float` literal, parameter or computed scalar, in either order, compiled under the
extended surface and compared with eager PyTorch bit for bit (NaN positions as NaN; the sign
of zero counts), over scalars that are NaN, +-inf, -0.0, huge, tiny, subnormal in float32 or
below its range, and ints that float32 rounds. The reference surface (and the Rextio plugin)
keeps such functions on Python, as the reference plugin does."""

import math

import pytest
import torch

import scalar_operands_fixture as fx
from conftest import assert_parity, assert_same_bits

FLOAT_SCALARS = [
    0.5, 3.0, 0.1, 1 / 3, 7.0, 2.0, 1e-5, -0.0, 0.0, math.nan, math.inf, -math.inf, 1e300,
    -1e300, 1e-300, 1e-40, 3e-39, -2.5e-44, 1.7e38, 3.4028235677973366e38, 3.4028236e38,
    -0.3, 1e-45, 7e-46, 16777217.0,
]
INT_SCALARS = [0, 1, 2, -7, 3, 16777217, 2**62 + 1, 2**60 + 2**36 + 1, -(2**63), 2**63 - 1]


def is_compiled(fn):
    return type(fn).__name__ in ("CompiledFunction", "AotFunction")


def special_values(shape, seed):
    """Random values of every magnitude, random bit patterns (subnormals and NaNs with
    payloads included) and the special values, in `shape`."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    specials = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40,
                             3.4e38, -3.4e38, 1.0, 3.0, 7.0, -2.0, 0.5])
    normal = torch.randn(n, generator=g) * 10.0 ** torch.randint(-40, 39, (n,), generator=g)
    patterns = torch.randint(-2**31, 2**31 - 1, (n,), generator=g, dtype=torch.int32).view(torch.float32)
    values = torch.cat([specials, normal, patterns])[:n] if n > len(specials) else specials[:n]
    values = torch.where(torch.rand(n, generator=g) < 0.5, values, torch.cat([specials, patterns])[:n])
    return values.reshape(shape).contiguous()


def inputs_for(fn, seed):
    rank = 1 if "vector" in fn.__name__ or fn.__name__ in ("rdiv_int", "inverse") else 2
    shapes = [(37,), (1,), (0,)] if rank == 1 else [(5, 33), (1, 1), (3, 0), (64, 129)]
    return [special_values(shape, seed + i) for i, shape in enumerate(shapes)]


@pytest.mark.parametrize("name", fx.PARAM_FUNCTIONS)
def test_a_float_scalar_matches_eager_bit_for_bit(rextio, name):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    assert is_compiled(compiled)
    for x in inputs_for(fn, seed=len(name)):
        for s in FLOAT_SCALARS:
            assert_same_bits(compiled(x, s), fn(x, s))


@pytest.mark.parametrize("name", fx.INT_FUNCTIONS)
def test_an_int_scalar_matches_eager_bit_for_bit(rextio, name):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    assert is_compiled(compiled)
    for x in inputs_for(fn, seed=len(name)):
        for n in INT_SCALARS:
            assert_same_bits(compiled(x, n), fn(x, n))


@pytest.mark.parametrize("name", fx.LITERAL_FUNCTIONS)
def test_literals_match_eager_bit_for_bit(rextio, name):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    assert is_compiled(compiled)
    for x in inputs_for(fn, seed=len(name)):
        assert_same_bits(compiled(x), fn(x))


def test_the_issue_spellings_compile_and_match_eager(rextio):
    tempered = rextio.compile(fx.tempered, strict=True)
    standardized = rextio.compile(fx.standardized, strict=True)
    for x in inputs_for(fx.affine, seed=3):
        for t in (0.7, 2.0, -0.0, 1e-40, math.inf):
            assert_same_bits(tempered(x, t), fx.tempered(x, t))
        cols = x.shape[1]
        mu, sigma = special_values((cols,), 1), special_values((cols,), 2).abs()
        assert_same_bits(standardized(x, mu, sigma), fx.standardized(x, mu, sigma))


def test_the_ir_has_the_scalar_ops(rextio):
    compiled = rextio.compile(fx.rdiv_param, strict=True)
    assert "rdiv.scalar" in compiled.optimized_ir
    assert "rsub.scalar" in rextio.compile(fx.complement, strict=True).optimized_ir
    assert "mul.scalar" in rextio.compile(fx.doubled, strict=True).optimized_ir


def test_div_is_a_true_division_and_rdiv_a_reciprocal_times_the_scalar():
    """The numerics the kernels follow, as eager computes them (the oracle, not our code):
    `x / s` divides by float32(s), `s / x` is `reciprocal(x) * float32(s)`; neither is the
    other's formula."""
    x = special_values((4096,), 11)
    s = 0.1
    s32 = torch.tensor(s, dtype=torch.float64).float()
    assert_same_bits(x / s, x / s32)
    assert not torch.equal((x / s).view(torch.int32), (x * (1 / s32)).view(torch.int32))
    assert_same_bits(s / x, torch.reciprocal(x) * s32)
    assert not torch.equal((s / x).view(torch.int32), (s32 / x).view(torch.int32))
    # an int is cast to float32 directly: 2**60 + 2**36 + 1 through a double would round down
    n = 2**60 + 2**36 + 1
    assert (torch.ones(1) * n).item() == 2.0**60 + 2.0**37
    assert float(torch.tensor(float(n)).float()) == 2.0**60


@pytest.mark.parametrize("name", ["linear_scaled", "scaled_softmax"])
def test_scalar_operands_around_fused_ops(rextio, name):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    g = torch.Generator().manual_seed(7)
    for batch, k, n in [(1, 8, 4), (6, 33, 17), (300, 64, 40)]:
        x, w, b = torch.randn(batch, k, generator=g), torch.randn(n, k, generator=g), torch.randn(n, generator=g)
        x[0, 0] = math.nan
        for t in (0.5, 3.0, -0.0, math.inf):
            if name == "scaled_softmax" and t == 0:
                # `1.0 / t` is Python's float division: ZeroDivisionError on both sides.
                with pytest.raises(ZeroDivisionError):
                    fn(x, w, b, t)
                with pytest.raises(ZeroDivisionError):
                    compiled(x, w, b, t)
                continue
            assert_parity(compiled(x, w, b, t), fn(x, w, b, t))


def test_scalars_computed_in_control_flow(rextio):
    compiled = rextio.compile(fx.computed_scale, strict=True)
    for x in inputs_for(fx.affine, seed=9):
        for t in (0.25, -1.5, 1e-40, math.nan):
            for n in (0, 1, 4):
                assert_same_bits(compiled(x, t, n), fx.computed_scale(x, t, n))


def test_a_bool_or_str_scalar_is_rejected_with_a_clear_diagnostic(rextio):
    with pytest.raises(rextio.CompileError, match=r"RXTP-TORCH-057") as err:
        rextio.compile(fx.bool_scalar, strict=True)
    assert "a scalar operand of * must be an int or a float, got 'bool'" in str(err.value)
    with pytest.raises(rextio.CompileError, match=r"RXTP-TORCH-055") as err:
        rextio.compile(fx.str_scalar, strict=True)
    assert "must be an int or a float, got 'str'" in str(err.value)


@pytest.mark.parametrize("name", ["affine", "tempered", "rdiv_param", "add_int"])
def test_the_reference_surface_keeps_scalar_operands_on_python(rextio, name):
    fn = getattr(fx, name)
    with pytest.raises(rextio.CompileError, match=r"RXTP-TORCH-010"):
        rextio.compile(fn, strict=True, surface="reference")
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(fn, surface="reference")
    assert not is_compiled(kept) and kept.__wrapped__ is fn


def test_explain_names_the_scalar_rules(rextio):
    why = rextio.explain(fx.affine)
    assert why.compiles
    rules = [s.rule_id for s in why.sites]
    assert rules == ["rextio-torch/tensor-mul-scalar-f32-cpu-rank1-2",
                     "rextio-torch/tensor-add-scalar-f32-cpu-rank1-2"]
