"""Differential fuzzing of rextio-torch against eager PyTorch.

Random programs over the whole compiled surface (README, "What is compiled") are compiled
with ``rextio_torch.compile(fn, source=src, strict=True)`` and called on random inputs; the
Python original, run eagerly, is the oracle. Run it as a script::

    .venv/bin/python tests/fuzz/difffuzz.py -n 1000 --seed 1 [--jobs 2] [--write-fixtures]
    make fuzz N=1000 SEED=1
    .venv/bin/python tests/fuzz/difffuzz.py run -n 30000 --seed 4 --lanes rank3,f64,bf16  # those kinds only
    .venv/bin/python tests/fuzz/difffuzz.py run -n 20000 --seed 21 --lanes rank0  # rank-0 programs only
    .venv/bin/python tests/fuzz/difffuzz.py run -n 12000 --seed 3 --lanes fused  # the fusion patterns only
    .venv/bin/python tests/fuzz/difffuzz.py envcheck -n 3000 --seed 7 --lane bf16  # the oracle alone
    .venv/bin/python tests/fuzz/difffuzz.py opcheck -n 500  # each float64/bfloat16/rank-3 op's envelope

or import it (``tests/python/test_difffuzz.py`` runs a few hundred programs in process and
replays every fixture of ``tests/fuzz/fixtures/``).

Programs
--------
One function ``f`` per program, its parameters annotated with rextio_torch markers
(``TensorF32Cpu2D`` M, ``TensorF32Cpu1D`` V, ``TensorI64Cpu1D`` ids, ``int``, ``float``,
``bool``), returning M, V, ``TensorI64Cpu1D`` (argmax labels, max/min indices), ``int``,
``float`` or ``bool``. Tensor expressions are
built for a symbolic shape (dimension symbols B, D0..D3 and the literal 1 of a keepdim
result), so most programs run; they cover ``F.linear`` with and without bias (three
spellings), every activation as a method and as a function (``torch.*``, ``F.relu``,
``F.gelu`` exact and ``approximate='tanh'``, ``F.silu``, ``F.relu6``; with literal
parameters ``F.leaky_relu``, ``F.elu``, ``F.hardtanh``, ``torch.clamp``/``clip`` and their
methods), ``+ - * /`` as operators and ``torch.add/sub/mul/div`` with rank-2/rank-1 and
keepdim broadcasts, ``+ - * /`` of a tensor with a Python int or float in either order (literals
including -0.0, 1e-40 and 1e300, scalar variables and scalar expressions), ``@``/``torch.matmul``/``.matmul`` (2-2, 2-1, 1-2), ``mean``/``sum`` and
``amax``/``amin`` over literal dims (negative ones too for the extrema) with and without keepdim,
``softmax``, ``log_softmax`` and ``argmax`` in their claimed forms, the views (``.t()``,
``.T``, ``transpose`` with negative dims too, ``unsqueeze``/``squeeze`` of a size-1 dim,
``flatten``, ``reshape``/``view`` with sizes read from ``x.shape[i]``/``x.size(i)``/
``x.size()[i]`` or -1, methods and ``torch.*``), elementwise selection and powers
(``torch.maximum``/``minimum`` and the methods, broadcasting a vector too;
``torch.where``/``a.where`` of a comparison written in the call, tensor or scalar sides and
branches; ``x ** p``, ``x.pow(p)``, ``torch.pow`` for p in 2, 3, 0.5, -1, 4, 1.5), the
joins, layers and dim ops (``torch.cat``/``concat``/``concatenate`` of two or three parts,
list or tuple, dim 0 or 1 or negative, and ``torch.stack`` of vectors, each reduced over the
joined dim, whose size no symbol names, or a one-part ``cat`` anywhere; ``F.layer_norm`` over
the last dim with its size read from a tensor, weight and bias both or neither (positional
or by keyword), an eps sometimes; ``F.normalize`` with p 2 or 1, literal dims and eps; ``F.dropout`` with
``training=False``; ``zeros_like``/``ones_like``/``full_like`` of a literal, including
1e300, or a scalar parameter; ``index_select`` over either dim and ``F.embedding`` with
``TensorI64Cpu1D`` ids parameters; ``max``/``min`` along a dim read as ``.values``/``[0]``
and, as a label result, ``.indices``/``[1]``), and
the fusion patterns (``x @ w + b``, ``torch.matmul(x, w) + b``, ``(x - mean) / scale`` before a
linear, softmax/log_softmax/argmax tails, two-layer heads). About half the programs have scalar control
flow: ``for`` over ``range(...)`` (literal steps) and literal int lists, ``while``,
``if``/``elif``/``else``, ``break``/``continue`` inside ``if``, nested loops, early returns in
loops, int/float accumulators, swaps through temporaries (``a, b = b, a`` is refused by the
claim rules), one value under two names, identical expressions repeated in a loop body,
chained comparisons whose later operands can fail (``0 < n < 10 % n``), int products that
overflow 64 bits, and ``math.sqrt/exp/log/tanh/fabs`` of float and int expressions (CPython's
domain and range errors included). A program the compiler refuses (``CompileError``) is counted as refused,
with its first diagnostic as the reason, never as a mismatch.

Program kinds (lanes). Each program seed draws a kind from a stream of its own
(``program_lane``: the ``LANES`` shares), so the float32 program of a seed is the one it was
before the other kinds existed:

- ``f32`` (50%): the float32 rank-1/2 programs above.
- ``rank0`` (10%, ``Rank0Generator``; 2026-12-03): a seed whose lane is ``f32`` is a rank-0
  program with chance 1/7, drawn from a stream of its own again (``RANK0_SHARE``), so every
  other ``f32`` seed keeps its program. The float32 programs with whole-tensor reductions as
  values: ``x.sum()``, ``x.mean()``, ``x.max()``, ``x.min()``, ``x.amax()``, ``x.amin()`` and
  ``torch.sum(x)`` ... ``torch.amin(x)`` of rank-1/2 expressions, in ``+ - * /`` with tensors
  (``x / x.sum()``, ``x.max() - x``), Python scalars and each other, under unary ops (method
  or ``torch.*``; a method of a parenthesized operation is refused, RXT030, so those use the
  function); ``.item()``/``float(...)`` of them in float code (accumulators, comparisons,
  returned floats, ``if h.amax().item() > s: break`` in loops), 6% of them of a tensor that
  may have more than one element (both sides raise); a comparison with a tensor side and a
  tensor or Python number other side as the whole test of an ``if``/``elif``/``while`` (a
  ``while`` on one bounded by a counter and ``break``), a quarter of these tests under
  ``not`` or ``and``/``or`` with another one or a Python bool (claimed since 82a281f), 6% of
  the comparisons of a tensor that may have more than one element; ``TensorF32Cpu0D`` parameters (``p<n>``) and results (12%), and
  float results more often than int/bool/labels. Stacks of rank-0 tensors (2026-12-03,
  dde014d), drawn from a stream of the seed's own (``xrng``, "rank0x-<seed>", which also
  writes the whole form, so a seed whose draws all say no keeps its program): 12% of the
  rank-0 expressions are ``torch.stack`` of one to four rank-0 parts (whole reductions,
  rank-0 parameters, their arithmetic) into a vector, dim 0 or -1 or none, list or tuple
  display, under a softmax/log_softmax/unary op or a scalar product sometimes, reduced whole
  (``torch.stack([x.sum(), x.amax(), p3]).amin()``); a vector of the literal size 1 is a
  one-part stack 12% of the time, and a vector result a stack (of any length) 24% of the time;
  3% of the stacks are ``torch.cat`` of the parts instead, which the compiler refuses
  (RXTP-TORCH-080) as eager raises.
- ``fused`` (10%, ``FusedGenerator``; 2026-12-03): a seed whose lane is ``f32`` and that is not
  rank 0 is a fused program with chance 1/6, drawn from a stream of its own again
  (``FUSED_SHARE``), so every other ``f32`` seed keeps its program. The float32 programs
  with the patterns of the residual and row-normalization fusions (2223a62, f02982a)
  written often: a linear's input (45%; a product's left operand, 22%) is
  ``F.layer_norm(x, ...)`` in any of its spellings, its only user, so the fused op
  normalizes the rows itself (float64 moments, not eager's bits: its envelope is
  ``layer_norm``'s, rule 4); a linear or product (45%) gets a rank-2 tensor added on either
  side (``r + F.linear(h, w, b)``, ``h @ w + b + r``, ``torch.add(r, ...)``), after an
  activation 30% of the time (``F.linear(h, w).relu() + r``), a fifth of them of a
  broadcast shape with a size-1 dim (the fused op then leaves the addition to eager's); a
  matrix expression is a linear or product outright 20% of the time, and matrix results
  are more common and often such a block, so the blocks are live (an unread linear that may
  raise stays unfused). ``run`` counts the programs whose optimized IR
  (``rextio_torch.explain``) holds ``residual=``, ``norm=layer_norm``, ``fused_attention`` or
  ``bmm`` (``FUSION_MARKS``), by kind and outcome.
- ``rank3`` (10%, ``Rank3Generator``): ``TensorF32Cpu3D`` parameters and results of shape
  (B, Di, Dj) (results are rank 3 mostly, else a matrix or vector reshaped from rank 3),
  rank-3 locals carried through the control flow, over what the rank-3 lane claims: batched
  ``T @ T`` (a batch of one broadcast against a batch too), ``T @ M`` and ``M @ T`` as ``@``,
  ``torch.matmul`` and ``.matmul``, a bias added sometimes; ``F.linear`` of a rank-3 input
  (three bias spellings, or ``+ b``); attention, ``softmax(q @ k.transpose(-2, -1) /
  math.sqrt(q.shape[-1]), dim=-1) @ v`` with ``* (1.0 / math.sqrt(d))``, ``* 0.125``,
  ``/ 2.0``, ``torch.matmul``, ``dim=2`` and a log_softmax variant (2026-12-03: the
  compiler fuses the softmax variant into one ``fused_attention`` op, 75c414b, whose
  products are not eager's bits, so the envelope judges it; 30% of the attentions, drawn
  from a stream of the seed's own, ``xrng``, take another scale of ``ATTENTION_SCALES``:
  none, an int size, ``* 3``, ``/ 8``, ``* math.sqrt(d)``, ``/ 0.0``, ``* 0.0``, ``* 1e30``,
  ``/ 1e-40``); ``torch.bmm(a, b)`` and ``a.bmm(b)`` (398f75f; 35% of the batched ``T @ T``
  of equal batches, from ``xrng``, and 10% of the batch-of-one ones, where
  eager's bmm raises unless B is 1: both sides must raise; the draws of the other stream
  stay as they were, so a program changes only on the lines ``xrng`` rewrites); ``+ - * /`` and
  ``torch.add/sub/mul/div`` with a rank-3, matrix, vector or size-1 (keepdim-shaped) operand
  in either order, and Python scalars; the activations and scalar-parameter ops of the float32
  generator and ``F.dropout(training=False)``; softmax/log_softmax over every dim in
  ``[-3, 2]``; ``transpose`` of adjacent dims in each spelling; ``reshape``/``view``/
  ``torch.reshape`` to rank 3 (sizes ``x.shape[i]``, ``x.size(i)``, products of them, or -1)
  from the same shape, from a reordering of it (a reshape that is no transpose), from a
  matrix of merged rows (dimension symbol ``B*D0``: ``x.reshape(-1, x.shape[-1])``) or of
  merged columns, or from a vector, and from rank 3 to a matrix or vector, so that the float32
  rank-1/2 surface (the fused kernels, ``linear``, the reductions) runs between rank-3 ops.
  Joins (2026-12-03, dde014d), from a third stream (``jrng``, "rank3j-<seed>", which writes the
  whole form, parts included, with no bmm or scale draws of ``xrng`` inside; a seed whose
  draws all say no keeps its program): 10% of the rank-3 expressions are a join form
  (``Rank3Generator.join3``): ``torch.cat``/``concat``/``concatenate`` of two or three rank-3
  parts along any dim (0..2 and -3..-1), or ``torch.stack`` of two or three matrices into
  rank 3 (dims 0..2 and -3..-1), list or tuple display, dim by keyword or position. The joined
  dim's size has no symbol, so the form uses it up: a batched product contracting it
  (``torch.cat([a, b], dim=2) @ torch.cat([c, d], dim=-2)``), ``F.linear`` of a last-dim cat
  with a ``torch.cat`` of weight columns, an attention over keys and values concatenated along
  their rows, ``torch.stack([.., ..], dim=-1) @ torch.stack([.., ..], dim=1)``, or the join
  (after a softmax/log_softmax over the joined dim sometimes) reshaped to rows of its last dim
  and reduced over them (``.reshape(-1, x.shape[-1]).amax(0)``), a vector combined with a
  rank-3 expression.
- ``f64`` and ``bf16`` (10% each, ``DtypeGenerator``): every tensor ``TensorF64Cpu1D/2D``
  or ``TensorBF16Cpu1D/2D`` (int64 argmax labels as results too), over the ops those lanes
  claim: ``F.linear`` (bias spellings, the prologue, two-layer heads), ``@``/``torch.matmul``
  (2-2, 2-1, 1-2, ``+ b``), ``+ - * /`` with broadcasts and Python scalars (1e300 and 1e-40
  too), the activations of the op table (``relu``, ``relu6``, ``gelu`` both ways, ``silu``,
  ``sigmoid``, ``tanh``, ``exp``, ``log``, ``sqrt``, ``rsqrt``, ``abs``, ``neg``,
  ``square``), softmax/log_softmax, ``sum``/``mean``/``amax``/``amin`` and ``argmax`` along a
  dim, the views and ``F.layer_norm``; the float32 generator's shapes, control flow and
  scalars. Selection, joins, fills, scalar-parameter ops and ``max``/``min`` along a dim are
  refused at these dtypes and left out.
  Ranks 0 and 3 (2026-12-03: ``TensorF64Cpu0D/3D``, ``TensorBF16Cpu0D/3D``): a seed of these
  lanes is a rank-0 program with chance ``DTYPE_RANK0_SHARE`` (20%) and a rank-3 one with
  ``DTYPE_RANK3_SHARE`` (20%), drawn from a stream of its own (``dtype_rank``, "dtype-rank-
  <seed>"), so every other seed of these lanes keeps its rank-1/2 program: the ``rank0`` and
  ``rank3`` generators with the dtype's markers for every tensor (``DtypeRank0Generator``,
  ``DtypeRank3Generator``; the imports name the dtype's four markers) and this generator's
  ops for their rank-1/2 subexpressions; no stacks, joins or dropout (refused at these
  dtypes). The summary counts them apart (``f64/r0`` ... ``bf16/r3``), as it does the rank-0
  programs with a stack (``rank0/stack``) and the rank-3 ones with a join (``rank3/join``).

Inputs
------
Random sizes per dimension symbol (1-row and size-1 dimensions often, zero-size ones
sometimes, a few long ones up to 300 for the other kernel paths; 3% of cases make one argument's
size disagree, so both sides must raise), values N(0, 1) (weights scaled by 1/sqrt(in)),
small integers (ties and exact zeros), or either with NaN, +-inf, -0.0, +-1e30, +-3e38,
1e-38, 1e-40 and 1e-45 (subnormal) mixed in; int64 ids drawn in ``[0, size)`` of the dim
they index (4% of them with one id out of range, -1 or the size, so eager's errors are
compared too; every id is out of range of an empty dim); sometimes a column-major view, sometimes one
tensor object passed for two parameters of the same shape. Scalars: ints
including negatives and 0 (loop bounds stay small, other ints reach +-2**62 and the i64
limits), floats including -0.0, +-1e308, inf and NaN, both bools.

The other lanes' tensors are made at their dtype and rank (``make_tensor``): smaller sizes
(``choose_sizes_ext``: batches up to 5, dims up to 17, zero-size ones sometimes, one dim of
64 or 130 now and then), a rank-3 argument with its last two dims column-major 5% of the time; float64
values drawn in float64 with float64's specials (1e300, -1e300, the largest finite,
subnormals 1e-310 and 5e-324, 1e-300) besides NaN, the infinities, the zeros and float32's
extremes; bfloat16 values drawn in float32 and rounded, with specials bfloat16 represents
(its largest finite 3.3895e38, its least normal 2^-126 and subnormal 2^-133, 1e30 as
bfloat16 rounds it, -2^-7, 256).

Oracle: the comparison rules
----------------------------
Each case runs the original Python function eagerly (``torch.no_grad()``, one thread) and the
compiled one, each on its own clones of the same arguments.

1. Exceptions. If both raise, the types must be equal, except that an error of ours worded
   ``rextio-torch: ...`` (our argument checks) only needs eager to raise too. If only eager
   raises, that is a mismatch, unless it is eager's ``view`` error on a column-major argument
   and eager on dense copies of the arguments does not raise (docs/views.md: arguments are
   made dense when the call starts). If only ours raises, it is a mismatch unless explained by a
   documented difference: ``OverflowError`` where the original, re-run with every int
   ``+ - * %`` and unary minus checked against 64 bits, raises ``OverflowError`` as well
   (README: an int that leaves 64 bits raises instead of wrapping); ``RuntimeError`` from
   ``squeeze(d)`` of a dim whose size is not 1 (docs/views.md: eager returns the tensor
   unchanged, a rank the compiled type cannot follow).
2. Results must have eager's Python type; tensors eager's dtype and shape.
3. Ints and bools must be equal; floats equal bit for bit (NaN equals NaN): scalar arithmetic
   is IEEE double on both sides.
4. Float tensors, elementwise. An element equal to eager's bits, or within 4 ulps of it with
   the same class (NaN, +inf, -inf, finite) and, for zeros, the same sign, is accepted at
   once (float32 and float64 ulps; for bfloat16 only eager's bits: its ulp is 2^16 float32
   ulps, and the envelope decides). Otherwise it must lie in the *envelope* ``S`` of that element: the set of values a
   float32 evaluation of the program may produce on these float32 inputs (float64 and
   bfloat16 programs: of their dtype, see the bullet on them below), computed by running
   the Python original on interval values (``Iv``) in float64 -- the original function's code
   with ``torch`` and ``F`` bound to an interval implementation of the surface. ``S`` is an
   interval ``[lo, hi]`` over the extended reals plus two flags, "may be NaN" and "may be a
   number". Each op maps its operands' intervals to the exact image (monotone pieces,
   ``abs``/``square``/``gelu`` exactly, division by an interval holding 0 to everything), then
   widens by the float32 rounding of that op:

   - a Python scalar operand is the float32 value eager casts it to (an int directly, a float
     through its double), exactly; ``s / x`` is eager's ``reciprocal(x) * s``, two ops;
   - elementwise ``+ - * /``, ``relu``, ``relu6``, ``abs``, ``neg``, ``square``: 1 ulp; ``exp``,
     ``sigmoid``, ``tanh``, ``log``, ``sqrt``: 4 ulps plus 2^-126 absolute (float32 sigmoid is
     0 below -88.7, as ATen's formula gives); ``gelu``: 4 ulps plus ``4e-7 * max(1, |x|)``
     (ATen's own GELU error, docs/parity.md); GELU tanh: 4 ulps plus ``3e-7 * max(1, |x|)``
     (our tanh against Sleef's where ``1 + tanh`` cancels); ``silu``: 4 ulps plus 2^-121 absolute (float32
     ``x / (1 + e^-x)`` is -0 below -88.7, where the exact value is about -2.6e-37);
     ``rsqrt``: 4 ulps plus 2^-126 absolute (``1 / sqrt(x)``; NaN below zero, and an interval
     reaching zero opens to both infinities: ``rsqrt(-0.0)`` is -inf);
   - a dot product (``linear``, ``matmul``) or a ``sum`` over n terms: the sum of the terms'
     intervals, widened by ``2 * sqrt(n + 1) * eps * sum_k |term_k|`` plus ``(n + 1) * 2^-149``
     (the probabilistic rounding bound of docs/parity.md, which holds for any summation
     order); ``mean``: that divided by n, plus 1 ulp; the mean of nothing is NaN;
   - ``softmax``: per element ``[1 / (1 + sum_{j != i} e^(hi_j - lo_i)),
     1 / (1 + sum_{j != i} e^(lo_j - hi_i))]``, widened by ``(8 + 2 sqrt(n + 1))`` ulps plus
     4 * 2^-149, and for a small probability p by ``eps * |ln p| * p`` (its exponent
     ``x_i - max``, about ``ln p``, is rounded at its own magnitude);
   - ``log_softmax``: per element ``[lo_i - LSE(hi), hi_i - LSE(lo)]`` (``LSE`` the
     log-sum-exp of the line), widened by ``(4 + 2 sqrt(n + 1))`` ulps of its magnitude plus
     that many ulps of 1 (the log of a sum of at least 1 has that absolute error) plus 2 ulps
     of ``|LSE|`` (ATen subtracts ``max + log(sum)``, one value rounded at that magnitude);
   - ``amax``/``amin``: ``[max lo, max hi]`` (``min`` alike) over the line, exactly (no
     rounding); an empty line is an error, as in eager;
   - views move the parts (``lo``, ``hi`` and the flags) as eager moves the values;
     ``maximum``/``minimum``: ``[max(lo_a, lo_b), max(hi_a, hi_b)]``, NaN if either may be,
     exactly; ``where``: each comparison is evaluated on the envelopes as "may be true" /
     "may be false" (a side that may be NaN makes it false, true for ``!=``; a float side is
     eager's float32 value), and the result is the chosen branch where the comparison is sure,
     the hull of both branches where it is not, exactly; ``x ** p``: the hull of ATen's float64
     ``pow`` at the ends and, for an interval holding zero, at +0 and -0 (NaN where a value
     is), widened by 4 ulps plus 2^-126;
   - ``max``/``min`` along a dim: the values as ``amax``/``amin``; the indices as argmax
     labels (rule 5), of the negated envelope for ``min``; ``cat``/``stack``/
     ``index_select``/``embedding``/``dropout`` move the parts (ids are exact), the fills are
     the fill's float32 value, exactly;
   - ``normalize``: ``x / clamp_min(norm, eps)`` with the norm the float32 sum (as above) of
     ``|x|`` or ``x^2`` and for p = 2 its ``sqrt`` (4 ulps; a one-element line's norm is its
     magnitude, exactly, as ATen's is), then the division (1 ulp);
   - ``layer_norm``: where the line is certainly finite with M <= 1e15 (M its largest
     magnitude), the quotient of the exact ``x_i - mean`` and ``sqrt(var + eps)`` over the
     line's intervals (centres plus at most the widest half-width W: ``+- 2W`` and
     ``sigma +- W``), widened by float32's error in the moments (``8 n eps32`` of M and of
     ``4 M^2``, sixteen times the naive summation bounds) and the products, and never wider
     than ``2 M / sqrt(eps)`` (``|x * rstd - mean * rstd|`` whatever the moments' rounding);
     NaN where the line certainly holds a NaN, and anything (NaN too) otherwise; weight and
     bias then as ``* w + b``;
   - float64 and bfloat16 programs (``FORMATS``, ``_format``): the envelope is computed for
     the program's dtype. Float64: ``eps`` is 2^-52 (the ulp of 1; rounding unit 2^-53),
     2^-1074 the least subnormal, 2^-1022 the absolute error near underflow (2^-126 above),
     GELU's absolute error ``8 * 2^-52 * max(1, |x|)``, the range float64's. The oracle's own
     float64 arithmetic rounds as much as eager's here, so: it is monotone for the exact
     ops (``+ - * /`` of the endpoints round the way eager's values do), every op's ulps
     count twice (eager's error plus the oracle's), a sum adds ``(n + 1) * 2^-52 * sum_k
     |term_k|`` (a bound of the oracle's own products and sum in any order), softmax and
     log_softmax ``n + 1`` ulps more (the oracle's own sum of exponentials), an endpoint the
     oracle overflowed to infinity may be eager's largest finite (so an interval whose lower
     end overflowed reaches down to it), and opposite infinite terms of a dot product are
     NaN only maybe (an infinite term may be a finite product the oracle overflowed, which a
     fused multiply-add adds exactly). Bfloat16: ATen computes each op in float32 (its opmath
     type: elementwise ops, activations, softmax, layer_norm; sums, means and products
     accumulate in float32 too) and rounds the result to bfloat16, so every computed result
     gets float32's widening as above plus one bfloat16 ulp, ``2^-7 * |v| + 2^-133``
     (rounding to nearest needs half of it); a ``mean`` is a rounded sum divided and rounded
     again; a ``linear`` with a bias one more bfloat16 ulp of ``sum_k |term_k|`` (the product
     may be rounded before the bias is added); softmax one more bfloat16 ulp and log_softmax
     ``2^-7 * (|LSE| + 1)`` absolute more (a bfloat16 kernel rounds the sum of exponentials
     and ``max + log(sum)`` to bfloat16: ``log_softmax([-2.34375, -0.031982421875])`` is
     ``-0.0966796875`` where the exact value is -0.09448); bfloat16 products (``linear``,
     ``@``) run with denormals-are-zero (oneDNN's kernels): a subnormal operand may count as
     zero (``[9.2e-41] @ [inf]`` is NaN, not inf) and a result may flush to zero (2^-126
     absolute more); ``layer_norm``'s ``z * w + b`` is
     float32's (the product in float32's range) rounded once; a Python scalar is the hull of
     its float32 and bfloat16 values; and the range is bfloat16's: beyond its largest finite
     3.3895e38 by more than half an ulp is infinity. Views, ``amax``/``amin`` and selection
     stay exact. ``layer_norm``'s weighted value (any dtype) may be anything where ``z * w``
     may leave the range: ATen computes ``x * (rstd * w) + (b - mean * rstd * w)``, which errs
     as ``z * w + b`` does (scaled by w) but overflows elsewhere.
     Eager's and ours agree at these dtypes bit for bit in every run so far (every op is
     ATen's), so these envelopes are exercised by the self-checks: ``envcheck --lane`` (whole
     programs) and ``opcheck`` (each op of the lanes on its own, random inputs with the
     dtype's specials, rank-3 products, attention and softmaxes too: eager inside);
   - rank 3: a batched product is one product per batch (a batch of one or a matrix operand
     broadcast), each bounded as above (``torch.bmm`` alike, without the broadcast); the fused
     attention is judged by the envelope of its chain op by op, the scores' and the weighted
     values' sum bounds holding for the fused kernels' summation order too; ``linear`` of a
     rank-3 input is that of its rows;
     softmax, transposes and reshapes move over any rank;
   - the float32 range: an endpoint beyond FLT_MAX (by more than half an ulp) becomes an
     infinity -- certainly when the whole interval is beyond it; a sum whose terms' magnitudes
     may reach FLT_MAX may overflow in some order: its interval opens to +-inf on the sides its
     terms can take, and may be NaN; an interval with one infinite end is widened at its
     finite end by that end's rounding (2026-12-03: the radius took the infinite end's
     magnitude as 0, so a bfloat16 ``0.625 * 3.3895e38`` rounded below the envelope);
   - special values as eager computes them: NaN propagates; ``inf - inf``, ``0 * inf``,
     ``0 / 0``, ``inf / inf``, ``log``/``sqrt``/``rsqrt`` of negatives, ``gelu(+-inf)``, ``silu(-inf)``,
     ``leaky_relu(-inf, negative_slope=0)`` (2026-12-03) are NaN
     (certainly when certain, "may" when the intervals only reach them); a softmax or
     log_softmax row with a NaN or a +inf, or all -inf, is NaN; an amax/amin line with a NaN
     is NaN.

   A NaN of ours is accepted when ``S`` may be NaN; a number (or infinity) when ``S`` may be a
   number and ``lo <= ours <= hi``. So a class difference (NaN, +inf, -inf, finite) between
   ours and eager is a mismatch only when the envelope excludes our class, i.e. the float64
   evaluation is not within float32 rounding of the class boundary; accepted class differences
   are counted as "explained (boundary)". Where ours and eager are both zero with different
   signs and the original run in float64 gives an exact zero of eager's sign there
   (otherwise both zeros round a nonzero value, whose sign is as uncertain as the value, or
   ours has the float64 sign: boundary), that is a
   signed-zero mismatch (2026-12-03: a zero of the float64 run counts as exact only where the
   float64 run with every ``F.linear``'s bias added after its products, ours' order, gives
   the same zero; where the two differ, a tiny bias was absorbed by the partial sums of one
   order, the value is not an exact zero, and the sign is a boundary), counted as explained (documented in
   docs/parity.md, "Signed zeros": ours starts a dot product at +0.0 and adds the bias last,
   eager's batch-1 and empty products start from the bias) when eager, re-run with the exact
   zeros of its dot products made +0.0, gives our sign.
5. Argmax labels and ``max``/``min`` indices (int64): our label must be a possible *first* maximum of the row's envelope:
   ``i`` with ``hi_i >= max_j lo_j`` and no ``j < i`` with ``lo_j >= hi_i``; where the row may
   hold NaN, a may-NaN index that no certain NaN precedes (ATen's argmax takes the first NaN).
   Equal labels are accepted at once.
6. Inputs must not be mutated by either call (bit for bit).
7. Self-check of the oracle: eager's own result must lie in ``S`` (and eager's labels in the
   allowed sets). A case where it does not is reported as an oracle failure, not a mismatch.
8. Rank 0 (2026-12-03). A whole ``sum``/``mean`` is the sum bound above over every element
   (a rank-0 envelope); a whole ``max``/``min``/``amax``/``amin`` is exact over every element
   (NaN if any may be; empty: eager's error). ``t.item()``/``float(t)`` of a one-element
   envelope (else eager's ``RuntimeError``/``ValueError``) is the float itself where the
   envelope is one number (or certainly NaN), and otherwise a ``FloatIv``: an interval of
   doubles with the NaN/number flags, on which Python's ``+ - * /`` and unary minus are
   interval arithmetic widened by one double ulp per op, a comparison with a number is its
   truth where the interval decides it, and any use that needs the number itself (``math.*``,
   ``%``, ``int``, truth) decides only for a point; as a tensor operand it is the hull of
   its ends in the compute format (float32; float64 in a float64 program; in a bfloat16
   program the hull of their float32 and bfloat16 values, as for a Python float), widened
   outward by one ulp. A ``torch.stack`` of rank-0 envelopes is the vector of them (exact), as
   ``cat``/``stack`` move the parts at any rank. So a float read from a reduction is judged by its envelope, not by its
   bits: where ours and eager's floats differ, ours must lie in the ``FloatIv`` (eager too:
   else an oracle failure), and "agrees within the envelope". A tensor comparison as an
   ``if``/``while`` test is ``where``'s comparison on the envelopes; its truth needs exactly
   one element (eager's ``RuntimeError`` otherwise) and is decided where the element may be
   only true or only false. Where the envelope cannot decide a condition or a float that
   control flow or a returned value depends on (``Uncertain``), eager and ours may
   legitimately take different paths (the scalar control flow of the other programs never
   depends on a rounded value, so the oracle had no such case before): a case of a rank-0
   program that differs (any kind but a mutated input) and whose envelope run meets such an
   undecidable value is counted as "explained (boundary)", ``RANK0_BOUNDARY``, except that a
   tensor result whose elements are all within rule 4's few ulps of eager's still agrees at
   once. ``envcheck``
   counts such programs apart ("undecided") and checks float results against their
   ``FloatIv``.

Mismatches are named by kind: the exception types, the class change (``class finite->nan``),
``value``, ``signed-zero``, ``argmax``, ``dead code that raises is removed`` (eager raises, and
the original without its dead assignments -- backward liveness over the Python source --
does what ours does), and the shapes of three defects fixed while the fuzzer was written, so
that a regression is recognized: ``slot N is read before it is written`` (one value under two
names, repeated expressions; fixed in cca8cc9), chained comparisons that evaluate every
operand (the original re-run with eagerly evaluated chains raises ours; fixed in e8a966d), and
value or class mismatches in programs that use GELU (fixed in 5888eb2).

Mismatches are shrunk (statements deleted, compound statements replaced by a body,
expressions replaced by a subexpression, loop bounds and scalar arguments made smaller,
dimension sizes cut, tensor elements zeroed) while the same kind of mismatch remains, and
written to ``tests/fuzz/fixtures/<id>.json``: the source, the input spec (seed, sizes,
scalars) and the shrunk inputs bit for bit, what eager does and what ours did.
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import copy
import hashlib
import io
import json
import math
import os
import pathlib
import random
import re
import signal
import struct
import subprocess
import sys
import time
import traceback
import types as pytypes
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as TF

import rextio_torch

torch.set_num_threads(1)

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"

HEADER = (
    "from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D\n"
    "import math\n"
    "import torch\n"
    "import torch.nn.functional as F\n"
)
ANNOTATION = {
    "M": "TensorF32Cpu2D",
    "V": "TensorF32Cpu1D",
    "T": "TensorF32Cpu3D",
    "S": "TensorF32Cpu0D",
    "L": "TensorI64Cpu1D",
    "I": "TensorI64Cpu1D",
    "int": "int",
    "float": "float",
    "bool": "bool",
}
# The program kinds ("lanes") beyond the float32 rank-1/2 one: rank-3 float32 programs and
# programs whose tensors are all float64 or all bfloat16. A lane is drawn per program seed from
# its own stream (`program_lane`), so a float32 program of a seed is the one it always was.
LANES = {"f32": 0.70, "rank3": 0.10, "f64": 0.10, "bf16": 0.10}
# Rank 0 (2026-12-03): a seed of the f32 lane is a rank-0 program with this chance, drawn from a
# stream of its own again, so the other f32 seeds keep their programs (about 10% of all seeds).
RANK0_SHARE = 1 / 7
# The fusions (2026-12-03, the residual and row-normalization fusions of 2223a62 and f02982a): a
# seed of the f32 lane that is not rank 0 is a `fused` program with this chance, drawn from a
# stream of its own again, so the other f32 seeds keep their programs (about 10% of all seeds).
FUSED_SHARE = 1 / 6
ALL_LANES = ("f32", "rank0", "fused", "rank3", "f64", "bf16")
LANE_DTYPES = {"f32": torch.float32, "rank0": torch.float32, "fused": torch.float32, "rank3": torch.float32,
               "f64": torch.float64, "bf16": torch.bfloat16}
_DTYPE_MARKERS = {"f64": ("TensorF64Cpu2D", "TensorF64Cpu1D"), "bf16": ("TensorBF16Cpu2D", "TensorBF16Cpu1D")}
_DTYPE_PREFIX = {"f64": "TensorF64Cpu", "bf16": "TensorBF16Cpu"}
# A seed of the f64 or bf16 lane is a rank-0 program (`DtypeRank0Generator`) or a rank-3 one
# (`DtypeRank3Generator`) with these chances, drawn from a stream of its own (`dtype-rank-<seed>`),
# so every other seed of these lanes keeps its rank-1/2 program (2026-12-03).
DTYPE_RANK0_SHARE = 0.2
DTYPE_RANK3_SHARE = 0.2


def lane_annotation(lane: str) -> dict:
    """The annotation of each parameter kind in a program of `lane`."""
    if lane in _DTYPE_MARKERS:
        m, v = _DTYPE_MARKERS[lane]
        return {**ANNOTATION, "M": m, "V": v, "S": _DTYPE_PREFIX[lane] + "0D", "T": _DTYPE_PREFIX[lane] + "3D"}
    return ANNOTATION


def lane_header(lane: str) -> str:
    """The program's imports: the float32 lanes' are HEADER (unchanged), the others import
    the markers they annotate with."""
    if lane in ("f32", "fused"):
        return HEADER
    names = {"rank3": "TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D",
             "rank0": "TensorF32Cpu0D, TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D",
             "f64": "TensorF64Cpu1D, TensorF64Cpu2D, TensorI64Cpu1D",
             "bf16": "TensorBF16Cpu1D, TensorBF16Cpu2D, TensorI64Cpu1D"}[lane]
    return HEADER.replace("TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D", names)


def dtype_rank_header(lane: str) -> str:
    """The imports of a rank-0 or rank-3 program of the f64/bf16 lanes: all four markers of the
    dtype (the rank-1/2 programs of these lanes keep `lane_header`'s)."""
    t = _DTYPE_PREFIX[lane]
    return HEADER.replace("TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D",
                          f"{t}0D, {t}1D, {t}2D, {t}3D, TensorI64Cpu1D")


def header_of(source: str) -> str:
    """The import lines a program's source starts with (what `_render` puts back)."""
    i = source.find("\n\n\ndef ")
    return source[:i + 1] if i >= 0 else HEADER


def size_of(sizes: dict, sym: str) -> int:
    """The size of a dimension symbol; a product symbol ("B*D0", a reshape's merged dims) is
    the product of its parts' sizes."""
    return math.prod(sizes[p] for p in sym.split("*"))

# ---------------------------------------------------------------------------------------------
# Program generator
# ---------------------------------------------------------------------------------------------

FEATURE_DIMS = ["D0", "D1", "D2", "D3"]
METHOD_UNARY = ["relu", "sigmoid", "tanh", "abs", "neg", "negative", "square", "exp", "log", "sqrt",
                "rsqrt"]
TORCH_UNARY = ["relu", "sigmoid", "tanh", "abs", "neg", "negative", "square", "exp", "log", "sqrt",
               "rsqrt"]
BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
# The ops of the joins, layers and dim-ops lanes (issue 19's fuzzer extension): a program
# with any of these features counts as one "with new ops" in the summary.
NEW_OPS = ("cat", "stack", "layer_norm", "normalize", "dropout", "embedding", "index_select",
           "max-dim", "min-dim", "dim-indices", "zeros_like", "ones_like", "full_like",
           "rank0-stack", "rank0-cat-refused", "cat3", "stack3")


@dataclass
class Var:
    name: str
    kind: str  # M V T (rank 3) int float bool
    shape: tuple = ()
    small: bool = False  # ints that may bound a loop
    param: bool = False
    alias: bool = False  # may be (an alias of) a tensor parameter
    protected: bool = False  # loop targets and while counters: never assigned
    bound: str = ""  # int64 ids ("I"): the symbol of the dim they index (ids lie in [0, size))


class Scope:
    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.own: dict[str, Var] = {}

    def visible(self) -> dict[str, Var]:
        out = self.parent.visible() if self.parent else {}
        out.update(self.own)
        return out

    def find(self, name: str) -> Var | None:
        return self.visible().get(name)


class Expr:
    """A generated expression: its text and its syntactic form ('name', 'call', 'op')."""

    def __init__(self, text: str, form: str):
        self.text, self.form = text, form

    def operand(self) -> str:
        return f"({self.text})" if self.form == "op" else self.text


@dataclass
class Program:
    source: str
    name: str
    params: list  # [(name, kind, shape tuple, small)]
    returns: str
    control_flow: bool
    features: list
    lane: str = "f32"  # f32 (rank 1/2), rank0, fused (rank 1/2, the fusion patterns), rank3, f64 or bf16


TENSOR_KINDS = ("M", "V", "T")
PARAM_TENSOR_KINDS = TENSOR_KINDS + ("S",)  # "S": a rank-0 parameter (TensorF32Cpu0D), rank-0 programs only
KIND_OF_RANK = {1: "V", 2: "M", 3: "T"}


class Generator:
    lane = "f32"

    def __init__(self, rng: random.Random, control_flow: bool):
        self.rng = rng
        self.cf = control_flow
        self.params: list[Var] = []
        self.lines: list[str] = []
        self.indent = 1
        self.counter = 0
        self.ops = 0
        self.max_ops = rng.choice([4, 6, 8, 12, 16])
        self.features: set[str] = set()
        self.top = Scope()
        self.scope = self.top
        self.loop_depth = 0
        self.block_depth = 0
        self.ret = "M"
        self.ret_shape: tuple = ()

    # -- helpers --------------------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def new_param(self, kind: str, shape: tuple = (), small: bool = False, prefix: str | None = None) -> Var:
        if prefix is None:
            prefix = {"M": "x", "T": "x", "V": "v", "int": "n" if small else "m", "float": "t", "bool": "flag"}[kind]
        name = f"{prefix}{len(self.params)}"
        var = Var(name, kind, shape, small=small, param=True, alias=kind in TENSOR_KINDS)
        self.params.append(var)
        self.top.own[name] = var
        return var

    def tensor_vars(self, shape: tuple) -> list[Var]:
        return [v for v in self.scope.visible().values() if v.kind in TENSOR_KINDS and v.shape == shape]

    def scalar_vars(self, kind: str, small: bool | None = None) -> list[Var]:
        return [
            v for v in self.scope.visible().values()
            if v.kind == kind and (small is None or v.small == small or (small is False))
        ]

    # -- tensor expressions ---------------------------------------------------------------
    def leaf(self, shape: tuple, prefer: str | None = None, weight: bool = False) -> Expr:
        if prefer is not None:
            var = self.scope.find(prefer)
            if var is not None and var.shape == shape and self.chance(0.7):
                return Expr(var.name, "name")
        existing = self.tensor_vars(shape)
        if existing and (self.chance(0.75) or len(self.params) >= 10):
            return Expr(self.rng.choice(existing).name, "name")
        kind = KIND_OF_RANK[len(shape)]
        prefix = ("w" if weight else "x") if kind in ("M", "T") else ("b" if weight else "v")
        return Expr(self.new_param(kind, shape, prefix=prefix).name, "name")

    def unary(self, inner: Expr) -> Expr:
        self.ops += 1
        r = self.rng.random()
        if r < 0.12:
            if self.chance(0.3):
                self.features.add("gelu_tanh")
                return Expr(f"F.gelu({inner.text}, approximate='tanh')", "call")
            self.features.add("gelu")
            if self.chance(0.3):
                return Expr(f"F.gelu({inner.text}, approximate='none')", "call")
            return Expr(f"F.gelu({inner.text})", "call")
        if r < 0.18:
            self.features.add("silu")
            if self.chance(0.3):
                return Expr(f"F.silu({inner.text}, inplace=False)", "call")
            return Expr(f"F.silu({inner.text})", "call")
        if r < 0.22:
            self.features.add("relu6")
            if self.chance(0.3):
                return Expr(f"F.relu6({inner.text}, inplace=False)", "call")
            return Expr(f"F.relu6({inner.text})", "call")
        if r < 0.30:
            return self.param_unary(inner)
        op = self.rng.choice(METHOD_UNARY)
        self.features.add(op)
        if inner.form != "op" and r < 0.6:
            return Expr(f"{inner.text}.{op}()", "call")
        if op == "relu" and self.chance(0.4):
            return Expr(f"F.relu({inner.text})", "call")
        return Expr(f"torch.{op}({inner.text})", "call")

    def param_unary(self, inner: Expr) -> Expr:
        """An op with scalar parameters, literal ones (issue 18): leaky_relu with a slope
        >= 0, elu with alpha > 0 (both monotone, which the oracle's intervals need),
        hardtanh, clamp/clip with either bound or both, in each spelling."""
        x = inner.text
        method_ok = inner.form != "op"
        choice = self.rng.choice(["leaky_relu", "elu", "hardtanh", "clamp"])
        self.features.add(choice)
        if choice == "leaky_relu":
            slope = self.rng.choice([None, "0.2", "0.5", "0", "2"])
            if slope is None:
                return Expr(f"F.leaky_relu({x})", "call")
            if self.chance(0.5):
                return Expr(f"F.leaky_relu({x}, negative_slope={slope}, inplace=False)", "call")
            return Expr(f"F.leaky_relu({x}, {slope})", "call")
        if choice == "elu":
            alpha = self.rng.choice([None, "0.5", "1.0", "2"])
            if alpha is None:
                return Expr(f"F.elu({x})", "call")
            return Expr(f"F.elu({x}, alpha={alpha})", "call")
        if choice == "hardtanh":
            if self.chance(0.4):
                return Expr(f"F.hardtanh({x})", "call")
            return Expr(f"F.hardtanh({x}, -2.0, max_val=0.5)", "call")
        lo, hi = self.rng.choice([("-1.0", "1.0"), ("0", None), (None, "-0.0"), ("0.5", "3"), ("2.0", "-2.0")])
        args = ", ".join(f"{k}={v}" for k, v in (("min", lo), ("max", hi)) if v is not None)
        name = self.rng.choice(["clamp", "clip"])
        if method_ok and self.chance(0.5):
            return Expr(f"{x}.{name}({args})", "call")
        return Expr(f"torch.{name}({x}, {args})", "call")

    def binary(self, a: Expr, b: Expr) -> Expr:
        self.ops += 1
        op = self.rng.choice(list(BINOPS))
        self.features.add("binop")
        if self.chance(0.2):
            return Expr(f"torch.{BINOPS[op]}({a.text}, {b.text})", "call")
        return Expr(f"{a.operand()} {op} {b.operand()}", "op")

    def scalar_operand(self, a: Expr) -> Expr:
        """`a op s` or `s op a` with `s` a Python int or float: a literal (zeros of both
        signs, subnormal, huge, ints beyond 2**24), a scalar variable or a scalar expression."""
        rng = self.rng
        self.ops += 1
        self.features.add("scalar-operand")
        r = rng.random()
        if r < 0.4:
            s = rng.choice(["0.5", "2.0", "1e-05", "-0.0", "0.0", "3", "2", "-7", "0.1", "1e300",
                            "1e-40", "16777217", "1.0", "-2.5"])
        elif r < 0.75:
            s = self.float_expr(1)
        else:
            s = self.int_expr(1)
        if " " in s or s.startswith("-"):
            s = f"({s})"
        op = rng.choice(list(BINOPS))
        if self.chance(0.4):
            self.features.add("scalar-first")
            return Expr(f"{s} {op} {a.operand()}", "op")
        return Expr(f"{a.operand()} {op} {s}", "op")

    def reduce_kind(self) -> str:
        return self.rng.choice(["mean", "sum", "mean", "sum", "amax", "amin", "max", "min"])

    def reduce(self, inner: Expr, dim: int, keepdim: bool, rank: int) -> Expr:
        self.ops += 1
        kind = self.reduce_kind()
        if kind in ("max", "min"):
            return self.dim_extremum(inner, dim, keepdim, rank, kind)
        self.features.add(kind)
        if kind in ("amax", "amin"):
            # The extrema are extension spellings: one int dim, negative half the time.
            d = dim - rank if self.chance(0.5) else dim
            forms = [f"torch.{kind}({inner.text}, dim={d}, keepdim={keepdim})"]
            if inner.form != "op":
                forms.append(f"{inner.text}.{kind}(dim={d}, keepdim={keepdim})")
            if not keepdim:
                forms.append(f"torch.{kind}({inner.text}, {d})")
                if inner.form != "op":
                    forms.append(f"{inner.text}.{kind}({d})")
            return Expr(self.rng.choice(forms), "call")
        forms = []
        if inner.form != "op":
            forms.append(f"{inner.text}.{kind}(dim={dim}, keepdim={keepdim})")
            if not keepdim:
                forms.append(f"{inner.text}.{kind}({dim})")
                if rank == 2 and dim == 1:
                    forms.append(f"{inner.text}.{kind}(dim=1)")
            else:
                forms.append(f"{inner.text}.{kind}({dim}, keepdim=True)")
        forms.append(f"torch.{kind}({inner.text}, dim={dim}, keepdim={keepdim})")
        if not keepdim:
            forms.append(f"torch.{kind}({inner.text}, {dim})")
        return Expr(self.rng.choice(forms), "call")

    def dim_extremum(self, inner: Expr, dim: int, keepdim: bool, rank: int, kind: str, indices: bool = False) -> Expr:
        """`x.max(dim=d).values` and its spellings (the dim-ops lane): the method or
        `torch.max`/`min`, read as `.values`/`[0]` (or `.indices`/`[1]`, int64), the dim
        negative sometimes, keepdim by keyword or position. The bare named tuple is refused
        (RXTP-TORCH-130), so a field is always read."""
        self.features.add(f"{kind}-dim")
        if indices:
            self.features.add("dim-indices")
        d = dim - rank if self.chance(0.3) else dim
        field_, index = ("indices", "[1]") if indices else ("values", "[0]")
        x = inner.text
        forms = [f"torch.{kind}({x}, dim={d}, keepdim={keepdim}){index}",
                 f"torch.{kind}({x}, {d}, keepdim={keepdim}).{field_}"]
        if not keepdim:
            forms.append(f"torch.{kind}({x}, {d}){index}")
        if inner.form != "op":
            forms += [f"{x}.{kind}(dim={d}, keepdim={keepdim}).{field_}", f"{x}.{kind}({d}, {keepdim}){index}"]
            if not keepdim:
                forms.append(f"{x}.{kind}(dim={d}).{field_}")
        return Expr(self.rng.choice(forms), "call")

    def ids_leaf(self, length: str, bound: str) -> Expr:
        """An int64 ids parameter (`TensorI64Cpu1D`) of `length` ids into a dim of size
        `bound`: the inputs draw them in range (mostly; see `make_ids`)."""
        same = [v for v in self.scope.visible().values() if v.kind == "I" and v.shape == (length,) and v.bound == bound]
        if same and (self.chance(0.6) or len(self.params) >= 10):
            return Expr(self.rng.choice(same).name, "name")
        var = self.new_param("I", (length,), prefix="ids")
        var.bound = bound
        return Expr(var.name, "name")

    def join(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        """`torch.cat`/`concat`/`concatenate` and `torch.stack` (the joins lane). A join's
        size along its dim is a sum (or 2), which no dimension symbol names, so the joined
        tensor (through an activation sometimes) is reduced over that dim, giving `shape`:
        a vector, or a keepdim matrix with a size-1 dim; a one-part `cat` keeps the shape
        and may stand anywhere."""
        rng = self.rng
        self.ops += 1
        rank = len(shape)
        if rng.random() < 0.15 or (rank == 2 and "1" not in shape):
            self.features.add("cat")
            part = self.texpr(shape, depth - 1, prefer)
            d = rng.choice(range(-rank, rank))
            return Expr(rng.choice([f"torch.cat([{part.text}], dim={d})", f"torch.cat(({part.text},), {d})"]), "call")
        if rank == 2:
            rd = 1 if shape[1] == "1" else 0
            keep, n = True, shape[0] if rd == 1 else shape[1]
        else:
            rd, keep, n = rng.choice([0, 1]), False, shape[0]
            if n == "1" and rng.random() < 0.4:
                # vectors joined end to end, reduced to a one-element keepdim vector
                self.features.add("cat")
                parts = [self.texpr((rng.choice(["B"] + FEATURE_DIMS),), depth - 1, prefer).text
                         for _ in range(rng.choice([2, 2, 3]))]
                name = rng.choice(["cat", "cat", "concat", "concatenate"])
                d = rng.choice(["", ", 0", ", dim=-1", ", dim=0"])
                joined = Expr(f"torch.{name}([{', '.join(parts)}]{d})", "call")
                if rng.random() < 0.3:
                    joined = self.unary(joined)
                return self.reduce(joined, 0, True, 1)
        if rng.random() < 0.5:
            # vectors of length n stacked into a matrix along the reduced dim
            self.features.add("stack")
            parts = [self.texpr((n,), depth - 1, prefer).text for _ in range(rng.choice([2, 2, 3]))]
            d = rng.choice([str(rd), str(rd - 2)])
            seq = f"[{', '.join(parts)}]" if rng.random() < 0.7 else f"({', '.join(parts)})"
            form = rng.choice([f"torch.stack({seq}, dim={d})", f"torch.stack({seq}, {d})"]
                              + ([f"torch.stack({seq})"] if rd == 0 else []))
            joined = Expr(form, "call")
        else:
            self.features.add("cat")
            parts = []
            for _ in range(rng.choice([2, 2, 3])):
                k = rng.choice(FEATURE_DIMS + ["1"])
                parts.append(self.texpr((n, k) if rd == 1 else (k, n), depth - 1, prefer).text)
            seq = f"[{', '.join(parts)}]" if rng.random() < 0.7 else f"({', '.join(parts)})"
            d = rng.choice([str(rd), str(rd - 2)])
            name = rng.choice(["cat", "cat", "cat", "concat", "concatenate"])
            form = rng.choice([f"torch.{name}({seq}, dim={d})", f"torch.{name}({seq}, {d})"]
                              + ([f"torch.{name}({seq})"] if rd == 0 else []))
            joined = Expr(form, "call")
        if rng.random() < 0.3:
            joined = self.unary(joined)
        return self.reduce(joined, rd, keep, 2)

    def newop(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        """The ops of the layers and dim-ops lanes whose result has `shape`: `F.layer_norm`
        over the last dim (weight and bias both or neither, an eps sometimes),
        `F.normalize` (p 2 or 1, a literal dim, an eps sometimes), `F.dropout` with
        `training=False`, the fills `zeros_like`/`ones_like`/`full_like` (a literal or a
        scalar parameter), `index_select` with int64 ids (either dim of a matrix, negative
        dims too) and `F.embedding`; and the joins (`join`)."""
        rng = self.rng
        rank = len(shape)
        what = rng.choice(["layer_norm", "normalize", "dropout", "fill", "index_select", "join", "join"]
                          + (["embedding"] if rank == 2 else []))
        if what == "join":
            return self.join(shape, depth, prefer)
        self.ops += 1
        self.features.add(what)
        if what in ("index_select", "embedding"):
            bound = rng.choice(["B"] + FEATURE_DIMS)
            if what == "embedding":
                table = self.texpr((bound, shape[1]), depth - 1, prefer)
                ids = self.ids_leaf(shape[0], bound)
                return Expr(f"F.embedding({ids.text}, {table.text})", "call")
            d = rng.randrange(rank)
            tshape = tuple(bound if i == d else s for i, s in enumerate(shape))
            table = self.texpr(tshape, depth - 1, prefer)
            ids = self.ids_leaf(shape[d], bound)
            ds = str(d - rank) if rng.random() < 0.3 else str(d)
            if table.form != "op" and rng.random() < 0.5:
                return Expr(f"{table.text}.index_select({ds}, {ids.text})", "call")
            return Expr(f"torch.index_select({table.text}, {ds}, {ids.text})", "call")
        x = self.texpr(shape, depth - 1, prefer)
        if what == "dropout":
            return Expr(rng.choice([f"F.dropout({x.text}, training=False)", f"F.dropout({x.text}, 0.5, False)",
                                    f"F.dropout({x.text}, p=0.1, training=False)",
                                    f"F.dropout({x.text}, p=0.25, training=False, inplace=False)"]), "call")
        if what == "fill":
            kind = rng.choice(["zeros_like", "ones_like", "full_like", "full_like"])
            self.features.discard("fill")
            self.features.add(kind)
            if kind != "full_like":
                return Expr(f"torch.{kind}({x.text})", "call")
            r = rng.random()
            if r < 0.6:
                v = rng.choice(["2.5", "-3", "0.0", "-0.0", "1e-40", "1e300", "16777217", "0"])
            else:
                floats = self.scalar_vars("float") if r < 0.85 else self.scalar_vars("int")
                v = rng.choice(floats).name if floats else self.new_param("float" if r < 0.85 else "int").name
            return Expr(f"torch.full_like({x.text}, {v})", "call")
        if what == "normalize":
            dims = [0, 1, -1, -2] if rank == 2 else [0, -1]
            d = rng.choice(dims)
            forms = [f"F.normalize({x.text}, dim={d})", f"F.normalize({x.text}, p=2.0, dim={d})",
                     f"F.normalize({x.text}, 2.0, {d}, 1e-12)", f"F.normalize({x.text}, dim={d}, eps=1e-06)",
                     f"F.normalize({x.text}, p=1, dim={d})", f"F.normalize({x.text}, 1.0, {d}, 0.5)"]
            if rank == 2:
                forms.append(f"F.normalize({x.text})")
            return Expr(rng.choice(forms), "call")
        return self.layer_norm(x, shape, prefer)

    def layer_norm(self, x: Expr, shape: tuple, prefer: str | None = None) -> Expr:
        """`F.layer_norm(x, ...)` over the last dim, its size read from a tensor of that size."""
        rng = self.rng
        rank = len(shape)
        last = shape[-1]
        if rng.random() < 0.5:
            ref = self.leaf((last,)).text
            size = rng.choice([f"{ref}.shape[0]", f"{ref}.size(0)", f"{ref}.shape[-1]"])
        else:
            ref = self.leaf(shape, prefer).text
            size = rng.choice([f"{ref}.shape[-1]", f"{ref}.size(-1)", f"{ref}.size()[{rank - 1}]"])
        ns = rng.choice([f"({size},)", f"[{size}]"])
        r = rng.random()
        if r < 0.4:
            return Expr(f"F.layer_norm({x.text}, {ns})", "call")
        if r < 0.55:
            return Expr(f"F.layer_norm({x.text}, {ns}, None, None, {rng.choice(['1e-05', '0.1', '1e-3'])})", "call")
        w, b = self.leaf((last,), weight=True), self.leaf((last,), weight=True)
        if r < 0.7:
            # weight and bias by keyword (as in `nn.LayerNorm`-style code), eps too or not
            eps = rng.choice(["", ", eps=1e-05", ", eps=1e-3"])
            mid = rng.choice([f"{w.text}, bias={b.text}", f"weight={w.text}, bias={b.text}"])
            return Expr(f"F.layer_norm({x.text}, {ns}, {mid}{eps})", "call")
        eps = rng.choice(["", ", 1e-05", ", 1e-3"])
        return Expr(f"F.layer_norm({x.text}, {ns}, {w.text}, {b.text}{eps})", "call")

    def softmax(self, inner: Expr, dim: int) -> Expr:
        self.ops += 1
        if self.chance(0.35):
            self.features.add("log_softmax")
            last = "-1" if dim == 1 else str(dim)
            forms = [f"F.log_softmax({inner.text}, dim={dim})", f"torch.log_softmax({inner.text}, {dim})",
                     f"F.log_softmax({inner.text}, {dim})", f"torch.log_softmax({inner.text}, dim={last})"]
            if inner.form != "op":
                forms += [f"{inner.text}.log_softmax(dim={dim})", f"{inner.text}.log_softmax({dim})"]
            return Expr(self.rng.choice(forms), "call")
        self.features.add("softmax")
        forms = [f"torch.softmax({inner.text}, {dim})", f"torch.softmax({inner.text}, dim={dim})",
                 f"F.softmax({inner.text}, dim={dim})"]
        if inner.form != "op":
            forms += [f"{inner.text}.softmax(dim={dim})", f"{inner.text}.softmax({dim})"]
        return Expr(self.rng.choice(forms), "call")

    def linear(self, rows, out, depth, prefer) -> Expr:
        self.ops += 1
        self.features.add("linear")
        k = out if self.chance(0.5) else self.rng.choice(FEATURE_DIMS)
        xin = self.linear_input(rows, k, depth, prefer)
        w = self.leaf((out, k), weight=True)
        r = self.rng.random()
        if r < 0.55:
            b = self.leaf((out,), weight=True)
            return Expr(f"F.linear({xin}, {w.text}, {b.text})", "call")
        if r < 0.7:
            self.features.add("linear+b")
            b = self.leaf((out,), weight=True)
            return Expr(f"F.linear({xin}, {w.text}) + {b.text}", "op")
        self.features.add("linear-nobias")
        form = self.rng.choice(["{}, {}", "{}, {}, None", "{}, {}, bias=None"])
        return Expr("F.linear(" + form.format(xin, w.text) + ")", "call")

    def linear_input(self, rows, k, depth, prefer) -> str:
        """The input text of a linear of shape (rows, k)."""
        if self.chance(0.15):
            # The prologue of the scoring pipeline: (x - mean) / scale before the linear.
            self.features.add("prologue")
            x = self.texpr((rows, k), depth - 1, prefer)
            mu, sd = self.leaf((k,), weight=True), self.leaf((k,), weight=True)
            op1, op2 = self.rng.choice(["-", "+", "*"]), self.rng.choice(["/", "*"])
            return f"({x.operand()} {op1} {mu.text}) {op2} {sd.text}"
        return self.texpr((rows, k), depth - 1, prefer).text

    def matmul_input(self, rows, k, depth, prefer) -> Expr:
        """The left operand of a product of shape (rows, k)."""
        return self.texpr((rows, k), depth - 1, prefer)

    def matmul(self, rows, out, depth, prefer) -> Expr:
        self.ops += 1
        self.features.add("matmul")
        k = out if self.chance(0.5) else self.rng.choice(FEATURE_DIMS)
        x = self.matmul_input(rows, k, depth, prefer)
        w = self.leaf((k, out), weight=True)
        form = self.rng.choice(["{} @ {}", "torch.matmul({}, {})", "{}.matmul({})"])
        if form.startswith("{}.") and x.form == "op":
            form = "torch.matmul({}, {})"
        text = form.format(x.operand() if form.startswith("{} @") else x.text, w.text)
        if self.chance(0.6):
            self.features.add("matmul+b")
            b = self.leaf((out,), weight=True)
            return Expr(f"{text} + {b.text}", "op")
        return Expr(text, "op" if "@" in form else "call")

    def view(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        """A view whose result has `shape` (docs/views.md): a transpose of the transposed
        shape in each spelling, `unsqueeze` of a vector into a size-1 dim, `squeeze` and
        `flatten` of a size-1 dim, `reshape`/`view` with sizes read from a tensor's
        `shape`/`size()` (or -1)."""
        self.ops += 1
        rng = self.rng
        if len(shape) == 2:
            rows, cols = shape
            opts = ["t", "t", "t", "reshape"]
            if rows == "1":
                opts += ["unsqueeze0", "unsqueeze0"]
            if cols == "1":
                opts += ["unsqueeze1", "unsqueeze1"]
            what = rng.choice(opts)
            if what == "t":
                self.features.add("transpose")
                inner = self.texpr((cols, rows), depth - 1, prefer)
                forms = [f"torch.t({inner.text})", f"torch.transpose({inner.text}, 0, 1)",
                         f"torch.transpose({inner.text}, -1, 0)"]
                if inner.form != "op":
                    forms += [f"{inner.text}.t()", f"{inner.text}.T", f"{inner.text}.transpose(0, 1)",
                              f"{inner.text}.transpose(1, -2)"]
                return Expr(rng.choice(forms), "call")
            if what.startswith("unsqueeze"):
                self.features.add("unsqueeze")
                d = 0 if what == "unsqueeze0" else rng.choice(["1", "-1"])
                inner = self.texpr((cols,) if what == "unsqueeze0" else (rows,), depth - 1, prefer)
                forms = [f"torch.unsqueeze({inner.text}, {d})"]
                if inner.form != "op":
                    forms.append(f"{inner.text}.unsqueeze({d})")
                return Expr(rng.choice(forms), "call")
            self.features.add("reshape")
            ref = self.leaf(shape, prefer).text
            inner = self.texpr(shape, depth - 1, prefer)
            sizes = rng.choice([f"{ref}.shape[0], -1", f"-1, {ref}.size(1)", f"({ref}.shape[0], {ref}.shape[-1])",
                                f"[{ref}.size()[0], -1]", f"{ref}.size(-2), {ref}.shape[1]"])
            if inner.form == "op" or self.chance(0.2):
                return Expr(f"torch.reshape({inner.text}, ({ref}.shape[0], -1))", "call")
            if self.chance(0.25):
                self.features.add("view")
                return Expr(f"{inner.text}.view({sizes})", "call")
            return Expr(f"{inner.text}.reshape({sizes})", "call")
        (n,) = shape
        what = rng.choice(["squeeze", "squeeze", "flatten", "reshape"])
        if what == "squeeze":
            self.features.add("squeeze")
            if self.chance(0.5):
                inner, d = self.texpr((n, "1"), depth - 1, prefer), rng.choice(["1", "-1"])
            else:
                inner, d = self.texpr(("1", n), depth - 1, prefer), rng.choice(["0", "-2"])
            forms = [f"torch.squeeze({inner.text}, {d})"]
            if inner.form != "op":
                forms.append(f"{inner.text}.squeeze({d})")
            return Expr(rng.choice(forms), "call")
        inner = self.texpr(rng.choice([(n, "1"), ("1", n)]), depth - 1, prefer)
        if what == "flatten":
            self.features.add("flatten")
            forms = [f"torch.flatten({inner.text})"]
            if inner.form != "op":
                forms.append(f"{inner.text}.flatten()")
            return Expr(rng.choice(forms), "call")
        self.features.add("reshape")
        if inner.form == "op":
            return Expr(f"torch.reshape({inner.text}, (-1,))", "call")
        if self.chance(0.25):
            self.features.add("view")
            return Expr(f"{inner.text}.view(-1)", "call")
        return Expr(f"{inner.text}.reshape(-1)", "call")

    def select(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        """Elementwise selection and powers (issue 18): `torch.maximum`/`minimum` (and the
        methods), `torch.where` of a comparison written in the call (tensor or scalar sides,
        a scalar branch sometimes), `x ** p` / `x.pow(p)` / `torch.pow(x, p)` with the
        exponents ATen special-cases (2, 3, 0.5, -1) and two it leaves to `pow` (4, 1.5)."""
        self.ops += 1
        rng = self.rng
        what = rng.choice(["maximum", "minimum", "where", "where", "pow", "pow"])
        self.features.add(what)
        if what in ("maximum", "minimum"):
            a, b = self.texpr(shape, depth - 1, prefer), self.texpr(shape, depth - 1, prefer)
            if len(shape) == 2 and self.chance(0.3):
                b = self.texpr((shape[1],), depth - 1, prefer)
                if self.chance(0.5):
                    a, b = b, a
            if a.form != "op" and self.chance(0.4):
                return Expr(f"{a.text}.{what}({b.text})", "call")
            return Expr(f"torch.{what}({a.text}, {b.text})", "call")
        if what == "pow":
            x = self.texpr(shape, depth - 1, prefer)
            p = rng.choice(["2", "3", "0.5", "-1", "4", "1.5", "2.0"])
            r = rng.random()
            if r < 0.45:
                return Expr(f"{x.operand()} ** {p}", "op")
            if r < 0.75 and x.form != "op":
                return Expr(f"{x.text}.pow({p})", "call")
            return Expr(f"torch.pow({x.text}, {p})", "call")
        a = self.texpr(shape, depth - 1, prefer)
        b = self.texpr(shape, depth - 1, prefer)
        lhs = self.texpr(shape, depth - 1, prefer) if self.chance(0.5) else a
        rhs = (self.texpr(shape, depth - 1, prefer) if self.chance(0.5)
               else Expr(rng.choice(["0", "0.0", "0.5", "-1", "1e-40"]), "literal"))
        if self.chance(0.2):
            lhs, rhs = rhs, lhs
        cmp = rng.choice([">", ">=", "<", "<=", "==", "!="])
        cond = f"{lhs.operand()} {cmp} {rhs.operand()}"
        if self.chance(0.2):
            if self.chance(0.5):
                b = Expr(rng.choice(["0.0", "0", "-1.5"]), "literal")
            else:
                a = Expr(rng.choice(["0.0", "1", "-0.0"]), "literal")
        if a.form in ("name", "call") and self.chance(0.3):
            return Expr(f"{a.text}.where({cond}, {b.text})", "call")
        return Expr(f"torch.where({cond}, {a.text}, {b.text})", "call")

    def texpr(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        if depth <= 0 or self.ops >= self.max_ops:
            return self.leaf(shape, prefer)
        rng = self.rng
        if len(shape) == 2:
            rows, cols = shape
            choices = [("leaf", 2), ("unary", 4), ("linear", 4), ("matmul", 2), ("binary", 3), ("softmax", 1),
                       ("view", 1), ("select", 1), ("newop", 1)]
            if cols == "1" or rows == "1":
                choices.append(("keepdim", 3))
            if cols != "1" and rows != "1":
                choices.append(("head", 1))
            what = rng.choices([c for c, _ in choices], [w for _, w in choices])[0]
            if what == "leaf":
                return self.leaf(shape, prefer)
            if what == "unary":
                return self.unary(self.texpr(shape, depth - 1, prefer))
            if what == "view":
                return self.view(shape, depth, prefer)
            if what == "select":
                return self.select(shape, depth, prefer)
            if what == "newop":
                return self.newop(shape, depth, prefer)
            if what == "linear":
                return self.linear(rows, cols, depth, prefer)
            if what == "matmul":
                return self.matmul(rows, cols, depth, prefer)
            if what == "softmax":
                return self.softmax(self.texpr(shape, depth - 1, prefer), rng.choice([0, 1]))
            if what == "keepdim":
                if cols == "1":
                    inner = self.texpr((rows, rng.choice(FEATURE_DIMS)), depth - 1, prefer)
                    return self.reduce(inner, 1, True, 2)
                inner = self.texpr((rng.choice(["B"] + FEATURE_DIMS), cols), depth - 1, prefer)
                return self.reduce(inner, 0, True, 2)
            if what == "head":
                self.features.add("head")
                hidden = rng.choice(FEATURE_DIMS)
                first = self.linear(rows, hidden, depth - 1, prefer)
                act = self.unary(first) if rng.random() < 0.8 else first
                self.ops += 1
                w2, b2 = self.leaf((cols, hidden), weight=True), self.leaf((cols,), weight=True)
                return Expr(f"F.linear({act.text}, {w2.text}, {b2.text})", "call")
            # binary, with rank-2/rank-1 and keepdim broadcasts, or a Python scalar
            a = self.texpr(shape, depth - 1, prefer)
            if rng.random() < 0.25:
                return self.scalar_operand(a)
            r = rng.random()
            if r < 0.45:
                b = self.texpr(shape, depth - 1, prefer)
            elif r < 0.8:
                b = self.texpr((cols,), depth - 1, prefer)
                self.features.add("broadcast")
            elif r < 0.9:
                b = self.texpr((rows, "1"), depth - 1, prefer)
                self.features.add("broadcast-keepdim")
            else:
                b = self.texpr(("1", cols), depth - 1, prefer)
                self.features.add("broadcast-keepdim")
            if rng.random() < 0.3:
                a, b = b, a
            return self.binary(a, b)
        (n,) = shape
        choices = [("leaf", 2), ("unary", 3), ("binary", 2), ("reduce", 4), ("matvec", 2), ("softmax", 1),
                   ("view", 1), ("select", 1), ("newop", 1)]
        if n == "1":
            choices.append(("keepdim", 2))
        what = rng.choices([c for c, _ in choices], [w for _, w in choices])[0]
        if what == "leaf":
            return self.leaf(shape, prefer)
        if what == "view":
            return self.view(shape, depth, prefer)
        if what == "select":
            return self.select(shape, depth, prefer)
        if what == "newop":
            return self.newop(shape, depth, prefer)
        if what == "unary":
            return self.unary(self.texpr(shape, depth - 1, prefer))
        if what == "binary":
            if rng.random() < 0.25:
                return self.scalar_operand(self.texpr(shape, depth - 1, prefer))
            return self.binary(self.texpr(shape, depth - 1, prefer), self.texpr(shape, depth - 1, prefer))
        if what == "softmax":
            return self.softmax(self.texpr(shape, depth - 1, prefer), 0)
        if what == "keepdim":
            return self.reduce(self.texpr((rng.choice(FEATURE_DIMS),), depth - 1, prefer), 0, True, 1)
        if what == "reduce":
            if rng.random() < 0.6:
                inner = self.texpr((n, rng.choice(FEATURE_DIMS)), depth - 1, prefer)
                return self.reduce(inner, 1, False, 2)
            inner = self.texpr((rng.choice(["B"] + FEATURE_DIMS), n), depth - 1, prefer)
            return self.reduce(inner, 0, False, 2)
        # matrix-vector products, 2-1 and 1-2
        self.ops += 1
        self.features.add("matvec")
        k = rng.choice(FEATURE_DIMS)
        if rng.random() < 0.5:
            m, v = self.texpr((n, k), depth - 1, prefer), self.texpr((k,), depth - 1, prefer)
        else:
            v, m = self.texpr((k,), depth - 1, prefer), self.texpr((k, n), depth - 1, prefer)
            m, v = v, m  # operand order: vector first
        if rng.random() < 0.5:
            return Expr(f"torch.matmul({m.text}, {v.text})", "call")
        return Expr(f"{m.operand()} @ {v.operand()}", "op")

    def label_extremum(self):
        """None for an argmax, or "max"/"min" for their `.indices`."""
        return self.rng.choice(["max", "min"]) if self.rng.random() < 0.3 else None

    def labels(self, shape: tuple, depth: int) -> Expr:
        """An argmax over an expression; `shape` is the label vector's."""
        self.ops += 1
        self.features.add("argmax")
        (n,) = shape
        rng = self.rng
        ext = self.label_extremum()
        if n == "1" and rng.random() < 0.3:
            inner = self.texpr((rng.choice(FEATURE_DIMS),), depth)
            if ext:
                return self.dim_extremum(inner, 0, True, 1, ext, indices=True)
            forms = [f"torch.argmax({inner.text}, 0, keepdim=True)", f"torch.argmax({inner.text}, dim=0, keepdim=True)"]
            if inner.form != "op":
                forms.append(f"{inner.text}.argmax(dim=0, keepdim=True)")
            return Expr(rng.choice(forms), "call")
        dim = 1 if rng.random() < 0.75 else 0
        inner = self.texpr((n, rng.choice(FEATURE_DIMS)) if dim == 1 else (rng.choice(["B"] + FEATURE_DIMS), n), depth)
        if ext:
            return self.dim_extremum(inner, dim, False, 2, ext, indices=True)
        forms = [f"torch.argmax({inner.text}, dim={dim})", f"torch.argmax({inner.text}, {dim})"]
        if inner.form != "op":
            forms += [f"{inner.text}.argmax(dim={dim})", f"{inner.text}.argmax(dim={dim}, keepdim=False)"]
        return Expr(rng.choice(forms), "call")

    # -- scalar expressions ---------------------------------------------------------------
    def small_int(self) -> str:
        """An int expression that stays small: loop bounds."""
        rng = self.rng
        smalls = [v.name for v in self.scope.visible().values() if v.kind == "int" and v.small]
        r = rng.random()
        if not smalls or r < 0.3:
            if not smalls and rng.random() < 0.7:
                smalls.append(self.new_param("int", small=True).name)
            else:
                return str(rng.choice([0, 1, 2, 3, 4, -1]))
        name = rng.choice(smalls)
        r = rng.random()
        if r < 0.6:
            return name
        if r < 0.8:
            return f"{name} + {rng.choice([1, 2])}"
        if r < 0.9:
            return f"{name} - 1"
        return f"{name} * 2"

    def int_expr(self, depth: int = 2) -> str:
        rng = self.rng
        ints = [v.name for v in self.scope.visible().values() if v.kind == "int"]
        if depth <= 0 or rng.random() < 0.35:
            r = rng.random()
            if ints and r < 0.6:
                return rng.choice(ints)
            if r < 0.7 and len(self.params) < 10:
                return self.new_param("int", small=rng.random() < 0.5).name
            if r < 0.97:
                return str(rng.choice([0, 1, 2, 3, 5, 7, 10, -1, -3]))
            self.features.add("int-overflow")
            return str(rng.choice([4611686018427387904, 9223372036854775807, 3037000500, 1000003]))
        r = rng.random()
        if r < 0.1:
            return f"-{self.int_atom(depth - 1)}"
        op = rng.choice(["+", "-", "*", "%", "+", "*"])
        if op == "%":
            self.features.add("mod")
        return f"{self.int_atom(depth - 1)} {op} {self.int_atom(depth - 1)}"

    def int_atom(self, depth: int) -> str:
        e = self.int_expr(depth)
        return f"({e})" if " " in e or e.startswith("-") else e

    def float_expr(self, depth: int = 2) -> str:
        rng = self.rng
        floats = [v.name for v in self.scope.visible().values() if v.kind == "float"]
        if depth <= 0 or rng.random() < 0.4:
            r = rng.random()
            if floats and r < 0.55:
                return rng.choice(floats)
            if r < 0.65 and len(self.params) < 10:
                return self.new_param("float").name
            return rng.choice(["0.5", "2.0", "0.0", "1.25", "3.0", "0.1", "1e308", "-0.0"])
        if rng.random() < 0.12:
            # a math function of a float or an int (issue 18): CPython's values and errors
            self.features.add("math")
            fn = rng.choice(["sqrt", "exp", "log", "tanh", "fabs"])
            arg = self.float_expr(depth - 1) if rng.random() < 0.7 else self.int_expr(depth - 1)
            return f"math.{fn}({arg})"
        op = rng.choice(["+", "-", "*", "/", "%", "*"])
        a, b = self.float_expr(depth - 1), self.float_expr(depth - 1)
        wrap = lambda e: f"({e})" if " " in e or e.startswith("-") else e
        return f"{wrap(a)} {op} {wrap(b)}"

    def bool_expr(self, depth: int = 2) -> str:
        rng = self.rng
        r = rng.random()
        bools = [v.name for v in self.scope.visible().values() if v.kind == "bool"]
        if depth > 0 and r < 0.15:
            op = rng.choice(["and", "or"])
            return f"({self.bool_expr(depth - 1)}) {op} ({self.bool_expr(depth - 1)})"
        if depth > 0 and r < 0.22:
            return f"not ({self.bool_expr(depth - 1)})"
        if r < 0.32:
            if bools and rng.random() < 0.5:
                return rng.choice(bools)
            if len(self.params) < 10:
                return self.new_param("bool").name
        if r < 0.45:
            self.features.add("chained-compare")
            if rng.random() < 0.4:
                # later operands that can fail: a modulo by the middle, an overflowing product
                n = self.small_int()
                if rng.random() < 0.5:
                    self.features.add("chained-compare-fails")
                    return f"0 < {n} < 10 % ({n})"
                self.features.add("chained-compare-fails")
                return f"{n} < {self.int_atom(1)} < {n} * 4611686018427387904"
            a, b, c = self.int_atom(1), self.int_atom(1), self.int_atom(1)
            ops = [rng.choice(["<", "<=", "==", "!=", ">", ">="]) for _ in range(2)]
            return f"{a} {ops[0]} {b} {ops[1]} {c}"
        cmp = rng.choice(["<", "<=", "==", "!=", ">", ">="])
        if rng.random() < 0.25:
            return f"{self.float_expr(1)} {cmp} {self.float_expr(1)}"
        loop_vars = [v.name for v in self.scope.visible().values() if v.kind == "int" and v.protected]
        if loop_vars and rng.random() < 0.5:
            i = rng.choice(loop_vars)
            return rng.choice([f"{i} % 2 == 0", f"({i} + {self.int_atom(0)}) % 3 == 1", f"{i} {cmp} {self.int_atom(1)}"])
        return f"{self.int_atom(1)} {cmp} {self.int_atom(1)}"

    # -- statements -----------------------------------------------------------------------
    def assignable_tensors(self) -> list[Var]:
        return [v for v in self.scope.visible().values() if v.kind in TENSOR_KINDS and not v.protected]

    def assign_tensor(self, var: Var, expr: Expr) -> None:
        self.emit(f"{var.name} = {expr.text}")
        if expr.form == "name":
            src = self.scope.find(expr.text)
            if src is not None and src.alias:
                var.alias = True

    def new_tensor_local(self, shape: tuple, depth: int, prefer=None, prefix="h") -> Var:
        expr = self.texpr(shape, depth, prefer)
        var = Var(self.fresh(prefix), KIND_OF_RANK[len(shape)], shape)
        if expr.form == "name":
            var.alias = self.scope.find(expr.text).alias
        self.emit(f"{var.name} = {expr.text}")
        self.scope.own[var.name] = var
        return var

    def random_shape(self) -> tuple:
        r = self.rng.random()
        if r < 0.6:
            return ("B", self.rng.choice(FEATURE_DIMS))
        if r < 0.85:
            return (self.rng.choice(["B"] + FEATURE_DIMS),)
        return (self.rng.choice(FEATURE_DIMS), self.rng.choice(FEATURE_DIMS))

    def scalar_stmt(self) -> bool:
        rng = self.rng
        targets = [v for v in self.scope.visible().values() if v.kind in ("int", "float", "bool")
                   and not v.protected and not v.param]
        if not targets:
            return False
        var = rng.choice(targets)
        if var.kind == "int":
            if var.small:
                return False
            r = rng.random()
            if r < 0.4:
                self.emit(f"{var.name} = {var.name} + {self.int_atom(1)}")
            elif r < 0.5:
                self.features.add("int-overflow")
                self.emit(f"{var.name} = {var.name} * {rng.choice([3, 1000003, 3037000500, 4611686018427387904])} + {self.int_atom(0)}")
            elif r < 0.75:
                self.emit(f"{var.name} += {self.int_atom(1)}")
            else:
                self.emit(f"{var.name} = {self.int_expr(2)}")
        elif var.kind == "float":
            if rng.random() < 0.5:
                self.emit(f"{var.name} = {var.name} + {self.float_expr(1)}")
            else:
                self.emit(f"{var.name} = {self.float_expr(2)}")
        else:
            self.emit(f"{var.name} = {self.bool_expr(1)}")
        return True

    def tensor_update(self) -> None:
        """Rebind an outer tensor variable (same shape), often from itself."""
        rng = self.rng
        targets = [v for v in self.assignable_tensors() if not v.param or rng.random() < 0.2]
        if not targets:
            shape = self.random_shape()
            self.new_tensor_local(shape, rng.choice([1, 2]))
            return
        var = rng.choice(targets)
        r = rng.random()
        others = [v for v in self.assignable_tensors() if v.shape == var.shape and v is not var
                  and not v.param and not var.param]
        if self.block_depth and r < 0.12 and others and rng.random() < 0.5:
            # one value under two outer names: both carried out of the loop body or arm
            self.features.add("two-names")
            other = rng.choice(others)
            if rng.random() < 0.5:
                z = self.new_tensor_local(var.shape, 1, prefer=var.name, prefix="z")
                self.emit(f"{var.name} = {z.name}")
                self.emit(f"{other.name} = {z.name}")
            else:
                self.features.add("repeated-expr")
                expr = self.texpr(var.shape, 2, prefer=other.name)
                if expr.form == "name":
                    expr = self.unary(expr)
                self.emit(f"{var.name} = {expr.text}")
                self.emit(f"{other.name} = {expr.text}")
            return
        if self.block_depth and r < 0.12:
            # one value under two names
            self.features.add("two-names")
            z = self.new_tensor_local(var.shape, 1, prefer=var.name, prefix="z")
            a, b = self.fresh("a"), self.fresh("a")
            self.emit(f"{a} = {z.name}")
            self.emit(f"{b} = {z.name}")
            for n in (a, b):
                self.scope.own[n] = Var(n, z.kind, z.shape, alias=z.alias)
            op = rng.choice(["+", "*", "-"])
            self.emit(f"{var.name} = {a} {op} {b}")
            return
        if self.block_depth and r < 0.22:
            # identical expressions repeated
            self.features.add("repeated-expr")
            expr = self.texpr(var.shape, 2, prefer=var.name)
            if expr.form == "name":
                expr = self.unary(expr)
            a, b = self.fresh("r"), self.fresh("r")
            self.emit(f"{a} = {expr.text}")
            self.emit(f"{b} = {expr.text}")
            for n in (a, b):
                self.scope.own[n] = Var(n, var.kind, var.shape)
            self.emit(f"{var.name} = {a} {rng.choice(['+', '*', '-'])} {b}")
            return
        if r < 0.3:
            # swap two same-shaped variables through a temporary
            others = [v for v in self.assignable_tensors() if v.shape == var.shape and v is not var]
            if others:
                self.features.add("swap")
                other = rng.choice(others)
                if rng.random() < 0.08:
                    # the tuple swap: refused by the claim rules (RXT010) as of this writing
                    self.features.add("tuple-swap")
                    self.emit(f"{var.name}, {other.name} = {other.name}, {var.name}")
                    var.alias = other.alias = var.alias or other.alias
                    return
                tmp = self.fresh("s")
                self.emit(f"{tmp} = {var.name}")
                self.emit(f"{var.name} = {other.name}")
                self.emit(f"{other.name} = {tmp}")
                self.scope.own[tmp] = Var(tmp, var.kind, var.shape, alias=var.alias)
                var.alias = var.alias or other.alias
                other.alias = other.alias or var.alias
                return
        expr = self.texpr(var.shape, rng.choice([1, 2, 3]), prefer=var.name)
        self.assign_tensor(var, expr)

    def block(self, stmts: int, in_loop: bool) -> None:
        """A nested block: at least one statement, names bound in it vanish after it."""
        self.scope = Scope(self.scope)
        self.block_depth += 1
        self.indent += 1
        for _ in range(stmts):
            self.statement(in_loop)
        self.indent -= 1
        self.block_depth -= 1
        self.scope = self.scope.parent

    def ret_expr(self) -> str:
        kind = self.ret
        live = [v.name for v in self.scope.visible().values()
                if v.kind in TENSOR_KINDS and v.shape == self.ret_shape and not v.param]
        if kind in TENSOR_KINDS and len(live) >= 2 and self.rng.random() < 0.5:
            # every local of the result's shape feeds the result, so all stay live
            self.features.add("all-live")
            ops = [self.rng.choice(["+", "-", "*"]) for _ in live[1:]]
            text = live[0] + "".join(f" {op} {name}" for op, name in zip(ops, live[1:]))
            return f"torch.{self.rng.choice(['tanh', 'sigmoid', 'relu', 'abs'])}({text})"
        if kind in TENSOR_KINDS:
            e = self.texpr(self.ret_shape, self.rng.choice([1, 2]), prefer=None)
            if e.form == "name":
                var = self.scope.find(e.text)
                if var is None or var.alias or var.param:
                    e = self.unary(e)
            return e.text
        if kind == "L":
            return self.labels(self.ret_shape, self.rng.choice([0, 1, 2])).text
        if kind == "int":
            return self.int_expr(2)
        if kind == "float":
            return self.float_expr(2)
        return self.bool_expr(2)

    def statement(self, in_loop: bool) -> None:
        rng = self.rng
        r = rng.random()
        can_nest = self.block_depth < 3 and self.ops < self.max_ops
        if in_loop and r < 0.1:
            self.features.add("break" if rng.random() < 0.5 else "continue")
            word = "break" if "break" in self.features and rng.random() < 0.5 else rng.choice(["break", "continue"])
            self.features.add(word)
            self.emit(f"if {self.bool_expr(1)}:")
            self.indent += 1
            if rng.random() < 0.4:
                self.scope = Scope(self.scope)
                self.tensor_update()
                self.scope = self.scope.parent
            self.emit(word)
            self.indent -= 1
            return
        if r < 0.16 and self.block_depth:
            self.features.add("early-return")
            self.emit(f"if {self.bool_expr(1)}:")
            self.indent += 1
            self.emit(f"return {self.ret_expr()}")
            self.indent -= 1
            return
        if can_nest and r < 0.3:
            self.compound()
            return
        if r < 0.45 and self.scalar_stmt():
            return
        self.tensor_update()

    def compound(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.4:
            self.features.add("for")
            target = self.fresh("i")
            it = rng.random()
            if it < 0.15:
                self.features.add("for-list")
                items = rng.sample([-1, 0, 1, 2, 3, 5], rng.choice([1, 2, 3]))
                header = f"for {target} in [{', '.join(map(str, items))}]:"
            elif it < 0.6:
                header = f"for {target} in range({self.small_int()}):"
            elif it < 0.85:
                header = f"for {target} in range({self.small_int()}, {self.small_int()}):"
            else:
                header = f"for {target} in range({self.small_int()}, {self.small_int()}, {rng.choice([1, 2, 3])}):"
            if self.loop_depth:
                self.features.add("nested-loop")
            self.emit(header)
            self.loop_depth += 1
            self.scope = Scope(self.scope)
            self.scope.own[target] = Var(target, "int", (), small=True, protected=True)
            self.block_depth += 1
            self.indent += 1
            for _ in range(rng.choice([1, 2, 2, 3])):
                self.statement(True)
            self.indent -= 1
            self.block_depth -= 1
            self.scope = self.scope.parent
            self.loop_depth -= 1
        elif r < 0.6:
            self.features.add("while")
            counter = self.fresh("j")
            self.emit(f"{counter} = 0")
            # not `small`: a counter never bounds a loop (its own would never end)
            var = Var(counter, "int", (), small=False, protected=True)
            self.scope.own[counter] = var
            bound = self.small_int()
            cond = f"{counter} < {bound}"
            if rng.random() < 0.25:
                cond = f"{cond} and ({self.bool_expr(1)})"
            if self.loop_depth:
                self.features.add("nested-loop")
            self.emit(f"while {cond}:")
            self.loop_depth += 1
            self.scope = Scope(self.scope)
            self.block_depth += 1
            self.indent += 1
            self.emit(f"{counter} = {counter} + 1")
            for _ in range(rng.choice([1, 2, 3])):
                self.statement(True)
            self.indent -= 1
            self.block_depth -= 1
            self.scope = self.scope.parent
            self.loop_depth -= 1
        else:
            self.features.add("if")
            in_loop = self.loop_depth > 0
            self.emit(f"if {self.bool_expr(2)}:")
            self.block(rng.choice([1, 1, 2]), in_loop)
            while rng.random() < 0.3:
                self.features.add("elif")
                self.emit(f"elif {self.bool_expr(1)}:")
                self.block(rng.choice([1, 2]), in_loop)
            if rng.random() < 0.6:
                self.emit("else:")
                self.block(rng.choice([1, 2]), in_loop)

    def start(self) -> None:
        """The first parameter and the result's kind and shape."""
        rng = self.rng
        self.new_param("M", ("B", "D0"))
        self.ret = rng.choices(["M", "V", "L", "int", "float", "bool"], [45, 25, 12, 8, 5, 5])[0]
        if self.ret == "M":
            self.ret_shape = ("B", rng.choice(FEATURE_DIMS))
        elif self.ret in ("V", "L"):
            self.ret_shape = (rng.choice(["B", "B", "1"] + FEATURE_DIMS),)

    def annotation(self, kind: str) -> str:
        return lane_annotation(self.lane)[kind]

    def header(self) -> str:
        return lane_header(self.lane)

    def generate(self) -> Program:
        rng = self.rng
        self.start()
        # straight-line prefix
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            self.new_tensor_local(self.random_shape(), rng.choice([1, 2, 3]), prefer="x0")
        if self.cf:
            # carried values: a tensor and accumulators
            shape = self.ret_shape if self.ret in TENSOR_KINDS else self.random_shape()
            self.new_tensor_local(shape, rng.choice([1, 2]), prefer="x0")
            if rng.random() < 0.5:
                self.new_tensor_local(shape, rng.choice([1, 2]), prefer="x0")
            if rng.random() < 0.6:
                acc = self.fresh("acc")
                self.emit(f"{acc} = {rng.choice([0, 1, 0])}")
                self.top.own[acc] = Var(acc, "int")
            if rng.random() < 0.3:
                s = self.fresh("s")
                self.emit(f"{s} = {rng.choice(['0.0', '1.0'])}")
                self.top.own[s] = Var(s, "float")
            if rng.random() < 0.15:
                fl = self.fresh("c")
                self.emit(f"{fl} = {self.bool_expr(1)}")
                self.top.own[fl] = Var(fl, "bool")
            for _ in range(rng.choice([1, 1, 2, 3])):
                self.compound()
                if rng.random() < 0.3:
                    self.tensor_update()
        for _ in range(rng.choice([0, 1])):
            self.tensor_update()
        self.emit(f"return {self.ret_expr()}")
        params = ", ".join(f"{p.name}: {self.annotation(p.kind)}" for p in self.params)
        ret_shape = self.ret_shape if self.ret in TENSOR_KINDS + ("L",) else ()
        source = self.header() + f"\n\ndef f({params}) -> {self.annotation(self.ret)}:\n" + "\n".join(self.lines) + "\n"
        return Program(
            source=source,
            name="f",
            # int64 ids ("I") carry (length symbol, bound symbol) as their shape
            params=[(p.name, p.kind, p.shape + ((p.bound,) if p.kind == "I" else ()), p.small) for p in self.params],
            returns=self.ret,
            control_flow=self.cf,
            features=sorted(self.features),
            lane=self.lane,
        )


class _NeverStream:
    """A stream whose every draw says no (`random() == 1.0`): `xrng` inside a join form."""

    def random(self):
        return 1.0

    def choice(self, seq):
        return seq[0]


class Rank3Generator(Generator):
    """Programs of the rank-3 lane (README, "The extended surface has rank-3 tensors too"):
    `TensorF32Cpu3D` parameters and results of shape (B, Di, Dj) and rank-3 locals, built from
    batched and broadcast products (`T @ T`, a batch of one against a batch, `T @ M`, `M @ T`;
    `@`, `torch.matmul`, `.matmul`, a bias added), `F.linear` of a rank-3 input, attention
    (`softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v` and its
    spellings), `+ - * /` and `torch.add/sub/mul/div` with rank-3, matrix, vector and size-1
    broadcasts and Python scalars, the activations and scalar-parameter ops,
    `F.dropout(training=False)`, softmax/log_softmax over every dim, adjacent `transpose`s, and
    `reshape`/`view` to and from rank 3 (sizes read from `x.shape[i]`/`x.size(i)`, products of
    them, or -1): a reordering reshape of the same rank, and round trips through a matrix of
    merged rows (`x.reshape(-1, x.shape[-1])`, dimension symbol "B*D0") or a vector, so that
    the float32 rank-1/2 surface (the fused kernels) runs between rank-3 ops. Control flow,
    scalars and rank-1/2 subexpressions are the float32 generator's."""

    lane = "rank3"
    # torch.bmm and the attention fusion (2026-12-03, 398f75f and 75c414b): drawn from a stream
    # of the seed's own (`xrng`), never from `rng`, so every program keeps the draws of `rng`
    # and changes only in the text these draws rewrite; a seed whose draws all say no keeps its
    # program.
    BMM = 0.35  # a batched T @ T of equal batches is written `torch.bmm(a, b)` / `a.bmm(b)`
    BMM_MISMATCH = 0.3  # a batch-of-one T @ T (matmul broadcasts it) is a bmm: eager raises unless B is 1
    ATTENTION_SCALE = 0.3  # an attention's scale is one of `ATTENTION_SCALES` (none, an int, ...)
    # The rank-3 joins (2026-12-03, dde014d): a rank-3 expression is a join form (`join3`) with
    # this chance, drawn from a third stream (`jrng`, "rank3j-<seed>"), which also writes the
    # whole form (`rng` and `xrng` are not drawn from inside it); without `jrng`, no joins.
    JOIN = 0.1
    DROPOUT = True  # F.dropout(training=False) (refused at float64/bfloat16)

    def __init__(self, rng: random.Random, control_flow: bool, xrng: random.Random | None = None,
                 jrng: random.Random | None = None):
        super().__init__(rng, control_flow)
        self.xrng = xrng if xrng is not None else random.Random(0)
        self.jrng = jrng

    def start(self) -> None:
        rng = self.rng
        self.new_param("T", ("B", "D0", "D1"))
        self.ret = rng.choices(["T", "M", "V"], [75, 18, 7])[0]
        if self.ret == "T":
            self.ret_shape = self.t_shape()
        elif self.ret == "M":
            d, e = rng.choice(FEATURE_DIMS), rng.choice(FEATURE_DIMS)
            self.ret_shape = rng.choice([("B", d), (f"B*{d}", e)])
        else:
            self.ret_shape = (rng.choice([f"B*{rng.choice(FEATURE_DIMS)}*{rng.choice(FEATURE_DIMS)}", "B"]),)

    def t_shape(self) -> tuple:
        return ("B", self.rng.choice(FEATURE_DIMS), self.rng.choice(FEATURE_DIMS))

    def random_shape(self) -> tuple:
        if self.rng.random() < 0.7:
            return self.t_shape()
        return super().random_shape()

    def size_ref(self, sym: str) -> str:
        """An int expression for the size of `sym`, read from a visible tensor that has it."""
        if sym == "1":
            return "1"
        if "*" in sym:
            return " * ".join(self.size_ref(p) for p in sym.split("*"))
        found = [(v, i) for v in self.scope.visible().values() if v.kind in TENSOR_KINDS
                 for i, s in enumerate(v.shape) if s == sym]
        if not found:
            var = self.new_param("V", (sym,))
            found = [(var, 0)]
        v, i = self.rng.choice(found)
        rank = len(v.shape)
        return self.rng.choice([f"{v.name}.shape[{i}]", f"{v.name}.size({i})", f"{v.name}.shape[{i - rank}]"])

    def reshape_to(self, inner: Expr, sizes: list) -> Expr:
        """`inner` reshaped (or viewed) to `sizes` (int expressions or -1), in a spelling."""
        self.features.add("reshape")
        text = ", ".join(sizes)
        r = self.rng.random()
        if inner.form == "op" or r < 0.2:
            return Expr(f"torch.reshape({inner.text}, ({text}{',' if len(sizes) == 1 else ''}))", "call")
        if r < 0.45:
            self.features.add("view")
            return Expr(f"{inner.text}.view({text})", "call")
        if r < 0.55:
            return Expr(f"{inner.text}.reshape(({text}{',' if len(sizes) == 1 else ''}))", "call")
        return Expr(f"{inner.text}.reshape({text})", "call")

    def minus_one(self, sizes: list) -> list:
        """One size (sometimes) replaced by -1."""
        if len(sizes) > 1 and self.rng.random() < 0.6:
            i = self.rng.randrange(len(sizes))
            sizes = sizes[:i] + ["-1"] + sizes[i + 1:]
        return sizes

    def texpr(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        if len(shape) == 3:
            return self.t3expr(shape, depth, prefer)
        merged = any("*" in s for s in shape)
        if depth > 0 and self.ops < self.max_ops and (merged or self.chance(0.15)):
            e = self.from_rank3(shape, depth, prefer)
            if e is not None:
                return e
        return super().texpr(shape, depth, prefer)

    def from_rank3(self, shape: tuple, depth: int, prefer) -> Expr | None:
        """A matrix or vector of `shape` as a reshape of a rank-3 expression (merged dims)."""
        rng = self.rng
        self.ops += 1
        if len(shape) == 1:
            parts = shape[0].split("*")
            if len(parts) != 3:
                return None
            inner = self.t3expr(tuple(parts), depth - 1, prefer)
            return self.reshape_to(inner, ["-1"])
        rows, cols = shape
        if "*" in rows and "*" not in cols and len(rows.split("*")) == 2:
            b, r = rows.split("*")
            inner = self.t3expr((b, r, cols), depth - 1, prefer)
            sizes = rng.choice([["-1", self.size_ref(cols)], [self.size_ref(rows), "-1"],
                                [self.size_ref(rows), self.size_ref(cols)]])
            return self.reshape_to(inner, sizes)
        if "*" in rows or "*" in cols:
            return None
        # a size-1 dim dropped: (rows, 1, cols), (1, rows, cols) or (rows, cols, 1)
        tshape = rng.choice([(rows, "1", cols), ("1", rows, cols), (rows, cols, "1")])
        inner = self.t3expr(tshape, depth - 1, prefer)
        return self.reshape_to(inner, self.minus_one([self.size_ref(rows), self.size_ref(cols)]))

    def t3expr(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        if depth <= 0 or self.ops >= self.max_ops:
            return self.leaf(shape, prefer)
        rng = self.rng
        b, r, c = shape
        if self.jrng is not None and self.JOIN and self.jrng.random() < self.JOIN:
            return self.join3(shape, depth)
        choices = [("leaf", 2), ("unary", 3), ("binary", 4), ("matmul", 3), ("linear", 2), ("softmax", 2),
                   ("attention", 2), ("transpose", 2), ("reshape", 2)]
        what = rng.choices([k for k, _ in choices], [w for _, w in choices])[0]
        self.features.add("rank3")
        if what == "leaf":
            return self.leaf(shape, prefer)
        if what == "unary":
            inner = self.t3expr(shape, depth - 1, prefer)
            if rng.random() < 0.08 and self.DROPOUT:
                self.features.add("dropout")
                return Expr(f"F.dropout({inner.text}, training=False)", "call")
            return self.unary(inner)
        if what == "binary":
            a = self.t3expr(shape, depth - 1, prefer)
            if rng.random() < 0.2:
                return self.scalar_operand(a)
            k = rng.random()
            if k < 0.45:
                other = self.t3expr(shape, depth - 1, prefer)
            elif k < 0.65:
                other = self.texpr((r, c), depth - 1, prefer)
                self.features.add("broadcast")
            elif k < 0.85:
                other = self.texpr((c,), depth - 1, prefer)
                self.features.add("broadcast")
            else:
                other = self.t3expr(rng.choice([(b, r, "1"), (b, "1", c), ("1", r, c)]), depth - 1, prefer)
                self.features.add("broadcast-keepdim")
            if rng.random() < 0.3:
                a, other = other, a
            return self.binary(a, other)
        if what == "matmul":
            return self.batched_matmul(shape, depth, prefer)
        if what == "linear":
            self.ops += 1
            self.features.add("linear")
            k = rng.choice(FEATURE_DIMS)
            x = self.t3expr((b, r, k), depth - 1, prefer)
            w = self.leaf((c, k), weight=True)
            q = rng.random()
            if q < 0.5:
                return Expr(f"F.linear({x.text}, {w.text}, {self.leaf((c,), weight=True).text})", "call")
            if q < 0.7:
                return Expr(f"F.linear({x.text}, {w.text}) + {self.leaf((c,), weight=True).text}", "op")
            form = rng.choice(["{}, {}", "{}, {}, None", "{}, {}, bias=None"])
            return Expr("F.linear(" + form.format(x.text, w.text) + ")", "call")
        if what == "softmax":
            self.ops += 1
            inner = self.t3expr(shape, depth - 1, prefer)
            d = rng.choice([0, 1, 2, -1, -2, -3, -1, 2])
            name = "log_softmax" if rng.random() < 0.35 else "softmax"
            self.features.add(name)
            forms = [f"F.{name}({inner.text}, dim={d})", f"torch.{name}({inner.text}, {d})",
                     f"torch.{name}({inner.text}, dim={d})"]
            if inner.form != "op":
                forms += [f"{inner.text}.{name}(dim={d})", f"{inner.text}.{name}({d})"]
            return Expr(rng.choice(forms), "call")
        if what == "attention":
            return self.attention(shape, depth, prefer)
        if what == "transpose":
            self.ops += 1
            self.features.add("transpose")
            if rng.random() < 0.7:
                inner = self.t3expr((b, c, r), depth - 1, prefer)
                pairs = ["1, 2", "-2, -1", "2, 1", "-1, -2", "1, -1", "-2, 2"]
            else:
                inner = self.t3expr((r, b, c), depth - 1, prefer)
                pairs = ["0, 1", "1, 0", "-3, -2", "0, -2"]
            pair = rng.choice(pairs)
            if inner.form != "op" and rng.random() < 0.6:
                return Expr(f"{inner.text}.transpose({pair})", "call")
            return Expr(f"torch.transpose({inner.text}, {pair})", "call")
        # reshape to rank 3: from the same shape, a reordering of it, merged rows or a vector
        self.ops += 1
        k = rng.random()
        if k < 0.25:
            inner = self.t3expr(rng.choice([shape, (b, c, r)]), depth - 1, prefer)
        elif k < 0.75:
            inner = self.texpr((f"{b}*{r}", c), depth - 1, prefer)
        elif k < 0.9:
            inner = self.texpr((f"{b}*{r}*{c}",), depth - 1, prefer)
        else:
            inner = self.texpr((b, f"{r}*{c}"), depth - 1, prefer)
        return self.reshape_to(inner, self.minus_one([self.size_ref(b), self.size_ref(r), self.size_ref(c)]))

    def join3(self, shape: tuple, depth: int) -> Expr:
        """A rank-3 expression of `shape` through a join, every draw from `jrng` (its parts' too;
        `xrng` stays out of it): `torch.cat`/`concat`/`concatenate` of two or three rank-3 parts
        along any dim (negative ones too) or `torch.stack` of matrices into rank 3 (dims 0..2 and
        negative ones), list or tuple. The joined dim's size has no symbol, so it is used up:
        contracted by a batched product (`cat(.., dim=2) @ cat(.., dim=1)`, `F.linear` of a
        last-dim cat with a cat of weights, an attention over concatenated keys and values,
        `stack(.., dim=2) @ stack(.., dim=1)`), or the join (sometimes after a softmax over
        the joined dim) reshaped to rows of the last dim and reduced over them, a vector added to
        (or ...) a rank-3 expression."""
        saved_rng, saved_xrng, saved_jrng = self.rng, self.xrng, self.jrng
        self.rng = self.jrng
        self.xrng = _NeverStream()
        self.jrng = None  # no join inside a join's parts
        try:
            return self._join3(shape, depth)
        finally:
            self.rng, self.xrng, self.jrng = saved_rng, saved_xrng, saved_jrng

    def _display(self, parts: list) -> str:
        text = ", ".join(p.text for p in parts)
        return f"[{text}]" if self.rng.random() < 0.6 else f"({text})"

    def _cat(self, parts: list, dims: list) -> str:
        self.features.add("cat3")
        fn = self.rng.choice(["torch.cat", "torch.cat", "torch.cat", "torch.concat", "torch.concatenate"])
        d = self.rng.choice(dims)
        return f"{fn}({self._display(parts)}, dim={d})" if self.rng.random() < 0.8 else f"{fn}({self._display(parts)}, {d})"

    def _stack(self, parts: list, dims: list) -> str:
        self.features.add("stack3")
        d = self.rng.choice(dims)
        return f"torch.stack({self._display(parts)}, dim={d})" if self.rng.random() < 0.8 else f"torch.stack({self._display(parts)}, {d})"

    def _join3(self, shape: tuple, depth: int) -> Expr:
        rng = self.rng
        self.ops += 1
        self.features.update(("rank3", "join3"))
        b, r, c = shape
        n = rng.choice([2, 2, 2, 3])
        sub = max(0, depth - 1)
        k = rng.random()

        def product(left: str, right: str) -> Expr:
            form = rng.choice(["{} @ {}", "torch.matmul({}, {})", "{}.matmul({})"])
            return Expr(form.format(left, right), "op" if "@" in form else "call")

        if k < 0.2:
            # contraction over concatenated k: (b, r, k1+k2) @ (b, k1+k2, c)
            self.features.add("cat3-contract")
            ks = [rng.choice(FEATURE_DIMS) for _ in range(n)]
            left = self._cat([self.t3expr((b, r, kk), sub) for kk in ks], [2, -1])
            right = self._cat([self.t3expr((b, kk, c), sub) for kk in ks], [1, -2])
            return product(left, right)
        if k < 0.32:
            # F.linear of a last-dim cat with a cat of the weights' columns
            self.features.update(("cat3-linear", "linear"))
            ks = [rng.choice(FEATURE_DIMS) for _ in range(n)]
            x = self._cat([self.t3expr((b, r, kk), sub) for kk in ks], [2, -1])
            ws = [self.leaf((c, kk), weight=True) for kk in ks]
            w = f"torch.cat({self._display(ws)}, dim={rng.choice([1, -1])})"
            if rng.random() < 0.5:
                return Expr(f"F.linear({x}, {w}, {self.leaf((c,), weight=True).text})", "call")
            return Expr(f"F.linear({x}, {w})", "call")
        if k < 0.44:
            # attention over keys and values concatenated along their rows
            self.features.add("cat3-attention")
            d = rng.choice(FEATURE_DIMS)
            ss = [rng.choice(FEATURE_DIMS) for _ in range(n)]
            q = self.t3expr((b, r, d), sub)
            keys = self._cat([self.t3expr((b, s_, d), sub) for s_ in ss], [1, -2])
            vals = self._cat([self.t3expr((b, s_, c), sub) for s_ in ss], [1, -2])
            scores = f"{q.operand()} @ {keys}.transpose(-2, -1)"
            scores = rng.choice([f"{scores} * 0.125", f"{scores} / math.sqrt({self.size_ref(d)})", scores])
            name = "log_softmax" if rng.random() < 0.15 else "softmax"
            return Expr(f"torch.{name}({scores}, dim=-1) @ {vals}", "op")
        if k < 0.64:
            # stacks contracted: (b, r, n) @ (b, n, c)
            self.features.add("stack3-contract")
            left = self._stack([self.texpr((b, r), sub) for _ in range(n)], [2, -1])
            right = self._stack([self.texpr((b, c), sub) for _ in range(n)], [1, -2])
            return product(left, right)
        # a join reduced over the rows of its last dim, added to a rank-3 expression
        self.features.add("join3-reduced")
        if rng.random() < 0.55:
            if rng.random() < 0.5:
                dims = [0, -3]
                parts = [self.t3expr((rng.choice([b, b, "1"]), r, c), sub) for _ in range(n)]
            else:
                dims = [1, -2]
                parts = [self.t3expr((b, rng.choice(FEATURE_DIMS), c), sub) for _ in range(n)]
            joined = self._cat(parts, dims)
        else:
            rows = rng.choice([r, b] + FEATURE_DIMS)
            joined = self._stack([self.texpr((rows, c), sub) for _ in range(n)], [0, 1, -3, -2])
        if rng.random() < 0.3:
            self.features.add("softmax")
            m = re.search(r"dim=(-?\d)\)$|, (-?\d)\)$", joined)
            d = m.group(1) or m.group(2)
            joined = f"torch.{rng.choice(['softmax', 'log_softmax'])}({joined}, dim={d})"
        red = rng.choice(["sum", "mean", "amax", "amin"])
        vec = f"{joined}.reshape(-1, {self.size_ref(c)}).{red}({rng.choice(['0', 'dim=0'])})"
        base = self.t3expr(shape, sub)
        op = rng.choice(["+", "-", "*", "+"])
        if rng.random() < 0.3:
            return Expr(f"{vec} {op} {base.operand()}", "op")
        return Expr(f"{base.operand()} {op} {vec}", "op")

    def batched_matmul(self, shape: tuple, depth: int, prefer) -> Expr:
        rng = self.rng
        self.ops += 1
        self.features.add("matmul")
        b, r, c = shape
        k = rng.choice(FEATURE_DIMS)
        q = rng.random()
        ob = b
        if q < 0.5:
            a = self.t3expr((b, r, k), depth - 1, prefer)
            ob = "1" if rng.random() < 0.15 else b
            other = self.t3expr((ob, k, c), depth - 1, prefer)
            self.features.add("bmm")
        elif q < 0.75:
            a = self.t3expr((b, r, k), depth - 1, prefer)
            other = self.texpr((k, c), depth - 1, prefer)
            self.features.add("matmul-broadcast")
        else:
            a = self.texpr((r, k), depth - 1, prefer)
            other = self.t3expr((b, k, c), depth - 1, prefer)
            self.features.add("matmul-broadcast")
        form = rng.choice(["{} @ {}", "torch.matmul({}, {})", "{}.matmul({})"])
        if form.startswith("{}.") and a.form == "op":
            form = "torch.matmul({}, {})"
        text = form.format(a.operand() if form.startswith("{} @") else a.text,
                           other.operand() if form.startswith("{} @") else other.text)
        if q < 0.5:
            # the form stays the one `rng` drew (an "op" is only parenthesized more), so that
            # the later draws of `rng`, some of which depend on it, stay as they were
            text = self.bmm_text(a, other, ob == b) or text
        if rng.random() < 0.3:
            return Expr(f"{text} + {self.leaf((c,), weight=True).text}", "op")
        return Expr(text, "op" if "@" in form else "call")

    def bmm_text(self, a: Expr, other: Expr, same_batch: bool) -> str | None:
        """`torch.bmm(a, other)` or `a.bmm(other)` in place of a batched product, drawn from
        `xrng` (None: the product stays as `rng` wrote it). A batch of one against a batch is a
        bmm less often: bmm does not broadcast, so both sides raise (eager's RuntimeError)
        unless B is 1."""
        x = self.xrng
        if x.random() >= (self.BMM if same_batch else self.BMM * self.BMM_MISMATCH):
            return None
        self.features.add("torch.bmm" if same_batch else "torch.bmm-batch-mismatch")
        if a.form != "op" and x.random() < 0.4:
            return f"{a.text}.bmm({other.text})"
        return f"torch.bmm({a.text}, {other.text})"

    def attention(self, shape: tuple, depth: int, prefer) -> Expr:
        """softmax(q k^T / sqrt(d)) v, in several spellings; q, k, v rank-3 expressions."""
        rng = self.rng
        self.ops += 3
        self.features.add("attention")
        b, r, c = shape
        d, s = rng.choice(FEATURE_DIMS), rng.choice(FEATURE_DIMS)
        q = self.t3expr((b, r, d), depth - 1, prefer)
        k = self.t3expr((b, s, d), depth - 1, prefer)
        v = self.t3expr((b, s, c), depth - 1, prefer)
        size = f"{q.text}.shape[-1]" if q.form == "name" and rng.random() < 0.7 else self.size_ref(d)
        if " " in size:
            size = f"({size})"
        kt = (f"{k.text}.transpose({rng.choice(['-2, -1', '1, 2', '-1, -2'])})" if k.form != "op"
              else f"torch.transpose({k.text}, -2, -1)")
        prod = rng.choice([f"{q.operand()} @ {kt}", f"torch.matmul({q.text}, {kt})"])
        scale = rng.choice([f"{prod} / math.sqrt({size})", f"({prod}) * (1.0 / math.sqrt({size}))",
                            f"{prod} * 0.125", f"{prod} / 2.0"])
        if self.xrng.random() < self.ATTENTION_SCALE:
            # the fused op's other scales (75c414b): none, an int (a size), `* c` of an int, a
            # float expression or a literal, and a scale of zero (every weight equal, or NaN)
            form = self.xrng.choice(ATTENTION_SCALES)
            self.features.add("attention-scale")
            scale = form.format(prod=prod, size=size)
        name = "log_softmax" if rng.random() < 0.1 else "softmax"
        sm = rng.choice([f"F.{name}({scale}, dim=-1)", f"torch.{name}({scale}, -1)", f"F.{name}({scale}, dim=2)"])
        return Expr(rng.choice([f"{sm} @ {v.operand()}", f"torch.matmul({sm}, {v.text})"]), "op")


# The scales of an attention's scores besides the four `rng` draws (`Rank3Generator.attention`):
# `{prod}` the scores, `{size}` an int expression for q's last size.
ATTENTION_SCALES = ("{prod}", "{prod}", "{prod} / {size}", "({prod}) * {size}", "{prod} / 8", "{prod} * 3",
                    "{prod} * math.sqrt({size})", "{prod} * 0.5", "({prod}) / (math.sqrt({size}) + 1.0)",
                    "{prod} / 0.0", "{prod} * 0.0", "{prod} * -0.125", "{prod} / 1e-40", "{prod} * 1e30")


class DtypeGenerator(Generator):
    """Programs of the float64 and bfloat16 lanes (README, "The extended surface also takes
    float64 and bfloat16 CPU tensors"): every tensor `TensorF64Cpu1D/2D` or
    `TensorBF16Cpu1D/2D` (one dtype per program), results of that dtype or int64 argmax labels,
    over the ops those lanes claim: `F.linear` (with and without bias, the prologue, two-layer
    heads), `@`/`torch.matmul` (2-2, 2-1, 1-2), `+ - * /` with broadcasts and Python scalars,
    the activations of the op table, softmax/log_softmax, sum/mean/amax/amin/argmax along a
    dim, the views and `F.layer_norm`. The float32 generator's shapes, control flow and scalars;
    its other ops (selection, joins, fills, scalar-parameter ops, max/min along a dim) are
    left out."""

    UNARY = ["relu", "sigmoid", "tanh", "abs", "neg", "negative", "square", "exp", "log", "sqrt", "rsqrt"]

    def __init__(self, rng: random.Random, control_flow: bool, lane: str):
        super().__init__(rng, control_flow)
        self.lane = lane

    def start(self) -> None:
        rng = self.rng
        self.new_param("M", ("B", "D0"))
        self.ret = rng.choices(["M", "V", "L"], [55, 32, 13])[0]
        if self.ret == "M":
            self.ret_shape = ("B", rng.choice(FEATURE_DIMS))
        else:
            self.ret_shape = (rng.choice(["B", "B", "1"] + FEATURE_DIMS),)

    def unary(self, inner: Expr) -> Expr:
        self.ops += 1
        rng = self.rng
        r = rng.random()
        x = inner.text
        if r < 0.12:
            if rng.random() < 0.3:
                self.features.add("gelu_tanh")
                return Expr(f"F.gelu({x}, approximate='tanh')", "call")
            self.features.add("gelu")
            return Expr(f"F.gelu({x})", "call")
        if r < 0.2:
            self.features.add("silu")
            return Expr(f"F.silu({x})", "call")
        if r < 0.25:
            self.features.add("relu6")
            return Expr(f"F.relu6({x})", "call")
        op = rng.choice(self.UNARY)
        self.features.add(op)
        if inner.form != "op" and r < 0.6:
            return Expr(f"{x}.{op}()", "call")
        if op == "relu" and rng.random() < 0.4:
            return Expr(f"F.relu({x})", "call")
        return Expr(f"torch.{op}({x})", "call")

    def param_unary(self, inner: Expr) -> Expr:
        return self.unary(inner)

    def select(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        return self.binary(self.texpr(shape, depth - 1, prefer), self.texpr(shape, depth - 1, prefer))

    def newop(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        self.ops += 1
        self.features.add("layer_norm")
        return self.layer_norm(self.texpr(shape, depth - 1, prefer), shape, prefer)

    def reduce_kind(self) -> str:
        return self.rng.choice(["mean", "sum", "mean", "sum", "amax", "amin"])

    def label_extremum(self):
        return None


class Rank0Generator(Generator):
    """Programs of the rank-0 kind (README, "Reductions over every dim give rank-0 tensors"):
    the float32 generator's programs where whole-tensor reductions (`x.sum()`, `x.mean()`,
    `x.max()`, `x.min()`, `x.amax()`, `x.amin()`, `torch.sum(x)` ...) are values: in `+ - * /`
    with tensors of rank 1-2, Python scalars and each other, under unary ops; read back with
    `.item()`/`float(...)` into float code (accumulators, conditions, returned floats); tensor
    comparisons as the whole test of an `if`/`elif`/`while` (rank 0, or a tensor of more than
    one element where both sides raise); `.item()` of a multi-element tensor now and then;
    `TensorF32Cpu0D` parameters and results."""

    lane = "rank0"
    REDUCTIONS = ("sum", "mean", "max", "min", "amax", "amin")
    # `torch.stack` of rank-0 tensors (2026-12-03, dde014d): a rank-0 expression is a stack
    # form (`stacked`) with this chance, drawn from a stream of its own (`xrng`,
    # "rank0x-<seed>"), which also writes the whole form; without `xrng`, no stacks. A few of
    # them are `torch.cat` of the parts instead (refused, as eager raises).
    STACK = 0.12
    CAT_REFUSED = 0.03

    def __init__(self, rng: random.Random, control_flow: bool, xrng: random.Random | None = None):
        super().__init__(rng, control_flow)
        self.r0_params: list[str] = []
        self.xrng = xrng

    def start(self) -> None:
        super().start()
        rng = self.rng
        if rng.random() < 0.12:
            self.ret, self.ret_shape = "S", ()
        elif self.ret in ("int", "bool", "L") and rng.random() < 0.5:
            self.ret = "float"

    def annotation(self, kind: str) -> str:
        return "TensorF32Cpu0D" if kind == "S" else super().annotation(kind)

    def r0_param(self) -> str:
        var = self.new_param("S", (), prefix="p")
        del self.top.own[var.name]  # only rank-0 expressions read it
        self.r0_params.append(var.name)
        return var.name

    def r0expr(self, depth: int = 1) -> Expr:
        """A rank-0 tensor expression."""
        if self.xrng is not None and self.STACK and self.xrng.random() < self.STACK:
            saved_rng, saved_xrng = self.rng, self.xrng
            self.rng, self.xrng = saved_xrng, None  # the form's draws, its parts' too, from xrng
            try:
                return self.stacked(depth)
            finally:
                self.rng, self.xrng = saved_rng, saved_xrng
        rng = self.rng
        self.features.add("rank0")
        r = rng.random()
        if self.r0_params and r < 0.12 or (r < 0.04 and len(self.params) < 10):
            return Expr(rng.choice(self.r0_params) if self.r0_params and r < 0.12 else self.r0_param(), "name")
        if depth > 0 and r < 0.3:
            a = self.r0expr(depth - 1)
            if rng.random() < 0.5:
                other = self.r0expr(depth - 1).operand()
            else:
                other = self.float_expr(0) if rng.random() < 0.7 else str(rng.choice([1, 2, -3, 0]))
                other = f"({other})" if " " in other or other.startswith("-") else other
            op = rng.choice(["+", "-", "*", "/"])
            if rng.random() < 0.3:
                return Expr(f"{other} {op} {a.operand()}", "op")
            return Expr(f"{a.operand()} {op} {other}", "op")
        if depth > 0 and r < 0.42:
            inner = self.r0expr(depth - 1)
            fn = rng.choice(["relu", "exp", "sqrt", "tanh", "abs", "sigmoid", "neg"])
            # a method of a parenthesized operation is refused (RXT030: bind it to a name)
            if rng.random() < 0.5 or inner.form == "op":
                return Expr(f"torch.{fn}({inner.text})", "call")
            return Expr(f"{inner.operand()}.{fn}()", "call")
        shape = self.random_shape() if rng.random() < 0.6 else (rng.choice(["B"] + FEATURE_DIMS),)
        inner = self.texpr(shape, rng.choice([0, 0, 1]), prefer="x0")
        red = rng.choice(self.REDUCTIONS)
        self.features.add(f"rank0-{red}")
        if rng.random() < 0.3 or inner.form == "op":
            return Expr(f"torch.{red}({inner.text})", "call")
        return Expr(f"{inner.text}.{red}()", "call")

    def stack_text(self, depth: int) -> tuple:
        """`torch.stack` of rank-0 parts (whole reductions, rank-0 parameters, their arithmetic),
        dim 0 or -1, list or tuple: (text, number of parts)."""
        rng = self.rng
        n = rng.choice([1, 2, 2, 3, 3, 4])
        parts = [self.r0expr(max(0, depth - 1)).text for _ in range(n)]
        text = ", ".join(parts)
        display = f"[{text}]" if rng.random() < 0.6 else f"({text}{',' if n == 1 else ''})"
        if rng.random() < self.CAT_REFUSED:
            self.features.add("rank0-cat-refused")
            return f"torch.cat({display})", n
        self.features.add("rank0-stack")
        dim = rng.choice(["", ", dim=0", ", dim=-1", ", 0", ", -1"])
        return f"torch.stack({display}{dim})", n

    def stacked(self, depth: int) -> Expr:
        """A rank-0 expression through a stack of rank-0 parts: the vector (under a softmax,
        log_softmax or unary op sometimes) reduced whole."""
        rng = self.rng
        self.features.add("rank0")
        vec, _ = self.stack_text(depth)
        k = rng.random()
        if k < 0.25:
            vec = f"torch.{rng.choice(['softmax', 'log_softmax'])}({vec}, dim={rng.choice([0, -1])})"
        elif k < 0.45:
            vec = f"torch.{rng.choice(['relu', 'exp', 'tanh', 'abs', 'sigmoid'])}({vec})"
        elif k < 0.55:
            vec = f"({vec} * {rng.choice(['2.0', '0.5', '-1', '3'])})"
        red = rng.choice(self.REDUCTIONS)
        if rng.random() < 0.3 or vec.startswith("("):
            return Expr(f"torch.{red}({vec})", "call")
        return Expr(f"{vec}.{red}()", "call")

    def texpr(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        rng = self.rng
        if shape == ("1",) and self.xrng is not None and self.STACK and self.xrng.random() < self.STACK:
            # a one-part stack is a vector of one element (the literal dim 1)
            saved_rng, saved_xrng = self.rng, self.xrng
            self.rng, self.xrng = saved_xrng, None
            try:
                self.features.add("rank0-stack")
                part = self.r0expr(1).text
                display = f"[{part}]" if self.rng.random() < 0.6 else f"({part},)"
                return Expr(f"torch.stack({display}{self.rng.choice(['', ', dim=0', ', -1'])})", "call")
            finally:
                self.rng, self.xrng = saved_rng, saved_xrng
        if depth > 0 and self.ops < self.max_ops and len(shape) in (1, 2) and rng.random() < 0.12:
            self.ops += 1
            self.features.add("rank0-broadcast")
            a = super().texpr(shape, depth - 1, prefer)
            b = self.r0expr(1)
            op = rng.choice(["+", "-", "*", "/"])
            if rng.random() < 0.35:
                return Expr(f"{b.operand()} {op} {a.operand()}", "op")
            return Expr(f"{a.operand()} {op} {b.operand()}", "op")
        return super().texpr(shape, depth, prefer)

    def read_back(self) -> str:
        """A Python float read from a tensor: `.item()` or `float(...)` of a rank-0 value,
        now and then of a tensor that may have more than one element (both sides raise)."""
        rng = self.rng
        self.features.add("item")
        if rng.random() < 0.06:
            self.features.add("item-many")
            e = self.leaf(self.random_shape(), prefer="x0")
        else:
            e = self.r0expr(1)
        return f"{e.text}.item()" if rng.random() < 0.6 and e.form != "op" else f"float({e.text})"

    def float_expr(self, depth: int = 2) -> str:
        if self.rng.random() < 0.15:
            return self.read_back()
        return super().float_expr(depth)

    def tensor_cond(self) -> str:
        """A comparison with a tensor side, the whole test of an if/elif/while."""
        rng = self.rng
        self.features.add("tensor-cond")
        if rng.random() < 0.06:
            self.features.add("tensor-cond-many")
            a = self.leaf(self.random_shape(), prefer="x0")
        else:
            a = self.r0expr(1)
        r = rng.random()
        if r < 0.35:
            b = self.r0expr(0).operand()
        elif r < 0.75:
            b = self.float_expr(0)
        else:
            b = str(rng.choice([0, 1, -1, 3]))
        cmp = rng.choice(["<", "<=", "==", "!=", ">", ">="])
        if rng.random() < 0.3:
            return f"{b} {cmp} {a.operand()}"
        return f"{a.operand()} {cmp} {b}"

    def cond_test(self) -> str:
        """An if/elif/while test: a tensor comparison, or (82a281f) one under `and`/`or`
        (with another one or a Python bool) or `not`."""
        rng = self.rng
        r = rng.random()
        if r < 0.75:
            return self.tensor_cond()
        self.features.add("tensor-cond-logic")
        if r < 0.85:
            return f"not ({self.tensor_cond()})"
        other = self.tensor_cond() if rng.random() < 0.5 else self.bool_expr(0)
        parts = [f"({self.tensor_cond()})", f"({other})"]
        rng.shuffle(parts)
        return f" {rng.choice(['and', 'or'])} ".join(parts)

    def compound(self) -> None:
        rng = self.rng
        if rng.random() >= 0.4:
            return super().compound()
        in_loop = self.loop_depth > 0
        if rng.random() < 0.6:
            self.features.add("if")
            self.emit(f"if {self.cond_test()}:")
            self.block(rng.choice([1, 1, 2]), in_loop)
            if rng.random() < 0.3:
                self.features.add("elif")
                self.emit(f"elif {self.cond_test()}:")
                self.block(1, in_loop)
            if rng.random() < 0.5:
                self.emit("else:")
                self.block(1, in_loop)
            return
        # a while loop on a tensor condition, bounded by a counter and a break
        self.features.add("while")
        self.features.add("tensor-while")
        counter = self.fresh("j")
        self.emit(f"{counter} = 0")
        self.scope.own[counter] = Var(counter, "int", (), small=False, protected=True)
        self.emit(f"while {self.cond_test()}:")
        self.loop_depth += 1
        self.scope = Scope(self.scope)
        self.block_depth += 1
        self.indent += 1
        self.emit(f"{counter} = {counter} + 1")
        self.emit(f"if {counter} > {rng.choice([1, 2, 3, 5])}:")
        self.emit("    break")
        for _ in range(rng.choice([1, 2])):
            self.statement(True)
        self.indent -= 1
        self.block_depth -= 1
        self.scope = self.scope.parent
        self.loop_depth -= 1

    def statement(self, in_loop: bool) -> None:
        if in_loop and self.rng.random() < 0.08:
            # `if h.amax().item() > 0.5: break`
            self.features.add("item-break")
            self.emit(f"if {self.read_back()} {self.rng.choice(['>', '<', '>='])} {self.float_expr(0)}:")
            self.emit(f"    {self.rng.choice(['break', 'continue'])}")
            return
        super().statement(in_loop)

    def ret_expr(self) -> str:
        if self.ret == "S":
            return self.r0expr(2).text
        if self.ret == "V" and self.xrng is not None and self.STACK and self.xrng.random() < 2 * self.STACK:
            # a stack of rank-0 parts as the vector result (its length no symbol names)
            saved_rng, saved_xrng = self.rng, self.xrng
            self.rng, self.xrng = saved_xrng, None
            try:
                self.features.add("rank0-stack-result")
                return self.stack_text(2)[0]
            finally:
                self.rng, self.xrng = saved_rng, saved_xrng
        return super().ret_expr()


class _DtypeRanks:
    """The float64/bfloat16 lanes at ranks 0 and 3 (2026-12-03: the markers `TensorF64Cpu0D`,
    `TensorF64Cpu3D`, `TensorBF16Cpu0D`, `TensorBF16Cpu3D`): the rank-0 and rank-3 generators
    with every tensor of the lane's dtype and `DtypeGenerator`'s ops for the rank-1/2
    subexpressions (no selection, joins, fills, scalar-parameter ops, max/min along a dim,
    dropout: refused at these dtypes)."""

    UNARY = DtypeGenerator.UNARY
    unary = DtypeGenerator.unary
    param_unary = DtypeGenerator.param_unary
    select = DtypeGenerator.select
    newop = DtypeGenerator.newop
    reduce_kind = DtypeGenerator.reduce_kind
    label_extremum = DtypeGenerator.label_extremum

    def header(self) -> str:
        return dtype_rank_header(self.lane)

    def annotation(self, kind: str) -> str:
        return lane_annotation(self.lane)[kind]


class DtypeRank0Generator(_DtypeRanks, Rank0Generator):
    """Rank-0 programs of the f64/bf16 lanes: `Rank0Generator`'s (whole reductions, `.item()`/
    `float()`, tensor conditions, rank-0 parameters and results) at the lane's dtype; no stacks
    (joins are refused at these dtypes)."""

    STACK = 0.0

    def __init__(self, rng: random.Random, control_flow: bool, lane: str):
        Rank0Generator.__init__(self, rng, control_flow)
        self.lane = lane

    def start(self) -> None:
        Rank0Generator.start(self)
        self.features.add("dtype-rank0")
        if self.ret == "L":  # argmax labels are the rank-1/2 programs' result here
            self.ret = "float"


class DtypeRank3Generator(_DtypeRanks, Rank3Generator):
    """Rank-3 programs of the f64/bf16 lanes: `Rank3Generator`'s (batched products and bmm,
    `F.linear` of a batch, attention op by op, softmax/log_softmax over every dim, the
    elementwise and unary ops, transposes and reshapes to and from rank 3) at the lane's
    dtype; no joins and no dropout (refused at these dtypes)."""

    JOIN = 0.0
    DROPOUT = False

    def __init__(self, rng: random.Random, control_flow: bool, lane: str, xrng: random.Random | None = None):
        Rank3Generator.__init__(self, rng, control_flow, xrng)
        self.lane = lane

    def start(self) -> None:
        Rank3Generator.start(self)
        self.features.add("dtype-rank3")


class FusedGenerator(Generator):
    """Programs of the fused kind (2026-12-03): the float32 generator's programs, with the
    patterns of the residual and row-normalization fusions (2223a62, f02982a) written often.
    A linear's input (or a product's left operand, less often) is `F.layer_norm(x, ...)` in
    any of `layer_norm`'s spellings, its only user, so the fused op normalizes the rows
    itself; and a rank-2 tensor is added to a linear or a product (its bias added or not) on
    either side, after an activation sometimes: `r + F.linear(h, w, b)`,
    `F.linear(h, w).relu() + r`, `h @ w + b + r`, `torch.add(r, ...)`; a fifth of the added
    tensors have a size-1 dim (a broadcast the fused op leaves to eager's addition). The two
    compose (`h + F.linear(F.layer_norm(h, ...), w, b)`, a pre-norm residual block, where a
    local is rebound from itself)."""

    lane = "fused"
    PRENORM = 0.45  # a linear's input is a layer_norm
    RESIDUAL = 0.45  # a linear or product gets a residual
    PRODUCT = 0.2  # a matrix expression is a linear or product outright

    def start(self) -> None:
        # matrix results mostly, so that the blocks are live (an unread linear that may raise
        # stays, unfused)
        super().start()
        if self.ret != "M" and self.chance(0.5):
            self.ret, self.ret_shape = "M", ("B", self.rng.choice(FEATURE_DIMS))

    def texpr(self, shape: tuple, depth: int, prefer: str | None = None) -> Expr:
        if len(shape) == 2 and depth > 0 and self.ops < self.max_ops and self.chance(self.PRODUCT):
            rows, cols = shape
            if self.chance(0.75):
                return self.linear(rows, cols, depth, prefer)
            return self.matmul(rows, cols, depth, prefer)
        return super().texpr(shape, depth, prefer)

    def ret_expr(self) -> str:
        if self.ret == "M" and self.chance(0.5):
            # a block as the result: its residual may read the locals
            return self.linear(*self.ret_shape, self.rng.choice([1, 2]), None).text
        return super().ret_expr()

    def prenorm(self, rows, k, depth, prefer) -> Expr:
        self.ops += 1
        self.features.update(("prenorm", "layer_norm"))
        x = self.texpr((rows, k), depth - 1, prefer)
        return self.layer_norm(x, (rows, k), prefer)

    def linear_input(self, rows, k, depth, prefer) -> str:
        if self.chance(self.PRENORM):
            return self.prenorm(rows, k, depth, prefer).text
        return super().linear_input(rows, k, depth, prefer)

    def matmul_input(self, rows, k, depth, prefer) -> Expr:
        if self.chance(self.PRENORM / 2):
            return self.prenorm(rows, k, depth, prefer)
        return super().matmul_input(rows, k, depth, prefer)

    def linear(self, rows, out, depth, prefer) -> Expr:
        return self.residual(super().linear(rows, out, depth, prefer), rows, out, depth, prefer)

    def matmul(self, rows, out, depth, prefer) -> Expr:
        return self.residual(super().matmul(rows, out, depth, prefer), rows, out, depth, prefer)

    def residual(self, e: Expr, rows, out, depth, prefer) -> Expr:
        """`e` (a linear or product of shape (rows, out)) plus a rank-2 tensor, or `e`."""
        rng = self.rng
        if not self.chance(self.RESIDUAL):
            return e
        self.ops += 1
        self.features.add("residual")
        if self.chance(0.3):
            self.features.add("residual-act")
            e = self.unary(e)
        r = rng.random()
        shape = (rows, out)
        if r < 0.1 and rows != "1":
            shape = ("1", out)
        elif r < 0.2 and out != "1":
            shape = (rows, "1")
        if shape != (rows, out):
            self.features.add("residual-broadcast")
        res = self.leaf(shape, prefer) if self.chance(0.6) else self.texpr(shape, depth - 1, prefer)
        left = self.chance(0.5)
        self.features.add("residual-left" if left else "residual-right")
        if self.chance(0.15):
            a, b = (res, e) if left else (e, res)
            return Expr(f"torch.add({a.text}, {b.text})", "call")
        if left:
            return Expr(f"{res.operand()} + {e.operand()}", "op")
        # `e` is a call, `x @ w` or a sum ending in `+ b`: `+` to its right needs no parentheses
        return Expr(f"{e.text} + {res.operand()}", "op")


def program_lane(seed: int) -> str:
    """The program kind of a seed, drawn from a stream of its own (`LANES`' shares)."""
    r = random.Random(f"lane-{seed}").random()
    for lane, share in LANES.items():
        if r < share:
            break
        r -= share
    else:
        lane = "f32"
    if lane == "f32" and random.Random(f"rank0-{seed}").random() < RANK0_SHARE:
        return "rank0"
    if lane == "f32" and random.Random(f"fused-{seed}").random() < FUSED_SHARE:
        return "fused"
    return lane


def dtype_rank(seed: int) -> int:
    """The rank of an f64/bf16 seed's program (0, 3, or 2 for the rank-1/2 ones), drawn from a
    stream of its own (`DTYPE_RANK0_SHARE`, `DTYPE_RANK3_SHARE`)."""
    r = random.Random(f"dtype-rank-{seed}").random()
    return 0 if r < DTYPE_RANK0_SHARE else 3 if r < DTYPE_RANK0_SHARE + DTYPE_RANK3_SHARE else 2


def generate_program(seed: int, control_flow: bool | None = None, lane: str | None = None) -> Program:
    rng = random.Random(f"program-{seed}")
    if control_flow is None:
        control_flow = rng.random() < 0.5
    if lane is None:
        lane = program_lane(seed)
    if lane == "rank3":
        return Rank3Generator(rng, control_flow, random.Random(f"rank3x-{seed}"),
                              random.Random(f"rank3j-{seed}")).generate()
    if lane in ("f64", "bf16"):
        rank = dtype_rank(seed)
        if rank == 0:
            return DtypeRank0Generator(rng, control_flow, lane).generate()
        if rank == 3:
            return DtypeRank3Generator(rng, control_flow, lane, random.Random(f"rank3x-{seed}")).generate()
        return DtypeGenerator(rng, control_flow, lane).generate()
    if lane == "rank0":
        return Rank0Generator(rng, control_flow, random.Random(f"rank0x-{seed}")).generate()
    if lane == "fused":
        return FusedGenerator(rng, control_flow).generate()
    return Generator(rng, control_flow).generate()


def has_control_flow(source: str) -> bool:
    tree = ast.parse(source)
    return any(isinstance(n, (ast.For, ast.While, ast.If)) for n in ast.walk(tree))


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e30, -1e30, 3e38, -3e38, 1e-38, -1e-38, 1e-40, 1e-45]
# float64's: its extremes (the largest finite, 1e300 whose products overflow, subnormals down to
# the least) and float32's extremes, which are ordinary float64 values.
SPECIALS_F64 = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e300, -1e300, 1.7976931348623157e308,
                -1.7976931348623157e308, 1e-310, -1e-310, 5e-324, 1e-300, 3e38, -1e30, 1e-45]
# bfloat16's, each exactly representable: the largest finite (0x7F7F), its least normal
# (2^-126) and subnormal (2^-133) and one between, 1e30 and 2^-7 as bfloat16 rounds them.
SPECIALS_BF16 = [math.nan, math.inf, -math.inf, -0.0, 0.0, 3.3895313892515355e38, -3.3895313892515355e38,
                 2.0**-126, -(2.0**-126), 2.0**-133, 2.0**-130 * 1.5, 1.0000000150474662e30, -2.0**-7, 256.0]


def choose_sizes_ext(rng: random.Random) -> dict:
    """Sizes for the rank-3, float64 and bfloat16 lanes: small batches and dims, zero-size
    ones sometimes, one long dim (never the batch) now and then. The envelope of a program
    holds every product's B * R * C * K terms, and of the whole program (dead code too): with
    every dim 130 one attention took the oracle 435 s."""
    sizes = {"1": 1}
    big = rng.choice(FEATURE_DIMS) if rng.random() < 0.03 else None
    for sym in ["B"] + FEATURE_DIMS:
        r = rng.random()
        if r < 0.03:
            sizes[sym] = 0
        elif sym == big:
            sizes[sym] = rng.choice([64, 130])
        elif sym == "B":
            sizes[sym] = rng.choice([1, 1, 2, 3, 4, 5])
        else:
            sizes[sym] = rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17])
    return sizes


def choose_sizes(rng: random.Random) -> dict:
    sizes = {"1": 1}
    big = rng.random() < 0.04
    for sym in ["B"] + FEATURE_DIMS:
        r = rng.random()
        if r < 0.03:
            sizes[sym] = 0
        elif big and rng.random() < 0.5:
            sizes[sym] = rng.choice([64, 130, 257, 300])
        elif sym == "B":
            sizes[sym] = rng.choice([1, 1, 2, 3, 4, 5, 8, 16, 33])
        else:
            sizes[sym] = rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 32])
    return sizes


def scalar_value(rng: random.Random, kind: str, small: bool):
    if kind == "int":
        if small:
            return rng.choice([-2, -1, 0, 1, 2, 3, 4, 5])
        return rng.choice([-3, -1, 0, 1, 2, 3, 5, 7, 10, 2**62, -(2**62), 2**63 - 1, -(2**63)])
    if kind == "float":
        return rng.choice([0.0, -0.0, 0.5, -1.25, 3.0, 1e-300, 1e308, -1e308, math.inf, math.nan, 2.5])
    return rng.choice([True, False])


@dataclass
class InputSpec:
    seed: int
    sizes: dict
    scalars: dict
    shapes: dict  # param -> concrete shape (after a possible perturbation)
    profiles: dict  # param -> value profile
    colmajor: list


def make_spec(program: Program, seed: int) -> InputSpec:
    rng = random.Random(f"inputs-{seed}")
    sizes = choose_sizes(rng) if program.lane in ("f32", "rank0", "fused") else choose_sizes_ext(rng)
    scalars, shapes, profiles, colmajor = {}, {}, {}, []
    for name, kind, shape, small in program.params:
        if kind in PARAM_TENSOR_KINDS:
            shapes[name] = [size_of(sizes, s) for s in shape]
            profiles[name] = rng.choices(["normal", "special", "ints", "ints-special", "extreme"], [55, 22, 10, 8, 5])[0]
            if kind in ("M", "T") and rng.random() < 0.05:
                colmajor.append(name)
        elif kind == "I":
            # ids: (length, bound) symbols; the bound's size is the range they are drawn from
            shapes[name] = [sizes[shape[0]]]
            profiles[name] = f"ids<{sizes[shape[1]]}" + ("!" if rng.random() < 0.04 else "")
        else:
            scalars[name] = scalar_value(rng, kind, small)
    tensors = [n for n, k, _, _ in program.params if k in TENSOR_KINDS]
    same = [(a, b) for a in tensors for b in tensors if a < b and shapes[a] == shapes[b]]
    if same and rng.random() < 0.05:
        a, b = rng.choice(same)
        colmajor.append(f"{b}={a}")
    if tensors and rng.random() < 0.03:
        victim = rng.choice(tensors)
        d = rng.randrange(len(shapes[victim]))
        shapes[victim][d] += 1
    return InputSpec(seed, sizes, scalars, shapes, profiles, colmajor)


def make_tensor(shape: list, profile: str, gen_seed: int, weight_scale: float,
                dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A float tensor of `dtype`: float64 values are drawn in float64 (its own specials),
    bfloat16 ones in float32 and rounded (specials that bfloat16 represents)."""
    g = torch.Generator().manual_seed(gen_seed)
    n = math.prod(shape)
    gen = torch.float64 if dtype == torch.float64 else torch.float32
    specials_list = {torch.float64: SPECIALS_F64, torch.bfloat16: SPECIALS_BF16}.get(dtype, SPECIALS)
    if profile.startswith("ints"):
        t = torch.randint(-2, 3, shape, generator=g).to(gen)
    else:
        t = torch.randn(shape, generator=g, dtype=gen) * weight_scale
    if profile in ("special", "ints-special", "extreme") and n:
        rate = 0.5 if profile == "extreme" else 0.15
        mask = torch.rand(shape, generator=g) < rate
        pick = torch.randint(0, len(specials_list), shape, generator=g)
        specials = torch.tensor(specials_list, dtype=gen)[pick]
        t = torch.where(mask, specials, t)
    return t.to(dtype).contiguous()


def make_ids(length: int, profile: str, gen_seed: int) -> torch.Tensor:
    """int64 ids in [0, bound) (repeats and the ends likely: bounds are small); a profile
    ending in "!" puts one id out of range (-1 or the bound), which eager rejects with
    `IndexError`/`RuntimeError`, so the error paths are compared too."""
    g = torch.Generator().manual_seed(gen_seed)
    bound = int(profile[4:].rstrip("!"))
    t = torch.randint(0, max(1, bound), (length,), generator=g, dtype=torch.int64)
    # (bound 0: the zeros drawn are out of range of an empty dim, and both sides raise)
    if profile.endswith("!") and length:
        t[int(torch.randint(0, length, (1,), generator=g))] = -1 if torch.rand(1, generator=g).item() < 0.5 else bound
    return t


def make_inputs(program: Program, spec: InputSpec) -> dict:
    values = {}
    for i, (name, kind, shape, small) in enumerate(program.params):
        if kind == "I":
            values[name] = make_ids(spec.shapes[name][0], spec.profiles[name], spec.seed * 1000 + i)
        elif kind in PARAM_TENSOR_KINDS:
            dims = spec.shapes[name]
            scale = 1.0
            if name.startswith("w") and len(dims) == 2:
                scale = 1.0 / math.sqrt(max(1, dims[1]))
            values[name] = make_tensor(dims, spec.profiles[name], spec.seed * 1000 + i, scale,
                                       LANE_DTYPES[program.lane])
        else:
            values[name] = spec.scalars[name]
    return values


def materialize(values: dict, layout: list) -> dict:
    """The arguments of one call: fresh clones. `layout` (the `colmajor` field) lists names
    passed as column-major views, and `a=b` entries: argument `a` is the very tensor object
    passed as `b` (one object under two parameters)."""
    out = {}
    for name, v in values.items():
        if isinstance(v, torch.Tensor):
            c = v.clone()
            if name in layout and c.dim() == 2:
                c = c.t().contiguous().t()
            elif name in layout and c.dim() == 3:  # rank 3: the last two dims column-major
                c = c.transpose(1, 2).contiguous().transpose(1, 2)
            out[name] = c
        else:
            out[name] = v
    for entry in layout:
        if "=" in entry:
            a, b = entry.split("=")
            if a in out and b in out and isinstance(out[b], torch.Tensor) and out[a].shape == out[b].shape:
                out[a] = out[b]
    return out


def _layout_names(entry: str) -> list:
    return entry.split("=")


# float dtypes other than float32 in fixtures: (name, the int type of their bits, bit width)
_JSON_FLOATS = {torch.float64: ("float64", torch.int64, 64), torch.bfloat16: ("bfloat16", torch.int16, 16)}


def tensor_to_json(t: torch.Tensor) -> dict:
    if t.dtype == torch.int64:  # ids: the values themselves
        return {"shape": list(t.shape), "dtype": "int64", "bits": t.flatten().tolist()}
    if t.dtype in _JSON_FLOATS:
        name, itype, width = _JSON_FLOATS[t.dtype]
        bits = t.contiguous().view(itype).flatten().tolist()
        return {"shape": list(t.shape), "dtype": name, "bits": [b & ((1 << width) - 1) for b in bits]}
    bits = t.contiguous().view(torch.int32).flatten().tolist()
    return {"shape": list(t.shape), "bits": [b & 0xFFFFFFFF for b in bits]}


def tensor_from_json(d: dict) -> torch.Tensor:
    if d.get("dtype") == "int64":
        return torch.tensor(d["bits"], dtype=torch.int64).reshape(d["shape"])
    for dtype, (name, itype, width) in _JSON_FLOATS.items():
        if d.get("dtype") == name:
            bits = [b - (1 << width) if b >= (1 << (width - 1)) else b for b in d["bits"]]
            return torch.tensor(bits, dtype=itype).view(dtype).reshape(d["shape"]).clone()
    bits = [b - (1 << 32) if b >= (1 << 31) else b for b in d["bits"]]
    return torch.tensor(bits, dtype=torch.int32).view(torch.float32).reshape(d["shape"]).clone()


def scalar_to_json(v):
    if isinstance(v, float):
        return {"float": v.hex()}
    return v


def scalar_from_json(v):
    if isinstance(v, dict) and "float" in v:
        return float.fromhex(v["float"])
    return v


# ---------------------------------------------------------------------------------------------
# Envelopes: the program run on interval values in float64
# ---------------------------------------------------------------------------------------------

# The format the envelope's ops compute in (float32 while no `_format` is active). Every
# envelope function reads these module globals when it runs; `_format(dtype)` sets them for
# one evaluation (float64 programs: float64's; bfloat16 programs: float32's, ATen's opmath,
# plus the rounding of each result to bfloat16, STORE_*).
EPS = 2.0**-23  # the ulp of 1
TINY = 2.0**-149  # the smallest float32 subnormal
FMAX = float(torch.finfo(torch.float32).max)
OVER = FMAX * (1 + 2.0**-24)  # a value beyond this rounds to infinity
NORM_TINY = 2.0**-126  # the least normal: the absolute error of exp-like ops near underflow
GELU_ABS = 4e-7  # ATen's GELU error per unit of max(1, |x|) (docs/parity.md)
GELU_TANH_ABS = 3e-7
GELU_INF_AT = 2.0**127  # where x * 0.5 * (1 + erf) overflows
COMPUTE = torch.float32
# The storage rounding of a result (bfloat16 only): relative, absolute, largest finite, and
# beyond what a value rounds to infinity; 0 / the compute format's range otherwise.
STORE_ULP, STORE_TINY, STORE_MAX, STORE_OVER = 0.0, 0.0, FMAX, OVER
OWN = 0  # 1 where the oracle's own float64 arithmetic errs as much as eager's (float64 programs)
INF = math.inf
D = torch.float64

_F32 = dict(EPS=EPS, TINY=TINY, FMAX=FMAX, OVER=OVER, NORM_TINY=NORM_TINY, GELU_ABS=GELU_ABS,
            GELU_TANH_ABS=GELU_TANH_ABS, GELU_INF_AT=GELU_INF_AT, COMPUTE=torch.float32,
            STORE_ULP=0.0, STORE_TINY=0.0, STORE_MAX=FMAX, STORE_OVER=OVER, OWN=0)
_F64MAX = float(torch.finfo(torch.float64).max)
_BF16MAX = float(torch.finfo(torch.bfloat16).max)  # 3.3895e38 (0x7F7F)
FORMATS = {
    torch.float32: _F32,
    # float64: the overflow threshold lies beyond float64 itself, so an endpoint the oracle's
    # own float64 arithmetic overflows is infinite (rounding is monotone: eager's is too)
    torch.float64: dict(_F32, EPS=2.0**-52, TINY=2.0**-1074, FMAX=_F64MAX, OVER=INF, NORM_TINY=2.0**-1022,
                        GELU_ABS=8 * 2.0**-52, GELU_TANH_ABS=8 * 2.0**-52, GELU_INF_AT=2.0**1023,
                        COMPUTE=torch.float64, STORE_MAX=_F64MAX, STORE_OVER=INF, OWN=1),
    # bfloat16: ATen computes in float32 and rounds each op's result to bfloat16 (8-bit
    # significand: one ulp is 2^-7 relative; 2^-133 the least subnormal)
    torch.bfloat16: dict(_F32, STORE_ULP=2.0**-7, STORE_TINY=2.0**-133, STORE_MAX=_BF16MAX,
                         STORE_OVER=_BF16MAX * (1 + 2.0**-8)),
}


@contextlib.contextmanager
def _unstored():
    """Ops whose results stay in the compute format (no rounding to bfloat16 after them)."""
    g = globals()
    saved = {k: g[k] for k in ("STORE_ULP", "STORE_TINY", "STORE_MAX", "STORE_OVER")}
    g.update(STORE_ULP=0.0, STORE_TINY=0.0, STORE_MAX=FMAX, STORE_OVER=OVER)
    try:
        yield
    finally:
        g.update(saved)


@contextlib.contextmanager
def _format(dtype: torch.dtype):
    """The envelope functions computing for programs of `dtype` (module globals, one
    evaluation at a time; restored after)."""
    g = globals()
    saved = {k: g[k] for k in _F32}
    g.update(FORMATS.get(dtype, _F32))
    try:
        yield
    finally:
        g.update(saved)


class OracleError(Exception):
    """The envelope interpreter met something it does not model."""


class Iv:
    """Per element: an interval [lo, hi] of the extended reals (float64) of the values a
    float32 evaluation may give, and whether it may be NaN (`nan`) or a number (`num`)."""

    __slots__ = ("lo", "hi", "nan", "num")

    def __init__(self, lo, hi, nan, num):
        self.lo, self.hi, self.nan, self.num = lo, hi, nan, num

    def zeroed(self) -> tuple:
        """`(lo, hi)` with 0 where the element may not be a number (`~num`, whose bounds
        mean nothing): bounds safe to compute with."""
        zero = torch.zeros_like(self.lo)
        return torch.where(self.num, self.lo, zero), torch.where(self.num, self.hi, zero)

    @staticmethod
    def of(t: torch.Tensor) -> "Iv":
        x = t.detach().to(D)
        isnan = torch.isnan(x)
        return Iv(x, x.clone(), isnan, ~isnan)

    @property
    def shape(self):
        return self.lo.shape

    def dim(self):
        return self.lo.dim()

    # methods of the surface
    def relu(self): return _unary("relu", self)
    def sigmoid(self): return _unary("sigmoid", self)
    def tanh(self): return _unary("tanh", self)
    def abs(self): return _unary("abs", self)
    def neg(self): return _unary("neg", self)
    def negative(self): return _unary("neg", self)
    def square(self): return _unary("square", self)
    def exp(self): return _unary("exp", self)
    def log(self): return _unary("log", self)
    def sqrt(self): return _unary("sqrt", self)
    def rsqrt(self): return _unary("rsqrt", self)
    def clamp(self, min=None, max=None): return _clamp(self, min, max)  # noqa: A002
    def clip(self, min=None, max=None): return _clamp(self, min, max)  # noqa: A002

    def item(self): return _item(self, "item")
    def __float__(self): return _item(self, "float")
    def mean(self, dim=None, keepdim=False): return _reduce(self, dim, keepdim, mean=True)
    def sum(self, dim=None, keepdim=False): return _reduce(self, dim, keepdim, mean=False)
    def softmax(self, dim=None): return _softmax(self, dim)
    def log_softmax(self, dim=None): return _log_softmax(self, dim)
    def amax(self, dim=(), keepdim=False): return _extremum(self, dim, keepdim, largest=True)
    def amin(self, dim=(), keepdim=False): return _extremum(self, dim, keepdim, largest=False)
    def argmax(self, dim=None, keepdim=False): return _argmax(self, dim, keepdim)
    def max(self, dim=None, keepdim=False): return _dim_extremum(self, dim, keepdim, largest=True)
    def min(self, dim=None, keepdim=False): return _dim_extremum(self, dim, keepdim, largest=False)
    def index_select(self, dim, index): return _index_select(self, dim, index)
    def matmul(self, other): return _matmul(self, other)
    def bmm(self, other): return _bmm(self, other)
    # views (docs/views.md) and elementwise selection and powers
    def t(self): return _transpose_dims(self, 0, 1)
    @property
    def T(self): return _transpose_dims(self, 0, 1)  # noqa: N802 - torch's name
    def transpose(self, d0, d1): return _transpose_dims(self, d0, d1)
    def reshape(self, *sizes): return _reshape(self, sizes)
    def view(self, *sizes): return _reshape(self, sizes)
    def flatten(self, start_dim=0, end_dim=-1): return _each(self, lambda t: t.flatten(start_dim, end_dim))
    def unsqueeze(self, dim): return _each(self, lambda t: t.unsqueeze(dim))
    def squeeze(self, dim): return _each(self, lambda t: t.squeeze(dim))
    def size(self, dim=None): return self.lo.size() if dim is None else self.lo.size(dim)
    def maximum(self, other): return _extreme2(self, other, largest=True)
    def minimum(self, other): return _extreme2(self, other, largest=False)
    def pow(self, p): return _pow(self, p)
    def __pow__(self, p): return _pow(self, p)
    def where(self, cond, other): return _where(cond, self, other)
    def __gt__(self, o): return _compare("gt", self, o)
    def __ge__(self, o): return _compare("ge", self, o)
    def __lt__(self, o): return _compare("lt", self, o)
    def __le__(self, o): return _compare("le", self, o)
    def __eq__(self, o): return _compare("eq", self, o)
    def __ne__(self, o): return _compare("ne", self, o)
    __hash__ = object.__hash__

    def __add__(self, o): return _binary("add", self, o)
    def __sub__(self, o): return _binary("sub", self, o)
    def __mul__(self, o): return _binary("mul", self, o)
    def __truediv__(self, o): return _binary("div", self, o)
    # A Python scalar on the left, as eager computes it: `s + x` is `x + s`, `s * x` is
    # `x * s`, `s - x` is `torch.rsub`, `s / x` is `reciprocal(x) * s` (two roundings).
    def __radd__(self, o): return _binary("add", self, o)
    def __rmul__(self, o): return _binary("mul", self, o)
    def __rsub__(self, o): return _binary("sub", o, self)
    def __rtruediv__(self, o): return _binary("mul", _binary("div", 1.0, self), o)
    def __matmul__(self, o): return _matmul(self, o)
    def __neg__(self): raise OracleError("unary minus on a tensor is outside the surface")
    def __bool__(self): raise OracleError("a tensor used as a truth value")
    def numel(self): return self.lo.numel()


class Labels:
    """Allowed argmax labels: a bool mask over the reduced dim, per output position."""

    def __init__(self, allowed: torch.Tensor, keepdim_shape):
        self.allowed = allowed  # [..., n]
        self.out_shape = keepdim_shape


def _check(x) -> Iv:
    if not isinstance(x, Iv):
        raise OracleError(f"operand {type(x).__name__} outside the tensor surface")
    return x


def _finish(lo, hi, nan, num, ulps=1.0, absolute=0.0, rounds=None) -> Iv:
    """Widen [lo, hi] by the rounding of the op that made it (`ulps` of the compute format
    plus `absolute`; `rounds`, by default whether `ulps` is nonzero, says whether the result
    is a computed one, which a bfloat16 op then rounds to bfloat16), then map it into the
    result format's range (beyond its largest finite: infinity). For float64 programs the
    oracle's own float64 evaluation of the op errs as eager's may, so the ulps count twice,
    and an endpoint the oracle overflowed may be eager's largest finite."""
    if rounds is None:
        rounds = ulps > 0
    lo = torch.where(num, lo, torch.full_like(lo, math.nan))
    hi = torch.where(num, hi, torch.full_like(hi, math.nan))
    # the larger magnitude of the finite ends (2026-12-03: an interval with one infinite end,
    # [2.1e38, inf], rounds its finite end too: it was left unwidened, and eager's bfloat16
    # 0.625 * 3.3895e38 = 2.1135e38 fell below the exact 2.1185e38)
    finite_mag = torch.maximum(torch.where(torch.isfinite(lo), lo.abs(), torch.zeros_like(lo)),
                               torch.where(torch.isfinite(hi), hi.abs(), torch.zeros_like(hi)))
    ulps = ulps * (1 + OWN)
    radius = ulps * EPS * finite_mag + ulps * TINY
    if not isinstance(absolute, float) or absolute:
        radius = radius + absolute
    if rounds and STORE_ULP:
        radius = radius + STORE_ULP * (finite_mag + radius) + STORE_TINY
    lo = torch.where(torch.isinf(lo), lo, lo - radius)
    hi = torch.where(torch.isinf(hi), hi, hi + radius)
    if rounds and OWN:
        lo = torch.where(lo == INF, torch.full_like(lo, STORE_MAX), lo)
        hi = torch.where(hi == -INF, torch.full_like(hi, -STORE_MAX), hi)
    lo = torch.where(lo >= STORE_OVER, torch.full_like(lo, INF), torch.where(lo <= -STORE_MAX, torch.full_like(lo, -INF), lo))
    hi = torch.where(hi >= STORE_MAX, torch.full_like(hi, INF), torch.where(hi <= -STORE_OVER, torch.full_like(hi, -INF), hi))
    return Iv(lo, hi, nan.clone(), num.clone())


_GELU_ARGMIN = -0.7517915246935645
_SILU_ARGMIN = -1.2784645427610741  # silu's one minimum (value -0.2785)
_GELU_TANH_ARGMIN = -0.7524614  # GELU tanh's one minimum (value -0.1700)


def _gelu_tanh64(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def _gelu64(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _unary(op: str, a) -> Iv:
    a = _check(a)
    lo, hi, nan, num = a.lo, a.hi, a.nan.clone(), a.num.clone()
    safe_lo = torch.where(num, lo, torch.zeros_like(lo))
    safe_hi = torch.where(num, hi, torch.zeros_like(hi))
    ulps, absolute = 1.0, 0.0
    if op == "relu":
        nlo, nhi = safe_lo.clamp(min=0), safe_hi.clamp(min=0)
    elif op == "neg":
        nlo, nhi = -safe_hi, -safe_lo
    elif op == "abs":
        top = torch.maximum(safe_lo.abs(), safe_hi.abs())
        bottom = torch.where(safe_lo > 0, safe_lo, torch.where(safe_hi < 0, -safe_hi, torch.zeros_like(safe_lo)))
        nlo, nhi = bottom, top
    elif op == "square":
        top = torch.maximum(safe_lo.abs(), safe_hi.abs())
        bottom = torch.where(safe_lo > 0, safe_lo, torch.where(safe_hi < 0, -safe_hi, torch.zeros_like(safe_lo)))
        nlo, nhi = bottom * bottom, top * top
    elif op in ("sigmoid", "tanh", "exp"):
        f = getattr(torch, op)
        nlo, nhi = f(safe_lo), f(safe_hi)
        ulps, absolute = 4.0, NORM_TINY
    elif op in ("log", "sqrt"):
        f = getattr(torch, op)
        negative = safe_lo < 0  # -0.0 is not below zero: log(-0.0) = -inf, sqrt(-0.0) = -0.0
        nan = nan | (num & negative)
        num = num & (safe_hi >= 0)
        nlo = f(safe_lo.clamp(min=0))
        nhi = f(safe_hi.clamp(min=0))
        ulps, absolute = 4.0, NORM_TINY
    elif op == "gelu":
        # ATen: gelu(-inf) is NaN; gelu(+inf) is NaN in its vectorized loop and +inf in its
        # scalar one (a one-element tensor); from 2^127 on the vectorized loop gives +inf
        # (x * 0.5 * (1 + erf) overflows); gelu(-huge) = -0.
        posinf, neginf = safe_hi == INF, safe_lo == -INF
        nan = nan | (num & (posinf | neginf))
        num = num & ~(safe_hi == -INF)
        clo = safe_lo.clamp(min=-_F64MAX, max=_F64MAX)
        chi = safe_hi.clamp(min=-_F64MAX, max=_F64MAX)
        glo, ghi = _gelu64(clo), _gelu64(chi)
        glo = torch.nan_to_num(glo, nan=0.0)
        ghi = torch.nan_to_num(ghi, nan=0.0)
        straddles = (clo < _GELU_ARGMIN) & (chi > _GELU_ARGMIN)
        least = float(_gelu64(torch.tensor(_GELU_ARGMIN, dtype=D)))
        nlo = torch.where(straddles, torch.full_like(glo, least), torch.minimum(glo, ghi))
        nhi = torch.maximum(glo, ghi)
        nhi = torch.where((chi >= GELU_INF_AT) | posinf, torch.full_like(nhi, INF), nhi)
        mag = torch.maximum(clo.abs(), chi.abs()).clamp(min=1.0)
        ulps, absolute = 4.0, GELU_ABS * mag + NORM_TINY
    elif op == "gelu_tanh":
        # ATen's 0.5 x (1 + tanh(...)): gelu_tanh(-inf) = -inf * 0 is NaN, (+inf) = +inf;
        # below about -5.06 float32 gives -0.0 or about -1e-7 (eager's two loops differ, and
        # the absolute widening covers both). Our tanh against Sleef's where 1 + tanh
        # cancels: 3e-7 * max(1, |x|) (docs/parity.md).
        neginf = safe_lo == -INF
        nan = nan | (num & neginf)
        num = num & ~(safe_hi == -INF)
        clo = safe_lo.clamp(min=-_F64MAX, max=_F64MAX)
        chi = safe_hi.clamp(min=-_F64MAX, max=_F64MAX)
        glo = torch.nan_to_num(_gelu_tanh64(clo), nan=0.0)
        ghi = torch.nan_to_num(_gelu_tanh64(chi), nan=0.0)
        straddles = (clo < _GELU_TANH_ARGMIN) & (chi > _GELU_TANH_ARGMIN)
        least = float(_gelu_tanh64(torch.tensor(_GELU_TANH_ARGMIN, dtype=D)))
        nlo = torch.where(straddles, torch.full_like(glo, least), torch.minimum(glo, ghi))
        nhi = torch.where(safe_hi == INF, torch.full_like(ghi, INF), torch.maximum(glo, ghi))
        mag = torch.maximum(clo.abs(), chi.abs()).clamp(min=1.0)
        ulps, absolute = 4.0, GELU_TANH_ABS * mag + NORM_TINY
    elif op == "relu6":
        # ATen's hardtanh(x, 0, 6), exact: NaN stays NaN (the flags pass through).
        nlo, nhi = safe_lo.clamp(0.0, 6.0), safe_hi.clamp(0.0, 6.0)
    elif op == "rsqrt":
        # 1 / sqrt(x), decreasing on (0, inf]: NaN below zero, +inf at +0.0, -inf at -0.0
        # (1 / -0.0), so an interval that reaches zero opens to both infinities.
        nan = nan | (num & (safe_lo < 0))
        num = num & (safe_hi >= 0)
        nlo = torch.where(safe_hi > 0, safe_hi, torch.full_like(safe_hi, math.inf)).rsqrt()
        nlo = torch.where(safe_hi > 0, nlo, torch.full_like(nlo, math.inf))
        nhi = torch.where(safe_lo > 0, safe_lo.clamp(min=TINY).rsqrt(), torch.full_like(safe_lo, math.inf))
        nlo = torch.where(safe_lo <= 0, torch.full_like(nlo, -math.inf), nlo)
        ulps, absolute = 4.0, NORM_TINY
    elif op == "silu":
        # ATen's x / (1 + exp(-x)): silu(-inf) = -inf / inf is NaN, silu(+inf) = +inf.
        neginf = safe_lo == -INF
        nan = nan | (num & neginf)
        num = num & ~(safe_hi == -INF)
        clo = safe_lo.clamp(min=-1e300)
        slo, shi = TF.silu(clo), TF.silu(safe_hi)
        straddles = (clo < _SILU_ARGMIN) & (safe_hi > _SILU_ARGMIN)
        least = float(TF.silu(torch.tensor(_SILU_ARGMIN, dtype=D)))
        nlo = torch.where(straddles, torch.full_like(slo, least), torch.minimum(slo, shi))
        nhi = torch.maximum(slo, shi)
        ulps, absolute = 4.0, 32 * NORM_TINY
    else:
        raise OracleError(f"unknown unary op {op}")
    return _finish(nlo, nhi, nan, num, ulps, absolute)


def _param_float(s) -> float:
    """A literal parameter as eager casts it to float32 (exactly)."""
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        raise OracleError(f"parameter {type(s).__name__} outside the surface")
    return float(torch.tensor(float(s), dtype=torch.float64).to(torch.float32))


def _param_unary(op: str, a, p=None, q=None) -> Iv:
    """Ops with scalar parameters (monotone nondecreasing for the parameters the generator
    uses: leaky_relu slope >= 0, elu alpha > 0), on the interval's endpoints: NaN stays NaN.
    leaky_relu's product and elu's `alpha * expm1` round; the clamps are exact."""
    a = _check(a)
    lo, hi, nan, num = a.lo, a.hi, a.nan.clone(), a.num.clone()
    safe_lo = torch.where(num, lo, torch.zeros_like(lo))
    safe_hi = torch.where(num, hi, torch.zeros_like(hi))
    ulps, absolute = 0.0, 0.0
    if op == "leaky_relu":
        s = _param_float(p)
        if s < 0:
            raise OracleError("leaky_relu with a negative slope (not monotone)")
        f = lambda v: torch.where(v > 0, v, v * s)  # noqa: E731
        ulps = 1.0
    elif op == "elu":
        alpha = _param_float(p)
        if not alpha > 0:
            raise OracleError("elu with alpha <= 0 (not monotone)")
        f = lambda v: torch.where(v > 0, v, torch.expm1(v) * alpha)  # noqa: E731
        ulps, absolute = 4.0, NORM_TINY
    elif op == "clamp":
        bl = None if p is None else _param_float(p)
        bh = None if q is None else _param_float(q)
        if bl is None and bh is None:
            raise OracleError("clamp without bounds")
        if (bl is not None and math.isnan(bl)) or (bh is not None and math.isnan(bh)):
            raise OracleError("a NaN bound")

        def f(v):
            if bl is not None:
                v = torch.where(v < bl, torch.full_like(v, bl), v)
            if bh is not None:
                v = torch.where(v > bh, torch.full_like(v, bh), v)
            return v
    else:
        raise OracleError(f"unknown op {op}")
    flo, fhi = f(safe_lo), f(safe_hi)
    if op == "leaky_relu" and s == 0:
        # a slope of 0 times -inf is NaN (eager's `-inf * 0`), certainly at a certain -inf; the
        # other values of an interval reaching -inf give -0.0 (2026-12-03, envcheck seed 8
        # program 31935: `F.leaky_relu(x9, negative_slope=0)`)
        nan = nan | (num & (safe_lo == -INF))
        num = num & ~(safe_hi == -INF)
        flo = torch.where(torch.isnan(flo), torch.zeros_like(flo), flo)
        fhi = torch.where(torch.isnan(fhi), torch.zeros_like(fhi), fhi)
    return _finish(flo, fhi, nan, num, ulps, absolute)


def _hardtanh(x, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace:
        raise OracleError("in-place hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _param_unary("clamp", x, min_val, max_val)


def _clamp(x, min=None, max=None):  # noqa: A002 - torch's keyword names
    return _param_unary("clamp", x, min, max)


def _combos(op, a: Iv, b: Iv):
    """The op on the endpoints; an infinite endpoint of an interval that also holds finite
    values is tried as a huge finite value too (inf * 0 is NaN, but the finite values next to
    it times 0 are 0)."""
    f = {"add": torch.add, "sub": torch.sub, "mul": torch.mul}.get(op, torch.div)

    def finite_near(lo, hi):
        wide = lo != hi
        return (torch.where(wide & (lo == -INF), torch.full_like(lo, -1e300), lo),
                torch.where(wide & (hi == INF), torch.full_like(hi, 1e300), hi))

    cs = []
    for las, has_ in ((a.lo, a.hi), finite_near(a.lo, a.hi)):
        for lbs, hbs in ((b.lo, b.hi), finite_near(b.lo, b.hi)):
            cs += [f(las, lbs), f(las, hbs), f(has_, lbs), f(has_, hbs)]
    st = torch.stack(torch.broadcast_tensors(*cs))
    anynan = torch.isnan(st).any(0)
    allnan = torch.isnan(st).all(0)
    lo = torch.where(torch.isnan(st), torch.full_like(st, INF), st).amin(0)
    hi = torch.where(torch.isnan(st), torch.full_like(st, -INF), st).amax(0)
    return lo, hi, anynan, allnan


def _contains_zero(a: Iv):
    return a.num & (a.lo <= 0) & (a.hi >= 0)


def _has_inf(a: Iv):
    return a.num & ((a.lo == -INF) | (a.hi == INF))


def _broadcast_check(a: Iv, b: Iv):
    try:
        return torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError as e:
        raise OracleError(f"shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast") from e


def _scalar_iv(s) -> Iv:
    """A Python int or float operand of a tensor op: the value eager casts it to in the
    compute format (an int converted directly, not through a double), exactly; for a
    bfloat16 tensor the hull of its float32 (ATen's opmath) and bfloat16 values."""
    if isinstance(s, FloatIv):
        # the float32 values eager casts the ends to, each rounded outward (the cast is monotone)
        lo = torch.tensor(s.lo if s.num else 0.0, dtype=torch.float64)
        hi = torch.tensor(s.hi if s.num else 0.0, dtype=torch.float64)
        lo_c, hi_c = lo.to(COMPUTE).double(), hi.to(COMPUTE).double()
        if STORE_ULP:
            # bfloat16 programs: the hull of the float32 and bfloat16 casts, as for a float
            lo_c, hi_c = torch.minimum(lo_c, lo.to(torch.bfloat16).double()), torch.maximum(hi_c, hi.to(torch.bfloat16).double())
        v = _finish(lo_c, hi_c, torch.tensor(s.nan), torch.tensor(s.num), 1.0, rounds=False)
        return v
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        raise OracleError(f"operand {type(s).__name__} outside the tensor surface")
    if isinstance(s, int):
        if not -2**63 <= s < 2**63:
            raise OracleError("an int operand beyond 64 bits")
        src = torch.tensor(s, dtype=torch.int64)
    else:
        src = torch.tensor(s, dtype=torch.float64)
    v = Iv.of(src.to(COMPUTE))
    if STORE_ULP:
        w = src.to(torch.bfloat16).double()
        v = Iv(torch.minimum(v.lo, w), torch.maximum(v.hi, w), v.nan, v.num)
    return v


def _binary(op: str, a, b) -> Iv:
    if not isinstance(a, Iv) and isinstance(b, Iv):
        a = _scalar_iv(a)
    if not isinstance(b, Iv) and isinstance(a, Iv):
        b = _scalar_iv(b)
    a, b = _check(a), _check(b)
    shape = _broadcast_check(a, b)
    a = Iv(*(t.expand(shape) for t in (a.lo, a.hi, a.nan, a.num)))
    b = Iv(*(t.expand(shape) for t in (b.lo, b.hi, b.nan, b.num)))
    # work on the numeric parts only (NaN endpoints replaced by 0, flags carry the rest)
    za, zb = Iv(*a.zeroed(), a.nan, a.num), Iv(*b.zeroed(), b.nan, b.num)
    both = a.num & b.num
    nan = a.nan | b.nan
    if op == "div":
        zero_div = _contains_zero(zb)
        lo, hi, anynan, allnan = _combos(op, za, zb)
        nan = nan | (both & ((_contains_zero(za) & zero_div) | (_has_inf(za) & _has_inf(zb))))
        lo = torch.where(zero_div, torch.full_like(lo, -INF), lo)
        hi = torch.where(zero_div, torch.full_like(hi, INF), hi)
        certain_nan = (za.lo == za.hi) & (zb.lo == zb.hi) & allnan
    elif op == "mul":
        lo, hi, anynan, allnan = _combos(op, za, zb)
        nan = nan | (both & ((_contains_zero(za) & _has_inf(zb)) | (_contains_zero(zb) & _has_inf(za)) | anynan))
        certain_nan = allnan & (za.lo == za.hi) & (zb.lo == zb.hi)
    else:
        lo, hi, anynan, allnan = _combos(op, za, zb)
        nan = nan | (both & anynan)
        certain_nan = allnan
    num = both & ~certain_nan
    return _finish(lo, hi, nan, num, 1.0)


def _sum_terms(terms: Iv, dim: int, extra: Iv | None = None, extra_rel: float = 0.0):
    """The interval of a float32 sum of `terms` along `dim` (and `extra`, a bias, added),
    in any summation order, with or without fused multiply-adds.

    Terms are exact (products of float32 values are exact in float64). A term beyond what any
    float32 accumulator can absorb (|t| >= 2 * FLT_MAX) makes its partial sum infinite with
    its sign, and an infinite partial sum stays so (a fused multiply-add adds the exact
    product: `fma(huge, y, -inf)` is -inf, not NaN); so terms of both signs that large give
    +inf, -inf or NaN by the order. Two true infinities of opposite signs (an inf operand)
    always give NaN."""
    lo, hi, nan, num = terms.lo, terms.hi, terms.nan, terms.num
    n = lo.shape[dim]
    if extra is not None:
        shape = list(lo.shape)
        shape[dim] = 1
        e = [t.unsqueeze(dim).expand(shape) if t.dim() < lo.dim() else t.expand(shape) for t in (extra.lo, extra.hi, extra.nan, extra.num)]
        lo, hi = torch.cat([lo, e[0]], dim), torch.cat([hi, e[1]], dim)
        nan, num = torch.cat([nan, e[2]], dim), torch.cat([num, e[3]], dim)
        n += 1
    lo = torch.where(num, lo, torch.zeros_like(lo))
    hi = torch.where(num, hi, torch.zeros_like(hi))
    true_p = (lo == INF).any(dim)
    true_n = (hi == -INF).any(dim)
    huge_p = (lo >= 2 * OVER).any(dim)
    huge_n = (hi <= -2 * OVER).any(dim)
    # (float64: an infinite term may be a finite product the oracle's float64 overflowed, which
    # a fused multiply-add adds exactly, so opposite infinities are NaN only maybe)
    nan_cert = (~num).any(dim) | (true_p & true_n & (OWN == 0))
    flo = torch.where(torch.isfinite(lo), lo, torch.zeros_like(lo))
    fhi = torch.where(torch.isfinite(hi), hi, torch.zeros_like(hi))
    mag = torch.maximum(flo.abs(), fhi.abs()).sum(dim)
    # partial sums may overflow in some order, or a term may be too large
    overflow = mag >= FMAX
    can_p = (hi >= FMAX).any(dim) | (overflow & (fhi > 0).any(dim))
    can_n = (lo <= -FMAX).any(dim) | (overflow & (flo < 0).any(dim))
    nan_poss = nan.any(dim) | (can_p & can_n)
    must_inf = huge_p | huge_n
    slo, shi = flo.sum(dim), fhi.sum(dim)
    if OWN:  # float64 terms of both signs may overflow the oracle's own sum to inf - inf
        slo, shi = torch.nan_to_num(slo, nan=-INF), torch.nan_to_num(shi, nan=INF)
    # eager's error; for float64 also the oracle's own sum and products, in any order
    radius = (2 * math.sqrt(n + 1) + OWN * (n + 1)) * EPS * mag + (n + 1) * TINY + extra_rel * mag
    slo, shi = slo - radius, shi + radius
    if OWN:  # an end the oracle's own float64 sum overflowed may be eager's largest finite
        slo, shi = torch.nan_to_num(slo, nan=-INF), torch.nan_to_num(shi, nan=INF)  # inf - inf
        slo = torch.where((slo == INF) & ~must_inf, torch.full_like(slo, FMAX), slo)
        shi = torch.where((shi == -INF) & ~must_inf, torch.full_like(shi, -FMAX), shi)
    slo = torch.where(can_n, torch.full_like(slo, -INF), torch.where(must_inf, torch.full_like(slo, INF), slo))
    shi = torch.where(can_p, torch.full_like(shi, INF), torch.where(must_inf, torch.full_like(shi, -INF), shi))
    return slo, shi, nan_poss | nan_cert, ~nan_cert


def _products(a: Iv, b: Iv) -> Iv:
    """Elementwise exact products (float64 holds them exactly), overflowing as float32."""
    za, zb = Iv(*a.zeroed(), a.nan, a.num), Iv(*b.zeroed(), b.nan, b.num)
    lo, hi, anynan, allnan = _combos("mul", za, zb)
    both = a.num & b.num
    nan = a.nan | b.nan | (both & ((_contains_zero(za) & _has_inf(zb)) | (_contains_zero(zb) & _has_inf(za)) | anynan))
    certain_nan = allnan & (za.lo == za.hi) & (zb.lo == zb.hi)
    num = both & ~certain_nan
    return Iv(lo, hi, nan, num)


# Most [rows, C, K] product terms the envelope of one product holds at once: its endpoint
# combinations are 16 float64 tensors of that size, so 2^20 terms take about 128 MiB. The
# 100,000-program run's larger products (300 x 64 -> 300) took 14 GiB unchunked and the
# kernel killed the worker; rows are independent, so chunking changes no bound.
DOT_TERMS = 1 << 20


def _dot(a: Iv, b: Iv, bias: Iv | None = None) -> Iv:
    """a [R, K] times b [K, C] (+ bias [C]) -> [R, C], at most DOT_TERMS terms at a time."""
    R, K = a.shape
    K2, C = b.shape
    if K != K2:
        raise OracleError("inner sizes differ")
    step = max(1, DOT_TERMS // max(1, C * K))
    if R > step:
        parts = [_dot(Iv(a.lo[i:i + step], a.hi[i:i + step], a.nan[i:i + step], a.num[i:i + step]), b, bias)
                 for i in range(0, R, step)]
        return Iv(*(torch.cat([getattr(p, f) for p in parts]) for f in Iv.__slots__))
    if STORE_ULP:
        # bfloat16 products run with denormals-are-zero (oneDNN): a subnormal operand may
        # count as 0 (`[9.2e-41] @ [inf]` is NaN), and a result below 2^-126 may flush to 0
        a, b = _daz(a), _daz(b)
    ea = Iv(*(t.unsqueeze(1).expand(R, C, K) for t in (a.lo, a.hi, a.nan, a.num)))
    eb = Iv(*(t.t().unsqueeze(0).expand(R, C, K) for t in (b.lo, b.hi, b.nan, b.num)))
    terms = _products(ea, eb)
    extra = None
    if bias is not None:
        extra = Iv(*(t.unsqueeze(0).expand(R, C) for t in (bias.lo, bias.hi, bias.nan, bias.num)))
    # bfloat16 with a bias: the product may be rounded to bfloat16 before the bias is added
    # (|product| <= the terms' magnitude), besides the result's own rounding
    lo, hi, nan, num = _sum_terms(terms, 2, extra, STORE_ULP if bias is not None else 0.0)
    return _finish(lo, hi, nan, num, 0.0, NORM_TINY if STORE_ULP else 0.0, rounds=True)


def _daz(a: Iv) -> Iv:
    """`a` with every subnormal end reaching to zero (a denormals-are-zero read)."""
    sub_lo = (a.lo > 0) & (a.lo < NORM_TINY)
    sub_hi = (a.hi < 0) & (a.hi > -NORM_TINY)
    return Iv(torch.where(sub_lo, torch.zeros_like(a.lo), a.lo), torch.where(sub_hi, torch.zeros_like(a.hi), a.hi),
              a.nan, a.num)


def _transpose(a: Iv) -> Iv:
    return Iv(a.lo.t(), a.hi.t(), a.nan.t(), a.num.t())


def _unsq(a: Iv, dim: int) -> Iv:
    return Iv(*(t.unsqueeze(dim) for t in (a.lo, a.hi, a.nan, a.num)))


def _squeeze(a: Iv, dim: int) -> Iv:
    return Iv(*(t.squeeze(dim) for t in (a.lo, a.hi, a.nan, a.num)))


def _linear(x, w, b=None) -> Iv:
    x, w = _check(x), _check(w)
    if b is not None:
        b = _check(b)
        if b.dim() != 1 or b.shape[0] not in (1, w.shape[0]):
            raise OracleError("bias size")
        if b.shape[0] != w.shape[0]:  # addmm broadcasts a one-element bias
            b = Iv(*(t.expand(w.shape[0]) for t in (b.lo, b.hi, b.nan, b.num)))
    if x.dim() == 3 and w.dim() == 2:
        # rank 3: every row of every batch against the weight (ATen folds the batch)
        n0, n1, k = x.shape
        flat = _each(x, lambda t: t.reshape(n0 * n1, k))
        out = _dot(flat, _transpose(w), b)
        return _each(out, lambda t: t.reshape(n0, n1, w.shape[0]))
    if x.dim() != 2 or w.dim() != 2:
        raise OracleError("linear ranks")
    return _dot(x, _transpose(w), b)


def _batch(a: Iv, i: int) -> Iv:
    return Iv(*(t[i] for t in (a.lo, a.hi, a.nan, a.num)))


def _matmul(a, b) -> Iv:
    a, b = _check(a), _check(b)
    if a.dim() == 2 and b.dim() == 2:
        return _dot(a, b)
    if a.dim() == 2 and b.dim() == 1:
        return _squeeze(_dot(a, _unsq(b, 1)), 1)
    if a.dim() == 1 and b.dim() == 2:
        return _squeeze(_dot(_unsq(a, 0), b), 0)
    if a.dim() in (2, 3) and b.dim() in (2, 3):
        # batched (rank 3 with rank 3, a batch of one broadcast) and broadcast (a matrix
        # against every batch): one product per batch, each bounded as above
        a3 = a if a.dim() == 3 else _unsq(a, 0)
        b3 = b if b.dim() == 3 else _unsq(b, 0)
        try:
            (nb,) = torch.broadcast_shapes(a3.shape[:1], b3.shape[:1])
        except RuntimeError as e:
            raise OracleError("batch sizes do not broadcast") from e
        R, C = a3.shape[1], b3.shape[2]
        if nb == 0:
            return Iv(torch.zeros(0, R, C, dtype=D), torch.zeros(0, R, C, dtype=D),
                      torch.zeros(0, R, C, dtype=torch.bool), torch.ones(0, R, C, dtype=torch.bool))
        parts = [_dot(_batch(a3, i if a3.shape[0] > 1 else 0), _batch(b3, i if b3.shape[0] > 1 else 0))
                 for i in range(nb)]
        return Iv(*(torch.stack([getattr(p, f) for p in parts]) for f in Iv.__slots__))
    raise OracleError("matmul ranks")


def _bmm(a, b) -> Iv:
    """`torch.bmm`: `matmul` of two rank-3 operands without its broadcast (eager raises where
    the batch sizes differ, so the envelope is never asked there)."""
    a, b = _check(a), _check(b)
    if a.dim() != 3 or b.dim() != 3:
        raise OracleError("bmm ranks")
    if a.shape[0] != b.shape[0]:
        raise OracleError("bmm batch sizes differ")
    return _matmul(a, b)


def _norm_dim(a: Iv, dim) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise OracleError("dim must be an int")
    if dim < 0:
        dim += a.dim()
    if not 0 <= dim < a.dim():
        raise OracleError("dim out of range")
    return dim


def _whole(a: Iv) -> Iv:
    """All elements as one line (a rank-0 reduction's operand)."""
    return Iv(*(t.reshape(-1) for t in (a.lo, a.hi, a.nan, a.num)))


def _reduce(a, dim, keepdim, mean: bool) -> Iv:
    a = _check(a)
    if dim is None:
        # x.sum() / x.mean(): the sum bound over every element, a rank-0 result
        if keepdim:
            raise OracleError("a whole reduction with keepdim")
        return _reduce(_whole(a), 0, False, mean)
    dim = _norm_dim(a, dim)
    n = a.shape[dim]
    lo, hi, nan, num = _sum_terms(a, dim)
    out = _finish(lo, hi, nan, num, 0.0, rounds=True)
    if mean:
        if n == 0:
            out = Iv(torch.full_like(out.lo, math.nan), torch.full_like(out.hi, math.nan),
                     torch.ones_like(out.nan), torch.zeros_like(out.num))
        else:
            out = _finish(out.lo / n, out.hi / n, out.nan, out.num, 1.0)
    if keepdim:
        out = _unsq(out, dim)
    return out


def _softmax_lines(a: Iv, dim):
    """The lines of a softmax or log_softmax along `dim`, moved last: (dim normalized, the
    numeric lower and upper ends (0 where no number), whether the line's result must be NaN
    (a NaN or +inf in it, or all -inf), whether it may be)."""
    dim = _norm_dim(a, dim)
    moved = Iv(*(t.movedim(dim, -1) for t in (a.lo, a.hi, a.nan, a.num)))
    lo = torch.where(moved.num, moved.lo, torch.zeros_like(moved.lo))
    hi = torch.where(moved.num, moved.hi, torch.zeros_like(moved.hi))
    must_nan = (~moved.num).any(-1, keepdim=True) | (lo == INF).any(-1, keepdim=True) | (hi == -INF).all(-1, keepdim=True)
    may_nan = moved.nan.any(-1, keepdim=True) | (hi == INF).any(-1, keepdim=True) | (lo == -INF).all(-1, keepdim=True)
    if lo.shape[-1] == 0:
        must_nan = torch.zeros(lo.shape[:-1] + (1,), dtype=torch.bool)
        may_nan = must_nan.clone()
    return dim, lo, hi, must_nan, may_nan


def _softmax(a, dim) -> Iv:
    a = _check(a)
    dim, lo, hi, must_nan, may_nan = _softmax_lines(a, dim)
    n = lo.shape[-1]
    # e_ij = exp(hi_j - lo_i): the most the others can weigh against i
    diff_max = hi.unsqueeze(-2) - lo.unsqueeze(-1)  # [..., i, j]
    diff_min = lo.unsqueeze(-2) - hi.unsqueeze(-1)
    eye = torch.eye(n, dtype=torch.bool)
    emax = torch.exp(torch.nan_to_num(diff_max, nan=INF)).masked_fill(eye, 0.0).sum(-1)
    emin = torch.exp(torch.nan_to_num(diff_min, nan=-INF)).masked_fill(eye, 0.0).sum(-1)
    plo = 1.0 / (1.0 + emax)
    phi = 1.0 / (1.0 + emin)
    # A small probability p is e^(x_i - max) / sum: the exponent, rounded at its magnitude
    # about |ln p|, errs by |ln p| * u relative (eager's, and the oracle's own for float64)
    depth = torch.nan_to_num(-torch.log(phi), nan=0.0, posinf=0.0).clamp(min=0.0)
    deep = (1 + OWN) * EPS * depth * phi + STORE_ULP * phi  # (bfloat16: the sum rounded too)
    shape = lo.shape
    nan = may_nan.expand(shape) | must_nan.expand(shape)
    num = ~must_nan.expand(shape)
    # (float64: the oracle's own float64 sum of the n exponentials, n + 1 ulps more)
    # (and float64's exponentials lose their accuracy below the least normal)
    out = _finish(plo, phi, nan, num, 8.0 + 2 * math.sqrt(n + 1) + OWN * (n + 1), deep + max(4 * TINY, OWN * NORM_TINY))
    out.lo = out.lo.clamp(min=0.0)
    out.hi = out.hi.clamp(max=1.0 + 8 * EPS)
    return Iv(*(t.movedim(-1, dim) for t in (out.lo, out.hi, out.nan, out.num)))


def _log_softmax(a, dim) -> Iv:
    a = _check(a)
    if dim is None:
        raise OracleError("log_softmax without dim")
    dim, lo, hi, must_nan, may_nan = _softmax_lines(a, dim)
    n = lo.shape[-1]
    # x_i - LSE(x) falls as any x_j (j != i) grows: the bounds pair lo_i with LSE(hi), and
    # hi_i with LSE(lo); lines whose result is NaN anyway may give anything here.
    lse_hi = torch.logsumexp(hi, -1, keepdim=True)
    lse_lo = torch.logsumexp(lo, -1, keepdim=True)
    out_lo = torch.nan_to_num(lo - lse_hi, nan=-INF, posinf=INF, neginf=-INF)
    out_hi = torch.nan_to_num(hi - lse_lo, nan=INF, posinf=INF, neginf=-INF)
    shape = lo.shape
    nan = may_nan.expand(shape) | must_nan.expand(shape)
    num = ~must_nan.expand(shape)
    ulps = 4.0 + 2 * math.sqrt(n + 1) + OWN * (n + 1)  # (float64: the oracle's own log-sum-exp)
    # ATen subtracts `max + log(sum)`, one value rounded at the log-sum-exp's magnitude L (to
    # bfloat16 in a bfloat16 kernel), and so does the oracle's float64 `x - LSE`; a bfloat16
    # kernel also rounds the sum of exponentials to bfloat16 (its log off by up to 2^-8)
    big = torch.nan_to_num(torch.maximum(lse_hi.abs(), lse_lo.abs()), nan=0.0, posinf=0.0)
    absolute = ulps * EPS * (1 + OWN) + (2 * EPS * (1 + OWN) + STORE_ULP) * big + STORE_ULP
    out = _finish(out_lo, out_hi, nan, num, ulps, absolute)
    return Iv(*(t.movedim(-1, dim) for t in (out.lo, out.hi, out.nan, out.num)))


def _extremum(a, dim, keepdim, largest: bool) -> Iv:
    a = _check(a)
    if dim == () and not keepdim:
        # x.amax() / x.max() with no dim: exact over every element (empty: eager's error)
        if a.lo.numel() == 0:
            raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() == 0")
        return _extremum(_whole(a), 0, False, largest)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise OracleError("amax/amin without one int dim")
    dim = _norm_dim(a, dim)
    moved = Iv(*(t.movedim(dim, -1) for t in (a.lo, a.hi, a.nan, a.num)))
    if moved.lo.shape[-1] == 0:
        raise OracleError("amax/amin over an empty dim")
    # Over the numbers of the line (a certain NaN makes the result NaN anyway).
    fill = torch.full_like(moved.lo, -INF if largest else INF)
    lo = torch.where(moved.num, moved.lo, fill)
    hi = torch.where(moved.num, moved.hi, fill)
    pick = (lambda t: t.amax(-1)) if largest else (lambda t: t.amin(-1))
    out = _finish(pick(lo), pick(hi), moved.nan.any(-1), moved.num.all(-1), 0.0)
    if keepdim:
        out = _unsq(out, dim)
    return out


def _each(a, f) -> Iv:
    """A view: the same map of positions applied to the four parts (values unchanged)."""
    a = _check(a)
    return Iv(*(f(t) for t in (a.lo, a.hi, a.nan, a.num)))


def _transpose_dims(a, d0, d1) -> Iv:
    a = _check(a)
    return _each(a, lambda t: t.transpose(_norm_dim(a, d0), _norm_dim(a, d1)))


def _reshape(a, sizes) -> Iv:
    # `reshape` of the parts even for `view`: eager's view errors (a layout it cannot view)
    # are compared as exceptions before the envelope is needed.
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, torch.Size)):
        sizes = tuple(sizes[0])
    return _each(a, lambda t: t.reshape(sizes))


def _expand_all(*ivs) -> list:
    shape = torch.broadcast_shapes(*(v.shape for v in ivs))
    return [Iv(*(t.expand(shape) for t in (v.lo, v.hi, v.nan, v.num))) for v in ivs]


def _extreme2(a, b, largest: bool) -> Iv:
    """`torch.maximum`/`minimum`: NaN-propagating, exact; the image of two intervals is
    `[max(lo_a, lo_b), max(hi_a, hi_b)]` (min alike)."""
    a, b = _check(a), _check(b)
    _broadcast_check(a, b)
    a, b = _expand_all(a, b)
    pick = torch.maximum if largest else torch.minimum
    zero = torch.zeros_like(a.lo)
    za_lo, za_hi = torch.where(a.num, a.lo, zero), torch.where(a.num, a.hi, zero)
    zb_lo, zb_hi = torch.where(b.num, b.lo, zero), torch.where(b.num, b.hi, zero)
    return _finish(pick(za_lo, zb_lo), pick(za_hi, zb_hi), a.nan | b.nan, a.num & b.num, 0.0)


def _pow(x, p) -> Iv:
    """`x ** p` with a Python scalar exponent: the exponent's image of the interval's ends
    and, where it holds zero, of +0 and -0 (the hull of those covers every exponent the
    generator uses: even and odd ints, -1, 0.5 and 1.5, whose negative side is NaN), computed
    by ATen's float64 pow (which special-cases the same exponents as float32: 2 and 3 are
    products, 0.5 sqrt, -1 reciprocal); 4 ulps plus 2^-126 absolute."""
    x = _check(x)
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise OracleError(f"exponent {type(p).__name__} outside the surface")
    zero = torch.zeros_like(x.lo)
    lo, hi = x.zeroed()
    straddle = (lo <= 0) & (hi >= 0)
    cands = [lo, hi, torch.where(straddle, zero, lo), torch.where(straddle, -zero, lo)]
    st = torch.stack([torch.pow(c, p) for c in cands])
    isnan = torch.isnan(st)
    rlo = torch.where(isnan, torch.full_like(st, INF), st).amin(0)
    rhi = torch.where(isnan, torch.full_like(st, -INF), st).amax(0)
    nan = x.nan | (x.num & isnan.any(0))
    num = x.num & ~isnan.all(0)
    return _finish(rlo, rhi, nan, num, 4.0, NORM_TINY)


class CondIv:
    """A comparison of envelopes, per element: whether it may be true, whether it may be
    false (a NaN side makes it false, true for `!=`)."""

    __slots__ = ("may_true", "may_false")

    def __init__(self, may_true, may_false):
        self.may_true, self.may_false = may_true, may_false

    def __bool__(self):
        # an if/while test (rank 0): Python truth needs exactly one element, as in eager
        if self.may_true.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        t, f = bool(self.may_true.reshape(-1)[0]), bool(self.may_false.reshape(-1)[0])
        if t and f:
            raise Uncertain("a tensor condition the envelope cannot decide")
        return t


class Uncertain(OracleError):
    """The envelope cannot decide a rank-0 value the program's control flow or a Python float
    depends on (an uncertain tensor condition, `.item()`/`float()` of an envelope that is not
    one number): eager and ours may legitimately go different ways (an explained boundary)."""


class FloatIv:
    """A Python float read from a tensor envelope (`.item()`/`float()` whose envelope is not
    one number): an interval of doubles plus the NaN/number flags. Python's float arithmetic
    on it (`+ - * /`, unary minus, with floats, ints and other FloatIvs) is interval arithmetic
    widened outward by one double ulp (Python rounds each op once); a comparison with a number
    is its truth where the interval decides it, else `Uncertain`; any other use (`math.*`, `%`,
    `int()`) needs the number itself: `float()` of a point, else `Uncertain`. As a tensor
    operand it is the hull of the float32 values its ends cast to."""

    __slots__ = ("lo", "hi", "nan", "num")

    def __init__(self, lo, hi, nan, num):
        self.lo, self.hi, self.nan, self.num = lo, hi, nan, num

    @staticmethod
    def lift(v):
        if isinstance(v, FloatIv):
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise OracleError(f"{type(v).__name__} in float arithmetic")
        v = float(v)
        return FloatIv(v, v, math.isnan(v), not math.isnan(v))

    def _op(self, other, op, swap=False):
        if isinstance(other, Iv):
            return NotImplemented  # a tensor operand: the tensor op (Iv's reflected method)
        a, b = FloatIv.lift(self), FloatIv.lift(other)
        if swap:
            a, b = b, a
        nan = a.nan or b.nan
        num = a.num and b.num
        if not num:
            return FloatIv(math.nan, math.nan, True, False)
        vals = []
        for x in (a.lo, a.hi):
            for y in (b.lo, b.hi):
                try:
                    vals.append({"add": x + y, "sub": x - y, "mul": x * y}[op] if op != "div" else x / y)
                except ZeroDivisionError:
                    raise Uncertain("a float read from a tensor divides by zero maybe") from None
        if op == "div" and b.lo <= 0.0 <= b.hi:
            if b.lo == b.hi == 0.0:
                raise Uncertain("a float read from a tensor divided by zero")
            raise Uncertain("a float read from a tensor divided by an interval holding zero")
        if any(math.isnan(v) for v in vals):
            nan = True
        vals = [v for v in vals if not math.isnan(v)]
        if not vals:
            return FloatIv(math.nan, math.nan, True, False)
        lo, hi = min(vals), max(vals)
        return FloatIv(math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf), nan, True)

    def __add__(self, o): return self._op(o, "add")
    def __radd__(self, o): return self._op(o, "add", True)
    def __sub__(self, o): return self._op(o, "sub")
    def __rsub__(self, o): return self._op(o, "sub", True)
    def __mul__(self, o): return self._op(o, "mul")
    def __rmul__(self, o): return self._op(o, "mul", True)
    def __truediv__(self, o): return self._op(o, "div")
    def __rtruediv__(self, o): return self._op(o, "div", True)
    def __neg__(self): return FloatIv(-self.hi, -self.lo, self.nan, self.num)
    def __pos__(self): return self

    def __float__(self):
        if self.nan and not self.num:
            return math.nan
        if self.num and not self.nan and self.lo == self.hi:
            return self.lo
        raise Uncertain(f"a float read from a tensor, in [{self.lo!r}, {self.hi!r}]{' maybe NaN' if self.nan else ''},"
                        " used where only its exact value will do")

    def __mod__(self, o): return float(self) % (float(o) if isinstance(o, FloatIv) else o)
    def __rmod__(self, o): return o % float(self)
    def __int__(self): return int(float(self))
    def __bool__(self): return bool(float(self))

    def _cmp(self, o, op):
        if isinstance(o, Iv):
            return NotImplemented  # a tensor comparison (Iv's reflected one)
        a, b = FloatIv.lift(self), FloatIv.lift(o)
        may_nan = a.nan or b.nan
        t = f = False
        if a.num and b.num:
            t, f = {
                "gt": (a.hi > b.lo, a.lo <= b.hi), "ge": (a.hi >= b.lo, a.lo < b.hi),
                "lt": (a.lo < b.hi, a.hi >= b.lo), "le": (a.lo <= b.hi, a.hi > b.lo),
                "eq": (a.lo <= b.hi and b.lo <= a.hi, not (a.lo == a.hi == b.lo == b.hi)),
                "ne": (not (a.lo == a.hi == b.lo == b.hi), a.lo <= b.hi and b.lo <= a.hi),
            }[op]
        if may_nan:
            if op == "ne":
                t = True
            else:
                f = True
        if t and f:
            raise Uncertain(f"a comparison of a float read from a tensor, in [{a.lo!r}, {a.hi!r}], the envelope cannot decide")
        return t

    def __gt__(self, o): return self._cmp(o, "gt")
    def __ge__(self, o): return self._cmp(o, "ge")
    def __lt__(self, o): return self._cmp(o, "lt")
    def __le__(self, o): return self._cmp(o, "le")
    def __eq__(self, o): return self._cmp(o, "eq")
    def __ne__(self, o): return self._cmp(o, "ne")
    __hash__ = None


def _shim_float(x):
    """The program's `float(...)` in the envelope: of a tensor, `_item` (a FloatIv where the
    envelope is not one number); of a FloatIv, itself; else Python's."""
    if isinstance(x, Iv):
        return _item(x, "float")
    if isinstance(x, FloatIv):
        return x
    return float(x)


def _item(a, how: str) -> float:
    """`t.item()` / `float(t)`: a Python float, the element itself when the envelope is one
    number (or certainly NaN); otherwise `Uncertain` (a float that flows on into scalar code
    compared bit for bit cannot be judged by an interval)."""
    a = _check(a)
    if a.lo.numel() != 1:
        if how == "item":
            raise RuntimeError("a Tensor with %d elements cannot be converted to Scalar" % a.lo.numel())
        raise ValueError("only one element tensors can be converted to Python scalars")
    lo, hi = float(a.lo.reshape(-1)[0]), float(a.hi.reshape(-1)[0])
    nan, num = bool(a.nan.reshape(-1)[0]), bool(a.num.reshape(-1)[0])
    if nan and not num:
        return math.nan
    if num and not nan and lo == hi:
        return lo
    return FloatIv(lo, hi, nan, num)


def _compare(op: str, a, b) -> CondIv:
    a = a if isinstance(a, Iv) else _scalar_iv(a)  # a float side is eager's float32 value
    b = b if isinstance(b, Iv) else _scalar_iv(b)
    _broadcast_check(a, b)
    a, b = _expand_all(a, b)
    zero = torch.zeros_like(a.lo)
    alo, ahi = torch.where(a.num, a.lo, zero), torch.where(a.num, a.hi, zero)
    blo, bhi = torch.where(b.num, b.lo, zero), torch.where(b.num, b.hi, zero)
    overlap = (alo <= bhi) & (blo <= ahi)
    point = (alo == ahi) & (blo == bhi) & (alo == blo)
    t, f = {
        "gt": (ahi > blo, alo <= bhi),
        "ge": (ahi >= blo, alo < bhi),
        "lt": (alo < bhi, ahi >= blo),
        "le": (alo <= bhi, ahi > blo),
        "eq": (overlap, ~point),
        "ne": (~point, overlap),
    }[op]
    both = a.num & b.num
    t, f = both & t, both & f
    may_nan = a.nan | b.nan
    if op == "ne":
        t = t | may_nan
    else:
        f = f | may_nan
    return CondIv(t, f)


def _where(cond, x, y) -> Iv:
    """`torch.where(cond, x, y)`: `x` where the comparison is surely true, `y` where surely
    false, the hull of both where the envelopes cannot tell (exact: nothing rounds)."""
    if not isinstance(cond, CondIv):
        raise OracleError("where without a comparison")
    if not isinstance(x, Iv) and not isinstance(y, Iv):
        raise OracleError("where of two scalars")
    x = x if isinstance(x, Iv) else _scalar_iv(x)
    y = y if isinstance(y, Iv) else _scalar_iv(y)
    shape = torch.broadcast_shapes(cond.may_true.shape, x.shape, y.shape)
    t, f = cond.may_true.expand(shape), cond.may_false.expand(shape)
    x, y = (Iv(*(p.expand(shape) for p in (v.lo, v.hi, v.nan, v.num))) for v in (x, y))
    only_x, only_y = t & ~f, f & ~t
    inf = torch.full(shape, INF, dtype=D)
    xlo, xhi = torch.where(x.num, x.lo, inf), torch.where(x.num, x.hi, -inf)
    ylo, yhi = torch.where(y.num, y.lo, inf), torch.where(y.num, y.hi, -inf)
    lo = torch.where(only_x, xlo, torch.where(only_y, ylo, torch.minimum(xlo, ylo)))
    hi = torch.where(only_x, xhi, torch.where(only_y, yhi, torch.maximum(xhi, yhi)))
    nan = torch.where(only_x, x.nan, torch.where(only_y, y.nan, x.nan | y.nan))
    num = torch.where(only_x, x.num, torch.where(only_y, y.num, x.num | y.num))
    return _finish(lo, hi, nan, num, 0.0)


def _argmax(a, dim, keepdim) -> Labels:
    a = _check(a)
    if dim is None:
        raise OracleError("argmax without dim")
    dim = _norm_dim(a, dim)
    moved = Iv(*(t.movedim(dim, -1) for t in (a.lo, a.hi, a.nan, a.num)))
    n = moved.lo.shape[-1]
    if n == 0:
        raise OracleError("argmax over an empty dim")
    lo = torch.where(moved.num, moved.lo, torch.full_like(moved.lo, -INF))
    hi = torch.where(moved.num, moved.hi, torch.full_like(moved.hi, -INF))
    best_lo = torch.where(moved.num, lo, torch.full_like(lo, -INF)).amax(-1, keepdim=True)
    can_max = moved.num & (hi >= best_lo)
    # no earlier j that is certainly at least as large
    earlier = torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1)  # [i, j]: j < i
    dominated = (earlier & (lo.unsqueeze(-2) >= hi.unsqueeze(-1)) & moved.num.unsqueeze(-2)).any(-1)
    allowed = can_max & ~dominated
    must_nan = ~moved.num
    idx = torch.arange(n)
    first_must = torch.where(must_nan, idx, torch.full_like(idx, n)).amin(-1, keepdim=True)
    nan_allowed = moved.nan & (idx <= first_must)
    any_must = must_nan.any(-1, keepdim=True)
    allowed = torch.where(any_must, nan_allowed, allowed | nan_allowed)
    out_shape = list(moved.lo.shape[:-1])
    if keepdim:
        out_shape.insert(dim, 1)
    return Labels(allowed, out_shape)


MinMax = collections.namedtuple("MinMax", ["values", "indices"])


def _dim_extremum(a, dim, keepdim, largest: bool) -> MinMax:
    """`x.max(dim=d)` / `min`: the values are `amax`/`amin`'s envelope (exact, NaN
    propagating); the indices are int64 labels compared as argmax's: a possible first
    extremum of the envelope, or a may-NaN index no certain NaN precedes (ATen's max/min
    along a dim return the first NaN). For `min` the envelope is negated and argmax's rule
    applied."""
    a = _check(a)
    if dim is None and not keepdim:
        return _extremum(a, (), False, largest)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise OracleError("max/min without one int dim")
    values = _extremum(a, dim, keepdim, largest)
    b = a if largest else Iv(-a.hi, -a.lo, a.nan, a.num)
    return MinMax(values, _argmax(b, dim, keepdim))


def _index_select(a, dim, index) -> Iv:
    """`index_select`/`embedding`: the table's parts moved by the (exact) int64 ids;
    ids out of range make eager raise, so no envelope is asked for then."""
    a = _check(a)
    if not isinstance(index, torch.Tensor) or index.dtype != torch.int64:
        raise OracleError("index_select without int64 ids")
    return _each(a, lambda t: t.index_select(_norm_dim(a, dim), index))


def _join(parts, dim, stack: bool) -> Iv:
    """`torch.cat`/`stack`: the parts' parts joined as eager joins the values (exact)."""
    if not isinstance(parts, (list, tuple)) or not parts:
        raise OracleError("join of no parts")
    parts = [_check(p) for p in parts]
    f = torch.stack if stack else torch.cat
    return Iv(*(f([getattr(p, k) for p in parts], dim) for k in Iv.__slots__))


def _fill_like(x, value) -> Iv:
    """`zeros_like`/`ones_like`/`full_like`: the fill value as eager stores it in float32
    (an int directly, a float through its double; one beyond float32 makes eager raise)."""
    x = _check(x)
    return Iv.of(torch.full(tuple(x.shape), value, dtype=torch.float32))


def _dropout(x, p=0.5, training=True, inplace=False) -> Iv:
    if training or inplace:
        raise OracleError("dropout in training mode is random")
    return _check(x)


def _layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5) -> Iv:
    """`F.layer_norm` over the last dim. ATen computes `z = x * rstd + (-mean * rstd)` with
    `rstd = 1 / sqrt(max(var, 0) + eps)` (the biased variance, by Welford's updates and
    cascaded merges: sums of same-signed terms, never negative). Two bounds, the tighter
    taken, on a line certainly finite with M <= 1e15 (M its largest magnitude: no square or
    sum can overflow):

    - always: `|z| <= (|x| + |mean|) / sqrt(eps) <= 2 M / sqrt(eps)`, whatever the rounding;
    - the line as centres c plus offsets of at most W (the widest half-width): the exact
      `x_i - mean` lies within `c_i - mean(c) +- 2W` and the deviation sigma within
      `sigma(c) +- W` (the triangle inequality on centred vectors), so z within the quotient
      of those intervals; then float32's error: a mean off by `K M` and a variance by
      `4 K M^2` (K = 8 n eps32, sixteen times the naive summation bounds), a relative error
      of `rstd` of `4 K M^2 / (var + eps)` (used only below 1/2) plus 4 ulps, and the
      products' roundings, `6 eps32 M rstd`.

    A line with a certain NaN is NaN; any other line outside those conditions (an
    infinity, a possible NaN, a value that may overflow the moments) may be anything. The
    weight and bias then apply as an elementwise `* w + b` (`_binary`'s rounding and
    classes)."""
    x = _check(x)
    shape = tuple(normalized_shape)
    if len(shape) != 1 or x.dim() < 1 or shape[0] != x.shape[-1]:
        raise OracleError("layer_norm over other than the last dim")
    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not eps > 0:
        raise OracleError("layer_norm eps")
    n = x.shape[-1]
    if n == 0:
        return x
    lo, hi = x.zeroed()
    m = torch.maximum(lo.abs(), hi.abs()).amax(-1, keepdim=True)
    finite = (x.num & ~x.nan).all(-1, keepdim=True) & (m <= 1e15)
    must_nan = (~x.num).any(-1, keepdim=True)
    eps32 = float(torch.tensor(eps, dtype=COMPUTE))  # eps in the compute format
    safe = lambda t: torch.where(finite.expand(t.shape), t, torch.zeros_like(t))  # noqa: E731
    lo, hi, m = safe(lo), safe(hi), safe(m)
    trivial = 2.0 * m * (1 + 1e-3) / math.sqrt(eps32) + 1e-30
    # the centred line and its widths
    c, w = (lo + hi) / 2, ((hi - lo) / 2).amax(-1, keepdim=True)
    dev = c - c.mean(-1, keepdim=True)
    sigma = (dev * dev).mean(-1, keepdim=True).sqrt()
    num_lo, num_hi = dev - 2 * w, dev + 2 * w
    var_lo = (sigma - w).clamp(min=0.0) ** 2
    var_hi = (sigma + w) ** 2
    den_lo, den_hi = (var_lo + eps32).sqrt(), (var_hi + eps32).sqrt()
    z_lo = torch.minimum(num_lo / den_lo, num_lo / den_hi)
    z_hi = torch.maximum(num_hi / den_lo, num_hi / den_hi)
    k = 8 * n * EPS
    rel = 4 * k * m * m / (var_lo + eps32)
    rstd_hi = 1 / den_lo
    num_max = torch.maximum(num_lo.abs(), num_hi.abs())
    err = rstd_hi * (num_max * (2 * rel + 4 * EPS) + 1.5 * (k * m + 6 * EPS * m)) + 1e-30
    tight = rel <= 0.5
    bound_lo = torch.where(tight, torch.maximum(z_lo - err, -trivial), -trivial)
    bound_hi = torch.where(tight, torch.minimum(z_hi + err, trivial), trivial)
    full = x.lo.shape
    fin = finite.expand(full)
    z = Iv(torch.where(fin, bound_lo.expand(full), torch.full(full, -INF, dtype=D)),
           torch.where(fin, bound_hi.expand(full), torch.full(full, INF, dtype=D)),
           (~finite | must_nan).expand(full).clone(), (~must_nan).expand(full).clone())
    # bfloat16: ATen computes z, and `z * w + b`, in float32 and rounds the result once: the
    # product is float32's (its range), the rounding to bfloat16 comes last
    # ATen's `x * (rstd * w) + (b - mean * rstd * w)` errs as `z * w + b` does, scaled by w,
    # but overflows elsewhere: a product that may leave the range may be anything
    with _unstored():
        if weight is not None:
            z = _binary("mul", z, _check(weight))
            wild = z.num & (torch.isinf(z.lo) | torch.isinf(z.hi))
            z = Iv(torch.where(wild, torch.full_like(z.lo, -INF), z.lo), torch.where(wild, torch.full_like(z.hi, INF), z.hi),
                   z.nan | wild, z.num)
    if bias is not None:
        z = _binary("add", z, _check(bias))
    elif STORE_ULP:
        z = _finish(z.lo, z.hi, z.nan, z.num, 0.0, rounds=True)
    return z


def _normalize(x, p=2.0, dim=1, eps=1e-12, out=None) -> Iv:
    """`F.normalize`: `x / clamp_min(norm_p(x, dim), eps)` as ATen computes it, the norm a
    float32 sum of `|x|` or `x^2` (in any order: `_sum_terms`; `[3e38, 1]` normalizes to
    zeros because the sum overflows), its square root 4 ulps (the norm of a one-element line
    is its magnitude, exactly), the clamp exact, the division 1 ulp (`_binary`: its signs,
    NaN for inf / inf)."""
    x = _check(x)
    if out is not None or p not in (1, 2):
        raise OracleError(f"normalize p={p!r}")
    d = _norm_dim(x, dim)
    zero = torch.zeros_like(x.lo)
    lo, hi = x.zeroed()
    straddle = (lo <= 0) & (hi >= 0)
    alo = torch.where(straddle, zero, torch.minimum(lo.abs(), hi.abs()))
    ahi = torch.maximum(lo.abs(), hi.abs())
    if x.shape[d] == 1:
        # ATen's norm of one element is its magnitude, nothing squared: [3e38] normalizes to 1
        norm = Iv(alo.squeeze(d), ahi.squeeze(d), x.nan.squeeze(d), x.num.squeeze(d))
    else:
        if p == 2:
            alo, ahi = alo * alo, ahi * ahi  # exact in float64; beyond FLT_MAX as _sum_terms treats it
        tlo, thi, tnan, tnum = _sum_terms(Iv(alo, ahi, x.nan, x.num), d)
        norm = _finish(tlo, thi, tnan, tnum, 0.0, rounds=True)
        if p == 2:
            norm = _unary("sqrt", norm)
    eps32 = float(torch.tensor(eps, dtype=torch.float32))
    norm = Iv(norm.lo.clamp(min=eps32), norm.hi.clamp(min=eps32), norm.nan, norm.num)
    return _binary("div", x, _unsq(norm, d))


class _ShimTorch(pytypes.SimpleNamespace):
    pass


def _shim_modules():
    t = _ShimTorch()
    for op in ["relu", "sigmoid", "tanh", "abs", "square", "exp", "log", "sqrt", "rsqrt"]:
        setattr(t, op, (lambda o: lambda x: _unary(o, x))(op))
    t.neg = lambda x: _unary("neg", x)
    t.negative = lambda x: _unary("neg", x)
    t.matmul = _matmul
    t.bmm = _bmm
    t.add = lambda a, b: _binary("add", a, b)
    t.sub = lambda a, b: _binary("sub", a, b)
    t.mul = lambda a, b: _binary("mul", a, b)
    t.div = lambda a, b: _binary("div", a, b)
    t.mean = lambda x, dim=None, keepdim=False: _reduce(x, dim, keepdim, True)
    t.numel = lambda x: x.numel()
    t.sum = lambda x, dim=None, keepdim=False: _reduce(x, dim, keepdim, False)
    t.softmax = lambda x, dim=None, dtype=None: _softmax(x, dim)
    t.log_softmax = lambda x, dim=None, dtype=None: _log_softmax(x, dim)
    t.amax = lambda x, dim=(), keepdim=False: _extremum(x, dim, keepdim, True)
    t.amin = lambda x, dim=(), keepdim=False: _extremum(x, dim, keepdim, False)
    t.argmax = lambda x, dim=None, keepdim=False: _argmax(x, dim, keepdim)
    t.t = lambda x: _transpose_dims(x, 0, 1)
    t.transpose = _transpose_dims
    t.reshape = lambda x, shape: _reshape(x, (shape,))
    t.flatten = lambda x, start_dim=0, end_dim=-1: _each(x, lambda p: p.flatten(start_dim, end_dim))
    t.unsqueeze = lambda x, dim: _each(x, lambda p: p.unsqueeze(dim))
    t.squeeze = lambda x, dim: _each(x, lambda p: p.squeeze(dim))
    t.maximum = lambda a, b: _extreme2(a, b, True)
    t.minimum = lambda a, b: _extreme2(a, b, False)
    t.pow = _pow
    t.where = _where
    t.cat = t.concat = t.concatenate = lambda tensors, dim=0: _join(tensors, dim, False)
    t.stack = lambda tensors, dim=0: _join(tensors, dim, True)
    t.max = lambda x, dim=None, keepdim=False: _dim_extremum(x, dim, keepdim, True)
    t.min = lambda x, dim=None, keepdim=False: _dim_extremum(x, dim, keepdim, False)
    t.index_select = _index_select
    t.zeros_like = lambda x: _fill_like(x, 0)
    t.ones_like = lambda x: _fill_like(x, 1)
    t.full_like = _fill_like
    f = _ShimTorch()
    f.linear = lambda x, w, bias=None: _linear(x, w, bias)
    f.relu = lambda x, inplace=False: _unary("relu", x)
    f.silu = lambda x, inplace=False: _unary("silu", x)
    f.relu6 = lambda x, inplace=False: _unary("relu6", x)
    f.leaky_relu = lambda x, negative_slope=0.01, inplace=False: _param_unary("leaky_relu", x, negative_slope)
    f.elu = lambda x, alpha=1.0, inplace=False: _param_unary("elu", x, alpha)
    f.hardtanh = _hardtanh
    t.clamp = _clamp
    t.clip = _clamp
    f.softmax = lambda x, dim=None, _stacklevel=3, dtype=None: _softmax(x, dim)
    f.layer_norm = _layer_norm
    f.normalize = _normalize
    f.dropout = _dropout
    f.embedding = lambda ids, weight: _index_select(weight, 0, ids)
    f.log_softmax = lambda x, dim=None, _stacklevel=3, dtype=None: _log_softmax(x, dim)

    def gelu(x, approximate="none"):
        if approximate == "tanh":
            return _unary("gelu_tanh", x)
        if approximate != "none":
            raise OracleError(f"GELU approximate={approximate!r}")
        return _unary("gelu", x)

    f.gelu = gelu
    return t, f


SHIM_TORCH, SHIM_F = _shim_modules()


def rebind(fn, torch_module, f_module, extra: dict | None = None):
    """`fn`'s code with `torch` and `F` bound to other modules (its other globals kept)."""
    globs = dict(fn.__globals__)
    for name, value in list(globs.items()):
        if value is torch:
            globs[name] = torch_module
        elif value is TF:
            globs[name] = f_module
    if extra:
        globs.update(extra)
    return pytypes.FunctionType(fn.__code__, globs, fn.__name__, fn.__defaults__, fn.__closure__)


def program_dtype(args: dict) -> torch.dtype:
    """The float dtype of a program's tensors (one per program; float32 if none)."""
    return next((v.dtype for v in args.values() if isinstance(v, torch.Tensor) and v.is_floating_point()),
                torch.float32)


def envelope(fn, args: dict):
    """The envelope of `fn` on `args`: an Iv (or Labels) for a tensor result, computed for the
    format of the program's float dtype."""
    shim = rebind(fn, SHIM_TORCH, SHIM_F, {"float": _shim_float})
    # int64 ids stay as they are: the ops that take them only move the table's parts
    iv_args = {k: Iv.of(v) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in args.items()}
    with _format(program_dtype(args)):
        return shim(**iv_args)


def float64_run(fn, args: dict):
    """The Python original on float64 copies of the float32 arguments (for reports)."""
    with torch.no_grad():
        return fn(**{k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                     for k, v in args.items()})


# ---------------------------------------------------------------------------------------------
# Instrumented originals: 64-bit ints, eager chained comparisons
# ---------------------------------------------------------------------------------------------

class _Checked(ast.NodeTransformer):
    """Wraps every int-producing BinOp/UnaryOp/AugAssign in a check against 64 bits."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(ast.Name("__rx_i64", ast.Load()), [node], []), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.USub):
            return ast.copy_location(ast.Call(ast.Name("__rx_i64", ast.Load()), [node], []), node)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        value = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
        call = ast.Call(ast.Name("__rx_i64", ast.Load()), [value], [])
        return ast.copy_location(ast.Assign([ast.Name(node.target.id, ast.Store())], call), node)


class _EagerChains(_Checked):
    """Also evaluates every operand of a chained comparison before comparing."""

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2:
            return node
        operands = ast.Tuple([node.left] + node.comparators, ast.Load())
        ops = ast.Constant(",".join(type(o).__name__ for o in node.ops))
        return ast.copy_location(ast.Call(ast.Name("__rx_chain", ast.Load()), [operands, ops], []), node)


def _rx_i64(v):
    if type(v) is int and not -(2**63) <= v < 2**63:
        raise OverflowError("integer overflow (64-bit check of the fuzzer)")
    return v


_CMP = {"Lt": lambda a, b: a < b, "LtE": lambda a, b: a <= b, "Gt": lambda a, b: a > b,
        "GtE": lambda a, b: a >= b, "Eq": lambda a, b: a == b, "NotEq": lambda a, b: a != b}


def _rx_chain(values, ops):
    ops = ops.split(",")
    for (a, b), op in zip(zip(values, values[1:]), ops):
        if not _CMP[op](a, b):
            return False
    return True


def instrumented(source: str, name: str, transformer) -> Any:
    tree = ast.parse(source)
    tree = ast.fix_missing_locations(transformer().visit(tree))
    ns = {"__rx_i64": _rx_i64, "__rx_chain": _rx_chain}
    exec(builtins_compile(tree, "<instrumented>", "exec"), ns)
    return ns[name]


builtins_compile = compile


class _Liveness:
    """Removes assignments whose value no later statement reads (backward liveness over
    structured control flow, loops to a fixpoint): the Python program as the optimizer's
    dead-code elimination sees it. Used only to classify a mismatch."""

    @staticmethod
    def uses(node) -> set:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    def block(self, stmts, live_after: set, brk: set, cont: set):
        live = set(live_after)
        out = []
        for st in reversed(stmts):
            if isinstance(st, ast.Return):
                live = self.uses(st.value) if st.value is not None else set()
            elif isinstance(st, ast.Break):
                live = set(brk)
            elif isinstance(st, ast.Continue):
                live = set(cont)
            elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                name = st.targets[0].id
                if name not in live:
                    continue
                live = (live - {name}) | self.uses(st.value)
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                if st.target.id not in live:
                    continue
                live = live | self.uses(st.value)
            elif isinstance(st, ast.If):
                body, lb = self.block(st.body, live, brk, cont)
                orelse, le = self.block(st.orelse, live, brk, cont) if st.orelse else ([], set(live))
                st = ast.If(st.test, body or [ast.Pass()], orelse)
                live = lb | le | self.uses(st.test)
            elif isinstance(st, (ast.For, ast.While)):
                after = set(live)
                head = set(after) | (self.uses(st.test) if isinstance(st, ast.While) else set())
                while True:
                    body, lb = self.block(st.body, head, after, head)
                    if isinstance(st, ast.For):
                        new = after | (lb - {st.target.id})
                    else:
                        new = after | lb | self.uses(st.test)
                    if new <= head:
                        break
                    head |= new
                if isinstance(st, ast.For):
                    st = ast.For(st.target, st.iter, body or [ast.Pass()], [], lineno=st.lineno)
                    live = head | self.uses(st.iter)
                else:
                    st = ast.While(st.test, body or [ast.Pass()], [])
                    live = head
            else:
                live = live | self.uses(st)
            out.append(st)
        out.reverse()
        return out, live


def dead_code_removed(source: str, name: str = "f"):
    """The original with dead assignments removed (see _Liveness), as a function."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            node.body = _Liveness().block(node.body, set(), set(), set())[0] or [ast.Pass()]
    tree = ast.fix_missing_locations(tree)
    ns: dict = {}
    exec(builtins_compile(tree, "<dead code removed>", "exec"), ns)
    return ns[name]


# ---------------------------------------------------------------------------------------------
# One case: compile, run both, compare
# ---------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    status: str  # refused | agree | mismatch | explained | oracle-failure | eager-error-only
    kind: str = ""  # the mismatch kind (what shrinking keeps)
    detail: str = ""
    reason: str = ""  # refusal reason
    explanation: str = ""
    both_raised: bool = False
    boundary: int = 0  # class differences accepted by the envelope
    compared: bool = False
    enveloped: bool = False  # a tensor result not bit for bit eager's, judged by the envelope


def refusal_reason(message: str) -> str:
    for line in message.splitlines():
        m = re.match(r"(error|warning)\[([A-Z0-9-]+)\]: (.*)", line)
        if m:
            text = re.sub(r"'[^']*'|`[^`]*`", "'_'", m.group(3))
            text = re.sub(r"\b\d+\b", "N", text)
            return f"{m.group(2)}: {text}"[:140]
    return message.splitlines()[0][:140] if message else "?"


# Tests of the oracle itself wrap compiled functions with deliberate bugs: (source, compiled)
# -> callable.
WRAP_COMPILED = None


def compile_source(source: str, name: str = "f"):
    """(original function, compiled function or None, refusal message)."""
    ns: dict = {}
    exec(builtins_compile(source, "<fuzz>", "exec"), ns)
    fn = ns[name]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = rextio_torch.compile(fn, source=source, strict=True)
    except rextio_torch.InternalCompilerError as e:
        return fn, None, "INTERNAL: " + str(e)
    except rextio_torch.CompileError as e:
        return fn, None, str(e)
    if WRAP_COMPILED is not None:
        compiled = WRAP_COMPILED(source, compiled)
    return fn, compiled, ""


def _call(fn, args):
    try:
        with torch.no_grad():
            return fn(**args), None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - every error is an outcome
        return None, e


# The float dtypes' bits as ints (type, sign mask), and how many ulps from eager's bits are
# accepted at once (rule 4): 4 for float32 and float64; none for bfloat16, whose ulp is 2^16
# float32 ulps (its envelope decides).
_BITS = {torch.float32: (torch.int32, 0x7FFFFFFF), torch.float64: (torch.int64, 0x7FFFFFFFFFFFFFFF),
         torch.bfloat16: (torch.int16, 0x7FFF)}
CLOSE_ULPS = {torch.float32: 4, torch.float64: 4, torch.bfloat16: 0}


def _bits_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype in _BITS:
        itype = _BITS[a.dtype][0]
        return torch.equal(a.contiguous().view(itype), b.contiguous().view(itype))
    return torch.equal(a, b)


def _ulp_index(t: torch.Tensor) -> torch.Tensor:
    """Monotone integer index of float values (-0.0 and +0.0 adjacent)."""
    itype, mask = _BITS[t.dtype]
    i = t.contiguous().view(itype).to(torch.int64)
    return torch.where(i < 0, -(i & mask) - 1, i)


def _fmt(v) -> str:
    if isinstance(v, torch.Tensor):
        return f"tensor {str(v.dtype).replace('torch.', '')} {list(v.shape)}"
    return f"{type(v).__name__} {v!r}"


def _words(e: BaseException) -> str:
    """An error's type and first words, numbers and names elided: part of a mismatch kind."""
    text = str(e).splitlines()[0] if str(e) else ""
    text = re.sub(r"\d+", "N", re.sub(r"'[^']*'|`[^`]*`", "'_'", text))
    return f"{type(e).__name__}: {text[:70]}".rstrip(": ")


def _sig(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


def is_ours_worded(e: BaseException) -> bool:
    return "rextio-torch" in str(e) or "rextio_torch" in str(e)


def compare_tensors(ours: torch.Tensor, eager: torch.Tensor, env, program_src: str, exact=None):
    """(kind, detail, boundary count, oracle failure) for float or label results."""
    if not eager.is_floating_point():
        if torch.equal(ours, eager):
            return "", "", 0, ""
        if not isinstance(env, Labels):
            return "labels", "labels differ and there is no envelope", 0, ""
        allowed = env.allowed.reshape(-1, env.allowed.shape[-1])
        o = ours.reshape(-1)
        e = eager.reshape(-1)
        ok_o = allowed[torch.arange(o.numel()), o.clamp(0, allowed.shape[-1] - 1)] & (o >= 0) & (o < allowed.shape[-1])
        ok_e = allowed[torch.arange(e.numel()), e.clamp(0, allowed.shape[-1] - 1)]
        if not bool(ok_e.all()):
            i = int((~ok_e).nonzero()[0])
            return "", "", 0, f"eager label {int(e[i])} at {i} outside the allowed set {allowed[i].nonzero().flatten().tolist()}"
        if not bool(ok_o.all()):
            i = int((~ok_o).nonzero()[0])
            return ("argmax", f"label {int(o[i])} at row {i}, eager {int(e[i])}, allowed "
                    f"{allowed[i].nonzero().flatten().tolist()}", 0, "")
        return "", "", 0, ""
    o, e = ours.reshape(-1), eager.reshape(-1)
    same = _bits_equal(o, e)
    if same:
        return "", "", 0, ""
    onan, enan = torch.isnan(o), torch.isnan(e)
    close = (onan & enan) | (
        ~onan & ~enan & (torch.isinf(o) == torch.isinf(e))
        & ((_ulp_index(o) - _ulp_index(e)).abs() <= CLOSE_ULPS[eager.dtype])
        & ~((o == 0) & (e == 0) & (torch.signbit(o) != torch.signbit(e)))
        & ~(torch.isinf(o) & (o != e))
    )
    if bool(close.all()):
        return "", "", 0, ""
    if not isinstance(env, Iv):
        return "value", "no envelope", 0, ""
    lo, hi = env.lo.reshape(-1), env.hi.reshape(-1)
    may_nan, may_num = env.nan.reshape(-1), env.num.reshape(-1)
    od, ed = o.double(), e.double()

    def inside(v, vnan):
        return torch.where(vnan, may_nan, may_num & (v >= lo) & (v <= hi))

    ok_e = inside(ed, enan) | close
    if not bool(ok_e.all()):
        i = int((~ok_e).nonzero()[0])
        return "", "", 0, (f"eager {e[i].item()!r} at {i} outside the envelope [{lo[i].item()!r}, {hi[i].item()!r}] "
                           f"nan={bool(may_nan[i])} num={bool(may_num[i])}")
    ok_o = inside(od, onan) | close
    if not bool(ok_o.all()):
        i = int((~ok_o).nonzero()[0])
        oi, ei = o[i].item(), e[i].item()
        cls = lambda v: "nan" if math.isnan(v) else ("+inf" if v == INF else ("-inf" if v == -INF else "finite"))
        kind = "value" if cls(oi) == cls(ei) else f"class {cls(ei)}->{cls(oi)}"
        return (kind, f"element {i}: ours {oi!r}, eager {ei!r}, envelope [{lo[i].item()!r}, {hi[i].item()!r}] "
                f"nan={bool(may_nan[i])} num={bool(may_num[i])}", 0, "")
    # signed zeros where both are zero and the program's float64 value is an exact zero of
    # eager's sign (elsewhere both zeros round a nonzero value, whose sign is as uncertain as
    # the value, or ours has the float64 evaluation's sign)
    zero = (o == 0) & (e == 0) & (torch.signbit(o) != torch.signbit(e))
    uncertain = torch.zeros_like(zero)
    if bool(zero.any()) and exact is not None:
        r = exact()
        if r is not None and r.numel() == o.numel():
            r = r.reshape(-1)
            uncertain = zero & ((r != 0) | (torch.signbit(r) == torch.signbit(o)))
    boundary = int(((onan != enan) | (torch.isinf(o) != torch.isinf(e)) | ((o == 0) != (e == 0))
                    | uncertain).sum())
    zero = zero & ~uncertain
    if bool(zero.any()):
        i = int(zero.nonzero()[0])
        return "signed-zero", f"element {i}: ours {o[i].item()!r}, eager {e[i].item()!r}", boundary, ""
    return "", "", boundary, ""


# Defects the fuzzer was written to find, fixed while it was being written: a mismatch of
# this shape now is a regression, and is named so.
SLOT = "slot read before written (fixed in cca8cc9: one value under two names, repeated expressions)"
CHAIN = "chained comparison evaluates every operand (fixed in e8a966d)"


def _is_slot_error(e) -> bool:
    return isinstance(e, RuntimeError) and "is read before it is written" in str(e)


class _PlusZeroDots(torch.overrides.TorchFunctionMode):
    """Eager with every dot product's exact zero as +0.0: ours starts a dot product at +0.0 and
    adds the bias last, where eager's GEMV (batch 1) and empty products start from the bias
    (docs/parity.md, "Signed zeros")."""

    DOTS = {TF.linear, torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.Tensor.__rmatmul__}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if func in self.DOTS and isinstance(result, torch.Tensor) and result.is_floating_point():
            result = result + 0.0
        return result


class _BiasLast(torch.overrides.TorchFunctionMode):
    """`F.linear(x, w, b)` as `F.linear(x, w) + b`: the bias added after the products, as ours
    adds it, where eager's GEMM may start from the bias (and absorb a tiny one)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is TF.linear:
            bias = kwargs.pop("bias", None) if len(args) < 3 else args[2]
            if bias is not None:
                return TF.linear(args[0], args[1]) + bias
        return func(*args, **kwargs)


def _zero_signs_as_plus_zero_dots(fn, values, layout, ours, eager) -> bool:
    """Whether every zero whose sign differs from eager's has the sign eager gives when its
    dot products' exact zeros are +0.0."""
    with _PlusZeroDots():
        alt, err = _call(fn, materialize(values, layout))
    if err is not None or not isinstance(alt, torch.Tensor) or alt.shape != ours.shape:
        return False
    o, e, a = ours.reshape(-1), eager.reshape(-1), alt.reshape(-1)
    differ = (o == 0) & (e == 0) & (torch.signbit(o) != torch.signbit(e))
    return bool(((a == 0) & (torch.signbit(a) == torch.signbit(o)))[differ].all())


RANK0_BOUNDARY = "boundary: a rank-0 condition or .item() the envelope cannot decide (rule 8)"
_RANK0_RE = re.compile(r"\.item\(\)|\bfloat\(|\.(sum|mean|max|min|amax|amin)\(\)|"
                       r"torch\.(sum|mean|max|min|amax|amin)\([\w.]+\)|\b(if|elif|while) .*\b(x|h|v|w|b)\d+\b.*[<>=]")


def _rank0_envelope(source: str, values: dict, colmajor, name: str):
    """("uncertain", why) when the envelope cannot judge this case because of a rank-0 value
    it cannot decide (`Uncertain`), ("float", FloatIv) for a float result read from a tensor,
    else None (the case stands as it is)."""
    if not _RANK0_RE.search(source):
        return None
    try:
        env = envelope(_python_function(source, name)[0], materialize(values, colmajor))
    except Uncertain as e:
        return "uncertain", str(e)
    except Exception:  # noqa: BLE001 - any other outcome: the case stands as it is
        return None
    return ("float", env) if isinstance(env, FloatIv) else None


def _in_float_iv(v: float, env: FloatIv) -> bool:
    if math.isnan(v):
        return env.nan
    return env.num and env.lo <= v <= env.hi


def run_case(source: str, values: dict, colmajor: list = (), name: str = "f", compiled=None, fn=None) -> Outcome:
    out = _run_case(source, values, colmajor, name, compiled, fn)
    if out.status == "mismatch" and out.kind != "mutated-input":
        judged = _rank0_envelope(source, values, colmajor, name)
        if judged is not None and judged[0] == "uncertain":
            return Outcome("explained", kind=out.kind, detail=f"{out.detail}; {judged[1]}", boundary=max(out.boundary, 1),
                           compared=True, explanation=RANK0_BOUNDARY)
        if judged is not None and out.kind == "scalar":
            # a float read from a tensor (rule 8): judged by its envelope, not bit for bit
            env = judged[1]
            m = re.match(r"eager (.*) / ours (.*)$", out.detail)
            eager_v, ours_v = float(m.group(1)), float(m.group(2))
            if not _in_float_iv(eager_v, env):
                return Outcome("oracle-failure", compared=True,
                               detail=f"eager's float {eager_v!r} outside [{env.lo!r}, {env.hi!r}] nan={env.nan}")
            if _in_float_iv(ours_v, env):
                return Outcome("agree", compared=True, enveloped=True)
    return out


def _run_case(source: str, values: dict, colmajor: list = (), name: str = "f", compiled=None, fn=None) -> Outcome:
    if compiled is None:
        fn, compiled, message = compile_source(source, name)
        if compiled is None:
            if message.startswith("INTERNAL"):
                return Outcome("mismatch", kind="internal-compiler-error", detail=message[:400])
            return Outcome("refused", reason=refusal_reason(message))
    eager_args = materialize(values, colmajor)
    ours_args = materialize(values, colmajor)
    pristine = materialize(values, colmajor)
    eager, eerr = _call(fn, eager_args)
    ours, oerr = _call(compiled, ours_args)
    # inputs untouched
    for k, v in pristine.items():
        if isinstance(v, torch.Tensor):
            for who, args in (("eager", eager_args), ("ours", ours_args)):
                if not _bits_equal(args[k], v):
                    if who == "ours":
                        return Outcome("mismatch", kind="mutated-input", detail=f"ours mutated argument {k}", compared=True)
    if eerr is not None and (oerr is None or (type(eerr) is not type(oerr) and not is_ours_worded(oerr))):
        # Does eager raise only in code the optimizer removed as dead?
        try:
            _, derr = _call(dead_code_removed(source, name), materialize(values, colmajor))
        except Exception:  # noqa: BLE001
            derr = eerr
        if (derr is None and oerr is None) or (derr is not None and oerr is not None and type(derr) is type(oerr)):
            ours_did = f"ours returned {_fmt(ours)}" if oerr is None else f"ours {_sig(oerr)}"
            return Outcome("mismatch", kind=f"dead code that raises is removed ({type(eerr).__name__})", compared=True,
                           detail=f"eager {_sig(eerr)}; {ours_did}, as the original without its dead assignments does")
    if eerr is not None and oerr is not None:
        if type(eerr) is type(oerr) or is_ours_worded(oerr):
            return Outcome("agree", both_raised=True, compared=True)
        if _is_slot_error(oerr):
            return Outcome("mismatch", kind=SLOT, detail=f"eager {_sig(eerr)} / ours {_sig(oerr)}", compared=True)
        return Outcome("mismatch", kind=f"exception-type {type(eerr).__name__}->{_words(oerr)}",
                       detail=f"eager {_sig(eerr)} / ours {_sig(oerr)}", compared=True)
    if eerr is not None and isinstance(eerr, RuntimeError) and "view size is not compatible" in str(eerr):
        # docs/views.md: arguments are made dense when the call starts, so `x.view(...)` of a
        # non-contiguous argument succeeds where eager raises; eager on dense arguments agrees.
        dense = [c for c in colmajor if "=" in c]
        if list(colmajor) != dense and _call(fn, materialize(values, dense))[1] is None:
            return Outcome("explained", kind=f"eager-raises {_words(eerr)}", compared=True,
                           detail=f"eager {_sig(eerr)}; ours returned {_fmt(ours)}",
                           explanation="documented: view of a non-contiguous argument (docs/views.md)")
    if eerr is not None:
        return Outcome("mismatch", kind=f"eager-raises {_words(eerr)}",
                       detail=f"eager {_sig(eerr)}; ours returned {_fmt(ours)}", compared=True)
    if oerr is not None:
        detail = f"ours {_sig(oerr)}; eager returned {_fmt(eager)}"
        kind = f"ours-raises {_words(oerr)}"
        if _is_slot_error(oerr):
            return Outcome("mismatch", kind=SLOT, detail=detail, compared=True)
        if isinstance(oerr, RuntimeError) and str(oerr).startswith("rextio-torch: squeeze(dim="):
            return Outcome("explained", kind=kind, detail=detail, compared=True,
                           explanation="documented: squeeze(d) of a dim whose size is not 1 raises (docs/views.md)")
        if isinstance(oerr, OverflowError):
            _, aerr = _call(instrumented(source, name, _Checked), materialize(values, colmajor))
            if isinstance(aerr, OverflowError):
                return Outcome("explained", kind=kind, detail=detail, compared=True,
                               explanation="documented: 64-bit ints raise OverflowError (README)")
        if isinstance(oerr, (OverflowError, ZeroDivisionError)):
            _, aerr = _call(instrumented(source, name, _EagerChains), materialize(values, colmajor))
            if aerr is not None and type(aerr) is type(oerr):
                return Outcome("mismatch", kind=CHAIN, detail=detail, compared=True)
        return Outcome("mismatch", kind=kind, detail=detail, compared=True)
    # both returned
    if isinstance(eager, torch.Tensor) != isinstance(ours, torch.Tensor) or (
        not isinstance(eager, torch.Tensor) and type(eager) is not type(ours)
    ):
        return Outcome("mismatch", kind="result-type", detail=f"eager {_fmt(eager)} / ours {_fmt(ours)}", compared=True)
    if not isinstance(eager, torch.Tensor):
        if isinstance(eager, float):
            same = (math.isnan(eager) and math.isnan(ours)) or struct.pack("<d", eager) == struct.pack("<d", ours)
        else:
            same = eager == ours
        if same:
            return Outcome("agree", compared=True)
        return Outcome("mismatch", kind="scalar", detail=f"eager {eager!r} / ours {ours!r}", compared=True)
    if ours.dtype != eager.dtype or ours.shape != eager.shape:
        return Outcome("mismatch", kind="dtype-shape", detail=f"eager {_fmt(eager)} / ours {_fmt(ours)}", compared=True)
    if _bits_equal(ours, eager):
        return Outcome("agree", compared=True)
    env = None
    try:
        env = envelope(fn, materialize(values, colmajor))
        if isinstance(env, Labels):
            pass
        elif isinstance(env, Iv) and tuple(env.shape) != tuple(eager.shape):
            return Outcome("oracle-failure", detail=f"envelope shape {tuple(env.shape)} vs {tuple(eager.shape)}", compared=True)
    except Uncertain as e:
        # no envelope: elements within a few ulps of eager's are still accepted at once (rule 4)
        kind, _, _, _ = compare_tensors(ours, eager, None, source)
        if not kind:
            return Outcome("agree", compared=True, enveloped=True)
        return Outcome("explained", kind="rank0-uncertain", detail=f"envelope: {e}", boundary=1, compared=True,
                       explanation=RANK0_BOUNDARY)
    except OracleError as e:
        return Outcome("oracle-failure", detail=f"envelope: {e}", compared=True)
    except Exception as e:  # noqa: BLE001
        return Outcome("oracle-failure", detail=f"envelope crashed: {_sig(e)}\n{traceback.format_exc()[-800:]}", compared=True)
    def exact():
        def run64():
            return _call(fn, {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                              for k, v in materialize(values, colmajor).items()})
        result, err = run64()
        if err is not None or not isinstance(result, torch.Tensor):
            return None
        # a zero of the float64 run is trusted as exact only where the run with every linear's
        # bias added last (ours' order) gives the same zero: where they differ, the zero is a
        # value the summation order rounds (a bias absorbed by the products' partial sums),
        # NaN here, so its sign is a boundary (2026-12-03)
        with _BiasLast():
            other, err2 = run64()
        if err2 is None and isinstance(other, torch.Tensor) and other.shape == result.shape:
            differ = ((result == 0) != (other == 0)) | ((result == 0) & (torch.signbit(result) != torch.signbit(other)))
            result = torch.where(differ, torch.full_like(result, math.nan), result)
        return result

    kind, detail, boundary, failure = compare_tensors(ours, eager, env, source, exact)
    if failure:
        return Outcome("oracle-failure", detail=failure, compared=True)
    if not kind:
        return Outcome("agree", boundary=boundary, compared=True, enveloped=True)
    if kind == "signed-zero" and ours.dtype == torch.float32 and _zero_signs_as_plus_zero_dots(fn, values, colmajor, ours, eager):
        return Outcome("explained", kind=kind, detail=detail, boundary=boundary, compared=True,
                       explanation="documented: sign of an exactly-zero dot product (docs/parity.md)")
    if re.search(r"\bgelu\b", source):
        kind += " (program has gelu)"
    return Outcome("mismatch", kind=kind, detail=detail, boundary=boundary, compared=True)


# ---------------------------------------------------------------------------------------------
# Shrinking
# ---------------------------------------------------------------------------------------------

@dataclass
class Case:
    source: str
    values: dict
    colmajor: list = field(default_factory=list)
    dims: dict = field(default_factory=dict)  # tensor param -> dimension symbols
    name: str = "f"


def case_of(program: Program, spec: InputSpec) -> Case:
    return Case(
        source=program.source,
        values=make_inputs(program, spec),
        colmajor=list(spec.colmajor),
        # ids are cut along their length's symbol with the tensors (their bound is no dim of theirs)
        dims={n: list(shape) if k in TENSOR_KINDS else [shape[0]] for n, k, shape, _ in program.params
              if k in TENSOR_KINDS + ("I",)},  # a rank-0 parameter has no dim to cut
    )


def _function_def(source: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))


def _render(fdef: ast.FunctionDef, header: str = HEADER) -> str:
    return header + "\n\n" + ast.unparse(fdef) + "\n"


def _statement_lists(fdef):
    """Every statement list of the function (bodies and else-blocks), outermost first."""
    out = []
    stack = [fdef]
    while stack:
        node = stack.pop(0)
        for attr in ("body", "orelse"):
            stmts = getattr(node, attr, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                out.append((node, attr))
                stack.extend(stmts)
    return out


def _used_names(fdef) -> set:
    return {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _source_candidates(source: str):
    """Smaller variants of the function, most aggressive first."""
    base = _function_def(source)
    # 1. delete one statement; replace a compound statement by one of its blocks
    n_lists = len(_statement_lists(base))
    for li in range(n_lists):
        fdef = copy.deepcopy(base)
        node, attr = _statement_lists(fdef)[li]
        count = len(getattr(node, attr))
        for si in range(count):
            fdef = copy.deepcopy(base)
            node, attr = _statement_lists(fdef)[li]
            stmts = getattr(node, attr)
            stmt = stmts[si]
            if len(stmts) > 1:
                variant = copy.deepcopy(fdef)
                vnode, vattr = _statement_lists(variant)[li]
                del getattr(vnode, vattr)[si]
                yield _render(variant, header_of(source))
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                for block in ("body", "orelse"):
                    inner = getattr(stmt, block)
                    if not inner:
                        continue
                    variant = copy.deepcopy(fdef)
                    vnode, vattr = _statement_lists(variant)[li]
                    vstmts = getattr(vnode, vattr)
                    replacement = copy.deepcopy(inner)
                    if isinstance(stmt, ast.For) and block == "body" and isinstance(stmt.target, ast.Name):
                        first = 0
                        if isinstance(stmt.iter, ast.List) and stmt.iter.elts:
                            first = stmt.iter.elts[0]
                        else:
                            first = ast.Constant(0)
                        replacement.insert(0, ast.Assign([ast.Name(stmt.target.id, ast.Store())], copy.deepcopy(first) if isinstance(first, ast.AST) else ast.Constant(first), lineno=0))
                    vstmts[si:si + 1] = replacement
                    yield _render(ast.fix_missing_locations(variant), header_of(source))
            if isinstance(stmt, ast.If) and stmt.orelse:
                variant = copy.deepcopy(fdef)
                vnode, vattr = _statement_lists(variant)[li]
                getattr(vnode, vattr)[si].orelse = []
                yield _render(variant, header_of(source))
    # 2. replace an expression by one of its subexpressions or a small constant
    exprs = [n for n in ast.walk(base) if isinstance(n, ast.expr)]
    for ei in range(len(exprs)):
        node = exprs[ei]
        subs = []
        if isinstance(node, ast.Call):
            subs = [a for a in node.args if isinstance(a, ast.expr)]
            if isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("torch", "F")):
                subs.append(node.func.value)
            # drop keyword arguments one at a time
            for ki in range(len(node.keywords)):
                fdef = copy.deepcopy(base)
                target = [n for n in ast.walk(fdef) if isinstance(n, ast.expr)][ei]
                del target.keywords[ki]
                yield _render(fdef, header_of(source))
            # drop a trailing positional argument (a bias, a dim)
            if len(node.args) > 2 or (len(node.args) == 3):
                fdef = copy.deepcopy(base)
                target = [n for n in ast.walk(fdef) if isinstance(n, ast.expr)][ei]
                target.args = target.args[:-1]
                yield _render(fdef, header_of(source))
        elif isinstance(node, ast.BinOp):
            subs = [node.left, node.right]
        elif isinstance(node, ast.UnaryOp):
            subs = [node.operand]
        elif isinstance(node, ast.BoolOp):
            subs = list(node.values)
        elif isinstance(node, ast.Compare):
            subs = [ast.Constant(True), ast.Constant(False)]
            if len(node.ops) > 1:
                for k in range(len(node.ops)):
                    subs.append(ast.Compare(node.left if k == 0 else node.comparators[k - 1], [node.ops[k]], [node.comparators[k]]))
        elif isinstance(node, ast.Constant) and type(node.value) is int and node.value not in (0, 1):
            subs = [ast.Constant(0), ast.Constant(1), ast.Constant(node.value // 2)]
        for sub in subs:
            fdef = copy.deepcopy(base)
            all_exprs = [n for n in ast.walk(fdef) if isinstance(n, ast.expr)]
            target = all_exprs[ei]
            replacement = copy.deepcopy(sub)
            parent = next((p for p in ast.walk(fdef) for f, v in ast.iter_fields(p)
                           if v is target or (isinstance(v, list) and any(x is target for x in v))), None)
            if parent is None:
                continue
            for f, v in ast.iter_fields(parent):
                if v is target:
                    setattr(parent, f, replacement)
                elif isinstance(v, list):
                    for i, x in enumerate(v):
                        if x is target:
                            v[i] = replacement
            yield _render(ast.fix_missing_locations(fdef), header_of(source))


def _drop_unused_params(case: Case) -> Case:
    fdef = _function_def(case.source)
    used = _used_names(fdef)
    keep = [a for a in fdef.args.args if a.arg in used]
    if len(keep) == len(fdef.args.args) or not keep:
        return case
    fdef.args.args = keep
    names = {a.arg for a in keep}
    return Case(_render(fdef, header_of(case.source)), {k: v for k, v in case.values.items() if k in names},
                [c for c in case.colmajor if all(n in names for n in _layout_names(c))],
                {k: v for k, v in case.dims.items() if k in names}, case.name)


def _value_candidates(case: Case):
    # scalar arguments toward 0
    for k, v in case.values.items():
        if isinstance(v, bool) or isinstance(v, torch.Tensor):
            continue
        options = [0, 1, -1, 2] if isinstance(v, int) else [0.0, 1.0, -1.0]
        if isinstance(v, int) and abs(v) > 2:
            options.append(v // 2)
        for o in options:
            if o != v and not (isinstance(v, float) and math.isnan(v) and False):
                yield Case(case.source, {**case.values, k: o}, case.colmajor, case.dims, case.name)
    # dimension sizes: cut every tensor along one symbol
    symbols = sorted({s for dims in case.dims.values() for s in dims if s != "1"})
    for sym in symbols:
        sizes = [case.values[n].shape[i] for n, dims in case.dims.items() if n in case.values
                 for i, s in enumerate(dims) if s == sym]
        if not sizes:
            continue
        size = min(sizes)
        for new in sorted({1, size // 2, size - 1}):
            if not 0 < new < size:
                continue
            cut = size - new  # the same number of entries off every such dim (a size made to
            for front in (False, True):  # disagree on purpose keeps its difference)
                values = dict(case.values)
                for n, dims in case.dims.items():
                    if n not in values:
                        continue
                    t = values[n]
                    for i, s in enumerate(dims):
                        if s == sym and i < t.dim():
                            t = t.narrow(i, cut if front else 0, t.shape[i] - cut)
                    values[n] = t.contiguous()
                yield Case(case.source, values, case.colmajor, case.dims, case.name)
    if case.colmajor:
        yield Case(case.source, case.values, [], case.dims, case.name)
    # tensor values: zero (then one) everything, or halves of the elements
    for k, v in case.values.items():
        if not isinstance(v, torch.Tensor) or v.numel() == 0:
            continue
        flat = v.flatten()
        for fill in (0.0, 1.0):
            if not torch.all(flat == fill):
                yield Case(case.source, {**case.values, k: torch.full_like(v, fill)}, case.colmajor, case.dims, case.name)
        n = flat.numel()
        chunk = max(1, n // 2)
        while chunk >= 1 and n > 1:
            for start in range(0, n, chunk):
                new = flat.clone()
                part = new[start:start + chunk]
                if torch.all(part == 0) and not torch.any(torch.signbit(part)):
                    continue
                new[start:start + chunk] = 0.0
                yield Case(case.source, {**case.values, k: new.reshape(v.shape)}, case.colmajor, case.dims, case.name)
            if chunk == 1:
                break
            chunk //= 2
        # simpler numbers: round to integers where that keeps the mismatch
        rounded = torch.where(torch.isfinite(v) & (v.abs() < 1e6), v.round(), v)
        if not _bits_equal(rounded, v):
            yield Case(case.source, {**case.values, k: rounded}, case.colmajor, case.dims, case.name)


def outcome_key(o: Outcome) -> tuple:
    return (o.status, o.kind)


def shrink(case: Case, key: tuple, budget_s: float = 60.0, max_tries: int = 3000, log=None) -> Case:
    """Delta debugging: the smallest variant of `case` whose outcome keeps `key`."""
    deadline = time.time() + budget_s
    tries = 0

    def holds(c: Case) -> bool:
        nonlocal tries
        tries += 1
        try:
            o = run_case(c.source, c.values, c.colmajor, c.name)
        except Exception:  # noqa: BLE001 - a variant that breaks the harness is not kept
            return False
        return outcome_key(o) == key

    def out_of_budget() -> bool:
        return time.time() > deadline or tries >= max_tries

    def source_step() -> bool:
        nonlocal case
        for source in _source_candidates(case.source):
            if out_of_budget():
                return False
            try:
                ast.parse(source)
            except SyntaxError:
                continue
            candidate = _drop_unused_params(Case(source, case.values, case.colmajor, case.dims, case.name))
            if candidate.source != case.source and holds(candidate):
                case = candidate
                if log:
                    log(f"  shrunk source to {len(case.source)} chars")
                return True
        return False

    def value_step() -> bool:
        nonlocal case
        for candidate in _value_candidates(case):
            if out_of_budget():
                return False
            if holds(candidate):
                case = candidate
                return True
        return False

    progress = True
    while progress and not out_of_budget():
        progress = False
        while source_step():
            progress = True
        while value_step():
            progress = True
    return case


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------

def describe_call(fn, case: Case) -> str:
    result, err = _call(fn, materialize(case.values, case.colmajor))
    if err is not None:
        return f"raises {_sig(err)}"
    if isinstance(result, torch.Tensor):
        return f"returns {_fmt(result)}: {result.flatten()[:8].tolist()}"
    return f"returns {_fmt(result)}"


NOTES = {
    "dead code that raises is removed": (
        "open: the optimizer's dead-code elimination drops assignments whose value is never read, so "
        "an error eager raises there (a shape mismatch, a division by zero, an int overflow) never "
        "happens in the compiled function, or a later one does instead"
    ),
}


def note_for(kind: str) -> str:
    return next((v for k, v in NOTES.items() if kind.startswith(k)), "")


def fixture_dict(case: Case, outcome: Outcome, found: dict, status: str = "open", note: str = "") -> dict:
    fn, compiled, _ = compile_source(case.source, case.name)
    body = ast.unparse(_function_def(case.source))
    digest = hashlib.sha256((outcome.kind + body).encode()).hexdigest()[:10]
    slug = re.sub(r"[^a-z0-9]+", "-", outcome.kind.lower()).strip("-")[:40]
    inputs = {k: tensor_to_json(v) if isinstance(v, torch.Tensor) else scalar_to_json(v) for k, v in case.values.items()}
    return {
        "id": f"{slug}-{digest}",
        "kind": outcome.kind,
        "status": status,
        "note": note or note_for(outcome.kind),
        "found": found,
        "source": case.source,
        "function": case.name,
        "inputs": inputs,
        "colmajor": case.colmajor,
        "dims": case.dims,
        "eager": describe_call(fn, case),
        "ours": outcome.detail,
        "expected": "the compiled call agrees with eager under the rules of tests/fuzz/difffuzz.py",
    }


def write_fixture(fixture: dict, directory: pathlib.Path = FIXTURES) -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{fixture['id']}.json"
    text = json.dumps(fixture, indent=1)
    # lists of numbers on one line
    text = re.sub(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]", lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]", text)
    path.write_text(text + "\n")
    return path


def load_fixture(path: pathlib.Path) -> tuple[dict, Case]:
    data = json.loads(pathlib.Path(path).read_text())
    values = {k: tensor_from_json(v) if isinstance(v, dict) and "bits" in v else scalar_from_json(v)
              for k, v in data["inputs"].items()}
    return data, Case(data["source"], values, data.get("colmajor", []), data.get("dims", {}), data.get("function", "f"))


def replay(path: pathlib.Path) -> Outcome:
    _, case = load_fixture(path)
    return run_case(case.source, case.values, case.colmajor, case.name)


# ---------------------------------------------------------------------------------------------
# Runs and the summary
# ---------------------------------------------------------------------------------------------

PROGRAM_STRIDE = 1_000_000


def program_seed(seed: int, index: int) -> int:
    return seed * PROGRAM_STRIDE + index


# The fusions whose patterns the `fused` kind writes (2223a62, f02982a), the attention fusion
# and torch.bmm that the `rank3` kind writes (75c414b, 398f75f), as the optimized IR prints
# them: a program counts as having one where its compiled IR holds that text.
FUSION_MARKS = (("residual", "residual="), ("norm=layer_norm", "norm=layer_norm"),
                ("fused_attention", "= fused_attention "), ("bmm", "= bmm "))


def fusions_in(source: str, name: str = "f") -> list:
    """The `FUSION_MARKS` names found in the optimized IR of a program that compiles
    (`rextio_torch.explain`, the compiler's own analysis; a few ms per program)."""
    try:
        fn, _ = _python_function(source, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = rextio_torch.explain(fn, source=source)
        ir = e.ir("optimized") if e.compiles else ""
    except Exception:  # noqa: BLE001 - a count, never an outcome
        return []
    return [tag for tag, text in FUSION_MARKS if text in ir]


# Sub-kinds counted apart in the summary: the f64/bf16 programs at ranks 0 and 3, and the
# programs with the 2026-12-03 joins (rank-0 stacks, rank-3 cat/stack).
SUBLANES = ("f64/r0", "f64/r3", "bf16/r0", "bf16/r3", "rank0/stack", "rank3/join")


def program_sublane(program: Program) -> str | None:
    f = set(program.features)
    if "dtype-rank0" in f:
        return f"{program.lane}/r0"
    if "dtype-rank3" in f:
        return f"{program.lane}/r3"
    if program.lane == "rank0" and f & {"rank0-stack", "rank0-cat-refused"}:
        return "rank0/stack"
    if program.lane == "rank3" and "join3" in f:
        return "rank3/join"
    return None


def fuzz_one(seed: int, index: int) -> dict:
    s = program_seed(seed, index)
    program = generate_program(s)
    spec = make_spec(program, s)
    values = make_inputs(program, spec)
    outcome = run_case(program.source, values, spec.colmajor)
    return {
        "i": index,
        "cf": has_control_flow(program.source),
        "status": outcome.status,
        "kind": outcome.kind,
        "reason": outcome.reason,
        "explanation": outcome.explanation,
        "detail": outcome.detail[:600],
        "both_raised": outcome.both_raised,
        "boundary": outcome.boundary,
        "compared": outcome.compared,
        "new_ops": [f for f in program.features if f in NEW_OPS],
        "lane": program.lane,
        "sublane": program_sublane(program),
        "enveloped": outcome.enveloped,
        "fusions": fusions_in(program.source) if outcome.status != "refused" else [],
    }


class Summary:
    def __init__(self):
        self.total = 0
        self.cf = 0
        self.status = collections.Counter()
        self.cf_status = collections.Counter()
        self.reasons = collections.Counter()
        self.kinds = collections.Counter()
        self.explanations = collections.Counter()
        self.both_raised = 0
        self.boundary_programs = 0
        self.boundary_elements = 0
        self.examples: dict = {}  # (status, kind) -> first few records
        self.failures: list = []
        self.new_ops = collections.Counter()  # programs per new-op feature
        self.new_programs = 0
        self.lanes: dict = collections.defaultdict(collections.Counter)  # lane -> status counts
        self.fusions: dict = collections.defaultdict(collections.Counter)  # FUSION_MARKS name -> lane -> programs
        self.fusion_status: dict = collections.defaultdict(collections.Counter)  # name -> status -> programs

    def add(self, rec: dict) -> None:
        self.total += 1
        self.lanes[rec.get("lane", "f32")][rec["status"]] += 1
        self.lanes[rec.get("lane", "f32")]["enveloped"] += bool(rec.get("enveloped"))
        if rec.get("sublane"):
            self.lanes[rec["sublane"]][rec["status"]] += 1
            self.lanes[rec["sublane"]]["enveloped"] += bool(rec.get("enveloped"))
        for tag in rec.get("fusions", ()):
            self.fusions[tag][rec.get("lane", "f32")] += 1
            self.fusion_status[tag][rec["status"]] += 1
            self.fusion_status[tag]["enveloped"] += bool(rec.get("enveloped"))
        if rec.get("new_ops"):
            self.new_programs += 1
            self.new_ops.update(rec["new_ops"])
        self.cf += rec["cf"]
        self.status[rec["status"]] += 1
        if rec["cf"]:
            self.cf_status[rec["status"]] += 1
        if rec["status"] == "refused":
            self.reasons[rec["reason"]] += 1
        if rec["status"] == "mismatch":
            self.kinds[rec["kind"]] += 1
        if rec["status"] == "explained":
            self.explanations[rec["explanation"] or rec["kind"]] += 1
        if rec["status"] == "oracle-failure":
            self.failures.append(rec)
        self.both_raised += bool(rec.get("both_raised"))
        if rec.get("boundary"):
            self.boundary_programs += 1
            self.boundary_elements += rec["boundary"]
        key = (rec["status"], rec["kind"] if rec["status"] != "explained" else rec["explanation"])
        if rec["status"] in ("mismatch", "explained", "oracle-failure", "crash", "hang"):
            self.examples.setdefault(key, [])
            if len(self.examples[key]) < 5:
                self.examples[key].append(rec)

    def text(self, seed: int, elapsed: float) -> str:
        s = self.status
        compiled = self.total - s["refused"]
        compared = sum(v for k, v in s.items() if k not in ("refused", "crash", "hang"))
        lines = [
            f"difffuzz: seed {seed}, {elapsed:.0f} s",
            f"  programs generated      {self.total:>8}   with control flow {self.cf} ({100 * self.cf / max(1, self.total):.0f}%)",
            f"  compiled                {compiled:>8}   with control flow {self.cf - self.cf_status['refused']}",
            f"  refused                 {s['refused']:>8}",
        ]
        if self.new_programs:
            ops = ", ".join(f"{n} {k}" for k, n in self.new_ops.most_common())
            lines.insert(2, f"  with new ops            {self.new_programs:>8}   ({ops})")
        for reason, n in self.reasons.most_common(8):
            lines.append(f"      {n:>7}  {reason}")
        lines += [
            f"  compared                {compared:>8}   with control flow {sum(v for k, v in self.cf_status.items() if k not in ('refused', 'crash', 'hang'))}",
            f"    agree                 {s['agree']:>8}   of which both raised the same exception type {self.both_raised}",
            f"    class differences accepted by the envelope: {self.boundary_elements} elements in {self.boundary_programs} programs",
            f"  mismatches, unexplained {s['mismatch'] + s['crash'] + s['hang']:>8}",
        ]
        for kind, n in self.kinds.most_common():
            lines.append(f"      {n:>7}  {kind}")
        if s["crash"] or s["hang"]:
            lines.append(f"      {s['crash']:>7}  crash (the worker died)")
            lines.append(f"      {s['hang']:>7}  hang")
        lines.append(f"  mismatches, explained   {s['explained']:>8}")
        for why, n in self.explanations.most_common():
            lines.append(f"      {n:>7}  {why}")
        lines.append(f"  oracle self-check failures {s['oracle-failure']:>5}")
        lines.append("  by program kind (lane): programs, compiled, refused, mismatches, explained, oracle failures,"
                     " agreeing within the envelope (not bit for bit)")
        for lane in ALL_LANES + tuple(x for x in SUBLANES if x in self.lanes):
            if lane in SUBLANES and lane == next(x for x in SUBLANES if x in self.lanes):
                lines.append("    of which (f64/bf16 at ranks 0 and 3; rank-0 stacks; rank-3 joins):")
            c = self.lanes.get(lane, collections.Counter())
            n = sum(v for k, v in c.items() if k != "enveloped")
            lines.append(f"      {lane:<11} {n:>7} {n - c['refused']:>8} {c['refused']:>7} "
                         f"{c['mismatch'] + c['crash'] + c['hang']:>10} {c['explained']:>9} {c['oracle-failure']:>15}"
                         f" {c['enveloped']:>8}")
        if self.fusions:
            lines.append("  programs whose optimized IR holds a fusion (by kind; agree, within the envelope, mismatch,"
                         " explained, oracle failure):")
            for tag, _ in FUSION_MARKS:
                by_lane, st = self.fusions.get(tag, {}), self.fusion_status.get(tag, collections.Counter())
                lanes = ", ".join(f"{lane} {by_lane[lane]}" for lane in ALL_LANES if by_lane.get(lane))
                lines.append(f"      {tag:<16} {sum(by_lane.values()):>7}   ({lanes}; {st['agree']}, {st['enveloped']},"
                             f" {st['mismatch']}, {st['explained']}, {st['oracle-failure']})")
        for rec in self.failures[:5]:
            lines.append(f"      program {rec['i']}: {rec['detail'][:200]}")
        return "\n".join(lines)


def envelope_check(seed: int, n: int, new_only: bool = False, lane: str | None = None) -> tuple:
    """The oracle's own check on its own: eager's tensor result inside the envelope (labels
    in the allowed sets) for programs `0..n-1` of `seed`, whatever ours does. `run` asks for
    the envelope only where ours differs from eager, and ops computed by ATen's own kernels
    mostly agree bit for bit, so this is what exercises their envelopes. Returns (counts,
    the first few programs outside or failing, as lines)."""
    counts, bad = collections.Counter(), []
    for i in range(n):
        s = program_seed(seed, i)
        program = generate_program(s)
        if new_only and not any(f in NEW_OPS for f in program.features):
            continue
        if lane is not None and program.lane != lane:
            continue
        spec = make_spec(program, s)
        values = make_inputs(program, spec)
        fn, _ = _python_function(program.source, program.name)
        eager, err = _call(fn, materialize(values, spec.colmajor))
        float_result = err is None and isinstance(eager, float) and (program.lane == "rank0"
                                                                     or "dtype-rank0" in program.features)
        if err is not None or not (isinstance(eager, torch.Tensor) or float_result):
            counts["no tensor result"] += 1
            continue
        if isinstance(_call(instrumented(program.source, program.name, _Checked),
                            materialize(values, spec.colmajor))[1], OverflowError):
            counts["ints beyond 64 bits (ours raises)"] += 1
            continue
        try:
            env = envelope(fn, materialize(values, spec.colmajor))
        except Uncertain:
            counts["undecided (a rank-0 condition or float the envelope cannot decide)"] += 1
            continue
        except Exception as e:  # noqa: BLE001 - an OracleError or a crash, both reported
            counts["envelope failed"] += 1
            bad.append(f"program {i}: envelope {_sig(e)}")
            continue
        if float_result:
            # a float read from a tensor: inside its FloatIv (or the very float on a certain path)
            inside = _in_float_iv(eager, env) if isinstance(env, FloatIv) else (
                isinstance(env, float) and struct.pack("<d", env) == struct.pack("<d", eager)
                or (isinstance(env, float) and math.isnan(env) and math.isnan(eager)))
            counts["inside" if inside else "outside"] += 1
            if not inside:
                bad.append(f"program {i}: eager's float {eager!r} outside {env!r}")
            continue
        if eager.is_floating_point():
            e = eager.reshape(-1).double()
            ok = torch.where(torch.isnan(e), env.nan.reshape(-1),
                             env.num.reshape(-1) & (e >= env.lo.reshape(-1)) & (e <= env.hi.reshape(-1)))
        else:
            allowed = env.allowed.reshape(-1, env.allowed.shape[-1])
            e = eager.reshape(-1)
            ok = allowed[torch.arange(e.numel()), e]
        if bool(ok.all()):
            counts["inside"] += 1
        else:
            counts["outside"] += 1
            j = int((~ok).nonzero()[0])
            bad.append(f"program {i}: eager {e[j].item()!r} at {j} outside")
    return counts, bad[:10]


# The ops of the float64, bfloat16 and rank-3 lanes, one at a time: (name, rank of x and y,
# function of x, y (both [R, K] or [B, R, K]), w ([K, K]) and b ([K])).
OP_CASES = [
    ("relu", 2, lambda x, y, w, b: x.relu()), ("sigmoid", 2, lambda x, y, w, b: x.sigmoid()),
    ("tanh", 2, lambda x, y, w, b: x.tanh()), ("exp", 2, lambda x, y, w, b: x.exp()),
    ("log", 2, lambda x, y, w, b: x.log()), ("sqrt", 2, lambda x, y, w, b: x.sqrt()),
    ("rsqrt", 2, lambda x, y, w, b: x.rsqrt()), ("square", 2, lambda x, y, w, b: x.square()),
    ("abs", 2, lambda x, y, w, b: x.abs()), ("gelu", 2, lambda x, y, w, b: TF.gelu(x)),
    ("gelu-tanh", 2, lambda x, y, w, b: TF.gelu(x, approximate="tanh")), ("silu", 2, lambda x, y, w, b: TF.silu(x)),
    ("relu6", 2, lambda x, y, w, b: TF.relu6(x)), ("add", 2, lambda x, y, w, b: x + y),
    ("sub", 2, lambda x, y, w, b: x - y), ("mul", 2, lambda x, y, w, b: x * y), ("div", 2, lambda x, y, w, b: x / y),
    ("scalars", 2, lambda x, y, w, b: (x * 0.1 - 3) / 7 + 2.5 / x),
    ("linear", 2, lambda x, y, w, b: TF.linear(x, w, b)), ("linear-nobias", 2, lambda x, y, w, b: TF.linear(x, w)),
    ("matmul", 2, lambda x, y, w, b: x @ w.t()), ("mv", 2, lambda x, y, w, b: x @ b), ("vm", 2, lambda x, y, w, b: b @ w),
    ("sum0", 2, lambda x, y, w, b: x.sum(dim=0)), ("sum1", 2, lambda x, y, w, b: x.sum(dim=1)),
    ("mean0", 2, lambda x, y, w, b: x.mean(dim=0)), ("mean1", 2, lambda x, y, w, b: x.mean(dim=1, keepdim=True)),
    ("amax", 2, lambda x, y, w, b: x.amax(dim=1)),
    ("softmax0", 2, lambda x, y, w, b: torch.softmax(x, 0)), ("softmax1", 2, lambda x, y, w, b: torch.softmax(x, 1)),
    ("log_softmax0", 2, lambda x, y, w, b: TF.log_softmax(x, dim=0)),
    ("log_softmax1", 2, lambda x, y, w, b: TF.log_softmax(x, dim=1)),
    ("layer_norm", 2, lambda x, y, w, b: TF.layer_norm(x, (x.shape[-1],))),
    ("layer_norm-wb", 2, lambda x, y, w, b: TF.layer_norm(x, (x.shape[-1],), b, b, 1e-3)),
    ("bmm", 3, lambda x, y, w, b: x @ y.transpose(-2, -1)), ("matmul-broadcast", 3, lambda x, y, w, b: x @ w),
    ("linear3", 3, lambda x, y, w, b: TF.linear(x, w, b)),
    ("attention", 3, lambda x, y, w, b: TF.softmax(x @ y.transpose(-2, -1) / math.sqrt(x.shape[-1]), dim=-1) @ y),
    ("torch.bmm", 3, lambda x, y, w, b: torch.bmm(x, y.transpose(1, 2)) + x.bmm(y.transpose(-2, -1))),
    ("log_softmax3", 3, lambda x, y, w, b: TF.log_softmax(x, dim=1) + torch.softmax(y, -3)),
]


def _op_input(shape, dtype, g, rng) -> torch.Tensor:
    """Random values at `dtype`: normal, of widely spread magnitudes, small ints, or with the
    dtype's specials mixed in."""
    profile = rng.choice(["normal", "normal", "wide", "special", "ints"])
    if profile == "ints":
        t = torch.randint(-2, 3, shape, generator=g).double()
    elif profile == "wide":
        t = torch.randn(shape, generator=g, dtype=D) * torch.exp(torch.randn(shape, generator=g, dtype=D) * 20)
    else:
        t = torch.randn(shape, generator=g, dtype=D) * rng.choice([1, 1e-3, 1e3, 1e30])
    if profile == "special":
        specials = {torch.float64: SPECIALS_F64, torch.bfloat16: SPECIALS_BF16}.get(dtype, SPECIALS)
        mask = torch.rand(shape, generator=g) < 0.2
        t = torch.where(mask, torch.tensor(specials, dtype=D)[torch.randint(0, len(specials), shape, generator=g)], t)
    return t.to(dtype)


def op_envelope_check(n: int, seed: int = 0) -> tuple:
    """Each op of `OP_CASES` at float64 and bfloat16 (rank 3 at float32) on `n` random
    inputs: eager's result inside the envelope. Returns (counts per (dtype, op), the first
    few cases outside, as lines)."""
    rng = random.Random(seed)
    counts, bad = collections.Counter(), []
    for name, rank, op in OP_CASES:
        g_op = dict(op.__globals__, torch=SHIM_TORCH, TF=SHIM_F)
        shim = pytypes.FunctionType(op.__code__, g_op)
        for dtype in ((torch.float32,) if rank == 3 else (torch.float64, torch.bfloat16)):
            for trial in range(n):
                g = torch.Generator().manual_seed(rng.randrange(1 << 30))
                rows, k = rng.choice([1, 2, 3, 5]), rng.choice([1, 2, 3, 7, 16, 64, 300 if rank == 2 else 17])
                lead = (rng.choice([1, 2, 3]),) if rank == 3 else ()
                x, y = _op_input(lead + (rows, k), dtype, g, rng), _op_input(lead + (rows, k), dtype, g, rng)
                w = _op_input((k, k), dtype, g, rng) / math.sqrt(k)
                b = _op_input((k,), dtype, g, rng)
                with torch.no_grad():
                    eager = op(x, y, w, b)
                with _format(dtype):
                    env = shim(*(Iv.of(t) for t in (x, y, w, b)))
                e = eager.double().reshape(-1)
                ok = torch.where(torch.isnan(e), env.nan.reshape(-1),
                                 env.num.reshape(-1) & (e >= env.lo.reshape(-1)) & (e <= env.hi.reshape(-1)))
                key = f"{str(dtype).replace('torch.', '')} {name}"
                counts[key, "inside" if bool(ok.all()) else "outside"] += 1
                if not bool(ok.all()) and len(bad) < 10:
                    j = int((~ok).nonzero()[0])
                    bad.append(f"{key} {tuple(x.shape)}: eager {e[j].item()!r} at {j} outside "
                               f"[{env.lo.reshape(-1)[j].item()!r}, {env.hi.reshape(-1)[j].item()!r}] "
                               f"nan={bool(env.nan.reshape(-1)[j])} num={bool(env.num.reshape(-1)[j])}")
    return counts, bad


def _python_function(source: str, name: str = "f"):
    namespace: dict = {}
    exec(builtins_compile(source, f"<difffuzz {name}>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace[name], namespace


def build_id() -> str:
    """The installed extension this process compiles with (a short hash of the file)."""
    rextio_torch._load_native()
    native = sys.modules["rextio_torch._native"]
    return hashlib.sha256(pathlib.Path(native.__file__).read_bytes()).hexdigest()[:12]


def selected(seed: int, index: int, lanes) -> bool:
    """Whether program `index` of `seed` is of one of `lanes` (None: every lane)."""
    return lanes is None or program_lane(program_seed(seed, index)) in lanes


def worker_main(seed: int, start: int, count: int, lanes=None) -> None:
    out = sys.stdout
    out.write(json.dumps({"build": build_id()}) + "\n")
    for index in range(start, start + count):
        if not selected(seed, index, lanes):
            continue
        out.write(json.dumps({"start": index}) + "\n")
        out.flush()
        try:
            rec = fuzz_one(seed, index)
        except Exception as e:  # noqa: BLE001 - a harness error is reported, not fatal
            rec = {"i": index, "cf": False, "status": "oracle-failure", "kind": "", "reason": "",
                   "explanation": "", "detail": f"harness: {_sig(e)} {traceback.format_exc()[-600:]}",
                   "both_raised": False, "boundary": 0, "compared": False}
        out.write(json.dumps(rec) + "\n")
        out.flush()
    out.write(json.dumps({"done": True}) + "\n")
    out.flush()


def run_parallel(seed: int, n: int, jobs: int, chunk: int = 500, hang_s: float = 120.0, on_record=None, lanes=None):
    """Runs programs 0..n-1 in worker processes; a worker that dies or stalls costs one program
    (recorded as crash or hang) and is restarted after it."""
    import queue
    import threading

    pending = collections.deque((a, min(chunk, n - a)) for a in range(0, n, chunk))
    results: "queue.Queue" = queue.Queue()

    def reader(proc, tag):
        for line in proc.stdout:
            results.put((tag, line))
        results.put((tag, None))

    running = {}
    next_tag = 0

    def launch(start, count):
        nonlocal next_tag
        proc = subprocess.Popen(
            [sys.executable, "-u", str(pathlib.Path(__file__).resolve()), "worker", "--seed", str(seed),
             "--start", str(start), "--count", str(count)] + (["--lanes", ",".join(lanes)] if lanes else []),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        tag = next_tag
        next_tag += 1
        running[tag] = {"proc": proc, "start": start, "end": start + count, "current": None, "last": time.time(), "done": False}
        threading.Thread(target=reader, args=(proc, tag), daemon=True).start()

    def record(rec):  # a crash or hang record is named by its program's lane too
        if "status" in rec and "lane" not in rec:
            rec["lane"] = program_lane(program_seed(seed, rec["i"]))
        on_record(rec)

    try:
        _run_workers(pending, running, results, launch, jobs, hang_s, record)
    finally:
        for w in running.values():
            if w["proc"].poll() is None:
                w["proc"].kill()


def _run_workers(pending, running, results, launch, jobs, hang_s, on_record):
    import queue

    while pending or running:
        while pending and len(running) < jobs:
            launch(*pending.popleft())
        try:
            tag, line = results.get(timeout=5)
        except queue.Empty:
            tag, line = None, None
        now = time.time()
        for t, w in list(running.items()):
            if now - w["last"] > hang_s and w["current"] is not None:
                w["proc"].kill()
                w["hung"] = True
        if tag is None:
            continue
        w = running.get(tag)
        if w is None:
            continue
        w["last"] = now
        if line is None:
            w["proc"].wait()
            del running[tag]
            if not w["done"]:
                current = w["current"] if w["current"] is not None else w["start"]
                status = "hang" if w.get("hung") else "crash"
                rec = {"i": current, "cf": False, "status": status, "kind": status, "reason": "", "explanation": "",
                       "detail": f"worker exit {w['proc'].returncode}", "both_raised": False, "boundary": 0, "compared": False}
                on_record(rec)
                if current + 1 < w["end"]:
                    pending.appendleft((current + 1, w["end"] - current - 1))
            continue
        msg = json.loads(line)
        if "build" in msg:
            on_record(msg)
        elif "start" in msg:
            w["current"] = msg["start"]
        elif "done" in msg:
            w["done"] = True
        else:
            w["current"] = None
            on_record(msg)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="fuzz N programs and print the summary")
    run.add_argument("-n", type=int, default=1000)
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--jobs", type=int, default=1)
    run.add_argument("--write-fixtures", action="store_true", help="shrink mismatches into tests/fuzz/fixtures/")
    run.add_argument("--shrink-per-kind", type=int, default=2)
    run.add_argument("--json", help="write every non-agreeing record here (JSON lines)")
    run.add_argument("--lanes", help="only the programs of these kinds among 0..N-1 (comma-separated: f32,rank0,fused,rank3,f64,bf16)")
    worker = sub.add_parser("worker")
    worker.add_argument("--seed", type=int, required=True)
    worker.add_argument("--start", type=int, required=True)
    worker.add_argument("--lanes")
    worker.add_argument("--count", type=int, required=True)
    show = sub.add_parser("show", help="print one program, its inputs and its outcome")
    show.add_argument("--seed", type=int, default=1)
    show.add_argument("index", type=int)
    show.add_argument("--shrink", action="store_true")
    chk = sub.add_parser("envcheck", help="eager's results inside the oracle's envelopes (the oracle alone)")
    chk.add_argument("-n", type=int, default=600)
    chk.add_argument("--seed", type=int, default=7)
    chk.add_argument("--new-only", action="store_true", help="only programs with the joins, layers and dim ops")
    chk.add_argument("--lane", choices=list(ALL_LANES), help="only programs of this kind")
    opc = sub.add_parser("opcheck", help="each float64/bfloat16/rank-3 op's envelope against eager (the oracle alone)")
    opc.add_argument("-n", type=int, default=200, help="cases per op and dtype")
    opc.add_argument("--seed", type=int, default=0)
    rep = sub.add_parser("replay", help="replay fixtures")
    rep.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)

    if args.command == "worker":
        worker_main(args.seed, args.start, args.count, args.lanes.split(",") if args.lanes else None)
        return 0
    if args.command == "show":
        s = program_seed(args.seed, args.index)
        program = generate_program(s)
        spec = make_spec(program, s)
        case = case_of(program, spec)
        print(program.source)
        print(spec)
        o = run_case(case.source, case.values, case.colmajor)
        print(o)
        if args.shrink and o.status == "mismatch":
            small = shrink(case, outcome_key(o))
            print(small.source)
            for k, v in small.values.items():
                print(k, v.tolist() if isinstance(v, torch.Tensor) else v)
            print(run_case(small.source, small.values, small.colmajor))
        return 0
    if args.command == "envcheck":
        counts, bad = envelope_check(args.seed, args.n, args.new_only, args.lane)
        print(f"envcheck: seed {args.seed}, {args.n} programs{' (new ops only)' if args.new_only else ''}"
              f"{f' (lane {args.lane})' if args.lane else ''}: {dict(counts)}")
        print("\n".join(bad))
        return 1 if bad else 0
    if args.command == "opcheck":
        counts, bad = op_envelope_check(args.n, args.seed)
        inside = sum(v for (k, s), v in counts.items() if s == "inside")
        print(f"opcheck: seed {args.seed}, {args.n} cases per op and dtype: {inside} inside, "
              f"{sum(counts.values()) - inside} outside")
        print("\n".join(bad))
        return 1 if bad else 0
    if args.command == "replay":
        paths = [pathlib.Path(p) for p in args.paths] or sorted(FIXTURES.glob("*.json"))
        bad = 0
        for p in paths:
            o = replay(p)
            ok = o.status in ("agree", "explained")
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {p.name}: {o.status} {o.kind} {o.detail[:200]}")
        return 1 if bad else 0

    lanes = args.lanes.split(",") if args.lanes else None
    if lanes and not set(lanes) <= set(ALL_LANES):
        parser.error(f"--lanes: kinds are {', '.join(ALL_LANES)}")
    summary = Summary()
    started = time.time()
    mismatches = []
    log = open(args.json, "w") if args.json else None
    last_print = [time.time()]

    builds = collections.Counter()

    def on_record(rec):
        if "build" in rec:
            builds[rec["build"]] += 1
            return
        summary.add(rec)
        if rec["status"] in ("mismatch", "crash", "hang"):
            mismatches.append(rec)
        if log and rec["status"] not in ("agree", "refused"):
            log.write(json.dumps(rec) + "\n")
            log.flush()
        if time.time() - last_print[0] > 60:
            last_print[0] = time.time()
            print(f"  ... {summary.total} programs, {summary.status['mismatch']} mismatches", flush=True)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.jobs <= 1 and args.n <= 2000:
        builds[build_id()] += 1
        for i in range(args.n):
            if selected(args.seed, i, lanes):
                on_record(fuzz_one(args.seed, i))
    else:
        run_parallel(args.seed, args.n, max(1, args.jobs), on_record=on_record, lanes=lanes)
    print(summary.text(args.seed, time.time() - started))
    if len(builds) == 1:
        print(f"  one build of the extension throughout: {next(iter(builds))}")
    else:
        print(f"  WARNING: the installed extension changed during the run ({len(builds)} builds, "
              f"by chunks of programs: {dict(builds)}); the counts mix them")
    for (status, kind), recs in sorted(summary.examples.items()):
        if status in ("mismatch", "crash", "hang"):
            print(f"\n{status} {kind}: programs {[r['i'] for r in recs]}")
            print(f"  {recs[0]['detail'][:300]}")
    if args.write_fixtures:
        per_kind = collections.Counter()
        written = set()
        recorded = {}
        for path in sorted(FIXTURES.glob("*.json")):
            data = json.loads(path.read_text())
            if data["status"] == "open":
                recorded.setdefault(data["kind"], path.name)
        for rec in mismatches:
            if rec["status"] != "mismatch" or per_kind[rec["kind"]] >= args.shrink_per_kind:
                continue
            if rec["kind"] in recorded:
                print(f"\n{rec['kind']}: already recorded as open by fixture {recorded[rec['kind']]}")
                per_kind[rec["kind"]] = args.shrink_per_kind
                continue
            per_kind[rec["kind"]] += 1
            s = program_seed(args.seed, rec["i"])
            program = generate_program(s)
            spec = make_spec(program, s)
            case = case_of(program, spec)
            o = run_case(case.source, case.values, case.colmajor)
            if o.status != "mismatch":
                continue
            small = shrink(case, outcome_key(o))
            o2 = run_case(small.source, small.values, small.colmajor)
            fixture = fixture_dict(small, o2, {"seed": args.seed, "index": rec["i"],
                                               "command": f"tests/fuzz/difffuzz.py show --seed {args.seed} {rec['i']}"})
            if fixture["id"] in written:
                continue
            written.add(fixture["id"])
            path = write_fixture(fixture)
            print(f"\nfixture {path.relative_to(ROOT)} ({o2.kind}):\n{ast.unparse(_function_def(small.source))}")
    return 1 if summary.status["mismatch"] + summary.status["crash"] + summary.status["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
