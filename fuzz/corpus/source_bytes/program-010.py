"""The build-only cuda:0 slice: named intermediates, rank-2 @ rank-2, + bias, relu, mean."""

from rextio_torch.types import TensorF32Cuda0_1D, TensorF32Cuda0_2D


def head(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_1D:
    product = x @ w
    biased = product + b
    active = biased.relu()
    return active.mean(dim=1, keepdim=False)
