//! The lane of elementwise ops with scalar parameters (ours; [`Surface::Extended`] only):
//! `F.leaky_relu(t[, negative_slope])`, `F.elu(t[, alpha])`,
//! `F.hardtanh(t[, min_val[, max_val]])` (each also with `inplace=False`), and
//! `torch.clamp(t, min, max)` / `torch.clip` / `t.clamp` / `t.clip` with either bound or
//! both. Parameters are positional or by keyword, as Python binds them; each is an `int` or
//! a `float`, a literal (`0.2`, `-1.0`) or any scalar value (a function parameter), read at
//! run time. An omitted parameter takes eager's default (a constant the walker places). The
//! result keeps the input's type and lowers to [`ClaimedOp::ParamUnary`].
//!
//! Not claimed, each with the op's code and a message naming the reason: `inplace=True`
//! (compiled code never writes into its arguments) or a non-literal or positional
//! `inplace`, a bool, tensor or other non-number parameter (eager would also take a tensor
//! bound; here it is refused), a parameter given twice or unknown, `torch.clamp(t)` with no
//! bound (eager raises), an input outside float32 CPU rank 1/2 (`RXTP-TORCH-010`). What
//! eager raises on values (`hardtanh`'s `min_val > max_val`, a float parameter beyond
//! float32's range) the runtime raises with eager's words. Under [`Surface::Reference`] the
//! lane has no answer: the reference does not know these calls, so they stay not covered.
//!
//! Keyword values here need not be literals: the walker offers these calls with scalar
//! keyword values under the extended surface ([`takes_scalar_keywords`]) and passes each
//! keyword's value after the positional operands (keyword `k` is operand
//! `positional count + k`).

use super::pyrepr::str_repr;
use super::rules::{
    CLAMP_SCALAR, CODE_CLAMP_SCALAR, CODE_FUNCTIONAL_ELU, CODE_FUNCTIONAL_HARDTANH,
    CODE_FUNCTIONAL_LEAKY_RELU, CODE_UNSUPPORTED, FUNCTIONAL_ELU, FUNCTIONAL_HARDTANH,
    FUNCTIONAL_LEAKY_RELU,
};
use super::{
    claimed, f32_cpu_key, is_tensor_type, method_name, reject, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, Literal, ParamArg, SiteKind, Surface,
};
use rextio_ir::{FloatBits, ParamUnaryOp};

/// One spelling family: its parameters (name and eager's default; `None`: no default, the
/// bound is absent), whether it takes `inplace`, its rule and code.
struct Spelling {
    display: &'static str,
    params: &'static [(&'static str, Option<f64>)],
    inplace: bool,
    rule: &'static str,
    code: &'static str,
}

const LEAKY_RELU: Spelling = Spelling {
    display: "leaky_relu",
    params: &[("negative_slope", Some(0.01))],
    inplace: true,
    rule: FUNCTIONAL_LEAKY_RELU,
    code: CODE_FUNCTIONAL_LEAKY_RELU,
};

const ELU: Spelling = Spelling {
    display: "elu",
    params: &[("alpha", Some(1.0))],
    inplace: true,
    rule: FUNCTIONAL_ELU,
    code: CODE_FUNCTIONAL_ELU,
};

const HARDTANH: Spelling = Spelling {
    display: "hardtanh",
    params: &[("min_val", Some(-1.0)), ("max_val", Some(1.0))],
    inplace: true,
    rule: FUNCTIONAL_HARDTANH,
    code: CODE_FUNCTIONAL_HARDTANH,
};

const CLAMP: Spelling = Spelling {
    display: "clamp",
    params: &[("min", None), ("max", None)],
    inplace: false,
    rule: CLAMP_SCALAR,
    code: CODE_CLAMP_SCALAR,
};

const FUNCTIONAL: [(&str, &Spelling); 3] = [
    ("torch.nn.functional.leaky_relu", &LEAKY_RELU),
    ("torch.nn.functional.elu", &ELU),
    ("torch.nn.functional.hardtanh", &HARDTANH),
];

const CLAMP_FUNCTIONS: [&str; 2] = ["torch.clamp", "torch.clip"];
const CLAMP_METHODS: [&str; 2] = ["clamp", "clip"];

/// Whether a call to `target` (`has_receiver`: a method call) may pass scalar values that
/// are not literals by keyword (`F.leaky_relu(x, negative_slope=s)`, `x.clamp(min=0.0)`):
/// the walker then offers it with those values instead of refusing the call. Extended
/// surface only (the reference host never offers such a call).
pub fn takes_scalar_keywords(target: &str, has_receiver: bool, surface: Surface) -> bool {
    surface == Surface::Extended && spelling(target, has_receiver).is_some()
}

fn spelling(target: &str, has_receiver: bool) -> Option<&'static Spelling> {
    if has_receiver {
        return CLAMP_METHODS
            .contains(&method_name(target))
            .then_some(&CLAMP);
    }
    if CLAMP_FUNCTIONS.contains(&target) {
        return Some(&CLAMP);
    }
    FUNCTIONAL
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, spelling)| *spelling)
}

/// Where one parameter's value comes from.
#[derive(Clone, Copy)]
enum Slot {
    Absent,
    /// Operand `index` of the site (keywords follow the positional operands), its type and
    /// literal.
    Given(usize),
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call || surface != Surface::Extended {
        return None;
    }
    let spelling = spelling(&site.target, site.receiver.is_some())?;
    let code = spelling.code;
    let name = spelling.display;

    // The tensor: the receiver of a method, else the first positional operand.
    let (input, input_type, first_param) = match &site.receiver {
        Some(receiver) => (Input::Receiver, receiver.arg_type.as_deref(), 0),
        None => match site.operand_types.first() {
            Some(ty) => (Input::Operand(0), ty.as_deref(), 1),
            None => {
                let detail =
                    format!("{name} requires the input tensor as its first positional argument");
                return Some(reject(site, code, detail));
            }
        },
    };
    let Some(input_type) = input_type else {
        return Some(ClaimOutcome::NotCovered);
    };
    let Some(result_type) = f32_cpu_key(input_type) else {
        let detail = "input type is outside the float32 CPU tensor surface";
        return Some(reject(site, CODE_UNSUPPORTED, detail));
    };

    // Bind positional and keyword arguments to parameters, as Python does.
    let positional = site.operand_types.len();
    let mut slots = vec![Slot::Absent; spelling.params.len()];
    let extra = positional - first_param;
    if extra > spelling.params.len() {
        let detail = if spelling.inplace && extra == spelling.params.len() + 1 {
            format!("{name} takes inplace by keyword only here (write inplace=False)")
        } else {
            format!(
                "{name} takes at most {} positional parameter(s) after the tensor",
                spelling.params.len()
            )
        };
        return Some(reject(site, code, detail));
    }
    for (slot, index) in slots.iter_mut().zip(first_param..positional) {
        *slot = Slot::Given(index);
    }
    for (k, keyword) in site.keywords.iter().enumerate() {
        if spelling.inplace && keyword.name == "inplace" {
            if keyword.literal != Literal::Bool(false) {
                let detail = format!(
                    "{name} requires literal inplace=False (compiled code returns a new tensor and never writes into its arguments)"
                );
                return Some(reject(site, code, detail));
            }
            continue;
        }
        let Some(p) = spelling.params.iter().position(|(n, _)| *n == keyword.name) else {
            let detail = format!(
                "{name} got an unsupported keyword {}",
                str_repr(&keyword.name)
            );
            return Some(reject(site, code, detail));
        };
        if !matches!(slots[p], Slot::Absent) {
            let detail = format!("{name} got multiple values for {}", str_repr(&keyword.name));
            return Some(reject(site, code, detail));
        }
        slots[p] = Slot::Given(positional + k);
    }

    // Each given parameter: an int or a float; a clamp bound may be a literal None.
    let type_of = |index: usize| -> (Option<&str>, &Literal) {
        if index < positional {
            (
                site.operand_types[index].as_deref(),
                &site.operand_literals[index],
            )
        } else {
            let keyword = &site.keywords[index - positional];
            (keyword.arg_type.as_deref(), &keyword.literal)
        }
    };
    let mut params = Vec::new();
    let mut present = Vec::new();
    for (slot, (param, default)) in slots.iter().zip(spelling.params) {
        let arg = match *slot {
            Slot::Given(index) => match type_of(index) {
                (_, Literal::None) if default.is_none() => None,
                (Some("int" | "float"), _) => Some(ParamArg::Input(Input::Operand(index))),
                (None, _) => return Some(ClaimOutcome::NotCovered),
                (Some(ty), _) => {
                    let hint = if ty == "bool" {
                        " (a bool is not taken as a number here: write the number)"
                    } else if is_tensor_type(ty) {
                        " (a tensor bound is not claimed: pass a Python number)"
                    } else {
                        ""
                    };
                    let detail = format!(
                        "{name} requires {param} to be an int or a float, got {}{hint}",
                        str_repr(ty)
                    );
                    return Some(reject(site, code, detail));
                }
            },
            Slot::Absent => default.map(|v| ParamArg::Default(FloatBits::new(v))),
        };
        present.push(arg.is_some());
        params.extend(arg);
    }

    let op = match (spelling.display, present.as_slice()) {
        ("leaky_relu", _) => ParamUnaryOp::LeakyRelu,
        ("elu", _) => ParamUnaryOp::Elu,
        ("hardtanh", _) => ParamUnaryOp::Hardtanh,
        (_, [true, true]) => ParamUnaryOp::Clamp,
        (_, [true, false]) => ParamUnaryOp::ClampMin,
        (_, [false, true]) => ParamUnaryOp::ClampMax,
        _ => {
            let detail = format!("{name} requires at least one of min or max (eager raises)");
            return Some(reject(site, code, detail));
        }
    };
    let op = ClaimedOp::ParamUnary { op, input, params };
    Some(claimed(spelling.rule, result_type, op))
}
