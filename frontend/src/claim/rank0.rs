//! The rank-0 lane (ours; [`Surface::Extended`] only): whole-tensor reductions, the values
//! they give (`S`, `TensorF32Cpu0D`, a float32 CPU tensor of rank 0) and the two ways
//! inference code reads a tensor back into Python: `.item()` / `float(t)`, and a comparison
//! used as an `if`/`while` condition (`if p.max() > 0.99: break`). Tried right after the
//! scalar math lane, before the rank-3 lane and the rank-1/2 lanes, which would otherwise
//! refuse `x.sum()` without a dim. The reference has no rank-0 type and compiles none of
//! these, so under [`Surface::Reference`] the lane has no answer.
//!
//! - `x.sum()`, `x.mean()`, `x.max()`, `x.min()`, `x.amax()`, `x.amin()` and `torch.sum(x)`
//!   ... `torch.amin(x)`, with no dim and no keyword, of a float32 CPU tensor of rank 0 to 3:
//!   `S` (`RXTP-TORCH-160`), ATen's own reduction (eager's summation order and bits).
//! - `t.item()` and `float(t)` of such a tensor: a Python `float` (`161`); a tensor without
//!   exactly one element is eager's error at run time.
//! - `a <op> b` (`== != < <= > >=`, not chained) written as an `if`/`while` condition
//!   ([`ClaimSite::truth`]; also an operand of an `and`/`or` that is the condition, and the
//!   operand of `not` anywhere, whose truth Python reads), a tensor on at least one side, the other a tensor or an
//!   `int`/`float`: a `bool` (`162`), eager's comparison (the Python number cast to float32
//!   first: `torch.tensor(0.99) > 0.99` is false) and Python's truth of its result (one
//!   element, or eager's `RuntimeError`). The same comparison anywhere else is eager's bool
//!   tensor, which compiled code has no type for: refused (`162`).
//! - `+ - * /` with an `S` operand and a float32 CPU tensor of any rank or an `int`/`float`
//!   (`163`): broadcast as eager does, the larger rank's type (`x / x.sum()`).
//! - The unary op table's spellings and `F.dropout(s, training=False)` of `S` (`164`): the
//!   rank-1/2 lanes decide the site with `S` read as `V` (their forms never depend on the
//!   rank), and a unary or identity claim of theirs becomes this lane's, of type `S`.

use super::pyrepr::str_repr;
use super::rules::{
    CODE_RANK0_BINOP, CODE_RANK0_REDUCE, CODE_RANK0_TO_SCALAR, CODE_RANK0_TRUTH, CODE_RANK0_UNARY,
    RANK0_BINOP, RANK0_REDUCE, RANK0_TO_SCALAR, RANK0_TRUTH, RANK0_UNARY,
};
use super::{
    claimed, input_is, method_name, reject, retyped, shown, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, SiteKind, Surface, KEY_M, KEY_S, KEY_T, KEY_V,
};
use rextio_ir::{BinaryOp, CompareOp, Marker, TensorScalarOp, ToScalarKind, WholeReduceOp};

/// A float32 CPU tensor of rank 0 to 3, as its `'static` key.
fn float_tensor(ty: &str) -> Option<&'static str> {
    [KEY_S, KEY_V, KEY_M, KEY_T]
        .into_iter()
        .find(|key| *key == ty)
}

/// The rank of a float32 CPU key ([`float_tensor`]).
fn rank_of(key: &str) -> u8 {
    Marker::by_key(key).map_or(0, |m| m.ty.rank)
}

fn scalar(ty: &str) -> bool {
    matches!(ty, "int" | "float")
}

fn receiver_type(site: &ClaimSite) -> Option<&str> {
    site.receiver.as_ref()?.arg_type.as_deref()
}

/// Whether the site has a rank-0 operand or receiver.
fn has_rank0(site: &ClaimSite) -> bool {
    receiver_type(site) == Some(KEY_S)
        || site
            .operand_types
            .iter()
            .chain(site.keywords.iter().map(|k| &k.arg_type))
            .any(|t| t.as_deref() == Some(KEY_S))
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if surface != Surface::Extended {
        return None;
    }
    match site.kind {
        SiteKind::Compare => truth(site),
        SiteKind::Binop => match site.target.as_str() {
            "+" | "-" | "*" | "/" if has_rank0(site) => Some(binop(site)),
            "@" if has_rank0(site) => Some(reject(
                site,
                CODE_RANK0_BINOP,
                "matmul of a rank-0 tensor is not defined (both operands need at least one dim)",
            )),
            _ => None,
        },
        // `torch.cat` / `torch.stack` of any rank are the joins lane's.
        SiteKind::Call if super::joins::join_kind(&site.target).is_some() => None,
        SiteKind::Call => call(site).or_else(|| has_rank0(site).then(|| unary(site)).flatten()),
    }
}

/// The single input of a call with no other argument: the receiver of a method with no
/// operands, or the one operand of a function. `None` when the call has keywords or more.
fn only_input(site: &ClaimSite) -> Option<(&str, Input)> {
    if !site.keywords.is_empty() {
        return None;
    }
    match (&site.receiver, site.operand_types.as_slice()) {
        (Some(receiver), []) => Some((receiver.arg_type.as_deref()?, Input::Receiver)),
        (None, [Some(ty)]) => Some((ty.as_str(), Input::Operand(0))),
        _ => None,
    }
}

/// `x.sum()` ... `torch.amin(x)`, `t.item()`, `float(t)`: claimed when the one input is a
/// float32 CPU tensor; `None` (the other lanes decide) for any other form.
fn call(site: &ClaimSite) -> Option<ClaimOutcome> {
    // `x.max(...).values` and the like are the dim-ops lane's.
    if site.part.is_some() {
        return None;
    }
    let method = site.receiver.is_some();
    let name = method_name(&site.target);
    let reduce = match (method, site.target.as_str()) {
        (true, _) => WholeReduceOp::from_method(name),
        (false, target) => target
            .strip_prefix("torch.")
            .and_then(WholeReduceOp::from_method),
    };
    let to_scalar = match (method, site.target.as_str()) {
        (true, _) if name == "item" => Some(ToScalarKind::Item),
        (false, "float") => Some(ToScalarKind::Float),
        _ => None,
    };
    if reduce.is_none() && to_scalar.is_none() {
        return None;
    }
    let (ty, input) = only_input(site)?;
    if float_tensor(ty).is_none() {
        // An int64 tensor: eager's result is an int64 tensor (or an `int`), which these
        // rules do not give. `float(n)` of a scalar and the rest are the other lanes' (or
        // the host's).
        if Marker::by_key(ty).is_some_and(|m| m.ty.dtype == rextio_ir::DType::I64) {
            let (code, what) = match reduce {
                Some(op) => (CODE_RANK0_REDUCE, format!("{}()", op.method())),
                None => (CODE_RANK0_TO_SCALAR, str_repr(&site.target)),
            };
            let detail = format!(
                "{what} of {} is not claimed (float32 CPU tensors of rank 0 to 3 only)",
                shown(ty)
            );
            return Some(reject(site, code, detail));
        }
        return None;
    }
    Some(match (reduce, to_scalar) {
        (Some(op), _) => claimed(RANK0_REDUCE, KEY_S, ClaimedOp::ReduceAll { op, input }),
        (None, Some(kind)) => claimed(
            RANK0_TO_SCALAR,
            "float",
            ClaimedOp::ToScalar { kind, input },
        ),
        (None, None) => return None,
    })
}

/// Both operand types of a two-operand site, when resolved.
fn two_operands(site: &ClaimSite) -> Option<(&str, &str)> {
    match site.operand_types.as_slice() {
        [Some(a), Some(b)] => Some((a.as_str(), b.as_str())),
        _ => None,
    }
}

/// A comparison with a tensor side: claimed as a condition, refused anywhere else.
fn truth(site: &ClaimSite) -> Option<ClaimOutcome> {
    let (left, right) = two_operands(site)?;
    let (l, r) = (float_tensor(left), float_tensor(right));
    if l.is_none() && r.is_none() {
        return None;
    }
    let op = CompareOp::from_symbol(&site.target)?;
    if !site.truth {
        let detail = format!(
            "a comparison of tensors gives a bool tensor, which compiled code has no type for; it compiles as an if/while condition (`if t {} x:`) or read as a Python value first (`t.item() {} x`)",
            site.target, site.target
        );
        return Some(reject(site, CODE_RANK0_TRUTH, detail));
    }
    let other_fits = |other: &str| float_tensor(other).is_some() || scalar(other);
    let outcome = match (l, r) {
        (Some(_), _) if other_fits(right) => ClaimedOp::TensorTruth {
            op,
            lhs: Input::Operand(0),
            rhs: Input::Operand(1),
        },
        // `0.5 < t` is Python's `t > 0.5` (the tensor's reflected method).
        (None, Some(_)) if scalar(left) => ClaimedOp::TensorTruth {
            op: op.swapped(),
            lhs: Input::Operand(1),
            rhs: Input::Operand(0),
        },
        _ => {
            let detail = format!(
                "a tensor condition compares a float32 CPU tensor with a float32 CPU tensor or an int or float; got {} and {}",
                shown(left),
                shown(right)
            );
            return Some(reject(site, CODE_RANK0_TRUTH, detail));
        }
    };
    Some(claimed(RANK0_TRUTH, "bool", outcome))
}

/// `a op b` with a rank-0 operand.
fn binop(site: &ClaimSite) -> ClaimOutcome {
    // `try_claim` sends only `+ - * /` here.
    let Some(op) = BinaryOp::from_symbol(&site.target) else {
        return ClaimOutcome::NotCovered;
    };
    let Some((left, right)) = two_operands(site) else {
        return ClaimOutcome::NotCovered;
    };
    let (lhs, rhs) = (Input::Operand(0), Input::Operand(1));
    match (float_tensor(left), float_tensor(right)) {
        (Some(l), Some(r)) => {
            let result = if rank_of(l) >= rank_of(r) { l } else { r };
            claimed(RANK0_BINOP, result, ClaimedOp::Binary { op, lhs, rhs })
        }
        (Some(_), None) if scalar(right) => claimed(
            RANK0_BINOP,
            KEY_S,
            ClaimedOp::TensorScalar {
                op: TensorScalarOp::of(op, false),
                tensor: lhs,
                scalar: rhs,
            },
        ),
        (None, Some(_)) if scalar(left) => claimed(
            RANK0_BINOP,
            KEY_S,
            ClaimedOp::TensorScalar {
                op: TensorScalarOp::of(op, true),
                tensor: rhs,
                scalar: lhs,
            },
        ),
        _ => {
            let detail = format!(
                "{} of a rank-0 tensor requires a float32 CPU tensor (rank 0 to 3) or an int or float; got {} and {}",
                site.target,
                shown(left),
                shown(right)
            );
            reject(site, CODE_RANK0_BINOP, detail)
        }
    }
}

/// The unary-op lanes decide the site with `S` read as `V`; a unary or identity claim
/// becomes this lane's, of type `S`. Any other op of theirs is refused with this lane's
/// code, naming what rank 0 takes.
fn unary(site: &ClaimSite) -> Option<ClaimOutcome> {
    let vector = retyped(site, KEY_S, KEY_V);
    let refused = || {
        let detail = format!(
            "{} of a rank-0 tensor is not claimed (rank-0 tensors take + - * /, the unary ops, item()/float() and comparisons as conditions)",
            str_repr(&site.target)
        );
        reject(site, CODE_RANK0_UNARY, detail)
    };
    match super::claim_with(&vector, Surface::Extended) {
        ClaimOutcome::Claimed {
            result_type: KEY_V,
            op: op @ (ClaimedOp::Unary { .. } | ClaimedOp::Identity { .. }),
            ..
        } => {
            let (ClaimedOp::Unary { input, .. } | ClaimedOp::Identity { input }) = &op else {
                return None;
            };
            Some(if input_is(site, input, KEY_S) {
                claimed(RANK0_UNARY, KEY_S, op)
            } else {
                refused()
            })
        }
        ClaimOutcome::Claimed { .. } => Some(refused()),
        _ => None,
    }
}
