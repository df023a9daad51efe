"""The `math` functions on Python scalars in native functions (issue 18): `math.sqrt`,
`math.exp`, `math.log` (and `math.log(x, base)`), `math.tanh`, `math.floor`, `math.ceil`,
`math.fabs` and the constants, compiled under the extended surface and compared with CPython
itself (each fixture function called directly is the oracle): float results bit for bit (NaN
as NaN, the sign of zero counts), int results equal, and every error with CPython's class and
words, over a grid of ints and floats with NaN, +-inf, -0.0, subnormals, huge values, ints
beyond 2**53 and at the ends of 64 bits. A scalar result used by a tensor op is compared with
eager PyTorch bit for bit. The reference surface keeps these functions on Python."""

import math
import random
import struct

import pytest
import torch

from conftest import assert_same_bits

import scalar_math_fixture as fx
from rextio_torch.types import TensorF32Cpu2D

FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 0.1, 1 / 3, 10.0, 1e-5, 7.5, -7.5, 2.5, -2.5,
    math.pi, math.e, math.nan, -math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-300,
    5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    709.78, 709.79, -745.1, -745.2, 710.0, -708.0, 20.0, -20.0, 1e-10, 0.9999999999999999,
    1.0000000000000002, 4.5e15, 4503599627370495.5, -4503599627370495.5, 9.2e18, -9.2e18,
    9.223372036854775e18, 9.223372036854776e18, -9.223372036854776e18, -9.223372036854778e18,
]
INTS = [
    0, 1, -1, 2, 3, 4, 10, 100, -100, 709, 710, -745, -746, 1000, -1000, 2**53, 2**53 + 1,
    2**53 - 1, 2**62 + 1, -(2**62) - 1, 2**63 - 1, -(2**63), 2**63 - 513, 12345678901234567,
]


def is_compiled(fn):
    return type(fn).__name__ in ("CompiledFunction", "AotFunction")


def outcome(fn, *args):
    """What a call gives: ("ok", type name, exact value as text) or ("raise", class, words)."""
    try:
        value = fn(*args)
    except Exception as exc:  # noqa: BLE001 - the class is the point
        return ("raise", type(exc).__name__, str(exc))
    if isinstance(value, float):
        text = "nan" if math.isnan(value) else struct.pack("<d", value).hex()
        return ("ok", "float", text)
    return ("ok", type(value).__name__, repr(value))


def expected(fn, *args):
    """CPython's outcome, except where compiled ints end: an int result beyond 64 bits (a
    floor or ceil of a huge float) is our OverflowError."""
    result = outcome(fn, *args)
    if result[0] == "ok" and result[1] == "int" and not -(2**63) <= int(result[2]) < 2**63:
        return ("raise", "OverflowError", "64-bit")
    return result


def same(ours, oracle):
    if oracle[0] == "raise" and oracle[2] == "64-bit":
        return ours[:2] == oracle[:2] and "compiled ints are 64-bit" in ours[2]
    return ours == oracle


X = torch.zeros(1, 1)


@pytest.fixture(scope="module")
def compiled(rextio):
    names = fx.UNARY_FUNCTIONS + fx.BASE_FUNCTIONS + [
        "literals", "of_a_bool", "floor_of_a_bool", "aliased_module", "imported_functions",
        "imported_floor", "constants", "infinity", "minus_infinity", "not_a_number",
        "below_infinity", "in_control_flow", "scaled_by_sqrt", "scaled_by_exp",
        "attention_scores", "shifted_by_pi",
    ]
    out = {name: rextio.compile(getattr(fx, name), strict=True) for name in names}
    assert all(is_compiled(fn) for fn in out.values())
    return out


@pytest.mark.parametrize("name", fx.UNARY_FUNCTIONS)
def test_each_function_matches_cpython_over_the_grid(compiled, name):
    fn = getattr(fx, name)
    values = FLOATS if name.endswith("_f") else INTS
    failures = []
    for v in values:
        ours, oracle = outcome(compiled[name], X, v), expected(fn, X, v)
        if not same(ours, oracle):
            failures.append(f"{name}({v!r}): ours {ours}, CPython {oracle}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", fx.BASE_FUNCTIONS)
def test_log_with_a_base_matches_cpython(compiled, name):
    fn = getattr(fx, name)
    xs = FLOATS if name == "log_base_ff" else INTS
    bases = ([2.0, 10.0, 1.0, 0.5, 0.0, -2.0, math.e, math.inf, math.nan, 1e-300]
             if name != "log_base_ii" else [2, 10, 1, 0, -3, 3, 2**63 - 1])
    failures = []
    for v in xs:
        for base in bases:
            ours, oracle = outcome(compiled[name], X, v, base), outcome(fn, X, v, base)
            if ours != oracle:
                failures.append(f"{name}({v!r}, {base!r}): ours {ours}, CPython {oracle}")
    assert not failures, "\n".join(failures[:20])


def random_doubles(n, seed):
    """Doubles of every exponent (random bit patterns: subnormals, NaNs, infinities
    included) and values near exp's and log's interesting ranges."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.4:
            out.append(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0])
        elif kind < 0.7:
            out.append(rng.uniform(-750.0, 720.0))
        elif kind < 0.85:
            out.append(rng.uniform(0.0, 3.0))
        else:
            out.append(rng.choice([1.0, -1.0]) * 2.0 ** rng.uniform(-1074, 1024))
    return out


@pytest.mark.parametrize("name", ["exp_f", "log_f", "sqrt_f", "tanh_f", "floor_f", "ceil_f"])
def test_a_spread_of_doubles_matches_cpython_bit_for_bit(compiled, name):
    fn = getattr(fx, name)
    failures = []
    for v in random_doubles(4000, seed=len(name)):
        ours, oracle = outcome(compiled[name], X, v), expected(fn, X, v)
        if not same(ours, oracle):
            failures.append(f"{name}({v!r}): ours {ours}, CPython {oracle}")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("name", ["exp_i", "log_i", "sqrt_i", "tanh_i", "fabs_i"])
def test_ints_beyond_two_to_the_53_match_cpython(compiled, name):
    # The int converts to the nearest float (ties to even), as CPython's PyLong_AsDouble.
    fn = getattr(fx, name)
    rng = random.Random(7)
    values = [rng.randrange(-(2**63), 2**63) for _ in range(2000)]
    values += [2**53 + k for k in range(-3, 4)] + [2**63 - 1 - k for k in range(0, 2048, 97)]
    failures = []
    for v in values:
        ours, oracle = outcome(compiled[name], X, v), outcome(fn, X, v)
        if ours != oracle:
            failures.append(f"{name}({v!r}): ours {ours}, CPython {oracle}")
    assert not failures, "\n".join(failures[:20])


def test_errors_have_cpythons_class_and_words(compiled):
    cases = [
        ("sqrt_f", -1.0, ValueError, "math domain error"),
        ("sqrt_i", -4, ValueError, "math domain error"),
        ("log_i", 0, ValueError, "math domain error"),
        ("log_f", 0.0, ValueError, "math domain error"),
        ("log_f", -math.inf, ValueError, "math domain error"),
        ("exp_i", 1000, OverflowError, "math range error"),
        ("exp_f", 709.79, OverflowError, "math range error"),
        ("floor_f", math.inf, OverflowError, "cannot convert float infinity to integer"),
        ("ceil_f", -math.inf, OverflowError, "cannot convert float infinity to integer"),
        ("floor_f", math.nan, ValueError, "cannot convert float NaN to integer"),
    ]
    for name, v, cls, words in cases:
        with pytest.raises(cls) as ours:
            compiled[name](X, v)
        with pytest.raises(cls) as oracle:
            getattr(fx, name)(X, v)
        assert str(ours.value) == str(oracle.value) == words
    # log(x, 1) divides by log(1) == 0.0: CPython's float division by zero.
    with pytest.raises(ZeroDivisionError, match="^float division by zero$"):
        compiled["log_base_ff"](X, 2.0, 1.0)
    # A floor beyond 64 bits: a Python int in CPython, our OverflowError.
    with pytest.raises(OverflowError, match=r"integer overflow in math\.floor\(1e\+300\) \(compiled ints are 64-bit\)"):
        compiled["floor_f"](X, 1e300)


def test_ints_beyond_64_bits_are_refused_at_the_boundary(compiled):
    # CPython: math.sqrt(10**400) is OverflowError("int too large to convert to float") and
    # math.log(10**400) a float; compiled ints are 64-bit, so the argument itself is refused.
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        fx.sqrt_i(X, 10**400)
    assert fx.log_i(X, 10**400) == pytest.approx(921.0340371976183)
    for name in ["sqrt_i", "log_i"]:
        with pytest.raises(OverflowError, match="fits in 64 bits"):
            compiled[name](X, 10**400)


def test_literals_bools_imports_and_constants(compiled):
    checks = [
        ("literals", ()), ("of_a_bool", (True,)), ("of_a_bool", (False,)),
        ("floor_of_a_bool", (True,)), ("aliased_module", (2.0,)), ("imported_functions", (3.5,)),
        ("imported_floor", (-2.5,)), ("constants", ()), ("infinity", ()),
        ("minus_infinity", ()), ("not_a_number", ()), ("below_infinity", (1e308,)),
        ("below_infinity", (math.inf,)),
    ]
    for name, args in checks:
        assert outcome(compiled[name], X, *args) == outcome(getattr(fx, name), X, *args), name
    with pytest.raises(ValueError, match="^math domain error$"):
        compiled["imported_functions"](X, -1.0)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 17, 100])
def test_in_control_flow(compiled, n):
    assert outcome(compiled["in_control_flow"], X, n) == outcome(fx.in_control_flow, X, n)


def test_scalars_feed_tensor_ops_bit_for_bit(compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 33, generator=g) * 10
    x[0, :5] = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0])
    for d in [1, 2, 3, 7, 64, 100, 2**53 + 1, 2**63 - 1]:
        assert_same_bits(compiled["scaled_by_sqrt"](x, d), fx.scaled_by_sqrt(x, d))
    for t in [0.0, -0.0, 0.5, -3.0, 88.0, 89.0, -104.0, -110.0, math.nan, -math.inf, 700.0]:
        assert_same_bits(compiled["scaled_by_exp"](x, t), fx.scaled_by_exp(x, t))
    with pytest.raises(ValueError, match="^math domain error$"):
        compiled["scaled_by_sqrt"](x, -1)
    with pytest.raises(OverflowError, match="^math range error$"):
        compiled["scaled_by_exp"](x, 710.0)
    q, k = torch.randn(4, 16, generator=g), torch.randn(16, 5, generator=g)
    # The product is our GEMM, which may differ from ATen's in the last bit (the matmul lane's
    # envelope); the division by the scalar is exact.
    torch.testing.assert_close(compiled["attention_scores"](q, k, 16), fx.attention_scores(q, k, 16),
                               rtol=1e-6, atol=1e-6)
    v = torch.randn(33, generator=g)
    assert_same_bits(compiled["shifted_by_pi"](v), fx.shifted_by_pi(v))
    x_before = x.clone()
    compiled["scaled_by_sqrt"](x, 4)
    assert torch.equal(x.view(torch.int32), x_before.view(torch.int32))


def test_decorator_form():
    assert is_compiled(fx.decorated)
    x = torch.randn(3, 4)
    assert_same_bits(fx.decorated(x, 16), fx.decorated.__wrapped__(x, 16))


def test_the_reference_surface_keeps_math_on_python(rextio):
    with pytest.raises(rextio.CompileError, match=r"RXT030"):
        rextio.compile(fx.scaled_by_sqrt, strict=True, surface="reference")
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(fx.sqrt_f, surface="reference")
    assert not is_compiled(kept) and kept.__wrapped__ is fx.sqrt_f


def test_explain_names_the_math_rules(rextio):
    why = rextio.explain(fx.scaled_by_sqrt)
    assert why.compiles
    rules = [s.rule_id for s in why.sites]
    assert rules == ["rextio-torch/math-sqrt-int-float",
                     "rextio-torch/tensor-div-scalar-f32-cpu-rank1-2"]


def sqrt_of_a_tensor(x: TensorF32Cpu2D) -> float:
    return math.sqrt(x)


def sine(x: TensorF32Cpu2D, v: float) -> float:
    return math.sin(v)


def test_a_tensor_argument_and_other_math_functions_stay_on_python(rextio):
    with pytest.raises(rextio.CompileError, match=r"RXTP-TORCH-120.*the tensor op is torch\.sqrt"):
        rextio.compile(sqrt_of_a_tensor, strict=True)
    with pytest.raises(rextio.CompileError, match=r"RXT030.*math\.sin"):
        rextio.compile(sine, strict=True)
