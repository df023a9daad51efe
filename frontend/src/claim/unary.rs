//! The unary math lane (reference `claim/unary.py`): exact
//! `torch.{abs,neg,negative,square,exp,log,sqrt}(t)` and the matching zero-argument tensor
//! methods on float32 CPU rank-1/rank-2 values. `negative` lowers to [`UnaryOp::Neg`] but
//! keeps its own rule id and code.

use super::pyrepr::str_repr;
use super::rules::{
    CODE_UNARY_ABS, CODE_UNARY_EXP, CODE_UNARY_LOG, CODE_UNARY_NEG, CODE_UNARY_NEGATIVE,
    CODE_UNARY_SQRT, CODE_UNARY_SQUARE, CODE_UNSUPPORTED, UNARY_ABS, UNARY_EXP, UNARY_LOG,
    UNARY_NEG, UNARY_NEGATIVE, UNARY_SQRT, UNARY_SQUARE,
};
use super::{
    claimed, f32_cpu_key, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal,
    SiteKind,
};
use rextio_ir::UnaryOp;

/// Operation name -> (IR op, rule id, diagnostic code).
fn operation(name: &str) -> Option<(UnaryOp, &'static str, &'static str)> {
    let entry = match name {
        "abs" => (UnaryOp::Abs, UNARY_ABS, CODE_UNARY_ABS),
        "neg" => (UnaryOp::Neg, UNARY_NEG, CODE_UNARY_NEG),
        "negative" => (UnaryOp::Neg, UNARY_NEGATIVE, CODE_UNARY_NEGATIVE),
        "square" => (UnaryOp::Square, UNARY_SQUARE, CODE_UNARY_SQUARE),
        "exp" => (UnaryOp::Exp, UNARY_EXP, CODE_UNARY_EXP),
        "log" => (UnaryOp::Log, UNARY_LOG, CODE_UNARY_LOG),
        "sqrt" => (UnaryOp::Sqrt, UNARY_SQRT, CODE_UNARY_SQRT),
        _ => return None,
    };
    Some(entry)
}

/// `torch.<op>` for one of the seven operations.
fn function_operation(target: &str) -> Option<(UnaryOp, &'static str, &'static str)> {
    target.strip_prefix("torch.").and_then(operation)
}

pub(super) fn try_claim(site: &ClaimSite) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call {
        return None;
    }
    let Some(receiver) = &site.receiver else {
        let (op, rule_id, code) = function_operation(&site.target)?;
        let one_nonliteral_operand = site.operand_types.len() == 1
            && matches!(site.operand_literals.as_slice(), [Literal::NonLiteral]);
        if !site.keywords.is_empty() || !one_nonliteral_operand {
            let detail = format!(
                "only {}(tensor) with one positional tensor is supported",
                site.target
            );
            return Some(reject(site, code, detail));
        }
        let Some(operand_type) = site.operand_types[0].as_deref() else {
            return Some(ClaimOutcome::NotCovered);
        };
        let Some(key) = f32_cpu_key(operand_type) else {
            let detail = format!(
                "{} requires float32 CPU rank-1 or rank-2; got {}",
                site.target,
                str_repr(operand_type)
            );
            return Some(reject(site, CODE_UNSUPPORTED, detail));
        };
        let op = ClaimedOp::Unary {
            op,
            input: Input::Operand(0),
        };
        return Some(claimed(rule_id, key, op));
    };

    let name = method_name(&site.target);
    if function_operation(&site.target).is_some() {
        // `torch.abs` spelled with a receiver: the reference leaves it to later lanes.
        return None;
    }
    let (op, rule_id, code) = operation(name)?;
    if !site.operand_types.is_empty()
        || !site.operand_literals.is_empty()
        || !site.keywords.is_empty()
    {
        let detail = format!("only zero-argument .{name}() is supported");
        return Some(reject(site, code, detail));
    }
    let Some(receiver_type) = receiver.arg_type.as_deref() else {
        return Some(ClaimOutcome::NotCovered);
    };
    let Some(key) = f32_cpu_key(receiver_type) else {
        let detail = format!(
            ".{name}() requires float32 CPU rank-1 or rank-2; got {}",
            str_repr(receiver_type)
        );
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    };
    let op = ClaimedOp::Unary {
        op,
        input: Input::Receiver,
    };
    Some(claimed(rule_id, key, op))
}
