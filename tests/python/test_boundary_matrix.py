"""The boundary matrix at run time (docs/reliability.md, "The boundary matrix").

Three compiled functions (a straight-line fused chain, a matmul/softmax/argmax head, and a
loop with int/float/bool parameters) are called with every kind of argument in every
position: each torch dtype, the cpu and meta devices, ranks 0-3, sparse and nested layouts,
non-contiguous views, zero-size dims, tensors that require grad and Parameters, aliased
arguments, Tensor subclasses, numpy scalars and arrays, Python scalars and None. Each case
either gives eager's result (the Python original run eagerly under torch.no_grad: values
within float32 tolerance, NaN and infinities in the same places, labels exactly) or raises
its documented error (type and exact message), or, where eager itself raises, eager's error.
Every case also checks that nothing panicked (a Rust panic reaches Python as
`pyo3_runtime.PanicException`) and that no argument changed: data, requires_grad, grad and
version counter."""

import dataclasses
import math
import warnings
from typing import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

import rextio_torch
from conftest import assert_parity
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


# The three functions under test (compiled from this file's source).

def linear_relu_mean(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


def classify(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorI64Cpu1D:
    logits = x @ weight + bias
    probabilities = logits.softmax(dim=1)
    return probabilities.argmax(dim=1, keepdim=False)


def controlled(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D,
               steps: int, gain: float, gate: bool) -> TensorF32Cpu2D:
    h = x.tanh()
    level = 0.0
    for i in range(steps):
        level = level + gain
        if gate and level > 1.0:
            h = F.linear(h, weight, bias).tanh()
        else:
            h = h.sigmoid()
    return h


ORIGINALS = {f.__name__: f for f in (linear_relu_mean, classify, controlled)}
PARAMS = {
    "linear_relu_mean": ["x", "weight", "bias"],
    "classify": ["x", "weight", "bias"],
    "controlled": ["x", "weight", "bias", "steps", "gain", "gate"],
}
RANKS = {"x": 2, "weight": 2, "bias": 1}
SCALARS = {"steps": 3, "gain": 0.6, "gate": True}
BATCH, WIDTH = 4, 6  # every weight is WIDTH x WIDTH, so `controlled` can apply it repeatedly


@pytest.fixture(scope="module")
def compiled():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every function must compile natively
        return {name: rextio_torch.compile(f, strict=True) for name, f in ORIGINALS.items()}


def base_args(name, seed=0, batch=BATCH, width=WIDTH):
    g = torch.Generator().manual_seed(seed)
    values = {
        "x": torch.randn(batch, width, generator=g),
        "weight": torch.randn(width, width, generator=g) * width ** -0.5,
        "bias": torch.randn(width, generator=g) * 0.1,
        **SCALARS,
    }
    return [values[p] for p in PARAMS[name]]


# Outcomes.

EAGER = "eager's result"


@dataclasses.dataclass(frozen=True)
class Error:
    """A documented error: exception type and exact message, `{p}` standing for the
    parameter's name and `{r}` for its annotated rank."""

    type: type
    message: str

    def format(self, param):
        return self.message.format(p=param, r=RANKS.get(param, 0))


EAGERS_ERROR = "eager's error"


# Tensor subclasses.

class Plain(torch.Tensor):
    """A trivial subclass: torch's own hooks."""


class Logged(torch.Tensor):
    """Overrides __torch_function__ (Python code that eager runs on every op)."""

    calls = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        Logged.calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


class Wrapper(torch.Tensor):
    """A wrapper subclass with its own __torch_dispatch__, whose values live in `inner`."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, device=inner.device)

    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda a: a.inner if isinstance(a, Wrapper) else a  # noqa: E731
        return func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})


def fake_like(t):
    with FakeTensorMode():
        return torch.empty(t.shape, dtype=t.dtype)


def with_grad(t):
    p = torch.nn.Parameter(t.clone())
    p.grad = torch.ones_like(t)
    return p


def inference_tensor(t):
    with torch.inference_mode():
        return t.clone()


def strided(t):
    # Same values at stride 2 (every other element of a wider buffer).
    return torch.stack([t, torch.full_like(t, math.nan)], dim=-1).flatten(-2)[..., ::2]


def offset(t):
    # Same values at a storage offset.
    return torch.cat([torch.zeros(1), t.flatten()])[1:].view(t.shape)


def non_finite(t):
    t = t.clone()
    flat = t.view(-1)
    flat[0], flat[1], flat[2] = math.nan, math.inf, -math.inf
    return t


def rank(r):
    return lambda t: torch.randn((3,) * r)


# Cases for a tensor parameter: (name, make from the base value, outcome, ranks it applies to).

@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    make: Callable
    outcome: object
    ranks: tuple = (1, 2)


def dtype_case(dtype, name):
    return Case(f"dtype {name}", lambda t: t.to(dtype),
                Error(ValueError, "rextio-torch: expected a float32 tensor (argument '{p}' is " + name + ")"))


def strided_error(given):
    return Error(ValueError, "rextio-torch: expected a strided tensor (argument '{p}' " + given + ")")

TENSOR_CASES = [
    Case("float32, contiguous", lambda t: t, EAGER),
    *[dtype_case(d, n) for d, n in [
        (torch.float64, "float64"), (torch.float16, "float16"), (torch.bfloat16, "bfloat16"),
        (torch.int8, "int8"), (torch.int16, "int16"), (torch.int32, "int32"), (torch.int64, "int64"),
        (torch.uint8, "uint8"), (torch.bool, "bool"), (torch.complex64, "complex64")]],
    Case("device meta", lambda t: t.to("meta"),
         Error(ValueError, "rextio-torch: expected a CPU tensor (argument '{p}' is on meta)")),
    *[Case(f"rank {r}", rank(r), Error(ValueError, "rextio-torch: expected rank-{r} tensor, got rank " + str(r) + " (argument '{p}')"),
           ranks=tuple(R for R in (1, 2) if R != r)) for r in range(4)],
    Case("sparse COO", lambda t: t.to_sparse(), strided_error("is sparse")),
    Case("sparse CSR", lambda t: t.to_sparse_csr(), strided_error("is sparse_csr"), ranks=(2,)),
    Case("sparse CSC", lambda t: t.to_sparse_csc(), strided_error("is sparse_csc"), ranks=(2,)),
    Case("sparse BSR", lambda t: t.to_sparse_bsr((2, 2)), strided_error("is sparse_bsr"), ranks=(2,)),
    Case("sparse BSC", lambda t: t.to_sparse_bsc((2, 2)), strided_error("is sparse_bsc"), ranks=(2,)),
    Case("mkldnn", lambda t: t.to_mkldnn(), strided_error("is an mkldnn tensor")),
    Case("nested", lambda t: torch.nested.nested_tensor(list(t)), strided_error("is a nested tensor"), ranks=(2,)),
    Case("transposed view", lambda t: t.t().contiguous().t(), EAGER, ranks=(2,)),
    Case("strided slice", strided, EAGER),
    Case("storage offset", offset, EAGER),
    Case("expanded (stride 0)", lambda t: t[:1].expand(t.shape), EAGER),
    Case("broadcast scalar (all strides 0)", lambda t: torch.tensor(0.5).expand(t.shape), EAGER),
    Case("negative bit", lambda t: torch._neg_view(t.neg()), EAGER),
    Case("conjugate's imaginary part", lambda t: torch.complex(torch.zeros_like(t), -t).conj().imag, EAGER),
    Case("NaN and infinities", non_finite, EAGER),
    Case("requires grad", lambda t: t.clone().requires_grad_(), EAGER),
    Case("non-leaf that requires grad", lambda t: t.clone().requires_grad_() * 1, EAGER),
    Case("nn.Parameter", lambda t: torch.nn.Parameter(t.clone()), EAGER),
    Case("nn.Parameter with a grad", with_grad, EAGER),
    Case("inference-mode tensor", inference_tensor, EAGER),
    Case("trivial subclass", lambda t: t.clone().as_subclass(Plain), EAGER),
    Case("subclass overriding __torch_function__", lambda t: t.clone().as_subclass(Logged),
         Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a " + __name__ + ".Logged, which overrides __torch_function__)")),
    Case("wrapper subclass overriding __torch_dispatch__", lambda t: Wrapper(t.clone()),
         Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a " + __name__ + ".Wrapper, which overrides __torch_dispatch__)")),
    Case("FakeTensor", fake_like,
         Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a torch._subclasses.fake_tensor.FakeTensor, which overrides __torch_dispatch__)")),
    Case("numpy array", lambda t: t.numpy(), Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a numpy.ndarray)")),
    Case("numpy scalar", lambda t: np.float32(0.5), Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a numpy.float32)")),
    Case("Python float", lambda t: 0.5, Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a float)")),
    Case("Python int", lambda t: 2, Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is an int)")),
    Case("Python bool", lambda t: True, Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a bool)")),
    Case("list", lambda t: t.tolist(), Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is a list)")),
    Case("None", lambda t: None, Error(TypeError, "rextio-torch: expected a torch.Tensor (argument '{p}' is None)")),
]


# Cases for a scalar parameter of `controlled`: (value, outcome). Accepted values are
# compared with the original called with the value as the annotated Python type.

def hint(kind, what):
    letter = "t" if what == "torch.Tensor" else "a"
    noun = "tensor" if what == "torch.Tensor" else "array"
    return (f"rextio-torch: expected {kind} (argument '{{p}}' is a {what}; pass "
            f"{kind.split()[-1]}({letter}) or {letter}.item() for a one-element {noun} {letter})")


def wrong(kind, given):
    return Error(TypeError, f"rextio-torch: expected {kind} (argument '{{p}}' is {given})")


SCALAR_CASES = {
    "steps": [
        ("int 3", 3, EAGER), ("int 0", 0, EAGER), ("int -2", -2, EAGER),
        ("numpy.int64", np.int64(3), EAGER), ("numpy.int32", np.int32(2), EAGER),
        ("numpy.uint8", np.uint8(3), EAGER), ("numpy.int8", np.int8(-1), EAGER),
        ("bool", True, wrong("an int", "a bool")), ("numpy.bool", np.bool_(True), wrong("an int", "a numpy.bool")),
        ("float", 3.0, wrong("an int", "a float")), ("numpy.float64", np.float64(3.0), wrong("an int", "a numpy.float64")),
        ("0-d tensor", torch.tensor(3), Error(TypeError, hint("an int", "torch.Tensor"))),
        ("0-d array", np.array(3), Error(TypeError, hint("an int", "numpy.ndarray"))),
        ("str", "3", wrong("an int", "a str")), ("None", None, Error(TypeError, "rextio-torch: expected an int (argument '{p}' is None)")),
        ("int 2**63", 2**63, Error(OverflowError, "rextio-torch: expected an int that fits in 64 bits (argument '{p}' is an int: 9223372036854775808)")),
    ],
    "gain": [
        ("float", 0.6, EAGER), ("float nan", math.nan, EAGER), ("float inf", math.inf, EAGER),
        ("int", 1, EAGER), ("numpy.float64", np.float64(0.6), EAGER), ("numpy.float32", np.float32(0.6), EAGER),
        ("numpy.float16", np.float16(0.5), EAGER), ("numpy.int64", np.int64(1), EAGER),
        ("bool", True, wrong("a float", "a bool")), ("numpy.bool", np.bool_(True), wrong("a float", "a numpy.bool")),
        ("complex", 1j, wrong("a float", "a complex")),
        ("0-d tensor", torch.tensor(0.6), Error(TypeError, hint("a float", "torch.Tensor"))),
        ("str", "0.6", wrong("a float", "a str")), ("None", None, Error(TypeError, "rextio-torch: expected a float (argument '{p}' is None)")),
        ("int 10**400", 10**400, EAGERS_ERROR),
    ],
    "gate": [
        ("True", True, EAGER), ("False", False, EAGER),
        ("numpy.bool True", np.bool_(True), EAGER), ("numpy.bool False", np.bool_(False), EAGER),
        ("int", 1, wrong("a bool", "an int")), ("numpy.int64", np.int64(1), wrong("a bool", "a numpy.int64")),
        ("float", 1.0, wrong("a bool", "a float")),
        ("0-d tensor", torch.tensor(True), Error(TypeError, hint("a bool", "torch.Tensor"))),
        ("None", None, Error(TypeError, "rextio-torch: expected a bool (argument '{p}' is None)")),
    ],
}


# The checks every case makes.

def _is_panic(e):
    return e is not None and type(e).__name__ == "PanicException"


def _data(v):
    """A copy of `v`'s values, where they can be read (not on meta, not a fake tensor)."""
    if isinstance(v, np.ndarray):
        return v.copy()
    if not isinstance(v, torch.Tensor) or v.device.type == "meta" or isinstance(v, Wrapper) or type(v).__name__ == "FakeTensor":
        return None
    with torch.no_grad():
        v = v.detach()
        if v.is_nested:
            return torch.nested.to_padded_tensor(v, 0.0)
        if v.layout != torch.strided:
            return v.to_dense().clone()
        return v.as_subclass(torch.Tensor).clone()


def _same(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
    return True


def snapshot(v):
    if not isinstance(v, torch.Tensor):
        return {"data": _data(v)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf
        grad = v.grad
    state = {
        "type": type(v),
        "requires_grad": v.requires_grad,
        "grad": None if grad is None else grad.clone(),
        "data": _data(v),
    }
    try:
        state["version"] = v._version
    except (RuntimeError, NotImplementedError):  # layouts without a version counter
        pass
    return state


def assert_unchanged(v, before):
    after = snapshot(v)
    assert after.keys() == before.keys()
    for key in before:
        if key in ("data", "grad"):
            assert _same(before[key], after[key]), f"argument {key} changed"
        else:
            assert before[key] == after[key], f"argument {key} changed: {before[key]} -> {after[key]}"


def call(fn, args):
    try:
        return fn(*args), None
    except BaseException as e:  # noqa: BLE001 - a panic is a BaseException
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, e


def eager(name, args):
    with torch.no_grad():
        return call(ORIGINALS[name], args)


def as_python(param, value):
    # The value as the annotated Python type, which the compiled function computes with.
    # Python's own values are passed as they are.
    convert = {"steps": int, "gain": float, "gate": bool}.get(param)
    if convert is None or not isinstance(value, np.generic):
        return value
    return convert(value)


def check(compiled, name, args, outcome, param=None):
    """Runs one case: no panic, no argument changed, and the outcome."""
    before = [snapshot(a) for a in args]
    ours, error = call(compiled[name], args)
    assert not _is_panic(error), f"panic: {error}"
    for a, state in zip(args, before):
        assert_unchanged(a, state)
    if isinstance(outcome, Error):
        assert error is not None, f"expected {outcome}, got a result"
        assert type(error) is outcome.type, (type(error), str(error))
        assert str(error) == outcome.format(param), str(error)
        return None
    expected, eager_error = eager(name, [as_python(p, a) for p, a in zip(PARAMS[name], args)])
    if outcome == EAGERS_ERROR:
        assert eager_error is not None, "eager returned a result"
        assert error is not None, f"eager raised {eager_error!r}, we returned"
        assert type(error) is type(eager_error)
        assert str(error) == str(eager_error).splitlines()[0]
        return None
    assert outcome == EAGER
    assert eager_error is None, f"eager raised {eager_error!r}"
    assert error is None, f"eager returns, we raised {type(error).__name__}: {error}"
    assert type(ours) is torch.Tensor
    assert ours.requires_grad is False and ours.grad_fn is None
    assert_parity(ours, expected.as_subclass(torch.Tensor))
    return ours, expected


def tensor_cases():
    for name, params in PARAMS.items():
        for param in params:
            if param not in RANKS:
                continue
            for case in TENSOR_CASES:
                if RANKS[param] in case.ranks:
                    yield pytest.param(name, param, case, id=f"{name}-{param}-{case.name}")


@pytest.mark.parametrize("name,param,case", list(tensor_cases()))
def test_tensor_argument(compiled, name, param, case):
    args = base_args(name)
    i = PARAMS[name].index(param)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sparse, nested and fake tensors warn that they are in beta
        args[i] = case.make(args[i])
    result = check(compiled, name, args, case.outcome, param)
    if case.name == "trivial subclass":
        # Eager's result is the subclass (its __torch_function__ wraps every result); ours is
        # a plain tensor with the same values.
        expected = eager(name, args)[0]
        assert type(expected) is Plain and type(result[0]) is torch.Tensor


def scalar_cases():
    for param, cases in SCALAR_CASES.items():
        for label, value, outcome in cases:
            yield pytest.param(param, value, outcome, id=f"controlled-{param}-{label}")


@pytest.mark.parametrize("param,value,outcome", list(scalar_cases()))
def test_scalar_argument(compiled, param, value, outcome):
    args = base_args("controlled")
    args[PARAMS["controlled"].index(param)] = value
    check(compiled, "controlled", args, outcome, param)


# Whole calls: zero-size dims, one tensor passed as several arguments, mismatched sizes.

def zero_size(name, batch, width, out):
    args = base_args(name)
    g = torch.Generator().manual_seed(1)
    args[0] = torch.randn(batch, width, generator=g)
    if name == "classify":
        args[1] = torch.randn(width, out, generator=g)
    else:
        args[1] = torch.randn(out, width, generator=g)
    args[2] = torch.randn(out, generator=g)
    return args


CALL_CASES = [
    # (id, function, make args, outcome)
    *[(f"{name}-zero batch", name, lambda name=name: zero_size(name, 0, WIDTH, WIDTH), EAGER) for name in PARAMS],
    *[(f"{name}-zero in-features", name, lambda name=name: zero_size(name, BATCH, 0, 0 if name == "controlled" else WIDTH), EAGER)
      for name in PARAMS],
    ("linear_relu_mean-zero out-features", "linear_relu_mean", lambda: zero_size("linear_relu_mean", BATCH, WIDTH, 0), EAGER),
    ("classify-zero out-features", "classify", lambda: zero_size("classify", BATCH, WIDTH, 0), EAGERS_ERROR),
    ("controlled-zero out-features", "controlled", lambda: zero_size("controlled", BATCH, WIDTH, 0), EAGERS_ERROR),
    ("controlled-zero steps on empty", "controlled", lambda: zero_size("controlled", 0, 0, 0), EAGER),
    *[(f"{name}-mismatched in-features", name, lambda name=name: zero_size(name, BATCH, WIDTH + 1, WIDTH)[:1] + base_args(name)[1:],
       EAGERS_ERROR) for name in PARAMS],
    *[(f"{name}-mismatched bias", name, lambda name=name: base_args(name)[:2] + [torch.randn(WIDTH - 1)] + base_args(name)[3:],
       EAGERS_ERROR) for name in PARAMS],
]


def aliased(name, how):
    args = base_args(name, batch=WIDTH)
    x = args[0]
    if how == "x as weight":
        args[1] = x
    elif how == "x as weight, a row of x as bias":
        args[1], args[2] = x, x[0]
    elif how == "one Parameter as x and weight":
        p = torch.nn.Parameter(x.clone())
        args[0] = args[1] = p
    elif how == "bias a view of weight":
        args[2] = args[1][:, 0]
    return args


ALIASES = ["x as weight", "x as weight, a row of x as bias", "one Parameter as x and weight", "bias a view of weight"]
CALL_CASES += [(f"{name}-aliased: {how}", name, lambda name=name, how=how: aliased(name, how), EAGER)
               for name in PARAMS for how in ALIASES]


@pytest.mark.parametrize("name,make,outcome", [pytest.param(n, m, o, id=i) for i, n, m, o in CALL_CASES])
def test_whole_call(compiled, name, make, outcome):
    check(compiled, name, make(), outcome)


def test_results_from_inputs_that_require_grad_do_not(compiled):
    # Documented difference: a compiled function is inference only. Eager with grad enabled
    # records a graph (requires_grad True, a grad_fn); ours returns a detached tensor, as
    # eager does under torch.no_grad or torch.inference_mode. Grad mode is left as it was.
    for name in ("linear_relu_mean", "controlled"):
        args = base_args(name)
        args[:3] = [torch.nn.Parameter(t) for t in args[:3]]
        ours = compiled[name](*args)
        with torch.enable_grad():
            graph = ORIGINALS[name](*args)
        assert graph.requires_grad and graph.grad_fn is not None
        assert not ours.requires_grad and ours.grad_fn is None
        assert torch.is_grad_enabled()
        with torch.no_grad():
            assert_parity(ours, ORIGINALS[name](*args))
            assert not compiled[name](*args).requires_grad and torch.is_grad_enabled() is False
        with torch.inference_mode():
            assert_parity(compiled[name](*args), ORIGINALS[name](*args))
    # labels never require grad, in eager either
    args = [t.requires_grad_() for t in base_args("classify")]
    assert compiled["classify"](*args).requires_grad is False


def test_the_matrix_covers_what_docs_reliability_lists():
    # The counts quoted in docs/reliability.md.
    assert len(TENSOR_CASES) == 47
    assert sum(1 for _ in tensor_cases()) == 396
    assert sum(len(c) for c in SCALAR_CASES.values()) == 40
    assert len(CALL_CASES) == 28
