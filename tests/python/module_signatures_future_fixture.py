"""A user module for tests/python/test_module_signatures.py whose annotations are strings
(`from __future__ import annotations`)."""

from __future__ import annotations

from typing import Optional

import torch.nn as nn
from torch import Tensor

from rextio_torch.types import TensorF32Cpu2D


class Masked(nn.Module):
    """A marker for `x` (it decides), the rest typed at the call."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: TensorF32Cpu2D, mask: Optional[Tensor] = None, scale: float = 2.0) -> Tensor:
        h = self.fc(x) * scale
        if mask is not None:
            h = h + mask
        return h.relu()
