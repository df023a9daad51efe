"""Programs with scalar control flow: the seed's Phase B and scoring pipeline (verbatim), the
README's control-flow pattern, and loops that run zero, one or many times."""

import torch
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def inference(x: TensorF32Cpu2D, weight_a: TensorF32Cpu2D, weight_b: TensorF32Cpu2D,
              bias_a: TensorF32Cpu1D, bias_b: TensorF32Cpu1D, depth: int, phase: int) -> TensorF32Cpu1D:
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            hidden = F.linear(hidden, weight_a, bias_a).relu()
        else:
            hidden = F.linear(hidden, weight_b, bias_b).relu()
    return hidden.mean(dim=1, keepdim=False)


def score_labels(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, scale: TensorF32Cpu1D,
                 hidden_weight: TensorF32Cpu2D, hidden_bias: TensorF32Cpu1D,
                 class_weight: TensorF32Cpu2D, class_bias: TensorF32Cpu1D,
                 rounds: int, phase: int) -> TensorI64Cpu1D:
    centered = x - mean
    normalized = centered / scale
    hidden = F.linear(normalized, hidden_weight, hidden_bias)
    for layer in range(rounds):
        if (layer + phase) % 2 == 0:
            hidden = hidden.relu()
        else:
            hidden = hidden.tanh()
    logits = F.linear(hidden, class_weight, class_bias)
    probabilities = logits.softmax(dim=1)
    return probabilities.argmax(dim=1, keepdim=False)


def score_logits(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, scale: TensorF32Cpu1D,
                 hidden_weight: TensorF32Cpu2D, hidden_bias: TensorF32Cpu1D,
                 class_weight: TensorF32Cpu2D, class_bias: TensorF32Cpu1D,
                 rounds: int, phase: int) -> TensorF32Cpu2D:
    centered = x - mean
    normalized = centered / scale
    hidden = F.linear(normalized, hidden_weight, hidden_bias)
    for layer in range(rounds):
        if (layer + phase) % 2 == 0:
            hidden = hidden.relu()
        else:
            hidden = hidden.tanh()
    logits = F.linear(hidden, class_weight, class_bias)
    return logits


def score_probabilities(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, scale: TensorF32Cpu1D,
                        hidden_weight: TensorF32Cpu2D, hidden_bias: TensorF32Cpu1D,
                        class_weight: TensorF32Cpu2D, class_bias: TensorF32Cpu1D,
                        rounds: int, phase: int) -> TensorF32Cpu2D:
    centered = x - mean
    normalized = centered / scale
    hidden = F.linear(normalized, hidden_weight, hidden_bias)
    for layer in range(rounds):
        if (layer + phase) % 2 == 0:
            hidden = hidden.relu()
        else:
            hidden = hidden.tanh()
    logits = F.linear(hidden, class_weight, class_bias)
    probabilities = logits.softmax(dim=1)
    return probabilities


def readme_pattern(hidden: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D, steps: int) -> TensorF32Cpu2D:
    out = hidden.tanh()
    for step in range(steps):
        if step % 2 == 0:
            even = out @ weight + bias
            out = even.relu()
        else:
            odd = out @ weight - bias
            out = odd.sigmoid()
    return out


def early_exit(x: TensorF32Cpu2D, w: TensorF32Cpu2D, limit: int, stop_at: int) -> TensorF32Cpu2D:
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


def spin(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    k = 0
    for i in range(n):
        k = k + 1
    return x.relu()


def scaled(x: TensorF32Cpu2D, times: int, flag: bool) -> TensorF32Cpu2D:
    h = x.abs()
    for i in range(1, times + 1, 2):
        if flag and i > 2:
            h = h.sqrt()
        elif not flag or i == 1:
            h = h.exp().tanh()
    return h.neg()


PHASE_B_CELLS = [("t1", 1, 16, 4, 0), ("t2", 1, 32, 8, 1), ("t3", 4, 32, 16, 0), ("t4", 8, 64, 16, 1), ("c1", 32, 128, 8, 0), ("c2", 64, 128, 16, 1)]


def phase_b_args(batch, width, depth, phase, seed=20260717):
    """Inputs of `inference` for one cell (weights scaled so activations stay in range)."""
    g = torch.Generator().manual_seed(seed + batch * 1000 + width)
    scale = width ** -0.5
    return (
        torch.randn(batch, width, generator=g),
        torch.randn(width, width, generator=g) * scale,
        torch.randn(width, width, generator=g) * scale,
        torch.randn(width, generator=g) * 0.1,
        torch.randn(width, generator=g) * 0.1,
        depth,
        phase,
    )


def scoring_args(batch, rounds=4, phase=0, seed=20260727):
    """Inputs of the scoring pipeline: features 32, hidden 32, 8 classes."""
    g = torch.Generator().manual_seed(seed + batch)
    features, hidden, classes = 32, 32, 8
    return (
        torch.randn(batch, features, generator=g),
        torch.randn(features, generator=g),
        torch.rand(features, generator=g) + 0.5,
        torch.randn(hidden, features, generator=g) * features ** -0.5,
        torch.randn(hidden, generator=g) * 0.1,
        torch.randn(classes, hidden, generator=g) * hidden ** -0.5,
        torch.randn(classes, generator=g) * 0.1,
        rounds,
        phase,
    )
