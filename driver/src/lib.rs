//! The compiler driver, and the one crate the front doors (the `rextio-torch` binary in
//! `cli/`, the Python extension in `python/`) depend on besides the runtime.
//!
//! At its heart the sequence every consumer runs: Python source -> frontend (claims under a
//! [`Surface`], IR) -> passes (validate, fuse, dead-code elimination). The surface is the
//! front doors' choice (`surface=` in Python, `--surface` on the command line; extended by
//! default); the Rextio plugin always claims under the reference surface. The CLI, the Python package and the tests
//! all compile through here, so they see one optimized IR per function; the executor
//! (`rextio-runtime`) and the backend consume it.
//!
//! Around that sequence: [`explain`] (a function's claim table, diagnostics and IR per stage,
//! for `rextio_torch.explain`), [`log`] (what `RXT_LOG` prints), [`env`](mod@env) (the
//! environment variables the consumers read), [`plugin`] (the Rextio plugin's claims and
//! lowering) and [`command`] (the `rextio-torch` commands, as a library both front doors
//! run).
//!
//! The facade: what the front doors need from the crates below is re-exported here, so that
//! they name no other crate of ours but the runtime. [`aot`] and [`doctor`] are
//! `rextio-toolchain`'s (ahead-of-time builds with cargo, the host's checks); the backend's
//! emitters, the IR's types and printer and the frontend's analysis are re-exported as they
//! are. `docs/architecture.md` has the crate map; `tests/tests/layering.rs` checks it.

pub mod command;
pub mod env;
pub mod explain;
pub mod log;
pub mod plugin;

pub use rextio_backend::{
    emit_crate, emit_function, emit_standalone_crate, CrateOptions, EmitError, EmittedFile,
};
pub use rextio_frontend::{analyze, analyze_with, Analysis, FunctionAnalysis, Status, Surface};
pub use rextio_ir::{
    print_function, DType, Device, Diagnostic, Function, TensorType, Type, MARKERS,
};
pub use rextio_toolchain::{aot, doctor, write_files};

use rextio_ir::diag::render_all;
use rextio_passes::pipeline::Dumps;
use rextio_passes::{default_pipeline, Pipeline};
use thiserror::Error;

/// One function through the whole pipeline, with every stage kept for dumps.
#[derive(Clone, Debug)]
pub struct CompiledFunction {
    pub name: String,
    /// The IR as the frontend lowered it (stage `parsed`).
    pub parsed: Function,
    /// The IR after the pass pipeline (stage `optimized`).
    pub optimized: Function,
    /// `(stage, function)` after each stage, `parsed` first, `optimized` last.
    pub stages: Dumps,
}

#[derive(Debug, Error)]
pub enum CompileError {
    /// The function has sites that cannot be compiled; it stays on Python.
    #[error("rextio-torch cannot compile `{name}`; it stays on Python:\n{rendered}")]
    NotNative {
        name: String,
        rendered: String,
        diagnostics: Vec<Diagnostic>,
    },
    #[error("{}", not_found_message(name, file, *line))]
    NotFound {
        name: String,
        file: String,
        /// The line the definition was looked for on, when a function object gave one.
        line: Option<u32>,
    },
    /// A module's method cannot be analyzed: not found on its line, no `self`, a description
    /// that does not parse.
    #[error("{message}")]
    Method { message: String },
    /// The source does not parse, or nests deeper than the stated limit (RXT035): `reason`
    /// says which ([`whole_file_refusal`]).
    #[error("{file} {reason}:\n{rendered}")]
    Syntax {
        file: String,
        reason: &'static str,
        rendered: String,
    },
    /// The pipeline rejected IR the frontend produced: a compiler bug, reported not hidden.
    #[error("internal compiler error in `{name}`:\n{rendered}")]
    Internal { name: String, rendered: String },
}

fn not_found_message(name: &str, file: &str, line: Option<u32>) -> String {
    match line {
        Some(line) => format!(
            "no module-level `def {name}` on line {line} of {file} (only module-level functions compile)"
        ),
        None => format!("no function `{name}` in {file} (only module-level functions compile)"),
    }
}

/// Runs the pass pipeline (validating before and between passes) on one function.
pub fn optimize(f: Function) -> Result<(Function, Dumps), Vec<Diagnostic>> {
    pipeline().run_with_dumps(f)
}

/// The pipeline every consumer runs, validating before and between passes.
pub fn pipeline() -> Pipeline {
    default_pipeline().validating(true)
}

/// The stage names of [`pipeline`] in order: `parsed`, each pass, `optimized`.
pub fn stage_names() -> Vec<&'static str> {
    pipeline().stage_names()
}

/// Compiles every native function the module exposes, deciding its sites under `surface`: a `def` that a later `def` of the same
/// name rebinds is never reachable from the module, so it is not compiled (it would also
/// collide with the later one in emitted code). The analysis still reports every `def`.
pub fn compile_module(
    file: &str,
    source: &str,
    surface: Surface,
) -> (Analysis, Vec<Result<CompiledFunction, CompileError>>) {
    let analysis = analyze_with(file, source, surface);
    let compiled = (0..analysis.functions.len())
        .filter(|&i| analysis.functions[i].status == Status::Native && !analysis.is_shadowed(i))
        .map(|i| compile_analyzed(&analysis, &analysis.functions[i]))
        .collect();
    (analysis, compiled)
}

/// Compiles what the module-level name `name` of `source` is bound to: its last `def`
/// (sites decided under `surface`).
pub fn compile_function(
    file: &str,
    source: &str,
    name: &str,
    surface: Surface,
) -> Result<CompiledFunction, CompileError> {
    let analysis = analyze_parsed(file, source, surface)?;
    let Some(function) = analysis.function(name) else {
        return Err(CompileError::NotFound {
            name: name.to_string(),
            file: file.to_string(),
            line: None,
        });
    };
    compile_analyzed(&analysis, function)
}

/// Compiles exactly the module-level `def name` whose name stands on 1-based `line` (a
/// function object's first code line), never another definition of the same name (sites
/// decided under `surface`).
pub fn compile_function_at(
    file: &str,
    source: &str,
    name: &str,
    line: u32,
    surface: Surface,
) -> Result<CompiledFunction, CompileError> {
    let analysis = analyze_parsed(file, source, surface)?;
    let Some(function) = analysis.function_at(name, line) else {
        return Err(CompileError::NotFound {
            name: name.to_string(),
            file: file.to_string(),
            line: Some(line),
        });
    };
    compile_analyzed(&analysis, function)
}

/// Compiles the `forward` (any method) of a user `nn.Module` whose name stands on 1-based
/// `line` inside a class of `source`, with `self.<member>` standing for what `description`
/// (JSON, [`rextio_frontend::module::ModuleDescription`]) says the module's members compute,
/// over hidden parameters after its own (sites decided under `surface`).
pub fn compile_method_at(
    file: &str,
    source: &str,
    line: u32,
    description: &str,
    surface: Surface,
) -> Result<CompiledFunction, CompileError> {
    let description = rextio_frontend::module::ModuleDescription::from_json(description)
        .map_err(|message| CompileError::Method { message })?;
    let analysis = rextio_frontend::analyze_method(file, source, line, &description, surface)
        .map_err(|message| CompileError::Method { message })?;
    let Some(function) = analysis.functions.first() else {
        return Err(CompileError::Syntax {
            file: file.to_string(),
            reason: whole_file_refusal(&analysis.diagnostics),
            rendered: render_all(&analysis.diagnostics, file, source),
        });
    };
    compile_analyzed(&analysis, function)
}

/// Why a file's diagnostics are the whole answer, in words that follow its name: it does not
/// parse, or it nests deeper than the stated limit (RXT035, which is no syntax error).
pub fn whole_file_refusal(diagnostics: &[Diagnostic]) -> &'static str {
    let too_deep = rextio_ir::codes::Rxt::TooDeep.code();
    if diagnostics.iter().any(|d| d.code == too_deep) {
        "nests too deeply to compile"
    } else {
        "does not parse"
    }
}

/// The analysis of a source that parses; a syntax error is the whole answer otherwise.
fn analyze_parsed(file: &str, source: &str, surface: Surface) -> Result<Analysis, CompileError> {
    let analysis = analyze_with(file, source, surface);
    if !analysis.diagnostics.is_empty() && analysis.functions.is_empty() {
        return Err(CompileError::Syntax {
            file: file.to_string(),
            reason: whole_file_refusal(&analysis.diagnostics),
            rendered: render_all(&analysis.diagnostics, file, source),
        });
    }
    Ok(analysis)
}

pub(crate) fn compile_analyzed(
    analysis: &Analysis,
    function: &FunctionAnalysis,
) -> Result<CompiledFunction, CompileError> {
    let render =
        |diagnostics: &[Diagnostic]| render_all(diagnostics, &analysis.file, &analysis.source);
    let name = function.name.as_str();
    let parsed = match (&function.status, &function.ir) {
        (Status::Native, Some(ir)) => ir.clone(),
        (Status::NotCandidate, _) if function.diagnostics.is_empty() => {
            let note = Diagnostic::error(
                rextio_ir::codes::Rxt::NoMarker,
                format!("`{name}` uses no rextio_torch.types annotation, so there is nothing to compile"),
            )
            .with_primary(function.span, "annotate tensor parameters, e.g. `x: TensorF32Cpu2D`");
            return Err(CompileError::NotNative {
                name: name.to_string(),
                rendered: render(std::slice::from_ref(&note)),
                diagnostics: vec![note],
            });
        }
        _ => {
            return Err(CompileError::NotNative {
                name: name.to_string(),
                rendered: render(&function.diagnostics),
                diagnostics: function.diagnostics.clone(),
            })
        }
    };
    let (optimized, stages) =
        optimize(parsed.clone()).map_err(|errors| CompileError::Internal {
            name: name.to_string(),
            rendered: render(&errors),
        })?;
    Ok(CompiledFunction {
        name: name.to_string(),
        parsed,
        optimized,
        stages,
    })
}
