"""`make rextio-example`: the Rextio project in examples/rextio_project, checked and built by
Rextio core (`rextio`, installed in .venv) with rextio-torch as its plugin, then the built
Phase A function is called and compared with eager PyTorch.

The project is copied to target/rextio_project first (Rextio writes .rextio/ into it). The
first build compiles tch's C++ shim and the runtime inside Rextio's generated crate (minutes).
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROJECT = ROOT / "target" / "rextio_project"
REXTIO = pathlib.Path(sys.executable).parent / "rextio"
FILES = ("rextio.toml", ".cargo/config.toml", "phase_a/__init__.py", "phase_a/kernels.py",
         "phase_a/heads.py")


def run(*args):
    print("$", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], check=True, env={**os.environ, "NO_COLOR": "1"})


def main():
    if not REXTIO.exists():
        sys.exit(f"{REXTIO} not found: install the pinned requirements (make venv)")
    for name in FILES:
        (PROJECT / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "examples" / "rextio_project" / name, PROJECT / name)
    # `rextio check` exits 1 here: mean_dim2 is rejected on purpose (it stays on Python).
    subprocess.run([str(REXTIO), "check", str(PROJECT)], env={**os.environ, "NO_COLOR": "1"})
    report = json.loads((PROJECT / ".rextio" / "reports" / "check.json").read_text())
    for module in report["modules"]:
        for fn in module["functions"]:
            print(f"  {fn['qualname']}: {fn['native_status']}, route {fn['route']}")
    run(REXTIO, "build", PROJECT)

    import torch  # the native module resolves libtorch through the torch already loaded

    sys.path.insert(0, str(PROJECT / ".rextio" / "build" / "python"))
    os.environ["REXTIO_NATIVE_MODE"] = "native"  # the wrapper raises rather than fall back
    from phase_a import heads, kernels

    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(*s, generator=g) for s in ((64, 128), (256, 128), (256,)))
    ours = kernels.inference(x, w, b)
    eager = torch.nn.functional.linear(x, w, b).relu().mean(dim=1, keepdim=False)
    diff = (ours - eager).abs().max().item()
    print(f"Phase A through Rextio + rextio-torch: shape {tuple(ours.shape)}, "
          f"max |native - eager| = {diff:.3g}")
    if ours.shape != eager.shape or not torch.allclose(ours, eager, rtol=1e-5, atol=1e-5):
        sys.exit("the natively built function differs from eager")

    labels = heads.classify(x, w, b)
    eager_labels = torch.softmax(torch.nn.functional.linear(x, w, b), dim=1).argmax(dim=1)
    print(f"heads.classify: {labels.dtype}, {int((labels == eager_labels).sum())}/{len(labels)} "
          "labels as eager")
    a, m, v = (torch.rand(*s, generator=g) + 0.5 for s in ((64, 32), (32, 48), (48,)))
    mixed = heads.mix(a, m, v)
    h = a @ m + v
    gg = torch.nn.functional.gelu(torch.sigmoid(h) * h - h.tanh() / h.exp())
    eager_mixed = (gg @ v).abs().sqrt() + gg.sum(dim=1)
    print(f"heads.mix: max |native - eager| = {(mixed - eager_mixed).abs().max().item():.3g}")
    shared = heads.shared(x, w, b)
    lin = torch.nn.functional.linear(x, w, b)
    eager_shared = lin.relu().sum(dim=1) + torch.tanh(lin).mean(dim=1)
    print(f"heads.shared: max |native - eager| = {(shared - eager_shared).abs().max().item():.3g}")
    if (not torch.equal(labels, eager_labels) or not torch.allclose(mixed, eager_mixed, rtol=1e-5)
            or not torch.allclose(shared, eager_shared, rtol=1e-5, atol=1e-4)):
        sys.exit("a natively built head differs from eager")


if __name__ == "__main__":
    main()
