//! The reduction lane (reference `claim/reductions.py`): `mean` / `sum` as receiver methods
//! or exact `torch.mean` / `torch.sum`, with a literal dim 0/1 given once (positionally or by
//! keyword) and `keepdim` omitted or a named bool literal. Legacy `tensor-{mean,sum}-dim1`
//! rule ids are chosen by syntax (method, both keywords written, M, dim 1, keepdim False);
//! every other accepted form gets the static rule. Both lower to [`ClaimedOp::Reduce`].
//! Under [`Surface::Extended`] the lane also claims the extrema `amax` / `amin` (receiver
//! methods or exact `torch.amax` / `torch.amin`) in the same forms, with rules of their own
//! (`RXTP-TORCH-062`, `063`) and no legacy rule; one int dim must be written (their
//! all-dims default is not claimed). Under [`Surface::Reference`] they are not covered, as
//! the reference lane does not know them.
//!
//! Also owns the input/positional-dim resolution, the keyword map and the dim rule
//! ([`literal_dim`]) shared with the classification lane. Under [`Surface::Extended`] a
//! negative literal dim `d` with `-rank <= d < 0` is `d + rank` (so `dim=-1` is the last
//! dim, as in eager) and gets the static rule, never a legacy `dim1` one; any other int dim
//! that is neither 0 nor 1 is rejected naming the dim and the input's rank. Under
//! [`Surface::Reference`] only the literals 0 and 1 are dims, as in the reference.
//!
//! A rank-3 input (`T`) reaches this lane from the rank-3 lane (`rank3_forms.rs`), which
//! claims the answer under its own rule: `T` with keepdim, `M` without; a dim `d` of it is
//! in `[-3, 2]`.
//!
//! One deliberate difference from the reference: a well-formed site whose tensor input is
//! unresolved (`h.mean(1)`, `torch.sum(h, 0)` with `h: None`) is not covered. The reference
//! rejects those two shapes ("accepts one tensor input/receiver ...") because it only
//! special-cases the zero-extra-operand arity; our contract is that unresolved types never
//! produce a rejection (spec §7.3). With resolved types both agree.

use super::pyrepr::{literal_repr, str_repr};
use super::rules::{
    AMAX_STATIC, AMIN_STATIC, CODE_AMAX, CODE_AMIN, CODE_MEAN, CODE_SUM, CODE_UNSUPPORTED,
    MEAN_DIM1, MEAN_STATIC, SUM_DIM1, SUM_STATIC,
};
use super::{
    claimed, f32_cpu_key, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, Literal, SiteKind, Surface, KEY_M, KEY_T, KEY_V,
};
use rextio_ir::{ReduceKind, MARKERS};

/// The tensor input and optional positional dim of a reduction/classification site.
pub(super) struct ResolvedInput<'a> {
    pub input_type: &'a str,
    pub input: Input,
    /// The positional dim literal, when the dim is positional.
    pub positional_dim: Option<&'a Literal>,
}

/// Receiver form: `recv.m([dim])`; function form: `f(input[, dim])`. A positional dim must be
/// an aligned literal typed `int`. `Err` is the lane's answer: not covered when the input's
/// type is unresolved (see the module docs), the `code` rejection when the operands are not
/// `input [, literal int dim]`.
pub(super) fn resolve_input_and_dim<'a>(
    site: &'a ClaimSite,
    method: &str,
    code: &'static str,
) -> Result<ResolvedInput<'a>, ClaimOutcome> {
    let malformed = || {
        let detail = format!(
            "{method} accepts one tensor input/receiver and at most one positional literal dim"
        );
        reject(site, code, detail)
    };
    let (base_arity, input_type, input) = match &site.receiver {
        Some(receiver) => (0, receiver.arg_type.as_deref(), Input::Receiver),
        None => {
            let first = site.operand_types.first().and_then(|t| t.as_deref());
            (1, first, Input::Operand(0))
        }
    };
    let arity = site.operand_types.len();
    if arity != base_arity && arity != base_arity + 1 {
        return Err(malformed());
    }
    let positional_dim = if arity == base_arity + 1 {
        if site.operand_literals.len() != arity {
            return Err(malformed());
        }
        let dim_type = site.operand_types[base_arity].as_deref();
        let literal = &site.operand_literals[base_arity];
        if dim_type != Some("int") || !literal.is_literal() {
            return Err(malformed());
        }
        Some(literal)
    } else {
        None
    };
    match input_type {
        None => Err(ClaimOutcome::NotCovered),
        Some(input_type) => Ok(ResolvedInput {
            input_type,
            input,
            positional_dim,
        }),
    }
}

/// Name -> literal for keywords that are unique, literal, and typed as `expected_types`
/// says for the names it lists; `None` otherwise.
pub(super) fn keyword_map<'a>(
    site: &'a ClaimSite,
    expected_types: &[(&str, &str)],
) -> Option<Vec<(&'a str, &'a Literal)>> {
    let mut values: Vec<(&str, &Literal)> = Vec::new();
    for keyword in &site.keywords {
        let name = keyword.name.as_str();
        let duplicate = values.iter().any(|(seen, _)| *seen == name);
        let wrong_type = expected_types.iter().any(|(expected_name, ty)| {
            *expected_name == name && keyword.arg_type.as_deref() != Some(ty)
        });
        if duplicate || !keyword.literal.is_literal() || wrong_type {
            return None;
        }
        values.push((name, &keyword.literal));
    }
    Some(values)
}

pub(super) fn lookup<'a>(keywords: &[(&str, &'a Literal)], name: &str) -> Option<&'a Literal> {
    keywords
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, value)| *value)
}

/// Python `set(keywords) <= allowed`.
pub(super) fn names_within(keywords: &[(&str, &Literal)], allowed: &[&str]) -> bool {
    keywords.iter().all(|(name, _)| allowed.contains(name))
}

/// Python `set(keywords) == expected` (keywords are unique).
pub(super) fn names_equal(keywords: &[(&str, &Literal)], expected: &[&str]) -> bool {
    keywords.len() == expected.len() && names_within(keywords, expected)
}

/// A dim that is an int 0 or 1 (bools excluded).
pub(super) fn static_dim(dim: &Literal) -> Option<u8> {
    match dim {
        Literal::Int(0) => Some(0),
        Literal::Int(1) => Some(1),
        _ => None,
    }
}

/// The dim `dim` names on an input typed `input_type` under `surface` (module docs); `Err`
/// is the rejection's detail.
pub(super) fn literal_dim(
    surface: Surface,
    method: &str,
    dim: &Literal,
    input_type: &str,
) -> Result<u8, String> {
    if let Some(dim) = static_dim(dim) {
        return Ok(dim);
    }
    let rank = MARKERS
        .iter()
        .find(|m| m.key == input_type)
        .map(|m| i64::from(m.ty.rank));
    match (surface, dim, rank) {
        // A dim in range is the dim it names, whether or not the op is compiled at that rank:
        // `sum(dim=2)` of a rank-3 input is not out of range (it used to be refused as if it
        // were), it is refused for what it is, like `sum(dim=-1)` of one (the rank-3 lane).
        (Surface::Extended, Literal::Int(d), Some(rank)) if (-rank..rank).contains(d) => {
            Ok(d.rem_euclid(rank) as u8)
        }
        (Surface::Extended, Literal::Int(d), Some(rank)) => Err(format!(
            "{method} dim={d} is out of range for a rank-{rank} input (expected a dim in [{}, {}])",
            -rank,
            rank - 1
        )),
        _ => Err(format!(
            "{method} requires literal dim=0 or dim=1; got dim={}",
            literal_repr(dim)
        )),
    }
}

/// Whether the dim was written as the literal `1` (a legacy `dim1` rule needs it so).
pub(super) fn written_one(dim: &Literal) -> bool {
    *dim == Literal::Int(1)
}

/// Python `str(bool)`.
pub(super) fn python_bool(value: bool) -> &'static str {
    if value {
        "True"
    } else {
        "False"
    }
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    let method = method_name(&site.target);
    if site.kind != SiteKind::Call {
        return None;
    }
    // The extrema have no legacy rule: their static rule stands in for it.
    let (kind, legacy_rule, static_rule, code, function_target) = match (method, surface) {
        ("mean", _) => (
            ReduceKind::Mean,
            MEAN_DIM1,
            MEAN_STATIC,
            CODE_MEAN,
            "torch.mean",
        ),
        ("sum", _) => (ReduceKind::Sum, SUM_DIM1, SUM_STATIC, CODE_SUM, "torch.sum"),
        ("amax", Surface::Extended) => (
            ReduceKind::Amax,
            AMAX_STATIC,
            AMAX_STATIC,
            CODE_AMAX,
            "torch.amax",
        ),
        ("amin", Surface::Extended) => (
            ReduceKind::Amin,
            AMIN_STATIC,
            AMIN_STATIC,
            CODE_AMIN,
            "torch.amin",
        ),
        _ => return None,
    };
    let extremum = matches!(kind, ReduceKind::Amax | ReduceKind::Amin);
    if site.receiver.is_none() && site.target != function_target {
        return Some(ClaimOutcome::NotCovered);
    }

    let ResolvedInput {
        input_type,
        input,
        positional_dim,
    } = match resolve_input_and_dim(site, method, code) {
        Ok(resolved) => resolved,
        Err(outcome) => return Some(outcome),
    };

    let tuple_dim = site
        .keywords
        .iter()
        .any(|k| k.name == "dim" && matches!(k.literal, Literal::IntTuple(_)));
    if extremum && tuple_dim {
        let detail = format!("{method} takes one int dim, not a tuple of dims");
        return Some(reject(site, code, detail));
    }
    let expected = [("dim", "int"), ("keepdim", "bool")];
    let Some(keywords) = keyword_map(site, &expected) else {
        let detail = format!("{method} keywords must be unique static literals");
        return Some(reject(site, code, detail));
    };
    let allowed: &[&str] = if positional_dim.is_some() {
        &["keepdim"]
    } else {
        &["dim", "keepdim"]
    };
    if !names_within(&keywords, allowed) {
        let detail = format!("unsupported or duplicate positional/keyword options for {method}");
        return Some(reject(site, code, detail));
    }
    let Some(dim_literal) = positional_dim.or_else(|| lookup(&keywords, "dim")) else {
        let detail = if extremum {
            format!(
                "{method} requires one literal int dim (dim=-1, 0 or 1 on a matrix); {method} \
                 over every dim (no dim) is not claimed"
            )
        } else {
            format!("{method} requires a literal dim=0 or dim=1")
        };
        return Some(reject(site, code, detail));
    };
    let keepdim_literal = lookup(&keywords, "keepdim").unwrap_or(&Literal::Bool(false));
    let dim = match literal_dim(surface, method, dim_literal, input_type) {
        Ok(dim) => dim,
        Err(detail) => return Some(reject(site, code, detail)),
    };
    let Literal::Bool(keepdim) = *keepdim_literal else {
        let detail = format!(
            "{method} keepdim must be a bool literal; got {}",
            literal_repr(keepdim_literal)
        );
        return Some(reject(site, code, detail));
    };
    // The reference's lanes take an int64 tensor on to the result-type rule; the extrema
    // (ours) say at once that it is outside the float32 surface.
    let float32 = f32_cpu_key(input_type).is_some() || input_type == KEY_T;
    if !is_tensor_type(input_type) || (extremum && !float32) {
        let detail = "input type is outside the float32 CPU tensor surface";
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    }
    let result_type = match (input_type, dim, keepdim) {
        (KEY_M, _, true) => KEY_M,
        (KEY_M, _, false) => KEY_V,
        (KEY_V, 0, true) => KEY_V,
        // A rank-3 input comes here from the rank-3 lane (`rank3_forms.rs`), which claims
        // the answer under its own rule.
        (KEY_T, _, true) => KEY_T,
        (KEY_T, _, false) => KEY_M,
        _ => {
            let detail = format!(
                "{method}(dim={dim}, keepdim={}) on {} does not have an already-registered \
                 rank-1/rank-2 result type",
                python_bool(keepdim),
                str_repr(input_type)
            );
            return Some(reject(site, code, detail));
        }
    };

    let is_legacy = site.receiver.is_some()
        && positional_dim.is_none()
        && input_type == KEY_M
        && written_one(dim_literal)
        && !keepdim
        && names_equal(&keywords, &["dim", "keepdim"]);
    let rule_id = if is_legacy { legacy_rule } else { static_rule };
    let op = ClaimedOp::Reduce {
        kind,
        input,
        dim,
        keepdim,
    };
    Some(claimed(rule_id, result_type, op))
}
