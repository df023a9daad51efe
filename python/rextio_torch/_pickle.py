"""Pickling what `rextio_torch.compile` returns (docs/scale.md), the way `cloudpickle` pickles
Python functions:

- by reference when the function was compiled from its module's file, that module is
  importable (not `__main__`) and its attribute of the function's name is the compiled object
  itself (the `@rextio_torch.compile` decorator): loading imports the module and returns that
  attribute;
- by value otherwise (`source=`, `__main__`, a notebook cell, a compiled object bound to
  another name, a module cloudpickle was told to pickle by value): the source text, the
  function's name, qualname, module and `def` line, and the options it was compiled with
  (`strict`, `mode`, `cache_dir`, `surface`; a record without `surface` is `"extended"`). Loading compiles it again, once per process: loads are
  cached by source hash, name, line and options. `mode="aot"` finds its build in the cache
  (the same key, so no cargo run where the cache has it).

The environment is the loading process's own: `REXTIO_NATIVE_MODE` is read on every call as
always, and `cache_dir=None` means that process's `REXTIO_TORCH_CACHE_DIR` or default.

A function that stays on Python (`compile` returned a wrapper of the original) is a plain
Python function: pickle takes it by reference where its module binds it (the decorator),
cloudpickle by value otherwise.
"""

from __future__ import annotations

import ast
import builtins
import copyreg
import hashlib
import importlib
import os
import sys
import threading
from typing import Any

# The version of the by-value record; a load of another version is an error that says so.
FORMAT = 1

# The attribute (in the compiled object's `__dict__`) holding how it was compiled.
ATTRIBUTE = "__rextio_pickle__"

# Modules whose functions are never pickled by reference (the running script, and its name in
# multiprocessing's spawned children).
_MAIN_MODULES = ("__main__", "__mp_main__")

# By-value loads in this process: key -> what `compile` returned for it.
_loaded: dict[tuple, Any] = {}
_lock = threading.Lock()
_registered = False


def _reset_lock_in_child() -> None:
    # A fork taken while another thread was loading must not inherit a held lock.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_lock_in_child)


def register(native: Any) -> None:
    """Makes `pickle` (and everything built on `copyreg`: cloudpickle, Ray, `copy`) use
    `reduce` for both compiled types. Called once `rextio_torch._native` is loaded."""
    global _registered
    if _registered:
        return
    copyreg.pickle(native.CompiledFunction, reduce)
    copyreg.pickle(native.AotFunction, reduce)
    _registered = True


def remember(compiled: Any, fn: Any, label: str, text: str, line: int, *, by_reference: bool,
             strict: bool, mode: str, cache_dir: Any, surface: str = "extended") -> Any:
    """Keeps on `compiled` what pickling it needs: where its code came from and the options it
    was compiled with. `by_reference=False` when its source was passed in (`source=`) or it
    was itself loaded by value."""
    setattr(compiled, ATTRIBUTE, {
        "format": FORMAT,
        "name": fn.__name__,
        "qualname": fn.__qualname__,
        "module": fn.__module__,
        "label": label,
        "text": text,
        "line": int(line),
        "strict": bool(strict),
        "mode": mode,
        "cache_dir": None if cache_dir is None else os.fspath(cache_dir),
        "surface": surface,
        "by_reference": by_reference,
    })
    return compiled


def reduce(compiled: Any) -> tuple:
    """The `copyreg` reducer of CompiledFunction and AotFunction."""
    state = getattr(compiled, "__dict__", {}).get(ATTRIBUTE)
    if state is None:
        raise TypeError(
            f"cannot pickle {compiled!r}: it was not made by rextio_torch.compile, so its source "
            "is not known"
        )
    reference = _reference(compiled, state)
    if reference is not None:
        return load_by_reference, reference
    record = {k: v for k, v in state.items() if k != "by_reference"}
    return load_by_value, (record,)


def _reference(compiled: Any, state: dict) -> tuple[str, str] | None:
    """(module, name) when `compiled` is its module's attribute of its name, that module is
    importable elsewhere and nothing asks for pickling it by value; else None."""
    module_name, name = state["module"], state["qualname"]
    if not state["by_reference"] or module_name in _MAIN_MODULES or "." in name:
        return None
    module = sys.modules.get(module_name)
    if module is None or getattr(module, name, None) is not compiled:
        return None
    if _registered_by_value(module):
        return None
    return module_name, name


def _registered_by_value(module: Any) -> bool:
    """Whether a loaded cloudpickle (its own, or Ray's copy) was told to pickle `module` by
    value (`cloudpickle.register_pickle_by_value`): its workers need not have it."""
    for name in ("cloudpickle.cloudpickle", "ray.cloudpickle.cloudpickle"):
        implementation = sys.modules.get(name)
        check = getattr(implementation, "_is_registered_pickle_by_value", None)
        if check is not None:
            try:
                if check(module):
                    return True
            except Exception:  # another version's helper: by reference, as before
                pass
    return False


def load_by_reference(module_name: str, name: str) -> Any:
    """What a compiled function pickled by reference loads as: `module_name.name`, imported."""
    module = importlib.import_module(module_name)
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(
            f"cannot load the compiled function {module_name}.{name}: module {module_name!r} "
            f"has no attribute {name!r} in this process"
        ) from None


def cache_key(record: dict) -> tuple:
    """What a by-value load is cached by in a process: the source text's hash, the function's
    name, module and `def` line, and the compile options."""
    digest = hashlib.sha256(record["text"].encode("utf-8")).hexdigest()
    return (digest, record["name"], record["qualname"], record["module"], record["label"],
            record["line"], record["strict"], record["mode"], record["cache_dir"],
            record.get("surface", "extended"))


def load_by_value(record: dict) -> Any:
    """What a compiled function pickled by value loads as: compiled from its source with its
    options, once per process (later loads of the same record return the same object)."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ValueError(
            f"cannot load a compiled function pickled in format {found!r}: this rextio_torch "
            f"reads format {FORMAT}; use the same rextio-torch version on both sides"
        )
    key = cache_key(record)
    loaded = _loaded.get(key)
    if loaded is not None:
        return loaded
    with _lock:
        loaded = _loaded.get(key)
        if loaded is None:
            from . import _compile_located

            fn = python_function(record)
            loaded = _compile_located(fn, (record["label"], record["text"], record["line"]),
                                      strict=record["strict"], mode=record["mode"],
                                      cache_dir=record["cache_dir"],
                                      surface=record.get("surface", "extended"))
            _loaded[key] = loaded
    return loaded


def python_function(record: dict) -> Any:
    """The Python function of a by-value record, for `REXTIO_NATIVE_MODE=fallback` and for a
    function that does not compile in this process: its module's top-level imports and its
    `def` (without decorators), run in a namespace of its own under its module's name. Line
    numbers are the original's."""
    name, line, label, text = record["name"], record["line"], record["label"], record["text"]
    tree = ast.parse(text, label)
    defs = [
        node for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == name and node.lineno == line
    ]
    if not defs:
        raise ValueError(f"cannot load the compiled function {name!r}: its source has no `def {name}` on line {line}")
    definition = defs[0]
    definition.decorator_list = []
    namespace: dict[str, Any] = {"__name__": record["module"], "__builtins__": builtins}
    import __future__

    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                flags |= getattr(__future__, alias.name).compiler_flag
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            statement = builtins.compile(ast.Module(body=[node], type_ignores=[]), label, "exec", dont_inherit=True)
            try:
                exec(statement, namespace)
            except Exception:
                # An import this process cannot do is one the function does not need: compiled
                # code names only modules the compiler knows.
                pass
    body = ast.Module(body=[definition], type_ignores=[])
    try:
        exec(builtins.compile(body, label, "exec", flags=flags, dont_inherit=True), namespace)
    except NameError:
        # An annotation naming something the imports did not bind: keep annotations as text.
        flags |= __future__.annotations.compiler_flag
        exec(builtins.compile(body, label, "exec", flags=flags, dont_inherit=True), namespace)
    fn = namespace[name]
    fn.__qualname__ = record["qualname"]
    return fn
