"""`rextio_torch.compile(module)`: an nn.Sequential of known layers compiles without source,
per signature of its arguments, reading its parameters at every call; training mode and hooks
run eagerly with a RextioFallbackWarning; the compiled object behaves as the module (README,
"Modules"; python/rextio_torch/_module.py)."""

import copy
import pickle
import warnings

import pytest
import torch
import torch.nn as nn

from conftest import assert_parity, fused_linear_bound
from rextio_torch.types import TensorF32Cpu2D


def compiled_function_of(fast):
    """The one compiled function a CompiledModule has made so far."""
    (function,) = fast.signatures.values()
    assert type(function).__name__ == "CompiledFunction", function
    return function


def eager(module, x):
    with torch.no_grad():
        return module(x)


@pytest.mark.parametrize("act, name", [
    (nn.ReLU(), "relu"), (nn.Sigmoid(), "sigmoid"), (nn.Tanh(), "tanh"), (nn.GELU(), "gelu"),
    (nn.SiLU(), "silu"), (nn.ReLU6(), "relu6"),
])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_and_each_activation_match_eager(rextio, act, name, bias):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 16, bias=bias), act).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(8, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = fast(x)
    compiled_function_of(fast)
    w, b = model[0].weight.detach(), None if model[0].bias is None else model[0].bias.detach()
    # silu and relu6 have no interval image in the helper; their chains are checked at the
    # default tolerance (below, and the activations alone bit for bit-level tolerance).
    if name in ("silu", "relu6"):
        assert_parity(ours, eager(model, x), fused_linear_bound(x, w, b))
    else:
        assert_parity(ours, eager(model, x), fused_linear_bound(x, w, b, acts=(name,)))
    assert not ours.requires_grad


def test_a_tanh_gelu_layer_compiles_as_f_gelu_tanh(rextio):
    """nn.GELU(approximate="tanh") in a Sequential is F.gelu(h, approximate="tanh"),
    unfused after the linear (its envelope: tests/python/test_gelu_tanh.py)."""
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(16, 40), nn.GELU(approximate="tanh"), nn.Linear(40, 4)).eval()
    fast = rextio.compile(model, strict=True)
    assert 'F.gelu(h, approximate="tanh")' in fast.generated_source()
    x = torch.randn(5, 16) * 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = fast(x)
    want = eager(model, x)
    assert_parity(ours, want, 1e-5 * want.abs().clamp(min=1.0) + 1e-5)


@pytest.mark.parametrize("act", [nn.ReLU(), nn.Sigmoid(), nn.Tanh(), nn.GELU(), nn.SiLU(), nn.ReLU6()])
def test_activations_alone_match_eager(rextio, act):
    # Elementwise ops alone: the default tolerance (docs/parity.md), on values with NaN and
    # infinities in them.
    fast = rextio.compile(nn.Sequential(act).eval(), strict=True)
    x = torch.randn(6, 9) * 4
    x[0, 0], x[1, 1], x[2, 2] = float("nan"), float("inf"), float("-inf")
    assert_parity(fast(x), eager(fast.__wrapped__, x))


def test_nested_sequential_dropout_identity_softmax(rextio):
    torch.manual_seed(1)
    model = nn.Sequential(
        nn.Linear(24, 48), nn.ReLU(), nn.Dropout(0.5), nn.Identity(),
        nn.Sequential(nn.Linear(48, 12, bias=False), nn.Tanh(), nn.Sequential(nn.Linear(12, 6))),
        nn.Softmax(dim=-1),
    ).eval()
    fast = rextio.compile(model, strict=True)
    source = fast.generated_source()
    assert "# (4.2.0): Linear(in_features=12, out_features=6, bias=True)" in source
    assert "Dropout" not in source and "Identity" not in source
    for rows in (1, 5, 64):
        x = torch.randn(rows, 24)
        assert_parity(fast(x), eager(model, x))
    assert len(fast.signatures) == 1


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_softmax_dims(rextio, dim):
    model = nn.Sequential(nn.Linear(5, 7), nn.Softmax(dim=dim)).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(4, 5)
    assert_parity(fast(x), eager(model, x))


def test_rank_1_input_is_its_own_signature(rextio):
    # Activations alone compile for a rank-1 input too: a second compilation, cached.
    model = nn.Sequential(nn.Sigmoid(), nn.Softmax(dim=0)).eval()
    fast = rextio.compile(model, strict=True)
    x2, x1 = torch.randn(2, 6), torch.randn(6)
    assert_parity(fast(x2), eager(model, x2))
    assert_parity(fast(x1), eager(model, x1))
    assert sorted(key[0] for key in fast.signatures) == [("float32", "cpu", 1), ("float32", "cpu", 2)]
    assert all(type(f).__name__ == "CompiledFunction" for f in fast.signatures.values())


def test_a_signature_that_does_not_compile_runs_eagerly(rextio):
    # `linear` is claimed for rank-2 inputs only: a rank-1 input to a Linear runs eagerly,
    # with the diagnostic (pointing at the layer's line), or raises with strict=True.
    model = nn.Sequential(nn.Linear(6, 3), nn.Sigmoid()).eval()
    fast = rextio.compile(model)
    x = torch.randn(6)
    with pytest.warns(rextio.RextioFallbackWarning, match=r"(?s)float32 cpu rank 1.*RXTP-TORCH-010.*\(0\): Linear"):
        ours = fast(x)
    assert torch.equal(ours, eager(model, x))
    assert_parity(fast(x[None]), eager(model, x[None]))
    with pytest.raises(rextio.CompileError, match="RXTP-TORCH-010"):
        rextio.compile(model, strict=True)(x)


def test_parameters_are_read_at_every_call(rextio):
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU()).eval()
    fast = rextio.compile(model)
    x = torch.randn(3, 8)
    before = fast(x)
    with torch.no_grad():
        model[0].weight.mul_(-2.0)
        model[0].bias.add_(1.0)
    after = fast(x)
    assert not torch.equal(before, after)
    assert_parity(after, eager(model, x))
    # load_state_dict, through the compiled object too.
    other = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
    fast.load_state_dict(other.state_dict())
    assert_parity(fast(x), eager(other.eval(), x))
    # A parameter replaced by a new tensor (not in place) is seen as well.
    model[0].weight = nn.Parameter(torch.randn(4, 8))
    assert_parity(fast(x), eager(model, x))
    assert len(fast.signatures) == 1


def test_a_layer_replaced_added_or_unbiased_is_planned_again(rextio):
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU()).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(3, 8)
    fast(x)
    model[0] = nn.Linear(8, 4).eval()  # a new layer object: its tensors, not the old ones
    assert_parity(fast(x), eager(model, x))
    model.append(nn.Tanh().eval())
    assert_parity(fast(x), eager(model, x))
    assert "tanh" in compiled_function_of(fast).optimized_ir
    model[0].bias = None
    assert_parity(fast(x), eager(model, x))
    assert "bias_0" not in fast.generated_source()


def test_to_float64_is_a_signature_of_its_own(rextio):
    # The compiler has float64 markers, and a Sequential's signature takes any marker it has
    # (`_call_markers`, asked of the compiler): after `.to(torch.float64)` the module compiles
    # again at float64, through ATen's float64 ops, eager's bits.
    model = nn.Sequential(nn.Linear(8, 4), nn.Tanh()).eval()
    fast = rextio.compile(model)
    x = torch.randn(3, 8)
    fast(x)
    assert fast.to(torch.float64) is fast
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = fast(x.double())
    assert ours.dtype == torch.float64
    assert torch.equal(ours, eager(model, x.double()))
    fast.float()
    assert_parity(fast(x), eager(model, x))
    assert len(fast.signatures) == 2
    assert all(type(f).__name__ == "CompiledFunction" for f in fast.signatures.values())


def test_a_signature_no_marker_describes_runs_eagerly(rextio):
    # float16 has no marker: eager, with a warning naming the signature and the markers.
    model = nn.Sequential(nn.Tanh()).eval()
    fast = rextio.compile(model)
    x = torch.randn(3, 8, dtype=torch.float16)
    with pytest.warns(rextio.RextioFallbackWarning, match=r"float16 cpu rank 2.*compiled: cpu tensors of the marker types, float32 rank 0/1/2/3"):
        ours = fast(x)
    assert torch.equal(ours, eager(model, x))


def test_other_input_dtype_gives_eagers_error(rextio):
    # float32 parameters, a float64 input: eager's own error, after the warning.
    fast = rextio.compile(nn.Sequential(nn.Linear(8, 4)).eval())
    fast(torch.randn(2, 8))
    with pytest.warns(rextio.RextioFallbackWarning), pytest.raises(RuntimeError, match="dtype"):
        fast(torch.randn(2, 8, dtype=torch.float64))


def test_signature_limit(rextio, monkeypatch):
    from rextio_torch import _module

    monkeypatch.setattr(_module, "SIGNATURE_LIMIT", 1)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU()).eval()
    fast = rextio.compile(model)
    fast(torch.randn(2, 4))
    x1 = torch.randn(4)
    with pytest.warns(rextio.RextioFallbackWarning, match="the limit"):
        ours = fast(x1)
    assert torch.equal(ours, eager(model, x1))
    assert [isinstance(v, str) for v in fast.signatures.values()] == [False, True]


def test_training_mode_runs_eagerly_with_a_warning(rextio):
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
    fast = rextio.compile(model)
    x = torch.randn(3, 8)
    assert fast.training
    with pytest.warns(rextio.RextioFallbackWarning, match="the module is in training mode"):
        ours = fast(x)
    assert ours.requires_grad  # eager, with autograd
    assert fast.signatures == {}
    assert fast.eval() is fast and not model.training
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_parity(fast(x), eager(model, x))
    # A submodule in training mode is enough.
    model[1].train()
    with pytest.warns(rextio.RextioFallbackWarning, match="submodule '1' is in training mode"):
        fast(x)
    assert fast.train() is fast
    with pytest.warns(rextio.RextioFallbackWarning, match="training mode"):
        fast(x)


def test_dropout_in_training_mode_is_eager_dropout(rextio):
    model = nn.Sequential(nn.Dropout(0.5))
    fast = rextio.compile(model)
    x = torch.ones(64, 64)
    with pytest.warns(rextio.RextioFallbackWarning):
        ours = fast(x)
    assert (ours == 0).any() and (ours == 2).any()


def test_hooks_run_eagerly_with_a_warning(rextio):
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU()).eval()
    fast = rextio.compile(model)
    x = torch.randn(3, 8)
    handle = model.register_forward_hook(lambda module, args, out: out + 1)
    with pytest.warns(rextio.RextioFallbackWarning, match="the module has forward hooks"):
        ours = fast(x)
    assert_parity(ours, eager(model, x))
    assert torch.all(ours >= 1)
    handle.remove()
    handle = model[0].register_forward_pre_hook(lambda module, args: (args[0] * 0,))
    with pytest.warns(rextio.RextioFallbackWarning, match="submodule '0' has forward hooks or pre-hooks"):
        assert_parity(fast(x), eager(model, x))
    handle.remove()
    handle = nn.modules.module.register_module_forward_hook(lambda module, args, out: out)
    try:
        with pytest.warns(rextio.RextioFallbackWarning, match="global forward hooks"):
            fast(x)
    finally:
        handle.remove()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_parity(fast(x), eager(model, x))
    compiled_function_of(fast)


def test_native_and_fallback_modes(rextio, monkeypatch):
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
    fast = rextio.compile(model)
    x = torch.randn(3, 8)
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "native")
    with pytest.raises(RuntimeError, match="native mode requires generated native function: Sequential"):
        fast(x)
    model.eval()
    assert_parity(fast(x), eager(model, x))
    monkeypatch.setenv("REXTIO_NATIVE_MODE", "fallback")
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fast(x).requires_grad  # the module itself, silently, as for functions


def test_the_compiled_object_is_the_module_otherwise(rextio):
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU()).eval()
    fast = rextio.compile(model)
    assert fast.__wrapped__ is model
    assert rextio.compile(fast) is fast
    assert fast.state_dict().keys() == model.state_dict().keys()
    assert [p is q for p, q in zip(fast.parameters(), model.parameters())] == [True, True]
    assert fast[0] is model[0] and len(fast) == 2 and list(fast) == list(model)
    assert fast.training is False
    fast.extra = 5
    assert model.extra == 5
    assert repr(fast).startswith("rextio_torch.compile(Sequential(")
    with pytest.raises(AttributeError):
        fast.no_such_attribute  # noqa: B018


def test_pickle_and_copy_round_trip(rextio):
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(8, 6), nn.GELU(), nn.Linear(6, 2), nn.Softmax(dim=1)).eval()
    fast = rextio.compile(model)
    x = torch.randn(5, 8)
    expected = eager(model, x)
    assert_parity(fast(x), expected)
    for loaded in (pickle.loads(pickle.dumps(fast)), copy.deepcopy(fast)):
        assert type(loaded) is type(fast) and loaded.__wrapped__ is not model
        assert loaded.signatures == {}  # compiled again where it is loaded, at its first call
        assert_parity(loaded(x), expected)
        compiled_function_of(loaded)
        assert loaded.state_dict().keys() == model.state_dict().keys()


def test_unknown_layers_warn_at_compile_and_run_eagerly(rextio):
    model = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4)).eval()
    with pytest.warns(rextio.RextioFallbackWarning, match=r"layer \(1\) is a BatchNorm1d") as record:
        fast = rextio.compile(model)
    assert record[0].filename == __file__
    x = torch.randn(3, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(fast(x), eager(model, x))
    assert "BatchNorm1d" in fast.__rextio_fallback__
    with pytest.raises(rextio.CompileError, match="BatchNorm1d"):
        rextio.compile(model, strict=True)
    with pytest.warns(rextio.RextioFallbackWarning, match=r"approximate='sigmoid'"):
        odd = nn.GELU()
        odd.approximate = "sigmoid"
        rextio.compile(nn.Sequential(odd))
    with pytest.warns(rextio.RextioFallbackWarning, match="Softmax without a dim"):
        rextio.compile(nn.Sequential(nn.Softmax()))


def test_a_user_modules_forward_compiles_from_its_source(rextio):
    import module_fixture as fx

    torch.manual_seed(5)
    model = fx.Mlp().eval()
    with torch.no_grad():
        model.scale.uniform_(0.5, 1.5)
        model.shift.normal_()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
    function = compiled_function_of(fast)  # compiled at `compile`, from the annotations
    assert "fused_linear" in function.optimized_ir and "%self_fc2_weight" in function.optimized_ir
    for rows in (1, 7, 33):
        x = torch.randn(rows, 16)
        assert_parity(fast(x), eager(model, x))
    # Parameters and buffers are read at every call.
    x = torch.randn(4, 16)
    with torch.no_grad():
        model.fc1.weight.mul_(0.5)
        model.shift.add_(3.0)
    assert_parity(fast(x), eager(model, x))
    model.load_state_dict(fx.Mlp().state_dict())
    assert_parity(fast(x), eager(model, x))
    assert_parity(fast(x=x), eager(model, x))
    # The annotations fix the argument types: others are the compiled function's error.
    with pytest.raises(ValueError, match="expected a float32 tensor"):
        fast(x.double())
    # Training mode, as for a Sequential.
    model.train()
    with pytest.warns(rextio.RextioFallbackWarning, match="training mode"):
        fast(x)
    model.eval()
    # A member replaced: planned and compiled again.
    model.fc1 = nn.Linear(16, 32).eval()
    assert_parity(fast(x), eager(model, x))
    # Pickled, it compiles again where it is loaded: eager's result there too (the loaded
    # module is a copy of the model, so eager runs on that copy).
    loaded = pickle.loads(pickle.dumps(fast))
    assert_parity(loaded(x), eager(loaded.__wrapped__, x))
    assert_parity(loaded(x), eager(model, x))


def test_a_user_modules_own_parameters_as_tensors(rextio):
    import module_fixture as fx

    model = fx.Affine().eval()
    fast = rextio.compile(model, strict=True)
    assert "%self_weight" in compiled_function_of(fast).optimized_ir
    x = torch.randn(4, 5)
    assert_parity(fast(x), eager(model, x))
    with torch.no_grad():
        model.weight.neg_()
    assert_parity(fast(x), eager(model, x))


def test_a_user_module_with_sequential_members_and_a_loop(rextio):
    import module_fixture as fx

    model = fx.Head().eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(6, 16)
    for depth in (0, 1, 3):
        assert_parity(fast(x, depth), eager_call(model, x, depth))
    assert_parity(fast(x, depth=2), eager_call(model, x, 2))


def eager_call(module, *args):
    with torch.no_grad():
        return module(*args)


def test_a_user_module_whose_forward_does_not_compile_runs_eagerly(rextio):
    import module_fixture as fx

    model = fx.Unsupported().eval()
    # The diagnostic points at the user's own source line (the BatchNorm1d member's call) and
    # says why.
    lines = open(fx.__file__, encoding="utf-8").read().splitlines()
    line = lines.index("        return self.norm(self.fc(x))") + 1
    with pytest.warns(rextio.RextioFallbackWarning,
                      match=rf"(?s)RXT093.*`self\.norm` is not compiled: BatchNorm1d is not a layer.*"
                            rf"module_fixture.py:{line}:16"):
        fast = rextio.compile(model)
    x = torch.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(fast(x), eager(model, x))
    with pytest.raises(rextio.CompileError, match="self.norm"):
        rextio.compile(model, strict=True)
    # A forward without annotations is typed by the call instead (no warning at compile).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(fx.Unannotated().eval())
        assert_parity(fast(x), eager(fast.__wrapped__, x))
    assert list(fast.signatures) == [(("TensorF32Cpu2D",), ("float32", "cpu", 2), ("float32", "cpu", 1))]


def test_a_module_class_defined_in_a_function_runs_eagerly(rextio):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x).relu()

    model = Net().eval()
    with pytest.warns(rextio.RextioFallbackWarning, match="class defined inside a function"):
        fast = rextio.compile(model)
    x = torch.randn(3, 4)
    assert torch.equal(fast(x), eager(model, x))


def test_layers_that_do_not_compile_for_a_signature_warn_with_the_layer(rextio):
    # Under the reference surface F.silu is not covered: the diagnostic points at the line of
    # the generated function that names the layer; the call runs eagerly.
    model = nn.Sequential(nn.Linear(4, 4), nn.SiLU()).eval()
    fast = rextio.compile(model, surface="reference")
    x = torch.randn(2, 4)
    with pytest.warns(rextio.RextioFallbackWarning, match=r"(?s)do not compile.*\(1\): SiLU\(\)"):
        ours = fast(x)
    assert torch.equal(ours, eager(model, x))
    with pytest.raises(rextio.CompileError, match="F.silu"):
        rextio.compile(model, surface="reference", strict=True)(x)


def test_other_arguments_run_eagerly(rextio):
    fast = rextio.compile(nn.Sequential(nn.ReLU()).eval())
    x = torch.randn(2, 3)
    with pytest.warns(rextio.RextioFallbackWarning, match="one tensor argument"):
        assert torch.equal(fast(input=x), x.relu())
    with pytest.raises(ValueError, match="strict= and surface= only"):
        rextio.compile(nn.Sequential(nn.ReLU()), mode="aot")


def test_explain_takes_modules(rextio):
    """`explain(module)` explains what `compile(module)` compiles: a Sequential's generated
    function, a user module's forward (inlined members, constants), or why it runs eagerly."""
    import module_fixture as fx

    why = rextio.explain(nn.Sequential(nn.Linear(4, 3), nn.ReLU()))
    assert why.compiles and "fused_linear" in why.ir()
    tower = fx.Tower().eval()
    why = rextio.explain(tower)
    assert why.compiles and why.function == "forward" and why.ir().count("residual=left") == 2
    assert rextio.explain(rextio.compile(tower)).ir() == why.ir()
    why = rextio.explain(fx.CallsEarlyReturn().eval())
    assert not why.compiles and [d.code for d in why.diagnostics] == ["RXT093"]
    assert "`self.inner` is a user module whose forward is not inlined" in str(why)
    why = rextio.explain(nn.Sequential(nn.BatchNorm1d(4)))
    assert not why.compiles and "BatchNorm1d, not a layer rextio-torch compiles" in str(why)
    assert "runs eagerly: its structure does not compile" in str(why)


def test_a_tanh_gelu_member_is_the_tanh_gelu(rextio):
    import module_fixture as fx

    model = fx.TanhGelu().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
    assert "gelu_tanh" in compiled_function_of(fast).optimized_ir
    x = torch.randn(3, 4) * 4
    assert_parity(fast(x), eager(model, x))


def test_a_pre_norm_block_module_fuses_as_the_function_would(rextio):
    """`x + self.fc2(F.gelu(self.fc1(self.ln(x))))`: the LayerNorm member is the first fused
    op's row normalization, the skip connection the second's residual; its weight and bias are
    read at every call."""
    import module_fixture as fx

    torch.manual_seed(11)
    model = fx.PreNormBlock().eval()
    with torch.no_grad():
        model.ln.weight.uniform_(0.5, 1.5)
        model.ln.bias.normal_(0.0, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
    ir = compiled_function_of(fast).optimized_ir
    assert "norm=layer_norm(eps=1e-5, affine=true)" in ir and "residual=left" in ir, ir
    assert "= layer_norm" not in ir and ir.count("fused_linear") == 2, ir
    for rows in (1, 16, 70):
        x = torch.randn(rows, 32)
        assert_parity(fast(x), eager(model, x))
    with torch.no_grad():
        model.ln.weight.mul_(2.0)
    x = torch.randn(5, 32)
    assert_parity(fast(x), eager(model, x))
    # A LayerNorm over two dims or without a bias stays a diagnostic (RXT030 on its call).
    model.ln = nn.LayerNorm(32, bias=False)
    with pytest.warns(rextio.RextioFallbackWarning, match="self.ln"):
        slow = rextio.compile(model)
    assert torch.equal(slow(x), eager(model, x))


def test_an_embedding_member_reads_int64_ids(rextio):
    import module_fixture as fx

    torch.manual_seed(12)
    model = fx.BagOfWords().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
    ir = compiled_function_of(fast).optimized_ir
    assert "= embedding" in ir and "norm=layer_norm(eps=0.001, affine=false)" in ir, ir
    ids = torch.tensor([3, 0, 49, 7, 7])
    assert_parity(fast(ids), eager(model, ids))
    with pytest.raises(IndexError):
        eager(model, torch.tensor([50]))
    with pytest.raises(IndexError):
        fast(torch.tensor([50]))
    # max_norm rewrites the weight at each call: not compiled.
    model.embed = nn.Embedding(50, 16, max_norm=1.0)
    with pytest.warns(rextio.RextioFallbackWarning, match="self.embed"):
        rextio.compile(model)


def test_a_sequential_with_layer_norm(rextio):
    model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.Linear(16, 4), nn.Tanh()).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(6, 8)
    assert_parity(fast(x), eager(model, x))
    assert "F.layer_norm(h, (16,), weight_1, bias_1, 1e-05)" in fast.generated_source()
    plain = nn.Sequential(nn.LayerNorm(8, elementwise_affine=False), nn.ReLU()).eval()
    fast = rextio.compile(plain, strict=True)
    assert_parity(fast(x), eager(plain, x))
    with pytest.warns(rextio.RextioFallbackWarning, match="more than the last dim"):
        rextio.compile(nn.Sequential(nn.LayerNorm((2, 4))))


def test_user_modules_as_members_are_inlined(rextio):
    """`self.block1(...)` of a user module whose forward compiles: its forward is inlined where
    it is called, its own members' tensors are hidden parameters read at every call, and the
    blocks fuse as one function would (two fused ops per pre-norm block)."""
    import module_fixture as fx

    torch.manual_seed(13)
    model = fx.Tower().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
    ir = compiled_function_of(fast).optimized_ir
    assert "%self_block2_fc1_weight" in ir and ir.count("residual=left") == 2, ir
    assert ir.count("norm=layer_norm(eps=1e-5, affine=true)") == 2, ir
    for rows in (1, 16, 70):
        x = torch.randn(rows, 16)
        assert_parity(fast(x), eager(model, x))
    # A nested member's parameters are read at every call.
    x = torch.randn(5, 16)
    with torch.no_grad():
        model.block2.fc1.weight.mul_(-1.0)
        model.block1.ln.bias.add_(0.5)
    assert_parity(fast(x), eager(model, x))
    # A nested member in training mode: eager, with the reason.
    model.block1.train()
    with pytest.warns(rextio.RextioFallbackWarning, match="'block1' is in training mode"):
        fast(x)
    model.eval()
    # A nested member replaced: planned and compiled again.
    model.block1 = fx.PreNormBlock(32, 48).eval()
    assert_parity(fast(x), eager(model, x))
    loaded = pickle.loads(pickle.dumps(fast))
    assert_parity(loaded(x), eager(loaded.__wrapped__, x))
    assert_parity(loaded(x), eager(model, x))


def test_inlined_calls_bind_arguments_as_python_does(rextio):
    """Keyword and default arguments, a user module called twice and once inside a Sequential,
    a loop in its forward, and a left operand evaluated before the call."""
    import module_fixture as fx

    torch.manual_seed(14)
    model = fx.Caller().eval()
    fast = rextio.compile(model, strict=True)
    ir = compiled_function_of(fast).optimized_ir
    # `x.relu()` (the `+`'s left operand) comes before the inlined loop, as eager runs them.
    assert ir.index("= relu %0") < ir.index(" for "), ir
    for n in (0, 1, 3):
        x = torch.randn(6, 8)
        assert_parity(fast(x, n), eager_call(model, x, n))
    assert_parity(fast(x, n=2), eager_call(model, x, 2))


def test_an_inlined_call_keeps_eagers_error_order(rextio):
    """`self.fc(x) + self.inner(y)` with both sides misshapen: eager's error is the left
    operand's, and so is the compiled forward's."""
    import module_fixture as fx

    model = fx.ErrorOrder().eval()
    fast = rextio.compile(model, strict=True)
    x, y = torch.randn(2, 5), torch.randn(2, 3)
    with pytest.raises(RuntimeError) as expected:
        eager_call(model, x, y)
    with pytest.raises(RuntimeError) as got:
        fast(x, y)
    assert str(got.value) == str(expected.value)
    x, y = torch.randn(3, 4), torch.randn(3, 8)
    assert_parity(fast(x, y), eager_call(model, x, y))


@pytest.mark.parametrize("name, why", [
    ("CallsEarlyReturn", r"`self\.inner` is a user module whose forward is not inlined: its forward has a "
                         r"`return` before its last statement"),
    ("Conditional", r"a call of the module member `self\.a` is not compiled in a branch of a conditional "
                    r"expression"),
])
def test_calls_that_are_not_inlined_say_why_and_run_eagerly(rextio, name, why):
    import module_fixture as fx

    model = getattr(fx, name)().eval()
    with pytest.warns(rextio.RextioFallbackWarning, match=rf"(?s)RXT093.*{why}") as record:
        fast = rextio.compile(model)
    assert "RXT030" not in str(record[0].message)
    with pytest.raises(rextio.CompileError, match="RXT093"):
        rextio.compile(model, strict=True)
    x = torch.randn(3, 4)
    args = (x, True) if name == "Conditional" else (x,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(fast(*args), eager_call(model, *args))


class UsesAnotherFilesModule(nn.Module):
    """Its member's class is in module_fixture.py: inlined from that file's source."""

    def __init__(self):
        super().__init__()
        import module_fixture as fx

        self.block = fx.Mix(4)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.block(x).relu()


def test_a_user_module_from_another_file_is_inlined(rextio):
    # Its loop and literal defaults come from module_fixture.py (tests/python/test_module_members.py
    # has the other cases of issue 33).
    torch.manual_seed(3)
    model = UsesAnotherFilesModule().eval()
    fast = rextio.compile(model, strict=True)
    for rows in (2, 5):
        x = torch.randn(rows, 4)
        assert_parity(fast(x), eager(model, x))


def test_a_module_list_is_unrolled(rextio):
    """`for block in self.blocks: x = block(x)` over a ModuleList of user modules: one inlined
    copy per block (each pre-norm block two fused ops); `self.norms[0]` / `self.norms[-1]` by
    literal index; the blocks' weights read at every call; a block added plans it again."""
    import module_fixture as fx

    torch.manual_seed(15)
    model = fx.Stack().eval()
    fast = rextio.compile(model, strict=True)
    ir = compiled_function_of(fast).optimized_ir
    assert ir.count("residual=left") == 3 and "%self_blocks_2_fc2_weight" in ir, ir
    for rows in (1, 9, 40):
        x = torch.randn(rows, 16)
        assert_parity(fast(x), eager(model, x))
    with torch.no_grad():
        model.blocks[1].fc1.weight.mul_(2.0)
    assert_parity(fast(x), eager(model, x))
    model.blocks.append(fx.PreNormBlock(16, 8).eval())
    assert_parity(fast(x), eager(model, x))
    assert compiled_function_of(fast).optimized_ir.count("residual=left") == 4


def test_a_module_list_loop_with_break_is_not_unrolled(rextio):
    import module_fixture as fx

    model = fx.BreakingStack().eval()
    with pytest.warns(rextio.RextioFallbackWarning,
                      match=r"(?s)RXT093.*the loop over the ModuleList `self\.layers` is not compiled: its body "
                            r"has a `break`"):
        fast = rextio.compile(model)
    x = torch.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(fast(x), eager(model, x))


def test_python_scalar_attributes_are_guarded_constants(rextio):
    """`self.scale` (float), `self.width` (int) and `self.residual` (bool), set in __init__
    and read by forward, are literals of the compilation (the attention chain fuses with its
    scale, `if self.residual:` is the arm it takes); another value at a call plans and
    compiles the module again; an attribute that is
    no longer a Python scalar runs the module eagerly with the diagnostic."""
    import module_fixture as fx

    torch.manual_seed(16)
    model = fx.Attention().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
    ir = compiled_function_of(fast).optimized_ir
    assert "fused_attention" in ir and "const.float 0.25" in ir and "const.int 16" in ir, ir
    # `if self.residual:` is folded to the arm it takes.
    assert "\n  if " not in ir and "= add" in ir, ir
    x = torch.randn(3, 7, 16)
    assert_parity(fast(x), eager(model, x))
    model.residual = False
    assert_parity(fast(x), eager(model, x))
    assert "= add" not in compiled_function_of(fast).optimized_ir
    model.scale = 0.125
    assert_parity(fast(x), eager(model, x))
    assert "const.float 0.125" in compiled_function_of(fast).optimized_ir
    model.scale = 1  # an int now: its own compilation, with Python's int * tensor
    assert_parity(fast(x), eager(model, x))
    # No longer a Python scalar: planned again, and it does not compile (strict: raised at
    # the call; otherwise the module runs eagerly with the warning).
    model.scale = torch.tensor(0.5)
    why = r"(?s)RXT093.*`self\.scale` is not compiled: a tensor attribute that is neither a parameter nor a buffer"
    with pytest.raises(rextio.CompileError, match=why):
        fast(x)
    with pytest.warns(rextio.RextioFallbackWarning, match=why):
        lenient = rextio.compile(model)
    assert torch.equal(lenient(x), eager(model, x))
    model.scale = 0.25
    assert_parity(lenient(x), eager(model, x))
    assert "fused_attention" in compiled_function_of(lenient).optimized_ir


def test_a_forward_without_annotations_is_typed_by_each_call(rextio):
    """Its arguments' types (a tensor's dtype, device and rank: a marker; a Python int, float
    or bool) pick the compilation, each signature compiled once at its first call, as
    torch.compile does; an argument no marker describes runs eagerly with the reason."""
    import module_fixture as fx

    torch.manual_seed(17)
    model = fx.Untyped().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
        assert fast.signatures == {}  # nothing is known before a call
        x = torch.randn(4, 6)
        for steps in (0, 1, 3):
            assert_parity(fast(x, steps), eager_call(model, x, steps))
        assert_parity(fast(x, steps=2), eager_call(model, x, 2))
        batched = torch.randn(2, 3, 6)
        assert_parity(fast(batched, 2), eager_call(model, batched, 2))
    assert [key[0] for key in fast.signatures] == [("TensorF32Cpu2D", "int"), ("TensorF32Cpu3D", "int")]
    # `explain` of the compiled object: for its first call's arguments.
    why = rextio.explain(fast)
    assert why.compiles and "%steps: int" in why.ir(), why
    lenient = rextio.compile(model)
    with pytest.warns(rextio.RextioFallbackWarning, match=r"an argument of this call is a str"):
        with pytest.raises(TypeError):
            lenient(x, "2")
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        lenient(x)


def test_a_sequential_of_user_modules(rextio):
    """`nn.Sequential(Linear, Block, ReLU, Block)` with user-module blocks: compiled as a forward
    calling its layers in turn, each block inlined from its source, typed at each call."""
    import module_fixture as fx

    torch.manual_seed(18)
    model = nn.Sequential(nn.Linear(8, 32), fx.PreNormBlock(), nn.ReLU(), fx.PreNormBlock()).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = rextio.compile(model, strict=True)
        for rows in (1, 6, 40):
            x = torch.randn(rows, 8)
            assert_parity(fast(x), eager(model, x))
    ir = compiled_function_of(fast).optimized_ir
    assert ir.count("residual=left") == 2 and "%self_3_fc2_weight" in ir, ir
    assert rextio.explain(fast).compiles
    # A block replaced by a layer of another kind: planned again, and it says why.
    model[3] = nn.BatchNorm1d(32).eval()
    with pytest.raises(rextio.CompileError, match=r"`self\.layer_3` is not compiled: BatchNorm1d"):
        fast(x)
