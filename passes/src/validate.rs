//! IR validation: checks every invariant listed in `rextio_ir`'s crate docs and hands out a
//! [`Valid`] proof that later stages can demand (naga's `Validator` / `ModuleInfo` idea).
//!
//! Validation never stops at the first problem: it collects every error it finds, one
//! [`Diagnostic`] each, with the expression's span as the primary label when it has one. An
//! expression whose operands are already broken (undefined, or on mixed devices) is not
//! type-checked as well, so one mistake yields one diagnostic, not a cascade.
//!
//! # Codes
//!
//! | code | invariant | meaning |
//! |------|-----------|---------|
//! | `RXIR-001` | 1 | an operand or return refers to a value not defined before it (later in the arena, or not in it) |
//! | `RXIR-002` | 2 | an expression's declared type differs from the type [`result_type`] derives, or the op is ill-typed |
//! | `RXIR-003` | 3 | `param i` names a parameter that does not exist |
//! | `RXIR-004` | 4 | an op's tensor operands are on different devices |
//! | `RXIR-005` | 5 | the body does not end in exactly one `return` (missing, or a statement after it) |
//! | `RXIR-006` | 5 | the returned value's type differs from the function's result type |
//! | `RXIR-007` | 7 | the span or name table has an entry for an expression that does not exist |
//! | `RXIR-008` | 6 | a `fused_linear` carries a reduction the fused kernels do not implement |
//! | `RXIR-009` | 2 | a parameter or the result has a type outside the supported set (tensor rank 1 or 2) |
//! | `RXIR-010` | — | reserved for passes: a pass could not rebuild IR it was given (internal error) |

use rextio_ir::typing::{fusable_reduce, result_type};
use rextio_ir::{Device, Diagnostic, ExprId, ExprKind, Function, Span, Stmt, Type};

use crate::util::{describe, expr, index};

/// Proof that a function passed [`validate`]. Only [`validate`] can make one, so a stage that
/// takes a `Valid` may rely on every invariant without checking again.
#[derive(Clone, Copy, Debug)]
pub struct Valid<'a> {
    function: &'a Function,
}

impl<'a> Valid<'a> {
    pub fn function(&self) -> &'a Function {
        self.function
    }
}

impl std::ops::Deref for Valid<'_> {
    type Target = Function;

    fn deref(&self) -> &Function {
        self.function
    }
}

pub const OPERAND_NOT_DEFINED: &str = "RXIR-001";
pub const TYPE_MISMATCH: &str = "RXIR-002";
pub const BAD_PARAM_INDEX: &str = "RXIR-003";
pub const DEVICE_MIX: &str = "RXIR-004";
pub const BAD_RETURNS: &str = "RXIR-005";
pub const RETURN_TYPE_MISMATCH: &str = "RXIR-006";
pub const UNKNOWN_SIDE_TABLE_ENTRY: &str = "RXIR-007";
pub const MALFORMED_FUSED_OP: &str = "RXIR-008";
pub const UNSUPPORTED_TYPE: &str = "RXIR-009";
pub const PASS_INTERNAL: &str = "RXIR-010";

/// Checks every invariant of `f`; on failure returns all the errors found, in arena order
/// (parameters, expressions, body, side tables).
pub fn validate(f: &Function) -> Result<Valid<'_>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    check_signature(f, &mut errors);
    for (id, _) in f.exprs.iter() {
        check_expr(f, id, &mut errors);
    }
    check_body(f, &mut errors);
    check_side_tables(f, &mut errors);
    if errors.is_empty() {
        Ok(Valid { function: f })
    } else {
        Err(errors)
    }
}

/// A diagnostic about expression `id`, pointing at its span when it has one.
fn at(f: &Function, id: ExprId, code: &str, message: String, label: String) -> Diagnostic {
    let diagnostic = Diagnostic::error(code, message);
    match f.span_of(id) {
        Some(span) => diagnostic.with_primary(span, label),
        None => diagnostic,
    }
}

fn supported(ty: Type) -> bool {
    match ty {
        Type::Tensor(t) => (1..=2).contains(&t.rank),
        Type::Int | Type::Bool => true,
    }
}

fn check_signature(f: &Function, errors: &mut Vec<Diagnostic>) {
    for (i, param) in f.params.iter().enumerate() {
        if !supported(param.ty) {
            errors.push(
                Diagnostic::error(
                    UNSUPPORTED_TYPE,
                    format!(
                        "parameter {i} (%{}) has unsupported type {}",
                        param.name, param.ty
                    ),
                )
                .with_note("tensor types have rank 1 or 2"),
            );
        }
    }
    if !supported(f.ret) {
        errors.push(
            Diagnostic::error(
                UNSUPPORTED_TYPE,
                format!(
                    "function `{}` has unsupported result type {}",
                    f.name, f.ret
                ),
            )
            .with_note("tensor types have rank 1 or 2"),
        );
    }
}

fn check_expr(f: &Function, id: ExprId, errors: &mut Vec<Diagnostic>) {
    let Some(this) = expr(f, id) else { return };
    let what = describe(id, this);

    // Invariant 1: operands are defined before their user.
    let mut operands_ok = true;
    for operand in this.kind.operands() {
        if index(operand) >= index(id) {
            operands_ok = false;
            let defined = if index(operand) < f.exprs.len() {
                "is defined after it"
            } else {
                "does not exist"
            };
            errors.push(at(
                f,
                id,
                OPERAND_NOT_DEFINED,
                format!("{what} uses %{}, which {defined}", index(operand)),
                format!("uses %{} before its definition", index(operand)),
            ));
        }
    }
    if !operands_ok {
        return;
    }

    // Invariant 3: parameter reads name an existing parameter.
    if let ExprKind::Param(i) = this.kind {
        if f.params.get(i as usize).is_none() {
            errors.push(
                at(
                    f,
                    id,
                    BAD_PARAM_INDEX,
                    format!(
                        "{what} reads parameter {i}, but `{}` has {} parameters",
                        f.name,
                        f.params.len()
                    ),
                    format!("no parameter {i}"),
                )
                .with_note("parameters are numbered from 0"),
            );
            return;
        }
    }

    // Invariant 4: tensor operands share one device.
    let devices: Vec<(ExprId, Device)> = this
        .kind
        .operands()
        .into_iter()
        .filter_map(|operand| match expr(f, operand).map(|e| e.ty) {
            Some(Type::Tensor(t)) => Some((operand, t.device)),
            _ => None,
        })
        .collect();
    if let Some(&(_, first)) = devices.first() {
        if devices.iter().any(|&(_, device)| device != first) {
            let listed: Vec<String> = devices
                .iter()
                .map(|(op, device)| format!("%{} on {device}", index(*op)))
                .collect();
            let mut diagnostic = at(
                f,
                id,
                DEVICE_MIX,
                format!("{what} mixes devices: {}", listed.join(", ")),
                "operands on different devices".to_string(),
            );
            for (operand, device) in &devices {
                if let Some(span) = f.span_of(*operand) {
                    diagnostic = diagnostic.with_secondary(span, format!("on {device}"));
                }
            }
            errors.push(diagnostic.with_suggestion("move every operand to one device first"));
            return;
        }
    }

    // Invariant 2: the declared type is the derived one.
    let operand_ty = |operand: ExprId| expr(f, operand).map_or(Type::Int, |e| e.ty);
    match result_type(&this.kind, operand_ty, &f.params) {
        Err(e) => errors.push(at(
            f,
            id,
            TYPE_MISMATCH,
            format!("{what} is ill-typed: {e}"),
            e.to_string(),
        )),
        Ok(derived) if derived != this.ty => errors.push(
            at(
                f,
                id,
                TYPE_MISMATCH,
                format!("{what} has type {}, expected {derived}", this.ty),
                format!("expected {derived}, found {}", this.ty),
            )
            .with_note("the expected type is the one the typing rules derive from the operands"),
        ),
        Ok(_) => {}
    }

    // Invariant 6: fused ops carry only reductions the fused kernels implement.
    if let ExprKind::FusedLinear {
        reduce: Some(reduce),
        ..
    } = &this.kind
    {
        if !fusable_reduce(reduce.kind, reduce.dim) {
            errors.push(at(
                f,
                id,
                MALFORMED_FUSED_OP,
                format!(
                    "{what} fuses {}(dim={}), but fused reductions are over dim 1 of the linear result",
                    reduce.kind, reduce.dim
                ),
                "unsupported fused reduction".to_string(),
            ));
        }
    }
}

fn check_body(f: &Function, errors: &mut Vec<Diagnostic>) {
    if f.body.stmts.is_empty() {
        errors.push(Diagnostic::error(
            BAD_RETURNS,
            format!("function `{}` has no return", f.name),
        ));
    }
    for (position, stmt) in f.body.stmts.iter().enumerate() {
        let Stmt::Return(value) = *stmt;
        let span: Option<Span> = f.span_of(value);
        if position > 0 {
            let diagnostic = Diagnostic::error(
                BAD_RETURNS,
                format!(
                    "function `{}` has a statement after its return (return %{})",
                    f.name,
                    index(value)
                ),
            );
            errors.push(match span {
                Some(span) => diagnostic.with_primary(span, "unreachable return"),
                None => diagnostic,
            });
        }
        match expr(f, value) {
            None => errors.push(Diagnostic::error(
                OPERAND_NOT_DEFINED,
                format!("return %{}: the value does not exist", index(value)),
            )),
            Some(returned) if returned.ty != f.ret => errors.push(
                at(
                    f,
                    value,
                    RETURN_TYPE_MISMATCH,
                    format!(
                        "function `{}` returns {} of type {}, expected {}",
                        f.name,
                        describe(value, returned),
                        returned.ty,
                        f.ret
                    ),
                    format!("expected {}, found {}", f.ret, returned.ty),
                )
                .with_note("the expected type is the function's declared result type"),
            ),
            Some(_) => {}
        }
    }
}

fn check_side_tables(f: &Function, errors: &mut Vec<Diagnostic>) {
    let len = f.exprs.len();
    for (id, _) in f.spans.iter() {
        if index(id) >= len {
            errors.push(Diagnostic::error(
                UNKNOWN_SIDE_TABLE_ENTRY,
                format!(
                    "the span table has an entry for %{}, which does not exist",
                    index(id)
                ),
            ));
        }
    }
    for (id, name) in f.names.iter() {
        if index(id) >= len {
            errors.push(Diagnostic::error(
                UNKNOWN_SIDE_TABLE_ENTRY,
                format!(
                    "the name table names %{} `{name}`, but %{} does not exist",
                    index(id),
                    index(id)
                ),
            ));
        }
    }
}
