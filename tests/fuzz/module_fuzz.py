"""Differential fuzzing of `rextio_torch.compile(module)` against eager PyTorch.

Random `nn.Module` trees are compiled with ``rextio_torch.compile(model)`` (not strict: a
module that does not compile runs eagerly, which is correct and counted as such) and called
again and again while the fuzzer changes what a plan depends on; eager PyTorch on the same
module, at the same moment, is the oracle. Run it as a script::

    .venv/bin/python tests/fuzz/module_fuzz.py run -n 20000 --seed 1 [--jobs 2]
    .venv/bin/python tests/fuzz/module_fuzz.py show --seed 1 42   # one program, its steps

or import it (``tests/python/test_module_fuzz.py`` runs a small sample in process).

Programs
--------
A tree over one width ``d`` (every member maps ``(..., d)`` to ``(..., d)``), built from

- known layers with random settings: ``Linear`` (bias or not), ``ReLU``/``SiLU``/``ReLU6``
  (``inplace`` sometimes), ``Tanh``, ``Sigmoid``, ``GELU`` (both ``approximate``),
  ``Softmax`` (dim -1, 1 or 0), ``LayerNorm`` (random eps, affine or not), ``Dropout``,
  ``Identity``;
- containers: ``nn.Sequential`` of a list or of an ``OrderedDict`` whose names are not
  identifiers or collide once flattened (``fc-1``, ``a b``, ``a_b`` beside ``a`` -> ``b``),
  nested;
- the user modules of ``module_fuzz_blocks.py`` (unannotated forwards, inlined): a float or
  int attribute as a literal (``Gain``; random doubles: signed zeros, subnormals, the largest
  double, NaN, infinities, random bit patterns), a bool branch (``Residual``), a ModuleList
  loop (``Loop``), one member called twice (``Twice``), two members on one input (``Pair``),
  a parameter under two names (``Tied``), keyword-only arguments (``Top``);
- shared instances (a module already made is used again at another place, 25%) and tied
  weights (a ``Linear``'s weight set to an earlier one's, 15%).

Each program then runs 4 to 8 steps, each a call compared with eager, the first one as built
and each later one after a change: a layer setting (``eps``, ``dim``, ``approximate``,
``inplace``, ``max_val``, a bias added or removed), a float attribute (another random double,
a signed zero's sign flipped), a bool attribute, a layer replaced, two weights tied,
``train()`` then ``eval()`` (a training call is compared only where no Dropout draws), or
nothing. Every call has its own input (float32, sometimes float64; rank 2, sometimes 1 or 3;
contiguous, transposed, sliced or expanded), its keyword arguments (for ``Top``: ``scale`` a
random double or int, ``shift`` an int, sometimes ``2**63``), and a thread count of 1 to 3
(``torch.set_num_threads``, both sides).

Comparison and tolerances
-------------------------
Outcomes must agree in class: both return a tensor of the same dtype and shape, or both
raise the same exception type. Values: NaN positions and infinities exactly, every other
element within ``1e-4 * max(1, |eager|)`` (float32 chains of up to a dozen layers, a
LayerNorm's rescaling and a softmax included; the module tests' own parity bound is 1e-5 for
short chains), or else explained by conditioning (``conditioned``: the module run in float64
is the reference, and ours is within twice eager's own error of it plus the tolerance, in the
largest element; a layer norm of a nearly constant row, or a sum of huge terms that cancel,
amplifies a few ulps past any fixed bound; such calls are counted as explained, not as
agreeing); a program
whose every op rounds once, exactly (`EXACT`: ReLU, ReLU6, Dropout, Identity, `Gain`'s
product by a scalar, `Residual`'s sum, loops and repeated calls of those) must agree bit for
bit (tanh, sigmoid, GELU and SiLU are within a few ulps of ATen, docs/parity.md, so they go
by the tolerance). Inputs are made twice (once per side, the same values and layout), and
each side's input afterwards must equal the other's (an in-place layer on the input writes
both or neither). A mismatch is recorded with its program index and step
(``show`` prints them); a refusal to compile is no mismatch (it runs eagerly).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import math
import multiprocessing
import pathlib
import random
import struct
import sys
import time
import traceback
import warnings
from collections import OrderedDict

import torch
import torch.nn as nn

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import module_fuzz_blocks as blocks  # noqa: E402

RTOL = 1e-4
# Modules whose every op rounds once, exactly: such a program must agree bit for bit.
EXACT = (nn.ReLU, nn.ReLU6, nn.Dropout, nn.Identity, nn.Sequential, nn.ModuleList, blocks.Gain, blocks.Residual,
         blocks.Loop, blocks.Twice)
ODD_NAMES = ["fc-1", "a b", "a_b", "a", "b", "0", "x-y", "weight", "self", "h", "é", "fc\n2"]


def random_double(rng: random.Random) -> float | int:
    """A gain: mostly ordinary values, often the format's edges (module docstring)."""
    r = rng.random()
    if r < 0.45:
        return rng.uniform(-2.0, 2.0)
    if r < 0.55:
        return rng.choice([0.0, -0.0])
    if r < 0.62:
        return rng.choice([5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1e-45, 1.4e-45])
    if r < 0.67:
        return rng.choice([1.7976931348623157e308, -1e300, 3.4028235677973366e38, 3.5e38])
    if r < 0.72:
        return rng.choice([math.nan, math.inf, -math.inf])
    if r < 0.80:
        return rng.choice([0, 1, 2, -3, 7])  # an int attribute (a type change too)
    bits = rng.getrandbits(64)
    value = struct.unpack("<d", struct.pack("<Q", bits))[0]
    # Random bit patterns, kept mostly of moderate size so that products stay finite.
    return value if rng.random() < 0.3 or not math.isfinite(value) else math.ldexp(math.frexp(value)[0], rng.randint(-30, 3))


class Builder:
    """One program's module tree (module docstring), and what the steps may change."""

    def __init__(self, rng: random.Random, d: int) -> None:
        self.rng, self.d = rng, d
        self.made: list[nn.Module] = []
        self.linears: list[nn.Linear] = []
        self.depth = 0

    def leaf(self) -> nn.Module:
        rng, d = self.rng, self.d
        kind = rng.choice(["Linear", "Linear", "ReLU", "Tanh", "Sigmoid", "SiLU", "ReLU6", "GELU", "Softmax",
                           "LayerNorm", "Dropout", "Identity"])
        if kind == "Linear":
            layer = nn.Linear(d, d, bias=rng.random() < 0.7)
            with torch.no_grad():
                layer.weight.mul_(rng.choice([0.5, 1.0, 2.0]))
            if self.linears and rng.random() < 0.15:
                layer.weight = rng.choice(self.linears).weight  # tied
            self.linears.append(layer)
            return layer
        if kind in ("ReLU", "SiLU", "ReLU6"):
            return getattr(nn, kind)(inplace=rng.random() < 0.2)
        if kind == "GELU":
            return nn.GELU(approximate=rng.choice(["none", "tanh"]))
        if kind == "Softmax":
            return nn.Softmax(dim=rng.choice([-1, 1, 0]))
        if kind == "LayerNorm":
            return nn.LayerNorm(d, eps=rng.choice([1e-5, 1e-6, 1e-3, rng.uniform(1e-8, 1e-2)]),
                                elementwise_affine=rng.random() < 0.7)
        if kind == "Dropout":
            return nn.Dropout(rng.choice([0.0, 0.1, 0.5]))
        return getattr(nn, kind)()

    def node(self) -> nn.Module:
        """A member: reused (shared), a leaf, a container or a user block."""
        rng = self.rng
        if self.made and rng.random() < 0.25:
            return rng.choice(self.made)
        self.depth += 1
        try:
            r = rng.random() if self.depth < 4 else 0.0
            if r < 0.45:
                module = self.leaf()
            elif r < 0.6:
                module = self.sequential()
            else:
                kind = rng.choice(["Gain", "Residual", "Loop", "Twice", "Pair", "Tied"])
                if kind == "Gain":
                    module = blocks.Gain(self.node(), random_double(rng))
                elif kind == "Residual":
                    module = blocks.Residual(self.node(), rng.random() < 0.5)
                elif kind == "Loop":
                    items = [self.node() for _ in range(rng.randint(1, 3))]
                    if rng.random() < 0.4:
                        items.append(items[0])  # one instance, two items
                    module = blocks.Loop(items)
                elif kind == "Twice":
                    module = blocks.Twice(self.node())
                elif kind == "Pair":
                    a = self.node()
                    module = blocks.Pair(a, a if rng.random() < 0.4 else self.node())
                else:
                    module = blocks.Tied(nn.Parameter(torch.randn(self.d, self.d) * 0.5))
        finally:
            self.depth -= 1
        self.made.append(module)
        return module

    def sequential(self) -> nn.Sequential:
        rng = self.rng
        layers = [self.node() for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            names = rng.sample(ODD_NAMES, len(layers))
            return nn.Sequential(OrderedDict(zip(names, layers)))
        return nn.Sequential(*layers)

    def top(self) -> nn.Module:
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            # A Sequential of known layers only (compiled without source), sometimes nested
            # and with odd names.
            layers = [self.leaf() for _ in range(rng.randint(1, 5))]
            if rng.random() < 0.4 and len(layers) > 1:
                layers.append(rng.choice(layers))  # shared
            if rng.random() < 0.3:
                layers = [nn.Sequential(*layers[:2]), *layers[2:]]
            if rng.random() < 0.3:
                return nn.Sequential(OrderedDict(zip(rng.sample(ODD_NAMES, len(layers)), layers)))
            return nn.Sequential(*layers)
        if r < 0.55:
            return blocks.Top(self.node())
        if r < 0.75:
            return self.sequential()
        return self.node()


def build(seed: int, index: int) -> tuple[nn.Module, random.Random, int]:
    rng = random.Random(f"module-{seed}-{index}")
    torch.manual_seed(rng.getrandbits(31))
    d = rng.choice([3, 4, 8])
    model = Builder(rng, d).top().eval()
    return model, rng, d


def layers_of(model: nn.Module) -> list[nn.Module]:
    return list(model.modules())


def change(model: nn.Module, rng: random.Random, d: int) -> str:
    """One change of what a plan depends on (module docstring); what it was, in words."""
    parts = layers_of(model)
    r = rng.random()
    if r < 0.12:
        return "nothing"
    if r < 0.17:
        return "train"
    part = rng.choice(parts)
    if isinstance(part, nn.Linear):
        if rng.random() < 0.5:
            part.bias = None if part.bias is not None else nn.Parameter(torch.randn(part.out_features))
            return "bias toggled"
        others = [p for p in parts if isinstance(p, nn.Linear) and p is not part]
        if others:
            part.weight = rng.choice(others).weight
            return "weights tied"
        return "nothing"
    if isinstance(part, nn.LayerNorm):
        part.eps = rng.choice([1e-5, 0.5, 10.0, rng.uniform(1e-9, 1.0), 0.0])
        return f"eps={part.eps!r}"
    if isinstance(part, nn.Softmax):
        part.dim = rng.choice([-1, 0, 1])
        return f"dim={part.dim}"
    if isinstance(part, nn.GELU):
        part.approximate = "tanh" if part.approximate == "none" else "none"
        return f"approximate={part.approximate}"
    if isinstance(part, nn.ReLU6) and rng.random() < 0.3:
        part.max_val = rng.choice([3.0, 6.0])
        return f"max_val={part.max_val}"
    if isinstance(part, (nn.ReLU, nn.SiLU, nn.ReLU6)):
        part.inplace = not part.inplace
        return f"inplace={part.inplace}"
    if isinstance(part, blocks.Gain):
        if rng.random() < 0.3 and type(part.s) is float:
            part.s = -part.s  # 0.0 <-> -0.0 among others
        else:
            part.s = random_double(rng)
        return f"s={part.s!r}"
    if isinstance(part, blocks.Residual):
        part.skip = not part.skip
        return f"skip={part.skip}"
    if isinstance(part, nn.Sequential) and len(part):
        i = rng.randrange(len(part))
        part[i] = Builder(rng, d).leaf().eval()
        return f"layer {i} replaced"
    return "nothing"


def make_input(rng_seed: int, d: int, spec: tuple) -> torch.Tensor:
    """A fresh input of `spec` = (dtype, rank, layout, rows): the same values and strides
    each time it is made."""
    dtype, rank, layout, rows = spec
    g = torch.Generator().manual_seed(rng_seed)
    if layout == "transposed":
        base = (torch.randn(d, rows, generator=g) * 2).to(dtype).t()
    elif layout == "sliced":
        base = (torch.randn(rows, 2 * d, generator=g) * 2).to(dtype)[:, ::2]
    elif layout == "expanded":
        base = (torch.randn(1, d, generator=g) * 2).to(dtype).expand(rows, d)
    else:
        base = (torch.randn(rows, d, generator=g) * 2).to(dtype)
    if rank == 1:
        return base[-1]
    if rank == 3:
        return base.unsqueeze(0).expand(2, rows, d) if layout == "expanded" else torch.stack([base, -base])
    return base


def call_spec(rng: random.Random, model: nn.Module) -> tuple:
    dtype = torch.float64 if rng.random() < 0.08 else torch.float32
    rank = rng.choices([2, 1, 3], [0.8, 0.12, 0.08])[0]
    layout = rng.choice(["contiguous", "contiguous", "transposed", "sliced", "expanded"])
    rows = rng.choice([1, 2, 5])
    kwargs = {}
    if isinstance(model, blocks.Top):
        if rng.random() < 0.7:
            kwargs["scale"] = random_double(rng)
        if rng.random() < 0.4:
            kwargs["shift"] = rng.choice([0, 1, -5, 2**63, 2**31])
    return (dtype, rank, layout, rows), kwargs, rng.randint(1, 3), rng.getrandbits(31)


def outcome(fn, x, kwargs) -> tuple:
    try:
        with torch.no_grad():
            return ("value", fn(x, **kwargs))
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return ("raise", error)


def compare(ours: tuple, eager: tuple, exact: bool) -> tuple[str, str] | None:
    """None where they agree; else (kind, detail)."""
    if ours[0] != eager[0]:
        return ("outcome", f"ours {ours[0]} {ours[1]!r:.300}, eager {eager[0]} {eager[1]!r:.300}")
    if ours[0] == "raise":
        if type(ours[1]) is not type(eager[1]):
            return ("exception-class", f"ours {type(ours[1]).__name__}: {str(ours[1])[:300]}; "
                                       f"eager {type(eager[1]).__name__}: {str(eager[1])[:300]}")
        return None
    a, b = ours[1], eager[1]
    if not isinstance(a, torch.Tensor) or a.dtype != b.dtype or a.shape != b.shape:
        return ("type", f"ours {getattr(a, 'dtype', type(a))} {getattr(a, 'shape', '')}, eager {b.dtype} {b.shape}")
    a64, b64 = a.double(), b.double()
    nan = torch.isnan(b64)
    if not torch.equal(torch.isnan(a64), nan):
        return ("nan", f"NaN positions differ: ours {a.flatten()[:8].tolist()}, eager {b.flatten()[:8].tolist()}")
    inf = torch.isinf(b64)
    if not torch.equal(a64[inf], b64[inf]):
        return ("inf", "infinities differ")
    finite = ~(nan | inf)
    if exact:
        same = [struct.pack("<d", float(u)) for u in a64[finite]] == [struct.pack("<d", float(v)) for v in b64[finite]]
        if not same:
            return ("bits", f"elementwise program not bit for bit: ours {a.flatten()[:6].tolist()}, "
                            f"eager {b.flatten()[:6].tolist()}")
        return None
    diff = (a64[finite] - b64[finite]).abs()
    bound = RTOL * b64[finite].abs().clamp(min=1.0)
    if diff.numel() and bool((diff > bound).any()):
        worst = int((diff - bound).argmax())
        return ("value", f"difference {diff[worst].item():.3g} > bound {bound[worst].item():.3g}")
    return None


def exactly_rounded(model: nn.Module) -> bool:
    """Whether every op of the program rounds once, exactly (ReLU, ReLU6, a product by a
    scalar, a sum), so that the compiled result must be eager's bit for bit."""
    return all(isinstance(m, EXACT) for m in model.modules())


def conditioned(model: nn.Module, input_seed: int, d: int, spec: tuple, kwargs: dict,
                ours: torch.Tensor, eager: torch.Tensor) -> bool:
    """Whether a value difference over the tolerance is the problem's conditioning, not ours:
    the module run in float64 (a copy, the same input) is the reference, and ours is at least
    about as close to it as eager's float32 result is (within twice eager's largest error plus
    the tolerance, over the elements). A layer norm of a nearly constant row, or a sum of huge terms
    that cancel, amplifies a few ulps of an activation past any fixed tolerance; a wrong plan
    (a stale setting, a dropped call) is far from the reference where eager is near it."""
    import copy

    reference_model = copy.deepcopy(model).double()
    try:
        with torch.no_grad():
            reference = reference_model(make_input(input_seed, d, spec).double(), **kwargs)
    except Exception:  # noqa: BLE001 - no reference: not explained
        return False
    finite = torch.isfinite(reference) & torch.isfinite(ours.double()) & torch.isfinite(eager.double())
    if not bool(finite.any()):
        return False
    # Normwise: the rounding errors of an ill-conditioned result scatter over its elements.
    ours_error = (ours.double() - reference).abs()[finite].max()
    eager_error = (eager.double() - reference).abs()[finite].max()
    scale = reference.abs()[finite].clamp(min=1.0).max()
    return bool(ours_error <= 2 * eager_error + RTOL * scale)


def has_random_dropout(model: nn.Module) -> bool:
    return any(isinstance(m, nn.Dropout) and m.p > 0 for m in model.modules())


def fuzz_one(seed: int, index: int, trace: list | None = None) -> dict:
    """One program: its record (status `agree` or `mismatch`, the compiled calls, the first
    mismatch's kind, step and detail)."""
    import rextio_torch

    model, rng, d = build(seed, index)
    record = {"index": index, "status": "agree", "kind": "", "detail": "", "step": -1, "calls": 0,
              "compiled": False, "steps": [], "explained": 0}
    threads = torch.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fast = rextio_torch.compile(model)
        except Exception as error:  # noqa: BLE001 - compile never raises unless strict
            record.update(status="mismatch", kind="compile-raised", detail=f"{type(error).__name__}: {error}"[:500])
            return record
        try:
            for step in range(rng.randint(4, 8)):
                what = "as built" if step == 0 else change(model, rng, d)
                training = what == "train"
                if training:
                    model.train()
                spec, kwargs, nthreads, input_seed = call_spec(rng, model)
                record["steps"].append(f"{what}; input {spec}, kwargs {kwargs}, threads {nthreads}")
                if trace is not None:
                    trace.append(f"{record['steps'][-1]}\n{model!r}")
                if training and has_random_dropout(model):
                    model.eval()
                    continue
                torch.set_num_threads(nthreads)
                x_eager, x_ours = make_input(input_seed, d, spec), make_input(input_seed, d, spec)
                eager = outcome(model, x_eager, kwargs)
                ours = outcome(fast, x_ours, kwargs)
                torch.set_num_threads(threads)
                record["calls"] += 1
                problem = compare(ours, eager, exact=exactly_rounded(model))
                if problem is not None and problem[0] == "value" and conditioned(model, input_seed, d, spec, kwargs,
                                                                                 ours[1], eager[1]):
                    record["explained"] += 1
                    problem = None
                if problem is None and not torch.equal(torch.nan_to_num(x_ours), torch.nan_to_num(x_eager)):
                    problem = ("input", "the inputs differ after the calls (one side wrote its input)")
                if problem is not None:
                    record.update(status="mismatch", kind=problem[0], detail=problem[1], step=step)
                    break
                if training:
                    model.eval()
        except Exception as error:  # noqa: BLE001 - a fuzzer failure is reported, never hidden
            record.update(status="mismatch", kind="harness", detail=traceback.format_exc()[-800:])
            del error
        finally:
            torch.set_num_threads(threads)
        record["compiled"] = any(type(v).__name__ == "CompiledFunction" for v in fast.signatures.values())
    return record


class Summary:
    def __init__(self) -> None:
        self.programs = self.calls = self.compiled = self.explained = 0
        self.status: collections.Counter = collections.Counter()
        self.kinds: collections.Counter = collections.Counter()
        self.mismatches: list[dict] = []

    def add(self, rec: dict) -> None:
        self.programs += 1
        self.calls += rec["calls"]
        self.compiled += rec["compiled"]
        self.explained += rec["explained"]
        self.status[rec["status"]] += 1
        if rec["status"] == "mismatch":
            self.kinds[rec["kind"]] += 1
            self.mismatches.append(rec)

    def text(self, seed: int) -> str:
        lines = [f"module_fuzz seed {seed}: {self.programs} programs, {self.calls} calls compared, "
                 f"{self.compiled} programs with a compiled signature, {self.status['mismatch']} mismatches "
                 f"({self.explained} calls over the tolerance explained by conditioning)"]
        for kind, n in self.kinds.most_common():
            lines.append(f"  {kind}: {n}")
        for rec in self.mismatches[:20]:
            lines.append(f"  program {rec['index']} step {rec['step']}: {rec['kind']}: {rec['detail'][:300]}")
        return "\n".join(lines)


def _worker(args: tuple) -> list[dict]:
    seed, indices = args
    torch.set_num_threads(1)
    return [fuzz_one(seed, i) for i in indices]


def run(n: int, seed: int, jobs: int, start: int = 0) -> Summary:
    summary = Summary()
    began = time.time()
    chunks = [(seed, list(range(i, min(i + 50, start + n)))) for i in range(start, start + n, 50)]
    if jobs > 1:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            results = pool.imap(_worker, chunks)
            for done, recs in enumerate(results):
                for rec in recs:
                    summary.add(rec)
                if done % 20 == 0:
                    print(f"  {summary.programs} programs, {summary.status['mismatch']} mismatches, "
                          f"{time.time() - began:.0f}s", flush=True)
    else:
        torch.set_num_threads(1)
        for _, indices in chunks:
            for i in indices:
                summary.add(fuzz_one(seed, i))
            if summary.programs % 1000 == 0:
                print(f"  {summary.programs} programs, {summary.status['mismatch']} mismatches, "
                      f"{time.time() - began:.0f}s", flush=True)
    print(f"{time.time() - began:.0f}s")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="n programs from a seed")
    r.add_argument("-n", type=int, default=1000)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--start", type=int, default=0)
    r.add_argument("--jobs", type=int, default=1)
    s = sub.add_parser("show", help="one program: its module, steps and outcome")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("index", type=int)
    args = parser.parse_args(argv)
    if args.command == "show":
        model, _, d = build(args.seed, args.index)
        print(f"d={d}\n{model!r}")
        trace: list = []
        rec = fuzz_one(args.seed, args.index, trace)
        for i, line in enumerate(trace):
            print(f"step {i}: {line}")
        print(f"{rec['status']} {rec['kind']} (step {rec['step']}): {rec['detail']}")
        return 0
    summary = run(args.n, args.seed, args.jobs, args.start)
    print(summary.text(args.seed))
    return 1 if summary.status["mismatch"] else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
