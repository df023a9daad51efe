//! Every diagnostic code the frontend itself emits, with its message builders, in one place.
//!
//! Plugin rejections (`RXTP-TORCH-NNN`) come from the claim rules with their reference
//! messages; this module holds the *host* side: what the reference Rextio core reports around
//! the plugin (`RXT010`, `RXT030`, `RXT080`, `RXT092`, with the reference texts where the
//! reference has one) and the codes this frontend adds for source it does not lower yet.
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `RXPY-001` | error | the module does not parse |
//! | `RXT010` | error | a host rule on plugin types: returning a plugin-typed parameter alias, augmented assignment on plugin types, an operator/comparison on plugin types no rule covers (reference) |
//! | `RXT030` | error | a call or operator no rule lowers (reference texts for calls) |
//! | `RXT031` | error | a statement or expression native functions do not lower yet |
//! | `RXT032` | error | a parameter native functions cannot take yet (type or kind) |
//! | `RXT033` | error | a return value native functions cannot produce, or one that contradicts the annotation |
//! | `RXT034` | error | a native function that does not end with `return <value>` |
//! | `RXT080` | warning | a site the host never offers to rextio-torch: the function stays on Python |
//! | `RXT092` | error | a native function calls another plugin-typed function of the module (reference) |
//! | `RXT099` | error | internal: a claimed op could not be lowered (a frontend bug, never user error) |

pub const SYNTAX: &str = "RXPY-001";
pub const HOST_PLUGIN_TYPES: &str = "RXT010";
pub const NOT_LOWERED: &str = "RXT030";
pub const UNSUPPORTED_SYNTAX: &str = "RXT031";
pub const UNSUPPORTED_PARAM: &str = "RXT032";
pub const UNSUPPORTED_RETURN: &str = "RXT033";
pub const MISSING_RETURN: &str = "RXT034";
pub const NOT_OFFERED: &str = "RXT080";
pub const CALLS_NATIVE_FUNCTION: &str = "RXT092";
pub const INTERNAL: &str = "RXT099";

/// Reference RXT030 text for a `torch.*` call the plugin does not cover.
pub fn external_call_not_lowered(target: &str) -> String {
    format!("plugin-managed external package call is not lowered by this build: {target}")
}

/// Reference RXT030 text for any other call nothing lowers (methods, builtins, `<dynamic>`).
pub fn unresolved_call(target: &str) -> String {
    format!("unsupported unresolved call in native function: {target}")
}

/// RXT030 for an operator or comparison between values that are not tensors (`n + 1`).
pub fn scalar_operator(op: &str) -> String {
    format!("unsupported operator on non-tensor values in native function: {op}")
}

/// RXT010 for an operator on plugin types that no rule covers (`a % b`).
pub fn uncovered_operator(op: &str) -> String {
    format!("operator '{op}' on plugin types is not covered by rextio-torch")
}

/// RXT010 for a comparison on plugin types (rextio-torch covers none).
pub fn uncovered_comparison(op: &str) -> String {
    format!("comparison '{op}' on plugin types is not covered by rextio-torch")
}

/// RXT010: `return x` where `x` is a plugin-typed parameter (directly or through a temp).
pub fn returns_param_alias(name: &str) -> String {
    format!("returning a plugin-typed parameter alias is not supported: `{name}`")
}

/// RXT010: `x += y` with a plugin-typed target or value.
pub fn augmented_assignment_on_plugin_types(op: &str) -> String {
    format!("augmented assignment `{op}=` on plugin types is not supported")
}

/// RXT031 for a statement kind (`for loop`, `if statement`, ...).
pub fn unsupported_statement(kind: &str) -> String {
    format!("statement is not supported in native functions yet: {kind}")
}

/// RXT031 for an expression kind (`subscript`, `attribute access`, ...).
pub fn unsupported_expression(kind: &str) -> String {
    format!("expression is not supported in native functions yet: {kind}")
}

/// RXT080: the host never offers the site; `reason` says why.
pub fn not_offered(reason: &str) -> String {
    format!("call is not offered to rextio-torch: {reason}")
}

/// RXT092: a native function calling another plugin-typed function of the module.
pub fn calls_native_function(name: &str) -> String {
    format!("native function calls another plugin-typed function: {name}")
}
