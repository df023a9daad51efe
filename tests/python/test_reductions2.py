"""max/min over a dim read as .values/.indices/[0]/[1], zeros_like/ones_like/full_like,
index_select and F.normalize (issue 18, extended surface) against eager PyTorch.

Each is computed by the ATen op eager calls, so results are eager's bits exactly (NaN, +-inf,
-0.0, subnormals included), indices included; errors are eager's class and words (an empty
reduced dim, ids out of range, a fill value beyond float32). Refused forms stay on Python
with a diagnostic naming the problem (the bare `x.max(dim=1)` named tuple used as a tensor,
keywords on the fills, non-literal dims); the Rextio plugin and `surface="reference"` do not
claim them. The decorator form at module level compiles without a fallback.
"""

import math
import sys

import pytest
import torch

from conftest import assert_same_bits, compiled_functions, generated_module, import_generated

SOURCE = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def max_values(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.max(dim=1).values


def min_values_keepdim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.min(dim=0, keepdim=True).values


def torch_max_positional(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.max(x, 0).values


def torch_min_keywords(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.min(x, dim=-1, keepdim=True).values


def max_index0(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.max(-1)[0] + 1.0


def max_positional_keepdim(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.max(0, True).values


def max_indices(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.max(dim=1).indices


def min_index1(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.min(x, 0)[1]


def vec_min_indices(v: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return v.min(dim=0, keepdim=True).indices


def zeros(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.zeros_like(x)


def ones(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.ones_like(v) + v


def full_float(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.full_like(x, -0.0)


def full_int(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.full_like(x, 7)


def full_param(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return torch.full_like(x, s)


def full_int_param(v: TensorF32Cpu1D, n: int) -> TensorF32Cpu1D:
    return torch.full_like(v, n)


def select_rows(x: TensorF32Cpu2D, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return torch.index_select(x, 0, ids)


def select_cols(x: TensorF32Cpu2D, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return x.index_select(-1, ids)


def select_vec(v: TensorF32Cpu1D, ids: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return v.index_select(0, ids)


def normalize_default(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.normalize(x)


def normalize_dim0(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.normalize(x, p=2.0, dim=0, eps=1e-12)


def normalize_p1(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.nn.functional.normalize(x, 1, -1, 1e-6)


def normalize_vec(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.normalize(v, dim=0, p=3)
'''

NAMES = ["max_values", "min_values_keepdim", "torch_max_positional", "torch_min_keywords",
         "max_index0", "max_positional_keepdim", "max_indices", "min_index1", "vec_min_indices",
         "zeros", "ones", "full_float", "full_int", "full_param", "full_int_param",
         "select_rows", "select_cols", "select_vec", "normalize_default", "normalize_dim0",
         "normalize_p1", "normalize_vec"]

REFUSED = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def bare_max(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.max(dim=1)


def bare_torch_min(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.min(x, 1)


def indices_rank2(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.max(dim=1, keepdim=True).indices


def values_rank0(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.max(dim=0).values


def dim_param(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu1D:
    return x.max(d).values


def dim_out_of_range(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.min(dim=2).values


def fill_dtype(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.zeros_like(x, dtype=torch.float64)


def fill_literal_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.ones_like(x, requires_grad=False)


def fill_bool(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.full_like(x, True)


def select_float_ids(x: TensorF32Cpu2D, ids: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.index_select(x, 0, ids)


def normalize_dim_param(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu2D:
    return F.normalize(x, dim=d)
'''

REFUSED_WORDS = {
    "bare_max": ("RXTP-TORCH-130", "named tuple"),
    "bare_torch_min": ("RXTP-TORCH-131", "write .values"),
    "indices_rank2": ("RXTP-TORCH-130", "does not have an already-registered"),
    "values_rank0": ("RXTP-TORCH-130", "does not have an already-registered"),
    "dim_param": ("RXTP-TORCH-130", "dim must be a literal int"),
    "dim_out_of_range": ("RXTP-TORCH-131", "out of range for a rank-2 input"),
    "fill_dtype": ("RXT080", "not offered"),
    "fill_literal_keyword": ("RXTP-TORCH-132", "keyword 'requires_grad' stays on Python"),
    "fill_bool": ("RXTP-TORCH-132", "value must be an int or float"),
    "select_float_ids": ("RXTP-TORCH-133", "ids must be an int64 rank-1 tensor"),
    "normalize_dim_param": ("RXT", "keyword"),
}

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, 3e38, -3e38, 1.0, -1.0,
           0.5, 2.0, -2.0, 1e-20]


@pytest.fixture(scope="module")
def functions(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "parity_reductions2", SOURCE, NAMES)


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    with generated_module(tmp_path_factory, "refused_reductions2", REFUSED) as module:
        yield module


def tensor(rows, cols, seed, specials=True):
    """A random rows x cols tensor (rank 1 of cols elements when rows is None) whose first
    elements are the special values (rotated by the seed)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn((1 if rows is None else rows) * cols, generator=g) * 3
    if specials:
        n = min(len(SPECIAL), x.numel())
        shift = seed % len(SPECIAL)
        rotated = SPECIAL[shift:] + SPECIAL[:shift]
        x[:n] = torch.tensor(rotated[:n])
    return x if rows is None else x.view(rows, cols)


def run(module, compiled, name, *args):
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    ours = compiled[name](*args)
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b) or torch.equal(a.isnan(), b.isnan()), f"{name} mutated"
    try:
        assert_same_bits(ours, eager)
    except AssertionError as error:
        shapes = [tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args]
        raise AssertionError(f"{name} on {shapes}: {error}") from None
    return ours


def same_error(module, compiled, name, *args):
    with pytest.raises(Exception) as eager:
        getattr(module, name)(*args)
    with pytest.raises(Exception) as ours:
        compiled[name](*args)
    assert type(ours.value) is type(eager.value), (ours.value, eager.value)
    assert str(ours.value) == str(eager.value)
    return eager.value


SHAPES = [(1, 1), (3, 4), (5, 19), (17, 33), (4, 1), (1, 6)]


@pytest.mark.parametrize("rows,cols", SHAPES)
def test_max_min_over_a_dim(functions, rows, cols):
    module, compiled = functions
    for seed in range(3):
        x = tensor(rows, cols, rows * 7 + cols + seed, specials=seed != 2)
        for name in ("max_values", "min_values_keepdim", "torch_max_positional",
                     "torch_min_keywords", "max_index0", "max_indices", "min_index1"):
            run(module, compiled, name, x)
        v = x.reshape(-1)
        run(module, compiled, "max_positional_keepdim", v)
        run(module, compiled, "vec_min_indices", v)


def test_max_min_ties_zeros_and_nan(functions):
    module, compiled = functions
    cases = [
        [[0.0, -0.0, 0.0], [-0.0, 0.0, -0.0]],
        [[1.0, 1.0, 1.0], [2.0, 2.0, -2.0]],
        [[math.nan, 1.0, math.nan], [1.0, math.nan, 3.0]],
        [[math.inf, math.inf, -math.inf], [-math.inf, -math.inf, -math.inf]],
        [[1e-45, -1e-45, 0.0], [3e38, 3.4e38, -3.4e38]],
    ]
    for case in cases:
        x = torch.tensor(case)
        for name in ("max_values", "min_values_keepdim", "torch_max_positional",
                     "torch_min_keywords", "max_indices", "min_index1"):
            run(module, compiled, name, x)
            run(module, compiled, name, x.t())  # strided
        run(module, compiled, "vec_min_indices", x.reshape(-1))


def test_max_over_an_empty_dim_raises_eagers_error(functions):
    module, compiled = functions
    error = same_error(module, compiled, "max_values", torch.zeros(3, 0))
    assert isinstance(error, IndexError)
    same_error(module, compiled, "torch_max_positional", torch.zeros(0, 3))
    same_error(module, compiled, "vec_min_indices", torch.zeros(0))
    # Reducing a non-empty dim of an empty tensor is an empty result, as in eager.
    run(module, compiled, "max_values", torch.zeros(0, 3))
    run(module, compiled, "max_indices", torch.zeros(0, 3))


@pytest.mark.parametrize("rows,cols", SHAPES + [(0, 3), (2, 0)])
def test_fills(functions, rows, cols):
    module, compiled = functions
    x = tensor(rows, cols, rows + cols)
    for name in ("zeros", "full_float", "full_int"):
        run(module, compiled, name, x)
        run(module, compiled, name, x.t())
    run(module, compiled, "ones", x.reshape(-1))
    for s in (0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, 1e-45, 0.1, 3.4e38):
        run(module, compiled, "full_param", x, s)
    for n in (0, -1, 16777217, 2 ** 62, -(2 ** 63)):
        run(module, compiled, "full_int_param", x.reshape(-1), n)


def test_full_like_beyond_float32_raises_eagers_error(functions):
    module, compiled = functions
    error = same_error(module, compiled, "full_param", torch.zeros(2, 2), 1e300)
    assert isinstance(error, RuntimeError)
    same_error(module, compiled, "full_param", torch.zeros(2, 2), -1e39)


@pytest.mark.parametrize("rows,cols", SHAPES)
def test_index_select(functions, rows, cols):
    module, compiled = functions
    x = tensor(rows, cols, rows * 3 + cols)
    g = torch.Generator().manual_seed(rows + cols)
    for n in (0, 1, 5):
        rows_ids = torch.randint(0, rows, (n,), generator=g)
        cols_ids = torch.randint(0, cols, (n,), generator=g)
        run(module, compiled, "select_rows", x, rows_ids)
        run(module, compiled, "select_cols", x, cols_ids)
        run(module, compiled, "select_cols", x.t().contiguous().t(), cols_ids)
        run(module, compiled, "select_vec", x.reshape(-1), cols_ids)


def test_index_select_out_of_range_raises_eagers_error(functions):
    module, compiled = functions
    x = tensor(3, 4, 1)
    for ids in ([3], [-1], [0, 7]):
        error = same_error(module, compiled, "select_rows", x, torch.tensor(ids))
        assert isinstance(error, IndexError)
    # Along dim 1 eager's error is a RuntimeError.
    error = same_error(module, compiled, "select_cols", x, torch.tensor([4]))
    assert type(error) is RuntimeError
    same_error(module, compiled, "select_vec", x.reshape(-1), torch.tensor([12]))


@pytest.mark.parametrize("rows,cols", SHAPES + [(0, 3), (2, 0)])
def test_normalize(functions, rows, cols):
    module, compiled = functions
    for seed in range(3):
        x = tensor(rows, cols, rows * 11 + cols + seed, specials=seed != 1)
        for name in ("normalize_default", "normalize_dim0", "normalize_p1"):
            run(module, compiled, name, x)
            # A strided input: ATen's norm sums in an order that follows the layout, and
            # compiled code keeps a strided argument's strides, so it gives eager's bits on
            # the strided input itself (it used to copy it densely first: eager's bits on
            # the dense copy, other bits on the input).
            run(module, compiled, name, x.t())
        run(module, compiled, "normalize_vec", x.reshape(-1))
    run(module, compiled, "normalize_default", torch.zeros(2, 3))
    run(module, compiled, "normalize_default", torch.full((2, 3), -0.0))
    run(module, compiled, "normalize_default", torch.full((2, 3), 1e-30))


def test_refused_forms_stay_on_python(rextio, refused):
    for name, (code, words) in REFUSED_WORDS.items():
        fn = getattr(refused, name)
        with pytest.raises(rextio.CompileError) as error:
            rextio.compile(fn, strict=True)
        text = str(error.value)
        assert code in text and words in text, (name, text)
        with pytest.warns(rextio.RextioFallbackWarning):
            fallback = rextio.compile(fn)
        assert fallback.__wrapped__ is fn


def test_reference_surface_leaves_them_on_python(rextio, functions):
    module, _ = functions
    for name in NAMES:
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name


DECORATED = '''
import torch
import torch.nn.functional as F
import rextio_torch
from rextio_torch.types import TensorF32Cpu2D, TensorI64Cpu1D


@rextio_torch.compile
def score(x: TensorF32Cpu2D, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
    y = F.normalize(torch.index_select(x, 0, ids), dim=1)
    top = y.max(dim=1, keepdim=True).values
    return y - top + torch.ones_like(y) + torch.full_like(y, 0.5)
'''


def test_decorator_form(rextio, tmp_path_factory):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", rextio.RextioFallbackWarning)
        module = import_generated(tmp_path_factory, "decorated_reductions2", DECORATED)
    try:
        x = tensor(5, 4, 9)
        ids = torch.tensor([4, 0, 0, 2])
        with torch.no_grad():
            eager = module.score.__wrapped__(x, ids)
        assert_same_bits(module.score(x, ids), eager)
    finally:
        del sys.modules["decorated_reductions2"]


NEW_RULES = {"rextio-torch/max-dim-values-indices-f32-cpu-rank1-2",
             "rextio-torch/min-dim-values-indices-f32-cpu-rank1-2",
             "rextio-torch/zeros-ones-full-like-f32-cpu-rank1-2",
             "rextio-torch/index-select-static-dim-i64-ids-f32-cpu-rank1-2",
             "rextio-torch/functional-normalize-static-f32-cpu-rank1-2"}


def test_check_knows_the_rules_and_the_plugin_does_not():
    import json

    from rextio_torch import _native

    ids = [r["id"] for r in json.loads(_native.plugin_rule_records())]
    assert not NEW_RULES & set(ids), "the plugin's records are the reference's and 049"
    _, symbols, _ = _native.plugin_surface()
    for symbol in ("torch.zeros_like", "torch.index_select", "torch.nn.functional.normalize"):
        assert symbol not in symbols
