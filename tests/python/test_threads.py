"""Intra-op threads (docs/parity.md, "Threads"): compiled functions follow
`torch.set_num_threads`, give the same bits at every thread count, and keep working in a
child forked after parallel calls (the child starts a worker pool of its own). That
includes what reaches ATen: whole-tensor reductions at float32, float64 and bfloat16 (eager's
own bits change with the thread count from 32768 elements on; ours are held within a stated
bound of eager's at each count) and elementwise ops whose two ATen loops round differently
(ours are eager's one-thread bits at every count)."""

import math
import multiprocessing
import os

import pytest
import torch
import torch.nn.functional as F

import rextio_torch
from rextio_torch import _native
from rextio_torch.types import (
    TensorBF16Cpu0D, TensorBF16Cpu1D, TensorBF16Cpu2D, TensorF32Cpu0D, TensorF32Cpu1D,
    TensorF32Cpu2D, TensorF64Cpu0D, TensorF64Cpu1D, TensorF64Cpu2D,
)


def linear_relu_mean(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


def gelu_layer(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.gelu(F.linear(x, w, b))


def softmax_head(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D,
                 b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(F.linear(x, w1, b1).relu(), w2, b2).softmax(dim=1)


def narrow_sum(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).sigmoid().sum(dim=1)


def operands(seed, batch, *layers):
    """x [batch, layers[0]], then a weight and bias per pair of widths."""
    g = torch.Generator().manual_seed(seed)
    args = [torch.randn(batch, layers[0], generator=g)]
    for k, n in zip(layers, layers[1:]):
        args += [torch.randn(n, k, generator=g) / k ** 0.5, torch.randn(n, generator=g)]
    return args


# (function, operands): each large enough to go parallel, together every kernel path of ours:
# the gemm crate (weight given, transposed once per call), the one-pass kernel (a narrow
# output), softmax rows.
CELLS = {
    "linear_relu_mean": (linear_relu_mean, (1, 2048, 512, 512)),
    "gelu_layer": (gelu_layer, (2, 1100, 256, 512)),
    "softmax_head": (softmax_head, (3, 4200, 256, 256, 256)),
    "narrow_sum": (narrow_sum, (4, 8300, 512, 8)),
}


@pytest.fixture(autouse=True)
def one_thread_after():
    yield
    torch.set_num_threads(1)


@pytest.fixture
def crate_products():
    """The crate's GEMM for wide products on this thread, whatever the CPU's vendor picks
    (on Intel, libtorch's: see the libtorch tests below)."""
    _native.force_products("crate")
    yield
    _native.force_products(None)


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_same_bits_at_every_thread_count(cell, crate_products):
    fn, (seed, batch, *widths) = CELLS[cell]
    compiled = rextio_torch.compile(fn, strict=True)
    args = operands(seed, batch, *widths)
    results = {}
    for threads in (1, 2, 3, 4):
        torch.set_num_threads(threads)
        assert torch.get_num_threads() == threads
        results[threads] = compiled(*args)
    torch.set_num_threads(1)
    with torch.no_grad():
        eager = fn(*args)
    torch.testing.assert_close(results[1], eager, rtol=1e-4, atol=1e-4)
    for threads, result in results.items():
        assert torch.equal(result.view(torch.int32), results[1].view(torch.int32)), threads


def linear_relu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).relu()


def linear_alone(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b)


def matmul_alone(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x @ w


@pytest.mark.parametrize("products", ["crate", "libtorch"])
def test_wide_products_on_libtorch_s_gemm_are_eager_s_bits_at_each_thread_count(products):
    """Where libtorch's GEMM computes the wide products (an Intel CPU picks it:
    `REXTIO_TORCH_PRODUCTS`, docs/parity.md "Threads"), a fused `linear` with an exact
    epilogue, a `linear` alone and a `matmul` are eager's own bits at each thread count,
    whatever those are; on the crate's they are the same bits at every count, close to
    eager's."""
    _native.force_products(products)
    try:
        x, w, b = operands(7, 300, 512, 384)
        cells = [(linear_relu, (x, w, b)), (linear_alone, (x, w, b)),
                 (matmul_alone, (x, w.t().contiguous()))]
        for fn, args in cells:
            compiled = rextio_torch.compile(fn, strict=True)
            ours = {}
            for threads in (1, 2, 3):
                torch.set_num_threads(threads)
                with torch.no_grad():
                    eager = fn(*args)
                ours[threads] = compiled(*args)
                if products == "libtorch":
                    assert torch.equal(_bits(ours[threads]), _bits(eager)), (fn.__name__, threads)
                else:
                    torch.testing.assert_close(ours[threads], eager, rtol=1e-5, atol=1e-5)
            if products == "crate":
                for threads, result in ours.items():
                    assert torch.equal(_bits(result), _bits(ours[1])), (fn.__name__, threads)
    finally:
        _native.force_products(None)


def test_the_kernel_line_names_whose_gemm_and_a_bad_value_says_so():
    import subprocess
    import sys
    code = "from rextio_torch import _native; print(_native.kernel_isa())"
    for value, expected in [("libtorch", "products: libtorch (REXTIO_TORCH_PRODUCTS;"),
                            ("crate", "products: crate (REXTIO_TORCH_PRODUCTS;")]:
        env = dict(os.environ, REXTIO_TORCH_PRODUCTS=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        assert expected in out.stdout, out.stdout
    env = dict(os.environ, REXTIO_TORCH_PRODUCTS="mkl")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert 'REXTIO_TORCH_PRODUCTS="mkl" is not one of auto, crate, libtorch' in out.stderr
    assert "products: " in out.stdout
    with pytest.raises(ValueError, match="expected crate or libtorch"):
        _native.force_products("mkl")


def test_long_dot_products_follow_libtorch_s_gemm_at_each_thread_count():
    """Dot products past 4096 are libtorch's GEMM (then our epilogue in row blocks): its bits
    depend on the thread count, as eager's do (docs/parity.md, "Threads"); ours are eager's
    product at each count, repeatably."""
    args = operands(5, 1000, 5000, 300)
    compiled = rextio_torch.compile(linear_relu_mean, strict=True)
    for threads in (1, 2, 3):
        torch.set_num_threads(threads)
        first, again = compiled(*args), compiled(*args)
        assert torch.equal(first, again), threads
        with torch.no_grad():
            eager = linear_relu_mean(*args)
        torch.testing.assert_close(first, eager, rtol=1e-5, atol=1e-5)


def _child(queue, args):
    try:
        torch.set_num_threads(2)
        compiled = rextio_torch.compile(linear_relu_mean, strict=True)
        queue.put(("ok", compiled(*args).numpy()))
    except BaseException as error:  # reported to the parent, which fails the test
        queue.put(("error", repr(error)))


def test_a_fork_after_parallel_calls_computes_the_same(crate_products):
    """A forked child runs its products on the crate's GEMM and its blocks on our own pool
    (libgomp's threads, libtorch's team, are not in the child: `par::forked`), so it gives
    the bits the parent gives on the crate's (`crate_products`; on Intel the parent's own
    choice is libtorch's GEMM, whose bits are within the bounds of these)."""
    args = operands(6, 2048, 512, 512)
    torch.set_num_threads(2)
    compiled = rextio_torch.compile(linear_relu_mean, strict=True)
    expected = compiled(*args)
    expected = compiled(*args)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue, args))
    child.start()
    status, result = queue.get(timeout=120)
    child.join(timeout=60)
    assert status == "ok", result
    assert child.exitcode == 0
    assert torch.equal(torch.from_numpy(result), expected)
    # ... and so does a fork pool's every worker.
    with context.Pool(2) as pool:
        outs = pool.starmap(_pool_call, [(args,)] * 4)
    for out in outs:
        assert torch.equal(torch.from_numpy(out), expected)


def _pool_call(args):
    torch.set_num_threads(2)
    return rextio_torch.compile(linear_relu_mean, strict=True)(*args).numpy()


# --- whole-tensor reductions and the other ops routed to ATen -------------------------------
#
# ATen reduces a whole tensor of 32768 elements or more in one partial per thread
# (`two_pass_reduction`), so eager's `x.sum()` of a 2000 x 1000 matrix has other bits at 1, 2
# and 3 threads. Compiled code cuts the tensor into fixed chunks of 32768 elements in memory
# order (docs/parity.md, "Threads"): the same bits at every thread count, eager's own bits
# below 32768 elements, and within the bound below of eager's at any thread count above.


def sum_f32(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.sum()


def mean_f32(x: TensorF32Cpu1D) -> TensorF32Cpu0D:
    return x.mean()


def amax_f32(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.amax()


def max_f32(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.max()


def sum_f64(x: TensorF64Cpu2D) -> TensorF64Cpu0D:
    return x.sum()


def mean_f64(x: TensorF64Cpu1D) -> TensorF64Cpu0D:
    return x.mean()


def amin_f64(x: TensorF64Cpu2D) -> TensorF64Cpu0D:
    return x.amin()


def sum_bf16(x: TensorBF16Cpu2D) -> TensorBF16Cpu0D:
    return x.sum()


def mean_bf16(x: TensorBF16Cpu1D) -> TensorBF16Cpu0D:
    return x.mean()


def amax_bf16(x: TensorBF16Cpu2D) -> TensorBF16Cpu0D:
    return x.amax()


def branch_on_sum(x: TensorF32Cpu2D, t: float) -> int:
    if x.sum() > t:
        return 1
    return 0


def silu_f64(x: TensorF64Cpu2D) -> TensorF64Cpu2D:
    return F.silu(x)


def gelu_tanh_f64(x: TensorF64Cpu2D) -> TensorF64Cpu2D:
    return F.gelu(x, approximate="tanh")


def gelu_tanh_of_t(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x.t(), approximate="tanh")


def elu_f32(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.elu(x, 0.5)


def _bits(t):
    t = t.contiguous()
    return t.view({torch.float32: torch.int32, torch.float64: torch.int64,
                   torch.bfloat16: torch.int16}[t.dtype])


def _data(dtype, *shape, seed=0, transposed=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*(reversed(shape) if transposed else shape), generator=g)
    x = x.t() if transposed else x
    return x.to(dtype)


def _unit_roundoff(dtype):
    """The unit roundoff of the dtype a sum accumulates in (bfloat16 in float32)."""
    return {torch.float32: 2.0 ** -24, torch.float64: 2.0 ** -53, torch.bfloat16: 2.0 ** -24}[dtype]


def _reduction_bound(x, op):
    """How far ours may be from eager's (docs/parity.md, "Threads"): each of the two sums
    (eager's cascade, our chunks) within 8 standard deviations of a random-walk model of
    its rounding, `8 u sqrt(log2(n) sum x^2)` (u the accumulation's unit roundoff; the sums
    of a cascade's levels have magnitudes about sqrt(2^level) sigma), so together twice
    that; a mean that over n plus both divisions' roundings; bfloat16 plus both results'
    roundings (2^-8 relative each). Extrema are exact: no difference at all."""
    if op in ("amax", "amin", "max", "min"):
        return 0.0
    n = x.numel()
    u = _unit_roundoff(x.dtype)
    exact = x.double().sum().item()
    bound = 2 * 8 * u * (math.log2(n) * (x.double() ** 2).sum().item()) ** 0.5
    if op == "mean":
        bound, exact = bound / n, exact / n
        bound += 2 * u * abs(exact)
    if x.dtype == torch.bfloat16:
        bound += 2 * 2.0 ** -8 * (abs(exact) + bound)
    return bound


REDUCTIONS = {
    # name: (function, dtype, shape, op)
    "sum_f32_2000x1000": (sum_f32, torch.float32, (2000, 1000), "sum"),
    "mean_f32_3M": (mean_f32, torch.float32, (3_000_000,), "mean"),
    "amax_f32": (amax_f32, torch.float32, (2000, 1000), "amax"),
    "max_f32": (max_f32, torch.float32, (2000, 1000), "max"),
    "sum_f64_2000x1000": (sum_f64, torch.float64, (2000, 1000), "sum"),
    "mean_f64": (mean_f64, torch.float64, (1_000_003,), "mean"),
    "amin_f64": (amin_f64, torch.float64, (2000, 1000), "amin"),
    "sum_bf16_2000x1000": (sum_bf16, torch.bfloat16, (2000, 1000), "sum"),
    "mean_bf16": (mean_bf16, torch.bfloat16, (1_000_003,), "mean"),
    "amax_bf16": (amax_bf16, torch.bfloat16, (2000, 1000), "amax"),
}


def _per_thread_count(fn, *args):
    results = {}
    for threads in (1, 2, 3):
        torch.set_num_threads(threads)
        assert torch.get_num_threads() == threads
        results[threads] = fn(*args)
    torch.set_num_threads(1)
    return results


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("cell", sorted(REDUCTIONS))
def test_whole_reductions_same_bits_at_every_thread_count(cell, transposed):
    fn, dtype, shape, op = REDUCTIONS[cell]
    if transposed and len(shape) == 1:
        pytest.skip("a vector has one layout")
    x = _data(dtype, *shape, seed=7, transposed=transposed)
    compiled = rextio_torch.compile(fn, strict=True)
    ours = _per_thread_count(compiled, x)
    for threads, result in ours.items():
        assert result.dtype == dtype and result.shape == ()
        assert torch.equal(_bits(result), _bits(ours[1])), (cell, threads, result, ours[1])
    with torch.no_grad():
        eager = _per_thread_count(fn, x)
    bound = _reduction_bound(x, op)
    for threads, e in eager.items():
        diff = abs(ours[1].double().item() - e.double().item())
        assert diff <= bound, (cell, threads, diff, bound)
        if bound == 0.0:
            assert torch.equal(_bits(ours[1]), _bits(e)), (cell, threads)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_small_whole_reductions_are_eager_bits(dtype):
    """Below 32768 elements ATen reduces on one thread at every thread count, and so does
    compiled code: eager's bits, also for a transposed argument (eager sums it in memory
    order)."""
    fns = {torch.float32: (sum_f32, amax_f32), torch.float64: (sum_f64, amin_f64),
           torch.bfloat16: (sum_bf16, amax_bf16)}[dtype]
    for transposed in (False, True):
        x = _data(dtype, 150, 200, seed=3, transposed=transposed)
        for fn in fns:
            compiled = rextio_torch.compile(fn, strict=True)
            for threads, result in _per_thread_count(compiled, x).items():
                with torch.no_grad():
                    eager = fn(x)
                assert torch.equal(_bits(result), _bits(eager)), (fn.__name__, transposed, threads)


def test_transposed_sum_is_the_sum_in_memory_order():
    """Eager sums a transposed matrix in memory order, so `x.t().sum()` has `x.sum()`'s bits;
    compiled code used to copy the argument into logical order first (other bits, a branch
    that flipped)."""
    x = _data(torch.float32, 1000, 1000, seed=11)
    compiled = rextio_torch.compile(sum_f32, strict=True)
    for threads in (1, 2, 3):
        torch.set_num_threads(threads)
        assert torch.equal(_bits(compiled(x.t())), _bits(compiled(x))), threads
        with torch.no_grad():
            assert torch.equal(_bits(x.t().sum()), _bits(x.sum()))


def test_a_branch_on_a_sum_takes_the_same_arm_at_every_thread_count():
    x = _data(torch.float32, 2000, 1000, seed=5)
    compiled = rextio_torch.compile(branch_on_sum, strict=True)
    value = rextio_torch.compile(sum_f32, strict=True)
    torch.set_num_threads(1)
    t = value(x).item()
    # A threshold at our sum's value: every thread count must give the same arm (eager's sum
    # itself moves across it between thread counts on many seeds).
    arms = {threads: r for threads, r in _per_thread_count(compiled, x, t).items()}
    assert len(set(arms.values())) == 1, arms
    below = {threads: r for threads, r in _per_thread_count(compiled, x, t - abs(t) * 1e-6).items()}
    assert set(below.values()) == {1}, below


ELEMENTWISE = {
    # ATen's elementwise ops with two loops (vectorized chunks and a scalar tail) restart the
    # split at each thread's range: eager's bits differ between 1 and 2 threads. Compiled
    # code runs them in fixed chunks: eager's one-thread bits at every count.
    "silu_f64": (silu_f64, torch.float64, False),
    "gelu_tanh_f64": (gelu_tanh_f64, torch.float64, False),
    "elu_f32_transposed": (elu_f32, torch.float32, True),
    "gelu_tanh_of_t": (gelu_tanh_of_t, torch.float32, False),
}


@pytest.mark.parametrize("cell", sorted(ELEMENTWISE) + ["silu_f64_expanded"])
def test_aten_elementwise_ops_same_bits_at_every_thread_count(cell):
    if cell == "silu_f64_expanded":
        # An expanded argument (stride 0): eager's result layout (dims in their order).
        fn, x = silu_f64, _data(torch.float64, 1, 1000, seed=9).expand(301, 1000)
    else:
        fn, dtype, transposed = ELEMENTWISE[cell]
        x = _data(dtype, 301, 1000, seed=9, transposed=transposed)
    compiled = rextio_torch.compile(fn, strict=True)
    ours = _per_thread_count(compiled, x)
    torch.set_num_threads(1)
    with torch.no_grad():
        eager = fn(x)
    for threads, result in ours.items():
        assert result.stride() == eager.stride(), (threads, result.stride(), eager.stride())
        assert torch.equal(_bits(result), _bits(eager)), (cell, threads)


@pytest.mark.parametrize("fn", [amax_f32, max_f32])
def test_the_zero_an_extremum_keeps_does_not_depend_on_the_thread_count(fn):
    """A tensor of zeros, -0.0 in its first half: which zero eager's whole `amax`/`max` gives
    depends on how its threads split the tensor (measured: 1 and 2 threads differ); ours is
    the same at every count. Its value compares equal to eager's."""
    x = torch.zeros(2000, 1500)
    x[:1000] = -0.0
    compiled = rextio_torch.compile(fn, strict=True)
    ours = _per_thread_count(compiled, x)
    for threads, result in ours.items():
        assert torch.equal(_bits(result), _bits(ours[1])), threads
        assert result.item() == 0.0


def linear_f64(x: TensorF64Cpu2D, w: TensorF64Cpu2D) -> TensorF64Cpu2D:
    return F.linear(x, w)


def matmul_bf16(x: TensorBF16Cpu2D, w: TensorBF16Cpu2D) -> TensorBF16Cpu2D:
    return x @ w


def test_aten_products_are_eager_s_at_each_thread_count():
    """Products only ATen computes (float64, bfloat16) are libtorch's at each thread count,
    exactly as eager's are (docs/parity.md, "Threads": whether those depend on the count is
    the BLAS library's choice; measured, they did not on the machine of the measurements)."""
    g = torch.Generator().manual_seed(21)
    x, w = torch.randn(300, 5000, generator=g), torch.randn(100, 5000, generator=g)
    cells = [(linear_f64, x.double(), w.double()), (matmul_bf16, x.bfloat16(), w.t().bfloat16())]
    for fn, a, b in cells:
        compiled = rextio_torch.compile(fn, strict=True)
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            with torch.no_grad():
                eager = fn(a, b)
            assert torch.equal(_bits(compiled(a, b)), _bits(eager)), (fn.__name__, threads)
