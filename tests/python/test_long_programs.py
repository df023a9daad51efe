"""Long and deep programs through `rextio_torch.compile` (issue 31, item 5;
docs/reliability.md, "Long programs"): a chain of 100,000 method calls, which CPython itself
only compiles with its recursion limit raised and on a large stack, compiles on the main
thread and gives eager's values; 100,000 statements do too; and where CPython's own parser
refuses the source at the current recursion limit, `compile` says so with a CompileError
instead of crashing. Before the fix a chain of 5,000 calls killed the process (SIGSEGV)."""

import importlib.util
import sys
import threading

import pytest
import torch

HEADER = "from rextio_torch.types import TensorF32Cpu2D\n\n\ndef f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
OPS = ("relu", "neg", "tanh")


def chain(calls):
    return HEADER + "    return x" + "".join(f".{OPS[i % 3]}()" for i in range(calls)) + "\n"


def statements(count):
    body = "".join(f"    h = h.{OPS[i % 3]}()\n" for i in range(count))
    return HEADER + "    h = x.relu()\n" + body + "    return h\n"


def import_deep(path, name):
    """Imports `path` as CPython can only import a chain this deep: on a thread with a large
    stack and with the recursion limit raised (left raised, as the caller that needed it has
    it); the module is returned."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    failure = []

    def run():
        try:
            spec.loader.exec_module(module)
        except BaseException as error:
            failure.append(error)

    previous = threading.stack_size(1 << 30)
    try:
        thread = threading.Thread(target=run)
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    if failure:
        raise failure[0]
    return module


@pytest.fixture
def deep_recursion_limit():
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000_000)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def test_a_chain_of_100000_calls_compiles_on_the_main_thread_like_eager(rextio, tmp_path, deep_recursion_limit):
    path = tmp_path / "chain_100000.py"
    path.write_text(chain(100_000))
    module = import_deep(path, "chain_100000")
    compiled = rextio.compile(module.f, strict=True)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(compiled(x), module.f(x), rtol=1e-5, atol=1e-6)


def test_100000_statements_compile_like_eager(rextio, tmp_path):
    path = tmp_path / "statements_100000.py"
    path.write_text(statements(100_000))
    spec = importlib.util.spec_from_file_location("statements_100000", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    compiled = rextio.compile(module.f, strict=True)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    assert torch.allclose(compiled(x), module.f(x), rtol=1e-5, atol=1e-6)


def test_a_chain_too_deep_for_cpythons_parser_at_the_current_limit_is_a_compile_error(rextio, tmp_path):
    path = tmp_path / "chain_20000.py"
    path.write_text(chain(20_000))
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000_000)
    try:
        module = import_deep(path, "chain_20000")
    finally:
        sys.setrecursionlimit(previous)
    # Defined under a raised limit, compiled under the default one: CPython's parser refuses
    # the source, and compile says why.
    with pytest.raises(rextio.CompileError, match="nests too deeply for CPython's parser"):
        rextio.compile(module.f, strict=True)
