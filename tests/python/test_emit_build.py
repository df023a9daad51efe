"""The backend end to end: emit a crate for Phase A and the cuda:0 slice, build it with cargo,
import it, and compare it with the executor (`rextio_torch.compile`) and with eager. Both
consumers of one optimized IR must agree. The cuda:0 function is built and its boundary tested
here; running it needs a GPU."""

import importlib.util
import os
import shutil
import subprocess

import pytest
import torch

from conftest import EXAMPLES, ROOT, assert_parity

CLI = ROOT / "target" / "release" / "rextio-torch"


@pytest.fixture(scope="module")
def emitted_module(tmp_path_factory):
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the emitted crate cannot be built")
    crate = tmp_path_factory.mktemp("emit") / "phase_a_native"
    fixture = ROOT / "tests" / "python" / "emit_fixture.py"
    subprocess.run([str(CLI), "emit", str(fixture), "-o", str(crate), "--module", "phase_a_native"], check=True)
    # Same dependency versions and target dir as the workspace: tch and its C++ shim are reused.
    shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target"))
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=crate, env=env, check=True)
    built = ROOT / "target" / "release" / "libphase_a_native.so"
    destination = crate / "phase_a_native.so"
    shutil.copy(built, destination)
    spec = importlib.util.spec_from_file_location("phase_a_native", destination)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("batch,k,n", [(1, 32, 32), (8, 64, 64), (64, 128, 64), (256, 256, 128), (3, 7, 5)])
def test_emitted_crate_agrees_with_executor_and_eager(emitted_module, phase_a, batch, k, n):
    module, compiled = phase_a
    generator = torch.Generator().manual_seed(batch + k + n)
    x, w, b = torch.randn(batch, k, generator=generator), torch.randn(n, k, generator=generator), torch.randn(n, generator=generator)
    emitted = emitted_module.inference(x, w, b)
    assert torch.equal(emitted, compiled(x, w, b))  # same runtime calls: bit-identical
    assert_parity(emitted, module.inference(x, w, b))


def test_emitted_crate_checks_arguments(emitted_module):
    with pytest.raises(ValueError, match="^rextio-torch: expected a float32 tensor$"):
        emitted_module.inference(torch.randn(2, 3).double(), torch.randn(4, 3), torch.randn(4))
    with pytest.raises(TypeError, match="^rextio-torch: expected a torch.Tensor$"):
        emitted_module.inference(None, torch.randn(4, 3), torch.randn(4))


def test_cuda_slice_is_built_and_checks_its_boundary(emitted_module):
    cpu = (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4))
    with pytest.raises(ValueError, match="^rextio-torch: expected a cuda:0 tensor$"):
        emitted_module.cuda_head(*cpu)
    with pytest.raises(TypeError, match="^rextio-torch: expected a torch.Tensor$"):
        emitted_module.cuda_head([1.0], *cpu[1:])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: the cuda:0 slice is build-only on CPU machines")
def test_cuda_slice_matches_eager_on_a_gpu(emitted_module):
    import emit_fixture

    generator = torch.Generator().manual_seed(3)
    x, w, b = (t.cuda() for t in (torch.randn(8, 16, generator=generator), torch.randn(16, 4, generator=generator), torch.randn(4, generator=generator)))
    assert_parity(emitted_module.cuda_head(x, w, b).cpu(), emit_fixture.cuda_head(x, w, b).cpu())


def test_executor_refuses_the_cuda_slice(rextio):
    import emit_fixture

    with pytest.raises(rextio.CompileError, match="build-only"):
        rextio.compile(emit_fixture.cuda_head, strict=True)
