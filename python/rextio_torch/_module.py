"""`rextio_torch.compile(module)` for a `torch.nn.Module` (README, "Modules").

An `nn.Sequential` of modules of known kinds compiles without source: its layers are written
out as the text of one typed function (`generated_source`), whose parameters are the input
and, after it, every weight and bias the layers use (hidden parameters). That text goes
through the compiler like any other source, so the claim rules, the optimizer's fusion and
the executor are the ones every compiled function gets, and a diagnostic points at the line
of the layer that caused it (each line names its layer in a comment).

- Types are fixed per signature, as torch.compile does: the input's dtype, device and rank
  and the parameters' dtypes and devices at a call pick the marker types of a compilation,
  made at the first call with that signature and cached (at most `SIGNATURE_LIMIT` of them).
  The marker types are the compiler's CPU ones (`_call_markers`, from `_native().markers()`:
  float32, float64, bfloat16 of rank 0 to 3, int64 of rank 1 and 2). A signature no marker
  type describes (float16, a CUDA device), or one past the limit, runs the module eagerly
  with a `RextioFallbackWarning` naming it.
- Parameters are read from the module at every call (never snapshotted), so
  `load_state_dict`, in-place updates and `.to()` are seen; a layer replaced, added or
  removed (each container's children are compared with those planned) plans it again, and
  so does a layer setting changed (`_Guards`: eps, dim, approximate, inplace, a bias
  added, ... by bits) or a Python attribute the forward reads (`_exact`: type and bits).
  docs/reliability.md ("What a module plan depends on") lists every key and guard.
- A shared instance runs at every place it appears: children and tensors are read from
  `_modules`/`_parameters`/`_buffers` (`named_children()` and `named_parameters()` yield
  a shared one once), each place with hidden parameters of its own, named by `_Names`
  (identifiers, unique, whatever the layer names are).
- A user module's forward gets every argument of a call, bound as Python binds it
  (keyword-only ones and defaults included, `_Forward.bind`); a call that runs eagerly gets
  the call's own arguments.
- A module in training mode (it or any submodule), or with forward hooks or pre-hooks (its
  own, a submodule's, or global ones), runs eagerly at that call with a
  `RextioFallbackWarning` saying why.
- The result never requires grad: the compiled module is for inference (train the module).
- The wrapper forwards attribute access to the module (`state_dict()`, `parameters()`,
  `load_state_dict`, ...); methods that return the module (`eval()`, `train()`, `to()`)
  return the wrapper. It pickles as the module and its options, and compiles again in the
  loading process at the first call.

An `nn.Sequential` holding user modules compiles as a user module whose forward calls its
layers in turn (`_SequentialForward`), each user layer's forward inlined from its source.

A user module's `forward` compiles from its source (`_Forward`): the Python side describes
its members (kinds, hidden parameter names and markers) and the frontend lowers `self.fc(x)`
and `self.w` over hidden parameters, keeping the spans of the user's lines
(frontend/src/module.rs). Annotated with markers and `int`/`float`/`bool` only, it is
compiled at `compile`; its annotations fix the arguments' types (a wrong one is the
compiled function's error) and the parameters' types pick the compilation as above.
Otherwise (`x: torch.Tensor`, `mask: Optional[Tensor] = None`, no annotations) it is typed
at each call, every parameter but a marker's (`_signatures`), a `None` argument included:
the frontend folds its `is None` tests (frontend/src/module/none_args.rs).

Anything else (a layer of another kind, a forward that does not compile) stays on Python:
`compile` warns (or raises `CompileError` with `strict=True`) and the wrapper calls the
module eagerly.
"""

from __future__ import annotations

import threading
import warnings
from operator import is_not
from typing import Any

from ._attributes import _constant, _function_member, _why_not_constant
from ._guards import _MISSING, _NONE, _EagerWarnings, _exact, _Guards
from ._markers import call_markers as _call_markers
from ._markers import marker_types as _marker_types
from ._signatures import _annotation_kind, _arg_type, _describe, _key, _split_key, _type_name
from ._sources import _Files, _is_sequential, _Source, _user


# Distinct signatures compiled per module before later ones run eagerly (torch.compile's
# default recompile limit is 8 too).
SIGNATURE_LIMIT = 8


# Activation modules with no state but their type: module class name -> the line's expression.
_ACTIVATIONS = {
    "ReLU": "{h}.relu()",
    "Sigmoid": "{h}.sigmoid()",
    "Tanh": "{h}.tanh()",
    "SiLU": "F.silu({h})",
    "ReLU6": "F.relu6({h})",
}


class ModuleNotCompilable(Exception):
    """Why a module's structure cannot be compiled (a layer of an unknown kind, ...)."""


def _plan(module: Any) -> list[tuple[str, Any]]:
    """The layers of `module` in call order, as (dotted path, layer), nested Sequentials
    flattened. Raises ModuleNotCompilable naming the first layer of an unknown kind."""
    kind = type(module)
    if "forward" in vars(module):
        raise ModuleNotCompilable("an instance attribute `forward` replaces the module's forward")
    if _is_sequential(module):
        children = _children(module)
    elif kind.__module__.startswith("torch.nn.modules") and kind.__name__ in _KNOWN:
        # A bare layer is a Sequential of one, its path `layer`.
        children = [("layer", module)]
    else:
        raise ModuleNotCompilable(
            f"rextio-torch compiles an nn.Sequential of known layers, a known layer, or a user "
            f"module's annotated forward; {kind.__qualname__} is none of them"
        )
    layers: list[tuple[str, Any]] = []

    def walk(children: list, prefix: str) -> None:
        for name, layer in children:
            path = f"{prefix}{name}"
            kind = type(layer)
            if "forward" in getattr(layer, "__dict__", ()):
                raise ModuleNotCompilable(
                    f"layer ({_printable(path)}): an instance attribute `forward` replaces its forward")
            if _is_sequential(layer):
                walk(_children(layer), path + ".")
                continue
            if kind.__module__.startswith("torch.nn.modules") and kind.__name__ in _KNOWN:
                problem = _KNOWN[kind.__name__](layer)
                if problem is None and getattr(layer, "inplace", False) and _on_input(layers):
                    # Eager writes the caller's tensor (the layer's input is the module's
                    # input); the compiled function writes nothing it is given.
                    problem = "inplace=True on the module's input modifies the caller's tensor in place"
                if problem is None:
                    layers.append((path, layer))
                    continue
                raise ModuleNotCompilable(f"layer ({_printable(path)}) {layer!r}: {problem}")
            raise ModuleNotCompilable(
                f"layer ({_printable(path)}) is a {kind.__qualname__}, not a layer rextio-torch compiles "
                f"(known: Linear, {', '.join(_ACTIVATIONS)}, GELU, Softmax, LayerNorm, Dropout, Identity, "
                "Sequential)"
            )

    walk(children, "")
    return layers


def _children(module: Any) -> list[tuple[str, Any]]:
    """A container's children as its forward calls them: every entry of `_modules`, in
    order, a shared instance at each of its places (`named_children()` yields one instance
    once, which would drop its later calls)."""
    return list(module._modules.items())


def _on_input(layers: list[tuple[str, Any]]) -> bool:
    """Whether the value after `layers` (a Sequential's, in order) is still the module's input
    itself: only layers that compute nothing came before."""
    return all(type(layer).__name__ in ("Dropout", "Identity") for _, layer in layers)


def _printable(text: str) -> str:
    """`text` as it can stand in a generated comment or a message: itself when printable,
    else its escaped repr (a name with a newline must not end a comment)."""
    return text if text.isprintable() else ascii(text)


class _Names:
    """Fresh identifiers for hidden parameters: a path made an identifier (every character
    that is not an ASCII letter, digit or `_` becomes `_`), then `_2`, `_3`, ... until it is
    none of `taken` (the names of the forward's source, and those made before): layer names
    such as `fc-1`, or `a_b` next to `a` -> `b`, would otherwise be no identifier or one name
    twice."""

    def __init__(self, taken: Any = ()) -> None:
        self.taken = set(taken)

    def fresh(self, base: str) -> str:
        import re

        # Every use prefixes it (`weight_`, `self_`), so a leading digit is no problem.
        base = re.sub(r"[^0-9A-Za-z_]", "_", base) or "_"
        name, n = base, 2
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name


def _ok(_layer: Any) -> str | None:
    return None


def _gelu(layer: Any) -> str | None:
    if layer.approximate not in ("none", "tanh"):
        return f"GELU(approximate={layer.approximate!r}) is not compiled (only 'none' and 'tanh' are)"
    return None


def _softmax(layer: Any) -> str | None:
    if layer.dim is None:
        return "Softmax without a dim is not compiled (pass dim=)"
    if type(layer.dim) is not int or not -(2**63) <= layer.dim < 2**63:
        return f"Softmax with dim={layer.dim!r} (not an int of 64 bits) is not compiled"
    return None


def _layer_norm(layer: Any) -> str | None:
    import math

    shape = layer.normalized_shape
    if type(shape) is not tuple or len(shape) != 1:
        return "LayerNorm over more than the last dim is not compiled"
    if type(shape[0]) is not int or not 0 <= shape[0] < 2**63:
        return f"LayerNorm with normalized_shape={shape!r} is not compiled"
    if (layer.weight is None) != (layer.bias is None):
        return "LayerNorm with a weight but no bias (bias=False) is not compiled"
    if type(layer.eps) not in (int, float) or not (0.0 < layer.eps and math.isfinite(layer.eps)):
        return f"LayerNorm with eps={layer.eps!r} (not a positive finite number) is not compiled"
    return None


def _relu6(layer: Any) -> str | None:
    # A ReLU6 is a Hardtanh(0, 6): with other bounds it computes F.hardtanh, not F.relu6.
    bounds = (layer.min_val, layer.max_val)
    if _exact(bounds) not in (_exact((0.0, 6.0)), _exact((0, 6))):
        return f"ReLU6 with min_val={bounds[0]!r}, max_val={bounds[1]!r} (a Hardtanh) is not compiled"
    return None


def _embedding(layer: Any) -> str | None:
    if layer.max_norm is not None:
        return "Embedding with max_norm (which rewrites the weight at each call) is not compiled"
    return None


_KNOWN = {
    "Linear": _ok,
    "GELU": _gelu,
    "Softmax": _softmax,
    "Dropout": _ok,
    "Identity": _ok,
    "LayerNorm": _layer_norm,
    **{name: _ok for name in _ACTIVATIONS},
    "ReLU6": _relu6,
}

# Layers a user module's forward may call that a Sequential (whose input is a float32
# tensor) does not take: an embedding reads int64 ids.
_MEMBERS_ONLY = {"Embedding": _embedding}
_MEMBER_KINDS = {**_KNOWN, **_MEMBERS_ONLY}


def _stems(layers: list[tuple[str, Any]]) -> list[str]:
    """Each layer's stem of its hidden parameters' names: its path made an identifier, one
    per place (a shared layer at two places has two; `_Names`)."""
    names = _Names()
    return [names.fresh(path.replace(".", "_")) for path, _ in layers]


def _tensors(layers: list[tuple[str, Any]]) -> list[tuple[str, str, Any]]:
    """(hidden parameter name, attribute, layer) of every tensor the layers read, in order."""
    out = []
    for stem, (_, layer) in zip(_stems(layers), layers):
        if type(layer).__name__ in ("Linear", "LayerNorm"):
            if layer.weight is not None:
                out.append((f"weight_{stem}", "weight", layer))
            if layer.bias is not None:
                out.append((f"bias_{stem}", "bias", layer))
    return out


def generated_source(layers: list[tuple[str, Any]], marker: str, param_markers: list[str]) -> str:
    """The text of the typed function a Sequential's layers compute: input `x` of `marker`,
    then one hidden parameter per weight and bias, one line per layer."""
    hidden = _tensors(layers)
    params = ["x: " + marker] + [f"{name}: {m}" for (name, _, _), m in zip(hidden, param_markers)]
    markers = sorted({marker, *param_markers})
    lines = [
        "import torch.nn.functional as F",
        f"from rextio_torch.types import {', '.join(markers)}",
        "",
        "",
        f"def forward({', '.join(params)}) -> {marker}:",
    ]
    current = "x"
    for stem, (path, layer) in zip(_stems(layers), layers):
        kind = type(layer).__name__
        if kind == "Linear":
            bias = f", bias_{stem}" if layer.bias is not None else ""
            expression = f"F.linear({current}, weight_{stem}{bias})"
        elif kind in _ACTIVATIONS:
            expression = _ACTIVATIONS[kind].format(h=current)
        elif kind == "GELU" and layer.approximate == "tanh":
            expression = f'F.gelu({current}, approximate="tanh")'
        elif kind == "GELU":
            expression = f"F.gelu({current})"
        elif kind == "Softmax":
            expression = f"{current}.softmax(dim={int(layer.dim)})"
        elif kind == "LayerNorm":
            affine = f"weight_{stem}, bias_{stem}" if layer.weight is not None else "None, None"
            size = int(layer.normalized_shape[0])
            expression = f"F.layer_norm({current}, ({size},), {affine}, {float(layer.eps)!r})"
        else:  # Dropout (eval mode) and Identity compute nothing
            continue
        lines.append(f"    h = {expression}  # {_printable(f'({path}): {layer!r}')}")
        current = "h"
    lines.append(f"    return {current}")
    return "\n".join(lines) + "\n"


_METHODS = {"ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh"}
_FUNCTIONALS = {"GELU": "gelu", "SiLU": "silu", "ReLU6": "relu6"}


# The layers whose result is a new tensor (an in-place layer after one writes only that).
_COMPUTING = {"Linear", "LayerNorm", "Embedding", "GELU", "Softmax", *_ACTIVATIONS}


def _member(layer: Any, stem: str, hidden: list, path: _Files, names: _Names, fresh_input: bool = False) -> dict:
    """What calling `layer` computes, as the frontend's module description says it
    (frontend/src/module.rs), its tensors appended to `hidden` as (name, owner, attribute),
    the names fresh ones of `names` made from `stem`: a known layer, a Sequential of them, a
    ModuleList of members, a user module (its forward is inlined; `path` numbers the files
    other than the compiled one that such modules come from), or
    `unsupported` with the reason its calls are not compiled. `fresh_input`: its input is a
    tensor a layer before it in a Sequential made (an in-place layer may write it)."""
    import torch.nn as nn

    kind = type(layer)
    name = kind.__name__
    if "forward" in getattr(layer, "__dict__", ()):
        return _unsupported("an instance attribute `forward` replaces its class's forward")
    if _is_sequential(layer):
        layers, mine = [], []
        fresh = fresh_input
        for child_name, child in _children(layer):
            member = _member(child, f"{stem}_{child_name}", mine, path, names, fresh)
            if member["kind"] == "unsupported":
                return _unsupported(f"its layer ({_printable(child_name)}) is not compiled: {member['why']}")
            layers.append(member)
            fresh = fresh or (type(child).__module__.startswith("torch.nn.modules")
                              and type(child).__name__ in _COMPUTING)
        hidden.extend(mine)
        return {"kind": "sequential", "layers": layers}
    if kind is nn.ModuleList:
        # Its items are called by a literal index or as a loop's variable (the loop is
        # unrolled); an item that is not compiled is a diagnostic where it is called.
        items, mine = [], []
        for child_name, child in _children(layer):
            items.append(_member(child, f"{stem}_{child_name}", mine, path, names))
        hidden.extend(mine)
        return {"kind": "list", "items": items}
    if kind is nn.ModuleDict:
        # Its items are called by a literal key (`self.layers["fc"](x)`).
        items, mine = {}, []
        for child_name, child in _children(layer):
            items[child_name] = _member(child, f"{stem}_{child_name}", mine, path, names)
        hidden.extend(mine)
        return {"kind": "dict", "items": items}
    if kind is nn.ParameterList:
        # Its items are read by a literal index (`self.kernels[0]`, also as `self.kernels[i]`
        # in an unrolled `for i in range(...)`) or as a loop's variable (unrolled): each a
        # tensor, its hidden parameter read from the list at every call. Its length
        # (`_size`, grown by `append`) is guarded as a constant: another plans again.
        items, mine = [], []
        for key, tensor in layer._parameters.items():
            if tensor is not None and tensor.dim() in (1, 2):
                name = names.fresh(f"{stem}_{key}")
                mine.append((name, layer, key))
                items.append({"kind": "tensor", "hidden": name})
            else:
                items.append(_unsupported(
                    f"its parameter {_printable(key)} is {'None' if tensor is None else f'of rank {tensor.dim()}'} "
                    "(the tensors compiled are of rank 1 or 2)"))
        hidden.extend(mine)
        return {"kind": "list", "items": items, "_constants": [(layer, "_size", vars(layer).get("_size"))]}
    if not kind.__module__.startswith("torch."):
        return _user_module(layer, stem, hidden, path, names)
    if not kind.__module__.startswith("torch.nn.modules") or name not in _MEMBER_KINDS:
        return _unsupported(
            f"{kind.__qualname__} is not a layer rextio-torch compiles (known: Linear, "
            f"{', '.join(_ACTIVATIONS)}, GELU, Softmax, LayerNorm, Embedding, Dropout, Identity, "
            "Sequential, ModuleList, ModuleDict, ParameterList, and user modules whose forward compiles)"
        )
    problem = _MEMBER_KINDS[name](layer)
    if problem is None and getattr(layer, "inplace", False) and name != "Dropout" and not fresh_input:
        # Eager writes the tensor it is given, which the forward may read again (or is the
        # caller's); the compiled forward writes nothing. (Dropout in eval mode writes nothing.)
        problem = "inplace=True modifies its input in place, which the compiled forward does not"
    if problem is not None:
        return _unsupported(problem)
    if name == "Linear":
        weight = names.fresh(f"{stem}_weight")
        hidden.append((weight, layer, "weight"))
        bias = None
        if layer.bias is not None:
            bias = names.fresh(f"{stem}_bias")
            hidden.append((bias, layer, "bias"))
        return {"kind": "linear", "weight": weight, "bias": bias}
    if name in _METHODS:
        return {"kind": "method", "name": _METHODS[name]}
    if name == "GELU":
        return {"kind": "functional", "name": "gelu",
                "approximate": "tanh" if layer.approximate == "tanh" else None}
    if name in _FUNCTIONALS:
        return {"kind": "functional", "name": _FUNCTIONALS[name]}
    if name == "Softmax":
        return {"kind": "softmax", "dim": int(layer.dim)}
    if name == "LayerNorm":
        weight = bias = None
        if layer.weight is not None:
            weight, bias = names.fresh(f"{stem}_weight"), names.fresh(f"{stem}_bias")
            hidden.append((weight, layer, "weight"))
            hidden.append((bias, layer, "bias"))
        return {"kind": "layer_norm", "normalized": int(layer.normalized_shape[0]), "weight": weight,
                "bias": bias, "eps": float(layer.eps)}
    if name == "Embedding":
        weight = names.fresh(f"{stem}_weight")
        hidden.append((weight, layer, "weight"))
        return {"kind": "embedding", "weight": weight}
    return {"kind": "identity"}  # Dropout (eval mode), Identity


def _unsupported(why: str) -> dict:
    return {"kind": "unsupported", "why": why}


def _user_module(module: Any, stem: str, hidden: list, path: _Files, names: _Names) -> dict:
    """A user module as a member: its forward (in any file, `path` numbering the files other
    than the compiled one) is inlined where it is called, with its own members."""
    try:
        where = _Source(module)
    except ModuleNotCompilable as error:
        return _unsupported(str(error))
    source = path.index(where)
    names.taken |= where.names
    members, mine, constants = _members(module, stem, path, where.attributes, names)
    hidden.extend(mine)
    # Its constants travel with it to the top (`_nested_constants`), not into the JSON.
    return {"kind": "module", "line": where.line, "source": source, "members": members, "_constants": constants}


def _nested_constants(members: dict) -> list:
    """The constants of the user modules among `members` (nested too), taken out of their
    descriptions."""
    found: list = []

    def walk(member: dict) -> None:
        found.extend(member.pop("_constants", ()))
        items = member.get("items", ())
        for child in [*member.get("members", {}).values(), *member.get("layers", ()),
                      *(items.values() if isinstance(items, dict) else items)]:
            walk(child)

    for member in members.values():
        walk(member)
    return found


def _members(module: Any, stem: str, path: _Files, attributes: set,
             names: _Names) -> tuple[dict, list, list]:
    """A user module's members by attribute name (`_member`; its parameters and buffers of
    rank 1 or 2 as tensors; the Python `int`/`float`/`bool`/`str` attributes its forward
    reads, `attributes`, as constants; those holding a known torch function, `self.act =
    F.gelu`, as that function, `_function_member`), their tensors as (hidden name, owner,
    attribute), and the attributes read as (owner, attribute, value), which every call
    checks (`_Guards`: a scalar or string by type and value, a function by identity). Every
    member under each of its names: a module or a tensor held by two attributes (a shared
    block, a tied weight) is a member twice. A method of the module's class that the forward
    calls (`self.gelu(x)`) is a helper, whose body is inlined; the attributes it reads are
    read as the forward's are."""
    import inspect
    import types

    import torch.nn as nn

    members: dict[str, dict] = {}
    hidden: list[tuple[str, Any, str]] = []
    constants: list[tuple[Any, str, Any]] = []
    for child_name, child in _children(module):
        members[child_name] = _member(child, f"{stem}_{child_name}", hidden, path, names)
    for tensor_name, tensor in [*module._parameters.items(), *module._buffers.items()]:
        if tensor is not None and tensor.dim() in (1, 2):
            name = names.fresh(f"{stem}_{tensor_name}")
            hidden.append((name, module, tensor_name))
            members[tensor_name] = {"kind": "tensor", "hidden": name}
    state = vars(module)
    attributes, seen = sorted(attributes), set(attributes)
    while attributes:
        name = attributes.pop(0)
        if name in members or name == "training":
            continue
        if name not in state:
            method = inspect.getattr_static(type(module), name, None)
            if isinstance(method, types.FunctionType) and getattr(nn.Module, name, None) is not method:
                try:
                    where = _Source(module, name)
                except ModuleNotCompilable as error:
                    members[name] = _unsupported(str(error))
                else:
                    members[name] = {"kind": "helper", "line": where.line, "source": path.index(where)}
                    names.taken |= where.names
                    attributes.extend(sorted(where.attributes - seen))
                    seen |= where.attributes
                # An instance attribute of that name, set later, would be called instead:
                # it plans the module again.
                constants.append((module, name, _MISSING))
            continue
        value = state[name]
        if _constant(value):
            members[name] = {"kind": "constant", "value": value}
        else:
            members[name] = _function_member(value) or _unsupported(_why_not_constant(value))
        # Either way a later value (or type) plans the module again.
        constants.append((module, name, value))
    return members, hidden, constants




class _Forward(_Source):
    """A user module's `forward`: where its source is, and what its `self.<name>` members
    are (`_members`), their tensors the hidden parameters after its own."""

    def __init__(self, module: Any) -> None:
        super().__init__(module)
        if "forward" in vars(module):
            raise ModuleNotCompilable(
                f"an instance attribute `forward` replaces {self.qualname}, which would be compiled")
        self._arguments(module)
        names = _Names(self.names)
        self.files = _Files(self.path)
        self.members, self.hidden, constants = _members(module, "self", self.files, self.attributes, names)
        self.constants = constants + _nested_constants(self.members)

    def _arguments(self, module: Any) -> None:
        """How a call's arguments reach the compiled forward: every parameter after `self`,
        keyword-only ones included, bound as Python binds them (`bind`)."""
        import inspect

        own = list(self.signature.parameters.values())[1:]
        variadic = [("*" if p.kind is p.VAR_POSITIONAL else "**") + p.name
                    for p in own if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if variadic:
            # Their arguments have no place in a compiled signature: eager, with them all.
            raise ModuleNotCompilable(
                f"{self.qualname} takes {' and '.join(variadic)}, which a compiled forward does not "
                "(its calls run eagerly with every argument)")
        # A forward whose parameters are all annotated with markers or `int`/`float`/`bool`
        # is typed by its annotations (compiled at `compile`); any other (no annotations,
        # `x: torch.Tensor`, `mask: Optional[Tensor] = None`, some of each) is typed by each
        # call's arguments, every parameter but a marker's, as eager ignores annotations.
        kinds = [_annotation_kind(p.annotation, module) for p in own]
        self.typed_at_call = bool(own) and not all(k in ("marker", "native") for k in kinds)
        # The parameters typed by the call, by index (a marker's keeps deciding).
        self.typed = tuple(i for i, k in enumerate(kinds) if k != "marker") if self.typed_at_call else ()
        self.typed_names = [own[i].name for i in self.typed]
        self.arity = len(own)
        # Calls with exactly the positional parameters need no binding.
        self.plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in own)
        self.receiver = module

    def bind(self, args: tuple, kwargs: dict) -> tuple | None:
        """Every argument of a call, in the forward's parameter order, defaults applied (the
        compiled forward takes them all, positionally); None where they do not bind (eager
        raises its own TypeError)."""
        if not kwargs and len(args) == self.arity and self.plain:
            return args
        try:
            bound = self.signature.bind(self.receiver, *args, **kwargs)
        except TypeError:
            return None
        bound.apply_defaults()
        return tuple(bound.arguments.values())[1:]

    def description(self, markers: list[str], arg_types: tuple = ()) -> str:
        import json

        return json.dumps({
            "members": self.members,
            "hidden": [{"name": name, "marker": m} for (name, _, _), m in zip(self.hidden, markers)],
            "params": [{"name": name, "marker": t} for name, t in zip(self.typed_names, arg_types)],
            "sources": self.files.sources,
        })

    def tensors(self) -> list:
        return [getattr(owner, attribute) for _, owner, attribute in self.hidden]


def explain_module(module: Any, surface: str, compiled: Any = None) -> Any:
    """`rextio_torch.explain(module)`: the explanation of what `compile(module)` compiles. A
    user module's forward, with its members, for its parameters' types of now (a forward
    without annotations: for the arguments of the first call `compiled`, the compiled object,
    has met, else as written); a Sequential's generated function for a float32 CPU rank-2
    input; a module neither is, an Explanation that says why."""
    import json

    from . import explain
    from .tooling import Explanation

    name = type(module).__qualname__
    try:
        layers, forward = _structure(module)
        if forward is not None:
            tensors = forward.tensors()
            markers = [_call_markers().get(_type_name(t)) for t in _key(tensors)]
            if any(m is None for m in markers):
                described = ", ".join(_describe(_type_name(t)) for t in _key(tensors))
                raise ModuleNotCompilable(f"no marker type describes its parameters ({described})")
            arg_types: tuple = ()
            if forward.typed_at_call and compiled is not None:
                arg_types = next((_split_key(key, compiled._rextio_forward)[0] for key in compiled._rextio_cache), ())
            report = _native().explain_function(forward.path, forward.text, "forward", forward.line, surface,
                                                forward.description(markers, arg_types))
            return Explanation.from_report(json.loads(report))
    except ModuleNotCompilable as error:
        return Explanation.unlocated(name, f"<{name}>", str(error), surface,
                                     summary="runs eagerly: its structure does not compile")
    source, fn = _generated_function(layers, name, "TensorF32Cpu2D", _layer_markers(layers))
    return explain(fn, source=source, surface=surface)


def _structure(module: Any) -> tuple[Any, Any]:
    """How a module compiles, as (layers, forward), one of them None: the layers of an
    `nn.Sequential` of known layers (or a known layer alone), or the forward of a user module
    or of a Sequential holding user modules. ModuleNotCompilable says why neither."""
    kind = type(module)
    if _is_sequential(module) and _holds_user_modules(module):
        return None, _SequentialForward(module)
    if _is_sequential(module) or kind.__module__.startswith("torch."):
        return _plan(module), None
    return None, _Forward(module)


def _layer_markers(layers: list[tuple[str, Any]]) -> list[str]:
    """The markers of the tensors `layers` read (`_tensors`' order; None where the compiler
    has no marker for one)."""
    return [_call_markers().get(_type_name(_key([getattr(layer, a)])[0])) for _, a, layer in _tensors(layers)]


def _generated_function(layers: list[tuple[str, Any]], name: str, marker: str,
                        param_markers: list[str]) -> tuple[str, Any]:
    """The generated source of `layers` and the function it defines (`generated_source`)."""
    source = generated_source(layers, marker, param_markers)
    namespace: dict[str, Any] = {"__name__": f"rextio_torch.module.{name}"}
    exec(builtins_compile(source, f"<rextio_torch.compile({name})>", "exec"), namespace)
    return source, namespace["forward"]


def _holds_user_modules(sequential: Any) -> bool:
    """Whether a Sequential (nested ones too) has a layer that is a user module."""
    return any(_user(m) for m in sequential.modules())


class _SequentialForward(_Forward):
    """An `nn.Sequential` holding user modules (`nn.Sequential(Block(), Block())`): compiled as
    a user module whose forward calls its layers in turn, so each user layer's forward is
    inlined from its source. That forward is written after the text of the first user layer's
    file (the other layers' files are sent beside it, `_Files`), and is typed at each call."""

    def __init__(self, module: Any) -> None:
        import inspect

        users = [m for m in module.modules() if _user(m)]
        # The forward is written after the first user layer's file; the others' files are
        # sent beside it (`_Files`).
        where = _Source(users[0])
        children = _children(module)
        names = [f"layer_{i}" for i in range(len(children))]
        calls = "".join(f"        h = self.{n}(h)  # {_printable(f'({c})')}\n" for n, (c, _) in zip(names, children))
        prefix = where.text if where.text.endswith("\n") else where.text + "\n"
        self.line = prefix.count("\n") + 4
        self.text = (prefix + "\n\nclass __rextio_sequential__:\n"
                     "    def forward(self, x):\n        h = x\n" + calls + "        return h\n")
        self.path = where.path
        self.qualname = f"nn.Sequential of {type(users[0]).__qualname__}"

        def forward(self: Any, x: Any) -> Any:  # its signature: one input
            return x

        self.signature = inspect.signature(forward)
        self.attributes = set()
        self._arguments(module)
        self.typed_at_call = True  # its one input, whatever `forward`'s annotations above say
        self.members, self.hidden = {}, []
        self.files = _Files(self.path)
        hidden_names = _Names(where.names | set(names) | {"self", "x", "h"})
        for name, (child_name, child) in zip(names, children):
            self.members[name] = _member(child, f"self_{child_name}", self.hidden, self.files, hidden_names)
        self.constants = _nested_constants(self.members)


class CompiledModule:
    """What `rextio_torch.compile(module)` returns: calls run the compiled forward where it
    compiled, else the module eagerly; everything else is the module's (module docstring)."""

    __slots__ = ("_rextio_module", "_rextio_options", "_rextio_layers", "_rextio_forward", "_rextio_cache",
                 "_rextio_lock", "_rextio_parts", "_rextio_names", "_rextio_reads", "_rextio_native",
                 "_rextio_guards", "_rextio_warnings", "__rextio_fallback__", "__weakref__")

    def __init__(self, module: Any, *, strict: bool = False, surface: str = "extended",
                 warn_at: Any = None) -> None:
        set_ = object.__setattr__
        set_(self, "_rextio_module", module)
        set_(self, "_rextio_options", {"strict": strict, "surface": surface})
        set_(self, "_rextio_lock", threading.RLock())
        set_(self, "_rextio_native", _native())
        set_(self, "_rextio_warnings", _EagerWarnings(type(module).__qualname__))
        self._plan(warn_at)

    def _plan(self, warn_at: Any) -> None:
        """Reads the module's structure: its layers (a Sequential) or its forward's members,
        the tensors a call reads and from where, and what a call checks."""
        set_ = object.__setattr__
        module = self._rextio_module
        strict = self._rextio_options["strict"]
        set_(self, "_rextio_cache", {})
        layers = forward = fallback = None
        try:
            layers, forward = _structure(module)
        except ModuleNotCompilable as error:
            fallback = str(error)
        set_(self, "_rextio_layers", layers)
        set_(self, "_rextio_forward", forward)
        set_(self, "__rextio_fallback__", fallback)
        # What every call reads and checks: each submodule (training mode, hooks; by its name
        # in `named_modules()`, whose order and sharing `modules()` follows), and everything
        # a plan is made from (`_Guards`: each container's children, every setting of every
        # part, and the Python attributes the forward reads, such as `self.scale`: another
        # value, or another type, at a call plans the module again, as torch.compile's
        # guards do).
        named = list(module.named_modules())
        parts = tuple(m for _, m in named)
        set_(self, "_rextio_parts", parts)
        set_(self, "_rextio_names", [name for name, _ in named])
        set_(self, "_rextio_guards", _Guards(parts, [] if forward is None else forward.constants))
        if forward is not None:
            reads = [(owner, attribute) for _, owner, attribute in forward.hidden]
        elif layers is not None:
            reads = [(layer, attribute) for _, attribute, layer in _tensors(layers)]
        else:
            reads = []
        # Parameters and buffers live in their module's dicts (mutated in place by assignment,
        # `load_state_dict` and `.to()`): read there, without nn.Module.__getattr__.
        set_(self, "_rextio_reads", [
            (owner._parameters, attribute) if attribute in owner._parameters
            else (owner._buffers, attribute) if attribute in owner._buffers
            else (owner.__dict__, attribute)
            for owner, attribute in reads
        ])
        if forward is not None and not forward.typed_at_call:
            # A user module's forward is typed by its annotations: compiled now, for the
            # parameters' types of now (a later signature of them compiles at its call).
            result = self._compile_for(_key(self._tensors()))
            if isinstance(result, str):
                set_(self, "__rextio_fallback__", result)
                set_(self, "_rextio_forward", None)
                fallback = result
        if fallback is not None:
            from . import CompileError

            if strict:
                raise CompileError(fallback)
            _warn(f"{fallback}\n{type(module).__qualname__} runs eagerly", warn_at)

    def _tensors(self) -> list:
        return [where[attribute] for where, attribute in self._rextio_reads]

    # -- calls ------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        module = self._rextio_module
        if self._rextio_layers is None and self._rextio_forward is None:
            if self._stale():  # a structure, setting or attribute that was refused changed
                with self._rextio_lock:
                    self._plan(4)
                return self(*args, **kwargs)
            return self._eager(args, kwargs, None)
        mode = self._rextio_native.native_mode()
        if mode == "fallback":
            return module(*args, **kwargs)
        if self._stale():
            with self._rextio_lock:
                self._plan(4)
            return self(*args, **kwargs)
        if _GLOBAL_HOOKS[0] or _GLOBAL_HOOKS[1]:
            return self._eager(args, kwargs, self._eager_reason(), mode)
        for part in self._rextio_parts:
            if part.training or part._forward_hooks or part._forward_pre_hooks:
                return self._eager(args, kwargs, self._eager_reason(), mode)
        try:
            tensors = self._tensors()
        except KeyError:  # a parameter deleted or moved since: planned again
            tensors = None
        if tensors is None or not all(map(is_not, tensors, _NONE)):  # a bias set to None, say
            with self._rextio_lock:
                self._plan(4)
            return self(*args, **kwargs)
        forward = self._rextio_forward
        if forward is not None:
            # Every argument, keyword-only ones and defaults included, in the forward's
            # order: the compiled forward takes them all. Eager always gets the call's own.
            values = forward.bind(args, kwargs)
            if values is None:
                return module(*args, **kwargs)  # eager's own TypeError
            if forward.typed_at_call:
                # Typed by this call's arguments (those its source does not annotate with
                # markers), as torch.compile types a module: each signature compiled once. A
                # None one is part of the key and no argument of the compiled forward (its
                # `is None` tests are folded).
                typed = tuple([_arg_type(values[i]) for i in forward.typed])
                key = (typed, *_key(tensors))
                if "None" in typed:
                    values = tuple([v for i, v in enumerate(values) if v is not None or i not in forward.typed])
            else:
                key = _key(tensors)
            compiled = self._rextio_cache.get(key)
            if compiled is None:
                compiled = self._compile_for(key)
            if isinstance(compiled, str):
                return self._eager(args, kwargs, compiled, mode)
            return compiled(*values, *tensors)
        if kwargs or len(args) != 1 or not _is_tensor(args[0]):
            return self._eager(args, kwargs, "a compiled nn.Sequential takes one tensor argument", mode)
        x = args[0]
        key = _key([x, *tensors])
        compiled = self._rextio_cache.get(key)
        if compiled is None:
            compiled = self._compile_for(key)
        if isinstance(compiled, str):
            return self._eager(args, kwargs, compiled, mode)
        return compiled(x, *tensors)

    def _stale(self) -> bool:
        """Whether the plan no longer describes the module (`_Guards`: a container's
        children replaced, added or removed, a layer's setting changed, a Python attribute
        the forward reads has another value, ...)."""
        return self._rextio_guards.changed()

    def _eager_reason(self) -> str:
        """Why this call runs eagerly, where a part is in training mode or has hooks (or
        global hooks are registered): the first such part, in `named_modules()` order."""
        if _GLOBAL_HOOKS[0] or _GLOBAL_HOOKS[1]:
            return "global forward hooks are registered (torch.nn.modules.module.register_module_forward_hook)"
        for name, part in zip(self._rextio_names, self._rextio_parts):
            where = f"submodule {name!r}" if name else "the module"
            if part.training:
                return f"{where} is in training mode (call .eval() to run it compiled)"
            if part._forward_hooks or part._forward_pre_hooks:
                return f"{where} has forward hooks or pre-hooks"
        # Another thread changed it since the caller's test: eager is right either way.
        return "a part is in training mode or has forward hooks"

    def _eager(self, args: tuple, kwargs: dict, reason: str | None, mode: str | None = None) -> Any:
        """The module called with the call's own arguments, as the user would call it (with
        autograd as it is: eager's result, requires_grad and all), after the warning that
        says why (`_EagerWarnings`: once per reason)."""
        if mode is None:
            mode = self._rextio_native.native_mode()
        if mode == "native":
            why = reason or self.__rextio_fallback__
            raise RuntimeError(
                f"native mode requires generated native function: {type(self._rextio_module).__qualname__} "
                f"(REXTIO_NATIVE_MODE=native, but this call runs eagerly: {why})"
            )
        if reason is not None:
            self._rextio_warnings.warn(reason, _CATEGORY[0] or _fallback_category(), 3)
        return self._rextio_module(*args, **kwargs)

    def _compile_for(self, key: tuple) -> Any:
        """The compiled function of one signature (or why it runs eagerly), cached."""
        from . import CompileError, _compile_located

        with self._rextio_lock:
            cached = self._rextio_cache.get(key)
            if cached is not None:
                return cached
            name = type(self._rextio_module).__qualname__
            arg_types, key_rest = _split_key(key, self._rextio_forward)
            types = [_type_name(t) for t in key_rest]
            described = ", ".join([*arg_types, *(_describe(t) for t in types)])
            markers = [_call_markers().get(t) for t in types]
            unknown_arg = next((a for a in arg_types if a.startswith("<")), None)
            if unknown_arg is not None:
                result: Any = (f"an argument of this call is {unknown_arg[1:-1]}, which no marker type describes "
                               f"(arguments: {', '.join(arg_types)})")
            elif len(self._rextio_cache) >= SIGNATURE_LIMIT:
                result = (f"{len(self._rextio_cache)} signatures are compiled already (the limit); "
                          f"this one ({described}) is not")
            elif any(m is None for m in markers):
                what = "parameters" if self._rextio_forward is not None else "input and parameters"
                result = (f"no marker type describes this call's signature ({what}: "
                          f"{described}); compiled: cpu tensors of the marker types, {_marker_types()}")
            elif self._rextio_forward is not None:
                forward = self._rextio_forward
                native = _native()
                try:
                    result = native.compile_function(
                        (forward.path, forward.text, forward.line), "forward", forward.qualname, None, [],
                        self._rextio_options["surface"], forward.description(markers, arg_types),
                    )
                except CompileError as error:
                    if self._rextio_options["strict"]:
                        raise
                    result = str(error)
            else:
                source, fn = _generated_function(self._rextio_layers, name, markers[0], markers[1:])
                options = self._rextio_options
                try:
                    result = _compile_located(fn, None, source=source, strict=True, surface=options["surface"])
                except CompileError as error:
                    if options["strict"]:
                        raise
                    result = f"its layers do not compile for ({described}):\n{error}"
            self._rextio_cache[key] = result
            return result

    # -- the module's own surface ----------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        module = object.__getattribute__(self, "_rextio_module")
        value = getattr(module, name)
        if callable(value) and getattr(value, "__self__", None) is module:
            wrapper = self

            def method(*args: Any, **kwargs: Any) -> Any:
                result = value(*args, **kwargs)
                # eval(), train(), to(), cuda(), float(), requires_grad_(), ... return the module.
                return wrapper if result is module else result

            method.__name__ = getattr(value, "__name__", name)
            method.__doc__ = getattr(value, "__doc__", None)
            return method
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._rextio_module, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._rextio_module, name)

    # Containers' protocols, which attribute access does not reach (`fast[0]`, `len(fast)`).
    def __getitem__(self, index: Any) -> Any:
        return self._rextio_module[index]

    def __len__(self) -> int:
        return len(self._rextio_module)

    def __iter__(self) -> Any:
        return iter(self._rextio_module)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._rextio_module)) | {"generated_source", "signatures"})

    def __repr__(self) -> str:
        return f"rextio_torch.compile({self._rextio_module!r})"

    @property
    def __wrapped__(self) -> Any:
        """The module itself (as `__wrapped__` of a compiled function is the original)."""
        return self._rextio_module

    @property
    def signatures(self) -> dict:
        """Every signature met so far -> its compiled function, or why it runs eagerly."""
        # A forward typed at the call has its arguments' type names first, as one tuple.
        forward = self._rextio_forward
        typed = forward is not None and forward.typed_at_call
        signatures = {}
        for key, value in self._rextio_cache.items():
            arg_types, rest = _split_key(key, forward)
            names = tuple(map(_type_name, rest))
            signatures[(arg_types, *names) if typed else names] = value
        return signatures

    def generated_source(self, marker: str = "TensorF32Cpu2D") -> str:
        """The text of the function the layers compile to, for an input of `marker` (and
        float32 CPU parameters)."""
        if self._rextio_layers is None:
            raise ValueError(f"this module runs eagerly: {self.__rextio_fallback__}")
        return generated_source(self._rextio_layers, marker, _layer_markers(self._rextio_layers))

    # -- pickling: the module and the options; compiled again where it is loaded -------------

    def __reduce__(self) -> tuple:
        return _load, (self._rextio_module, dict(self._rextio_options))


def _load(module: Any, options: dict) -> CompiledModule:
    with warnings.catch_warnings():
        # Its fallback (if any) was said where it was compiled.
        warnings.simplefilter("ignore")
        return CompiledModule(module, strict=False, surface=options.get("surface", "extended"))




def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


class _GlobalHooks:
    """torch's global forward hooks and pre-hooks (dicts mutated in place), found once."""

    def __getitem__(self, index: int) -> Any:
        from torch.nn.modules import module as nn_module

        hooks = (getattr(nn_module, "_global_forward_hooks", None), getattr(nn_module, "_global_forward_pre_hooks", None))
        global _GLOBAL_HOOKS
        _GLOBAL_HOOKS = hooks
        return hooks[index]


_GLOBAL_HOOKS: Any = _GlobalHooks()


def _native() -> Any:
    from . import _load_native

    return _load_native()


# RextioFallbackWarning, found once (the package imports this module before defining it).
_CATEGORY: list = [None]


def _fallback_category() -> type[Warning]:
    from . import RextioFallbackWarning

    _CATEGORY[0] = RextioFallbackWarning
    return RextioFallbackWarning


def _warn(message: str, warn_at: Any) -> None:
    warnings.warn(message, _fallback_category(), stacklevel=4 if warn_at is None else warn_at)


def builtins_compile(source: str, label: str, mode: str) -> Any:
    import builtins

    return builtins.compile(source, label, mode, dont_inherit=True)


__all__ = ["CompiledModule", "generated_source", "SIGNATURE_LIMIT"]
