//! Lowering a fully claimed function to IR.
//!
//! The body walker ([`crate::sites`]) records a [`Trace`]: the parameter reads, the claimed
//! ops (each with the trace values its receiver and operands evaluated to), the constants a
//! return needs, and the returned value. Lowering turns each trace value into one IR
//! expression in the same order (so operands always precede their users), copies spans and
//! source names into the side tables, and ends the body with `Return`. It never re-reads the
//! Python syntax: what a claimed op computes is the claim rule's [`ClaimedOp`].

use rextio_ir::{Diagnostic, ExprId, ExprKind, Function, Marker, Param, Span, Stmt, Type};

use crate::claim::{ClaimedOp, Input};
use crate::codes;
use crate::imports::AnnotatedType;
use crate::signature::Signature;

/// Index of a value in [`Trace::values`].
pub type ValueId = usize;

#[derive(Clone, Debug, PartialEq)]
pub enum ValueDef {
    Param {
        index: u32,
    },
    ConstInt(i64),
    ConstBool(bool),
    Op {
        op: ClaimedOp,
        receiver: Option<ValueId>,
        /// Aligned with the site's positional operands; `None` for operands that are not
        /// trace values (literals, unresolved names).
        operands: Vec<Option<ValueId>>,
        /// Plugin type key of the claimed result.
        result_type: &'static str,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraceValue {
    pub def: ValueDef,
    /// The source expression (parameter reads: the parameter in the signature).
    pub span: Span,
    /// The Python name first bound to this value (parameter name or named temp).
    pub name: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub values: Vec<TraceValue>,
    /// The returned value and its operand type (plugin key, `int` or `bool`).
    pub ret: Option<(ValueId, String)>,
}

impl Trace {
    pub fn push(&mut self, def: ValueDef, span: Span) -> ValueId {
        self.values.push(TraceValue {
            def,
            span,
            name: None,
        });
        self.values.len() - 1
    }
}

/// The IR type of an operand type (plugin key, `int`, `bool`).
pub fn ir_type(operand_type: &str) -> Option<Type> {
    match operand_type {
        "int" => Some(Type::Int),
        "bool" => Some(Type::Bool),
        key => Marker::by_key(key).map(|marker| Type::Tensor(marker.ty)),
    }
}

fn annotated_ir_type(annotated: &AnnotatedType) -> Option<Type> {
    match annotated {
        AnnotatedType::Marker(marker) => Some(Type::Tensor(marker.ty)),
        AnnotatedType::Core(name) => ir_type(name),
        AnnotatedType::Other(_) | AnnotatedType::Missing => None,
    }
}

fn internal(message: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic::error(codes::INTERNAL, message).with_primary(span, "while lowering this")
}

/// Builds the IR of a function whose sites are all claimed. Errors are diagnostics: `RXT032`
/// for parameters the IR cannot type, `RXT034` for a missing return, `RXT099` for a trace
/// that contradicts itself (a frontend bug).
pub fn lower_function(
    name: &str,
    sig: &Signature,
    trace: &Trace,
) -> Result<Function, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut params = Vec::new();
    for param in &sig.params {
        match annotated_ir_type(&param.annotated) {
            Some(ty) => params.push(Param {
                name: param.name.clone(),
                ty,
            }),
            None => errors.push(
                Diagnostic::error(
                    codes::UNSUPPORTED_PARAM,
                    format!(
                        "parameter type {} is not supported by native functions yet",
                        param.annotated.display()
                    ),
                )
                .with_primary(param.span, "this parameter"),
            ),
        }
    }
    let Some((ret_value, ret_type)) = &trace.ret else {
        errors.push(Diagnostic::error(
            codes::MISSING_RETURN,
            "native function has no return value",
        ));
        return Err(errors);
    };
    let Some(ret) = ir_type(ret_type) else {
        errors.push(internal(
            format!("return type {ret_type} has no IR type"),
            Span::new(0, 0),
        ));
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }

    let mut function = Function::new(name, params, ret);
    let mut ids: Vec<ExprId> = Vec::with_capacity(trace.values.len());
    for value in &trace.values {
        let (kind, ty) = match expr_of(value, &function, &ids) {
            Ok(pair) => pair,
            Err(message) => return Err(vec![internal(message, value.span)]),
        };
        let id = function.push_spanned(kind, ty, value.span);
        function.body.stmts.push(Stmt::Let(id));
        if let Some(name) = &value.name {
            function.names.insert(id, name.clone());
        }
        ids.push(id);
    }
    match ids.get(*ret_value) {
        Some(id) => function.body.stmts.push(Stmt::Return(*id)),
        None => {
            return Err(vec![internal(
                "returned value is not in the trace",
                Span::new(0, 0),
            )])
        }
    }
    Ok(function)
}

/// The IR node and type of one trace value; `ids` maps earlier trace values to IR ids.
fn expr_of(
    value: &TraceValue,
    function: &Function,
    ids: &[ExprId],
) -> Result<(ExprKind, Type), String> {
    match &value.def {
        ValueDef::Param { index } => {
            let param = function
                .params
                .get(*index as usize)
                .ok_or("parameter index out of range")?;
            Ok((ExprKind::Param(*index), param.ty))
        }
        ValueDef::ConstInt(v) => Ok((ExprKind::ConstInt(*v), Type::Int)),
        ValueDef::ConstBool(v) => Ok((ExprKind::ConstBool(*v), Type::Bool)),
        ValueDef::Op {
            op,
            receiver,
            operands,
            result_type,
        } => {
            let input = |input: &Input| -> Result<ExprId, String> {
                let value = match input {
                    Input::Receiver => *receiver,
                    Input::Operand(i) => operands.get(*i).copied().flatten(),
                };
                value
                    .and_then(|v| ids.get(v).copied())
                    .ok_or_else(|| format!("claimed op input {input:?} is not a tensor value"))
            };
            let kind = match op {
                ClaimedOp::Linear {
                    input: x,
                    weight,
                    bias,
                } => ExprKind::Linear {
                    input: input(x)?,
                    weight: input(weight)?,
                    bias: bias.as_ref().map(&input).transpose()?,
                },
                ClaimedOp::Unary { op, input: x } => ExprKind::Unary {
                    op: *op,
                    input: input(x)?,
                },
                ClaimedOp::Binary { op, lhs, rhs } => ExprKind::Binary {
                    op: *op,
                    lhs: input(lhs)?,
                    rhs: input(rhs)?,
                },
                ClaimedOp::Matmul { lhs, rhs } => ExprKind::Matmul {
                    lhs: input(lhs)?,
                    rhs: input(rhs)?,
                },
                ClaimedOp::Reduce {
                    kind,
                    input: x,
                    dim,
                    keepdim,
                } => ExprKind::Reduce {
                    kind: *kind,
                    input: input(x)?,
                    dim: *dim,
                    keepdim: *keepdim,
                },
                ClaimedOp::Softmax { input: x, dim } => ExprKind::Softmax {
                    input: input(x)?,
                    dim: *dim,
                },
                ClaimedOp::Argmax {
                    input: x,
                    dim,
                    keepdim,
                } => ExprKind::Argmax {
                    input: input(x)?,
                    dim: *dim,
                    keepdim: *keepdim,
                },
            };
            let ty = ir_type(result_type)
                .ok_or_else(|| format!("result type {result_type} has no IR type"))?;
            Ok((kind, ty))
        }
    }
}
