//! The typing rules: the result type of every op, derived from its operand types.
//!
//! The frontend declares types from claim rules; the validator re-derives them here and
//! compares. The rules admit exactly the types the marker surface can express (rank 1 or 2,
//! float32 rank 3 for the extended surface's batches, and rank 0 from the whole-tensor
//! reductions and for the few ops that read one: invariant 15), so a valid function never
//! needs a type the boundary cannot carry.

use std::fmt;

use crate::expr::{
    BinaryOp, CompareOp, ElementwiseOp, ExprKind, ExtremumOp, FillKind, FusedReduce, FusedTail,
    JoinKind, ParamUnaryOp, ReduceKind, ScalarOp, ScalarUnaryOp, SoftmaxKind, TensorScalarOp,
    ToScalarKind, UnaryOp, ViewKind, WholeReduceOp,
};
use crate::types::{DType, TensorType, Type};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeError(pub String);

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TypeError {}

fn err<T>(msg: impl Into<String>) -> Result<T, TypeError> {
    Err(TypeError(msg.into()))
}

fn float_tensor(what: &str, ty: Type) -> Result<TensorType, TypeError> {
    match ty {
        Type::Tensor(t) if t.dtype == DType::F32 && (1..=3).contains(&t.rank) => Ok(t),
        other => err(format!(
            "{what} must be a float32 rank-1/2/3 tensor, got {other}"
        )),
    }
}

/// A float tensor of any float dtype (float32, float64, bfloat16), for the ops the runtime
/// computes through ATen at every float dtype (the extended surface's dtype lane): the
/// unary ops, `+ - * /` with tensors or scalars, `matmul`, unfused `linear`, the reductions
/// along a dim, `softmax`, `argmax`, `layer_norm`. Every other op and the fused ops take
/// float32 only ([`float_tensor`]): their kernels are float32 ones.
fn any_float_tensor(what: &str, ty: Type) -> Result<TensorType, TypeError> {
    match ty {
        Type::Tensor(t) if t.dtype.is_float() && (1..=3).contains(&t.rank) => Ok(t),
        other => err(format!(
            "{what} must be a float rank-1/2/3 tensor, got {other}"
        )),
    }
}

/// A float tensor of rank 0 to 3 (any float dtype): the operands of the elementwise unary
/// ops, `+ - * /`, the whole-tensor reductions, `item` and the `truth_*` comparisons, the
/// ops that take a rank-0 tensor (invariant 15).
fn float_tensor_or_rank0(what: &str, ty: Type) -> Result<TensorType, TypeError> {
    match ty {
        Type::Tensor(t) if t.dtype.is_float() && t.rank <= 3 => Ok(t),
        other => err(format!(
            "{what} must be a float rank-0/1/2/3 tensor, got {other}"
        )),
    }
}

/// Two tensors of one op have one dtype: a compiled op never promotes (eager would).
fn same_dtype(a: TensorType, b: TensorType, op: &str) -> Result<(), TypeError> {
    if a.dtype == b.dtype {
        Ok(())
    } else {
        err(format!("{op} mixes dtypes {} and {}", a.dtype, b.dtype))
    }
}

fn same_device(a: TensorType, b: TensorType, op: &str) -> Result<(), TypeError> {
    if a.device == b.device {
        Ok(())
    } else {
        err(format!("{op} mixes devices {} and {}", a.device, b.device))
    }
}

fn reduced_rank(input: TensorType, dim: u8, keepdim: bool, op: &str) -> Result<u8, TypeError> {
    if dim >= input.rank {
        return err(format!(
            "{op} dim {dim} is out of range for rank {}",
            input.rank
        ));
    }
    let rank = if keepdim { input.rank } else { input.rank - 1 };
    if rank == 0 {
        return err(format!(
            "{op} over dim {dim} of a rank-1 tensor without keepdim has rank 0"
        ));
    }
    Ok(rank)
}

/// The result type of `kind`, given a lookup for operand types and the parameter types.
///
/// One function per op below holds each rule; this dispatches to them. The optimizer's
/// e-graph calls them too (its analysis of tensor types, `rextio_passes::egraph::Types`), so
/// the rules live here once.
pub fn result_type<V: Copy>(
    kind: &ExprKind<V>,
    operand: impl Fn(V) -> Type,
    params: &[crate::function::Param],
) -> Result<Type, TypeError> {
    match kind {
        ExprKind::Param(index) => match params.get(*index as usize) {
            Some(p) => Ok(p.ty),
            None => err(format!(
                "param {index} does not exist ({} params)",
                params.len()
            )),
        },
        ExprKind::ConstInt(_) => Ok(Type::Int),
        ExprKind::ConstBool(_) => Ok(Type::Bool),
        ExprKind::ConstFloat(_) => Ok(Type::Float),
        ExprKind::Bound => err("a bound value is typed by the statement that binds it"),
        ExprKind::Scalar { op, lhs, rhs } => scalar(*op, operand(*lhs), operand(*rhs)),
        ExprKind::ScalarUnary { op, input } => scalar_unary(*op, operand(*input)),
        ExprKind::Unary { op, input } => unary(*op, operand(*input)),
        ExprKind::Binary { op, lhs, rhs } => binary(*op, operand(*lhs), operand(*rhs)),
        ExprKind::TensorScalar { op, tensor, scalar } => {
            tensor_scalar(*op, operand(*tensor), operand(*scalar))
        }
        ExprKind::ParamUnary {
            op,
            input,
            first,
            second,
        } => param_unary(*op, operand(*input), operand(*first), second.map(&operand)),
        ExprKind::Linear {
            input,
            weight,
            bias,
        } => linear(operand(*input), operand(*weight), bias.map(&operand)),
        ExprKind::Matmul { lhs, rhs } => matmul(operand(*lhs), operand(*rhs)),
        ExprKind::Bmm { lhs, rhs } => bmm(operand(*lhs), operand(*rhs)),
        ExprKind::FusedAttention { q, k, v, scale } => fused_attention(
            operand(*q),
            operand(*k),
            operand(*v),
            scale.map(|s| (s.op, operand(s.value))),
        ),
        ExprKind::Reduce {
            kind,
            input,
            dim,
            keepdim,
        } => reduce(*kind, operand(*input), *dim, *keepdim),
        ExprKind::Softmax { kind, input, dim } => softmax(*kind, operand(*input), *dim),
        ExprKind::Argmax {
            input,
            dim,
            keepdim,
        } => argmax(operand(*input), *dim, *keepdim),
        ExprKind::LayerNorm {
            input,
            normalized,
            weight,
            bias,
            ..
        } => layer_norm(
            operand(*input),
            operand(*normalized),
            weight.map(&operand),
            bias.map(&operand),
        ),
        ExprKind::Embedding { ids, weight } => embedding(operand(*ids), operand(*weight)),
        ExprKind::Join { kind, parts, dim } => join(*kind, parts.iter().map(|p| operand(*p)), *dim),
        ExprKind::BoundaryCall { callee, args, ret } => {
            boundary_call(callee, args.iter().map(|a| operand(*a)), *ret)
        }
        ExprKind::View {
            kind,
            input,
            sizes,
            dim,
        } => view(
            *kind,
            operand(*input),
            sizes.iter().map(|s| operand(*s)),
            *dim,
        ),
        ExprKind::Size { input, dim } => size(operand(*input), *dim),
        ExprKind::ReduceAll { op, input } => reduce_all(*op, operand(*input)),
        ExprKind::ToScalar { kind, input } => to_scalar(*kind, operand(*input)),
        ExprKind::TensorTruth { op, lhs, rhs } => tensor_truth(*op, operand(*lhs), operand(*rhs)),
        ExprKind::Extremum {
            op,
            input,
            dim,
            keepdim,
        } => extremum(*op, operand(*input), *dim, *keepdim),
        ExprKind::FillLike { kind, input, value } => {
            fill_like(*kind, operand(*input), value.map(&operand))
        }
        ExprKind::IndexSelect { input, ids, dim } => {
            index_select(operand(*input), operand(*ids), *dim)
        }
        ExprKind::Normalize { input, dim, .. } => normalize(operand(*input), *dim),
        ExprKind::Elementwise { op, operands } => {
            elementwise(*op, operands.iter().map(|o| operand(*o)))
        }
        ExprKind::EmbeddingBag {
            ids,
            weight,
            offsets,
            ..
        } => embedding_bag(operand(*ids), operand(*weight), operand(*offsets)),
        ExprKind::FusedLinear {
            input,
            weight,
            bias,
            prologue,
            tail,
            residual,
            norm,
            ..
        } => fused_linear(
            norm.map_or(Ok(operand(*input)), |n| {
                layer_norm(
                    operand(*input),
                    operand(n.normalized),
                    n.weight.map(&operand),
                    n.bias.map(&operand),
                )
            })?,
            operand(*weight),
            bias.map(&operand),
            prologue.iter().map(|step| operand(step.operand)),
            *tail,
            residual.map(|r| operand(r.operand)),
        ),
    }
}

/// An elementwise op with one input keeps its input's type.
pub fn unary(op: UnaryOp, input: Type) -> Result<Type, TypeError> {
    let t = float_tensor_or_rank0(&format!("{op} input"), input)?;
    Ok(Type::Tensor(t))
}

/// `torch.bmm(lhs, rhs)` of two rank-3 float tensors of one dtype and device.
pub fn bmm(lhs: Type, rhs: Type) -> Result<Type, TypeError> {
    let l = any_float_tensor("bmm lhs", lhs)?;
    let r = any_float_tensor("bmm rhs", rhs)?;
    same_device(l, r, "bmm")?;
    same_dtype(l, r, "bmm")?;
    if (l.rank, r.rank) != (3, 3) {
        return err(format!(
            "bmm takes two rank-3 tensors, got rank {} and rank {}",
            l.rank, r.rank
        ));
    }
    Ok(Type::Tensor(l))
}

/// A fused attention: three float32 rank-3 tensors on one device, the scores scaled by `/` or
/// `*` with an `int`/`float`; the result has `q`'s type.
pub fn fused_attention(
    q: Type,
    k: Type,
    v: Type,
    scale: Option<(TensorScalarOp, Type)>,
) -> Result<Type, TypeError> {
    let q = float_tensor("attention q", q)?;
    for (what, ty) in [("k", k), ("v", v)] {
        let t = float_tensor(&format!("attention {what}"), ty)?;
        if t.rank != 3 {
            return err(format!(
                "attention {what} must be rank 3, got rank {}",
                t.rank
            ));
        }
        same_device(q, t, "attention")?;
    }
    if q.rank != 3 {
        return err(format!("attention q must be rank 3, got rank {}", q.rank));
    }
    match scale {
        None => {}
        Some((TensorScalarOp::Div | TensorScalarOp::Mul, Type::Int | Type::Float)) => {}
        Some((op, ty)) => {
            return err(format!(
            "an attention's scores are scaled by div or mul with an int or float, got {} with {ty}",
            op.name()
        ))
        }
    }
    Ok(Type::Tensor(q))
}

/// `lhs @ rhs` of two float tensors, at least one of them a matrix.
pub fn matmul(lhs: Type, rhs: Type) -> Result<Type, TypeError> {
    let l = any_float_tensor("matmul lhs", lhs)?;
    let r = any_float_tensor("matmul rhs", rhs)?;
    same_device(l, r, "matmul")?;
    same_dtype(l, r, "matmul")?;
    match (l.rank, r.rank) {
        (2, 2) => Ok(Type::Tensor(l)),
        (2, 1) | (1, 2) => Ok(Type::Tensor(l.with_rank(1))),
        // Batched (rank 3 with rank 3) and broadcast (a batch with a matrix, either side)
        // products: a batch of matrices.
        (3, 3) | (3, 2) | (2, 3) => Ok(Type::Tensor(l.with_rank(3))),
        (1, 1) => err("matmul of two rank-1 tensors has rank 0"),
        (a, b) => err(format!(
            "matmul of rank-{a} and rank-{b} tensors is not in the IR (rank 3 takes rank 3 or 2)"
        )),
    }
}

/// `mean`/`sum`/`amax`/`amin` over `dim`: one rank less without `keepdim`, never rank 0.
pub fn reduce(kind: ReduceKind, input: Type, dim: u8, keepdim: bool) -> Result<Type, TypeError> {
    let t = any_float_tensor(&format!("{kind} input"), input)?;
    Ok(Type::Tensor(t.with_rank(reduced_rank(
        t,
        dim,
        keepdim,
        kind.name(),
    )?)))
}

/// `softmax` / `log_softmax` over an existing `dim` keeps its input's type.
pub fn softmax(kind: SoftmaxKind, input: Type, dim: u8) -> Result<Type, TypeError> {
    let t = any_float_tensor(&format!("{kind} input"), input)?;
    if dim >= t.rank {
        return err(format!(
            "{kind} dim {dim} is out of range for rank {}",
            t.rank
        ));
    }
    Ok(Type::Tensor(t))
}

/// `argmax` over `dim`: int64 indices, ranked as a reduction.
pub fn argmax(input: Type, dim: u8, keepdim: bool) -> Result<Type, TypeError> {
    let t = any_float_tensor("argmax input", input)?;
    let rank = reduced_rank(t, dim, keepdim, "argmax")?;
    Ok(Type::Tensor(t.with_rank(rank).with_dtype(DType::I64)))
}

/// `max(dim)` / `min(dim)`'s values (float32) or indices (int64) (invariant 14), ranked as
/// a reduction.
pub fn extremum(op: ExtremumOp, input: Type, dim: u8, keepdim: bool) -> Result<Type, TypeError> {
    let t = float_tensor(&format!("{op} input"), input)?;
    let rank = reduced_rank(t, dim, keepdim, op.name())?;
    let t = t.with_rank(rank);
    Ok(Type::Tensor(if op.is_indices() {
        t.with_dtype(DType::I64)
    } else {
        t
    }))
}

/// `zeros_like` / `ones_like` / `full_like` of a float32 tensor keep its type (invariant
/// 13); `full_like` reads one `int`/`float` value, the others none.
pub fn fill_like(kind: FillKind, input: Type, value: Option<Type>) -> Result<Type, TypeError> {
    let t = float_tensor(&format!("{kind} input"), input)?;
    match (kind.takes_value(), value) {
        (true, Some(Type::Int | Type::Float)) | (false, None) => Ok(Type::Tensor(t)),
        (true, Some(other)) => err(format!("{kind} value must be an int or float, got {other}")),
        (true, None) => err(format!("{kind} needs a value")),
        (false, Some(_)) => err(format!("{kind} takes no value")),
    }
}

/// `index_select` of a float32 rank-1/2 tensor along an existing dim at int64 rank-1 ids on
/// its device keeps the tensor's type (invariant 14).
pub fn index_select(input: Type, ids: Type, dim: u8) -> Result<Type, TypeError> {
    let t = float_tensor("index_select input", input)?;
    let i = match ids {
        Type::Tensor(i) if i.dtype == DType::I64 && i.rank == 1 => i,
        other => {
            return err(format!(
                "index_select ids must be an int64 rank-1 tensor, got {other}"
            ))
        }
    };
    same_device(t, i, "index_select")?;
    if dim >= t.rank {
        return err(format!(
            "index_select dim {dim} is out of range for rank {}",
            t.rank
        ));
    }
    Ok(Type::Tensor(t))
}

/// `normalize` of a float32 rank-1/2 tensor over an existing dim keeps its type (invariant
/// 13).
pub fn normalize(input: Type, dim: u8) -> Result<Type, TypeError> {
    let t = float_tensor("normalize input", input)?;
    if dim >= t.rank {
        return err(format!(
            "normalize dim {dim} is out of range for rank {}",
            t.rank
        ));
    }
    Ok(Type::Tensor(t))
}

/// `layer_norm` over the last dim keeps its input's type; the normalized size is an `int`;
/// `weight` and `bias` are rank-1 float tensors on its device, both present or both absent.
pub fn layer_norm(
    input: Type,
    normalized: Type,
    weight: Option<Type>,
    bias: Option<Type>,
) -> Result<Type, TypeError> {
    let t = any_float_tensor("layer_norm input", input)?;
    if normalized != Type::Int {
        return err(format!(
            "layer_norm's normalized size must be an int, got {normalized}"
        ));
    }
    match (weight, bias) {
        (None, None) => {}
        (Some(weight), Some(bias)) => {
            for (what, ty) in [("weight", weight), ("bias", bias)] {
                let v = any_float_tensor(&format!("layer_norm {what}"), ty)?;
                if v.rank != 1 {
                    return err(format!(
                        "layer_norm {what} must be rank 1, got rank {}",
                        v.rank
                    ));
                }
                same_device(t, v, "layer_norm")?;
                same_dtype(t, v, "layer_norm")?;
            }
        }
        _ => return err("layer_norm takes weight and bias together, or neither"),
    }
    Ok(Type::Tensor(t))
}

/// `embedding(ids, weight)`: int64 rank-1 ids into a float32 rank-2 table on the same device
/// give a float32 rank-2 tensor (one row per id).
pub fn embedding(ids: Type, weight: Type) -> Result<Type, TypeError> {
    let i = match ids {
        Type::Tensor(t) if t.dtype == DType::I64 && t.rank == 1 => t,
        other => {
            return err(format!(
                "embedding ids must be an int64 rank-1 tensor, got {other}"
            ))
        }
    };
    let w = match weight {
        Type::Tensor(t) if t.dtype == DType::F32 && t.rank == 2 => t,
        other => {
            return err(format!(
                "embedding weight must be a float32 rank-2 tensor, got {other}"
            ))
        }
    };
    same_device(i, w, "embedding")?;
    Ok(Type::Tensor(w))
}

/// `cat` / `stack` of one or more float32 tensors of one rank and device (invariant 10):
/// `cat` along an existing dim keeps the parts' type; `stack` adds a dim at `dim` (at most
/// the parts' rank), so only rank-1 parts have a rank-2 result.
pub fn join(
    kind: JoinKind,
    parts: impl IntoIterator<Item = Type>,
    dim: u8,
) -> Result<Type, TypeError> {
    let mut first: Option<TensorType> = None;
    for (i, part) in parts.into_iter().enumerate() {
        let t = match part {
            Type::Tensor(t) if t.dtype == DType::F32 && t.rank <= 3 => t,
            other => {
                return err(format!(
                    "{kind} part {i} must be a float32 rank-0/1/2/3 tensor, got {other}"
                ))
            }
        };
        match first {
            None => first = Some(t),
            Some(f) => {
                same_device(f, t, &kind.to_string())?;
                if t.rank != f.rank {
                    return err(format!(
                        "{kind} mixes ranks: part 0 is rank {}, part {i} is rank {}",
                        f.rank, t.rank
                    ));
                }
            }
        }
    }
    let Some(t) = first else {
        return err(format!("{kind} of no tensors (it needs at least one part)"));
    };
    match kind {
        JoinKind::Cat if dim < t.rank => Ok(Type::Tensor(t)),
        JoinKind::Cat => err(format!("cat dim {dim} is out of range for rank {}", t.rank)),
        JoinKind::Stack if dim > t.rank => err(format!(
            "stack dim {dim} is out of range for rank-{} parts (at most {})",
            t.rank, t.rank
        )),
        JoinKind::Stack if t.rank >= 3 => err(format!(
            "stack of rank-{} parts has rank {}; the IR has ranks 0 to 3",
            t.rank,
            t.rank + 1
        )),
        JoinKind::Stack => Ok(Type::Tensor(t.with_rank(t.rank + 1))),
    }
}

/// `embedding_bag(ids, weight, offsets)`: int64 rank-1 ids and offsets into a float32
/// rank-2 table on one device give a float32 rank-2 tensor (one row per bag).
/// A view of a rank-1/2 tensor (invariant 11): its dtype and device are kept; `transpose`
/// keeps the rank, `reshape`/`view` has one dim per `sizes` operand (each an `int`, one or
/// two of them), `flatten` has rank 1, `unsqueeze` one more (`dim` at most the input's rank,
/// a result of at most rank 2), `squeeze` one less (`dim` below the input's rank, a
/// result of at least rank 1) and `contiguous` keeps the rank.
pub fn view(
    kind: ViewKind,
    input: Type,
    sizes: impl IntoIterator<Item = Type>,
    dim: u8,
) -> Result<Type, TypeError> {
    let t = match input {
        Type::Tensor(t) if (1..=3).contains(&t.rank) => t,
        other => {
            return err(format!(
                "{kind} input must be a rank-1/2/3 tensor, got {other}"
            ))
        }
    };
    let sizes: Vec<Type> = sizes.into_iter().collect();
    if !kind.takes_sizes() && !sizes.is_empty() {
        return err(format!("{kind} takes no sizes, found {}", sizes.len()));
    }
    if let Some((i, other)) = sizes.iter().enumerate().find(|(_, s)| **s != Type::Int) {
        return err(format!("{kind} size {i} must be an int, got {other}"));
    }
    if !kind.takes_dim() && kind != ViewKind::Transpose && dim != 0 {
        return err(format!("{kind} takes no dim, found dim={dim}"));
    }
    let rank = match kind {
        // `dim` is the first of the two adjacent dims swapped (`dim`, `dim + 1`): 0 below
        // rank 3, 0 or 1 at rank 3.
        ViewKind::Transpose if t.rank < 3 && dim != 0 => {
            return err(format!(
                "transpose dim {dim} of a rank-{} tensor (only 0 below rank 3)",
                t.rank
            ))
        }
        ViewKind::Transpose if dim > 1 => {
            return err(format!(
                "transpose dim {dim} of a rank-3 tensor (swaps dim and dim + 1: 0 or 1)"
            ))
        }
        ViewKind::Transpose | ViewKind::Contiguous => t.rank,
        ViewKind::Reshape | ViewKind::View => match sizes.len() {
            n @ 1..=3 => n as u8,
            n => return err(format!("{kind} to {n} sizes; the IR has ranks 1, 2 and 3")),
        },
        ViewKind::Flatten => 1,
        ViewKind::Unsqueeze if dim > t.rank => {
            return err(format!(
                "unsqueeze dim {dim} is out of range for rank {} (at most {})",
                t.rank, t.rank
            ))
        }
        ViewKind::Unsqueeze if t.rank >= 2 => {
            return err(format!(
                "unsqueeze of a rank-{} tensor has rank {}; the IR has ranks 1 and 2",
                t.rank,
                t.rank + 1
            ))
        }
        ViewKind::Unsqueeze => t.rank + 1,
        ViewKind::Squeeze if dim >= t.rank => {
            return err(format!(
                "squeeze dim {dim} is out of range for rank {}",
                t.rank
            ))
        }
        ViewKind::Squeeze if t.rank <= 1 => {
            return err("squeeze of a rank-1 tensor has rank 0; the IR has ranks 1 and 2")
        }
        ViewKind::Squeeze => t.rank - 1,
    };
    Ok(Type::Tensor(t.with_rank(rank)))
}

/// `x.shape[dim]`: an `int`, `dim` below the tensor's rank (invariant 11).
/// A scalar boundary call (invariant 13): a Python identifier (dots allowed for a
/// qualified spelling), zero or more `int`/`float`/`bool` arguments, and a declared
/// `int`/`float`/`bool` result, which is its type.
pub fn boundary_call(
    callee: &str,
    args: impl IntoIterator<Item = Type>,
    ret: Type,
) -> Result<Type, TypeError> {
    let scalar = |t: Type| matches!(t, Type::Int | Type::Float | Type::Bool);
    let identifier = callee.split('.').all(|part| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_alphanumeric() || c == '_')
    });
    if !identifier {
        return err(format!(
            "boundary_call callee `{callee}` is not a Python name"
        ));
    }
    for (i, arg) in args.into_iter().enumerate() {
        if !scalar(arg) {
            return err(format!(
                "boundary_call {callee} argument {i} must be int, float or bool, got {arg}"
            ));
        }
    }
    if !scalar(ret) {
        return err(format!(
            "boundary_call {callee} must return int, float or bool, got {ret}"
        ));
    }
    Ok(ret)
}

pub fn size(input: Type, dim: u8) -> Result<Type, TypeError> {
    match input {
        Type::Tensor(t) if dim < t.rank => Ok(Type::Int),
        Type::Tensor(t) => err(format!(
            "size dim {dim} is out of range for rank {}",
            t.rank
        )),
        other => err(format!("size input must be a tensor, got {other}")),
    }
}

pub fn embedding_bag(ids: Type, weight: Type, offsets: Type) -> Result<Type, TypeError> {
    let mut int_vectors = Vec::new();
    for (what, ty) in [("ids", ids), ("offsets", offsets)] {
        match ty {
            Type::Tensor(t) if t.dtype == DType::I64 && t.rank == 1 => int_vectors.push(t),
            other => {
                return err(format!(
                    "embedding_bag {what} must be an int64 rank-1 tensor, got {other}"
                ))
            }
        }
    }
    let w = match weight {
        Type::Tensor(t) if t.dtype == DType::F32 && t.rank == 2 => t,
        other => {
            return err(format!(
                "embedding_bag weight must be a float32 rank-2 tensor, got {other}"
            ))
        }
    };
    for t in int_vectors {
        same_device(t, w, "embedding_bag")?;
    }
    Ok(Type::Tensor(w))
}

/// A fused op: its `linear`'s type (the `[in, out]` layout is typed alike), with rank-1
/// prologue operands on the input's device, then its tail's; a residual is a float32 matrix
/// on the input's device and leaves the type as it is (it excludes a tail).
pub fn fused_linear(
    input: Type,
    weight: Type,
    bias: Option<Type>,
    prologue: impl IntoIterator<Item = Type>,
    tail: Option<FusedTail>,
    residual: Option<Type>,
) -> Result<Type, TypeError> {
    // The fused kernels are float32 ones: a fused op of another dtype is ill-typed, so no
    // pass may build one (the fusion rules also ask for float32 operands).
    let t = linear_tensor(input, weight, bias, float_tensor)?;
    if t.rank != 2 {
        return err(format!(
            "a fused linear takes a rank-2 input, got rank {}",
            t.rank
        ));
    }
    for operand in prologue {
        let v = float_tensor("prologue operand", operand)?;
        if v.rank != 1 {
            return err(format!(
                "a prologue operand must be rank 1 (broadcast over rows), got rank {}",
                v.rank
            ));
        }
        same_device(t, v, "fused prologue")?;
    }
    if let Some(residual) = residual {
        let r = float_tensor("residual", residual)?;
        if r.rank != 2 {
            return err(format!(
                "a fused residual must be rank 2 (the product's rank), got rank {}",
                r.rank
            ));
        }
        same_device(t, r, "fused residual")?;
        if let Some(tail) = tail {
            return err(format!(
                "a fused op with a residual has no tail, got `{}`",
                tail.name()
            ));
        }
    }
    match tail {
        None | Some(FusedTail::Softmax { .. }) => Ok(Type::Tensor(t)),
        Some(FusedTail::Reduce(FusedReduce { kind, dim, keepdim })) => Ok(Type::Tensor(
            t.with_rank(reduced_rank(t, dim, keepdim, kind.name())?),
        )),
        Some(FusedTail::Argmax { dim, keepdim }) => Ok(Type::Tensor(
            t.with_rank(reduced_rank(t, dim, keepdim, "argmax")?)
                .with_dtype(DType::I64),
        )),
    }
}

/// Python's numeric tower for `int`, `bool` and `float`: a bool operand counts as an int, a
/// float operand makes the result a float, `/` is always float, comparisons give a bool.
pub fn scalar(op: ScalarOp, lhs: Type, rhs: Type) -> Result<Type, TypeError> {
    if !lhs.is_scalar() || !rhs.is_scalar() {
        return err(format!(
            "{} takes int, bool or float operands, got {lhs} and {rhs}",
            op.symbol()
        ));
    }
    Ok(if op.is_comparison() {
        Type::Bool
    } else if op == ScalarOp::TrueDiv || lhs == Type::Float || rhs == Type::Float {
        Type::Float
    } else {
        Type::Int
    })
}

/// `-x`, `not x`, `bool(x)` and the `math` functions of a Python scalar.
pub fn scalar_unary(op: ScalarUnaryOp, input: Type) -> Result<Type, TypeError> {
    if !input.is_scalar() {
        return err(format!(
            "{} takes an int, bool or float, got {input}",
            op.name()
        ));
    }
    Ok(match op {
        ScalarUnaryOp::Neg if input == Type::Float => Type::Float,
        ScalarUnaryOp::Neg => Type::Int,
        ScalarUnaryOp::Not | ScalarUnaryOp::Truth => Type::Bool,
        ScalarUnaryOp::Floor | ScalarUnaryOp::Ceil => Type::Int,
        ScalarUnaryOp::Sqrt
        | ScalarUnaryOp::Exp
        | ScalarUnaryOp::Log
        | ScalarUnaryOp::Tanh
        | ScalarUnaryOp::Fabs => Type::Float,
    })
}

/// An elementwise op with two inputs: the larger rank (the other broadcast over it).
pub fn binary(op: BinaryOp, lhs: Type, rhs: Type) -> Result<Type, TypeError> {
    let l = float_tensor_or_rank0(&format!("{op} lhs"), lhs)?;
    let r = float_tensor_or_rank0(&format!("{op} rhs"), rhs)?;
    same_device(l, r, op.name())?;
    same_dtype(l, r, op.name())?;
    Ok(Type::Tensor(l.with_rank(l.rank.max(r.rank))))
}

/// An elementwise op's operands (invariant 12): [`ElementwiseOp::arity`] of them, each a
/// float32 rank-1/2 tensor or, where the op takes one ([`ElementwiseOp::takes_scalar`]), a
/// Python `int`/`float`; the tensors on one device; a `where` compares at least one tensor
/// and selects at least one tensor or float (two ints would give eager an int64 result). The
/// result is float32 of the largest rank among the tensors (they broadcast).
pub fn elementwise(
    op: ElementwiseOp,
    operands: impl IntoIterator<Item = Type>,
) -> Result<Type, TypeError> {
    let operands: Vec<Type> = operands.into_iter().collect();
    if operands.len() != op.arity() {
        return err(format!(
            "{op} takes {} operands, got {}",
            op.arity(),
            operands.len()
        ));
    }
    let mut result: Option<TensorType> = None;
    for (i, ty) in operands.iter().enumerate() {
        match ty {
            Type::Int | Type::Float if op.takes_scalar(i) => {}
            other => {
                let t = float_tensor(&format!("{op} operand {i}"), *other)?;
                result = Some(match result {
                    None => t,
                    Some(r) => {
                        same_device(r, t, op.name())?;
                        r.with_rank(r.rank.max(t.rank))
                    }
                });
            }
        }
    }
    if let ElementwiseOp::Where(_) = op {
        if !operands[..2].iter().any(|t| matches!(t, Type::Tensor(_))) {
            return err(format!("{op} compares no tensor"));
        }
        if operands[2..].iter().all(|t| *t == Type::Int) {
            return err(format!("{op} selects between two ints (an int64 result)"));
        }
    }
    match result {
        Some(t) => Ok(Type::Tensor(t)),
        None => err(format!("{op} has no tensor operand")),
    }
}

/// A float tensor with a Python `int` or `float` (never a `bool`): the tensor's type (a
/// Python scalar never changes a float tensor's dtype).
pub fn tensor_scalar(op: TensorScalarOp, tensor: Type, scalar: Type) -> Result<Type, TypeError> {
    let t = float_tensor_or_rank0(&format!("{op} tensor"), tensor)?;
    match scalar {
        Type::Int | Type::Float => Ok(Type::Tensor(t)),
        other => err(format!("{op} takes an int or float scalar, got {other}")),
    }
}

/// A float tensor with [`ParamUnaryOp::arity`] Python `int`/`float` parameters (never a
/// `bool`): the tensor's type.
pub fn param_unary(
    op: ParamUnaryOp,
    input: Type,
    first: Type,
    second: Option<Type>,
) -> Result<Type, TypeError> {
    let t = float_tensor(&format!("{op} input"), input)?;
    let given = 1 + usize::from(second.is_some());
    if given != op.arity() {
        return err(format!(
            "{op} takes {} scalar parameter(s), got {given}",
            op.arity()
        ));
    }
    for param in std::iter::once(first).chain(second) {
        if !matches!(param, Type::Int | Type::Float) {
            return err(format!("{op} takes int or float parameters, got {param}"));
        }
    }
    Ok(Type::Tensor(t))
}

/// `linear(input, weight, bias)`: matrices in, the input's type out, a rank-1 bias; any
/// float dtype, one for all three.
pub fn linear(input: Type, weight: Type, bias: Option<Type>) -> Result<Type, TypeError> {
    linear_tensor(input, weight, bias, any_float_tensor).map(Type::Tensor)
}

/// `linear`'s rule with `float` saying which tensors it takes (a fused op: float32 only).
fn linear_tensor(
    input: Type,
    weight: Type,
    bias: Option<Type>,
    float: fn(&str, Type) -> Result<TensorType, TypeError>,
) -> Result<TensorType, TypeError> {
    let x = float("linear input", input)?;
    let w = float("linear weight", weight)?;
    // A rank-3 input (a batch of rows, the extended surface) is ATen's linear over its last
    // dim; the fused ops take matrices only (`fused_linear` checks that itself).
    if !(2..=3).contains(&x.rank) || w.rank != 2 {
        return err(format!(
            "linear needs rank-2 input and weight, got ranks {} and {}",
            x.rank, w.rank
        ));
    }
    same_device(x, w, "linear")?;
    same_dtype(x, w, "linear")?;
    if let Some(bias) = bias {
        let b = float("linear bias", bias)?;
        if b.rank != 1 {
            return err(format!("linear bias must be rank 1, got rank {}", b.rank));
        }
        same_device(x, b, "linear")?;
        same_dtype(x, b, "linear")?;
    }
    Ok(x)
}

pub use crate::expr::fusable_reduce;

/// A whole-tensor reduction (`x.sum()`, invariant 15): a float tensor of rank 0-3 to a
/// rank-0 tensor of its dtype and device.
pub fn reduce_all(op: WholeReduceOp, input: Type) -> Result<Type, TypeError> {
    let t = float_tensor_or_rank0(&format!("{op} input"), input)?;
    Ok(Type::Tensor(t.with_rank(0)))
}

/// `t.item()` / `float(t)` of a float tensor (one element, checked at run time): a `float`.
pub fn to_scalar(kind: ToScalarKind, input: Type) -> Result<Type, TypeError> {
    float_tensor_or_rank0(&format!("{kind} input"), input)?;
    Ok(Type::Float)
}

/// A comparison read as a condition (invariant 15): a float tensor with a float tensor of its
/// dtype and device or with an `int`/`float`, a `bool`.
pub fn tensor_truth(op: CompareOp, lhs: Type, rhs: Type) -> Result<Type, TypeError> {
    let what = op.truth_name();
    let l = float_tensor_or_rank0(&format!("{what} lhs"), lhs)?;
    match rhs {
        Type::Int | Type::Float => {}
        other => {
            let r = float_tensor_or_rank0(&format!("{what} rhs"), other)?;
            same_device(l, r, what)?;
            same_dtype(l, r, what)?;
        }
    }
    Ok(Type::Bool)
}
