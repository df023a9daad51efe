"""Rank-3 tensors (issue 18, extended surface) against eager PyTorch.

- `TensorF32Cpu3D` parameters and results; batched `a @ b` / `torch.matmul` (rank 3 with
  rank 3) and broadcast products (rank 3 with rank 2, `x @ w.t()`); `F.linear` of a rank-3
  input; `transpose(-2, -1)` / `transpose(1, 2)`, `reshape`/`view` to and from rank 3;
  `F.softmax` / `F.log_softmax` over a dim; elementwise ops with tensors and scalars;
  activations; attention written verbatim. Every op but attention runs through ATen, or, for
  an activation of a contiguous tensor, the dense ops' loops over its flat data, so the
  results are eager's bit for bit, NaN/inf/-0.0 included; eager's shape errors are eager's.
- Attention, `softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1) @ v`, is one fused op
  (`fused_attention`) whose products sum in the linear kernels' order: it is held, with eager,
  to a bound around eager's float64 chain (`_attention_bound`), with eager's NaN and infinity
  positions; where sizes do not fit it runs eager's chain and raises eager's error.
- `surface="reference"` does not claim a function with a rank-3 annotation (it stays on
  Python), nor does the Rextio plugin list the marker.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from conftest import EPS, assert_parity, assert_same_bits, compiled_functions, seeded_randn as _rand, with_specials

SOURCE = '''
import math

import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def attention(q: TensorF32Cpu3D, k: TensorF32Cpu3D, v: TensorF32Cpu3D) -> TensorF32Cpu3D:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return F.softmax(scores, dim=-1) @ v


def batched(a: TensorF32Cpu3D, b: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.matmul(a, b)


def method_matmul(a: TensorF32Cpu3D, b: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return a.matmul(b)


def broadcast(x: TensorF32Cpu3D, w: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return x @ w.t()


def left_matrix(w: TensorF32Cpu2D, x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return w @ x


def linear(x: TensorF32Cpu3D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.linear(x, w, b)


def linear_relu(x: TensorF32Cpu3D, w: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.relu(F.linear(x, w))


def elementwise(a: TensorF32Cpu3D, b: TensorF32Cpu3D, m: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return (a + b) * m - v / (b * 2.0 + 3) - 1.5 / a


def functions(a: TensorF32Cpu3D, b: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.sub(torch.add(a, b), torch.mul(a, torch.div(a, b)))


def activations(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.gelu(x) + F.silu(x) + x.relu() + torch.tanh(x) + torch.sigmoid(x) + F.leaky_relu(x, 0.1)


def softmaxes(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.softmax(x, dim=1) + F.log_softmax(x, dim=-1) + x.softmax(0) + torch.log_softmax(x, 2)


def transpose12(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.transpose(1, 2)


def transpose01(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.transpose(x, 0, 1) * 1.0


def to_rank3(m: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return m.reshape(2, -1, m.shape[1])


def from_rank3(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x.reshape(-1, x.shape[-1])


def flat(x: TensorF32Cpu3D) -> TensorF32Cpu1D:
    return x.view(-1)


def heads(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    b = x.shape[0]
    t = x.size(1)
    return x.view(b * t, 2, -1).transpose(0, 1).reshape(2 * b, t, -1)


def bmm(a: TensorF32Cpu3D, b: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.bmm(a, b)


def bmm_attention(q: TensorF32Cpu3D, k: TensorF32Cpu3D, v: TensorF32Cpu3D) -> TensorF32Cpu3D:
    p = F.softmax(q.bmm(k.transpose(1, 2)) / math.sqrt(q.shape[-1]), dim=-1)
    return torch.bmm(p, v)


def gelu(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.gelu(x)


def gelu_tanh(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.gelu(x, approximate="tanh")


def silu(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.silu(x)


def sigmoid(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.sigmoid(x)


def tanh(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.tanh(x)


def exp(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.exp(x)


def relu(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.relu()
'''

NAMES = [
    "attention", "batched", "method_matmul", "broadcast", "left_matrix", "linear", "linear_relu",
    "elementwise", "functions", "activations", "softmaxes", "transpose12", "transpose01",
    "to_rank3", "from_rank3", "flat", "heads", "bmm", "bmm_attention",
]
# One activation each: a contiguous float32 rank-3 tensor runs the dense ops' own loops.
ACTIVATIONS = ["gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "exp", "relu"]
NAMES += ACTIVATIONS


@pytest.fixture(scope="module")
def compiled(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "rank3_fixture", SOURCE, NAMES)


def _specials(t: torch.Tensor) -> torch.Tensor:
    """`t` with NaN, +-inf and -0.0 at a few places."""
    return with_specials(t, 0, 7)


def _check(compiled, name, *args):
    module, fns = compiled
    before = [a.clone() for a in args]
    eager = getattr(module, name)(*args)
    ours = fns[name](*args)
    assert_same_bits(ours, eager)
    for a, b in zip(args, before):
        assert torch.equal(a.nan_to_num(), b.nan_to_num()), "an input was mutated"


def _attention_bound(q, k, v):
    """Eager's attention chain in float64 on the float32 inputs, and how far a float32
    computation may be from it: the scores' products (2 sqrt(d + 1) ulps of sum |q k|, and
    the division's ulp), the softmax (a relative error of at most 2.2 times the row's largest
    score error, plus 8 ulps), then the weighted values (the weights' error times |v|, and the
    product's 2 sqrt(n + 1) ulps of sum p |v|); twice that, for eager's error and ours."""
    q, k, v = (t.double() for t in (q, k, v))
    d, n = q.shape[-1], k.shape[1]
    c = math.sqrt(d)
    s = q @ k.transpose(-2, -1) / c
    ds = 2 * math.sqrt(d + 1) * EPS * (q.abs() @ k.abs().transpose(-2, -1)) / c + EPS * s.abs()
    p = torch.softmax(s, dim=-1)
    if s.numel() == 0:
        return p @ v, torch.zeros_like(p @ v)
    dp = p * (2.2 * ds.amax(dim=-1, keepdim=True) + 8 * EPS)
    o = p @ v
    do = dp @ v.abs() + 2 * math.sqrt(n + 1) * EPS * (p @ v.abs())
    return o, 2 * do + 1e-30


def _check_attention(compiled, name, q, k, v):
    """Ours and eager within `_attention_bound` of the float64 chain, with eager's NaN and
    infinity positions; inputs unchanged."""
    module, fns = compiled
    before = [a.clone() for a in (q, k, v)]
    eager = getattr(module, name)(q, k, v)
    ours = fns[name](q, k, v)
    exact, bound = _attention_bound(q, k, v)
    finite = torch.isfinite(exact)
    assert_parity(ours, eager, torch.where(finite, bound, torch.zeros_like(bound)).nan_to_num(0.0))
    for result in (ours, eager):
        assert_parity(result[finite], exact[finite].float(), bound[finite])
    for a, b in zip((q, k, v), before):
        assert torch.equal(a.nan_to_num(), b.nan_to_num()), "an input was mutated"


@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("shape", [(2, 5, 8), (1, 1, 4), (3, 17, 16), (2, 0, 4), (4, 64, 32), (2, 130, 72)])
def test_attention(compiled, shape, special):
    b, t, d = shape
    q, k, v = _rand(b, t, d, seed=1), _rand(b, t, d, seed=2), _rand(b, t, d, seed=3)
    if special:
        q = _specials(q)
    _check_attention(compiled, "attention", q, k, v)


def test_attention_cross_lengths(compiled):
    # Query and key lengths differ (cross attention), as eager allows.
    _check_attention(compiled, "attention", _rand(2, 3, 8, seed=4), _rand(2, 6, 8, seed=5), _rand(2, 6, 5, seed=6))
    # A batch of 1 keys and values broadcasts (matmul's rule): the unfused chain.
    _check_attention(compiled, "attention", _rand(3, 4, 8, seed=4), _rand(1, 6, 8, seed=5), _rand(1, 6, 5, seed=6))


def test_attention_non_contiguous(compiled):
    q = _rand(4, 2, 8, seed=7).transpose(0, 1)
    k = _rand(2, 8, 4, seed=8).transpose(1, 2)
    _check_attention(compiled, "attention", q, k, _rand(2, 4, 8, seed=9))


def test_attention_special_keys_and_values(compiled):
    """Infinite and NaN keys and values: eager's classes (a +inf score makes its row NaN, a
    -inf score a zero weight)."""
    q, k, v = _rand(2, 6, 8, seed=40), _rand(2, 7, 8, seed=41), _rand(2, 7, 5, seed=42)
    k, v = k.clone(), v.clone()
    k[0, 2, 3] = math.inf
    k[1, 4] = -1e30
    v[1, 1, 2] = math.nan
    module, fns = compiled
    eager, ours = module.attention(q, k, v), fns["attention"](q, k, v)
    assert torch.equal(torch.isnan(ours), torch.isnan(eager))
    assert torch.isnan(eager).any()
    finite = torch.isfinite(eager)
    assert_parity(ours[finite], eager[finite], 1e-5 * eager[finite].abs().clamp(min=1.0))


def test_attention_is_one_fused_op(rextio, compiled):
    _, fns = compiled
    text = str(rextio.explain(fns["attention"]))
    optimized = text[text.index("IR after `optimized`"):]
    assert "fused_attention" in optimized and "scale=div" in optimized, optimized
    assert "softmax" not in optimized and "matmul" not in optimized, optimized
    # The bmm spelling stays op by op (its fallback would need bmm's errors).
    text = str(rextio.explain(fns["bmm_attention"]))
    assert "fused_attention" not in text[text.index("IR after `optimized`"):]


@pytest.mark.parametrize("special", [False, True])
def test_products(compiled, special):
    a, b = _rand(3, 4, 5, seed=10), _rand(3, 5, 6, seed=11)
    if special:
        a = _specials(a)
    _check(compiled, "batched", a, b)
    _check(compiled, "method_matmul", a, b)
    _check(compiled, "batched", a, _rand(1, 5, 2, seed=12))  # a batch of 1 broadcasts
    w = _rand(7, 5, seed=13)
    _check(compiled, "broadcast", a, w)
    _check(compiled, "left_matrix", _rand(2, 4, seed=14), a)


@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("shape", [(3, 4, 5, 6), (1, 1, 1, 1), (2, 0, 3, 4), (4, 17, 33, 9)])
def test_bmm(compiled, shape, special):
    """`torch.bmm` / `.bmm`: ATen's batched product, eager's bits (NaN/inf/-0.0 included)."""
    b, n, k, m = shape
    a, c = _rand(b, n, k, seed=30), _rand(b, k, m, seed=31)
    if special:
        a = _specials(a)
    _check(compiled, "bmm", a, c)
    _check(compiled, "bmm", a.transpose(1, 2).contiguous().transpose(1, 2), c)
    q, kk, v = _rand(b, n, k, seed=32), _rand(b, m, k, seed=33), _rand(b, m, 5, seed=34)
    _check(compiled, "bmm_attention", q, kk, v)


def test_bmm_broadcasts_no_batch(compiled):
    """Where `matmul` would broadcast a batch of 1, bmm raises eager's error."""
    _same_error(compiled, "bmm", _rand(3, 4, 5), _rand(1, 5, 6))
    _same_error(compiled, "bmm", _rand(2, 4, 5), _rand(3, 5, 6))
    _same_error(compiled, "bmm", _rand(2, 4, 5), _rand(2, 4, 6))


@pytest.mark.parametrize("special", [False, True])
def test_linear(compiled, special):
    x, w, b = _rand(2, 3, 8, seed=15), _rand(5, 8, seed=16), _rand(5, seed=17)
    if special:
        x = _specials(x)
    _check(compiled, "linear", x, w, b)
    _check(compiled, "linear_relu", x, w)
    _check(compiled, "linear", x.transpose(0, 1), w, b)


@pytest.mark.parametrize("special", [False, True])
def test_elementwise_and_activations(compiled, special):
    a, b = _rand(2, 3, 4, seed=18), _rand(2, 3, 4, seed=19)
    if special:
        a = _specials(a)
    _check(compiled, "elementwise", a, b, _rand(3, 4, seed=20), _rand(4, seed=21))
    _check(compiled, "functions", a, b)
    _check(compiled, "activations", a)
    _check(compiled, "softmaxes", a)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_of_large_contiguous_tensors_are_eager_s_bits(compiled, name):
    """Contiguous float32 rank-3 tensors run the dense ops' loops over their flat data (not
    ATen in fixed chunks): eager's bits at one thread, at sizes across ATen's vector chunk and
    past the 16 K-element chunk (one element: GELU's scalar loop), with GELU's edge classes
    (oneDNN's: +inf, -6, 3e38), NaN, -0.0 and subnormals; a transposed (strided) tensor takes
    ATen's own op and is eager's too."""
    torch.set_num_threads(1)
    edges = torch.tensor([math.inf, -math.inf, math.nan, -0.0, 0.0, -6.0, -5.5, 3e38, -3e38,
                          1e-40, -1e-40, 88.7, -88.7, 10.0, -10.0])
    for shape in [(1, 1, 1), (1, 3, 5), (2, 7, 33), (4, 64, 129), (3, 100, 60)]:
        x = _rand(*shape, seed=41) * 4
        flat = x.view(-1)
        flat[: min(edges.numel(), flat.numel())] = edges[: flat.numel()]
        _check(compiled, name, x)
        if x.shape[1] > 1:
            _check(compiled, name, x.transpose(0, 1))


def test_silu_is_eagers_over_sampled_bit_patterns(compiled):
    """SiLU of a contiguous rank-3 tensor is ATen's own two loops (SLEEF's `expf_u10` in the
    vector loop, the C library's `expf` in the scalar tail): every 4099th float32 bit pattern
    (about a million, NaN, infinities, subnormals and both zeros among them) against eager,
    once all in the vector loop and once with a scalar tail of 31 elements."""
    torch.set_num_threads(1)
    bits = torch.arange(0, 1 << 32, 4099, dtype=torch.int64)
    x = (bits - (bits >= (1 << 31)).long() * (1 << 32)).to(torch.int32).view(torch.float32)
    x = torch.cat([x, torch.tensor([math.inf, -math.inf, math.nan, -0.0, 0.0, -88.7, 88.8, 104.5,
                                    -104.5, 100.5, -100.5, 1e-45])])
    for n in (x.numel() // 32 * 32, x.numel() // 32 * 32 - 1):
        _check(compiled, "silu", x[:n].reshape(1, 1, n).contiguous())


def test_views(compiled):
    x = _specials(_rand(2, 3, 4, seed=22))
    _check(compiled, "transpose12", x)
    _check(compiled, "transpose01", x)
    _check(compiled, "from_rank3", x)
    _check(compiled, "flat", x)
    _check(compiled, "heads", x)
    _check(compiled, "to_rank3", _rand(6, 4, seed=23))
    # A returned transpose is a view with eager's strides.
    module, fns = compiled
    assert fns["transpose12"](x).stride() == module.transpose12(x).stride()


def _same_error(compiled, name, *args):
    module, fns = compiled
    with pytest.raises(Exception) as eager:
        getattr(module, name)(*args)
    with pytest.raises(type(eager.value)) as ours:
        fns[name](*args)
    assert str(ours.value) == str(eager.value), (str(ours.value), str(eager.value))


def test_shape_errors(compiled):
    _same_error(compiled, "batched", _rand(2, 3, 4), _rand(2, 5, 6))
    _same_error(compiled, "batched", _rand(2, 3, 4), _rand(3, 4, 6))
    _same_error(compiled, "broadcast", _rand(2, 3, 4), _rand(5, 6))
    _same_error(compiled, "linear", _rand(2, 3, 4), _rand(5, 6), _rand(5))
    _same_error(compiled, "elementwise", _rand(2, 3, 4), _rand(2, 3, 5), _rand(3, 4), _rand(4))
    _same_error(compiled, "to_rank3", _rand(5, 4))
    _same_error(compiled, "flat", _rand(4, 3, 2).transpose(0, 2))
    _same_error(compiled, "attention", _rand(2, 3, 8), _rand(2, 3, 7), _rand(2, 3, 8))
    _same_error(compiled, "attention", _rand(2, 3, 8), _rand(2, 4, 8), _rand(2, 3, 8))
    _same_error(compiled, "attention", _rand(2, 3, 8), _rand(3, 4, 8), _rand(3, 4, 8))


def test_wrong_rank_argument(compiled):
    _, fns = compiled
    with pytest.raises((TypeError, ValueError, RuntimeError)) as err:
        fns["transpose12"](_rand(3, 4))
    assert "3" in str(err.value)


REFUSED = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu2D, TensorF32Cpu3D


def bmm_of_matrix(a: TensorF32Cpu3D, b: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.bmm(a, b)


def bmm_keyword(a: TensorF32Cpu3D, b: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.bmm(a, b, out=None)


def t_of_3d(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.t()


def far_transpose(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.transpose(0, 2)


def softmax_dim(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.softmax(x, dim=3)


def vector_matmul(x: TensorF32Cpu3D, v: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return x @ v.sum(dim=0)
'''


def _check_report(rextio, tmp_path, text, surface="extended"):
    path = tmp_path / "rank3_check.py"
    path.write_text(text)
    return rextio.check(str(path), surface=surface)


def test_refused_forms_stay_on_python(rextio, tmp_path):
    report = _check_report(rextio, tmp_path, REFUSED)
    by_name = {f["name"]: f for f in report["functions"]}
    assert all(f["status"] == "fallback" for f in by_name.values())
    codes = {name: [s["code"] for s in f["sites"] if s["outcome"] != "claimed"] for name, f in by_name.items()}
    assert codes["t_of_3d"] == ["RXTP-TORCH-147"]
    assert codes["far_transpose"] == ["RXTP-TORCH-147"]
    assert codes["softmax_dim"] == ["RXTP-TORCH-145"]
    assert codes["vector_matmul"] == ["RXTP-TORCH-140"]
    # torch.bmm takes two rank-3 tensors (eager raises on a matrix), positionally.
    assert codes["bmm_of_matrix"] == ["RXTP-TORCH-149"]
    assert codes["bmm_keyword"] == ["RXTP-TORCH-149"]
    messages = {name: [s["message"] for s in f["sites"] if s["outcome"] != "claimed"] for name, f in by_name.items()}
    assert "two float32 CPU rank-3 tensors" in messages["bmm_of_matrix"][0], messages["bmm_of_matrix"]


def test_extended_surface_claims_every_site(rextio, tmp_path):
    report = _check_report(rextio, tmp_path, SOURCE)
    for f in report["functions"]:
        assert f["status"] != "fallback", f
        assert all(s["outcome"] == "claimed" for s in f["sites"]), f


def test_reference_surface_does_not_claim(rextio, tmp_path):
    report = _check_report(rextio, tmp_path, SOURCE, surface="reference")
    for f in report["functions"]:
        # The rank-3 marker is not a known type there: the functions are not candidates, or
        # (with a known parameter type beside it) stay on Python.
        assert f["status"] in ("not-candidate", "fallback"), f
        assert not any((s["rule_id"] or "").endswith("rank3") for s in f["sites"]), f


def test_reference_surface_compile_refuses(rextio, compiled):
    module, _ = compiled
    with pytest.raises(Exception):
        rextio.compile(module.attention, strict=True, surface="reference")
    kept = rextio.compile(module.attention, surface="reference")
    q = _rand(2, 3, 4)
    assert_same_bits(kept(q, q, q), module.attention(q, q, q))


def test_plugin_types_stay_the_reference_five():
    from rextio_torch import rextio_plugin

    names = [t[0] for t in rextio_plugin._TYPES]
    assert names == ["TensorF32Cpu2D", "TensorF32Cpu1D", "TensorI64Cpu1D", "TensorF32Cuda0_2D", "TensorF32Cuda0_1D"]
