"""The call boundary: exact errors for bad arguments, no mutation, no autograd state."""

import pytest
import torch


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
