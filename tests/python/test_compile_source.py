"""Which source `compile` reads, and that it compiles exactly the function object passed in:
the decorator in every spelling, redefined names, files edited after import, `exec` and
`python -c` (with `source=`), notebook cells, and the README's examples verbatim."""

import importlib
import re
import shutil
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

from conftest import ROOT, assert_parity


def linear_inputs(batch=3, k=5, n=4, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (
        torch.randn(batch, k, generator=generator),
        torch.randn(n, k, generator=generator),
        torch.randn(n, generator=generator),
    )


def is_compiled(fn):
    return type(fn).__name__ == "CompiledFunction"


def test_every_decorator_spelling_compiles_at_import(rextio):
    sys.modules.pop("decorated_fixture", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warning would fail the import
        import decorated_fixture as fx
    x, w, b = linear_inputs()
    for fn in (fx.score, fx.strict_score, fx.aliased_module, fx.aliased_function, fx.aliased_called):
        assert is_compiled(fn), fn
    assert_parity(fx.score(x, w, b), fx.score.__wrapped__(x, w, b))
    assert_parity(fx.strict_score(x, w, b), fx.strict_score.__wrapped__(x, w, b))
    assert_parity(fx.aliased_module(x), fx.aliased_module.__wrapped__(x))
    assert_parity(fx.aliased_function(x), fx.aliased_function.__wrapped__(x))
    assert_parity(fx.aliased_called(x, True), fx.aliased_called.__wrapped__(x, True))


def readme_python_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_examples_run_verbatim(rextio, tmp_path, monkeypatch, capsys):
    blocks = readme_python_blocks()
    # Each README example is written to a module file exactly as printed and imported; a new
    # example must be added to this count (and, where it defines a function, checked below).
    assert len(blocks) == 14, "update this test for the README's examples"
    # The Ray example starts a cluster: test_ray.py runs it verbatim, as a script.
    ray_example = 13
    assert "import ray" in blocks[ray_example]
    blocks = blocks[:ray_example]
    monkeypatch.syspath_prepend(str(tmp_path))
    # The ahead-of-time example builds into a cache of this test's own, in the cargo target
    # dir test_aot.py uses (kept between sessions: see there); without cargo it is skipped.
    aot = 5
    assert 'mode="aot"' in blocks[aot]
    monkeypatch.setenv("REXTIO_TORCH_CACHE_DIR", str(tmp_path / "aot-cache"))
    monkeypatch.setenv("REXTIO_TORCH_TARGET_DIR", str(ROOT / "target" / "aot-tests"))
    has_cargo = shutil.which("cargo") is not None
    modules = []
    for index, block in enumerate(blocks):
        if index == aot and not has_cargo:
            modules.append(None)
            continue
        (tmp_path / f"readme_example_{index}.py").write_text(block, encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            modules.append(importlib.import_module(f"readme_example_{index}"))
    score = modules[0].score
    assert is_compiled(score)
    for batch, k, n in [(1, 32, 32), (16, 128, 64), (3, 7, 5)]:
        x, w, b = linear_inputs(batch, k, n, seed=batch)
        assert_parity(score(x, w, b), score.__wrapped__(x, w, b))
    act = modules[1].act
    assert is_compiled(act)
    x = torch.randn(4, 6)
    assert_parity(act(x), act.__wrapped__(x))
    # The module example: an nn.Sequential compiled at its first call, parameters read at
    # every call (the weight scaled in place between the two calls).
    readme_module = modules[2]
    fast, model = readme_module.fast, readme_module.model
    assert type(fast).__name__ == "CompiledModule" and fast.__wrapped__ is model
    (compiled,) = fast.signatures.values()
    assert is_compiled(compiled)
    with torch.no_grad():
        assert_parity(readme_module.probs, model(readme_module.x))
    # The user module example: both Block members inlined, five fused ops, eager's values.
    classifier = modules[3]
    (compiled,) = classifier.fast.signatures.values()
    assert is_compiled(compiled)
    ir = compiled.optimized_ir
    assert ir.count("fused_linear") == 5 and ir.count("residual=left") == 2, ir
    x = torch.randn(8, 64)
    with torch.no_grad():
        assert_parity(classifier.fast(x), classifier.model(x))
    phase_b = modules[4].inference
    assert is_compiled(phase_b)
    g = torch.Generator().manual_seed(5)
    args = (torch.randn(4, 16, generator=g), torch.randn(16, 16, generator=g) * 0.25,
            torch.randn(16, 16, generator=g) * 0.25, torch.randn(16, generator=g), torch.randn(16, generator=g))
    for depth, phase in [(0, 0), (1, 1), (8, 0)]:
        assert_parity(phase_b(*args, depth, phase), phase_b.__wrapped__(*args, depth, phase))
    if has_cargo:
        head = modules[aot].head
        assert type(head).__name__ == "AotFunction"
        assert head.aot_build["entry"].startswith(str(tmp_path / "aot-cache" / "entries"))
        x, w, b = linear_inputs(4, 8, 3, seed=2)
        assert_parity(head(x, w, b), head.__wrapped__(x, w, b))
    # The surfaces example: compiled under the extended surface, not under the reference's.
    surfaces = modules[6]
    assert is_compiled(surfaces.probs_native)
    x = torch.randn(3, 5)
    x[0, 1], x[1, 2], x[2] = float("nan"), float("inf"), float("-inf")
    assert_parity(surfaces.probs_native(x), surfaces.probs(x))
    assert surfaces.why.surface == "reference" and not surfaces.why.compiles
    assert "\nsurface: reference\n" in str(surfaces.why)
    assert [s.code for s in surfaces.why.rejected] == ["RXTP-TORCH-015"]
    # The scalar operands example: compiled (strict), and eager's values, NaN and
    # infinities included, for temperatures down to -0.0 and a float32 subnormal.
    tempered = modules[7].tempered
    assert is_compiled(tempered)
    x = torch.randn(4, 6)
    x[0, 1], x[1, 2], x[2, 3], x[3, 0] = float("nan"), float("inf"), float("-inf"), -0.0
    for t in (0.7, 2.0, -0.0, float("inf"), 1e-40):
        assert_parity(tempered(x, t), tempered.__wrapped__(x, t))
    # math on scalars with a view and a shape read (extended surface): q @ k.t() scaled by
    # 1 / sqrt(d), d read from q's shape; eager's bits (ATen's ops, CPython's math.sqrt).
    scores = modules[8].attention_scores
    assert is_compiled(scores)
    g = torch.Generator().manual_seed(7)
    for rows, keys, d in [(1, 1, 1), (4, 6, 16), (3, 5, 7)]:
        q, k = torch.randn(rows, d, generator=g), torch.randn(keys, d, generator=g)
        q[0, 0] = float("nan") if rows > 1 else q[0, 0]
        assert_parity(scores(q, k), scores.__wrapped__(q, k))
    assert not rextio.explain(scores.__wrapped__, surface="reference").compiles
    # log_softmax and amax/amin (extended surface): compiled, the head as one fused op.
    # Attention on rank 3 (extended surface): the README's function compiled as written,
    # eager's bits (every op is ATen's), NaN included.
    attention = modules[9].attention
    attention_native = rextio.compile(attention, strict=True)
    assert is_compiled(attention_native)
    g = torch.Generator().manual_seed(8)
    q, k, v = (torch.randn(2, 5, 8, generator=g), torch.randn(2, 6, 8, generator=g),
               torch.randn(2, 6, 3, generator=g))
    q[1, 2, 3] = float("nan")
    assert_parity(attention_native(q, k, v), attention(q, k, v))
    assert not rextio.explain(attention, surface="reference").compiles
    # Rank 0 (extended surface): a loop that stops on `p.max().item() > 0.99`, decorated.
    refine = modules[10].refine
    assert is_compiled(refine)
    g = torch.Generator().manual_seed(9)
    logits = torch.randn(4, 6, generator=g) * 3
    logits[2, 1] = float("nan")
    for steps in range(5):
        assert_parity(refine(logits, steps), refine.__wrapped__(logits, steps))
    assert not rextio.explain(refine.__wrapped__, surface="reference").compiles
    extrema = modules[11]
    assert is_compiled(extrema.log_probs_native) and is_compiled(extrema.spread_native)
    assert "tail=log_softmax(dim=1)" in extrema.log_probs_native.optimized_ir
    x, w, b = linear_inputs(4, 8, 3, seed=4)
    assert_parity(extrema.log_probs_native(x, w, b), extrema.log_probs(x, w, b))
    x[1, 2] = float("nan")
    assert_parity(extrema.spread_native(x), extrema.spread(x))
    for fn in (extrema.log_probs, extrema.spread):
        assert not rextio.explain(fn, surface="reference").compiles
    # The explain example prints the claim table: cumsum not covered, so is the relu of its
    # result (its type is unknown), and one diagnostic says why.
    printed = capsys.readouterr().out
    assert printed.startswith("explain `flipped` (")
    assert "status: fallback: stays on Python: 1 error(s)" in printed
    assert "x.cumsum  not-covered  RXT030: unsupported unresolved call in native function: x.cumsum" in printed
    assert "relu      not-covered  RXT030: unsupported unresolved call in native function: relu" in printed
    assert printed.count("error[RXT030]") == 1


def test_a_redefined_name_compiles_the_object_passed_in(rextio):
    import redefined_fixture as fx

    x, w, b = linear_inputs()
    second = rextio.compile(fx.f, strict=True)
    first = rextio.compile(fx.first, strict=True)
    assert_parity(second(x, w, b), fx.f(x, w, b))  # sigmoid, the definition `f` is bound to
    assert_parity(first(x, w, b), fx.first(x, w, b))  # relu, the first definition
    assert not torch.allclose(second(x, w, b), first(x, w, b))
    assert "sigmoid" in second.optimized_ir and "relu" in first.optimized_ir


def test_a_file_edited_after_import_is_an_error_not_a_guess(rextio, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "edited_after_import.py"
    original = textwrap.dedent(
        """\
        from rextio_torch.types import TensorF32Cpu2D


        def g(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
            return x.relu()
        """
    )
    path.write_text(original, encoding="utf-8")
    module = importlib.import_module("edited_after_import")
    path.write_text(original.replace("relu", "sigmoid"), encoding="utf-8")
    import linecache

    linecache.checkcache(str(path))
    with pytest.raises(rextio.CompileError, match="edited after it was imported"):
        rextio.compile(module.g, strict=True)
    with pytest.warns(rextio.RextioFallbackWarning):
        assert rextio.compile(module.g).__wrapped__ is module.g


EXEC_SOURCE = textwrap.dedent(
    """\
    import torch.nn.functional as F
    from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D

    def h(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
        return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)
    """
)


def test_exec_without_source_says_what_to_do(rextio):
    namespace = {}
    exec(EXEC_SOURCE, namespace)
    with pytest.raises(rextio.CompileError, match=r"pass it explicitly: rextio_torch.compile\(h, source="):
        rextio.compile(namespace["h"], strict=True)


def test_exec_with_source_compiles(rextio):
    namespace = {}
    exec(EXEC_SOURCE, namespace)
    compiled = rextio.compile(namespace["h"], strict=True, source=EXEC_SOURCE)
    x, w, b = linear_inputs()
    assert_parity(compiled(x, w, b), namespace["h"](x, w, b))


def test_source_that_defines_another_function_is_refused(rextio):
    namespace = {}
    exec(EXEC_SOURCE, namespace)
    other = EXEC_SOURCE.replace("relu", "tanh")
    with pytest.raises(rextio.CompileError, match="is not the code of the function"):
        rextio.compile(namespace["h"], strict=True, source=other)
    with pytest.raises(rextio.CompileError, match="no module-level `def h`"):
        rextio.compile(namespace["h"], strict=True, source="x = 1\n")


def test_python_dash_c_with_source(rextio):
    code = "import rextio_torch, torch\n" + EXEC_SOURCE + textwrap.dedent(
        """\
        SRC = open(__import__('sys').argv[1]).read()
        try:
            rextio_torch.compile(h, strict=True)
        except rextio_torch.CompileError as e:
            print('without source:', 'source=' in str(e))
        c = rextio_torch.compile(h, strict=True, source=SRC)
        x, w, b = torch.randn(2, 5), torch.randn(4, 5), torch.randn(4)
        print('with source:', torch.allclose(c(x, w, b), h(x, w, b), rtol=1e-5, atol=1e-6))
        """
    )
    # `python -c` keeps no source; the user passes the text of the program they ran.
    result = subprocess.run(
        [sys.executable, "-c", code, "/dev/stdin"], input=code, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["without source: True", "with source: True"]


def test_notebook_cell_with_decorator_compiles(rextio):
    # As in a notebook: linecache knows the cell, its module has no file, and the cell uses
    # the decorator imported in an earlier cell.
    import linecache

    earlier = {"__name__": "__main__"}
    exec("import rextio_torch\nfrom rextio_torch import compile as jit\nimport torch.nn.functional as F\n"
         "from rextio_torch.types import TensorF32Cpu1D as V, TensorF32Cpu2D as M\n", earlier)
    for filename, decorator in [("<cell-2>", "@rextio_torch.compile"), ("<cell-3>", "@jit(strict=True)")]:
        cell = f"{decorator}\ndef cell(x: M, w: M, b: V) -> V:\n    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)\n"
        linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(compile(cell, filename, "exec"), earlier)
        assert is_compiled(earlier["cell"])
        x, w, b = linear_inputs()
        assert_parity(earlier["cell"](x, w, b), earlier["cell"].__wrapped__(x, w, b))
