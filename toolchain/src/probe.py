"""The facts `rextio-torch doctor` needs from a Python environment.

One text, run two ways: `rextio-torch doctor` runs it in a child `python` (the one tch's
build would run) and prints `json.dumps(probe())`; `rextio_torch.doctor()` runs it in its own
interpreter. It only looks: nothing is installed or changed.
"""


def probe():
    import importlib
    import importlib.metadata as metadata
    import os
    import platform
    import sys

    facts = {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": sys.implementation.name,
    }
    try:
        import torch
    except Exception as error:  # not installed, or an install that does not import
        facts["torch_error"] = f"{type(error).__name__}: {error}"
    else:
        cuda_available, cuda_devices = False, 0
        try:
            cuda_available = bool(torch.cuda.is_available())
            cuda_devices = int(torch.cuda.device_count()) if cuda_available else 0
        except Exception:
            pass
        facts["torch"] = {
            "version": str(torch.__version__),
            "lib_dir": os.path.join(os.path.dirname(torch.__file__), "lib"),
            "cxx11_abi": bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", False)),
            "cuda_version": getattr(torch.version, "cuda", None),
            "cuda_available": cuda_available,
            "cuda_devices": cuda_devices,
        }
    try:
        facts["rextio"] = metadata.version("rextio")
    except metadata.PackageNotFoundError:
        facts["rextio"] = None
    try:
        package = importlib.import_module("rextio_torch")
        importlib.import_module("rextio_torch._native")
        facts["rextio_torch"] = str(getattr(package, "__version__", "unknown"))
    except Exception as error:
        facts["rextio_torch_error"] = f"{type(error).__name__}: {error}"
    return facts
