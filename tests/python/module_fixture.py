"""User modules for tests/python/test_module.py: classes at module level, whose `forward`
`rextio_torch.compile(module)` compiles from this file's source."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D


class Mlp(nn.Module):
    def __init__(self, d_in: int = 16, d_hidden: int = 32, d_out: int = 8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(d_hidden, d_out, bias=False)
        self.scale = nn.Parameter(torch.ones(d_out))
        self.register_buffer("shift", torch.zeros(d_out))

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = self.drop(self.act(self.fc1(x)))
        return self.fc2(h) * self.scale + self.shift


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
        self.out = nn.Softmax(dim=-1)

    def forward(self, x: TensorF32Cpu2D, depth: int) -> TensorF32Cpu1D:
        h = x
        for _ in range(depth):
            h = h.tanh()
        return self.out(self.body(h)).sum(dim=1)


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = nn.BatchNorm1d(4)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.norm(self.fc(x))


class Unannotated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).relu()


class Affine(nn.Module):
    """Its own parameters, used as tensors (`self.weight`), with torch.nn.functional."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 5) * 0.5)
        self.bias = nn.Parameter(torch.randn(3))

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return F.silu(F.linear(x, self.weight, self.bias))


class TanhGelu(nn.Module):
    """A GELU(approximate="tanh") member: its call is `F.gelu(h, approximate="tanh")`, never
    the exact GELU."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.act(self.fc(x))


class PreNormBlock(nn.Module):
    """A transformer MLP block: LayerNorm, Linear, GELU, Linear and the skip connection."""

    def __init__(self, d: int = 32, hidden: int = 64):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class BagOfWords(nn.Module):
    """Embedded ids, a LayerNorm without affine parameters, a classifier layer."""

    def __init__(self, vocab: int = 50, d: int = 16, classes: int = 3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-3)
        self.head = nn.Linear(d, classes)

    def forward(self, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
        return F.log_softmax(self.head(self.norm(self.embed(ids))), dim=1)


class Tower(nn.Module):
    """Two PreNormBlocks (user modules whose forwards compile) between an input layer and a
    log-softmax head: each block's forward is inlined where it is called."""

    def __init__(self, d_in: int = 16, d: int = 32, hidden: int = 64, classes: int = 5):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.block1 = PreNormBlock(d, hidden)
        self.block2 = PreNormBlock(d, hidden)
        self.head = nn.Linear(d, classes)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        """Its docstring does nothing when it runs."""
        h = self.block2(self.block1(self.inp(x)))
        return F.log_softmax(self.head(h), dim=-1)


class Mix(nn.Module):
    """A user module with a loop, its own parameter, and parameters with defaults (no
    annotations: its caller's values type them)."""

    def __init__(self, d: int = 8):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.gain = nn.Parameter(torch.ones(d))

    def forward(self, x, times: int = 2, alpha: float = 0.5):
        """Mixes a tanh layer into its input `times` times."""
        h = x
        for _ in range(times):
            h = torch.tanh(self.fc(h)) * self.gain + h * alpha
        return h


class Caller(nn.Module):
    """Calls a user module twice (by keyword, with defaults), once more inside a Sequential,
    with a left operand that is evaluated before the call."""

    def __init__(self, d: int = 8):
        super().__init__()
        self.inner = Mix(d)
        self.seq = nn.Sequential(nn.Linear(d, d), Mix(d), nn.ReLU())

    def forward(self, x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
        a = x.relu() + self.inner(x, times=n)
        b = self.seq(a)
        return self.inner(b, 1, alpha=0.25) - a


class EarlyReturn(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            return self.fc(x)
        return x


class CallsEarlyReturn(nn.Module):
    """Its member's forward returns before its last statement: not inlined (RXT093)."""

    def __init__(self):
        super().__init__()
        self.inner = EarlyReturn()

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.inner(x) * 2.0


class Conditional(nn.Module):
    """A member called in a branch of a conditional expression: not inlined (RXT093)."""

    def __init__(self):
        super().__init__()
        self.a = Mix(4)

    def forward(self, x: TensorF32Cpu2D, flag: bool) -> TensorF32Cpu2D:
        return self.a(x) if flag else x


class ErrorOrder(nn.Module):
    """`self.fc(x) + self.inner(y)`: eager evaluates `self.fc(x)` first, and so does the
    compiled forward (the left operand is hoisted before the inlined body)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.inner = Mix(8)

    def forward(self, x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.fc(x) + self.inner(y)


class Stack(nn.Module):
    """A ModuleList of blocks iterated by a loop (unrolled: each block inlined in turn), and
    one of layers called by literal indices."""

    def __init__(self, depth: int = 3, d: int = 16, classes: int = 4):
        super().__init__()
        self.blocks = nn.ModuleList([PreNormBlock(d, 2 * d) for _ in range(depth)])
        self.norms = nn.ModuleList([nn.LayerNorm(d), nn.Identity()])
        self.head = nn.Linear(d, classes)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        for block in self.blocks:
            x = block(x)
        x = self.norms[0](x) + self.norms[-1](x)
        return self.head(x)


class BreakingStack(nn.Module):
    """A loop over a ModuleList with a `break`: not unrolled (RXT093)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        for layer in self.layers:
            x = layer(x)
            if x.sum() > 0:
                break
        return x


class Attention(nn.Module):
    """Self-attention as people write it, with Python attributes the forward reads: a float
    (`self.scale`), an int (`self.width`) and a bool (`self.residual`)."""

    def __init__(self, d: int = 16, residual: bool = True):
        super().__init__()
        self.width = d
        self.scale = d ** -0.5
        self.residual = residual
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x: TensorF32Cpu3D) -> TensorF32Cpu3D:
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        h = self.out(F.softmax(scores, dim=-1) @ v)
        if self.residual:
            h = h + x
        return h.reshape(x.shape[0], -1, self.width)


class Untyped(nn.Module):
    """No annotations: typed by each call's arguments (a tensor, an int)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x, steps):
        h = x
        for _ in range(steps):
            h = torch.tanh(self.fc(h))
        return h.softmax(dim=-1)
