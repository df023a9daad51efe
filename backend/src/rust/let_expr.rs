//! One `let` per IR expression: the runtime call that computes each op, with its operands
//! borrowed or moved as the body's ownership frames allow. Split from `rust.rs` (the
//! function, body and statement emission), whose `Body` it extends.

use rextio_ir::{ElementwiseOp, ExprId, ExprKind, FusedTail, Type, ViewKind, WeightLayout};

use super::{
    binary_expr, fused_tail_expr, invalid, optional, raw, reduce_kind_expr, rust_type,
    scalar_getter, unary_expr, Body,
};
use crate::EmitError;

impl Body<'_> {
    pub(super) fn let_(&mut self, id: ExprId, depth: usize) -> Result<(), EmitError> {
        let f = self.f;
        let index = raw(id);
        let Some(expr) = f.expr(id) else {
            return Err(self.err(format!("a `let` places %{index}, which does not exist")));
        };
        // The op with each operand as the Rust expression that refers to it.
        let kind = expr.kind.try_map(|operand| self.reference(operand))?;
        let reused = self.reused.contains(id);
        let value = match kind {
            ExprKind::Param(p) => {
                let Some(param) = self.params.get(p as usize) else {
                    return Err(invalid(
                        &f.name,
                        format!("%{index} reads parameter {p}, which does not exist"),
                    ));
                };
                let param = param.clone();
                if let Some(slot) = self.refs.get_mut(index) {
                    *slot = Some(param);
                }
                return Ok(());
            }
            ExprKind::Bound => {
                return Err(invalid(
                    &f.name,
                    format!("%{index} is bound by a statement; no `let` evaluates it"),
                ))
            }
            // Generated code has no way back into the compiled function's module (its
            // globals) yet: the executor (`rextio_torch.compile`) runs these, and every
            // emitted route (AOT, `emit`, standalone crates) refuses them by name.
            ExprKind::BoundaryCall { callee, .. } => {
                return Err(invalid(
                    &f.name,
                    format!(
                        "it calls `{callee}` back in Python (a scalar boundary call, RXT075), \
                         which generated Rust does not make yet; compile it with \
                         rextio_torch.compile (jit), which runs it"
                    ),
                ))
            }
            ExprKind::ConstInt(v) => format!("{v}i64"),
            ExprKind::ConstBool(v) => format!("{v}"),
            ExprKind::ConstFloat(v) => format!("f64::from_bits({:#x})", v.0),
            ExprKind::Scalar { op, lhs, rhs } => {
                self.uses.scalar = true;
                self.uses.scalar_op = true;
                format!(
                    "scalar::binary(ScalarOp::{op:?}, {lhs}.into(), {rhs}.into())?.{}()?",
                    scalar_getter(expr.ty)
                )
            }
            ExprKind::ScalarUnary { op, input } => {
                self.uses.scalar = true;
                self.uses.scalar_unary = true;
                format!(
                    "scalar::unary(ScalarUnaryOp::{op:?}, {input}.into())?.{}()?",
                    scalar_getter(expr.ty)
                )
            }
            ExprKind::Unary { op, input } => {
                self.uses.ops = true;
                self.uses.unary = true;
                format!("exec::unary({}, {input})?", unary_expr(op))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.uses.ops = true;
                self.uses.binary = true;
                format!("exec::binary({}, {lhs}, {rhs})?", binary_expr(op))
            }
            ExprKind::TensorScalar { op, tensor, scalar } => {
                self.uses.ops = true;
                self.uses.tensor_scalar = true;
                format!("exec::tensor_scalar(TensorScalarOp::{op:?}, {tensor}, {scalar}.into())?")
            }
            ExprKind::ParamUnary {
                op,
                input,
                first,
                second,
            } => {
                self.uses.ops = true;
                self.uses.param_unary = true;
                let second = optional(second.map(|s| format!("{s}.into()")));
                format!(
                    "exec::param_unary(ParamUnaryOp::{op:?}, {input}, {first}.into(), {second})?"
                )
            }
            ExprKind::Linear {
                input,
                weight,
                bias,
            } => {
                self.uses.ops = true;
                format!(
                    "exec::linear({input}, {weight}, {}, &[], &[], None, {reused})?",
                    optional(bias)
                )
            }
            ExprKind::Matmul { lhs, rhs } => {
                self.uses.ops = true;
                format!("exec::matmul({lhs}, {rhs})?")
            }
            ExprKind::Bmm { lhs, rhs } => {
                self.uses.ops = true;
                format!("exec::bmm({lhs}, {rhs})?")
            }
            ExprKind::FusedAttention { q, k, v, scale } => {
                self.uses.ops = true;
                let scale = match scale {
                    Some(s) => {
                        self.uses.tensor_scalar = true;
                        format!("Some((TensorScalarOp::{:?}, {}.into()))", s.op, s.value)
                    }
                    None => "None".to_string(),
                };
                format!("exec::attention({q}, {k}, {v}, {scale})?")
            }
            ExprKind::Reduce {
                kind,
                input,
                dim,
                keepdim,
            } => {
                self.uses.ops = true;
                self.uses.reduce = true;
                format!(
                    "exec::reduce({}, {input}, {dim}, {keepdim})?",
                    reduce_kind_expr(kind)
                )
            }
            ExprKind::Softmax { kind, input, dim } => {
                self.uses.ops = true;
                format!("exec::{kind}({input}, {dim})?")
            }
            ExprKind::Argmax {
                input,
                dim,
                keepdim,
            } => {
                self.uses.ops = true;
                format!("exec::argmax({input}, {dim}, {keepdim})?")
            }
            ExprKind::LayerNorm {
                input,
                normalized,
                weight,
                bias,
                eps,
            } => {
                self.uses.ops = true;
                format!(
                    "exec::layer_norm({input}, {normalized}, {}, {}, f64::from_bits({:#x}))?",
                    optional(weight),
                    optional(bias),
                    eps.0
                )
            }
            ExprKind::Embedding { ids, weight } => {
                self.uses.ops = true;
                format!("exec::embedding({ids}, {weight})?")
            }
            ExprKind::Extremum {
                op,
                input,
                dim,
                keepdim,
            } => {
                self.uses.ops = true;
                format!("exec::{op}({input}, {dim}, {keepdim})?")
            }
            ExprKind::FillLike { kind, input, value } => {
                self.uses.ops = true;
                match value {
                    Some(value) => format!("exec::{kind}({input}, {value}.into())?"),
                    None => format!("exec::{kind}({input})?"),
                }
            }
            ExprKind::IndexSelect { input, ids, dim } => {
                self.uses.ops = true;
                format!("exec::index_select({input}, {ids}, {dim})?")
            }
            ExprKind::Normalize { input, p, dim, eps } => {
                self.uses.ops = true;
                format!(
                    "exec::normalize({input}, f64::from_bits({:#x}), {dim}, f64::from_bits({:#x}))?",
                    p.0, eps.0
                )
            }
            ExprKind::View {
                kind,
                input,
                sizes,
                dim,
            } => {
                self.uses.ops = true;
                if kind == ViewKind::Transpose && dim != 0 {
                    // A rank-3 transpose of dims 1 and 2 (`dim` the first swapped dim).
                    format!("exec::transpose_dims({input}, {dim})?")
                } else if kind.takes_sizes() {
                    format!("exec::{kind}({input}, &[{}])?", sizes.join(", "))
                } else if kind.takes_dim() {
                    format!("exec::{kind}({input}, {dim})?")
                } else {
                    format!("exec::{kind}({input})?")
                }
            }
            ExprKind::Size { input, dim } => {
                self.uses.ops = true;
                format!("exec::size({input}, {dim})?")
            }
            ExprKind::ReduceAll { op, input } => {
                self.uses.ops = true;
                format!("exec::{op}({input})?")
            }
            ExprKind::ToScalar { kind, input } => {
                self.uses.ops = true;
                format!("exec::{kind}({input})?")
            }
            ExprKind::TensorTruth { op, lhs, rhs } => {
                self.uses.ops = true;
                self.uses.compare = true;
                // The other side a tensor or a Python scalar, by its IR type.
                let ExprKind::TensorTruth { rhs: rhs_id, .. } = &expr.kind else {
                    return Err(invalid(&f.name, format!("%{index} changed kind")));
                };
                let rhs = match f.expr(*rhs_id).map(|e| e.ty) {
                    Some(Type::Tensor(_)) => format!("exec::Operand::Tensor({rhs})"),
                    _ => format!("exec::Operand::Scalar({rhs}.into())"),
                };
                format!("exec::truth(CompareOp::{op:?}, {lhs}, {rhs})?")
            }
            ExprKind::Join { kind, parts, dim } => {
                self.uses.ops = true;
                format!("exec::{kind}(&[{}], {dim})?", parts.join(", "))
            }
            ExprKind::Elementwise { op, operands } => {
                self.uses.ops = true;
                self.uses.elementwise = true;
                // Each operand a tensor or a Python scalar, by its IR type.
                let ExprKind::Elementwise { operands: ids, .. } = &expr.kind else {
                    return Err(invalid(&f.name, format!("%{index} changed kind")));
                };
                let args: Vec<String> = operands
                    .iter()
                    .zip(ids)
                    .map(|(operand, id)| match f.expr(*id).map(|e| e.ty) {
                        Some(Type::Tensor(_)) => format!("exec::Operand::Tensor({operand})"),
                        _ => format!("exec::Operand::Scalar({operand}.into())"),
                    })
                    .collect();
                let op = match op {
                    ElementwiseOp::Where(cmp) => {
                        self.uses.compare = true;
                        format!("ElementwiseOp::Where(CompareOp::{cmp:?})")
                    }
                    other => format!("ElementwiseOp::{other:?}"),
                };
                format!("exec::elementwise({op}, &[{}])?", args.join(", "))
            }
            ExprKind::EmbeddingBag {
                ids,
                weight,
                offsets,
                mode,
            } => {
                self.uses.ops = true;
                self.uses.bag_mode = true;
                format!("exec::embedding_bag({ids}, {weight}, {offsets}, BagMode::{mode:?})?")
            }
            ExprKind::FusedLinear {
                input: x,
                weight: w,
                bias,
                prologue,
                activations,
                tail,
                layout,
                bias_added,
                residual,
                norm,
            } => {
                self.uses.ops = true;
                self.uses.binary |= !prologue.is_empty();
                // A row normalization runs first; the fused call reads its result.
                let x = match norm {
                    Some(n) => format!(
                        "&exec::norm_rows({x}, {}, {}, {}, f64::from_bits({:#x}))?",
                        n.normalized,
                        optional(n.weight),
                        optional(n.bias),
                        n.eps.0
                    ),
                    None => x,
                };
                let prologue = prologue
                    .iter()
                    .map(|step| format!("({}, {})", binary_expr(step.op), step.operand))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.uses.unary |= !activations.is_empty();
                let reduce = tail.and_then(FusedTail::reduction);
                self.uses.reduce |= reduce.is_some();
                self.uses.fused_reduce |= reduce.is_some();
                self.uses.fused_tail |= tail.is_some();
                self.uses.softmax_tail |= matches!(tail, Some(FusedTail::Softmax { .. }));
                let activations = activations
                    .iter()
                    .map(|op| unary_expr(*op))
                    .collect::<Vec<_>>()
                    .join(", ");
                let tail = fused_tail_expr(tail);
                let product = match layout {
                    WeightLayout::OutIn if bias_added => format!(
                        "exec::linear_added_bias({x}, {w}, {}, &[{prologue}], &[{activations}], {tail}, {reused})?",
                        bias.ok_or_else(|| {
                            invalid(&f.name, "`bias=added` without a bias".to_string())
                        })?
                    ),
                    WeightLayout::OutIn => format!(
                        "exec::linear({x}, {w}, {}, &[{prologue}], &[{activations}], {tail}, {reused})?",
                        optional(bias)
                    ),
                    WeightLayout::InOut => format!(
                        "exec::matmul_linear({x}, {w}, {}, &[{prologue}], &[{activations}], {tail})?",
                        optional(bias)
                    ),
                };
                match residual {
                    Some(r) => format!("exec::residual({product}, {}, {})?", r.operand, r.first),
                    None => product,
                }
            }
        };
        let var = self.var(id);
        self.line(
            depth,
            &format!("let {var}: {} = {value};", rust_type(expr.ty)),
        );
        self.define(id)
    }
}
