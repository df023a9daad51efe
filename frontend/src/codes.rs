//! Every diagnostic code the frontend itself emits, with its message builders, in one place.
//!
//! Plugin rejections (`RXTP-TORCH-NNN`) come from the claim rules with their reference
//! messages; this module holds the *host* side: what the reference Rextio core reports around
//! the plugin (`RXT010`, `RXT030`, `RXT080`, `RXT092`, with the reference texts where the
//! reference has one; `RXT070`/`RXT072`/`RXT075`/`RXT076` for calls to other module
//! functions, `docs/reference-control-flow.md` section 8) and the codes this frontend adds for source it does not lower yet.
//!
//! The codes themselves, with their severities and doc lines, are declared in the registry
//! ([`rextio_ir::codes::Rxt`], listed in `docs/diagnostics.md`); the constants below name
//! them for the emitters.

use rextio_ir::codes::Rxt;

pub const SYNTAX: &str = Rxt::Syntax.code();
pub const HOST_PLUGIN_TYPES: &str = Rxt::HostPluginTypes.code();
pub const NOT_LOWERED: &str = Rxt::NotLowered.code();
pub const UNSUPPORTED_SYNTAX: &str = Rxt::UnsupportedSyntax.code();
pub const UNSUPPORTED_PARAM: &str = Rxt::UnsupportedParam.code();
pub const UNSUPPORTED_RETURN: &str = Rxt::UnsupportedReturn.code();
pub const MISSING_RETURN: &str = Rxt::MissingReturn.code();
pub const TOO_DEEP: &str = Rxt::TooDeep.code();
pub const NOT_OFFERED: &str = Rxt::NotOffered.code();
pub const CALLS_NATIVE_FUNCTION: &str = Rxt::CallsNativeFunction.code();
pub const CALLS_FALLBACK_ONLY: &str = Rxt::CallsFallbackOnly.code();
pub const DEPENDENCY_REJECTED: &str = Rxt::DependencyRejected.code();
pub const SCALAR_BOUNDARY_CALL: &str = Rxt::ScalarBoundaryCall.code();
pub const BOUNDARY_CALL_IN_LOOP: &str = Rxt::BoundaryCallInLoop.code();
pub const INTERNAL: &str = Rxt::Internal.code();

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

/// Reference RXT070 text: a native function calls one that stays on Python.
pub fn calls_fallback_only(qualified: &str) -> String {
    format!("native function calls fallback-only function: {qualified}")
}

/// Reference RXT072 text: a native function calls one the host rejected.
pub fn dependency_rejected(qualified: &str) -> String {
    format!("native dependency rejected, so caller must fall back: {qualified}")
}

/// Reference RXT075 text: a marked function's scalar boundary call back into Python.
pub fn scalar_boundary_call(qualified: &str) -> String {
    format!("native function performs a scalar boundary call to the Python fallback: {qualified}")
}

/// Reference RXT076 text: that boundary call inside a loop.
pub fn boundary_call_in_loop(qualified: &str) -> String {
    format!("scalar boundary call inside a native loop: {qualified}")
}
