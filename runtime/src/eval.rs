//! One function per op over run-time values ([`Reg`]), shared by the executor and (through
//! [`crate::exec`] and [`crate::lazy`]) by generated code, so both compute every op with the
//! same kernel and give the same bits.

use rextio_ir::{
    BagMode, BinaryOp, CompareOp, ExtremumOp, FillKind, FusedReduce, FusedTail, JoinKind,
    ParamUnaryOp, ReduceKind, ScalarOp, SoftmaxKind, TensorScalarOp, ToScalarKind, UnaryOp,
    ViewKind, WeightLayout, WholeReduceOp,
};

use crate::buffer::{Buffer, Dims, F32};
use crate::dense;
use crate::error::{unsupported, Result, RuntimeError};
use crate::kernels::{self, Epilogue, KernelPath, LinearDims};
use crate::ops;
use crate::reg::{Reg, Slot};
use crate::scalar::Scalar;
use crate::unary;

pub(crate) fn unary(op: UnaryOp, x: &Reg) -> Result<Reg> {
    match x {
        Reg::F32(v) if unary::supported(op, v.dims().len()) => Ok(Reg::F32(dense::unary(op, v))),
        Reg::Tensor(t)
            if flat_loop_is_eagers(op)
                && flat_f32_len(t).is_some_and(|n| unary::supported(op, n)) =>
        {
            Reg::of_result(flat_unary(op, t)?, &[x])
        }
        // Eager's exact GELU takes oneDNN's kernel only for a contiguous tensor, ATen's own
        // (other classes at the edges) for any other: fixed chunks, which are contiguous,
        // would take the wrong one. So a strided GELU is ATen's op on the tensor as given:
        // eager's bits at each thread count (docs/parity.md, "Threads").
        Reg::Tensor(t) if op == UnaryOp::Gelu && !t.is_contiguous() => {
            Reg::of_result(unary::aten(op, t)?, &[x])
        }
        // An op whose ATen loops round differently (vector against scalar) runs in fixed
        // chunks, so that its bits do not depend on the thread count; the exact ops give the
        // same bits in either loop and keep ATen's own parallel loop.
        _ if !exact_in_every_loop(op) => Reg::of_result(
            ops::elementwise_fixed_into(
                &*x.tensor()?,
                |t| unary::aten(op, t),
                |t, out| unary::aten_into(op, t, out),
            )?,
            &[x],
        ),
        _ => Reg::of_result(unary::aten(op, &*x.tensor()?)?, &[x]),
    }
}

/// Whether [`flat_unary`] gives eager's bits for `op` on a contiguous tensor, as ATen's
/// fixed chunks do: the exact ops, GELU (oneDNN's formula) and SiLU (ATen's own loops,
/// `unary::silu_aten_whole`), each exact over all inputs. The others (GELU tanh, exp, tanh,
/// sigmoid) are our polynomials, within the ulps of docs/parity.md, where rank 3 promises
/// eager's bits.
fn flat_loop_is_eagers(op: UnaryOp) -> bool {
    exact_in_every_loop(op) || matches!(op, UnaryOp::Gelu | UnaryOp::Silu)
}

/// The element count of a contiguous float32 CPU tensor of a rank the dense values do not
/// hold (3 and up; a transformer's `[batch, tokens, features]`), which an elementwise op
/// reads as one flat slice, as ATen's loop reads it; `None` for anything else.
fn flat_f32_len(t: &tch::Tensor) -> Option<usize> {
    let fits = t.dim() >= 3
        && t.kind() == tch::Kind::Float
        && t.device() == tch::Device::Cpu
        && t.is_contiguous();
    fits.then(|| t.numel()).filter(|&n| n > 0)
}

/// `op` over a tensor [`flat_f32_len`] accepts, by the dense ops' slice loop (SiLU by ATen's
/// own two loops): eager's bits, where eager's own fixed chunks through ATen cost a
/// oneDNN call per 16 K elements (GELU of 256x8x1024: 3.5 ms against eager's 0.94).
fn flat_unary(op: UnaryOp, t: &tch::Tensor) -> Result<tch::Tensor> {
    let n = t.numel();
    let mut out = t.f_empty_like()?;
    // SAFETY: `t` is a contiguous float32 CPU tensor of `n` elements (flat_f32_len), alive
    // and unwritten for this call; `out` is a fresh tensor of the same size nobody else sees.
    let (src, dst) = unsafe {
        (
            crate::kernels::f32_slice(t, n),
            crate::kernels::f32_slice_mut(&mut out, n),
        )
    };
    match op {
        UnaryOp::Silu => unary::silu_aten_whole(src, dst),
        _ => unary::slice(op, src, dst),
    }
    Ok(out)
}

/// Whether ATen's vectorized loop and its scalar tail give the same bits for every input
/// (each is one correctly rounded IEEE operation or a comparison), so which elements each
/// loop takes, which depends on the thread count, cannot change a result.
fn exact_in_every_loop(op: UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Relu
            | UnaryOp::Abs
            | UnaryOp::Neg
            | UnaryOp::Square
            | UnaryOp::Sqrt
            | UnaryOp::Rsqrt
            | UnaryOp::Relu6
    )
}

pub(crate) fn binary(op: BinaryOp, a: &Reg, b: &Reg) -> Result<Reg> {
    if let (Reg::F32(x), Reg::F32(y)) = (a, b) {
        if let Some(dims) = dense::broadcast(x.dims(), y.dims()) {
            return Ok(Reg::F32(dense::binary(op, x, y, dims)));
        }
    }
    Reg::of_result(ops::binary(op, &*a.tensor()?, &*b.tensor()?)?, &[a, b])
}

/// A tensor with a Python scalar: the scalar cast to float32 as ATen casts a wrapped number
/// to the tensor's dtype (an int64 or a double rounded to nearest, so `1e-300` is `0.0`, `1e300`
/// is `inf`), then the float32 op ([`dense::tensor_scalar`]); other tensors take ATen's
/// `*_scalar` ops (`rsub`, `reciprocal` then `mul` for `s / x`).
pub(crate) fn tensor_scalar(op: TensorScalarOp, x: &Reg, s: Scalar) -> Result<Reg> {
    match x {
        Reg::F32(v) => Ok(Reg::F32(dense::tensor_scalar(op, v, scalar_f32(s)))),
        _ => {
            // ATen's ops, the scalar an int64 or a double (ATen casts it to the tensor's
            // dtype), `s - x` as `torch.rsub`, `s / x` as `Tensor.__rtruediv__` does.
            let s = match s {
                Scalar::Int(i) => tch::Scalar::int(i),
                Scalar::Bool(b) => tch::Scalar::int(i64::from(b)),
                Scalar::Float(f) => tch::Scalar::float(f),
            };
            let t = x.tensor()?;
            let y = match op {
                TensorScalarOp::Add => t.f_add_scalar(s)?,
                TensorScalarOp::Sub => t.f_sub_scalar(s)?,
                TensorScalarOp::Mul => t.f_mul_scalar(s)?,
                TensorScalarOp::Div => t.f_div_scalar(s)?,
                TensorScalarOp::RSub => t.f_rsub_scalar(s)?,
                TensorScalarOp::RDiv => t.f_reciprocal()?.f_mul_scalar(s)?,
            };
            Reg::of_result(y, &[x])
        }
    }
}

/// Eager's message for a parameter outside float32's range (c10's checked cast).
pub const FLOAT_OVERFLOW: &str = "value cannot be converted to type float without overflow";

/// A tensor op with Python scalar parameters ([`ParamUnaryOp`]), as eager computes it:
/// `hardtanh` first checks `min_val > max_val` as Python does (`ValueError`); a NaN bound of a
/// clamp makes every element NaN (ATen fills the result before casting any bound); otherwise
/// each parameter is cast to float32 as ATen's `Scalar::to<float>()` does ([`checked_f32`]: a
/// finite value outside float32's range raises eager's `RuntimeError`, with its words). A
/// dense float32 tensor then takes [`dense::param_unary`] (ELU and NaN bounds excepted),
/// anything else ATen ([`aten_param_unary`]), which only ever sees float32 values: tch drops
/// a `Scalar` argument before it reads ATen's error, and panics on it there.
pub(crate) fn param_unary(
    op: ParamUnaryOp,
    x: &Reg,
    first: Scalar,
    second: Option<Scalar>,
) -> Result<Reg> {
    if op.arity() != 1 + usize::from(second.is_some()) {
        return unsupported(format!("internal: {op} takes {} parameters", op.arity()));
    }
    if let (ParamUnaryOp::Hardtanh, Some(max_val)) = (op, second) {
        // `F.hardtanh` checks its bounds in Python before calling ATen.
        if crate::scalar::binary(ScalarOp::Gt, first, max_val)? == Scalar::Bool(true) {
            return Err(RuntimeError::Value(
                "min_val cannot be greater than max_val".to_string(),
            ));
        }
    }
    let is_nan = |s: Scalar| matches!(s, Scalar::Float(f) if f.is_nan());
    let nan_bound = !matches!(op, ParamUnaryOp::LeakyRelu | ParamUnaryOp::Elu)
        && (is_nan(first) || second.is_some_and(is_nan));
    let (a, b) = if nan_bound {
        (f32::NAN, f32::NAN)
    } else {
        let b = second.map(checked_f32).transpose()?;
        (checked_f32(first)?, b.unwrap_or(0.0))
    };
    if let Reg::F32(v) = x {
        if !nan_bound {
            if let Some(out) = dense::param_unary(op, v, a, b) {
                return Ok(Reg::F32(out));
            }
        }
    }
    // ELU's two ATen loops round differently (`expm1` against `exp - 1`): fixed chunks, so
    // its bits do not depend on the thread count. The others are comparisons and one product.
    let t = x.tensor()?;
    let y = if op == ParamUnaryOp::Elu {
        ops::elementwise_fixed(&t, |t| aten_param_unary(op, t, a, b))?
    } else {
        aten_param_unary(op, &t, a, b)?
    };
    Reg::of_result(y, &[x])
}

/// [`param_unary`] through libtorch, the parameters already float32 (`a`, `b`; NaN for a NaN
/// bound), passed exactly. tch has no `leaky_relu`/`elu` with parameters, so these are
/// composed exactly: `leaky_relu` is `where(x > 0, x, x * s)` (ATen's loop, one rounding);
/// `elu` is ATen's ELU with alpha 1 (its own vector/scalar split, so its `expm1` and
/// `exp - 1` are eager's), then `* alpha` where `x < 0`, which is ATen's `expm1(x) * alpha`
/// (a product by 1 is exact); eager keeps a zero as it is, whatever alpha's sign. The clamps
/// are ATen's.
fn aten_param_unary(op: ParamUnaryOp, t: &tch::Tensor, a: f32, b: f32) -> Result<tch::Tensor> {
    let (a, b) = (f64::from(a), f64::from(b));
    Ok(match op {
        ParamUnaryOp::LeakyRelu => t.f_where_self(&t.f_gt(0)?, &t.f_mul_scalar(a)?)?,
        ParamUnaryOp::Elu => {
            let e = t.f_elu()?;
            if a == 1.0 {
                e
            } else {
                e.f_mul_scalar(a)?.f_where_self(&t.f_lt(0)?, &e)?
            }
        }
        ParamUnaryOp::Hardtanh | ParamUnaryOp::Clamp => t.f_clamp(a, b)?,
        ParamUnaryOp::ClampMin => t.f_clamp_min(a)?,
        ParamUnaryOp::ClampMax => t.f_clamp_max(a)?,
    })
}

/// A Python scalar parameter as ATen's `Scalar::to<float>()` casts it: an int (or bool)
/// rounds to nearest; a float rounds to nearest, except that a finite value beyond float32's
/// range is an error (`c10::checked_convert`), where infinities and NaN pass.
pub fn checked_f32(s: Scalar) -> Result<f32> {
    match s {
        Scalar::Float(f) if f.is_finite() && f.abs() > f64::from(f32::MAX) => {
            Err(RuntimeError::Torch(FLOAT_OVERFLOW.to_string()))
        }
        other => Ok(scalar_f32(other)),
    }
}

/// A Python scalar as ATen casts it to float32 (`static_cast<float>`: round to nearest).
pub fn scalar_f32(s: Scalar) -> f32 {
    match s {
        Scalar::Int(i) => i as f32,
        Scalar::Bool(b) => f32::from(u8::from(b)),
        Scalar::Float(f) => f as f32,
    }
}

pub(crate) fn matmul(a: &Reg, b: &Reg) -> Result<Reg> {
    match (a, b) {
        (Reg::F32(x), Reg::F32(y)) if dense::matmul_supported(x.dims(), y.dims()) => {
            Ok(Reg::F32(dense::matmul(x, y)))
        }
        _ => Reg::of_result(ops::matmul(&*a.tensor()?, &*b.tensor()?)?, &[a, b]),
    }
}

/// `fused_attention`: `softmax((q @ k.transpose(-2, -1)) op c, dim=-1) @ v` (`scale` the op
/// and `c`), by the fused kernel ([`crate::attention::fused_attention`]) where it takes the
/// operands, else the unfused chain op by op, which raises eager's errors (or broadcasts a
/// batch of 1, as `matmul` does).
pub(crate) fn attention(
    q: &Reg,
    k: &Reg,
    v: &Reg,
    scale: Option<(TensorScalarOp, Scalar)>,
) -> Result<Reg> {
    {
        let (qt, kt, vt) = (q.tensor()?, k.tensor()?, v.tensor()?);
        let dense_scale = scale.map(|(op, c)| (op, scalar_f32(c)));
        if let Some(y) = crate::attention::fused_attention(&qt, &kt, &vt, dense_scale)? {
            return Reg::of_result(y, &[q, k, v]);
        }
    }
    // Op by op: intermediate buffers are scratch, so the result is copied out if returned.
    Buffer::output_flag_aside();
    let kt = view(ViewKind::Transpose, k, &[], 1)?;
    let mut s = matmul(q, &kt)?;
    if let Some((op, c)) = scale {
        s = tensor_scalar(op, &s, c)?;
    }
    let p = softmax(SoftmaxKind::Softmax, &s, 2)?;
    matmul(&p, v)
}

/// `torch.bmm(a, b)` (rank 3, ATen's: eager's bits and errors).
pub(crate) fn bmm(a: &Reg, b: &Reg) -> Result<Reg> {
    Reg::of_result(ops::bmm(&*a.tensor()?, &*b.tensor()?)?, &[a, b])
}

/// Whether `dim` is a dimension of a dense value of rank 1 or 2.
fn dense_dim(v: &F32, dim: u8) -> bool {
    let rank = v.dims().rank();
    (1..=2).contains(&rank) && usize::from(dim) < rank
}

pub(crate) fn reduce(kind: ReduceKind, x: &Reg, dim: u8, keepdim: bool) -> Result<Reg> {
    match x {
        Reg::F32(v) if dense_dim(v, dim) && dense::reduce_supported(kind, v, dim) => {
            Ok(Reg::F32(dense::reduce(kind, v, usize::from(dim), keepdim)))
        }
        _ => Reg::of_result(ops::reduce(kind, &*x.tensor()?, dim, keepdim)?, &[x]),
    }
}

pub(crate) fn softmax(kind: SoftmaxKind, x: &Reg, dim: u8) -> Result<Reg> {
    match x {
        Reg::F32(v) if dense_dim(v, dim) => Ok(Reg::F32(match kind {
            SoftmaxKind::Softmax => dense::softmax(v, usize::from(dim)),
            SoftmaxKind::LogSoftmax => dense::log_softmax(v, usize::from(dim)),
        })),
        _ => Reg::of_result(ops::softmax(kind, &*x.tensor()?, dim)?, &[x]),
    }
}

/// `cat` / `stack` ([`ops::join`]: ATen's, a fresh tensor whatever the parts, so a result
/// never aliases a part).
pub(crate) fn join(kind: JoinKind, parts: &[&Reg], dim: u8) -> Result<Reg> {
    // A `cat` of dense float32 values is a copy into one pooled buffer (no libtorch call: at
    // a small batch the call and its tensor cost more than the copy, DLRM's `cat` before its
    // first layer).
    if kind == JoinKind::Cat {
        let dense: Option<Vec<&F32>> = parts
            .iter()
            .map(|p| match p {
                Reg::F32(v) => Some(v),
                _ => None,
            })
            .collect();
        if let Some(y) = dense.and_then(|d| dense::cat(&d, usize::from(dim))) {
            return Ok(Reg::F32(y));
        }
    }
    let tensors = parts
        .iter()
        .map(|part| part.tensor())
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&tch::Tensor> = tensors.iter().map(|t| &**t).collect();
    Reg::of_result(ops::join(kind, &refs, dim)?, parts)
}

pub(crate) fn argmax(x: &Reg, dim: u8, keepdim: bool) -> Result<Reg> {
    match x {
        Reg::F32(v) if dense_dim(v, dim) && !v.dims().is_empty() => {
            Ok(Reg::Tensor(dense::argmax(v, usize::from(dim), keepdim)?))
        }
        _ => Reg::of_result(ops::argmax(&*x.tensor()?, dim, keepdim)?, &[x]),
    }
}

/// `layer_norm` (ATen's, whole: exact against eager by construction). A fused op's row
/// normalization has the runtime's own kernel ([`norm_rows`]).
pub(crate) fn layer_norm(
    x: &Reg,
    weight: Option<&Reg>,
    bias: Option<&Reg>,
    normalized: i64,
    eps: f64,
) -> Result<Reg> {
    let w = weight.map(Reg::tensor).transpose()?;
    let b = bias.map(Reg::tensor).transpose()?;
    let y = ops::layer_norm(&*x.tensor()?, normalized, w.as_deref(), b.as_deref(), eps)?;
    let mut operands = vec![x];
    operands.extend(weight);
    operands.extend(bias);
    Reg::of_result(y, &operands)
}

/// A view ([`ops::view`], ATen's): the result may share `x`'s storage and be strided; a
/// result sharing a pooled operand's buffer is copied with its strides kept
/// ([`Reg::of_result`]), and a strided one stays a tch tensor, which every later op reads
/// through ATen (a `view` of it raises eager's error).
pub(crate) fn view(kind: ViewKind, x: &Reg, sizes: &[i64], dim: u8) -> Result<Reg> {
    Reg::of_result(ops::view(kind, &*x.tensor()?, sizes, dim)?, &[x])
}

/// `x.shape[dim]` (the dim checked against the static rank when compiling).
pub(crate) fn size(x: &Reg, dim: u8) -> Result<i64> {
    let d = usize::from(dim);
    let n = match x {
        Reg::F32(v) if d < v.dims().rank() => v.dims().dim(d) as i64,
        _ => {
            let shape = x.tensor()?.size();
            match shape.get(d) {
                Some(n) => *n,
                None => {
                    return Err(RuntimeError::Index(format!(
                        "tuple index out of range (size {dim} of a rank-{} tensor)",
                        shape.len()
                    )))
                }
            }
        }
    };
    Ok(n)
}

/// `max(dim)` / `min(dim)`'s values or indices ([`ops::extremum`]).
pub(crate) fn extremum(op: ExtremumOp, x: &Reg, dim: u8, keepdim: bool) -> Result<Reg> {
    Reg::of_result(ops::extremum(op, &*x.tensor()?, dim, keepdim)?, &[x])
}

/// `zeros_like` / `ones_like` / `full_like` ([`ops::fill_like`]); `full_like`'s value cast
/// to float32 with ATen's checked cast (a finite float beyond float32 is eager's error).
pub(crate) fn fill_like(kind: FillKind, x: &Reg, value: Option<Scalar>) -> Result<Reg> {
    let value = value.map(checked_f32).transpose()?;
    Reg::of_result(ops::fill_like(kind, &*x.tensor()?, value)?, &[x])
}

/// `index_select(x, dim, ids)` ([`ops::index_select`]).
pub(crate) fn index_select(x: &Reg, ids: &Reg, dim: u8) -> Result<Reg> {
    let y = ops::index_select(&*x.tensor()?, &*ids.tensor()?, dim)?;
    Reg::of_result(y, &[x, ids])
}

/// `F.normalize(x, p, dim, eps)` ([`ops::normalize`]).
pub(crate) fn normalize(x: &Reg, p: f64, dim: u8, eps: f64) -> Result<Reg> {
    Reg::of_result(ops::normalize(&*x.tensor()?, p, dim, eps)?, &[x])
}

/// `embedding(ids, weight)` (ATen's gather of rows, with its range check).
pub(crate) fn embedding(ids: &Reg, weight: &Reg) -> Result<Reg> {
    let y = ops::embedding(&*ids.tensor()?, &*weight.tensor()?)?;
    Reg::of_result(y, &[ids, weight])
}

/// `embedding_bag(ids, weight, offsets, mode)` (ATen's pooled gather, with its checks).
pub(crate) fn embedding_bag(ids: &Reg, weight: &Reg, offsets: &Reg, mode: BagMode) -> Result<Reg> {
    if let (Reg::Tensor(i), Reg::F32(w), Reg::Tensor(o)) = (ids, weight, offsets) {
        if let Some(bags) = dense::embedding_bag(w, i, o, mode) {
            return Ok(Reg::F32(bags));
        }
    }
    let y = ops::embedding_bag(
        &*ids.tensor()?,
        &*weight.tensor()?,
        &*offsets.tensor()?,
        mode,
    )?;
    Reg::of_result(y, &[ids, weight, offsets])
}

/// The operands of a `linear` as dense float32 of shapes that fit each other (x [batch, k],
/// w [n, k], b [n]); `None` for anything else, which ATen computes or rejects.
pub(crate) fn dense_linear_operands<'a>(
    x: &'a Reg,
    w: &'a Reg,
    b: Option<&'a Reg>,
) -> Option<(&'a F32, &'a F32, Option<&'a F32>)> {
    dense_product_operands(x, w, b, WeightLayout::OutIn)
}

/// [`dense_linear_operands`] for a weight laid out as `layout` says (`[in, out]`: w [k, n]).
fn dense_product_operands<'a>(
    x: &'a Reg,
    w: &'a Reg,
    b: Option<&'a Reg>,
    layout: WeightLayout,
) -> Option<(&'a F32, &'a F32, Option<&'a F32>)> {
    let (Reg::F32(xv), Reg::F32(wv)) = (x, w) else {
        return None;
    };
    let bv = match b {
        None => None,
        Some(Reg::F32(bv)) => Some(bv),
        Some(_) => return None,
    };
    let (xd, wd) = (xv.dims(), wv.dims());
    let (in_dim, out_dim) = match layout {
        WeightLayout::OutIn => (1, 0),
        WeightLayout::InOut => (0, 1),
    };
    let shapes = xd.rank() == 2 && wd.rank() == 2 && xd.dim(1) == wd.dim(in_dim);
    let bias_fits = bv.is_none_or(|b| b.dims().rank() == 1 && b.dims().dim(0) == wd.dim(out_dim));
    (shapes && bias_fits).then_some((xv, wv, bv))
}

/// `linear` then `activations` then `tail` (a fused op's whole chain).
/// `cache` holds the weight's slot and the call's transposed weights when the weight is an
/// argument reused across iterations.
pub(crate) fn linear(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
    cache: Option<(Slot, &mut TransposedWeights)>,
) -> Result<Reg> {
    with_tail(tail, |reduce| {
        linear_reduced(x, w, b, activations, reduce, cache)
    })
}

/// For a bias written `+ b` after `linear(x, w)`: `None` when a rank-1 bias of the product's
/// width (or of one element) lets the fused kernels run. Otherwise the unfused chain, as eager
/// runs it: `linear(x, w)`'s error if `x` and `w` do not fit, else the addition's, which
/// either raises (`F.linear`'s own bias error has other words) or broadcasts (a one-column
/// product and a longer bias give a wider result), then the activations and the tail.
pub(crate) fn added_bias_unfused(
    x: &Reg,
    w: &Reg,
    b: &Reg,
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
) -> Result<Option<Reg>> {
    let fits = match (w, b) {
        // The common case, without a tch call: dense operands.
        (Reg::F32(wv), Reg::F32(bv)) => {
            let (wd, bd) = (wv.dims(), bv.dims());
            bd.rank() != 1 || wd.rank() == 0 || bd.dim(0) == wd.dim(0) || bd.dim(0) == 1
        }
        _ => {
            let (w_sizes, b_sizes) = (sizes(w)?, sizes(b)?);
            match b_sizes.as_slice() {
                [len] => w_sizes.first() == Some(len) || *len == 1,
                _ => true,
            }
        }
    };
    if fits {
        return Ok(None);
    }
    // Op by op: intermediate buffers are scratch, so the result is copied out if returned.
    Buffer::output_flag_aside();
    let mut y = linear(x, w, None, &[], None, None)?;
    y = binary(BinaryOp::Add, &y, b)?;
    for op in activations {
        y = unary(*op, &y)?;
    }
    Ok(Some(match tail {
        None => y,
        Some(FusedTail::Reduce(r)) => reduce(r.kind, &y, r.dim, r.keepdim)?,
        Some(FusedTail::Softmax { kind, dim }) => softmax(kind, &y, dim)?,
        Some(FusedTail::Argmax { dim, keepdim }) => argmax(&y, dim, keepdim)?,
    }))
}

/// The sizes of a tensor value.
fn sizes(r: &Reg) -> Result<Vec<i64>> {
    match r {
        Reg::F32(v) => Ok(v.dims().sizes()),
        _ => Ok(r.tensor()?.size()),
    }
}

/// A fused op's chain around its `product` (which computes the product, the activations and
/// a reduction tail): under an argmax tail the product is scratch (the result is an int64
/// tensor of its own) and must not take the buffer meant for the call's result; a softmax
/// tail runs in place on the product, an argmax tail reads it.
fn with_tail(
    tail: Option<FusedTail>,
    product: impl FnOnce(Option<FusedReduce>) -> Result<Reg>,
) -> Result<Reg> {
    if matches!(tail, Some(FusedTail::Argmax { .. })) {
        Buffer::output_flag_aside();
    }
    let y = product(tail.and_then(FusedTail::reduction))?;
    row_tail(y, tail)
}

/// The buffer and shape of a dense `linear` result. Taken before anything else the op
/// allocates (a transposed weight): the first buffer taken after `Buffer::next_is_output`
/// becomes the call's result, allocated by libtorch when it is large.
fn product_output(batch: usize, n: usize, reduce: Option<FusedReduce>) -> (Buffer, Dims) {
    let dims = match reduce {
        None => Dims::matrix(batch, n),
        Some(r) if r.keepdim => Dims::matrix(batch, 1),
        Some(_) => Dims::vector(batch),
    };
    (Buffer::take(dims.len()), dims)
}

/// `kernels::linear_into` over dense operands (`weight` laid out as `path` reads it) into
/// `out` (from [`product_output`]).
fn dense_product(
    (mut out, dims): (Buffer, Dims),
    path: KernelPath,
    x: &F32,
    weight: &[f32],
    b: Option<&F32>,
    shape: LinearDims,
    epilogue: Epilogue<'_>,
) -> Result<Reg> {
    kernels::linear_into(
        path,
        x.data(),
        weight,
        b.map(F32::data),
        shape,
        epilogue,
        out.as_mut_slice(),
    )?;
    Ok(Reg::F32(F32::Pooled(out, dims)))
}

/// A fused op's row-wise tail on its product `y` (reductions are the kernels'): softmax in
/// place where `y` is a dense matrix the op owns, argmax straight from it.
fn row_tail(y: Reg, tail: Option<FusedTail>) -> Result<Reg> {
    match tail {
        None | Some(FusedTail::Reduce(_)) => Ok(y),
        Some(FusedTail::Softmax { kind, dim }) => match y {
            Reg::F32(F32::Pooled(mut buffer, dims)) if dims.rank() == 2 && dim == 1 => {
                let (rows, cols) = (dims.dim(0), dims.dim(1));
                let data = buffer.as_mut_slice();
                match kind {
                    SoftmaxKind::Softmax => dense::softmax_rows_in_place(data, rows, cols),
                    SoftmaxKind::LogSoftmax => dense::log_softmax_rows_in_place(data, rows, cols),
                }
                Ok(Reg::F32(F32::Pooled(buffer, dims)))
            }
            other => softmax(kind, &other, dim),
        },
        Some(FusedTail::Argmax { dim, keepdim }) => argmax(&y, dim, keepdim),
    }
}

/// A fused op's row normalization of its input `x`, `layer_norm(x, [normalized], weight,
/// bias, eps)`: the fused kernels' own ([`dense::layer_norm_rows`]) where `x` is a dense
/// float32 matrix of width `normalized` (not 0) and `weight` and `bias` are dense vectors of
/// that width or both absent; else ATen's `layer_norm`, which raises eager's errors.
pub(crate) fn norm_rows(
    x: &Reg,
    weight: Option<&Reg>,
    bias: Option<&Reg>,
    normalized: i64,
    eps: f64,
) -> Result<Reg> {
    if let Reg::F32(xv) = x {
        let dims = xv.dims();
        let width = (dims.rank() == 2).then(|| dims.dim(1));
        if let Some(k) = width.filter(|k| *k > 0 && i64::try_from(*k).ok() == Some(normalized)) {
            fn vector(r: Option<&Reg>, k: usize) -> Option<&F32> {
                match r {
                    Some(Reg::F32(v)) if v.dims().rank() == 1 && v.dims().dim(0) == k => Some(v),
                    _ => None,
                }
            }
            match (weight, bias, vector(weight, k), vector(bias, k)) {
                (None, None, _, _) => {
                    return Ok(Reg::F32(dense::layer_norm_rows(xv, None, None, eps)))
                }
                (Some(_), Some(_), Some(w), Some(b)) => {
                    return Ok(Reg::F32(dense::layer_norm_rows(xv, Some(w), Some(b), eps)))
                }
                _ => {}
            }
        }
    }
    layer_norm(x, weight, bias, normalized, eps)
}

/// A fused op's residual `r` added to its product `y` (after the activations) in the user's
/// order, `r + y` where `first`: in place where `y` is a dense matrix the op owns and `r` a
/// dense float32 value of the same sizes (one IEEE addition per element, the unfused `add`'s
/// bits), else eager's addition, which broadcasts or raises as written.
pub(crate) fn add_residual(y: Reg, r: &Reg, first: bool) -> Result<Reg> {
    match (y, r) {
        (Reg::F32(F32::Pooled(mut buffer, dims)), Reg::F32(rv)) if rv.dims() == dims => {
            dense::add_in_place(buffer.as_mut_slice(), rv.data());
            Ok(Reg::F32(F32::Pooled(buffer, dims)))
        }
        (y, r) if first => binary(BinaryOp::Add, r, &y),
        (y, r) => binary(BinaryOp::Add, &y, r),
    }
}

/// `linear` then `activations` then `reduce`: the one-pass kernel straight into a pooled
/// buffer where the shapes allow it, else `kernels::fused_linear` (which also raises eager's
/// errors for shapes that do not fit).
pub(crate) fn linear_reduced(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    cache: Option<(Slot, &mut TransposedWeights)>,
) -> Result<Reg> {
    if let Some((xv, wv, bv)) = dense_linear_operands(x, w, b) {
        let (batch, k, n) = (xv.dims().dim(0), xv.dims().dim(1), wv.dims().dim(0));
        let reduce_fits = reduce.is_none_or(|r| r.dim == 1);
        let path = kernels::COST_MODEL.choose_for(batch, k, n, cache.is_some());
        if reduce_fits && path != KernelPath::GemmThenEpilogue {
            let out = product_output(batch, n, reduce);
            let once;
            let weight = match (path, cache) {
                (KernelPath::BlockedTransposed, Some((slot, cache))) => {
                    cache.get(slot, wv.data(), LinearDims::new(batch, k, n))
                }
                (KernelPath::BlockedTransposed, None) => {
                    once = kernels::transposed_for(wv.data(), LinearDims::new(batch, k, n));
                    once.as_slice()
                }
                _ => wv.data(),
            };
            let shape = LinearDims::new(batch, k, n);
            let epilogue = Epilogue::new(activations, reduce);
            return dense_product(out, path, xv, weight, bv, shape, epilogue);
        }
    }
    let (xt, wt) = (x.tensor()?, w.tensor()?);
    let bt = b.map(Reg::tensor).transpose()?;
    let float32 = |t: &tch::Tensor| t.f_kind().ok() == Some(tch::Kind::Float);
    if !(float32(&xt) && float32(&wt) && bt.as_deref().is_none_or(float32)) {
        // Another dtype (float64, bfloat16: the extended surface's dtype lane) never reaches
        // the float32 kernels: ATen's `linear`, then the chain op by op, as eager computes it.
        let y = Reg::of_result(ops::linear(&xt, &wt, bt.as_deref())?, &[x, w])?;
        return activations_then_reduce(y, activations, reduce);
    }
    let fits_kernels = xt.dim() == 2 && wt.dim() == 2;
    let y = if activations.is_empty() && reduce.is_none() && !fits_kernels {
        ops::linear(&xt, &wt, bt.as_deref())?
    } else {
        let reused = cache.is_some();
        kernels::fused_linear_for(&xt, &wt, bt.as_deref(), activations, reduce, reused)?
    };
    let operands: Vec<&Reg> = [x, w].into_iter().chain(b).collect();
    Reg::of_result(y, &operands)
}

/// `x` after a fused op's prologue (`x = x op v`, in order): one pass where `x` is a dense
/// matrix and every operand a dense vector of its width ([`dense::prologue`]), else the
/// unfused ops in order, which raise eager's errors for operands that do not broadcast.
pub(crate) fn apply_prologue<'a>(
    x: &Reg,
    mut steps: impl Iterator<Item = (BinaryOp, &'a Reg)> + Clone,
) -> Result<Reg> {
    if let Reg::F32(xv) = x {
        if xv.dims().rank() == 2 {
            let k = xv.dims().dim(1);
            let dense_steps = steps.clone().map(move |(op, v)| match v {
                Reg::F32(v) if v.dims().rank() == 1 && v.dims().dim(0) == k => Some((op, v)),
                _ => None,
            });
            if dense_steps.clone().all(|step| step.is_some()) {
                return Ok(Reg::F32(dense::prologue(xv, dense_steps.flatten())));
            }
        }
    }
    let Some((op, v)) = steps.next() else {
        return unsupported("internal: an empty prologue reached `apply_prologue`");
    };
    let mut y = binary(op, x, v)?;
    for (op, v) in steps {
        y = binary(op, &y, v)?;
    }
    Ok(y)
}

/// `matmul(x, w) + b`, then `activations`, then `tail` (a `fused_matmul`'s whole chain).
pub(crate) fn matmul_linear(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
) -> Result<Reg> {
    with_tail(tail, |reduce| matmul_reduced(x, w, b, activations, reduce))
}

/// `matmul(x, w) + b`, then `activations`, then `reduce`. The weight is
/// `[in, out]`, the layout the transposed-weight kernels stream, so it is read in place;
/// where [`kernels::CostModel::fuses_in_out`] says the sizes are better served op by op, or
/// the operands do not fit each other (then eager's errors, with the operands in the user's
/// order), the unfused chain runs through the executor's own ops.
fn matmul_reduced(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Reg> {
    if let Some((xv, wv, bv)) = dense_product_operands(x, w, b, WeightLayout::InOut) {
        let (batch, k, n) = (xv.dims().dim(0), xv.dims().dim(1), wv.dims().dim(1));
        let reduce_fits = reduce.is_none_or(|r| r.dim == 1);
        if reduce_fits && kernels::COST_MODEL.fuses_in_out(batch, k, n) {
            let path = KernelPath::BlockedTransposed;
            let shape = LinearDims::new(batch, k, n);
            let epilogue = Epilogue::new(activations, reduce);
            let out = product_output(batch, n, reduce);
            return dense_product(out, path, xv, wv.data(), bv, shape, epilogue);
        }
    }
    // Op by op: intermediate buffers are scratch, so the result is copied out if returned.
    Buffer::output_flag_aside();
    let mut y = matmul(x, w)?;
    if let Some(b) = b {
        y = binary(BinaryOp::Add, &y, b)?;
    }
    activations_then_reduce(y, activations, reduce)
}

/// The rest of a fused chain op by op, as eager computes it: `activations` in order, then
/// `reduce`.
fn activations_then_reduce(
    mut y: Reg,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Reg> {
    for op in activations {
        y = unary(*op, &y)?;
    }
    if let Some(r) = reduce {
        y = self::reduce(r.kind, &y, r.dim, r.keepdim)?;
    }
    Ok(y)
}

/// The transposed weights of one call, by argument slot: a weight that a loop applies every
/// iteration is transposed once ([`KernelPath::BlockedTransposed`]). Arguments are never
/// written during a call, so an entry stays valid for the whole call.
#[derive(Default)]
pub(crate) struct TransposedWeights {
    entries: Vec<(Slot, Buffer)>,
}

impl TransposedWeights {
    /// Forgets every entry (the buffers go back to their pool).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// `w` ([n, k] of `dims`, the argument in `slot`) transposed.
    fn get(&mut self, slot: Slot, w: &[f32], dims: LinearDims) -> &[f32] {
        let at = match self.entries.iter().position(|(s, _)| *s == slot) {
            Some(at) => at,
            None => {
                self.entries.push((slot, kernels::transposed_for(w, dims)));
                self.entries.len() - 1
            }
        };
        self.entries[at].1.as_slice()
    }
}

/// `x.sum()` and the other whole-tensor reductions: ATen's ([`ops::reduce_all`]), for eager's
/// summation order; a rank-0 result.
pub(crate) fn reduce_all(op: WholeReduceOp, x: &Reg) -> Result<Reg> {
    Reg::of_result(ops::reduce_all(op, &*x.tensor()?)?, &[x])
}

/// `t.item()` / `float(t)` of a one-element float tensor: a dense float32 value is read in
/// place, any other through ATen.
pub(crate) fn to_scalar(kind: ToScalarKind, x: &Reg) -> Result<f64> {
    match x {
        Reg::F32(v) => {
            ops::check_one_element(kind, v.dims().len())?;
            v.data()
                .first()
                .map(|value| f64::from(*value))
                .ok_or_else(|| {
                    RuntimeError::Unsupported("internal: a one-element value without data".into())
                })
        }
        _ => ops::to_scalar(kind, &*x.tensor()?),
    }
}

/// `bool(lhs <op> rhs)` of a tensor with a tensor or a Python scalar ([`ops::tensor_truth`]).
pub(crate) fn tensor_truth(op: CompareOp, lhs: &Reg, rhs: Result<&Reg, Scalar>) -> Result<bool> {
    let l = lhs.tensor()?;
    match rhs {
        Ok(r) => ops::tensor_truth(op, &l, ops::TruthSide::Tensor(&*r.tensor()?)),
        Err(Scalar::Int(i)) => ops::tensor_truth(op, &l, ops::TruthSide::Int(i)),
        Err(Scalar::Float(f)) => ops::tensor_truth(op, &l, ops::TruthSide::Float(f)),
        Err(Scalar::Bool(b)) => ops::tensor_truth(op, &l, ops::TruthSide::Int(i64::from(b))),
    }
}
