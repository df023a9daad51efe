//! The activation lane (reference `claim/activations.py`): zero-argument `.relu()`,
//! `.sigmoid()`, `.tanh()` methods on float32 CPU rank-1/rank-2 receivers, the exact
//! functions `torch.relu/sigmoid/tanh(t)`, and `torch.nn.functional.relu(t)` with an optional
//! literal `inplace=False`. Method rejections use the rank-2 codes 002/006/008 for both
//! ranks, as the reference does.

use super::pyrepr::str_repr;
use super::rules::{
    CODE_FUNCTIONAL_RELU, CODE_FUNCTION_RELU, CODE_FUNCTION_SIGMOID, CODE_FUNCTION_TANH, CODE_RELU,
    CODE_SIGMOID, CODE_TANH, CODE_UNSUPPORTED, FUNCTIONAL_RELU, FUNCTION_RELU, FUNCTION_SIGMOID,
    FUNCTION_TANH, RELU_1D, RELU_2D, SIGMOID_1D, SIGMOID_2D, TANH_1D, TANH_2D,
};
use super::{
    claimed, f32_cpu_key, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, Literal, SiteKind, KEY_M,
};
use rextio_ir::UnaryOp;

const FUNCTIONAL_RELU_TARGET: &str = "torch.nn.functional.relu";

/// One activation: its IR op, method rules (rank-1, rank-2), method code, function rule
/// and function code.
struct Activation {
    op: UnaryOp,
    rule_1d: &'static str,
    rule_2d: &'static str,
    method_code: &'static str,
    function_target: &'static str,
    function_rule: &'static str,
    function_code: &'static str,
}

fn activation(method: &str) -> Option<Activation> {
    let activation = match method {
        "relu" => Activation {
            op: UnaryOp::Relu,
            rule_1d: RELU_1D,
            rule_2d: RELU_2D,
            method_code: CODE_RELU,
            function_target: "torch.relu",
            function_rule: FUNCTION_RELU,
            function_code: CODE_FUNCTION_RELU,
        },
        "sigmoid" => Activation {
            op: UnaryOp::Sigmoid,
            rule_1d: SIGMOID_1D,
            rule_2d: SIGMOID_2D,
            method_code: CODE_SIGMOID,
            function_target: "torch.sigmoid",
            function_rule: FUNCTION_SIGMOID,
            function_code: CODE_FUNCTION_SIGMOID,
        },
        "tanh" => Activation {
            op: UnaryOp::Tanh,
            rule_1d: TANH_1D,
            rule_2d: TANH_2D,
            method_code: CODE_TANH,
            function_target: "torch.tanh",
            function_rule: FUNCTION_TANH,
            function_code: CODE_FUNCTION_TANH,
        },
        _ => return None,
    };
    Some(activation)
}

pub(super) fn try_claim(site: &ClaimSite) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call {
        return None;
    }
    let method = method_name(&site.target);
    let activation = activation(method)?;
    match &site.receiver {
        None => Some(claim_function(site, &activation)),
        Some(receiver) => Some(claim_method(
            site,
            method,
            &activation,
            receiver.arg_type.as_deref(),
        )),
    }
}

/// `torch.relu(t)` / `torch.sigmoid(t)` / `torch.tanh(t)` / `F.relu(t[, inplace=False])`.
fn claim_function(site: &ClaimSite, activation: &Activation) -> ClaimOutcome {
    let functional_relu = site.target == FUNCTIONAL_RELU_TARGET;
    if !functional_relu && site.target != activation.function_target {
        // `F.sigmoid`, `F.tanh`, other namespaces: not ours, and no other lane's either.
        return ClaimOutcome::NotCovered;
    }
    let code = if functional_relu {
        CODE_FUNCTIONAL_RELU
    } else {
        activation.function_code
    };
    let one_tensor = format!(
        "only {}(tensor) with one positional tensor is supported",
        site.target
    );
    if site.operand_types.len() != 1 {
        return reject(site, code, one_tensor);
    }
    if functional_relu {
        if site.operand_literals.len() != 1 {
            let detail = "functional ReLU literal metadata must align with its tensor input";
            return reject(site, code, detail);
        }
        if site.keywords.len() > 1 {
            let detail = "functional ReLU accepts at most one inplace=False literal";
            return reject(site, code, detail);
        }
        if let Some(keyword) = site.keywords.first() {
            let exact = keyword.name == "inplace"
                && keyword.arg_type.as_deref() == Some("bool")
                && keyword.literal == Literal::Bool(false);
            if !exact {
                let detail = "functional ReLU accepts only the exact literal inplace=False option";
                return reject(site, code, detail);
            }
        }
    } else if !site.keywords.is_empty() {
        return reject(site, code, one_tensor);
    }
    let Some(operand_type) = site.operand_types[0].as_deref() else {
        return ClaimOutcome::NotCovered;
    };
    let Some(key) = f32_cpu_key(operand_type) else {
        let detail = format!(
            "{} requires float32 CPU rank-1 or rank-2; got {}",
            site.target,
            str_repr(operand_type)
        );
        return reject(site, CODE_UNSUPPORTED, detail);
    };
    let rule_id = if functional_relu {
        FUNCTIONAL_RELU
    } else {
        activation.function_rule
    };
    let op = ClaimedOp::Unary {
        op: activation.op,
        input: Input::Operand(0),
    };
    claimed(rule_id, key, op)
}

/// Zero-argument `.relu()` / `.sigmoid()` / `.tanh()` on any receiver spelling.
fn claim_method(
    site: &ClaimSite,
    method: &str,
    activation: &Activation,
    receiver_type: Option<&str>,
) -> ClaimOutcome {
    if !site.operand_types.is_empty() || !site.keywords.is_empty() {
        let detail = format!("only zero-argument .{method}() is supported");
        return reject(site, activation.method_code, detail);
    }
    let Some(receiver_type) = receiver_type else {
        return ClaimOutcome::NotCovered;
    };
    if !is_tensor_type(receiver_type) {
        let detail = "receiver type is outside the float32 CPU tensor surface";
        return reject(site, CODE_UNSUPPORTED, detail);
    }
    let Some(key) = f32_cpu_key(receiver_type) else {
        let detail = format!(
            ".{method}() requires float32 CPU rank-1 or rank-2; got {}",
            str_repr(receiver_type)
        );
        return reject(site, CODE_UNSUPPORTED, detail);
    };
    let rule_id = if key == KEY_M {
        activation.rule_2d
    } else {
        activation.rule_1d
    };
    let op = ClaimedOp::Unary {
        op: activation.op,
        input: Input::Receiver,
    };
    claimed(rule_id, key, op)
}
