"""A compiled module is a cache: what it is keyed and guarded by (docs/reliability.md,
"What a module plan depends on"), each checked against eager PyTorch, never against our own
path (issue 31, items 2 and 4):

- identity: one instance used at two places runs at both (a shared layer, block, ModuleList
  item, attribute; tied weights);
- arguments: keyword-only ones and defaults reach the forward, compiled and eagerly;
  `**kwargs` and out-of-range ints run eagerly with the call's own arguments;
- settings: a layer's bias, eps, dim, approximate, inplace changed after the first call plan
  it again;
- attributes: float attributes travel bit for bit (random doubles, signed zeros, subnormals;
  NaN and infinities run eagerly), and the guard compares bits;
- names: layer names that are no identifier, or collide once flattened, compile.

Values: exact where the compiled and eager computations are the same single rounding (an
elementwise product by a scalar), else the module tests' tolerance (`assert_parity`).
"""

import math
import random
import struct
import warnings
from collections import OrderedDict

import pytest
import torch
import torch.nn as nn

from conftest import assert_parity


def eager(module, *args, **kwargs):
    with torch.no_grad():
        return module(*args, **kwargs)


def compiled_signatures(fast):
    return [v for v in fast.signatures.values() if type(v).__name__ == "CompiledFunction"]


def assert_compiled(fast):
    assert compiled_signatures(fast), fast.signatures


# -- identity: a shared instance runs at every place it appears --------------------------------


def shared_sequentials():
    import cache_fixture as fx

    torch.manual_seed(5)
    lin, lin2, act = nn.Linear(4, 4), nn.Linear(4, 4), nn.ReLU()
    block = fx.Block()
    tied1, tied2 = nn.Linear(4, 4), nn.Linear(4, 4)
    tied2.weight = tied1.weight
    return {
        "shared activation": nn.Sequential(lin, act, lin2, act),
        "shared linear": nn.Sequential(lin, nn.Tanh(), lin),
        "shared nested": nn.Sequential(nn.Sequential(lin, nn.Tanh()), nn.Sequential(lin, nn.Tanh())),
        "shared user block": nn.Sequential(block, block),
        "shared block in a ModuleList": fx.Loop(block),
        "one block under two names, tied parameters": fx.TwoNames(),
        "tied weights": nn.Sequential(tied1, nn.Tanh(), tied2),
    }


@pytest.mark.parametrize("name", list(shared_sequentials()))
def test_a_shared_instance_runs_at_every_place(rextio, name):
    model = shared_sequentials()[name].eval()
    fast = rextio.compile(model, strict=True)
    for rows in (1, 3):
        x = torch.randn(rows, 4)
        assert_parity(fast(x), eager(model, x))
    assert_compiled(fast)
    # The explanation is of the same plan (for the arguments met): it compiles.
    assert rextio.explain(fast).status == "native", rextio.explain(fast)


# -- arguments: every one reaches the forward ---------------------------------------------------


def test_keyword_only_arguments_and_defaults_reach_the_compiled_forward(rextio):
    import cache_fixture as fx

    torch.manual_seed(6)
    model = fx.KeywordOnly().eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(3, 4)
    for kwargs in ({}, {"scale": 3.0}, {"scale": 5.0, "shift": 2}, {"shift": -1}, {"scale": 0.5}):
        assert_parity(fast(x, **kwargs), eager(model, x, **kwargs))
    assert_compiled(fast)
    model = fx.Defaults().eval()
    fast = rextio.compile(model, strict=True)
    for args, kwargs in (((x,), {}), ((x, 3.0), {}), ((x,), {"scale": 4.0}), ((), {"x": x, "scale": 0.25})):
        assert_parity(fast(*args, **kwargs), eager(model, *args, **kwargs))
    assert_compiled(fast)
    # A call that does not bind: eager's own TypeError.
    with pytest.raises(TypeError):
        fast(x, 1.0, 2.0)


def test_arguments_that_do_not_compile_reach_the_eager_forward(rextio):
    import cache_fixture as fx

    torch.manual_seed(7)
    x = torch.randn(3, 4)
    model = fx.KeywordTag().eval()
    fast = rextio.compile(model)
    for kwargs in ({"tag": "b"}, {"tag": "b", "scale": 3.0}, {"scale": 3.0}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rextio.RextioFallbackWarning)
            assert_parity(fast(x, **kwargs), eager(model, x, **kwargs))
    model = fx.Kwargs().eval()
    with pytest.warns(rextio.RextioFallbackWarning, match=r"\*\*options"):
        fast = rextio.compile(model)
    assert_parity(fast(x, scale=3.0), eager(model, x, scale=3.0))


def test_an_int_outside_64_bits_runs_eagerly(rextio):
    import cache_fixture as fx

    model = fx.Steps().eval()
    fast = rextio.compile(model)
    x = torch.randn(2, 3, dtype=torch.float64)
    assert_parity(fast(x, 3), eager(model, x, 3))
    for n in (2**63, -(2**63) - 1, 2**100):
        try:
            want = eager(model, x, n)
        except Exception as error:  # eager's own error (an int too large for a double's cast)
            with pytest.raises(type(error)), pytest.warns(rextio.RextioFallbackWarning, match="64-bit range"):
                fast(x, n)
            continue
        with pytest.warns(rextio.RextioFallbackWarning, match="64-bit range"):
            got = fast(x, n)
        assert_parity(got, want)
    assert_parity(fast(x, 2**63 - 1), eager(model, x, 2**63 - 1))


# -- settings: a change after the first call plans again ----------------------------------------


def set_bias(model):
    model[0].bias = nn.Parameter(torch.ones(4))


def drop_bias(model):
    model[0].bias = None


def set_eps(model):
    model[0].eps = 10.0


def set_dim(model):
    model[0].dim = 0


def set_approximate(model):
    model[0].approximate = "tanh"


def set_max_val(model):
    model[0].max_val = 3.0


SETTINGS = {
    "bias added": (lambda: nn.Sequential(nn.Linear(4, 4, bias=False)), set_bias),
    "bias removed": (lambda: nn.Sequential(nn.Linear(4, 4)), drop_bias),
    "LayerNorm.eps": (lambda: nn.Sequential(nn.LayerNorm(4)), set_eps),
    "Softmax.dim": (lambda: nn.Sequential(nn.Softmax(dim=1)), set_dim),
    "GELU.approximate": (lambda: nn.Sequential(nn.GELU()), set_approximate),
    "ReLU6.max_val": (lambda: nn.Sequential(nn.ReLU6()), set_max_val),
}


@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_layer_setting_changed_after_the_first_call_plans_again(rextio, name):
    make, change = SETTINGS[name]
    torch.manual_seed(8)
    model = make().eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(3, 4) * 3
    assert_parity(fast(x), eager(model, x))
    change(model)
    with warnings.catch_warnings():
        # ReLU6 with another max_val is a Hardtanh the plan does not know: eager, warned.
        warnings.simplefilter("ignore", rextio.RextioFallbackWarning)
        try:
            got = fast(x)
        except rextio.CompileError:
            assert name == "ReLU6.max_val"
            return
    assert_parity(got, eager(model, x))


def test_a_member_layers_settings_are_guarded(rextio):
    import cache_fixture as fx

    torch.manual_seed(9)
    model = fx.Norm().eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(3, 4) * 2
    assert_parity(fast(x), eager(model, x))
    model.ln.eps = 4.0
    assert_parity(fast(x), eager(model, x))
    model.soft.dim = 0
    assert_parity(fast(x), eager(model, x))
    model.act.approximate = "tanh"
    assert_parity(fast(x), eager(model, x))
    assert_compiled(fast)


def test_an_inplace_activation_keeps_eagers_semantics(rextio):
    import cache_fixture as fx

    torch.manual_seed(10)
    model = fx.Inplace().eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(3, 4)
    assert_parity(fast(x), eager(model, x))
    model.act.inplace = True  # eager now writes `h`, which the forward reads again
    with pytest.raises(rextio.CompileError, match="inplace"):
        fast(x)
    lax = rextio.compile(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rextio.RextioFallbackWarning)
        assert_parity(lax(x), eager(model, x))
    # A Sequential whose first layer is in-place writes the caller's tensor in eager: eager.
    seq = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 4)).eval()
    with pytest.warns(rextio.RextioFallbackWarning, match="inplace"):
        fast = rextio.compile(seq)
    ours, theirs = x.clone(), x.clone()
    assert_parity(fast(ours), eager(seq, theirs))
    assert torch.equal(ours, theirs)
    # After a Linear an in-place activation writes only the Linear's result: compiled.
    seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True)).eval()
    fast = rextio.compile(seq, strict=True)
    before = x.clone()
    assert_parity(fast(x), eager(seq, x))
    assert torch.equal(x, before)


# -- attributes: bit for bit ----------------------------------------------------------------------

# Doubles that serde_json's default float parser reads one ulp off (found by a sweep of random
# doubles: about 3 in 10 are), and the edges of the format.
HARD_DOUBLES = [0.9424502837770503, 0.9351709187030793, 5e-324, 2.2250738585072014e-308,
                2.225073858507201e-308, 1.7976931348623157e308, 0.1, 1 / 3, -0.0, 0.0]


def bits(t: torch.Tensor) -> list:
    return [struct.pack("<d", float(v)) for v in t.double().flatten()]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_float_attributes_travel_bit_for_bit(rextio, dtype):
    import cache_fixture as fx

    rng = random.Random(31)
    values = HARD_DOUBLES + [rng.random() for _ in range(60)] + [
        struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(60)]
    model = fx.Gain(1.0).eval()
    fast = rextio.compile(model)
    x = torch.tensor([[1.0, -1.0], [3.0, 0.0]], dtype=dtype)
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rextio.RextioFallbackWarning)  # NaN, inf: eager
        for s in values:
            model.s = s
            got, want = fast(x), eager(model, x)
            if bits(got) != bits(want):
                wrong.append((s.hex(), got.tolist(), want.tolist()))
    assert not wrong, f"{len(wrong)} of {len(values)}: {wrong[:5]}"


def test_non_finite_float_attributes_run_eagerly_and_are_not_replanned_at_each_call(rextio):
    import cache_fixture as fx

    model = fx.Gain(float("nan")).eval()
    fast = rextio.compile(model)
    x = torch.ones(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rextio.RextioFallbackWarning)
        assert_parity(fast(x), eager(model, x))
        cache = fast._rextio_cache
        assert_parity(fast(x), eager(model, x))
        assert fast._rextio_cache is cache  # NaN is NaN: the plan stands
        for s in (float("inf"), float("-inf"), 2.0):
            model.s = s
            assert_parity(fast(x), eager(model, x))


def test_the_attribute_guard_compares_bits(rextio):
    import cache_fixture as fx

    model = fx.Gain(0.0).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.ones(2, 2)
    assert bits(fast(x)) == bits(eager(model, x))
    model.s = -0.0  # == 0.0, but another plan
    got = fast(x)
    assert bits(got) == bits(eager(model, x)) and math.copysign(1.0, got[0, 0].item()) == -1.0
    model.s = 0.0
    assert bits(fast(x)) == bits(eager(model, x))
    model.s = 1  # == 1.0 and == True, but of another type
    assert fast(x).dtype == eager(model, x).dtype


# -- names: any OrderedDict key ----------------------------------------------------------------------

NAMED = {
    "not identifiers": lambda: OrderedDict([("fc-1", nn.Linear(4, 4)), ("act 1", nn.ReLU()), ("2", nn.Linear(4, 3))]),
    "collide once flattened": lambda: OrderedDict([
        ("a_b", nn.Linear(4, 4)), ("a", nn.Sequential(OrderedDict([("b", nn.Linear(4, 4))]))), ("weight", nn.Tanh())]),
    "a newline in a name": lambda: OrderedDict([("x\ny", nn.Linear(4, 4)), ("z\rw", nn.LayerNorm(4))]),
}


@pytest.mark.parametrize("name", list(NAMED))
def test_layer_names_that_are_not_identifiers_compile(rextio, name):
    torch.manual_seed(11)
    model = nn.Sequential(NAMED[name]()).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(3, 4)
    assert_parity(fast(x), eager(model, x))
    assert_compiled(fast)
    assert rextio.explain(fast).status == "native"


def test_user_blocks_with_names_that_are_not_identifiers_compile(rextio):
    import cache_fixture as fx

    torch.manual_seed(12)
    b = fx.Block()
    model = nn.Sequential(OrderedDict([("blk-1", b), ("blk_1", fx.Block()), ("blk 1", b)])).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.randn(3, 4)
    assert_parity(fast(x), eager(model, x))
    assert_compiled(fast)


# -- found by the module fuzzer ----------------------------------------------------------------
# (seed 2026 program 19671: fixed when strided arguments kept their strides, docs/reliability.md)


def test_gelu_of_inf_on_a_strided_input_follows_eagers_loop(rextio):
    model = nn.Sequential(nn.GELU()).eval()
    fast = rextio.compile(model, strict=True)
    x = torch.full((8, 5), float("inf")).t()  # transposed: ATen's own GeluKernel, gelu(+inf) = +inf
    assert_parity(fast(x), eager(model, x))
