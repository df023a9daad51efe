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
//! Control flow prints as nested blocks (each value a statement binds with its type):
//!
//! ```text
//!   for %4: int in range(%2, %1, %3) carry(%5: tensor<f32, cpu, 2> = %0 -> %6) {
//!     %7: tensor<f32, cpu, 2> = relu %5
//!     continue %7
//!   }
//!   while carry(%8: int = %2 -> %9) {
//!     %10: bool = scalar.lt %8, %1
//!     test %10
//!   } do {
//!     ...
//!   }
//!   if %11 -> (%12: int) {
//!     yield %2
//!   } else {
//!     yield %3
//!   }
//! ```
//!
//! Values are `%N` with `N` the expression's index in arena order; an entry in the function's
//! `names` table becomes a trailing `# name`. Spans are not printed. The printer never fails:
//! it also prints invalid functions (dangling operands print as the index they hold), so dumps
//! stay available when validation is what went wrong.

use std::fmt::Write as _;

use crate::expr::{ExprId, ExprKind, FusedReduce, FusedTail, TensorScalarOp, UnaryOp, ViewKind};
use crate::function::{Block, Carried, Function, Iteration, Module, Stmt};

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
    let mut placed = vec![false; f.exprs.len()];
    print_block(f, &f.body, 1, &mut placed, &mut out);
    // Expressions no statement places (only in invalid functions) still show, as comments.
    for (id, expr) in f.exprs.iter() {
        if !placed.get(index(id)).copied().unwrap_or(true) && expr.kind != ExprKind::Bound {
            let _ = writeln!(
                out,
                "  # unplaced: {}: {} = {}",
                value_label(id),
                expr.ty,
                op_text(&expr.kind)
            );
        }
    }
    out.push_str("}\n");
    out
}

fn index(id: ExprId) -> usize {
    u32::from(id.into_raw()) as usize
}

fn mark(placed: &mut [bool], id: ExprId) {
    if let Some(slot) = placed.get_mut(index(id)) {
        *slot = true;
    }
}

/// `%N: TYPE` of a value a statement binds (`?` for one outside the arena).
fn bound_text(f: &Function, id: ExprId) -> String {
    match f.expr(id) {
        Some(expr) => format!("{}: {}", value_label(id), expr.ty),
        None => format!("{}: ?", value_label(id)),
    }
}

fn labels(values: &[ExprId]) -> String {
    values
        .iter()
        .map(|v| value_label(*v))
        .collect::<Vec<_>>()
        .join(", ")
}

fn carry_text(f: &Function, carried: &[Carried], placed: &mut [bool]) -> String {
    if carried.is_empty() {
        return String::new();
    }
    let entries: Vec<String> = carried
        .iter()
        .map(|c| {
            mark(placed, c.arg);
            mark(placed, c.result);
            format!(
                "{} = {} -> {}",
                bound_text(f, c.arg),
                value_label(c.init),
                value_label(c.result)
            )
        })
        .collect();
    format!(" carry({})", entries.join(", "))
}

fn terminator(word: &str, values: &[ExprId]) -> String {
    if values.is_empty() {
        word.to_string()
    } else {
        format!("{word} {}", labels(values))
    }
}

fn print_block(f: &Function, block: &Block, depth: usize, placed: &mut [bool], out: &mut String) {
    let pad = "  ".repeat(depth);
    for stmt in &block.stmts {
        match stmt {
            Stmt::Let(id) => {
                mark(placed, *id);
                match f.expr(*id) {
                    Some(expr) => {
                        let _ = write!(
                            out,
                            "{pad}{}: {} = {}",
                            value_label(*id),
                            expr.ty,
                            op_text(&expr.kind)
                        );
                        if let Some(name) = f.name_of(*id).and_then(printable_name) {
                            let _ = write!(out, "  # {name}");
                        }
                        out.push('\n');
                    }
                    None => {
                        let _ = writeln!(out, "{pad}# let of missing value {}", value_label(*id));
                    }
                }
            }
            Stmt::For(l) => {
                mark(placed, l.index);
                let iteration = match &l.iteration {
                    Iteration::Range { start, stop, step } => {
                        format!(
                            "range({}, {}, {})",
                            value_label(*start),
                            value_label(*stop),
                            value_label(*step)
                        )
                    }
                    Iteration::Values(values) => format!(
                        "values[{}]",
                        values
                            .iter()
                            .map(i64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                let carry = carry_text(f, &l.carried, placed);
                let _ = writeln!(
                    out,
                    "{pad}for {} in {iteration}{carry} {{",
                    bound_text(f, l.index)
                );
                print_block(f, &l.body, depth + 1, placed, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::While(l) => {
                let carry = carry_text(f, &l.carried, placed);
                let _ = writeln!(out, "{pad}while{carry} {{");
                print_block(f, &l.cond_block, depth + 1, placed, out);
                let _ = writeln!(out, "{pad}  test {}", value_label(l.cond));
                let _ = writeln!(out, "{pad}}} do {{");
                print_block(f, &l.body, depth + 1, placed, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::If(i) => {
                for result in &i.results {
                    mark(placed, *result);
                }
                let results = if i.results.is_empty() {
                    String::new()
                } else {
                    let typed: Vec<String> = i.results.iter().map(|r| bound_text(f, *r)).collect();
                    format!(" -> ({})", typed.join(", "))
                };
                let _ = writeln!(out, "{pad}if {}{results} {{", value_label(i.cond));
                print_block(f, &i.then_block, depth + 1, placed, out);
                let _ = writeln!(out, "{pad}}} else {{");
                print_block(f, &i.else_block, depth + 1, placed, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Continue(values) => {
                let _ = writeln!(out, "{pad}{}", terminator("continue", values));
            }
            Stmt::Break(values) => {
                let _ = writeln!(out, "{pad}{}", terminator("break", values));
            }
            Stmt::Yield(values) => {
                let _ = writeln!(out, "{pad}{}", terminator("yield", values));
            }
            Stmt::Return(id) => {
                let _ = writeln!(out, "{pad}return {}", value_label(*id));
            }
        }
    }
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
        ExprKind::ConstFloat(value) => vec![float_text(value.value())],
        ExprKind::Bound | ExprKind::Scalar { .. } | ExprKind::ScalarUnary { .. } => Vec::new(),
        ExprKind::Unary { .. }
        | ExprKind::Binary { .. }
        | ExprKind::TensorScalar { .. }
        | ExprKind::ParamUnary { .. }
        | ExprKind::Elementwise { .. }
        | ExprKind::Linear { .. }
        | ExprKind::Matmul { .. }
        | ExprKind::Bmm { .. }
        | ExprKind::ReduceAll { .. }
        | ExprKind::ToScalar { .. }
        | ExprKind::TensorTruth { .. } => Vec::new(),
        ExprKind::Reduce { dim, keepdim, .. } | ExprKind::Argmax { dim, keepdim, .. } => {
            vec![format!("dim={dim}"), format!("keepdim={keepdim}")]
        }
        ExprKind::Softmax { dim, .. } | ExprKind::Join { dim, .. } => vec![format!("dim={dim}")],
        ExprKind::LayerNorm { eps, .. } => vec![format!("eps={}", float_text(eps.value()))],
        ExprKind::Embedding { .. } => Vec::new(),
        ExprKind::View { kind, dim, .. } if kind.takes_dim() => vec![format!("dim={dim}")],
        // A rank-3 transpose of dims 1 and 2; the parser reads a missing dim as 0.
        ExprKind::View {
            kind: ViewKind::Transpose,
            dim,
            ..
        } if *dim != 0 => vec![format!("dim={dim}")],
        ExprKind::View { .. } => Vec::new(),
        ExprKind::Size { dim, .. } => vec![format!("dim={dim}")],
        ExprKind::BoundaryCall { callee, ret, .. } => {
            vec![format!("callee={callee}"), format!("ret={ret}")]
        }
        ExprKind::Extremum { dim, keepdim, .. } => {
            vec![format!("dim={dim}"), format!("keepdim={keepdim}")]
        }
        ExprKind::FillLike { .. } => Vec::new(),
        ExprKind::IndexSelect { dim, .. } => vec![format!("dim={dim}")],
        ExprKind::Normalize { p, dim, eps, .. } => vec![
            format!("p={}", float_text(p.value())),
            format!("dim={dim}"),
            format!("eps={}", float_text(eps.value())),
        ],
        ExprKind::EmbeddingBag { mode, .. } => vec![format!("mode={}", mode.name())],
        // The scale's value, if any, is the last operand.
        ExprKind::FusedAttention { scale, .. } => vec![format!(
            "scale={}",
            match scale {
                Some(s) if s.op == TensorScalarOp::Mul => "mul",
                Some(_) => "div",
                None => "none",
            }
        )],
        ExprKind::FusedLinear {
            prologue,
            activations,
            tail,
            bias_added,
            residual,
            norm,
            ..
        } => {
            // The row normalization's operands follow the bias; the prologue's operands, then
            // the residual, end the operand list. Each is named here only when present (most
            // fused ops have none).
            let mut parts = Vec::new();
            if let Some(n) = norm {
                parts.push(format!(
                    "norm=layer_norm(eps={}, affine={})",
                    float_text(n.eps.value()),
                    n.weight.is_some()
                ));
            }
            if !prologue.is_empty() {
                let ops: Vec<&str> = prologue.iter().map(|step| step.op.name()).collect();
                parts.push(format!("prologue=[{}]", ops.join(", ")));
            }
            parts.push(activations_text(activations));
            parts.push(tail_text(*tail));
            if *bias_added {
                parts.push("bias=added".to_string());
            }
            if let Some(r) = residual {
                parts.push(format!("residual={}", r.side()));
            }
            parts
        }
    }
}

/// A float literal that reads back to the same bits: Rust's shortest round-trip form
/// (`1.0`, `1e-7`), and `inf`, `-inf`, `nan` for the rest.
pub fn float_text(value: f64) -> String {
    if value.is_nan() {
        "nan".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{value:?}")
    }
}

fn activations_text(activations: &[UnaryOp]) -> String {
    let names: Vec<&str> = activations.iter().map(|op| op.name()).collect();
    format!("activations=[{}]", names.join(", "))
}

fn tail_text(tail: Option<FusedTail>) -> String {
    match tail {
        None => "tail=none".to_string(),
        Some(FusedTail::Reduce(FusedReduce { kind, dim, keepdim })) => {
            format!("tail={kind}(dim={dim}, keepdim={keepdim})")
        }
        Some(FusedTail::Softmax { kind, dim }) => format!("tail={kind}(dim={dim})"),
        Some(FusedTail::Argmax { dim, keepdim }) => {
            format!("tail=argmax(dim={dim}, keepdim={keepdim})")
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
