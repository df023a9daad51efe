//! Op helpers: one function per IR op, over fallible tch calls (a unary op's is
//! [`crate::unary::aten`], with the rest of its numerics). Callers hold a no-grad guard
//! for the whole call, so helpers never create autograd state. Where ATen's own split of
//! an op among torch's threads changes its bits (whole-tensor reductions, elementwise ops
//! whose vector and scalar loops round differently), the helpers here hand ATen fixed
//! chunks instead ([`reduce_all`], [`elementwise_fixed`]; docs/parity.md, "Threads").

use rextio_ir::{
    BagMode, BinaryOp, CompareOp, ExtremumOp, FillKind, JoinKind, ReduceKind, SoftmaxKind,
    ToScalarKind, ViewKind, WholeReduceOp,
};
use tch::{Kind, Tensor};

use crate::error::{Result, RuntimeError};

pub fn binary(op: BinaryOp, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    Ok(match op {
        BinaryOp::Add => lhs.f_add(rhs)?,
        BinaryOp::Sub => lhs.f_sub(rhs)?,
        BinaryOp::Mul => lhs.f_mul(rhs)?,
        BinaryOp::Div => lhs.f_div(rhs)?,
    })
}

pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    Ok(input.f_linear(weight, bias)?)
}

pub fn matmul(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    Ok(lhs.f_matmul(rhs)?)
}

/// `torch.bmm(lhs, rhs)`: ATen's batched product, which broadcasts no batch.
pub fn bmm(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    Ok(lhs.f_bmm(rhs)?)
}

pub fn reduce(kind: ReduceKind, x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    let dims = [i64::from(dim)];
    Ok(match kind {
        ReduceKind::Mean => x.f_mean_dim(&dims[..], keepdim, None::<Kind>)?,
        ReduceKind::Sum => x.f_sum_dim_intlist(&dims[..], keepdim, None::<Kind>)?,
        ReduceKind::Amax => x.f_amax(&dims[..], keepdim)?,
        ReduceKind::Amin => x.f_amin(&dims[..], keepdim)?,
    })
}

pub fn softmax(kind: SoftmaxKind, x: &Tensor, dim: u8) -> Result<Tensor> {
    Ok(match kind {
        SoftmaxKind::Softmax => x.f_softmax(i64::from(dim), None::<Kind>)?,
        SoftmaxKind::LogSoftmax => x.f_log_softmax(i64::from(dim), None::<Kind>)?,
    })
}

/// `torch.cat` / `torch.stack` of `parts` along `dim`: ATen's own op, so the values (a
/// copy) and the errors (parts whose other sizes differ: `RuntimeError` with eager's words)
/// are eager's.
pub fn join(kind: JoinKind, parts: &[&Tensor], dim: u8) -> Result<Tensor> {
    let dim = i64::from(dim);
    Ok(match kind {
        JoinKind::Cat => Tensor::f_cat(parts, dim)?,
        JoinKind::Stack => Tensor::f_stack(parts, dim)?,
    })
}

pub fn argmax(x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    Ok(x.f_argmax(i64::from(dim), keepdim)?)
}

/// `layer_norm` over the last `normalized` elements, as eager's `F.layer_norm` calls it
/// (`torch.layer_norm(x, [n], w, b, eps, cudnn_enable=True)`): a size other than the input's
/// last dim is ATen's error, word for word.
pub fn layer_norm(
    x: &Tensor,
    normalized: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    Ok(x.f_layer_norm([normalized].as_slice(), weight, bias, eps, true)?)
}

/// `embedding(ids, weight)` as eager's `F.embedding` calls it without options
/// (`torch.embedding(weight, ids, padding_idx=-1, False, False)`; `padding_idx` only changes
/// the gradient): an id outside `[0, rows)` is ATen's `index out of range in self`, a
/// `c10::IndexError`, which eager raises as Python's `IndexError` (tch reports every ATen
/// error alike, so the message says which it was).
pub fn embedding(ids: &Tensor, weight: &Tensor) -> Result<Tensor> {
    Tensor::f_embedding(weight, ids, -1, false, false).map_err(|err| {
        match RuntimeError::from(err) {
            RuntimeError::Torch(message) if message.contains("index out of range") => {
                RuntimeError::Index(message)
            }
            other => other,
        }
    })
}

/// `embedding_bag(ids, weight, offsets, mode)` as eager's `F.embedding_bag` calls it with
/// rank-1 ids and no options (`torch.embedding_bag(weight, ids, offsets, False, mode, False,
/// None, False, None)`; the first of its four results): ATen's errors word for word (an id
/// out of range, `offsets[0]` other than 0, `offsets[-1]` past the ids), and its bits.
///
/// Two inputs that ATen does not check are refused or answered here before it runs, as on
/// them eager reads memory out of bounds (a garbage sum, an `IndexError` or a crash by mode):
/// offsets that decrease somewhere (a `RuntimeError` that says so), and no offsets at all in
/// `max` mode with ids present (a segmentation fault in eager; here the `[0, dim]` result
/// that `sum` and `mean` give).
pub fn embedding_bag(
    ids: &Tensor,
    weight: &Tensor,
    offsets: &Tensor,
    mode: BagMode,
) -> Result<Tensor> {
    let starts = Vec::<i64>::try_from(offsets)?;
    let in_range = starts.first() == Some(&0) && starts.last() <= Some(&ids.size1()?);
    if in_range {
        if let Some(i) = starts.windows(2).position(|pair| pair[0] > pair[1]) {
            return Err(RuntimeError::Torch(format!(
                "embedding_bag: offsets must be non-decreasing, but offsets[{i}] = {} is greater \
                 than offsets[{}] = {} (eager's result is undefined for such offsets)",
                starts[i],
                i + 1,
                starts[i + 1]
            )));
        }
    }
    if starts.is_empty() && mode == BagMode::Max && ids.numel() > 0 {
        let (_, dim) = weight.size2()?;
        return Ok(Tensor::f_zeros([0, dim], (weight.kind(), weight.device()))?);
    }
    let (bags, _, _, _) = Tensor::f_embedding_bag_padding_idx(
        weight,
        ids,
        offsets,
        false,
        mode.aten_code(),
        false,
        None::<Tensor>,
        false,
        None,
    )?;
    Ok(bags)
}

/// A view of `x` ([`ViewKind`]), ATen's own, so the result is eager's: it shares `x`'s
/// storage where eager's does, and has eager's strides (`transpose` of a rank-2 tensor is
/// non-contiguous; of rank 1 it is `x` again, as `t()` is). Errors are eager's: `reshape` /
/// `view` sizes that do not fit (`RuntimeError`), `view` of a layout it cannot view
/// (`RuntimeError: view size is not compatible with input tensor's size and stride ...`).
/// `squeeze` of a dim whose size is not 1 is ours: eager returns the tensor unchanged, of
/// the same rank, which the compiled function's static (one rank less) type cannot hold, so
/// it raises a `RuntimeError` naming the size rather than return a tensor of another rank.
pub fn view(kind: ViewKind, x: &Tensor, sizes: &[i64], dim: u8) -> Result<Tensor> {
    let d = i64::from(dim);
    Ok(match kind {
        ViewKind::Transpose if x.dim() < 2 => x.f_alias()?,
        // `dim` is the first of the two adjacent dims swapped (0 below rank 3).
        ViewKind::Transpose => x.f_transpose(d, d + 1)?,
        ViewKind::Reshape => x.f_reshape(sizes)?,
        ViewKind::View => x.f_view(sizes)?,
        ViewKind::Flatten => x.f_flatten(0, -1)?,
        ViewKind::Unsqueeze => x.f_unsqueeze(d)?,
        // `x` itself when contiguous (the same tensor, as eager returns it), else a copy.
        ViewKind::Contiguous => x.f_contiguous()?,
        ViewKind::Squeeze => {
            let shape = x.size();
            match shape.get(usize::from(dim)) {
                Some(1) => x.f_squeeze_dim(d)?,
                Some(n) => {
                    return Err(RuntimeError::Shape(format!(
                        "rextio-torch: squeeze(dim={dim}) of a tensor of shape {shape:?}: dim {dim} has size {n}, not 1; \
                         eager would return the tensor unchanged (rank {}), which the compiled function's static rank-{} result cannot hold \
                         (squeeze only a dim of size 1)",
                        shape.len(),
                        shape.len().saturating_sub(1)
                    )))
                }
                None => {
                    return Err(RuntimeError::Index(format!(
                        "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                        -(shape.len() as i64),
                        shape.len() as i64 - 1
                    )))
                }
            }
        }
    })
}

/// An ATen error whose message says an index is out of range, as eager's `IndexError`
/// (`words` are the distinguishing part of ATen's message); any other stays a
/// `RuntimeError`.
fn index_error(err: tch::TchError, words: &str) -> RuntimeError {
    match RuntimeError::from(err) {
        RuntimeError::Torch(message) if message.contains(words) => RuntimeError::Index(message),
        other => other,
    }
}

/// `x.max(dim=d)` / `x.min(dim=d)`'s values or indices ([`ExtremumOp`]): ATen's `max.dim` /
/// `min.dim`, so the values are eager's bits and the index is eager's (the first
/// extremum; NaN wins). An empty reduced dim is eager's `IndexError` (`max(): Expected
/// reduction dim 0 to have non-zero size.`).
pub fn extremum(op: ExtremumOp, x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    let d = i64::from(dim);
    let result = if op.is_max() {
        x.f_max_dim(d, keepdim)
    } else {
        x.f_min_dim(d, keepdim)
    };
    let (values, indices) = result.map_err(|err| index_error(err, "Expected reduction dim"))?;
    Ok(if op.is_indices() { indices } else { values })
}

/// `torch.zeros_like(x)` / `ones_like(x)` / `full_like(x, value)` ([`FillKind`]): ATen's
/// own (the result has `x`'s dtype, device and memory format). `value` is the float32 the
/// caller cast with ATen's checked cast, so ATen never raises here.
pub fn fill_like(kind: FillKind, x: &Tensor, value: Option<f32>) -> Result<Tensor> {
    Ok(match (kind, value) {
        (FillKind::Zeros, _) => x.f_zeros_like()?,
        (FillKind::Ones, _) => x.f_ones_like()?,
        (FillKind::Full, Some(v)) => x.f_full_like(f64::from(v))?,
        (FillKind::Full, None) => {
            return Err(RuntimeError::Unsupported(
                "internal: full_like without a value".into(),
            ))
        }
    })
}

/// `torch.index_select(x, dim, ids)`: ATen's own, with its errors (an id outside the
/// tensor's first dim is eager's `IndexError: index out of range in self`; along dim 1,
/// eager's `RuntimeError`).
pub fn index_select(x: &Tensor, ids: &Tensor, dim: u8) -> Result<Tensor> {
    x.f_index_select(i64::from(dim), ids)
        .map_err(|err| index_error(err, "index out of range"))
}

/// `F.normalize(x, p, dim, eps)` as eager's Python computes it: `x / x.norm(p, dim,
/// keepdim=True).clamp_min(eps).expand_as(x)` (`Tensor.norm` with a number `p` is ATen's
/// `linalg_vector_norm`, which `norm.ScalarOpt_dim` calls).
pub fn normalize(x: &Tensor, p: f64, dim: u8, eps: f64) -> Result<Tensor> {
    let denom = x
        .f_norm_scalaropt_dim(p, [i64::from(dim)].as_slice(), true)?
        .f_clamp_min(eps)?
        .f_expand_as(x)?;
    Ok(x.f_div(&denom)?)
}

/// Elements of one chunk of a whole-tensor reduction: ATen's `at::internal::GRAIN_SIZE`.
/// ATen runs a reduction of fewer elements on the calling thread at every thread count
/// (`parallel_reduce`); from it on, a whole reduction sums one partial per thread
/// (`two_pass_reduction`), so its bits depend on the thread count.
pub const FIXED_CHUNK: i64 = 32768;

/// Elements of one chunk of an elementwise op run in fixed chunks ([`elementwise_fixed`]).
/// ATen runs an elementwise loop on the calling thread below `GRAIN_SIZE` elements, except
/// GELU, which goes parallel above 16384 (`GELU_MIN_ELEMENTS_FOR_MULTI_THREADING`, a grain of
/// `numel / threads`); above, each thread's range restarts the split between the vector loop
/// and its scalar tail, which is part of the bits. 16384 is a multiple of every vector
/// loop's step (32 float32 lanes at AVX-512 unrolled twice), so chunks end where eager's
/// one-thread loop has no tail.
pub const ELEMENTWISE_CHUNK: i64 = 16384;

/// `x.sum()`, `x.mean()`, `x.max()`, `x.min()`, `x.amax()`, `x.amin()` with no dim
/// ([`WholeReduceOp`]): a rank-0 result with the same bits at every thread count.
///
/// Below [`FIXED_CHUNK`] elements (and for tensors that are not floating point, whose sums
/// are exact) this is ATen's own whole reduction, which then runs on one thread whatever
/// the thread count: eager's bits and errors (`max()` of an empty tensor), strides honoured.
/// From it on, eager's bits depend on the thread count; here the tensor is read in memory
/// order ([`memory_order`], the order eager's iterator reads it), cut into chunks of
/// [`FIXED_CHUNK`] elements whose bounds depend on the size alone, each chunk reduced by
/// ATen as one row of a `[chunks, FIXED_CHUNK]` view (ATen splits a reduction along a
/// dim over its outputs, so each row is reduced whole by one thread, with the same code at
/// every thread count), the tail alone, and the partials reduced the same way again.
/// A bfloat16 or half chunk's `sum` is ATen's row sum (accumulated in float32, rounded once
/// to the dtype, as each thread's partial of eager's own parallel sum is); for a `mean` it
/// stays float32 (eager's mean sums into a float32 result). The partials are summed in
/// float64 and the total rounded once to the accumulation dtype. A mean is that sum divided
/// by the count, as ATen's `mean` is (in float32 for the 16-bit dtypes, then rounded).
pub fn reduce_all(op: WholeReduceOp, x: &Tensor) -> Result<Tensor> {
    let n = x.numel() as i64;
    let kind = x.f_kind()?;
    if n < FIXED_CHUNK || !x.f_is_floating_point()? {
        return aten_reduce_all(op, x);
    }
    let acc = accumulation_kind(kind);
    let total = chunked_reduce_all(op, &memory_order(x)?, acc)?;
    // A sum of float32 partials is combined in float64 and rounded once to the accumulation
    // dtype: rounding each level of the partials' tree in float32 made a 2000 x 1000 sum two
    // ulps less accurate than eager's one-thread sum, whose long cascade rounds less often.
    Ok(match op {
        WholeReduceOp::Sum => total.f_to_kind(acc)?.f_to_kind(kind)?,
        WholeReduceOp::Mean => total.f_to_kind(acc)?.f_div_scalar(n)?.f_to_kind(kind)?,
        _ => total,
    })
}

/// ATen's own whole-tensor reduction.
fn aten_reduce_all(op: WholeReduceOp, x: &Tensor) -> Result<Tensor> {
    let all: &[i64] = &[];
    Ok(match op {
        WholeReduceOp::Sum => x.f_sum(None::<Kind>)?,
        WholeReduceOp::Mean => x.f_mean(None::<Kind>)?,
        WholeReduceOp::Max => x.f_max()?,
        WholeReduceOp::Min => x.f_min()?,
        WholeReduceOp::Amax => x.f_amax(all, false)?,
        WholeReduceOp::Amin => x.f_amin(all, false)?,
    })
}

/// The dtype ATen's CPU sum accumulates `kind` in: float32 for the 16-bit floats.
fn accumulation_kind(kind: Kind) -> Kind {
    match kind {
        Kind::BFloat16 | Kind::Half => Kind::Float,
        other => other,
    }
}

/// The reduction (a sum for `Sum` and `Mean`) of `flat`, a rank-1 tensor, in fixed chunks
/// ([`reduce_all`]); the chunks summed at dtype `acc`, their partials (`n / FIXED_CHUNK` of
/// them, few) in float64.
fn chunked_reduce_all(op: WholeReduceOp, flat: &Tensor, acc: Kind) -> Result<Tensor> {
    let n = flat.size1()?;
    if n < FIXED_CHUNK {
        return whole_partial(op, flat, acc);
    }
    let rows = n / FIXED_CHUNK;
    let body = flat
        .f_narrow(0, 0, rows * FIXED_CHUNK)?
        .f_view([rows, FIXED_CHUNK])?;
    let row_partials = match op {
        // A bfloat16 or half `sum` row is summed in float32 and rounded once to its dtype, as
        // each thread's partial of eager's own parallel `sum` is (asking ATen for float32 rows
        // casts the whole tensor first, three times the time of the sum). Eager's `mean` of
        // these dtypes sums into a float32 result at every thread count, and so do its rows
        // here: a mean is often near zero, where rounded partials would cost many ulps.
        WholeReduceOp::Sum if body.f_kind()? != acc => body
            .f_sum_dim_intlist([1i64].as_slice(), false, None::<Kind>)?
            .f_to_kind(acc)?,
        WholeReduceOp::Sum | WholeReduceOp::Mean => {
            body.f_sum_dim_intlist([1i64].as_slice(), false, acc)?
        }
        WholeReduceOp::Max => body.f_max_dim(1, false)?.0,
        WholeReduceOp::Min => body.f_min_dim(1, false)?.0,
        WholeReduceOp::Amax => body.f_amax([1i64].as_slice(), false)?,
        WholeReduceOp::Amin => body.f_amin([1i64].as_slice(), false)?,
    };
    let tail = n - rows * FIXED_CHUNK;
    let partials = if tail > 0 {
        let last = whole_partial(op, &flat.f_narrow(0, rows * FIXED_CHUNK, tail)?, acc)?
            .f_to_kind(row_partials.f_kind()?)?;
        Tensor::f_cat(&[row_partials, last.f_reshape([1])?], 0)?
    } else {
        row_partials
    };
    match op {
        WholeReduceOp::Sum | WholeReduceOp::Mean => {
            chunked_reduce_all(op, &partials.f_to_kind(Kind::Double)?, Kind::Double)
        }
        _ => chunked_reduce_all(op, &partials, acc),
    }
}

/// ATen's whole reduction of fewer than [`FIXED_CHUNK`] elements (one thread), a sum at
/// dtype `acc`.
fn whole_partial(op: WholeReduceOp, x: &Tensor, acc: Kind) -> Result<Tensor> {
    Ok(match op {
        WholeReduceOp::Sum | WholeReduceOp::Mean => x.f_sum(acc)?,
        _ => aten_reduce_all(op, x)?,
    })
}

/// The dims of `x` ordered by stride, largest first (a stable order, so dims of equal
/// stride keep theirs): the order in which ATen's `TensorIterator` walks `x`, outermost
/// first. A dim of stride 0 (expanded) gives `TensorIterator` no order against another
/// (`reorder_dimensions` skips such a pair), so a tensor with one keeps its dims' order.
fn stride_order(x: &Tensor) -> Vec<i64> {
    let (sizes, strides) = (x.size(), x.stride());
    let mut dims: Vec<i64> = (0..strides.len() as i64).collect();
    let expanded = sizes.iter().zip(&strides).any(|(&n, &s)| n > 1 && s == 0);
    if !expanded {
        dims.sort_by_key(|&d| std::cmp::Reverse(strides[d as usize]));
    }
    dims
}

/// `x`'s elements as a rank-1 tensor in memory order: a view when `x` is dense in some
/// order of its dims (contiguous, transposed), which is the order eager reads it; otherwise
/// (a slice, an expanded tensor) a copy with its dims in [`stride_order`]. Values are never
/// changed: only the order in which a reduction meets them.
fn memory_order(x: &Tensor) -> Result<Tensor> {
    let permuted = x.f_permute(stride_order(x).as_slice())?;
    let dense = if permuted.is_contiguous() {
        permuted
    } else {
        permuted.f_contiguous()?
    };
    Ok(dense.f_reshape([-1])?)
}

/// `f` (an elementwise op of one tensor, ATen's) applied to `x` with the same bits at every
/// thread count: up to [`ELEMENTWISE_CHUNK`] elements ATen's op on `x` itself (one thread at
/// every count); above, `x` in memory order ([`memory_order`]) in chunks of
/// [`ELEMENTWISE_CHUNK`] elements, each on the calling thread, written into a result with `x`'s layout (eager's
/// for a dense layout; dims by stride for a slice or an expanded tensor). A chunk is a
/// multiple of every vector loop's step, so a dense tensor meets ATen's scalar tail at the
/// same elements as eager at one thread: eager's one-thread bits.
pub fn elementwise_fixed(x: &Tensor, f: impl Fn(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    elementwise_fixed_into(x, &f, |chunk, out| {
        out.f_copy_(&f(chunk)?)?;
        Ok(())
    })
}

/// [`elementwise_fixed`] with `into(chunk, out)` writing a chunk's result straight into its
/// slice of the output (an ATen `_out` op: no chunk is allocated or copied; SiLU of
/// 256x8x1024 in 1.2 ms where copying chunks took 1.85 and eager 0.97, the rest being one
/// ATen call per chunk); `whole` computes a tensor too small to chunk.
pub fn elementwise_fixed_into(
    x: &Tensor,
    whole: impl Fn(&Tensor) -> Result<Tensor>,
    into: impl Fn(&Tensor, &mut Tensor) -> Result<()>,
) -> Result<Tensor> {
    let n = x.numel() as i64;
    if n <= ELEMENTWISE_CHUNK || !x.f_is_floating_point()? {
        return whole(x);
    }
    let order = stride_order(x);
    let permuted = x.f_permute(order.as_slice())?;
    let source = if permuted.is_contiguous() {
        permuted
    } else {
        permuted.f_contiguous()?
    };
    let flat = source.f_reshape([-1])?;
    // Unary float ops keep the dtype; each chunk's result goes straight into its slice of the
    // output (where collecting the chunks and concatenating them cost a second pass).
    let out = Tensor::f_empty([n], (x.f_kind()?, x.device()))?;
    let mut start = 0;
    while start < n {
        let len = ELEMENTWISE_CHUNK.min(n - start);
        into(
            &flat.f_narrow(0, start, len)?,
            &mut out.f_narrow(0, start, len)?,
        )?;
        start += len;
    }
    let out = out.f_view(source.size().as_slice())?;
    // Back to `x`'s dims: the inverse permutation.
    let mut inverse = vec![0i64; order.len()];
    for (at, &d) in order.iter().enumerate() {
        inverse[d as usize] = at as i64;
    }
    Ok(out.f_permute(inverse.as_slice())?)
}

/// Eager's error for `t.item()` / `float(t)` of a tensor without exactly one element:
/// `item`'s `RuntimeError`, `float`'s `ValueError`, with eager's words.
pub fn check_one_element(kind: ToScalarKind, numel: usize) -> Result<()> {
    match (numel, kind) {
        (1, _) => Ok(()),
        (n, ToScalarKind::Item) => Err(RuntimeError::Torch(format!(
            "a Tensor with {n} elements cannot be converted to Scalar"
        ))),
        (_, ToScalarKind::Float) => Err(RuntimeError::Value(
            "only one element tensors can be converted to Python scalars".into(),
        )),
    }
}

/// `t.item()` / `float(t)` ([`ToScalarKind`]) of a one-element float tensor: its value as a
/// double, exactly.
pub fn to_scalar(kind: ToScalarKind, x: &Tensor) -> Result<f64> {
    check_one_element(kind, x.numel())?;
    Ok(x.f_double_value(&[])?)
}

/// The other side of a [`tensor_truth`]: a tensor, or a Python `int`/`float` (ATen casts it
/// to the tensor's dtype, as eager's comparison with a Python number does).
pub enum TruthSide<'a> {
    Tensor(&'a Tensor),
    Int(i64),
    Float(f64),
}

/// `bool(lhs <op> rhs)`: ATen's comparison (broadcast), then Python's truth of the bool
/// tensor, which must have exactly one element (eager's `RuntimeError` "Boolean value of
/// Tensor with more than one value is ambiguous" / "with no values" otherwise, ATen's words).
pub fn tensor_truth(op: CompareOp, lhs: &Tensor, rhs: TruthSide<'_>) -> Result<bool> {
    let mask = match rhs {
        TruthSide::Tensor(r) => compare(op, lhs, r)?,
        TruthSide::Int(i) => compare_scalar(op, lhs, tch::Scalar::int(i))?,
        TruthSide::Float(f) => compare_scalar(op, lhs, tch::Scalar::float(f))?,
    };
    Ok(mask.f_is_nonzero()?)
}

/// `lhs <cmp> rhs` as a bool tensor (ATen's comparison, broadcast).
pub fn compare(cmp: CompareOp, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    Ok(match cmp {
        CompareOp::Eq => lhs.f_eq_tensor(rhs)?,
        CompareOp::Ne => lhs.f_ne_tensor(rhs)?,
        CompareOp::Lt => lhs.f_lt_tensor(rhs)?,
        CompareOp::Le => lhs.f_le_tensor(rhs)?,
        CompareOp::Gt => lhs.f_gt_tensor(rhs)?,
        CompareOp::Ge => lhs.f_ge_tensor(rhs)?,
    })
}

fn compare_scalar(op: CompareOp, lhs: &Tensor, s: tch::Scalar) -> Result<Tensor> {
    Ok(match op {
        CompareOp::Eq => lhs.f_eq(s)?,
        CompareOp::Ne => lhs.f_ne(s)?,
        CompareOp::Lt => lhs.f_lt(s)?,
        CompareOp::Le => lhs.f_le(s)?,
        CompareOp::Gt => lhs.f_gt(s)?,
        CompareOp::Ge => lhs.f_ge(s)?,
    })
}
