//! What `RXT_LOG` prints when a function is compiled: the IR after parsing (`ir`), after each
//! pass (`passes`) and the backend's Rust source for the function (`codegen`), each under a
//! header line `[rextio_torch CHANNEL] ...` so logs of several functions stay apart.

use crate::env::{LogChannel, LogSpec};
use crate::CompiledFunction;
use rextio_ir::print::print_function;
use rextio_passes::pipeline::{STAGE_OPTIMIZED, STAGE_PARSED};

fn header(channel: LogChannel, name: &str, what: &str) -> String {
    format!("[rextio_torch {}] `{name}`: {what}\n", channel.name())
}

/// The logs of a compiled function, for the channels `spec` enables. `location` says where
/// the definition is (`file:line`); `codegen` is the backend's text for the function (or why
/// it could not be emitted), asked for only when `codegen` is enabled.
pub fn compile_log(
    spec: &LogSpec,
    compiled: &CompiledFunction,
    location: &str,
    codegen: impl FnOnce() -> Result<String, String>,
) -> String {
    let name = compiled.name.as_str();
    let mut out = String::new();
    if spec.enabled(LogChannel::Ir) {
        out.push_str(&header(
            LogChannel::Ir,
            name,
            &format!("IR after parsing ({location})"),
        ));
        out.push_str(&print_function(&compiled.parsed));
    }
    if spec.enabled(LogChannel::Passes) {
        for (stage, f) in &compiled.stages {
            if *stage == STAGE_PARSED || *stage == STAGE_OPTIMIZED {
                continue;
            }
            out.push_str(&header(
                LogChannel::Passes,
                name,
                &format!("IR after pass `{stage}`"),
            ));
            out.push_str(&print_function(f));
        }
    }
    if spec.enabled(LogChannel::Codegen) {
        match codegen() {
            Ok(text) => {
                out.push_str(&header(LogChannel::Codegen, name, "emitted Rust source"));
                out.push_str(&text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            Err(why) => out.push_str(&header(
                LogChannel::Codegen,
                name,
                &format!("no Rust source: {why}"),
            )),
        }
    }
    out
}

/// The log of a function that stays on Python: one line per enabled channel saying there is
/// nothing to show and the first line of why (the fallback warning has the rest).
pub fn fallback_log(spec: &LogSpec, name: &str, error: &str) -> String {
    let why = error.lines().next().unwrap_or("").trim_end_matches(':');
    spec.channels()
        .iter()
        .map(|&channel| header(channel, name, &format!("nothing to log: {why}")))
        .collect()
}
