//! The classification lane (reference `claim/classification.py`, 0.1.3): `softmax` /
//! `argmax` as receiver methods or exact `torch.softmax` / `torch.argmax`, plus the
//! `torch.nn.functional.softmax` alias (which also admits `dtype=None` and always gets the
//! functional-softmax rule). Input/dim resolution and messages follow the reduction lane.
//! Softmax keeps the input type; argmax produces `TensorI64Cpu1D` only (rank-2 keepdim=True
//! and rank-1 keepdim=False have no registered int64 type and are rejected). Dims follow
//! the reduction lane's rule ([`literal_dim`]): negative dims under the extended surface.

use super::pyrepr::{literal_repr, str_repr};
use super::reductions::{
    keyword_map, literal_dim, lookup, names_equal, names_within, python_bool,
    resolve_input_and_dim, written_one, ResolvedInput,
};
use super::rules::{
    ARGMAX_DIM1, ARGMAX_STATIC, CODE_ARGMAX, CODE_FUNCTIONAL_SOFTMAX, CODE_SOFTMAX,
    CODE_UNSUPPORTED, FUNCTIONAL_SOFTMAX, SOFTMAX_DIM1, SOFTMAX_STATIC,
};
use rextio_ir::SoftmaxKind;

use super::{
    claimed, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp, Literal,
    SiteKind, Surface, KEY_L, KEY_M, KEY_V,
};

const FUNCTIONAL_SOFTMAX_TARGET: &str = "torch.nn.functional.softmax";

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call {
        return None;
    }
    let method = method_name(&site.target);
    let (is_argmax, code, function_target) = match method {
        "softmax" => (false, CODE_SOFTMAX, "torch.softmax"),
        "argmax" => (true, CODE_ARGMAX, "torch.argmax"),
        _ => return None,
    };
    let alias = site.receiver.is_none() && site.target == FUNCTIONAL_SOFTMAX_TARGET;
    if site.receiver.is_none() && site.target != function_target && !alias {
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

    let expected = [("dim", "int"), ("keepdim", "bool"), ("dtype", "None")];
    let Some(keywords) = keyword_map(site, &expected) else {
        let detail = format!("{method} keywords must be unique static literals");
        return Some(reject(site, code, detail));
    };
    let mut allowed: Vec<&str> = Vec::new();
    if positional_dim.is_none() {
        allowed.push("dim");
    }
    if is_argmax {
        allowed.push("keepdim");
    }
    if alias {
        allowed.push("dtype");
    }
    if !names_within(&keywords, &allowed) {
        let detail = format!("unsupported or duplicate positional/keyword options for {method}");
        return Some(reject(site, code, detail));
    }
    if let Some(dtype) = lookup(&keywords, "dtype") {
        if *dtype != Literal::None {
            // Unreachable from Core: a dtype typed `None` is the literal None.
            let detail = "functional softmax accepts dtype only as the exact literal None";
            return Some(reject(site, CODE_FUNCTIONAL_SOFTMAX, detail));
        }
    }
    let Some(dim_literal) = positional_dim.or_else(|| lookup(&keywords, "dim")) else {
        let detail = format!("{method} requires a literal dim=0 or dim=1");
        return Some(reject(site, code, detail));
    };
    let dim = match literal_dim(surface, method, dim_literal, input_type) {
        Ok(dim) => dim,
        Err(detail) => return Some(reject(site, code, detail)),
    };
    let keepdim_literal = lookup(&keywords, "keepdim").unwrap_or(&Literal::Bool(false));
    let Literal::Bool(keepdim) = *keepdim_literal else {
        let detail = format!(
            "argmax keepdim must be a bool literal; got {}",
            literal_repr(keepdim_literal)
        );
        return Some(reject(site, code, detail));
    };
    if !is_tensor_type(input_type) {
        let detail = "input type is outside the float32 CPU tensor surface";
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    }

    if is_argmax {
        let result_ok = matches!(
            (input_type, dim, keepdim),
            (KEY_M, _, false) | (KEY_V, 0, true)
        );
        if !result_ok {
            let detail = format!(
                "argmax(dim={dim}, keepdim={}) on {} does not have an existing exact \
                 classification result type",
                python_bool(keepdim),
                str_repr(input_type)
            );
            return Some(reject(site, code, detail));
        }
        let is_legacy = site.receiver.is_some()
            && positional_dim.is_none()
            && input_type == KEY_M
            && written_one(dim_literal)
            && !keepdim
            && names_equal(&keywords, &["dim", "keepdim"]);
        let rule_id = if is_legacy {
            ARGMAX_DIM1
        } else {
            ARGMAX_STATIC
        };
        let op = ClaimedOp::Argmax {
            input,
            dim,
            keepdim,
        };
        return Some(claimed(rule_id, KEY_L, op));
    }

    let result_type = match (input_type, dim) {
        (KEY_V, 0) => KEY_V,
        (KEY_M, _) => KEY_M,
        _ => {
            let detail = format!(
                "softmax(dim={dim}) on {} does not have an existing exact classification \
                 result type",
                str_repr(input_type)
            );
            return Some(reject(site, code, detail));
        }
    };
    let is_legacy = site.receiver.is_some()
        && positional_dim.is_none()
        && input_type == KEY_M
        && written_one(dim_literal)
        && names_equal(&keywords, &["dim"]);
    let rule_id = if alias {
        FUNCTIONAL_SOFTMAX
    } else if is_legacy {
        SOFTMAX_DIM1
    } else {
        SOFTMAX_STATIC
    };
    let op = ClaimedOp::Softmax {
        kind: SoftmaxKind::Softmax,
        input,
        dim,
    };
    Some(claimed(rule_id, result_type, op))
}
