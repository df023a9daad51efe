"""Shared set-up for the Python tests: one torch thread, the repository paths, and the
parity oracle (compiled output vs eager PyTorch)."""

import contextlib
import importlib.util
import math
import pathlib
import sys

import pytest
import torch
import torch.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

torch.set_num_threads(1)

# Default tolerance of a parity check: |ours - eager| <= RTOL * max(1, |eager|) elementwise,
# relative above 1 and an absolute 1e-5 below it. Checks of fused linear chains pass the
# tighter, conditioning-aware `fused_linear_bound` instead (docs/parity.md).
RTOL = 1e-5

# float32 machine epsilon, 2^-23.
EPS = torch.finfo(torch.float32).eps


def assert_parity(ours: torch.Tensor, eager: torch.Tensor, bound: torch.Tensor | None = None) -> None:
    """`ours` equals `eager` in dtype, shape and device, NaN positions and infinities, and
    elsewhere differs by at most `bound` (elementwise; default RTOL * max(1, |eager|))."""
    assert isinstance(ours, torch.Tensor)
    assert ours.dtype == eager.dtype, (ours.dtype, eager.dtype)
    assert ours.shape == eager.shape, (ours.shape, eager.shape)
    assert ours.device == eager.device
    if not ours.dtype.is_floating_point:
        assert torch.equal(ours, eager)
        return
    nan = torch.isnan(eager)
    assert torch.equal(torch.isnan(ours), nan), "NaN positions differ"
    inf = torch.isinf(eager)
    assert torch.equal(ours[inf], eager[inf]), "infinities differ"
    finite = ~(nan | inf)
    if bound is None:
        bound = RTOL * eager.abs().clamp(min=1.0)
    bound = bound.expand(eager.shape).to(eager.device)[finite].double()
    assert not torch.isnan(bound).any(), "no bound for a finite value"
    diff = (ours[finite].double() - eager[finite].double()).abs()
    if diff.numel():
        over = diff - bound
        worst = int(over.argmax())
        assert over[worst] <= 0, f"difference {diff[worst].item():.3g} > bound {bound[worst].item():.3g}"


def _widen(lo, hi, amount):
    # An infinite endpoint is an exact infinity, which no rounding moves.
    amount = torch.nan_to_num(amount, nan=0.0, posinf=0.0, neginf=0.0)
    return lo - amount, hi + amount


def _magnitude(lo, hi):
    return torch.maximum(lo.abs(), hi.abs())


_GELU_ARGMIN = -0.7517915246935645  # gelu's one minimum (value -0.1700)
_SILU_ARGMIN = -1.2784645427610741  # silu's one minimum (value -0.2785)
# ATen's float32 GELU is within this times max(1, |x|) of the exact value, not a few ulps (its
# vectorized erf is accurate to 1.5e-7 absolute; runtime/tests/vmath.rs measures 3.5e-7).
ATEN_GELU_ABS = 4e-7


def _image(op: str, lo: torch.Tensor, hi: torch.Tensor):
    """The image of [lo, hi] under `op`, plus 4 ulps: ATen's and the kernel's float32
    activations each round within a few ulps of the exact function."""
    if op in ("relu", "sigmoid", "tanh", "exp"):
        lo, hi = getattr(torch, op)(lo), getattr(torch, op)(hi)
    elif op == "neg":
        lo, hi = -hi, -lo
    elif op in ("abs", "square"):
        top = _magnitude(lo, hi)
        bottom = torch.where(lo > 0, lo, torch.where(hi < 0, -hi, torch.zeros_like(lo)))
        lo, hi = (bottom, top) if op == "abs" else (bottom.square(), top.square())
    elif op == "log":  # below 0 the bound opens to -inf
        lo, hi = torch.where(lo > 0, lo.log(), torch.full_like(lo, -math.inf)), hi.log()
    elif op == "sqrt":
        lo, hi = lo.clamp(min=0).sqrt(), hi.sqrt()
    elif op == "relu6":
        lo, hi = lo.clamp(0.0, 6.0), hi.clamp(0.0, 6.0)
    elif op == "rsqrt":  # decreasing; below 0 the bound opens to +inf
        lo, hi = hi.rsqrt(), torch.where(lo > 0, lo.rsqrt(), torch.full_like(lo, math.inf))
    elif op == "gelu":
        aten_error = ATEN_GELU_ABS * _magnitude(lo, hi).clamp(min=1.0)
        glo, ghi = F.gelu(lo), F.gelu(hi)
        straddles = (lo < _GELU_ARGMIN) & (hi > _GELU_ARGMIN)
        least = F.gelu(torch.tensor(_GELU_ARGMIN, dtype=lo.dtype))
        lo, hi = torch.where(straddles, least, torch.minimum(glo, ghi)), torch.maximum(glo, ghi)
        return _widen(lo, hi, 4 * EPS * _magnitude(lo, hi) + aten_error)
    elif op == "silu":
        slo, shi = F.silu(lo), F.silu(hi)
        straddles = (lo < _SILU_ARGMIN) & (hi > _SILU_ARGMIN)
        least = F.silu(torch.tensor(_SILU_ARGMIN, dtype=lo.dtype))
        lo, hi = torch.where(straddles, least, torch.minimum(slo, shi)), torch.maximum(slo, shi)
    else:
        raise ValueError(f"unknown activation {op!r}")
    return _widen(lo, hi, 4 * EPS * _magnitude(lo, hi))


def fused_linear_bound(x, w, b=None, acts=(), reduce=None, keepdim=False) -> torch.Tensor:
    """Elementwise tolerance of `linear(x, w, b) -> acts -> reduce` over dim 1 (`reduce` is
    None, "sum" or "mean"): the width of a float64 interval that holds the exact value of the
    chain on these float32 inputs and both float32 results (docs/parity.md).

    linear: y +- 2 sqrt(K + 1) eps (sum_k |x_k w_k| + |b|); each activation: the interval's
    image plus 4 ulps; a sum over n values: the intervals' sum plus 2 sqrt(n + 1) eps sum |v|;
    a mean: that over n plus one ulp. It scales with the conditioning of each step and is a
    few ulps where the chain is well conditioned."""
    with torch.no_grad():
        x, w = x.double(), w.double()
        b = None if b is None else b.double()
        k = x.shape[1]
        y = F.linear(x, w, b)
        scale = F.linear(x.abs(), w.abs(), None if b is None else b.abs())
        # An infinite y is exact: every summation order gives that infinity.
        radius = torch.where(torch.isinf(y), torch.zeros_like(y), 2 * math.sqrt(k + 1) * EPS * scale)
        lo, hi = y - radius, y + radius
        for op in acts:
            lo, hi = _image(op, lo, hi)
        if reduce is not None:
            n = hi.shape[1]
            rounding = 2 * math.sqrt(n + 1) * EPS * _magnitude(lo, hi).sum(dim=1, keepdim=keepdim)
            lo, hi = _widen(lo.sum(dim=1, keepdim=keepdim), hi.sum(dim=1, keepdim=keepdim), rounding)
            if reduce == "mean":
                lo, hi = lo / n, hi / n
                lo, hi = _widen(lo, hi, EPS * _magnitude(lo, hi))
            elif reduce != "sum":
                raise ValueError(f"unknown reduction {reduce!r}")
        # Equal endpoints (an exact infinity) have width 0, not inf - inf.
        return torch.where(hi != lo, hi - lo, torch.zeros_like(hi))


def assert_same_bits(ours, eager) -> None:
    """`ours` is eager's result exactly: a non-tensor of the same type and value; a tensor
    of the same dtype and shape with NaN exactly where eager has NaN and every other float32
    element the same bits (so -0.0 and +0.0 differ; NaN payloads may), any other dtype
    equal."""
    if not isinstance(eager, torch.Tensor):
        assert type(ours) is type(eager) and ours == eager, (ours, eager)
        return
    assert isinstance(ours, torch.Tensor), (type(ours), eager)
    assert ours.dtype == eager.dtype and ours.shape == eager.shape, (
        ours.dtype, eager.dtype, ours.shape, eager.shape)
    if eager.dtype != torch.float32:
        assert torch.equal(ours, eager), (ours, eager)
        return
    nan = torch.isnan(eager)
    assert torch.equal(torch.isnan(ours), nan), "NaN positions differ"
    a, b = ours[~nan].view(torch.int32), eager[~nan].view(torch.int32)
    differ = (a != b).nonzero()
    assert differ.numel() == 0, (
        f"{differ.numel()} elements differ, first: ours {ours[~nan][differ[0]].item()!r} "
        f"vs eager {eager[~nan][differ[0]].item()!r}")


def import_generated(tmp_path_factory, name, text):
    """`text` written as module `name` in a fresh folder and imported (the compiler reads a
    function's source from its file)."""
    path = tmp_path_factory.mktemp(name) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def generated_module(tmp_path_factory, name, text):
    """[`import_generated`] for the life of a `with` block (a module-scoped fixture's), then
    forgotten, so that another test module may reuse the name."""
    module = import_generated(tmp_path_factory, name, text)
    try:
        yield module
    finally:
        sys.modules.pop(name, None)


def compiled_functions(rextio, tmp_path_factory, name, text, names):
    """Module `name` of `text` and each of its functions in `names` compiled (strict), as a
    module-scoped fixture yields them: `(module, {name: compiled})`."""
    with generated_module(tmp_path_factory, name, text) as module:
        yield module, {n: rextio.compile(getattr(module, n), strict=True) for n in names}


def seeded_randn(*shape, seed=0) -> torch.Tensor:
    """`torch.randn(*shape)` from a generator seeded by `seed` and the shape, so that every
    shape of a test gets its own values, the same at every run."""
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g)


def with_specials(t: torch.Tensor, start: int, step: int) -> torch.Tensor:
    """A copy of `t` with NaN, +inf, -inf and -0.0 at flat positions `start`, `start + step`,
    `start + 2 step` and `start + 3 step` (those that exist)."""
    t = t.clone()
    flat = t.view(-1)
    for i, value in zip(range(start, flat.numel(), step), [math.nan, math.inf, -math.inf, -0.0]):
        flat[i] = value
    return t


def max_rel_diff(ours: torch.Tensor, eager: torch.Tensor) -> float:
    finite = torch.isfinite(eager)
    if not finite.any():
        return 0.0
    diff = (ours[finite] - eager[finite]).abs() / eager[finite].abs().clamp(min=1.0)
    return diff.max().item()


@pytest.fixture(scope="session")
def rextio():
    import rextio_torch

    return rextio_torch


@pytest.fixture(scope="session")
def phase_a(rextio):
    import phase_a as module

    return module, rextio.compile(module.inference, strict=True)



# Every kernel path of a fused `linear`, forced in turn (None: the cost model's choice), so
# parity tests cover each one on every CPU instead of hoping that a shape reaches it
# (`rextio_torch._native.force_kernel_path`; per thread, reset after each test).
KERNEL_PATHS = [None, "small", "blocked", "blocked_t", "gemm"]


@pytest.fixture(params=KERNEL_PATHS, ids=lambda p: p or "cost-model")
def kernel_path(request, rextio):
    from rextio_torch import _native

    _native.force_kernel_path(request.param)
    try:
        yield request.param
    finally:
        _native.force_kernel_path(None)


SOURCE_HEADER = """\
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
"""


def eager_and_compiled(body: str, name: str = "f"):
    """`(original, compiled)` of function `name` in `body` (dedented, after the usual
    imports), compiled with `strict=True` from its source: the original is the eager oracle."""
    import textwrap

    import rextio_torch

    src = SOURCE_HEADER + textwrap.dedent(body)
    namespace: dict = {}
    exec(compile(src, f"<test source of {name}>", "exec"), namespace)
    return namespace[name], rextio_torch.compile(namespace[name], source=src, strict=True)
