//! The CUDA lane (reference `claim/cuda.py`): the build-only cuda:0 E2 slice
//! `CM @ CM`, `CM + CV`, `cm.relu()`, `cm.mean(dim=1[, keepdim=False])`. Any call or binop
//! touching a CUDA-typed operand or receiver is decided here, so the CPU lanes never see one.
//! Everything else touching CUDA is rejected with 049 (declared by our extra record, see
//! [`super::rules`]); compares are not covered.

use super::rules::{
    CODE_CUDA_BIAS_ADD, CODE_CUDA_E2, CODE_CUDA_MATMUL, CODE_CUDA_MEAN, CODE_CUDA_RELU,
    CUDA_BIAS_ADD, CUDA_MATMUL, CUDA_MEAN_DIM1, CUDA_RELU,
};
use super::{
    claimed, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, SiteKind,
    KEY_CM, KEY_CV,
};
use rextio_ir::{BinaryOp, ReduceKind, UnaryOp};

fn is_cuda(ty: Option<&str>) -> bool {
    matches!(ty, Some(KEY_CM) | Some(KEY_CV))
}

fn has_cuda_type(site: &ClaimSite) -> bool {
    site.operand_types.iter().any(|ty| is_cuda(ty.as_deref()))
        || site
            .receiver
            .as_ref()
            .is_some_and(|r| is_cuda(r.arg_type.as_deref()))
}

/// Operand literal metadata is absent, or aligned and free of literals.
fn nonliteral_tensor_operands(site: &ClaimSite) -> bool {
    site.operand_literals.is_empty()
        || (site.operand_literals.len() == site.operand_types.len()
            && !site.operand_literals.iter().any(Literal::is_literal))
}

fn operands_are(site: &ClaimSite, lhs: &str, rhs: &str) -> bool {
    matches!(
        site.operand_types.as_slice(),
        [Some(l), Some(r)] if l == lhs && r == rhs
    )
}

/// The exact binop form: no receiver, no keywords, non-literal `(lhs, rhs)` operands.
fn exact_binop(site: &ClaimSite, lhs: &str, rhs: &str) -> bool {
    site.receiver.is_none()
        && site.keywords.is_empty()
        && nonliteral_tensor_operands(site)
        && operands_are(site, lhs, rhs)
}

fn receiver_is_cm(site: &ClaimSite) -> bool {
    site.receiver
        .as_ref()
        .is_some_and(|r| r.arg_type.as_deref() == Some(KEY_CM))
}

/// `cm.mean` keywords: unique literal `dim: int` with value exactly `Int(1)`, optional
/// literal `keepdim: bool` that is `False`; nothing else.
fn exact_mean_keywords(site: &ClaimSite) -> bool {
    let mut dim = None;
    let mut keepdim = None;
    for keyword in &site.keywords {
        let ty = keyword.arg_type.as_deref();
        let slot = match (keyword.name.as_str(), ty) {
            ("dim", Some("int")) => &mut dim,
            ("keepdim", Some("bool")) => &mut keepdim,
            _ => return false,
        };
        if slot.is_some() || !keyword.literal.is_literal() {
            return false;
        }
        *slot = Some(&keyword.literal);
    }
    let keepdim_false = matches!(keepdim, None | Some(Literal::Bool(false)));
    matches!(dim, Some(Literal::Int(1))) && keepdim_false
}

pub(super) fn try_claim(site: &ClaimSite) -> Option<ClaimOutcome> {
    if !has_cuda_type(site) {
        return None;
    }
    let is_call = site.kind == SiteKind::Call;

    if site.kind == SiteKind::Binop && site.target == "@" {
        if exact_binop(site, KEY_CM, KEY_CM) {
            let op = ClaimedOp::Matmul {
                lhs: Input::Operand(0),
                rhs: Input::Operand(1),
            };
            return Some(claimed(CUDA_MATMUL, KEY_CM, op));
        }
        let detail = "CUDA matmul is limited to cuda:0 float32 rank-2 @ rank-2";
        return Some(reject(site, CODE_CUDA_MATMUL, detail));
    }

    if site.kind == SiteKind::Binop && site.target == "+" {
        if exact_binop(site, KEY_CM, KEY_CV) {
            let op = ClaimedOp::Binary {
                op: BinaryOp::Add,
                lhs: Input::Operand(0),
                rhs: Input::Operand(1),
            };
            return Some(claimed(CUDA_BIAS_ADD, KEY_CM, op));
        }
        let detail = "CUDA add is limited to rank-2 + rank-1 trailing bias broadcast on cuda:0";
        return Some(reject(site, CODE_CUDA_BIAS_ADD, detail));
    }

    if is_call && method_name(&site.target) == "relu" {
        if receiver_is_cm(site)
            && site.operand_types.is_empty()
            && site.operand_literals.is_empty()
            && site.keywords.is_empty()
        {
            let op = ClaimedOp::Unary {
                op: UnaryOp::Relu,
                input: Input::Receiver,
            };
            return Some(claimed(CUDA_RELU, KEY_CM, op));
        }
        let detail = "CUDA ReLU is limited to zero-argument rank-2 receiver form";
        return Some(reject(site, CODE_CUDA_RELU, detail));
    }

    if is_call && method_name(&site.target) == "mean" {
        if receiver_is_cm(site)
            && site.operand_types.is_empty()
            && site.operand_literals.is_empty()
            && exact_mean_keywords(site)
        {
            let op = ClaimedOp::Reduce {
                kind: ReduceKind::Mean,
                input: Input::Receiver,
                dim: 1,
                keepdim: false,
            };
            return Some(claimed(CUDA_MEAN_DIM1, KEY_CV, op));
        }
        let detail = "CUDA mean is limited to literal dim=1 and keepdim=False on rank-2 cuda:0";
        return Some(reject(site, CODE_CUDA_MEAN, detail));
    }

    match site.kind {
        SiteKind::Call | SiteKind::Binop => {
            let detail = "operation is outside the build-only CUDA E2 vertical slice";
            Some(reject(site, CODE_CUDA_E2, detail))
        }
        SiteKind::Compare => Some(ClaimOutcome::NotCovered),
    }
}
