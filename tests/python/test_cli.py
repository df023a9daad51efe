"""The `rextio-torch` command: check (exit codes, JSON contract), dump-ir, emit."""

import json
import subprocess

import pytest

from conftest import EXAMPLES, ROOT

CLI = ROOT / "target" / "release" / "rextio-torch"
FIXTURE = ROOT / "tests" / "python" / "compile_fixture.py"


def run(*args):
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)


def test_check_native_file_exits_0():
    out = run("check", EXAMPLES / "phase_a.py")
    assert out.returncode == 0, out.stderr
    assert "inference: native (3/3 sites claimed)" in out.stdout


def test_check_with_rejected_sites_exits_1_and_renders_diagnostics():
    out = run("check", FIXTURE)
    assert out.returncode == 1
    assert "error[RXTP-TORCH-002]: rextio-torch cannot lower 'x.relu': only zero-argument .relu() is supported" in out.stdout
    assert "compile_fixture.py:9:" in out.stdout  # codespan location of `x.relu(x)`
    assert "rejected: fallback (stays on Python)" in out.stdout


def test_check_usage_and_io_errors_exit_2(tmp_path):
    assert run("check", tmp_path / "missing.py").returncode == 2
    assert run("check").returncode == 2
    assert run("frobnicate").returncode == 2


def test_syntax_error_is_a_diagnostic(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x:\n    return x\n")
    out = run("check", bad)
    assert out.returncode == 1
    assert "RXPY-001" in out.stdout


def test_json_contract():
    out = run("check", EXAMPLES / "phase_a.py", "--format", "json")
    assert out.returncode == 0
    report = json.loads(out.stdout)
    assert list(report) == ["file", "surface", "functions"]
    assert report["surface"] == "extended"
    (function,) = report["functions"]
    assert list(function)[:3] == ["name", "status", "sites"]
    assert function["status"] == "native"
    keys = ["line", "column", "kind", "target", "outcome", "rule_id", "result_type", "code", "message"]
    assert [list(site) for site in function["sites"]] == [keys] * 3
    first = function["sites"][0]
    assert first == {
        "line": 9,
        "column": 12,
        "kind": "call",
        "target": "torch.nn.functional.linear",
        "outcome": "claimed",
        "rule_id": "rextio-torch/functional-linear-f32-cpu-2d",
        "result_type": "TensorF32Cpu2D",
        "code": None,
        "message": None,
    }
    rejected = json.loads(run("check", FIXTURE, "--format", "json").stdout)
    site = next(f for f in rejected["functions"] if f["name"] == "rejected")["sites"][0]
    assert (site["outcome"], site["code"], site["rule_id"]) == ("rejected", "RXTP-TORCH-002", None)


@pytest.mark.parametrize("stage,needle", [("parsed", "relu %3"), ("fused", "fused_linear"), ("optimized", "fused_linear")])
def test_dump_ir_stages(stage, needle):
    out = run("dump-ir", EXAMPLES / "phase_a.py", "--stage", stage)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("fn inference(%x: tensor<f32, cpu, 2>")
    assert needle in out.stdout


def test_dump_ir_dot():
    out = run("dump-ir", EXAMPLES / "phase_a.py", "--format", "dot")
    assert out.returncode == 0
    assert out.stdout.startswith("digraph")
    assert "fused_linear" in out.stdout


def test_emit_writes_a_cargo_project(tmp_path):
    out = run("emit", EXAMPLES / "phase_a.py", "-o", tmp_path / "crate")
    assert out.returncode == 0, out.stderr
    lib = (tmp_path / "crate" / "src" / "lib.rs").read_text()
    assert "exec::linear(" in lib and "UnaryOp::Relu" in lib and "#[pymodule]" in lib
    assert (tmp_path / "crate" / "Cargo.toml").exists()
    assert run("emit", FIXTURE, "-o", tmp_path / "other", "--module", "bad-name").returncode == 2


NEGATIVE_DIMS = ROOT / "tests" / "python" / "negative_dims_fixture.py"


def test_surface_flag_chooses_the_surface():
    extended = run("check", NEGATIVE_DIMS, "--format", "json")
    assert json.loads(extended.stdout)["surface"] == "extended"
    statuses = {f["name"]: f["status"] for f in json.loads(extended.stdout)["functions"]}
    assert statuses["sum_last"] == "native" and statuses["out_of_range"] == "fallback"
    reference = run("check", NEGATIVE_DIMS, "--format", "json", "--surface", "reference")
    assert reference.returncode == 1
    report = json.loads(reference.stdout)
    assert report["surface"] == "reference"
    assert {f["status"] for f in report["functions"]} == {"fallback"}
    # dump-ir: the negative dim is normalized when claimed, so the IR has dim 1.
    ir = run("dump-ir", NEGATIVE_DIMS, "--function", "sum_last")
    assert ir.returncode == 0, ir.stderr
    refused = run("dump-ir", NEGATIVE_DIMS, "--function", "sum_last", "--surface", "reference")
    assert refused.returncode == 1 and "got dim=-1" in refused.stderr


def test_an_unknown_surface_is_a_usage_error():
    result = run("check", NEGATIVE_DIMS, "--surface", "all")
    assert result.returncode == 2
    assert "'all'" in result.stderr and "extended" in result.stderr and "reference" in result.stderr
