//! The lane of elementwise selection and binary math (ours; [`Surface::Extended`] only):
//!
//! - `torch.where(lhs <cmp> rhs, a, b)` and `a.where(lhs <cmp> rhs, b)`, the condition a
//!   comparison written in the call (`x > y`, `x >= 0`, `0.5 < x`, `x == t`; `==`, `!=`, `<`,
//!   `<=`, `>`, `>=`), which the walker offers as the site's first two operands with
//!   [`ClaimSite::condition`]. Each of `lhs`, `rhs`, `a`, `b` is a float32 CPU tensor or an
//!   `int`/`float` (literal or not); at least one side of the comparison is a tensor (the
//!   condition is a bool tensor), and `a`/`b` are not both ints (eager's result would be
//!   int64). Lowers to `ElementwiseOp::Where(cmp)`.
//! - `torch.maximum(a, b)` / `torch.minimum(a, b)` / `a.maximum(b)` / `a.minimum(b)` of two
//!   float32 CPU tensors.
//! - `x ** p`, `torch.pow(x, p)`, `x.pow(p)` with an `int`/`float` exponent (literal or
//!   not). The walker offers `**` under the extended surface only.
//!
//! Tensors broadcast as the binary ops' do (M with V gives M; sizes that do not fit raise
//! eager's `RuntimeError` at run time); the result is float32, an M if any tensor is.
//!
//! Not claimed, each with the op's code (`RXTP-TORCH-100` where, `101` maximum, `102`
//! minimum, `103` pow) and a message naming the reason: a `where` whose condition is not a
//! comparison written in the call (a bool mask tensor has no marker type, so a mask passed
//! as a value is not a value compiled code has), a comparison with no tensor, two int
//! branches, a bool or non-number scalar, keywords (`out=`), a wrong operand count, a tensor
//! exponent or a tensor base raised by a scalar (`2 ** x`), a scalar given to `maximum`;
//! a tensor outside float32 CPU rank 1/2 gets `RXTP-TORCH-010`. Unresolved operand types are
//! not covered. A comparison used anywhere else is a compare site, which no lane claims
//! (Core's "comparing plugin-typed values is not covered" blocker). Under
//! [`Surface::Reference`] the lane has no answer, so every site keeps the reference outcome.

use super::pyrepr::str_repr;
use super::rules::{
    CODE_MAXIMUM, CODE_MINIMUM, CODE_POW_OPERATOR, CODE_POW_SCALAR, CODE_UNSUPPORTED,
    CODE_WHERE_COMPARE, MAXIMUM_TENSOR, MINIMUM_TENSOR, POW_OPERATOR, POW_SCALAR, WHERE_COMPARE,
};
use super::{
    claimed, f32_cpu_key, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, SiteKind, Surface, KEY_M, KEY_V,
};
use rextio_ir::{CompareOp, ElementwiseOp};

/// Whether the walker should offer a `torch.where` / `t.where` call's inline comparison as
/// the call's first two operands: `where` calls under the extended surface only.
pub fn takes_condition(target: &str, has_receiver: bool, surface: Surface) -> bool {
    surface == Surface::Extended
        && if has_receiver {
            method_name(target) == "where"
        } else {
            target == "torch.where"
        }
}

/// Whether the walker offers a `**` binop: under the extended surface only (the reference
/// host never offers one).
pub fn offers_pow(surface: Surface) -> bool {
    surface == Surface::Extended
}

/// What one operand is, once resolved.
enum Kind {
    /// A float32 CPU tensor, its key.
    Tensor(&'static str),
    Int,
    Float,
}

/// One operand's kind, or the outcome to give when it is not a tensor or number.
fn kind_of(
    site: &ClaimSite,
    ty: Option<&str>,
    code: &'static str,
    what: &str,
    scalar_ok: bool,
) -> Result<Kind, ClaimOutcome> {
    let Some(ty) = ty else {
        return Err(ClaimOutcome::NotCovered);
    };
    if let Some(key) = f32_cpu_key(ty) {
        return Ok(Kind::Tensor(key));
    }
    if is_tensor_type(ty) {
        let detail = format!("{what} type is outside the float32 CPU tensor surface");
        return Err(reject(site, CODE_UNSUPPORTED, detail));
    }
    match ty {
        "int" if scalar_ok => Ok(Kind::Int),
        "float" if scalar_ok => Ok(Kind::Float),
        _ => {
            let wanted = if scalar_ok {
                "a float32 tensor, an int or a float"
            } else {
                "a float32 tensor"
            };
            let hint = if ty == "bool" && scalar_ok {
                " (a bool is not taken as a number here: write the number)"
            } else {
                ""
            };
            let detail = format!("{what} must be {wanted}, got {}{hint}", str_repr(ty));
            Err(reject(site, code, detail))
        }
    }
}

/// The result key of tensors that broadcast: M if any is an M.
fn result_key(kinds: &[Kind]) -> Option<&'static str> {
    let keys: Vec<&str> = kinds
        .iter()
        .filter_map(|k| match k {
            Kind::Tensor(key) => Some(*key),
            _ => None,
        })
        .collect();
    if keys.contains(&KEY_M) {
        Some(KEY_M)
    } else if keys.contains(&KEY_V) {
        Some(KEY_V)
    } else {
        None
    }
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if surface != Surface::Extended {
        return None;
    }
    match site.kind {
        SiteKind::Binop if site.target == "**" => Some(claim_pow_binop(site)),
        SiteKind::Call => claim_call(site),
        _ => None,
    }
}

fn claim_call(site: &ClaimSite) -> Option<ClaimOutcome> {
    let has_receiver = site.receiver.is_some();
    let name = if has_receiver {
        method_name(&site.target)
    } else {
        site.target.strip_prefix("torch.")?
    };
    let (op, rule, code) = match name {
        "where" => (None, WHERE_COMPARE, CODE_WHERE_COMPARE),
        "maximum" => (Some(ElementwiseOp::Maximum), MAXIMUM_TENSOR, CODE_MAXIMUM),
        "minimum" => (Some(ElementwiseOp::Minimum), MINIMUM_TENSOR, CODE_MINIMUM),
        "pow" => (Some(ElementwiseOp::Pow), POW_SCALAR, CODE_POW_SCALAR),
        _ => return None,
    };
    if let Some(receiver) = &site.receiver {
        // A method on something that is not a tensor is not ours.
        match receiver.arg_type.as_deref() {
            None => return Some(ClaimOutcome::NotCovered),
            Some(ty) if !is_tensor_type(ty) => return None,
            Some(_) => {}
        }
    }
    if !site.keywords.is_empty() {
        let detail = format!(
            "{name} takes its operands positionally here (got keyword {})",
            str_repr(&site.keywords[0].name)
        );
        return Some(reject(site, code, detail));
    }
    // The operands in the op's order: the receiver (a method's tensor) first.
    let mut inputs: Vec<(Input, Option<&str>)> = Vec::new();
    if let Some(receiver) = &site.receiver {
        inputs.push((Input::Receiver, receiver.arg_type.as_deref()));
    }
    inputs.extend(
        site.operand_types
            .iter()
            .enumerate()
            .map(|(i, ty)| (Input::Operand(i), ty.as_deref())),
    );
    Some(match op {
        None => claim_where(site, &inputs, rule, code),
        Some(op) => claim_binary(site, op, &inputs, rule, code),
    })
}

/// `torch.where(lhs <cmp> rhs, a, b)` (operands `lhs, rhs, a, b`) or `a.where(lhs <cmp> rhs,
/// b)` (receiver `a`, operands `lhs, rhs, b`).
fn claim_where(
    site: &ClaimSite,
    inputs: &[(Input, Option<&str>)],
    rule: &'static str,
    code: &'static str,
) -> ClaimOutcome {
    let Some(cmp) = site.condition else {
        let detail = "where is claimed only with its condition written as a comparison in the call (torch.where(x > 0, x, 0.0)); a bool mask tensor has no marker type, so a condition passed as a value is not one compiled code has";
        return reject(site, code, detail);
    };
    // Reorder a method's operands as the function's: lhs, rhs, a (the receiver), b.
    let ordered: Vec<(Input, Option<&str>)> = match inputs {
        [receiver @ (Input::Receiver, _), lhs, rhs, other] => vec![*lhs, *rhs, *receiver, *other],
        [(Input::Operand(_), _), _, _, _] => inputs.to_vec(),
        _ => {
            let detail = "where takes a condition and two values (torch.where(cond, a, b) or a.where(cond, b))";
            return reject(site, code, detail);
        }
    };
    let names = [
        "the compared left side",
        "the compared right side",
        "input",
        "other",
    ];
    let mut kinds = Vec::with_capacity(4);
    for ((_, ty), what) in ordered.iter().zip(names) {
        match kind_of(site, *ty, code, &format!("where's {what}"), true) {
            Ok(kind) => kinds.push(kind),
            Err(outcome) => return outcome,
        }
    }
    if !kinds[..2].iter().any(|k| matches!(k, Kind::Tensor(_))) {
        let detail = format!(
            "where's condition compares no tensor ({} of two numbers is a Python bool, which eager's torch.where does not take)",
            cmp.symbol()
        );
        return reject(site, code, detail);
    }
    if matches!(kinds[2..], [Kind::Int, Kind::Int]) {
        let detail = "where of two ints gives eager an int64 tensor, which compiled code does not have (write one as a float)";
        return reject(site, code, detail);
    }
    let Some(result) = result_key(&kinds) else {
        return ClaimOutcome::NotCovered;
    };
    let op = ClaimedOp::Elementwise {
        op: ElementwiseOp::Where(cmp),
        operands: ordered.iter().map(|(input, _)| *input).collect(),
    };
    claimed(rule, result, op)
}

/// `maximum`/`minimum` of two tensors, `pow` of a tensor by a number; function or method.
fn claim_binary(
    site: &ClaimSite,
    op: ElementwiseOp,
    inputs: &[(Input, Option<&str>)],
    rule: &'static str,
    code: &'static str,
) -> ClaimOutcome {
    let [(a, a_ty), (b, b_ty)] = inputs else {
        let detail = format!("{op} takes two operands, got {}", inputs.len());
        return reject(site, code, detail);
    };
    let scalar_ok = op == ElementwiseOp::Pow;
    let first = match kind_of(site, *a_ty, code, &format!("{op}'s input"), false) {
        Ok(kind) => kind,
        Err(outcome) => return outcome,
    };
    let second_what = if scalar_ok {
        "pow's exponent".to_string()
    } else {
        format!("{op}'s other")
    };
    let second = match kind_of(site, *b_ty, code, &second_what, true) {
        Ok(kind) => kind,
        Err(outcome) => return outcome,
    };
    match (&second, scalar_ok) {
        (Kind::Tensor(_), true) => {
            let detail = "pow with a tensor exponent is not claimed (write the exponent as an int or a float)";
            return reject(site, code, detail);
        }
        (Kind::Int | Kind::Float, false) => {
            let detail = format!(
                "{op} of a tensor and a number is not claimed (eager's torch.{op} takes two tensors)"
            );
            return reject(site, code, detail);
        }
        _ => {}
    }
    let Some(result) = result_key(&[first, second]) else {
        return ClaimOutcome::NotCovered;
    };
    let op = ClaimedOp::Elementwise {
        op,
        operands: vec![*a, *b],
    };
    claimed(rule, result, op)
}

/// `x ** p`: a float32 tensor raised to an `int`/`float`.
fn claim_pow_binop(site: &ClaimSite) -> ClaimOutcome {
    let code = CODE_POW_OPERATOR;
    let [left, right] = site.operand_types.as_slice() else {
        return reject(site, code, "** takes two operands");
    };
    let (Some(left), Some(right)) = (left.as_deref(), right.as_deref()) else {
        return ClaimOutcome::NotCovered;
    };
    if f32_cpu_key(left).is_none() {
        let (code, detail) = if is_tensor_type(left) {
            (
                CODE_UNSUPPORTED,
                "base type is outside the float32 CPU tensor surface".to_string(),
            )
        } else if is_tensor_type(right) {
            (
                code,
                format!(
                    "a number raised to a tensor power ({} ** x) is not claimed; only a float32 tensor raised to an int or a float is (x ** 2)",
                    str_repr(left)
                ),
            )
        } else {
            (
                code,
                format!("** requires a float32 tensor base, got {}", str_repr(left)),
            )
        };
        return reject(site, code, detail);
    }
    let inputs = [
        (Input::Operand(0), Some(left)),
        (Input::Operand(1), Some(right)),
    ];
    claim_binary(site, ElementwiseOp::Pow, &inputs, POW_OPERATOR, code)
}

/// Python's comparison operator as a [`CompareOp`] (the six the walker offers).
pub fn compare_op(symbol: &str) -> Option<CompareOp> {
    CompareOp::from_symbol(symbol)
}
