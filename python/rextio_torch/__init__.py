"""rextio-torch: compile typed PyTorch inference functions to fused native code.

    import torch.nn.functional as F
    import rextio_torch
    from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D

    @rextio_torch.compile
    def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
        return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)

Compilation happens at decoration time, in process (no cargo). A function that cannot be
compiled stays on Python: `compile` warns with the rendered diagnostic and returns the
original function, or raises `CompileError` with `strict=True`.

`compile(fn, mode="aot")` builds the function ahead of time with cargo instead, into a cache
that later processes reuse (`cache_dir=`, `REXTIO_TORCH_CACHE_DIR`, or
`~/.cache/rextio-torch`; docs/aot.md).

Importing this package (and `rextio_torch.types`) does not import torch; `compile` does.

Tooling (docs/tooling.md): `explain(fn)` says why a function compiles or not (claim table,
diagnostics, IR after each stage); `RXT_LOG=ir,passes,codegen` makes `compile` print the IR
and the generated Rust; `REXTIO_NATIVE_MODE=auto|native|fallback` picks how compiled
callables run, read on every call; `doctor()` reports what the project needs and what this
host has; `python -m rextio_torch` is the `rextio-torch` command line.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import os
import sys
import textwrap
import threading
import types as _pytypes
import warnings
from typing import Any, Callable, TypeVar, overload

from . import _pickle

__all__ = [
    "compile",
    "cache_dir",
    "check",
    "explain",
    "doctor",
    "CompileError",
    "InternalCompilerError",
    "AotBuildError",
    "RextioFallbackWarning",
    "Explanation",
    "DoctorReport",
]
__version__ = "0.1.0"

F = TypeVar("F", bound=Callable[..., Any])


class CompileError(Exception):
    """A function rextio-torch cannot compile. The message is the rendered diagnostic."""


class InternalCompilerError(CompileError):
    """The compiler rejected its own intermediate code: a bug in rextio-torch, reported with
    its diagnostics. Like any CompileError, the function stays on Python unless `strict`."""


class AotBuildError(CompileError):
    """`compile(fn, mode="aot")` could not build a function that compiles: cargo is missing or
    failed (the message ends with the tail of cargo's output), or the build cache cannot be
    written. Unless `strict=True`, the function runs in the in-process executor instead."""


class RextioFallbackWarning(UserWarning):
    """A function could not be compiled and stays on Python, or could not be built ahead of
    time and runs in the in-process executor."""


def _load_native():
    # torch first: it loads libtorch, which the extension links against.
    import torch  # noqa: F401

    from . import _native as native

    # pickle, cloudpickle, Ray and `copy` take compiled functions through copyreg (_pickle.py).
    _pickle.register(native)
    return native


def _describe(obj: Any) -> str:
    """What `obj` is, in the words of a compile error."""
    kind = type(obj)
    module = kind.__module__
    if isinstance(obj, _pytypes.BuiltinFunctionType) or kind.__name__ == "builtin_function_or_method":
        return f"the built-in function {getattr(obj, '__name__', obj)!r} (it has no Python source)"
    if module.startswith("torch.nn") or any(c.__module__ == "torch.nn.modules.module" for c in kind.__mro__):
        return (
            f"an instance of {kind.__name__} (a torch.nn.Module: `compile` and `explain` take it)"
        )
    if isinstance(obj, type):
        return f"the class {obj.__qualname__}"
    if callable(obj):
        return f"a callable {kind.__name__} object"
    return f"a {kind.__name__} value ({obj!r:.60})"


def _not_a_function(obj: Any) -> CompileError:
    return CompileError(
        "rextio_torch.compile takes a module-level Python function defined with `def` whose "
        f"parameters are annotated with rextio_torch.types markers; got {_describe(obj)}"
    )


def _import_header(fn: _pytypes.FunctionType) -> list[str]:
    """Imports that rebind the names of `fn`'s module that denote modules, markers or this
    package's decorator (a notebook cell's function, compiled without its module's text)."""
    from . import types as markers

    header = []
    for name, value in sorted(fn.__globals__.items()):
        if isinstance(value, _pytypes.ModuleType):
            header.append(f"import {value.__name__} as {name}")
        elif isinstance(value, type) and value.__module__ == markers.__name__ and value.__name__ in markers.__all__:
            header.append(f"from {markers.__name__} import {value.__name__} as {name}")
        elif value is compile:
            header.append(f"from {__name__} import compile as {name}")
    return header


# Instructions that carry no meaning of their own, and spellings the compiler picks by context
# (`F.linear(...)` loads `F` with NULL + LOAD_ATTR when it sees `import ... as F` in the same
# text, LOAD_METHOD otherwise), so a definition compiled on its own compares equal.
_NOISE_OPS = frozenset({"CACHE", "PRECALL", "RESUME", "NOP", "PUSH_NULL", "EXTENDED_ARG"})
_SAME_OPS = {"LOAD_METHOD": "LOAD_ATTR"}


def _same_code(a: _pytypes.CodeType, b: _pytypes.CodeType) -> bool:
    """`_code_shape(a) == _code_shape(b)`, first by the raw fields a shape is computed from:
    equal bytecode, names and constants (by type and repr, as the shape compares them) give
    equal shapes, without disassembling (a chain of 100,000 calls is 600,000 instructions,
    seconds in `dis`). Anything else (nested code objects, other spellings) is decided by the
    shapes."""
    raw_a, raw_b = _raw_code(a), _raw_code(b)
    if raw_a is not None and raw_a == raw_b:
        return True
    return _code_shape(a) == _code_shape(b)


def _raw_code(code: _pytypes.CodeType) -> tuple | None:
    """The fields `_code_shape` reads, raw; None when a constant is a code object (its shape
    is compared, not its raw fields, which hold line numbers)."""
    if any(isinstance(c, _pytypes.CodeType) for c in code.co_consts):
        return None
    return (
        code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
        code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
        tuple((type(c), repr(c)) for c in code.co_consts),
    )


def _code_shape(code: _pytypes.CodeType) -> tuple:
    """What a code object computes, without line numbers, caches or contextual spellings:
    its signature, local names and normalized instructions (jumps as instruction indices,
    nested code objects by their own shape)."""
    import dis

    instructions = list(dis.get_instructions(code))
    index, kept = {}, 0
    for instruction in instructions:
        index[instruction.offset] = kept
        kept += instruction.opname not in _NOISE_OPS
    shape = []
    for instruction in instructions:
        if instruction.opname in _NOISE_OPS:
            continue
        argument = instruction.argval
        if instruction.opcode in dis.hasjrel or instruction.opcode in dis.hasjabs:
            argument = ("jump", index.get(argument))
        elif isinstance(argument, _pytypes.CodeType):
            argument = _code_shape(argument)
        else:
            argument = repr(argument)
        shape.append((_SAME_OPS.get(instruction.opname, instruction.opname), argument))
    signature = (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_varnames)
    return signature, tuple(shape)


# CPython's parser and compiler recurse once per nesting level of the source (a chain of
# method calls is two levels per call) on the C stack of the thread they run on: with the
# recursion limit raised far enough to define such a function, a chain of 100,000 calls
# overflows an 8 MiB main thread (a segfault, not an exception). So `compile` reads a
# function's source on a thread of its own whose stack grows with the source (a nesting level
# takes at least one character): _PARSE_STACK_PER_CHAR bytes per character, at least
# _MIN_PARSE_STACK, at most _MAX_PARSE_STACK (reserved, not used: pages are touched only as
# deep as the parse goes). docs/reliability.md, "Long programs".
_MIN_PARSE_STACK = 16 << 20
_MAX_PARSE_STACK = 2 << 30
_PARSE_STACK_PER_CHAR = 1024
# threading.stack_size is process-wide: one parse thread is started under it at a time.
_PARSE_STACK_LOCK = threading.Lock()


def _on_parse_stack(work: Callable[[], Any], text: str) -> Any:
    """`work()` (CPython's own parser or compiler over `text`) on a thread with a stack sized
    for `text`, its exception re-raised here."""
    size = min(max(_MIN_PARSE_STACK, _PARSE_STACK_PER_CHAR * len(text)), _MAX_PARSE_STACK)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # re-raised on the caller's thread
            outcome["error"] = error

    with _PARSE_STACK_LOCK:
        # stack_size applies to threads started after it; restored at once for everyone else's.
        previous = threading.stack_size(size)
        try:
            thread = threading.Thread(target=run, name="rextio-torch-parse")
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _def_line(fn: _pytypes.FunctionType, label: str, text: str, first_line: int | None) -> int:
    """`_def_line_here` on a stack deep enough for `text` (see _on_parse_stack); a source nested
    deeper than CPython's recursion limit lets it parse is a CompileError saying so."""
    try:
        return _on_parse_stack(lambda: _def_line_here(fn, label, text, first_line), text)
    except RecursionError:
        raise CompileError(
            f"the source of `{fn.__name__}` in {label} nests too deeply for CPython's parser at "
            f"the current recursion limit (sys.getrecursionlimit() = {sys.getrecursionlimit()}); "
            "raise it as far as defining the function needed, or split long expressions into "
            "statements (`h = h.relu()`)"
        ) from None


def _def_line_here(fn: _pytypes.FunctionType, label: str, text: str, first_line: int | None) -> int:
    """The line of the `def` in `text` that defines `fn`, proven by compiling that definition
    and comparing its code with `fn.__code__`. `first_line` (the line the function's code
    starts on, decorators included) must match when given; otherwise the definition of that
    name must be unique. Anything else is a CompileError, never a guess."""
    try:
        module = ast.parse(text)
    except SyntaxError:
        # The compiler reports syntax errors itself, rendered against the source.
        return first_line or 1
    name = fn.__name__
    defs = [
        node for node in module.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
    ]
    starts = [min([node.lineno] + [d.lineno for d in node.decorator_list]) for node in defs]
    chosen = [node for node, start in zip(defs, starts) if start == first_line]
    if not chosen and (first_line is None or label.startswith("<")) and len(defs) == 1:
        chosen = defs
    if not chosen:
        if not defs:
            raise CompileError(f"{label} has no module-level `def {name}`; only module-level functions compile")
        lines = ", ".join(str(s) for s in starts)
        where = f" on line {first_line}" if first_line is not None else ""
        raise CompileError(
            f"cannot tell which definition of `{name}` in {label} is the function passed to "
            f"compile: `{name}` is defined on line(s) {lines}, none{where} where its code starts"
        )
    node = chosen[0]
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    segment = "".join(text.splitlines(keepends=True)[start - 1 : node.end_lineno])
    # `compile` in this module is ours; Python's own is `builtins.compile`.
    compiled = builtins.compile(segment, label, "exec", dont_inherit=True)
    code = next(
        (c for c in compiled.co_consts if isinstance(c, _pytypes.CodeType) and c.co_name == name), None
    )
    if code is None or not _same_code(code, fn.__code__):
        raise CompileError(
            f"the source of `{name}` at {label}:{node.lineno} is not the code of the function "
            "passed to compile (was the file edited after it was imported?); reload the module, "
            "or pass the function's source as `source=`"
        )
    return node.lineno


def _locate(fn: _pytypes.FunctionType, source: str | None) -> tuple[str, str, int]:
    """(file label, source text, line of the `def`) of exactly the function `fn`."""
    if fn.__name__ == "<lambda>":
        raise CompileError("rextio-torch compiles functions defined with `def`, not lambdas")
    if fn.__qualname__ != fn.__name__:
        raise CompileError(f"rextio-torch compiles module-level functions only; `{fn.__qualname__}` is nested")
    code = fn.__code__
    if source is not None:
        if not isinstance(source, str):
            raise CompileError(f"`source=` must be a str of Python source, got {type(source).__name__}")
        label = f"<source of {fn.__module__}.{fn.__qualname__}>"
        return label, source, _def_line(fn, label, source, code.co_firstlineno)
    filename = code.co_filename
    lines = linecache.getlines(filename, fn.__globals__)
    if lines and os.path.isfile(filename):
        text = "".join(lines)
        return filename, text, _def_line(fn, filename, text, code.co_firstlineno)
    if lines:
        # A notebook cell or other text known only to linecache: the function's own block,
        # after imports rebuilt from its module's globals (earlier cells' imports included).
        block = textwrap.dedent("".join(inspect.getblock(lines[code.co_firstlineno - 1 :])))
        label = f"<source of {fn.__module__}.{fn.__qualname__}>"
        text = "\n".join(_import_header(fn)) + "\n\n" + block
        return label, text, _def_line(fn, label, text, None)
    raise CompileError(
        f"rextio-torch cannot read the source of `{fn.__qualname__}` (its code comes from "
        f"{filename!r}, which is not a file); pass it explicitly: "
        f"rextio_torch.compile({fn.__name__}, source=SOURCE_TEXT)"
    )


# RXT_LOG values already warned about (one warning per distinct value).
_warned_log_values: set[str] = set()


def _log_channels(native: Any, fn: _pytypes.FunctionType) -> list[str]:
    """The RXT_LOG channels to print for this compile (read now); unknown names warn once per
    value of the variable, at the function's `def`."""
    value = os.environ.get("RXT_LOG", "")
    if not value.strip():
        return []
    channels, warning = native.log_spec(value)
    if warning is not None and value not in _warned_log_values:
        _warned_log_values.add(value)
        _warn_at_def(fn, warning, UserWarning)
    return channels


def _compile(fn: _pytypes.FunctionType, source: str | None, *, strict: bool = False, mode: str = "jit",
             cache_dir: Any = None, located: tuple[str, str, int] | None = None,
             surface: str = "extended") -> Any:
    """Compiles `fn` for the executor. `strict`, `mode`, `cache_dir` and `surface` are what
    `compile` was asked for, kept for pickling; `located` is `_locate`'s answer when already known (a
    function loaded by value), which then pickles by value again."""
    native = _load_native()
    channels = _log_channels(native, fn)
    try:
        path, text, line = located or _locate(fn, source)
        compiled = native.compile_function((path, text, line), fn.__name__, fn.__qualname__, fn, channels, surface)
    except CompileError as error:
        if channels:
            sys.stderr.write(native.fallback_log(channels, fn.__name__, str(error)))
        raise
    return _pickle.remember(compiled, fn, path, text, line, by_reference=source is None and located is None,
                            strict=strict, mode=mode, cache_dir=cache_dir, surface=surface)


def _stays_on_python(fn: _pytypes.FunctionType, error: CompileError) -> Callable[..., Any]:
    """What `compile` returns for a function that stays on Python: the original, called
    unchanged, except under REXTIO_NATIVE_MODE=native (read on every call, as the
    reference's wrappers do), where it is a RuntimeError in the reference's words."""
    native = _load_native()
    why = str(error).splitlines()[0].rstrip(":") if str(error) else "it cannot be compiled"

    @functools.wraps(fn)
    def stays_on_python(*args: Any, **kwargs: Any) -> Any:
        if native.native_mode() == "native":
            raise RuntimeError(
                f"native mode requires generated native function: {fn.__qualname__} "
                f"(REXTIO_NATIVE_MODE=native, but it stays on Python: {why})"
            )
        return fn(*args, **kwargs)

    stays_on_python.__rextio_fallback__ = str(error)  # type: ignore[attr-defined]
    return stays_on_python


def _unwrap(fn: Any) -> Any:
    """The Python function behind what `compile` returned (itself for anything else)."""
    if _is_compiled(fn) or hasattr(fn, "__rextio_fallback__"):
        return getattr(fn, "__wrapped__", None) or fn
    return fn


def _is_compiled(fn: Any) -> bool:
    return type(fn).__name__ in ("CompiledFunction", "AotFunction") and type(fn).__module__ == "rextio_torch._native"


def _warn_at_def(fn: _pytypes.FunctionType, message: str, category: type[Warning]) -> None:
    """Warns at the user's `def` (not inside this package), so filters by module work."""
    code = fn.__code__
    module_globals = fn.__globals__
    warnings.warn_explicit(
        message,
        category,
        filename=code.co_filename,
        lineno=code.co_firstlineno,
        module=module_globals.get("__name__", "__main__"),
        registry=module_globals.setdefault("__warningregistry__", {}),
    )


def _warn_fallback(fn: _pytypes.FunctionType, error: CompileError) -> None:
    _warn_at_def(fn, str(error), RextioFallbackWarning)


_MODES = ("jit", "aot")
_SURFACES = ("extended", "reference")


def _check_surface(caller: str, surface: Any) -> None:
    if surface not in _SURFACES:
        raise ValueError(
            f"rextio_torch.{caller}: surface must be one of {', '.join(map(repr, _SURFACES))}, got {surface!r}"
        )


@overload
def compile(fn: F, *, strict: bool = False, source: str | None = None, mode: str = "jit",
            cache_dir: str | os.PathLike | None = None, surface: str = "extended") -> F: ...
@overload
def compile(fn: None = None, *, strict: bool = False, source: str | None = None, mode: str = "jit",
            cache_dir: str | os.PathLike | None = None, surface: str = "extended") -> Callable[[F], F]: ...


def compile(fn=None, *, strict: bool = False, source: str | None = None, mode: str = "jit",
            cache_dir: str | os.PathLike | None = None, surface: str = "extended"):
    """Compile `fn`, a module-level function annotated with rextio_torch.types markers.

    Usable as `compile(fn)`, `@compile`, `@compile(strict=True)`. The source is read from
    the function's file (or, for a notebook cell, its own text with its module's imports);
    where Python keeps none (`exec`, `python -c`), pass the text as `source=`. Exactly the
    definition the function object comes from is compiled. A compiled function passed again
    comes back unchanged.

    `mode="jit"` (the default) compiles in process for the executor: no toolchain needed.
    `mode="aot"` builds the function ahead of time with cargo into the build cache
    (`cache_dir=`, else `REXTIO_TORCH_CACHE_DIR`, else `$XDG_CACHE_HOME/rextio-torch` or
    `~/.cache/rextio-torch`; docs/aot.md), or loads what an earlier build of the same input
    left there; progress shows on stderr while cargo runs. If it cannot be built (no cargo,
    cargo fails), that is an `AotBuildError` with `strict=True`, else a
    `RextioFallbackWarning` and the in-process executor.

    A function that cannot be compiled warns (`RextioFallbackWarning`) and comes back as a
    thin wrapper of the original (`__wrapped__`), or raises `CompileError` with `strict=True`.
    Calls honour `REXTIO_NATIVE_MODE` (auto, native, fallback), read on every call;
    `RXT_LOG=ir,passes,codegen` prints the IR and generated Rust while compiling
    (docs/tooling.md).

    `fn` may also be a `torch.nn.Module`: an `nn.Sequential` of known layers compiles
    without source, once per signature of its arguments; a user module's annotated `forward`
    compiles from its source, `self.<member>` standing for its layers and tensors. Both read
    the parameters at every call; a module in training mode or with hooks runs eagerly at
    that call, with a `RextioFallbackWarning` (README; `_module.py`).

    `surface="extended"` (the default) claims every op and form rextio-torch knows;
    `surface="reference"` only the reference Rextio plugin's, with its exact outcomes (an
    extension such as `F.silu` or `dim=-1` then keeps the function on Python).
    """
    if mode not in _MODES:
        raise ValueError(f"rextio_torch.compile: mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
    _check_surface("compile", surface)
    if fn is None:
        return lambda f: compile(f, strict=strict, source=source, mode=mode, cache_dir=cache_dir, surface=surface)
    if _is_compiled(fn):
        return fn
    if _is_module(fn):
        return _compile_module(fn, strict=strict, source=source, mode=mode, cache_dir=cache_dir, surface=surface)
    fn = _unwrap(fn)
    if not isinstance(fn, _pytypes.FunctionType):
        # Not a fallback: there is no Python function to stay on, so always an error.
        raise _not_a_function(fn)
    return _compile_located(fn, None, source=source, strict=strict, mode=mode, cache_dir=cache_dir,
                            surface=surface)


def _is_module(obj: Any) -> bool:
    """Whether `obj` is a torch.nn.Module (or what `compile` made of one), without importing
    torch when it is not loaded."""
    if type(obj).__name__ == "CompiledModule" and type(obj).__module__ == f"{__name__}._module":
        return True
    nn = sys.modules.get("torch.nn")
    return nn is not None and isinstance(obj, nn.Module)


def _module_of(obj: Any) -> Any:
    """The nn.Module `obj` is (or that `compile` compiled), else None."""
    if not _is_module(obj):
        return None
    return getattr(obj, "__wrapped__", obj) if type(obj).__name__ == "CompiledModule" else obj


def _compile_module(module: Any, *, strict: bool, source: Any, mode: str, cache_dir: Any, surface: str) -> Any:
    """`compile` of an nn.Module (README, "Modules"; `_module.py`)."""
    from ._module import CompiledModule

    if isinstance(module, CompiledModule):
        return module
    if source is not None or mode != "jit" or cache_dir is not None:
        raise ValueError(
            "rextio_torch.compile of an nn.Module takes strict= and surface= only "
            "(no source=, mode='aot' or cache_dir= yet)"
        )
    _load_native()
    # Warnings point at the caller of `compile` (or of the decorator form's lambda).
    return CompiledModule(module, strict=strict, surface=surface, warn_at=6)


def _compile_located(fn: _pytypes.FunctionType, located: tuple[str, str, int] | None, *,
                     source: str | None = None, strict: bool = False, mode: str = "jit",
                     cache_dir: Any = None, surface: str = "extended") -> Any:
    """`compile` of a Python function: at `located` (file label, source text, `def` line) when
    given (a load by value, _pickle.py), else where `_locate` finds it."""
    options = {"strict": strict, "mode": mode, "located": located, "surface": surface}
    try:
        if mode == "aot":
            try:
                return _compile_aot(fn, source, cache_dir, **options)
            except AotBuildError as error:
                if strict:
                    raise
                _warn_at_def(fn, f"{error}\n`{fn.__qualname__}` runs in the in-process executor instead",
                             RextioFallbackWarning)
        return _compile(fn, source, cache_dir=cache_dir, **options)
    except CompileError as error:
        if strict:
            raise
        _warn_fallback(fn, error)
        return _stays_on_python(fn, error)


def _compile_aot(fn: _pytypes.FunctionType, source: str | None, cache_dir: Any, *, strict: bool = False,
                 mode: str = "aot", located: tuple[str, str, int] | None = None,
                 surface: str = "extended") -> Any:
    """Builds `fn` ahead of time (or finds its build in the cache) and returns the built
    function behind the executor's call contract (`strict`, `mode`, `located`, `surface`: as
    `_compile`)."""
    import sysconfig

    import torch

    native = _load_native()
    channels = _log_channels(native, fn)
    try:
        path, text, line = located or _locate(fn, source)
        if cache_dir is not None:
            cache_dir = os.fspath(cache_dir)
        env = (sys.executable, str(torch.__version__), os.path.join(os.path.dirname(torch.__file__), "lib"),
               sysconfig.get_config_var("EXT_SUFFIX"))
        info = native.aot_build((path, text, line), fn.__name__, cache_dir, env, channels, surface)
    except CompileError as error:
        if channels and not isinstance(error, AotBuildError):
            sys.stderr.write(native.fallback_log(channels, fn.__name__, str(error)))
        raise
    module = _import_built(info)
    built = native.AotFunction(getattr(module, fn.__name__), fn.__name__, fn.__qualname__, info["params"], fn, info)
    return _pickle.remember(built, fn, path, text, line, by_reference=source is None and located is None,
                            strict=strict, mode=mode, cache_dir=cache_dir, surface=surface)


def _import_built(info: dict) -> _pytypes.ModuleType:
    """The package of a cache entry (`<entry>/<module>`), imported once per process under its
    module name, without adding the entry to `sys.path`."""
    import importlib.util

    name = info["module"]
    if name in sys.modules:
        return sys.modules[name]
    package = info["package"]
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(package, "__init__.py"), submodule_search_locations=[package]
    )
    if spec is None or spec.loader is None:
        raise AotBuildError(f"rextio-torch cannot import the built package at {package}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as error:
        del sys.modules[name]
        if isinstance(error, Exception):
            raise AotBuildError(
                f"rextio-torch cannot import the built extension {info['library']}: "
                f"{type(error).__name__}: {error}"
            ) from error
        raise
    return module


def cache_dir(cache_dir: str | os.PathLike | None = None) -> str:
    """The build cache `compile(fn, mode="aot", cache_dir=cache_dir)` uses: `cache_dir`, else
    `REXTIO_TORCH_CACHE_DIR`, else `$XDG_CACHE_HOME/rextio-torch`, else
    `~/.cache/rextio-torch` (docs/aot.md)."""
    path, _ = _load_native().aot_cache_dir(None if cache_dir is None else os.fspath(cache_dir))
    return path


def check(path: str, *, surface: str = "extended") -> dict:
    """The `rextio-torch check --format json [--surface SURFACE]` report for a source file,
    as a dict."""
    import json

    _check_surface("check", surface)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    return json.loads(_load_native().check_source(path, source, surface))


def explain(fn: Any, *, source: str | None = None, surface: str = "extended") -> "Explanation":
    """Why `fn` compiles or stays on Python: its claim table (every call/operator site and
    what became of it, with rule ids or diagnostic codes), its diagnostics (rendered and
    structured), and its IR after each pipeline stage (`parsed`, `fused`, `dce`,
    `optimized`). The analysis is the compiler's own; `print()` it for the readable report.

    Takes the same functions as `compile` (and what `compile` returned), `source=` for code
    run by `exec`, and `surface=` as `compile` does (the report says which surface decided).
    A function that fails to compile is explained too. An `nn.Module` (or its compiled
    object) is explained as `compile` compiles it: a user module's `forward` with its members
    (inlined user modules, constants), for its parameters' types of now; an `nn.Sequential`'s
    generated function for a float32 CPU rank-2 input."""
    from .tooling import Explanation

    _check_surface("explain", surface)
    module = _module_of(fn)
    if module is not None:
        from ._module import explain_module

        return explain_module(module, surface, fn if fn is not module else None)
    fn = _unwrap(fn)
    if not isinstance(fn, _pytypes.FunctionType):
        raise _not_a_function(fn)
    native = _load_native()
    try:
        path, text, line = _locate(fn, source)
    except CompileError as error:
        label = getattr(fn.__code__, "co_filename", "<unknown>")
        return Explanation.unlocated(fn.__name__, label, str(error), surface)
    import json

    return Explanation.from_report(json.loads(native.explain_function(path, text, fn.__name__, line, surface)))


def doctor(*, python: str | None = None) -> "DoctorReport":
    """What the project needs and what this host has: CPython, torch (2.13.0), libtorch as
    tch sees it, cargo/rustc, the optional rextio package, CUDA, CPU SIMD features and this
    host's platform cell. Each finding has a stable code (RXD0NN) and a fix sentence;
    `report.exit_code` is 0 when everything required is there, 1 otherwise. `print()` it for
    the table. `python=` probes another interpreter instead of this one."""
    import json

    from .tooling import DoctorReport

    try:
        native = _load_native()
    except Exception as error:  # torch missing or broken, extension not built: say so
        return DoctorReport.extension_unavailable(error)
    return DoctorReport.from_report(json.loads(native.doctor_report(python)))


def main(argv: list[str] | None = None) -> int:
    """`python -m rextio_torch ARGS`: the `rextio-torch` command line (check, dump-ir, emit,
    build, doctor) with its output and exit codes."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        native = _load_native()
    except Exception as error:
        print(f"rextio-torch: the compiler extension does not load: {type(error).__name__}: {error}",
              file=sys.stderr)
        return 2
    return native.cli_main(args)


def __getattr__(name: str) -> Any:
    # The result types live in `rextio_torch.tooling`, imported on first use so that
    # `import rextio_torch` stays light.
    if name in ("Explanation", "DoctorReport", "Site", "Diagnostic", "DoctorCheck"):
        from . import tooling

        return getattr(tooling, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
