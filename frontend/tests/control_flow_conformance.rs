//! Control-flow conformance: every program of `tests/conformance/control-flow.json` (what the
//! reference host decided, recorded by `tests/conformance/gen_control_flow.py`) is analysed and
//! our status for `f` is compared with the reference's auto-mode status (`accepted` = native,
//! `rejected` = fallback, `not-candidate`). Where the blocker messages of the reference are
//! known, ours must contain each of them too.
//!
//! The forms this build does not lower yet are listed in [`KNOWN_DIVERGENCES`] with the reason;
//! the test fails when a divergence appears that is not listed, and also when a listed one
//! disappears (so the list stays true).

use std::collections::BTreeMap;
use std::path::Path;

use rextio_frontend::claim::Surface;
use rextio_frontend::{analyze_with, Status};
use serde_json::Value;

/// `(case id, why we differ)`. Each is a form the reference compiles (or decides) that this
/// build does not model yet; none is a silent wrong answer (we stay on Python).
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[
    (
        "for_range_len_list",
        "list[int] parameters and len() are not lowered yet",
    ),
    ("for_list_param", "list[int] parameters are not lowered yet"),
    ("for_list_local_variable", "list locals are not lowered yet"),
    (
        "for_range_local_bound",
        "list parameters are not lowered yet",
    ),
    (
        "scalar_len_list_param",
        "list parameters are not lowered yet",
    ),
    ("scalar_list_local", "list locals are not lowered yet"),
    (
        "for_float_list_literal",
        "float list iterables are not lowered yet",
    ),
    (
        "for_mixed_list_literal",
        "the host's list-literal checks are not modelled",
    ),
    (
        "for_over_tensor_list",
        "the host's list-literal checks are not modelled",
    ),
    ("for_enumerate_list", "enumerate is not modelled"),
    ("for_reversed_range", "reversed is not modelled"),
    ("scalar_abs", "abs/min/max of scalars are not lowered yet"),
    (
        "scalar_only_abs_overflow",
        "abs of scalars is not lowered yet",
    ),
    (
        "scalar_min_max",
        "abs/min/max of scalars are not lowered yet",
    ),
    ("for_range_min_bound", "min is not lowered yet"),
    ("scalar_print", "print is not lowered yet"),
    ("loop_print_tensor", "print is not lowered yet"),
    ("scalar_try_except", "try/except is not lowered yet"),
    (
        "loop_tensor_annotated",
        "a receiver bound later in the same loop body is not modelled",
    ),
    (
        "native_scalar_helper_*",
        "calls to other project functions are not modelled",
    ),
];

fn known(id: &str) -> Option<&'static str> {
    KNOWN_DIVERGENCES.iter().find_map(|(pattern, why)| {
        let matches = match pattern.strip_suffix('*') {
            Some(prefix) => id.starts_with(prefix),
            None => id == *pattern,
        };
        matches.then_some(*why)
    })
}

fn corpus() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance/control-flow.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the control-flow corpus must be in the repository ({}): {e}",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("the corpus is JSON")
}

fn source(header: &str, case: &Value) -> String {
    let text = |key: &str| case.get(key).and_then(Value::as_str).unwrap_or("");
    if !text("source").is_empty() {
        return format!("{header}\n\n{}", text("source"));
    }
    let mut body = String::new();
    for line in text("prelude").lines().chain(text("body").lines()) {
        body.push_str("    ");
        body.push_str(line);
        body.push('\n');
    }
    let decorator = if text("decorator").is_empty() {
        String::new()
    } else {
        format!("{}\n", text("decorator"))
    };
    let returns = if text("returns").is_empty() {
        String::new()
    } else {
        format!(" -> {}", text("returns"))
    };
    format!(
        "{header}\n\n{decorator}def f({}){returns}:\n{body}",
        text("params")
    )
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Native => "accepted",
        Status::Fallback => "rejected",
        Status::NotCandidate => "not-candidate",
    }
}

#[test]
fn control_flow_statuses_match_the_reference() {
    let corpus = corpus();
    let header = corpus["module_header"].as_str().expect("module_header");
    let cases = corpus["cases"].as_array().expect("cases");
    assert!(cases.len() >= 200, "the corpus holds {} cases", cases.len());
    let mut unexpected = Vec::new();
    let mut seen_known: BTreeMap<&str, usize> = BTreeMap::new();
    let mut agreed = 0;
    for case in cases {
        let id = case["id"].as_str().expect("id");
        let reference = case["auto"]["status"].as_str().expect("auto.status");
        let src = source(header, case);
        let analysis = analyze_with("case.py", &src, Surface::Reference);
        let ours = analysis
            .function("f")
            .map_or("missing", |f| status_word(f.status));
        // The reference's blocker messages that ours must contain, when both block.
        let blockers: Vec<String> = case["auto"]["blockers"]
            .as_array()
            .map(|b| {
                b.iter()
                    .filter_map(Value::as_str)
                    .filter_map(|s| s.strip_prefix("blocker:RXT010: "))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let ours_messages: Vec<String> = analysis
            .function("f")
            .map(|f| f.diagnostics.iter().map(|d| d.message.clone()).collect())
            .unwrap_or_default();
        let missing: Vec<&String> = if ours == reference && reference == "not-candidate" {
            blockers
                .iter()
                .filter(|m| !ours_messages.contains(m))
                .collect()
        } else {
            Vec::new()
        };
        match (ours == reference && missing.is_empty(), known(id)) {
            (true, None) => agreed += 1,
            (true, Some(_)) => unexpected.push(format!("{id}: listed as a divergence but now agrees; remove it from KNOWN_DIVERGENCES")),
            (false, Some(_)) => *seen_known.entry(id).or_default() += 1,
            (false, None) => unexpected.push(format!(
                "{id}: reference {reference}, ours {ours}; reference blockers {blockers:?}; missing {missing:?}; ours {ours_messages:?}\n{src}"
            )),
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} of {} cases differ:\n{}",
        unexpected.len(),
        cases.len(),
        unexpected.join("\n\n")
    );
    assert!(
        agreed * 4 >= cases.len() * 3,
        "only {agreed} of {} cases agree",
        cases.len()
    );
}
