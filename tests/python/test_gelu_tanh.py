"""`F.gelu(x, approximate="tanh")` (an extension of the reference surface) against eager.

Eager computes it in two ways in one tensor: its vectorized loop (Sleef's tanh) over whole
chunks of 32 floats (16 at ATen's AVX2 capability) and its scalar loop (the C library's tanh,
bit for bit ours) over the rest, and the two differ in class for x in about [-5.36, -5.06]
(-0.0 against about -1.5e-7). We follow eager's split at one thread, so every element's class
is eager's; finite values are within 3e-7 * max(1, |x|) of eager's, where our tanh and
Sleef's meet `1 + tanh` cancelling (docs/parity.md, "GELU, tanh approximation")."""

import math
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F

from conftest import assert_parity, import_generated

SOURCE = """
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def gelu_tanh_2d(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x, approximate="tanh")


def gelu_tanh_1d(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.gelu(x, approximate="tanh")


def mlp(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = F.gelu(F.linear(x, w1, b1), approximate="tanh")
    return F.linear(h, w2).relu()
"""

# Envelope: our tanh against Sleef's where 1 + tanh cancels (runtime/examples/sweep.rs).
ABS = 3e-7
F32 = torch.finfo(torch.float32)
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, F32.tiny, -F32.tiny,
           F32.max, -F32.max, 1e13, -1e13, 1e30, -1e30, -5.1, -5.2, -5.06, -5.36, -3.0,
           -0.7524, 0.5, 1.0, -1.0, 10.0, -10.0]
# Where eager's two loops differ in class.
BAND = torch.linspace(-5.36, -5.06, 97)


def assert_gelu_tanh_matches(ours, eager, x):
    """Eager's classes (NaN, infinities, signs of zero, zero or not), values in the envelope."""
    bound = ABS * x.abs().clamp(min=1.0).double()
    assert_parity(ours, eager, bound)
    assert torch.equal(ours == 0, eager == 0), "zero or not"
    zero = eager == 0
    assert torch.equal(torch.signbit(ours[zero]), torch.signbit(eager[zero])), "signs of zero"


@pytest.fixture(autouse=True)
def one_thread():
    """Eager's split between its two loops restarts at each thread's range: one thread, the
    split we follow (the thread count is restored afterwards)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def functions(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_gelu_tanh", SOURCE)
    yield module, {name: rextio.compile(getattr(module, name), strict=True)
                   for name in ("gelu_tanh_2d", "gelu_tanh_1d", "mlp")}
    del sys.modules["parity_gelu_tanh"]


def test_matches_eager_on_special_values_and_every_short_length(functions):
    module, compiled = functions
    assert "gelu_tanh" in compiled["gelu_tanh_2d"].optimized_ir
    values = torch.tensor(SPECIAL, dtype=torch.float32)
    g = torch.Generator().manual_seed(70)
    wide = torch.cat([values, BAND, torch.randn(4099, generator=g) * 4, torch.randn(40, generator=g) * 1e3])
    cases = [("gelu_tanh_1d", values), ("gelu_tanh_1d", wide), ("gelu_tanh_2d", wide[:4140].view(69, 60)),
             ("gelu_tanh_2d", values.view(1, -1)), ("gelu_tanh_2d", values.view(-1, 1))]
    # Every length up to 100 over the band: where eager's vector chunks end matters.
    for n in range(1, 101):
        x = BAND[(torch.arange(n) * 37 + n) % len(BAND)].contiguous()
        cases += [("gelu_tanh_1d", x), ("gelu_tanh_2d", x.view(1, n)), ("gelu_tanh_2d", x.view(n, 1))]
    cases += [("gelu_tanh_1d", values[i:i + 1].clone()) for i in range(len(values))]
    saw = set()
    for name, x in cases:
        with torch.no_grad():
            eager = getattr(module, name)(x)
        ours = compiled[name](x)
        saw.update(("zero" if v == 0 else "nonzero") for v in eager[torch.isin(x, BAND)].tolist())
        try:
            assert_gelu_tanh_matches(ours, eager, x)
        except AssertionError as error:
            raise AssertionError(f"{name} on {tuple(x.shape)}: {error}") from None
    assert saw == {"zero", "nonzero"}, "the band shows both of eager's classes"


def test_runs_unfused_after_a_linear(functions):
    """A linear's epilogue applies per tile, so GELU tanh (whose result depends on where the
    element sits) stays its own whole-tensor op there."""
    module, compiled = functions
    ir = compiled["mlp"].optimized_ir
    assert "gelu_tanh" in ir and "activations=[gelu_tanh" not in ir, ir
    g = torch.Generator().manual_seed(3)
    for batch in (1, 5, 64):
        x, w1, b1 = torch.randn(batch, 24, generator=g) * 3, torch.randn(40, 24, generator=g), torch.randn(40, generator=g)
        w2 = torch.randn(7, 40, generator=g)
        with torch.no_grad():
            h = F.gelu(F.linear(x, w1, b1), approximate="tanh")
            eager = module.mlp(x, w1, b1, w2)
        # The hidden layer's envelope carried through the second product.
        bound = (ABS * h.abs().clamp(min=1.0)) @ w2.abs().t() + 1e-5 * (h.abs() @ w2.abs().t()) + 1e-6
        assert_parity(compiled["mlp"](x, w1, b1, w2), eager, bound)


def test_the_reference_surface_leaves_it_to_python(rextio, functions):
    module, _ = functions
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fallback = rextio.compile(module.gelu_tanh_2d, surface="reference")
    assert any("RXTP-TORCH-044" in str(w.message) for w in caught), [str(w.message) for w in caught]
    x = torch.randn(4, 5)
    assert torch.equal(fallback(x), F.gelu(x, approximate="tanh"))
    with pytest.raises(rextio.CompileError, match="approximate='none'"):
        rextio.compile(module.gelu_tanh_2d, surface="reference", strict=True)
