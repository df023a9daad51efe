# Part of the public-models corpus (docs/public-models.md):
# FeedForward
# copied verbatim from lucidrains/vit-pytorch vit_pytorch/vit.py,
# as published in vit-pytorch 1.26.11 (PyPI). Licence: MIT (see tests/public_models/NOTICE.md).
# Copyright (c) 2020 Phil Wang

import torch
from torch import nn
from torch.nn import Module


class FeedForward(Module):
    def __init__(self, dim, hidden_dim, dropout = 0.):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, hidden_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_dim, dim),
            nn.Dropout(dropout)
        )

    def forward(self, x):
        return self.net(x)
