"""Rank 0 (issue 18, extended surface) against eager PyTorch: whole-tensor reductions, what
they give (`TensorF32Cpu0D`), and reading a tensor back into Python.

- `x.sum()`, `x.mean()`, `x.max()`, `x.min()`, `x.amax()`, `x.amin()` and `torch.*` spellings
  with no dim, of rank 1-3 tensors: ATen's own reductions, so eager's bits (NaN, +-inf and
  -0.0 included) and eager's error for `max()` of an empty tensor.
- `+ - * /` with a rank-0 operand (`x / x.sum()`), unary ops of one, rank-0 parameters and
  results.
- `t.item()` / `float(t)`: the value exactly; a tensor without exactly one element is
  eager's error (`RuntimeError` for `item`, `ValueError` for `float`).
- A comparison as an `if`/`while` condition: eager's comparison (the Python number cast to
  float32 first, so `torch.tensor(0.99) > 0.99` is false where `.item() > 0.99` is true) and
  Python's truth of it (one element, else eager's `RuntimeError`); `if p.max().item() >
  0.99: break` in a loop.
- `surface="reference"` compiles none of it (the function stays on Python).
"""

import math

import pytest
import torch

from conftest import assert_same_bits, compiled_functions, seeded_randn as _rand

SOURCE = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu0D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def r_sum(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.sum()


def r_mean(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.mean()


def r_max(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.max()


def r_min(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.min()


def r_amax(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.amax()


def r_amin(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.amin()


def r_torch(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return torch.sum(x) - torch.mean(x) * torch.max(x) / torch.amin(x) + torch.min(x) - torch.amax(x)


def sum3(x: TensorF32Cpu3D) -> TensorF32Cpu0D:
    return x.sum()


def mean1(v: TensorF32Cpu1D) -> TensorF32Cpu0D:
    return v.mean()


def normalized(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (x - x.mean()) / (x.max() - x.min() + 1e-5)


def share(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x / x.sum() * 2 - 1.0 / x.amax()


def scalar_ops(s: TensorF32Cpu0D, t: TensorF32Cpu0D) -> TensorF32Cpu0D:
    h = s * t - s / 3
    return h.exp().sqrt() + 2.5 - t.abs()


def item(x: TensorF32Cpu2D) -> float:
    return x.sum().item() + float(x.max())


def item_any(x: TensorF32Cpu2D) -> float:
    return x.item()


def float_any(x: TensorF32Cpu2D) -> float:
    return float(x)


def threshold(t: TensorF32Cpu0D) -> bool:
    if t > 0.99:
        return True
    return False


def threshold_item(t: TensorF32Cpu0D) -> bool:
    if t.item() > 0.99:
        return True
    return False


def reflected(x: TensorF32Cpu2D, limit: float) -> int:
    if limit <= x.max():
        return 1
    elif x.min() == x.max():
        return 2
    elif x.sum() != 0:
        return 3
    return 4


def vector_condition(v: TensorF32Cpu1D, n: int) -> int:
    if v > n:
        return 1
    return 0


def combined(x: TensorF32Cpu2D, n: int) -> int:
    if x.max() > 0.5 and n < 3:
        return 1
    if not x.min() < -0.5 or n == 7:
        return 2
    while not x.abs().sum() < 1.0 and n < 100:
        x = x * 0.5
        n = n + 1
    return n


def early_exit(x: TensorF32Cpu2D, w: TensorF32Cpu2D, steps: int) -> TensorF32Cpu2D:
    p = torch.softmax(x @ w, dim=-1)
    for i in range(steps):
        p = torch.softmax(torch.log(p) * 2.0, dim=-1)
        if p.max().item() > 0.99:
            break
    return p


def halve_until(x: TensorF32Cpu1D) -> int:
    n = 0
    while x.abs().sum() > 1.0:
        x = x * 0.5
        n = n + 1
    return n
'''

REDUCTIONS = ["r_sum", "r_mean", "r_max", "r_min", "r_amax", "r_amin", "r_torch"]
NAMES = REDUCTIONS + [ "sum3", "mean1", "normalized", "share", "scalar_ops", "item", "item_any",
    "float_any", "threshold", "threshold_item", "reflected", "vector_condition", "early_exit",
    "halve_until", "combined",
]


@pytest.fixture(scope="module")
def compiled(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "rank0_fixture", SOURCE, NAMES)


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as err:  # noqa: BLE001 - the outcome is compared with eager's
        return type(err), str(err)


def _check(compiled, name, *args):
    """Ours against eager on clones of `args`: the same value bits, or the same exception
    type and words; inputs unchanged."""
    module, fns = compiled
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    eager = _outcome(getattr(module, name), *args)
    ours = _outcome(fns[name], *args)
    assert ours[0] == eager[0], (name, ours, eager)
    if eager[0] == "ok" and isinstance(eager[1], float):
        a, b = ours[1], eager[1]
        assert type(a) is float, (name, a)
        same = (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        assert same, (name, a, b)
    elif eager[0] == "ok":
        assert_same_bits(ours[1], eager[1])
    else:
        assert ours[1] == eager[1], (name, ours, eager)
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.nan_to_num(), b.nan_to_num()), "an input was mutated"
    return ours


def _with(t: torch.Tensor, *values) -> torch.Tensor:
    t = t.clone()
    for i, value in zip(range(0, t.numel(), 3), values):
        t.view(-1)[i] = value
    return t


SPECIALS = [(), (math.nan,), (math.inf,), (-math.inf,), (math.inf, -math.inf), (-0.0, -0.0, -0.0)]


@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize("shape", [(3, 5), (1, 1), (17, 33), (64, 257)])
def test_reductions(compiled, shape, special):
    x = _with(_rand(*shape, seed=1), *special)
    for name in REDUCTIONS:
        _check(compiled, name, x)
    _check(compiled, "normalized", x)
    _check(compiled, "share", x)
    _check(compiled, "item", x)
    _check(compiled, "sum3", x.reshape(1, *shape))
    _check(compiled, "mean1", x.reshape(-1))


def test_negative_zero_sum(compiled):
    # Eager sums from -0.0 where every term is -0.0: the sign is eager's.
    _check(compiled, "sum3", torch.full((2, 3, 4), -0.0))
    for name in REDUCTIONS:
        _check(compiled, name, torch.full((2, 2), -0.0))


def test_empty(compiled):
    empty = torch.empty(0, 4)
    # sum/mean of nothing are 0 and NaN; max/min/amax/amin raise eager's RuntimeError.
    for name in REDUCTIONS:
        expected = "ok" if name in ("r_sum", "r_mean") else RuntimeError
        assert _check(compiled, name, empty)[0] == expected, name
    _check(compiled, "sum3", empty.reshape(1, 0, 4))
    _check(compiled, "mean1", empty.reshape(-1))


def test_rank0_parameters(compiled):
    for s, t in [(0.5, 2.0), (-3.0, 0.25), (math.nan, 1.0), (-0.0, 0.0), (80.0, 3.0)]:
        _check(compiled, "scalar_ops", torch.tensor(s), torch.tensor(t))


def test_rank0_argument_checks(compiled):
    _module, fns = compiled
    with pytest.raises(ValueError, match="rank"):
        fns["scalar_ops"](torch.ones(1), torch.tensor(1.0))
    with pytest.raises(ValueError, match="float32"):
        fns["scalar_ops"](torch.tensor(1.0, dtype=torch.float64), torch.tensor(1.0))


def test_item_and_float(compiled):
    _check(compiled, "item_any", torch.tensor([[2.5]]))
    _check(compiled, "float_any", torch.tensor([[-0.0]]))
    _check(compiled, "float_any", torch.tensor([[math.nan]]))
    # Eager's errors: RuntimeError for item, ValueError for float, with eager's words.
    assert _check(compiled, "item_any", torch.ones(2, 3))[0] is RuntimeError
    assert _check(compiled, "float_any", torch.ones(2, 3))[0] is ValueError
    assert _check(compiled, "item_any", torch.ones(0, 3))[0] is RuntimeError


def test_condition_casts_the_number_as_eager_does(compiled):
    t = torch.tensor(0.99)
    # float32(0.99) > 0.99 is false for the tensor comparison, true for the Python float.
    assert _check(compiled, "threshold", t)[1] is False
    assert _check(compiled, "threshold_item", t)[1] is True
    for value in [0.0, 1.0, math.nan, math.inf, -0.0]:
        _check(compiled, "threshold", torch.tensor(value))


def test_conditions(compiled):
    for x in [_rand(3, 4, seed=2), torch.full((2, 2), 1.5), torch.zeros(2, 2),
              _with(_rand(3, 3, seed=3), math.nan)]:
        for limit in [-10.0, 0.0, 1.5, math.nan]:
            _check(compiled, "reflected", x, limit)
    # A condition must have one element: eager's RuntimeError otherwise.
    assert _check(compiled, "vector_condition", torch.tensor([0.5]), 0)[1] == 1
    assert _check(compiled, "vector_condition", torch.tensor([0.5, 2.0]), 0)[0] is RuntimeError
    assert _check(compiled, "vector_condition", torch.empty(0), 0)[0] is RuntimeError


def test_and_or_not_conditions(compiled):
    # Python reads the truth of each operand of an `and`/`or` condition and of `not`'s.
    for x in [_rand(3, 4, seed=7), _rand(3, 4, seed=8) * 0.1, _with(_rand(2, 2, seed=9), math.nan),
              torch.full((2, 2), 0.6)]:
        for n in [0, 3, 7, 99]:
            _check(compiled, "combined", x, n)
    assert _check(compiled, "combined", torch.ones(2, 2) * 0.1, 0)[1] == 2
    assert _check(compiled, "combined", torch.ones(2, 2), 0)[1] == 1
    assert _check(compiled, "combined", -torch.ones(2, 2), 0)[1] == 3


def test_loops_on_tensor_conditions(compiled):
    module, fns = compiled
    x, w = _rand(4, 8, seed=4), _rand(8, 8, seed=5)
    for steps in range(6):
        # `x @ w` then softmax is one fused kernel of ours, whose sums round in another order
        # than eager's: within 1e-6 relative, and the loop stops at the same step.
        eager, ours = module.early_exit(x, w, steps), fns["early_exit"](x, w, steps)
        torch.testing.assert_close(ours, eager, rtol=1e-5, atol=1e-7)
    for scale in [0.1, 3.0, 1e6, math.nan]:
        _check(compiled, "halve_until", _rand(5, seed=6) * scale)


def test_reference_surface_stays_on_python(rextio, compiled):
    module, _fns = compiled
    for name in ["r_sum", "item", "threshold", "early_exit"]:
        with pytest.raises(rextio.CompileError):
            rextio.compile(getattr(module, name), strict=True, surface="reference")
