"""Intra-op threads (docs/parity.md, "Threads"): compiled functions follow
`torch.set_num_threads`, give the same bits at every thread count, and keep working in a
child forked after parallel calls (their worker threads live only inside a call)."""

import multiprocessing

import pytest
import torch
import torch.nn.functional as F

import rextio_torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


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


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_same_bits_at_every_thread_count(cell):
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


def test_a_fork_after_parallel_calls_computes_the_same():
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
