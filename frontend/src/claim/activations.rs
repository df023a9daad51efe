//! The activation lane (reference `claim/activations.py`), over the op table's
//! [`Form::Activation`] and [`Form::FunctionalInplace`] spellings: zero-argument `.relu()`,
//! `.sigmoid()`, `.tanh()` methods on float32 CPU rank-1/rank-2 receivers, the exact
//! functions `torch.relu/sigmoid/tanh(t)`, and `torch.nn.functional.relu(t)` with an optional
//! literal `inplace=False`. Method rejections use the rank-2 codes 002/006/008 for both
//! ranks, as the reference does. Ours (extension rows, [`Form::Function`]): `F.sigmoid(t)` and
//! `F.tanh(t)`, exactly one positional tensor (`RXTP-TORCH-068`/`069`); under the reference
//! surface they stay not covered, as in the reference.

use super::pyrepr::str_repr;
use super::rules::CODE_UNSUPPORTED;
use super::spellings::{Form, Rule, Surface};
use super::{
    claimed, f32_cpu_key, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, Literal, SiteKind, KEY_M,
};
use rextio_ir::UnaryOp;

/// One activation: its IR op, its [`Form::Activation`] spelling (if it has one) and its
/// [`Form::FunctionalInplace`] spelling (if it has one).
struct Activation {
    op: UnaryOp,
    methods: Option<Methods>,
    functional: Option<Functional>,
}

/// `t.<method>()` (rules by rank; rejections use the rank-2 rule's code) and `function(t)`.
struct Methods {
    rule_1d: Rule,
    rule_2d: Rule,
    function: &'static str,
    function_rule: Rule,
}

/// `target(t[, inplace=False])`, called `functional <display>` in messages.
struct Functional {
    target: &'static str,
    display: &'static str,
    rule: Rule,
}

/// The op's `FunctionalInplace` spelling, if any.
fn functional_of(surface: Surface, op: UnaryOp) -> Option<Functional> {
    surface.iter().find_map(|s| match s.form {
        Form::FunctionalInplace {
            target,
            display,
            rule,
        } if s.op == op => Some(Functional {
            target,
            display,
            rule,
        }),
        _ => None,
    })
}

/// The activation whose method is `method` (the target's last dotted segment); failing
/// that, the one whose `FunctionalInplace` target is exactly `target`.
fn activation(surface: Surface, method: &str, target: &str) -> Option<Activation> {
    let by_method = surface.iter().find_map(|s| match s.form {
        Form::Activation {
            method: m,
            rule_1d,
            rule_2d,
            function,
            function_rule,
        } if m == method => Some(Activation {
            op: s.op,
            methods: Some(Methods {
                rule_1d,
                rule_2d,
                function,
                function_rule,
            }),
            functional: functional_of(surface, s.op),
        }),
        _ => None,
    });
    by_method.or_else(|| {
        surface.iter().find_map(|s| match s.form {
            Form::FunctionalInplace { target: t, .. } if t == target => Some(Activation {
                op: s.op,
                methods: None,
                functional: functional_of(surface, s.op),
            }),
            _ => None,
        })
    })
}

/// The rule of `op`'s [`Form::Function`] row whose target is `target`, if the surface has one.
fn function_row(surface: Surface, op: UnaryOp, target: &str) -> Option<Rule> {
    surface.iter().find_map(|s| match s.form {
        Form::Function { target: t, rule } if s.op == op && t == target => Some(rule),
        _ => None,
    })
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call {
        return None;
    }
    let method = method_name(&site.target);
    let activation = activation(surface, method, &site.target)?;
    match &site.receiver {
        None => Some(claim_function(site, &activation, surface)),
        Some(receiver) => {
            // An op with only a functional spelling has no method to claim.
            let methods = activation.methods.as_ref()?;
            Some(claim_method(
                site,
                method,
                activation.op,
                methods,
                receiver.arg_type.as_deref(),
            ))
        }
    }
}

/// `torch.relu(t)` / `torch.sigmoid(t)` / `torch.tanh(t)` / `F.relu(t[, inplace=False])`.
fn claim_function(site: &ClaimSite, activation: &Activation, surface: Surface) -> ClaimOutcome {
    let functional = activation
        .functional
        .as_ref()
        .filter(|f| site.target == f.target);
    let function = activation
        .methods
        .as_ref()
        .filter(|m| site.target == m.function);
    let rule = match (
        functional,
        function,
        function_row(surface, activation.op, &site.target),
    ) {
        (Some(functional), _, _) => functional.rule,
        (None, Some(function), _) => function.function_rule,
        // `F.sigmoid`, `F.tanh` (extension rows): one positional tensor, as `torch.sigmoid`.
        (None, None, Some(rule)) => rule,
        // Other namespaces, and those under the reference surface: not ours, and no other
        // lane's either.
        (None, None, None) => return ClaimOutcome::NotCovered,
    };
    let code = rule.code();
    let one_tensor = format!(
        "only {}(tensor) with one positional tensor is supported",
        site.target
    );
    if site.operand_types.len() != 1 {
        return reject(site, code, one_tensor);
    }
    if let Some(functional) = functional {
        let name = functional.display;
        if site.operand_literals.len() != 1 {
            let detail =
                format!("functional {name} literal metadata must align with its tensor input");
            return reject(site, code, detail);
        }
        if site.keywords.len() > 1 {
            let detail = format!("functional {name} accepts at most one inplace=False literal");
            return reject(site, code, detail);
        }
        if let Some(keyword) = site.keywords.first() {
            let exact = keyword.name == "inplace"
                && keyword.arg_type.as_deref() == Some("bool")
                && keyword.literal == Literal::Bool(false);
            if !exact {
                let detail = format!(
                    "functional {name} accepts only the exact literal inplace=False option"
                );
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
    let op = ClaimedOp::Unary {
        op: activation.op,
        input: Input::Operand(0),
    };
    claimed(rule.id(), key, op)
}

/// Zero-argument `.relu()` / `.sigmoid()` / `.tanh()` on any receiver spelling.
fn claim_method(
    site: &ClaimSite,
    method: &str,
    op: UnaryOp,
    methods: &Methods,
    receiver_type: Option<&str>,
) -> ClaimOutcome {
    if !site.operand_types.is_empty() || !site.keywords.is_empty() {
        let detail = format!("only zero-argument .{method}() is supported");
        return reject(site, methods.rule_2d.code(), detail);
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
        methods.rule_2d.id()
    } else {
        methods.rule_1d.id()
    };
    let op = ClaimedOp::Unary {
        op,
        input: Input::Receiver,
    };
    claimed(rule_id, key, op)
}
