"""The `models` suite of benches/side_by_side.py: the inference code people write beyond the
reference's surface (issue 18's "Done when"), as users write it, at batches 1, 16 and 256.

- `transformer_mlp`: a transformer MLP block, `x + W2 gelu(W1 layer_norm(x) + b1) + b2`
  (d_model 256, hidden 1,024);
- `dlrm_mlp`: a DLRM-style MLP: 13 dense features and one categorical feature looked up in
  an embedding table (int64 ids), joined with `torch.cat`, then three layers ending in a
  sigmoid click probability;
- `text_classifier`: a text-classifier head as the PyTorch tutorial writes it: the mean of
  each document's token embeddings (`F.embedding_bag(..., mode="mean")` over int64 token
  ids with offsets, 32 tokens per document), one linear layer and `log_softmax`;
- `sequential_mlp`: an `nn.Sequential` MLP (Linear, ReLU, Linear, GELU, Linear) compiled as a
  module (`rextio_torch.compile(module)`, no source needed);
- `encoder_stack`: a user `nn.Module` as people write one: an input layer, a `ModuleList` of
  two pre-norm MLP blocks (user modules, d 128, hidden 512, GELU, the skip connection), a final
  `LayerNorm` and a classifier, iterated by `for block in self.blocks:` (compiled from its
  source: the loop is unrolled and each block's forward inlined).

- six modules of the public-models corpus (tests/public_models/, docs/public-models.md), as
  their authors wrote them, at d 256, hidden 1,024, on 8 tokens (`[batch, 8, 256]`), compiled
  as modules: nanoGPT's `MLP` (`corpus_nanogpt_mlp`), timm's `Mlp`, `SwiGLU` and `GatedMlp`
  (`corpus_timm_*`), which compile, and two that do not yet, the best candidates: vit-pytorch's
  `FeedForward` (a `LayerNorm` of a rank-3 tensor) and transformers' `LlamaMLP` (its `ACT2FN`
  activation is a user module of another file).

A cell whose function `rextio_torch.compile(fn, strict=True)` does not compile yet (a part of
the surface that is not built) is reported as not compiled, with the compiler's first
diagnostic, and is left out of the geometric means; the suite says how many cells it counts.
"""

import math
import pathlib
import sys

import torch
import torch.nn.functional as F

from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D

SEED = 1_802
BATCHES = (1, 16, 256)
D_MODEL, D_HIDDEN = 256, 1024
DENSE, EMB_ROWS, EMB_DIM, DLRM_HIDDEN = 13, 10_000, 16, 256
VOCAB, TEXT_DIM, TOKENS, CLASSES = 20_000, 64, 32, 4
SEQ_IN, SEQ_HIDDEN, SEQ_OUT = 256, 512, 10
STACK_IN = 64
CORPUS_D, CORPUS_TOKENS = 256, 8


def transformer_mlp(x: TensorF32Cpu2D, gamma: TensorF32Cpu1D, beta: TensorF32Cpu1D,
                    w1: TensorF32Cpu2D, b1: TensorF32Cpu1D,
                    w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.layer_norm(x, (256,), gamma, beta, 1e-5)
    h = F.gelu(F.linear(h, w1, b1))
    return x + F.linear(h, w2, b2)


def dlrm_mlp(dense: TensorF32Cpu2D, ids: TensorI64Cpu1D, table: TensorF32Cpu2D,
             w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D,
             w3: TensorF32Cpu2D, b3: TensorF32Cpu1D) -> TensorF32Cpu2D:
    features = torch.cat([dense, F.embedding(ids, table)], dim=1)
    h = F.linear(features, w1, b1).relu()
    h = F.linear(h, w2, b2).relu()
    return F.linear(h, w3, b3).sigmoid()


def text_classifier(tokens: TensorI64Cpu1D, offsets: TensorI64Cpu1D, table: TensorF32Cpu2D,
                    w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    pooled = F.embedding_bag(tokens, table, offsets, mode="mean")
    return F.log_softmax(F.linear(pooled, w, b), dim=1)


def sequential_mlp() -> torch.nn.Sequential:
    torch.manual_seed(SEED)
    return torch.nn.Sequential(
        torch.nn.Linear(SEQ_IN, SEQ_HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(SEQ_HIDDEN, SEQ_HIDDEN), torch.nn.GELU(),
        torch.nn.Linear(SEQ_HIDDEN, SEQ_OUT),
    ).eval()


class PreNormBlock(torch.nn.Module):
    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, hidden)
        self.fc2 = torch.nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class EncoderStack(torch.nn.Module):
    def __init__(self, d_in: int = 64, d: int = 128, hidden: int = 512, depth: int = 2, classes: int = 10):
        super().__init__()
        self.inp = torch.nn.Linear(d_in, d)
        self.blocks = torch.nn.ModuleList([PreNormBlock(d, hidden) for _ in range(depth)])
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h))


def encoder_stack() -> EncoderStack:
    torch.manual_seed(SEED)
    return EncoderStack(STACK_IN).eval()


def _corpus():
    """The public-models corpus's files, importable by their names (as registry.py does)."""
    folder = str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "public_models")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import hf_llama
    import lucidrains_vit
    import nanogpt
    import timm_mlp

    return nanogpt, timm_mlp, lucidrains_vit, hf_llama


class _Config:
    def __init__(self, **fields):
        self.__dict__.update(fields)


def corpus_module(name: str) -> torch.nn.Module:
    """A corpus module at the suite's size, built as its authors' code builds it (default init)."""
    nanogpt, timm_mlp, lucidrains_vit, hf_llama = _corpus()
    torch.manual_seed(SEED)
    hidden = 4 * CORPUS_D
    make = {
        "corpus_nanogpt_mlp": lambda: nanogpt.MLP(nanogpt.GPTConfig(n_embd=CORPUS_D, dropout=0.0, bias=True)),
        "corpus_timm_mlp": lambda: timm_mlp.Mlp(CORPUS_D, hidden),
        "corpus_timm_swiglu": lambda: timm_mlp.SwiGLU(CORPUS_D, hidden),
        "corpus_timm_gated_mlp": lambda: timm_mlp.GatedMlp(CORPUS_D, hidden),
        "corpus_vit_feedforward": lambda: lucidrains_vit.FeedForward(CORPUS_D, hidden),
        "corpus_llama_mlp": lambda: hf_llama.LlamaMLP(_Config(hidden_size=CORPUS_D, intermediate_size=hidden,
                                                              hidden_act="silu", mlp_bias=False)),
    }[name]
    return make().eval()


CORPUS_MODELS = ("corpus_nanogpt_mlp", "corpus_timm_mlp", "corpus_timm_swiglu", "corpus_timm_gated_mlp",
                 "corpus_vit_feedforward", "corpus_llama_mlp")


def _weight(g: torch.Generator, out: int, inp: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A layer's weight scaled by 1/sqrt(fan-in), so activations stay in range, and a small bias."""
    return torch.randn(out, inp, generator=g) / math.sqrt(inp), torch.randn(out, generator=g) * 0.1


def model_args(name: str, batch: int, seed: int) -> tuple:
    g = torch.Generator().manual_seed(seed)
    if name == "transformer_mlp":
        x = torch.randn(batch, D_MODEL, generator=g)
        gamma = 1.0 + 0.1 * torch.randn(D_MODEL, generator=g)
        beta = 0.1 * torch.randn(D_MODEL, generator=g)
        return (x, gamma, beta, *_weight(g, D_HIDDEN, D_MODEL), *_weight(g, D_MODEL, D_HIDDEN))
    if name == "dlrm_mlp":
        dense = torch.randn(batch, DENSE, generator=g)
        ids = torch.randint(0, EMB_ROWS, (batch,), generator=g)
        table = torch.randn(EMB_ROWS, EMB_DIM, generator=g) * 0.1
        return (dense, ids, table, *_weight(g, DLRM_HIDDEN, DENSE + EMB_DIM),
                *_weight(g, DLRM_HIDDEN // 2, DLRM_HIDDEN), *_weight(g, 1, DLRM_HIDDEN // 2))
    if name == "text_classifier":
        tokens = torch.randint(0, VOCAB, (batch * TOKENS,), generator=g)
        offsets = torch.arange(0, batch * TOKENS, TOKENS)
        table = torch.randn(VOCAB, TEXT_DIM, generator=g) * 0.1
        return (tokens, offsets, table, *_weight(g, CLASSES, TEXT_DIM))
    if name == "sequential_mlp":
        return (torch.randn(batch, SEQ_IN, generator=g),)
    if name == "encoder_stack":
        return (torch.randn(batch, STACK_IN, generator=g),)
    if name in CORPUS_MODELS:
        return (torch.randn(batch, CORPUS_TOKENS, CORPUS_D, generator=g),)
    raise ValueError(f"unknown model {name!r}")


_MODULES: dict[str, torch.nn.Module] = {}


def model_fn(name: str):
    """The callable of a model: the function, or (sequential_mlp, encoder_stack, the corpus
    modules) one shared module."""
    if name in ("sequential_mlp", "encoder_stack") or name in CORPUS_MODELS:
        if name not in _MODULES:
            _MODULES[name] = corpus_module(name) if name in CORPUS_MODELS else globals()[name]()
        return _MODULES[name]
    return globals()[name]


MODELS = ("transformer_mlp", "dlrm_mlp", "text_classifier", "sequential_mlp", "encoder_stack", *CORPUS_MODELS)

MODEL_CELLS = [
    {
        "id": f"{name}/b{batch}",
        "family": name,
        "name": name,
        "batch": batch,
        "seed": SEED + 1_000 * index + batch,
        "quick": batch == 16,
    }
    for index, name in enumerate(MODELS)
    for batch in BATCHES
]
