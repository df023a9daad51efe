"""User module classes for the module differential fuzzer (`tests/fuzz/module_fuzz.py`): at
module level of one file, as `rextio_torch.compile(module)` needs them (it reads their
source, and inlines one user module into another only from the same file). Their forwards
are unannotated (typed at each call), read Python attributes as literals (`self.s`,
`self.skip`) and call members that the fuzzer may share between places."""

import torch.nn as nn
import torch.nn.functional as F


class Gain(nn.Module):
    """A float (or int) attribute read as a literal."""

    def __init__(self, inner, s):
        super().__init__()
        self.inner = inner
        self.s = s

    def forward(self, x):
        return self.inner(x) * self.s


class Residual(nn.Module):
    """A bool attribute deciding a branch."""

    def __init__(self, inner, skip):
        super().__init__()
        self.inner = inner
        self.skip = skip

    def forward(self, x):
        h = self.inner(x)
        if self.skip:
            h = h + x
        return h


class Loop(nn.Module):
    """Its ModuleList's items in turn (one instance may be several items)."""

    def __init__(self, items):
        super().__init__()
        self.items = nn.ModuleList(items)

    def forward(self, x):
        for item in self.items:
            x = item(x)
        return x


class Twice(nn.Module):
    """One member called twice."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(self.inner(x))


class Pair(nn.Module):
    """Two members (perhaps one instance under two names) on one input."""

    def __init__(self, a, b):
        super().__init__()
        self.a = a
        self.b = b

    def forward(self, x):
        return self.a(x) + self.b(x) * 0.5


class Tied(nn.Module):
    """Its own parameter under two names (tied), used as tensors."""

    def __init__(self, weight):
        super().__init__()
        self.w = weight
        self.v = weight

    def forward(self, x):
        return F.linear(x, self.w) - F.linear(x, self.v) * 0.25


class Top(nn.Module):
    """Keyword-only arguments with defaults, given or not at each call."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, *, scale=1.0, shift=0):
        return self.inner(x) * scale + shift
