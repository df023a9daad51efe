"""What test_emit_build emits as one crate: every form of the compiled surface (README "What is
compiled") and the build-only cuda:0 slice. Each CPU function is compared with eager and with
the executor; `CASES` in test_emit_build.py gives the inputs of each (its keys must be exactly
the CPU functions here)."""

import math

import torch
import torch.nn.functional as F

from rextio_torch.types import (
    TensorBF16Cpu0D,
    TensorBF16Cpu1D,
    TensorBF16Cpu2D,
    TensorBF16Cpu3D,
    TensorF32Cpu0D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cuda0_1D,
    TensorF32Cuda0_2D,
    TensorF64Cpu0D,
    TensorF64Cpu1D,
    TensorF64Cpu2D,
    TensorF64Cpu3D,
    TensorI64Cpu1D,
)


# F.linear with bias, then each fused activation and each fused reduction.
def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


def linear_only(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b)


def linear_no_bias(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(x, w)


def linear_bias_none(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return F.linear(x, w, bias=None).tanh().sum(dim=1)


def linear_squashing_chain(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).sigmoid().tanh().neg().abs().sqrt().square().exp().log()


def linear_gelu_sum_keepdim(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.gelu(F.linear(x, w, b)).sum(dim=1, keepdim=True)


def linear_relu_mean_keepdim(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.relu(F.linear(x, w, None)).mean(1, keepdim=True)


# Each unary op, as a method and as a function, rank 2 and rank 1.
def unary_methods(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu() + x.sigmoid() + x.tanh() + x.abs() + x.neg() + x.negative() + x.square() + x.exp() + x.abs().log() + x.abs().sqrt()


def unary_functions(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    activations = torch.relu(x) + F.relu(x) + F.relu(x, inplace=False) + torch.sigmoid(x) + torch.tanh(x)
    math = torch.abs(x) + torch.neg(x) + torch.negative(x) + torch.square(x) + torch.exp(x)
    logs = torch.log(torch.abs(x)) + torch.sqrt(torch.abs(x))
    return activations + math + logs + F.gelu(x) + F.gelu(x, approximate="none")


def unary_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.sigmoid().tanh().abs().neg().exp().log().sqrt().square().relu() + F.gelu(v)


# Binary ops: same rank, rank-2 with rank-1 broadcast in either order, functional spellings.
def binops_same_rank(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (a + b) * (a - b) / (b.abs() + b.exp())


def binops_broadcast(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (a + v) - (v - a) * (a * v) + v / a.exp() + a / v.exp()


def binops_functional(a: TensorF32Cpu2D, b: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.add(a, v) + torch.sub(a, b) * torch.mul(v, b) - torch.div(a, torch.exp(b))


def binops_rank1(u: TensorF32Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return u + v - u * v / v.exp()


# Matmul: 2-2, 2-1, 1-2, as `@`, `torch.matmul` and `.matmul`.
def matmul_2_2(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return a @ b + torch.matmul(a, b) - a.matmul(b)


def matmul_2_1(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.sigmoid(a @ v) + torch.matmul(a, v)


def matmul_1_2(v: TensorF32Cpu1D, a: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return v @ a + v.matmul(a)


# Reductions over a literal dim, methods and functions, positional and keyword dims.
def reductions_2d(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.mean(x, dim=0, keepdim=True) + x.sum(dim=1, keepdim=True) + x.mean(1, keepdim=True) + torch.sum(x, 0, keepdim=True)


def reductions_to_rank1(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(dim=0) + x.sum(0) + torch.mean(x, 0, keepdim=False) + torch.sum(x, dim=0)


def reductions_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.mean(dim=0, keepdim=True) + torch.sum(v, 0, keepdim=True) + v


# Fused across ops: an input normalization as the prologue of a linear, and `x @ w + b` with
# its own prologue and epilogue (a fused_matmul).
def normalize_linear(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, scale: TensorF32Cpu1D,
                     w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    normalized = (x - mean) / scale
    return F.linear(normalized, w, b).relu()


def matmul_bias_tanh_mean(x: TensorF32Cpu2D, scale: TensorF32Cpu1D, wt: TensorF32Cpu2D,
                          b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    y = torch.matmul(x * scale, wt) + b
    return y.tanh().mean(dim=1)


# Softmax and argmax.
def softmax_forms(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x.softmax(dim=1) + torch.softmax(x, 0) + F.softmax(x, dim=1) + F.softmax(x, dim=0, dtype=None) + v.softmax(dim=0)


# log_softmax and the extrema (extended surface), and the fused linear -> log_softmax tail.
def log_softmax_forms(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    y = F.log_softmax(x, dim=-1) + torch.log_softmax(x, 0) + x.log_softmax(dim=1)
    return y + v.log_softmax(dim=0) + x.amax(dim=1, keepdim=True) - torch.amin(x, 0)


def log_softmax_head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.log_softmax(F.linear(x, w, b).relu(), dim=1)


# torch.cat / torch.stack (extended surface): a cat of an op's result, a stack of vectors.
def joins(x: TensorF32Cpu2D, v: TensorF32Cpu1D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = torch.cat([x, F.linear(x, w, b).relu()], dim=1)
    s = torch.stack((v, v.relu()))
    return torch.concat([h, s, h], -2)


def scalar_operands(x: TensorF32Cpu2D, temperature: float, n: int) -> TensorF32Cpu2D:
    scaled = x / temperature
    return (scaled * 0.5 + 1.0) - n / (2.0 - x)


def gelu_tanh_layer(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.gelu(F.linear(x, w, b), approximate="tanh")


# The everyday layers (extended surface): embedding, layer_norm (a literal and an int
# parameter size, with and without weight and bias), dropout in eval mode (no op).
def embed_norm(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, g: TensorF32Cpu1D, b: TensorF32Cpu1D,
               d: int) -> TensorF32Cpu2D:
    h = F.layer_norm(F.embedding(ids, table), (d,), g, b, 1e-6)
    return F.dropout(F.layer_norm(h, [6]), 0.1, training=False)


def param_activations(x: TensorF32Cpu2D, slope: float, lo: int) -> TensorF32Cpu2D:
    h = F.leaky_relu(x, negative_slope=slope) + F.elu(x, alpha=0.5)
    return torch.clamp(F.hardtanh(h, -2.0, 2.0), min=lo) + x.clip(max=0.25)


# A text-classifier head (extended surface): embedding_bag in its three modes, then a linear
# and log_softmax.
def bag_head(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D,
             w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    pooled = F.embedding_bag(ids, table, offsets) + F.embedding_bag(ids, table, offsets, mode="sum")
    pooled = pooled - F.embedding_bag(ids, table, offsets, mode="max")
    return F.log_softmax(F.linear(pooled, w, b), dim=1)


def classify(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorI64Cpu1D:
    logits = F.linear(x, w, b)
    probabilities = logits.softmax(dim=1)
    return probabilities.argmax(dim=1, keepdim=False)


def argmax_dim0(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.argmax(x, dim=0)


def argmax_positional(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmax(1)


def argmax_rank1(v: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return v.argmax(dim=0, keepdim=True)


# Named temps, a shared intermediate, int64 and scalar parameters.
def named_temps(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    hidden = F.linear(x, w, b)
    active = hidden.relu()
    return active.mean(dim=1, keepdim=False)


def shared_intermediate(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    hidden = F.linear(x, w, b).relu()
    return hidden + hidden.mean(dim=1, keepdim=True)


def with_labels(labels: TensorI64Cpu1D, x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.argmax(x, dim=1)


def scalar_params(x: TensorF32Cpu2D, w: TensorF32Cpu2D, depth: int, training: bool) -> TensorF32Cpu2D:
    return F.linear(x, w).relu()


def returns_int(x: TensorF32Cpu2D, n: int) -> int:
    return n


def returns_bool(flag: bool, x: TensorF32Cpu1D) -> bool:
    return flag


# The build-only cuda:0 slice: rank-2 @ rank-2, + rank-1 bias, relu, mean over dim 1.
def cuda_head(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_1D:
    product = x @ w
    biased = product + b
    active = biased.relu()
    return active.mean(dim=1, keepdim=False)


# Scalar control flow: loops, arms, early returns and scalar arithmetic, emitted as Rust.
def phase_b(x: TensorF32Cpu2D, weight_a: TensorF32Cpu2D, weight_b: TensorF32Cpu2D,
            bias_a: TensorF32Cpu1D, bias_b: TensorF32Cpu1D, depth: int, phase: int) -> TensorF32Cpu1D:
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            hidden = F.linear(hidden, weight_a, bias_a).relu()
        else:
            hidden = F.linear(hidden, weight_b, bias_b).relu()
    return hidden.mean(dim=1, keepdim=False)


def while_continue_return(x: TensorF32Cpu2D, w: TensorF32Cpu2D, limit: int, stop_at: int) -> TensorF32Cpu2D:
    h = x.tanh()
    i = 0
    while i < limit:
        if i == stop_at:
            return h.relu()
        if i % 3 == 1:
            i = i + 2
            continue
        h = F.linear(h, w).tanh()
        i = i + 1
    return h.sigmoid()


def elif_and_or(x: TensorF32Cpu2D, times: int, flag: bool) -> TensorF32Cpu2D:
    h = x.abs()
    for i in range(1, times + 1, 2):
        if flag and i > 2:
            h = h.sqrt()
        elif not flag or i == 1:
            h = h.exp().tanh()
    return h.neg()


def float_loop(x: TensorF32Cpu2D, f: float, n: int) -> float:
    acc = 0.5
    for i in range(n):
        if i % 2 == 0:
            acc = acc * f - 1.25
        else:
            acc = acc / f
    return acc


# The math functions on Python scalars, feeding tensor ops and an int.
def scalar_math(x: TensorF32Cpu2D, d: int, t: float) -> TensorF32Cpu2D:
    scale = math.exp(t) / math.sqrt(d) + math.log(d, 2) - math.tanh(t)
    return x * scale + math.floor(math.fabs(t) * math.pi)


# Rank 3 (extended surface): attention as written, a rank-3 transpose of dims 0 and 1, a
# linear of a rank-3 input and a reshape back to rank 2.
def attention(q: TensorF32Cpu3D, k: TensorF32Cpu3D, v: TensorF32Cpu3D) -> TensorF32Cpu3D:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return F.softmax(scores, dim=-1) @ v


def rank3_layer(x: TensorF32Cpu3D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    y = F.gelu(F.linear(x.transpose(0, 1), w, b)) * 0.5
    return y.reshape(-1, y.shape[2])


# float64 and bfloat16 (extended surface): every op through ATen at the dtype, no fusion.
def f64_head(x: TensorF64Cpu2D, w: TensorF64Cpu2D, b: TensorF64Cpu1D, g: TensorF64Cpu1D) -> TensorF64Cpu1D:
    h = F.layer_norm(F.gelu(F.linear(x, w, b)) * 0.5 - x.t().sum(dim=0).mean(dim=0, keepdim=True), (w.shape[0],), g, g)
    return torch.log_softmax(h @ w, dim=1).amax(dim=1) / 3


def bf16_head(x: TensorBF16Cpu2D, w: TensorBF16Cpu2D, b: TensorBF16Cpu1D) -> TensorI64Cpu1D:
    h = torch.tanh(F.linear(x, w, b)) + 0.1
    return h.softmax(dim=-1).reshape(x.shape[0], -1).argmax(dim=1)


# float64 and bfloat16 at ranks 3 and 0 (extended surface): attention as written stays op by
# op at float64 (the fusion and its kernel are float32's), bmm, a whole reduction read as a
# condition; rank-0 parameters, a float64 rank-0 result, a bfloat16 chain read back as a
# float (NumPy has no bfloat16 for the standalone crate's output).
def f64_attention(q: TensorF64Cpu3D, k: TensorF64Cpu3D, v: TensorF64Cpu3D) -> TensorF64Cpu3D:
    p = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if p.max() > 0.5:
        return torch.bmm(p, v)
    return p @ v * 2.0


def f64_rank0(x: TensorF64Cpu3D, s: TensorF64Cpu0D) -> TensorF64Cpu0D:
    t = x.sum() / x.amax() - s
    return t * x.mean().item()


def bf16_batched(a: TensorBF16Cpu3D, b: TensorBF16Cpu3D, s: TensorBF16Cpu0D) -> float:
    h = a @ b
    y = torch.bmm(a, b).softmax(dim=-1).amax() * s - h.sum() / 8
    return y.item()


# Rank 0 (extended surface): whole-tensor reductions, a tensor condition, float() and
# item(), a rank-0 result.
def rank0_gate(x: TensorF32Cpu2D, limit: float) -> TensorF32Cpu0D:
    s = x.sum() / x.amax()
    if x.max() > limit:
        s = s - float(x.min())
    return s * x.mean().item()


# A transformer MLP block: the second product, its bias and the skip connection fuse into one
# op (a residual on the left of the `+`), the first product takes the GELU.
def mlp_block(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D,
              b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x + F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
