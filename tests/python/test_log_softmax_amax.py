"""log_softmax and the amax/amin reductions (issue 18, extended surface) against eager PyTorch.

- log_softmax: NaN in the same places, the same infinities, the same signs of zero, and every
  finite value within `LOG_SOFTMAX_ULPS` ulps of `max(|eager|, 1)` of eager's (ours and
  ATen's compute `(x - max) - log(sum)` with `sum >= 1`, whose sums and logs round
  differently: an absolute error of a few ulps of 1 however small the result;
  docs/parity.md, "log_softmax").
- amax/amin: eager's bits exactly, NaN positions (a line with a NaN gives NaN), infinities
  and which of `0.0` / `-0.0` a line of both gives.
- The Rextio plugin and `surface="reference"` do not claim them (the reference does not).
"""

import math
import sys

import pytest
import torch

from conftest import assert_parity, assert_same_bits, import_generated

SOURCE = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def lsm_f_last(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.log_softmax(x, dim=-1)


def lsm_torch_dim0(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.log_softmax(x, 0)


def lsm_method_1d(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x.log_softmax(dim=0)


def lsm_head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.log_softmax(F.linear(x, w, b).relu(), dim=1)


def amax_rows(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.amax(dim=-1)


def amax_cols_keep(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.amax(x, dim=0, keepdim=True)


def amin_rows_keep(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.amin(1, keepdim=True)


def amin_cols(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.amin(x, 0)


def amax_1d(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x.amax(dim=0, keepdim=True)


def amin_1d(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.amin(x, -1, keepdim=True)


def centered(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x - x.amax(dim=1, keepdim=True)
'''

NAMES_2D = ["lsm_f_last", "lsm_torch_dim0", "amax_rows", "amax_cols_keep", "amin_rows_keep",
            "amin_cols", "centered"]
NAMES_1D = ["lsm_method_1d", "amax_1d", "amin_1d"]

# The envelope of docs/parity.md (the worst measured in runtime/tests/dense.rs is 2.0).
LOG_SOFTMAX_ULPS = 3.0

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, 3e38, -3e38, 88.0, -104.0, 1.0]


@pytest.fixture(scope="module")
def functions(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_log_softmax_amax", SOURCE)
    compiled = {name: rextio.compile(getattr(module, name), strict=True)
                for name in NAMES_2D + NAMES_1D + ["lsm_head"]}
    yield module, compiled
    del sys.modules["parity_log_softmax_amax"]


def ulp(values: torch.Tensor) -> torch.Tensor:
    """The float32 ulp of each |value| (the smallest subnormal at 0), as float64."""
    a = values.abs().float()
    return (torch.nextafter(a, torch.tensor(math.inf)) - a).double().clamp(min=2.0**-149)


def assert_log_softmax_matches(x, ours, eager, dim):
    assert_parity(ours, eager)
    zero = eager == 0
    assert torch.equal(torch.signbit(ours[zero]), torch.signbit(eager[zero])), "signs of zero"
    finite = torch.isfinite(eager)
    if not finite.any():
        return
    scale = eager.double().abs().clamp(min=1.0)[finite]
    worst = ((ours[finite].double() - eager[finite].double()).abs() / ulp(scale)).max().item()
    assert worst <= LOG_SOFTMAX_ULPS, f"{worst} ulps"


def inputs_2d():
    g = torch.Generator().manual_seed(18)
    special = torch.tensor(SPECIAL, dtype=torch.float32)
    cases = [torch.randn(5, 7, generator=g), torch.randn(3, 300, generator=g) * 20,
             torch.randn(70, 3, generator=g), torch.randn(1, 1, generator=g),
             torch.randn(64, 129, generator=g) * 1e3, torch.randn(2, 5000, generator=g)]
    with_special = torch.randn(12, 12, generator=g) * 3
    with_special.view(-1)[::11][: len(SPECIAL)] = special
    cases.append(with_special)
    # Rows of only -inf, one +inf, one NaN; a row of signed zeros; a row that underflows.
    rows = torch.randn(6, 9, generator=g)
    rows[0] = -math.inf
    rows[1, 3] = math.inf
    rows[2, 4] = math.nan
    rows[3] = torch.tensor([-0.0, 0.0] * 4 + [-0.0])
    rows[4] = torch.tensor([0.0] + [-200.0] * 8)
    cases.append(rows)
    return cases


def test_log_softmax_matches_eager(functions):
    module, compiled = functions
    assert "log_softmax" in compiled["lsm_f_last"].optimized_ir
    for x in inputs_2d():
        for name, dim in (("lsm_f_last", 1), ("lsm_torch_dim0", 0)):
            with torch.no_grad():
                eager = getattr(module, name)(x)
            try:
                assert_log_softmax_matches(x, compiled[name](x), eager, dim)
            except AssertionError as error:
                raise AssertionError(f"{name} on {tuple(x.shape)}: {error}") from None
    for x in [torch.tensor(SPECIAL), torch.randn(1000) * 10, torch.tensor([-0.0]), torch.tensor([5.0, 5.0])]:
        with torch.no_grad():
            eager = module.lsm_method_1d(x)
        assert_log_softmax_matches(x, compiled["lsm_method_1d"](x), eager, 0)


@pytest.mark.parametrize("batch,k,n", [(1, 8, 10), (16, 128, 8), (33, 40, 100), (64, 256, 32)])
def test_linear_then_log_softmax_is_one_fused_op(kernel_path, functions, batch, k, n):
    module, compiled = functions
    head = compiled["lsm_head"]
    assert "tail=log_softmax(dim=1)" in head.optimized_ir, head.optimized_ir
    g = torch.Generator().manual_seed(batch * k + n)
    x, w = torch.randn(batch, k, generator=g), torch.randn(n, k, generator=g) / k ** 0.5
    b = torch.randn(n, generator=g) * 0.1
    if batch > 1:
        x[1, 0] = math.nan
    with torch.no_grad():
        eager = module.lsm_head(x, w, b)
    # The product rounds differently from eager's GEMM: the default tolerance (a log-softmax
    # of values within it moves by at most twice as much, and every value here is below 10).
    assert_parity(head(x, w, b), eager)


def zero_lines():
    """Lines of -0.0 and +0.0 in every arrangement up to 4 long, then longer ones with the
    one +0.0 (or -0.0) at each position, so that every lane and vector split of ATen's
    loops sees both orders."""
    lines = []
    for n in range(1, 5):
        for bits in range(2 ** n):
            lines.append([0.0 if bits >> i & 1 else -0.0 for i in range(n)])
    for n in (8, 17, 31, 32, 33, 63, 64, 65, 130):
        for pos in range(n):
            for odd, rest in ((0.0, -0.0), (-0.0, 0.0)):
                line = [rest] * n
                line[pos] = odd
                lines.append(line)
    return lines


def test_amax_amin_give_eager_bits(functions):
    module, compiled = functions
    assert "amax" in compiled["amax_rows"].optimized_ir
    cases_2d = inputs_2d()
    for line in zero_lines():
        row = torch.tensor(line).view(1, -1)
        cases_2d += [row, row.t().contiguous(), row.expand(3, -1).contiguous()]
    for x in cases_2d:
        for name in ("amax_rows", "amax_cols_keep", "amin_rows_keep", "amin_cols", "centered"):
            with torch.no_grad():
                eager = getattr(module, name)(x)
            try:
                assert_same_bits(compiled[name](x), eager)
            except AssertionError as error:
                raise AssertionError(f"{name} on {x.tolist() if x.numel() < 20 else x.shape}: {error}") from None
    for line in zero_lines() + [SPECIAL, [math.nan, 1.0], [1.0, math.nan], [-math.inf], [math.inf, -math.inf]]:
        x = torch.tensor(line, dtype=torch.float32)
        for name in ("amax_1d", "amin_1d"):
            with torch.no_grad():
                eager = getattr(module, name)(x)
            assert_same_bits(compiled[name](x), eager)


def test_eager_errors_for_an_empty_dim(functions):
    module, compiled = functions
    x = torch.zeros(3, 0)
    with pytest.raises(Exception) as eager:
        module.amax_rows(x)
    with pytest.raises(Exception) as ours:
        compiled["amax_rows"](x)
    assert type(ours.value) is type(eager.value)
    assert "amax" in str(ours.value)


def test_reference_surface_and_plugin_leave_them_on_python(rextio, functions):
    module, _ = functions
    for name in NAMES_2D + NAMES_1D:
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name


NEW_RULES = {
    "rextio-torch/log-softmax-static-dim-f32-cpu-rank1-2",
    "rextio-torch/functional-log-softmax-f32-cpu-rank1-2",
    "rextio-torch/amax-static-dim-f32-cpu-rank1-2",
    "rextio-torch/amin-static-dim-f32-cpu-rank1-2",
}
M = "rextio-torch/tensor-f32-cpu-2d"
V = "rextio-torch/tensor-f32-cpu-1d"


def test_check_knows_the_rules_and_the_plugin_does_not():
    import json

    from rextio_torch import _native

    ids = [r["id"] for r in json.loads(_native.plugin_rule_records())]
    assert not NEW_RULES & set(ids), "the plugin's records are the reference's and 049"
    modules, symbols, _ = _native.plugin_surface()
    for symbol in ("torch.log_softmax", "torch.nn.functional.log_softmax", "torch.amax", "torch.amin",
                   "Tensor.log_softmax", "Tensor.amax", "Tensor.amin"):
        assert symbol not in symbols


def test_the_rextio_plugin_does_not_cover_them():
    api = pytest.importorskip("rextio.plugins.api", reason="rextio (Rextio core) is not installed")
    import importlib.metadata

    (entry,) = [e for e in importlib.metadata.entry_points(group="rextio.plugins") if e.name == "rextio-torch"]
    provider = entry.load()()
    assert not NEW_RULES & {r.id for r in provider.describe(None)}
    assert len(provider.describe(None)) == 51

    def lit(value):
        return api.ClaimLiteral(is_literal=True, value=value)

    def call(target, operands, literals, keywords=()):
        return api.ClaimSite(kind="call", target=target, operand_types=tuple(operands), file_path="",
                             line=0, column=0, operand_literals=tuple(literals), keywords=tuple(keywords))

    def method(target, receiver, operands=(), literals=(), keywords=()):
        return api.ClaimSite(kind="call", target=target, operand_types=tuple(operands), file_path="",
                             line=0, column=0, operand_literals=tuple(literals), keywords=tuple(keywords),
                             receiver=api.ReceiverMeta(arg_type=receiver, expr_kind="name", is_safe=True))

    dim1 = api.KeywordArg("dim", "int", lit(1))
    for site in [call("torch.nn.functional.log_softmax", [M], [api.NON_LITERAL], [dim1]),
                 call("torch.log_softmax", [M, "int"], [api.NON_LITERAL, lit(1)]),
                 method("x.log_softmax", M, keywords=[dim1]),
                 method("x.amax", M, keywords=[dim1]),
                 call("torch.amin", [V, "int"], [api.NON_LITERAL, lit(0)]),
                 method("x.amin", M, ["int"], [lit(-1)])]:
        assert provider.claim(site, None) == api.NotCovered(), site
