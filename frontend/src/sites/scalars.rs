//! Scalar expressions of a native function body as the reference host (Core 0.1.8) types and
//! lowers them: arithmetic on ints, floats and bools (`scalar_binop`), comparisons, chained
//! ones included, evaluated as Python does (each operand at most once, left to right,
//! stopping at the first false link: `scalar_compare`), `and`/`or` (`bool_op`) and unary
//! operators (`unary`), each with Core's blockers in its exact words, and the `math`
//! functions the scalar math lane claims (`scalar_math`, extended surface only). The
//! statements that use them are in `statements.rs`.

use rextio_ir::{ScalarOp, ScalarUnaryOp, Span};
use ruff_python_ast::{
    BoolOp, CmpOp, Expr, ExprBoolOp, ExprCompare, ExprUnaryOp, Operator, UnaryOp,
};

use super::{SiteInput, Value, Walker};
use crate::claim::Input;
use crate::lower::{TraceStmt, ValueDef, ValueId};
use crate::parse::span_of;

/// The operand type of a scalar value, when it is one Core lowers.
fn scalar_type(value: &Value) -> Option<&str> {
    match value.ty.as_deref() {
        Some(t @ ("int" | "float" | "bool")) => Some(t),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum ScalarValueDef {
    Binary(ScalarOp),
    Unary(ScalarUnaryOp),
}

impl Walker<'_> {
    /// `left op right` where neither side is a tensor: Core's own scalar arithmetic.
    pub(super) fn scalar_binop(
        &mut self,
        op: Operator,
        left: &Value,
        right: &Value,
        span: Span,
        stmt_span: Span,
    ) -> Value {
        if left.poisoned || right.poisoned {
            return Value::poisoned();
        }
        let scalar_op = match op {
            Operator::Add => Some(ScalarOp::Add),
            Operator::Sub => Some(ScalarOp::Sub),
            Operator::Mult => Some(ScalarOp::Mul),
            Operator::Mod => Some(ScalarOp::Mod),
            Operator::Div => Some(ScalarOp::TrueDiv),
            _ => None,
        };
        let Some(scalar_op) = scalar_op else {
            let message = "this binary operator is not supported in native functions";
            self.blocker(stmt_span, message);
            self.blocker_at_def(message);
            return Value::poisoned();
        };
        let (Some(l), Some(r)) = (scalar_type(left), scalar_type(right)) else {
            let shown = |v: &Value| v.ty.clone().unwrap_or_else(|| "unresolved".to_string());
            self.blocker(
                span,
                format!(
                    "operator is not supported for inferred operand types: {} and {}",
                    shown(left),
                    shown(right)
                ),
            );
            return Value::poisoned();
        };
        if (l == "int" && r == "float") || (l == "float" && r == "int") {
            self.blocker(
                span,
                format!("mixed numeric operand types are not supported: {l} and {r}"),
            );
            return Value::poisoned();
        }
        if l == "bool" || r == "bool" {
            self.blocker(
                span,
                format!("operator is not supported for inferred operand types: {l} and {r}"),
            );
            return Value::poisoned();
        }
        if scalar_op == ScalarOp::TrueDiv && l == "int" {
            self.blocker(
                span,
                "int division is not supported in 0.1.8 native functions",
            );
            return Value::poisoned();
        }
        self.scalar_value(
            ScalarValueDef::Binary(scalar_op),
            left,
            Some(right),
            l,
            span,
        )
    }

    /// Places a scalar op over `left` (and `right`) and returns its value.
    fn scalar_value(
        &mut self,
        def: ScalarValueDef,
        left: &Value,
        right: Option<&Value>,
        operand_type: &str,
        span: Span,
    ) -> Value {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            let Some(lhs) = self.value_id(left, span) else {
                return Value::poisoned();
            };
            let rhs = match right {
                Some(right) => match self.value_id(right, span) {
                    Some(id) => Some(id),
                    None => return Value::poisoned(),
                },
                None => None,
            };
            let (value_def, ty) = match (def, rhs) {
                (ScalarValueDef::Binary(op), Some(rhs)) => {
                    let ty = if op.is_comparison() {
                        "bool"
                    } else {
                        operand_type
                    };
                    (ValueDef::Scalar { op, lhs, rhs }, ty)
                }
                (ScalarValueDef::Unary(op), _) => {
                    let ty = if op == ScalarUnaryOp::Neg {
                        operand_type
                    } else {
                        "bool"
                    };
                    (ValueDef::ScalarUnary { op, input: lhs }, ty)
                }
                _ => return Value::poisoned(),
            };
            let id = self.out.trace.push(value_def, span);
            Value {
                ty: Some(ty.to_string()),
                id: Some(id),
                ..Value::default()
            }
        })
    }

    /// A comparison chain over scalars: each link compares one type with itself. Links are
    /// joined as Python joins them: `a < b < c` is `a < b and b < c` with `b` evaluated
    /// once, and each later operand (its trace statements in `later_blocks`, one per operand
    /// from the third on) evaluated only when every link before it held, inside that link's
    /// `if` arm.
    pub(super) fn scalar_compare(
        &mut self,
        compare: &ExprCompare,
        operands: &[Value],
        later_blocks: Vec<Vec<TraceStmt>>,
    ) -> Value {
        let span = span_of(compare);
        if operands.iter().any(|v| v.poisoned) {
            return Value::poisoned();
        }
        if compare
            .ops
            .iter()
            .any(|op| matches!(op, CmpOp::In | CmpOp::NotIn))
        {
            self.blocker_at_def("membership comparisons are not supported in native functions");
        }
        // Every link is typed first (the first mixed one is the diagnostic), then emitted.
        let mut links = Vec::new();
        for (i, op) in compare.ops.iter().enumerate() {
            let (left, right) = (&operands[i], &operands[i + 1]);
            let l = left.ty.clone().unwrap_or_else(|| "unresolved".to_string());
            let r = right.ty.clone().unwrap_or_else(|| "unresolved".to_string());
            let scalar_op = match op {
                CmpOp::Eq => Some(ScalarOp::Eq),
                CmpOp::NotEq => Some(ScalarOp::Ne),
                CmpOp::Lt => Some(ScalarOp::Lt),
                CmpOp::LtE => Some(ScalarOp::Le),
                CmpOp::Gt => Some(ScalarOp::Gt),
                CmpOp::GtE => Some(ScalarOp::Ge),
                _ => None,
            };
            let same = l == r && scalar_type(left).is_some();
            match (scalar_op, same) {
                (Some(scalar_op), true) => links.push((scalar_op, l)),
                _ => {
                    let shown_r = match &compare.comparators[i] {
                        Expr::Tuple(t) => format!(
                            "tuple[{}]",
                            t.elts
                                .iter()
                                .map(|e| if super::int_literal(e).is_some() {
                                    "int"
                                } else {
                                    "object"
                                })
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        _ => r,
                    };
                    self.blocker(
                        span,
                        format!(
                            "mixed comparison operand types are not supported: {l} and {shown_r}"
                        ),
                    );
                    return Value::poisoned();
                }
            }
        }
        let mut later_blocks = later_blocks.into_iter();
        self.compare_links(&links, operands, &mut later_blocks, span)
    }

    /// Link `0` of `links` (over `operands[0]` and `operands[1]`), and, when more follow,
    /// `if link { <next operand's statements>; <the rest of the chain> } else { link }`.
    fn compare_links(
        &mut self,
        links: &[(ScalarOp, String)],
        operands: &[Value],
        later_blocks: &mut impl Iterator<Item = Vec<TraceStmt>>,
        span: Span,
    ) -> Value {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            let Some(((op, ty), rest)) = links.split_first() else {
                return Value::poisoned();
            };
            let link = self.scalar_value(
                ScalarValueDef::Binary(*op),
                &operands[0],
                Some(&operands[1]),
                ty,
                span,
            );
            if rest.is_empty() {
                return link;
            }
            let Some(link_id) = link.id else {
                return Value::poisoned();
            };
            self.out.trace.open();
            for stmt in later_blocks.next().unwrap_or_default() {
                self.out.trace.stmt(stmt);
            }
            let tail = self.compare_links(rest, &operands[1..], later_blocks, span);
            let mut then_block = self.out.trace.close();
            let Some(tail_id) = tail.id else {
                return Value::poisoned();
            };
            then_block.push(TraceStmt::Yield(vec![tail_id]));
            let result = self.bound("bool", None, span);
            let Some(result_id) = result.id else {
                return Value::poisoned();
            };
            self.out.trace.stmt(TraceStmt::If {
                cond: link_id,
                then_block,
                else_block: vec![TraceStmt::Yield(vec![link_id])],
                results: vec![result_id],
            });
            result
        })
    }

    /// `and`/`or` over bools, short-circuiting as Python does: later operands are evaluated
    /// only when needed, inside an `if` arm. `condition`: the operation is an `if`/`while`
    /// condition, so its operands are too (`eval_condition`).
    pub(super) fn bool_op(&mut self, bool_op: &ExprBoolOp, condition: bool) -> Value {
        let span = span_of(bool_op);
        let mut values = bool_op.values.iter();
        let Some(first) = values.next() else {
            return Value::poisoned();
        };
        let mut acc = self.operand_of(first, condition);
        let mut ok = self.bool_operand(&acc, first);
        for operand in values {
            let Some(acc_id) = (if ok { self.value_id(&acc, span) } else { None }) else {
                let value = self.operand_of(operand, condition);
                self.bool_operand(&value, operand);
                ok = false;
                continue;
            };
            self.out.trace.open();
            let value = self.operand_of(operand, condition);
            let operand_ok = self.bool_operand(&value, operand);
            let value_id = if operand_ok {
                self.value_id(&value, span)
            } else {
                None
            };
            let evaluated = self.out.trace.close();
            let Some(value_id) = value_id else {
                ok = false;
                continue;
            };
            let result = self.bound("bool", None, span);
            let Some(result_id) = result.id else {
                return Value::poisoned();
            };
            let mut evaluated = evaluated;
            evaluated.push(TraceStmt::Yield(vec![value_id]));
            let short = vec![TraceStmt::Yield(vec![acc_id])];
            let (then_block, else_block) = match bool_op.op {
                BoolOp::And => (evaluated, short),
                BoolOp::Or => (short, evaluated),
            };
            self.out.trace.stmt(TraceStmt::If {
                cond: acc_id,
                then_block,
                else_block,
                results: vec![result_id],
            });
            acc = result;
        }
        if ok {
            acc
        } else {
            Value::poisoned()
        }
    }

    /// An operand of `and`/`or`/`not`: a condition where the operation is one.
    fn operand_of(&mut self, expr: &Expr, condition: bool) -> Value {
        if condition {
            self.eval_condition(expr)
        } else {
            self.eval(expr)
        }
    }

    fn bool_operand(&mut self, value: &Value, expr: &Expr) -> bool {
        if value.poisoned {
            return false;
        }
        match value.ty.as_deref() {
            Some("bool") => true,
            other => {
                self.blocker(
                    span_of(expr),
                    format!(
                        "boolean operations require bool operands in 0.1.8, got {}",
                        other.unwrap_or("unresolved")
                    ),
                );
                false
            }
        }
    }

    /// A claimed `math` function (`math.sqrt(d)`): its operands placed as values (a literal
    /// becomes a constant), then `op` of the first; `math.log(x, base)` is CPython's
    /// `log(x) / log(base)`, each log raising before the division (so `log(0, 1)` is the
    /// domain error and `log(2, 1)` the float division by zero, as in CPython).
    pub(super) fn scalar_math(
        &mut self,
        input: &SiteInput,
        op: ScalarUnaryOp,
        x: Input,
        base: Option<Input>,
        result_type: &str,
    ) -> Value {
        let place = |walker: &mut Self, which: Input| -> Option<ValueId> {
            let Input::Operand(i) = which else {
                return None;
            };
            let operand = input.operands.get(i)?;
            walker.value_id(&operand.value, operand.span)
        };
        let Some(x) = place(self, x) else {
            return Value::poisoned();
        };
        let base = match base {
            Some(b) => match place(self, b) {
                Some(id) => Some(id),
                None => return Value::poisoned(),
            },
            None => None,
        };
        let span = input.expr_span;
        let mut id = self
            .out
            .trace
            .push(ValueDef::ScalarUnary { op, input: x }, span);
        if let Some(base) = base {
            let den = self
                .out
                .trace
                .push(ValueDef::ScalarUnary { op, input: base }, span);
            id = self.out.trace.push(
                ValueDef::Scalar {
                    op: ScalarOp::TrueDiv,
                    lhs: id,
                    rhs: den,
                },
                span,
            );
        }
        Value {
            ty: Some(result_type.to_string()),
            id: Some(id),
            ..Value::default()
        }
    }

    /// `-x`, `not x`, `+x` on a value that is not a literal.
    pub(super) fn unary(&mut self, unary: &ExprUnaryOp) -> Value {
        let span = span_of(unary);
        // `not` reads its operand's truth wherever it is: a comparison of tensors there is
        // a condition (`not t.max() > 0.5`).
        let condition = unary.op == UnaryOp::Not;
        let operand = self.operand_of(&unary.operand, condition);
        if operand.poisoned {
            return Value::poisoned();
        }
        let ty = operand
            .ty
            .clone()
            .unwrap_or_else(|| "unresolved".to_string());
        match unary.op {
            UnaryOp::USub if matches!(ty.as_str(), "int" | "float") => self.scalar_value(
                ScalarValueDef::Unary(ScalarUnaryOp::Neg),
                &operand,
                None,
                &ty.clone(),
                span,
            ),
            UnaryOp::USub => {
                self.blocker(
                    span,
                    format!("unary minus is not supported for inferred operand type: {ty}"),
                );
                Value::poisoned()
            }
            UnaryOp::Not if ty == "bool" => self.scalar_value(
                ScalarValueDef::Unary(ScalarUnaryOp::Not),
                &operand,
                None,
                "bool",
                span,
            ),
            UnaryOp::Not => {
                self.blocker(
                    span,
                    format!("not operator requires bool in 0.1.8 native functions, got {ty}"),
                );
                Value::poisoned()
            }
            UnaryOp::UAdd | UnaryOp::Invert => {
                self.blocker_at_def("this unary operator is not supported in native functions");
                Value::poisoned()
            }
        }
    }
}
