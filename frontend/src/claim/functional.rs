//! The functional lane (reference `claim/gelu.py`, generalised to the op table's
//! [`Form::Functional`] spellings): exactly `target(t)` or `target(t, <keyword>=<value>)` with
//! that literal keyword (`torch.nn.functional.gelu(t)` or `gelu(t, approximate="none")`) on a
//! float32 CPU rank-1/rank-2 tensor. A target may have several rows, one per literal option
//! (`approximate="none"`, the bare call's, and the extension `approximate="tanh"`); every
//! other shape of the target is rejected with the first row's code (044 for GELU), naming
//! the options the surface accepts.

use super::rules::CODE_UNSUPPORTED;
use rextio_ir::UnaryOp;

use super::spellings::{Form, KeywordValue, Rule, Surface};
use super::{
    claimed, f32_cpu_key, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, SiteKind,
};

/// One `Functional` row of the call's target, its form's fields read once.
#[derive(Clone, Copy)]
struct Row {
    op: UnaryOp,
    display: &'static str,
    keyword: &'static str,
    value: KeywordValue,
    rule: Rule,
    /// Whether a call with no keyword is this row's (`UnarySpelling::takes_bare_call`).
    bare: bool,
}

/// The row a call's keywords select: none selects the row that takes a bare call, exactly
/// one literal `keyword=value` (typed as Core types it) the row with that option; anything
/// else selects none.
fn selected(site: &ClaimSite, rows: &[Row]) -> Option<Row> {
    match site.keywords.as_slice() {
        [] => rows.iter().copied().find(|r| r.bare),
        [given] => rows.iter().copied().find(|r| {
            given.name == r.keyword
                && given.arg_type.as_deref() == Some(r.value.type_name())
                && given.literal == r.value.literal()
        }),
        _ => None,
    }
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call {
        return None;
    }
    // Every spelling of the target under this surface, in table order: the first decides
    // the rejections (exact GELU's code 044, as the reference's lane).
    let rows: Vec<Row> = surface
        .iter()
        .filter_map(|s| match s.form {
            Form::Functional {
                target,
                display,
                keyword: (keyword, value),
                rule,
            } if target == site.target => Some(Row {
                op: s.op,
                display,
                keyword,
                value,
                rule,
                bare: s.takes_bare_call(),
            }),
            _ => None,
        })
        .collect();
    let first = *rows.first()?;
    let display = first.display;
    let one_nonliteral_operand = site.operand_types.len() == 1
        && matches!(site.operand_literals.as_slice(), [Literal::NonLiteral]);
    let chosen = selected(site, &rows);
    let (Some(row), None, true) = (chosen, site.receiver.as_ref(), one_nonliteral_operand) else {
        // The option a call names decides its code (an `approximate="tanh"` call with a
        // literal operand is the tanh row's); a call that names no known option is the first
        // row's.
        let code = chosen.unwrap_or(first).rule.code();
        let options: Vec<String> = rows
            .iter()
            .map(|r| format!("{}={}", r.keyword, r.value.repr()))
            .collect();
        let detail = format!(
            "{display} requires one positional non-literal tensor and either no \
             keywords or exact literal {}",
            options.join(" or ")
        );
        return Some(reject(site, code, detail));
    };
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
        op: row.op,
        input: Input::Operand(0),
    };
    Some(claimed(row.rule.id(), key, op))
}
