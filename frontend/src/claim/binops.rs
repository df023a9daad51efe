//! The binary-op lane (reference `claim/binops.py`), sub-lanes in reference order:
//! exact `torch.add/sub/mul/div(a, b)` calls; the `+ * - /` binops (same rank, or rank-2 with
//! rank-1 trailing broadcast in either order); the `@` binop; `torch.matmul(a, b)` and
//! `recv.matmul(other)`. Matmul accepts M@M -> M and M@V / V@M -> V; 035/036 are used only
//! when a rank-1 operand is involved.
//!
//! Under the extended surface only, `+ - * /` also take a float32 CPU tensor with an `int` or
//! `float` scalar in either order (`RXTP-TORCH-055`..`058`, ours); the reference rejects
//! those with `RXTP-TORCH-010`, and so does the reference surface.

use super::pyrepr::str_repr;
use super::rules::{
    ADD_BROADCAST, ADD_SAME, ADD_SCALAR, CODE_ADD, CODE_ADD_SCALAR, CODE_DIV, CODE_DIV_SCALAR,
    CODE_FUNCTION_ADD, CODE_FUNCTION_DIV, CODE_FUNCTION_MUL, CODE_FUNCTION_SUB, CODE_MATMUL,
    CODE_MATMUL_CALL, CODE_MATMUL_CALL_MIXED, CODE_MATMUL_MIXED, CODE_MUL, CODE_MUL_SCALAR,
    CODE_SUB, CODE_SUB_SCALAR, CODE_UNSUPPORTED, DIV_BROADCAST, DIV_SAME, DIV_SCALAR, FUNCTION_ADD,
    FUNCTION_DIV, FUNCTION_MUL, FUNCTION_SUB, MATMUL_2D, MATMUL_CALL_2D, MATMUL_CALL_MIXED,
    MATMUL_MIXED, MUL_BROADCAST, MUL_SAME, MUL_SCALAR, SUB_BROADCAST, SUB_SAME, SUB_SCALAR,
};
use super::{
    claimed, f32_cpu_key, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, Literal, SiteKind, Surface, KEY_M, KEY_V,
};
use rextio_ir::{BinaryOp, TensorScalarOp};

const OPERANDS_OUTSIDE: &str = "operand types are outside the float32 CPU rank-1/2 tensor surface";

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    match site.kind {
        SiteKind::Call => claim_functional_elementwise(site).or_else(|| claim_matmul_call(site)),
        SiteKind::Binop => {
            claim_elementwise_binop(site, surface).or_else(|| claim_matmul_binop(site))
        }
        SiteKind::Compare => None,
    }
}

/// The existing operator matrix for two float32 CPU tensors: same rank keeps the type,
/// M with V (either order) gives M.
fn elementwise_result(left: &str, right: &str) -> Option<&'static str> {
    let left = f32_cpu_key(left)?;
    let right = f32_cpu_key(right)?;
    if left == right {
        Some(left)
    } else {
        Some(KEY_M)
    }
}

/// Both operand types when there are exactly two and both are resolved.
fn resolved_pair(site: &ClaimSite) -> Option<(&str, &str)> {
    match site.operand_types.as_slice() {
        [Some(left), Some(right)] => Some((left.as_str(), right.as_str())),
        _ => None,
    }
}

/// `torch.add/sub/mul/div(a, b)`: two positional non-literal tensors, no keywords.
fn claim_functional_elementwise(site: &ClaimSite) -> Option<ClaimOutcome> {
    let (op, rule_id, code) = match site.target.as_str() {
        "torch.add" => (BinaryOp::Add, FUNCTION_ADD, CODE_FUNCTION_ADD),
        "torch.sub" => (BinaryOp::Sub, FUNCTION_SUB, CODE_FUNCTION_SUB),
        "torch.mul" => (BinaryOp::Mul, FUNCTION_MUL, CODE_FUNCTION_MUL),
        "torch.div" => (BinaryOp::Div, FUNCTION_DIV, CODE_FUNCTION_DIV),
        _ => return None,
    };
    let two_nonliteral_operands = site.operand_types.len() == 2
        && matches!(
            site.operand_literals.as_slice(),
            [Literal::NonLiteral, Literal::NonLiteral]
        );
    if site.receiver.is_some() || !site.keywords.is_empty() || !two_nonliteral_operands {
        let detail = "functional elementwise calls require exactly two positional tensor operands";
        return Some(reject(site, code, detail));
    }
    let Some((left, right)) = resolved_pair(site) else {
        return Some(ClaimOutcome::NotCovered);
    };
    if !is_tensor_type(left) || !is_tensor_type(right) {
        return Some(reject(site, CODE_UNSUPPORTED, OPERANDS_OUTSIDE));
    }
    let Some(result_type) = elementwise_result(left, right) else {
        let detail = format!(
            "unsupported functional elementwise operand types {} and {}",
            str_repr(left),
            str_repr(right)
        );
        return Some(reject(site, code, detail));
    };
    let op = ClaimedOp::Binary {
        op,
        lhs: Input::Operand(0),
        rhs: Input::Operand(1),
    };
    Some(claimed(rule_id, result_type, op))
}

/// `a + b`, `a * b`, `a - b`, `a / b` on float32 CPU rank-1/rank-2 tensors (and, under the
/// extended surface, one of them a Python scalar).
fn claim_elementwise_binop(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    let (op, same_rule, broadcast_rule, code) = match site.target.as_str() {
        "+" => (BinaryOp::Add, ADD_SAME, ADD_BROADCAST, CODE_ADD),
        "*" => (BinaryOp::Mul, MUL_SAME, MUL_BROADCAST, CODE_MUL),
        "-" => (BinaryOp::Sub, SUB_SAME, SUB_BROADCAST, CODE_SUB),
        "/" => (BinaryOp::Div, DIV_SAME, DIV_BROADCAST, CODE_DIV),
        _ => return None,
    };
    let symbol = site.target.as_str();
    if site.receiver.is_some() || !site.keywords.is_empty() {
        let detail = format!("only binary {symbol} between two tensor operands is supported");
        return Some(reject(site, code, detail));
    }
    if site.operand_types.len() != 2 {
        let detail = format!("elementwise {symbol} requires exactly two operands");
        return Some(reject(site, code, detail));
    }
    let Some((left, right)) = resolved_pair(site) else {
        return Some(ClaimOutcome::NotCovered);
    };
    if surface == Surface::Extended {
        if let Some(outcome) = claim_scalar_operand(site, op, left, right) {
            return Some(outcome);
        }
    }
    if !is_tensor_type(left) || !is_tensor_type(right) {
        return Some(reject(site, CODE_UNSUPPORTED, OPERANDS_OUTSIDE));
    }
    let Some(result_type) = elementwise_result(left, right) else {
        let detail = format!(
            "{symbol} requires float32 CPU rank-1/2 operands; got {}, {}",
            str_repr(left),
            str_repr(right)
        );
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    };
    let rule_id = if left == right {
        same_rule
    } else {
        broadcast_rule
    };
    let op = ClaimedOp::Binary {
        op,
        lhs: Input::Operand(0),
        rhs: Input::Operand(1),
    };
    Some(claimed(rule_id, result_type, op))
}

/// `x op s` / `s op x`: a float32 CPU rank-1/2 tensor and a Python `int` or `float` (ours,
/// extended surface). The result is the tensor's type (a Python scalar never changes a float32
/// tensor's dtype). `None` when neither operand is such a tensor or the other one is a tensor
/// too (the tensor rules decide); a scalar of another type (`bool`, `str`, `None`, ...) is
/// rejected with the op's code.
fn claim_scalar_operand(
    site: &ClaimSite,
    op: BinaryOp,
    left: &str,
    right: &str,
) -> Option<ClaimOutcome> {
    let (tensor_key, scalar_type, scalar_first) = match (f32_cpu_key(left), f32_cpu_key(right)) {
        (Some(key), None) if !is_tensor_type(right) => (key, right, false),
        (None, Some(key)) if !is_tensor_type(left) => (key, left, true),
        _ => return None,
    };
    let (rule_id, code) = match op {
        BinaryOp::Add => (ADD_SCALAR, CODE_ADD_SCALAR),
        BinaryOp::Sub => (SUB_SCALAR, CODE_SUB_SCALAR),
        BinaryOp::Mul => (MUL_SCALAR, CODE_MUL_SCALAR),
        BinaryOp::Div => (DIV_SCALAR, CODE_DIV_SCALAR),
    };
    if !matches!(scalar_type, "int" | "float") {
        let hint = if scalar_type == "bool" {
            " (a bool is not taken as a number here: write the number, e.g. 1.0 or 0.0)"
        } else {
            ""
        };
        let detail = format!(
            "a scalar operand of {} must be an int or a float, got {}{hint}",
            site.target,
            str_repr(scalar_type)
        );
        return Some(reject(site, code, detail));
    }
    let (tensor, scalar) = if scalar_first {
        (Input::Operand(1), Input::Operand(0))
    } else {
        (Input::Operand(0), Input::Operand(1))
    };
    let op = ClaimedOp::TensorScalar {
        op: TensorScalarOp::of(op, scalar_first),
        tensor,
        scalar,
    };
    Some(claimed(rule_id, tensor_key, op))
}

/// Rule ids and codes of one matmul spelling family (binop or call).
struct MatmulRules {
    rank2_rule: &'static str,
    mixed_rule: &'static str,
    code: &'static str,
    mixed_code: &'static str,
}

const BINOP_RULES: MatmulRules = MatmulRules {
    rank2_rule: MATMUL_2D,
    mixed_rule: MATMUL_MIXED,
    code: CODE_MATMUL,
    mixed_code: CODE_MATMUL_MIXED,
};

const CALL_RULES: MatmulRules = MatmulRules {
    rank2_rule: MATMUL_CALL_2D,
    mixed_rule: MATMUL_CALL_MIXED,
    code: CODE_MATMUL_CALL,
    mixed_code: CODE_MATMUL_CALL_MIXED,
};

fn claim_matmul_binop(site: &ClaimSite) -> Option<ClaimOutcome> {
    if site.target != "@" {
        return None;
    }
    if site.receiver.is_some() || !site.keywords.is_empty() {
        let detail = "only binary @ between supported rank-1/rank-2 tensors is supported";
        return Some(reject(site, CODE_MATMUL, detail));
    }
    Some(claim_matmul_operands(site, &BINOP_RULES))
}

fn claim_matmul_call(site: &ClaimSite) -> Option<ClaimOutcome> {
    if site.target == "torch.matmul" {
        if site.receiver.is_some() {
            return Some(ClaimOutcome::NotCovered);
        }
        if !site.keywords.is_empty() {
            let detail = "torch.matmul supports only two positional tensor operands";
            return Some(reject(site, CODE_MATMUL_CALL, detail));
        }
        return Some(claim_matmul_operands(site, &CALL_RULES));
    }
    if method_name(&site.target) != "matmul" {
        return None;
    }
    let Some(receiver) = &site.receiver else {
        return Some(ClaimOutcome::NotCovered);
    };
    if !site.keywords.is_empty() || site.operand_types.len() != 1 {
        let detail = "only .matmul(other) with one positional tensor is supported";
        return Some(reject(site, CODE_MATMUL_CALL, detail));
    }
    let (Some(receiver_type), Some(other)) = (
        receiver.arg_type.as_deref(),
        site.operand_types[0].as_deref(),
    ) else {
        return Some(ClaimOutcome::NotCovered);
    };
    let inputs = (Input::Receiver, Input::Operand(0));
    Some(claim_matmul_pair(
        site,
        receiver_type,
        other,
        inputs,
        &CALL_RULES,
    ))
}

/// `a @ b` / `torch.matmul(a, b)`: exactly two positional operands.
fn claim_matmul_operands(site: &ClaimSite, rules: &MatmulRules) -> ClaimOutcome {
    if site.operand_types.len() != 2 {
        let detail = "matmul requires exactly two positional tensor operands";
        return reject(site, rules.code, detail);
    }
    let Some((left, right)) = resolved_pair(site) else {
        return ClaimOutcome::NotCovered;
    };
    let inputs = (Input::Operand(0), Input::Operand(1));
    claim_matmul_pair(site, left, right, inputs, rules)
}

fn claim_matmul_pair(
    site: &ClaimSite,
    left: &str,
    right: &str,
    (lhs, rhs): (Input, Input),
    rules: &MatmulRules,
) -> ClaimOutcome {
    if !is_tensor_type(left) || !is_tensor_type(right) {
        return reject(site, CODE_UNSUPPORTED, OPERANDS_OUTSIDE);
    }
    let op = ClaimedOp::Matmul { lhs, rhs };
    match (left, right) {
        (KEY_M, KEY_M) => claimed(rules.rank2_rule, KEY_M, op),
        (KEY_M, KEY_V) | (KEY_V, KEY_M) => claimed(rules.mixed_rule, KEY_V, op),
        _ => {
            let code = if left == KEY_V || right == KEY_V {
                rules.mixed_code
            } else {
                rules.code
            };
            let detail = format!(
                "unsupported matmul operand ranks for {} and {}",
                str_repr(left),
                str_repr(right)
            );
            reject(site, code, detail)
        }
    }
}
