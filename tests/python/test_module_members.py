"""Members that are inlined beyond a user module of the compiled file (issue 33): a user module
whose class is written in another file (`members_other_file.py`), subclasses of `nn.Sequential`
that only construct (torchvision's `MLP`), helper methods of the module's own class called from
its forward (diffusers' `GELU.gelu`). Each module is written as public code writes it, compiled
with `rextio_torch.compile(model)`, compared with eager (bits where the ops are exact, else
`assert_parity`), and checked native: no `RextioFallbackWarning`. The guard tests replace a
member after the first call, which must plan the module again.
"""

import warnings

import pytest
import torch
import torch.nn.functional as Fn
from torch import nn

import rextio_torch
from conftest import assert_parity
import members_other_file as other


def native(model: nn.Module):
    """`rextio_torch.compile(model)` with every fallback warning an error (it compiles)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", rextio_torch.RextioFallbackWarning)
        return rextio_torch.compile(model.eval())


def call_native(compiled, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", rextio_torch.RextioFallbackWarning)
        return compiled(*args)


def check(model: nn.Module, *shapes):
    torch.manual_seed(0)
    compiled = native(model)
    for batch in (2, 3):
        args = [torch.randn(batch, *shape) for shape in shapes]
        with torch.no_grad():
            eager = model(*args)
        assert_parity(call_native(compiled, *args), eager)
    return compiled


# -- a user module whose class is in another file -------------------------------------------


class LlamaMLP(nn.Module):
    """transformers' LlamaMLP, its activation from another file."""

    def __init__(self, d, h):
        super().__init__()
        self.gate_proj = nn.Linear(d, h, bias=False)
        self.up_proj = nn.Linear(d, h, bias=False)
        self.down_proj = nn.Linear(h, d, bias=False)
        self.act_fn = other.SiLUActivation()

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


class TwoFiles(nn.Module):
    """Members from another file next to a member of this one, and a layer with its own
    parameters and float attribute from that file."""

    def __init__(self, d):
        super().__init__()
        self.act = other.NewGELUActivation()
        self.scaled = other.ScaledLinear(d, d, scale=0.25)
        self.local = Local()

    def forward(self, x):
        return self.local(self.scaled(self.act(x)))


class Local(nn.Module):
    def forward(self, x):
        return Fn.relu(x) - 1.0


def test_llama_mlp_activation_from_another_file():
    check(LlamaMLP(16, 32), (16,))


def test_new_gelu_from_another_file_with_its_imports():
    # `math.sqrt`, `math.pi`, `torch.pow` resolve through members_other_file's imports (this
    # file imports no `math`).
    check(TwoFiles(16), (16,))


def test_float_attribute_of_a_member_from_another_file_is_guarded():
    model = TwoFiles(8).eval()
    compiled = check(model, (8,))
    model.scaled.scale = -3.0
    x = torch.randn(2, 8)
    with torch.no_grad():
        eager = model(x)
    assert_parity(call_native(compiled, x), eager)


def test_member_from_another_file_replaced_plans_again():
    model = LlamaMLP(8, 16).eval()
    compiled = check(model, (8,))
    model.act_fn = other.NewGELUActivation().eval()
    x = torch.randn(3, 8)
    with torch.no_grad():
        eager = model(x)
    assert_parity(call_native(compiled, x), eager)


class HoldsReadsGlobal(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = other.ReadsGlobal()

    def forward(self, x):
        return self.g(x)


def test_global_of_another_file_is_refused_with_its_name():
    model = HoldsReadsGlobal().eval()
    x = torch.randn(2, 4)
    with pytest.warns(rextio_torch.RextioFallbackWarning, match="GLOBAL_SCALE"):
        assert torch.equal(rextio_torch.compile(model)(x), model(x))


class HoldsBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = other.WithBatchNorm(4)

    def forward(self, x):
        return self.inner(x)


def test_refusal_inside_another_files_module_names_its_file_and_line():
    # The diagnostic points at the call in this file (the analysis is of this file), and its
    # message says where in members_other_file.py the refused member is called.
    model = HoldsBatchNorm().eval()
    x = torch.randn(2, 4)
    with pytest.warns(rextio_torch.RextioFallbackWarning,
                      match=r"(?s)BatchNorm1d is not a layer.*\(at members_other_file\.py:\d+\).*test_module_members\.py"):
        assert torch.equal(rextio_torch.compile(model)(x), model(x))


# -- subclasses of nn.Sequential ------------------------------------------------------------


class MLP(torch.nn.Sequential):
    """torchvision.ops.MLP: only `__init__`, its forward is nn.Sequential's."""

    def __init__(self, in_channels, hidden_channels, activation_layer=torch.nn.ReLU, dropout=0.0):
        layers = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(torch.nn.Linear(in_dim, hidden_dim))
            layers.append(activation_layer())
            layers.append(torch.nn.Dropout(dropout))
            in_dim = hidden_dim
        layers.append(torch.nn.Linear(in_dim, hidden_channels[-1]))
        layers.append(torch.nn.Dropout(dropout))
        super().__init__(*layers)


class WithMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = MLP(8, [16, 8], activation_layer=nn.GELU)

    def forward(self, x):
        return self.mlp(x) + x


def test_sequential_subclass_at_top_level():
    check(MLP(8, [16, 16, 4]), (8,))


def test_sequential_subclass_as_member():
    check(WithMLP(), (8,))


def test_sequential_subclass_with_own_forward_is_not_a_sequential():
    class Doubled(nn.Sequential):
        def forward(self, x):
            return super().forward(x) * 2

    model = Doubled(nn.Linear(4, 4)).eval()
    with pytest.warns(rextio_torch.RextioFallbackWarning):
        compiled = rextio_torch.compile(model)
    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.equal(compiled(x), model(x))


def test_sequential_subclass_layer_replaced_plans_again():
    model = MLP(8, [16, 8]).eval()
    compiled = check(model, (8,))
    model[1] = nn.Tanh().eval()
    x = torch.randn(2, 8)
    with torch.no_grad():
        eager = model(x)
    assert_parity(call_native(compiled, x), eager)


# -- helper methods -------------------------------------------------------------------------


class GELU(nn.Module):
    """diffusers' GELU: a projection, then a helper method of its own."""

    def __init__(self, dim_in, dim_out, approximate="none"):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out)
        self.approximate = approximate
        self.gain = 1.5

    def gelu(self, gate: torch.Tensor) -> torch.Tensor:
        return Fn.gelu(gate) * self.gain

    def forward(self, hidden_states):
        hidden_states = self.proj(hidden_states)
        hidden_states = self.gelu(hidden_states)
        return hidden_states


class Recursive(nn.Module):
    def again(self, x):
        return self.again(x)

    def forward(self, x):
        return self.again(x)


def test_helper_method_is_inlined():
    check(GELU(8, 16), (8,))


def test_helper_method_attribute_is_guarded():
    model = GELU(8, 8).eval()
    compiled = check(model, (8,))
    model.gain = -0.5
    x = torch.randn(2, 8)
    with torch.no_grad():
        eager = model(x)
    assert_parity(call_native(compiled, x), eager)


def test_helper_method_replaced_on_the_instance_plans_again():
    model = GELU(8, 8).eval()
    compiled = check(model, (8,))
    model.gelu = lambda h: h * 3.0
    x = torch.randn(2, 8)
    with torch.no_grad():
        eager = model(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_parity(compiled(x), eager)


def test_recursive_helper_is_refused():
    model = Recursive().eval()
    with pytest.warns(rextio_torch.RextioFallbackWarning, match="calls itself"):
        with pytest.raises(RecursionError):
            rextio_torch.compile(model)(torch.randn(2, 4))


# -- ParameterList, range(len(...)) loops, len() ---------------------------------------------


class LowRankCrossNet(nn.Module):
    """torchrec's LowRankCrossNet: ParameterLists indexed in a `range` loop."""

    def __init__(self, in_features, num_layers, low_rank=1):
        super().__init__()
        self._num_layers = num_layers
        self.W_kernels = nn.ParameterList(
            [nn.Parameter(torch.randn(in_features, low_rank) * 0.1) for i in range(self._num_layers)])
        self.V_kernels = nn.ParameterList(
            [nn.Parameter(torch.randn(low_rank, in_features) * 0.1) for i in range(self._num_layers)])
        self.bias = nn.ParameterList(
            [nn.Parameter(torch.randn(in_features) * 0.1) for i in range(self._num_layers)])

    def forward(self, input):  # (torchrec annotates torch.Tensor, typed at the call here)
        x_0 = input
        x_l = x_0

        for layer in range(self._num_layers):
            x_l_v = torch.nn.functional.linear(x_l, self.V_kernels[layer])
            x_l_w = torch.nn.functional.linear(x_l_v, self.W_kernels[layer])
            x_l = x_0 * (x_l_w + self.bias[layer]) + x_l  # (B, N)

        return x_l


class Blocks(nn.Module):
    """A ModuleList walked by index, its length read with `len`, a ParameterList iterated."""

    def __init__(self, d):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(3)])
        self.gains = nn.ParameterList([nn.Parameter(torch.randn(d)) for _ in range(2)])

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i](x).tanh()
        for g in self.gains:
            x = x * g
        return x / len(self.layers) + g


def test_parameter_list_indexed_in_a_range_loop():
    check(LowRankCrossNet(8, 3, low_rank=2), (8,))


def test_range_len_loop_and_parameter_list_iteration():
    check(Blocks(8), (8,))


def test_parameter_list_grown_plans_again():
    model = LowRankCrossNet(8, 2).eval()
    compiled = check(model, (8,))
    model._num_layers = 3
    for plist, shape in ((model.W_kernels, (8, 1)), (model.V_kernels, (1, 8)), (model.bias, (8,))):
        plist.append(nn.Parameter(torch.randn(*shape)))
    x = torch.randn(2, 8)
    with torch.no_grad():
        eager = model(x)
    assert_parity(call_native(compiled, x), eager)


def test_parameter_list_appended_is_iterated_again():
    model = Blocks(8).eval()
    compiled = check(model, (8,))
    model.gains.append(nn.Parameter(torch.randn(8)))
    x = torch.randn(2, 8)
    with torch.no_grad():
        eager = model(x)
    assert_parity(call_native(compiled, x), eager)


# -- ModuleDict by literal keys --------------------------------------------------------------


class Heads(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layers = nn.ModuleDict({"fc": nn.Linear(d, d), "act": nn.GELU(), "mix": other.ScaledLinear(d, d)})

    def forward(self, x):
        return self.layers["mix"](self.layers["act"](self.layers["fc"](x)))


def test_module_dict_items_by_literal_key():
    check(Heads(8), (8,))


def test_module_dict_item_replaced_plans_again():
    model = Heads(8).eval()
    compiled = check(model, (8,))
    model.layers["act"] = nn.Tanh().eval()
    x = torch.randn(2, 8)
    with torch.no_grad():
        eager = model(x)
    assert_parity(call_native(compiled, x), eager)
