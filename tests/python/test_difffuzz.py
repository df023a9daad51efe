"""The differential fuzzer (`tests/fuzz/difffuzz.py`, rules in its docstring) as a test: a few
hundred random programs against eager PyTorch, every fixture of `tests/fuzz/fixtures/`
replayed, and checks that the oracle rejects wrong results and that the shrinker shrinks.

A mismatch of a kind that an open fixture records (a defect found and not yet fixed) is
tolerated here and its fixture is an expected failure; any other mismatch, and any case where
eager's own result falls outside the oracle's envelope, fails."""

import json
import math
import pathlib
import sys

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import difffuzz  # noqa: E402

FIXTURES = sorted(difffuzz.FIXTURES.glob("*.json"))
OPEN_KINDS = {
    json.loads(p.read_text())["kind"] for p in FIXTURES if json.loads(p.read_text())["status"] == "open"
}
SEED, PROGRAMS = 7, 400


def test_programs_agree_with_eager():
    summary = difffuzz.Summary()
    unexpected = []
    for i in range(PROGRAMS):
        rec = difffuzz.fuzz_one(SEED, i)
        summary.add(rec)
        if rec["status"] == "oracle-failure" or (rec["status"] == "mismatch" and rec["kind"] not in OPEN_KINDS):
            unexpected.append(f"program {i} (tests/fuzz/difffuzz.py show --seed {SEED} {i}): "
                              f"{rec['status']} {rec['kind']}: {rec['detail'][:300]}")
    print(summary.text(SEED, 0))
    assert not unexpected, "\n".join(unexpected)
    # the run exercises what it should
    assert summary.status["refused"] < PROGRAMS // 10
    assert summary.cf >= PROGRAMS // 3
    assert summary.status["agree"] >= PROGRAMS * 3 // 4


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_replays(path):
    data, case = difffuzz.load_fixture(path)
    if data["status"] == "open":
        pytest.xfail(f"open: {data['kind']}")
    outcome = difffuzz.run_case(case.source, case.values, case.colmajor, case.name)
    assert outcome.status in ("agree", "explained"), f"{outcome.status} {outcome.kind}: {outcome.detail}"


SCALE = difffuzz.HEADER + """

def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, n: int) -> TensorF32Cpu1D:
    h = F.linear(x, w, b).relu()
    for i in range(n):
        h = F.linear(h, w, b).tanh()
    return h.sum(dim=1, keepdim=False)
"""


def _values(rows=5, k=6, n=2):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(rows, k, generator=g)
    x[0, 1] = math.nan
    x[2, 0] = math.inf
    return {"x": x, "w": torch.randn(k, k, generator=g) / 3, "b": torch.randn(k, generator=g), "n": n}


def _with_bug(bug):
    def wrap(source, compiled):
        def call(*args, **kwargs):
            return bug(compiled(*args, **kwargs))
        return call
    return wrap


@pytest.mark.parametrize("name,bug", [
    ("relative 1e-3 in one element", lambda t: t.clone().index_put_((torch.tensor([3]),), t[3:4] * (1 + 1e-3))),
    ("NaN where eager is a number", lambda t: t.clone().index_put_((torch.tensor([1]),), torch.tensor([math.nan]))),
    ("a number where eager is NaN", lambda t: torch.nan_to_num(t, nan=0.0)),
    ("negative zero", lambda t: torch.where(t == 0, torch.tensor(-0.0), t)),
    ("shape", lambda t: t[:-1]),
    ("dtype", lambda t: t.double()),
])
def test_the_oracle_rejects_wrong_results(monkeypatch, name, bug):
    values = _values()
    assert difffuzz.run_case(SCALE, values).status == "agree"
    monkeypatch.setattr(difffuzz, "WRAP_COMPILED", _with_bug(bug))
    if name == "negative zero":
        values["x"] = torch.zeros(5, 6)
        values["b"] = torch.zeros(6)
    outcome = difffuzz.run_case(SCALE, values)
    assert outcome.status == "mismatch", (name, outcome)


def test_the_oracle_rejects_a_wrong_label(monkeypatch):
    src = difffuzz.HEADER + """

def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return F.linear(x, w, b).argmax(dim=1)
"""
    g = torch.Generator().manual_seed(5)
    values = {"x": torch.randn(6, 4, generator=g), "w": torch.randn(5, 4, generator=g), "b": torch.randn(5, generator=g)}
    assert difffuzz.run_case(src, values).status == "agree"
    monkeypatch.setattr(difffuzz, "WRAP_COMPILED", _with_bug(lambda t: (t + 1) % 5))
    assert difffuzz.run_case(src, values).status == "mismatch"


def test_the_oracle_accepts_ill_conditioned_sums():
    """Cancellation: eager and another summation order differ in many ulps, both inside the
    envelope."""
    src = difffuzz.HEADER + """

def f(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=1, keepdim=False)
"""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 1000, generator=g) * 1e4
    x = torch.cat([x, -x[:, :999], torch.randn(4, 1, generator=g)], dim=1)
    values = {"x": x}

    def reversed_sum(source, compiled):
        return lambda x: x.flip(1).sum(dim=1)

    eager = x.sum(dim=1)
    other = x.flip(1).sum(dim=1)
    assert not torch.equal(eager, other)
    difffuzz.WRAP_COMPILED = reversed_sum
    try:
        assert difffuzz.run_case(src, values).status == "agree"
    finally:
        difffuzz.WRAP_COMPILED = None


def test_the_shrinker_finds_the_culprit(monkeypatch):
    """A deliberate bug in `exp` inside a longer program shrinks to a few lines."""
    src = difffuzz.HEADER + """

def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, n: int) -> TensorF32Cpu2D:
    h = F.linear(x, w, b).relu()
    acc = 0
    for i in range(n):
        if i % 2 == 0:
            h = F.linear(h, w, b).tanh()
        else:
            acc = acc + i
        g = h.exp()
        h = g - h
    return torch.sigmoid(h) + b
"""

    def wrap(source, compiled):
        if ".exp()" not in source:
            return compiled
        return lambda *a, **k: compiled(*a, **k) * 1.01

    monkeypatch.setattr(difffuzz, "WRAP_COMPILED", wrap)
    case = difffuzz.Case(src, _values(n=3), [], {"x": ["B", "D"], "w": ["D", "D"], "b": ["D"]})
    outcome = difffuzz.run_case(case.source, case.values)
    assert outcome.status == "mismatch"
    small = difffuzz.shrink(case, difffuzz.outcome_key(outcome), budget_s=60)
    body = difffuzz.ast.unparse(difffuzz._function_def(small.source))
    assert ".exp()" in body and len(body.splitlines()) <= 4, body
    assert all(v.numel() <= 6 for v in small.values.values() if isinstance(v, torch.Tensor)), small.values


NEW_OPS = difffuzz.HEADER + """

def f(x: TensorF32Cpu2D, ids: TensorI64Cpu1D, table: TensorF32Cpu2D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    e = F.embedding(ids, table) + table.index_select(0, ids)
    h = F.layer_norm(x, (x.shape[-1],), w, b) + F.normalize(x, dim=1) + F.dropout(e, training=False)
    m = torch.cat([h, torch.full_like(h, 0.5)], dim=-1).max(dim=1, keepdim=True).values
    return h + m + torch.stack([w, b], 0).amin(0)
"""


def _new_op_values():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(5, 4, generator=g)
    x[1, 2] = math.nan
    x[3, 0] = -0.0
    return {"x": x, "ids": torch.tensor([0, 2, 2, 1, 0]), "table": torch.randn(3, 4, generator=g),
            "w": torch.randn(4, generator=g), "b": torch.randn(4, generator=g)}


@pytest.mark.parametrize("name,bug", [
    ("relative 1e-2 in one element", lambda t: t.clone().index_put_((torch.tensor([0]),), t[0:1] * (1 + 1e-2))),
    ("NaN where eager is a number", lambda t: t.clone().index_put_((torch.tensor([4]),), t[4:5] * math.nan)),
    ("a number where eager is NaN", lambda t: torch.nan_to_num(t, nan=0.0)),
])
def test_the_oracle_rejects_wrong_results_of_the_new_ops(monkeypatch, name, bug):
    """The joins, layers and dim ops' envelopes: eager inside, a perturbed result outside."""
    values = _new_op_values()
    fn, _, _ = difffuzz.compile_source(NEW_OPS)
    eager = fn(**difffuzz.materialize(values, []))
    env = difffuzz.envelope(fn, difffuzz.materialize(values, []))
    e = eager.double()
    assert bool(torch.where(torch.isnan(e), env.nan, env.num & (env.lo <= e) & (e <= env.hi)).all())
    assert difffuzz.run_case(NEW_OPS, values).status == "agree"
    monkeypatch.setattr(difffuzz, "WRAP_COMPILED", _with_bug(bug))
    outcome = difffuzz.run_case(NEW_OPS, values)
    assert outcome.status == "mismatch", (name, outcome)


def test_max_indices_are_labels_and_ids_round_trip(monkeypatch):
    src = difffuzz.HEADER + """

def f(x: TensorF32Cpu2D, ids: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return torch.min(x.index_select(1, ids), 1)[1]
"""
    values = {"x": torch.tensor([[3.0, 1.0, 2.0], [0.0, math.nan, -1.0]]), "ids": torch.tensor([2, 0, 1, 1])}
    assert difffuzz.run_case(src, values).status == "agree"
    monkeypatch.setattr(difffuzz, "WRAP_COMPILED", _with_bug(lambda t: (t + 1) % 4))
    assert difffuzz.run_case(src, values).status == "mismatch"
    # an id out of range: both sides raise
    monkeypatch.setattr(difffuzz, "WRAP_COMPILED", None)
    assert difffuzz.run_case(src, {**values, "ids": torch.tensor([3])}).status == "agree"
    ids = values["ids"]
    assert torch.equal(difffuzz.tensor_from_json(difffuzz.tensor_to_json(ids)), ids)
