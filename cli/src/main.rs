//! `rextio-torch`: the command-line face of the compiler. Every outcome is either printed or
//! reported with its exit code; no command succeeds silently.
//!
//! - `check FILE [--format human|json]`: what compiles natively and why the rest does not.
//!   Exit 0 when every candidate function compiles (a file without functions says so and
//!   exits 0), 1 when any stays on Python (a rejected or uncovered site, or source that does
//!   not parse), 2 on usage or I/O errors.
//! - `dump-ir FILE [--stage parsed|fused|dce|optimized] [--format text|dot] [--function F]`:
//!   the IR of every native function (or of `F`) on stdout; each dot graph is named after its
//!   function. Functions that stay on Python are listed on stderr. Exit 0 when IR was printed
//!   for every function asked for, 1 when the source does not parse, no function compiles
//!   natively, `F` is not a native function (missing, not a candidate, or rejected: the
//!   reason is on stderr) or the pipeline fails, 2 on usage or I/O errors.
//! - `emit FILE -o DIR [--module NAME]`: a self-contained project that
//!   `pip install --no-build-isolation .` builds into the Python package NAME
//!   (`docs/emitted-crate.md`).
//!
//! Error text goes to stderr: usage errors from clap, the others prefixed `rextio-torch:`,
//! with source diagnostics rendered by codespan-reporting.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use rextio_backend::{emit_crate, CrateOptions};
use rextio_driver::{compile_function, compile_module, CompileError, CompiledFunction};
use rextio_frontend::{analyze, Analysis, Status};
use rextio_ir::graph::to_dot;
use rextio_ir::print::print_function;
use rextio_ir::Function;

#[derive(Parser)]
#[command(
    name = "rextio-torch",
    version,
    about = "Compile typed PyTorch inference code to fused native code"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Report, per function and site, what compiles natively and why the rest stays on Python.
    Check {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
    },
    /// Print the IR of the native functions at one pipeline stage.
    DumpIr {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = Stage::Optimized)]
        stage: Stage,
        #[arg(long, value_enum, default_value_t = IrFormat::Text)]
        format: IrFormat,
        /// Only this function (default: every native function).
        #[arg(long)]
        function: Option<String>,
    },
    /// Write a Cargo project (PyO3 extension) for the native functions of FILE.
    Emit {
        file: PathBuf,
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
        /// Python module name (default: the file's stem).
        #[arg(long)]
        module: Option<String>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Stage {
    Parsed,
    Fused,
    Dce,
    Optimized,
}

#[derive(Clone, Copy, ValueEnum)]
enum IrFormat {
    Text,
    Dot,
}

/// A failure that is the user's or the file system's, not the program's: exit 2.
struct UsageError(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { file, format } => check(&file, format),
        Command::DumpIr {
            file,
            stage,
            format,
            function,
        } => dump_ir(&file, stage, format, function.as_deref()),
        Command::Emit { file, out, module } => emit(&file, &out, module.as_deref()),
    };
    match result {
        Ok(code) => code,
        Err(UsageError(message)) => {
            eprintln!("rextio-torch: {message}");
            ExitCode::from(2)
        }
    }
}

fn read(file: &Path) -> Result<String, UsageError> {
    std::fs::read_to_string(file)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", file.display())))
}

fn check(file: &Path, format: CheckFormat) -> Result<ExitCode, UsageError> {
    let source = read(file)?;
    let name = file.display().to_string();
    let analysis = analyze(&name, &source);
    let all_native = analysis.diagnostics.is_empty()
        && analysis
            .functions
            .iter()
            .all(|f| f.status != Status::Fallback);
    match format {
        CheckFormat::Json => {
            let json = serde_json::to_string_pretty(&analysis.to_json())
                .map_err(|e| UsageError(format!("cannot serialize the report: {e}")))?;
            println!("{json}");
        }
        CheckFormat::Human => {
            print!("{}", analysis.render_diagnostics());
            if analysis.diagnostics.is_empty() && analysis.functions.is_empty() {
                println!("{name}: no module-level functions; nothing to compile");
            }
            for f in &analysis.functions {
                let status = match f.status {
                    Status::Native => "native",
                    Status::Fallback => "fallback (stays on Python)",
                    Status::NotCandidate => "not a candidate",
                };
                let claimed = f.sites.iter().filter(|s| s.rule_id.is_some()).count();
                println!(
                    "{name}:{}: {}: {status} ({claimed}/{} sites claimed)",
                    f.line,
                    f.name,
                    f.sites.len()
                );
            }
        }
    }
    Ok(if all_native {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

impl Stage {
    /// The stage's name in the pipeline's dumps.
    fn name(self) -> &'static str {
        match self {
            Stage::Parsed => "parsed",
            Stage::Fused => "fused",
            Stage::Dce => "dce",
            Stage::Optimized => "optimized",
        }
    }
}

fn dump_ir(
    file: &Path,
    stage: Stage,
    format: IrFormat,
    only: Option<&str>,
) -> Result<ExitCode, UsageError> {
    let source = read(file)?;
    let name = file.display().to_string();
    let compiled = match only {
        Some(function) => vec![compile_function(&name, &source, function)],
        None => {
            let (analysis, compiled) = compile_module(&name, &source);
            if !analysis.diagnostics.is_empty() {
                eprint!(
                    "rextio-torch: {name} does not parse; no IR to dump:\n{}",
                    analysis.render_diagnostics()
                );
                return Ok(ExitCode::from(1));
            }
            for f in analysis
                .functions
                .iter()
                .filter(|f| f.status == Status::Fallback)
            {
                eprintln!(
                    "{name}:{}: {} stays on Python (see `rextio-torch check`)",
                    f.line, f.name
                );
            }
            if compiled.is_empty() {
                eprintln!("rextio-torch: {}", no_native_function(&analysis));
                return Ok(ExitCode::from(1));
            }
            compiled
        }
    };
    let mut failed = false;
    let mut first = true;
    for result in compiled {
        match result.and_then(|c| stage_of(c, stage)) {
            Ok(f) => {
                if !first {
                    println!();
                }
                first = false;
                match format {
                    IrFormat::Text => print!("{}", print_function(&f)),
                    IrFormat::Dot => print!("{}", to_dot(&f)),
                }
            }
            Err(e) => {
                failed = true;
                report(&e);
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The function as it stood after `stage`.
fn stage_of(c: CompiledFunction, stage: Stage) -> Result<Function, CompileError> {
    c.stages
        .into_iter()
        .find(|(s, _)| *s == stage.name())
        .map(|(_, f)| f)
        .ok_or_else(|| CompileError::Internal {
            name: c.name,
            rendered: format!("the pipeline recorded no stage `{}`", stage.name()),
        })
}

/// Why a module that parses has no IR to dump.
fn no_native_function(analysis: &Analysis) -> String {
    let file = &analysis.file;
    if analysis.functions.is_empty() {
        return format!("{file} defines no module-level functions; no IR to dump");
    }
    let count = |status: Status| {
        analysis
            .functions
            .iter()
            .filter(|f| f.status == status)
            .count()
    };
    let mut why = vec![
        format!("{} stay on Python", count(Status::Fallback)),
        format!(
            "{} use no rextio_torch.types annotation",
            count(Status::NotCandidate)
        ),
    ];
    // A native `def` whose name a later `def` rebinds is never compiled.
    let rebound = count(Status::Native);
    if rebound > 0 {
        why.push(format!("{rebound} rebound by a later def"));
    }
    format!(
        "no function of {file} compiles natively ({}); no IR to dump. `rextio-torch check \
         {file}` says why",
        why.join(", ")
    )
}

/// A compile error on stderr: one-line errors get the command's prefix, rendered
/// diagnostics follow as they are.
fn report(e: &CompileError) {
    let text = e.to_string();
    if text.starts_with("rextio-torch") {
        eprintln!("{text}");
    } else {
        eprintln!("rextio-torch: {text}");
    }
}

fn emit(file: &Path, out: &Path, module: Option<&str>) -> Result<ExitCode, UsageError> {
    let source = read(file)?;
    let name = file.display().to_string();
    let module = match module {
        Some(m) => m.to_string(),
        None => file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let (analysis, compiled) = compile_module(&name, &source);
    let mut functions = Vec::new();
    for result in compiled {
        match result {
            Ok(c) => functions.push(c.optimized),
            Err(e) => eprintln!("{e}"),
        }
    }
    for f in analysis
        .functions
        .iter()
        .filter(|f| f.status == Status::Fallback)
    {
        eprintln!(
            "{name}:{}: {} stays on Python (see `rextio-torch check`)",
            f.line, f.name
        );
    }
    if functions.is_empty() {
        return Err(UsageError(format!(
            "{name} has no function that compiles natively; nothing to emit"
        )));
    }
    let files = emit_crate(&functions, &CrateOptions::new(&module, &name))
        .map_err(|e| UsageError(e.to_string()))?;
    for f in &files {
        let path = out.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| UsageError(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, &f.contents)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))?;
    }
    println!(
        "wrote {} ({} function(s)) to {}",
        module,
        functions.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
