//! The log_softmax lane (ours; [`Surface::Extended`] only): `t.log_softmax(dim)`,
//! `torch.log_softmax(t, dim)` and `torch.nn.functional.log_softmax(t, dim)`, with one
//! literal int dim, positional or by keyword, normalized as the reduction lane does
//! ([`literal_dim`]: `dim=-1` is the last dim). The result keeps the input's type (M, or V
//! over dim 0) and lowers to [`ClaimedOp::Softmax`] with [`SoftmaxKind::LogSoftmax`].
//!
//! Not claimed, each with this lane's code (`RXTP-TORCH-060`, or `061` for the functional
//! spelling) and a message naming the reason: a `dtype=` keyword (the result is float32;
//! converting is not part of the op here), a missing dim (eager's implicit dim is
//! deprecated and warns), a non-literal or out-of-range dim, any other keyword or operand.
//! Under [`Surface::Reference`] the lane has no answer: the reference does not know
//! `log_softmax`, so the site is not covered, as there.

use super::pyrepr::str_repr;
use super::reductions::{keyword_map, literal_dim, lookup, names_within, resolve_input_and_dim};
use super::rules::{
    CODE_FUNCTIONAL_LOG_SOFTMAX, CODE_LOG_SOFTMAX, CODE_UNSUPPORTED, FUNCTIONAL_LOG_SOFTMAX,
    LOG_SOFTMAX_STATIC,
};
use super::{
    claimed, f32_cpu_key, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp, SiteKind,
    Surface, KEY_M, KEY_V,
};
use rextio_ir::SoftmaxKind;

const METHOD: &str = "log_softmax";
const FUNCTION_TARGET: &str = "torch.log_softmax";
const FUNCTIONAL_TARGET: &str = "torch.nn.functional.log_softmax";

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call || surface != Surface::Extended {
        return None;
    }
    if method_name(&site.target) != METHOD {
        return None;
    }
    let functional = site.receiver.is_none() && site.target == FUNCTIONAL_TARGET;
    if site.receiver.is_none() && site.target != FUNCTION_TARGET && !functional {
        return Some(ClaimOutcome::NotCovered);
    }
    let (rule_id, code) = if functional {
        (FUNCTIONAL_LOG_SOFTMAX, CODE_FUNCTIONAL_LOG_SOFTMAX)
    } else {
        (LOG_SOFTMAX_STATIC, CODE_LOG_SOFTMAX)
    };

    let resolved = match resolve_input_and_dim(site, METHOD, code) {
        Ok(resolved) => resolved,
        Err(outcome) => return Some(outcome),
    };
    if site.keywords.iter().any(|k| k.name == "dtype") {
        let detail = "log_softmax with dtype= is not claimed (the result keeps the input's \
                      float32; convert before or after the call)";
        return Some(reject(site, code, detail));
    }
    let Some(keywords) = keyword_map(site, &[("dim", "int")]) else {
        let detail = "log_softmax keywords must be unique static literals";
        return Some(reject(site, code, detail));
    };
    let allowed: &[&str] = if resolved.positional_dim.is_some() {
        &[]
    } else {
        &["dim"]
    };
    if !names_within(&keywords, allowed) {
        let detail = "unsupported or duplicate positional/keyword options for log_softmax";
        return Some(reject(site, code, detail));
    }
    let Some(dim_literal) = resolved.positional_dim.or_else(|| lookup(&keywords, "dim")) else {
        let detail = "log_softmax requires a literal int dim (eager's implicit dim choice is \
                      deprecated and not claimed)";
        return Some(reject(site, code, detail));
    };
    let input_type = resolved.input_type;
    let dim = match literal_dim(surface, METHOD, dim_literal, input_type) {
        Ok(dim) => dim,
        Err(detail) => return Some(reject(site, code, detail)),
    };
    if f32_cpu_key(input_type).is_none() {
        let detail = "input type is outside the float32 CPU tensor surface";
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    }
    let result_type = match (input_type, dim) {
        (KEY_V, 0) => KEY_V,
        (KEY_M, _) => KEY_M,
        _ => {
            let detail = format!(
                "log_softmax(dim={dim}) on {} does not have an existing exact result type",
                str_repr(input_type)
            );
            return Some(reject(site, code, detail));
        }
    };
    let op = ClaimedOp::Softmax {
        kind: SoftmaxKind::LogSoftmax,
        input: resolved.input,
        dim,
    };
    Some(claimed(rule_id, result_type, op))
}
