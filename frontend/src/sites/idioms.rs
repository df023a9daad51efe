//! Idioms of public module code that the extended surface reads where the reference host
//! does not (issue 33): a dtype written as an argument of `to` / `type_as`
//! (`x.to(torch.float32)`, `w.to(dtype=x.dtype)`), offered to the casts lane as a static
//! dtype ([`crate::claim::casts`]); and augmented assignment to a tensor (`h += e`), which
//! the extended surface lowers as `h = h + e` where that is eager's answer:
//!
//! - eager's `h += e` updates `h`'s tensor in place, so every other name bound to that
//!   tensor sees the change, and the caller's tensor changes when `h` is an argument.
//!   Compiled code never updates a tensor in place, so the statement is lowered only when
//!   `h`'s value is *exclusive*: the result of an op that makes a new tensor here (not an
//!   argument, a module member, a view, a loop-carried or `if` value), bound to no other
//!   name, never a view's input, never passed on by a loop or an `if` ([`Walker::exclusive`]).
//!   Anything else is refused (`RXT010`, naming why);
//! - an in-place update cannot change `h`'s shape: eager raises where broadcasting `e` would
//!   grow it. A tensor `e` (not a Python scalar) therefore gets a `view` of the result to
//!   `h`'s sizes after the op, which raises there too (a different message, the same
//!   `RuntimeError`); the dtype cannot change either (the rebinding rule refuses that).

use rextio_ir::ViewKind;
use ruff_python_ast::{self as ast, Expr, Keyword, Operator, StmtAugAssign};
use ruff_text_size::Ranged;

use super::{Callee, Marker, Operand, Value, Walker};
use crate::claim::casts::{dtype_named, takes_dtype, KEY_DTYPE};
use crate::claim::{ClaimedOp, Input, KeywordArg, Literal, Surface};
use crate::lower::{TraceStmt, ValueDef, ValueId};
use crate::parse::span_of;

impl Walker<'_> {
    /// Whether the arguments of the call through `callee` may be dtypes
    /// ([`takes_dtype`]: a method `to` / `type_as` under the extended surface).
    pub(super) fn reads_dtypes(&self, callee: &Callee) -> bool {
        callee.receiver.is_some()
            && takes_dtype(
                callee.target.rsplit('.').next().unwrap_or(""),
                self.ctx.surface,
            )
    }

    /// `expr` as a dtype known when compiling: `torch.float32` (any dtype name of torch), or
    /// `t.dtype` of a typed tensor `t` (its static dtype: the annotation fixes it). The
    /// operand's type is [`KEY_DTYPE`] and its literal the dtype's torch name. `None` when
    /// `expr` is written otherwise (it is then evaluated as any argument). A `.dtype` of
    /// anything but a typed tensor is an unresolved operand (the lane does not cover it).
    pub(super) fn dtype_operand(&mut self, expr: &Expr) -> Option<Operand> {
        let span = span_of(expr);
        if let Expr::Attribute(attribute) = expr {
            if attribute.attr.as_str() == "dtype" {
                let tensor = self.eval(&attribute.value);
                let name = tensor
                    .ty
                    .as_deref()
                    .and_then(Marker::by_key)
                    .map(|m| m.ty.dtype.torch_name());
                let (ty, literal) = match name {
                    Some(name) => (Some(KEY_DTYPE), Literal::Str(name.to_string())),
                    None => (None, Literal::NonLiteral),
                };
                let value = Value {
                    ty: ty.map(str::to_string),
                    poisoned: tensor.poisoned,
                    ..Value::default()
                };
                return Some(Operand {
                    value,
                    literal,
                    span,
                });
            }
        }
        let path = self
            .ctx
            .imports
            .resolve_expr(expr, &|name| self.is_local(name))?;
        let name = dtype_named(&path)?;
        Some(Operand {
            value: Value::typed(KEY_DTYPE),
            literal: Literal::Str(name.to_string()),
            span,
        })
    }

    /// A `dtype=` keyword written as a dtype known when compiling ([`Self::dtype_operand`]):
    /// the keyword as offered (typed [`KEY_DTYPE`]) and its value.
    pub(super) fn dtype_keyword(&mut self, keyword: &Keyword) -> Option<(KeywordArg, Operand)> {
        let name = keyword.arg.as_ref().filter(|n| n.as_str() == "dtype")?;
        let operand = self.dtype_operand(&keyword.value)?;
        let arg = KeywordArg {
            name: name.to_string(),
            arg_type: operand.value.ty.clone(),
            literal: operand.literal.clone(),
        };
        Some((arg, operand))
    }

    /// `name op= value` with a tensor `current` under the extended surface: lowered as
    /// `name = name op value` when eager's in-place update is that (see the module doc),
    /// else refused. Whether it took the statement (false: the host's rule applies).
    pub(super) fn tensor_aug_assign(
        &mut self,
        aug: &StmtAugAssign,
        name: &str,
        current: &Value,
    ) -> bool {
        if self.ctx.surface != Surface::Extended || current.poisoned {
            return false;
        }
        let op = aug.op;
        if !matches!(
            op,
            Operator::Add | Operator::Sub | Operator::Mult | Operator::Div
        ) {
            return false;
        }
        let span = self.first_line(span_of(aug));
        if let Err(why) = self.exclusive(name, current) {
            let message = format!(
                "`{name} {}= ...` updates {why} in place in eager; compiled code never updates a \
                 tensor in place, so it cannot give eager's answer here",
                op.as_str()
            );
            self.blocker(span, message);
            if let Some(last) = self.out.blockers.last_mut() {
                *last = last.clone().with_suggestion(format!(
                    "write it as a new binding, e.g. `{name} = {name} {} ...`",
                    op.as_str()
                ));
            }
            return true;
        }
        // Python's order: the target, then the value, then the update.
        let binop = Expr::BinOp(ast::ExprBinOp {
            node_index: ast::AtomicNodeIndex::NONE,
            range: aug.range(),
            left: aug.target.clone(),
            op,
            right: aug.value.clone(),
        });
        let mut result = self.eval(&binop);
        let rank = current
            .ty
            .as_deref()
            .and_then(Marker::by_key)
            .map_or(0, |m| m.ty.rank);
        let tensor_operand = result.id.is_some_and(|id| {
            matches!(
                self.out.trace.values[id].def,
                ValueDef::Op {
                    op: ClaimedOp::Binary { .. },
                    ..
                }
            )
        });
        // A result of another type is the rebinding rule's refusal (below), never a guard's.
        let same_type = result.ty == current.ty;
        if let (true, true, true, Some(old), Some(new), Some(key)) = (
            tensor_operand,
            same_type,
            rank > 0,
            current.id,
            result.id,
            result.ty.as_deref().and_then(Marker::by_key),
        ) {
            // Eager raises where broadcasting grows the target; a view to its sizes does too.
            let full = span_of(aug);
            let sizes: Vec<Option<ValueId>> = (0..rank)
                .map(|dim| {
                    let def = ValueDef::Op {
                        op: ClaimedOp::Size {
                            input: Input::Receiver,
                            dim,
                        },
                        receiver: Some(old),
                        operands: Vec::new(),
                        result_type: "int",
                    };
                    Some(self.out.trace.push(def, full))
                })
                .collect();
            let def = ValueDef::Op {
                op: ClaimedOp::View {
                    kind: ViewKind::View,
                    input: Input::Receiver,
                    sizes: (0..usize::from(rank)).map(Input::Operand).collect(),
                    dim: 0,
                },
                receiver: Some(new),
                operands: sizes,
                result_type: key.key,
            };
            result.id = Some(self.out.trace.push(def, full));
        }
        self.rebind(name, result, span_of(aug));
        true
    }

    /// Whether `name`'s value `current` is a tensor no other name can see (an op's new
    /// result, bound to `name` only, not a view's input, not passed on by a loop or an `if`;
    /// or a view of such a tensor that nothing else sees, as the broadcast guard's view
    /// is); the error says what the tensor may be.
    fn exclusive(&self, name: &str, current: &Value) -> Result<(), String> {
        let Some(id) = current.id else {
            return Err(format!("`{name}`'s tensor"));
        };
        match &self.out.trace.values[id].def {
            ValueDef::Param { .. } => {
                return Err(format!(
                    "the caller's tensor `{name}` (an argument, or a module's parameter or \
                     buffer)"
                ))
            }
            ValueDef::Op {
                op: ClaimedOp::View { .. },
                receiver,
                ..
            } => {
                let base = receiver.filter(|r| {
                    matches!(&self.out.trace.values[*r].def, ValueDef::Op { op, .. }
                        if !matches!(op, ClaimedOp::View { .. }))
                });
                match base {
                    Some(base) if self.unshared(base, None, Some(id)).is_ok() => {}
                    _ => return Err(format!("`{name}`, a view of another tensor,")),
                }
            }
            ValueDef::Op { .. } => {}
            _ => {
                return Err(format!(
                    "`{name}`'s tensor, which a loop or an `if` passes on (it may be an \
                     argument's or another name's),"
                ))
            }
        }
        self.unshared(id, Some(name), None)
            .map_err(|why| format!("`{name}`'s tensor, which {why},"))
    }

    /// Whether no name but `name` holds `id`, no view but `view` reads it, and no loop or
    /// `if` passes it on; the error says which does.
    fn unshared(
        &self,
        id: ValueId,
        name: Option<&str>,
        view: Option<ValueId>,
    ) -> Result<(), String> {
        if let Some(other) = self
            .env
            .iter()
            .find(|(other, value)| Some(other.as_str()) != name && value.id == Some(id))
            .map(|(other, _)| other.clone())
        {
            return Err(format!("`{other}` also names"));
        }
        let viewed = self
            .out
            .trace
            .values
            .iter()
            .enumerate()
            .any(|(at, v)| match &v.def {
                ValueDef::Op {
                    op: ClaimedOp::View { .. },
                    receiver,
                    operands,
                    ..
                } => Some(at) != view && (*receiver == Some(id) || operands.contains(&Some(id))),
                _ => false,
            });
        if viewed {
            return Err("a view shares".to_string());
        }
        if self.out.trace.blocks.iter().any(|b| passes_on(b, id)) {
            return Err("a loop or an `if` passes on to another name".to_string());
        }
        Ok(())
    }
}

/// Whether a statement of `block` (at any depth) passes `id` on: yields it from an `if`,
/// carries it into or out of a loop.
fn passes_on(block: &[TraceStmt], id: ValueId) -> bool {
    block.iter().any(|stmt| match stmt {
        TraceStmt::Continue(values) | TraceStmt::Break(values) | TraceStmt::Yield(values) => {
            values.contains(&id)
        }
        TraceStmt::For { carried, body, .. } => {
            carried.iter().any(|(_, init, _)| *init == id) || passes_on(body, id)
        }
        TraceStmt::While {
            carried,
            cond_block,
            body,
            ..
        } => {
            carried.iter().any(|(_, init, _)| *init == id)
                || passes_on(cond_block, id)
                || passes_on(body, id)
        }
        TraceStmt::If {
            then_block,
            else_block,
            ..
        } => passes_on(then_block, id) || passes_on(else_block, id),
        TraceStmt::Value(_) | TraceStmt::Return(_) => false,
    })
}
