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
//! The corpus is the reference's, so it is checked under the reference surface
//! (`surface="reference"`, what the Rextio plugin claims with). Under the extended surface,
//! the default of `compile`, `check` and the CLI, every case keeps its outcome but where an
//! extension claims more (`the_extended_surface_departs_from_the_corpus_only_at_extensions`).
//!
//! The corpus is part of the repository: a missing or unreadable corpus fails the test.

use std::path::Path;

use rextio_frontend::{analyze_with, FunctionAnalysis, SiteOutcome, Status, Surface};
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
    let failures = corpus_failures(Surface::Reference);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every case whose outcome under `surface` is not the corpus's, described.
fn corpus_failures(surface: Surface) -> Vec<String> {
    let corpus = corpus();
    let header = corpus["module_header"].as_str().unwrap_or("");
    let legend = &corpus["legend"];
    let cases = corpus["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 72, "the public corpus has 72 cases");
    let mut failures = Vec::new();
    for case in cases {
        let id = case["id"].as_str().unwrap_or("?");
        let source = module_source(header, case);
        let analysis = analyze_with(&format!("{id}.py"), &source, surface);
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
    failures
}

/// The extended surface (the default of `check` and `compile`) departs from the corpus only
/// where an extension decides a site the reference rejects:
///
/// - a float32 tensor with a Python scalar under `+ - * /` (`RXTP-TORCH-010`, "operand types
///   are outside ..."): claimed with a scalar operand rule (ours, `RXTP-TORCH-055..058`), and
///   the sites after it may then be decided rather than suppressed;
/// - `F.gelu` with a keyword the reference does not take (`RXTP-TORCH-044`):
///   `approximate="tanh"` is claimed (`RXTP-TORCH-064`), and a rejection names that option
///   too;
/// - `x ** p` (never offered to the plugin, `RXT080`): claimed by the elementwise lane
///   (`RXTP-TORCH-104`'s rule);
/// - a call the reference does not cover (`RXT030`) that an extension lane claims (the
///   views' `x.transpose`, `F.tanh` of the op table's extension rows).
///
/// Every other case has the same sites and status under both.
#[test]
fn the_extended_surface_departs_from_the_corpus_only_at_extensions() {
    let corpus = corpus();
    let header = corpus["module_header"].as_str().unwrap_or("");
    let mut departures = Vec::new();
    for case in corpus["cases"].as_array().expect("cases") {
        let id = case["id"].as_str().unwrap_or("?");
        let source = module_source(header, case);
        let reference = analyze_with(&format!("{id}.py"), &source, Surface::Reference);
        let extended = analyze_with(&format!("{id}.py"), &source, Surface::Extended);
        let (Some(r), Some(e)) = (reference.function("f"), extended.function("f")) else {
            continue;
        };
        let key = |s: &rextio_frontend::SiteReport| {
            (
                s.target.clone(),
                s.outcome,
                s.rule_id.clone(),
                s.code.clone(),
                s.message.clone(),
            )
        };
        let first_difference = r
            .sites
            .iter()
            .zip(&e.sites)
            .position(|(a, b)| key(a) != key(b));
        match first_difference {
            None => {
                assert_eq!(r.sites.len(), e.sites.len(), "{id}: site count");
                assert_eq!(r.status, e.status, "{id}: status");
            }
            Some(i) => {
                let (a, b) = (&r.sites[i], &e.sites[i]);
                if a.target == "torch.nn.functional.gelu" {
                    assert_eq!(a.code.as_deref(), Some("RXTP-TORCH-044"), "{id}");
                    let tanh_claimed = b
                        .rule_id
                        .as_deref()
                        .is_some_and(|r| r.contains("gelu-tanh"));
                    let names_tanh = b
                        .message
                        .as_deref()
                        .is_some_and(|m| m.ends_with(" or approximate='tanh'"));
                    assert!(tanh_claimed || names_tanh, "{id}: {b:?}");
                    departures.push(id.to_string());
                    continue;
                }
                if a.code.as_deref() == Some("RXT030") && b.rule_id.is_some() {
                    // A call the reference does not know (not covered, RXT030) that an
                    // extension lane claims (`x.transpose(0, 1)`, the views lane).
                    departures.push(id.to_string());
                    continue;
                }
                if a.target == "**" {
                    // The reference never offers `**` (RXT080, so `f` is not a candidate);
                    // the elementwise lane claims a float32 tensor to a scalar power.
                    assert_eq!(a.code.as_deref(), Some("RXT080"), "{id}: {a:?}");
                    assert_eq!(
                        b.rule_id.as_deref(),
                        Some("rextio-torch/pow-operator-scalar-exponent-f32-cpu-rank1-2"),
                        "{id}: {b:?}"
                    );
                    departures.push(id.to_string());
                    continue;
                }
                assert!(
                    ["+", "-", "*", "/"].contains(&a.target.as_str())
                        && a.code.as_deref() == Some("RXTP-TORCH-010")
                        && a.message
                            .as_deref()
                            .is_some_and(|m| m.contains("operand types are outside")),
                    "{id}: the reference site {a:?} is not a scalar operand's rejection"
                );
                assert!(
                    b.rule_id
                        .as_deref()
                        .is_some_and(|r| r.ends_with("-scalar-f32-cpu-rank1-2")),
                    "{id}: the extended site {b:?} is not a scalar operand's claim"
                );
                departures.push(id.to_string());
            }
        }
    }
    assert_eq!(
        departures,
        [
            "F_tanh_noncanonical",
            "gelu_tanh",
            "gelu_positional_option",
            "mul_scalar_int",
            "sub_scalar_int_param",
            "pow_M",
            "transpose",
            "view"
        ]
    );
}
