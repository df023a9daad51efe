//! Op helpers: one function per IR op, over fallible tch calls (a unary op's is
//! [`crate::unary::aten`], with the rest of its numerics). Callers hold a no-grad guard
//! for the whole call, so helpers never create autograd state.

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

/// `x.sum()`, `x.mean()`, `x.max()`, `x.min()`, `x.amax()`, `x.amin()` with no dim
/// ([`WholeReduceOp`]): ATen's own whole-tensor reductions, so the summation order (and the
/// bits) and the errors (`max()` of an empty tensor) are eager's. A rank-0 result.
pub fn reduce_all(op: WholeReduceOp, x: &Tensor) -> Result<Tensor> {
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
