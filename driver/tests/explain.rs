//! `explain` and the `RXT_LOG` texts: the claim table, diagnostics and IR per stage of a
//! function that compiles and of ones that do not, straight from the analysis and pipeline.

use rextio_driver::env::LogSpec;
use rextio_driver::explain::{explain_function, Outcome};
use rextio_driver::log::{compile_log, fallback_log};
use rextio_driver::{compile_function, stage_names, Surface};
use rextio_frontend::Status;

const SOURCE: &str = "\
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def good(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)


def rejected(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = x.sigmoid()
    return y.relu(y)


def uncovered(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.cumsum(dim=1)


def plain(a, b):
    return a + b
";

#[test]
fn a_native_function_has_its_claims_and_every_stage() {
    let e = explain_function("m.py", SOURCE, "good", Some(5), Surface::Extended);
    assert_eq!(e.outcome, Outcome::Analysed(Status::Native));
    assert!(e.compiles && e.error.is_none() && e.diagnostics.is_empty());
    let targets: Vec<(&str, &str)> = e
        .sites
        .iter()
        .map(|s| (s.target.as_str(), s.outcome.as_str()))
        .collect();
    assert_eq!(
        targets,
        [
            ("torch.nn.functional.linear", "claimed"),
            ("relu", "claimed"),
            ("mean", "claimed"),
        ]
    );
    let stages: Vec<&str> = e.stages.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(stages, stage_names());
    assert_eq!(stages, ["parsed", "fused", "dce", "optimized"]);
    assert!(e.stage("parsed").unwrap().contains("relu %"));
    assert!(!e.stage("parsed").unwrap().contains("fused_linear"));
    assert!(e.stage("optimized").unwrap().contains("fused_linear"));
    let text = e.render();
    assert!(text.starts_with("explain `good` (m.py:5)\nstatus: native: compiles to native code (3 of 3 sites claimed)\n"), "{text}");
    assert!(text.contains("  6:12      call  torch.nn.functional.linear  claimed  rextio-torch/functional-linear-f32-cpu-2d -> TensorF32Cpu2D"), "{text}");
    assert!(text.contains("diagnostics: none\n"), "{text}");
    assert!(text.contains("\nIR after `dce`:\nfn good("), "{text}");
}

#[test]
fn a_rejected_site_is_in_the_table_with_its_code_and_diagnostic() {
    let e = explain_function("m.py", SOURCE, "rejected", Some(9), Surface::Extended);
    assert_eq!(e.status(), "fallback");
    assert!(!e.compiles && e.stages.is_empty());
    let rows: Vec<(&str, &str, Option<&str>)> = e
        .sites
        .iter()
        .map(|s| (s.target.as_str(), s.outcome.as_str(), s.code.as_deref()))
        .collect();
    assert_eq!(
        rows,
        [
            ("x.sigmoid", "claimed", None),
            ("y.relu", "rejected", Some("RXTP-TORCH-002")),
        ]
    );
    assert_eq!(e.diagnostics.len(), 1);
    assert_eq!(e.diagnostics[0].code, "RXTP-TORCH-002");
    let json = e.to_json();
    assert_eq!(json["diagnostics"][0]["line"], 11);
    assert_eq!(json["diagnostics"][0]["severity"], "error");
    assert!(json["diagnostics"][0]["rendered"]
        .as_str()
        .unwrap()
        .contains("m.py:11:"));
    assert!(e
        .error
        .as_deref()
        .unwrap()
        .starts_with("rextio-torch cannot compile `rejected`; it stays on Python:"));
    let text = e.render();
    assert!(text.contains("status: fallback: stays on Python: 1 error(s), listed under diagnostics (1 of 2 sites claimed)"), "{text}");
    assert!(
        text.contains("rejected  RXTP-TORCH-002: rextio-torch cannot lower 'y.relu'"),
        "{text}"
    );
    assert!(text.contains("error[RXTP-TORCH-002]"), "{text}");
    assert!(text.contains("IR: none (nothing was lowered)"), "{text}");
}

#[test]
fn not_covered_not_candidate_missing_and_unparsable() {
    let e = explain_function("m.py", SOURCE, "uncovered", None, Surface::Extended);
    assert_eq!(e.line, Some(14));
    assert_eq!(e.sites[0].outcome.as_str(), "not-covered");
    assert_eq!(e.sites[0].code.as_deref(), Some("RXT030"));

    let e = explain_function("m.py", SOURCE, "plain", Some(18), Surface::Extended);
    assert_eq!(e.status(), "not-candidate");
    // The driver's note for a function without markers is the diagnostic shown.
    assert_eq!(e.diagnostics[0].code, "RXT001");
    assert!(e.summary().contains("not a candidate"));

    let e = explain_function("m.py", SOURCE, "good", Some(6), Surface::Extended);
    assert_eq!(e.outcome, Outcome::NotFound);
    assert_eq!(
        e.error.as_deref(),
        Some("no module-level `def good` on line 6 of m.py (only module-level functions compile)")
    );

    let e = explain_function(
        "bad.py",
        "def f(x:\n    return x\n",
        "f",
        Some(1),
        Surface::Extended,
    );
    assert_eq!(e.outcome, Outcome::SyntaxError);
    assert_eq!(e.diagnostics[0].code, "RXPY-001");
    assert!(e.render().contains("the source does not parse"));
}

#[test]
fn logs_print_only_the_channels_asked_for() {
    let compiled = compile_function("m.py", SOURCE, "good", Surface::Extended).expect("compiles");
    let all = compile_log(&LogSpec::parse("all"), &compiled, "m.py:5", || {
        Ok("pub fn good_native() {}".into())
    });
    let headers: Vec<&str> = all.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(
        headers,
        [
            "[rextio_torch ir] `good`: IR after parsing (m.py:5)",
            "[rextio_torch passes] `good`: IR after pass `fused`",
            "[rextio_torch passes] `good`: IR after pass `dce`",
            "[rextio_torch codegen] `good`: emitted Rust source",
        ]
    );
    assert!(all.ends_with("pub fn good_native() {}\n"));

    let mut asked = false;
    let passes = compile_log(&LogSpec::parse("passes"), &compiled, "m.py:5", || {
        asked = true;
        Err("unused".into())
    });
    assert!(!asked, "codegen runs only when logged");
    assert!(passes.starts_with("[rextio_torch passes] `good`: IR after pass `fused`\nfn good("));
    assert!(!passes.contains("[rextio_torch ir]"));
    assert!(compile_log(&LogSpec::parse(""), &compiled, "m.py:5", || Ok(
        String::new()
    ))
    .is_empty());

    let failed = fallback_log(
        &LogSpec::parse("ir,codegen"),
        "rejected",
        "rextio-torch cannot compile `rejected`; it stays on Python:\nerror[...]",
    );
    assert_eq!(
        failed,
        "[rextio_torch ir] `rejected`: nothing to log: rextio-torch cannot compile `rejected`; it stays on Python\n\
         [rextio_torch codegen] `rejected`: nothing to log: rextio-torch cannot compile `rejected`; it stays on Python\n"
    );
}
