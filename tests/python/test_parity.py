"""Compiled vs eager PyTorch on random and special inputs. Fused linear chains are held to
conftest.fused_linear_bound, other functions to the default conftest.RTOL (docs/parity.md).
Tests taking `kernel_path` run once per kernel path, each forced (conftest.KERNEL_PATHS);
`make test` runs this module again with REXTIO_TORCH_ISA=avx2 and =portable."""

import itertools
import math
import sys

import pytest
import torch
import torch.nn.functional as F

from conftest import RTOL, assert_parity, assert_same_bits, fused_linear_bound, import_generated


def phase_a_bound(x, w, b):
    return fused_linear_bound(x, w, b, ["relu"], "mean")

PHASE_A_CELLS = [(1, 32, 32), (1, 128, 64), (8, 64, 64), (16, 128, 64), (64, 128, 64), (256, 256, 128)]
ODD_AND_LARGE = [(3, 7, 5), (1, 1, 1), (512, 512, 256), (5, 33, 17), (2, 9, 0), (0, 4, 3)]


@pytest.mark.parametrize("batch,k,n", PHASE_A_CELLS + ODD_AND_LARGE)
def test_phase_a_matches_eager(kernel_path, phase_a, batch, k, n):
    module, compiled = phase_a
    generator = torch.Generator().manual_seed(batch * 1_000_003 + k * 1009 + n)
    for _ in range(3):
        x = torch.randn(batch, k, generator=generator)
        w = torch.randn(n, k, generator=generator)
        b = torch.randn(n, generator=generator)
        with torch.no_grad():
            eager = module.inference(x, w, b)
        assert_parity(compiled(x, w, b), eager, phase_a_bound(x, w, b))


def test_nan_and_inf_propagate_as_in_eager(kernel_path, phase_a):
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
        assert_parity(ours, eager, phase_a_bound(x, w, b))


def test_non_contiguous_inputs(phase_a):
    module, compiled = phase_a
    x = torch.randn(12, 10).t()  # 10 x 12, strided
    w = torch.randn(6, 24)[:, ::2]  # 6 x 12, strided
    b = torch.randn(12)[::2]
    assert not x.is_contiguous() and not w.is_contiguous() and not b.is_contiguous()
    assert_parity(compiled(x, w, b), module.inference(x, w, b), phase_a_bound(x, w, b))


ACTIVATIONS = ["relu", "sigmoid", "tanh", "abs", "neg", "square", "exp", "log", "sqrt", "gelu", "silu",
               "rsqrt", "relu6"]
# No activation, each alone, and chains that feed each activation from another.
CHAINS = [[]] + [[op] for op in ACTIVATIONS] + [
    ["sigmoid", "tanh"],
    ["abs", "sqrt", "log"],
    ["neg", "square", "exp"],
    ["relu", "gelu", "abs"],
    ["exp", "log", "relu"],
    ["silu", "tanh", "silu"],
    ["square", "rsqrt", "neg"],
    ["relu6", "sigmoid", "relu6"],
]
REDUCES = [(None, False), ("sum", False), ("sum", True), ("mean", False), ("mean", True)]
# One-pass kernel (both tile shapes, k past the dot product's block, a long reduced row) and
# GEMM + epilogue (64 x 128 x 64 is above the crossover).
CHAIN_SHAPES = [(4, 19, 9), (3, 300, 13), (2, 5, 300), (64, 128, 64)]


def chain_source(index, acts, reduce, keepdim, bias, spelling="linear"):
    """`spelling`: "linear" (w is [out, in]), or "@" / "torch.matmul" (w is [in, out], the
    bias added after the product)."""
    if spelling == "linear":
        expr, body = ("F.linear(x, w, b)" if bias else "F.linear(x, w)"), ""
    else:
        # A method call on a parenthesized expression is not claimed (RXT030): name it.
        product = "x @ w" if spelling == "@" else "torch.matmul(x, w)"
        expr, body = "h", (f"    h = {product} + b\n" if bias else f"    h = {product}\n")
    for op in acts:
        expr = f"F.{op}({expr})" if op in ("gelu", "silu", "relu6") else f"{expr}.{op}()"
    if reduce is not None:
        expr += f".{reduce}(dim=1, keepdim=True)" if keepdim else f".{reduce}(dim=1)"
    ret = "TensorF32Cpu1D" if reduce is not None and not keepdim else "TensorF32Cpu2D"
    params = "x: TensorF32Cpu2D, w: TensorF32Cpu2D" + (", b: TensorF32Cpu1D" if bias else "")
    return f"def chain_{index}({params}) -> {ret}:\n{body}    return {expr}\n"


def compiled_chains(rextio, tmp_path_factory, name, spellings, fused_op):
    """Every activation chain x reduction x bias as its own function of module `name` (the
    spellings taking turns), each compiled (strict) and checked to run as one `fused_op`."""
    cases = list(itertools.product(CHAINS, REDUCES, [True, False]))
    lines = ["import torch", "import torch.nn.functional as F",
             "from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D", ""]
    for index, (acts, (reduce, keepdim), bias) in enumerate(cases):
        spelling = spellings[index % len(spellings)]
        lines.append(chain_source(index, acts, reduce, keepdim, bias, spelling))
    module = import_generated(tmp_path_factory, name, "\n".join(lines))
    compiled = []
    for index, (acts, (reduce, keepdim), bias) in enumerate(cases):
        fn = getattr(module, f"chain_{index}")
        native = rextio.compile(fn, strict=True)
        # A bare linear stays one ATen call, a bare product one matmul.
        if acts or reduce or (bias and fused_op == "fused_matmul"):
            assert fused_op in native.optimized_ir, (acts, reduce, keepdim, bias, native.optimized_ir)
        compiled.append((fn, native, acts, reduce, keepdim, bias))
    return compiled


@pytest.fixture(scope="module")
def chain_functions(rextio, tmp_path_factory):
    yield compiled_chains(rextio, tmp_path_factory, "parity_chains", ["linear"], "fused_linear")
    del sys.modules["parity_chains"]


# The regimes of a `fused_matmul` (runtime CostModel::fuses_in_out): the small kernel at
# batch 1, k <= 32 at a larger batch, a small product op by op, the gemm crate + epilogue.
MATMUL_SHAPES = [(1, 256, 64), (64, 32, 32), (16, 64, 16), (64, 128, 64)]


@pytest.fixture(scope="module")
def matmul_chain_functions(rextio, tmp_path_factory):
    """The chains spelled `x @ w + b` and `torch.matmul(x, w) + b` (alternating)."""
    name = "parity_matmul_chains"
    yield compiled_chains(rextio, tmp_path_factory, name, ["@", "torch.matmul"], "fused_matmul")
    del sys.modules[name]


@pytest.mark.parametrize("placement", [None, "x", "w", "b"])
@pytest.mark.parametrize("batch,k,n", MATMUL_SHAPES)
def test_matmul_spellings_match_eager_in_every_regime(matmul_chain_functions, placement, batch, k, n):
    """Finite data, and NaN, +inf and -inf placed in one argument at a time."""
    generator = torch.Generator().manual_seed(batch * 13 + k * 7 + n)
    x, w, b = problem(generator, batch, k, n)
    if placement is not None:
        target = {"x": x, "w": w, "b": b}[placement].view(-1)
        target[0], target[4], target[-1] = float("nan"), float("inf"), float("-inf")
    # The same problem with the weight laid out [in, out]; the bound is linear's over w.
    check_chains(matmul_chain_functions, x, w, b, weight=w.t().contiguous())


def problem(generator, batch, k, n):
    """Linear outputs about N(0, 1) whatever k: exp stays finite, log and sqrt see both signs."""
    x = torch.randn(batch, k, generator=generator)
    w = torch.randn(n, k, generator=generator) / max(k, 1) ** 0.5
    b = torch.randn(n, generator=generator) * 0.5
    return x, w, b


def check_chains(chain_functions, x, w, b, weight=None):
    """Each chain against eager within `fused_linear_bound` of `linear(x, w, b)`; the
    functions take `weight` (default `w`) as their weight argument."""
    weight = w if weight is None else weight
    for fn, native, acts, reduce, keepdim, bias in chain_functions:
        args = (x, weight, b) if bias else (x, weight)
        with torch.no_grad():
            eager = fn(*args)
        bound = fused_linear_bound(x, w, b if bias else None, acts, reduce, keepdim)
        try:
            assert_parity(native(*args), eager, bound)
        except AssertionError as error:
            raise AssertionError(f"{fn.__name__} {acts} {reduce} keepdim={keepdim} bias={bias}: {error}") from None


@pytest.mark.parametrize("batch,k,n", CHAIN_SHAPES)
def test_every_activation_and_reduction_with_and_without_bias(kernel_path, chain_functions, batch, k, n):
    generator = torch.Generator().manual_seed(batch * 7919 + k * 31 + n)
    check_chains(chain_functions, *problem(generator, batch, k, n))


@pytest.mark.parametrize("placement", ["x", "w", "b"])
@pytest.mark.parametrize("batch,k,n", [(5, 11, 9), (64, 128, 64)])
def test_nan_and_inf_in_inputs_weights_and_bias(kernel_path, chain_functions, placement, batch, k, n):
    """NaN, +inf and -inf placed in one argument at a time, through every chain."""
    generator = torch.Generator().manual_seed(batch + k + n)
    x, w, b = problem(generator, batch, k, n)
    target = {"x": x, "w": w, "b": b}[placement].view(-1)
    target[0], target[4], target[-1] = float("nan"), float("inf"), float("-inf")
    with torch.no_grad():
        assert not torch.isfinite(torch.nn.functional.linear(x, w, b)).all()
    check_chains(chain_functions, x, w, b)


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


SILU_SOURCE = """
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def silu_2d(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.silu(x)


def silu_1d(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.silu(x, inplace=False)


def silu_twice(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.silu(F.silu(x) * w)
"""

F32 = torch.finfo(torch.float32)
# NaN, the infinities, signed zeros, subnormals, where e^-x overflows float32 (-88.72...),
# the largest finite values, the minimum (-1.2785) and values around 0.
SILU_SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, F32.tiny, -F32.tiny,
                -88.72, -88.7229, -88.73, -89.0, -100.0, -1e30, 88.73, 100.0, 1e30,
                F32.max, -F32.max, -1.2784645, -1.0, 1.0, -5.0, 5.0, 17.0, -17.0, 1e-7, -1e-7]


def assert_silu_matches(ours, eager):
    """Same NaN positions, infinities and signs of zero as eager, finite values within 4
    ulps of eager's (both are `x / (1 + exp(-x))` with an exp within an ulp)."""
    assert_parity(ours, eager)
    zero = eager == 0
    assert torch.equal(torch.signbit(ours[zero]), torch.signbit(eager[zero])), "signs of zero"
    finite = torch.isfinite(eager) & ~zero
    ulp = (torch.nextafter(eager[finite].abs(), torch.tensor(math.inf)) - eager[finite].abs())
    ulp = ulp.double().clamp(min=2.0**-149)
    worst = ((ours[finite].double() - eager[finite].double()).abs() / ulp).max().item() if finite.any() else 0.0
    assert worst <= 4.0, f"{worst} ulps"


def unary_cases(one_d, two_d, values, wide, grid):
    """The cases of a unary op's special-value test: the special values whole, as one row and
    as one column; a wide tensor (special and random values) in 1-D and as a `grid` 2-D; each
    special value alone (one-element tensors: eager's scalar loop); and prefixes of the wide
    tensor that end in a partial vector (eager's scalar tail)."""
    rows, cols = grid
    cases = [(one_d, (values,)), (one_d, (wide,)), (two_d, (wide[:rows * cols].view(rows, cols),)),
             (two_d, (values.view(1, -1),)), (two_d, (values.view(-1, 1),))]
    cases += [(one_d, (values[i:i + 1].clone(),)) for i in range(len(values))]
    cases += [(two_d, (values[i:i + 1].view(1, 1),)) for i in range(len(values))]
    cases += [(one_d, (wide[:n].clone(),)) for n in (2, 3, 7, 15, 17, 31, 33, 63)]
    return cases


def check_unary_cases(module, compiled, cases, check):
    """Each case through the compiled function and eager (under no_grad), compared by `check`;
    a failure names the function and the shape."""
    for name, args in cases:
        with torch.no_grad():
            eager = getattr(module, name)(*args)
        try:
            check(compiled[name](*args), eager)
        except AssertionError as error:
            raise AssertionError(f"{name} on {tuple(args[0].shape)}: {error}") from None


@pytest.fixture(scope="module")
def silu_functions(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_silu", SILU_SOURCE)
    yield module, {name: rextio.compile(getattr(module, name), strict=True)
                   for name in ("silu_2d", "silu_1d", "silu_twice")}
    del sys.modules["parity_silu"]


def test_silu_matches_eager_on_special_values_and_one_element_tensors(silu_functions):
    module, compiled = silu_functions
    assert "silu" in compiled["silu_2d"].optimized_ir
    values = torch.tensor(SILU_SPECIAL, dtype=torch.float32)
    g = torch.Generator().manual_seed(52)
    wide = torch.cat([values, torch.randn(4099, generator=g) * 30, torch.randn(40, generator=g)])
    check_unary_cases(module, compiled, unary_cases("silu_1d", "silu_2d", values, wide, (69, 60)), assert_silu_matches)


def test_silu_inside_an_elementwise_chain(silu_functions):
    module, compiled = silu_functions
    g = torch.Generator().manual_seed(7)
    x, w = torch.randn(9, 13, generator=g) * 4, torch.randn(9, 13, generator=g)
    x.view(-1)[:6] = torch.tensor([math.nan, math.inf, -math.inf, -0.0, -100.0, 1e-40])
    with torch.no_grad():
        eager = module.silu_twice(x, w)
    assert_parity(compiled["silu_twice"](x, w), eager)


RSQRT_SOURCE = """
import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def rsqrt_2d(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.rsqrt(x)


def rsqrt_1d(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x.rsqrt()


def rsqrt_chain(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.rsqrt(x * w).rsqrt()
"""

# NaN, the infinities, signed zeros, subnormals (whose rsqrt is past 2^63), negatives, the
# extremes and values around 1.
RSQRT_SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-45, 1e-40, -1e-40, F32.tiny,
                 -F32.tiny, F32.max, -F32.max, 1.0, -1.0, 0.25, 2.0, 3.0, 1e30, 1e-30, 4.0 - 2**-21,
                 1.0 + 2**-23, 1.0 - 2**-24, 1e-7, -5.0]


@pytest.fixture(scope="module")
def rsqrt_functions(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_rsqrt", RSQRT_SOURCE)
    yield module, {name: rextio.compile(getattr(module, name), strict=True)
                   for name in ("rsqrt_2d", "rsqrt_1d", "rsqrt_chain")}
    del sys.modules["parity_rsqrt"]


def test_rsqrt_matches_eager_bit_for_bit(rsqrt_functions):
    module, compiled = rsqrt_functions
    assert "rsqrt" in compiled["rsqrt_2d"].optimized_ir
    values = torch.tensor(RSQRT_SPECIAL, dtype=torch.float32)
    g = torch.Generator().manual_seed(53)
    bits = torch.randint(0, 2**31 - 1, (4096,), generator=g, dtype=torch.int32)
    wide = torch.cat([values, bits.view(torch.float32), torch.rand(4000, generator=g) * 100])
    check_unary_cases(module, compiled, unary_cases("rsqrt_1d", "rsqrt_2d", values, wide, (90, 90)), assert_same_bits)


def test_rsqrt_inside_an_elementwise_chain(rsqrt_functions):
    module, compiled = rsqrt_functions
    g = torch.Generator().manual_seed(8)
    x, w = torch.rand(9, 13, generator=g) * 4, torch.rand(9, 13, generator=g)
    x.view(-1)[:6] = torch.tensor([math.nan, math.inf, -math.inf, -0.0, -100.0, 1e-40])
    with torch.no_grad():
        eager = module.rsqrt_chain(x, w)
    assert_same_bits(compiled["rsqrt_chain"](x, w), eager)


RELU6_SOURCE = """
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def relu6_2d(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu6(x)


def relu6_1d(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.relu6(x, inplace=False)


def relu6_chain(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu6(F.relu6(x) * w)
"""

# NaN, the infinities, signed zeros, subnormals, the clamp's ends and their neighbours.
RELU6_SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-45, -1e-45, 1e-40, -1e-40, F32.tiny,
                 -F32.tiny, F32.max, -F32.max, 6.0, 6.0 + 2**-21, 6.0 - 2**-21, 7.0, -1.0, 1.0, 5.5]


@pytest.fixture(scope="module")
def relu6_functions(rextio, tmp_path_factory):
    module = import_generated(tmp_path_factory, "parity_relu6", RELU6_SOURCE)
    yield module, {name: rextio.compile(getattr(module, name), strict=True)
                   for name in ("relu6_2d", "relu6_1d", "relu6_chain")}
    del sys.modules["parity_relu6"]


def test_relu6_matches_eager_bit_for_bit(relu6_functions):
    """ATen's hardtanh(x, 0, 6): NaN stays NaN, -0.0 stays -0.0, -inf is +0.0."""
    module, compiled = relu6_functions
    assert "relu6" in compiled["relu6_2d"].optimized_ir
    values = torch.tensor(RELU6_SPECIAL, dtype=torch.float32)
    g = torch.Generator().manual_seed(54)
    wide = torch.cat([values, torch.randn(4099, generator=g) * 8, values])
    check_unary_cases(module, compiled, unary_cases("relu6_1d", "relu6_2d", values, wide, (41, 100)), assert_same_bits)


def test_relu6_inside_an_elementwise_chain(relu6_functions):
    module, compiled = relu6_functions
    g = torch.Generator().manual_seed(9)
    x, w = torch.randn(9, 13, generator=g) * 8, torch.randn(9, 13, generator=g) * 2
    x.view(-1)[:6] = torch.tensor([math.nan, math.inf, -math.inf, -0.0, -100.0, 1e-40])
    with torch.no_grad():
        eager = module.relu6_chain(x, w)
    assert_same_bits(compiled["relu6_chain"](x, w), eager)


def test_fusion_happened_for_phase_a(phase_a):
    _, compiled = phase_a
    assert "fused_linear" in compiled.optimized_ir
    assert "linear %0, %1, %2" in compiled.parsed_ir


HEADS_SOURCE = '''
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def head_probabilities(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D,
                       w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    hidden = F.linear(x, w1, b1).relu()
    logits = F.linear(hidden, w2, b2)
    return logits.softmax(dim=1)


def head_labels(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D,
                w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorI64Cpu1D:
    hidden = F.linear(x, w1, b1).tanh()
    logits = F.linear(hidden, w2, b2)
    return logits.argmax(dim=1)


def matmul_head_labels(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D,
                       w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorI64Cpu1D:
    h = x @ w1 + b1
    hidden = h.relu()
    logits = hidden @ w2 + b2
    return logits.argmax(dim=1)
'''


@pytest.fixture(scope="module")
def heads(rextio, tmp_path_factory):
    yield import_generated(tmp_path_factory, "parity_heads", HEADS_SOURCE)
    del sys.modules["parity_heads"]


@pytest.mark.parametrize("batch,k,hidden,classes", [(1, 8, 128, 32), (16, 128, 8, 8), (64, 256, 8, 32), (33, 40, 70, 100)])
def test_heads_end_in_a_fused_softmax_or_argmax(kernel_path, rextio, heads, batch, k, hidden, classes):
    """Two-layer heads: the second layer and its softmax/argmax are one fused op; the
    probabilities match eager within the default tolerance and every label is a maximal
    logit of eager's within it (a near-tie may go either way between two summation orders)."""
    g = torch.Generator().manual_seed(batch + k + hidden + classes)
    x = torch.randn(batch, k, generator=g)
    w1 = torch.randn(hidden, k, generator=g) / k ** 0.5
    b1 = torch.randn(hidden, generator=g) * 0.1
    w2 = torch.randn(classes, hidden, generator=g) / hidden ** 0.5
    b2 = torch.randn(classes, generator=g) * 0.1
    args = (x, w1, b1, w2, b2)
    probabilities = rextio.compile(heads.head_probabilities, strict=True)
    assert "tail=softmax(dim=1)" in probabilities.optimized_ir, probabilities.optimized_ir
    with torch.no_grad():
        assert_parity(probabilities(*args), heads.head_probabilities(*args))
    transposed = (x, w1.t().contiguous(), b1, w2.t().contiguous(), b2)
    for fn, fn_args in ((heads.head_labels, args), (heads.matmul_head_labels, transposed)):
        labels = rextio.compile(fn, strict=True)
        assert "tail=argmax(dim=1, keepdim=false)" in labels.optimized_ir, labels.optimized_ir
        ours = labels(*fn_args)
        with torch.no_grad():
            eager = fn(*fn_args)
            hidden_eager = F.linear(x, w1, b1)
            hidden_eager = hidden_eager.tanh() if fn is heads.head_labels else hidden_eager.relu()
            logits = F.linear(hidden_eager, w2, b2)
        assert ours.dtype == eager.dtype == torch.int64 and ours.shape == eager.shape
        chosen = logits.gather(1, ours.unsqueeze(1)).squeeze(1)
        best = logits.max(dim=1).values
        assert torch.all(chosen >= best - RTOL * best.abs().clamp(min=1.0)), (ours, eager)
