"""Regressions found by the differential fuzzer in loop code people write, each checked
against the Python original run eagerly (the oracle), with `strict=True` so a fallback
cannot hide a failure:

- one value bound to two names in an `if` arm or a loop body (`a = z; b = z`), on tensors
  and floats, and two identical expressions in one loop body (the optimizer merges them, and
  one value then fills two carried slots): the executor once moved the value out of its slot
  for the first target and failed with "slot N is read before it is written";
- chained comparisons: Python evaluates `a < b < c` as `a < b and b < c` with `b` once, and
  stops at the first false link, so a later operand that would raise (a division by zero, an
  int that leaves 64 bits) is never evaluated."""

import pytest
import torch

from conftest import eager_and_compiled

compiled = eager_and_compiled


def same(ours, eager):
    if isinstance(eager, torch.Tensor):
        assert isinstance(ours, torch.Tensor)
        assert ours.dtype == eager.dtype and ours.shape == eager.shape
        torch.testing.assert_close(ours, eager, rtol=1e-6, atol=1e-6, equal_nan=True)
    else:
        assert type(ours) is type(eager) and ours == eager, (ours, eager)


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return ("raised", type(e))


def check(pair, *args):
    eager_fn, ours_fn = pair
    clones = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    with torch.no_grad():
        want = outcome(eager_fn, *clones)
    got = outcome(ours_fn, *args)
    assert got[0] == want[0], (got, want)
    if want[0] == "ok":
        same(got[1], want[1])
    else:
        assert got[1] is want[1], (got, want)


ALIAS_IN_ARM = """
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    a = x
    b = x
    for i in range(n):
        if i % 2 == 0:
            z = a.sigmoid()
            a = z
            b = z
        else:
            a = a.tanh()
    return a + b
"""

ALIAS_FLOAT_SCALED = """
def f(x: TensorF32Cpu2D, n: int, s: float) -> TensorF32Cpu2D:
    t = s
    for i in range(n):
        if i > 0:
            u = s + 1.5
            s = u
            t = u
    y = x.neg()
    if s > t:
        y = x.relu()
    return y
"""

REPEATED_EXPRESSIONS = """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    a = x
    b = x
    for i in range(n):
        a = F.linear(x, w).relu()
        b = F.linear(x, w).relu()
    return a - b + a
"""


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_one_value_under_two_names_in_an_arm(n):
    check(compiled(ALIAS_IN_ARM), torch.randn(3, 4), n)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_repeated_identical_expressions_in_a_loop_body(n):
    check(compiled(REPEATED_EXPRESSIONS), torch.randn(3, 4), torch.randn(4, 4), n)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_one_float_under_two_names(n):
    pair = compiled(ALIAS_FLOAT_SCALED)
    check(pair, torch.randn(3, 4), n, 0.25)


CHAIN_DIVISION = """
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    y = x.neg()
    if 0 < n < 10 % n:
        y = x.relu()
    return y
"""

CHAIN_OVERFLOW = """
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    y = x.neg()
    if 5 < n < n * n * n * n * n * n * n:
        y = x.relu()
    return y
"""

CHAIN_FOUR = """
def f(x: TensorF32Cpu2D, a: int, b: int) -> TensorF32Cpu2D:
    y = x.neg()
    if a < b <= 10 % b < 100 % (b - 3):
        y = x.relu()
    return y
"""


@pytest.mark.parametrize("n", [0, -1, 1, 3, 11])
def test_a_chain_stops_before_a_division_by_zero(n):
    check(compiled(CHAIN_DIVISION), torch.randn(2, 3), n)


@pytest.mark.parametrize("n", [-3_000_000, -1, 3, 5, 6, 500])
def test_a_chain_stops_before_an_overflow(n):
    check(compiled(CHAIN_OVERFLOW), torch.randn(2, 3), n)


def test_an_evaluated_link_that_leaves_64_bits_is_an_overflow_error():
    # 600**7 needs 65 bits: Python's big int compares, compiled ints raise (README, docs).
    _, ours = compiled(CHAIN_OVERFLOW)
    with pytest.raises(OverflowError, match="compiled ints are 64-bit"):
        ours(torch.randn(2, 3), 600)


@pytest.mark.parametrize("a,b", [(5, 1), (1, 3), (1, 2), (0, 4), (1, 5), (9, 9), (2, 0)])
def test_every_link_of_a_longer_chain_is_short_circuited(a, b):
    check(compiled(CHAIN_FOUR), torch.randn(2, 3), a, b)
