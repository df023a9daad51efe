"""Ray Data batch inference with compiled functions (docs/scale.md): the pipeline of
examples/ray_batch_scoring.py on 20,000 rows on a local two-CPU cluster, every row compared
with eager PyTorch, for a compiled function pickled by reference (its module on the workers'
path) and one pickled by value (`source=`); and the README's Ray example, run verbatim."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from conftest import EXAMPLES, ROOT

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'rextio-torch[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'ray[data]==2.60.0')")

import ray_batch_scoring as example  # noqa: E402  (examples/ is on sys.path: conftest)

ROWS = 20_000
HERE = os.path.dirname(os.path.abspath(__file__))

SOURCE = textwrap.dedent("""\
    import torch.nn.functional as F
    from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


    def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
        return F.linear(x, w, b).relu().mean(dim=1)
""")


@pytest.fixture(scope="module")
def cluster():
    # The workers import examples/ray_batch_scoring.py (`score` pickles by reference), as a
    # cluster's would from runtime_env py_modules or working_dir.
    path = os.pathsep.join([str(EXAMPLES), HERE, os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def weights():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(example.HIDDEN, example.FEATURES, generator=g) / example.FEATURES**0.5,
            torch.randn(example.HIDDEN, generator=g))


def test_every_row_equals_eager(rextio, cluster, weights):
    namespace = {"__name__": "ray_by_value"}
    exec(compile(SOURCE, "<ray test>", "exec"), namespace)
    by_value = rextio.compile(namespace["score"], source=SOURCE, strict=True)
    assert type(example.score).__name__ == "CompiledFunction"
    w, b = weights
    batch_size = 2048
    features = ray.data.range(ROWS).map_batches(example.make_features, batch_size=batch_size).materialize()
    _, _, eager = example.run(features, example.score.__wrapped__, w, b, batch_size)
    assert eager.shape == (ROWS,)
    # The driver's own eager scores of the same features: the pipeline lost or reordered no row.
    ids, xs = [], []
    for batch in features.iter_batches(batch_size=None, batch_format="numpy"):
        ids.append(batch["id"])
        xs.append(batch["x"])
    order = np.argsort(np.concatenate(ids))
    np.testing.assert_array_equal(np.concatenate(ids)[order], np.arange(ROWS))
    x = np.ascontiguousarray(np.concatenate(xs)[order])
    with torch.no_grad():
        driver = example.score.__wrapped__(torch.from_numpy(x), w, b).numpy()
    np.testing.assert_array_equal(eager, driver)
    for fn in (example.score, by_value):
        _, _, ours = example.run(features, fn, w, b, batch_size)
        np.testing.assert_allclose(ours, eager, rtol=1e-5, atol=1e-6)
        with torch.no_grad():  # and bit for bit what the function computes here
            np.testing.assert_array_equal(ours, fn(torch.from_numpy(x), w, b).numpy())


def readme_ray_block():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "import ray" in b]
    assert len(blocks) == 1, "the README has one Ray example"
    return blocks[0]


def test_the_readme_ray_example_runs_verbatim(rextio, tmp_path):
    script = tmp_path / "readme_ray.py"
    script.write_text(readme_ray_block(), encoding="utf-8")
    env = dict(os.environ, RAY_DATA_DISABLE_PROGRESS_BARS="1")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240,
                            cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    last = result.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"10000 rows, max \|compiled - eager\| = (\S+)", last)
    assert match, result.stdout
    assert float(match.group(1)) < 1e-5, last
