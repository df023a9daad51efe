"""`compile(fn, mode="aot")` and `python -m rextio_torch build` with the real cargo
(docs/aot.md): the build shows progress, its function keeps the executor's call contract and
computes what the executor computes bit for bit, a second process reuses the cached build
without cargo, a second function does not compile tch again, and a build that cannot be done
is one clear error, or the in-process executor with a warning.

One cache per session (a temp dir). cargo's target dir is the repository's `target/aot-tests`
(REXTIO_TORCH_TARGET_DIR), kept between sessions: only the first session on a machine pays
tch's cold build (minutes, the `built` fixture); later sessions compile only the small emitted
crates (seconds each). The cache's own rules (key, lock, concurrent builds) are tested with
stand-ins for cargo in cli/tests/aot.rs.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import aot_fixture
from conftest import ROOT, assert_parity

AOT_TARGET = ROOT / "target" / "aot-tests"
CLI = ROOT / "target" / "release" / "rextio-torch"
FIXTURE = pathlib.Path(aot_fixture.__file__)

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")

AOT_VARS = ("REXTIO_TORCH_CACHE_DIR", "REXTIO_TORCH_CARGO", "REXTIO_TORCH_PROGRESS_SECONDS",
            "REXTIO_NATIVE_MODE", "REXTIO_DISABLE_NATIVE", "RXT_LOG")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("aot-cache")


@pytest.fixture(autouse=True)
def aot_environment(monkeypatch):
    for name in AOT_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REXTIO_TORCH_TARGET_DIR", str(AOT_TARGET))


def _compile_with_output(rextio, fn, cache, capfd, **kwargs):
    capfd.readouterr()
    compiled = rextio.compile(fn, mode="aot", cache_dir=cache, **kwargs)
    return compiled, capfd.readouterr().err


@pytest.fixture(scope="module")
def built(rextio, cache):
    """phase A built ahead of time (the session's one cold build when target/aot-tests is
    new), with what it printed on stderr."""
    saved = {name: os.environ.pop(name, None) for name in AOT_VARS + ("REXTIO_TORCH_TARGET_DIR",)}
    os.environ["REXTIO_TORCH_TARGET_DIR"] = str(AOT_TARGET)
    stderr = sys.stderr
    # Progress goes to sys.stderr: kept here, and shown as it comes (pytest -s shows it).
    tee = _Tee(stderr)
    try:
        sys.stderr = tee
        started = time.monotonic()
        fn = rextio.compile(aot_fixture.inference, mode="aot", cache_dir=cache, strict=True)
        seconds = time.monotonic() - started
    finally:
        sys.stderr = stderr
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value
    output = "".join(tee.parts)
    return {"fn": fn, "stderr": output, "seconds": seconds}


class _Tee:
    def __init__(self, stream):
        self.stream, self.parts = stream, []

    def write(self, text):
        self.parts.append(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


def phase_a_args(seed, batch=8, k=16, n=4):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, k, generator=g), torch.randn(n, k, generator=g), torch.randn(n, generator=g)


def assert_same_bits(ours, theirs):
    if not isinstance(ours, torch.Tensor):
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)
        return
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.dtype == torch.float32:
        ours, theirs = ours.contiguous().view(torch.int32), theirs.contiguous().view(torch.int32)
    assert torch.equal(ours, theirs)


def test_the_build_shows_progress_and_fills_the_cache(built, cache):
    fn, stderr = built["fn"], built["stderr"]
    info = fn.aot_build
    assert info["reused"] is False and info["cache"] == str(cache)
    assert info["cache_chosen_by"] == "cache_dir argument"
    entry = pathlib.Path(info["entry"])
    assert entry.parent == cache / "entries" and entry.name == info["key"]
    lines = stderr.splitlines()
    assert lines[0] == f"rextio-torch: building inference ahead of time (cache {cache}, entry {info['key']})"
    assert lines[1].startswith("rextio-torch: cargo build --release in ") and f"target dir {AOT_TARGET}" in lines[1]
    assert f"   Compiling {info['module']} v0.1.0" in stderr, stderr
    assert lines[-1].startswith(f"rextio-torch: built {info['module']} in "), stderr
    assert info["module"] == "rxt_aot_" + info["key"][:16]
    library = pathlib.Path(info["library"])
    assert library.parent == entry / info["module"] and library.is_file()
    assert (entry / info["module"] / "__init__.py").is_file()
    key = (entry / "key.txt").read_text()
    assert f"torch: {torch.__version__}\n" in key
    assert "functions: inference@9\n" in key and "module: (derived from the key)\n" in key
    assert not list((cache / "tmp").iterdir())


@pytest.mark.parametrize("batch,k,n", [(1, 32, 32), (8, 64, 64), (64, 128, 64), (3, 7, 5)])
def test_results_equal_the_executor_bit_for_bit(rextio, built, batch, k, n):
    x, w, b = phase_a_args(batch + k + n, batch, k, n)
    ours = built["fn"](x, w, b)
    assert_same_bits(ours, rextio.compile(aot_fixture.inference, strict=True)(x, w, b))
    assert_parity(ours, aot_fixture.inference(x, w, b))


def test_the_call_contract_is_the_executor_s(rextio, built, monkeypatch):
    fn = built["fn"]
    jit = rextio.compile(aot_fixture.inference, strict=True)
    x, w, b = phase_a_args(1)
    assert_same_bits(fn(x, weight=w, bias=b), jit(x, w, b))
    # Binding and checking errors: the same exceptions, word for word.
    for args, kwargs in [
        ((x, w), {}),
        ((x, w, b, b), {}),
        ((x, w), {"bias": b, "weight": w}),
        ((x, w, b), {"other": b}),
        ((x.double(), w, b), {}),
        ((None, w, b), {}),
        ((x[0], w, b), {}),
        ((x, w, b[:2]), {}),
    ]:
        with pytest.raises(Exception) as ours:
            fn(*args, **kwargs)
        with pytest.raises(Exception) as theirs:
            jit(*args, **kwargs)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    # No input is written; the result does not require grad.
    x.requires_grad_(True)
    copies = [t.detach().clone() for t in (x, w, b)]
    out = fn(x, w, b)
    assert not out.requires_grad
    for t, copy in zip((x, w, b), copies):
        assert torch.equal(t.detach(), copy)
    # It presents as the function, and compile/explain see through it.
    assert fn.__name__ == "inference" and fn.__qualname__ == "inference"
    assert fn.__wrapped__ is aot_fixture.inference
    assert repr(fn) == f"<rextio_torch ahead-of-time function inference ({fn.aot_build['module']})>"
    assert rextio.compile(fn) is fn
    assert rextio.explain(fn).compiles
    # REXTIO_NATIVE_MODE is read on every call: fallback runs the original (with autograd).
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "fallback")
    assert fn(x, w, b).requires_grad
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "bogus")
    with pytest.raises(ValueError, match="REXTIO_NATIVE_MODE"):
        fn(x, w, b)


def test_rxt_log_shows_what_is_built(rextio, built, cache, capfd, monkeypatch):
    monkeypatch.setenv("RXT_LOG", "codegen")
    fn, stderr = _compile_with_output(rextio, aot_fixture.inference, cache, capfd, strict=True)
    assert fn.aot_build["reused"] and fn.aot_build["key"] == built["fn"].aot_build["key"]
    assert "[rextio_torch codegen] `inference`: emitted Rust source" in stderr, stderr
    assert "pub fn inference_native(" in stderr
    with pytest.warns(rextio.RextioFallbackWarning):
        _, stderr = _compile_with_output(rextio, aot_fixture.rejected, cache, capfd)
    assert "[rextio_torch codegen] `rejected`: nothing to log" in stderr, stderr


def test_a_second_process_reuses_the_build_without_cargo(built, cache, tmp_path):
    x, w, b = phase_a_args(7)
    torch.save({"x": x, "w": w, "b": b}, tmp_path / "args.pt")
    script = textwrap.dedent(f"""
        import json, sys, time
        import torch
        sys.path.insert(0, {str(FIXTURE.parent)!r})
        import rextio_torch, aot_fixture
        started = time.monotonic()
        fn = rextio_torch.compile(aot_fixture.inference, mode="aot", cache_dir={str(cache)!r}, strict=True)
        seconds = time.monotonic() - started
        a = torch.load({str(tmp_path / "args.pt")!r})
        torch.save(fn(a["x"], a["w"], a["b"]), {str(tmp_path / "out.pt")!r})
        print(json.dumps({{"reused": fn.aot_build["reused"], "seconds": seconds, "entry": fn.aot_build["entry"]}}))
    """)
    # A cargo that cannot run: a build would fail (strict=True raises), a reuse needs none.
    env = dict(os.environ, REXTIO_TORCH_CARGO="/nonexistent/cargo")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["reused"] is True and report["entry"] == built["fn"].aot_build["entry"]
    assert "building" not in result.stderr and "Compiling" not in result.stderr, result.stderr
    assert report["seconds"] < 5, report
    assert_same_bits(torch.load(tmp_path / "out.pt"), built["fn"](x, w, b))


def test_a_pickled_function_loads_its_build_from_the_cache(built, cache, tmp_path):
    """Pickled (by value: aot_fixture binds the Python function, not the built one), a built
    function loads in another process from the same cache entry, without cargo
    (tests/python/test_pickle.py has the rest of pickling)."""
    import pickle

    fn = built["fn"]
    record = fn.__rextio_pickle__
    assert (record["mode"], record["strict"], record["cache_dir"]) == ("aot", True, str(cache))
    (tmp_path / "fn.pkl").write_bytes(pickle.dumps(fn))
    x, w, b = phase_a_args(8)
    torch.save((x, w, b), tmp_path / "args.pt")
    script = textwrap.dedent(f"""
        import json, pickle
        import torch
        with open({str(tmp_path / "fn.pkl")!r}, "rb") as handle:
            fn = pickle.load(handle)
        torch.save(fn(*torch.load({str(tmp_path / "args.pt")!r})), {str(tmp_path / "out.pt")!r})
        print(json.dumps({{"type": type(fn).__name__, "reused": fn.aot_build["reused"],
                           "entry": fn.aot_build["entry"]}}))
    """)
    env = dict(os.environ, REXTIO_TORCH_CARGO="/nonexistent/cargo")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                            timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"type": "AotFunction", "reused": True, "entry": fn.aot_build["entry"]}
    assert "building" not in result.stderr and "Compiling" not in result.stderr, result.stderr
    assert_same_bits(torch.load(tmp_path / "out.pt"), fn(x, w, b))


def test_a_second_function_does_not_compile_tch_again(rextio, built, cache, capfd):
    fn, stderr = _compile_with_output(rextio, aot_fixture.layers, cache, capfd, strict=True)
    info = fn.aot_build
    assert info["reused"] is False and info["key"] != built["fn"].aot_build["key"]
    assert f"   Compiling {info['module']} v0.1.0" in stderr, stderr
    for dependency in ("tch", "torch-sys", "pyo3", "gemm"):
        assert f"Compiling {dependency} v" not in stderr, stderr
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(4, 6, generator=g), torch.randn(6, 6, generator=g) * 0.5
    for depth in (0, 1, 4):
        ours = fn(x, w, depth, 0.5)
        assert_same_bits(ours, rextio.compile(aot_fixture.layers, strict=True)(x, w, depth, 0.5))
        assert_parity(ours, aot_fixture.layers(x, w, depth, 0.5))
    with pytest.raises(TypeError, match="^rextio-torch: expected an int"):
        fn(x, w, 1.5, 0.5)


def test_the_cuda_slice_the_executor_refuses_is_built(rextio, built, cache, capfd):
    import emit_fixture

    fn, _ = _compile_with_output(rextio, emit_fixture.cuda_head, cache, capfd, strict=True)
    cpu = (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4))
    with pytest.raises(ValueError, match=r"^rextio-torch: expected a cuda:0 tensor \(argument 'x' is on cpu\)"):
        fn(*cpu)
    if torch.cuda.is_available():
        x, w, b = (t.cuda() for t in cpu)
        ours = fn(x, w, b)
        assert ours.device == x.device
        assert_parity(ours.cpu(), emit_fixture.cuda_head(x, w, b).cpu())


FAILING_CARGO = """#!/bin/sh
i=0
while [ $i -lt 50 ]; do echo "noise $i" >&2; i=$((i+1)); done
echo "error[E0425]: cannot find value in this scope" >&2
exit 101
"""


def test_a_failing_build_is_one_error_or_the_executor_with_a_warning(rextio, tmp_path, monkeypatch):
    cargo = tmp_path / "cargo"
    cargo.write_text(FAILING_CARGO)
    cargo.chmod(0o755)
    monkeypatch.setenv("REXTIO_TORCH_CARGO", str(cargo))
    with pytest.raises(rextio.AotBuildError) as raised:
        rextio.compile(aot_fixture.inference, mode="aot", cache_dir=tmp_path / "c", strict=True)
    message = str(raised.value)
    assert isinstance(raised.value, rextio.CompileError)
    assert message.startswith("rextio-torch cannot build `inference` ahead of time: cargo build failed (exit status: 101)")
    assert message.endswith("noise 49\nerror[E0425]: cannot find value in this scope")
    assert "noise 5\n" not in message, "only the tail"
    log = pathlib.Path(re.search(r"full output in (\S+\.log);", message).group(1))
    assert log.parent == tmp_path / "c" / "failed"
    assert "noise 0\n" in log.read_text()
    with pytest.warns(rextio.RextioFallbackWarning) as warned:
        fn = rextio.compile(aot_fixture.inference, mode="aot", cache_dir=tmp_path / "c")
    assert len(warned) == 1
    assert "cargo build failed" in str(warned[0].message)
    assert str(warned[0].message).endswith("`inference` runs in the in-process executor instead")
    assert type(fn).__name__ == "CompiledFunction"
    x, w, b = phase_a_args(2)
    assert_parity(fn(x, w, b), aot_fixture.inference(x, w, b))
    assert not (tmp_path / "c" / "entries").exists() or not list((tmp_path / "c" / "entries").iterdir())


def test_without_cargo_the_function_runs_in_the_executor(rextio, tmp_path, monkeypatch):
    # PATH holds this interpreter's folder and the system's, but no cargo.
    path = os.pathsep.join([str(pathlib.Path(sys.executable).parent), "/usr/bin", "/bin"])
    if shutil.which("cargo", path=path):
        pytest.skip("cargo is installed system-wide")
    monkeypatch.setenv("PATH", path)
    with pytest.raises(rextio.AotBuildError, match=r"cargo is not available \(`cargo`: No such file or directory"):
        rextio.compile(aot_fixture.inference, mode="aot", cache_dir=tmp_path, strict=True)
    with pytest.warns(rextio.RextioFallbackWarning, match="install Rust"):
        fn = rextio.compile(aot_fixture.inference, mode="aot", cache_dir=tmp_path)
    x, w, b = phase_a_args(4)
    assert_same_bits(fn(x, w, b), rextio.compile(aot_fixture.inference, strict=True)(x, w, b))


def test_a_function_that_does_not_compile_stays_on_python(rextio, tmp_path):
    with pytest.warns(rextio.RextioFallbackWarning, match="cumsum"):
        fn = rextio.compile(aot_fixture.rejected, mode="aot", cache_dir=tmp_path)
    assert fn.__wrapped__ is aot_fixture.rejected
    with pytest.raises(rextio.CompileError) as raised:
        rextio.compile(aot_fixture.rejected, mode="aot", cache_dir=tmp_path, strict=True)
    assert not isinstance(raised.value, rextio.AotBuildError)
    assert not (tmp_path / "entries").exists(), "nothing was built"


def test_mode_must_be_jit_or_aot(rextio):
    with pytest.raises(ValueError, match="mode must be one of 'jit', 'aot', got 'eager'"):
        rextio.compile(aot_fixture.inference, mode="eager")


def test_the_cache_directory_follows_the_documented_order(rextio, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert rextio.cache_dir() == str(tmp_path / "home" / ".cache" / "rextio-torch")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert rextio.cache_dir() == str(tmp_path / "xdg" / "rextio-torch")
    monkeypatch.setenv("REXTIO_TORCH_CACHE_DIR", str(tmp_path / "env"))
    assert rextio.cache_dir() == str(tmp_path / "env")
    assert rextio.cache_dir(tmp_path / "arg") == str(tmp_path / "arg")


def test_python_m_build_writes_an_importable_package_the_binary_then_reuses(built, cache, tmp_path):
    site = tmp_path / "site"
    args = ["build", str(FIXTURE), "--function", "inference", "--module", "fast_inference",
            "--cache-dir", str(cache), "-o", str(site)]
    py = subprocess.run([sys.executable, "-m", "rextio_torch", *args], capture_output=True, text=True, timeout=900)
    assert py.returncode == 0, py.stderr
    assert py.stdout.startswith("built fast_inference (1 function(s)) in "), py.stdout
    assert "   Compiling fast_inference v0.1.0" in py.stderr, py.stderr
    assert "Compiling tch v" not in py.stderr
    # The binary probes a child interpreter: the same environment, so the same key.
    cli = subprocess.run([str(CLI), *args, "--python", sys.executable], capture_output=True, text=True, timeout=900)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.startswith("reused fast_inference (1 function(s)) in "), cli.stdout
    assert cli.stdout.splitlines()[0].split(" in ")[1] == py.stdout.splitlines()[0].split(" in ")[1]
    x, w, b = phase_a_args(11)
    torch.save((x, w, b), tmp_path / "args.pt")
    script = (
        "import sys, torch; sys.path.insert(0, sys.argv[1]); import fast_inference; "
        "x, w, b = torch.load(sys.argv[2]); torch.save(fast_inference.inference(x, w, b), sys.argv[3])"
    )
    run = subprocess.run([sys.executable, "-c", script, str(site), str(tmp_path / "args.pt"), str(tmp_path / "out.pt")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert_same_bits(torch.load(tmp_path / "out.pt"), built["fn"](x, w, b))
