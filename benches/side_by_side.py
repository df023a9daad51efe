"""Side-by-side harness: every workload family against eager PyTorch and its compilers, in one
process.

    python benches/side_by_side.py --suite phase-a|phase-b|scoring|chains|scale|models|all
        [--json OUT] [--rounds N] [--no-compile] [--quick] [--only PATTERNS]
        [--threads N] [--scale-threads LIST]

Lanes, each called with the cell's arguments and timed boundary-inclusive (from the Python
call to the returned tensor):

- eager_no_grad         the Python function under `torch.no_grad()` (the reference)
- eager_inference_mode  the same under `torch.inference_mode()`
- jit_script            `torch.jit.script` of the same function, under `torch.no_grad()`
- torch_compile         `torch.compile` of it (dynamo reset per cell, so every cell compiles
                        for its own shapes), under `torch.no_grad()`; its first call, which
                        compiles, is timed and reported separately (`--no-compile` drops it)
- onnxruntime           ONNX Runtime (CPUExecutionProvider, intra-op threads as torch's) on
                        `torch.onnx.export(..., dynamo=False)` of the same function (a
                        module: the module), exported once per cell for its shapes; tensors
                        go in and out through numpy without copies. The exporter traces, so
                        control flow is fixed to the path the cell's inputs take: a timing of
                        that path, checked against eager on those inputs like every lane. Only
                        when `onnxruntime` and `onnx` are installed (`pip install
                        -r benches/requirements.txt`); an export that fails is reported and
                        skipped, never counted as a failure.
- ours                  `rextio_torch.compile(fn, strict=True)`, called directly

Torch intra-op threads are fixed to `--threads` (default 1; compiled functions follow the same
setting, docs/parity.md "Threads"), inter-op threads to 1. Before any timing, every lane's result is
checked against eager's (docs/parity.md: dtype, shape, NaN and infinities as eager, finite
values within 1e-5 * max(1, |eager|), labels and argmax exactly); a lane that fails is not
timed, the table shows WRONG and the exit status is 1. Timing (rextio_torch.benchmark):
warm-up and calibration per lane, then rounds in which the lanes take turns in a
counterbalanced order (a Williams design: every lane in every position and after every other
lane equally often), two samples per turn of at least 20 ms each; the figure is the median
sample. Per suite the script prints a table of medians (us per call), the ratio
eager_no_grad/ours per cell and the geometric mean per family; `--json` writes every sample,
ratio and the machine facts (CPU, torch, commit, load) to a file that
benches/plot_side_by_side.py draws.

Suites: phase-a (examples/phase_a.py on PHASE_A_CELLS), phase-b (the seed's Phase B program
on its six cells), scoring (score_labels, score_logits and score_probabilities at batch 1, 16
and 128) -- both from tests/python/control_flow_fixture.py, which the Rust and Python tests
read too -- and chains (benches/chains.py: 12 chains x 4 shapes, batch 1-256, widths 8-512).
scale (benches/chains.py SCALE_SHAPES: linear+relu+mean, a two-layer softmax head and a wide
GELU layer at batch 1,024-8,192, widths 256-1,024) runs every shape at each thread count of
`--scale-threads` (default 1 and every core), and reports the parallel speedup (1 -> N
threads) of ours and of eager; it is not part of `all` (its torch.compile lanes compile 18
cells and its calls take milliseconds: about three minutes on two cores, against about
five for all). A torch.compile that
fails there is reported and skipped, not counted as a failure.
models (benches/models.py: a transformer MLP block, a DLRM-style MLP, a text-classifier head,
an `nn.Sequential` MLP and a user encoder stack compiled as modules, and six modules of the
public-models corpus as published, at batch 1, 16 and 256) is the code users
write beyond the reference's surface; a cell that rextio_torch does not compile yet is shown
as `n/c` with the compiler's reason, left out of the geometric means, and not a failure. It is
not part of `all` either.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import importlib.util
import io
import json
import math
import os
import pathlib
import shlex
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

import rextio_torch
from rextio_torch import types as rextio_types
from rextio_torch.benchmark import (
    PHASE_A_CELLS,
    balanced_orders,
    geomean,
    machine_facts,
    measure_lanes,
    phase_a_inputs,
    verify_result,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCHES = ROOT / "benches"

SUITES = ("phase-a", "phase-b", "scoring", "chains", "scale", "models")
# What `--suite all` runs: every suite but scale (minutes of large calls, see the docstring)
# and models (cells outside the compiled surface are reported, not timed).
ALL_SUITES = ("phase-a", "phase-b", "scoring", "chains")

# (name in the JSON, column heading, what it is)
LANES = [
    ("eager_no_grad", "eager", "eager under torch.no_grad() (the reference)"),
    ("eager_inference_mode", "inf_mode", "eager under torch.inference_mode()"),
    ("jit_script", "jit.script", "torch.jit.script, called under torch.no_grad()"),
    ("torch_compile", "t.compile", "torch.compile (default mode, dynamo reset per cell), under torch.no_grad(); warm calls"),
    ("onnxruntime", "onnxrt", "ONNX Runtime, CPUExecutionProvider, intra-op threads as torch's, on torch.onnx.export(dynamo=False) of the function; numpy in and out"),
    ("ours", "ours", "rextio_torch.compile(fn, strict=True), called directly"),
]
LABELS = {name: label for name, label, _ in LANES}
REFERENCE = "eager_no_grad"
OURS = "ours"
PEERS = [name for name, _, _ in LANES if name != OURS]

SCORING_CELLS = [("s1", 1), ("s16", 16), ("s128", 128)]
SCORING_FAMILIES = ("score_labels", "score_logits", "score_probabilities")
TOLERANCE = "dtype, shape, NaN and infinities as eager; finite values within 1e-5 * max(1, |eager|); integer results exactly"


def _load(name: str, path: pathlib.Path):
    """Import a module from a file under its own name (the compiler reads its source)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def control_flow_fixture():
    return _load("control_flow_fixture", ROOT / "tests" / "python" / "control_flow_fixture.py")


@dataclass
class Cell:
    suite: str
    family: str
    id: str
    fn: Callable
    make_args: Callable[[], tuple]
    dims: dict[str, int]
    quick: bool = True
    label: str | None = None
    # Intra-op threads of this cell (the scale suite); None: the run's `--threads`.
    threads: int | None = None

    @property
    def shape(self) -> str:
        """The shape column: the sizes joined by x (Phase B adds depth and phase)."""
        return self.label or "x".join(str(v) for v in self.dims.values())


def suite_cells(suite: str, quick: bool, scale_threads: list[int] | None = None) -> list[Cell]:
    if suite == "phase-a":
        phase_a = _load("phase_a", ROOT / "examples" / "phase_a.py")
        return [
            Cell(suite, "phase_a", cell, phase_a.inference, lambda b=b, k=k, n=n: phase_a_inputs(b, k, n),
                 {"batch": b, "in": k, "out": n})
            for cell, b, k, n in PHASE_A_CELLS
        ]
    if suite == "phase-b":
        fx = control_flow_fixture()
        return [
            Cell(suite, "phase_b", cell, fx.inference, lambda b=b, w=w, d=d, p=p: fx.phase_b_args(b, w, d, p),
                 {"batch": b, "width": w, "depth": d, "phase": p}, label=f"{b}x{w} d{d} p{p}")
            for cell, b, w, d, p in fx.PHASE_B_CELLS
        ]
    if suite == "scoring":
        fx = control_flow_fixture()
        return [
            Cell(suite, family, f"{family}/{cell}", getattr(fx, family), lambda b=b: fx.scoring_args(b),
                 {"batch": b, "features": 32, "hidden": 32, "classes": 8, "rounds": 4, "phase": 0},
                 label=f"{b}x32x32x8")
            for family in SCORING_FAMILIES
            for cell, b in SCORING_CELLS
        ]
    if suite == "chains":
        chains = _load("chains", BENCHES / "chains.py")
        cells = [
            Cell(suite, c["family"], c["id"], c["fn"],
                 lambda c=c: chains.chain_args(c["kind"], c["dims"], c["seed"]), dict(c["dims"]), c["quick"])
            for c in chains.CHAIN_CELLS
        ]
        return [c for c in cells if c.quick] if quick else cells
    if suite == "scale":
        chains = _load("chains", BENCHES / "chains.py")
        cells = [
            Cell(suite, c["family"], c["id"], c["fn"],
                 lambda c=c: chains.chain_args(c["kind"], c["dims"], c["seed"]), dict(c["dims"]), c["quick"],
                 label=f"{c['shape']}@{c['threads']}t", threads=c["threads"])
            for c in chains.scale_cells(scale_threads or [1, os.cpu_count() or 1])
        ]
        return [c for c in cells if c.quick] if quick else cells
    if suite == "models":
        models = _load("models", BENCHES / "models.py")
        cells = [
            Cell(suite, c["family"], c["id"], models.model_fn(c["name"]),
                 lambda c=c: models.model_args(c["name"], c["batch"], c["seed"]), {"batch": c["batch"]}, c["quick"])
            for c in models.MODEL_CELLS
        ]
        return [c for c in cells if c.quick] if quick else cells
    raise ValueError(f"unknown suite {suite!r}; suites: {', '.join(SUITES)}, all")


def no_grad(fn: Callable) -> Callable:
    def lane(*args):
        with torch.no_grad():
            return fn(*args)

    return lane


def inference_mode(fn: Callable) -> Callable:
    def lane(*args):
        with torch.inference_mode():
            return fn(*args)

    return lane


def jit_script(fn: Callable):
    """torch.jit.script of an annotated function: TorchScript reads annotations from the
    source, so the rextio_torch.types markers are resolved to torch.Tensor. A module is
    scripted as it is."""
    if isinstance(fn, torch.nn.Module):
        return torch.jit.script(fn)
    base = torch._jit_internal.createResolutionCallbackFromClosure(fn)

    def resolve(name: str):
        return torch.Tensor if name in rextio_types.__all__ else base(name)

    return torch.jit.script(fn, _rcb=resolve)


def onnx_available() -> str | None:
    """The ONNX Runtime version when the lane can run (onnxruntime and onnx importable)."""
    try:
        import onnx  # noqa: F401  (torch.onnx.export needs it)
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime.__version__


def onnx_runtime(fn: Callable, args: tuple) -> Callable:
    """An ONNX Runtime session for `fn` at these arguments' shapes, as a callable of the same
    arguments. Non-tensor arguments are constants of the exported graph (the same values
    every call of the cell passes)."""
    import onnxruntime as ort

    positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

    class Traced(torch.nn.Module):
        def forward(self, *tensors):
            full = list(args)
            for i, t in zip(positions, tensors):
                full[i] = t
            return fn(*full)

    module = fn if isinstance(fn, torch.nn.Module) else Traced()
    names = [f"arg{i}" for i in positions]
    buffer = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(args[i] for i in positions), buffer, dynamo=False, input_names=names)
    options = ort.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: its graph-rewrite notes are not ours to show
    session = ort.InferenceSession(buffer.getvalue(), options, providers=["CPUExecutionProvider"])
    run = session.run

    def lane(*call_args):
        outputs = run(None, {n: call_args[i].numpy() for n, i in zip(names, positions)})
        results = [torch.from_numpy(o) for o in outputs]
        return results[0] if len(results) == 1 else tuple(results)

    return lane


@dataclass
class Compiled:
    """A per-function compilation (ours or jit.script): the callable or why there is none."""

    fn: Callable | None
    ms: float
    error: str | None = None


def compile_once(cache: dict, key: Callable, make: Callable[[], Callable]) -> Compiled:
    if key not in cache:
        start = time.perf_counter()
        try:
            made = make()
            cache[key] = Compiled(made, (time.perf_counter() - start) * 1e3)
        except Exception as error:  # reported in the table and the JSON
            cache[key] = Compiled(None, (time.perf_counter() - start) * 1e3, f"{type(error).__name__}: {error}")
    return cache[key]


@dataclass
class Settings:
    rounds: int | None
    samples: int
    min_sample_s: float
    torch_compile: bool
    quick: bool
    onnx: bool = False


@dataclass
class SuiteRun:
    cells: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def run_cell(cell: Cell, settings: Settings, ours_cache: dict, script_cache: dict, failures: list[str]) -> dict[str, Any]:
    base_threads = torch.get_num_threads()
    if cell.threads is not None:
        torch.set_num_threads(cell.threads)
    try:
        record = _run_cell(cell, settings, ours_cache, script_cache, failures)
    finally:
        torch.set_num_threads(base_threads)
    if cell.threads is not None:
        record["threads"] = cell.threads
    return record


def _run_cell(cell: Cell, settings: Settings, ours_cache: dict, script_cache: dict, failures: list[str]) -> dict[str, Any]:
    args = cell.make_args()
    reference_lane = no_grad(cell.fn)
    reference = reference_lane(*args)
    record: dict[str, Any] = {"id": cell.id, "family": cell.family, "shape": cell.shape, "dims": cell.dims, "lanes": {}}

    candidates: dict[str, Callable] = {"eager_no_grad": reference_lane, "eager_inference_mode": inference_mode(cell.fn)}
    scripted = compile_once(script_cache, cell.fn, lambda: jit_script(cell.fn))
    record["jit_script_ms"] = _round(scripted.ms, 2)
    if scripted.fn is not None:
        candidates["jit_script"] = no_grad(scripted.fn)
    else:
        record["lanes"]["jit_script"] = {"error": scripted.error, "median_us": None}
    if settings.torch_compile:
        torch._dynamo.reset()
        compiled = torch.compile(cell.fn)
        candidates["torch_compile"] = no_grad(compiled)
    if settings.onnx:
        start = time.perf_counter()
        try:
            candidates["onnxruntime"] = onnx_runtime(cell.fn, args)
        except Exception as error:  # a peer that cannot export this cell: reported, skipped
            record["lanes"]["onnxruntime"] = {"error": f"{type(error).__name__}: {str(error)[:200]}", "median_us": None}
            print(f"  ({cell.id}: ONNX export failed, skipped: {type(error).__name__})", flush=True)
        record["onnx_export_ms"] = _round((time.perf_counter() - start) * 1e3, 2)
    ours = compile_once(ours_cache, cell.fn, lambda: rextio_torch.compile(cell.fn, strict=True))
    record["ours_compile_ms"] = _round(ours.ms, 2)
    if ours.fn is not None:
        candidates["ours"] = ours.fn
    else:
        record["lanes"]["ours"] = {"error": ours.error, "median_us": None}
        if cell.suite == "models":
            record["not_compiled"] = ours.error
        else:
            failures.append(f"{cell.suite}/{cell.id}: ours did not compile: {ours.error}")

    timed: dict[str, Callable] = {}
    for name, lane in candidates.items():
        start = time.perf_counter()
        try:
            result = lane(*args)
        except Exception as error:
            record["lanes"][name] = {"error": f"{type(error).__name__}: {error}", "median_us": None}
            if cell.suite == "scale" and name == "torch_compile" or name == "onnxruntime":
                print(f"  ({cell.id}: {LABELS[name]} failed, skipped: {type(error).__name__})", flush=True)
                continue
            if cell.suite == "models" and name == OURS:
                # A module compiles at its first call (per signature): a refusal shows here.
                record["not_compiled"] = f"{type(error).__name__}: {error}"
                continue
            failures.append(f"{cell.suite}/{cell.id}: {name} raised {type(error).__name__}: {error}")
            continue
        elapsed = time.perf_counter() - start
        if name == "torch_compile":
            record["torch_compile_first_call_s"] = _round(elapsed, 3)
        check = verify_result(result, reference)
        record["lanes"][name] = {"verified": check.as_dict(), "median_us": None}
        if check.ok:
            timed[name] = lane
        else:
            failures.append(f"{cell.suite}/{cell.id}: {name} differs from eager: {check.detail}")

    rounds = settings.rounds
    if rounds is None:  # whole cycles of the counterbalanced order, at least 8 rounds (quick: one cycle)
        cycle = len(balanced_orders(len(timed)))
        rounds = cycle if settings.quick else cycle * math.ceil(8 / cycle)
    record["rounds"] = rounds
    timings = measure_lanes(timed, args, rounds=rounds, samples=settings.samples, min_sample_s=settings.min_sample_s)
    for name, timing in timings.items():
        q1, q3 = timing.quartiles_us()
        record["lanes"][name].update({
            "median_us": _round(timing.median_us),
            "min_us": _round(timing.min_us),
            "q1_us": _round(q1),
            "q3_us": _round(q3),
            "iterations": timing.iterations,
            "samples_us": [_round(v) for v in timing.samples_us],
        })
    ours_us = record["lanes"].get(OURS, {}).get("median_us")
    record["ratios"] = {
        f"{peer}/ours": _round(record["lanes"][peer]["median_us"] / ours_us)
        for peer in PEERS
        if ours_us and record["lanes"].get(peer, {}).get("median_us")
    }
    return record


def _ratio_geomeans(records: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"cells": len(records), "geomean": {}, "min": {}, "max": {}}
    for peer in PEERS:
        key = f"{peer}/ours"
        values = [r["ratios"][key] for r in records if key in r["ratios"]]
        if values:
            summary["geomean"][key] = _round(geomean(values))
            summary["min"][key] = min(values)
            summary["max"][key] = max(values)
    return summary


def _first_diagnostic(message: str) -> str:
    """The first `error[...]` line of a CompileError (with the source line it points at),
    else the message's first line."""
    lines = str(message).splitlines()
    for index, line in enumerate(lines):
        if line.startswith("error["):
            source = next((l.split("│", 1)[1].strip() for l in lines[index + 1:index + 6]
                           if "│" in l and l.split("│", 1)[1].strip() and not set(l.split("│", 1)[1].strip()) <= set("^- ")), "")
            return f"{line[:200]}" + (f" (`{source[:120]}`)" if source else "")
    return lines[0][:300] if lines else ""


def _fmt_us(lane: dict[str, Any] | None, not_compiled: bool = False) -> str:
    if lane is None:
        return "-"
    if lane.get("median_us") is not None:
        return f"{lane['median_us']:.2f}"
    if not_compiled:
        return "n/c"
    if "error" in lane:
        return "ERROR"
    return "WRONG"


def _print_header(suite: str, lanes: list[str], cells: list[Cell]) -> tuple[int, int]:
    cell_width = max(4, max(len(c.id) for c in cells))
    shape_width = max(5, max(len(c.shape) for c in cells))
    print(f"\n== {suite}: medians in us per call (boundary-inclusive), eager = torch.no_grad(); "
          f"ratio = eager / ours", flush=True)
    head = f"{'cell':<{cell_width}} {'shape':>{shape_width}} " + " ".join(f"{LABELS[n]:>10}" for n in lanes)
    head += f" {'eager/ours':>10}"
    if "torch_compile" in lanes:
        head += f" {'1st call':>9}"
    print(head)
    print("-" * len(head), flush=True)
    return cell_width, shape_width


def run_suite(suite: str, cells: list[Cell], settings: Settings, failures: list[str]) -> dict[str, Any]:
    lanes = [name for name, _, _ in LANES
             if (settings.torch_compile or name != "torch_compile") and (settings.onnx or name != "onnxruntime")]
    started = time.perf_counter()
    ours_cache: dict = {}
    script_cache: dict = {}
    records = []
    cell_width, shape_width = _print_header(suite, lanes, cells)
    for cell in cells:
        record = run_cell(cell, settings, ours_cache, script_cache, failures)
        records.append(record)
        ratio = record["ratios"].get(f"{REFERENCE}/ours")
        line = f"{cell.id:<{cell_width}} {cell.shape:>{shape_width}} "
        line += " ".join(
            f"{_fmt_us(record['lanes'].get(n), n == OURS and 'not_compiled' in record):>10}" for n in lanes)
        line += f" {ratio:>9.2f}x" if ratio else f" {'-':>10}"
        if "torch_compile" in lanes:
            first = record.get("torch_compile_first_call_s")
            line += f" {first:>8.2f}s" if first is not None else f" {'-':>9}"
        print(line, flush=True)
    not_compiled = [r for r in records if "not_compiled" in r]
    for record in not_compiled:
        print(f"  n/c {record['id']}: not compiled by rextio_torch yet: {_first_diagnostic(record['not_compiled'])}")

    families: dict[str, Any] = {}
    for family in dict.fromkeys(r["family"] for r in records):
        members = [r for r in records if r["family"] == family]
        families[family] = _ratio_geomeans(members)
        families[family]["ours_compile_ms"] = members[0].get("ours_compile_ms")
        families[family]["jit_script_ms"] = members[0].get("jit_script_ms")
    total = _ratio_geomeans(records)

    peers = [p for p in PEERS if p in lanes]
    fam_width = max(6, max(len(f) for f in families))
    print(f"\n{suite}: geometric mean of peer / ours per family (higher = ours faster); "
          f"compile = rextio_torch.compile time")
    head = f"{'family':<{fam_width}} {'cells':>5} " + " ".join(f"{LABELS[p] + '/ours':>15}" for p in peers)
    head += f" {'min eager/ours':>15} {'compile':>9}"
    print(head)
    print("-" * len(head))
    for family, summary in list(families.items()) + ([("all", total)] if len(families) > 1 else []):
        line = f"{family:<{fam_width}} {summary['cells']:>5} "
        line += " ".join(
            f"{summary['geomean'][p + '/ours']:>14.2f}x" if p + "/ours" in summary["geomean"] else f"{'-':>15}" for p in peers
        )
        low = summary["min"].get(f"{REFERENCE}/ours")
        line += f" {low:>14.2f}x" if low else f" {'-':>15}"
        compile_ms = summary.get("ours_compile_ms")
        line += f" {compile_ms:>6.1f} ms" if compile_ms is not None else f" {'':>9}"
        print(line)
    elapsed = time.perf_counter() - started
    print(f"({len(records)} cells in {elapsed:.0f} s)", flush=True)
    result = {"lanes": lanes, "cells": records, "families": families, "geomean": total["geomean"], "elapsed_s": round(elapsed, 1)}
    if not_compiled:
        result["not_compiled"] = {r["id"]: r["not_compiled"] for r in not_compiled}
        print(f"({len(not_compiled)} of {len(records)} cells not compiled: left out of the geometric means)")
    by_threads: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        if "threads" in record:
            by_threads.setdefault(record["threads"], []).append(record)
    if by_threads:
        result["by_threads"] = {str(t): _ratio_geomeans(rs) for t, rs in sorted(by_threads.items())}
        print("\nper thread count: geometric mean (min) of eager / ours")
        for count, summary in result["by_threads"].items():
            key = f"{REFERENCE}/ours"
            if key in summary["geomean"]:
                print(f"  {count:>3} threads: {summary['geomean'][key]:.2f}x (min {summary['min'][key]:.2f}x) "
                      f"over {summary['cells']} cells")
    speedups = parallel_speedups(records)
    if speedups:
        result["speedups"] = speedups
        print_speedups(speedups)
    return result


def parallel_speedups(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per shape timed at several thread counts (the scale suite): each lane's median at 1
    thread over its median at N threads, for every N > 1."""
    by_shape: dict[str, dict[int, dict[str, Any]]] = {}
    for record in records:
        if "threads" in record:
            by_shape.setdefault(record["id"].rsplit("@", 1)[0], {})[record["threads"]] = record
    rows = []
    for shape, runs in by_shape.items():
        one = runs.get(1)
        for count, record in sorted(runs.items()):
            if one is None or count == 1:
                continue
            row: dict[str, Any] = {"id": shape, "threads": count, "speedup": {}}
            for lane, timing in record["lanes"].items():
                base = one["lanes"].get(lane, {}).get("median_us")
                if base and timing.get("median_us"):
                    row["speedup"][lane] = _round(base / timing["median_us"], 3)
            rows.append(row)
    return rows


def print_speedups(rows: list[dict[str, Any]]) -> None:
    width = max(5, max(len(r["id"]) for r in rows))
    print(f"\nparallel speedup: median at 1 thread / median at N threads (higher = scales better)")
    head = f"{'shape':<{width}} {'N':>3} {'ours':>7} {'eager':>7} {'t.compile':>9}"
    print(head)
    print("-" * len(head))
    for row in rows:
        sp = row["speedup"]
        cols = [sp.get(OURS), sp.get(REFERENCE), sp.get("torch_compile")]
        print(f"{row['id']:<{width}} {row['threads']:>3} " + " ".join(
            f"{v:>6.2f}x" if v else f"{'-':>7}" for v in cols[:2]) + (f" {cols[2]:>8.2f}x" if cols[2] else f" {'-':>9}"))


def inductor_cache() -> dict[str, Any]:
    """Where torch.compile keeps compiled code between processes, and whether it held any at
    the start: a warm cache makes first calls much faster than a compile from scratch."""
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        path = pathlib.Path(cache_dir())
    except Exception as error:  # private API; the figure is informative only
        return {"dir": None, "error": f"{type(error).__name__}: {error}"}
    entries = sum(1 for _ in path.iterdir()) if path.is_dir() else 0
    return {"dir": str(path), "entries_at_start": entries, "warm": entries > 0}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="side_by_side.py",
        description="Side-by-side benchmark of rextio_torch.compile against eager PyTorch, "
        "torch.jit.script and torch.compile (docs/benchmarks.md).",
    )
    parser.add_argument("--suite", action="append", default=None,
                        help="phase-a, phase-b, scoring, chains, scale, models or all (all: every suite but "
                        "scale and models; "
                        "repeat or comma-separate; default all)")
    parser.add_argument("--json", metavar="OUT", help="write every number and the machine facts to OUT")
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds of interleaved samples per cell (default: whole cycles of the "
                        "counterbalanced order, at least 8; --quick: one cycle)")
    parser.add_argument("--samples", type=int, default=None, help="samples per lane per round (default 2, --quick 1)")
    parser.add_argument("--min-sample-ms", type=float, default=None,
                        help="shortest sample in ms (default 20, --quick 5)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile lane (slow first calls)")
    parser.add_argument("--no-onnx", action="store_true",
                        help="skip the ONNX Runtime lane (it runs when onnxruntime and onnx are installed)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: one shape per chain, one sample per turn, short samples")
    parser.add_argument("--only", metavar="PATTERNS",
                        help="comma-separated fnmatch patterns over cell ids or SUITE/ID "
                        "(e.g. 't1,chains/head_*')")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (torch.set_num_threads) for every suite but scale (default 1)")
    parser.add_argument("--scale-threads", metavar="LIST", default=None,
                        help="comma-separated thread counts of the scale suite (default: 1 and every core)")
    options = parser.parse_args(argv)
    if options.threads < 1:
        parser.error("--threads must be at least 1")
    try:
        options.scale_threads = ([int(v) for v in options.scale_threads.split(",")] if options.scale_threads
                                 else sorted({1, os.cpu_count() or 1}))
    except ValueError:
        parser.error("--scale-threads takes comma-separated integers")
    suites: list[str] = []
    for entry in options.suite or ["all"]:
        for name in entry.split(","):
            name = name.strip()
            if name == "all":
                suites.extend(ALL_SUITES)
            elif name in SUITES:
                suites.append(name)
            else:
                parser.error(f"unknown suite {name!r}; choose from {', '.join(SUITES)}, all")
    options.suites = list(dict.fromkeys(suites))
    if options.rounds is not None and options.rounds < 1:
        parser.error("--rounds must be at least 1")
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    torch.set_num_threads(options.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set (or parallel work started) in this process
        pass
    settings = Settings(
        rounds=options.rounds,
        samples=options.samples or (1 if options.quick else 2),
        min_sample_s=(options.min_sample_ms or (5.0 if options.quick else 20.0)) / 1e3,
        torch_compile=not options.no_compile,
        quick=options.quick,
        onnx=not options.no_onnx and onnx_available() is not None,
    )
    patterns = [p.strip() for p in (options.only or "").split(",") if p.strip()]
    started = datetime.datetime.now(datetime.timezone.utc)
    facts = machine_facts(ROOT)
    cache = inductor_cache() if settings.torch_compile else None
    command = "python benches/side_by_side.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"side by side: {', '.join(options.suites)}; torch {torch.__version__}, threads "
          f"{torch.get_num_threads()}/{torch.get_num_interop_threads()}; {facts.get('cpu_model')}, "
          f"{facts.get('cpu_count')} cores, load {facts.get('load_average')}; commit {str(facts.get('commit'))[:12]}"
          f"{' (dirty)' if facts.get('dirty') else ''}")
    ort_version = onnx_available()
    if options.no_onnx:
        print("ONNX Runtime lane: off (--no-onnx)")
    elif ort_version is None:
        print("ONNX Runtime lane: off (onnxruntime/onnx not installed: pip install -r benches/requirements.txt)")
    else:
        print(f"ONNX Runtime lane: onnxruntime {ort_version}")
    if cache and cache.get("dir"):
        print(f"torch.compile cache {cache['dir']}: {'warm' if cache['warm'] else 'empty'} at start "
              f"({'first calls may reuse earlier compiles' if cache['warm'] else 'first calls compile from scratch'})")
    failures: list[str] = []
    suites: dict[str, Any] = {}
    for suite in options.suites:
        cells = suite_cells(suite, options.quick, options.scale_threads)
        if patterns:
            cells = [c for c in cells if any(fnmatch.fnmatchcase(c.id, p) or fnmatch.fnmatchcase(f"{suite}/{c.id}", p) for p in patterns)]
        if not cells:
            continue
        suites[suite] = run_suite(suite, cells, settings, failures)
    if not suites:
        print("no cell matches --only", file=sys.stderr)
        return 2

    print("\nsummary: geometric mean of eager_no_grad / ours per suite")
    for suite, data in suites.items():
        value = data["geomean"].get(f"{REFERENCE}/ours")
        counted = sum(1 for c in data["cells"] if f"{REFERENCE}/ours" in c["ratios"])
        print(f"  {suite:<8} {value:.2f}x over {counted} of {len(data['cells'])} cells" if value else f"  {suite:<8} -")
    if failures:
        print(f"\n{len(failures)} result(s) not verified against eager:", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
    else:
        print("every lane's result matched eager's before timing")

    if options.json:
        finished = datetime.datetime.now(datetime.timezone.utc)
        try:
            load_end = [round(v, 2) for v in os.getloadavg()]
        except OSError:
            load_end = None
        document = {
            "schema": "rextio-torch side-by-side 1",
            "command": command,
            "started": started.isoformat(timespec="seconds"),
            "finished": finished.isoformat(timespec="seconds"),
            "elapsed_s": round((finished - started).total_seconds(), 1),
            "machine": {**facts, "load_average_end": load_end},
            "settings": {
                "suites": options.suites,
                "only": patterns,
                "quick": settings.quick,
                "torch_compile": settings.torch_compile,
                "onnxruntime": ort_version if settings.onnx else None,
                "inductor_cache": cache,
                "rounds": settings.rounds or "whole cycles of the lane order, at least 8 (quick: one)",
                "samples_per_round": settings.samples,
                "min_sample_s": settings.min_sample_s,
                "order": "Williams balanced Latin square over the lanes, one row per round",
                "timing": "boundary-inclusive: r = fn(*args); del r, gc off; median of all samples",
                "tolerance": TOLERANCE,
                "threads": {"intra_op": torch.get_num_threads(), "inter_op": torch.get_num_interop_threads(),
                            "scale_suite": options.scale_threads},
            },
            "lanes": [{"name": n, "label": l, "description": d} for n, l, d in LANES],
            "suites": suites,
            "all_verified": not failures,
            "failures": failures,
        }
        path = pathlib.Path(options.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=1) + "\n")
        print(f"wrote {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
