//! The compiler driver: Python source -> frontend (claims, IR) -> passes (validate, fuse,
//! dead-code elimination). The CLI, the Python package and the tests all compile through
//! here, so they see one optimized IR per function; the executor and the backend consume it.

use rextio_frontend::{analyze, Analysis, Status};
use rextio_ir::diag::render_all;
use rextio_ir::{Diagnostic, Function};
use rextio_passes::default_pipeline;
use rextio_passes::pipeline::Dumps;
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
    #[error("no function `{name}` in {file} (only module-level functions compile)")]
    NotFound { name: String, file: String },
    /// The source does not parse.
    #[error("{file} does not parse:\n{rendered}")]
    Syntax { file: String, rendered: String },
    /// The pipeline rejected IR the frontend produced: a compiler bug, reported not hidden.
    #[error("internal compiler error in `{name}`:\n{rendered}")]
    Internal { name: String, rendered: String },
}

/// Runs the pass pipeline (validating before and between passes) on one function.
pub fn optimize(f: Function) -> Result<(Function, Dumps), Vec<Diagnostic>> {
    default_pipeline().validating(true).run_with_dumps(f)
}

/// Compiles every native function of a module; the analysis says what happened to the rest.
pub fn compile_module(
    file: &str,
    source: &str,
) -> (Analysis, Vec<Result<CompiledFunction, CompileError>>) {
    let analysis = analyze(file, source);
    let compiled = analysis
        .functions
        .iter()
        .filter(|f| f.status == Status::Native)
        .map(|f| compile_analyzed(&analysis, &f.name))
        .collect();
    (analysis, compiled)
}

/// Compiles the module-level function `name` of `source`.
pub fn compile_function(
    file: &str,
    source: &str,
    name: &str,
) -> Result<CompiledFunction, CompileError> {
    let analysis = analyze(file, source);
    if !analysis.diagnostics.is_empty() && analysis.functions.is_empty() {
        return Err(CompileError::Syntax {
            file: file.to_string(),
            rendered: render_all(&analysis.diagnostics, file, source),
        });
    }
    compile_analyzed(&analysis, name)
}

fn compile_analyzed(analysis: &Analysis, name: &str) -> Result<CompiledFunction, CompileError> {
    let render =
        |diagnostics: &[Diagnostic]| render_all(diagnostics, &analysis.file, &analysis.source);
    let Some(function) = analysis.function(name) else {
        return Err(CompileError::NotFound {
            name: name.to_string(),
            file: analysis.file.clone(),
        });
    };
    let parsed = match (&function.status, &function.ir) {
        (Status::Native, Some(ir)) => ir.clone(),
        (Status::NotCandidate, _) if function.diagnostics.is_empty() => {
            let note = Diagnostic::error(
                "RXT001",
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
