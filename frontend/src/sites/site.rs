//! Call and operator sites: deciding one site with the claim rules (`Walker::site`), the
//! host's own "not covered" verdicts, the diagnostic and suggestion of a rejected or
//! uncovered site, and the literals a site's arguments carry (positional and keyword
//! literals, as the reference host reads them).

use rextio_ir::{Diagnostic, FloatBits, Severity};
use ruff_python_ast::{Expr, Number, UnaryOp};

use super::{display_type, Gate, Operand, SiteInput, Value, Verdict, Walker};
use crate::claim::{
    self, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, ParamArg, Receiver, SiteKind,
};
use crate::codes;
use crate::lower::{ValueDef, ValueId};
use crate::{SiteOutcome, SiteReport};

impl Walker<'_> {
    /// Decides one site, records its report and diagnostic, and returns its value.
    pub(super) fn site(&mut self, input: SiteInput) -> Value {
        // A `math` call is offered under the extended surface (the scalar math lane).
        let tensor_site = (input.kind == SiteKind::Call
            && input.target.split('.').next() == Some("torch"))
            || claim::scalar_math::offers(input.kind, &input.target, self.ctx.surface)
            || input.operands.iter().any(|o| o.value.is_plugin_typed())
            || input
                .receiver
                .as_ref()
                .is_some_and(|r| r.value.is_plugin_typed());
        let poisoned = input.callee_poisoned
            || input.operands.iter().any(|o| o.value.poisoned)
            || input.receiver.as_ref().is_some_and(|r| r.value.poisoned);

        let verdict = match &input.gate {
            Gate::Dynamic => Verdict::NotCovered {
                code: codes::NOT_LOWERED,
                message: codes::unresolved_call(&input.target),
            },
            _ if !tensor_site => self.host_not_covered(&input),
            Gate::NotOffered(reason) => Verdict::NotOffered {
                reason: reason.clone(),
            },
            Gate::Declined => self.host_not_covered(&input),
            Gate::Offer => match claim::claim_with(&claim_site(&input), self.ctx.surface) {
                ClaimOutcome::Claimed {
                    rule_id,
                    result_type,
                    op,
                } => Verdict::Claimed {
                    rule_id,
                    result_type,
                    op,
                },
                ClaimOutcome::Rejected { code, message } => Verdict::Rejected {
                    code: code.to_string(),
                    message,
                },
                ClaimOutcome::NotCovered => self.host_not_covered(&input),
            },
        };

        let (line, column) = self.ctx.lines.line_column(input.span.start);
        let mut report = SiteReport {
            line,
            column,
            kind: input.kind,
            target: input.target.clone(),
            outcome: SiteOutcome::Claimed,
            rule_id: None,
            result_type: None,
            code: None,
            message: None,
            span: input.span,
        };
        let value = match &verdict {
            Verdict::Claimed {
                rule_id,
                result_type,
                op,
            } => {
                report.rule_id = Some(rule_id.to_string());
                report.result_type = Some(display_type(Some(result_type)));
                if let ClaimedOp::ScalarMath { op, input: x, base } = op {
                    let value = self.scalar_math(&input, *op, *x, *base, result_type);
                    self.out.sites.push(report);
                    return value;
                }
                if let ClaimedOp::Identity { input: x } = op {
                    // No op: the site's value is its operand's (dropout in eval mode).
                    let value = match x {
                        claim::Input::Receiver => input.receiver.as_ref().map(|r| &r.value),
                        claim::Input::Operand(i) => input.operands.get(*i).map(|o| &o.value),
                    };
                    if let Some(value) = value.filter(|v| v.id.is_some()) {
                        let value = Value {
                            ty: Some(result_type.to_string()),
                            ..value.clone()
                        };
                        self.out.sites.push(report);
                        return value;
                    }
                }
                // A literal scalar operand (`x * 0.5`, layer_norm's `(8,)`) becomes a constant
                // placed here; only the operands the op reads as scalars (layer_norm's others
                // may be `None`, which has no native form). An op with scalar parameters
                // places its parameters itself (defaults included).
                let scalar_at: Vec<bool> = (0..input.operands.len())
                    .map(|i| match op {
                        ClaimedOp::TensorScalar { .. }
                        | ClaimedOp::Elementwise { .. }
                        | ClaimedOp::TensorTruth { .. } => true,
                        ClaimedOp::LayerNorm { normalized, .. } => {
                            *normalized == claim::Input::Operand(i)
                        }
                        ClaimedOp::View { sizes, .. } => sizes.contains(&claim::Input::Operand(i)),
                        ClaimedOp::FillLike { value, .. } => {
                            *value == Some(claim::Input::Operand(i))
                        }
                        _ => false,
                    })
                    .collect();
                let mut op = op.clone();
                let operands = if let ClaimedOp::ParamUnary { params, .. } = &mut op {
                    self.place_params(&input, params)
                } else {
                    // The claim numbers keyword values after the positional operands
                    // (`F.layer_norm(x, (n,), weight=w, bias=b)`).
                    input
                        .operands
                        .iter()
                        .zip(&scalar_at)
                        .map(|(o, scalar)| match scalar {
                            true => self.value_id(&o.value, o.span),
                            false => o.value.id,
                        })
                        .chain(input.keyword_values.iter().map(|o| o.value.id))
                        .collect()
                };
                let def = ValueDef::Op {
                    op,
                    receiver: input.receiver.as_ref().and_then(|r| r.value.id),
                    operands,
                    result_type,
                };
                let id = self.out.trace.push(def, input.expr_span);
                Value {
                    ty: Some(result_type.to_string()),
                    id: Some(id),
                    ..Value::default()
                }
            }
            Verdict::Rejected { code, message } => {
                report.outcome = SiteOutcome::Rejected;
                report.code = Some(code.clone());
                report.message = Some(message.clone());
                Value::poisoned()
            }
            Verdict::NotCovered { code, message } => {
                report.outcome = SiteOutcome::NotCovered;
                report.code = Some(code.to_string());
                report.message = Some(message.clone());
                Value::poisoned()
            }
            Verdict::NotOffered { reason } => {
                report.outcome = SiteOutcome::NotOffered;
                report.code = Some(codes::NOT_OFFERED.to_string());
                report.message = Some(codes::not_offered(reason));
                Value::poisoned()
            }
        };
        let suppressed = poisoned && matches!(verdict, Verdict::NotCovered { .. });
        let plugin_compare = input.kind == SiteKind::Compare
            && matches!(verdict, Verdict::NotCovered { .. })
            && input.operands.iter().any(|o| o.value.is_plugin_typed());
        if plugin_compare {
            // Core blocks the comparison itself once the plugin declines it.
            self.blocker(
                input.span,
                "comparing plugin-typed values is not covered by any plugin rule; compute the result with a covered operation or keep the function on the Python fallback",
            );
        } else if !suppressed {
            if let Some(diagnostic) = site_diagnostic(&input, &verdict, &report) {
                self.out.diagnostics.push(diagnostic);
            }
        }
        self.out.sites.push(report);
        value
    }

    /// The operands of a claimed op with scalar parameters: the positional operands then the
    /// keyword values (the claim's operand numbering), each parameter it reads placed as a
    /// value (a literal becomes a constant), and each default it takes appended as a float
    /// constant (its [`ParamArg`] then names that operand).
    fn place_params(&mut self, input: &SiteInput, params: &mut [ParamArg]) -> Vec<Option<ValueId>> {
        let all: Vec<&Operand> = input.operands.iter().chain(&input.keyword_values).collect();
        let mut operands: Vec<Option<ValueId>> = all.iter().map(|o| o.value.id).collect();
        for param in params.iter_mut() {
            match *param {
                ParamArg::Input(Input::Operand(i)) => {
                    if let Some(o) = all.get(i) {
                        operands[i] = self.value_id(&o.value, o.span);
                    }
                }
                ParamArg::Input(Input::Receiver) => {}
                ParamArg::Default(bits) => {
                    let id = self
                        .out
                        .trace
                        .push(ValueDef::ConstFloat(bits.value()), input.span);
                    operands.push(Some(id));
                    *param = ParamArg::Input(Input::Operand(operands.len() - 1));
                }
            }
        }
        operands
    }

    /// What the host reports for a site no rule lowers.
    fn host_not_covered(&self, input: &SiteInput) -> Verdict {
        let target = input.target.as_str();
        let exempt = self
            .ctx
            .helpers
            .get(target)
            .filter(|h| h.kind == crate::HelperKind::ExemptOther);
        let (code, message) = match input.kind {
            // An `@rextio.exempt` function that is not scalar is never a boundary call.
            SiteKind::Call if input.receiver.is_none() && exempt.is_some() => (
                codes::CALLS_FALLBACK_ONLY,
                codes::calls_fallback_only(exempt.map_or(target, |h| h.qualified.as_str())),
            ),
            SiteKind::Call
                if input.receiver.is_none() && self.ctx.plugin_functions.contains(target) =>
            {
                (
                    codes::CALLS_NATIVE_FUNCTION,
                    codes::calls_native_function(target),
                )
            }
            SiteKind::Call
                if input.receiver.is_none() && target.split('.').next() == Some("torch") =>
            {
                (codes::NOT_LOWERED, codes::external_call_not_lowered(target))
            }
            SiteKind::Call => (codes::NOT_LOWERED, codes::unresolved_call(target)),
            _ if !input.operands.iter().any(|o| o.value.is_plugin_typed()) => {
                (codes::NOT_LOWERED, codes::scalar_operator(target))
            }
            SiteKind::Binop => (codes::HOST_PLUGIN_TYPES, codes::uncovered_operator(target)),
            SiteKind::Compare => (
                codes::HOST_PLUGIN_TYPES,
                codes::uncovered_comparison(target),
            ),
        };
        Verdict::NotCovered { code, message }
    }
}

pub(super) fn claim_site(input: &SiteInput) -> ClaimSite {
    ClaimSite {
        kind: input.kind,
        target: input.target.clone(),
        operand_types: input.operands.iter().map(|o| o.value.ty.clone()).collect(),
        operand_literals: input.operands.iter().map(|o| o.literal.clone()).collect(),
        keywords: input.keywords.clone(),
        receiver: input.receiver.as_ref().map(|r| Receiver {
            arg_type: r.value.ty.clone(),
            expr_kind: r.kind,
        }),
        sequence: input.sequence,
        condition: input.condition,
        part: input.part,
        truth: input.truth,
    }
}

/// The diagnostic of a site that was not claimed.
pub(super) fn site_diagnostic(
    input: &SiteInput,
    verdict: &Verdict,
    report: &SiteReport,
) -> Option<Diagnostic> {
    let message = report.message.clone().unwrap_or_default();
    let what = if input.kind == SiteKind::Call {
        "call"
    } else {
        "operation"
    };
    match verdict {
        Verdict::Claimed { .. } => None,
        Verdict::Rejected { code, .. } => {
            let mut diagnostic = Diagnostic::error(code.clone(), message.clone())
                .with_primary(input.span, format!("rextio-torch rejects this {what}"));
            if ["type", "rank", "float32"]
                .iter()
                .any(|word| message.contains(word))
            {
                // Point at the values outside the float32 CPU surface (`b` in a linear with an
                // int64 bias, `2` in `a * 2`).
                let receiver = input.receiver.as_ref().map(|r| (&r.value, r.span));
                let operands = input.operands.iter().map(|o| (&o.value, o.span));
                for (value, span) in receiver.into_iter().chain(operands) {
                    let ty = value.ty.as_deref();
                    let plain = |t: &str| {
                        t == claim::KEY_M || t == claim::KEY_V || t == claim::casts::KEY_DTYPE
                    };
                    if ty.is_some() && !ty.is_some_and(plain) {
                        diagnostic = diagnostic
                            .with_secondary(span, format!("this is {}", display_type(ty)));
                    }
                }
            }
            if let Some(suggestion) = reject_suggestion(&input.target, &message) {
                diagnostic = diagnostic.with_suggestion(suggestion);
            }
            Some(diagnostic)
        }
        Verdict::NotCovered { code, .. } => {
            let label = match *code {
                codes::HOST_PLUGIN_TYPES => "no rextio-torch rule covers this operator".to_string(),
                codes::CALLS_NATIVE_FUNCTION => {
                    "calls a function with plugin-typed parameters".to_string()
                }
                _ => format!("this {what} is not lowered by this build"),
            };
            let mut diagnostic = Diagnostic::error(*code, message).with_primary(input.span, label);
            if let Some(suggestion) = not_covered_suggestion(&input.target) {
                diagnostic = diagnostic.with_suggestion(suggestion);
            }
            Some(diagnostic)
        }
        Verdict::NotOffered { reason } => {
            let mut diagnostic = Diagnostic::error(codes::NOT_OFFERED, message).with_primary(
                input.span,
                format!("this {what} is never offered to rextio-torch"),
            );
            diagnostic.severity = Severity::Warning;
            if reason.starts_with("keyword `out`") {
                diagnostic = diagnostic.with_suggestion(
                    "drop `out=`: compiled code returns new tensors and never writes into its arguments",
                );
            } else if reason.starts_with("keyword") {
                // Keyword values must be literal constants (`dim=1`); a tensor or a variable
                // passed by keyword is fine positionally.
                diagnostic = diagnostic.with_suggestion(
                    "pass this value positionally; keyword arguments must be literal constants such as `dim=1`",
                );
            }
            Some(diagnostic)
        }
    }
}

/// A short fix for the common plugin rejections.
fn reject_suggestion(target: &str, message: &str) -> Option<String> {
    let method = target.rsplit('.').next().unwrap_or(target);
    let suggestion = if message.contains("only zero-argument") {
        format!("call it without arguments: `.{method}()`")
    } else if message.contains("at most one positional literal dim") {
        "write dim=1, keepdim=False as keywords".to_string()
    } else if message.contains("requires literal dim=0 or dim=1")
        || message.contains("requires a literal dim=0 or dim=1")
    {
        "reduce over a literal dim=0 or dim=1".to_string()
    } else if let Some(range) = message.split("(expected a dim in ").nth(1) {
        // The extended surface's out-of-range dim: the dims there are, as eager lists them.
        format!("use a literal dim in {}", range.trim_end_matches(')'))
    } else if message.contains("keywords must be unique static literals") {
        "write dim as an int literal and keepdim as True or False".to_string()
    } else if message.contains("plus rank-1 bias") {
        "linear takes TensorF32Cpu2D input and weight and a TensorF32Cpu1D bias".to_string()
    } else if message.contains("operand types are outside") {
        "operands must be TensorF32Cpu2D or TensorF32Cpu1D values; an int or float operand of `+ - * /` is taken by the extended surface (the default), not by surface=\"reference\" or the Rextio plugin"
            .to_string()
    } else if message.contains("GELU requires one positional") {
        "write `F.gelu(x)` or `F.gelu(x, approximate=\"none\")`".to_string()
    } else if message.contains("functional elementwise calls require exactly two") {
        format!("pass exactly two tensors and no keywords: `{target}(a, b)`")
    } else if message.contains("only .matmul(other)") {
        "write `a.matmul(b)` with one tensor, or `a @ b`".to_string()
    } else if message.contains("(tensor) with one positional tensor") {
        format!("pass exactly one tensor: `{target}(x)`")
    } else {
        return None;
    };
    Some(suggestion)
}

/// A short fix for well-known calls the plugin does not cover.
fn not_covered_suggestion(target: &str) -> Option<String> {
    let method = target.rsplit('.').next().unwrap_or(target);
    let suggestion = match target {
        "torch.subtract" => "write `torch.sub(a, b)` or `a - b`".to_string(),
        "torch.multiply" => "write `torch.mul(a, b)` or `a * b`".to_string(),
        "torch.divide" => "write `torch.div(a, b)` or `a / b`".to_string(),
        "torch.nn.functional.tanh" => "write `torch.tanh(x)` or `x.tanh()`".to_string(),
        "torch.nn.functional.sigmoid" => "write `torch.sigmoid(x)` or `x.sigmoid()`".to_string(),
        _ if method.ends_with('_') && method.len() > 1 && !target.contains("<dynamic>") => {
            format!(
                "in-place ops are not supported; use `.{}()`",
                method.trim_end_matches('_')
            )
        }
        _ if target.contains('.') && ["add", "sub", "mul", "div"].contains(&method) => {
            let op = match method {
                "add" => "+",
                "sub" => "-",
                "mul" => "*",
                _ => "/",
            };
            format!("use the operator: `a {op} b`")
        }
        _ if target.starts_with("<dynamic>.") => {
            format!("bind the operand to a name first: `h = ...; h.{method}()`")
        }
        _ => return None,
    };
    Some(suggestion)
}

// -------------------------------------------------------------------- literals

/// A positional literal: signed int (unary minus folded), `None`, or a tuple of ints.
pub(super) fn positional_literal(expr: &Expr) -> Literal {
    match expr {
        Expr::NoneLiteral(_) => Literal::None,
        Expr::Tuple(tuple) => {
            let ints: Option<Vec<i64>> = tuple.elts.iter().map(int_literal).collect();
            ints.map_or(Literal::NonLiteral, Literal::IntTuple)
        }
        other => int_literal(other).map_or(Literal::NonLiteral, Literal::Int),
    }
}

/// A keyword literal: a positional literal, a bool or a string.
pub(super) fn keyword_literal(expr: &Expr) -> Literal {
    match expr {
        Expr::BooleanLiteral(boolean) => Literal::Bool(boolean.value),
        Expr::StringLiteral(string) => Literal::Str(string.value.to_str().to_string()),
        other => positional_literal(other),
    }
}

/// A float literal (unary minus folded) or a bool, as a literal: read only at the layers
/// lanes' targets (`claim::ArgumentReading::float_literals`); `None` for anything else.
pub(super) fn float_literal(expr: &Expr) -> Option<Literal> {
    let float = |expr: &Expr| match expr {
        Expr::NumberLiteral(number) => match &number.value {
            Number::Float(value) => Some(*value),
            _ => None,
        },
        _ => None,
    };
    match expr {
        Expr::BooleanLiteral(boolean) => Some(Literal::Bool(boolean.value)),
        Expr::UnaryOp(unary) if unary.op == UnaryOp::USub => {
            float(&unary.operand).map(|v| Literal::Float(FloatBits::new(-v)))
        }
        other => float(other).map(|v| Literal::Float(FloatBits::new(v))),
    }
}

pub(super) fn int_literal(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::NumberLiteral(number) => match &number.value {
            Number::Int(int) => int.as_i64(),
            _ => None,
        },
        Expr::UnaryOp(unary) if unary.op == UnaryOp::USub => match &*unary.operand {
            Expr::NumberLiteral(number) => match &number.value {
                Number::Int(int) => int.as_i64().and_then(i64::checked_neg),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// A keyword's `arg_type`: the kind of its literal (`None` for non-literals).
pub(super) fn literal_type(literal: &Literal) -> Option<&'static str> {
    match literal {
        Literal::NonLiteral => None,
        Literal::Int(_) => Some("int"),
        Literal::None => Some("None"),
        Literal::IntTuple(_) => Some("tuple"),
        Literal::Bool(_) => Some("bool"),
        Literal::Str(_) => Some("str"),
        Literal::Float(_) => Some("float"),
    }
}
