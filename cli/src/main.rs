//! `rextio-torch`: the command-line face of the compiler.
//!
//! - `check FILE [--format human|json]`: what compiles natively and why the rest does not.
//!   Exit 0 when every candidate function compiles, 1 when any stays on Python (a rejected
//!   or uncovered site, or source that does not parse), 2 on usage or I/O errors.
//! - `dump-ir FILE [--stage parsed|fused|dce|optimized] [--format text|dot] [--function F]`.
//! - `emit FILE -o DIR [--module NAME]`: a Cargo project building a Python extension.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use rextio_backend::{emit_crate, CrateOptions};
use rextio_driver::{compile_function, compile_module};
use rextio_frontend::{analyze, Status};
use rextio_ir::graph::to_dot;
use rextio_ir::print::print_function;

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
        None => compile_module(&name, &source).1,
    };
    let stage_name = match stage {
        Stage::Parsed => "parsed",
        Stage::Fused => "fused",
        Stage::Dce => "dce",
        Stage::Optimized => "optimized",
    };
    let mut failed = false;
    let mut first = true;
    for result in compiled {
        match result {
            Ok(c) => {
                let Some((_, f)) = c.stages.iter().find(|(s, _)| *s == stage_name) else {
                    return Err(UsageError(format!(
                        "no stage `{stage_name}` in the pipeline"
                    )));
                };
                if !first {
                    println!();
                }
                first = false;
                match format {
                    IrFormat::Text => print!("{}", print_function(f)),
                    IrFormat::Dot => print!("{}", to_dot(f)),
                }
            }
            Err(e) => {
                failed = true;
                eprintln!("{e}");
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
    let files = emit_crate(&functions, &CrateOptions::from_workspace(&module, &name))
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
