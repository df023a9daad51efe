"""Everyday layers (issue 18, extended surface): F.layer_norm, F.embedding and F.dropout in
eval mode, against eager PyTorch.

- layer_norm and embedding are computed by ATen's own ops (the ones eager calls), so every
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

from test_parity import import_generated

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


def embed_padding(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding(ids, table, padding_idx=0)
'''

COMPILED = ["ln_affine", "ln_plain", "ln_keywords", "ln_list", "ln_param", "ln_expression", "ln_1d",
            "embed", "embed_padding_none",
            "drop_eval", "drop_eval_default_p", "drop_eval_positional", "block", "tower"]

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, 3e38, -3e38, 1.0]


@pytest.fixture(scope="module")
def layers(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_layers", SOURCE)
    compiled = {name: rextio.compile(getattr(module, name), strict=True) for name in COMPILED}
    yield module, compiled
    del sys.modules["parity_layers"]


def assert_same_bits(ours, eager):
    assert ours.shape == eager.shape and ours.dtype == eager.dtype
    nan = torch.isnan(eager)
    assert torch.equal(torch.isnan(ours), nan), "NaN positions"
    assert torch.equal(ours[~nan].view(torch.int32), eager[~nan].view(torch.int32)), "bits"


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
        for name in ("embed", "embed_padding_none"):
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
    ("ln_two_dims", "RXTP-TORCH-065", "one-element tuple"),
    ("embed_padding", "RXTP-TORCH-066", "embedding options are not claimed (padding_idx=0)"),
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


def test_tensor_keywords_stay_on_python_with_the_hosts_diagnostic(rextio, layers):
    # The host offers a call only with literal keyword values (RXT080): weight and bias go
    # positionally.
    module, _ = layers
    with pytest.raises(rextio.CompileError, match="RXT080") as err:
        rextio.compile(module.ln_tensor_keywords, strict=True)
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
                "rextio-torch/functional-dropout-eval-f32-cpu-rank1-2"} & ids
    _, symbols, _ = _native.plugin_surface()
    for symbol in ("torch.nn.functional.layer_norm", "torch.nn.functional.embedding",
                   "torch.nn.functional.dropout"):
        assert symbol not in symbols
