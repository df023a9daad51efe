"""float64 and bfloat16 at ranks 0 and 3 (issue 18, extended surface) against eager PyTorch.

- The markers `TensorF64Cpu0D`/`3D` and `TensorBF16Cpu0D`/`3D` compile under the extended
  surface, read by the dtype lane as the float32 rank-0 and rank-3 lanes' sites: batched
  `@`/`torch.matmul` (a matrix broadcast over the batch too), `torch.bmm`, `softmax` /
  `log_softmax`, `F.linear` of a batch, `+ - * /` and the unary ops, the rank-3 views, the
  attention chain as written (which fuses at float32 only: at these dtypes it stays op by
  op), the whole-tensor reductions giving a rank-0 tensor, `item()`/`float()`, comparisons as
  `if`/`while` conditions, rank-0 parameters and results.
- Tolerance: none, except whole-tensor reductions of 32768 elements or more, whose eager
  bits depend on the thread count (ours do not: docs/parity.md, "Threads"). Every one of these ops runs through ATen at the operands' dtype, from the
  executor as from eager, so the result is eager's at the same dtype bit for bit (float64
  and bfloat16 alike; bits compared as int64/int16, so -0.0 and +0.0 differ, NaN where eager
  has NaN), NaN, +-inf and -0.0 in the inputs included. A float32 computation cast back
  (the fused attention kernel, the dense kernels) would not be: `test_not_computed_in_float32`
  checks that eager at float32 and eager at the dtype differ on these inputs, and the
  float64-oracle test states the accuracy each dtype gets by its own rounding (float64:
  1e-12 relative; bfloat16: 2^-6 relative to the largest magnitude, a few bfloat16 ulps).
- The boundary takes exactly the declared dtype and rank (`ValueError`, never a cast);
  mixed float dtypes are refused at compile time (RXTP-TORCH-150..155), and so are ops the
  lane does not compile at the dtype; `surface="reference"` does not know the markers.
"""

import math

import pytest
import torch

from conftest import compiled_functions

HEADER = '''
import math

import torch
import torch.nn.functional as F
from rextio_torch.types import (
    TensorBF16Cpu0D, TensorBF16Cpu1D, TensorBF16Cpu2D, TensorBF16Cpu3D,
    TensorF32Cpu0D, TensorF32Cpu2D, TensorF32Cpu3D,
    TensorF64Cpu0D, TensorF64Cpu1D, TensorF64Cpu2D, TensorF64Cpu3D,
)
'''

# Each body written once over S (rank 0), V, M and T (rank 3) markers, then instantiated for
# both dtypes. (name, parameters, result, body)
BODIES = [
    # --- rank 3 ---------------------------------------------------------------------------
    ("batched", "a: T, b: T", "T", "return a @ b"),
    ("broadcast_matrix", "a: T, w: M", "T", "return torch.matmul(a, w)"),
    ("matrix_batch", "w: M, a: T", "T", "return w @ a"),
    ("bmm", "a: T, b: T", "T", "return torch.bmm(a, b)"),
    ("bmm_method", "a: T, b: T", "T", "return a.bmm(b)"),
    ("attention", "q: T, k: T, v: T", "T",
     "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
     "    return F.softmax(scores, dim=-1) @ v"),
    ("bmm_attention", "q: T, k: T, v: T", "T",
     "return torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.125, dim=2), v)"),
    ("softmax1", "x: T", "T", "return x.softmax(dim=1)"),
    ("log_softmax_last", "x: T", "T", "return F.log_softmax(x, dim=-1)"),
    ("linear3", "x: T, w: M, b: V", "T", "return F.gelu(F.linear(x, w, b))"),
    ("linear3_nobias", "x: T, w: M", "T", "return torch.relu(F.linear(x, w))"),
    ("elementwise3", "x: T, y: T, v: V", "T",
     "return (x + y) * v - x / 2.0 + torch.tanh(y) - 1 / torch.exp(x)"),
    ("views3", "x: T", "M", "return x.transpose(0, 1).reshape(-1, x.shape[2])"),
    ("to_rank3", "x: M", "T", "return x.view(1, x.shape[0], -1) * 2 + x.reshape(x.shape[0], 1, -1)"),
    ("block", "x: T, w: M, b: V", "T",
     "h = F.linear(x, w, b)\n"
     "    p = torch.softmax(h @ h.transpose(1, 2) / 4.0, dim=-1)\n"
     "    return torch.sigmoid(p @ h) + x"),
    # --- rank 0 ---------------------------------------------------------------------------
    ("r_sum", "x: M", "S", "return x.sum()"),
    ("r_mean", "x: M", "S", "return x.mean()"),
    ("r_max", "x: M", "S", "return x.max()"),
    ("r_min", "x: M", "S", "return x.min()"),
    ("r_amax", "x: M", "S", "return x.amax()"),
    ("r_amin", "x: M", "S", "return x.amin()"),
    ("r_torch", "x: M", "S",
     "return torch.sum(x) - torch.mean(x) * torch.max(x) / torch.amin(x) + torch.min(x) - torch.amax(x)"),
    ("sum3", "x: T", "S", "return x.sum()"),
    ("mean1", "v: V", "S", "return v.mean()"),
    ("normalized", "x: M", "M", "return (x - x.mean()) / (x.max() - x.min() + 1e-5)"),
    ("share3", "x: T", "T", "return x / x.sum() * 2 - 1.0 / x.amax()"),
    ("scalar_ops", "s: S, t: S", "S", "h = s * t - s / 3\n    return h.exp().sqrt() + 2.5 - t.abs()"),
    ("item", "x: M", "float", "return x.sum().item() + float(x.amax())"),
    ("item_any", "x: T", "float", "return x.item()"),
    ("threshold", "t: S", "bool", "if t > 0.99:\n        return True\n    return False"),
    ("reflected", "x: T, limit: float", "int",
     "if limit <= x.max():\n        return 1\n    elif x.min() == x.max():\n        return 2\n"
     "    elif x.sum() != 0:\n        return 3\n    return 4"),
    ("tensor_vs_tensor", "s: S, t: S", "int", "if s < t:\n        return 1\n    return 0"),
    ("early_exit", "x: T, w: M, steps: int", "T",
     "p = torch.softmax(x @ w, dim=-1)\n"
     "    for i in range(steps):\n"
     "        p = torch.softmax(torch.log(p) * 2.0, dim=-1)\n"
     "        if p.max().item() > 0.99:\n"
     "            break\n"
     "    return p"),
    ("halve_until", "x: T", "int",
     "n = 0\n    while x.abs().sum() > 1.0:\n        x = x * 0.5\n        n = n + 1\n    return n"),
    ("gate", "x: T, limit: float", "S",
     "s = x.sum() / x.amax()\n    if x.max() > limit:\n        s = s - float(x.min())\n"
     "    return s * x.mean().item()"),
]

DTYPES = {
    "f64": (torch.float64, "TensorF64Cpu"),
    "bf16": (torch.bfloat16, "TensorBF16Cpu"),
}
NAMES = [b[0] for b in BODIES]


def _source(tag):
    _, prefix = DTYPES[tag]
    markers = {"S": f"{prefix}0D", "V": f"{prefix}1D", "M": f"{prefix}2D", "T": f"{prefix}3D"}
    out = [HEADER]
    for name, params, result, body in BODIES:
        params = ", ".join(
            f"{p.split(': ')[0]}: {markers.get(p.split(': ')[1], p.split(': ')[1])}"
            for p in params.split(", "))
        out.append(f"\ndef {name}({params}) -> {markers.get(result, result)}:\n    {body}\n")
    return "".join(out)


@pytest.fixture(scope="module", params=list(DTYPES))
def functions(request, rextio, tmp_path_factory):
    tag = request.param
    for module, compiled in compiled_functions(
        rextio, tmp_path_factory, f"dtype_rank03_{tag}", _source(tag), NAMES
    ):
        yield tag, module, compiled


SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-40, -3.5, 2.0]


def tensor(shape, dtype, seed, special=False, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float64) * scale
    if special:
        flat = x.reshape(-1)
        n = min(len(SPECIAL), flat.numel())
        flat[:n] = torch.tensor(SPECIAL[:n], dtype=torch.float64)
    return x.to(dtype)


def assert_bits(ours, eager, what):
    """Eager's result exactly: same type; a tensor of the same dtype and shape, NaN where
    eager has NaN, every other element the same bits (so -0.0 and +0.0 differ); a float the
    same value and sign (or both NaN)."""
    if isinstance(eager, float):
        assert type(ours) is float, (what, ours)
        same = (math.isnan(ours) and math.isnan(eager)) or (
            ours == eager and math.copysign(1, ours) == math.copysign(1, eager))
        assert same, (what, ours, eager)
        return
    if not isinstance(eager, torch.Tensor):
        assert type(ours) is type(eager) and ours == eager, (what, ours, eager)
        return
    assert isinstance(ours, torch.Tensor), what
    assert (ours.dtype, ours.shape) == (eager.dtype, eager.shape), (
        what, ours.dtype, eager.dtype, ours.shape, eager.shape)
    nan = torch.isnan(eager)
    assert torch.equal(torch.isnan(ours), nan), f"{what}: NaN positions differ"
    as_int = {torch.float64: torch.int64, torch.bfloat16: torch.int16}
    a = ours[~nan].contiguous().view(as_int[eager.dtype])
    b = eager[~nan].contiguous().view(as_int[eager.dtype])
    differ = (a != b).nonzero()
    assert differ.numel() == 0, (
        f"{what}: {differ.numel()} elements differ, first: ours {ours[~nan][differ[0]].item()!r} "
        f"vs eager {eager[~nan][differ[0]].item()!r}")


def outcome(fn, *args):
    try:
        with torch.no_grad():
            return "ok", fn(*args)
    except Exception as err:  # noqa: BLE001 - the outcome is compared with eager's
        return type(err), str(err).split("\n")[0]


def check(functions, name, *args):
    """Ours against eager at the same dtype: the same bits, or the same exception type and
    first line; the inputs unchanged."""
    tag, module, compiled = functions
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    eager = outcome(getattr(module, name), *args)
    ours = outcome(compiled[name], *args)
    assert ours[0] == eager[0], (tag, name, ours, eager)
    if eager[0] == "ok":
        assert_bits(ours[1], eager[1], f"{tag} {name}")
    else:
        assert ours[1] == eager[1], (tag, name, ours, eager)
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert_bits(a, b, f"{tag} {name} mutated an argument")
    return ours


# Shapes that fit each other: batch 2, rows 3, features 4, out 5 (sizes of each parameter).
SHAPES = {
    "batched": {"a": (2, 3, 4), "b": (2, 4, 5)},
    "broadcast_matrix": {"a": (2, 3, 4), "w": (4, 5)},
    "matrix_batch": {"w": (5, 3), "a": (2, 3, 4)},
    "bmm": {"a": (2, 3, 4), "b": (2, 4, 5)},
    "bmm_method": {"a": (2, 3, 4), "b": (2, 4, 5)},
    "attention": {"q": (2, 3, 8), "k": (2, 5, 8), "v": (2, 5, 4)},
    "bmm_attention": {"q": (2, 3, 8), "k": (2, 5, 8), "v": (2, 5, 4)},
    "softmax1": {"x": (2, 3, 4)},
    "log_softmax_last": {"x": (2, 3, 4)},
    "linear3": {"x": (2, 3, 4), "w": (5, 4), "b": (5,)},
    "linear3_nobias": {"x": (2, 3, 4), "w": (5, 4)},
    "elementwise3": {"x": (2, 3, 4), "y": (2, 3, 4), "v": (4,)},
    "views3": {"x": (2, 3, 4)},
    "to_rank3": {"x": (3, 4)},
    "block": {"x": (2, 3, 4), "w": (4, 4), "b": (4,)},
    "r_sum": {"x": (3, 4)}, "r_mean": {"x": (3, 4)}, "r_max": {"x": (3, 4)},
    "r_min": {"x": (3, 4)}, "r_amax": {"x": (3, 4)}, "r_amin": {"x": (3, 4)},
    "r_torch": {"x": (3, 4)},
    "sum3": {"x": (2, 3, 4)},
    "mean1": {"v": (7,)},
    "normalized": {"x": (3, 4)},
    "share3": {"x": (2, 3, 4)},
    "item": {"x": (3, 4)},
}

TENSOR_ONLY = list(SHAPES)


def arguments(name, dtype, seed, special):
    return [tensor(shape, dtype, seed * 31 + i, special and i == 0)
            for i, shape in enumerate(SHAPES[name].values())]


@pytest.mark.parametrize("special", [False, True], ids=["normal", "nan-inf-zero"])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_tensor_op_gives_eager_bits(functions, seed, special):
    tag = functions[0]
    dtype = DTYPES[tag][0]
    for name in TENSOR_ONLY:
        ours = check(functions, name, *arguments(name, dtype, seed, special))
        assert ours[0] == "ok", (tag, name, ours)


def test_larger_and_non_contiguous_batches(functions):
    tag = functions[0]
    dtype = DTYPES[tag][0]
    # Transposed batches keep their strides (ATen reads them as eager does).
    a = tensor((2, 33, 17), dtype, 3).transpose(1, 2)  # [2, 17, 33]
    b = tensor((2, 9, 33), dtype, 4).transpose(1, 2)  # [2, 33, 9]
    check(functions, "batched", a, b)
    check(functions, "bmm", a, b)
    check(functions, "softmax1", a)
    check(functions, "sum3", a)
    check(functions, "share3", a)
    q, k, v = (tensor((4, 16, 32), dtype, s) for s in (5, 6, 7))
    check(functions, "attention", q, k, v)
    check(functions, "attention", q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1))
    check(functions, "bmm_attention", q, k, v[:, :, :8])
    x = tensor((3, 40, 70), dtype, 8)
    check(functions, "linear3", x, tensor((33, 70), dtype, 9), tensor((33,), dtype, 10))
    check(functions, "linear3", x.transpose(0, 1), tensor((33, 70), dtype, 9), tensor((33,), dtype, 10))
    # Below 32768 elements a whole reduction is eager's bits (ATen's, on one thread at any
    # thread count); from 32768 on, eager's bits depend on the thread count and ours are the
    # fixed chunks' at every count (docs/parity.md, "Threads"): within
    # `16 u sqrt(log2(n) sum x^2)` of eager's, and two bfloat16 roundings more.
    check(functions, "r_mean", tensor((64, 257), dtype, 12))
    big = tensor((8, 64, 257), dtype, 11)
    _, module, compiled = functions
    ours, eager = compiled["sum3"](big), module.sum3(big)
    u = 2.0 ** -53 if dtype == torch.float64 else 2.0 ** -24
    bound = 16 * u * (math.log2(big.numel()) * (big.double() ** 2).sum().item()) ** 0.5
    if dtype == torch.bfloat16:
        bound += 2 * 2.0 ** -8 * (abs(eager.double().item()) + bound)
    assert ours.dtype == eager.dtype and ours.shape == eager.shape == ()
    assert abs(ours.double().item() - eager.double().item()) <= bound, (tag, ours, eager, bound)


def test_attention_special_values(functions):
    tag = functions[0]
    dtype = DTYPES[tag][0]
    q, k, v = (tensor((2, 3, 8), dtype, s) for s in (20, 21, 22))
    for where in [(0, 0, 0), (1, 2, 7)]:
        for value in [math.nan, math.inf, -math.inf, -0.0]:
            for name in ["q", "k", "v"]:
                args = {"q": q.clone(), "k": k.clone(), "v": v.clone()}
                args[name][where] = value
                check(functions, "attention", args["q"], args["k"], args["v"])


def test_attention_stays_op_by_op_at_the_dtype(rextio, functions):
    # The attention fusion and its kernel are float32's: at float64/bfloat16 the chain is
    # its ops, each ATen's at the dtype.
    _, _, compiled = functions
    text = str(rextio.explain(compiled["attention"]))
    optimized = text[text.index("IR after `optimized`"):]
    assert "fused_attention" not in optimized, optimized
    assert "softmax" in optimized and "matmul" in optimized, optimized


def test_not_computed_in_float32(functions):
    # The inputs tell the dtypes apart: the chain computed at float32 and cast back gives
    # other bits than eager at the dtype, which ours matches, so a float32 kernel (the fused
    # attention's, the dense ones) would fail the bit comparisons of this file.
    tag, module, compiled = functions
    dtype = DTYPES[tag][0]
    q, k, v = (tensor((2, 16, 32), dtype, s) for s in (30, 31, 32))
    ours = compiled["attention"](q, k, v)
    with torch.no_grad():
        eager = module.attention(q, k, v)
        via_f32 = module.attention(q.float(), k.float(), v.float()).to(dtype)
    assert_bits(ours, eager, f"{tag} attention")
    assert not torch.equal(via_f32, eager), tag
    x = tensor((4, 16, 64), dtype, 33)
    assert_bits(compiled["sum3"](x), x.sum(), f"{tag} sum3")
    if dtype == torch.float64:
        assert not torch.equal(x.float().sum().to(dtype), x.sum()), tag
    # (ATen sums bfloat16 in float32 and rounds once: one reduction alone does not tell the
    # dtypes apart, a chain of rank-0 ops does.)
    with torch.no_grad():
        eager = module.share3(x)
        via_f32 = module.share3(x.float()).to(dtype)
    assert_bits(compiled["share3"](x), eager, f"{tag} share3")
    assert not torch.equal(via_f32, eager), tag


def test_against_a_float64_oracle(functions):
    # Each dtype's own accuracy, against float64 eager on the same (dtype-rounded) inputs:
    # float64 within 1e-12 relative; bfloat16 within 2^-6 of the largest magnitude (a few
    # bfloat16 ulps over the chain: each op rounds to bfloat16's 8-bit significand).
    tag, module, compiled = functions
    dtype = DTYPES[tag][0]
    rtol = {torch.float64: 1e-12, torch.bfloat16: 2.0 ** -6}[dtype]
    for name in ["batched", "bmm", "attention", "linear3", "softmax1", "sum3", "r_mean"]:
        args = arguments(name, dtype, 5, False)
        ours = compiled[name](*args).double()
        with torch.no_grad():
            oracle = getattr(module, name)(*[a.double() for a in args])
        bound = rtol * max(oracle.abs().max().item(), 1.0)
        assert (ours - oracle).abs().max().item() <= bound, (tag, name)


def test_rank0_parameters_and_results(functions):
    tag = functions[0]
    dtype = DTYPES[tag][0]
    for s, t in [(0.5, 2.0), (-3.0, 0.25), (math.nan, 1.0), (-0.0, 0.0), (80.0, 3.0),
                 (math.inf, -math.inf), (1e-40, -0.0)]:
        s, t = torch.tensor(s, dtype=dtype), torch.tensor(t, dtype=dtype)
        check(functions, "scalar_ops", s, t)
        check(functions, "tensor_vs_tensor", s, t)
        check(functions, "threshold", s)
    assert check(functions, "threshold", torch.tensor(1.0, dtype=dtype))[1] is True


def test_whole_reductions_special_classes(functions):
    tag = functions[0]
    dtype = DTYPES[tag][0]
    for values in [[math.nan], [math.inf], [-math.inf], [math.inf, -math.inf], [-0.0] * 12]:
        x = tensor((3, 4), dtype, 40)
        x.view(-1)[: len(values)] = torch.tensor(values, dtype=dtype)
        for name in ["r_sum", "r_mean", "r_max", "r_min", "r_amax", "r_amin", "r_torch",
                     "normalized", "item"]:
            check(functions, name, x)
        check(functions, "sum3", x.reshape(1, 3, 4))
        check(functions, "share3", x.reshape(3, 1, 4))
    # -0.0 everywhere: eager's sign.
    check(functions, "sum3", torch.full((2, 3, 4), -0.0, dtype=dtype))
    # Empty: sum/mean are 0 and NaN, max/min raise eager's RuntimeError.
    empty = torch.empty(0, 4, dtype=dtype)
    for name in ["r_sum", "r_mean", "r_max", "r_min", "r_amax", "r_amin"]:
        expected = "ok" if name in ("r_sum", "r_mean") else RuntimeError
        assert check(functions, name, empty)[0] == expected, name


def test_item_and_conditions(functions):
    tag = functions[0]
    dtype = DTYPES[tag][0]
    for value in [2.5, -0.0, math.nan, math.inf, 1e-40]:
        check(functions, "item_any", torch.tensor([[[value]]], dtype=dtype))
    # Eager's error for item() of more than one element.
    assert check(functions, "item_any", torch.ones(2, 1, 3, dtype=dtype))[0] is RuntimeError
    # The Python number is compared at the tensor's dtype, as eager does it.
    for value in [0.99, 0.98999999999999999, 1.0, 0.990234375]:
        check(functions, "threshold", torch.tensor(value, dtype=dtype))
    for x in [tensor((2, 3, 4), dtype, 50), torch.full((1, 2, 2), 1.5, dtype=dtype),
              torch.zeros(2, 2, 2, dtype=dtype), tensor((2, 2, 2), dtype, 51, special=True)]:
        for limit in [-10.0, 0.0, 1.5, math.nan]:
            check(functions, "reflected", x, limit)
            check(functions, "gate", x, limit)
    for scale in [0.1, 3.0, 1e6, math.nan]:
        check(functions, "halve_until", tensor((2, 2, 3), dtype, 52) * scale)
    x, w = tensor((2, 4, 8), dtype, 53), tensor((8, 8), dtype, 54, scale=2.0)
    for steps in range(6):
        check(functions, "early_exit", x, w, steps)


def test_the_boundary_takes_exactly_the_declared_dtype_and_rank(functions):
    tag, _, compiled = functions
    dtype = DTYPES[tag][0]
    want = {torch.float64: "float64", torch.bfloat16: "bfloat16"}[dtype]
    a, b = tensor((2, 3, 4), dtype, 0), tensor((2, 4, 5), dtype, 1)
    compiled["bmm"](a, b)
    others = [(torch.float32, "float32"), (torch.float16, "float16"), (torch.int64, "int64"),
              (torch.bfloat16 if dtype == torch.float64 else torch.float64,
               "bfloat16" if dtype == torch.float64 else "float64")]
    for other, words in others:
        with pytest.raises(ValueError) as error:
            compiled["bmm"](a.to(other), b)
        assert str(error.value) == f"rextio-torch: expected a {want} tensor (argument 'a' is {words})"
        s = torch.tensor(1.0, dtype=dtype)
        with pytest.raises(ValueError) as error:
            compiled["scalar_ops"](s, s.to(other))
        assert str(error.value) == f"rextio-torch: expected a {want} tensor (argument 't' is {words})"
    # Wrong rank: a clear error naming the rank, never a reshape.
    with pytest.raises(ValueError, match="rank"):
        compiled["bmm"](a[0], b)
    with pytest.raises(ValueError, match="rank"):
        compiled["scalar_ops"](torch.ones(1, dtype=dtype), torch.tensor(1.0, dtype=dtype))
    with pytest.raises(ValueError, match="rank"):
        compiled["sum3"](torch.ones(2, 3, dtype=dtype))


def test_shape_errors_are_eagers(functions):
    tag = functions[0]
    dtype = DTYPES[tag][0]
    # bmm broadcasts no batch; matmul does.
    a, b = tensor((2, 3, 4), dtype, 0), tensor((1, 4, 5), dtype, 1)
    assert check(functions, "bmm", a, b)[0] is RuntimeError
    assert check(functions, "batched", a, b)[0] == "ok"
    assert check(functions, "batched", a, tensor((2, 5, 5), dtype, 2))[0] is RuntimeError
    assert check(functions, "attention", tensor((2, 3, 8), dtype, 3), tensor((2, 3, 7), dtype, 4),
                 tensor((2, 3, 8), dtype, 5))[0] is RuntimeError


REFUSED = HEADER + '''

def mixed_bmm(a: TensorF64Cpu3D, b: TensorF32Cpu3D) -> TensorF64Cpu3D:
    return torch.bmm(a, b)


def mixed_matmul3(a: TensorBF16Cpu3D, b: TensorF64Cpu3D) -> TensorBF16Cpu3D:
    return a @ b


def mixed_scale(x: TensorF64Cpu2D, s: TensorF32Cpu0D) -> TensorF64Cpu2D:
    return x / s


def mixed_condition(s: TensorBF16Cpu0D, t: TensorF64Cpu0D) -> int:
    if s > t:
        return 1
    return 0


def mixed_condition_f64(s: TensorF64Cpu0D, t: TensorF32Cpu0D) -> int:
    if s > t:
        return 1
    return 0


def clamp3(x: TensorBF16Cpu3D) -> TensorBF16Cpu3D:
    return torch.clamp(x, 0.0, 1.0)


def leaky3(x: TensorF64Cpu3D) -> TensorF64Cpu3D:
    return F.leaky_relu(x, 0.1)


def argmax_dim3(x: TensorF64Cpu3D) -> TensorF64Cpu2D:
    return x.argmax(dim=1)


def softmax0(s: TensorBF16Cpu0D) -> TensorBF16Cpu0D:
    return torch.softmax(s, 0)


def wrong_result_dtype(x: TensorF64Cpu3D) -> TensorF32Cpu0D:
    return x.sum()
'''

REFUSED_WORDS = {
    "mixed_bmm": ("RXTP-TORCH-150", "operands mix float64 and float32 tensors"),
    "mixed_matmul3": ("RXTP-TORCH-153", "operands mix bfloat16 and float64 tensors"),
    "mixed_scale": ("RXTP-TORCH-152", "operands mix float64 and float32 tensors"),
    "mixed_condition": ("RXTP-TORCH-155", "operands mix bfloat16 and float64 tensors"),
    "mixed_condition_f64": ("RXTP-TORCH-154", "operands mix float64 and float32 tensors"),
    "clamp3": ("RXTP-TORCH-151", "this op takes float32 only"),
    "leaky3": ("RXTP-TORCH-150", "this op takes float32 only"),
    "argmax_dim3": ("RXTP-TORCH-144", "of a rank-3 tensor is not claimed"),
    "softmax0": ("RXTP-TORCH-164", "of a rank-0 tensor is not claimed"),
    "wrong_result_dtype": ("", "TensorF32Cpu0D"),
}


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    from conftest import generated_module

    with generated_module(tmp_path_factory, "refused_dtype_rank03", REFUSED) as module:
        yield module


def test_refused_forms_stay_on_python(rextio, refused):
    for name, (code, words) in REFUSED_WORDS.items():
        with pytest.raises(rextio.CompileError) as error:
            rextio.compile(getattr(refused, name), strict=True)
        text = str(error.value)
        assert code in text and words in text, (name, text)
        # Not strict: a warning, and the function stays on Python.
        with pytest.warns(rextio.RextioFallbackWarning):
            kept = rextio.compile(getattr(refused, name))
        assert callable(kept), name


def test_mixed_dtypes_eager_promotes_what_we_refuse(refused):
    a, b = torch.ones(2, 3, 4, dtype=torch.float64), torch.ones(2, 4, 5)
    with pytest.raises(RuntimeError):
        refused.mixed_bmm(a, b)  # eager's bmm does not promote either
    assert refused.mixed_scale(torch.ones(2, 3, dtype=torch.float64), torch.tensor(2.0)).dtype == torch.float64


def test_the_reference_surface_does_not_know_the_markers(rextio, functions):
    _, module, _ = functions
    for name in NAMES:
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name
    for name in ["bmm", "attention", "r_sum", "scalar_ops", "threshold"]:
        with pytest.raises(rextio.CompileError):
            rextio.compile(getattr(module, name), strict=True, surface="reference")


def test_the_markers_are_the_compilers():
    from rextio_torch import _native, types

    rows = {r[0]: r for r in _native.markers()}
    for name, dtype, rank in [("TensorF64Cpu0D", "float64", 0), ("TensorF64Cpu3D", "float64", 3),
                              ("TensorBF16Cpu0D", "bfloat16", 0), ("TensorBF16Cpu3D", "bfloat16", 3)]:
        marker = getattr(types, name)
        assert name in types.__all__
        assert (marker.dtype, marker.device, marker.rank, marker.surface) == (dtype, "cpu", rank, "extended")
        assert rows[name][1:5] == (marker.key, dtype, "cpu", rank)
        assert rows[name][5] is False
    # The Rextio plugin's type list stays the reference's five.
    _, _, plugin_rows = _native.plugin_surface()
    assert len(plugin_rows) == 5
    assert not {r[0] for r in plugin_rows} & {"TensorF64Cpu0D", "TensorF64Cpu3D",
                                             "TensorBF16Cpu0D", "TensorBF16Cpu3D"}
