"""The two surfaces (issue 18 item 1) and negative dims, the first extension outside the op
table: `compile`, `explain` and `check` take `surface=` ("extended" by default, or
"reference"); each dim=-1 op matches eager on rank 1 and 2, NaN and infinities included,
and the reference surface keeps an extension's function on Python as the reference does."""

import pickle

import pytest
import torch

import negative_dims_fixture as fx
from conftest import assert_parity

# (function, rank of its input)
NEGATIVE_DIM_FUNCTIONS = [
    ("sum_last", 2), ("sum_first", 2), ("sum_vector", 1),
    ("mean_last_keepdim", 2), ("mean_last", 2), ("mean_vector", 1),
    ("softmax_last", 2), ("softmax_first", 2), ("softmax_vector", 1),
    ("functional_softmax_last", 2), ("functional_softmax_vector", 1),
    ("argmax_last", 2), ("argmax_first", 2), ("argmax_vector", 1),
]


def is_compiled(fn):
    return type(fn).__name__ in ("CompiledFunction", "AotFunction")


def inputs(rank, seed):
    """Plain values, then values with NaN, +inf and -inf in them (and a row of infinities)."""
    g = torch.Generator().manual_seed(seed)
    shape = (4, 5) if rank == 2 else (7,)
    plain = torch.randn(*shape, generator=g)
    special = plain.clone().reshape(-1)
    special[1], special[3], special[4] = float("nan"), float("inf"), float("-inf")
    special = special.reshape(shape)
    if rank == 2:
        special[2] = float("inf")
    big = plain * 1e30
    return [plain, special, big]


@pytest.mark.parametrize("name,rank", NEGATIVE_DIM_FUNCTIONS)
def test_a_negative_dim_matches_eager(rextio, name, rank):
    fn = getattr(fx, name)
    compiled = rextio.compile(fn, strict=True)
    assert is_compiled(compiled)
    for seed, x in enumerate(inputs(rank, seed=len(name))):
        assert_parity(compiled(x), fn(x))


@pytest.mark.parametrize("name,rank", NEGATIVE_DIM_FUNCTIONS)
def test_the_reference_surface_keeps_a_negative_dim_on_python(rextio, name, rank):
    fn = getattr(fx, name)
    with pytest.raises(rextio.CompileError, match=r"requires literal dim=0 or dim=1; got dim=-[12]"):
        rextio.compile(fn, strict=True, surface="reference")
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = rextio.compile(fn, surface="reference")
    assert not is_compiled(kept) and kept.__wrapped__ is fn
    x = inputs(rank, seed=1)[0]
    assert_parity(kept(x), fn(x))


def test_an_out_of_range_dim_is_rejected_naming_the_dim_and_the_rank(rextio):
    with pytest.raises(rextio.CompileError, match=r"sum dim=2 is out of range for a rank-2 input "
                                                  r"\(expected a dim in \[-2, 1\]\)"):
        rextio.compile(fx.out_of_range, strict=True)
    # Eager agrees that there is no such dim.
    with pytest.raises(IndexError, match="Dimension out of range"):
        fx.out_of_range(torch.ones(2, 3))


def test_the_reference_surface_refuses_an_extension_spelling(rextio):
    assert is_compiled(rextio.compile(fx.silu_softmax, strict=True))
    with pytest.raises(rextio.CompileError, match="silu"):
        rextio.compile(fx.silu_softmax, strict=True, surface="reference")


def test_the_decorator_takes_surface(rextio):
    decorate = rextio.compile(surface="reference")
    with pytest.warns(rextio.RextioFallbackWarning):
        kept = decorate(fx.softmax_last)
    assert not is_compiled(kept)
    assert is_compiled(rextio.compile(surface="extended", strict=True)(fx.softmax_last))


@pytest.mark.parametrize("call", [
    lambda rx: rx.compile(fx.sum_last, surface="Reference"),
    lambda rx: rx.compile(surface="ref"),
    lambda rx: rx.explain(fx.sum_last, surface=None),
    lambda rx: rx.check(fx.__file__, surface="all"),
])
def test_an_unknown_surface_is_a_value_error_naming_the_surfaces(rextio, call):
    with pytest.raises(ValueError, match="surface must be one of 'extended', 'reference', got"):
        call(rextio)


def test_explain_says_which_surface_decided(rextio):
    extended = rextio.explain(fx.sum_last)
    assert extended.surface == "extended" and extended.compiles
    assert "\nsurface: extended\n" in str(extended)
    reference = rextio.explain(fx.sum_last, surface="reference")
    assert reference.surface == "reference" and not reference.compiles
    assert "\nsurface: reference\n" in str(reference)
    assert reference.rejected[0].code == "RXTP-TORCH-013"


def test_check_takes_surface(rextio):
    by_name = {f["name"]: f for f in rextio.check(fx.__file__)["functions"]}
    assert rextio.check(fx.__file__)["surface"] == "extended"
    assert by_name["sum_last"]["status"] == "native"
    assert by_name["out_of_range"]["status"] == "fallback"
    reference = rextio.check(fx.__file__, surface="reference")
    assert reference["surface"] == "reference"
    assert {f["status"] for f in reference["functions"]} == {"fallback"}


SOURCE = """\
from rextio_torch.types import TensorF32Cpu2D, TensorF32Cpu1D


def surface_head(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.relu().sum(dim=1)
"""


def test_a_pickle_keeps_the_surface(rextio):
    namespace = {"__name__": "pickled_surface"}
    exec(compile(SOURCE, "<surface pickle>", "exec"), namespace)
    compiled = rextio.compile(namespace["surface_head"], source=SOURCE, strict=True, surface="reference")
    assert compiled.__rextio_pickle__["surface"] == "reference"
    loaded = pickle.loads(pickle.dumps(compiled))
    assert loaded.__rextio_pickle__["surface"] == "reference"
    x = torch.randn(3, 4)
    assert_parity(loaded(x), namespace["surface_head"](x))
    # The same source under the other surface is another load, not the cached one.
    extended = rextio.compile(namespace["surface_head"], source=SOURCE, strict=True)
    assert pickle.loads(pickle.dumps(extended)) is not loaded
