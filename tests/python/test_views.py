"""Views and shapes (issue 18, extended surface) against eager PyTorch.

- `x.shape[i]`, `x.size(i)`, `x.size()[i]`, negative indices, as ints in scalar code and
  loops; `x.t()`, `x.T`, `x.transpose`, `torch.transpose` (rank 1: itself);
  `reshape`/`view` with literal, `-1` and `x.shape[0]` sizes, tuple or separate;
  `flatten`/`torch.flatten`, `unsqueeze`, `squeeze(d)`: eager's values bit for bit (the
  same ATen views), NaN/inf/-0.0 included, as results, returned views, and feeding our own
  kernels (`F.linear(x.t(), w)`, `(x.t() * 2).sum(dim=0)`, `x.reshape(-1) + 1`), with
  contiguous and non-contiguous inputs; inputs are never mutated.
- `view` of a transposed tensor raises eager's RuntimeError (reshape copies);
  `squeeze(d)` of a dim whose size is not 1 raises a RuntimeError naming the size.
- Refused forms (`x.shape[5]`, bare `squeeze()`, rank-3 results, two `-1`) stay on Python
  with the lane's code; `surface="reference"` does not claim them.
"""

import sys

import pytest
import torch

from conftest import assert_same_bits, compiled_functions, generated_module, import_generated

SOURCE = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def rows(x: TensorF32Cpu2D) -> int:
    return x.shape[0]


def last(x: TensorF32Cpu2D) -> int:
    return x.shape[-1] + x.size(0) * 100 + x.size()[1] * 10000


def ids_len(i: TensorI64Cpu1D) -> int:
    return i.size(-1)


def mean_by_shape(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=1) / x.shape[-1]


def loop_rows(x: TensorF32Cpu2D) -> int:
    n = 0
    for i in range(x.shape[0]):
        n = n + i
    return n


def t_method(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.t()


def t_attr(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.T


def t_vector(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.t()


def transpose_neg(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.transpose(x, -1, 0)


def linear_of_t(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(x.t(), w)


def sum_of_t(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    h = x.t() * 2
    return h.sum(dim=0)


def relu_of_T(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.relu(x.T) + x.T


def reshape_flat(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.reshape(-1) + 1


def reshape_shape(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.reshape(x.shape[1], -1)


def reshape_tuple(v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return v.reshape((2, -1))


def torch_reshape(v: TensorF32Cpu1D, n: int) -> TensorF32Cpu2D:
    return torch.reshape(v, [n, -1])


def view_flat(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.view(-1)


def view_of_t(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.t().view(-1)


def reshape_of_t(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.t().reshape(-1)


def flatten_m(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.flatten()


def flatten_fn(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.flatten(x, 0, -1)


def flatten_same(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.flatten(1, 1)


def unsqueeze0(v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return v.unsqueeze(0)


def unsqueeze_last(v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.unsqueeze(v, -1)


def squeeze0(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.squeeze(0)


def squeeze_back(v: TensorF32Cpu1D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return F.linear(v.unsqueeze(0), w).squeeze(0)
'''

NAMES = [
    "rows", "last", "mean_by_shape", "loop_rows", "t_method", "t_attr", "t_vector",
    "transpose_neg", "linear_of_t", "sum_of_t", "relu_of_T", "reshape_flat", "reshape_shape",
    "reshape_tuple", "torch_reshape", "view_flat", "view_of_t", "reshape_of_t", "flatten_m",
    "flatten_fn", "flatten_same", "unsqueeze0", "unsqueeze_last", "squeeze0", "squeeze_back",
    "ids_len",
]

REFUSED = '''
import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def shape_out_of_range(x: TensorF32Cpu2D) -> int:
    return x.shape[5]


def bare_squeeze(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.squeeze()


def rank3(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.unsqueeze(0)


def two_inferred(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.reshape(-1, -1)


def four_sizes(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.reshape(1, 1, 2, -1)


def whole_size(x: TensorF32Cpu2D) -> int:
    return x.size()
'''

REFUSED_WORDS = {
    "shape_out_of_range": ("RXTP-TORCH-110", "index 5 is out of range"),
    "bare_squeeze": ("RXTP-TORCH-115", "without a dim"),
    "rank3": ("RXTP-TORCH-114", "rank 3"),
    "two_inferred": ("RXTP-TORCH-112", "only one dimension can be inferred"),
    "four_sizes": ("RXTP-TORCH-112", "rank 1, 2 or 3"),
    "whole_size": ("RXTP-TORCH-110", "torch.Size"),
}

SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-45, -3.5]


@pytest.fixture(scope="module")
def functions(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "parity_views", SOURCE, NAMES)


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    with generated_module(tmp_path_factory, "refused_views", REFUSED) as module:
        yield module


def matrix(rows, cols, seed, transposed=False):
    g = torch.Generator().manual_seed(seed)
    if transposed:
        # A non-contiguous input of shape [rows, cols].
        x = torch.randn(cols, rows, generator=g).t()
    else:
        x = torch.randn(rows, cols, generator=g)
    flat = x.reshape(-1)
    n = min(len(SPECIAL), flat.numel())
    flat[:n] = torch.tensor(SPECIAL[:n])
    return x.t().contiguous().t() if transposed else x.reshape(rows, cols)


# Functions whose result goes through our own reduction / linear kernels, which are not bit
# for bit ATen's (docs/parity.md): compared within float32 rounding, NaN positions exact.
KERNELS = {"mean_by_shape", "linear_of_t", "sum_of_t", "squeeze_back"}


def check(module, compiled, name, *args):
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    ours = compiled[name](*args)
    try:
        if name in KERNELS:
            torch.testing.assert_close(ours, eager, equal_nan=True)
        else:
            assert_same_bits(ours, eager)
    except AssertionError as error:
        raise AssertionError(f"{name}: {error}") from None
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32)), name
    return ours


def check_outcome(module, compiled, name, *args):
    """Eager's result bit for bit, or eager's exception: the same type and words."""
    try:
        with torch.no_grad():
            getattr(module, name)(*args)
    except Exception as eager_error:
        with pytest.raises(Exception) as ours:
            compiled[name](*args)
        assert type(ours.value) is type(eager_error), (name, ours.value, eager_error)
        assert str(ours.value) == str(eager_error), name
        return None
    return check(module, compiled, name, *args)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape", [(3, 4), (1, 5), (4, 1), (6, 6)])
def test_matrix_views_give_eager_bits(functions, shape, transposed):
    module, compiled = functions
    r, c = shape
    x = matrix(r, c, 1, transposed)
    assert x.is_contiguous() == (not transposed) or r == 1 or c == 1
    for name in ["rows", "last", "mean_by_shape", "loop_rows", "t_method", "t_attr",
                 "transpose_neg", "sum_of_t", "relu_of_T", "reshape_flat", "reshape_shape",
                 "reshape_of_t", "flatten_m", "flatten_fn", "flatten_same"]:
        check(module, compiled, name, x)
    w = matrix(5, r, 2)
    check(module, compiled, "linear_of_t", x, w)
    if r == 1:
        check(module, compiled, "squeeze0", x)
    # `view` of an argument follows eager's stride rules: of a transposed argument,
    # `x.view(-1)` is eager's error and `x.t().view(-1)` a view (x.t() is contiguous).
    for name in ["view_flat", "view_of_t"]:
        check_outcome(module, compiled, name, x)


@pytest.mark.parametrize("n", [1, 2, 6])
def test_vector_views_give_eager_bits(functions, n):
    module, compiled = functions
    v = matrix(1, n, 3).reshape(-1)
    for name in ["t_vector", "unsqueeze0", "unsqueeze_last"]:
        check(module, compiled, name, v)
    w = matrix(4, n, 4)
    check(module, compiled, "squeeze_back", v, w)
    if n % 2 == 0:
        check(module, compiled, "reshape_tuple", v)
        check(module, compiled, "torch_reshape", v, 2)
    assert compiled["ids_len"](torch.arange(n)) == n


def test_returned_views_share_eager_layout(functions):
    module, compiled = functions
    x = matrix(3, 4, 5)
    ours = compiled["t_method"](x)
    assert ours.stride() == x.t().stride()
    assert ours.data_ptr() == x.data_ptr()


def test_view_of_a_transpose_raises_eagers_error(functions):
    module, compiled = functions
    x = matrix(3, 4, 6)
    with pytest.raises(RuntimeError) as eager:
        module.view_of_t(x)
    with pytest.raises(RuntimeError) as ours:
        compiled["view_of_t"](x)
    assert "view size is not compatible" in str(eager.value)
    assert "view size is not compatible" in str(ours.value)


def strided_arguments():
    """Arguments whose strides are not a contiguous tensor's, by kind: transposed, sliced
    (rows and columns), expanded (stride 0, from a column, a row and one element)."""
    g = torch.Generator().manual_seed(12)
    base = torch.randn(6, 8, generator=g)
    base.view(-1)[:4] = torch.tensor([float("nan"), float("-inf"), -0.0, 0.0])
    return {
        "transposed": base.t(),
        "transposed_slice": base.t()[1:5],
        "column_slice": base[:, 1:6],
        "row_step": base[::2],
        "expanded_column": base[:, :1].expand(6, 5),
        "expanded_row": base[:1].expand(4, 8),
        "expanded_one": base[:1, :1].expand(3, 4),
    }


VIEW_FUNCTIONS = ["view_flat", "view_of_t", "reshape_flat", "reshape_of_t", "flatten_m",
                  "t_method", "relu_of_T", "reshape_shape", "sum_of_t", "mean_by_shape"]


@pytest.mark.parametrize("kind", sorted(strided_arguments()))
def test_views_of_strided_arguments_follow_eager(functions, kind):
    """Strided arguments reach the function with their strides, as in eager: views of them
    are views where eager's are (sharing the argument's storage, with eager's strides) and
    eager's error where eager raises (`x.t().view(-1)` of a transposed argument used to
    raise `view size is not compatible` compiled: the argument was copied densely first)."""
    module, compiled = functions
    x = strided_arguments()[kind]
    for name in VIEW_FUNCTIONS:
        ours = check_outcome(module, compiled, name, x)
        if ours is not None and name in {"view_flat", "view_of_t", "t_method"}:
            with torch.no_grad():
                eager = getattr(module, name)(x)
            assert ours.stride() == eager.stride(), (name, ours.stride(), eager.stride())
            assert ours.data_ptr() == eager.data_ptr(), name


def test_view_of_a_transposed_argument_is_a_view(functions):
    module, compiled = functions
    x = matrix(5, 7, 13, transposed=True)
    ours = compiled["view_of_t"](x)
    with torch.no_grad():
        eager = module.view_of_t(x)
    assert_same_bits(ours, eager)
    assert ours.data_ptr() == x.data_ptr()


def test_reshape_sizes_that_do_not_fit_raise_eagers_error(functions):
    module, compiled = functions
    v = matrix(1, 5, 7).reshape(-1)
    with pytest.raises(RuntimeError):
        module.reshape_tuple(v)
    with pytest.raises(RuntimeError, match="invalid for input of size 5"):
        compiled["reshape_tuple"](v)


def test_squeeze_of_a_dim_not_of_size_one_names_the_size(functions):
    module, compiled = functions
    x = matrix(3, 4, 8)
    assert module.squeeze0(x).shape == (3, 4)  # eager keeps the rank
    with pytest.raises(RuntimeError, match="dim 0 has size 3, not 1"):
        compiled["squeeze0"](x)


def test_wrong_rank_inputs_are_refused(functions):
    _, compiled = functions
    with pytest.raises((TypeError, ValueError)):
        compiled["t_method"](torch.zeros(3))


def test_refused_forms_stay_on_python(rextio, refused):
    for name, (code, words) in REFUSED_WORDS.items():
        fn = getattr(refused, name)
        with pytest.raises(rextio.CompileError) as error:
            rextio.compile(fn, strict=True)
        text = str(error.value)
        assert code in text and words in text, (name, text)


def test_reference_surface_leaves_them_on_python(rextio, functions):
    module, _ = functions
    for name in NAMES:
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name


DECORATED = '''
import rextio_torch
from rextio_torch.types import TensorF32Cpu2D


@rextio_torch.compile
def cols(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.T.reshape(x.shape[1], -1)
'''


def test_decorator_form(rextio, tmp_path_factory):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", rextio.RextioFallbackWarning)
        module = import_generated(tmp_path_factory, "decorated_views", DECORATED)
    try:
        x = matrix(3, 4, 9)
        assert_same_bits(module.cols(x), x.T.reshape(4, -1))
    finally:
        del sys.modules["decorated_views"]
