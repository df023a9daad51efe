"""The cases of the public-models corpus: each copied module (the files beside this one, copied
verbatim from public repositories, see NOTICE.md), how a small instance of it is built, the
inputs it is called with, and what `rextio_torch.compile(module)` does with it today.

`expected` is `"native"` (compiles: no `RextioFallbackWarning`) or `"eager"` (runs eagerly);
`reason` is then the text of the first fallback warning after "runs eagerly at this call: ",
up to its first line break, and `blocker` the category docs/public-models.md groups it under.
`tests/python/test_public_models.py` checks all three against what happens, so a module that
starts compiling (or stops) fails the test until this table says so; `python
tests/public_models/report.py --check` prints the observed values to copy in.

Parameters and buffers are moved off their initial values (`perturb`, fixed seed) the way a
trained checkpoint would be, so zero biases, unit norms and 1e-5 layer scales do not hide a
wrong operand. Configs are the fields the original reads (`Config`, standing in for
transformers' `PretrainedConfig` subclasses), at small sizes.
"""

from __future__ import annotations

import pathlib
import re
import sys
from dataclasses import dataclass, field
from typing import Callable

import torch

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import deepctr_core  # noqa: E402
import deepctr_interaction  # noqa: E402
import diffusers_activations  # noqa: E402
import diffusers_attention  # noqa: E402
import hf_activations  # noqa: E402
import hf_bert  # noqa: E402
import hf_clip  # noqa: E402
import hf_gemma  # noqa: E402
import hf_gpt2  # noqa: E402
import hf_llama  # noqa: E402
import hf_pytorch_utils  # noqa: E402
import hf_roberta  # noqa: E402
import hf_t5  # noqa: E402
import lucidrains_mlp_mixer  # noqa: E402
import lucidrains_vit  # noqa: E402
import lucidrains_x_transformers as xt  # noqa: E402
import nanogpt  # noqa: E402
import pytorch_tutorial  # noqa: E402
import rtdl_modules  # noqa: E402
import timm_attention  # noqa: E402
import timm_layer_scale  # noqa: E402
import timm_mlp  # noqa: E402
import torchrec_activation  # noqa: E402
import torchrec_crossnet  # noqa: E402
import torchrec_mlp  # noqa: E402
import torchvision_misc  # noqa: E402
import torchvision_vit  # noqa: E402

# Small sizes: a sequence of T tokens of width D, hidden width H, tabular width F.
T, D, H, F = 8, 32, 64, 16
# The two batch sizes every case is called with (the second plans the module again).
BATCHES = (2, 3)

SOURCES = {
    "nanogpt": ("karpathy/nanoGPT", "MIT"),
    "tutorial": ("pytorch/tutorials", "BSD-3-Clause"),
    "transformers": ("huggingface/transformers", "Apache-2.0"),
    "timm": ("huggingface/pytorch-image-models", "Apache-2.0"),
    "torchvision": ("pytorch/vision", "BSD-3-Clause"),
    "mlp-mixer": ("lucidrains/mlp-mixer-pytorch", "MIT"),
    "vit-pytorch": ("lucidrains/vit-pytorch", "MIT"),
    "x-transformers": ("lucidrains/x-transformers", "MIT"),
    "diffusers": ("huggingface/diffusers", "Apache-2.0"),
    "rtdl": ("yandex-research/rtdl", "MIT"),
    "torchrec": ("pytorch/torchrec", "BSD-3-Clause"),
    "deepctr": ("shenweichen/DeepCTR-Torch", "Apache-2.0"),
}

# The blocker categories of docs/public-models.md, in its order.
BLOCKERS = ("signatures", "rank 3/4", "dtype plumbing", "attributes", "indexing/splitting",
            "layers/containers", "attention")


class Config:
    """A config object with the fields the copied `__init__` reads."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


@dataclass(frozen=True)
class Case:
    name: str
    source: str  # a key of SOURCES
    qualname: str  # the class as its file names it (a function for factories)
    file: str  # the corpus file holding it
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[int, torch.Generator], tuple]
    expected: str  # "native" or "eager"
    reason: str | None = None  # the first fallback reason, for "eager"
    blocker: str | None = None  # one of BLOCKERS, for "eager"
    # assert_close tolerances against eager (float32); (0, 0) is bit-exact
    rtol: float = 1e-5
    atol: float = 1e-5
    notes: str = field(default="")


def perturb(module: torch.nn.Module, seed: int = 33) -> torch.nn.Module:
    """Moves every floating parameter and buffer off its initial value, as training would:
    `+ 0.1 N(0, 1)` for parameters and running means, `* U(0.5, 1.5)` for running variances
    (kept positive); masks and counters are left as built."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=g, dtype=p.dtype))
        for name, b in module.named_buffers():
            if not b.is_floating_point():
                continue
            if name.endswith("running_var"):
                b.mul_(0.5 + torch.rand(b.shape, generator=g, dtype=b.dtype))
            elif name.endswith("running_mean"):
                b.add_(0.1 * torch.randn(b.shape, generator=g, dtype=b.dtype))
    return module


def built(make: Callable[[], torch.nn.Module]) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return perturb(make()).eval()

    return build


def randn(*shape: int) -> Callable[[int, torch.Generator], tuple]:
    """One N(0, 1) input of shape (batch, *shape)."""
    return lambda batch, g: (torch.randn(batch, *shape, generator=g),)


def randn2(first: tuple, second: tuple) -> Callable[[int, torch.Generator], tuple]:
    """Two N(0, 1) inputs of shapes (batch, *first) and (batch, *second)."""
    return lambda batch, g: (torch.randn(batch, *first, generator=g), torch.randn(batch, *second, generator=g))


def gpt_config() -> nanogpt.GPTConfig:
    return nanogpt.GPTConfig(block_size=16, vocab_size=64, n_layer=1, n_head=4, n_embd=D, dropout=0.0, bias=True)


def bert_config(act: str = "gelu") -> Config:
    return Config(hidden_size=D, intermediate_size=H, hidden_act=act, layer_norm_eps=1e-12,
                  hidden_dropout_prob=0.1, classifier_dropout=None, num_labels=3)


def llama_config() -> Config:
    return Config(hidden_size=D, intermediate_size=H, hidden_act="silu", mlp_bias=False)


def t5_config(act: str, gated: bool) -> hf_t5.T5Config:
    return hf_t5.T5Config(d_model=D, d_ff=H, dropout_rate=0.1, dense_act_fn=act, is_gated_act=gated,
                          layer_norm_epsilon=1e-6)


def gpt2_config() -> Config:
    return Config(hidden_size=D, activation_function="gelu_new", resid_pdrop=0.1)


def clip_config() -> Config:
    return Config(hidden_size=D, intermediate_size=H, hidden_act="quick_gelu")


NATIVE = "native"
EAGER = "eager"

# What `rextio_torch.compile(module)` does with each case today: (outcome, blocker, first
# reason). The table docs/public-models.md prints; tests/python/test_public_models.py fails
# when a case does otherwise, so a change in the compiler updates this table with it.
RECORDED: dict[str, tuple[str, str | None, str | None]] = {
    "nanogpt_layernorm": (NATIVE, None, None),
    "nanogpt_mlp": (NATIVE, None, None),
    "nanogpt_causal_self_attention": (EAGER, 'attention',
        'warning[RXT080]: call is not offered to rextio-torch: keyword `dropout_p` has a non-literal value (nanogpt.py:60)'),
    "nanogpt_block": (EAGER, 'attention',
        'warning[RXT080]: call is not offered to rextio-torch: keyword `dropout_p` has a non-literal value (nanogpt.py:60)'),
    "tutorial_quickstart": (EAGER, 'rank 3/4',
        'an argument of this call is a float32 cpu tensor of rank 4, which no marker type describes (arguments: <a float32 cpu tensor of rank 4>)'),
    "hf_new_gelu": (NATIVE, None, None),
    "hf_bert_self_output": (NATIVE, None, None),
    "hf_bert_intermediate": (NATIVE, None, None),
    "hf_bert_output": (NATIVE, None, None),
    "hf_bert_pooler": (EAGER, 'indexing/splitting',
        'error[RXT031]: expression is not supported in native functions yet: subscript (hf_bert.py:78)'),
    "hf_bert_prediction_head_transform": (NATIVE, None, None),
    "hf_llama_rmsnorm": (EAGER, 'attributes',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (hf_llama.py:43)'),
    "hf_llama_mlp": (NATIVE, None, None),
    "hf_t5_layernorm": (EAGER, 'attributes',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (hf_t5.py:49)'),
    "hf_t5_dense_act_dense": (EAGER, 'dtype plumbing',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (hf_t5.py:68)'),
    "hf_t5_dense_gated_act_dense": (EAGER, 'attributes',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (hf_t5.py:96)'),
    "hf_t5_layer_ff": (EAGER, 'attributes',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (hf_t5.py:49)'),
    "hf_gpt2_conv1d": (EAGER, 'indexing/splitting',
        'error[RXT031]: expression is not supported in native functions yet: slice (hf_pytorch_utils.py:46)'),
    "hf_gpt2_mlp": (EAGER, 'indexing/splitting',
        'error[RXT031]: expression is not supported in native functions yet: slice (hf_gpt2.py:37)'),
    "hf_clip_mlp": (NATIVE, None, None),
    "hf_gemma_rmsnorm": (NATIVE, None, None),
    "hf_roberta_classification_head": (EAGER, 'signatures',
        'RobertaClassificationHead.forward takes **kwargs, which a compiled forward does not (its calls run eagerly with every argument)'),
    "timm_mlp": (NATIVE, None, None),
    "timm_glu_mlp": (EAGER, 'indexing/splitting',
        'error[RXT030]: unsupported unresolved call in native function: x.chunk (timm_mlp.py:127)'),
    "timm_swiglu": (NATIVE, None, None),
    "timm_gated_mlp": (NATIVE, None, None),
    "timm_layer_scale": (EAGER, 'attributes',
        'error[RXT030]: unsupported unresolved call in native function: x.mul_ (timm_layer_scale.py:33)'),
    "timm_layer_scale2d": (EAGER, 'rank 3/4',
        'an argument of this call is a float32 cpu tensor of rank 4, which no marker type describes (arguments: <a float32 cpu tensor of rank 4>)'),
    "timm_attention": (EAGER, 'attention',
        'error[RXT093]: a call of the module member `self.gate` is not compiled in a branch of a conditional expression (timm_attention.py:127)'),
    "torchvision_mlp": (NATIVE, None, None),
    "torchvision_squeeze_excitation": (EAGER, 'rank 3/4',
        'an argument of this call is a float32 cpu tensor of rank 4, which no marker type describes (arguments: <a float32 cpu tensor of rank 4>)'),
    "torchvision_permute": (EAGER, 'rank 3/4',
        'an argument of this call is a float32 cpu tensor of rank 4, which no marker type describes (arguments: <a float32 cpu tensor of rank 4>)'),
    "torchvision_vit_mlp_block": (NATIVE, None, None),
    "torchvision_vit_encoder_block": (EAGER, 'indexing/splitting',
        'error[RXT030]: unsupported unresolved call in native function: input.dim (torchvision_vit.py:87)'),
    "mixer_feedforward": (NATIVE, None, None),
    "mixer_prenorm_residual": (NATIVE, None, None),
    "vit_feedforward": (NATIVE, None, None),
    "xt_relu_squared": (NATIVE, None, None),
    "xt_layernorm": (EAGER, 'rank 3/4',
        'error[RXT030]: unsupported unresolved call in native function: float (lucidrains_x_transformers.py:40)'),
    "xt_scalenorm": (EAGER, 'attributes',
        'error[RXT030]: unsupported unresolved call in native function: float (lucidrains_x_transformers.py:58)'),
    "xt_rmsnorm": (EAGER, 'attributes',
        'error[RXT030]: unsupported unresolved call in native function: float (lucidrains_x_transformers.py:76)'),
    "xt_simple_rmsnorm": (EAGER, 'rank 3/4',
        "error[RXTP-TORCH-144]: rextio-torch cannot lower 'torch.nn.functional.normalize': 'torch.nn.functional.normalize' of a rank-3 tensor is not claimed (rank-3 tensors take matmul, elementwise and unary ops, pow/maximum/minimum/where, sum/mean/amax/amin along a dim, softmax/log_softmax, layer_norm, linear, transpose and reshape/view) (lucidrains_x_transformers.py:90)"),
    "xt_dynamic_tanh": (EAGER, 'attributes',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (lucidrains_x_transformers.py:116)'),
    "xt_derf": (EAGER, 'attributes',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (lucidrains_x_transformers.py:142)'),
    "xt_residual": (EAGER, 'signatures',
        'Residual.forward takes **kwargs, which a compiled forward does not (its calls run eagerly with every argument)'),
    "diffusers_gelu": (EAGER, 'layers/containers',
        'error[RXT093]: `self.gelu` is a method of the module whose body is not inlined: the method has a `return` before its last statement (one `return value` closing its body is inlined) (diffusers_activations.py:90)'),
    "diffusers_geglu": (EAGER, 'signatures',
        'GEGLU.forward takes *args and **kwargs, which a compiled forward does not (its calls run eagerly with every argument)'),
    "diffusers_swiglu": (EAGER, 'indexing/splitting',
        'error[RXT030]: unsupported unresolved call in native function: hidden_states.chunk (diffusers_activations.py:146)'),
    "diffusers_approximate_gelu": (NATIVE, None, None),
    "diffusers_feedforward": (EAGER, 'signatures',
        'FeedForward.forward takes *args and **kwargs, which a compiled forward does not (its calls run eagerly with every argument)'),
    "rtdl_mlp": (NATIVE, None, None),
    "rtdl_resnet": (EAGER, 'layers/containers',
        'error[RXT093]: `self.normalization` is not compiled: BatchNorm1d is not a layer rextio-torch compiles (known: Linear, ReLU, Sigmoid, Tanh, SiLU, ReLU6, GELU, Softmax, LayerNorm, Embedding, Dropout, Identity, Sequential, ModuleList, ModuleDict, ParameterList, and user modules whose forward compiles) (rtdl_modules.py:270)'),
    "rtdl_resnet_layernorm": (EAGER, 'attributes',
        'error[RXT031]: expression is not supported in native functions yet: attribute access (rtdl_modules.py:298)'),
    "rtdl_reglu": (EAGER, 'layers/containers',
        'error[RXT030]: unsupported unresolved call in native function: rtdl_functional.reglu (rtdl_modules.py:46)'),
    "rtdl_geglu": (EAGER, 'layers/containers',
        'error[RXT030]: unsupported unresolved call in native function: rtdl_functional.geglu (rtdl_modules.py:64)'),
    "torchrec_crossnet": (EAGER, 'rank 3/4',
        "error[RXTP-TORCH-114]: rextio-torch cannot lower 'input.unsqueeze': input.unsqueeze of TensorF32Cpu2D has rank 3, which compiled code does not have (ranks 1 and 2) (torchrec_crossnet.py:71)"),
    "torchrec_low_rank_crossnet": (NATIVE, None, None),
    "torchrec_vector_crossnet": (EAGER, 'indexing/splitting',
        'warning[RXT080]: call is not offered to rextio-torch: keyword `dims` has a non-literal value (torchrec_crossnet.py:242)'),
    "torchrec_perceptron": (NATIVE, None, None),
    "torchrec_mlp": (NATIVE, None, None),
    "torchrec_mlp_swish_layernorm": (NATIVE, None, None),
    "torchrec_swish_layernorm": (NATIVE, None, None),
    "deepctr_fm": (EAGER, 'rank 3/4',
        "warning[RXT010]: rebinding 'cross_term' changes its type from rextio-torch/tensor-f32-cpu-3d to rextio-torch/tensor-f32-cpu-2d; a native local/parameter has one fixed Rust binding type and cannot be reassigned to a different type (deepctr_interaction.py:31)"),
    "deepctr_crossnet_vector": (EAGER, 'attributes',
        'warning[RXT080]: call is not offered to rextio-torch: keyword `dims` has a non-literal value (deepctr_interaction.py:82)'),
    "deepctr_crossnet_matrix": (EAGER, 'rank 3/4',
        "error[RXTP-TORCH-114]: rextio-torch cannot lower 'inputs.unsqueeze': inputs.unsqueeze of TensorF32Cpu2D has rank 3, which compiled code does not have (ranks 1 and 2) (deepctr_interaction.py:78)"),
    "deepctr_dnn": (EAGER, 'layers/containers',
        'error[RXT093]: `self.activation_layers[0]` is not compiled: inplace=True modifies its input in place, which the compiled forward does not (deepctr_core.py:76)'),
    "deepctr_prediction_layer": (EAGER, 'attributes',
        "warning[RXT010]: `output += ...` updates the caller's tensor `output` (an argument, or a module's parameter or buffer) in place in eager; compiled code never updates a tensor in place, so it cannot give eager's answer here (deepctr_core.py:103)"),
}


def C(name, source, qualname, file, make, inputs, **kw) -> Case:
    expected, blocker, reason = RECORDED[name]
    return Case(name, source, qualname, file, built(make), inputs, expected, reason, blocker, **kw)

CASES: list[Case] = [
    # karpathy/nanoGPT
    C("nanogpt_layernorm", "nanogpt", "LayerNorm", "nanogpt.py", lambda: nanogpt.LayerNorm(D, bias=True),
      randn(T, D)),
    C("nanogpt_mlp", "nanogpt", "MLP", "nanogpt.py", lambda: nanogpt.MLP(gpt_config()), randn(T, D)),
    C("nanogpt_causal_self_attention", "nanogpt", "CausalSelfAttention", "nanogpt.py",
      lambda: nanogpt.CausalSelfAttention(gpt_config()), randn(T, D)),
    C("nanogpt_block", "nanogpt", "Block", "nanogpt.py", lambda: nanogpt.Block(gpt_config()), randn(T, D)),
    # pytorch/tutorials
    C("tutorial_quickstart", "tutorial", "NeuralNetwork", "pytorch_tutorial.py", pytorch_tutorial.NeuralNetwork,
      randn(1, 28, 28)),
    # huggingface/transformers
    C("hf_new_gelu", "transformers", "NewGELUActivation", "hf_activations.py", hf_activations.NewGELUActivation,
      randn(T, D)),
    C("hf_bert_self_output", "transformers", "BertSelfOutput", "hf_bert.py", lambda: hf_bert.BertSelfOutput(bert_config()),
      randn2((T, D), (T, D))),
    C("hf_bert_intermediate", "transformers", "BertIntermediate", "hf_bert.py",
      lambda: hf_bert.BertIntermediate(bert_config()), randn(T, D)),
    C("hf_bert_output", "transformers", "BertOutput", "hf_bert.py", lambda: hf_bert.BertOutput(bert_config()),
      randn2((T, H), (T, D))),
    C("hf_bert_pooler", "transformers", "BertPooler", "hf_bert.py", lambda: hf_bert.BertPooler(bert_config()),
      randn(T, D)),
    C("hf_bert_prediction_head_transform", "transformers", "BertPredictionHeadTransform", "hf_bert.py",
      lambda: hf_bert.BertPredictionHeadTransform(bert_config()), randn(T, D)),
    C("hf_llama_rmsnorm", "transformers", "LlamaRMSNorm", "hf_llama.py", lambda: hf_llama.LlamaRMSNorm(D),
      randn(T, D)),
    C("hf_llama_mlp", "transformers", "LlamaMLP", "hf_llama.py", lambda: hf_llama.LlamaMLP(llama_config()),
      randn(T, D)),
    C("hf_t5_layernorm", "transformers", "T5LayerNorm", "hf_t5.py", lambda: hf_t5.T5LayerNorm(D), randn(T, D)),
    C("hf_t5_dense_act_dense", "transformers", "T5DenseActDense", "hf_t5.py",
      lambda: hf_t5.T5DenseActDense(t5_config("relu", False)), randn(T, D)),
    C("hf_t5_dense_gated_act_dense", "transformers", "T5DenseGatedActDense", "hf_t5.py",
      lambda: hf_t5.T5DenseGatedActDense(t5_config("gelu_new", True)), randn(T, D)),
    C("hf_t5_layer_ff", "transformers", "T5LayerFF", "hf_t5.py", lambda: hf_t5.T5LayerFF(t5_config("relu", False)),
      randn(T, D)),
    C("hf_gpt2_conv1d", "transformers", "Conv1D", "hf_pytorch_utils.py", lambda: hf_pytorch_utils.Conv1D(3 * D, D),
      randn(T, D)),
    C("hf_gpt2_mlp", "transformers", "GPT2MLP", "hf_gpt2.py", lambda: hf_gpt2.GPT2MLP(4 * D, gpt2_config()),
      randn(T, D)),
    C("hf_clip_mlp", "transformers", "CLIPMLP", "hf_clip.py", lambda: hf_clip.CLIPMLP(clip_config()), randn(T, D)),
    C("hf_gemma_rmsnorm", "transformers", "GemmaRMSNorm", "hf_gemma.py", lambda: hf_gemma.GemmaRMSNorm(D),
      randn(T, D)),
    C("hf_roberta_classification_head", "transformers", "RobertaClassificationHead", "hf_roberta.py",
      lambda: hf_roberta.RobertaClassificationHead(bert_config()), randn(T, D)),
    # huggingface/pytorch-image-models (timm)
    C("timm_mlp", "timm", "Mlp", "timm_mlp.py", lambda: timm_mlp.Mlp(D, H), randn(T, D)),
    C("timm_glu_mlp", "timm", "GluMlp", "timm_mlp.py", lambda: timm_mlp.GluMlp(D, H), randn(T, D)),
    C("timm_swiglu", "timm", "SwiGLU", "timm_mlp.py", lambda: timm_mlp.SwiGLU(D, H), randn(T, D)),
    C("timm_gated_mlp", "timm", "GatedMlp", "timm_mlp.py", lambda: timm_mlp.GatedMlp(D, H), randn(T, D)),
    C("timm_layer_scale", "timm", "LayerScale", "timm_layer_scale.py", lambda: timm_layer_scale.LayerScale(D),
      randn(T, D)),
    C("timm_layer_scale2d", "timm", "LayerScale2d", "timm_layer_scale.py", lambda: timm_layer_scale.LayerScale2d(F),
      randn(F, 4, 4)),
    C("timm_attention", "timm", "Attention", "timm_attention.py", lambda: timm_attention.Attention(D, num_heads=4),
      randn(T, D)),
    # pytorch/vision
    C("torchvision_mlp", "torchvision", "MLP", "torchvision_misc.py", lambda: torchvision_misc.MLP(D, [H, D]),
      randn(D)),
    C("torchvision_squeeze_excitation", "torchvision", "SqueezeExcitation", "torchvision_misc.py",
      lambda: torchvision_misc.SqueezeExcitation(F, 4), randn(F, 5, 5)),
    C("torchvision_permute", "torchvision", "Permute", "torchvision_misc.py", lambda: torchvision_misc.Permute([0, 2, 3, 1]),
      randn(3, 4, 5)),
    C("torchvision_vit_mlp_block", "torchvision", "MLPBlock", "torchvision_vit.py",
      lambda: torchvision_vit.MLPBlock(D, H, 0.1), randn(T, D)),
    C("torchvision_vit_encoder_block", "torchvision", "EncoderBlock", "torchvision_vit.py",
      lambda: torchvision_vit.EncoderBlock(4, D, H, 0.1, 0.1), randn(T, D)),
    # lucidrains
    C("mixer_feedforward", "mlp-mixer", "FeedForward", "lucidrains_mlp_mixer.py",
      lambda: lucidrains_mlp_mixer.FeedForward(D, H, 0.1), randn(T, D)),
    C("mixer_prenorm_residual", "mlp-mixer", "PreNormResidual", "lucidrains_mlp_mixer.py",
      lambda: lucidrains_mlp_mixer.PreNormResidual(D, lucidrains_mlp_mixer.FeedForward(D, H, 0.1)), randn(T, D)),
    C("vit_feedforward", "vit-pytorch", "FeedForward", "lucidrains_vit.py", lambda: lucidrains_vit.FeedForward(D, H, 0.1),
      randn(T, D)),
    C("xt_relu_squared", "x-transformers", "ReluSquared", "lucidrains_x_transformers.py", xt.ReluSquared,
      randn(T, D)),
    C("xt_layernorm", "x-transformers", "LayerNorm", "lucidrains_x_transformers.py", lambda: xt.LayerNorm(D),
      randn(T, D)),
    C("xt_scalenorm", "x-transformers", "ScaleNorm", "lucidrains_x_transformers.py", lambda: xt.ScaleNorm(D),
      randn(T, D)),
    C("xt_rmsnorm", "x-transformers", "RMSNorm", "lucidrains_x_transformers.py", lambda: xt.RMSNorm(D),
      randn(T, D)),
    C("xt_simple_rmsnorm", "x-transformers", "SimpleRMSNorm", "lucidrains_x_transformers.py", lambda: xt.SimpleRMSNorm(D),
      randn(T, D)),
    C("xt_dynamic_tanh", "x-transformers", "DynamicTanh", "lucidrains_x_transformers.py", lambda: xt.DynamicTanh(D),
      randn(T, D)),
    C("xt_derf", "x-transformers", "Derf", "lucidrains_x_transformers.py", lambda: xt.Derf(D), randn(T, D)),
    C("xt_residual", "x-transformers", "Residual", "lucidrains_x_transformers.py",
      lambda: xt.Residual(D, scale_residual=True), randn2((T, D), (T, D))),
    # huggingface/diffusers
    C("diffusers_gelu", "diffusers", "GELU", "diffusers_activations.py",
      lambda: diffusers_activations.GELU(D, H, approximate="tanh"), randn(T, D)),
    C("diffusers_geglu", "diffusers", "GEGLU", "diffusers_activations.py", lambda: diffusers_activations.GEGLU(D, H),
      randn(T, D)),
    C("diffusers_swiglu", "diffusers", "SwiGLU", "diffusers_activations.py", lambda: diffusers_activations.SwiGLU(D, H),
      randn(T, D)),
    C("diffusers_approximate_gelu", "diffusers", "ApproximateGELU", "diffusers_activations.py",
      lambda: diffusers_activations.ApproximateGELU(D, H), randn(T, D)),
    C("diffusers_feedforward", "diffusers", "FeedForward", "diffusers_attention.py",
      lambda: diffusers_attention.FeedForward(D, mult=2, dropout=0.1), randn(T, D)),
    # yandex-research/rtdl
    C("rtdl_mlp", "rtdl", "MLP", "rtdl_modules.py", lambda: rtdl_modules.MLP.make_baseline(F, [D, D], 0.1, 1),
      randn(F)),
    C("rtdl_resnet", "rtdl", "ResNet", "rtdl_modules.py",
      lambda: rtdl_modules.ResNet.make_baseline(d_in=F, n_blocks=2, d_main=D, d_hidden=H, dropout_first=0.2,
                                                dropout_second=0.0, d_out=1), randn(F)),
    C("rtdl_resnet_layernorm", "rtdl", "ResNet", "rtdl_modules.py",
      lambda: rtdl_modules.ResNet(d_in=F, n_blocks=2, d_main=D, d_hidden=H, dropout_first=0.2, dropout_second=0.0,
                                  normalization="LayerNorm", activation="ReLU", d_out=1), randn(F)),
    C("rtdl_reglu", "rtdl", "ReGLU", "rtdl_modules.py", rtdl_modules.ReGLU, randn(D)),
    C("rtdl_geglu", "rtdl", "GEGLU", "rtdl_modules.py", rtdl_modules.GEGLU, randn(D)),
    # pytorch/torchrec
    C("torchrec_crossnet", "torchrec", "CrossNet", "torchrec_crossnet.py", lambda: torchrec_crossnet.CrossNet(F, 2),
      randn(F)),
    C("torchrec_low_rank_crossnet", "torchrec", "LowRankCrossNet", "torchrec_crossnet.py",
      lambda: torchrec_crossnet.LowRankCrossNet(F, 2, low_rank=4), randn(F)),
    C("torchrec_vector_crossnet", "torchrec", "VectorCrossNet", "torchrec_crossnet.py",
      lambda: torchrec_crossnet.VectorCrossNet(F, 2), randn(F)),
    C("torchrec_perceptron", "torchrec", "Perceptron", "torchrec_mlp.py", lambda: torchrec_mlp.Perceptron(F, D),
      randn(F)),
    C("torchrec_mlp", "torchrec", "MLP", "torchrec_mlp.py", lambda: torchrec_mlp.MLP(F, [D, F, 8]), randn(F)),
    C("torchrec_mlp_swish_layernorm", "torchrec", "MLP", "torchrec_mlp.py",
      lambda: torchrec_mlp.MLP(F, [D, 8], activation="swish_layernorm"), randn(F)),
    C("torchrec_swish_layernorm", "torchrec", "SwishLayerNorm", "torchrec_activation.py",
      lambda: torchrec_activation.SwishLayerNorm(D), randn(D)),
    # shenweichen/DeepCTR-Torch
    C("deepctr_fm", "deepctr", "FM", "deepctr_interaction.py", deepctr_interaction.FM, randn(6, 8)),
    C("deepctr_crossnet_vector", "deepctr", "CrossNet", "deepctr_interaction.py",
      lambda: deepctr_interaction.CrossNet(F, 2, "vector"), randn(F)),
    C("deepctr_crossnet_matrix", "deepctr", "CrossNet", "deepctr_interaction.py",
      lambda: deepctr_interaction.CrossNet(F, 2, "matrix"), randn(F)),
    C("deepctr_dnn", "deepctr", "DNN", "deepctr_core.py", lambda: deepctr_core.DNN(F, (D, F), init_std=0.1),
      randn(F)),
    C("deepctr_prediction_layer", "deepctr", "PredictionLayer", "deepctr_core.py", deepctr_core.PredictionLayer,
      randn(1)),
]

BY_NAME = {case.name: case for case in CASES}
assert len(BY_NAME) == len(CASES), "case names are unique"


PREFIX = re.compile(r"^rextio-torch: \S+ runs eagerly at this call: ")
CANNOT = "rextio-torch cannot compile `forward`; it stays on Python:"
LOCATION = re.compile(r"┌─ (?P<path>.+?):(?P<line>\d+):\d+")


def first_reason(message: str) -> str:
    """The reason a fallback warning gives, as the table records it: for a refused forward its
    first diagnostic's headline and the file and line it points at (`error[RXT031]: ...
    (nanogpt.py:23)`), otherwise the warning's first line, without the "X runs eagerly at this
    call: " prefix; paths into this folder are relative to it."""
    text = PREFIX.sub("", message.strip()).replace(f"{HERE}/", "")
    lines = text.splitlines()
    if lines and lines[0].strip() == CANNOT:
        for i, line in enumerate(lines[1:], start=1):
            if re.match(r"^(error|warning)\[", line):
                where = next((LOCATION.search(rest) for rest in lines[i + 1:i + 3] if LOCATION.search(rest)), None)
                return line if where is None else f"{line} ({pathlib.Path(where['path']).name}:{where['line']})"
    return lines[0] if lines else ""


def sample(case: Case, batch: int, seed: int) -> tuple:
    """The inputs of one call of a case: fixed by the seed."""
    return case.inputs(batch, torch.Generator().manual_seed(seed))


@dataclass
class Run:
    """One case run both ways: eager (the oracle) and `rextio_torch.compile(module)`, three calls
    each (the first batch twice, then the second), on clones of the same inputs."""

    eager: list  # eager's results, call by call
    compiled: list  # the compiled module's results
    eager_inputs: list  # the inputs of each eager call, after it
    compiled_inputs: list  # the inputs of each compiled call, after it
    warnings: list[str]  # the RextioFallbackWarning messages, in order

    @property
    def outcome(self) -> str:
        return EAGER if self.warnings else NATIVE

    @property
    def reason(self) -> str | None:
        return first_reason(self.warnings[0]) if self.warnings else None


CALLS = ((BATCHES[0], 1), (BATCHES[0], 1), (BATCHES[1], 2))  # (batch, seed) of each call


def run(case: Case) -> Run:
    import warnings

    import rextio_torch

    module = case.build()
    samples = [sample(case, batch, seed) for batch, seed in CALLS]
    eager, eager_inputs = [], []
    with torch.no_grad():
        for args in samples:
            args = tuple(a.clone() for a in args)
            eager.append(module(*args))
            eager_inputs.append(args)
    compiled, compiled_inputs = [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # a forward that cannot compile warns here already (the annotated ones); the others at
        # their first call of a signature
        compiled_module = rextio_torch.compile(module)
        with torch.no_grad():
            for args in samples:
                args = tuple(a.clone() for a in args)
                compiled.append(compiled_module(*args))
                compiled_inputs.append(args)
    messages = [str(w.message) for w in caught if issubclass(w.category, rextio_torch.RextioFallbackWarning)]
    return Run(eager, compiled, eager_inputs, compiled_inputs, messages)
