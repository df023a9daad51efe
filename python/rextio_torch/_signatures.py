"""How a compiled module's call is typed (`rextio_torch.compile(module)`, `_module.py`): the
key of a signature (the tensors' dtypes, devices and ranks; for a forward typed at the call,
its arguments' types first, `None` among them), and which of a forward's parameters the
call types (`_annotation_kind`: every one but a marker's)."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from ._markers import call_markers as _call_markers


def _key(tensors: list) -> tuple:
    """The signature of a call: each tensor's (dtype, device, rank), as torch gives them."""
    return tuple(map(_SIGNATURE, tensors))


# A tensor's (dtype, device, rank), read in C (`_key`, at every call).
_SIGNATURE = attrgetter("dtype", "device", "ndim")


def _arg_type(value: Any) -> str:
    """The type a forward typed at the call gives an argument: a CPU marker's name (any
    dtype and rank one describes), `bool`, `int`, `float` or `None`; `<what>` for anything
    else."""
    kind = type(value)
    if kind is bool or kind is float:
        return kind.__name__
    if kind is int:
        return "int" if -(2**63) <= value < 2**63 else "<an int outside the 64-bit range>"
    if value is None:
        return "None"
    tensor = _TENSOR[0]
    if tensor is None:
        import torch

        tensor = _TENSOR[0] = torch.Tensor
    if isinstance(value, tensor):
        # Found once per (dtype, device, rank): every call of a forward typed at the call
        # types its tensors here.
        key = (value.dtype, value.device, value.dim())
        name = _TENSOR_TYPES.get(key)
        if name is None:
            name = _TENSOR_TYPES[key] = _tensor_type(value)
        return name
    return f"<a {kind.__qualname__}>"


_TENSOR: list = [None]
_TENSOR_TYPES: dict = {}


def _tensor_type(value: Any) -> str:
    """`_arg_type` of a tensor."""
    marker = _call_markers().get((str(value.dtype).removeprefix("torch."), value.device.type, value.dim()))
    if marker is None:
        return f"<a {str(value.dtype).removeprefix('torch.')} {value.device} tensor of rank {value.dim()}>"
    return marker


def _annotation_kind(annotation: Any, module: Any) -> str | None:
    """What a forward's parameter annotation is: "marker" (a `rextio_torch.types` marker),
    "native" (`int`, `float`, `bool`), "other" (`torch.Tensor`, `Optional[Tensor]`, ...) or
    None (none). A string annotation (`from __future__ import annotations`) is looked up as
    a dotted name in the forward's module, without evaluating it; one that is no name is
    "other". (The frontend resolves annotations on its own; this only picks which parameters
    the call types, and a marker it reads otherwise is the compiled function's error.)"""
    import inspect

    if annotation is inspect.Parameter.empty:
        return None
    if isinstance(annotation, str):
        parts = annotation.strip().split(".")
        if not all(part.isidentifier() for part in parts):
            return "other"
        forward = getattr(type(module), "forward", None)
        scope = getattr(forward, "__globals__", {})
        if parts[0] not in scope:
            return "native" if annotation.strip() in ("int", "float", "bool") else "other"
        value = scope[parts[0]]
        for part in parts[1:]:
            value = inspect.getattr_static(value, part, None)
        annotation = value
    if annotation in (int, float, bool):
        return "native"
    return "marker" if any(annotation is m for m in _marker_classes()) else "other"


def _marker_classes() -> list:
    from . import types

    return [getattr(types, name) for name in types.__all__]


def _type_name(t: tuple) -> tuple[str, str, int]:
    """(dtype, device, rank) of a signature in words: ("float32", "cpu", 2)."""
    dtype, device, rank = t
    return (str(dtype).removeprefix("torch."), device.type if device.type == "cpu" else str(device), rank)


def _describe(t: tuple[str, str, int]) -> str:
    return f"{t[0]} {t[1]} rank {t[2]}"


def _split_key(key: tuple, forward: Any) -> tuple[tuple, tuple]:
    """A signature's key as (the arguments' type names, the tensors' types): the first are
    there only for a forward typed at the call (`_arg_type`)."""
    if forward is not None and forward.typed_at_call:
        return key[0], key[1:]
    return (), key
