# Part of the public-models corpus (docs/public-models.md):
# NeuralNetwork, the network of the "Quickstart" tutorial,
# copied verbatim from pytorch/tutorials beginner_source/basics/quickstart_tutorial.py
# (written out from the upstream file: commit not recorded). Licence: BSD-3-Clause (NOTICE.md).
# Copyright (c) 2017-2022, Pytorch contributors

from torch import nn


# Define model
class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits
