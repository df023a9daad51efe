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


def _source_of(fn: Callable[..., Any]) -> tuple[str, str]:
    path = inspect.getsourcefile(fn)
    if path is None:
        raise OSError(f"no source file for {fn.__qualname__}")
    module = inspect.getmodule(fn)
    source = inspect.getsource(module) if module is not None else None
    if source is None:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    return path, source


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
        try:
            path, source = _source_of(fn)
        except (OSError, TypeError) as error:
            raise native.CompileError(f"rextio-torch cannot read the source of `{fn.__qualname__}`: {error}") from None
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
