"""User modules for tests/python/test_module_cache.py (what a compiled module is keyed and
guarded by): classes at module level, whose `forward` `rextio_torch.compile(module)` compiles
from this file's source. None of their forwards is annotated: each is typed at the call."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d: int = 4):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x).tanh() + x


class Loop(nn.Module):
    """One block twice in a ModuleList: the loop calls it at both places."""

    def __init__(self, block: nn.Module):
        super().__init__()
        self.blocks = nn.ModuleList([block, block])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class TwoNames(nn.Module):
    """One block under two attribute names, and one parameter under two (tied)."""

    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = self.a
        self.w1 = nn.Parameter(torch.randn(4, 4))
        self.w2 = self.w1

    def forward(self, x):
        return F.linear(self.b(self.a(x)), self.w1) + F.linear(x, self.w2.t())


class KeywordOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, *, scale=2.0, shift=0):
        return self.fc(x) * scale + shift


class Defaults(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, scale=2.0):
        return self.fc(x) * scale


class KeywordTag(nn.Module):
    """A keyword-only argument of a type no compiled signature takes (a str): eager, with
    every argument."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, *, scale=2.0, tag="a"):
        return self.fc(x) * scale * (2.0 if tag == "b" else 1.0)


class Kwargs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, **options):
        return self.fc(x) * options.get("scale", 1.0)


class Gain(nn.Module):
    """`x * self.s`: a float attribute as a literal."""

    def __init__(self, s: float):
        super().__init__()
        self.s = s

    def forward(self, x):
        return x * self.s


class Steps(nn.Module):
    def forward(self, x, n):
        return x * n


class Norm(nn.Module):
    """A member layer whose settings change after the first call."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(4)
        self.soft = nn.Softmax(dim=-1)
        self.act = nn.GELU()

    def forward(self, x):
        return self.soft(self.act(self.ln(x)))


class Inplace(nn.Module):
    """An in-place activation whose input the forward reads again."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x):
        h = self.fc(x)
        y = self.act(h)
        return h + y
