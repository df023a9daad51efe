"""float64 and bfloat16 tensors (issue 18, extended surface) against eager PyTorch.

- The markers `TensorF64Cpu1D`/`2D`, `TensorBF16Cpu1D`/`2D` compile under the extended
  surface: `F.linear`, `@`/`torch.matmul`, `+ - * /` (tensors of one dtype, or a Python
  int/float, which keeps the tensor's dtype), the unary activations, `softmax`/`log_softmax`,
  `sum`/`mean`/`amax`/`amin`/`argmax` along a dim, the views and `F.layer_norm` give eager's
  bits exactly (every op is ATen's, at the operands' dtype), NaN/inf/-0.0 included, and
  chains that fuse at float32 (`F.linear(...).relu().sum(dim=1)`) stay op by op.
- The boundary takes exactly the declared dtype: a float32 tensor for a float64 parameter
  (and the other ways round) is the ValueError the float32 check raises, naming both dtypes.
- Mixed float dtypes (`f32 + f64`) are refused (RXTP-TORCH-150..153), not promoted; an op
  the lane does not cover at the dtype (`torch.cat`) is refused with the dtype's code.
- `surface="reference"` and the Rextio plugin do not know the markers.
"""

import pytest
import torch

from conftest import compiled_functions

HEADER = '''
import torch
import torch.nn.functional as F
from rextio_torch.types import (
    TensorBF16Cpu1D, TensorBF16Cpu2D, TensorF32Cpu2D, TensorF64Cpu1D, TensorF64Cpu2D,
    TensorI64Cpu1D,
)
'''

# Each body written once over M (matrix) and V (vector) markers, then instantiated for both
# dtypes. (name, parameters, result, body)
BODIES = [
    ("linear", "x: M, w: M, b: V", "M", "return F.linear(x, w, b)"),
    ("linear_nobias", "x: M, w: M", "M", "return F.linear(x, w)"),
    ("linear_relu_sum", "x: M, w: M, b: V", "V", "return F.linear(x, w, b).relu().sum(dim=1)"),
    ("linear_tanh_softmax", "x: M, w: M, b: V", "M", "return torch.tanh(F.linear(x, w, b)).softmax(dim=1)"),
    ("linear_argmax", "x: M, w: M, b: V", "I", "return F.linear(x, w, b).argmax(dim=1)"),
    ("matmul_op", "x: M, w: M", "M", "return x @ w"),
    ("matmul_bias_gelu", "x: M, w: M, b: V", "M", "return F.gelu(x @ w + b)"),
    ("matmul_call_vec", "x: M, v: V", "V", "return torch.matmul(x, v)"),
    ("add", "x: M, y: M", "M", "return x + y"),
    ("sub_broadcast", "x: M, v: V", "M", "return x - v"),
    ("mul", "x: M, y: M", "M", "return x * y"),
    ("div", "x: M, y: M", "M", "return x / y"),
    ("torch_add", "x: M, y: M", "M", "return torch.add(x, y)"),
    ("add_float", "x: M", "M", "return x + 0.1"),
    ("rsub_int", "x: M", "M", "return 2 - x"),
    ("mul_big", "x: M", "M", "return x * 1e300"),
    ("div_third", "x: M", "M", "return x / 3.0"),
    ("rdiv", "x: M", "M", "return 1 / x"),
    ("relu", "x: M", "M", "return x.relu()"),
    ("gelu", "x: M", "M", "return F.gelu(x)"),
    ("gelu_tanh", "x: M", "M", "return F.gelu(x, approximate='tanh')"),
    ("silu", "x: M", "M", "return F.silu(x)"),
    ("sigmoid", "x: M", "M", "return torch.sigmoid(x)"),
    ("tanh", "v: V", "V", "return v.tanh()"),
    ("exp_log", "x: M", "M", "return torch.exp(x) + torch.log(x)"),
    ("sqrt_abs_neg", "x: M", "M", "return torch.sqrt(torch.abs(x)) - torch.neg(x)"),
    ("square_rsqrt", "x: M", "M", "return torch.square(x) * torch.rsqrt(x)"),
    ("relu6", "x: M", "M", "return F.relu6(x)"),
    ("softmax0", "x: M", "M", "return x.softmax(dim=0)"),
    ("softmax_last", "x: M", "M", "return F.softmax(x, dim=-1)"),
    ("log_softmax", "x: M", "M", "return F.log_softmax(x, dim=1)"),
    ("log_softmax_vec", "v: V", "V", "return torch.log_softmax(v, dim=0)"),
    ("sum1", "x: M", "V", "return x.sum(dim=1)"),
    ("sum0_keep", "x: M", "M", "return torch.sum(x, dim=0, keepdim=True)"),
    ("mean1", "x: M", "V", "return x.mean(dim=1)"),
    ("mean0", "x: M", "V", "return torch.mean(x, dim=0)"),
    ("amax1", "x: M", "V", "return x.amax(dim=1)"),
    ("amin0", "x: M", "V", "return torch.amin(x, dim=0)"),
    ("argmax1", "x: M", "I", "return x.argmax(dim=1)"),
    ("argmax_vec", "x: M", "I", "return torch.argmax(x.sum(dim=1), dim=0, keepdim=True)"),
    ("t", "x: M", "M", "return x.t()"),
    ("transpose", "x: M", "M", "return torch.transpose(x, 0, 1) * 2"),
    ("reshape", "x: M", "V", "return x.reshape(-1)"),
    ("reshape_shape", "x: M", "M", "return x.t().reshape(x.shape[0], -1)"),
    ("flatten_unsqueeze", "x: M", "M", "return x.flatten().unsqueeze(0)"),
    ("rows", "x: M", "int", "return x.shape[0] + x.size(1)"),
    ("layer_norm", "x: M, g: V, b: V", "M", "return F.layer_norm(x, (x.shape[1],), g, b)"),
    ("layer_norm_plain", "x: M", "M", "return F.layer_norm(x, (x.shape[1],), eps=1e-3)"),
    ("mlp", "x: M, w1: M, b1: V, w2: M, b2: V", "M",
     "h = F.silu(F.linear(x, w1, b1))\n    return F.log_softmax(F.linear(h, w2, b2), dim=1)"),
]

DTYPES = {
    "f64": (torch.float64, "TensorF64Cpu2D", "TensorF64Cpu1D"),
    "bf16": (torch.bfloat16, "TensorBF16Cpu2D", "TensorBF16Cpu1D"),
}


def _source(tag):
    _, m, v = DTYPES[tag]
    out = [HEADER]
    for name, params, result, body in BODIES:
        params = params.replace(": M", f": {m}").replace(": V", f": {v}")
        result = {"M": m, "V": v, "I": "TensorI64Cpu1D"}.get(result, result)
        out.append(f"\ndef {name}({params}) -> {result}:\n    {body}\n")
    return "".join(out)


NAMES = [b[0] for b in BODIES]


@pytest.fixture(scope="module", params=list(DTYPES))
def functions(request, rextio, tmp_path_factory):
    tag = request.param
    for module, compiled in compiled_functions(
        rextio, tmp_path_factory, f"dtypes_{tag}", _source(tag), NAMES
    ):
        yield tag, module, compiled


SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-40, -3.5, 2.0]


def tensor(shape, dtype, seed, special=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    if special:
        flat = x.reshape(-1)
        n = min(len(SPECIAL), flat.numel())
        flat[:n] = torch.tensor(SPECIAL[:n], dtype=torch.float64)
    return x.to(dtype)


def assert_bits(ours, eager, what):
    """Eager's result exactly: same dtype and shape, NaN where eager has NaN, every other
    element the same bits (so -0.0 and +0.0 differ)."""
    if not isinstance(eager, torch.Tensor):
        assert type(ours) is type(eager) and ours == eager, (what, ours, eager)
        return
    assert isinstance(ours, torch.Tensor), what
    assert (ours.dtype, ours.shape) == (eager.dtype, eager.shape), (what, ours.dtype, eager.dtype,
                                                                   ours.shape, eager.shape)
    if not eager.dtype.is_floating_point:
        assert torch.equal(ours, eager), what
        return
    nan = torch.isnan(eager)
    assert torch.equal(torch.isnan(ours), nan), f"{what}: NaN positions differ"
    as_int = {torch.float64: torch.int64, torch.bfloat16: torch.int16, torch.float32: torch.int32}
    a = ours[~nan].contiguous().view(as_int[eager.dtype])
    b = eager[~nan].contiguous().view(as_int[eager.dtype])
    differ = (a != b).nonzero()
    assert differ.numel() == 0, (
        f"{what}: {differ.numel()} elements differ, first: ours {ours[~nan][differ[0]].item()!r} "
        f"vs eager {eager[~nan][differ[0]].item()!r}")


def arguments(name, dtype, seed, special):
    """Arguments for `name`, of sizes that fit each other (batch 3, features 4, out 5)."""
    params = next(b[1] for b in BODIES if b[0] == name)
    out = []
    shapes = {
        "x": (3, 4), "y": (3, 4), "v": (4,), "w": (5, 4), "b": (5,), "g": (4,),
        "w1": (6, 4), "b1": (6,), "w2": (5, 6), "b2": (5,),
    }
    if name.startswith("matmul_op") or name.startswith("matmul_bias"):
        shapes["w"] = (4, 5)
    if name == "sub_broadcast":
        shapes["v"] = (4,)
    if name == "layer_norm":
        shapes["b"] = (4,)
    for i, p in enumerate(params.split(", ")):
        pname = p.split(":")[0]
        out.append(tensor(shapes[pname], dtype, seed * 31 + i, special and pname == "x"))
    return out


@pytest.mark.parametrize("special", [False, True], ids=["normal", "nan-inf-zero"])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_op_gives_eager_bits(functions, seed, special):
    tag, module, compiled = functions
    dtype = DTYPES[tag][0]
    for name in NAMES:
        args = arguments(name, dtype, seed, special)
        before = [a.clone() for a in args]
        with torch.no_grad():
            eager = getattr(module, name)(*args)
        ours = compiled[name](*args)
        assert_bits(ours, eager, f"{tag} {name}")
        for a, b in zip(args, before):
            assert_bits(a, b, f"{tag} {name} mutated an argument")


def test_larger_and_non_contiguous_inputs(functions):
    tag, module, compiled = functions
    dtype = DTYPES[tag][0]
    g = torch.Generator().manual_seed(7)
    x = torch.randn(40, 70, generator=g, dtype=torch.float64).to(dtype).t()  # [70, 40], strided
    w = torch.randn(33, 40, generator=g, dtype=torch.float64).to(dtype)
    b = torch.randn(33, generator=g, dtype=torch.float64).to(dtype)
    for name, args in [("linear", (x, w, b)), ("linear_relu_sum", (x, w, b)),
                       ("linear_tanh_softmax", (x, w, b)), ("softmax_last", (x,)),
                       ("sum1", (x,)), ("mean0", (x,)), ("t", (x,)), ("reshape", (x,)),
                       ("matmul_op", (x, w.t())), ("layer_norm_plain", (x,))]:
        with torch.no_grad():
            eager = getattr(module, name)(*args)
        assert_bits(compiled[name](*args), eager, f"{tag} {name}")


def test_the_boundary_takes_exactly_the_declared_dtype(functions):
    tag, _, compiled = functions
    dtype = DTYPES[tag][0]
    x = tensor((3, 4), dtype, 0)
    compiled["relu"](x)
    want = {torch.float64: "float64", torch.bfloat16: "bfloat16"}[dtype]
    for other, words in [(torch.float32, "float32"), (torch.float16, "float16"),
                         (torch.int64, "int64"),
                         (torch.bfloat16 if dtype == torch.float64 else torch.float64,
                          "bfloat16" if dtype == torch.float64 else "float64")]:
        with pytest.raises(ValueError) as error:
            compiled["relu"](x.to(other))
        assert str(error.value) == f"rextio-torch: expected a {want} tensor (argument 'x' is {words})"



def test_a_float32_parameter_refuses_float64_and_bfloat16(rextio, tmp_path_factory):
    source = HEADER + "\ndef f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.relu()\n"
    for module, compiled in compiled_functions(rextio, tmp_path_factory, "dtypes_f32", source, ["f"]):
        for dtype, words in [(torch.float64, "float64"), (torch.bfloat16, "bfloat16")]:
            with pytest.raises(ValueError) as error:
                compiled["f"](torch.ones(2, 3, dtype=dtype))
            assert str(error.value) == f"rextio-torch: expected a float32 tensor (argument 'x' is {words})"



def test_shape_errors_are_eagers(functions):
    tag, module, compiled = functions
    dtype = DTYPES[tag][0]
    x, w, b = tensor((3, 4), dtype, 0), tensor((5, 3), dtype, 1), tensor((5,), dtype, 2)
    with pytest.raises(RuntimeError) as eager:
        module.linear(x, w, b)
    with pytest.raises(RuntimeError) as ours:
        compiled["linear"](x, w, b)
    assert str(ours.value).split("\n")[0] == str(eager.value).split("\n")[0]


REFUSED = HEADER + '''

def mixed_add(x: TensorF64Cpu2D, y: TensorF32Cpu2D) -> TensorF64Cpu2D:
    return x + y


def mixed_linear(x: TensorBF16Cpu2D, w: TensorF64Cpu2D) -> TensorBF16Cpu2D:
    return F.linear(x, w)


def cat64(x: TensorF64Cpu2D, y: TensorF64Cpu2D) -> TensorF64Cpu2D:
    return torch.cat([x, y], dim=0)


def clamp16(x: TensorBF16Cpu2D) -> TensorBF16Cpu2D:
    return torch.clamp(x, 0.0, 1.0)


def bad_dim(x: TensorF64Cpu2D) -> TensorF64Cpu1D:
    return x.sum(dim=2)
'''

REFUSED_WORDS = {
    "mixed_add": ("RXTP-TORCH-152", "operands mix float64 and float32 tensors"),
    "mixed_linear": ("RXTP-TORCH-151", "operands mix bfloat16 and float64 tensors"),
    "cat64": ("RXTP-TORCH-150", "this op takes float32 only"),
    "clamp16": ("RXTP-TORCH-151", "this op takes float32 only"),
    "bad_dim": ("RXTP-TORCH-013", "out of range"),
}


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    from conftest import generated_module

    with generated_module(tmp_path_factory, "refused_dtypes", REFUSED) as module:
        yield module


def test_refused_forms_stay_on_python(rextio, refused):
    for name, (code, words) in REFUSED_WORDS.items():
        with pytest.raises(rextio.CompileError) as error:
            rextio.compile(getattr(refused, name), strict=True)
        text = str(error.value)
        assert code in text and words in text, (name, text)


def test_mixed_dtypes_eager_promotes_what_we_refuse(refused):
    # The refusal is ours, not eager's: eager promotes to the wider dtype.
    x, y = torch.ones(2, 3, dtype=torch.float64), torch.ones(2, 3)
    assert refused.mixed_add(x, y).dtype == torch.float64


def test_the_reference_surface_does_not_know_the_markers(rextio, functions):
    _, module, _ = functions
    for name in NAMES:
        why = rextio.explain(getattr(module, name), surface="reference")
        assert not why.compiles, name
    with pytest.raises(rextio.CompileError):
        rextio.compile(module.relu, strict=True, surface="reference")


def test_the_markers_are_the_compilers(rextio):
    from rextio_torch import _native, types

    rows = _native.markers()
    assert tuple(types.__all__) == tuple(r[0] for r in rows)
    for name, key, dtype, device, rank, _reference in rows:
        marker = getattr(types, name)
        assert (marker.key, marker.dtype, marker.device, marker.rank) == (
            key, dtype, {"cpu": "cpu", "cuda0": "cuda:0"}[device], rank), name
    extended = [r[0] for r in rows if not r[5]]
    assert extended == ["TensorF32Cpu3D", "TensorI64Cpu2D",
                        "TensorF64Cpu2D", "TensorF64Cpu1D", "TensorBF16Cpu2D", "TensorBF16Cpu1D",
                        "TensorF32Cpu0D", "TensorF64Cpu0D", "TensorF64Cpu3D", "TensorBF16Cpu0D",
                        "TensorBF16Cpu3D"]
    # The Rextio plugin's type list stays the reference's five.
    _, _, plugin_rows = _native.plugin_surface()
    assert [r[0] for r in plugin_rows] == [r[0] for r in rows if r[5]]
    assert len(plugin_rows) == 5
