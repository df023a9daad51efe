# Part of the public-models corpus (docs/public-models.md):
# PreNormResidual, FeedForward
# copied verbatim from lucidrains/mlp-mixer-pytorch mlp_mixer_pytorch/mlp_mixer_pytorch.py,
# as published in mlp-mixer-pytorch 0.3.1 (PyPI). Licence: MIT (see tests/public_models/NOTICE.md).
# Copyright (c) 2021 Phil Wang

from torch import nn


class PreNormResidual(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.fn(self.norm(x)) + x


def FeedForward(dim, dim_hidden, dropout = 0., dense = nn.Linear):
    return nn.Sequential(
        dense(dim, dim_hidden),
        nn.GELU(),
        nn.Dropout(dropout),
        dense(dim_hidden, dim),
        nn.Dropout(dropout)
    )
