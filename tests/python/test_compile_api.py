"""`rextio_torch.compile`: decorator forms, fallback with a warning, strict mode, markers."""

import subprocess
import sys
import warnings

import pytest
import torch

import compile_fixture as fx
from conftest import assert_parity


def test_decorator_forms(rextio):
    import phase_a

    direct = rextio.compile(phase_a.inference)
    bare = rextio.compile(phase_a.inference, strict=False)
    strict = rextio.compile(strict=True)(phase_a.inference)
    x, w, b = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    for compiled in (direct, bare, strict):
        assert type(compiled).__name__ == "CompiledFunction"
        assert compiled.__name__ == "inference"
        assert compiled.__wrapped__ is phase_a.inference
        assert torch.allclose(compiled(x, w, b), phase_a.inference(x, w, b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "fn,code,snippet",
    [
        (fx.rejected, "RXTP-TORCH-002", "only zero-argument .relu() is supported"),
        (fx.not_covered, "RXT030", "unsupported unresolved call in native function: x.cumsum"),
        (fx.with_loop, "RXT010", "returning a plugin-typed parameter (or a possible alias of one)"),
    ],
)
def test_uncompilable_functions_warn_and_stay_on_python(rextio, fn, code, snippet):
    with pytest.warns(rextio.RextioFallbackWarning) as caught:
        result = rextio.compile(fn)
    # The original, behind a thin wrapper that honours REXTIO_NATIVE_MODE on each call.
    assert result.__wrapped__ is fn and result.__name__ == fn.__name__
    assert type(result).__name__ == "function" and result is not fn
    text = str(caught[0].message)
    assert code in text and snippet in text
    assert "compile_fixture.py" in text  # the diagnostic points at the source
    # The warning itself is attributed to the user's `def`, not to rextio_torch/__init__.py.
    assert caught[0].filename == fx.__file__
    assert caught[0].lineno == fn.__code__.co_firstlineno


def test_strict_raises_compile_error(rextio):
    with pytest.raises(rextio.CompileError) as raised:
        rextio.compile(fx.rejected, strict=True)
    assert "RXTP-TORCH-002" in str(raised.value)
    with pytest.raises(rextio.CompileError, match="uses no rextio_torch.types annotation"):
        rextio.compile(fx.plain, strict=True)


def test_nested_functions_stay_on_python(rextio):
    from rextio_torch.types import TensorF32Cpu2D

    def inner(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x.relu()

    with pytest.warns(rextio.RextioFallbackWarning, match="module-level functions only"):
        assert rextio.compile(inner).__wrapped__ is inner


def test_int_parameters_are_checked(rextio):
    compiled = rextio.compile(fx.scalar_param, strict=True)
    x, w, b = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    assert torch.allclose(compiled(x, w, b, 3), fx.scalar_param(x, w, b, 3), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="rextio-torch: expected an int"):
        compiled(x, w, b, 1.5)
    with pytest.raises(TypeError, match="rextio-torch: expected an int"):
        compiled(x, w, b, True)


def test_markers_import_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from rextio_torch.types import TensorF32Cpu2D, TensorF32Cpu1D, TensorI64Cpu1D, "
        "TensorF32Cuda0_2D, TensorF32Cuda0_1D\n"
        "import rextio_torch\n"
        "assert TensorF32Cpu2D.rank == 2 and TensorF32Cuda0_1D.device == 'cuda:0'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_markers_are_not_instantiable():
    from rextio_torch.types import TensorF32Cpu2D

    with pytest.raises(TypeError, match="annotation marker"):
        TensorF32Cpu2D()
    with pytest.raises(AttributeError):
        import rextio_torch.types as types

        types.TensorF16Cpu2D


def test_check_report(rextio):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing below may warn
        report = rextio.check(fx.__file__)
    by_name = {f["name"]: f for f in report["functions"]}
    assert by_name["rejected"]["status"] == "fallback"
    assert by_name["plain"]["status"] == "not-candidate"
    assert by_name["scalar_param"]["status"] == "native"
    site = by_name["rejected"]["sites"][0]
    assert site["outcome"] == "rejected" and site["code"] == "RXTP-TORCH-002"


def test_functions_without_a_module_file_compile_from_their_own_source(rextio, tmp_path):
    # As in a notebook: the function's source is known (linecache) but its module has no file.
    import linecache

    code = (
        "import torch.nn.functional as F\n"
        "from rextio_torch.types import TensorF32Cpu1D as V, TensorF32Cpu2D as M\n"
        "def cell(x: M, w: M, b: V) -> V:\n"
        "    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)\n"
    )
    filename = "<notebook-cell-1>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace = {"__name__": "notebook"}
    exec(compile(code, filename, "exec"), namespace)
    compiled = rextio.compile(namespace["cell"], strict=True)
    x, w, b = torch.randn(3, 5), torch.randn(4, 5), torch.randn(4)
    assert torch.allclose(compiled(x, w, b), namespace["cell"](x, w, b), rtol=1e-5, atol=1e-6)
    assert "fused_linear" in compiled.optimized_ir


@pytest.mark.parametrize(
    "make,what",
    [
        (lambda: 42, "got a int value"),
        (lambda: torch.relu, "the built-in function 'relu'"),
        (lambda: "def f(): pass", "got a str value"),
    ],
)
def test_compile_says_what_it_accepts(rextio, make, what):
    for strict in (False, True):
        with pytest.raises(rextio.CompileError) as raised:
            rextio.compile(make(), strict=strict)
        text = str(raised.value)
        assert text.startswith("rextio_torch.compile takes a module-level Python function defined with `def`")
        assert what in text


def test_a_module_compiles_or_runs_eagerly(rextio):
    # Modules compile (test_module.py): a bare layer of a known kind as a Sequential of one;
    # a module of torch's of another kind warns and runs eagerly.
    layer = torch.nn.Linear(3, 4).eval()
    fast = rextio.compile(layer, strict=True)
    x = torch.randn(2, 3)
    with torch.no_grad():
        assert torch.allclose(fast(x), layer(x), rtol=1e-5, atol=1e-6)
    assert "# (layer): Linear(in_features=3, out_features=4, bias=True)" in fast.generated_source()
    layer_norm = torch.nn.LayerNorm(3).eval()
    fast = rextio.compile(layer_norm, strict=True)
    with torch.no_grad():
        assert torch.allclose(fast(x), layer_norm(x), rtol=1e-5, atol=1e-6)
    norm = torch.nn.BatchNorm1d(3).eval()
    with pytest.warns(rextio.RextioFallbackWarning, match="BatchNorm1d is none of them"):
        fast = rextio.compile(norm)
    with torch.no_grad():
        assert torch.equal(fast(x), norm(x))
    with pytest.raises(rextio.CompileError, match="BatchNorm1d is none of them"):
        rextio.compile(norm, strict=True)


def test_compiling_a_compiled_function_returns_it(rextio):
    compiled = rextio.compile(fx.scalar_param, strict=True)
    assert rextio.compile(compiled) is compiled
    assert rextio.compile(compiled, strict=True) is compiled


def test_compile_error_is_the_packages_own(rextio):
    with pytest.raises(rextio.CompileError) as raised:
        rextio.compile(fx.rejected, strict=True)
    assert type(raised.value) is rextio.CompileError
    assert rextio.CompileError.__module__ == "rextio_torch"
    assert issubclass(rextio.InternalCompilerError, rextio.CompileError)
    # Catchable without importing torch.
    code = "import sys; sys.modules['torch'] = None\nimport rextio_torch\nprint(rextio_torch.CompileError.__qualname__)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "CompileError"


def test_an_internal_compiler_error_falls_back_with_its_report(rextio, monkeypatch):
    import rextio_torch._native as native

    def broken(*args, **kwargs):
        raise rextio.InternalCompilerError("internal compiler error in `scalar_param`:\nerror[RXIR-003]: ...")

    monkeypatch.setattr(native, "compile_function", broken)
    with pytest.warns(rextio.RextioFallbackWarning, match="RXIR-003"):
        assert rextio.compile(fx.scalar_param).__wrapped__ is fx.scalar_param
    with pytest.raises(rextio.InternalCompilerError, match="RXIR-003"):
        rextio.compile(fx.scalar_param, strict=True)


def test_argument_errors_name_the_argument(rextio):
    compiled = rextio.compile(fx.scalar_param, strict=True)
    x, w, b = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    cases = [
        ((x, w.double(), b, 1), ValueError, "rextio-torch: expected a float32 tensor (argument 'w' is float64)"),
        ((x, w, b.to(torch.int32), 1), ValueError, "rextio-torch: expected a float32 tensor (argument 'b' is int32)"),
        ((x, w, b[None], 1), ValueError, "rextio-torch: expected rank-1 tensor, got rank 2 (argument 'b')"),
        ((x, w, b.to_sparse(), 1), ValueError, "rextio-torch: expected a strided tensor (argument 'b' is sparse)"),
        ((x.tolist(), w, b, 1), TypeError, "rextio-torch: expected a torch.Tensor (argument 'x' is a list)"),
        ((x, None, b, 1), TypeError, "rextio-torch: expected a torch.Tensor (argument 'w' is None)"),
        ((x, w, b, 1.5), TypeError, "rextio-torch: expected an int (argument 'depth' is a float)"),
        ((x, w, b, True), TypeError, "rextio-torch: expected an int (argument 'depth' is a bool)"),
    ]
    for args, error, message in cases:
        with pytest.raises(error) as raised:
            compiled(*args)
        assert str(raised.value) == message
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match=r"expected a CPU tensor \(argument 'x' is on cuda:0\)"):
            compiled(x.cuda(), w, b, 1)


def test_bool_parameters_are_checked(rextio):
    import decorated_fixture as dfx

    x = torch.randn(2, 3)
    assert_parity(dfx.aliased_called(x, False), dfx.aliased_called.__wrapped__(x, False))
    tensor = "a torch.Tensor; pass bool(t) or t.item() for a one-element tensor t"
    for bad, given in [(1, "an int"), (None, "None"), (torch.tensor(True), tensor)]:
        with pytest.raises(TypeError) as raised:
            dfx.aliased_called(x, bad)
        assert str(raised.value) == f"rextio-torch: expected a bool (argument 'flag' is {given})"


def test_int64_parameters_are_checked(rextio):
    import surface_fixture as sfx

    compiled = rextio.compile(sfx.with_labels, strict=True)
    labels, x = torch.tensor([3, 1, 2]), torch.randn(3, 4)
    assert torch.equal(compiled(labels, x), sfx.with_labels(labels, x))
    with pytest.raises(ValueError) as raised:
        compiled(labels.float(), x)
    assert str(raised.value) == "rextio-torch: expected an int64 tensor (argument 'labels' is float32)"
    with pytest.raises(ValueError) as raised:
        compiled(labels.to(torch.int32), x)
    assert str(raised.value) == "rextio-torch: expected an int64 tensor (argument 'labels' is int32)"


def _runs_beside(call, meanwhile=lambda: None):
    """Runs `call` on a worker thread with a huge switch interval, so the worker keeps the
    GIL until it blocks or native code releases it. The worker flags that it is inside the
    call; the main thread can only see the flag set (and run `meanwhile`) if the call let
    the GIL go while it ran. Returns (flag seen, call's result, meanwhile's result)."""
    import threading

    state = {"inside": False, "result": None}
    started = threading.Event()

    def worker():
        started.set()
        state["inside"] = True
        state["result"] = call()
        state["inside"] = False

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        started.wait()
        seen_inside = state["inside"]
        mine = meanwhile()
    finally:
        sys.setswitchinterval(previous)
    thread.join()
    return seen_inside, state["result"], mine


def test_calls_release_the_gil(rextio):
    compiled = rextio.compile(fx.scalar_param, strict=True)
    x, w, b = torch.randn(256, 2048), torch.randn(2048, 2048), torch.randn(2048)
    expected = fx.scalar_param(x, w, b, 1)

    def four_calls():
        for _ in range(3):
            compiled(x, w, b, 1)
        return compiled(x, w, b, 1)

    # Real work on this thread while the worker computes.
    seen_inside, result, mine = _runs_beside(four_calls, lambda: compiled(x[:8], w, b, 1))
    assert seen_inside, "the main thread could not run while a compiled call was in progress"
    assert_parity(result, expected)
    assert_parity(mine, expected[:8])


def test_a_long_loop_over_small_arguments_lets_the_gil_go(rextio):
    # A small call keeps the GIL (releasing it costs more than the call computes), but one
    # whose loop runs long lets it go at the loop's first interrupt check, about a
    # millisecond in, so other threads run meanwhile.
    import control_flow_fixture as cf

    spin = rextio.compile(cf.spin, strict=True)
    x = torch.randn(2, 2)
    seen_inside, result, _ = _runs_beside(lambda: spin(x, 2 * 10**7))
    assert seen_inside, "the main thread could not run while the compiled loop was running"
    assert torch.equal(result, x.relu())


def test_a_docstring_compiles_on_the_extended_surface_only(rextio):
    fast = rextio.compile(fx.documented, strict=True)
    x = torch.randn(3, 4)
    assert_parity(fast(x), fx.documented(x))
    with pytest.raises(rextio.CompileError, match=r"(?s)RXT010.*make it a comment"):
        rextio.compile(fx.documented, strict=True, surface="reference")


def test_tuple_unpacking_on_the_extended_surface(rextio):
    """`a, b = e1, e2` (every value first, then the names), `r, c = x.shape` and
    `(n,) = b.size()`: compiled on the extended surface; under the reference surface they stay
    on Python (the host's rule: assignment targets must be names)."""
    fast = rextio.compile(fx.unpacked, strict=True)
    for rows, cols in [(3, 4), (1, 1), (0, 2)]:
        x, b = torch.randn(rows, cols), torch.randn(cols)
        assert_parity(fast(x, b), fx.unpacked(x, b))
    with pytest.raises(rextio.CompileError, match="`unpacked` falls back to Python"):
        rextio.compile(fx.unpacked, strict=True, surface="reference")
    # Three names for the two sizes of a matrix: eager's ValueError, refused at compile time.
    with pytest.raises(ValueError, match="not enough values to unpack"):
        fx.unpacked_wrong_count(torch.randn(2, 3))
    with pytest.raises(rextio.CompileError, match=r"unpacking the 2 sizes of `x` into 3 names"):
        rextio.compile(fx.unpacked_wrong_count, strict=True)
