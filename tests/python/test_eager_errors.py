"""Errors a compiled call raises where eager raises: the same exception type and eager's
message (its first line), the Python original run eagerly being the oracle."""

import pytest
import torch

from conftest import eager_and_compiled

pair = eager_and_compiled


def same_error(eager_fn, ours_fn, *args):
    with pytest.raises(Exception) as eager:
        with torch.no_grad():
            eager_fn(*args)
    with pytest.raises(Exception) as ours:
        ours_fn(*args)
    assert type(ours.value) is type(eager.value), (ours.value, eager.value)
    assert str(ours.value) == str(eager.value).splitlines()[0], (str(ours.value), str(eager.value))


ARGMAX = """
def f(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmax(dim=1)
"""

HEAD_ARGMAX = """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return F.linear(x, w, b).argmax(dim=1)
"""


@pytest.mark.parametrize("rows", [0, 1, 3])
def test_argmax_over_an_empty_dim_is_eagers_index_error(rows):
    same_error(*pair(ARGMAX), torch.randn(rows, 0))


def test_a_fused_argmax_over_no_outputs_is_eagers_index_error():
    eager, ours = pair(HEAD_ARGMAX)
    assert "tail=argmax" in ours.optimized_ir, ours.optimized_ir
    same_error(eager, ours, torch.randn(3, 4), torch.randn(0, 4), torch.randn(0))


ADDED_BIAS = {
    "alone": """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w) + b
""",
    "then_relu_mean": """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    h = F.linear(x, w) + b
    return h.relu().mean(dim=1, keepdim=False)
""",
    "normalized_then_argmax": """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, m: TensorF32Cpu1D) -> TensorI64Cpu1D:
    h = F.linear(x - m, w) + b
    return h.argmax(dim=1)
""",
}

ARGUMENT_BIAS = """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).tanh()
"""


@pytest.mark.parametrize("form", sorted(ADDED_BIAS))
@pytest.mark.parametrize("batch,k,n", [(3, 5, 4), (64, 128, 64)])
def test_a_bias_added_after_linear_raises_the_additions_error(form, batch, k, n):
    eager, ours = pair(ADDED_BIAS[form])
    assert "bias=added" in ours.optimized_ir, ours.optimized_ir
    x, w = torch.randn(batch, k), torch.randn(n, k)
    extra = (torch.randn(k),) if "m: TensorF32Cpu1D" in ADDED_BIAS[form] else ()
    # Wrong sizes: the addition's words (F.linear's own bias error reads otherwise).
    for wrong in (n - 1, n + 2):
        same_error(eager, ours, x, w, torch.randn(wrong), *extra)
    # x and w that do not fit: linear's error comes first, as in eager.
    same_error(eager, ours, torch.randn(batch, k + 1), w, torch.randn(n - 1), *extra)
    # Sizes that fit, and a one-element bias (broadcast): eager's values.
    for b in (torch.randn(n), torch.randn(1)):
        with torch.no_grad():
            want = eager(x, w, b, *extra)
        got = ours(x, w, b, *extra)
        if want.dtype == torch.int64:
            assert got.shape == want.shape
        else:
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_linears_own_bias_keeps_its_error():
    eager, ours = pair(ARGUMENT_BIAS)
    assert "bias=added" not in ours.optimized_ir
    same_error(eager, ours, torch.randn(3, 5), torch.randn(4, 5), torch.randn(3))


@pytest.mark.parametrize("form", sorted(ADDED_BIAS))
def test_a_one_column_product_broadcasts_to_a_longer_added_bias(form):
    """`F.linear(x, w) + b` with one output feature and a bias of 3: eager broadcasts the
    [batch, 1] product to [batch, 3] (found by the differential fuzzer)."""
    eager, ours = pair(ADDED_BIAS[form])
    x, w, b = torch.randn(4, 5), torch.randn(1, 5), torch.randn(3)
    extra = (torch.randn(5),) if "m: TensorF32Cpu1D" in ADDED_BIAS[form] else ()
    with torch.no_grad():
        want = eager(x, w, b, *extra)
    got = ours(x, w, b, *extra)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == torch.int64:
        assert torch.equal(got, want)
    else:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


DEAD_CODE = """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, t: float) -> TensorF32Cpu2D:
    unused = t / 0.0
    product = x @ w
    return x.relu()
"""


def test_an_assignment_nobody_reads_still_raises():
    """Python evaluates every assignment: a dead division by zero or a dead product of
    mismatched shapes raises in eager, and so it does compiled (found by the differential
    fuzzer: dead-code elimination used to drop them)."""
    eager, ours = pair(DEAD_CODE)
    same_error(eager, ours, torch.randn(2, 3), torch.randn(3, 4), 1.5)
    body = DEAD_CODE.replace("    unused = t / 0.0\n", "")
    eager, ours = pair(body)
    same_error(eager, ours, torch.randn(2, 3), torch.randn(2, 4), 1.5)
    assert ours(torch.randn(2, 3), torch.randn(3, 4), 1.5).shape == (2, 3)


def test_an_unread_activation_of_a_product_still_runs_the_product():
    """`h = F.linear(x, w).tanh()` with `h` unread: the tanh cannot raise and goes, the linear
    can and stays, inside a loop too (found by the differential fuzzer after the fix above)."""
    body = """
def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    y = x.relu()
    for i in range(n):
        h = F.linear(x, w).tanh()
        y = y.sigmoid()
    return y
"""
    eager, ours = pair(body)
    same_error(eager, ours, torch.randn(2, 3), torch.randn(4, 5), 2)
    x, w = torch.randn(2, 3), torch.randn(4, 3)
    with torch.no_grad():
        want = eager(x, w, 2)
    torch.testing.assert_close(ours(x, w, 2), want)
