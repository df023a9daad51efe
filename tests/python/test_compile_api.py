"""`rextio_torch.compile`: decorator forms, fallback with a warning, strict mode, markers."""

import subprocess
import sys
import warnings

import pytest
import torch

import compile_fixture as fx


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
        (fx.not_covered, "RXT030", "unsupported unresolved call in native function: x.transpose"),
        (fx.with_loop, "RXT031", "for"),
    ],
)
def test_uncompilable_functions_warn_and_stay_on_python(rextio, fn, code, snippet):
    with pytest.warns(rextio.RextioFallbackWarning) as caught:
        result = rextio.compile(fn)
    assert result is fn
    text = str(caught[0].message)
    assert code in text and snippet in text
    assert "compile_fixture.py" in text  # the diagnostic points at the source


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
        assert rextio.compile(inner) is inner


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

        types.TensorF64Cpu2D


def test_check_report(rextio):
    report = rextio.check(fx.__file__)
    by_name = {f["name"]: f for f in report["functions"]}
    assert by_name["rejected"]["status"] == "fallback"
    assert by_name["plain"]["status"] == "not-candidate"
    assert by_name["scalar_param"]["status"] == "native"
    site = by_name["rejected"]["sites"][0]
    assert site["outcome"] == "rejected" and site["code"] == "RXTP-TORCH-002"
    warnings.simplefilter("error")  # nothing above may have warned


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
