"""Shared set-up for the Python tests: one torch thread, the repository paths, and the
parity oracle (compiled output vs eager PyTorch)."""

import math
import pathlib
import sys

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

torch.set_num_threads(1)

# Tolerance of every parity check: |ours - eager| <= RTOL * max(1, |eager|) elementwise,
# float32 with a different summation order; NaN positions and infinities must match exactly.
RTOL = 1e-5


def assert_parity(ours: torch.Tensor, eager: torch.Tensor) -> None:
    assert isinstance(ours, torch.Tensor)
    assert ours.dtype == eager.dtype, (ours.dtype, eager.dtype)
    assert ours.shape == eager.shape, (ours.shape, eager.shape)
    assert ours.device == eager.device
    if not ours.dtype.is_floating_point:
        assert torch.equal(ours, eager)
        return
    nan = torch.isnan(eager)
    assert torch.equal(torch.isnan(ours), nan), "NaN positions differ"
    inf = torch.isinf(eager)
    assert torch.equal(ours[inf], eager[inf]), "infinities differ"
    finite = ~(nan | inf)
    diff = (ours[finite] - eager[finite]).abs()
    bound = RTOL * eager[finite].abs().clamp(min=1.0)
    if diff.numel():
        worst = (diff / bound).max().item()
        assert worst <= 1.0, f"max relative difference {worst * RTOL:.3g} > {RTOL}"


def max_rel_diff(ours: torch.Tensor, eager: torch.Tensor) -> float:
    finite = torch.isfinite(eager)
    if not finite.any():
        return 0.0
    diff = (ours[finite] - eager[finite]).abs() / eager[finite].abs().clamp(min=1.0)
    return diff.max().item()


@pytest.fixture(scope="session")
def rextio():
    import rextio_torch

    return rextio_torch


@pytest.fixture(scope="session")
def phase_a(rextio):
    import phase_a as module

    return module, rextio.compile(module.inference, strict=True)


_ = math
