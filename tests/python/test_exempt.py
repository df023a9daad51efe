"""Scalar boundary calls back into Python (the reference's RXT075 lane,
docs/reference-control-flow.md section 8): a function marked `@rextio.native` that calls a
scalar module function staying on Python (`@rextio.exempt`, or a scalar helper the host keeps
on Python or rejects) outside loops compiles, and the call goes back into Python when it runs.

The programs are the corpus's (`tests/conformance/control-flow.json`), written out verbatim
with its module header. The reference's `rextio` package is not installed here and
`rextio_torch` has no `rextio.exempt` of its own, so `import rextio` is given a stand-in
whose `native` and `exempt` return the function unchanged (what they do at run time), only
while the module text runs. The oracle is the plain Python function (eager): the same values,
or the same exception (type, and message where the error is the callee's own)."""

import sys
import types

import pytest
import torch

import rextio_torch
from conftest import assert_parity

HEADER = (
    "from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, "
    "TensorF32Cuda0_1D, TensorF32Cuda0_2D)\nimport rextio\nimport torch\n"
    "import torch.nn.functional as F\n\n"
)

EXEMPT_CALLBACK_MARKED = """@rextio.exempt
def inc(n: int) -> int:
    return n + 1

@rextio.native
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    k = inc(n)
    h = x.relu()
    for i in range(k):
        h = h.tanh()
    return h
"""

EXEMPT_CALLBACK_IN_CONDITION_MARKED = """@rextio.exempt
def inc(n: int) -> int:
    return n + 1

@rextio.native
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x.relu()
    if inc(n) > 2:
        h = h.tanh()
    return h
"""

EXEMPT_CALLBACK_IN_RANGE_ARG_MARKED = """@rextio.exempt
def inc(n: int) -> int:
    return n + 1

@rextio.native
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x.relu()
    for i in range(inc(n)):
        h = h.tanh()
    return h
"""

EXEMPT_FLOAT_CALLBACK_MARKED = """@rextio.exempt
def scale(t: float) -> float:
    return t * 2.0

@rextio.native
def f(x: TensorF32Cpu2D, t: float) -> TensorF32Cpu2D:
    s = scale(t)
    h = x.relu()
    if s > 1.0:
        h = h.tanh()
    return h
"""

FALLBACK_ONLY_HELPER_CALL_MARKED = """def half(n: int) -> int:
    return n // 2

@rextio.native
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x.relu()
    for i in range(half(n)):
        h = h.tanh()
    return h
"""

REJECTED_HELPER_CALL_MARKED = """def conv(t: float) -> int:
    return int(t)

@rextio.native
def f(x: TensorF32Cpu2D, t: float) -> TensorF32Cpu2D:
    h = x.relu()
    for i in range(conv(t)):
        h = h.tanh()
    return h
"""

EXEMPT_CALLBACK_IN_LOOP_MARKED = """@rextio.exempt
def inc(n: int) -> int:
    return n + 1

@rextio.native
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x.relu()
    i = 0
    while i < n:
        i = inc(i)
        h = h.tanh()
    return h
"""

EXEMPT_CALLBACK_AUTO = """@rextio.exempt
def inc(n: int) -> int:
    return n + 1

def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    k = inc(n)
    h = x.relu()
    for i in range(k):
        h = h.tanh()
    return h
"""


def load(body: str):
    """Runs the module text with a stand-in `rextio`, returning its namespace (the
    functions' globals) and its source."""
    source = HEADER + body
    stand_in = types.ModuleType("rextio")
    stand_in.native = lambda fn: fn
    stand_in.exempt = lambda fn: fn
    saved = sys.modules.get("rextio")
    sys.modules["rextio"] = stand_in
    try:
        namespace = {"__name__": "exempt_case"}
        exec(compile(source, "<exempt_case>", "exec"), namespace)
    finally:
        if saved is None:
            del sys.modules["rextio"]
        else:
            sys.modules["rextio"] = saved
    return namespace, source


def compiled(body: str):
    namespace, source = load(body)
    fn = namespace["f"]
    return namespace, fn, rextio_torch.compile(fn, source=source, strict=True)


def outcome(fn, *args):
    try:
        return ("value", fn(*args))
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return ("raised", e)


def assert_same(ours, eager, message=True):
    assert ours[0] == eager[0], (ours, eager)
    if eager[0] == "value":
        assert_parity(ours[1], eager[1])
    else:
        assert type(ours[1]) is type(eager[1]), (ours[1], eager[1])
        if message:
            assert str(ours[1]) == str(eager[1])


def x():
    torch.manual_seed(0)
    return torch.randn(4, 8)


@pytest.mark.parametrize(
    "body, values",
    [
        (EXEMPT_CALLBACK_MARKED, [0, 1, 3, -2]),
        (EXEMPT_CALLBACK_IN_CONDITION_MARKED, [0, 1, 2, 5]),
        (EXEMPT_CALLBACK_IN_RANGE_ARG_MARKED, [0, 2, -4]),
        (EXEMPT_FLOAT_CALLBACK_MARKED, [0.25, 0.5, 0.75, -3.0, 2]),
        (FALLBACK_ONLY_HELPER_CALL_MARKED, [7, 0, -3, 5]),
        (REJECTED_HELPER_CALL_MARKED, [2.7, -1.5, 0.0, 3]),
    ],
)
def test_boundary_call_matches_eager(body, values):
    namespace, fn, native = compiled(body)
    assert "boundary_call" in native.optimized_ir
    for value in values:
        assert_same(outcome(native, x(), value), outcome(fn, x(), value))


def test_callee_exception_propagates_unchanged():
    # int(nan) and int(inf) raise inside the callee: the same exception, same words.
    namespace, fn, native = compiled(REJECTED_HELPER_CALL_MARKED)
    for value in [float("nan"), float("inf")]:
        ours, eager = outcome(native, x(), value), outcome(fn, x(), value)
        assert eager[0] == "raised"
        assert_same(ours, eager)

    class Boom(Exception):
        pass

    def inc(n: int) -> int:
        raise Boom(f"no {n}")

    namespace, fn, native = compiled(EXEMPT_CALLBACK_MARKED)
    namespace["inc"] = inc
    ours = outcome(native, x(), 3)
    assert ours[0] == "raised" and type(ours[1]) is Boom and str(ours[1]) == "no 3"
    assert_same(ours, outcome(fn, x(), 3))


@pytest.mark.parametrize("returned", ["3", None, 2.0, [1]])
def test_wrong_return_type_is_a_type_error_naming_the_callee(returned):
    # Eager fails later (range() of it) with TypeError too; ours at the boundary, naming inc.
    namespace, fn, native = compiled(EXEMPT_CALLBACK_MARKED)
    namespace["inc"] = lambda n: returned
    ours, eager = outcome(native, x(), 1), outcome(fn, x(), 1)
    assert_same(ours, eager, message=False)
    assert "inc()" in str(ours[1]) and "int" in str(ours[1])


def test_int_returned_where_float_is_declared_is_a_float():
    namespace, fn, native = compiled(EXEMPT_FLOAT_CALLBACK_MARKED)
    for returned in [3, 0, True, False]:
        namespace["scale"] = lambda t, r=returned: r
        assert_same(outcome(native, x(), 0.5), outcome(fn, x(), 0.5))


def test_bool_returned_where_int_is_declared_counts_as_int():
    namespace, fn, native = compiled(EXEMPT_CALLBACK_MARKED)
    namespace["inc"] = lambda n: True
    assert_same(outcome(native, x(), 0), outcome(fn, x(), 0))


def test_monkeypatching_the_callee_between_calls_is_seen():
    namespace, fn, native = compiled(EXEMPT_CALLBACK_IN_CONDITION_MARKED)
    first = outcome(native, x(), 0)
    assert_same(first, outcome(fn, x(), 0))
    namespace["inc"] = lambda n: n + 10
    second = outcome(native, x(), 0)
    assert_same(second, outcome(fn, x(), 0))
    assert not torch.equal(first[1], second[1])
    del namespace["inc"]
    ours, eager = outcome(native, x(), 0), outcome(fn, x(), 0)
    assert eager[0] == "raised" and isinstance(eager[1], NameError)
    assert_same(ours, eager)


def test_callee_sees_python_scalars():
    seen = []

    def inc(n: int) -> int:
        seen.append(n)
        return n + 1

    namespace, fn, native = compiled(EXEMPT_CALLBACK_MARKED)
    namespace["inc"] = inc
    native(x(), 4)
    assert seen == [4] and type(seen[0]) is int


@pytest.mark.parametrize(
    "body, code",
    [(EXEMPT_CALLBACK_IN_LOOP_MARKED, "RXT076"), (EXEMPT_CALLBACK_AUTO, "RXT070")],
)
def test_calls_in_loops_and_from_unmarked_functions_stay_on_python(body, code):
    namespace, source = load(body)
    with pytest.raises(rextio_torch.CompileError, match=code):
        rextio_torch.compile(namespace["f"], source=source, strict=True)


EXEMPT_ZERO_ARG_CALLBACK_MARKED = """FLAG = [True]
CALLS = []

@rextio.exempt
def observe() -> bool:
    CALLS.append(1)
    return FLAG[0]

@rextio.native
def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x.relu()
    if observe():
        h = h.tanh()
    return h * n
"""


def test_a_callback_without_arguments_is_a_boundary_call():
    # `def observe() -> bool` (issue 33): RXT075 as with arguments, called once per call,
    # its answer read at each call.
    namespace, fn, native = compiled(EXEMPT_ZERO_ARG_CALLBACK_MARKED)
    assert "boundary_call" in native.optimized_ir
    for flag in [True, False, True]:
        namespace["FLAG"][0] = flag
        before = len(namespace["CALLS"])
        ours = outcome(native, x(), 3)
        assert len(namespace["CALLS"]) == before + 1
        assert_same(ours, outcome(fn, x(), 3))
