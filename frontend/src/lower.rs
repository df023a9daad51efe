//! Lowering a fully claimed function to IR.
//!
//! The body walker ([`crate::sites`]) records a [`Trace`]: the parameter reads, the claimed
//! ops (each with the trace values its receiver and operands evaluated to), scalar code, the
//! values loops and `if`s bind, and the statements that place them ([`TraceStmt`]). Lowering
//! turns each trace value into one IR expression in the same order (so operands always
//! precede their users), copies spans and source names into the side tables, and turns the
//! statements into the IR's structured statements. It never re-reads the
//! Python syntax: what a claimed op computes is the claim rule's [`ClaimedOp`].

use rextio_ir::{
    typing, Block, Carried, Diagnostic, ExprId, ExprKind, FloatBits, ForLoop, Function, IfElse,
    Iteration, Marker, Param, ScalarOp, ScalarUnaryOp, Span, Stmt, Type, WhileLoop,
};

use crate::claim::{ClaimedOp, Input, ParamArg};
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
    ConstFloat(f64),
    Op {
        op: ClaimedOp,
        receiver: Option<ValueId>,
        /// Aligned with the site's positional operands, then its keyword values (the
        /// claim's [`Input::Operand`] numbering); `None` for operands that are not trace
        /// values (literals, unresolved names).
        operands: Vec<Option<ValueId>>,
        /// Plugin type key of the claimed result.
        result_type: &'static str,
    },
    /// Scalar arithmetic or a comparison (Core lowers these itself).
    Scalar {
        op: ScalarOp,
        lhs: ValueId,
        rhs: ValueId,
    },
    ScalarUnary {
        op: ScalarUnaryOp,
        input: ValueId,
    },
    /// A scalar boundary call back into Python (`RXT075`): the module function `callee`
    /// with `int`/`float`/`bool` arguments, returning its declared `ret`.
    BoundaryCall {
        callee: String,
        args: Vec<ValueId>,
        ret: Type,
    },
    /// A value a statement binds (loop index, carried value, loop or `if` result), of an
    /// operand type (`int`, `bool`, `float` or a plugin key).
    Bound {
        ty: String,
    },
}

/// The statements of a walked body, over trace values (see [`rextio_ir::Stmt`]).
#[derive(Clone, Debug, PartialEq)]
pub enum TraceStmt {
    /// The value is computed here.
    Value(ValueId),
    For {
        index: ValueId,
        iteration: TraceIteration,
        /// `(arg, init, result)`.
        carried: Vec<(ValueId, ValueId, ValueId)>,
        body: Vec<TraceStmt>,
    },
    While {
        carried: Vec<(ValueId, ValueId, ValueId)>,
        cond_block: Vec<TraceStmt>,
        cond: ValueId,
        body: Vec<TraceStmt>,
    },
    If {
        cond: ValueId,
        then_block: Vec<TraceStmt>,
        else_block: Vec<TraceStmt>,
        results: Vec<ValueId>,
    },
    Continue(Vec<ValueId>),
    Break(Vec<ValueId>),
    Yield(Vec<ValueId>),
    Return(ValueId),
}

#[derive(Clone, Debug, PartialEq)]
pub enum TraceIteration {
    Range {
        start: ValueId,
        stop: ValueId,
        step: ValueId,
    },
    Values(Vec<i64>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraceValue {
    pub def: ValueDef,
    /// The source expression (parameter reads: the parameter in the signature).
    pub span: Span,
    /// The Python name first bound to this value (parameter name or named temp).
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub values: Vec<TraceValue>,
    /// The blocks being recorded: the body first, the innermost open block last.
    pub blocks: Vec<Vec<TraceStmt>>,
    /// The type of every returned value (plugin key, `int`, `bool` or `float`), once a
    /// `return` is lowered; they all agree with the annotation.
    pub ret_type: Option<String>,
}

impl Default for Trace {
    fn default() -> Trace {
        Trace {
            values: Vec::new(),
            blocks: vec![Vec::new()],
            ret_type: None,
        }
    }
}

impl Trace {
    /// A value computed at the current point of the innermost open block.
    pub fn push(&mut self, def: ValueDef, span: Span) -> ValueId {
        let id = self.alloc(def, span);
        self.stmt(TraceStmt::Value(id));
        id
    }

    /// A value without a placement (a statement binds it).
    pub fn alloc(&mut self, def: ValueDef, span: Span) -> ValueId {
        self.values.push(TraceValue {
            def,
            span,
            name: None,
        });
        self.values.len() - 1
    }

    pub fn stmt(&mut self, stmt: TraceStmt) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    pub fn open(&mut self) {
        self.blocks.push(Vec::new());
    }

    pub fn close(&mut self) -> Vec<TraceStmt> {
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Vec::new()
        }
    }

    /// The function body (valid once every opened block is closed).
    pub fn body(&self) -> &[TraceStmt] {
        self.blocks.first().map_or(&[], Vec::as_slice)
    }
}

/// The IR type of an operand type (plugin key, `int`, `bool`).
pub fn ir_type(operand_type: &str) -> Option<Type> {
    match operand_type {
        "int" => Some(Type::Int),
        "bool" => Some(Type::Bool),
        "float" => Some(Type::Float),
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
    let Some(ret_type) = &trace.ret_type else {
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

    // Every trace value becomes one expression, in trace order (operands first); the
    // statements then place them.
    let mut function = Function::new(name, params, ret);
    let mut ids: Vec<ExprId> = Vec::with_capacity(trace.values.len());
    for value in &trace.values {
        let (kind, ty) = match expr_of(value, &function, &ids) {
            Ok(pair) => pair,
            Err(message) => return Err(vec![internal(message, value.span)]),
        };
        let id = function.push_spanned(kind, ty, value.span);
        if let Some(name) = &value.name {
            function.names.insert(id, name.clone());
        }
        ids.push(id);
    }
    let body = block_of(trace.body(), &ids).map_err(|m| vec![internal(m, Span::new(0, 0))])?;
    function.body = body;
    Ok(function)
}

fn id_of(ids: &[ExprId], value: ValueId) -> Result<ExprId, String> {
    ids.get(value)
        .copied()
        .ok_or_else(|| format!("trace value {value} does not exist"))
}

fn ids_of(ids: &[ExprId], values: &[ValueId]) -> Result<Vec<ExprId>, String> {
    values.iter().map(|v| id_of(ids, *v)).collect()
}

fn carried_of(
    ids: &[ExprId],
    carried: &[(ValueId, ValueId, ValueId)],
) -> Result<Vec<Carried>, String> {
    carried
        .iter()
        .map(|(arg, init, result)| {
            Ok(Carried {
                arg: id_of(ids, *arg)?,
                init: id_of(ids, *init)?,
                result: id_of(ids, *result)?,
            })
        })
        .collect()
}

/// The IR statements of a trace block.
fn block_of(stmts: &[TraceStmt], ids: &[ExprId]) -> Result<Block, String> {
    let mut out = Vec::with_capacity(stmts.len());
    for stmt in stmts {
        out.push(match stmt {
            TraceStmt::Value(v) => Stmt::Let(id_of(ids, *v)?),
            TraceStmt::Return(v) => Stmt::Return(id_of(ids, *v)?),
            TraceStmt::Continue(vs) => Stmt::Continue(ids_of(ids, vs)?),
            TraceStmt::Break(vs) => Stmt::Break(ids_of(ids, vs)?),
            TraceStmt::Yield(vs) => Stmt::Yield(ids_of(ids, vs)?),
            TraceStmt::For {
                index,
                iteration,
                carried,
                body,
            } => Stmt::For(Box::new(ForLoop {
                index: id_of(ids, *index)?,
                iteration: match iteration {
                    TraceIteration::Range { start, stop, step } => Iteration::Range {
                        start: id_of(ids, *start)?,
                        stop: id_of(ids, *stop)?,
                        step: id_of(ids, *step)?,
                    },
                    TraceIteration::Values(values) => Iteration::Values(values.clone()),
                },
                carried: carried_of(ids, carried)?,
                body: block_of(body, ids)?,
            })),
            TraceStmt::While {
                carried,
                cond_block,
                cond,
                body,
            } => Stmt::While(Box::new(WhileLoop {
                carried: carried_of(ids, carried)?,
                cond_block: block_of(cond_block, ids)?,
                cond: id_of(ids, *cond)?,
                body: block_of(body, ids)?,
            })),
            TraceStmt::If {
                cond,
                then_block,
                else_block,
                results,
            } => Stmt::If(Box::new(IfElse {
                cond: id_of(ids, *cond)?,
                then_block: block_of(then_block, ids)?,
                else_block: block_of(else_block, ids)?,
                results: ids_of(ids, results)?,
            })),
        });
    }
    Ok(Block::new(out))
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
        ValueDef::ConstFloat(v) => Ok((ExprKind::ConstFloat(FloatBits::new(*v)), Type::Float)),
        ValueDef::Bound { ty } => {
            let ty =
                ir_type(ty).ok_or_else(|| format!("bound value of type {ty} has no IR type"))?;
            Ok((ExprKind::Bound, ty))
        }
        ValueDef::Scalar { op, lhs, rhs } => {
            let kind = ExprKind::Scalar {
                op: *op,
                lhs: id_of(ids, *lhs)?,
                rhs: id_of(ids, *rhs)?,
            };
            let ty = typing::result_type(&kind, |id| function.exprs[id].ty, &function.params)
                .map_err(|e| e.to_string())?;
            Ok((kind, ty))
        }
        ValueDef::BoundaryCall { callee, args, ret } => {
            let kind = ExprKind::BoundaryCall {
                callee: callee.clone(),
                args: args
                    .iter()
                    .map(|a| id_of(ids, *a))
                    .collect::<Result<Vec<_>, _>>()?,
                ret: *ret,
            };
            let ty = typing::result_type(&kind, |id| function.exprs[id].ty, &function.params)
                .map_err(|e| e.to_string())?;
            Ok((kind, ty))
        }
        ValueDef::ScalarUnary { op, input } => {
            let kind = ExprKind::ScalarUnary {
                op: *op,
                input: id_of(ids, *input)?,
            };
            let ty = typing::result_type(&kind, |id| function.exprs[id].ty, &function.params)
                .map_err(|e| e.to_string())?;
            Ok((kind, ty))
        }
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
                    .ok_or_else(|| format!("claimed op input {input:?} is not a traced value"))
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
                ClaimedOp::TensorScalar { op, tensor, scalar } => ExprKind::TensorScalar {
                    op: *op,
                    tensor: input(tensor)?,
                    scalar: input(scalar)?,
                },
                ClaimedOp::ParamUnary {
                    op,
                    input: x,
                    params,
                } => {
                    // The walker has turned every default into a constant operand.
                    let param = |p: &ParamArg| match p {
                        ParamArg::Input(i) => input(i),
                        ParamArg::Default(_) => Err(format!("{op} default parameter not placed")),
                    };
                    let (first, second) = match params.as_slice() {
                        [a] => (param(a)?, None),
                        [a, b] => (param(a)?, Some(param(b)?)),
                        other => return Err(format!("{op} with {} parameters", other.len())),
                    };
                    ExprKind::ParamUnary {
                        op: *op,
                        input: input(x)?,
                        first,
                        second,
                    }
                }
                ClaimedOp::Bmm { lhs, rhs } => ExprKind::Bmm {
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
                ClaimedOp::Softmax {
                    kind,
                    input: x,
                    dim,
                } => ExprKind::Softmax {
                    kind: *kind,
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
                ClaimedOp::LayerNorm {
                    input: x,
                    normalized,
                    weight,
                    bias,
                    eps,
                } => ExprKind::LayerNorm {
                    input: input(x)?,
                    normalized: input(normalized)?,
                    weight: weight.as_ref().map(&input).transpose()?,
                    bias: bias.as_ref().map(&input).transpose()?,
                    eps: *eps,
                },
                ClaimedOp::Embedding { ids, weight } => ExprKind::Embedding {
                    ids: input(ids)?,
                    weight: input(weight)?,
                },
                ClaimedOp::EmbeddingBag {
                    ids,
                    weight,
                    offsets,
                    mode,
                } => ExprKind::EmbeddingBag {
                    ids: input(ids)?,
                    weight: input(weight)?,
                    offsets: input(offsets)?,
                    mode: *mode,
                },
                ClaimedOp::Identity { .. } => {
                    return Err(
                        "internal: an identity site (dropout in eval mode) reached lowering; \
                         the walker binds its value to its operand"
                            .to_string(),
                    )
                }
                ClaimedOp::ScalarMath { .. } => {
                    return Err(
                        "internal: a math function site reached lowering; the walker places \
                         its scalar ops"
                            .to_string(),
                    )
                }
                ClaimedOp::View {
                    kind,
                    input: x,
                    sizes,
                    dim,
                } => ExprKind::View {
                    kind: *kind,
                    input: input(x)?,
                    sizes: sizes.iter().map(&input).collect::<Result<Vec<_>, _>>()?,
                    dim: *dim,
                },
                ClaimedOp::Size { input: x, dim } => ExprKind::Size {
                    input: input(x)?,
                    dim: *dim,
                },
                ClaimedOp::ReduceAll { op, input: x } => ExprKind::ReduceAll {
                    op: *op,
                    input: input(x)?,
                },
                ClaimedOp::ToScalar { kind, input: x } => ExprKind::ToScalar {
                    kind: *kind,
                    input: input(x)?,
                },
                ClaimedOp::TensorTruth { op, lhs, rhs } => ExprKind::TensorTruth {
                    op: *op,
                    lhs: input(lhs)?,
                    rhs: input(rhs)?,
                },
                ClaimedOp::Extremum {
                    op,
                    input: x,
                    dim,
                    keepdim,
                } => ExprKind::Extremum {
                    op: *op,
                    input: input(x)?,
                    dim: *dim,
                    keepdim: *keepdim,
                },
                ClaimedOp::FillLike {
                    kind,
                    input: x,
                    value,
                } => ExprKind::FillLike {
                    kind: *kind,
                    input: input(x)?,
                    value: value.as_ref().map(&input).transpose()?,
                },
                ClaimedOp::IndexSelect { input: x, ids, dim } => ExprKind::IndexSelect {
                    input: input(x)?,
                    ids: input(ids)?,
                    dim: *dim,
                },
                ClaimedOp::Normalize {
                    input: x,
                    p,
                    dim,
                    eps,
                } => ExprKind::Normalize {
                    input: input(x)?,
                    p: *p,
                    dim: *dim,
                    eps: *eps,
                },
                ClaimedOp::Elementwise { op, operands } => ExprKind::Elementwise {
                    op: *op,
                    operands: operands.iter().map(&input).collect::<Result<Vec<_>, _>>()?,
                },
                ClaimedOp::Join { kind, parts, dim } => ExprKind::Join {
                    kind: *kind,
                    parts: parts.iter().map(&input).collect::<Result<Vec<_>, _>>()?,
                    dim: *dim,
                },
            };
            let ty = ir_type(result_type)
                .ok_or_else(|| format!("result type {result_type} has no IR type"))?;
            Ok((kind, ty))
        }
    }
}
