//! `rextio-torch`: the command-line face of the compiler. Every outcome is either printed or
//! reported with its exit code; no command succeeds silently.
//!
//! The commands live in the driver, as a library, so that the `rextio-torch` binary
//! (`cli/`) and `python -m rextio_torch` (through the Python extension) run the same parser
//! and the same code, and print the same text with the same exit codes.
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
//! - `emit FILE -o DIR [--module NAME] [--standalone]`: a self-contained project that
//!   `pip install --no-build-isolation .` builds into the Python package NAME
//!   (`docs/emitted-crate.md`), or with `--standalone` a Rust library crate NAME with no
//!   Python in it and an example binary (`docs/standalone-crate.md`).
//! - `build FILE [--function F]... [-o DIR] [--module NAME] [--cache-dir DIR] [--python PY]`:
//!   builds the native functions (or the `F`s) ahead of time with cargo into the build cache
//!   ([`aot`], `docs/aot.md`), or finds them there; with `-o`, copies the package to
//!   `DIR/NAME`. Exit 0 when the extension is there, 1 when nothing compiles natively, an `F`
//!   is not native, or the build cannot be done (no cargo, no torch, cargo fails), 2 on usage
//!   or I/O errors.
//! - `doctor [--format text|json] [--python PY]`: what the project needs and what this host
//!   has ([`doctor`]). Exit 0 when everything required is there, 1 otherwise.
//!
//! `check`, `dump-ir`, `emit` and `build` take `--surface extended|reference` (default
//! extended): which surface claims the sites ([`Surface`]); `reference` gives the reference
//! plugin's outcome for every site.
//!
//! Error text goes to stderr: usage errors from clap, the others prefixed `rextio-torch:`,
//! with source diagnostics rendered by codespan-reporting.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use rextio_ir::graph::to_dot;

use crate::doctor::{self, Host};
use crate::{
    analyze_with, aot, compile_function, compile_module, emit_crate, emit_standalone_crate,
    print_function, write_files, Analysis, CompileError, CompiledFunction, CrateOptions, Function,
    Status, Surface,
};

#[derive(Parser)]
#[command(
    name = "rextio-torch",
    version,
    about = "Compile typed PyTorch inference code to fused native code"
)]
pub struct Cli {
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
        /// Which surface claims the sites: every op and form rextio-torch knows, or only the
        /// reference plugin's (docs/architecture.md, "Surfaces").
        #[arg(long, value_enum, default_value_t = SurfaceArg::Extended)]
        surface: SurfaceArg,
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
        /// Which surface claims the sites: every op and form rextio-torch knows, or only the
        /// reference plugin's (docs/architecture.md, "Surfaces").
        #[arg(long, value_enum, default_value_t = SurfaceArg::Extended)]
        surface: SurfaceArg,
    },
    /// Write a Cargo project (PyO3 extension, or with --standalone a Rust library without
    /// Python) for the native functions of FILE.
    Emit {
        file: PathBuf,
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
        /// Python module (or, with --standalone, crate) name (default: the file's stem).
        #[arg(long)]
        module: Option<String>,
        /// A Rust library over `&tch::Tensor` with no Python in it, and an example binary
        /// (docs/standalone-crate.md).
        #[arg(long)]
        standalone: bool,
        /// Which surface claims the sites: every op and form rextio-torch knows, or only the
        /// reference plugin's (docs/architecture.md, "Surfaces").
        #[arg(long, value_enum, default_value_t = SurfaceArg::Extended)]
        surface: SurfaceArg,
    },
    /// Build the native functions of FILE ahead of time with cargo, into the build cache
    /// (docs/aot.md); a second build of the same input reuses the cached extension.
    Build {
        file: PathBuf,
        /// Only this function (repeat for more; default: every native function).
        #[arg(long)]
        function: Vec<String>,
        /// Also copy the built package to DIR/MODULE (import it with DIR on sys.path).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// Python module name (default: the file's stem).
        #[arg(long)]
        module: Option<String>,
        /// The cache (default: $REXTIO_TORCH_CACHE_DIR, else $XDG_CACHE_HOME/rextio-torch,
        /// else ~/.cache/rextio-torch).
        #[arg(long)]
        cache_dir: Option<PathBuf>,
        /// The Python to build for (default: the one tch's build runs: `python` when
        /// VIRTUAL_ENV is set, else `python3`; inside Python, that interpreter).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Which surface claims the sites: every op and form rextio-torch knows, or only the
        /// reference plugin's (docs/architecture.md, "Surfaces").
        #[arg(long, value_enum, default_value_t = SurfaceArg::Extended)]
        surface: SurfaceArg,
    },
    /// Report what the project needs and what this host has (exit 0 ready, 1 not).
    Doctor {
        #[arg(long, value_enum, default_value_t = DoctorFormat::Text)]
        format: DoctorFormat,
        /// The Python to inspect (default: the one tch's build runs: `python` when
        /// VIRTUAL_ENV is set, else `python3`; inside Python, that interpreter).
        #[arg(long)]
        python: Option<PathBuf>,
    },
}

/// `--surface` (the driver's [`Surface`]).
#[derive(Clone, Copy, ValueEnum)]
enum SurfaceArg {
    Extended,
    Reference,
}

impl From<SurfaceArg> for Surface {
    fn from(arg: SurfaceArg) -> Surface {
        match arg {
            SurfaceArg::Extended => Surface::Extended,
            SurfaceArg::Reference => Surface::Reference,
        }
    }
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

#[derive(Clone, Copy, ValueEnum)]
enum DoctorFormat {
    Text,
    Json,
}

/// A failure that is the user's or the file system's, not the program's: exit 2.
struct UsageError(String);

/// Where a command writes: stdout and stderr (the process's, or buffers).
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

// Output is best effort: a closed pipe must not turn into a panic.
macro_rules! out {
    ($io:expr, $($arg:tt)*) => {{ let _ = write!($io.out, $($arg)*); }};
}
macro_rules! outln {
    ($io:expr) => {{ let _ = writeln!($io.out); }};
    ($io:expr, $($arg:tt)*) => {{ let _ = writeln!($io.out, $($arg)*); }};
}
macro_rules! err {
    ($io:expr, $($arg:tt)*) => {{ let _ = write!($io.err, $($arg)*); }};
}
macro_rules! errln {
    ($io:expr, $($arg:tt)*) => {{ let _ = writeln!($io.err, $($arg)*); }};
}

/// Parses a command line (`args[0]` is the program and is skipped), showing `bin_name` in
/// usage text. Errors are clap's, to be printed with [`usage_error`].
pub fn parse<I, T>(bin_name: &str, args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = Cli::command()
        .bin_name(bin_name.to_string())
        .try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// Prints a parse failure as clap would (help and version on stdout with exit 0, errors on
/// stderr with exit 2, without colour) and returns its exit code.
pub fn usage_error(error: &clap::Error, io: &mut Io<'_>) -> u8 {
    let text = error.render().to_string();
    if error.use_stderr() {
        err!(io, "{text}");
    } else {
        out!(io, "{text}");
    }
    u8::try_from(error.exit_code()).unwrap_or(2)
}

/// Runs a parsed command; returns its exit code.
pub fn execute(cli: Cli, host: &dyn Host, io: &mut Io<'_>) -> u8 {
    let result = match cli.command {
        Command::Check {
            file,
            format,
            surface,
        } => check(&file, format, surface.into(), io),
        Command::DumpIr {
            file,
            stage,
            format,
            function,
            surface,
        } => dump_ir(
            &file,
            stage,
            format,
            function.as_deref(),
            surface.into(),
            io,
        ),
        Command::Emit {
            file,
            out,
            module,
            standalone,
            surface,
        } => emit(
            &file,
            &out,
            module.as_deref(),
            standalone,
            surface.into(),
            io,
        ),
        Command::Build {
            file,
            function,
            out,
            module,
            cache_dir,
            python,
            surface,
        } => build(
            &BuildArgs {
                file: &file,
                functions: &function,
                out: out.as_deref(),
                module: module.as_deref(),
                cache_dir: cache_dir.as_deref(),
                python: python.as_deref(),
                surface: surface.into(),
            },
            host,
            io,
        ),
        Command::Doctor { format, python } => {
            let report = doctor::diagnose(&host.facts(python.as_deref()));
            match format {
                DoctorFormat::Text => out!(io, "{}", report.render()),
                DoctorFormat::Json => {
                    outln!(
                        io,
                        "{}",
                        serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
                    );
                }
            }
            Ok(report.exit_code())
        }
    };
    match result {
        Ok(code) => code,
        Err(UsageError(message)) => {
            errln!(io, "rextio-torch: {message}");
            2
        }
    }
}

/// Parses and runs `args` (with the program name first); what a `main` does.
pub fn run<I, T>(bin_name: &str, args: I, host: &dyn Host, io: &mut Io<'_>) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match parse(bin_name, args) {
        Ok(cli) => execute(cli, host, io),
        Err(error) => usage_error(&error, io),
    }
}

fn read(file: &Path) -> Result<String, UsageError> {
    std::fs::read_to_string(file)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", file.display())))
}

fn check(
    file: &Path,
    format: CheckFormat,
    surface: Surface,
    io: &mut Io<'_>,
) -> Result<u8, UsageError> {
    let source = read(file)?;
    let name = file.display().to_string();
    let analysis = analyze_with(&name, &source, surface);
    let all_native = analysis.diagnostics.is_empty()
        && analysis
            .functions
            .iter()
            .all(|f| f.status != Status::Fallback);
    match format {
        CheckFormat::Json => {
            let json = serde_json::to_string_pretty(&analysis.to_json())
                .map_err(|e| UsageError(format!("cannot serialize the report: {e}")))?;
            outln!(io, "{json}");
        }
        CheckFormat::Human => {
            out!(io, "{}", analysis.render_diagnostics());
            // An `nn.Module` is compiled from a built instance (its members decide what
            // `self.fc(x)` is), which a file alone does not have: say so, class by class.
            let classes = rextio_frontend::forward_classes(&source);
            if analysis.diagnostics.is_empty() && analysis.functions.is_empty() {
                if classes.is_empty() {
                    outln!(io, "{name}: no module-level functions; nothing to compile");
                } else {
                    outln!(io, "{name}: no module-level functions");
                }
            }
            for class in classes {
                outln!(
                    io,
                    "{name}:{}: {}: a class with `forward` (an nn.Module?): `check` cannot \
                     compile it from the file alone, since its layers exist only once it is \
                     built; build one and call rextio_torch.explain(model) (or \
                     rextio_torch.compile(model) and a call) in Python",
                    class.line,
                    class.name
                );
            }
            for f in &analysis.functions {
                let status = match f.status {
                    Status::Native => "native",
                    Status::Fallback => "fallback (stays on Python)",
                    Status::NotCandidate => "not a candidate",
                };
                let claimed = f.sites.iter().filter(|s| s.rule_id.is_some()).count();
                outln!(
                    io,
                    "{name}:{}: {}: {status} ({claimed}/{} sites claimed)",
                    f.line,
                    f.name,
                    f.sites.len()
                );
            }
        }
    }
    Ok(if all_native { 0 } else { 1 })
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

/// The stage names `dump-ir --stage` accepts, in pipeline order.
pub fn dump_ir_stages() -> Vec<&'static str> {
    Stage::value_variants().iter().map(|s| s.name()).collect()
}

fn dump_ir(
    file: &Path,
    stage: Stage,
    format: IrFormat,
    only: Option<&str>,
    surface: Surface,
    io: &mut Io<'_>,
) -> Result<u8, UsageError> {
    let source = read(file)?;
    let name = file.display().to_string();
    let compiled = match only {
        Some(function) => vec![compile_function(&name, &source, function, surface)],
        None => {
            let Some((analysis, compiled)) =
                compile_reporting(&name, &source, surface, "no IR to dump", io)
            else {
                return Ok(1);
            };
            if compiled.is_empty() {
                errln!(io, "rextio-torch: {}", no_native_function(&analysis));
                return Ok(1);
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
                    outln!(io);
                }
                first = false;
                match format {
                    IrFormat::Text => out!(io, "{}", print_function(&f)),
                    IrFormat::Dot => out!(io, "{}", to_dot(&f)),
                }
            }
            Err(e) => {
                failed = true;
                report(&e, io);
            }
        }
    }
    Ok(if failed { 1 } else { 0 })
}

/// Compiles every native function of a module, telling on stderr which functions stay on
/// Python; `None` (after saying so, with `nothing` as what the command then cannot do) when
/// the file does not parse.
fn compile_reporting(
    name: &str,
    source: &str,
    surface: Surface,
    nothing: &str,
    io: &mut Io<'_>,
) -> Option<(Analysis, Vec<Result<CompiledFunction, CompileError>>)> {
    let (analysis, compiled) = compile_module(name, source, surface);
    if !analysis.diagnostics.is_empty() {
        err!(
            io,
            "rextio-torch: {name} {}; {nothing}:\n{}",
            crate::whole_file_refusal(&analysis.diagnostics),
            analysis.render_diagnostics()
        );
        return None;
    }
    report_fallbacks(name, &analysis, io);
    Some((analysis, compiled))
}

/// One stderr line per function of the module that stays on Python.
fn report_fallbacks(name: &str, analysis: &Analysis, io: &mut Io<'_>) {
    for f in analysis
        .functions
        .iter()
        .filter(|f| f.status == Status::Fallback)
    {
        errln!(
            io,
            "{name}:{}: {} stays on Python (see `rextio-torch check`)",
            f.line,
            f.name
        );
    }
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
fn report(e: &CompileError, io: &mut Io<'_>) {
    let text = e.to_string();
    if text.starts_with("rextio-torch") {
        errln!(io, "{text}");
    } else {
        errln!(io, "rextio-torch: {text}");
    }
}

fn emit(
    file: &Path,
    out: &Path,
    module: Option<&str>,
    standalone: bool,
    surface: Surface,
    io: &mut Io<'_>,
) -> Result<u8, UsageError> {
    let source = read(file)?;
    let name = file.display().to_string();
    let module = match module {
        Some(m) => m.to_string(),
        None => file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let (analysis, compiled) = compile_module(&name, &source, surface);
    let mut functions = Vec::new();
    for result in compiled {
        match result {
            Ok(c) => functions.push(c.optimized),
            Err(e) => errln!(io, "{e}"),
        }
    }
    report_fallbacks(&name, &analysis, io);
    if functions.is_empty() {
        return Err(UsageError(format!(
            "{name} has no function that compiles natively; nothing to emit"
        )));
    }
    let options = CrateOptions::new(&module, &name);
    let files = if standalone {
        emit_standalone_crate(&functions, &options)
    } else {
        emit_crate(&functions, &options)
    }
    .map_err(|e| UsageError(e.to_string()))?;
    write_files(out, &files).map_err(UsageError)?;
    let kind = if standalone { "standalone, " } else { "" };
    outln!(
        io,
        "wrote {} ({kind}{} function(s)) to {}",
        module,
        functions.len(),
        out.display()
    );
    Ok(0)
}

struct BuildArgs<'a> {
    file: &'a Path,
    functions: &'a [String],
    out: Option<&'a Path>,
    module: Option<&'a str>,
    cache_dir: Option<&'a Path>,
    python: Option<&'a Path>,
    surface: Surface,
}

/// Progress of a build on the command's stderr, line by line.
struct ErrProgress<'a, 'b> {
    io: &'a mut Io<'b>,
    host: &'a dyn Host,
}

impl aot::Progress for ErrProgress<'_, '_> {
    fn line(&mut self, text: &str) {
        errln!(self.io, "{text}");
        let _ = self.io.err.flush();
    }

    fn keep_going(&mut self) -> bool {
        self.host.keep_going()
    }
}

fn build(args: &BuildArgs<'_>, host: &dyn Host, io: &mut Io<'_>) -> Result<u8, UsageError> {
    let source = read(args.file)?;
    let name = args.file.display().to_string();
    let module = match args.module {
        Some(m) => m.to_string(),
        None => args
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let mut functions = Vec::new();
    let mut failed = false;
    if args.functions.is_empty() {
        let Some((analysis, compiled)) =
            compile_reporting(&name, &source, args.surface, "nothing to build", io)
        else {
            return Ok(1);
        };
        for result in compiled {
            match result {
                Ok(c) => functions.push(c.optimized),
                Err(e) => {
                    failed = true;
                    report(&e, io);
                }
            }
        }
        if functions.is_empty() && !failed {
            errln!(
                io,
                "rextio-torch: {}",
                no_native_function(&analysis).replace("no IR to dump", "nothing to build")
            );
            return Ok(1);
        }
    } else {
        for function in args.functions {
            match compile_function(&name, &source, function, args.surface) {
                Ok(c) => functions.push(c.optimized),
                Err(e) => {
                    failed = true;
                    report(&e, io);
                }
            }
        }
    }
    if failed {
        return Ok(1);
    }
    let cache = aot::cache_dir(args.cache_dir, |n| std::env::var_os(n)).map_err(UsageError)?;
    let python = match host.python_env(args.python) {
        Ok(p) => p,
        Err(e) => {
            errln!(
                io,
                "rextio-torch: cannot build {name}: no Python environment with torch to build \
                 for: {e}"
            );
            return Ok(1);
        }
    };
    let count = functions.len();
    let selection = functions
        .iter()
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let request = aot::Request {
        source_label: name.clone(),
        source,
        functions,
        selection,
        module: Some(module),
        python,
        cache: cache.path,
    };
    let built = {
        let mut progress = ErrProgress { io, host };
        aot::build(&request, &mut progress)
    };
    let built = match built {
        Ok(b) => b,
        Err(aot::AotError::Emit(message)) => return Err(UsageError(message)),
        Err(e) => {
            errln!(io, "rextio-torch: cannot build {name} ahead of time: {e}");
            return Ok(1);
        }
    };
    let verb = if built.reused { "reused" } else { "built" };
    outln!(
        io,
        "{verb} {} ({count} function(s)) in {}",
        built.module,
        built.entry.display()
    );
    if let Some(out) = args.out {
        let dest = aot::install_package(&built, out).map_err(UsageError)?;
        outln!(
            io,
            "wrote package {} to {} (import it with {} on sys.path, after torch)",
            built.module,
            dest.display(),
            out.display()
        );
    }
    Ok(0)
}
