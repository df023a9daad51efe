//! One diagnostic model for the whole compiler: stable code, severity, message, a primary
//! span with secondary labels, notes and a suggestion. Rendered by codespan-reporting for
//! people and serialized for tools; nothing downstream formats errors by hand.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label as CsLabel};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};
use serde::Serialize;

use crate::function::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable code: `RXTP-TORCH-NNN` (plugin rules), `RXTNNN` (host rules), `RXIR-NNN`
    /// (IR validation), `RXPY-NNN` (source that does not parse); each declared once in the
    /// registry, [`crate::codes`].
    pub code: String,
    pub severity: Severity,
    pub message: String,
    /// Where the problem is; `None` only for IR that has no source (hand-written dumps).
    pub primary: Option<Label>,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub suggestion: Option<String>,
}

impl Diagnostic {
    pub fn error(code: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code: code.into(),
            severity: Severity::Error,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            suggestion: None,
        }
    }

    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.primary = Some(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Diagnostic {
        self.suggestion = Some(suggestion.into());
        self
    }

    /// Renders without colour, as `rextio-torch check` prints it and snapshots record it.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        render_all(std::slice::from_ref(self), file_name, source)
    }
}

/// Renders several diagnostics against one source file, in order.
pub fn render_all(diagnostics: &[Diagnostic], file_name: &str, source: &str) -> String {
    let file = SimpleFile::new(file_name, source);
    let config = Config::default();
    let mut out = String::new();
    for diagnostic in diagnostics {
        let cs = to_codespan(diagnostic, source.len());
        match term::emit_into_string(&config, &file, &cs) {
            Ok(text) => out.push_str(&text),
            Err(_) => out.push_str(&format!(
                "{}[{}]: {}\n",
                severity_word(diagnostic.severity),
                diagnostic.code,
                diagnostic.message
            )),
        }
    }
    out
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn clamp(span: Span, len: usize) -> std::ops::Range<usize> {
    let start = (span.start as usize).min(len);
    let end = (span.end as usize).clamp(start, len);
    start..end
}

fn to_codespan(d: &Diagnostic, len: usize) -> CsDiagnostic<()> {
    let base = match d.severity {
        Severity::Error => CsDiagnostic::error(),
        Severity::Warning => CsDiagnostic::warning(),
        Severity::Note => CsDiagnostic::note(),
    };
    let mut labels = Vec::new();
    if let Some(primary) = &d.primary {
        labels.push(CsLabel::primary((), clamp(primary.span, len)).with_message(&primary.message));
    }
    for label in &d.secondary {
        labels.push(CsLabel::secondary((), clamp(label.span, len)).with_message(&label.message));
    }
    let mut notes = d.notes.clone();
    if let Some(suggestion) = &d.suggestion {
        notes.push(format!("help: {suggestion}"));
    }
    base.with_code(&d.code)
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}
