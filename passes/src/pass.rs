//! The [`Pass`] trait: one function-to-function transformation with a stage name.
//!
//! A pass takes its input by value and returns a new function or the diagnostics that explain
//! why it could not. It never panics on its input; stages that rely on IR invariants either
//! validate first or check what they rely on and report.

use rextio_ir::{Diagnostic, Function};

pub trait Pass {
    /// The stage name of the pass's output in dumps (`fused`, `dce`).
    fn name(&self) -> &'static str;

    fn run(&self, f: Function) -> Result<Function, Vec<Diagnostic>>;
}
