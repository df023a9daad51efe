"""The public-models corpus (tests/public_models/, docs/public-models.md): modules copied
verbatim from public repositories (nanoGPT, transformers, timm, torchvision, lucidrains'
repositories, diffusers, rtdl, torchrec, DeepCTR-Torch, the PyTorch tutorial), each compiled
with `rextio_torch.compile(module)` as a user would, and compared with eager PyTorch.

For every case (tests/public_models/registry.py): the module is built small, perturbed off its
initial weights, `.eval()`ed, and called under `torch.no_grad()` eagerly and compiled, on the
first batch size twice and then on a second batch size (which plans the module again). Then:

- each result equals eager's: within the case's stated tolerance (float32 `rtol`/`atol`,
  1e-5 by default) where the module compiled, bit for bit where it ran eagerly; NaN and
  infinity positions (with the sign) and the sign of zeros that both sides give are the same;
- each call left its inputs as eager's call left them (unchanged, for all but
  DeepCTR's `PredictionLayer`, whose `output += self.bias` writes into its input);
- the observed outcome (`native`: no `RextioFallbackWarning`; `eager`) and the first fallback
  reason are the recorded ones, so a module that starts (or stops) compiling fails here until
  registry.py's `RECORDED` says so (`tests/public_models/report.py --check` prints the values).
"""

import pathlib
import sys

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "public_models"))

import registry  # noqa: E402


def assert_same_classes(actual: torch.Tensor, expected: torch.Tensor, what: str) -> None:
    """NaN where eager has NaN, each infinity with its sign, and a zero's sign where both are zero."""
    assert torch.equal(torch.isnan(actual), torch.isnan(expected)), f"{what}: NaN positions differ"
    assert torch.equal(torch.isposinf(actual), torch.isposinf(expected)), f"{what}: +inf positions differ"
    assert torch.equal(torch.isneginf(actual), torch.isneginf(expected)), f"{what}: -inf positions differ"
    zeros = (actual == 0) & (expected == 0)
    assert torch.equal(torch.signbit(actual[zeros]), torch.signbit(expected[zeros])), f"{what}: signed zeros differ"


def assert_matches_eager(actual, expected, case: registry.Case, exact: bool, what: str) -> None:
    assert isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor), what
    rtol, atol = (0.0, 0.0) if exact else (case.rtol, case.atol)
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")
    assert_same_classes(actual, expected, what)


@pytest.mark.parametrize("case", registry.CASES, ids=[c.name for c in registry.CASES])
def test_public_model(case: registry.Case) -> None:
    run = registry.run(case)
    observed = (run.outcome, run.reason)
    assert observed == (case.expected, case.reason), (
        f"{case.name} ({case.qualname} from {case.file}) now gives outcome {run.outcome!r} with first "
        f"reason {run.reason!r}; registry.RECORDED says {case.expected!r}, {case.reason!r}: update it "
        f"(and docs/public-models.md: tests/public_models/report.py)")
    exact = run.outcome == registry.EAGER  # a fallback runs the module itself
    for i, ((batch, seed), got, want) in enumerate(zip(registry.CALLS, run.compiled, run.eager)):
        what = f"{case.name} call {i + 1} (batch {batch}, seed {seed})"
        assert_matches_eager(got, want, case, exact, what)
        for j, (after, eager_after) in enumerate(zip(run.compiled_inputs[i], run.eager_inputs[i])):
            assert torch.equal(after, eager_after), f"{what}: input {j} is left otherwise than eager leaves it"
        # the inputs eager leaves are the fresh ones, except where the module writes into them
        fresh = registry.sample(case, batch, seed)
        if case.name != "deepctr_prediction_layer":
            assert all(torch.equal(a, f) for a, f in zip(run.compiled_inputs[i], fresh)), f"{what}: input mutated"


def test_recorded_table_is_consistent() -> None:
    assert len(registry.CASES) >= 40
    assert set(registry.RECORDED) == set(registry.BY_NAME), "RECORDED has one row per case"
    for case in registry.CASES:
        if case.expected == registry.NATIVE:
            assert case.blocker is None and case.reason is None, case.name
        else:
            assert case.expected == registry.EAGER and case.blocker in registry.BLOCKERS and case.reason, case.name
        assert case.source in registry.SOURCES, case.name
        assert (registry.HERE / case.file).is_file(), case.name


def test_each_copied_file_names_its_source_and_licence() -> None:
    notice = (registry.HERE / "NOTICE.md").read_text()
    for path in sorted(registry.HERE.glob("*.py")):
        if path.name in ("registry.py", "report.py"):
            continue
        head = path.read_text().split("\n\n", 1)[0]
        assert "copied verbatim from" in head and "Licence:" in head and "Copyright" in head, path.name
        assert f"`{path.name}`" in notice, f"NOTICE.md does not list {path.name}"
    for repo, licence in registry.SOURCES.values():
        assert repo in notice, f"NOTICE.md does not name {repo}"


def test_docs_table_matches_the_recorded_outcomes() -> None:
    """docs/public-models.md states the coverage and lists every case under its outcome (native)
    or blocker, with the recorded first reason: regenerate it with report.py when RECORDED changes."""
    doc = (ROOT / "docs" / "public-models.md").read_text()
    native = [c for c in registry.CASES if c.expected == registry.NATIVE]
    assert f"**{len(native)} of {len(registry.CASES)} native**" in doc
    sections = doc.split("\n### ")
    for case in registry.CASES:
        heading = "Native" if case.expected == registry.NATIVE else f"Eager: {case.blocker} ("
        section = next((s for s in sections if s.startswith(heading)), "")
        row = next((line for line in section.splitlines() if line.startswith(f"| `{case.name}` |")), None)
        assert row is not None, f"{case.name} is not listed under {heading!r} in docs/public-models.md"
        if case.reason is not None:
            assert f"`{case.reason.replace('|', chr(92) + '|')}`" in row, f"{case.name}: the reason in the docs is stale"
