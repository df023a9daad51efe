//! The scalar math lane (ours; [`Surface::Extended`] only): the `math` module's functions on
//! Python scalars in a native function, `math.sqrt`, `math.exp`, `math.log` (one argument, or
//! `math.log(x, base)`), `math.tanh`, `math.floor`, `math.ceil` and `math.fabs`, each over one
//! `int`, `bool` or `float` value (a parameter, a literal, a scalar expression), however the
//! module or the function is imported (`import math`, `import math as m`, `from math import
//! sqrt`: the import map resolves the target). The float functions give a `float`,
//! `floor`/`ceil` an `int`. Lowers to [`ClaimedOp::ScalarMath`], which the walker places as
//! the IR's scalar ops ([`rextio_ir::ScalarUnaryOp::Sqrt`] ...; `math.log(x, base)` as
//! `log(x) / log(base)`, CPython's own definition, so `base == 1` is its `ZeroDivisionError`).
//! The values and errors are CPython's (the runtime's `scalar_math`).
//!
//! The constants `math.pi`, `math.e`, `math.tau`, `math.inf` and `math.nan` are float
//! constants of the walker ([`constant`]), not sites.
//!
//! Not claimed, each with the function's code (`RXTP-TORCH-120`..`126`) and a message naming
//! the reason: a tensor argument (`torch.sqrt` is the tensor op), an argument that is not a
//! number (CPython raises `TypeError`), a wrong number of arguments, any keyword. Unresolved
//! arguments are not covered; another `math` function (`math.sin`) is not covered either
//! (`RXT030`). Under [`Surface::Reference`] the lane has no answer and the walker does not
//! offer `math` calls at all, so every such site keeps the reference outcome.

use rextio_ir::{Marker, ScalarUnaryOp};

use super::rules::{
    CODE_MATH_CEIL, CODE_MATH_EXP, CODE_MATH_FABS, CODE_MATH_FLOOR, CODE_MATH_LOG, CODE_MATH_SQRT,
    CODE_MATH_TANH, MATH_CEIL, MATH_EXP, MATH_FABS, MATH_FLOOR, MATH_LOG, MATH_SQRT, MATH_TANH,
};
use super::{claimed, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, SiteKind, Surface};

/// Each claimed `math` function: its op, rule id and code.
const FUNCTIONS: [(ScalarUnaryOp, &str, &str); 7] = [
    (ScalarUnaryOp::Sqrt, MATH_SQRT, CODE_MATH_SQRT),
    (ScalarUnaryOp::Exp, MATH_EXP, CODE_MATH_EXP),
    (ScalarUnaryOp::Log, MATH_LOG, CODE_MATH_LOG),
    (ScalarUnaryOp::Tanh, MATH_TANH, CODE_MATH_TANH),
    (ScalarUnaryOp::Floor, MATH_FLOOR, CODE_MATH_FLOOR),
    (ScalarUnaryOp::Ceil, MATH_CEIL, CODE_MATH_CEIL),
    (ScalarUnaryOp::Fabs, MATH_FABS, CODE_MATH_FABS),
];

/// Whether the walker offers a call to `target` to the claim rules although no operand is a
/// tensor: any function of the `math` module, under the extended surface only (the reference
/// host never offers a call outside `torch` without plugin-typed operands).
pub fn offers(kind: SiteKind, target: &str, surface: Surface) -> bool {
    surface == Surface::Extended && kind == SiteKind::Call && target.starts_with("math.")
}

/// The value of a `math` constant (`math.pi`), by its resolved dotted path, under the
/// extended surface; `None` elsewhere (the reference host knows nothing of the value).
pub fn constant(path: &str, surface: Surface) -> Option<f64> {
    if surface != Surface::Extended {
        return None;
    }
    match path {
        "math.pi" => Some(std::f64::consts::PI),
        "math.e" => Some(std::f64::consts::E),
        "math.tau" => Some(std::f64::consts::TAU),
        "math.inf" => Some(f64::INFINITY),
        "math.nan" => Some(f64::NAN),
        _ => None,
    }
}

/// The scalar types a `math` function takes (a bool is an int in Python).
fn is_number(ty: &str) -> bool {
    matches!(ty, "int" | "float" | "bool")
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if !offers(site.kind, &site.target, surface) || site.receiver.is_some() {
        return None;
    }
    let name = site.target.strip_prefix("math.")?;
    let &(op, rule_id, code) = FUNCTIONS
        .iter()
        .find(|(op, _, _)| op.math_name() == Some(name))?;
    let target = site.target.as_str();
    if !site.keywords.is_empty() {
        let detail = format!("{target}() takes no keyword arguments (CPython raises TypeError)");
        return Some(reject(site, code, detail));
    }
    let arity_ok = match op {
        ScalarUnaryOp::Log => matches!(site.operand_types.len(), 1 | 2),
        _ => site.operand_types.len() == 1,
    };
    if !arity_ok {
        let expected = match op {
            ScalarUnaryOp::Log => "one or two arguments (x[, base])",
            _ => "exactly one argument",
        };
        let detail = format!(
            "{target}() takes {expected}, {} given (CPython raises TypeError)",
            site.operand_types.len()
        );
        return Some(reject(site, code, detail));
    }
    if site.operand_types.iter().any(Option::is_none) {
        return Some(ClaimOutcome::NotCovered);
    }
    for ty in site.operand_types.iter().flatten() {
        if let Some(marker) = Marker::by_key(ty) {
            let detail = format!(
                "{target}() takes an int or float, got {}; the tensor op is torch.{name}",
                marker.name
            );
            return Some(reject(site, code, detail));
        }
        if !is_number(ty) {
            let detail = format!(
                "{target}() takes an int or float, got {ty} (CPython raises TypeError: must be real number)"
            );
            return Some(reject(site, code, detail));
        }
    }
    let result_type = match op {
        ScalarUnaryOp::Floor | ScalarUnaryOp::Ceil => "int",
        _ => "float",
    };
    let op = ClaimedOp::ScalarMath {
        op,
        input: Input::Operand(0),
        base: (site.operand_types.len() == 2).then_some(Input::Operand(1)),
    };
    Some(claimed(rule_id, result_type, op))
}
