"""Compiled functions pickle the way cloudpickle pickles Python functions (docs/scale.md): by
reference where their module binds them (the decorator), by value (source text, name, line,
options) otherwise, recompiled once per process on load. They cross `pickle`, cloudpickle,
multiprocessing pools under every start method, ProcessPoolExecutor and a fork taken after
calls, and compute there what they compute here."""

import concurrent.futures
import copy
import importlib
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.nn.functional as F

import pickle_fixture

SOURCE = textwrap.dedent("""\
    import torch.nn.functional as F
    from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


    def head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
        return F.linear(x, w, b).tanh().sum(dim=1)
""")

TEMP_MODULE = textwrap.dedent("""\
    import torch.nn.functional as F

    import rextio_torch
    from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


    @rextio_torch.compile(strict=True)
    def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
        return F.linear(x, w, b).relu().mean(dim=1)


    @rextio_torch.compile
    def flipped(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x.cumsum(dim=1).relu()
""")


def inputs(batch=6, k=64, n=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, k, generator=g), torch.randn(n, k, generator=g), torch.randn(n, generator=g)


def eager_score(x, w, b):
    return F.linear(x, w, b).relu().mean(dim=1)


def is_compiled(fn):
    return type(fn).__name__ in ("CompiledFunction", "AotFunction")


@pytest.fixture(scope="module")
def head(rextio):
    """`head` compiled from `source=` (its code comes from `exec`): pickled by value."""
    namespace = {"__name__": "pickled_by_value"}
    exec(builtins_compile(SOURCE, "<pickle test>"), namespace)
    return rextio.compile(namespace["head"], source=SOURCE, strict=True)


def builtins_compile(text, label):
    import builtins

    return builtins.compile(text, label, "exec")


def eager_head(x, w, b):
    return F.linear(x, w, b).tanh().sum(dim=1)


@pytest.fixture()
def temp_module(rextio, tmp_path, monkeypatch):
    """TEMP_MODULE as an importable module file on sys.path (fresh per test)."""
    name = f"pickle_temp_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TEMP_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rextio.RextioFallbackWarning)
        module = importlib.import_module(name)
    yield module
    sys.modules.pop(name, None)


def run_loader(tmp_path, payload, args, *, path=(), env=None, loader="pickle"):
    """Loads `payload` in a fresh interpreter (sys.path: `path` only, besides the standard
    one), calls it on `args`; returns (type name, result)."""
    (tmp_path / "payload.bin").write_bytes(payload)
    torch.save(args, tmp_path / "args.pt")
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {list(map(str, path))!r}
        import {loader} as loader, torch
        with open({str(tmp_path / "payload.bin")!r}, "rb") as handle:
            fn = loader.load(handle)
        args = torch.load({str(tmp_path / "args.pt")!r})
        torch.save((type(fn).__name__, fn(*args)), {str(tmp_path / "out.pt")!r})
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, **(env or {})), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return torch.load(tmp_path / "out.pt")


# --- pickle, in process and in a fresh one ---------------------------------------------------------

def test_a_decorated_module_function_pickles_by_reference(temp_module, tmp_path):
    payload = pickle.dumps(temp_module.score)
    assert b"def score" not in payload and temp_module.__name__.encode() in payload
    assert len(payload) < 200
    assert pickle.loads(payload) is temp_module.score
    assert copy.copy(temp_module.score) is temp_module.score  # copy follows the same rules
    args = inputs()
    with torch.no_grad():
        here = temp_module.score(*args)
        torch.testing.assert_close(here, eager_score(*args))
    kind, there = run_loader(tmp_path, payload, args, path=[tmp_path])
    assert kind == "CompiledFunction"
    assert torch.equal(there, here)


def test_a_function_from_source_pickles_by_value_and_loads_once(rextio, head, tmp_path):
    from rextio_torch import _pickle

    payload = pickle.dumps(head)
    assert SOURCE.encode() in payload  # the source text travels
    loaded = pickle.loads(payload)
    assert is_compiled(loaded) and loaded is not head
    # Cached per process: the same record loads as the same object, compiled once.
    assert pickle.loads(payload) is loaded and pickle.loads(pickle.dumps(head)) is loaded
    assert pickle.loads(pickle.dumps(loaded)) is loaded  # a loaded function pickles by value again
    assert copy.deepcopy(head) is loaded
    assert sum(1 for key in _pickle._loaded if key[1] == "head") == 1
    args = inputs(seed=1)
    with torch.no_grad():
        torch.testing.assert_close(head(*args), eager_head(*args))
        assert torch.equal(loaded(*args), head(*args))
    assert loaded.__name__ == "head" and loaded.__wrapped__.__name__ == "head"
    # In a fresh process that has no module of it at all.
    kind, there = run_loader(tmp_path, payload, args)
    assert kind == "CompiledFunction"
    assert torch.equal(there, head(*args))


def test_a_module_function_bound_to_another_name_pickles_by_value(tmp_path):
    fn = pickle_fixture.gated
    payload = pickle.dumps(fn)
    assert b"def gate" in payload
    x = inputs(seed=2)[0]
    with torch.no_grad():
        torch.testing.assert_close(fn(x), pickle_fixture.gate(x))
        assert torch.equal(pickle.loads(payload)(x), fn(x))
    kind, there = run_loader(tmp_path, payload, (x,))  # pickle_fixture is not importable there
    assert kind == "CompiledFunction"
    assert torch.equal(there, fn(x))


def test_the_options_travel_and_fallback_mode_runs_the_python_function(rextio, head, tmp_path):
    record = pickle.loads(pickle.dumps(head)).__rextio_pickle__
    assert (record["strict"], record["mode"], record["cache_dir"], record["line"]) == (True, "jit", None, 5)
    args = inputs(seed=3)
    payload = pickle.dumps(head)
    kind, there = run_loader(tmp_path, payload, args, env={"REXTIO_NATIVE_MODE": "fallback"})
    assert kind == "CompiledFunction"
    with torch.no_grad():
        torch.testing.assert_close(there, eager_head(*args))  # the rebuilt Python function ran


def test_a_function_that_stays_on_python_pickles(rextio, temp_module, tmp_path):
    flipped = temp_module.flipped
    assert not is_compiled(flipped) and hasattr(flipped, "__rextio_fallback__")
    # pickle: by reference, like any function its module binds.
    assert pickle.loads(pickle.dumps(flipped)) is flipped
    x = inputs(seed=4)[0]
    kind, there = run_loader(tmp_path, pickle.dumps(flipped), (x,), path=[tmp_path])
    assert kind == "function" and torch.equal(there, x.cumsum(dim=1).relu())


def test_an_object_compile_did_not_make_is_a_clear_pickling_error(rextio):
    native = rextio._load_native()
    bare = native.compile_function(("<bare>", SOURCE, 5), "head")
    with pytest.raises(TypeError, match="not made by rextio_torch.compile"):
        pickle.dumps(bare)


def test_another_record_format_is_a_clear_error(rextio, head):
    from rextio_torch import _pickle

    function, (record,) = _pickle.reduce(head)
    with pytest.raises(ValueError, match="format 99"):
        function(dict(record, format=99))


# --- cloudpickle ----------------------------------------------------------------------------------

try:
    import cloudpickle
except ImportError:  # requirements.txt installs it; a bare environment skips these
    cloudpickle = None

needs_cloudpickle = pytest.mark.skipif(cloudpickle is None, reason="cloudpickle is not installed (pip install cloudpickle)")


@needs_cloudpickle
def test_cloudpickle_round_trips(rextio, head, temp_module, tmp_path):
    assert cloudpickle.loads(cloudpickle.dumps(temp_module.score)) is temp_module.score
    assert cloudpickle.loads(cloudpickle.dumps(head)) is pickle.loads(pickle.dumps(head))
    # What Ray and Dask ship: a closure over a compiled function, pickled by value.
    w, b = inputs(seed=5)[1:]
    payload = cloudpickle.dumps(lambda x: head(x, w, b))
    x = inputs(seed=6)[0]
    kind, there = run_loader(tmp_path, payload, (x,), loader="cloudpickle")
    assert kind == "function"
    with torch.no_grad():
        assert torch.equal(there, head(x, w, b))


@needs_cloudpickle
def test_cloudpickle_takes_a_function_that_stays_on_python_by_value(rextio, tmp_path):
    text = TEMP_MODULE.replace("@rextio_torch.compile(strict=True)\n", "").replace("@rextio_torch.compile\n", "")
    namespace = {"__name__": "not_importable"}
    exec(builtins_compile(text, "<fallback test>"), namespace)
    with pytest.warns(rextio.RextioFallbackWarning):
        flipped = rextio.compile(namespace["flipped"], source=text)
    x = inputs(seed=7)[0]
    kind, there = run_loader(tmp_path, cloudpickle.dumps(flipped), (x,), loader="cloudpickle")
    assert kind == "function" and torch.equal(there, x.cumsum(dim=1).relu())


@needs_cloudpickle
def test_a_module_cloudpickle_pickles_by_value_ships_its_compiled_functions_by_value(temp_module):
    cloudpickle.register_pickle_by_value(temp_module)
    try:
        payload = cloudpickle.dumps(temp_module.score)
    finally:
        cloudpickle.unregister_pickle_by_value(temp_module)
    assert b"def score" in payload
    loaded = cloudpickle.loads(payload)
    assert is_compiled(loaded) and loaded is not temp_module.score


# --- processes ------------------------------------------------------------------------------------

def _pool_results(context, fn, batches):
    with context.Pool(2) as pool:
        return pool.starmap(pickle_fixture.call, [(fn, args) for args in batches])


@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_multiprocessing_pools_under_every_start_method(head, method):
    context = multiprocessing.get_context(method)
    batches = [inputs(batch=3 + i, seed=10 + i) for i in range(4)]
    for fn in (pickle_fixture.score, head):
        results = _pool_results(context, fn, batches)
        with torch.no_grad():
            for (kind, ours), args in zip(results, batches):
                assert kind == "CompiledFunction"
                assert torch.equal(ours, fn(*args))
    with torch.no_grad():
        torch.testing.assert_close(pickle_fixture.score(*batches[0]), eager_score(*batches[0]))


def test_process_pool_executor(head):
    batches = [inputs(batch=4, seed=20 + i) for i in range(4)]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as executor:
        # The compiled function itself is what each task ships.
        results = list(executor.map(head, *zip(*batches)))
    with torch.no_grad():
        for ours, args in zip(results, batches):
            assert torch.equal(ours, head(*args))
            torch.testing.assert_close(ours, eager_head(*args))


def test_a_script_s_own_compiled_function_ships_to_spawned_workers(tmp_path):
    """A function compiled in `__main__` (the decorator in a script) pickles by value."""
    script = tmp_path / "score_script.py"
    script.write_text(textwrap.dedent("""\
        import concurrent.futures
        import multiprocessing
        import pickle

        import torch
        import torch.nn.functional as F

        import rextio_torch
        from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


        @rextio_torch.compile(strict=True)
        def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
            return F.linear(x, w, b).relu().mean(dim=1)


        if __name__ == "__main__":
            assert b"def score" in pickle.dumps(score)
            w, b = torch.randn(8, 16), torch.randn(8)
            xs = [torch.randn(5, 16) for _ in range(3)]
            context = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as executor:
                results = list(executor.map(score, xs, [w] * 3, [b] * 3))
            with torch.no_grad():
                for x, ours in zip(xs, results):
                    assert torch.equal(ours, score(x, w, b))
                    torch.testing.assert_close(ours, F.linear(x, w, b).relu().mean(dim=1))
            print("ok", len(results))
    """), encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok 3"


def _child_calls(queue, fn, args):
    try:
        with torch.no_grad():
            # As arrays: torch would share a tensor's storage through the child, which exits.
            queue.put(("ok", [fn(*a).numpy() for a in args]))
    except BaseException as error:  # reported to the parent, which fails the test
        queue.put(("error", repr(error)))


def test_a_fork_after_calls_keeps_compiled_functions_working(head):
    """The parent calls (a small call that keeps the GIL, a large one that releases it, a
    function loaded by value), then forks: the child's calls compute the same."""
    loaded = pickle.loads(pickle.dumps(head))
    small, large = inputs(batch=2, seed=30), inputs(batch=4096, k=64, n=64, seed=31)
    with torch.no_grad():
        expected = {
            "score": [pickle_fixture.score(*small), pickle_fixture.score(*large)],
            "head": [head(*small), head(*large)],
            "loaded": [loaded(*small), loaded(*large)],
        }
    context = multiprocessing.get_context("fork")
    for name, fn in (("score", pickle_fixture.score), ("head", head), ("loaded", loaded)):
        queue = context.Queue()
        child = context.Process(target=_child_calls, args=(queue, fn, [small, large]))
        child.start()
        status, results = queue.get(timeout=60)
        child.join(timeout=60)
        assert status == "ok", results
        assert child.exitcode == 0
        for ours, theirs in zip(results, expected[name]):
            assert torch.equal(torch.from_numpy(ours), theirs)
