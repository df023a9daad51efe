"""Module forwards' signatures as public code writes them (issue 33): `torch.Tensor`,
`Tensor`, `Optional[Tensor]` and `Tensor | None` annotations are typed at the call like no
annotation; defaults, `None` among them, are bound per call, and `mask is None` tests are
folded per signature (a None argument is part of the signature's key). Eager PyTorch is the
oracle; "compiled" means no RextioFallbackWarning at compile or call."""

from __future__ import annotations

import warnings

import pytest
import torch

from conftest import assert_parity


def eager(module, *args, **kwargs):
    with torch.no_grad():
        return module(*args, **kwargs)


def compiled(rextio, model):
    """`rextio.compile(model)`, with any fallback warning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return rextio.compile(model, strict=True)


def native(fast, *args, **kwargs):
    """A call of `fast` that must run compiled (a fallback warning is an error)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fast(*args, **kwargs)


@pytest.mark.parametrize("name", ["TorchTensor", "BareTensor", "OptionalTensor", "UnionNone"])
def test_tensor_annotations_are_typed_at_the_call(rextio, name):
    import module_signatures_fixture as fx

    torch.manual_seed(33)
    model = getattr(fx, name)().eval()
    fast = compiled(rextio, model)
    for rows in (1, 5):
        x = torch.randn(rows, 8)
        assert_parity(native(fast, x), eager(model, x))
    assert [key[0] for key in fast.signatures] == [("TensorF32Cpu2D",)]
    # Another rank is another signature, as for a forward without annotations.
    x = torch.randn(2, 3, 8)
    assert_parity(native(fast, x), eager(model, x))


def test_an_optional_mask_switches_between_calls(rextio):
    import module_signatures_fixture as fx

    torch.manual_seed(34)
    model = fx.Masked().eval()
    fast = compiled(rextio, model)
    x, mask = torch.randn(4, 8), torch.randn(4, 8)
    calls = [((x,), {}), ((x, mask), {}), ((x, None), {}), ((x,), {"mask": mask, "scale": 0.5}),
             ((x,), {"scale": -1.0}), ((x, mask, 3.0), {}), ((x,), {})]
    for args, kwargs in calls:
        assert_parity(native(fast, *args, **kwargs), eager(model, *args, **kwargs))
    assert sorted(key[0] for key in fast.signatures) == [
        ("TensorF32Cpu2D", "None", "float"), ("TensorF32Cpu2D", "TensorF32Cpu2D", "float")]


def test_a_mask_of_exact_ops_is_bit_exact(rextio):
    import module_signatures_fixture as fx

    torch.manual_seed(35)
    model = fx.AddMask().eval()
    fast = compiled(rextio, model)
    x = torch.randn(6, 5)
    x[0, :3] = torch.tensor([float("nan"), float("inf"), -0.0])
    mask = torch.randn(6, 5)
    mask[1, 0] = float("-inf")
    for args in ((x,), (x, mask), (x, None), (x, mask[0]), (x,)):
        ours, theirs = native(fast, *args), eager(model, *args)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert torch.equal(ours.view(torch.int32), theirs.view(torch.int32))
    assert [key[0] for key in fast.signatures] == [
        ("TensorF32Cpu2D", "None"), ("TensorF32Cpu2D", "TensorF32Cpu2D"), ("TensorF32Cpu2D", "TensorF32Cpu1D")]


def test_the_arm_folded_away_is_not_compiled(rextio):
    """Without a mask the `masked_fill` arm is folded away and the forward compiles; with a
    bool mask that arm runs, and (masked_fill not being compiled) that signature runs
    eagerly, with eager's answer."""
    import module_signatures_fixture as fx

    model = fx.FillMask().eval()
    fast = compiled(rextio, model)
    x = torch.randn(3, 4)
    assert torch.equal(native(fast, x), eager(model, x))
    mask = x > 0.5
    with pytest.warns(rextio.RextioFallbackWarning, match="FillMask runs eagerly at this call"):
        assert torch.equal(fast(x, mask), eager(model, x, mask))
    assert torch.equal(native(fast, x, None), eager(model, x, None))


def test_a_mask_made_when_none_is_given(rextio):
    import module_signatures_fixture as fx

    model = fx.DefaultMask().eval()
    fast = compiled(rextio, model)
    x, mask = torch.randn(3, 4), torch.randn(3, 4)
    for args in ((x,), (x, mask), (x,)):
        assert torch.equal(native(fast, *args), eager(model, *args))


def test_early_returns_and_conditional_expressions_fold(rextio):
    import module_signatures_fixture as fx

    model = fx.EarlyReturn().eval()
    fast = compiled(rextio, model)
    x, bias, shift = torch.randn(3, 4), torch.randn(3, 4), torch.randn(4)
    calls = [((x,), {}), ((x, bias), {}), ((x,), {"shift": shift}), ((x, bias), {"shift": shift}),
             ((x, None), {"shift": None})]
    for args, kwargs in calls:
        assert torch.equal(native(fast, *args, **kwargs), eager(model, *args, **kwargs))
    assert len(fast.signatures) == 4


def test_a_none_argument_used_otherwise_runs_eagerly_and_says_why(rextio):
    import module_signatures_fixture as fx

    torch.manual_seed(36)
    model = fx.BiasOrNone().eval()
    fast = compiled(rextio, model)
    x, bias = torch.randn(3, 8), torch.randn(8)
    assert_parity(native(fast, x, bias), eager(model, x, bias))
    why = r"(?s)`bias` is None at this call, and the forward uses it other than in a `bias is None`"
    with pytest.raises(rextio.CompileError, match=why):
        fast(x)  # strict: the signature's diagnostic is the error
    lenient = rextio.compile(model)
    for args in ((x,), (x, None)):
        with pytest.warns(rextio.RextioFallbackWarning, match=why):
            assert torch.equal(lenient(*args), eager(model, *args))
    assert_parity(native(lenient, x, bias), eager(model, x, bias))

    model = fx.RebindInLoop().eval()
    fast = rextio.compile(model)
    with pytest.warns(rextio.RextioFallbackWarning, match=r"`acc` is None at this call"):
        assert torch.equal(fast(x), eager(model, x))
    # With a tensor, the test of a name the loop binds again is not folded: an `is`
    # comparison, which is not compiled either.
    with pytest.warns(rextio.RextioFallbackWarning, match=r"(?s)comparing plugin-typed values.*acc is None"):
        assert torch.equal(fast(x, x), eager(model, x, x))


def test_mixed_annotations_type_all_but_the_markers_at_the_call(rextio):
    import module_signatures_fixture as fx

    torch.manual_seed(37)
    model = fx.Mixed().eval()
    fast = compiled(rextio, model)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    # `scale: float` given an int is typed by the call too, as eager ignores the annotation.
    for n, scale, z in ((0, 2.0, y), (2, 0.5, y), (1, 3, y), (2, -1.5, y[0])):
        assert_parity(native(fast, x, n, scale, z), eager(model, x, n, scale, z))
    assert [key[0] for key in fast.signatures] == [
        ("int", "float", "TensorF32Cpu2D"), ("int", "int", "TensorF32Cpu2D"), ("int", "float", "TensorF32Cpu1D")]
    # The marker keeps deciding: another type is the compiled function's error.
    with pytest.raises(ValueError, match="expected a float32 tensor"):
        fast(x.double(), 1, 2.0, y)

    model = fx.Unannotated().eval()
    fast = compiled(rextio, model)
    for args in ((x, y), (x, 2.0), (x, y, 3), (x, y[0], 2)):
        assert_parity(native(fast, *args), eager(model, *args))
    assert [key[0] for key in fast.signatures] == [
        ("TensorF32Cpu2D", "TensorF32Cpu2D", "int"), ("TensorF32Cpu2D", "float", "int"),
        ("TensorF32Cpu2D", "TensorF32Cpu1D", "int")]


def test_string_annotations_are_read_without_evaluating_them(rextio):
    """`from __future__ import annotations` makes every annotation a string: a marker's is
    found by name in the forward's module, anything else is typed at the call."""
    import module_signatures_future_fixture as fx

    torch.manual_seed(38)
    model = fx.Masked().eval()
    fast = compiled(rextio, model)
    x, mask = torch.randn(2, 8), torch.randn(2, 8)
    for args in ((x,), (x, mask), (x, None, 0.25)):
        assert_parity(native(fast, *args), eager(model, *args))
    assert sorted(key[0] for key in fast.signatures) == [("None", "float"), ("TensorF32Cpu2D", "float")]
    with pytest.raises(ValueError, match="expected a float32 tensor"):
        fast(x.double())


def test_a_tuple_result_runs_eagerly_with_the_reason(rextio):
    import module_signatures_fixture as fx

    model = fx.TwoOutputs().eval()
    fast = rextio.compile(model)
    x = torch.randn(2, 4)
    with pytest.warns(rextio.RextioFallbackWarning, match=r"(?s)RXT033.*return value of type tuple"):
        ours = fast(x)
    theirs = eager(model, x)
    assert type(ours) is tuple and len(ours) == 2
    for a, b in zip(ours, theirs):
        assert torch.equal(a, b)
