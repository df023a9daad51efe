//! The executor's ops over tensors, for generated code: each takes and returns tch tensors
//! and computes exactly what the executor computes for that op (same kernel choice, same
//! bits), so an emitted crate and `rextio_torch.compile` agree bit for bit
//! (tests/python/test_emit_build.py). Float32 tensors are read in place; results are fresh.

use rextio_ir::{
    BagMode, BinaryOp, CompareOp, ExtremumOp, FillKind, FusedTail, JoinKind, ParamUnaryOp,
    ReduceKind, SoftmaxKind, TensorScalarOp, ToScalarKind, UnaryOp, ViewKind, WholeReduceOp,
};
use tch::Tensor;

use crate::error::{Result, RuntimeError};
use crate::eval::{self, TransposedWeights};
use crate::ops;
use crate::reg::{Reg, Value};
use crate::scalar::Scalar;

/// A tensor op's result as a tensor (a scalar here is a compiler bug).
pub(crate) fn tensor(r: Reg) -> Result<Tensor> {
    match r.into_value()? {
        Value::Tensor(t) => Ok(t),
        _ => Err(RuntimeError::Unsupported(
            "internal: a tensor op produced a scalar".into(),
        )),
    }
}

pub fn unary(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    tensor(eval::unary(op, &Reg::of_tensor(x)?)?)
}

pub fn binary(op: BinaryOp, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    tensor(eval::binary(
        op,
        &Reg::of_tensor(lhs)?,
        &Reg::of_tensor(rhs)?,
    )?)
}

/// `x op s` with a Python scalar (an `i64` or `f64` of generated code, `.into()`).
pub fn tensor_scalar(op: TensorScalarOp, x: &Tensor, s: Scalar) -> Result<Tensor> {
    tensor(eval::tensor_scalar(op, &Reg::of_tensor(x)?, s)?)
}

/// `op(x, a[, b])` with Python scalar parameters (`i64` or `f64` of generated code).
pub fn param_unary(
    op: ParamUnaryOp,
    x: &Tensor,
    first: Scalar,
    second: Option<Scalar>,
) -> Result<Tensor> {
    tensor(eval::param_unary(op, &Reg::of_tensor(x)?, first, second)?)
}

pub fn matmul(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    tensor(eval::matmul(&Reg::of_tensor(lhs)?, &Reg::of_tensor(rhs)?)?)
}

/// `fused_attention`: `softmax((q @ k.transpose(-2, -1)) op c, dim=-1) @ v`, `scale` the
/// op (`div` or `mul`) and `c` where the scores are scaled.
pub fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: Option<(TensorScalarOp, Scalar)>,
) -> Result<Tensor> {
    let (q, k, v) = (Reg::of_tensor(q)?, Reg::of_tensor(k)?, Reg::of_tensor(v)?);
    tensor(eval::attention(&q, &k, &v, scale)?)
}

/// `torch.bmm(lhs, rhs)`.
pub fn bmm(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    tensor(eval::bmm(&Reg::of_tensor(lhs)?, &Reg::of_tensor(rhs)?)?)
}

pub fn reduce(kind: ReduceKind, x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    tensor(eval::reduce(kind, &Reg::of_tensor(x)?, dim, keepdim)?)
}

pub fn softmax(x: &Tensor, dim: u8) -> Result<Tensor> {
    tensor(eval::softmax(
        SoftmaxKind::Softmax,
        &Reg::of_tensor(x)?,
        dim,
    )?)
}

pub fn log_softmax(x: &Tensor, dim: u8) -> Result<Tensor> {
    tensor(eval::softmax(
        SoftmaxKind::LogSoftmax,
        &Reg::of_tensor(x)?,
        dim,
    )?)
}

fn join(kind: JoinKind, parts: &[&Tensor], dim: u8) -> Result<Tensor> {
    let regs = parts
        .iter()
        .map(|p| Reg::of_tensor(p))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Reg> = regs.iter().collect();
    tensor(eval::join(kind, &refs, dim)?)
}

// `max`/`min` over a dim and the fills, one function per op (as the views have), so generated
// code names the op without the IR's enums.

/// `x.max(dim=d).values`.
pub fn max_values(x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    extremum(ExtremumOp::MaxValues, x, dim, keepdim)
}

/// `x.max(dim=d).indices` (int64).
pub fn max_indices(x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    extremum(ExtremumOp::MaxIndices, x, dim, keepdim)
}

/// `x.min(dim=d).values`.
pub fn min_values(x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    extremum(ExtremumOp::MinValues, x, dim, keepdim)
}

/// `x.min(dim=d).indices` (int64).
pub fn min_indices(x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    extremum(ExtremumOp::MinIndices, x, dim, keepdim)
}

fn extremum(op: ExtremumOp, x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    tensor(eval::extremum(op, &Reg::of_tensor(x)?, dim, keepdim)?)
}

/// `torch.zeros_like(x)`.
pub fn zeros_like(x: &Tensor) -> Result<Tensor> {
    tensor(eval::fill_like(FillKind::Zeros, &Reg::of_tensor(x)?, None)?)
}

/// `torch.ones_like(x)`.
pub fn ones_like(x: &Tensor) -> Result<Tensor> {
    tensor(eval::fill_like(FillKind::Ones, &Reg::of_tensor(x)?, None)?)
}

/// `torch.full_like(x, value)` (`value` an `i64`/`f64` of generated code, `.into()`).
pub fn full_like(x: &Tensor, value: Scalar) -> Result<Tensor> {
    tensor(eval::fill_like(
        FillKind::Full,
        &Reg::of_tensor(x)?,
        Some(value),
    )?)
}

/// `torch.index_select(x, dim, ids)`.
pub fn index_select(x: &Tensor, ids: &Tensor, dim: u8) -> Result<Tensor> {
    tensor(eval::index_select(
        &Reg::of_tensor(x)?,
        &Reg::of_tensor(ids)?,
        dim,
    )?)
}

/// `F.normalize(x, p, dim, eps)`.
pub fn normalize(x: &Tensor, p: f64, dim: u8, eps: f64) -> Result<Tensor> {
    tensor(eval::normalize(&Reg::of_tensor(x)?, p, dim, eps)?)
}

/// One operand of [`elementwise`] in generated code: a tensor, or a Python scalar
/// (`i64`/`f64`, `.into()`).
pub enum Operand<'a> {
    Tensor(&'a Tensor),
    Scalar(Scalar),
}

/// `torch.where(a <cmp> b, x, y)`, `torch.maximum`, `torch.minimum`, `torch.pow(x, p)`
/// ([`rextio_ir::ElementwiseOp`]), as the executor computes them.
pub fn elementwise(op: rextio_ir::ElementwiseOp, operands: &[Operand<'_>]) -> Result<Tensor> {
    let regs = operands
        .iter()
        .map(|o| match o {
            Operand::Tensor(t) => Reg::of_tensor(t).map(Ok),
            Operand::Scalar(s) => Ok(Err(*s)),
        })
        .collect::<Result<Vec<_>>>()?;
    let args: Vec<crate::elementwise::Operand<'_>> = regs
        .iter()
        .map(|r| match r {
            Ok(reg) => crate::elementwise::Operand::Tensor(reg),
            Err(s) => crate::elementwise::Operand::Scalar(*s),
        })
        .collect();
    tensor(crate::elementwise::elementwise(op, &args)?)
}

/// `torch.cat(parts, dim)`.
pub fn cat(parts: &[&Tensor], dim: u8) -> Result<Tensor> {
    join(JoinKind::Cat, parts, dim)
}

/// `torch.stack(parts, dim)`.
pub fn stack(parts: &[&Tensor], dim: u8) -> Result<Tensor> {
    join(JoinKind::Stack, parts, dim)
}

pub fn argmax(x: &Tensor, dim: u8, keepdim: bool) -> Result<Tensor> {
    tensor(eval::argmax(&Reg::of_tensor(x)?, dim, keepdim)?)
}

/// `layer_norm(x, [normalized], weight, bias, eps)` over the last dim.
pub fn layer_norm(
    x: &Tensor,
    normalized: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    normalization(eval::layer_norm, x, normalized, weight, bias, eps)
}

/// A row normalization over values ([`eval::layer_norm`] or [`eval::norm_rows`]) applied to
/// tensors.
type NormalizeRows = fn(&Reg, Option<&Reg>, Option<&Reg>, i64, f64) -> Result<Reg>;

fn normalization(
    f: NormalizeRows,
    x: &Tensor,
    normalized: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let w = weight.map(Reg::of_tensor).transpose()?;
    let b = bias.map(Reg::of_tensor).transpose()?;
    tensor(f(
        &Reg::of_tensor(x)?,
        w.as_ref(),
        b.as_ref(),
        normalized,
        eps,
    )?)
}

// The views call ATen on the tensor itself (not through a `Reg`, which would copy a
// strided tensor to a dense one): a result keeps eager's strides and storage, so a later
// `view` of a transposed tensor raises eager's error.

/// `x.t()` / `x.T` / `x.transpose(0, 1)`.
pub fn transpose(x: &Tensor) -> Result<Tensor> {
    ops::view(ViewKind::Transpose, x, &[], 0)
}

/// `x.transpose(dim, dim + 1)` of a rank-3 tensor (`dim` 0 or 1; [`transpose`] is `dim` 0).
pub fn transpose_dims(x: &Tensor, dim: u8) -> Result<Tensor> {
    ops::view(ViewKind::Transpose, x, &[], dim)
}

/// `x.reshape(sizes)`.
pub fn reshape(x: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    ops::view(ViewKind::Reshape, x, sizes, 0)
}

/// `x.view(sizes)`.
pub fn view(x: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    ops::view(ViewKind::View, x, sizes, 0)
}

/// `x.flatten()`.
pub fn flatten(x: &Tensor) -> Result<Tensor> {
    ops::view(ViewKind::Flatten, x, &[], 0)
}

/// `x.unsqueeze(dim)`.
pub fn unsqueeze(x: &Tensor, dim: u8) -> Result<Tensor> {
    ops::view(ViewKind::Unsqueeze, x, &[], dim)
}

/// `x.squeeze(dim)` (a dim of size 1; any other size raises, see [`ops::view`]).
pub fn squeeze(x: &Tensor, dim: u8) -> Result<Tensor> {
    ops::view(ViewKind::Squeeze, x, &[], dim)
}

/// `x.contiguous()`.
pub fn contiguous(x: &Tensor) -> Result<Tensor> {
    ops::view(ViewKind::Contiguous, x, &[], 0)
}

/// `x.shape[dim]`.
pub fn size(x: &Tensor, dim: u8) -> Result<i64> {
    let shape = x.size();
    match shape.get(usize::from(dim)) {
        Some(n) => Ok(*n),
        None => Err(RuntimeError::Index(format!(
            "tuple index out of range (size {dim} of a rank-{} tensor)",
            shape.len()
        ))),
    }
}

/// `embedding(ids, weight)`: one row of `weight` per id.
pub fn embedding(ids: &Tensor, weight: &Tensor) -> Result<Tensor> {
    tensor(eval::embedding(
        &Reg::of_tensor(ids)?,
        &Reg::of_tensor(weight)?,
    )?)
}

/// `embedding_bag(ids, weight, offsets, mode)`: one pooled row of `weight` per bag.
pub fn embedding_bag(
    ids: &Tensor,
    weight: &Tensor,
    offsets: &Tensor,
    mode: BagMode,
) -> Result<Tensor> {
    tensor(eval::embedding_bag(
        &Reg::of_tensor(ids)?,
        &Reg::of_tensor(weight)?,
        &Reg::of_tensor(offsets)?,
        mode,
    )?)
}

/// The input of a fused op after its `prologue` (`x = x op v`, in order).
fn prepared(x: &Tensor, prologue: &[(BinaryOp, &Tensor)]) -> Result<Reg> {
    let x = Reg::of_tensor(x)?;
    if prologue.is_empty() {
        return Ok(x);
    }
    let steps = prologue
        .iter()
        .map(|(op, v)| Ok((*op, Reg::of_tensor(v)?)))
        .collect::<Result<Vec<_>>>()?;
    eval::apply_prologue(&x, steps.iter().map(|(op, v)| (*op, v)))
}

/// `linear` after `prologue`, then `activations`, then `tail`. `reused` is the executor's
/// rule: the weight is a parameter and the op runs inside a loop (body or `while`
/// condition); the executor then keeps a transposed copy per call, and this transposes on
/// each call instead (same values, same kernel, same bits).
pub fn linear(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    prologue: &[(BinaryOp, &Tensor)],
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
    reused: bool,
) -> Result<Tensor> {
    let (x, w) = (prepared(x, prologue)?, Reg::of_tensor(w)?);
    let b = b.map(Reg::of_tensor).transpose()?;
    let mut cache = TransposedWeights::default();
    let cache = reused.then_some((0, &mut cache));
    tensor(eval::linear(&x, &w, b.as_ref(), activations, tail, cache)?)
}

/// [`linear`] for a bias written `+ b` after the product (`fused_linear ..., bias=added`): a
/// bias that does not fit the product runs the unfused chain, which raises the addition's
/// error or broadcasts, as eager does.
pub fn linear_added_bias(
    x: &Tensor,
    w: &Tensor,
    b: &Tensor,
    prologue: &[(BinaryOp, &Tensor)],
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
    reused: bool,
) -> Result<Tensor> {
    {
        let (xr, wr, br) = (
            prepared(x, prologue)?,
            Reg::of_tensor(w)?,
            Reg::of_tensor(b)?,
        );
        if let Some(y) = eval::added_bias_unfused(&xr, &wr, &br, activations, tail)? {
            return tensor(y);
        }
    }
    linear(x, w, Some(b), prologue, activations, tail, reused)
}

/// `matmul(x, w) + b` after `prologue`, then `activations`, then `tail` (a
/// `fused_matmul`; `w` is `[in, out]`).
pub fn matmul_linear(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    prologue: &[(BinaryOp, &Tensor)],
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
) -> Result<Tensor> {
    let (x, w) = (prepared(x, prologue)?, Reg::of_tensor(w)?);
    let b = b.map(Reg::of_tensor).transpose()?;
    tensor(eval::matmul_linear(&x, &w, b.as_ref(), activations, tail)?)
}

/// A fused op's row normalization of its input (`norm=layer_norm(...)` in the IR): the
/// fused kernels' own for dense operands of fitting sizes, else ATen's `layer_norm` (eager's
/// errors). [`linear`] and the other fused calls then take the result as their input.
pub fn norm_rows(
    x: &Tensor,
    normalized: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    normalization(eval::norm_rows, x, normalized, weight, bias, eps)
}

/// A fused op's residual on its `product` (the result of [`linear`], [`linear_added_bias`]
/// or [`matmul_linear`]): `r + product` where `first`, else `product + r`. Added in place
/// where the sizes and dtypes match (one IEEE addition per element: the bits of either
/// order), else eager's addition in the user's order, which broadcasts or raises.
pub fn residual(product: Tensor, r: &Tensor, first: bool) -> Result<Tensor> {
    if product.size() == r.size() && product.kind() == r.kind() {
        let mut product = product;
        let _ = product.f_add_(r)?;
        return Ok(product);
    }
    let (y, r) = (Reg::of_tensor(&product)?, Reg::of_tensor(r)?);
    tensor(eval::add_residual(y, &r, first)?)
}

/// `x.sum()` (no dim): a rank-0 tensor.
pub fn sum_all(x: &Tensor) -> Result<Tensor> {
    reduce_all(WholeReduceOp::Sum, x)
}

/// `x.mean()` (no dim): a rank-0 tensor.
pub fn mean_all(x: &Tensor) -> Result<Tensor> {
    reduce_all(WholeReduceOp::Mean, x)
}

/// `x.max()` (no dim): a rank-0 tensor.
pub fn max_all(x: &Tensor) -> Result<Tensor> {
    reduce_all(WholeReduceOp::Max, x)
}

/// `x.min()` (no dim): a rank-0 tensor.
pub fn min_all(x: &Tensor) -> Result<Tensor> {
    reduce_all(WholeReduceOp::Min, x)
}

/// `x.amax()` (no dim): a rank-0 tensor.
pub fn amax_all(x: &Tensor) -> Result<Tensor> {
    reduce_all(WholeReduceOp::Amax, x)
}

/// `x.amin()` (no dim): a rank-0 tensor.
pub fn amin_all(x: &Tensor) -> Result<Tensor> {
    reduce_all(WholeReduceOp::Amin, x)
}

fn reduce_all(op: WholeReduceOp, x: &Tensor) -> Result<Tensor> {
    tensor(eval::reduce_all(op, &Reg::of_tensor(x)?)?)
}

/// `t.item()` of a one-element float tensor.
pub fn item(x: &Tensor) -> Result<f64> {
    eval::to_scalar(ToScalarKind::Item, &Reg::of_tensor(x)?)
}

/// `float(t)` of a one-element float tensor.
pub fn float_of(x: &Tensor) -> Result<f64> {
    eval::to_scalar(ToScalarKind::Float, &Reg::of_tensor(x)?)
}

/// `bool(lhs <op> rhs)`: a tensor comparison read as an `if`/`while` condition, `rhs` a
/// tensor or a Python scalar ([`Operand`]).
pub fn truth(op: CompareOp, lhs: &Tensor, rhs: Operand<'_>) -> Result<bool> {
    let lhs = Reg::of_tensor(lhs)?;
    match rhs {
        Operand::Tensor(r) => eval::tensor_truth(op, &lhs, Ok(&Reg::of_tensor(r)?)),
        Operand::Scalar(s) => eval::tensor_truth(op, &lhs, Err(s)),
    }
}
