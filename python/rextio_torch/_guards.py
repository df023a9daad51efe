"""What a compiled module checks at every call before it uses a plan (`_Guards`), and how a
call that runs eagerly says so (`_EagerWarnings`). `CompiledModule` (`_module.py`) owns the
plans; this module owns the checks, which every call pays, compiled or eager, so they are
written to cost little: one pass of C-level identity tests over flat lists, no Python loop
per guard, no allocation beyond those lists' iterators. docs/reliability.md ("What a module
plan depends on") lists every guard.
"""

from __future__ import annotations

import struct
import warnings
from itertools import chain, repeat
from operator import is_
from typing import Any

_MISSING = object()
_DOUBLE = struct.Struct("<d")

# Endless iterators of one value, shared by every check (`map` takes from them and they never
# run out): a check allocates no `repeat` of its own.
_FORWARD = repeat("forward")
_NONE = repeat(None)
_MISSINGS = repeat(_MISSING)

# The actions under which one warning per reason is all Python would show too, at a given
# place ("always" shows every one, "error" raises every one).
_ONCE_ACTIONS = frozenset({"default", "module", "once", "ignore"})


def _exact(value: Any) -> tuple:
    """`value` as a key that is equal exactly when a plan made for one serves the other: a
    float by its bits (`0.0` and `-0.0` differ, a NaN equals itself), an int, bool, str or
    None by type and value (`1`, `1.0` and `True` differ), a tuple or list item by item,
    anything else by identity."""
    kind = type(value)
    if kind is float:
        return (float, _DOUBLE.pack(value))
    if kind is int or kind is bool or kind is str or value is None:
        return (kind, value)
    if kind is tuple or kind is list:
        return (kind, tuple([_exact(v) for v in value]))
    return (object, _Same(value))


class _Same:
    """Equal to another exactly when it holds the same object (which it keeps alive, so
    that its id is not reused)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


class _Guards:
    """Everything a module's plan depends on besides its tensors' values (read at each call)
    and the per-call conditions (training mode, hooks: `CompiledModule.__call__`), as checks
    made once at planning and run at each call (`changed`):

    - every container's children (`_modules`): the same instances, in the same order;
    - each part's class, and the class's forward;
    - each part's `__dict__` size (an instance `forward` or another new attribute), and for
      a user module the size of its `_parameters`/`_buffers` (one its forward reads by name,
      registered since);
    - each parameter or buffer slot that was None (a bias added to `Linear(bias=False)`);
    - for a torch layer, every public attribute but `training` (checked at each call on its
      own): `eps`, `normalized_shape`, `dim`, `approximate`, `negative_slope`, `min_val`,
      `inplace`, ...;
    - the Python attributes a user module's forward reads (`constants`: `self.scale`,
      `self.mode`, `self.act`).

    Values are compared by identity first (one C-level pass over flat lists: the plan's
    stamp), and only where one is not the same object, by `_exact` (type and bits): an
    equal value that is another object (a float computed again) refreshes the stamp, so the
    next call is on the fast path again."""

    __slots__ = ("states", "keys", "values", "exacts", "sized", "sizes", "containers", "parts", "kinds",
                 "stamp")

    def __init__(self, parts: tuple, constants: list) -> None:
        entries: list = []  # (dict, key, value the plan saw)
        self.sized: list = []
        self.parts: list = []
        classes: list = []
        forwards: dict = {}
        self.containers: list = []
        children: list = []
        for part in parts:
            kind, state = type(part), part.__dict__
            self.parts.append(part)
            classes.append(kind)
            forwards[kind] = getattr(kind, "forward", None)
            self.sized.append(state)
            if not kind.__module__.startswith("torch."):
                self.sized.extend((part._parameters, part._buffers))
            if part._modules:
                self.containers.append(part._modules)
                self.sized.append(part._modules)
                children.extend(part._modules.values())
            for slots in (part._parameters, part._buffers):
                entries.extend((slots, k, None) for k, v in slots.items() if v is None)
            if kind.__module__.startswith("torch."):
                entries.extend((state, k, v) for k, v in state.items() if k[0] != "_" and k != "training")
        entries.extend((owner.__dict__, name, value) for owner, name, value in constants)
        self.states = [state for state, _, _ in entries]
        self.keys = [key for _, key, _ in entries]
        self.values = [value for _, _, value in entries]
        self.exacts = [_exact(value) for value in self.values]
        self.sizes = [len(d) for d in self.sized]
        self.kinds = list(forwards)
        # What the identity pass expects, in its order: each part's class, every container's
        # children, each class's forward, each value.
        self.stamp = [*classes, *children, *forwards.values(), *self.values]

    def changed(self) -> bool:
        """Whether anything the plan was made from is no longer so."""
        # Sizes first: the identity pass zips lists of those sizes.
        if list(map(len, self.sized)) == self.sizes and all(map(is_, self._now(), self.stamp)):
            return False
        return self._changed_exactly()

    def _now(self) -> Any:
        """The objects the stamp holds, as they are now (an iterator)."""
        return chain(map(type, self.parts), chain.from_iterable(map(dict.values, self.containers)),
                     map(getattr, self.kinds, _FORWARD, _NONE), map(dict.get, self.states, self.keys, _MISSINGS))

    def _changed_exactly(self) -> bool:
        """`changed` where a test failed: the structure by identity, the values by `_exact`;
        values equal but not identical become the stamp."""
        if list(map(len, self.sized)) != self.sizes:
            return True
        now = list(self._now())
        structure = len(self.stamp) - len(self.values)
        if not all(map(is_, now[:structure], self.stamp)):
            return True
        values = now[structure:]
        for value, before, exact in zip(values, self.values, self.exacts):
            if value is not before and _exact(value) != exact:
                return True
        # The same values, other objects: the stamp from now on.
        self.values = values
        self.stamp = now
        return False


class _EagerWarnings:
    """The `RextioFallbackWarning` of calls that run eagerly: its message is built once per
    reason, and once a reason was warned under the warning filters of now with an action
    that shows a warning once ("default", "module", "once", "ignore"), later calls with that
    reason do not call `warnings.warn` again until the filters change (`catch_warnings`,
    `simplefilter`, `pytest.warns`): one warning per reason, as Python's default shows one
    per place, without its cost at every call. Under "always" (or a filter it cannot tell
    without the caller's module or line) every call warns; under "error" every call raises."""

    __slots__ = ("name", "messages", "warned")

    def __init__(self, name: str) -> None:
        self.name = name
        self.messages: dict = {}
        # reason -> (the filters list, its length, its first filter) it was warned under
        self.warned: dict = {}

    def warn(self, reason: str, category: type[Warning], stacklevel: int) -> None:
        filters = warnings.filters
        seen = self.warned.get(reason)
        if (seen is not None and seen[0] is filters and seen[1] == len(filters)
                and seen[2] is (filters[0] if filters else None)):
            return
        message = self.messages.get(reason)
        if message is None:
            message = self.messages[reason] = f"rextio-torch: {self.name} runs eagerly at this call: {reason}"
        warnings.warn(message, category, stacklevel=stacklevel + 1)
        if _shown_once(filters, message, category):
            self.warned[reason] = (filters, len(filters), filters[0] if filters else None)


def _shown_once(filters: list, message: str, category: type[Warning]) -> bool:
    """Whether every filter that may apply to `message` (whatever the place it is warned
    at) shows it at most once at a place, or never."""
    for action, text, kind, module, lineno in filters:
        if not issubclass(category, kind) or (text is not None and not text.match(message)):
            continue
        if action not in _ONCE_ACTIONS:
            return False
        if module is None and not lineno:
            return True  # it applies at every place: no later filter does
    return warnings.defaultaction in _ONCE_ACTIONS
