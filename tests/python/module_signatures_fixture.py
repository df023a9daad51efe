"""User modules for tests/python/test_module_signatures.py, their forwards written as public
code writes them: `torch.Tensor` / `Tensor` / `Optional[Tensor]` / `Tensor | None`
annotations, defaults, `mask=None` with `if mask is not None:` arms (issue 33)."""

from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from rextio_torch.types import TensorF32Cpu2D


class TorchTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x).relu()


class BareTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(x).relu()


class OptionalTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Optional[torch.Tensor]) -> torch.Tensor:
        return self.fc(x).relu()


class UnionNone(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor | None) -> Tensor:
        return self.fc(x).relu()


class Masked(nn.Module):
    """An optional additive mask and a scale with a default."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: Tensor, mask: Optional[Tensor] = None, scale: float = 2.0) -> Tensor:
        h = self.fc(x) * scale
        if mask is not None:
            h = h + mask
        return h.relu()


class AddMask(nn.Module):
    """Exact ops only: `x + mask` where a mask is given, then relu."""

    def forward(self, x, mask=None):
        if mask is not None:
            x = x + mask
        return x.relu()


class FillMask(nn.Module):
    """The arm using the mask calls `masked_fill`, which is not compiled: without a mask the
    forward compiles (the arm is folded away), with one it runs eagerly."""

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        if mask is not None:
            x = x.masked_fill(mask, 0.0)
        return x.relu()


class DefaultMask(nn.Module):
    """`if mask is None: mask = ...`: the mask made when none is given."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        if mask is None:
            mask = x * 0.5
        return x + mask


class EarlyReturn(nn.Module):
    """An early `return`, an `is None` test joined by `or`, and a conditional expression."""

    def forward(self, x, bias=None, *, shift: Optional[Tensor] = None):
        if bias is None and shift is None:
            return x * 2.0
        y = x if bias is None else x - bias
        if shift is None or bias is None:
            return y.relu()
        return y + shift


class BiasOrNone(nn.Module):
    """A None argument used other than in an `is None` test (as eager allows here): that
    signature runs eagerly."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 8))

    def forward(self, x: Tensor, bias: Optional[Tensor] = None) -> Tensor:
        return F.linear(x, self.weight, bias)


class Mixed(nn.Module):
    """A marker, an `int`, a `float`, and a `torch.Tensor` parameter: all but the marker's
    are typed at the call."""

    def forward(self, x: TensorF32Cpu2D, n: int, scale: float, y: torch.Tensor) -> torch.Tensor:
        h = x * scale + y
        for _ in range(n):
            h = h.tanh()
        return h


class Unannotated(nn.Module):
    """Some parameters annotated, one not."""

    def forward(self, x: Tensor, y, n: int = 1):
        h = x * y
        for _ in range(n):
            h = h.tanh()
        return h


class RebindInLoop(nn.Module):
    """A None argument bound again inside a loop: refused for that signature."""

    def forward(self, x, acc=None):
        for _ in range(2):
            if acc is None:
                acc = x
            else:
                acc = acc + x
        return acc


class TwoOutputs(nn.Module):
    """A tuple result, which no compiled function returns: it runs eagerly and says why."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor):
        h = self.fc(x)
        return h.relu(), h.sigmoid()
