"""rextio-torch: compile typed PyTorch inference functions to fused native code.

    import rextio_torch
    from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D

    @rextio_torch.compile
    def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
        return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)

Compilation happens at decoration time, in process (no cargo). A function that cannot be
compiled stays on Python: `compile` warns with the rendered diagnostic and returns the
original function, or raises `CompileError` with `strict=True`.

Importing this package (and `rextio_torch.types`) does not import torch; `compile` does.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable, TypeVar, overload

__all__ = ["compile", "check", "CompileError", "RextioFallbackWarning"]
__version__ = "0.1.0"

F = TypeVar("F", bound=Callable[..., Any])


class RextioFallbackWarning(UserWarning):
    """A function could not be compiled and stays on Python."""


def _load_native():
    # torch first: it loads libtorch, which the extension links against.
    import torch  # noqa: F401

    from . import _native as native

    return native


def __getattr__(name: str):
    if name == "CompileError":
        return _load_native().CompileError
    raise AttributeError(f"module 'rextio_torch' has no attribute {name!r}")


def _module_source(fn: Callable[..., Any]) -> tuple[str, str] | None:
    """The file and text of the module that defines `fn`, when it has one on disk."""
    path = inspect.getsourcefile(fn)
    module = inspect.getmodule(fn)
    if path is None or module is None:
        return None
    try:
        return path, inspect.getsource(module)
    except (OSError, TypeError):
        return None


def _function_source(fn: Callable[..., Any]) -> tuple[str, str]:
    """The text of `fn` alone, preceded by imports that rebind the names its module binds to
    modules and markers (notebooks, `exec`, REPL: no module file to read)."""
    import textwrap
    import types as pytypes

    from . import types as markers

    header = []
    for name, value in sorted(fn.__globals__.items()):
        if isinstance(value, pytypes.ModuleType):
            header.append(f"import {value.__name__} as {name}")
        elif isinstance(value, type) and value.__module__ == markers.__name__ and value.__name__ in markers.__all__:
            header.append(f"from {markers.__name__} import {value.__name__} as {name}")
    body = textwrap.dedent(inspect.getsource(fn))
    label = f"<source of {fn.__module__}.{fn.__qualname__}>"
    return label, "\n".join(header) + "\n\n" + body


@overload
def compile(fn: F, *, strict: bool = False) -> F: ...
@overload
def compile(fn: None = None, *, strict: bool = False) -> Callable[[F], F]: ...


def compile(fn=None, *, strict: bool = False):
    """Compile `fn` (a module-level function annotated with rextio_torch.types markers).

    Usable as `compile(fn)`, `@compile` and `@compile(strict=True)`.
    """
    if fn is None:
        return lambda f: compile(f, strict=strict)
    native = _load_native()
    try:
        if fn.__qualname__ != fn.__name__:
            raise native.CompileError(
                f"rextio-torch compiles module-level functions only; `{fn.__qualname__}` is nested"
            )
        found = _module_source(fn)
        if found is None:
            try:
                found = _function_source(fn)
            except (OSError, TypeError) as error:
                raise native.CompileError(
                    f"rextio-torch cannot read the source of `{fn.__qualname__}`: {error}"
                ) from None
        path, source = found
        return native.compile_function(path, source, fn.__name__, fn.__qualname__, fn)
    except native.CompileError as error:
        if strict:
            raise
        warnings.warn(str(error), RextioFallbackWarning, stacklevel=2)
        return fn


def check(path: str) -> dict:
    """The `rextio-torch check --format json` report for a source file, as a dict."""
    import json

    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    return json.loads(_load_native().check_source(path, source))
