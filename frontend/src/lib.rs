//! Python source to rextio-torch IR: parsing, import resolution, claim rules, diagnostics.
//!
//! [`analyze`] is the whole frontend: it parses a module ([`parse`]), resolves its imports
//! ([`imports`]), selects the module-level functions whose signature uses a marker type
//! ([`signature`]), walks each body offering every call/operator site to the claim rules the
//! way the reference Rextio host does ([`sites`]), lowers fully claimed functions to IR
//! ([`lower`]) and reports sites, statuses and diagnostics ([`report`]). Diagnostic codes the
//! frontend emits itself are listed in [`codes`]. [`analyze_with`] decides every site under
//! a chosen [`Surface`] (extended by default, or the reference plugin's).
//!
//! Function status follows the reference host in auto mode:
//! - `not-candidate`: no marker type in the signature, `@rextio.exempt`, or some site the host
//!   never offers to the plugin (then only the `RXT080` warnings are kept: the function simply
//!   stays on Python);
//! - `native`: every tensor site is claimed and no error applies; the IR is built;
//! - `fallback`: anything else (each reason is an error diagnostic).

pub mod claim;
pub mod codes;
pub mod depth;
pub mod imports;
pub mod lower;
pub mod module;
pub mod parse;
pub mod report;
pub mod signature;
pub mod sites;

use std::collections::{HashMap, HashSet};

use rextio_ir::{Diagnostic, Severity, Span};
use ruff_python_ast::{Expr, Stmt, StmtFunctionDef};
use serde::Serialize;

pub use claim::{SiteKind, Surface};

use crate::imports::{AnnotatedType, ImportMap};
use crate::signature::Signature;

/// The analysis of one source file.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub file: String,
    pub source: String,
    /// Module-level functions in source order.
    pub functions: Vec<FunctionAnalysis>,
    /// Module-level diagnostics (syntax errors); function diagnostics live on the functions.
    pub diagnostics: Vec<Diagnostic>,
    /// The surface that decided every site ([`claim::Surface`]).
    pub surface: Surface,
}

#[derive(Clone, Debug)]
pub struct FunctionAnalysis {
    pub name: String,
    pub status: Status,
    /// Every call/operator site of the body, in the order the host offers them (post-order).
    pub sites: Vec<SiteReport>,
    /// Every diagnostic of this function (site ones and site-less ones), in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// `Some` iff `status == Native`.
    pub ir: Option<rextio_ir::Function>,
    /// The whole `def` statement.
    pub span: Span,
    /// 1-based line of the `def`.
    pub line: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Native,
    Fallback,
    NotCandidate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteOutcome {
    Claimed,
    Rejected,
    NotCovered,
    NotOffered,
}

/// One site and what became of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteReport {
    /// 1-based line/column (characters) of `span`'s start.
    pub line: u32,
    pub column: u32,
    pub kind: SiteKind,
    /// The target as offered (`torch.nn.functional.linear`, `x.relu`, `relu`, `+`).
    pub target: String,
    pub outcome: SiteOutcome,
    pub rule_id: Option<String>,
    /// Marker name of the claimed result (`TensorF32Cpu2D`).
    pub result_type: Option<String>,
    /// Diagnostic code for non-claimed sites (`RXTP-TORCH-002`, `RXT030`, `RXT080`, ...).
    pub code: Option<String>,
    pub message: Option<String>,
    /// The expression the site's diagnostic points at (method calls: name to closing paren).
    pub span: Span,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Native => "native",
            Status::Fallback => "fallback",
            Status::NotCandidate => "not-candidate",
        }
    }
}

impl SiteOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            SiteOutcome::Claimed => "claimed",
            SiteOutcome::Rejected => "rejected",
            SiteOutcome::NotCovered => "not-covered",
            SiteOutcome::NotOffered => "not-offered",
        }
    }
}

/// A class at module level with a `forward` method (an `nn.Module`, as public code writes
/// them): `check` cannot compile it (its members exist only once it is built), but says
/// where it is and how to compile it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardClass {
    pub name: String,
    /// 1-based line of the `class` statement.
    pub line: u32,
}

/// The module-level classes of `source` that define `forward` (none if it does not parse).
pub fn forward_classes(source: &str) -> Vec<ForwardClass> {
    let Ok(module) = parse::parse_module(source) else {
        return Vec::new();
    };
    module
        .body
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::ClassDef(class)
                if class
                    .body
                    .iter()
                    .any(|s| matches!(s, Stmt::FunctionDef(f) if f.name.as_str() == "forward")) =>
            {
                let start = u32::from(ruff_text_size::Ranged::start(class));
                Some(ForwardClass {
                    name: class.name.to_string(),
                    line: parse::line_column(source, start).0,
                })
            }
            _ => None,
        })
        .collect()
}

/// Analyzes one Python module under the extended surface (the default). Never panics on
/// any input: source that does not parse gives one `RXPY-001` diagnostic per syntax error
/// and no functions.
pub fn analyze(file_name: &str, source: &str) -> Analysis {
    analyze_with(file_name, source, Surface::Extended)
}

/// An empty analysis of `source` and its parsed module, or the analysis that holds the parse
/// errors.
fn parsed(
    file_name: &str,
    source: &str,
    surface: Surface,
) -> Result<(Analysis, depth::Ast), Analysis> {
    let mut analysis = Analysis {
        file: file_name.to_string(),
        source: source.to_string(),
        functions: Vec::new(),
        diagnostics: Vec::new(),
        surface,
    };
    match parse::parse_module(source) {
        Ok(module) => Ok((analysis, module)),
        Err(diagnostics) => {
            analysis.diagnostics = diagnostics;
            Err(analysis)
        }
    }
}

/// [`analyze`] with every site decided under `surface` (`surface="reference"`,
/// `--surface reference`).
pub fn analyze_with(file_name: &str, source: &str, surface: Surface) -> Analysis {
    let (mut analysis, module) = match parsed(file_name, source, surface) {
        Ok(parsed) => parsed,
        Err(analysis) => return analysis,
    };
    let imports =
        ImportMap::from_module(&module).with_extension_markers(surface == Surface::Extended);
    let defs: Vec<&StmtFunctionDef> = module
        .body
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(def) => Some(def),
            _ => None,
        })
        .collect();
    let signatures: Vec<Signature> = defs
        .iter()
        .map(|def| signature::signature(def, &imports, source))
        .collect();
    let plugin_functions: HashSet<String> = defs
        .iter()
        .zip(&signatures)
        .filter(|(_, sig)| sig.uses_marker)
        .map(|(def, _)| def.name.to_string())
        .collect();
    let no_helpers = HashMap::new();
    let lines = parse::Lines::new(source);
    let module_ctx = ModuleContext {
        source,
        lines: &lines,
        imports: &imports,
        plugin_functions: &plugin_functions,
        surface,
        helpers: &no_helpers,
    };
    let helpers = helpers(&defs, &signatures, &module_ctx, file_name);
    let module_ctx = ModuleContext {
        helpers: &helpers,
        ..module_ctx
    };
    for (def, sig) in defs.into_iter().zip(signatures) {
        analysis
            .functions
            .push(analyze_function(def, sig, &module_ctx));
    }
    analysis
}

/// Analyzes the method `def` whose name stands on 1-based `line` inside a class of the
/// module (a user `nn.Module`'s `forward`), with `self.<member>` standing for what the
/// members `description` lists compute and the hidden parameters after its own
/// ([`module`]). The analysis holds that one function; an error says why there is none
/// (the source does not parse, no method there, no `self`).
pub fn analyze_method(
    file_name: &str,
    source: &str,
    line: u32,
    description: &module::ModuleDescription,
    surface: Surface,
) -> Result<Analysis, String> {
    let (mut analysis, parsed) = match parsed(file_name, source, surface) {
        Ok(parsed) => parsed,
        Err(analysis) => return Ok(analysis),
    };
    let def = module::find_method(&parsed.body, line, source)
        .ok_or_else(|| format!("{file_name} has no method `def` on line {line}"))?;
    let mut imports = module::with_functional(
        ImportMap::from_module(&parsed).with_extension_markers(surface == Surface::Extended),
    );
    let (def, inlining, bindings) = module::rewrite(def, description, source, &parsed.body);
    for (name, path) in bindings {
        imports.bind(&name, &path);
    }
    let mut sig = signature::signature(&def, &imports, source);
    sig.params = module::method_params(sig.params, description)?;
    // A forward's result is what it returns, as eager has it: a return annotation that is
    // no marker (`-> torch.Tensor`, `-> Tensor`, `-> Optional[Tensor]`) is not checked, and
    // the result's type is inferred; a marker (`-> TensorF32Cpu2D`) is checked as written.
    if !matches!(sig.ret, AnnotatedType::Marker(_)) {
        sig.ret = AnnotatedType::Missing;
        sig.ret_span = None;
    }
    // Parameters typed by the call (`ModuleDescription::params`) make it a candidate as
    // markers in the source would.
    sig.uses_marker |= sig
        .params
        .iter()
        .any(|p| matches!(p.annotated, AnnotatedType::Marker(_)));
    let no_functions = HashSet::new();
    let no_helpers = HashMap::new();
    let lines = parse::Lines::new(source);
    let module_ctx = ModuleContext {
        source,
        lines: &lines,
        imports: &imports,
        plugin_functions: &no_functions,
        surface,
        helpers: &no_helpers,
    };
    let mut function = analyze_function(&def, sig, &module_ctx);
    if !inlining.is_empty() {
        // A member call that is not compiled stays as written, where it is also an
        // unresolved call (`RXT030` from the member's name on; a loop over a ModuleList, an
        // attribute access not lowered, `RXT031`): its `RXT093`, at `self.<name>`, says why
        // instead.
        let refused: Vec<Span> = inlining
            .iter()
            .filter_map(|d| d.primary.as_ref().map(|l| l.span))
            .collect();
        function.diagnostics.retain(|d| {
            let not_lowered = d.code == codes::NOT_LOWERED || d.code == codes::UNSUPPORTED_SYNTAX;
            let at_refused = d.primary.as_ref().is_some_and(|l| {
                refused
                    .iter()
                    .any(|r| r.start <= l.span.start && l.span.start < r.end)
            });
            // A None argument read where it is refused (`x + mask`, [`module`]'s
            // `none_args`) is no parameter, so also an undefined name there: its `RXT032`
            // says why instead.
            let undefined_there = d.code == codes::HOST_PLUGIN_TYPES
                && d.primary
                    .as_ref()
                    .is_some_and(|l| refused.contains(&l.span));
            !(undefined_there || not_lowered && at_refused)
        });
        function.status = Status::Fallback;
        function.ir = None;
        function.diagnostics.extend(with_consequence_notes(
            inlining,
            &function.name,
            Status::Fallback,
        ));
        function
            .diagnostics
            .sort_by_key(|d| d.primary.as_ref().map_or(0, |l| l.span.start));
    }
    analysis.functions.push(function);
    Ok(analysis)
}

/// What every function's analysis may consult about its module.
pub(crate) struct ModuleContext<'a> {
    pub source: &'a str,
    /// The source's line starts, for each site's line and column.
    pub lines: &'a parse::Lines<'a>,
    pub imports: &'a ImportMap,
    /// Module-level functions whose signature uses a marker type (`RXT092` targets).
    pub plugin_functions: &'a HashSet<String>,
    /// The surface every site is claimed under.
    pub surface: Surface,
    /// The module's functions a call may name that stay on Python (`docs/reference-control-flow.md`
    /// section 8), by name.
    pub helpers: &'a HashMap<String, Helper>,
}

/// A module-level function that stays on Python, as a callee of another function.
#[derive(Clone, Debug)]
pub(crate) struct Helper {
    pub kind: HelperKind,
    /// Its qualified name as the host's messages spell it (`kernels.inc`).
    pub qualified: String,
    /// The declared result (`int`, `float` or `bool`) of a scalar one.
    pub ret: Option<rextio_ir::Type>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HelperKind {
    /// `@rextio.exempt` with `int`/`float`/`bool` parameters and result.
    ExemptScalar,
    /// `@rextio.exempt` with any other signature (a tensor callback): never a boundary call.
    ExemptOther,
    /// Unmarked scalar function the host keeps on Python (not a candidate).
    FallbackOnly,
    /// Unmarked scalar function the host rejects.
    Rejected,
}

/// The module's functions that stay on Python, as callees (section 8 of
/// `docs/reference-control-flow.md`): every `@rextio.exempt` function, and every scalar-only
/// function whose own analysis (without callees of its own) is not native. Only computed
/// when some function is marked `@rextio.native` or `@rextio.exempt`: in a module without
/// the host's markers a call to an unmarked helper stays the `RXT030` it always was (the
/// status is the host's either way, `rejected`; only the code differs from its `RXT070`/
/// `RXT072`), so plain modules are analysed once per function as before.
fn helpers(
    defs: &[&StmtFunctionDef],
    signatures: &[Signature],
    ctx: &ModuleContext,
    file_name: &str,
) -> HashMap<String, Helper> {
    let mut helpers = HashMap::new();
    let marked = |def: &StmtFunctionDef, path: &str| {
        def.decorator_list
            .iter()
            .any(|d| decorator_path(&d.expression, ctx).as_deref() == Some(path))
    };
    if !defs
        .iter()
        .any(|d| marked(d, "rextio.native") || marked(d, "rextio.exempt"))
    {
        return helpers;
    }
    let module = std::path::Path::new(file_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
    // Later definitions rebind the name, as in Python.
    for (def, sig) in defs.iter().zip(signatures) {
        let name = def.name.to_string();
        let ret = lower::ir_type(sig.ret.operand_type().as_deref().unwrap_or(""));
        let kind = if marked(def, "rextio.exempt") {
            Some(if sig.scalar_callback {
                HelperKind::ExemptScalar
            } else {
                HelperKind::ExemptOther
            })
        } else if sig.scalar_only {
            match analyze_function(def, sig.clone(), ctx).status {
                Status::Native => None,
                Status::NotCandidate => Some(HelperKind::FallbackOnly),
                Status::Fallback => Some(HelperKind::Rejected),
            }
        } else {
            None
        };
        match kind {
            Some(kind) => {
                let qualified = match module {
                    Some(module) => format!("{module}.{name}"),
                    None => name.clone(),
                };
                helpers.insert(
                    name,
                    Helper {
                        kind,
                        qualified,
                        ret,
                    },
                );
            }
            None => {
                helpers.remove(&name);
            }
        }
    }
    helpers
}

/// Whether `def` is marked `@rextio.native` (the host's marker: calls to scalar functions
/// that stay on Python become boundary calls, section 8).
pub(crate) fn is_marked_native(def: &StmtFunctionDef, ctx: &ModuleContext) -> bool {
    def.decorator_list
        .iter()
        .any(|d| decorator_path(&d.expression, ctx).as_deref() == Some("rextio.native"))
}

fn analyze_function(
    def: &StmtFunctionDef,
    sig: Signature,
    ctx: &ModuleContext,
) -> FunctionAnalysis {
    let name = def.name.to_string();
    let span = parse::span_of(def);
    let (line, _) = ctx.lines.line_column(parse::span_of(&def.name).start);
    let mut analysis = FunctionAnalysis {
        name: name.clone(),
        status: Status::NotCandidate,
        sites: Vec::new(),
        diagnostics: Vec::new(),
        ir: None,
        span,
        line,
    };
    if !(sig.uses_marker || sig.scalar_only) || is_exempt(def, ctx) {
        return analysis;
    }

    let mut diagnostics = header_diagnostics(def, &sig, ctx);
    let walked = sites::walk_function(def, &sig, ctx);
    diagnostics.extend(walked.diagnostics);
    analysis.sites = walked.sites;

    let not_offered = analysis
        .sites
        .iter()
        .any(|s| s.outcome == SiteOutcome::NotOffered);
    let all_claimed = analysis
        .sites
        .iter()
        .all(|s| s.outcome == SiteOutcome::Claimed);
    let has_error = diagnostics.iter().any(|d| d.severity == Severity::Error);
    // Rejected and uncovered sites (errors) reject the function even in auto mode; a
    // site that only consumed a blocked value, and a tensor comparison the host blocks
    // itself, report no error of their own.
    if !walked.blockers.is_empty() && !has_error {
        // Core's subset violations: in auto mode the function is simply not a candidate.
        // The reasons are kept (as warnings) so that `compile` can say why.
        diagnostics.retain(|d| d.severity != Severity::Error);
        diagnostics.extend(walked.blockers.into_iter().map(|mut d| {
            d.severity = Severity::Warning;
            d
        }));
        diagnostics.sort_by_key(|d| d.primary.as_ref().map_or(0, |l| l.span.start));
        analysis.status = Status::NotCandidate;
    } else if not_offered {
        // Auto mode: the host skips the function; only the reasons are worth reporting.
        diagnostics.retain(|d| d.severity != Severity::Error);
        analysis.status = Status::NotCandidate;
    } else if all_claimed && !has_error {
        match lower::lower_function(&name, &sig, &walked.trace) {
            Ok(function) => {
                analysis.ir = Some(function);
                analysis.status = Status::Native;
            }
            Err(errors) => {
                diagnostics.extend(errors);
                analysis.status = Status::Fallback;
            }
        }
    } else {
        analysis.status = Status::Fallback;
    }
    analysis.diagnostics = with_consequence_notes(diagnostics, &name, analysis.status);
    analysis
}

/// The decorator `rextio_torch.compile` as imports resolve it (`import rextio_torch`,
/// `from rextio_torch import compile as c`, ...).
pub const COMPILE_DECORATOR: &str = "rextio_torch.compile";

/// `@rextio.exempt` keeps a function on Python.
fn is_exempt(def: &StmtFunctionDef, ctx: &ModuleContext) -> bool {
    def.decorator_list
        .iter()
        .any(|d| decorator_path(&d.expression, ctx).as_deref() == Some("rextio.exempt"))
}

fn decorator_path(expr: &Expr, ctx: &ModuleContext) -> Option<String> {
    let callee = match expr {
        Expr::Call(call) => &*call.func,
        other => other,
    };
    ctx.imports.resolve_expr(callee, &|_| false)
}

/// Diagnostics about the `def` line itself: async, decorators, parameters.
fn header_diagnostics(
    def: &StmtFunctionDef,
    sig: &Signature,
    ctx: &ModuleContext,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if def.is_async {
        diagnostics.push(
            Diagnostic::error(
                codes::UNSUPPORTED_SYNTAX,
                codes::unsupported_statement("async function"),
            )
            .with_primary(parse::span_of(&def.name), "declared `async def`"),
        );
    }
    for decorator in &def.decorator_list {
        let path = decorator_path(&decorator.expression, ctx);
        // `@rextio.native` is the host's own marker; `@rextio_torch.compile` (bare or called)
        // is this package's decorator, so a module compiled through it must not reject itself.
        if matches!(path.as_deref(), Some("rextio.native" | COMPILE_DECORATOR)) {
            continue;
        }
        diagnostics.push(
            Diagnostic::error(
                codes::UNSUPPORTED_SYNTAX,
                codes::unsupported_expression("decorator"),
            )
            .with_primary(
                parse::span_of(decorator),
                "this decorator is not understood",
            ),
        );
    }
    diagnostics.extend(signature::param_diagnostics(sig));
    diagnostics
}

/// Says once per diagnostic what it means for the function.
fn with_consequence_notes(
    diagnostics: Vec<Diagnostic>,
    name: &str,
    status: Status,
) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .map(|d| match (d.severity, status) {
            (Severity::Error, Status::Fallback) => d.with_note(format!("`{name}` falls back to Python")),
            (Severity::Warning, Status::NotCandidate) if d.code == codes::NOT_OFFERED => d.with_note(format!(
                "`{name}` stays on Python: the host does not compile functions with sites it never offers"
            )),
            (Severity::Warning, Status::NotCandidate) => d.with_note(format!(
                "`{name}` stays on Python: this is outside the subset the host compiles natively"
            )),
            _ => d,
        })
        .collect()
}

impl Analysis {
    /// The JSON report (see [`report`] for the exact shape).
    pub fn to_json(&self) -> serde_json::Value {
        report::to_json(self)
    }

    /// Every diagnostic: module-level ones first, then each function's in order.
    pub fn all_diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .chain(self.functions.iter().flat_map(|f| f.diagnostics.iter()))
    }

    /// [`Analysis::all_diagnostics`] rendered with codespan, without colour.
    pub fn render_diagnostics(&self) -> String {
        let all: Vec<Diagnostic> = self.all_diagnostics().cloned().collect();
        rextio_ir::diag::render_all(&all, &self.file, &self.source)
    }

    /// The module-level function that `name` is bound to once the module has run: the last
    /// `def name` in source order (a later `def` rebinds the name, as in Python).
    pub fn function(&self, name: &str) -> Option<&FunctionAnalysis> {
        self.functions.iter().rev().find(|f| f.name == name)
    }

    /// The module-level `def name` whose name stands on 1-based `line`, and no other: how a
    /// function object (its code's first line) is matched to its source.
    pub fn function_at(&self, name: &str, line: u32) -> Option<&FunctionAnalysis> {
        self.functions
            .iter()
            .find(|f| f.name == name && f.line == line)
    }

    /// Whether a later module-level `def` rebinds the name of `self.functions[index]`, so that
    /// the module never exposes this definition.
    pub fn is_shadowed(&self, index: usize) -> bool {
        let Some(f) = self.functions.get(index) else {
            return false;
        };
        self.functions[index + 1..].iter().any(|g| g.name == f.name)
    }

    /// Whether any diagnostic (module or function) is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .chain(self.functions.iter().flat_map(|f| f.diagnostics.iter()))
            .any(|d| d.severity == Severity::Error)
    }

    /// The IR of the native functions, in source order.
    pub fn to_module(&self) -> rextio_ir::Module {
        rextio_ir::Module {
            source_name: self.file.clone(),
            functions: self.functions.iter().filter_map(|f| f.ir.clone()).collect(),
        }
    }
}
