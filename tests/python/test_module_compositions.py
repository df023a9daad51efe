"""Random compositions of user modules (`rextio_torch.compile(module)`), against eager.

Each seed writes a source file of module classes at module level, as users write them (the
compiler reads their source): a block class with a random activation, an optional pre-norm
`LayerNorm`, Python attributes read by its forward (a float gain, a bool skip connection, an
`if` on it), a parameter with a default and no annotations; and a model whose annotated
forward calls blocks in one of several ways: a `ModuleList` loop (unrolled), a `Sequential`
holding blocks, two blocks in one expression (keywords, hoisting), a left operand evaluated
before the call, a block called twice, and one block instance at two places (twice in a
ModuleList or a Sequential, under two attribute names: it runs at each). The model's forward is
annotated or not (then typed at the call); the gains are random doubles written in full
(`repr`), which must reach the compiled forward bit for bit. Every block is inlined
(`strict=True` compiles), the result is eager's within the module tests' tolerance
(`assert_parity`: 1e-5 of max(1, |eager|), well above the rounding of a few float32 layers on
any CPU), at several batch sizes, and again after an attribute of a block changes (the guard
plans the module again).
"""

import importlib
import random
import sys
import textwrap

import pytest
import torch

from conftest import assert_parity

ACTIVATIONS = ["nn.ReLU()", "nn.GELU()", "nn.GELU(approximate=\"tanh\")", "nn.SiLU()", "nn.Tanh()", "nn.Sigmoid()"]

CALLS = {
    "loop": ("self.blocks = nn.ModuleList([{b0}, {b1}, {b2}])",
             "for block in self.blocks:\n            h = block(h)"),
    "sequential": ("self.seq = nn.Sequential({b0}, nn.ReLU(), {b1})",
                   "h = self.seq(h)"),
    "pair": ("self.b1 = {b0}\n        self.b2 = {b1}",
             "h = self.b1(h, scale=0.5) + self.b2(h)"),
    "left_operand": ("self.b1 = {b0}",
                     "h = h.tanh() * 0.5 + self.b1(h)"),
    "twice": ("self.b1 = {b0}",
              "h = self.b1(self.b1(h), 0.25)"),
    "indexed": ("self.blocks = nn.ModuleList([{b0}, {b1}])",
                "h = self.blocks[-1](self.blocks[0](h))"),
    "shared_loop": ("shared = {b0}\n        self.blocks = nn.ModuleList([shared, {b1}, shared])",
                    "for block in self.blocks:\n            h = block(h)"),
    "shared_sequential": ("shared = {b0}\n        self.seq = nn.Sequential(shared, nn.ReLU(), shared)",
                          "h = self.seq(h)"),
    "shared_attribute": ("self.b1 = {b0}\n        self.b2 = self.b1",
                         "h = self.b2(self.b1(h)) + self.b1(h)"),
}


def source(seed: int) -> tuple[str, str]:
    rng = random.Random(seed)
    d, hidden, d_in, classes = rng.choice([4, 8, 16]), rng.choice([8, 16, 32]), rng.choice([3, 8]), rng.choice([2, 5])
    norm = rng.random() < 0.5
    call = rng.choice(sorted(CALLS))
    blocks = [f"Block({rng.choice([0, 1, 2, 3, 4, 5])}, {rng.choice(['True', 'False'])}, {rng.uniform(0.2, 1.5)!r})"
              for _ in range(3)]
    members, body = CALLS[call]
    members = members.format(b0=blocks[0], b1=blocks[1], b2=blocks[2])
    body = body.replace("\n", "\n    ")
    head = rng.choice(["return F.log_softmax(self.head(h), dim=-1)", "return self.head(h).relu() - h.sum(dim=1, keepdim=True)"])
    signature = rng.choice(["x: TensorF32Cpu2D) -> TensorF32Cpu2D", "x)"])
    text = f'''
import torch
import torch.nn as nn
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu2D

ACTIVATIONS = [{", ".join(ACTIVATIONS)}]


class Block(nn.Module):
    def __init__(self, act: int, skip: bool, gain: float):
        super().__init__()
        self.norm = nn.LayerNorm({d}) if {norm} else nn.Identity()
        self.fc1 = nn.Linear({d}, {hidden})
        self.act = ACTIVATIONS[act]
        self.fc2 = nn.Linear({hidden}, {d})
        self.gain = gain
        self.skip = skip

    def forward(self, x, scale=1.0):
        """A block: its docstring does nothing."""
        h = self.fc2(self.act(self.fc1(self.norm(x)))) * self.gain
        if self.skip:
            h = h + x * scale
        return h


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear({d_in}, {d})
        {members}
        self.head = nn.Linear({d}, {classes})

    def forward(self, {signature}:
        h = self.inp(x)
        {body}
        {head}
'''
    return textwrap.dedent(text), call


@pytest.mark.parametrize("seed", range(40))
def test_random_module_compositions_match_eager(rextio, tmp_path, monkeypatch, seed):
    text, call = source(seed)
    name = f"composed_{seed}"
    (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    try:
        torch.manual_seed(seed)
        model = module.Model().eval()
        fast = rextio.compile(model, strict=True)
        d_in = model.inp.in_features
        for rows in (1, 5, 33):
            x = torch.randn(rows, d_in)
            with torch.no_grad():
                expected = model(x)
            assert_parity(fast(x), expected)
        # Compiled (an unannotated forward at its first call), not run eagerly.
        (compiled,) = fast.signatures.values()
        assert type(compiled).__name__ == "CompiledFunction", (call, compiled)
        # A block's attributes change: planned and compiled again, eager's result again.
        for block in model.modules():
            if type(block).__name__ == "Block":
                block.skip = not block.skip
                block.gain = block.gain * 2.0 + 2.0**-40  # the last bits matter
        x = torch.randn(4, d_in)
        with torch.no_grad():
            expected = model(x)
        assert_parity(fast(x), expected)
    finally:
        sys.modules.pop(name, None)
