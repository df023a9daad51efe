"""Smoke test of the side-by-side harness (benches/side_by_side.py): a quick run of three
chain cells without torch.compile, in a subprocess (it fixes torch's thread counts), and the
structure of the JSON it writes."""

import importlib.util
import json
import subprocess
import sys

from conftest import ROOT

HARNESS = ROOT / "benches" / "side_by_side.py"
LANES = {"eager_no_grad", "eager_inference_mode", "jit_script", "ours"}


def quick_chain_ids(count):
    spec = importlib.util.spec_from_file_location("chains_for_test", ROOT / "benches" / "chains.py")
    chains = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chains)
    cells = [c for c in chains.CHAIN_CELLS if c["quick"]]
    # A 2-D result, a reduction and exact labels.
    wanted = ["linear_relu", "linear_relu_sum", "head_argmax"]
    return [next(c["id"] for c in cells if c["family"] == family) for family in wanted][:count]


def test_quick_chains_run_verifies_every_lane_and_writes_json(tmp_path):
    ids = quick_chain_ids(3)
    out = tmp_path / "side_by_side.json"
    command = [sys.executable, str(HARNESS), "--suite", "chains", "--quick", "--no-compile", "--no-onnx",
               "--rounds", "1", "--only", ",".join(ids), "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every lane's result matched eager's" in done.stdout
    assert "eager/ours" in done.stdout and "geometric mean" in done.stdout

    data = json.loads(out.read_text())
    assert data["all_verified"] is True and data["failures"] == []
    machine = data["machine"]
    for key in ("cpu_model", "cpu_count", "torch", "python", "commit"):
        assert machine.get(key), key
    assert machine["torch_threads"] == 1 and machine["torch_interop_threads"] == 1
    assert data["settings"]["torch_compile"] is False and data["settings"]["quick"] is True
    assert [lane["name"] for lane in data["lanes"]][-1] == "ours"

    suite = data["suites"]["chains"]
    assert set(suite) >= {"lanes", "cells", "families", "geomean"}
    assert set(suite["lanes"]) == LANES
    assert [cell["id"] for cell in suite["cells"]] == ids
    for cell in suite["cells"]:
        assert set(cell["lanes"]) == LANES, cell["id"]
        assert cell["rounds"] == 1
        for name, lane in cell["lanes"].items():
            assert lane["verified"]["ok"] is True, (cell["id"], name, lane["verified"])
            assert lane["median_us"] > 0 and lane["iterations"] >= 1
            assert len(lane["samples_us"]) == 1  # one round, one sample per turn in --quick
        assert set(cell["ratios"]) == {"eager_no_grad/ours", "eager_inference_mode/ours", "jit_script/ours"}
        expected = cell["lanes"]["eager_no_grad"]["median_us"] / cell["lanes"]["ours"]["median_us"]
        assert abs(cell["ratios"]["eager_no_grad/ours"] - expected) <= 1e-3 * expected
        assert cell["ours_compile_ms"] > 0
    assert set(suite["families"]) == {cell["family"] for cell in suite["cells"]}
    assert suite["geomean"]["eager_no_grad/ours"] > 0
    # Exact labels were compared exactly.
    argmax = next(c for c in suite["cells"] if c["family"] == "head_argmax")
    assert argmax["lanes"]["ours"]["verified"]["detail"] == "exactly equal"


def test_models_suite_times_compiled_cells_and_names_the_rest(tmp_path):
    """The models suite (benches/models.py): the nn.Sequential MLP, the encoder stack (a user
    module: a ModuleList of user-module blocks) and four modules of the public-models corpus
    (nanoGPT's MLP, timm's Mlp, SwiGLU and GatedMlp, as published) compile as modules and are timed against eager; a model whose code is outside the compiled surface is reported as not
    compiled with the compiler's diagnostic, left out of the means, and is not a failure."""
    out = tmp_path / "models.json"
    command = [sys.executable, str(HARNESS), "--suite", "models", "--quick", "--no-compile", "--no-onnx",
               "--rounds", "1", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(out.read_text())
    assert data["all_verified"] is True
    suite = data["suites"]["models"]
    cells = {cell["family"]: cell for cell in suite["cells"]}
    corpus = {"corpus_nanogpt_mlp", "corpus_timm_mlp", "corpus_timm_swiglu", "corpus_timm_gated_mlp",
              "corpus_vit_feedforward", "corpus_llama_mlp"}
    assert set(cells) == {"transformer_mlp", "dlrm_mlp", "text_classifier", "sequential_mlp", "encoder_stack", *corpus}
    assert all(cell["dims"] == {"batch": 16} for cell in cells.values())
    # a Sequential, a user module from its source, and the public-models corpus's modules that compile
    for module in ("sequential_mlp", "encoder_stack", "corpus_nanogpt_mlp", "corpus_timm_mlp", "corpus_timm_swiglu",
                   "corpus_timm_gated_mlp"):
        assert "not_compiled" not in cells[module], cells[module]
        assert cells[module]["lanes"]["ours"]["verified"]["ok"] is True
        assert cells[module]["ratios"]["eager_no_grad/ours"] > 0
    for family, cell in cells.items():
        if "not_compiled" in cell:
            assert cell["not_compiled"].startswith("CompileError"), (family, cell["not_compiled"])
            assert "eager_no_grad/ours" not in cell["ratios"]
            assert f"n/c {cell['id']}: not compiled by rextio_torch yet: error[RXT" in done.stdout
        else:
            assert cell["lanes"]["ours"]["verified"]["ok"] is True, family
    counted = sum(1 for cell in cells.values() if "eager_no_grad/ours" in cell["ratios"])
    assert f"models   " in done.stdout and f"over {counted} of 11 cells" in done.stdout


def test_verification_rejects_wrong_results():
    import torch
    from rextio_torch.benchmark import verify_result

    eager = torch.tensor([[0.5, 2.0], [float("nan"), float("-inf")]])
    assert verify_result(eager.clone(), eager).ok
    assert verify_result(eager + torch.tensor([[4e-6, 1.5e-5], [0.0, 0.0]]), eager).ok
    assert not verify_result(eager + torch.tensor([[2e-5, 0.0], [0.0, 0.0]]), eager).ok
    assert not verify_result(torch.tensor([[0.5, 2.0], [0.0, float("-inf")]]), eager).ok  # NaN lost
    assert not verify_result(torch.tensor([[0.5, 2.0], [float("nan"), float("inf")]]), eager).ok
    assert not verify_result(eager.double(), eager).ok
    assert not verify_result(eager[:1], eager).ok
    labels = torch.tensor([3, 1, 4])
    assert verify_result(labels.clone(), labels).detail == "exactly equal"
    assert not verify_result(torch.tensor([3, 1, 5]), labels).ok


def test_lane_orders_are_counterbalanced():
    from rextio_torch.benchmark import balanced_orders

    for n in range(1, 7):
        rows = balanced_orders(n)
        assert len(rows) == (2 * n if n % 2 and n > 1 else n)
        for position in range(n):  # every lane in every position equally often
            column = [row[position] for row in rows]
            assert all(column.count(lane) == len(rows) // n for lane in range(n))
        pairs = [(row[i], row[i + 1]) for row in rows for i in range(n - 1)]
        assert all(pairs.count((a, b)) == len(rows) // n for a in range(n) for b in range(n) if a != b)


def test_scale_suite_runs_each_shape_at_each_thread_count_and_reports_speedups(tmp_path):
    out = tmp_path / "scale.json"
    command = [sys.executable, str(HARNESS), "--suite", "scale", "--quick", "--no-compile", "--rounds", "1",
               "--scale-threads", "1,2", "--only", "linear_relu_mean/1024x256x256@*", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "parallel speedup" in done.stdout
    data = json.loads(out.read_text())
    suite = data["suites"]["scale"]
    assert [(c["id"], c["threads"]) for c in suite["cells"]] == [
        ("linear_relu_mean/1024x256x256@1t", 1), ("linear_relu_mean/1024x256x256@2t", 2)]
    assert set(suite["by_threads"]) == {"1", "2"}
    [row] = suite["speedups"]
    assert row["id"] == "linear_relu_mean/1024x256x256" and row["threads"] == 2
    assert row["speedup"]["ours"] > 0 and row["speedup"]["eager_no_grad"] > 0
    # The run's own thread setting is back to --threads after the suite.
    assert data["settings"]["threads"]["intra_op"] == 1
