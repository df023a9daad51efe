"""The backend end to end, as a user meets it: emit one crate with every form of the compiled
surface and the cuda:0 slice (emit_fixture.py), copy it to a fresh folder away from the
workspace (no lock file, no target dir of ours), build and install it with the command its
README documents, in a fresh virtual environment, and import it under its module name.

Each CPU function must compute what eager computes (conftest.assert_parity) and exactly what
the executor (`rextio_torch.compile`) computes, bit for bit: both run the same runtime calls.
The cuda:0 function is built and its boundary tested here; running it needs a GPU.

The build compiles tch's libtorch shim from scratch (minutes), so it happens once per module.
"""

import importlib
import inspect
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest
import torch

import emit_fixture
from conftest import ROOT, assert_parity

CLI = ROOT / "target" / "release" / "rextio-torch"
MODULE = "rextio_emitted_surface"


def _documented_command(readme: str) -> str:
    """The one command of the emitted README's "Build and install" section."""
    section = readme.split("## Build and install", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1, blocks
    lines = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def _fresh_venv(path):
    """A virtual environment of its own that sees the workspace venv's packages (torch,
    maturin, pip) through a .pth file, as a user's venv with them installed would. Installs
    go into it, not into the workspace venv."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (pathlib.Path(site) / "workspace_packages.pth").write_text("\n".join(sorted(ours)) + "\n")
    pip = path / "bin" / "pip"  # what pip's own entry point script does
    pip.write_text(f"#!{python}\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n")
    pip.chmod(0o755)
    return site


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the emitted crate cannot be built")
    base = tmp_path_factory.mktemp("emit")
    emitted = base / "emitted"
    subprocess.run(
        [str(CLI), "emit", "tests/python/emit_fixture.py", "-o", str(emitted), "--module", MODULE],
        check=True,
        cwd=ROOT,
    )
    crate = base / "elsewhere" / MODULE
    shutil.copytree(emitted, crate)
    venv = base / "venv"
    site = _fresh_venv(venv)

    # Nothing of the workspace's build reaches this one: no target dir, flags or interpreter.
    ours = {"CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "VIRTUAL_ENV", "PYTHONPATH"}
    env = {k: v for k, v in os.environ.items() if k not in ours and not k.startswith(("PYO3_", "LIBTORCH", "MATURIN", "PIP_"))}
    maturin = pathlib.Path(sys.executable).parent
    env["PATH"] = os.pathsep.join([str(venv / "bin"), str(maturin), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv)
    # -v shows cargo's output (to look for warnings); torch is already there, never fetched.
    env.update(PIP_VERBOSE="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    readme = (crate / "README.md").read_text()
    command = _documented_command(readme)
    result = subprocess.run(command, shell=True, cwd=crate, env=env, capture_output=True, text=True, timeout=3600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    return {"crate": crate, "site": site, "output": output, "command": command, "readme": readme}


@pytest.fixture(scope="module")
def emitted_module(build):
    sys.path.insert(0, build["site"])
    try:
        module = importlib.import_module(MODULE)
    finally:
        sys.path.remove(build["site"])
    return module


def test_the_documented_command_is_one_pip_install(build):
    command = build["command"]
    assert command == "LIBTORCH_USE_PYTORCH=1 pip install --no-build-isolation ."
    # The repository's docs show the command this test runs.
    assert f"cd out/ && {command}\n" in (ROOT / "README.md").read_text()
    assert f"cd out/\n{command}\n" in (ROOT / "docs" / "emitted-crate.md").read_text()


def test_the_crate_is_self_contained(build):
    crate = build["crate"]
    manifest = (crate / "Cargo.toml").read_text()
    dependencies = manifest.split("[dependencies]", 1)[1].split("\n[", 1)[0]
    versions = re.findall(r'^[\w-]+ = (?:"([^"]*)"|\{ version = "([^"]*)")', dependencies, re.M)
    # tch, torch-sys, pyo3, gemm, thiserror, la-arena, serde
    assert len(versions) == 7, dependencies
    for plain, table in versions:
        assert re.fullmatch(r"=\d+\.\d+\.\d+", plain or table), dependencies
    assert "path" not in dependencies
    for path in crate.rglob("*"):
        if path.is_file() and "target" not in path.relative_to(crate).parts:
            assert str(ROOT) not in path.read_text(errors="replace"), path


def _locked(lock_text):
    """(name, version) of every entry of a Cargo.lock."""
    return set(re.findall(r'\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"', lock_text))


def test_the_build_compiles_the_versions_the_workspace_locks(build):
    """The emitted Cargo.lock is the workspace lock's entries for the crate's dependencies, and
    cargo builds exactly those versions (not the registry's newest of the day)."""
    emitted = _locked((build["crate"].parent.parent / "emitted" / "Cargo.lock").read_text())
    workspace = _locked((ROOT / "Cargo.lock").read_text())
    assert emitted and emitted <= workspace
    assert ("tch", "0.26.0") in emitted and not any(name.startswith("rextio") for name, _ in emitted)
    compiled = set(re.findall(r"Compiling ([\w-]+) v(\S+)", build["output"])) - {(MODULE, "0.1.0")}
    assert ("gemm", dict(emitted)["gemm"]) in compiled, "the build output is the cargo build's"
    assert compiled <= emitted, sorted(compiled - emitted)


def test_the_build_prints_no_warning(build):
    assert "Compiling tch" in build["output"], "the build output is the cargo build's"
    warnings = [line for line in build["output"].splitlines() if re.search(r"warning", line, re.I)]
    assert not warnings, "\n".join(warnings)


def test_the_installed_package_is_imported(build, emitted_module):
    assert emitted_module.__name__ == MODULE
    native = emitted_module._native.__file__
    assert native.startswith(build["site"]) and native.endswith(".so"), native
    assert emitted_module.__file__.startswith(build["site"])


CPU_FUNCTIONS = sorted(
    name
    for name, fn in vars(emit_fixture).items()
    if inspect.isfunction(fn) and fn.__module__ == "emit_fixture" and name != "cuda_head"
)


def _randn(g, *shape):
    return torch.randn(*shape, generator=g)


# Inputs of each CPU function of emit_fixture.py (weights are [out, in], matmul shapes chain).
CASES = {
    "inference": lambda g: (_randn(g, 5, 8), _randn(g, 4, 8), _randn(g, 4)),
    "linear_only": lambda g: (_randn(g, 3, 7), _randn(g, 5, 7), _randn(g, 5)),
    "linear_no_bias": lambda g: (_randn(g, 3, 7), _randn(g, 5, 7)),
    "linear_bias_none": lambda g: (_randn(g, 300, 64), _randn(g, 32, 64)),
    "linear_squashing_chain": lambda g: (_randn(g, 6, 16), _randn(g, 8, 16), _randn(g, 8)),
    "linear_gelu_sum_keepdim": lambda g: (_randn(g, 64, 128), _randn(g, 64, 128), _randn(g, 64)),
    "linear_relu_mean_keepdim": lambda g: (_randn(g, 2, 9), _randn(g, 3, 9)),
    "unary_methods": lambda g: (_randn(g, 4, 7),),
    "unary_functions": lambda g: (_randn(g, 4, 7),),
    "unary_rank1": lambda g: (_randn(g, 9),),
    "binops_same_rank": lambda g: (_randn(g, 3, 4), _randn(g, 3, 4)),
    "binops_broadcast": lambda g: (_randn(g, 3, 4), _randn(g, 4)),
    "binops_functional": lambda g: (_randn(g, 3, 4), _randn(g, 3, 4), _randn(g, 4)),
    "binops_rank1": lambda g: (_randn(g, 6), _randn(g, 6)),
    "matmul_2_2": lambda g: (_randn(g, 3, 5), _randn(g, 5, 4)),
    "matmul_2_1": lambda g: (_randn(g, 6, 5), _randn(g, 5)),
    "matmul_1_2": lambda g: (_randn(g, 5), _randn(g, 5, 3)),
    "reductions_2d": lambda g: (_randn(g, 4, 7),),
    "reductions_to_rank1": lambda g: (_randn(g, 4, 7),),
    "reductions_rank1": lambda g: (_randn(g, 7),),
    "normalize_linear": lambda g: (_randn(g, 5, 8), _randn(g, 8), _randn(g, 8).abs() + 0.5, _randn(g, 4, 8), _randn(g, 4)),
    "matmul_bias_tanh_mean": lambda g: (_randn(g, 6, 8), _randn(g, 8), _randn(g, 8, 5), _randn(g, 5)),
    "softmax_forms": lambda g: (_randn(g, 4, 6), _randn(g, 6)),
    "embed_norm": lambda g: (torch.tensor([3, 0, 2, 2]), _randn(g, 5, 6), _randn(g, 6), _randn(g, 6), 6),
    "bag_head": lambda g: (torch.tensor([3, 0, 2, 2, 4, 1]), _randn(g, 5, 6), torch.tensor([0, 2, 2, 5]), _randn(g, 3, 6), _randn(g, 3)),
    "classify": lambda g: (_randn(g, 16, 32), _randn(g, 8, 32), _randn(g, 8)),
    "log_softmax_forms": lambda g: (_randn(g, 4, 6), _randn(g, 6)),
    "log_softmax_head": lambda g: (_randn(g, 16, 32), _randn(g, 8, 32), _randn(g, 8)),
    "joins": lambda g: (_randn(g, 3, 5), _randn(g, 9), _randn(g, 4, 5), _randn(g, 4)),
    "scalar_operands": lambda g: (_randn(g, 4, 6), 0.7, 3),
    "gelu_tanh_layer": lambda g: (_randn(g, 40, 8) * 3, _randn(g, 5, 8), _randn(g, 5)),
    "param_activations": lambda g: (_randn(g, 4, 37) * 3, 0.2, -1),
    "argmax_dim0": lambda g: (_randn(g, 4, 7),),
    "argmax_positional": lambda g: (_randn(g, 4, 7),),
    "argmax_rank1": lambda g: (_randn(g, 7),),
    "named_temps": lambda g: (_randn(g, 5, 8), _randn(g, 4, 8), _randn(g, 4)),
    "shared_intermediate": lambda g: (_randn(g, 5, 8), _randn(g, 4, 8), _randn(g, 4)),
    "with_labels": lambda g: (torch.tensor([2, 0, 1]), _randn(g, 3, 5)),
    "scalar_params": lambda g: (_randn(g, 3, 5), _randn(g, 2, 5), 3, True),
    "returns_int": lambda g: (_randn(g, 2, 2), 7),
    "returns_bool": lambda g: (False, _randn(g, 3)),
    "phase_b": lambda g: (_randn(g, 4, 16), _randn(g, 16, 16) * 0.25, _randn(g, 16, 16) * 0.25, _randn(g, 16), _randn(g, 16), 7, 1),
    "while_continue_return": lambda g: (_randn(g, 3, 6), _randn(g, 6, 6) * 0.4, 9, 7),
    "elif_and_or": lambda g: (_randn(g, 3, 4), 6, True),
    "float_loop": lambda g: (_randn(g, 2, 2), 1.5, 5),
    "scalar_math": lambda g: (_randn(g, 3, 5), 7, -0.75),
    "attention": lambda g: (_randn(g, 2, 5, 8), _randn(g, 2, 6, 8), _randn(g, 2, 6, 3)),
    "rank3_layer": lambda g: (_randn(g, 4, 3, 8), _randn(g, 5, 8), _randn(g, 5)),
    "f64_head": lambda g: (_randn(g, 3, 5).double(), _randn(g, 5, 5).double(), _randn(g, 5).double(), _randn(g, 5).double()),
    "bf16_head": lambda g: (_randn(g, 3, 5).bfloat16(), _randn(g, 4, 5).bfloat16(), _randn(g, 4).bfloat16()),
    "rank0_gate": lambda g: (_randn(g, 3, 4), 0.5),
    "f64_attention": lambda g: (_randn(g, 2, 5, 8).double(), _randn(g, 2, 6, 8).double(), _randn(g, 2, 6, 3).double()),
    "f64_rank0": lambda g: (_randn(g, 2, 3, 4).double(), torch.tensor(0.75, dtype=torch.float64)),
    "bf16_batched": lambda g: (_randn(g, 2, 3, 4).bfloat16(), _randn(g, 2, 4, 5).bfloat16(), torch.tensor(0.75, dtype=torch.bfloat16)),
    "mlp_block": lambda g: (_randn(g, 5, 8), _randn(g, 16, 8), _randn(g, 16), _randn(g, 8, 16), _randn(g, 8)),
}


def test_every_cpu_function_has_a_case():
    assert sorted(CASES) == CPU_FUNCTIONS


def assert_same_bits(ours, theirs):
    """Equal as stored: float32 compared as int32 words, so the sign of zero and NaN payloads
    count (torch.equal would not see them)."""
    if not isinstance(ours, torch.Tensor):
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)
        return
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours, theirs)
    words = {torch.float32: torch.int32, torch.float64: torch.int64, torch.bfloat16: torch.int16}
    if ours.dtype in words:
        ours = ours.contiguous().view(words[ours.dtype])
        theirs = theirs.contiguous().view(words[theirs.dtype])
    assert torch.equal(ours, theirs), (ours, theirs)


def test_the_bit_check_sees_what_torch_equal_does_not():
    assert torch.equal(torch.tensor([0.0]), torch.tensor([-0.0]))
    with pytest.raises(AssertionError):
        assert_same_bits(torch.tensor([0.0]), torch.tensor([-0.0]))
    nan = torch.tensor([float("nan")])
    assert_same_bits(nan, nan.clone())
    with pytest.raises(AssertionError):
        assert_same_bits(nan, -nan)


@pytest.mark.parametrize("name", CPU_FUNCTIONS)
def test_emitted_function_matches_eager_and_the_executor(rextio, emitted_module, name):
    fn = getattr(emit_fixture, name)
    args = CASES[name](torch.Generator().manual_seed(len(name)))
    with torch.no_grad():
        eager = fn(*args)
    ours = getattr(emitted_module, name)(*args)
    if isinstance(eager, torch.Tensor):
        assert_parity(ours, eager)
    else:
        assert type(ours) is type(eager) and ours == eager
    assert_same_bits(ours, rextio.compile(fn, strict=True)(*args))


@pytest.mark.parametrize("batch,k,n", [(1, 32, 32), (8, 64, 64), (64, 128, 64), (256, 256, 128), (3, 7, 5)])
def test_phase_a_matches_eager_and_the_executor_bit_for_bit(rextio, emitted_module, batch, k, n):
    generator = torch.Generator().manual_seed(batch + k + n)
    x, w, b = _randn(generator, batch, k), _randn(generator, n, k), _randn(generator, n)
    x[0, 0] = -0.0
    emitted = emitted_module.inference(x, w, b)
    assert_same_bits(emitted, rextio.compile(emit_fixture.inference, strict=True)(x, w, b))
    assert_parity(emitted, emit_fixture.inference(x, w, b))


def test_special_values_match_the_executor_bit_for_bit(rextio, emitted_module):
    x = torch.tensor([[0.0, -0.0, float("nan"), float("inf")], [-float("inf"), 1.0, -2.0, 3.0]])
    v = torch.tensor([-0.0, 0.0, 1.0, float("nan")])
    for name, args in [
        ("unary_methods", (x,)),
        ("binops_same_rank", (x, x.flip(1))),
        ("binops_broadcast", (x, v)),
        ("softmax_forms", (x, v)),
        ("reductions_2d", (x,)),
        ("linear_squashing_chain", (x, x.flip(0), v[:2])),
    ]:
        fn = getattr(emit_fixture, name)
        ours = getattr(emitted_module, name)(*args)
        assert_same_bits(ours, rextio.compile(fn, strict=True)(*args))
        assert_parity(ours, fn(*args))


def test_emitted_crate_checks_arguments(emitted_module):
    w, b = torch.randn(4, 3), torch.randn(4)
    with pytest.raises(ValueError, match="^rextio-torch: expected a float32 tensor"):
        emitted_module.inference(torch.randn(2, 3).double(), w, b)
    with pytest.raises(TypeError, match="^rextio-torch: expected a torch.Tensor"):
        emitted_module.inference(None, w, b)
    with pytest.raises(ValueError, match=r"^rextio-torch: expected rank-2 tensor, got rank 1"):
        emitted_module.inference(torch.randn(3), w, b)
    with pytest.raises(ValueError, match="^rextio-torch: expected an int64 tensor"):
        emitted_module.with_labels(torch.randn(3), torch.randn(3, 5))
    with pytest.raises(TypeError, match="^rextio-torch: expected an int"):
        emitted_module.scalar_params(torch.randn(3, 5), torch.randn(2, 5), True, True)
    with pytest.raises(TypeError, match="^rextio-torch: expected a bool"):
        emitted_module.scalar_params(torch.randn(3, 5), torch.randn(2, 5), 3, 1)
    with pytest.raises(RuntimeError):
        emitted_module.inference(torch.randn(2, 5), w, b)  # sizes do not fit


def test_cuda_slice_is_built_and_checks_its_boundary(emitted_module):
    cpu = (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4))
    with pytest.raises(ValueError, match="^rextio-torch: expected a cuda:0 tensor"):
        emitted_module.cuda_head(*cpu)
    with pytest.raises(TypeError, match="^rextio-torch: expected a torch.Tensor"):
        emitted_module.cuda_head([1.0], *cpu[1:])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: the cuda:0 slice is build-only on CPU machines")
def test_cuda_slice_matches_eager_on_a_gpu(emitted_module):
    generator = torch.Generator().manual_seed(3)
    x, w, b = (t.cuda() for t in (_randn(generator, 8, 16), _randn(generator, 16, 4), _randn(generator, 4)))
    ours = emitted_module.cuda_head(x, w, b)
    assert ours.device == x.device
    assert_parity(ours.cpu(), emit_fixture.cuda_head(x, w, b).cpu())


def test_executor_refuses_the_cuda_slice(rextio):
    with pytest.raises(rextio.CompileError, match="build-only"):
        rextio.compile(emit_fixture.cuda_head, strict=True)
