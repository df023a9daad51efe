//! The rank-3 lane's forms that another lane already decides at rank 1/2 (ours;
//! [`Surface::Extended`] only, called from `rank3.rs` for sites with a `T` operand): the
//! reductions along a dim, `F.layer_norm` over the last dim and the elementwise ops
//! (`pow` with a scalar exponent, `maximum`, `minimum`, `where` of an inline comparison).
//! A transformer's `(B, T, D)` code is made of them: a LayerNorm, a hand-written RMSNorm
//! (`x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w`).
//!
//! The other lane reads the form (its spellings, keywords, literals) and this one only
//! says what the result is at rank 3, so a form is claimed at rank 3 exactly where it is
//! at rank 2:
//!
//! - `sum`/`mean`/`amax`/`amin` along one literal dim (`RXTP-TORCH-180`): the reduction lane
//!   reads the site with its real types, since the dim depends on the rank (`dim=-1` is 2);
//!   it gives `T` with `keepdim=True`, else `M`.
//! - `F.layer_norm(t, (n,), w, b, eps)` (`181`) and the elementwise ops (`182`, `x ** p`
//!   `183`): their forms do not depend on the rank (layer_norm normalizes the last dim,
//!   the elementwise ops broadcast), so the lanes decide the site with `T` read as `M`, and
//!   the answer is `T`.
//!
//! A refusal of the other lane keeps its message and takes this lane's code. Every op here
//! runs through ATen at rank 3 (the dense kernels are rank 1/2, and the fusion rules match
//! rank-2 inputs only), the same ATen call as eager's, so the bits are eager's.

use super::reductions;
use super::rules::{
    CODE_RANK3_ELEMENTWISE, CODE_RANK3_LAYER_NORM, CODE_RANK3_POW_OPERATOR, CODE_RANK3_REDUCE,
    RANK3_ELEMENTWISE, RANK3_LAYER_NORM, RANK3_POW_OPERATOR, RANK3_REDUCE,
};
use super::{
    claimed, input_is, retyped, ClaimOutcome, ClaimSite, ClaimedOp, Input, SiteKind, Surface,
    KEY_M, KEY_T,
};

/// The reduction targets this lane takes at rank 3 (a method's name, or the function).
pub(super) fn is_reduction(method: bool, target: &str, name: &str) -> bool {
    named(method, target, name, &["sum", "mean", "amax", "amin"])
}

/// Whether a call is one of the elementwise lane's (`pow`, `maximum`, `minimum`, `where`).
pub(super) fn is_elementwise(method: bool, target: &str, name: &str) -> bool {
    named(
        method,
        target,
        name,
        &["pow", "maximum", "minimum", "where"],
    )
}

/// Whether a call is `x.<one of names>(...)` (a method) or `torch.<one of names>(...)`.
fn named(method: bool, target: &str, name: &str, names: &[&str]) -> bool {
    if method {
        names.contains(&name)
    } else {
        target
            .strip_prefix("torch.")
            .is_some_and(|n| names.contains(&n))
    }
}

/// An outcome of another lane as this lane's: a claim under `rule` with `result_type`, a
/// refusal with `code` and the other lane's words.
fn as_rank3(
    outcome: ClaimOutcome,
    rule: &'static str,
    code: &'static str,
    result_type: impl FnOnce(&'static str) -> &'static str,
) -> ClaimOutcome {
    match outcome {
        ClaimOutcome::Claimed {
            result_type: ty,
            op,
            ..
        } => claimed(rule, result_type(ty), op),
        ClaimOutcome::Rejected { message, .. } => ClaimOutcome::Rejected { code, message },
        ClaimOutcome::NotCovered => ClaimOutcome::NotCovered,
    }
}

/// Another lane's outcome for a site whose claimed op must read the rank-3 value at one of
/// `inputs` (the reduced tensor, layer_norm's input, an elementwise operand): as this lane's;
/// `None` (the lanes with the real types decide) for a claim where the rank-3 value is in
/// another place (a weight, say).
fn delegated(
    site: &ClaimSite,
    outcome: ClaimOutcome,
    inputs: impl FnOnce(&ClaimedOp) -> Vec<Input>,
    (rule, code): (&'static str, &'static str),
    result_type: impl FnOnce(&'static str) -> &'static str,
) -> Option<ClaimOutcome> {
    if let ClaimOutcome::Claimed { op, .. } = &outcome {
        if !inputs(op).iter().any(|i| input_is(site, i, KEY_T)) {
            return None;
        }
    }
    Some(as_rank3(outcome, rule, code, result_type))
}

/// `sum`/`mean`/`amax`/`amin` of `T` along a dim: the reduction lane's answer, with the real
/// types (it knows the rank-3 result types: `T` with keepdim, `M` without).
pub(super) fn reduce(site: &ClaimSite) -> Option<ClaimOutcome> {
    let outcome = reductions::try_claim(site, Surface::Extended)?;
    let inputs = |op: &ClaimedOp| match op {
        ClaimedOp::Reduce { input, .. } => vec![*input],
        _ => vec![],
    };
    delegated(
        site,
        outcome,
        inputs,
        (RANK3_REDUCE, CODE_RANK3_REDUCE),
        |ty| ty,
    )
}

/// `F.layer_norm` of `T`: the layers lane's answer with `T` read as `M`, of type `T`.
pub(super) fn layer_norm(site: &ClaimSite) -> Option<ClaimOutcome> {
    let outcome = super::claim_with(&retyped(site, KEY_T, KEY_M), Surface::Extended);
    let inputs = |op: &ClaimedOp| match op {
        ClaimedOp::LayerNorm { input, .. } => vec![*input],
        _ => vec![],
    };
    let rule = (RANK3_LAYER_NORM, CODE_RANK3_LAYER_NORM);
    delegated(site, outcome, inputs, rule, |_| KEY_T)
}

/// `pow`/`maximum`/`minimum`/`where` (a call) or `x ** p` (an operator) with a `T` operand:
/// the elementwise lane's answer with `T` read as `M`, of type `T` (broadcasting with a
/// rank-3 operand gives rank 3).
pub(super) fn elementwise(site: &ClaimSite) -> Option<ClaimOutcome> {
    let rule = match site.kind {
        SiteKind::Binop => (RANK3_POW_OPERATOR, CODE_RANK3_POW_OPERATOR),
        _ => (RANK3_ELEMENTWISE, CODE_RANK3_ELEMENTWISE),
    };
    let outcome = super::claim_with(&retyped(site, KEY_T, KEY_M), Surface::Extended);
    let inputs = |op: &ClaimedOp| match op {
        ClaimedOp::Elementwise { operands, .. } => operands.clone(),
        _ => vec![],
    };
    delegated(site, outcome, inputs, rule, |_| KEY_T)
}
