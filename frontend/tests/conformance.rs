//! Conformance with the reference claim corpus
//! (`tests/conformance/reference-claims.public.json`, vendored: rextio-torch 0.1.3 under
//! Rextio core 0.1.8; see `tests/conformance/README.md`). Each case becomes a module (`module_header` + `def f(<params>) -> <returns>:` with
//! the prelude and body indented) and our outcome for `f` is compared with the reference:
//!
//! - `CLAIM`: `f` is native and its sites are claimed with the listed rule ids / result types,
//!   in order;
//! - `REJECT`: the first site that is not claimed is rejected with the listed code and the
//!   exact message;
//! - `NOTCOVERED`: some site is not covered (with the reference RXT030 message when one is
//!   listed), or `f` is not a candidate (`%`);
//! - `NOT-OFFERED`: some site is not offered and `f` is not a candidate;
//! - `CORE-REJECT` / `NOT-CANDIDATE`: `f` is not native;
//! - `PLUGIN-ERROR` (the reference rejects with the undeclared `RXTP-TORCH-049` and Core
//!   aborts): documented divergence, we reject with `RXTP-TORCH-049`.
//!
//! The corpus is part of the repository: a missing or unreadable corpus fails the test.

use std::path::Path;

use rextio_frontend::{analyze, FunctionAnalysis, SiteOutcome, Status};
use serde_json::Value;

/// The vendored corpus, relative to the repository root.
const CORPUS: &str = "tests/conformance/reference-claims.public.json";

fn corpus() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(CORPUS);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the conformance corpus is part of the repository and must be present: cannot read {}: {e}",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{CORPUS} is not valid JSON: {e}"))
}

fn module_source(header: &str, case: &Value) -> String {
    let field = |key: &str| case[key].as_str().unwrap_or("").to_string();
    let mut source = format!("{header}\n\n");
    if !field("decorator").is_empty() {
        source.push_str(&format!("{}\n", field("decorator")));
    }
    source.push_str(&format!(
        "def f({}) -> {}:\n",
        field("params"),
        field("returns")
    ));
    for line in field("prelude").lines().chain(field("body").lines()) {
        source.push_str(&format!("    {line}\n"));
    }
    source
}

/// `"rextio-torch/x -> M"` with the legend -> (`rextio-torch/x`, `TensorF32Cpu2D`).
fn expected_claim(claim: &str, legend: &Value) -> (String, String) {
    let (rule, short) = claim.split_once(" -> ").unwrap_or((claim, ""));
    let marker = legend[short].as_str().unwrap_or(short);
    (rule.to_string(), marker.to_string())
}

/// `"error:CODE: message"` -> `message`.
fn expected_message(diagnostic: &str) -> &str {
    diagnostic
        .splitn(3, ':')
        .nth(2)
        .map(str::trim_start)
        .unwrap_or(diagnostic)
}

fn describe(f: &FunctionAnalysis) -> String {
    let sites: Vec<String> = f
        .sites
        .iter()
        .map(|s| {
            format!(
                "{} {} {:?} {:?} {:?}",
                s.target,
                s.outcome.as_str(),
                s.rule_id.as_deref().or(s.code.as_deref()),
                s.result_type,
                s.message
            )
        })
        .collect();
    let diagnostics: Vec<String> = f
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    format!(
        "status {} sites {sites:?} diagnostics {diagnostics:?}",
        f.status.as_str()
    )
}

fn check(case: &Value, f: &FunctionAnalysis, legend: &Value) -> Result<(), String> {
    let outcome = case["outcome"].as_str().unwrap_or("");
    let detail = case["detail"].as_str().unwrap_or("");
    let first_diagnostic = case["diagnostics"]
        .as_array()
        .and_then(|d| d.first())
        .and_then(Value::as_str);
    let first_unclaimed = f.sites.iter().find(|s| s.outcome != SiteOutcome::Claimed);
    match outcome {
        "CLAIM" => {
            let expected: Vec<(String, String)> = case["claims"]
                .as_array()
                .map(|claims| {
                    claims
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|c| expected_claim(c, legend))
                        .collect()
                })
                .unwrap_or_default();
            let actual: Vec<(String, String)> = f
                .sites
                .iter()
                .map(|s| {
                    (
                        s.rule_id.clone().unwrap_or_default(),
                        s.result_type.clone().unwrap_or_default(),
                    )
                })
                .collect();
            if f.status != Status::Native || f.ir.is_none() {
                return Err("expected a native function".into());
            }
            if actual != expected {
                return Err(format!("expected claims {expected:?}"));
            }
        }
        "REJECT" => {
            let site = first_unclaimed.ok_or("expected a rejected site")?;
            if site.outcome != SiteOutcome::Rejected || site.code.as_deref() != Some(detail) {
                return Err(format!(
                    "expected first unclaimed site rejected with {detail}"
                ));
            }
            let expected = first_diagnostic.map(expected_message);
            if expected.is_some() && site.message.as_deref() != expected {
                return Err(format!("expected message {expected:?}"));
            }
            if f.status == Status::Native {
                return Err("a rejected function must not be native".into());
            }
        }
        "NOTCOVERED" => {
            let covered_msg = first_diagnostic.map(expected_message);
            let ok = f.sites.iter().any(|s| {
                s.outcome == SiteOutcome::NotCovered
                    && (covered_msg.is_none() || s.message.as_deref() == covered_msg)
                    && (covered_msg.is_none() || s.code.as_deref() == Some("RXT030"))
            });
            let skipped = covered_msg.is_none() && f.status == Status::NotCandidate;
            if !(ok || skipped) {
                return Err(format!(
                    "expected a not-covered site (message {covered_msg:?})"
                ));
            }
            if f.status == Status::Native {
                return Err("a not-covered function must not be native".into());
            }
        }
        "NOT-OFFERED" => {
            if !f.sites.iter().any(|s| s.outcome == SiteOutcome::NotOffered)
                || f.status != Status::NotCandidate
            {
                return Err("expected a not-offered site and status not-candidate".into());
            }
        }
        "CORE-REJECT" | "NOT-CANDIDATE" => {
            if f.status == Status::Native {
                return Err("expected a function that is not native".into());
            }
        }
        "PLUGIN-ERROR" => {
            // Divergence: the reference aborts on its undeclared code; we report it.
            let site = first_unclaimed.ok_or("expected a rejected site")?;
            if site.outcome != SiteOutcome::Rejected
                || site.code.as_deref() != Some("RXTP-TORCH-049")
            {
                return Err("expected a rejection with RXTP-TORCH-049".into());
            }
        }
        other => return Err(format!("unknown outcome {other}")),
    }
    Ok(())
}

#[test]
fn reference_claim_corpus() {
    let corpus = corpus();
    let header = corpus["module_header"].as_str().unwrap_or("");
    let legend = &corpus["legend"];
    let cases = corpus["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 72, "the public corpus has 72 cases");
    let mut failures = Vec::new();
    for case in cases {
        let id = case["id"].as_str().unwrap_or("?");
        let source = module_source(header, case);
        let analysis = analyze(&format!("{id}.py"), &source);
        assert!(
            analysis.diagnostics.is_empty(),
            "{id}: module diagnostics {:?}",
            analysis.diagnostics
        );
        let Some(f) = analysis.function("f") else {
            failures.push(format!("{id}: no function f"));
            continue;
        };
        if let Err(why) = check(case, f, legend) {
            failures.push(format!(
                "{id} [{} {}]: {why}\n    got {}",
                case["outcome"].as_str().unwrap_or(""),
                case["detail"].as_str().unwrap_or(""),
                describe(f)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
