"""Transformer-block fusions (issue 18, build item 4) against eager PyTorch.

- **Residual:** `x + F.linear(h, w, b)` (and `y + x`, after activations, after an added bias,
  after `@`) is one fused op: the product, its bias and activations, then the residual added
  in the user's order. The sum is one IEEE addition of eager's product (within the fused
  linear bound of docs/parity.md) and the residual, so the tolerance is that bound plus the
  addition's rounding. A residual whose sizes do not match the product broadcasts or raises
  exactly as eager's addition does. Inputs are never written.
- **Row normalization:** `F.linear(F.layer_norm(x, ...), w, b)` normalizes the input's rows
  inside the fused op (moments in float64, one rounding per element) instead of ATen's
  float32 moments, so it is not bit for bit: the tolerance is a float64 propagation of a
  few float32 ulps per step (`_chain_bound`) around eager's own float64 result, and ours and
  eager's float32 results must both lie within it of that. Rows with a NaN or infinity are
  NaN, sizes eager refuses raise eager's error.
- The `explain` output shows the fused op, so a rule that stops firing fails here, not
  only in a benchmark.
"""

import pytest
import torch
import torch.nn.functional as F

from conftest import EPS, assert_parity, compiled_functions, fused_linear_bound

SOURCE = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def block(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D,
          b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.gelu(F.linear(x, w1, b1))
    return x + F.linear(h, w2, b2)


def left(r: TensorF32Cpu2D, h: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return r + F.linear(h, w, b)


def right_after_activations(r: TensorF32Cpu2D, h: TensorF32Cpu2D, w: TensorF32Cpu2D,
                            b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.tanh(F.linear(h, w, b).relu()) + r


def added_bias(r: TensorF32Cpu2D, h: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(h, w) + b + r


def product(r: TensorF32Cpu2D, h: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return h @ w + r


def relu_after(r: TensorF32Cpu2D, h: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.relu(r + F.linear(h, w, b))


def pre_norm_block(x: TensorF32Cpu2D, g: TensorF32Cpu1D, beta: TensorF32Cpu1D, w1: TensorF32Cpu2D,
                   b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.layer_norm(x, (x.shape[-1],), g, beta, 1e-5)
    h = F.gelu(F.linear(h, w1, b1))
    return x + F.linear(h, w2, b2)


def norm_literal(x: TensorF32Cpu2D, g: TensorF32Cpu1D, beta: TensorF32Cpu1D, w: TensorF32Cpu2D,
                 b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(F.layer_norm(x, (24,), g, beta, eps=1e-3), w, b).relu()


def norm_plain(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.log_softmax(F.linear(F.layer_norm(x, [x.shape[1]]), w), dim=1)
'''

NAMES = ["block", "left", "right_after_activations", "added_bias", "product", "relu_after",
         "pre_norm_block", "norm_literal", "norm_plain"]


@pytest.fixture(scope="module")
def fns(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "fused_blocks_fixture", SOURCE, NAMES)


def _args(name, g, m, k, n, scale=1.0):
    """Inputs of `name`: a residual [m, n], an input [m, k], a weight ([n, k], or [k, n] for
    `product`) and a bias [n]; `block` takes x [m, n] and two layers n -> k -> n."""
    randn = lambda *shape: torch.randn(*shape, generator=g) * scale  # noqa: E731
    if name == "block":
        return (randn(m, n), randn(k, n) / n ** 0.5, randn(k), randn(n, k) / k ** 0.5, randn(n))
    if name == "product":
        return (randn(m, n), randn(m, k), randn(k, n))
    return (randn(m, n), randn(m, k), randn(n, k), randn(n))


def _bound(name, args):
    """The tolerance of `name` on `args`: the fused linear bound of the product (its
    activations included) plus two roundings of the residual's sum."""
    if name == "block":
        x, w1, b1, w2, b2 = args
        h = F.gelu(F.linear(x, w1, b1))
        # The first layer's error reaches the second through w2: bound it by its sum.
        first = fused_linear_bound(x, w1, b1, ("gelu",))
        inner = F.linear(first, w2.abs().double())
        y_bound = fused_linear_bound(h, w2, b2) + inner
        r, y = x, F.linear(h, w2, b2)
    else:
        r, h, w, *b = args
        b = b[0] if b else None
        acts = {"right_after_activations": ("relu", "tanh"), "relu_after": ()}.get(name, ())
        if name == "product":
            w = w.t()
        y_bound = fused_linear_bound(h, w, b, acts)
        y = F.linear(h, w, b)
    return y_bound + 2 * EPS * (r.abs() + y.abs()) + 1e-30


RESIDUAL_NAMES = NAMES[:6]


@pytest.mark.parametrize("name", RESIDUAL_NAMES)
@pytest.mark.parametrize("m,k,n", [(1, 8, 4), (3, 5, 7), (16, 64, 32), (65, 33, 17), (256, 96, 64)])
def test_residual_matches_eager(fns, name, m, k, n):
    module, compiled = fns
    args = _args(name, torch.Generator().manual_seed(m * 1000 + k + n), m, k, n)
    copies = [a.clone() for a in args]
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    ours = compiled[name](*args)
    assert_parity(ours, eager, _bound(name, args))
    for a, c in zip(args, copies):
        assert torch.equal(a, c), "an input was written"


@pytest.mark.parametrize("name", ["left", "right_after_activations", "added_bias", "product"])
def test_residual_special_values(fns, name):
    """NaN, infinities and signed zeros in the residual and the input: eager's classes."""
    module, compiled = fns
    m, k, n = 4, 6, 5
    args = list(_args(name, torch.Generator().manual_seed(7), m, k, n))
    specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0])
    args[0] = args[0].clone()
    args[0].view(-1)[: specials.numel() * 2 : 2] = specials
    args[1] = args[1].clone()
    args[1][1, 2] = float("inf")
    args[1][2, 0] = float("nan")
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    assert torch.isnan(eager).any() and torch.isinf(eager).any()
    ours = compiled[name](*args)
    assert_parity(ours, eager, _bound(name, [torch.nan_to_num(a) for a in args]))


@pytest.mark.parametrize("shape", [(1, 6), (5, 1), (1, 1)])
def test_broadcast_residual_is_eager_addition(fns, shape):
    module, compiled = fns
    g = torch.Generator().manual_seed(3)
    r, h, w, b = torch.randn(*shape, generator=g), torch.randn(5, 4, generator=g), torch.randn(6, 4, generator=g), torch.randn(6, generator=g)
    for name in ["left", "right_after_activations"]:
        eager = getattr(module, name)(r, h, w, b)
        ours = compiled[name](r, h, w, b)
        assert ours.shape == eager.shape
        assert_parity(ours, eager, _bound(name, (r.expand(5, 6), h, w, b)))


def test_residual_wider_than_the_product_broadcasts_the_product(fns):
    """A one-row product and a [3, n] residual: eager's [3, n] sum."""
    module, compiled = fns
    g = torch.Generator().manual_seed(4)
    r, h, w, b = torch.randn(3, 6, generator=g), torch.randn(1, 4, generator=g), torch.randn(6, 4, generator=g), torch.randn(6, generator=g)
    eager = module.left(r, h, w, b)
    ours = compiled["left"](r, h, w, b)
    assert ours.shape == (3, 6)
    assert_parity(ours, eager, _bound("left", (r, h.expand(3, 4), w, b)))


@pytest.mark.parametrize("name", ["left", "right_after_activations", "added_bias"])
def test_mismatched_residual_raises_eagers_error(fns, name):
    module, compiled = fns
    g = torch.Generator().manual_seed(5)
    r, h, w, b = torch.randn(4, 7, generator=g), torch.randn(4, 3, generator=g), torch.randn(6, 3, generator=g), torch.randn(6, generator=g)
    with pytest.raises(RuntimeError) as eager:
        getattr(module, name)(r, h, w, b)
    with pytest.raises(RuntimeError) as ours:
        compiled[name](r, h, w, b)
    assert str(eager.value) in str(ours.value), (str(eager.value), str(ours.value))


def test_explain_shows_one_fused_op_per_layer(rextio, fns):
    _, compiled = fns
    text = str(rextio.explain(compiled["block"]))
    optimized = text[text.index("IR after `optimized`"):]
    assert "residual=left" in optimized and "activations=[gelu]" in optimized
    assert " add " not in optimized and " linear " not in optimized
    for name, side in [("left", "left"), ("right_after_activations", "right"), ("added_bias", "right"),
                       ("product", "right"), ("relu_after", "left")]:
        text = str(rextio.explain(compiled[name]))
        assert f"residual={side}" in text[text.index("IR after `optimized`"):], name


def _norm_args(name, g, m, d, hidden, scale=1.0, shift=0.0):
    randn = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731
    x = randn(m, d) * scale + shift
    gamma, beta = 1.0 + 0.1 * randn(d), 0.1 * randn(d)
    if name == "pre_norm_block":
        return (x, gamma, beta, randn(hidden, d) / d ** 0.5, randn(hidden) * 0.1,
                randn(d, hidden) / hidden ** 0.5, randn(d) * 0.1)
    if name == "norm_literal":
        return (x, gamma, beta, randn(hidden, d) / d ** 0.5, randn(hidden) * 0.1)
    return (x, randn(hidden, d) / d ** 0.5)


def _chain_bound(name, args):
    """Eager's chain in float64 on the float32 inputs, and a bound on how far a float32
    computation of it may be: each step's magnitudes (absolute values propagated through
    the chain, GELU's slope at most 1.13) times 16 ulps, growing with sqrt of each sum's
    length. log_softmax's error is at most its input's error twice."""
    d64 = [a.double() for a in args]
    x = d64[0]
    k = x.shape[1]
    grow = 16 * EPS * (k + 1) ** 0.5
    if name == "norm_plain":
        z = F.layer_norm(x, (k,))
        y = F.linear(z, d64[1])
        err = F.linear(z.abs() + 1, d64[1].abs()) * grow
        return F.log_softmax(y, dim=1), 2 * err.amax(dim=1, keepdim=True) + grow * 1e-3
    gamma, beta = d64[1], d64[2]
    eps = 1e-5 if name == "pre_norm_block" else 1e-3
    z = F.layer_norm(x, (k,), gamma, beta, eps)
    sz = (F.layer_norm(x, (k,), None, None, eps).abs() + 1) * gamma.abs() + beta.abs()
    w1, b1 = d64[3], d64[4]
    y1 = F.linear(z, w1, b1)
    s1 = F.linear(sz, w1.abs(), b1.abs())
    if name == "norm_literal":
        return y1.relu(), s1 * grow * (w1.shape[1] + 1) ** 0.5
    h = F.gelu(y1)
    w2, b2 = d64[5], d64[6]
    s2 = F.linear(1.13 * s1 + h.abs(), w2.abs(), b2.abs()) + x.abs()
    return x + F.linear(h, w2, b2), s2 * grow * (w2.shape[1] + 1) ** 0.5


@pytest.mark.parametrize("name", ["pre_norm_block", "norm_literal", "norm_plain"])
@pytest.mark.parametrize("m,hidden", [(1, 16), (3, 40), (16, 64), (65, 32), (256, 96)])
@pytest.mark.parametrize("scale,shift", [(1.0, 0.0), (1e3, 5e3), (1e-3, 0.0)])
def test_row_normalization_matches_eager(fns, name, m, hidden, scale, shift):
    module, compiled = fns
    d = 24 if name == "norm_literal" else 48
    args = _norm_args(name, torch.Generator().manual_seed(m + hidden), m, d, hidden, scale, shift)
    copies = [a.clone() for a in args]
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    ours = compiled[name](*args)
    exact, bound = _chain_bound(name, args)
    # The bound holds for eager's own float32 result, and for ours.
    assert_parity(eager, exact.float(), bound)
    assert_parity(ours, exact.float(), bound)
    for a, c in zip(args, copies):
        assert torch.equal(a, c), "an input was written"


@pytest.mark.parametrize("name", ["pre_norm_block", "norm_literal", "norm_plain"])
def test_row_normalization_special_values(fns, name):
    """A row with a NaN or an infinity is NaN after the normalization, as eager's is."""
    module, compiled = fns
    d = 24 if name == "norm_literal" else 48
    args = list(_norm_args(name, torch.Generator().manual_seed(11), 5, d, 16))
    x = args[0].clone()
    x[0, 3] = float("nan")
    x[1, 0] = float("inf")
    x[2, 7] = -float("inf")
    x[3] = -0.0
    args[0] = x
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    ours = compiled[name](*args)
    assert torch.equal(torch.isnan(ours), torch.isnan(eager))
    assert torch.isnan(eager[:3]).all()
    assert torch.equal(torch.isinf(ours), torch.isinf(eager))
    finite = torch.isfinite(eager)
    assert_parity(ours[finite], eager[finite], 1e-4 * eager[finite].abs().clamp(min=1.0))


@pytest.mark.parametrize("name", ["pre_norm_block", "norm_literal"])
def test_row_normalization_sizes_raise_eagers_error(fns, name):
    module, compiled = fns
    g = torch.Generator().manual_seed(12)
    # Normalized 24 or x.shape[-1], but a weight (gamma) of another width.
    args = list(_norm_args(name, g, 3, 24, 16))
    args[1] = torch.ones(23)
    with pytest.raises(RuntimeError) as eager:
        getattr(module, name)(*args)
    with pytest.raises(RuntimeError) as ours:
        compiled[name](*args)
    assert str(eager.value) in str(ours.value), (str(eager.value), str(ours.value))
    if name == "norm_literal":
        # An input that is not 24 wide: eager's normalized_shape error.
        args = list(_norm_args(name, g, 3, 20, 16))
        args[1], args[2] = torch.ones(24), torch.zeros(24)
        args[3] = torch.randn(16, 20, generator=g)
        with pytest.raises(RuntimeError) as eager:
            module.norm_literal(*args)
        with pytest.raises(RuntimeError) as ours:
            compiled["norm_literal"](*args)
        assert str(eager.value) in str(ours.value), (str(eager.value), str(ours.value))


def test_explain_shows_the_row_normalization(rextio, fns):
    _, compiled = fns
    for name, affine in [("pre_norm_block", "true"), ("norm_literal", "true"), ("norm_plain", "false")]:
        text = str(rextio.explain(compiled[name]))
        optimized = text[text.index("IR after `optimized`"):]
        assert f"affine={affine})" in optimized, (name, optimized)
        assert "= layer_norm" not in optimized, (name, optimized)
    text = str(rextio.explain(compiled["pre_norm_block"]))
    optimized = text[text.index("IR after `optimized`"):]
    assert optimized.count("fused_linear") == 2 and "residual=left" in optimized
