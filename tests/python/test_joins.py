"""torch.cat / torch.stack (issue 18, extended surface) against eager PyTorch.

- Every spelling (`torch.cat([a, b], dim=d)`, `torch.cat((a, b), d)`, `torch.cat([a, b])`,
  `torch.concat`, `torch.concatenate`, `torch.stack`), negative dims, three parts, parts made
  by other ops (linear, relu) and a cat feeding a linear: eager's bits exactly (a join is a
  copy), NaN, infinities and `-0.0` included, 1-row and zero-size parts.
- Parts whose other sizes differ at run time raise eager's exception type (`RuntimeError`)
  with ATen's words.
- Rank 0 and 3: a stack of rank-0 tensors (`torch.stack([x.sum(), x.max()])`) is a vector,
  a stack of matrices a rank-3 tensor, a cat of rank-3 tensors one; eager's bits.
- Refused forms (mixed ranks, a cat of rank-0 tensors, a stack of rank-3 tensors, a list not
  written in the call, an int64 part) stay on Python with a diagnostic naming the problem (`strict=False` warns).
- The Rextio plugin and `surface="reference"` do not claim them (the reference does not).
"""

import math

import pytest
import torch

from conftest import assert_same_bits, compiled_functions, generated_module

SOURCE = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D


def cat_cols(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([a, b], dim=1)


def cat_tuple_rows(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat((a, b), 0)


def cat_default(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([a, b])


def cat_last(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.concat([a, b], dim=-1)


def cat_three(a: TensorF32Cpu2D, b: TensorF32Cpu2D, c: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.concatenate([a, b, c], dim=-2)


def cat_one(a: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([a], dim=1)


def cat_same(a: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([a, a, a], dim=1)


def cat_vectors(u: TensorF32Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.cat([u, v, u], -1)


def stack_rows(u: TensorF32Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.stack([u, v], dim=0)


def stack_cols(u: TensorF32Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.stack((u, v, u), -1)


def stack_default(u: TensorF32Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.stack([u, v])


def stack_neg2(u: TensorF32Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.stack([u, v], dim=-2)


def cat_of_ops(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.cat([x, F.linear(x, w, b).relu(), x.relu()], dim=1)


def cat_then_linear(dense: TensorF32Cpu2D, x: TensorF32Cpu2D, w1: TensorF32Cpu2D,
                    w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    e = F.linear(x, w1)
    h = torch.cat([dense, e], dim=1)
    return F.linear(h, w2, b2).relu()


def cat_of_product(dense: TensorF32Cpu2D, x: TensorF32Cpu2D, w1: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([dense, F.linear(x, w1)], dim=1)


def product_only(x: TensorF32Cpu2D, w1: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(x, w1)


def stack_of_ops(u: TensorF32Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.stack([u.relu(), v * 2.0, u + v], dim=1)


def stack_scalars(a: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.stack([a.sum(), a.amax(), a.mean(), a.min()])


def stack_scalars_last(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.stack((a.sum(), b.sum()), dim=-1) * 0.5


def stack_matrices(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.stack([a, b.relu()])


def stack_matrices_last(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.stack([a, b], dim=-1)


def cat_batches(p: TensorF32Cpu3D, q: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.cat([p, q], dim=-1)


def cat_batches_first(p: TensorF32Cpu3D, q: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.cat((p, q.tanh()), 0)
'''

REFUSED = '''
import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D


def mixed_ranks(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.cat([a, v], dim=0)


def stack_batches(p: TensorF32Cpu3D, q: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.stack([p, q])


def cat_scalars(a: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.cat([a.sum(), a.max()])


def int_part(v: TensorF32Cpu1D, i: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return torch.cat([v, i])


def dim_out_of_range(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([a, b], dim=2)


def list_elsewhere(a: TensorF32Cpu2D) -> TensorF32Cpu2D:
    parts = [a, a]
    return torch.cat(parts, dim=1)


def empty_list(a: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([], dim=0)


def out_keyword(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([a, b], dim=0, out=a)
'''

REFUSED_WORDS = {
    "mixed_ranks": ("RXTP-TORCH-080", "mixes ranks"),
    "stack_batches": ("RXTP-TORCH-081", "rank 4"),
    "cat_scalars": ("RXTP-TORCH-080", "zero-dimensional tensor"),
    "int_part": ("RXTP-TORCH-080", "part 1 is TensorI64Cpu1D"),
    "dim_out_of_range": ("RXTP-TORCH-080", "dim=2 is out of range"),
    "list_elsewhere": ("RXT031", "list display"),
    "empty_list": ("RXTP-TORCH-080", "empty list"),
    "out_keyword": ("RXT080", "keyword `out`"),
}

NAMES = ["cat_cols", "cat_tuple_rows", "cat_default", "cat_last", "cat_three", "cat_one", "cat_same",
         "cat_vectors", "stack_rows", "stack_cols", "stack_default", "stack_neg2", "cat_of_ops",
         "cat_then_linear", "stack_of_ops", "stack_scalars", "stack_scalars_last", "stack_matrices",
         "stack_matrices_last", "cat_batches", "cat_batches_first", "cat_of_product", "product_only"]

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, 3e38, -3e38, 1.0]


@pytest.fixture(scope="module")
def functions(rextio, tmp_path_factory):
    yield from compiled_functions(rextio, tmp_path_factory, "parity_joins", SOURCE, NAMES)


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    with generated_module(tmp_path_factory, "refused_joins", REFUSED) as module:
        yield module


def matrix(rows, cols, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g)
    flat = x.view(-1)
    n = min(len(SPECIAL), flat.numel())
    flat[:n] = torch.tensor(SPECIAL[:n])
    return x


def run(module, compiled, name, *args):
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    ours = compiled[name](*args)
    try:
        assert_same_bits(ours, eager)
    except AssertionError as error:
        raise AssertionError(f"{name} on {[tuple(a.shape) for a in args]}: {error}") from None
    return ours


SHAPES_2D = [(3, 4, 5), (1, 1, 1), (1, 7, 3), (20, 33, 65), (0, 3, 4), (4, 0, 3), (4, 3, 0)]


@pytest.mark.parametrize("rows,ca,cb", SHAPES_2D)
def test_cat_matrices_give_eager_bits(functions, rows, ca, cb):
    module, compiled = functions
    a, b = matrix(rows, ca, rows * 31 + ca), matrix(rows, cb, cb * 7 + 1)
    assert "cat" in compiled["cat_cols"].optimized_ir
    for name in ("cat_cols", "cat_last"):
        run(module, compiled, name, a, b)
    # Rows: parts with the same column count.
    at, bt = a.t().contiguous(), matrix(cb, rows, ca + cb)
    for name in ("cat_tuple_rows", "cat_default"):
        run(module, compiled, name, at, bt)
    run(module, compiled, "cat_three", at, bt, matrix(2, rows, 5))
    for name in ("cat_one", "cat_same"):
        run(module, compiled, name, a)
    # A one-part cat is a copy, as eager's.
    assert compiled["cat_one"](a).data_ptr() != a.data_ptr() or a.numel() == 0


@pytest.mark.parametrize("n,m", [(1, 1), (10, 3), (0, 4), (0, 0), (65, 129)])
def test_cat_and_stack_vectors_give_eager_bits(functions, n, m):
    module, compiled = functions
    u = matrix(1, n, n).view(-1)
    v = matrix(1, m, m + 3).view(-1)
    run(module, compiled, "cat_vectors", u, v)
    w = matrix(1, n, n + 11).view(-1)
    for name in ("stack_rows", "stack_cols", "stack_default", "stack_neg2", "stack_of_ops"):
        run(module, compiled, name, u, w)


def test_non_contiguous_parts(functions):
    module, compiled = functions
    a = matrix(4, 6, 1).t()  # a transposed view, 6 x 4
    b = matrix(18, 3, 2)[::3]  # a strided view, 6 x 3
    run(module, compiled, "cat_cols", a, b)
    run(module, compiled, "cat_cols", b, a)


@pytest.mark.parametrize("batch,k,n", [(1, 8, 5), (16, 64, 32), (33, 40, 100)])
def test_cat_of_op_results(functions, batch, k, n):
    module, compiled = functions
    g = torch.Generator().manual_seed(batch + k + n)
    x = torch.randn(batch, k, generator=g)
    x[0, 0] = math.nan
    w, b = torch.randn(n, k, generator=g) / k ** 0.5, torch.randn(n, generator=g)
    ir = compiled["cat_of_ops"].optimized_ir
    assert "cat" in ir, ir
    with torch.no_grad():
        eager = module.cat_of_ops(x, w, b)
    ours = compiled["cat_of_ops"](x, w, b)
    # The parts that are copies of x (and x.relu()) are eager's bits; the linear part is
    # the product's, which rounds like the compiled linear (compared with its tolerance).
    assert_same_bits(ours[:, :k], eager[:, :k])
    assert_same_bits(ours[:, k + n:], eager[:, k + n:])
    compiled_linear = torch.nn.functional.linear(x, w, b).relu()
    torch.testing.assert_close(ours[:, k:k + n], compiled_linear, equal_nan=True)


@pytest.mark.parametrize("batch", [1, 7, 64])
def test_cat_then_linear(functions, batch):
    """DLRM's shape: dense features joined with an embedding-like product, then a layer."""
    module, compiled = functions
    g = torch.Generator().manual_seed(batch)
    dense, x = torch.randn(batch, 13, generator=g), torch.randn(batch, 20, generator=g)
    w1 = torch.randn(16, 20, generator=g) / 20 ** 0.5
    w2, b2 = torch.randn(8, 29, generator=g) / 29 ** 0.5, torch.randn(8, generator=g)
    with torch.no_grad():
        eager = module.cat_then_linear(dense, x, w1, w2, b2)
    ours = compiled["cat_then_linear"](dense, x, w1, w2, b2)
    assert ours.shape == eager.shape
    torch.testing.assert_close(ours, eager)
    ir = compiled["cat_then_linear"].optimized_ir
    assert "cat" in ir, ir
    # The cat itself is exact: the compiled cat of the dense features and the compiled
    # product has the bits of eager's `torch.cat` of the dense features and that product
    # (a join is a copy; the product alone rounds as the compiled linear does), also for a
    # transposed dense part, and the layer after it is eager's layer on that cat.
    product = compiled["product_only"](x, w1)
    for part in (dense, dense.t().contiguous().t()):
        joined = compiled["cat_of_product"](part, x, w1)
        assert_same_bits(joined, torch.cat([part, product], dim=1))
        assert_same_bits(joined[:, :13], part)
    with torch.no_grad():
        layer_on_ours = torch.nn.functional.linear(torch.cat([dense, product], dim=1), w2, b2).relu()
    torch.testing.assert_close(ours, layer_on_ours, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,args", [
    ("cat_cols", (torch.zeros(2, 3), torch.zeros(3, 3))),
    ("cat_default", (torch.zeros(2, 3), torch.zeros(2, 4))),
    ("cat_three", (torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 4))),
    ("stack_rows", (torch.zeros(3), torch.zeros(4))),
    ("stack_cols", (torch.zeros(0), torch.zeros(1))),
])
def test_size_mismatch_raises_eagers_error(functions, name, args):
    module, compiled = functions
    with pytest.raises(Exception) as eager:
        getattr(module, name)(*args)
    with pytest.raises(Exception) as ours:
        compiled[name](*args)
    assert type(ours.value) is type(eager.value) is RuntimeError
    assert str(ours.value) == str(eager.value)


def test_refused_forms_stay_on_python(rextio, refused):
    for name, (code, words) in REFUSED_WORDS.items():
        fn = getattr(refused, name)
        with pytest.raises(rextio.CompileError) as error:
            rextio.compile(fn, strict=True)
        text = str(error.value)
        assert code in text and words in text, (name, text)
        with pytest.warns(rextio.RextioFallbackWarning, match=code):
            fallback = rextio.compile(fn)
        assert fallback.__wrapped__ is fn


def test_reference_surface_leaves_them_on_python(rextio, functions):
    module, _ = functions
    # `product_only` is no join: the reference surface compiles it (it feeds a test above).
    for name in (n for n in NAMES if n != "product_only"):
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name


NEW_RULES = {"rextio-torch/cat-static-dim-f32-cpu-rank1-3", "rextio-torch/stack-static-dim-f32-cpu-rank0-2"}


def test_check_knows_the_rules_and_the_plugin_does_not():
    import json

    from rextio_torch import _native

    ids = [r["id"] for r in json.loads(_native.plugin_rule_records())]
    assert not NEW_RULES & set(ids), "the plugin's records are the reference's and 049"
    _, symbols, _ = _native.plugin_surface()
    for symbol in ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack"):
        assert symbol not in symbols


def test_the_rextio_plugin_does_not_cover_them():
    api = pytest.importorskip("rextio.plugins.api", reason="rextio (Rextio core) is not installed")
    import importlib.metadata

    (entry,) = [e for e in importlib.metadata.entry_points(group="rextio.plugins") if e.name == "rextio-torch"]
    provider = entry.load()()
    assert not NEW_RULES & {r.id for r in provider.describe(None)}
    M = "rextio-torch/tensor-f32-cpu-2d"
    dim1 = api.KeywordArg("dim", "int", api.ClaimLiteral(is_literal=True, value=1))
    for target in ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack"):
        # The host offers a list display as one operand (of no plugin type).
        for operands in ([None], [M, M]):
            site = api.ClaimSite(kind="call", target=target, operand_types=tuple(operands), file_path="",
                                 line=0, column=0,
                                 operand_literals=tuple(api.NON_LITERAL for _ in operands),
                                 keywords=(dim1,))
            assert provider.claim(site, None) == api.NotCovered(), site


@pytest.mark.parametrize("rows,cols", [(3, 4), (1, 1), (5, 7), (0, 3)])
def test_rank0_and_rank3_joins_give_eager_bits(functions, rows, cols):
    module, compiled = functions
    a, b = matrix(rows, cols, 40 + rows), matrix(rows, cols, 80 + cols)
    if rows:
        run(module, compiled, "stack_scalars", a)
        run(module, compiled, "stack_scalars_last", a, b)
    else:  # `amax`/`min` of an empty tensor: eager's error, ours
        with pytest.raises(RuntimeError) as expected:
            module.stack_scalars(a)
        with pytest.raises(RuntimeError) as got:
            compiled["stack_scalars"](a)
        assert str(got.value) == str(expected.value)
    run(module, compiled, "stack_matrices", a, b)
    run(module, compiled, "stack_matrices_last", a, b)
    p, q = matrix(rows, cols, 7).reshape(1, rows, cols), matrix(rows, cols, 8).reshape(1, rows, cols)
    run(module, compiled, "cat_batches", p, q)
    run(module, compiled, "cat_batches_first", p, q)


def test_rank3_joins_raise_eagers_error(functions):
    module, compiled = functions
    a, b = torch.randn(2, 3), torch.randn(3, 2)
    for name, args in [("stack_matrices", (a, b)), ("cat_batches", (torch.randn(2, 3, 4), torch.randn(1, 3, 4)))]:
        with pytest.raises(RuntimeError) as expected:
            getattr(module, name)(*args)
        with pytest.raises(RuntimeError) as got:
            compiled[name](*args)
        assert str(got.value) == str(expected.value)
