"""The standalone crate (`rextio-torch emit --standalone`, docs/standalone-crate.md) as a Rust
user meets it: emit every form of the compiled surface (emit_fixture.py), build it with the
commands of its README, save inputs from Python with `torch.save`, run the example binary on
them, and compare what it writes with eager PyTorch within the documented tolerance
(conftest.assert_parity, docs/parity.md). Its code is the Python extension's code, line for
line (tests/tests/standalone_crate.rs).

cargo's target dir is the repository's `target/aot-tests`, shared with test_aot.py and kept
between sessions: the first session on a machine compiles tch without its Python feature
(minutes); later ones only this crate.
"""

import inspect
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import emit_fixture
from conftest import ROOT, assert_parity
from test_emit_build import CASES, CPU_FUNCTIONS

CLI = ROOT / "target" / "release" / "rextio-torch"
TARGET = ROOT / "target" / "aot-tests"
MODULE = "rextio_standalone_surface"

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")


def _readme_command(readme: str, section: str) -> str:
    """The one shell command of a README section."""
    text = readme.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(blocks) == 1, blocks
    lines = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def _build_env():
    """The caller's environment without the workspace's build settings: this venv's Python
    first on PATH (tch's build asks it where torch is), cargo's target dir shared."""
    ours = {"RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET_DIR", "PYTHONPATH"}
    env = {k: v for k, v in os.environ.items() if k not in ours and not k.startswith(("PYO3_", "LIBTORCH"))}
    env["PATH"] = os.pathsep.join([str(pathlib.Path(sys.executable).parent), env.get("PATH", "")])
    env["CARGO_TARGET_DIR"] = str(TARGET)
    return env


@pytest.fixture(scope="module")
def crate(tmp_path_factory):
    base = tmp_path_factory.mktemp("standalone")
    out = base / "crate"
    emitted = subprocess.run(
        [str(CLI), "emit", "--standalone", "tests/python/emit_fixture.py", "-o", str(out), "--module", MODULE],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert emitted.returncode == 0, emitted.stderr
    assert emitted.stdout == f"wrote {MODULE} (standalone, 56 function(s)) to {out}\n"
    readme = (out / "README.md").read_text()
    env = _build_env()
    build = _readme_command(readme, "Build")
    built = subprocess.run(build, shell=True, cwd=out, env=env, capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, built.stderr[-6000:]
    # The README's run command builds the example and runs it (on inputs saved as it says).
    x, w, b = CASES["inference"](torch.Generator().manual_seed(1))
    torch.save({"x": x, "weight": w, "bias": b}, out / "inputs.pt")
    run = _readme_command(readme, "Run the example")
    ran = subprocess.run(run, shell=True, cwd=out, env=env, capture_output=True, text=True, timeout=3600)
    assert ran.returncode == 0, ran.stderr[-6000:]
    return {
        "dir": out, "readme": readme, "build": build, "run": run, "build_output": built.stderr + ran.stderr,
        "run_stdout": ran.stdout, "inputs": (x, w, b), "binary": TARGET / "release" / "examples" / "run",
    }


def test_the_readme_commands_are_the_documented_ones(crate):
    assert crate["build"] == "LIBTORCH_USE_PYTORCH=1 cargo build --release"
    assert crate["run"] == "LIBTORCH_USE_PYTORCH=1 cargo run --release --example run -- inference inputs.pt out.npz"
    docs = (ROOT / "docs" / "standalone-crate.md").read_text()
    assert f"\n{crate['build']}\n" in docs and "cargo run --release --example run -- " in docs
    warnings = [line for line in crate["build_output"].splitlines() if re.search(r"warning", line, re.I)]
    assert not warnings, "\n".join(warnings)


def test_the_example_prints_and_saves_the_result(crate):
    x, w, b = crate["inputs"]
    eager = emit_fixture.inference(x, w, b)
    assert crate["run_stdout"].startswith(f"inference: Float tensor of sizes [{eager.shape[0]}]\n")
    saved = torch.from_numpy(np.load(crate["dir"] / "out.npz")["output"])
    assert_parity(saved, eager)


def _save_inputs(name, args, path):
    params = inspect.signature(getattr(emit_fixture, name)).parameters
    named = {}
    for param, value in zip(params, args):
        if isinstance(value, bool):
            value = torch.tensor(value)
        elif isinstance(value, int):
            value = torch.tensor(value, dtype=torch.int64)
        elif isinstance(value, float):
            value = torch.tensor(value, dtype=torch.float64)
        named[param] = value
    torch.save(named, path)


def _run(crate, *args, env=None):
    env = dict(os.environ if env is None else env, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([str(crate["binary"]), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("name", CPU_FUNCTIONS)
def test_every_function_matches_eager(crate, tmp_path, name):
    fn = getattr(emit_fixture, name)
    args = CASES[name](torch.Generator().manual_seed(len(name)))
    _save_inputs(name, args, tmp_path / "in.pt")
    result = _run(crate, name, tmp_path / "in.pt", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    saved = np.load(tmp_path / "out.npz")["output"]
    with torch.no_grad():
        eager = fn(*args)
    if isinstance(eager, torch.Tensor):
        assert_parity(torch.from_numpy(saved), eager)
    else:
        ours = {bool: lambda a: bool(a), int: lambda a: int(a), float: lambda a: float(a)}[type(eager)](saved)
        assert saved.shape == ()
        assert type(ours) is type(eager) and ours == eager
        assert result.stdout == f"{name}: {type(eager).__name__} {str(eager).lower() if isinstance(eager, bool) else repr(eager)}\n"


def test_arguments_are_checked_as_annotated(crate, tmp_path):
    x, w, b = crate["inputs"]
    torch.save({"x": x.double(), "weight": w, "bias": b}, tmp_path / "f64.pt")
    result = _run(crate, "inference", tmp_path / "f64.pt")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == "run: inference failed: rextio-torch: expected a float32 tensor (argument 'x' is float64)\n"
    torch.save({"x": x[0], "weight": w, "bias": b}, tmp_path / "rank.pt")
    assert _run(crate, "inference", tmp_path / "rank.pt").stderr == (
        "run: inference failed: rextio-torch: expected rank-2 tensor, got rank 1 (argument 'x')\n"
    )
    torch.save({"x": x, "weight": w, "bias": b}, tmp_path / "cpu.pt")
    cuda = _run(crate, "cuda_head", tmp_path / "cpu.pt")
    assert cuda.returncode == 1
    assert "the inputs have no `w`" in cuda.stderr
    torch.save({"x": x, "w": w.t().contiguous(), "b": b}, tmp_path / "cuda.pt")
    assert _run(crate, "cuda_head", tmp_path / "cuda.pt").stderr.startswith(
        "run: cuda_head failed: rextio-torch: expected a cuda:0 tensor (argument 'x' is on cpu)"
    )
    torch.save({"x": torch.randn(2, 2), "n": torch.tensor(1.5)}, tmp_path / "scalar.pt")
    assert "`n` must be a 0-dim Int64 tensor" in _run(crate, "returns_int", tmp_path / "scalar.pt").stderr
    unknown = _run(crate, "nope", tmp_path / "f64.pt")
    assert unknown.returncode == 1 and "no function `nope` here; there are: inference, " in unknown.stderr
    usage = _run(crate)
    assert usage.returncode == 1 and usage.stderr.startswith("run: usage: cargo run --release --example run -- ")


def test_it_runs_without_python_or_library_paths(crate, tmp_path):
    x, w, b = crate["inputs"]
    torch.save({"x": x, "weight": w, "bias": b}, tmp_path / "in.pt")
    # No virtual environment, no LD_LIBRARY_PATH: the rpath build.rs baked in finds libtorch.
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    result = _run(crate, "inference", tmp_path / "in.pt", tmp_path / "out.npz", env=bare)
    assert result.returncode == 0, result.stderr
    assert_parity(torch.from_numpy(np.load(tmp_path / "out.npz")["output"]), emit_fixture.inference(x, w, b))
    lock = (crate["dir"] / "Cargo.lock").read_text()
    assert 'name = "pyo3"' not in lock and 'name = "tch"' in lock
    if shutil.which("ldd"):
        linked = subprocess.run(["ldd", str(crate["binary"])], capture_output=True, text=True, env=bare).stdout
        assert "libtorch_cpu" in linked
        assert "libpython" not in linked and "libtorch_python" not in linked, linked
