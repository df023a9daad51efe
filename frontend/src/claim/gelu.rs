//! The GELU lane (reference `claim/gelu.py`): exact `torch.nn.functional.gelu(t)` or
//! `gelu(t, approximate="none")` on a float32 CPU rank-1/rank-2 tensor; lowers to
//! [`UnaryOp::Gelu`]. Every other shape of that target is rejected with 044.

use super::rules::{CODE_GELU_NONE, CODE_UNSUPPORTED, GELU_NONE};
use super::{
    claimed, f32_cpu_key, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, SiteKind,
};
use rextio_ir::UnaryOp;

const TARGET: &str = "torch.nn.functional.gelu";

/// No keywords, or exactly the literal `approximate="none"` typed `str`.
fn has_exact_none_option(site: &ClaimSite) -> bool {
    match site.keywords.as_slice() {
        [] => true,
        [keyword] => {
            keyword.name == "approximate"
                && keyword.arg_type.as_deref() == Some("str")
                && keyword.literal == Literal::Str("none".to_string())
        }
        _ => false,
    }
}

pub(super) fn try_claim(site: &ClaimSite) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call || site.target != TARGET {
        return None;
    }
    let one_nonliteral_operand = site.operand_types.len() == 1
        && matches!(site.operand_literals.as_slice(), [Literal::NonLiteral]);
    if site.receiver.is_some() || !one_nonliteral_operand || !has_exact_none_option(site) {
        let detail = "GELU requires one positional non-literal tensor and either no \
                      keywords or exact literal approximate='none'";
        return Some(reject(site, CODE_GELU_NONE, detail));
    }
    let Some(operand_type) = site.operand_types[0].as_deref() else {
        return Some(ClaimOutcome::NotCovered);
    };
    let Some(key) = f32_cpu_key(operand_type) else {
        let detail = format!(
            "GELU requires float32 CPU rank-1 or rank-2; got {}",
            super::pyrepr::str_repr(operand_type)
        );
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    };
    let op = ClaimedOp::Unary {
        op: UnaryOp::Gelu,
        input: Input::Operand(0),
    };
    Some(claimed(GELU_NONE, key, op))
}
