"""Compiled vs eager PyTorch on random and special inputs (tolerance: conftest.RTOL)."""

import pytest
import torch

from conftest import assert_parity

PHASE_A_CELLS = [(1, 32, 32), (1, 128, 64), (8, 64, 64), (16, 128, 64), (64, 128, 64), (256, 256, 128)]
ODD_AND_LARGE = [(3, 7, 5), (1, 1, 1), (512, 512, 256), (5, 33, 17), (2, 9, 0), (0, 4, 3)]


@pytest.mark.parametrize("batch,k,n", PHASE_A_CELLS + ODD_AND_LARGE)
def test_phase_a_matches_eager(phase_a, batch, k, n):
    module, compiled = phase_a
    generator = torch.Generator().manual_seed(batch * 1_000_003 + k * 1009 + n)
    for _ in range(3):
        x = torch.randn(batch, k, generator=generator)
        w = torch.randn(n, k, generator=generator)
        b = torch.randn(n, generator=generator)
        with torch.no_grad():
            eager = module.inference(x, w, b)
        assert_parity(compiled(x, w, b), eager)


def test_nan_and_inf_propagate_as_in_eager(phase_a):
    module, compiled = phase_a
    generator = torch.Generator().manual_seed(1)
    for batch, k, n in [(4, 8, 6), (64, 128, 64)]:
        x = torch.randn(batch, k, generator=generator)
        w = torch.randn(n, k, generator=generator)
        b = torch.randn(n, generator=generator)
        x[0, 0] = float("nan")
        x[1, 1] = float("inf")
        w[2, 3] = float("-inf")
        b[1] = float("inf")
        if batch > 2:
            x[2] = float("-inf")
        eager = module.inference(x, w, b)
        ours = compiled(x, w, b)
        assert not torch.isfinite(eager).all()  # the case really exercises NaN/Inf
        assert_parity(ours, eager)


def test_non_contiguous_inputs(phase_a):
    module, compiled = phase_a
    x = torch.randn(12, 10).t()  # 10 x 12, strided
    w = torch.randn(6, 24)[:, ::2]  # 6 x 12, strided
    b = torch.randn(12)[::2]
    assert not x.is_contiguous() and not w.is_contiguous() and not b.is_contiguous()
    assert_parity(compiled(x, w, b), module.inference(x, w, b))


SURFACE_CASES = {
    "named_temps": lambda g: (torch.randn(5, 8, generator=g), torch.randn(4, 8, generator=g), torch.randn(4, generator=g)),
    "shared_intermediate": lambda g: (torch.randn(5, 8, generator=g), torch.randn(4, 8, generator=g), torch.randn(4, generator=g)),
    "no_bias_sum": lambda g: (torch.randn(300, 64, generator=g), torch.randn(32, 64, generator=g)),
    "elementwise": lambda g: (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g), torch.randn(4, generator=g)),
    "classify": lambda g: (torch.randn(16, 32, generator=g), torch.randn(8, 32, generator=g), torch.randn(8, generator=g)),
    "matmul_mixed": lambda g: (torch.randn(6, 5, generator=g), torch.randn(5, generator=g)),
    "reductions": lambda g: (torch.randn(4, 7, generator=g),),
    "gelu_sqrt": lambda g: (torch.randn(4, 7, generator=g),),
    "functional_spellings": lambda g: (torch.randn(4, 4, generator=g), torch.randn(4, 4, generator=g), torch.randn(4, generator=g)),
    "vector_ops": lambda g: (torch.randn(5, generator=g), torch.randn(5, 6, generator=g)),
}


@pytest.mark.parametrize("name", sorted(SURFACE_CASES))
def test_surface_functions_match_eager(rextio, name):
    import surface_fixture

    fn = getattr(surface_fixture, name)
    compiled = rextio.compile(fn, strict=True)
    args = SURFACE_CASES[name](torch.Generator().manual_seed(len(name)))
    with torch.no_grad():
        eager = fn(*args)
    assert_parity(compiled(*args), eager)


def test_fusion_happened_for_phase_a(phase_a):
    _, compiled = phase_a
    assert "fused_linear" in compiled.optimized_ir
    assert "linear %0, %1, %2" in compiled.parsed_ir
