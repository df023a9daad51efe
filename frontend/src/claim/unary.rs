//! The unary math lane (reference `claim/unary.py`), over the op table's [`Form::Math`]
//! spellings: exact `torch.{abs,neg,negative,square,exp,log,sqrt}(t)` and the matching
//! zero-argument tensor methods on float32 CPU rank-1/rank-2 values. `negative` lowers to [`UnaryOp::Neg`] but
//! keeps its own rule id and code.

use super::pyrepr::str_repr;
use super::rules::CODE_UNSUPPORTED;
use super::spellings::{Form, Surface};
use super::{
    claimed, f32_cpu_key, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal,
    SiteKind,
};
use rextio_ir::UnaryOp;

/// Operation name -> (IR op, rule id, diagnostic code), from the op table's
/// [`Form::Math`] spellings.
fn operation(surface: Surface, name: &str) -> Option<(UnaryOp, &'static str, &'static str)> {
    surface.iter().find_map(|s| match s.form {
        Form::Math { name: n, rule } if n == name => Some((s.op, rule.id(), rule.code())),
        _ => None,
    })
}

/// `torch.<op>` for one of the operations.
fn function_operation(
    surface: Surface,
    target: &str,
) -> Option<(UnaryOp, &'static str, &'static str)> {
    target
        .strip_prefix("torch.")
        .and_then(|name| operation(surface, name))
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call {
        return None;
    }
    let Some(receiver) = &site.receiver else {
        let (op, rule_id, code) = function_operation(surface, &site.target)?;
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
    if function_operation(surface, &site.target).is_some() {
        // `torch.abs` spelled with a receiver: the reference leaves it to later lanes.
        return None;
    }
    let (op, rule_id, code) = operation(surface, name)?;
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
