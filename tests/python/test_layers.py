"""Everyday layers (issue 18, extended surface): F.layer_norm, F.embedding, F.embedding_bag
and F.dropout in eval mode, against eager PyTorch.

- layer_norm, embedding and embedding_bag are computed by ATen's own ops (the ones eager calls;
  small embedding_bag sums and means by the runtime's gather in ATen's order), so every
  result is eager's bits exactly, NaN and infinities included; a normalized_shape that is not
  the last dim and an id out of range raise eager's error (type and message).
- dropout(training=False) is its input: eager's bits, no op in the IR.
- Refused forms (dropout in training mode, a lone weight, embedding options, p out of range)
  stay on Python with a diagnostic naming the reason; the reference surface (and the Rextio
  plugin) leaves every spelling on Python.
"""

import math
import sys

import pytest
import torch

from conftest import assert_same_bits, import_generated

SOURCE = '''
import torch
import torch.nn.functional as F
from torch import nn
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def ln_affine(x: TensorF32Cpu2D, g: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.layer_norm(x, (8,), g, b, 1e-6)


def ln_plain(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.layer_norm(x, (8,))


def ln_keywords(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.layer_norm(x, (8,), weight=None, bias=None, eps=1e-5)


def ln_list(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.layer_norm(x, [8], None, None, 1e-5)


def ln_param(x: TensorF32Cpu2D, d: int, g: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.layer_norm(x, [d], g, b, eps=1e-5)


def ln_expression(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu2D:
    return F.layer_norm(x, (d * 2,))


def ln_1d(v: TensorF32Cpu1D, g: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.nn.functional.layer_norm(v, (8,), g, b)


def embed(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding(ids, table)


def embed_weight_keyword(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding(ids, weight=table)


def embed_padding_none(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding(ids, table, padding_idx=None)


def drop_eval(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.dropout(x, 0.1, training=False)


def drop_eval_default_p(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return nn.functional.dropout(v, training=False)


def drop_eval_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.dropout(x, 1.0, False, False).relu()


def block(x: TensorF32Cpu2D, g: TensorF32Cpu1D, b: TensorF32Cpu1D, w1: TensorF32Cpu2D,
          b1: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(F.layer_norm(x, (8,), g, b), w1, b1)


def tower(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, g: TensorF32Cpu1D, b: TensorF32Cpu1D,
          w1: TensorF32Cpu2D, b1: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.layer_norm(F.embedding(ids, table), (8,), g, b)
    h = F.dropout(F.gelu(F.linear(h, w1, b1)), p=0.1, training=False)
    return F.layer_norm(h, (16,), eps=1e-6)


def drop_training(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.dropout(x)


def drop_training_true(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.dropout(x, 0.5, training=True)


def drop_bad_p(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.dropout(x, p=1.5, training=False)


def ln_weight_only(x: TensorF32Cpu2D, g: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.layer_norm(x, (8,), g)


def ln_two_dims(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.layer_norm(x, (2, 4))


def ln_tensor_keywords(x: TensorF32Cpu2D, g: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.layer_norm(x, [8], weight=g, bias=b, eps=1e-5)


def ln_mixed_keywords(x: TensorF32Cpu2D, g: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.layer_norm(x, (8,), g, bias=b)


def ln_eps_param(x: TensorF32Cpu2D, e: float) -> TensorF32Cpu2D:
    return F.layer_norm(x, (8,), eps=e)


def embed_padding(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding(ids, table, padding_idx=0)


def bag_default(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets)


def bag_mean(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets, mode="mean")


def bag_sum(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets, mode="sum", padding_idx=None,
                           include_last_offset=False)


def bag_max(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return torch.nn.functional.embedding_bag(ids, table, offsets, mode="max")


def bag_head(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D,
             w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.log_softmax(F.linear(F.embedding_bag(ids, table, offsets, mode="sum"), w, b), dim=1)


def bag_bad_mode(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets, mode="min")


def bag_last_offset(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets, include_last_offset=True)


def bag_padding(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets, padding_idx=0)


def bag_offsets_keyword(ids: TensorI64Cpu1D, table: TensorF32Cpu2D,
                        offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets=offsets)
'''

COMPILED = ["ln_affine", "ln_plain", "ln_keywords", "ln_list", "ln_param", "ln_expression", "ln_1d",
            "ln_tensor_keywords", "ln_mixed_keywords",
            "embed", "embed_padding_none", "embed_weight_keyword",
            "drop_eval", "drop_eval_default_p", "drop_eval_positional", "block", "tower",
            "bag_default", "bag_mean", "bag_sum", "bag_max", "bag_head", "bag_offsets_keyword"]
BAGS = ["bag_default", "bag_mean", "bag_sum", "bag_max", "bag_offsets_keyword"]

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, 3e38, -3e38, 1.0]


@pytest.fixture(scope="module")
def layers(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_layers", SOURCE)
    compiled = {name: rextio.compile(getattr(module, name), strict=True) for name in COMPILED}
    yield module, compiled
    del sys.modules["parity_layers"]


def eager_and_ours(module, compiled, name, *args):
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    return compiled[name](*args), eager


def rows_of_8():
    g = torch.Generator().manual_seed(18)
    cases = [torch.randn(1, 8, generator=g), torch.randn(5, 8, generator=g) * 30,
             torch.randn(513, 8, generator=g), torch.full((3, 8), 7.0)]
    special = torch.randn(4, 8, generator=g)
    special.view(-1)[: len(SPECIAL)] = torch.tensor(SPECIAL)
    cases.append(special)
    return cases


def test_layer_norm_gives_eager_bits(layers):
    module, compiled = layers
    assert "layer_norm" in compiled["ln_affine"].optimized_ir
    g = torch.Generator().manual_seed(7)
    w, b = torch.randn(8, generator=g), torch.randn(8, generator=g)
    for x in rows_of_8():
        assert_same_bits(*eager_and_ours(module, compiled, "ln_affine", x, w, b))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_plain", x))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_keywords", x))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_list", x))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_param", x, 8, w, b))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_expression", x, 4))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_1d", x[0].contiguous(), w, b))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_tensor_keywords", x, w, b))
        assert_same_bits(*eager_and_ours(module, compiled, "ln_mixed_keywords", x, w, b))
    w[2] = math.nan
    b[3] = math.inf
    assert_same_bits(*eager_and_ours(module, compiled, "ln_affine", rows_of_8()[1], w, b))


def test_layer_norm_of_the_wrong_size_raises_eagers_error(layers):
    module, compiled = layers
    w, b = torch.ones(8), torch.zeros(8)
    for args in [(torch.randn(3, 4),), (torch.randn(2, 16),)]:
        with pytest.raises(RuntimeError) as eager:
            module.ln_plain(*args)
        with pytest.raises(RuntimeError) as ours:
            compiled["ln_plain"](*args)
        assert "Given normalized_shape=[8]" in str(eager.value)
        assert "Given normalized_shape=[8]" in str(ours.value)
    # A weight of the wrong size: eager's error too.
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        module.ln_affine(torch.randn(2, 8), torch.ones(3), b)
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        compiled["ln_affine"](torch.randn(2, 8), torch.ones(3), b)
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[8\]"):
        compiled["ln_1d"](torch.randn(5), w, b)
    # The size as an int parameter or expression, checked at run time.
    for d in (5, 0, -8):
        with pytest.raises(RuntimeError) as eager:
            module.ln_param(torch.randn(2, 8), d, w, b)
        with pytest.raises(RuntimeError) as ours:
            compiled["ln_param"](torch.randn(2, 8), d, w, b)
        assert str(eager.value) in str(ours.value)
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[6\]"):
        compiled["ln_expression"](torch.randn(2, 8), 3)


def test_embedding_gives_eager_bits(layers):
    module, compiled = layers
    assert "embedding" in compiled["embed"].optimized_ir
    table = torch.randn(10, 6)
    table[4] = torch.tensor([math.nan, math.inf, -math.inf, -0.0, 1e-40, 3e38])
    for ids in [torch.tensor([4]), torch.tensor([0, 9, 4, 4, 1]), torch.arange(10).flip(0),
                torch.randint(0, 10, (1000,)), torch.tensor([], dtype=torch.int64)]:
        for name in ("embed", "embed_padding_none", "embed_weight_keyword"):
            assert_same_bits(*eager_and_ours(module, compiled, name, ids, table))


@pytest.mark.parametrize("ids", [[10], [0, 3, 11], [-1], [2, -11]])
def test_embedding_out_of_range_raises_eagers_index_error(layers, ids):
    module, compiled = layers
    ids, table = torch.tensor(ids), torch.randn(10, 3)
    with pytest.raises(IndexError) as eager:
        module.embed(ids, table)
    with pytest.raises(IndexError) as ours:
        compiled["embed"](ids, table)
    assert str(eager.value) in str(ours.value)


def test_dropout_in_eval_mode_is_its_input(layers):
    module, compiled = layers
    for x in rows_of_8():
        assert_same_bits(*eager_and_ours(module, compiled, "drop_eval", x))
        assert_same_bits(*eager_and_ours(module, compiled, "drop_eval_positional", x))
        v = x.view(-1)
        assert_same_bits(*eager_and_ours(module, compiled, "drop_eval_default_p", v))
    # No op in the IR: the site's value is its operand.
    assert "dropout" not in compiled["drop_eval"].optimized_ir


@pytest.mark.parametrize("rows", [1, 4, 97])
def test_a_transformer_block_matches_eager(layers, rows):
    module, compiled = layers
    g = torch.Generator().manual_seed(rows)
    x = torch.randn(rows, 8, generator=g) * 3
    ln_w, ln_b = torch.randn(8, generator=g), torch.randn(8, generator=g)
    w1, b1 = torch.randn(16, 8, generator=g) / 3, torch.randn(16, generator=g)
    with torch.no_grad():
        eager = module.block(x, ln_w, ln_b, w1, b1)
    ours = compiled["block"](x, ln_w, ln_b, w1, b1)
    # layer_norm is eager's bits; the product after it is the compiled linear's (the usual
    # linear tolerance of the parity suite).
    torch.testing.assert_close(ours, eager, rtol=1e-5, atol=1e-5)
    ids = torch.randint(0, 12, (rows,), generator=g)
    table = torch.randn(12, 8, generator=g)
    with torch.no_grad():
        eager = module.tower(ids, table, ln_w, ln_b, w1, b1)
    ours = compiled["tower"](ids, table, ln_w, ln_b, w1, b1)
    torch.testing.assert_close(ours, eager, rtol=1e-4, atol=1e-4)
    ir = compiled["tower"].optimized_ir
    assert ir.count("layer_norm") == 2 and "embedding" in ir and "fused_linear" in ir, ir


@pytest.mark.parametrize("name,code,words", [
    ("drop_training", "RXTP-TORCH-067", "dropout in training mode is random"),
    ("drop_training_true", "RXTP-TORCH-067", "dropout in training mode is random"),
    ("drop_bad_p", "RXTP-TORCH-067", "dropout probability has to be between 0 and 1, but got 1.5"),
    ("ln_weight_only", "RXTP-TORCH-065", "layer_norm takes weight and bias together"),
    ("ln_eps_param", "RXTP-TORCH-065", "layer_norm requires eps as a float literal"),
    ("ln_two_dims", "RXTP-TORCH-065", "one-element tuple"),
    ("embed_padding", "RXTP-TORCH-066", "embedding options are not claimed (padding_idx=0)"),
    ("bag_bad_mode", "RXTP-TORCH-090", "mode has to be one of sum, mean or max"),
    ("bag_last_offset", "RXTP-TORCH-090",
     "embedding_bag options are not claimed (include_last_offset=True)"),
    ("bag_padding", "RXTP-TORCH-090", "embedding_bag options are not claimed (padding_idx=0)"),
])
def test_refused_forms_stay_on_python_with_a_diagnostic(rextio, layers, name, code, words):
    module, _ = layers
    fn = getattr(module, name)
    with pytest.raises(rextio.CompileError, match=code) as err:
        rextio.compile(fn, strict=True)
    assert words in str(err.value)
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(fn)
    assert kept.__wrapped__ is fn


def test_tensor_keywords_stay_on_python_under_the_reference_surface(rextio, layers):
    # The host offers a call only with literal keyword values (RXT080); the extended surface
    # reads the layers' keyword tensors (`weight=w`), the reference one is the host's.
    module, _ = layers
    with pytest.raises(rextio.CompileError, match="RXT080") as err:
        rextio.compile(module.ln_tensor_keywords, strict=True, surface="reference")
    assert "keyword `weight` has a non-literal value" in str(err.value)
    assert "pass this value positionally" in str(err.value)


def test_dropout_with_p_out_of_range_raises_eagers_error_on_python(rextio, layers):
    module, _ = layers
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(module.drop_bad_p)
    with pytest.raises(ValueError, match="between 0 and 1"):
        kept(torch.randn(2, 3))


def test_the_reference_surface_leaves_them_on_python(rextio, layers):
    module, _ = layers
    for name in COMPILED:
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name


def test_explain_names_the_layer_rules(rextio, layers):
    module, _ = layers
    why = rextio.explain(module.tower)
    assert why.compiles
    rules = [s.rule_id for s in why.sites]
    bag = rextio.explain(module.bag_head)
    assert bag.compiles
    assert "rextio-torch/functional-embedding-bag-i64-ids-offsets-f32-cpu-2d" in [
        s.rule_id for s in bag.sites]
    for rule in ("rextio-torch/functional-layer-norm-last-dim-f32-cpu-rank1-2",
                 "rextio-torch/functional-embedding-i64-ids-f32-cpu-2d",
                 "rextio-torch/functional-dropout-eval-f32-cpu-rank1-2"):
        assert rule in rules, rules


def test_the_plugin_does_not_know_the_layer_rules():
    import json

    from rextio_torch import _native

    ids = {r["id"] for r in json.loads(_native.plugin_rule_records())}
    assert not {"rextio-torch/functional-layer-norm-last-dim-f32-cpu-rank1-2",
                "rextio-torch/functional-embedding-i64-ids-f32-cpu-2d",
                "rextio-torch/functional-dropout-eval-f32-cpu-rank1-2",
                "rextio-torch/functional-embedding-bag-i64-ids-offsets-f32-cpu-2d"} & ids
    _, symbols, _ = _native.plugin_surface()
    for symbol in ("torch.nn.functional.layer_norm", "torch.nn.functional.embedding",
                   "torch.nn.functional.dropout", "torch.nn.functional.embedding_bag"):
        assert symbol not in symbols


def bag_cases():
    """(ids, offsets) over a 10-row table: one bag, several, empty bags (first, middle, last),
    repeated ids, no ids at all, many bags, no bags."""
    g = torch.Generator().manual_seed(90)
    t = lambda *v: torch.tensor(v, dtype=torch.int64)  # noqa: E731
    many = torch.randint(0, 10, (4096,), generator=g)
    return [
        (t(4), t(0)),
        (t(0, 9, 4, 4, 1), t(0, 2)),
        (t(0, 9, 4, 4, 1), t(0, 0, 3, 3, 5)),
        (t(1, 2, 3), t(0, 3)),
        (t(), t(0, 0)),
        (t(), t(0)),
        (many, torch.arange(0, 4096, 32)),
        (many, torch.sort(torch.randint(0, 4097, (300,), generator=g)).values.index_fill(0, t(0), 0)),
        (t(), t()),
    ]


def special_table():
    table = torch.randn(10, 6, generator=torch.Generator().manual_seed(6))
    table[4] = torch.tensor([math.nan, math.inf, -math.inf, -0.0, 1e-40, 3e38])
    table[9] = torch.tensor([3e38, 3e38, -math.inf, math.inf, -1e-40, math.nan])
    return table


def test_embedding_bag_gives_eager_bits(layers):
    module, compiled = layers
    assert "embedding_bag" in compiled["bag_default"].optimized_ir
    assert "mode=max" in compiled["bag_max"].optimized_ir
    for table in (torch.randn(10, 6), special_table()):
        for ids, offsets in bag_cases():
            for name in BAGS:
                assert_same_bits(*eager_and_ours(module, compiled, name, ids, table, offsets))


@pytest.mark.parametrize("docs,tokens,dim", [(1, 32, 64), (16, 32, 64), (256, 32, 64), (40, 5, 300)])
def test_embedding_bag_of_many_random_bags_gives_eager_bits(layers, docs, tokens, dim):
    # The sizes of the models benchmark's text classifier (sum and mean run the runtime's own
    # loop over a float32 table, which must keep ATen's order of additions and its division).
    module, compiled = layers
    g = torch.Generator().manual_seed(docs * dim)
    table = torch.randn(2_000, dim, generator=g) * 10
    lengths = torch.randint(0, 2 * tokens, (docs,), generator=g)
    ids = torch.randint(0, 2_000, (int(lengths.sum()),), generator=g)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
    for name in ("bag_default", "bag_sum", "bag_mean"):
        assert_same_bits(*eager_and_ours(module, compiled, name, ids, table, offsets))


def test_embedding_bag_without_bags_in_sum_and_mean(layers):
    # No offsets: eager gives a [0, dim] result (in max mode it reads out of bounds with ids
    # present; the compiled function gives the same empty result there).
    module, compiled = layers
    ids, table, offsets = torch.tensor([3, 4]), torch.randn(10, 6), torch.tensor([], dtype=torch.int64)
    for name in ("bag_sum", "bag_mean"):
        assert_same_bits(*eager_and_ours(module, compiled, name, ids, table, offsets))
    assert compiled["bag_max"](ids, table, offsets).shape == (0, 6)


@pytest.mark.parametrize("name", BAGS)
@pytest.mark.parametrize("ids,offsets", [
    ([10], [0]), ([0, 3, 11], [0, 1]), ([-1], [0]), ([2, -11], [0, 1]),   # ids out of range
    ([0, 1], [1]), ([0, 1], [2, 2]),                                       # offsets[0] != 0
    ([0, 1], [0, 3]), ([0, 1, 2], [0, 1, 4]),                              # offsets past the ids
])
def test_embedding_bag_errors_are_eagers(layers, name, ids, offsets):
    module, compiled = layers
    args = (torch.tensor(ids, dtype=torch.int64), torch.randn(10, 3),
            torch.tensor(offsets, dtype=torch.int64))
    with pytest.raises(Exception) as eager:
        getattr(module, name)(*args)
    with pytest.raises(Exception) as ours:
        compiled[name](*args)
    assert type(ours.value) is type(eager.value)
    assert str(eager.value).splitlines()[0] in str(ours.value)


@pytest.mark.parametrize("name", BAGS)
def test_embedding_bag_refuses_decreasing_offsets(layers, name):
    # Eager does not check that offsets never decrease, and reads out of bounds when they do
    # (a garbage sum, an IndexError or a result, by mode): the compiled function raises.
    _, compiled = layers
    ids, table = torch.tensor([0, 1, 2]), torch.randn(10, 3)
    with pytest.raises(RuntimeError, match=r"offsets must be non-decreasing, but offsets\[1\] = 2"):
        compiled[name](ids, table, torch.tensor([0, 2, 1]))


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_embedding_bag_head_matches_eager(layers, batch):
    module, compiled = layers
    g = torch.Generator().manual_seed(batch)
    ids = torch.randint(0, 50, (batch * 7,), generator=g)
    offsets = torch.arange(0, batch * 7, 7)
    table = torch.randn(50, 16, generator=g)
    w, b = torch.randn(4, 16, generator=g) / 4, torch.randn(4, generator=g)
    ours, eager = eager_and_ours(module, compiled, "bag_head", ids, table, offsets, w, b)
    torch.testing.assert_close(ours, eager, rtol=1e-5, atol=1e-5)
    ir = compiled["bag_head"].optimized_ir
    assert "embedding_bag" in ir and "mode=sum" in ir and "fused_linear" in ir, ir


def test_embedding_bag_offsets_keyword_is_the_hosts_refusal_under_the_reference_surface(rextio, layers):
    module, _ = layers
    with pytest.raises(rextio.CompileError, match="RXT080") as err:
        rextio.compile(module.bag_offsets_keyword, strict=True, surface="reference")
    assert "keyword `offsets` has a non-literal value" in str(err.value)


def test_text_classifier_of_the_models_suite_compiles_and_matches_eager(rextio):
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("models_for_test", ROOT / "benches" / "models.py")
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    compiled = rextio.compile(models.text_classifier, strict=True)
    assert "embedding_bag" in compiled.optimized_ir
    for batch in models.BATCHES:
        args = models.model_args("text_classifier", batch, seed=batch)
        with torch.no_grad():
            eager = models.text_classifier(*args)
        ours = compiled(*args)
        # The pooled rows are eager's bits; the linear after them is the compiled linear's.
        torch.testing.assert_close(ours, eager, rtol=1e-5, atol=1e-5)
