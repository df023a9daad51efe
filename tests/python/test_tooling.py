"""The tooling (docs/tooling.md): `explain`, `RXT_LOG`, `REXTIO_NATIVE_MODE`,
`python -m rextio_torch` against the `rextio-torch` binary, and `doctor`."""

import json
import os
import platform
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import compile_fixture as fx
from conftest import EXAMPLES, ROOT

CLI = ROOT / "target" / "release" / "rextio-torch"
FIXTURE = ROOT / "tests" / "python" / "compile_fixture.py"
PHASE_A = EXAMPLES / "phase_a.py"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ("RXT_LOG", "REXTIO_NATIVE_MODE", "REXTIO_DISABLE_NATIVE", "LIBTORCH_BYPASS_VERSION_CHECK"):
        monkeypatch.delenv(name, raising=False)


def phase_a_args(dtype=torch.float32):
    torch.manual_seed(0)
    return torch.randn(2, 3, dtype=dtype), torch.randn(4, 3, dtype=dtype), torch.randn(4, dtype=dtype)


# ---------------------------------------------------------------------------------------
# explain


def test_explain_a_native_function(rextio):
    import phase_a

    e = rextio.explain(phase_a.inference)
    assert isinstance(e, rextio.Explanation)
    assert (e.function, e.file, e.line) == ("inference", str(PHASE_A), 8)
    assert (e.status, e.compiles, e.error, e.diagnostics) == ("native", True, None, ())
    assert e.summary == "compiles to native code (3 of 3 sites claimed)"
    assert [(s.target, s.outcome, s.rule_id, s.result_type) for s in e.sites] == [
        ("torch.nn.functional.linear", "claimed", "rextio-torch/functional-linear-f32-cpu-2d", "TensorF32Cpu2D"),
        ("relu", "claimed", "rextio-torch/tensor-relu-f32-cpu-2d", "TensorF32Cpu2D"),
        ("mean", "claimed", "rextio-torch/tensor-mean-dim1-f32-cpu-2d", "TensorF32Cpu1D"),
    ]
    assert list(e.stages) == ["parsed", "fused", "dce", "optimized"]
    assert "relu %3" in e.ir("parsed") and "fused_linear" not in e.ir("parsed")
    assert "fused_linear" in e.ir("fused") and e.ir() == e.ir("optimized")
    # The same compiler as `compile` and `rextio-torch dump-ir`: the same IR text.
    compiled = rextio.compile(phase_a.inference, strict=True)
    assert e.ir("parsed") == compiled.parsed_ir and e.ir() == compiled.optimized_ir
    for stage in e.stages:
        out = subprocess.run([str(CLI), "dump-ir", str(PHASE_A), "--stage", stage], capture_output=True, text=True)
        assert out.stdout == e.stages[stage]
    text = str(e)
    assert text.startswith(f"explain `inference` ({PHASE_A}:8)\nstatus: native: compiles to native code")
    assert "  9:12      call  torch.nn.functional.linear  claimed  rextio-torch/functional-linear-f32-cpu-2d" in text
    assert "diagnostics: none\n" in text and "\nIR after `fused`:\nfn inference(" in text
    # The table is `check`'s, site for site.
    report = rextio.check(str(PHASE_A))
    assert [vars(s) for s in e.sites] == report["functions"][0]["sites"]
    assert e.to_dict()["sites"][0]["target"] == "torch.nn.functional.linear"
    with pytest.raises(KeyError, match="no IR after stage 'lowered'"):
        e.ir("lowered")


def test_explain_a_function_that_stays_on_python_says_why(rextio):
    e = rextio.explain(fx.rejected)
    assert (e.status, e.compiles, e.line) == ("fallback", False, 8)
    (site,) = e.sites
    assert (site.target, site.outcome, site.code) == ("x.relu", "rejected", "RXTP-TORCH-002")
    assert site.message == "rextio-torch cannot lower 'x.relu': only zero-argument .relu() is supported"
    assert e.rejected == (site,) and e.claimed == ()
    (d,) = e.diagnostics
    assert (d.code, d.severity, d.line, d.column) == ("RXTP-TORCH-002", "error", 9, 14)
    assert d.message == site.message
    assert f"{FIXTURE}:9:14" in d.rendered and d.rendered in e.rendered
    assert e.stages == {}
    # `error` is exactly what compile(strict=True) raises.
    with pytest.raises(rextio.CompileError) as raised:
        rextio.compile(fx.rejected, strict=True)
    assert e.error == str(raised.value)
    text = str(e)
    assert "status: fallback: stays on Python: 1 error(s), listed under diagnostics (0 of 1 sites claimed)" in text
    assert "rejected  RXTP-TORCH-002: rextio-torch cannot lower 'x.relu'" in text
    assert "error[RXTP-TORCH-002]" in text and "IR: none (nothing was lowered)" in text


def test_explain_not_covered_and_not_candidate(rextio):
    e = rextio.explain(fx.not_covered)
    assert e.status == "fallback"
    assert [(s.outcome, s.code) for s in e.not_covered] == [("not-covered", "RXT030")]
    e = rextio.explain(fx.plain)
    assert e.status == "not-candidate" and e.sites == ()
    assert [d.code for d in e.diagnostics] == ["RXT001"]
    assert "uses no rextio_torch.types annotation" in e.error
    e = rextio.explain(fx.with_loop)
    assert e.status == "not-candidate"
    assert [(d.code, d.severity) for d in e.diagnostics] == [("RXT010", "warning")]


def test_explain_takes_what_compile_returns_and_source(rextio):
    import phase_a

    compiled = rextio.compile(phase_a.inference, strict=True)
    assert rextio.explain(compiled).compiles
    with pytest.warns(rextio.RextioFallbackWarning):
        stays = rextio.compile(fx.rejected)
    assert rextio.explain(stays).status == "fallback"

    src = textwrap.dedent(
        """\
        from rextio_torch.types import TensorF32Cpu2D

        def act(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
            return x.tanh()
        """
    )
    namespace = {}
    exec(src, namespace)
    e = rextio.explain(namespace["act"], source=src)
    assert (e.status, e.line) == ("native", 3) and e.file.startswith("<source of ")
    assert "tanh" in e.ir("parsed")
    # Without source= there is nothing to analyse, and the explanation says why.
    e = rextio.explain(namespace["act"])
    assert (e.status, e.compiles, e.sites) == ("unlocated", False, ())
    assert "pass it explicitly" in e.error and "status: unlocated" in str(e)


def test_explain_nested_and_not_a_function(rextio):
    from rextio_torch.types import TensorF32Cpu2D

    def inner(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x.relu()

    e = rextio.explain(inner)
    assert e.status == "unlocated" and "is nested" in e.error
    with pytest.raises(rextio.CompileError, match="got the class"):
        rextio.explain(torch.nn.Linear)


# ---------------------------------------------------------------------------------------
# RXT_LOG


def test_rxt_log_unset_or_empty_prints_nothing(rextio, monkeypatch, capsys):
    import phase_a

    rextio.compile(phase_a.inference, strict=True)
    monkeypatch.setenv("RXT_LOG", "")
    rextio.compile(phase_a.inference, strict=True)
    assert capsys.readouterr() == ("", "")


def headers(text):
    return [line for line in text.splitlines() if line.startswith("[rextio_torch ")]


def test_rxt_log_ir(rextio, monkeypatch, capsys):
    import phase_a

    monkeypatch.setenv("RXT_LOG", "ir")
    compiled = rextio.compile(phase_a.inference, strict=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"[rextio_torch ir] `inference`: IR after parsing ({PHASE_A}:8)\n" + compiled.parsed_ir


def test_rxt_log_passes_and_codegen(rextio, monkeypatch, capsys):
    import phase_a

    monkeypatch.setenv("RXT_LOG", "passes, CODEGEN")
    rextio.compile(phase_a.inference, strict=True)
    err = capsys.readouterr().err
    assert headers(err) == [
        "[rextio_torch passes] `inference`: IR after pass `fused`",
        "[rextio_torch passes] `inference`: IR after pass `dce`",
        "[rextio_torch codegen] `inference`: emitted Rust source",
    ]
    fused = err.split("\n", 1)[1].split("[rextio_torch")[0]
    assert fused == rextio.explain(phase_a.inference).ir("fused")
    rust = err.split("emitted Rust source\n", 1)[1]
    assert "pub fn inference_native(" in rust and "exec::linear(" in rust
    monkeypatch.setenv("RXT_LOG", "all")
    rextio.compile(phase_a.inference, strict=True)
    assert [h.split("]")[0] for h in headers(capsys.readouterr().err)] == [
        "[rextio_torch ir",
        "[rextio_torch passes",
        "[rextio_torch passes",
        "[rextio_torch codegen",
    ]


def test_rxt_log_for_a_function_that_stays_on_python(rextio, monkeypatch, capsys):
    monkeypatch.setenv("RXT_LOG", "ir,codegen")
    with pytest.warns(rextio.RextioFallbackWarning):
        rextio.compile(fx.rejected)
    why = "rextio-torch cannot compile `rejected`; it stays on Python"
    assert headers(capsys.readouterr().err) == [
        f"[rextio_torch ir] `rejected`: nothing to log: {why}",
        f"[rextio_torch codegen] `rejected`: nothing to log: {why}",
    ]


def test_rxt_log_unknown_names_warn_once_naming_the_valid_ones(rextio, monkeypatch, capsys):
    import phase_a

    monkeypatch.setenv("RXT_LOG", "ir,graphs,Bogus")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rextio.compile(phase_a.inference, strict=True)
        rextio.compile(phase_a.inference, strict=True)
    mine = [w for w in caught if "RXT_LOG" in str(w.message)]
    assert len(mine) == 1
    assert mine[0].category is UserWarning
    assert str(mine[0].message) == (
        "RXT_LOG: unknown names 'graphs', 'Bogus' ignored; valid names: ir, passes, codegen, all (comma-separated)"
    )
    # The known name still logs, on both compiles.
    assert len(headers(capsys.readouterr().err)) == 2


# ---------------------------------------------------------------------------------------
# REXTIO_NATIVE_MODE


def test_native_mode_is_read_on_every_call(rextio, monkeypatch):
    import phase_a

    compiled = rextio.compile(phase_a.inference, strict=True)
    x, w, b = phase_a_args(torch.float64)  # Python computes float64; native code refuses it
    with pytest.raises(ValueError, match="expected a float32 tensor"):
        compiled(x, w, b)
    for fallback in ("fallback", " FallBack "):
        monkeypatch.setenv("REXTIO_NATIVE_MODE", fallback)
        result = compiled(x, w, b)
        assert result.dtype == torch.float64
        assert torch.equal(result, phase_a.inference(x, w, b))
        assert torch.equal(compiled(x=x, weight=w, bias=b), result)
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "native")
    with pytest.raises(ValueError, match="expected a float32 tensor"):
        compiled(x, w, b)
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "auto")
    x32, w32, b32 = phase_a_args()
    assert compiled(x32, w32, b32).dtype == torch.float32
    # Set inside the process after compiling: the next call sees it.
    os.environ["REXTIO_NATIVE_MODE"] = "fallback"
    assert compiled(x, w, b).dtype == torch.float64


def test_native_mode_fallback_still_compiles(rextio, monkeypatch):
    import phase_a

    monkeypatch.setenv("REXTIO_NATIVE_MODE", "fallback")
    compiled = rextio.compile(phase_a.inference, strict=True)
    assert type(compiled).__name__ == "CompiledFunction"
    monkeypatch.delenv("REXTIO_NATIVE_MODE")
    x, w, b = phase_a_args(torch.float64)
    with pytest.raises(ValueError, match="expected a float32 tensor"):
        compiled(x, w, b)


def test_disable_native_means_fallback(rextio, monkeypatch):
    import phase_a

    compiled = rextio.compile(phase_a.inference, strict=True)
    x, w, b = phase_a_args(torch.float64)
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "native")
    for truthy in ("1", "true", "YES", "on"):
        monkeypatch.setenv("REXTIO_DISABLE_NATIVE", truthy)
        assert compiled(x, w, b).dtype == torch.float64
    monkeypatch.setenv("REXTIO_DISABLE_NATIVE", "0")
    with pytest.raises(ValueError, match="float32"):
        compiled(x, w, b)


def test_an_invalid_native_mode_is_an_error_naming_the_valid_values(rextio, monkeypatch):
    import phase_a

    compiled = rextio.compile(phase_a.inference, strict=True)
    with pytest.warns(rextio.RextioFallbackWarning):
        stays = rextio.compile(fx.rejected)
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "nativ")
    message = (
        'REXTIO_NATIVE_MODE="nativ" is not a valid mode; valid values: auto, native, fallback '
        "(unset or empty means auto)"
    )
    for fn in (compiled, stays):
        with pytest.raises(ValueError) as raised:
            fn(*phase_a_args())
        assert str(raised.value) == message


def test_a_function_that_stays_on_python_under_each_mode(rextio, monkeypatch):
    with pytest.warns(rextio.RextioFallbackWarning):
        stays = rextio.compile(fx.rejected)
    x = torch.randn(2, 2)
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "native")
    with pytest.raises(RuntimeError) as raised:
        stays(x)
    assert str(raised.value) == (
        "native mode requires generated native function: rejected (REXTIO_NATIVE_MODE=native, but it "
        "stays on Python: rextio-torch cannot compile `rejected`; it stays on Python)"
    )
    for mode in ("auto", "fallback", ""):
        monkeypatch.setenv("REXTIO_NATIVE_MODE", mode)
        with pytest.raises(TypeError):  # the original runs: x.relu(x) is a TypeError in torch
            stays(x)
    # Compiling it again compiles the original again (and warns again).
    with pytest.warns(rextio.RextioFallbackWarning):
        again = rextio.compile(stays)
    assert again.__wrapped__ is fx.rejected


# ---------------------------------------------------------------------------------------
# python -m rextio_torch mirrors rextio-torch


def both(*args, cwd=None):
    py = subprocess.run([sys.executable, "-m", "rextio_torch", *map(str, args)], capture_output=True, text=True, cwd=cwd)
    cli = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    return py, cli


@pytest.mark.parametrize(
    "args,code",
    [
        (["check", PHASE_A], 0),
        (["check", FIXTURE], 1),
        (["check", FIXTURE, "--format", "json"], 1),
        (["dump-ir", PHASE_A, "--stage", "fused"], 0),
        (["dump-ir", PHASE_A, "--format", "dot"], 0),
        (["dump-ir", FIXTURE, "--function", "rejected"], 1),
        (["dump-ir", FIXTURE], 0),
        (["check", "/nonexistent/model.py"], 2),
        (["check", PHASE_A, "--bogus"], 2),
        (["frobnicate"], 2),
        ([], 2),
        (["build", FIXTURE, "--function", "rejected"], 1),
        (["build"], 2),
        (["--version"], 0),
        (["--help"], 0),
        (["dump-ir", "--help"], 0),
    ],
)
def test_python_m_mirrors_the_cli(args, code):
    py, cli = both(*args)
    assert (py.returncode, cli.returncode) == (code, code), (py.stderr, cli.stderr)
    assert py.stdout.replace("python -m rextio_torch", "rextio-torch") == cli.stdout
    assert py.stderr.replace("python -m rextio_torch", "rextio-torch") == cli.stderr
    if args and args[0] in ("check", "dump-ir") and code != 2:
        assert py.stdout or py.stderr


def test_python_m_usage_names_itself():
    py, _ = both("--help")
    assert "Usage: python -m rextio_torch <COMMAND>" in py.stdout
    for command in ("check", "dump-ir", "emit", "build", "doctor"):
        assert f"\n  {command} " in py.stdout


def test_python_m_emit_writes_the_same_project(tmp_path):
    py = subprocess.run(
        [sys.executable, "-m", "rextio_torch", "emit", str(PHASE_A), "-o", str(tmp_path / "a"), "--module", "m"],
        capture_output=True, text=True,
    )
    cli = subprocess.run([str(CLI), "emit", str(PHASE_A), "-o", str(tmp_path / "b"), "--module", "m"],
                         capture_output=True, text=True)
    assert py.returncode == cli.returncode == 0, py.stderr
    assert py.stdout == f"wrote m (1 function(s)) to {tmp_path / 'a'}\n"
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b and files_a
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_python_m_build_says_what_cannot_be_built(tmp_path):
    # Nothing of the file compiles natively: exit 1 before any cargo runs (test_aot.py builds).
    py, cli = both("build", FIXTURE, "--function", "rejected", "--cache-dir", tmp_path)
    assert py.returncode == cli.returncode == 1
    assert py.stdout == cli.stdout == ""
    assert "rejected" in py.stderr and py.stderr == cli.stderr
    assert not (tmp_path / "entries").exists()


# ---------------------------------------------------------------------------------------
# doctor

CHECKS = ["python", "torch", "libtorch (tch)", "version check", "cargo", "rustc", "rextio_torch", "rextio",
          "CUDA", "CPU SIMD", "platform"]


def expected_cell():
    system = {"Linux": "linux", "Darwin": "macos", "Windows": "windows"}.get(platform.system(), platform.system().lower())
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "i686": "x86", "armv7l": "arm32"}
    return f"{system}-{arch.get(machine, machine)}"


def test_doctor_reports_this_interpreter(rextio):
    report = rextio.doctor()
    assert isinstance(report, rextio.DoctorReport)
    assert [c.name for c in report.checks] == CHECKS
    python = report.check("python")
    assert python.level == "ok"
    assert python.found == f"CPython {platform.python_version()} at {sys.executable} (this interpreter)"
    assert report.check("torch").found == torch.__version__
    assert report.check("torch").level == "ok"
    assert report.check("rextio_torch").found == f"{rextio.__version__} (imports)"
    assert report.check("version check").level == "ok"
    cuda = report.check("CUDA")
    assert (cuda.level == "ok") == torch.cuda.is_available()
    simd = report.check("CPU SIMD").found
    assert [part.split()[0] for part in simd.split(", ")] == ["avx2", "fma", "avx512f", "neon"]
    if platform.machine() == "x86_64":
        assert "neon n/a" in simd
    assert report.platform["key"] == expected_cell()
    assert report.check("platform").found.startswith(expected_cell() + ": ")
    # Levels, codes, fixes and the exit code agree.
    for check in report.checks:
        assert (check.code is None) == (check.fix is None) == (check.level == "ok"), check
        if check.code:
            assert check.code.startswith("RXD") and check.fix.endswith(".")
    assert report.ready == (report.problems == ())
    assert report.exit_code == (0 if report.ready else 1)
    verdict = str(report).splitlines()[-1]
    assert verdict == ("ready: everything required is there (exit 0)" if report.ready else verdict)
    assert str(report) == report.text and report.to_dict()["exit_code"] == report.exit_code
    # The facts behind it are this interpreter's.
    assert report.facts["python"]["executable"] == sys.executable
    assert report.facts["libtorch"]["source"] == "linked"


def test_doctor_finds_the_bypass_and_a_missing_python(rextio, monkeypatch):
    monkeypatch.setenv("LIBTORCH_BYPASS_VERSION_CHECK", "1")
    report = rextio.doctor()
    check = report.check("version check")
    assert (check.level, check.code) == ("problem", "RXD008")
    assert not report.ready and report.exit_code == 1
    assert "RXD008" in str(report).splitlines()[-1]
    monkeypatch.delenv("LIBTORCH_BYPASS_VERSION_CHECK")
    report = rextio.doctor(python="/nonexistent/python3.11")
    assert (report.check("python").code, report.check("python").level) == ("RXD001", "problem")
    assert report.exit_code == 1


def test_doctor_when_the_extension_does_not_load(rextio, monkeypatch):
    def broken():
        raise ImportError("libtorch_cpu.so: cannot open shared object file")

    monkeypatch.setattr(rextio, "_load_native", broken)
    report = rextio.doctor()
    assert (report.ready, report.exit_code) == (False, 1)
    (check,) = report.checks
    assert (check.code, check.level) == ("RXD011", "problem")
    assert "ImportError: libtorch_cpu.so" in check.found
    assert str(report).endswith("not ready: 1 problem(s): RXD011 (exit 1)\n")


def test_doctor_command_line_in_python_matches_the_function(rextio):
    out = subprocess.run([sys.executable, "-m", "rextio_torch", "doctor", "--format", "json"],
                         capture_output=True, text=True)
    data = json.loads(out.stdout)
    assert out.returncode == data["exit_code"]
    assert [c["name"] for c in data["checks"]] == CHECKS
    assert data["facts"]["python"]["executable"] == sys.executable
    text = subprocess.run([sys.executable, "-m", "rextio_torch", "doctor"], capture_output=True, text=True)
    assert text.returncode == out.returncode
    assert text.stdout.startswith("rextio-torch doctor: what the project needs, what this host has\n")


# ---------------------------------------------------------------------------------------
# import stays light


def test_import_loads_neither_torch_nor_the_tooling():
    code = (
        "import sys, rextio_torch\n"
        "print(sorted(m for m in ('torch', 'subprocess', 'rextio_torch.tooling', 'rextio_torch._native', 'json')"
        " if m in sys.modules))\n"
        "rextio_torch.Explanation\n"
        "print('rextio_torch.tooling' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\nTrue\n"
