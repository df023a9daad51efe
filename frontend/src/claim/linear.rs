//! The linear lane (reference `claim/linear.py`): exact `torch.nn.functional.linear` with a
//! positional rank-1 bias, or without bias (omitted, positional literal `None`, or the exact
//! keyword `bias=None`).

use super::pyrepr::str_tuple_repr;
use super::rules::{CODE_LINEAR_NO_BIAS, CODE_UNSUPPORTED, LINEAR, LINEAR_NONE};
use super::{
    claimed, is_tensor_type, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, SiteKind,
    KEY_M, KEY_V,
};

const TARGET: &str = "torch.nn.functional.linear";

/// Three positional operands whose third is a literal `None` (whatever its type says).
fn third_is_literal_none(site: &ClaimSite) -> bool {
    site.operand_types.len() == 3
        && site.operand_literals.len() == 3
        && site.operand_literals[2] == Literal::None
}

fn third_type_is_none(site: &ClaimSite) -> bool {
    site.operand_types.get(2).and_then(|t| t.as_deref()) == Some("None")
}

fn has_positional_none(site: &ClaimSite) -> bool {
    third_is_literal_none(site) && third_type_is_none(site)
}

fn has_contradictory_positional_none(site: &ClaimSite) -> bool {
    third_is_literal_none(site) && !third_type_is_none(site)
}

fn has_keyword_none(site: &ClaimSite) -> bool {
    match site.keywords.as_slice() {
        [keyword] => {
            keyword.name == "bias"
                && keyword.arg_type.as_deref() == Some("None")
                && keyword.literal == Literal::None
        }
        _ => false,
    }
}

/// All operand types resolved, or `None` when any is unresolved.
fn resolved(types: &[Option<String>]) -> Option<Vec<&str>> {
    types.iter().map(|t| t.as_deref()).collect()
}

pub(super) fn try_claim(site: &ClaimSite) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call || site.target != TARGET {
        return None;
    }
    if site.receiver.is_some() {
        return Some(ClaimOutcome::NotCovered);
    }
    let arity = site.operand_types.len();
    let positional_none = site.keywords.is_empty() && has_positional_none(site);
    let keyword_none = arity == 2 && has_keyword_none(site);
    let omitted_none = arity == 2 && site.keywords.is_empty();

    if positional_none || keyword_none || omitted_none {
        let first_two = site.operand_types.get(..2).unwrap_or_default();
        let Some(input_weight) = resolved(first_two) else {
            return Some(ClaimOutcome::NotCovered);
        };
        if !input_weight.iter().all(|t| is_tensor_type(t)) {
            let detail = "input/weight types are outside the float32 CPU rank-2 tensor surface";
            return Some(reject(site, CODE_UNSUPPORTED, detail));
        }
        if input_weight != [KEY_M, KEY_M] {
            let detail = format!(
                "linear without bias requires rank-2 input/weight; got {}",
                str_tuple_repr(&input_weight)
            );
            return Some(reject(site, CODE_UNSUPPORTED, detail));
        }
        let op = ClaimedOp::Linear {
            input: Input::Operand(0),
            weight: Input::Operand(1),
            bias: None,
        };
        return Some(claimed(LINEAR_NONE, KEY_M, op));
    }

    if has_contradictory_positional_none(site) {
        let detail = "positional bias metadata contradicts literal None";
        return Some(reject(site, CODE_LINEAR_NO_BIAS, detail));
    }
    if !site.keywords.is_empty() || arity != 3 {
        let detail = "linear accepts three positional tensors, or rank-2 input/weight \
                      with omitted/literal-None bias";
        return Some(reject(site, CODE_LINEAR_NO_BIAS, detail));
    }
    let Some(operands) = resolved(&site.operand_types) else {
        return Some(ClaimOutcome::NotCovered);
    };
    if !operands.iter().all(|t| is_tensor_type(t)) {
        let detail = "operand types are outside the float32 CPU rank-1/2 tensor surface";
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    }
    if operands != [KEY_M, KEY_M, KEY_V] {
        let detail = format!(
            "linear requires float32 CPU rank-2 input and weight plus rank-1 bias; got {}",
            str_tuple_repr(&operands)
        );
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    }
    let op = ClaimedOp::Linear {
        input: Input::Operand(0),
        weight: Input::Operand(1),
        bias: Some(Input::Operand(2)),
    };
    Some(claimed(LINEAR, KEY_M, op))
}
