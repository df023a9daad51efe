//! Why a function compiles or not, in one report: its claim table (every site the host offers
//! and what became of it), its diagnostics (rendered and structured), and its IR after each
//! pipeline stage. `rextio_torch.explain` and `RXT_LOG` are views of this; nothing here is a
//! second analysis: it is the frontend's [`Analysis`] and the driver's pipeline, kept.

use rextio_frontend::parse::Lines;
use rextio_frontend::report::{kind_str, severity_str, site_json};
use rextio_frontend::{
    analyze_with, Analysis, FunctionAnalysis, SiteOutcome, SiteReport, Status, Surface,
};
use rextio_ir::diag::render_all;
use rextio_ir::print::print_function;
use rextio_ir::{Diagnostic, Severity};
use serde_json::{json, Value};

use crate::{compile_analyzed, pipeline, CompileError};

/// What an explanation found, beyond the function's analysis status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Analysed; [`Explanation::status`] says how.
    Analysed(Status),
    /// The source does not parse; no function was analysed.
    SyntaxError,
    /// No module-level `def` of that name (on that line).
    NotFound,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Analysed(status) => status.as_str(),
            Outcome::SyntaxError => "syntax-error",
            Outcome::NotFound => "not-found",
        }
    }
}

/// The explanation of one module-level function.
#[derive(Clone, Debug)]
pub struct Explanation {
    pub file: String,
    pub function: String,
    /// The line of the `def` explained (the one asked for, or the one the name binds).
    pub line: Option<u32>,
    pub outcome: Outcome,
    /// Whether the function compiles to native code (every stage below ran).
    pub compiles: bool,
    /// Every site of the body, in the order the host offers them.
    pub sites: Vec<SiteReport>,
    /// Why it does not compile (or warnings when it does), in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// `(stage, IR text)` after each stage that ran: `parsed`, then each pass (`fused`,
    /// `dce`), then `optimized`. Empty when nothing was lowered.
    pub stages: Vec<(String, String)>,
    /// The compile error, as `compile(strict=True)` would raise it; `None` when it compiles.
    pub error: Option<String>,
    /// The surface that decided every site.
    pub surface: Surface,
    source: String,
}

/// Explains the module-level `def name` on 1-based `line` of `source`, or, without a line,
/// the `def` the module binds to `name` (the last one). Never fails: a source that does not
/// parse or a missing function is an explanation too.
pub fn explain_function(
    file: &str,
    source: &str,
    name: &str,
    line: Option<u32>,
    surface: Surface,
) -> Explanation {
    let analysis = analyze_with(file, source, surface);
    let mut explanation = Explanation::empty(surface, file, source, name, line);
    if !analysis.diagnostics.is_empty() && analysis.functions.is_empty() {
        return explanation.syntax_error(&analysis);
    }
    let function = match line {
        Some(line) => analysis.function_at(name, line),
        None => analysis.function(name),
    };
    let Some(function) = function else {
        explanation.error = Some(
            CompileError::NotFound {
                name: name.to_string(),
                file: file.to_string(),
                line,
            }
            .to_string(),
        );
        return explanation;
    };
    explain_analyzed(&analysis, function, explanation)
}

/// [`explain_function`] of a user `nn.Module`'s method on `line` (its `forward`), analysed
/// with the members `description` (the JSON `rextio_torch._module` writes) stands for, as
/// `compile_method_at` analyses it.
pub fn explain_method(
    file: &str,
    source: &str,
    line: u32,
    description: &str,
    surface: Surface,
) -> Explanation {
    let mut explanation = Explanation::empty(surface, file, source, "forward", Some(line));
    let analysis = rextio_frontend::module::ModuleDescription::from_json(description).and_then(
        |description| rextio_frontend::analyze_method(file, source, line, &description, surface),
    );
    let analysis = match analysis {
        Ok(analysis) => analysis,
        Err(message) => {
            explanation.error = Some(CompileError::Method { message }.to_string());
            return explanation;
        }
    };
    match analysis.functions.first() {
        Some(function) => {
            explanation.function = function.name.clone();
            explain_analyzed(&analysis, function, explanation)
        }
        None => explanation.syntax_error(&analysis),
    }
}

fn explain_analyzed(
    analysis: &Analysis,
    function: &FunctionAnalysis,
    mut explanation: Explanation,
) -> Explanation {
    explanation.line = Some(function.line);
    explanation.outcome = Outcome::Analysed(function.status);
    explanation.sites = function.sites.clone();
    explanation.diagnostics = function.diagnostics.clone();
    let Some(ir) = function
        .ir
        .as_ref()
        .filter(|_| function.status == Status::Native)
    else {
        // The driver's own error: the same words `compile(strict=True)` raises, and for a
        // function without markers the note it adds.
        if let Err(error) = compile_analyzed(analysis, function) {
            if let CompileError::NotNative { diagnostics, .. } = &error {
                explanation.diagnostics = diagnostics.clone();
            }
            explanation.error = Some(error.to_string());
        }
        return explanation;
    };
    // Run the pipeline keeping every stage that ran, so a failing pass still shows its input.
    let mut stages = Vec::new();
    let result = pipeline().run(ir.clone(), &mut |stage, f| {
        stages.push((stage.to_string(), print_function(f)))
    });
    explanation.stages = stages;
    match result {
        Ok(_) => explanation.compiles = true,
        Err(errors) => {
            explanation.error = Some(
                CompileError::Internal {
                    name: function.name.clone(),
                    rendered: render_all(&errors, &analysis.file, &analysis.source),
                }
                .to_string(),
            );
            explanation.diagnostics.extend(errors);
        }
    }
    explanation
}

impl Explanation {
    /// The explanation of `name` before anything is known of it (not found).
    fn empty(
        surface: Surface,
        file: &str,
        source: &str,
        name: &str,
        line: Option<u32>,
    ) -> Explanation {
        Explanation {
            surface,
            file: file.to_string(),
            function: name.to_string(),
            line,
            outcome: Outcome::NotFound,
            compiles: false,
            sites: Vec::new(),
            diagnostics: Vec::new(),
            stages: Vec::new(),
            error: None,
            source: source.to_string(),
        }
    }

    /// The source does not parse: the analysis's diagnostics are the whole answer.
    fn syntax_error(mut self, analysis: &Analysis) -> Explanation {
        self.outcome = Outcome::SyntaxError;
        self.diagnostics = analysis.diagnostics.clone();
        self.error = Some(
            CompileError::Syntax {
                file: self.file.clone(),
                reason: crate::whole_file_refusal(&analysis.diagnostics),
                rendered: render_all(&analysis.diagnostics, &self.file, &self.source),
            }
            .to_string(),
        );
        self
    }

    /// The analysis status (`native`, `fallback`, `not-candidate`), or `syntax-error` /
    /// `not-found`.
    pub fn status(&self) -> &'static str {
        self.outcome.as_str()
    }

    /// The IR after `stage`, if that stage ran.
    pub fn stage(&self, stage: &str) -> Option<&str> {
        self.stages
            .iter()
            .find(|(s, _)| s == stage)
            .map(|(_, ir)| ir.as_str())
    }

    /// Every diagnostic rendered with codespan, as `rextio-torch check` prints them.
    pub fn rendered(&self) -> String {
        render_all(&self.diagnostics, &self.file, &self.source)
    }

    fn claimed(&self) -> usize {
        self.sites
            .iter()
            .filter(|s| s.outcome == SiteOutcome::Claimed)
            .count()
    }

    /// One line: what happens to the function and the gist of why.
    pub fn summary(&self) -> String {
        let sites = format!("{} of {} sites claimed", self.claimed(), self.sites.len());
        let errors = self
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        match self.outcome {
            Outcome::Analysed(Status::Native) if self.compiles => {
                format!("compiles to native code ({sites})")
            }
            Outcome::Analysed(Status::Native) => format!(
                "stays on Python: the pass pipeline failed, a bug in rextio-torch ({sites})"
            ),
            Outcome::Analysed(Status::Fallback) => {
                format!("stays on Python: {errors} error(s), listed under diagnostics ({sites})")
            }
            Outcome::Analysed(Status::NotCandidate) => format!(
                "stays on Python: not a candidate for native code, see diagnostics ({sites})"
            ),
            Outcome::SyntaxError => "the source does not parse; no function was analysed".into(),
            Outcome::NotFound => self.error.clone().unwrap_or_default(),
        }
    }

    /// The report as data (the shape `rextio_torch.explain` builds its objects from). Sites
    /// have the keys of `rextio-torch check --format json`; diagnostics add their own
    /// rendered text.
    pub fn to_json(&self) -> Value {
        let sites: Vec<Value> = self.sites.iter().map(site_json).collect();
        let lines = Lines::new(&self.source);
        let diagnostics: Vec<Value> = self
            .diagnostics
            .iter()
            .map(|d| {
                let (line, column) = match &d.primary {
                    Some(label) => {
                        let (l, c) = lines.line_column(label.span.start);
                        (Some(l), Some(c))
                    }
                    None => (None, None),
                };
                json!({
                    "code": d.code,
                    "severity": severity_str(d.severity),
                    "message": d.message,
                    "line": line,
                    "column": column,
                    "rendered": d.render(&self.file, &self.source),
                })
            })
            .collect();
        let stages: Vec<Value> = self
            .stages
            .iter()
            .map(|(stage, ir)| json!({ "stage": stage, "ir": ir }))
            .collect();
        json!({
            "file": self.file,
            "function": self.function,
            "line": self.line,
            "status": self.status(),
            "surface": self.surface.as_str(),
            "compiles": self.compiles,
            "summary": self.summary(),
            "sites": sites,
            "diagnostics": diagnostics,
            "rendered": self.rendered(),
            "stages": stages,
            "error": self.error,
            "text": self.render(),
        })
    }

    /// The report for people: header, claim table, rendered diagnostics, IR per stage.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let at = match self.line {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.clone(),
        };
        out.push_str(&format!("explain `{}` ({at})\n", self.function));
        out.push_str(&format!("status: {}: {}\n", self.status(), self.summary()));
        out.push_str(&format!("surface: {}\n", self.surface.as_str()));
        out.push_str("\nclaim table:\n");
        if self.sites.is_empty() {
            out.push_str("  (no call or operator sites)\n");
        } else {
            out.push_str(&claim_table(&self.sites));
        }
        out.push_str("\ndiagnostics:");
        if self.diagnostics.is_empty() {
            out.push_str(" none\n");
        } else {
            out.push('\n');
            out.push_str(&self.rendered());
        }
        if self.stages.is_empty() {
            out.push_str("\nIR: none (nothing was lowered)\n");
        }
        for (stage, ir) in &self.stages {
            out.push_str(&format!("\nIR after `{stage}`:\n{ir}"));
        }
        out
    }
}

fn claim_table(sites: &[SiteReport]) -> String {
    let rows: Vec<[String; 5]> = sites
        .iter()
        .map(|s| {
            let detail = match s.outcome {
                SiteOutcome::Claimed => format!(
                    "{} -> {}",
                    s.rule_id.as_deref().unwrap_or("?"),
                    s.result_type.as_deref().unwrap_or("?")
                ),
                _ => match (&s.code, &s.message) {
                    (Some(code), Some(message)) => format!("{code}: {message}"),
                    (Some(code), None) => code.clone(),
                    _ => String::new(),
                },
            };
            [
                format!("{}:{}", s.line, s.column),
                kind_str(s.kind).to_string(),
                s.target.clone(),
                s.outcome.as_str().to_string(),
                detail,
            ]
        })
        .collect();
    let header = [
        "line:col".to_string(),
        "kind".into(),
        "target".into(),
        "outcome".into(),
        "rule -> result / code: message".into(),
    ];
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::from("  ");
        for (cell, w) in row.iter().zip(widths) {
            line.push_str(&format!("{cell:<w$}  "));
        }
        line.push_str(&row[4]);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
