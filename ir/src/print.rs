//! The text form of functions and modules, as read back by [`crate::parse`].
//!
//! ```text
//! fn inference(%x: tensor<f32, cpu, 2>, %weight: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {
//!   %0: tensor<f32, cpu, 2> = param 0
//!   %1: tensor<f32, cpu, 2> = param 1
//!   %2: tensor<f32, cpu, 2> = linear %0, %1  # hidden
//!   return %2
//! }
//! ```
//!
//! Values are `%N` with `N` the expression's index in arena order; an entry in the function's
//! `names` table becomes a trailing `# name`. Spans are not printed. The printer never fails:
//! it also prints invalid functions (dangling operands print as the index they hold), so dumps
//! stay available when validation is what went wrong.

use std::fmt::Write as _;

use crate::expr::{ExprId, ExprKind, FusedReduce, UnaryOp};
use crate::function::{Function, Module, Stmt};

/// The text form of one function, ending with a newline after the closing `}`.
pub fn print_function(f: &Function) -> String {
    let mut out = String::new();
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| format!("%{}: {}", p.name, p.ty))
        .collect();
    // Writing into a String cannot fail, so the fmt::Results below are safely ignored.
    let _ = writeln!(out, "fn {}({}) -> {} {{", f.name, params.join(", "), f.ret);
    for (id, expr) in f.exprs.iter() {
        let _ = write!(
            out,
            "  {}: {} = {}",
            value_label(id),
            expr.ty,
            op_text(&expr.kind)
        );
        if let Some(name) = f.name_of(id).and_then(printable_name) {
            let _ = write!(out, "  # {name}");
        }
        out.push('\n');
    }
    for stmt in &f.body.stmts {
        match stmt {
            Stmt::Return(id) => {
                let _ = writeln!(out, "  return {}", value_label(*id));
            }
        }
    }
    out.push_str("}\n");
    out
}

/// The text form of a module: its functions in order, separated by one blank line. The
/// module's source name is not part of the text (the parser takes it as an argument).
pub fn print_module(m: &Module) -> String {
    m.functions
        .iter()
        .map(print_function)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `%N` for the expression at arena index `N`.
pub fn value_label(id: ExprId) -> String {
    format!("%{}", u32::from(id.into_raw()))
}

/// The right-hand side of a definition: mnemonic, operands, then attributes
/// (`mean %4, dim=1, keepdim=false`).
pub fn op_text(kind: &ExprKind) -> String {
    let mut parts: Vec<String> = kind.operands().into_iter().map(value_label).collect();
    parts.extend(attributes(kind));
    if parts.is_empty() {
        kind.mnemonic().to_string()
    } else {
        format!("{} {}", kind.mnemonic(), parts.join(", "))
    }
}

/// The non-operand parts of an op, in text order: the literal of `param`/`const.*`, or the
/// `key=value` attributes. Shared with the graph view, whose labels omit operands.
pub(crate) fn attributes(kind: &ExprKind) -> Vec<String> {
    match kind {
        ExprKind::Param(index) => vec![index.to_string()],
        ExprKind::ConstInt(value) => vec![value.to_string()],
        ExprKind::ConstBool(value) => vec![value.to_string()],
        ExprKind::Unary { .. }
        | ExprKind::Binary { .. }
        | ExprKind::Linear { .. }
        | ExprKind::Matmul { .. } => Vec::new(),
        ExprKind::Reduce { dim, keepdim, .. } | ExprKind::Argmax { dim, keepdim, .. } => {
            vec![format!("dim={dim}"), format!("keepdim={keepdim}")]
        }
        ExprKind::Softmax { dim, .. } => vec![format!("dim={dim}")],
        ExprKind::FusedLinear {
            activations,
            reduce,
            ..
        } => {
            vec![activations_text(activations), reduce_text(*reduce)]
        }
    }
}

fn activations_text(activations: &[UnaryOp]) -> String {
    let names: Vec<&str> = activations.iter().map(|op| op.name()).collect();
    format!("activations=[{}]", names.join(", "))
}

fn reduce_text(reduce: Option<FusedReduce>) -> String {
    match reduce {
        None => "reduce=none".to_string(),
        Some(FusedReduce { kind, dim, keepdim }) => {
            format!("reduce={kind}(dim={dim}, keepdim={keepdim})")
        }
    }
}

/// A name as it can appear in a `# name` comment: one line, no surrounding blanks (the parser
/// trims them). Control characters would end or corrupt the line, so they become spaces;
/// a name with nothing left is not printed.
pub(crate) fn printable_name(name: &str) -> Option<String> {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = cleaned.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}
