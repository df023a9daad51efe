//! The JSON report of an [`Analysis`](crate::Analysis).
//!
//! ```json
//! {"file": "kernels.py",
//!  "functions": [{"name": "f", "status": "native|fallback|not-candidate",
//!                 "sites": [{"line": 3, "column": 12, "kind": "call|binop|compare",
//!                            "target": "torch.nn.functional.linear",
//!                            "outcome": "claimed|rejected|not-covered|not-offered",
//!                            "rule_id": "rextio-torch/functional-linear-f32-cpu-2d",
//!                            "result_type": "TensorF32Cpu2D", "code": null, "message": null}],
//!                 "diagnostics": [...]}],
//!  "diagnostics": [...]}
//! ```
//!
//! Keys are stable: later work adds keys, never renames or removes them. The two
//! `"diagnostics"` arrays appear only when non-empty: at top level for module-level
//! diagnostics (syntax errors), per function for the diagnostics that belong to no site
//! (unsupported statements, parameters, returns); site diagnostics are the sites' own
//! `code`/`message`. A diagnostic is `{"code", "severity", "message", "line", "column"}`
//! (line/column of its primary span, 1-based; `null` without one).

use rextio_ir::{Diagnostic, Severity};
use serde_json::{json, Value};

use crate::claim::SiteKind;
use crate::parse::Lines;
use crate::{Analysis, FunctionAnalysis, SiteReport};

pub fn to_json(analysis: &Analysis) -> Value {
    let lines = Lines::new(&analysis.source);
    let functions: Vec<Value> = analysis
        .functions
        .iter()
        .map(|f| function_json(f, &lines))
        .collect();
    let mut object = json!({
        "file": analysis.file,
        "surface": analysis.surface.as_str(),
        "functions": functions,
    });
    if !analysis.diagnostics.is_empty() {
        object["diagnostics"] = diagnostics_json(analysis.diagnostics.iter(), &lines);
    }
    object
}

fn function_json(function: &FunctionAnalysis, lines: &Lines) -> Value {
    let sites: Vec<Value> = function.sites.iter().map(site_json).collect();
    let mut object =
        json!({ "name": function.name, "status": function.status.as_str(), "sites": sites });
    let site_less: Vec<&Diagnostic> = function
        .diagnostics
        .iter()
        .filter(|d| !belongs_to_site(d, &function.sites))
        .collect();
    if !site_less.is_empty() {
        object["diagnostics"] = diagnostics_json(site_less.into_iter(), lines);
    }
    object
}

/// One site as the report (and `rextio_torch.explain`) shows it.
pub fn site_json(site: &SiteReport) -> Value {
    json!({
        "line": site.line,
        "column": site.column,
        "kind": kind_str(site.kind),
        "target": site.target,
        "outcome": site.outcome.as_str(),
        "rule_id": site.rule_id,
        "result_type": site.result_type,
        "code": site.code,
        "message": site.message,
    })
}

pub fn kind_str(kind: SiteKind) -> &'static str {
    match kind {
        SiteKind::Call => "call",
        SiteKind::Binop => "binop",
        SiteKind::Compare => "compare",
    }
}

/// Whether `diagnostic` is the diagnostic of one of `sites` (same code, same primary span).
fn belongs_to_site(diagnostic: &Diagnostic, sites: &[SiteReport]) -> bool {
    let Some(primary) = &diagnostic.primary else {
        return false;
    };
    sites.iter().any(|site| {
        site.span == primary.span && site.code.as_deref() == Some(diagnostic.code.as_str())
    })
}

fn diagnostics_json<'a>(diagnostics: impl Iterator<Item = &'a Diagnostic>, lines: &Lines) -> Value {
    let list: Vec<Value> = diagnostics
        .map(|d| {
            let position = d
                .primary
                .as_ref()
                .map(|label| lines.line_column(label.span.start));
            json!({
                "code": d.code,
                "severity": severity_str(d.severity),
                "message": d.message,
                "line": position.map(|(line, _)| line),
                "column": position.map(|(_, column)| column),
            })
        })
        .collect();
    Value::Array(list)
}

pub fn severity_str(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}
