"""Annotation markers for rextio-torch.

Each marker states exactly what a parameter or result is: dtype, device and rank. Sizes are
not part of the type and are checked on every call. This module imports neither torch nor
the compiler, so annotating code costs nothing.
"""

__all__ = [
    "TensorF32Cpu2D",
    "TensorF32Cpu1D",
    "TensorI64Cpu1D",
    "TensorF32Cuda0_2D",
    "TensorF32Cuda0_1D",
    "TensorF32Cpu3D",
    "TensorI64Cpu2D",
    "TensorF64Cpu2D",
    "TensorF64Cpu1D",
    "TensorBF16Cpu2D",
    "TensorBF16Cpu1D",
    "TensorF32Cpu0D",
    "TensorF64Cpu0D",
    "TensorF64Cpu3D",
    "TensorBF16Cpu0D",
    "TensorBF16Cpu3D",
]


class _TensorMarker:
    """Base of the markers; never instantiated (runtime values are plain torch.Tensor)."""

    dtype: str
    device: str
    rank: int
    key: str
    # "reference": one of the reference plugin's five types (the Rextio plugin's); "extended":
    # ours, known to the extended surface only (under surface="reference" not a known type).
    surface: str = "reference"

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is an annotation marker; pass a torch.Tensor instead")


class TensorF32Cpu2D(_TensorMarker):
    """float32, CPU, rank 2."""

    dtype, device, rank, key = "float32", "cpu", 2, "rextio-torch/tensor-f32-cpu-2d"


class TensorF32Cpu1D(_TensorMarker):
    """float32, CPU, rank 1."""

    dtype, device, rank, key = "float32", "cpu", 1, "rextio-torch/tensor-f32-cpu-1d"


class TensorI64Cpu1D(_TensorMarker):
    """int64, CPU, rank 1 (classification results)."""

    dtype, device, rank, key = "int64", "cpu", 1, "rextio-torch/tensor-i64-cpu-1d"


class TensorF32Cuda0_2D(_TensorMarker):
    """float32, cuda:0, rank 2 (build-only slice)."""

    dtype, device, rank, key = "float32", "cuda:0", 2, "rextio-torch/tensor-f32-cuda0-2d"


class TensorF32Cuda0_1D(_TensorMarker):
    """float32, cuda:0, rank 1 (build-only slice)."""

    dtype, device, rank, key = "float32", "cuda:0", 1, "rextio-torch/tensor-f32-cuda0-1d"


class TensorF32Cpu3D(_TensorMarker):
    """float32, CPU, rank 3 (extended surface only: batches of matrices, attention)."""

    dtype, device, rank, key = "float32", "cpu", 3, "rextio-torch/tensor-f32-cpu-3d"
    surface = "extended"


class TensorI64Cpu2D(_TensorMarker):
    """int64, CPU, rank 2 (extended surface only)."""

    dtype, device, rank, key = "int64", "cpu", 2, "rextio-torch/tensor-i64-cpu-2d"
    surface = "extended"


# The extended surface's float64 and bfloat16 markers: `compile`/`check` take them (the ops of
# docs/architecture.md, "Float64 and bfloat16"); `surface="reference"` and the Rextio plugin
# do not know them.


class TensorF64Cpu2D(_TensorMarker):
    """float64, CPU, rank 2 (extended surface only)."""

    dtype, device, rank, key = "float64", "cpu", 2, "rextio-torch/tensor-f64-cpu-2d"
    surface = "extended"


class TensorF64Cpu1D(_TensorMarker):
    """float64, CPU, rank 1 (extended surface only)."""

    dtype, device, rank, key = "float64", "cpu", 1, "rextio-torch/tensor-f64-cpu-1d"
    surface = "extended"


class TensorBF16Cpu2D(_TensorMarker):
    """bfloat16, CPU, rank 2 (extended surface only)."""

    dtype, device, rank, key = "bfloat16", "cpu", 2, "rextio-torch/tensor-bf16-cpu-2d"
    surface = "extended"


class TensorBF16Cpu1D(_TensorMarker):
    """bfloat16, CPU, rank 1 (extended surface only)."""

    dtype, device, rank, key = "bfloat16", "cpu", 1, "rextio-torch/tensor-bf16-cpu-1d"
    surface = "extended"



class TensorF32Cpu0D(_TensorMarker):
    """float32, CPU, rank 0: a one-value tensor such as ``x.sum()`` (extended surface only)."""

    dtype, device, rank, key = "float32", "cpu", 0, "rextio-torch/tensor-f32-cpu-0d"
    surface = "extended"


# float64 and bfloat16 at ranks 0 and 3 (extended surface only): whole reductions and their
# rank-0 values, batches of matrices, through ATen at the dtype as the ranks 1 and 2 are.


class TensorF64Cpu0D(_TensorMarker):
    """float64, CPU, rank 0: a one-value tensor such as ``x.sum()`` (extended surface only)."""

    dtype, device, rank, key = "float64", "cpu", 0, "rextio-torch/tensor-f64-cpu-0d"
    surface = "extended"


class TensorF64Cpu3D(_TensorMarker):
    """float64, CPU, rank 3 (extended surface only: batches of matrices, attention)."""

    dtype, device, rank, key = "float64", "cpu", 3, "rextio-torch/tensor-f64-cpu-3d"
    surface = "extended"


class TensorBF16Cpu0D(_TensorMarker):
    """bfloat16, CPU, rank 0: a one-value tensor such as ``x.sum()`` (extended surface only)."""

    dtype, device, rank, key = "bfloat16", "cpu", 0, "rextio-torch/tensor-bf16-cpu-0d"
    surface = "extended"


class TensorBF16Cpu3D(_TensorMarker):
    """bfloat16, CPU, rank 3 (extended surface only: batches of matrices, attention)."""

    dtype, device, rank, key = "bfloat16", "cpu", 3, "rextio-torch/tensor-bf16-cpu-3d"
    surface = "extended"


def __getattr__(name: str):
    raise AttributeError(f"rextio_torch.types has no marker {name!r}; markers: {', '.join(__all__)}")
