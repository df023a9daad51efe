"""The Python attributes a user module's forward reads (`self.scale`, `self.mode`,
`self.act`), as the members `_module._members` describes: a scalar or a string is a constant
(a literal of the compilation, `Member::Constant` in frontend/src/module.rs); an attribute
holding a known torch function is the activation of that name (`Member::Method` /
`Member::Functional`, as `nn.ReLU`, `nn.GELU`, ... are); anything else is not compiled, and
`_why_not_constant` says why in the user's words. Every one of them is guarded at each call
(`_guards._Guards`: a scalar or string by type and value, a function by identity).
"""

from __future__ import annotations

from typing import Any


def _why_not_constant(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return ("a tensor attribute that is neither a parameter nor a buffer (register it with "
                "register_buffer, so that it is read at every call)")
    if type(value) is float:
        return f"the float {value!r} has no literal (only finite floats are compiled)"
    if type(value) is int:
        return f"the int {value} does not fit 64 bits"
    if type(value) is str:
        return f"the str {value!r} is not valid Unicode (it holds a lone surrogate)"
    if callable(value):
        what = getattr(value, "__qualname__", None) or type(value).__qualname__
        return (f"a function attribute ({what}) that is not one of the torch functions compiled "
                f"({', '.join(_function_names())}); it runs eagerly")
    return (f"a {type(value).__qualname__} attribute (the Python attributes compiled are int, float, "
            "bool and str ones, as literals, and known torch functions)")


def _constant(value: Any) -> bool:
    """Whether `value` is a Python scalar a forward's source can hold as a literal: a bool,
    an int of 64 bits, a finite float, a str of valid Unicode (exact types: an enum, a
    numpy scalar or a str subclass is not)."""
    import math

    kind = type(value)
    if kind is bool:
        return True
    if kind is int:
        return -(2**63) <= value < 2**63
    if kind is str:
        try:
            value.encode("utf-8")  # a lone surrogate has no place in the description's JSON
        except UnicodeEncodeError:
            return False
        return True
    return kind is float and math.isfinite(value)


# The torch functions an attribute may hold (`self.act = F.gelu`), by identity: what calling
# it on one tensor computes, as the member of the activation module of the same name. Only
# functions whose one-argument call is exactly that (F.relu's `inplace` defaults to False).
_FUNCTIONS: dict = {}


def _functions() -> dict:
    """id(function) -> (function, its member, its name as users write it) (built once)."""
    if not _FUNCTIONS:
        import torch
        import torch.nn.functional as F

        for name, function, member in [
            ("torch.relu", torch.relu, {"kind": "method", "name": "relu"}),
            ("torch.sigmoid", torch.sigmoid, {"kind": "method", "name": "sigmoid"}),
            ("torch.tanh", torch.tanh, {"kind": "method", "name": "tanh"}),
            ("F.relu", F.relu, {"kind": "method", "name": "relu"}),
            ("F.sigmoid", F.sigmoid, {"kind": "method", "name": "sigmoid"}),
            ("F.tanh", F.tanh, {"kind": "method", "name": "tanh"}),
            ("F.gelu", F.gelu, {"kind": "functional", "name": "gelu", "approximate": None}),
            ("F.silu", F.silu, {"kind": "functional", "name": "silu"}),
            ("F.relu6", F.relu6, {"kind": "functional", "name": "relu6"}),
        ]:
            _FUNCTIONS[id(function)] = (function, member, name)
    return _FUNCTIONS


def _function_names() -> list[str]:
    return [name for _, _, name in _functions().values()]


def _function_member(value: Any) -> dict | None:
    """The member of an attribute holding a known torch function (`_FUNCTIONS`), or None."""
    entry = _functions().get(id(value))
    if entry is None or entry[0] is not value:
        return None
    return dict(entry[1])
