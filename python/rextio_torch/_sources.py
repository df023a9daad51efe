"""Where the code a module plan inlines is written (`rextio_torch.compile(module)`,
python/rextio_torch/_module.py): `_Source` reads and checks the source of a user module's
`forward` or of a helper method, `_Files` numbers the files other than the compiled one that
a description sends to the frontend (frontend/src/module/foreign.rs), and `_is_sequential`
tells a Sequential (or a subclass that only constructs) from a user module."""

from __future__ import annotations

import sys
from typing import Any


def _is_sequential(module: Any) -> bool:
    """Whether `module` runs as an `nn.Sequential` of its children: one, or an instance of a
    subclass that adds only construction (torchvision's `MLP(nn.Sequential)` with just
    `__init__`): its class's `forward` and call machinery are Sequential's own function
    objects, so a call is its children's calls in turn, as for `nn.Sequential` itself."""
    import torch.nn as nn

    kind = type(module)
    return isinstance(module, nn.Sequential) and all(
        getattr(kind, name, None) is getattr(nn.Sequential, name)
        for name in ("forward", "__call__", "_call_impl", "_wrapped_call_impl")
    )


def _user(module: Any) -> bool:
    """Whether `module` is a user module (its class is not torch's), compiled from the source
    of its forward; a Sequential subclass that only constructs is a Sequential."""
    return not type(module).__module__.startswith("torch.") and not _is_sequential(module)


class _Source:
    """Where a user module's `forward` (or another method of its class, `method`) is
    written: its file, the file's text, the line of its `def`, and its signature;
    ModuleNotCompilable where that cannot be known."""

    def __init__(self, module: Any, method: str = "forward") -> None:
        import ast
        import inspect
        import linecache
        import textwrap
        import types

        from . import _on_parse_stack, _same_code
        from ._module import ModuleNotCompilable, builtins_compile

        forward = getattr(type(module), method, None)
        name = type(module).__qualname__
        if not isinstance(forward, types.FunctionType):
            raise ModuleNotCompilable(f"{name} has no {method} written in Python")
        code = forward.__code__
        lines = linecache.getlines(code.co_filename, forward.__globals__)
        if not lines:
            raise ModuleNotCompilable(f"rextio-torch cannot read the source of {forward.__qualname__}")
        text = "".join(lines)
        node = tree = None
        too_deep = ModuleNotCompilable(
            f"the source of {forward.__qualname__} nests too deeply for CPython's parser at the "
            f"current recursion limit (sys.getrecursionlimit() = {sys.getrecursionlimit()})"
        )

        def parse() -> tuple:
            parsed = ast.parse(text)
            return parsed, _find_method(parsed.body, code.co_firstlineno, method)

        # CPython's parser and compiler run on a stack sized for the source (see
        # `_on_parse_stack`: they recurse once per nesting level).
        try:
            tree, node = _on_parse_stack(parse, text)
        except SyntaxError:
            pass
        except RecursionError:
            raise too_deep from None
        if node is None:
            raise ModuleNotCompilable(
                f"{forward.__qualname__} is not a method of a class at module level of "
                f"{code.co_filename} (a class defined inside a function does not compile)"
            )
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        segment = textwrap.dedent("".join(lines[start - 1 : node.end_lineno]))
        try:
            compiled = _on_parse_stack(lambda: builtins_compile(segment, code.co_filename, "exec"), segment)
        except RecursionError:
            raise too_deep from None
        function = next((c for c in compiled.co_consts if isinstance(c, types.CodeType) and c.co_name == method),
                        None)
        if function is None or not _same_code(function, code):
            raise ModuleNotCompilable(
                f"the source of {forward.__qualname__} at {code.co_filename}:{node.lineno} is not its "
                "code (was the file edited after it was imported?)"
            )
        self.path, self.text, self.line = code.co_filename, text, node.lineno
        # Every name the file binds or reads: a hidden parameter is none of them (it would
        # stand for a local of the forward, or the local for it).
        self.names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
        self.qualname = forward.__qualname__
        self.signature = inspect.signature(forward)
        # The attributes the forward reads on its receiver (`self.scale`): those of them that
        # are Python scalars are constants of its compilation.
        receiver = (node.args.posonlyargs + node.args.args)[:1]
        self.attributes = {
            n.attr for n in ast.walk(node)
            if receiver and isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == receiver[0].arg
        }


class _Files:
    """The files a description's user modules and helper methods come from: the compiled
    one (`path`), and every other, sent once in `sources` (path and text, as `_Source` read
    and checked them) for a member to name by index (frontend/src/module/foreign.rs)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sources: list[dict] = []
        self._index: dict[str, int] = {}

    def index(self, where: _Source) -> int | None:
        if where.path == self.path:
            return None
        if where.path not in self._index:
            self._index[where.path] = len(self.sources)
            self.sources.append({"path": where.path, "text": where.text})
        return self._index[where.path]


def _find_method(body: list, line: int, method: str = "forward") -> Any:
    """The `def <method>` starting on `line` in a class of `body` (nested classes too)."""
    import ast

    for node in body:
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef) and inner.name == method:
                    if min([inner.lineno] + [d.lineno for d in inner.decorator_list]) == line:
                        return inner
            found = _find_method(node.body, line, method)
            if found is not None:
                return found
    return None
