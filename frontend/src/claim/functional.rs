//! The functional lane (reference `claim/gelu.py`, generalised to the op table's
//! [`Form::Functional`] spellings): exactly `target(t)` or `target(t, <keyword>=<value>)` with
//! that literal keyword (`torch.nn.functional.gelu(t)` or `gelu(t, approximate="none")`) on a
//! float32 CPU rank-1/rank-2 tensor. Every other shape of the target is rejected with the
//! spelling's code (044 for GELU).

use super::rules::CODE_UNSUPPORTED;
use super::spellings::{Form, KeywordValue, Surface};
use super::{
    claimed, f32_cpu_key, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, SiteKind,
};

/// No keywords, or exactly the one literal `keyword=value`, typed as Core types it.
fn has_exact_option(site: &ClaimSite, keyword: &str, value: KeywordValue) -> bool {
    match site.keywords.as_slice() {
        [] => true,
        [given] => {
            given.name == keyword
                && given.arg_type.as_deref() == Some(value.type_name())
                && given.literal == value.literal()
        }
        _ => false,
    }
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call {
        return None;
    }
    let (op, display, (keyword, value), rule) = surface.iter().find_map(|s| match s.form {
        Form::Functional {
            target,
            display,
            keyword,
            rule,
        } if target == site.target => Some((s.op, display, keyword, rule)),
        _ => None,
    })?;
    let one_nonliteral_operand = site.operand_types.len() == 1
        && matches!(site.operand_literals.as_slice(), [Literal::NonLiteral]);
    if site.receiver.is_some() || !one_nonliteral_operand || !has_exact_option(site, keyword, value)
    {
        let detail = format!(
            "{display} requires one positional non-literal tensor and either no \
             keywords or exact literal {keyword}={}",
            value.repr()
        );
        return Some(reject(site, rule.code(), detail));
    }
    let Some(operand_type) = site.operand_types[0].as_deref() else {
        return Some(ClaimOutcome::NotCovered);
    };
    let Some(key) = f32_cpu_key(operand_type) else {
        let detail = format!(
            "{display} requires float32 CPU rank-1 or rank-2; got {}",
            super::pyrepr::str_repr(operand_type)
        );
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    };
    let op = ClaimedOp::Unary {
        op,
        input: Input::Operand(0),
    };
    Some(claimed(rule.id(), key, op))
}
