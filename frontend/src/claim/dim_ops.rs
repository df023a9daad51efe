//! The lane of dim extrema, fills, `index_select` and `normalize` (ours; [`Surface::Extended`]
//! only), each computed by the ATen op eager calls so the results are eager's bits:
//!
//! - `x.max(dim=d).values`, `x.min(d, keepdim).values`, `torch.max(x, d).values`,
//!   `torch.min(x, dim=d, keepdim=...).values`, and `.indices`, `[0]`, `[1]` of those: the
//!   walker offers the call with the part it is read for ([`ClaimSite::part`]). A literal int
//!   dim is required (negative counts from the end); `keepdim` a bool literal (positional or
//!   keyword). Values are float32 (M or V); indices are int64 and only of rank 1 (L: an
//!   int64 rank-2 tensor has no marker type). The bare call (`x.max(dim=1)` used as a
//!   tensor) is a `(values, indices)` named tuple, which compiled code has no value for: it
//!   is rejected naming `.values`, so the function stays on Python. `x.max()` (every dim)
//!   and `torch.max(a, b)` (elementwise) are not this lane's: they stay not covered.
//! - `torch.zeros_like(x)`, `torch.ones_like(x)`, `torch.full_like(x, v)` of a float32 CPU
//!   tensor, `v` an `int`/`float` (literal or not; cast to float32 as eager casts it, a
//!   finite float beyond float32 being eager's `RuntimeError`). Any keyword (`dtype=`,
//!   `device=`, ...) is rejected: the function stays on Python.
//! - `torch.index_select(x, d, ids)` / `x.index_select(d, ids)`: a float32 CPU tensor, a
//!   literal int dim, int64 rank-1 ids (L). Ids out of range are eager's errors at run time.
//! - `F.normalize(x, p=2.0, dim=1, eps=1e-12)`: `p`, `dim`, `eps` literals (positional or
//!   keyword, eager's defaults when left out); `out=` is rejected.
//!
//! Codes: `RXTP-TORCH-130` max over a dim, `131` min over a dim, `132` the fills, `133`
//! `index_select`, `134` `normalize`; a tensor outside float32 CPU rank 1/2 gets
//! `RXTP-TORCH-010`. Unresolved operand types are not covered. Under [`Surface::Reference`]
//! the lane has no answer, so every site keeps the reference outcome (not covered).

use super::pyrepr::{literal_repr, str_repr};
use super::reductions::{keyword_map, lookup, names_within, python_bool};
use super::rules::{
    CODE_FILL_LIKE, CODE_INDEX_SELECT, CODE_MAX_DIM, CODE_MIN_DIM, CODE_NORMALIZE,
    CODE_UNSUPPORTED, FILL_LIKE, INDEX_SELECT, MAX_DIM, MIN_DIM, NORMALIZE,
};
use super::{
    claimed, f32_cpu_key, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, Literal, ResultPart, SiteKind, Surface, KEY_L, KEY_M, KEY_V,
};
use rextio_ir::{ExtremumOp, FillKind, FloatBits, Marker};

/// The dim a literal int names on an input of key `key` (rank 1 or 2): `d` in `[-rank,
/// rank)`, a negative one counted from the end as eager counts it; `Err` is the rejection's
/// detail (eager's `IndexError` then comes from Python).
fn literal_dim(method: &str, dim: &Literal, key: &str) -> Result<u8, String> {
    let rank = Marker::by_key(key).map_or(0, |m| i64::from(m.ty.rank));
    match dim {
        Literal::Int(d) if (-rank..rank).contains(d) => Ok(d.rem_euclid(rank) as u8),
        Literal::Int(d) => Err(format!(
            "{method} dim={d} is out of range for a rank-{rank} input (expected a dim in [{}, {}])",
            -rank,
            rank - 1
        )),
        other => Err(format!(
            "{method} dim must be a literal int; got {}",
            literal_repr(other)
        )),
    }
}

/// `torch.nn.functional.normalize`.
pub const NORMALIZE_TARGET: &str = "torch.nn.functional.normalize";

/// Whether a call named `name` (a method's or `torch.` function's last segment) is one whose
/// `.values` / `.indices` / `[0]` / `[1]` the walker offers as a part
/// ([`ClaimSite::part`]): `max` and `min`, under the extended surface only.
pub fn takes_part(name: &str, surface: Surface) -> bool {
    surface == Surface::Extended && matches!(name, "max" | "min")
}

/// Whether the walker gives this call's float literals and positional bools their values
/// ([`Literal::Float`], [`Literal::Bool`]): `max`/`min` (a positional `keepdim`),
/// `full_like` (its value) and `F.normalize` (`p`, `eps`), under the extended surface.
pub fn reads_float_literals(target: &str, has_receiver: bool, surface: Surface) -> bool {
    if surface != Surface::Extended {
        return false;
    }
    let name = method_name(target);
    if has_receiver {
        matches!(name, "max" | "min")
    } else {
        matches!(target, "torch.max" | "torch.min" | "torch.full_like")
            || target == NORMALIZE_TARGET
    }
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if surface != Surface::Extended || site.kind != SiteKind::Call {
        return None;
    }
    let has_receiver = site.receiver.is_some();
    let name = if has_receiver {
        method_name(&site.target)
    } else if site.target == NORMALIZE_TARGET {
        "normalize"
    } else {
        site.target.strip_prefix("torch.")?
    };
    let fill = match name {
        "zeros_like" => Some(FillKind::Zeros),
        "ones_like" => Some(FillKind::Ones),
        "full_like" => Some(FillKind::Full),
        _ => None,
    };
    if !matches!(name, "max" | "min" | "index_select" | "normalize") && fill.is_none() {
        return None;
    }
    if let Some(receiver) = &site.receiver {
        // Only `max`/`min`/`index_select` are methods here; a method on something that is
        // not a tensor is not ours.
        if fill.is_some() || name == "normalize" {
            return None;
        }
        match receiver.arg_type.as_deref() {
            None => return Some(ClaimOutcome::NotCovered),
            Some(ty) if !is_tensor_type(ty) => return None,
            Some(_) => {}
        }
    }
    // The inputs in call order: a method's receiver first.
    let mut inputs: Vec<(Input, Option<&str>, &Literal)> = Vec::new();
    if let Some(receiver) = &site.receiver {
        inputs.push((
            Input::Receiver,
            receiver.arg_type.as_deref(),
            &Literal::NonLiteral,
        ));
    }
    for (i, ty) in site.operand_types.iter().enumerate() {
        let literal = site.operand_literals.get(i).unwrap_or(&Literal::NonLiteral);
        inputs.push((Input::Operand(i), ty.as_deref(), literal));
    }
    match (name, fill) {
        (_, Some(kind)) => Some(claim_fill(site, kind, &inputs)),
        ("max" | "min", _) => claim_extremum(site, name == "max", &inputs),
        ("index_select", _) => Some(claim_index_select(site, &inputs)),
        _ => Some(claim_normalize(site, &inputs)),
    }
}

/// The float32 CPU key of a tensor input, or the outcome: not covered when unresolved,
/// `RXTP-TORCH-010` for another tensor type, `code` for a non-tensor.
fn f32_input(
    site: &ClaimSite,
    ty: Option<&str>,
    code: &'static str,
    what: &str,
) -> Result<&'static str, ClaimOutcome> {
    let Some(ty) = ty else {
        return Err(ClaimOutcome::NotCovered);
    };
    if let Some(key) = f32_cpu_key(ty) {
        return Ok(key);
    }
    if is_tensor_type(ty) {
        let detail = format!("{what} type is outside the float32 CPU tensor surface");
        return Err(reject(site, CODE_UNSUPPORTED, detail));
    }
    let detail = format!("{what} must be a float32 tensor, got {}", str_repr(ty));
    Err(reject(site, code, detail))
}

/// `max`/`min` over a dim (module docs).
fn claim_extremum(
    site: &ClaimSite,
    max: bool,
    inputs: &[(Input, Option<&str>, &Literal)],
) -> Option<ClaimOutcome> {
    let (method, rule, code) = if max {
        ("max", MAX_DIM, CODE_MAX_DIM)
    } else {
        ("min", MIN_DIM, CODE_MIN_DIM)
    };
    let &(input, input_type, _) = inputs.first()?;
    let rest = &inputs[1..];
    let dim_keyword = site.keywords.iter().any(|k| k.name == "dim");
    // `x.max()` (every dim) and `torch.max(a, b)` (elementwise) are not this lane's.
    let dim_positional = rest.first().is_some_and(|(_, ty, _)| *ty == Some("int"));
    if !dim_keyword && !dim_positional && site.part.is_none() {
        return None;
    }
    let Some(part) = site.part else {
        let detail = format!(
            "{method}(dim=...) returns a (values, indices) named tuple, which compiled code has \
             no value for; write .values (or .indices, [0], [1]) on the call"
        );
        return Some(reject(site, code, detail));
    };
    let input_key = match f32_input(site, input_type, code, &format!("{method} input")) {
        Ok(key) => key,
        Err(outcome) => return Some(outcome),
    };
    let Some(keywords) = keyword_map(site, &[("dim", "int"), ("keepdim", "bool")]) else {
        let detail = format!("{method} keywords must be unique literals (dim: int, keepdim: bool)");
        return Some(reject(site, code, detail));
    };
    if !names_within(&keywords, &["dim", "keepdim"]) || rest.len() > 2 {
        let detail = format!("{method} over a dim takes dim and keepdim only");
        return Some(reject(site, code, detail));
    }
    let positional = |i: usize| rest.get(i).map(|(_, _, literal)| *literal);
    let dim_literal = match (positional(0), lookup(&keywords, "dim")) {
        (Some(d), None) => d,
        (None, Some(d)) => d,
        (Some(_), Some(_)) => {
            let detail = format!("{method} got dim both positionally and by keyword");
            return Some(reject(site, code, detail));
        }
        (None, None) => {
            let detail = format!(
                "{method}(...).{} needs one literal int dim ({method} over every dim returns a \
                 tensor, not a named tuple)",
                part.name()
            );
            return Some(reject(site, code, detail));
        }
    };
    if !matches!(dim_literal, Literal::Int(_)) {
        let detail = format!(
            "{method} dim must be a literal int; got {}",
            literal_repr(dim_literal)
        );
        return Some(reject(site, code, detail));
    }
    let keepdim_literal = match (positional(1), lookup(&keywords, "keepdim")) {
        (Some(k), None) | (None, Some(k)) => k,
        (None, None) => &Literal::Bool(false),
        (Some(_), Some(_)) => {
            let detail = format!("{method} got keepdim both positionally and by keyword");
            return Some(reject(site, code, detail));
        }
    };
    let Literal::Bool(keepdim) = *keepdim_literal else {
        let detail = format!(
            "{method} keepdim must be a bool literal; got {}",
            literal_repr(keepdim_literal)
        );
        return Some(reject(site, code, detail));
    };
    let dim = match literal_dim(method, dim_literal, input_key) {
        Ok(dim) => dim,
        Err(detail) => return Some(reject(site, code, detail)),
    };
    let indices = part == ResultPart::Indices;
    let result_type = match (input_key, keepdim, indices) {
        (KEY_M, true, false) => KEY_M,
        (KEY_M, false, false) | (KEY_V, true, false) => KEY_V,
        (KEY_M, false, true) | (KEY_V, true, true) => KEY_L,
        _ => {
            let detail = format!(
                "{method}(dim={dim}, keepdim={}).{} of {} does not have an already-registered \
                 rank-1/rank-2 result type",
                python_bool(keepdim),
                part.name(),
                str_repr(input_key)
            );
            return Some(reject(site, code, detail));
        }
    };
    let op = ClaimedOp::Extremum {
        op: ExtremumOp::of(max, indices),
        input,
        dim,
        keepdim,
    };
    Some(claimed(rule, result_type, op))
}

/// `zeros_like` / `ones_like` / `full_like` (module docs).
fn claim_fill(
    site: &ClaimSite,
    kind: FillKind,
    inputs: &[(Input, Option<&str>, &Literal)],
) -> ClaimOutcome {
    let code = CODE_FILL_LIKE;
    if let Some(keyword) = site.keywords.first() {
        let detail = format!(
            "{kind} is claimed without keywords (float32 like its input); keyword {} stays on \
             Python",
            str_repr(&keyword.name)
        );
        return reject(site, code, detail);
    }
    let wanted = usize::from(kind.takes_value()) + 1;
    if inputs.len() != wanted {
        let detail = if kind.takes_value() {
            format!("{kind} takes a tensor and a value (an int or float)")
        } else {
            format!("{kind} takes one tensor")
        };
        return reject(site, code, detail);
    }
    let (input, input_type, _) = inputs[0];
    let key = match f32_input(site, input_type, code, &format!("{kind} input")) {
        Ok(key) => key,
        Err(outcome) => return outcome,
    };
    let value = match inputs.get(1) {
        None => None,
        Some((_, None, _)) => return ClaimOutcome::NotCovered,
        Some((value, Some("int" | "float"), _)) => Some(*value),
        Some((_, Some(ty), _)) => {
            let detail = format!("{kind} value must be an int or float, got {}", str_repr(ty));
            return reject(site, code, detail);
        }
    };
    claimed(FILL_LIKE, key, ClaimedOp::FillLike { kind, input, value })
}

/// `index_select` (module docs).
fn claim_index_select(
    site: &ClaimSite,
    inputs: &[(Input, Option<&str>, &Literal)],
) -> ClaimOutcome {
    let code = CODE_INDEX_SELECT;
    if let Some(keyword) = site.keywords.first() {
        let detail = format!(
            "index_select takes its operands positionally here (got keyword {})",
            str_repr(&keyword.name)
        );
        return reject(site, code, detail);
    }
    let [(input, input_type, _), (_, dim_type, dim_literal), (ids, ids_type, _)] = inputs else {
        let detail = "index_select takes a tensor, a literal int dim and int64 ids";
        return reject(site, code, detail);
    };
    let key = match f32_input(site, *input_type, code, "index_select input") {
        Ok(key) => key,
        Err(outcome) => return outcome,
    };
    if *dim_type != Some("int") || !matches!(dim_literal, Literal::Int(_)) {
        let detail = format!(
            "index_select dim must be a literal int; got {}",
            literal_repr(dim_literal)
        );
        return reject(site, code, detail);
    }
    let dim = match literal_dim("index_select", dim_literal, key) {
        Ok(dim) => dim,
        Err(detail) => return reject(site, code, detail),
    };
    match ids_type {
        None => return ClaimOutcome::NotCovered,
        Some(KEY_L) => {}
        Some(ty) => {
            let detail = format!(
                "index_select ids must be an int64 rank-1 tensor (L), got {}",
                str_repr(ty)
            );
            return reject(site, code, detail);
        }
    }
    let op = ClaimedOp::IndexSelect {
        input: *input,
        ids: *ids,
        dim,
    };
    claimed(INDEX_SELECT, key, op)
}

/// A literal number as a float (`2` or `2.0`), for `normalize`'s `p` and `eps`.
fn literal_number(literal: &Literal) -> Option<f64> {
    match literal {
        Literal::Int(i) => Some(*i as f64),
        Literal::Float(f) => Some(f.value()),
        _ => None,
    }
}

/// `F.normalize(x, p, dim, eps)` (module docs).
fn claim_normalize(site: &ClaimSite, inputs: &[(Input, Option<&str>, &Literal)]) -> ClaimOutcome {
    let code = CODE_NORMALIZE;
    let Some(&(input, input_type, _)) = inputs.first() else {
        return reject(site, code, "normalize takes a tensor");
    };
    let key = match f32_input(site, input_type, code, "normalize input") {
        Ok(key) => key,
        Err(outcome) => return outcome,
    };
    let Some(keywords) = keyword_map(site, &[("dim", "int")]) else {
        let detail = "normalize keywords must be unique literals (p, eps: numbers; dim: int)";
        return reject(site, code, detail);
    };
    const NAMES: [&str; 3] = ["p", "dim", "eps"];
    if !names_within(&keywords, &NAMES) || inputs.len() > 4 {
        let detail = "normalize takes p, dim and eps only (out= is not claimed)";
        return reject(site, code, detail);
    }
    // Each of p, dim, eps: positional, keyword, or eager's default.
    let mut values: [Literal; 3] = [
        Literal::Float(FloatBits::new(2.0)),
        Literal::Int(1),
        Literal::Float(FloatBits::new(1e-12)),
    ];
    for (i, name) in NAMES.iter().enumerate() {
        match (inputs.get(i + 1), lookup(&keywords, name)) {
            (Some(_), Some(_)) => {
                let detail = format!("normalize got {name} both positionally and by keyword");
                return reject(site, code, detail);
            }
            (Some((_, _, literal)), None) => values[i] = (*literal).clone(),
            (None, Some(literal)) => values[i] = literal.clone(),
            (None, None) => {}
        }
    }
    let [p, dim_literal, eps] = &values;
    let (Some(p), Some(eps)) = (literal_number(p), literal_number(eps)) else {
        let detail = format!(
            "normalize p and eps must be number literals; got p={}, eps={}",
            literal_repr(p),
            literal_repr(eps)
        );
        return reject(site, code, detail);
    };
    if !matches!(dim_literal, Literal::Int(_)) {
        let detail = format!(
            "normalize dim must be a literal int; got {}",
            literal_repr(dim_literal)
        );
        return reject(site, code, detail);
    }
    let dim = match literal_dim("normalize", dim_literal, key) {
        Ok(dim) => dim,
        Err(detail) => return reject(site, code, detail),
    };
    let op = ClaimedOp::Normalize {
        input,
        p: FloatBits::new(p),
        dim,
        eps: FloatBits::new(eps),
    };
    claimed(NORMALIZE, key, op)
}
