"""A compiled module's call that runs eagerly (issue 33): eager's own result, the warning once
per reason (not rebuilt and raised at every call), and every guard still seen, so the module
compiles again when the reason goes (python/rextio_torch/_guards.py)."""

import warnings

import pytest
import torch
import torch.nn as nn


class Flip(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.flip(self.fc(x), [1])


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.scale = 0.5

    def forward(self, x):
        return self.fc(x) * self.scale


def eager(module, *args):
    with torch.no_grad():
        return module(*args)


def fallback_warnings(record):
    return [w for w in record if issubclass(w.category, Warning) and "runs eagerly" in str(w.message)]


def test_a_forward_that_does_not_compile_warns_once_per_reason(rextio):
    torch.manual_seed(0)
    model = Flip().eval()
    fast = rextio.compile(model)
    x = torch.randn(4, 8)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        # Three places: Python's default would warn at each; one reason warns once.
        first = fast(x)
        second = fast(x)
        third = fast(x)
    assert len(fallback_warnings(record)) == 1, [str(w.message) for w in record]
    assert record[0].filename == __file__  # at the caller's line
    for ours in (first, second, third):
        assert torch.equal(ours, eager(model, x))
    assert first.requires_grad  # eager's own call, autograd as it is


def test_always_and_error_filters_still_see_every_call(rextio):
    model = Flip().eval()
    fast = rextio.compile(model)
    x = torch.randn(4, 8)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fast(x)
        fast(x)
    assert len(fallback_warnings(record)) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", rextio.RextioFallbackWarning)
        for _ in range(2):
            with pytest.raises(rextio.RextioFallbackWarning, match="Flip runs eagerly"):
                fast(x)
    # New filters (pytest.warns's) see it again.
    with pytest.warns(rextio.RextioFallbackWarning, match="Flip runs eagerly"):
        fast(x)


def test_each_reason_warns_and_eval_compiles_again(rextio):
    torch.manual_seed(1)
    model = Scaled()
    fast = rextio.compile(model)
    x = torch.randn(4, 8)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        for _ in range(3):
            assert torch.equal(fast(x), model(x))  # training mode: eager
        model.fc.register_forward_hook(lambda module, args, out: out + 1)
        model.eval()
        for _ in range(3):
            assert torch.equal(fast(x), eager(model, x))  # a hook: eager
    messages = [str(w.message) for w in fallback_warnings(record)]
    assert len(messages) == 2, messages
    assert "training mode" in messages[0] and "submodule 'fc' has forward hooks" in messages[1]
    model.fc._forward_hooks.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.testing.assert_close(fast(x), eager(model, x))
    assert any(type(f).__name__ == "CompiledFunction" for f in fast.signatures.values())


def test_an_equal_attribute_keeps_the_plan_and_another_plans_again(rextio):
    torch.manual_seed(2)
    model = Scaled().eval()
    fast = rextio.compile(model)
    x = torch.randn(4, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.testing.assert_close(fast(x), eager(model, x))
        model.scale = float("0.5")  # the same value, another object: the same plan
        torch.testing.assert_close(fast(x), eager(model, x))
        model.scale = -0.0  # another value: planned again, eager's answer
        assert torch.equal(fast(x), eager(model, x))
        assert torch.equal(fast(x).signbit(), eager(model, x).signbit())
        model.scale = 2.0
        torch.testing.assert_close(fast(x), eager(model, x))
