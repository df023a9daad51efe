"""Function-valued and string-valued attributes of a user module (issue 33), as public code
writes them: `self.act = torch.relu` / `F.gelu` / `ACT2FN[config.hidden_act]` called as
`self.act(x)`, and `self.mode = "mean"` tested in `forward` as `if self.mode == "mean":`.
A known torch function compiles as the activation of that name, a string as a constant whose
tests fold before inlining; both are guarded (a reassigned attribute plans again, and the
call gives eager's new answer); any other function stays eager with the reason. Eager
PyTorch is the oracle (python/rextio_torch/_module.py `_members`, frontend/src/module.rs)."""

import math
import warnings
from collections import OrderedDict

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from conftest import assert_parity

# --- A faithful copy of the part of huggingface/transformers' `activations.py` these models
# use (Copyright 2020 The HuggingFace Team, Apache-2.0): `GELUActivation` holds
# `nn.functional.gelu` in `self.act`, and `ACT2FN[name]` makes a new instance per lookup.


class GELUActivation(nn.Module):
    """
    Original Implementation of the GELU activation function in Google BERT repo when initially created. For
    information: OpenAI GPT's GELU is slightly different (and gives slightly different results): 0.5 * x * (1 +
    torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3)))) This is now written in C in nn.functional
    Also see the Gaussian Error Linear Units paper: https://huggingface.co/papers/1606.08415
    """

    def __init__(self, use_gelu_python: bool = False):
        super().__init__()
        if use_gelu_python:
            self.act = self._gelu_python
        else:
            self.act = nn.functional.gelu

    def _gelu_python(self, input: Tensor) -> Tensor:
        return input * 0.5 * (1.0 + torch.erf(input / math.sqrt(2.0)))

    def forward(self, input: Tensor) -> Tensor:
        return self.act(input)


class ClassInstantier(OrderedDict):
    def __getitem__(self, key):
        content = super().__getitem__(key)
        cls, kwargs = content if isinstance(content, tuple) else (content, {})
        return cls(**kwargs)


ACT2CLS = {
    "gelu": GELUActivation,
    "gelu_python": (GELUActivation, {"use_gelu_python": True}),
    "relu": nn.ReLU,
    "silu": nn.SiLU,
}
ACT2FN = ClassInstantier(ACT2CLS)

# --- end of the copy.


class FunctionAct(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.act = act

    def forward(self, x):
        return self.act(self.fc(x))


class HFMLP(nn.Module):
    """The MLP of many HF models: `self.act_fn = ACT2FN[config.hidden_act]`."""

    def __init__(self, hidden_act):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)
        self.act_fn = ACT2FN[hidden_act]

    def forward(self, hidden_states):
        hidden_states = self.fc1(hidden_states)
        hidden_states = self.act_fn(hidden_states)
        return self.fc2(hidden_states)


class Pooler(nn.Module):
    """String mode flags set in `__init__` and tested in `forward`."""

    def __init__(self, mode, pooling="cls"):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.mode = mode
        self.pooling = pooling

    def forward(self, x):
        h = self.fc(x)
        if self.mode == "mean":
            h = h * 0.5
        elif self.mode == "relu":
            h = h.relu()
        elif self.mode in ("tanh", "hyperbolic"):
            h = h.tanh()
        else:
            h = h.sigmoid()
        if "cls" != self.pooling:
            h = h + 1.0
        return h


def eager(module, *args):
    with torch.no_grad():
        return module(*args)


def same(ours, theirs):
    """Eager's own result (the call ran eagerly): bit for bit, NaN where eager has NaN."""
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0, equal_nan=True)


def inputs(seed):
    torch.manual_seed(seed)
    x = torch.randn(8, 16) * 3
    x[0, 0], x[1, 1], x[2, 2] = float("inf"), float("-inf"), float("nan")
    return x


def native(fast, x):
    """`fast(x)`, which must run compiled: no RextioFallbackWarning, a compiled signature."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fast(x)
    assert any(type(f).__name__ == "CompiledFunction" for f in fast.signatures.values()), fast.signatures
    return out


FUNCTIONS = [torch.relu, torch.tanh, torch.sigmoid, F.relu, F.gelu, F.silu, F.sigmoid, F.tanh, F.relu6]


@pytest.mark.parametrize("act", FUNCTIONS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_a_torch_function_attribute_compiles_and_is_guarded(rextio, act):
    model = FunctionAct(act).eval()
    fast = rextio.compile(model)
    x = inputs(0)
    assert_parity(native(fast, x), eager(model, x))
    # Reassigned after the first call: planned again, eager's new answer.
    model.act = torch.tanh if act is not torch.tanh else torch.sigmoid
    assert_parity(native(fast, x), eager(model, x))
    model.act = act
    assert_parity(native(fast, x), eager(model, x))


@pytest.mark.parametrize("hidden_act", ["gelu", "relu", "silu"])
def test_act2fn_members_compile(rextio, hidden_act):
    model = HFMLP(hidden_act).eval()
    fast = rextio.compile(model)
    x = inputs(1)
    assert_parity(native(fast, x), eager(model, x))
    # Another activation module in its place, then another function inside GELUActivation.
    model.act_fn = ACT2FN["gelu"].eval()
    assert_parity(native(fast, x), eager(model, x))
    model.act_fn.act = torch.relu
    assert_parity(native(fast, x), eager(model, x))


@pytest.mark.parametrize("mode", ["mean", "relu", "tanh", "hyperbolic", "other", ""])
@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_string_modes_fold_and_are_guarded(rextio, mode, pooling):
    model = Pooler(mode, pooling).eval()
    fast = rextio.compile(model)
    x = inputs(2)
    assert_parity(native(fast, x), eager(model, x))
    ir = next(iter(fast.signatures.values())).optimized_ir
    assert "\n  if " not in ir, ir  # each test folded to the arm it takes
    # Changed after the first call: planned again, eager's new answer.
    model.mode = "relu" if mode != "relu" else "mean"
    assert_parity(native(fast, x), eager(model, x))
    model.pooling = "cls" if pooling != "cls" else "mean"
    assert_parity(native(fast, x), eager(model, x))


def test_a_string_compared_with_another_type_is_eagers_answer(rextio):
    model = Pooler(3).eval()  # `3 == "mean"` is False in Python
    fast = rextio.compile(model)
    x = inputs(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_parity(fast(x), eager(model, x))
        model.mode = "mean"
        assert_parity(fast(x), eager(model, x))


def user_act(x):
    return x.relu()


@pytest.mark.parametrize("act, shown", [
    (lambda x: x.relu(), "<lambda>"),
    (user_act, "user_act"),
    (GELUActivation(use_gelu_python=True)._gelu_python, "GELUActivation._gelu_python"),
])
def test_other_function_attributes_run_eagerly_with_the_reason(rextio, act, shown):
    model = FunctionAct(act).eval()
    fast = rextio.compile(model)
    x = inputs(4)
    with pytest.warns(rextio.RextioFallbackWarning, match=rf"(?s)`self\.act`.*function attribute \({shown}\)"):
        same(fast(x), eager(model, x))
    # A known function in its place compiles.
    model.act = F.gelu
    assert_parity(native(fast, x), eager(model, x))


def test_gelu_python_from_act2fn_runs_eagerly(rextio):
    model = HFMLP("gelu_python").eval()
    fast = rextio.compile(model)
    x = inputs(5)
    with pytest.warns(rextio.RextioFallbackWarning, match="GELUActivation._gelu_python"):
        same(fast(x), eager(model, x))
