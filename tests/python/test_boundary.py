"""The call boundary: exact errors for bad arguments, no mutation, no autograd state."""

import warnings

import numpy as np
import pytest
import torch

from conftest import EXAMPLES, assert_parity


def args(batch=4, k=8, n=6):
    return torch.randn(batch, k), torch.randn(n, k), torch.randn(n)


@pytest.mark.parametrize(
    "position,bad,error,message",
    [
        (0, lambda x: x.double(), ValueError, "rextio-torch: expected a float32 tensor (argument 'x' is float64)"),
        (0, lambda x: x.long(), ValueError, "rextio-torch: expected a float32 tensor (argument 'x' is int64)"),
        (0, lambda x: x[0], ValueError, "rextio-torch: expected rank-2 tensor, got rank 1 (argument 'x')"),
        (0, lambda x: x.tolist(), TypeError, "rextio-torch: expected a torch.Tensor (argument 'x' is a list)"),
        (0, lambda x: None, TypeError, "rextio-torch: expected a torch.Tensor (argument 'x' is None)"),
        (1, lambda w: w.unsqueeze(0), ValueError, "rextio-torch: expected rank-2 tensor, got rank 3 (argument 'weight')"),
        (2, lambda b: b.double(), ValueError, "rextio-torch: expected a float32 tensor (argument 'bias' is float64)"),
        (2, lambda b: b.reshape(2, 3), ValueError, "rextio-torch: expected rank-1 tensor, got rank 2 (argument 'bias')"),
        (2, lambda b: 1.5, TypeError, "rextio-torch: expected a torch.Tensor (argument 'bias' is a float)"),
        (0, lambda x: x.to_sparse(), ValueError, "rextio-torch: expected a strided tensor (argument 'x' is sparse)"),
        (0, lambda x: torch.zeros(4, 8, device="meta"), ValueError, "rextio-torch: expected a CPU tensor (argument 'x' is on meta)"),
    ],
)
def test_bad_arguments_raise_the_reference_errors_naming_the_argument(phase_a, position, bad, error, message):
    _, compiled = phase_a
    values = list(args())
    values[position] = bad(values[position])
    with pytest.raises(error) as raised:
        compiled(*values)
    assert str(raised.value) == message


def test_size_mismatch_is_a_runtime_error_with_eagers_words(phase_a):
    module, compiled = phase_a
    x, w, b = torch.randn(3, 7), torch.randn(5, 5), torch.randn(5)
    with pytest.raises(RuntimeError) as ours:
        compiled(x, w, b)
    with pytest.raises(RuntimeError) as eager:
        module.inference(x, w, b)
    assert "mat1 and mat2 shapes cannot be multiplied (3x7 and 5x5)" in str(ours.value)
    assert "mat1 and mat2 shapes cannot be multiplied (3x7 and 5x5)" in str(eager.value)
    # A bias of the wrong size: eager's words, whichever kernel path runs (small and GEMM).
    for batch, k, n in [(3, 5, 5), (300, 256, 128)]:
        x, w, b = torch.randn(batch, k), torch.ones(n, k), torch.randn(n - 1)
        with pytest.raises(RuntimeError) as ours:
            compiled(x, w, b)
        with pytest.raises(RuntimeError) as eager:
            module.inference(x, w, b)
        assert str(ours.value) == str(eager.value).splitlines()[0], (str(ours.value), str(eager.value))


def test_a_one_element_bias_broadcasts_as_in_eager(phase_a):
    module, compiled = phase_a
    for batch, k, n in [(3, 5, 4), (300, 256, 128)]:
        x, w, b = torch.randn(batch, k), torch.randn(n, k), torch.randn(1)
        expected = module.inference(x, w, b)
        assert torch.allclose(compiled(x, w, b), expected, rtol=1e-5, atol=1e-5)


def test_inputs_are_never_mutated(phase_a):
    _, compiled = phase_a
    for shape in [(4, 8, 6), (64, 128, 64), (256, 256, 128)]:
        x, w, b = args(*shape)
        before = [t.clone() for t in (x, w, b)]
        versions = [t._version for t in (x, w, b)]
        compiled(x, w, b)
        for t, copy, version in zip((x, w, b), before, versions):
            assert torch.equal(t, copy)
            assert t._version == version


def test_outputs_never_require_grad(phase_a):
    module, compiled = phase_a
    x, w, b = (t.requires_grad_() for t in args())
    out = compiled(x, w, b)
    assert out.requires_grad is False and out.grad_fn is None
    assert module.inference(x, w, b).requires_grad  # eager would have built a graph
    assert torch.is_grad_enabled()  # our no-grad guard does not leak


def test_keyword_arguments_and_arity(phase_a):
    module, compiled = phase_a
    x, w, b = args()
    assert torch.equal(compiled(x, weight=w, bias=b), compiled(x, w, b))
    with pytest.raises(TypeError, match=r"takes 3 positional arguments but 4 were given"):
        compiled(x, w, b, b)
    with pytest.raises(TypeError, match=r"missing 1 required argument\(s\): 'bias'"):
        compiled(x, w)
    with pytest.raises(TypeError, match="unexpected keyword argument 'scale'"):
        compiled(x, w, b, scale=2)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        compiled(x, w, b, x=x)


def test_result_is_a_fresh_tensor(phase_a):
    _, compiled = phase_a
    x, w, b = args()
    first, second = compiled(x, w, b), compiled(x, w, b)
    assert first.data_ptr() != second.data_ptr()
    assert torch.equal(first, second)


def _negative_bit(t):
    # Data holding the negation of the values, flagged by the negative bit.
    return torch._neg_view(t.neg().contiguous())


@pytest.mark.parametrize(
    "form,make",
    [
        # Read in one call and viewed in place (python/src/args.cpp):
        ("plain", lambda t: t),
        ("parameter", lambda t: torch.nn.Parameter(t)),
        # The general path (rextio_runtime::boundary):
        ("subclass", lambda t: t.as_subclass(type("Sub", (torch.Tensor,), {}))),
        ("transposed twice", lambda t: t.t().contiguous().t()),
        ("sliced", lambda t: torch.stack([t, t], dim=-1).flatten(-2)[..., ::2]),
        ("negative bit, contiguous", _negative_bit),
        ("negative bit, conjugate's imaginary part",
         lambda t: torch.complex(torch.zeros_like(t), -t).conj().imag),
    ],
)
def test_every_form_of_a_float32_argument_gives_eagers_result(phase_a, form, make):
    module, compiled = phase_a
    for shape in [(4, 8, 6), (64, 128, 64)]:
        x, w, b = args(*shape)
        forms = [make(t) for t in (x, w, b)]
        for given, value in zip(forms, (x, w, b)):
            assert torch.equal(given.detach(), value), form
        with torch.no_grad():
            expected = module.inference(x, w, b)
        assert torch.allclose(compiled(*forms), expected, rtol=1e-5, atol=1e-6), form
        # Empty batches too.
        assert compiled(forms[0][:0], forms[1], forms[2]).shape == (0,)


# Scalars from numpy: accepted by value, as the Python original takes them (they used to be
# refused, a numpy.bool even as "expected a bool (argument 'flag' is a bool)").

def _scaled(rextio):
    import control_flow_fixture as fx

    return fx.scaled, rextio.compile(fx.scaled, strict=True)


def _float_loop(rextio):
    import emit_fixture as fx

    return fx.float_loop, rextio.compile(fx.float_loop, strict=True)


@pytest.mark.parametrize("times", [np.int64(5), np.int32(5), np.int8(5), np.uint8(5), np.uint64(5), np.intp(5)])
@pytest.mark.parametrize("flag", [np.bool_(True), np.bool_(False)])
def test_numpy_integers_and_bools_are_taken_by_value(rextio, times, flag):
    original, compiled = _scaled(rextio)
    x = torch.randn(3, 4)
    with torch.no_grad():
        expected = original(x, int(times), bool(flag))
    assert_parity(compiled(x, times, flag), expected)
    assert torch.equal(compiled(x, times=times, flag=flag), compiled(x, int(times), bool(flag)))


@pytest.mark.parametrize("f", [np.float64(1.5), np.float32(1.5), np.float16(-0.25), np.float32(0.1), np.int64(3), np.uint16(2)])
def test_numpy_floats_and_integers_are_taken_as_python_floats(rextio, f):
    original, compiled = _float_loop(rextio)
    x = torch.randn(2, 2)
    # The compiled function computes in float64 with the argument's exact value, as the
    # original does with float(f) (with a numpy.float32 itself, numpy would compute in
    # float32: docs/parity.md).
    ours = compiled(x, f, 5)
    assert type(ours) is float
    assert ours == original(x, float(f), 5)


@pytest.mark.parametrize(
    "position,value,message",
    [
        (2, np.bool_(True), "rextio-torch: expected an int (argument 'times' is a numpy.bool)"),
        (2, np.float64(3.0), "rextio-torch: expected an int (argument 'times' is a numpy.float64)"),
        (2, np.float32(3.0), "rextio-torch: expected an int (argument 'times' is a numpy.float32)"),
        (2, np.complex64(3), "rextio-torch: expected an int (argument 'times' is a numpy.complex64)"),
        (2, "3", "rextio-torch: expected an int (argument 'times' is a str)"),
        (3, np.int64(1), "rextio-torch: expected a bool (argument 'flag' is a numpy.int64)"),
        (3, 1, "rextio-torch: expected a bool (argument 'flag' is an int)"),
        (3, None, "rextio-torch: expected a bool (argument 'flag' is None)"),
        (1, np.zeros((3, 4), dtype=np.float32), "rextio-torch: expected a torch.Tensor (argument 'x' is a numpy.ndarray)"),
        (1, np.float32(1.0), "rextio-torch: expected a torch.Tensor (argument 'x' is a numpy.float32)"),
    ],
)
def test_refusals_name_the_real_type(rextio, position, value, message):
    _, compiled = _scaled(rextio)
    args = [torch.randn(3, 4), 3, True]
    args[position - 1] = value
    with pytest.raises(TypeError) as raised:
        compiled(*args)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "position,value,message",
    [
        (2, torch.tensor(3), "rextio-torch: expected an int (argument 'times' is a torch.Tensor; pass int(t) or t.item() for a one-element tensor t)"),
        (2, torch.tensor([3]), "rextio-torch: expected an int (argument 'times' is a torch.Tensor; pass int(t) or t.item() for a one-element tensor t)"),
        (3, torch.tensor(True), "rextio-torch: expected a bool (argument 'flag' is a torch.Tensor; pass bool(t) or t.item() for a one-element tensor t)"),
        (2, np.array(3), "rextio-torch: expected an int (argument 'times' is a numpy.ndarray; pass int(a) or a.item() for a one-element array a)"),
    ],
)
def test_tensors_for_scalars_are_refused_saying_how_to_pass_them(rextio, position, value, message):
    _, compiled = _scaled(rextio)
    args = [torch.randn(3, 4), 3, True]
    args[position - 1] = value
    with pytest.raises(TypeError) as raised:
        compiled(*args)
    assert str(raised.value) == message
    _, float_loop = _float_loop(rextio)
    with pytest.raises(TypeError) as raised:
        float_loop(torch.randn(2, 2), torch.tensor(1.5), 3)
    assert str(raised.value) == (
        "rextio-torch: expected a float (argument 'f' is a torch.Tensor; pass float(t) or t.item() for a one-element tensor t)"
    )


@pytest.mark.parametrize(
    "value,given",
    [(2**63, "an int: 9223372036854775808"), (-(2**63) - 1, "an int: -9223372036854775809"),
     (np.uint64(2**64 - 1), "a numpy.uint64: 18446744073709551615")],
)
def test_ints_beyond_64_bits_are_an_overflow_error_naming_the_argument(rextio, value, given):
    _, compiled = _scaled(rextio)
    with pytest.raises(OverflowError) as raised:
        compiled(torch.randn(3, 4), value, True)
    assert str(raised.value) == f"rextio-torch: expected an int that fits in 64 bits (argument 'times' is {given})"


# Tensors whose memory is not their values: refused with an error, where reading them
# panicked (sparse compressed layouts, functorch's tensors), crashed the process (fake and
# functionalized tensors) or read a nested tensor's buffer as a matrix.

@pytest.mark.parametrize(
    "make,message",
    [
        (lambda t: t.to_sparse_csr(), "rextio-torch: expected a strided tensor (argument 'x' is sparse_csr)"),
        (lambda t: t.to_sparse_csc(), "rextio-torch: expected a strided tensor (argument 'x' is sparse_csc)"),
        (lambda t: t.to_sparse_bsr((2, 2)), "rextio-torch: expected a strided tensor (argument 'x' is sparse_bsr)"),
        (lambda t: t.to_sparse_bsc((2, 2)), "rextio-torch: expected a strided tensor (argument 'x' is sparse_bsc)"),
        (lambda t: torch.nested.nested_tensor(list(t)), "rextio-torch: expected a strided tensor (argument 'x' is a nested tensor)"),
        (lambda t: torch.nested.nested_tensor([t[0], t[1, :3]]), "rextio-torch: expected a strided tensor (argument 'x' is a nested tensor)"),
    ],
)
def test_layouts_without_strides_are_refused(phase_a, make, message):
    _, compiled = phase_a
    x, w, b = args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sparse and nested tensors are in beta
        given = make(x)
    with pytest.raises(ValueError) as raised:
        compiled(given, w, b)
    assert str(raised.value) == message


_NO_DATA_SCRIPT = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
import torch
import rextio_torch, phase_a
from torch._subclasses.fake_tensor import FakeTensorMode
f = rextio_torch.compile(phase_a.inference, strict=True)
x, w, b = torch.randn(4, 8), torch.randn(6, 8), torch.randn(6)
def outcome(run):
    try:
        run()
        return "returned"
    except BaseException as e:
        return f"{type(e).__name__}: {e}"
with FakeTensorMode():
    fake = torch.randn(4, 8)
print(json.dumps({
    "vmap": outcome(lambda: torch.func.vmap(lambda t: f(t, w, b))(torch.randn(3, 4, 8))),
    "grad": outcome(lambda: torch.func.grad(lambda t: f(t, w, b).sum())(x)),
    "functionalize": outcome(lambda: torch.func.functionalize(lambda t: f(t, w, b))(x)),
    "fake": outcome(lambda: f(fake, w, b)),
}))
"""


def test_tensors_without_data_are_refused_not_read():
    # In a child process: before the fix two of these crashed the interpreter.
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _NO_DATA_SCRIPT, str(EXAMPLES)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    outcomes = json.loads(run.stdout.strip().splitlines()[-1])
    no_storage = "ValueError: rextio-torch: expected a tensor whose data is in memory (argument 'x' has no storage, as inside torch.func transforms)"
    assert outcomes == {
        "vmap": no_storage,
        "grad": no_storage,
        "functionalize": "ValueError: rextio-torch: expected a tensor whose data is in memory (argument 'x' has no data)",
        "fake": "TypeError: rextio-torch: expected a torch.Tensor (argument 'x' is a "
        "torch._subclasses.fake_tensor.FakeTensor, which overrides __torch_dispatch__)",
    }
