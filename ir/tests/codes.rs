//! The docs' code tables say exactly what the registry (`rextio_ir::codes`) says: every code
//! of a family has one row with its doc line (and, for doctor, its level), and no row names a
//! code the registry lacks. On a mismatch the test prints the rows to paste.

use std::collections::BTreeMap;
use std::path::Path;

use rextio_ir::codes::{Rxd, Rxir, Rxt};
use rextio_ir::Severity;

fn doc(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows `| code | second | meaning |` of the tables in `text` whose first cell is a code
/// starting with `prefix`, by code (backticks stripped).
fn rows(text: &str, prefix: &str) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split(" | ").collect();
        if cells.len() != 3 {
            continue;
        }
        let code = cells[0].trim().trim_matches('`');
        if !code.starts_with(prefix) || code.contains(' ') {
            continue;
        }
        let previous = out.insert(
            code.to_string(),
            (cells[1].trim().to_string(), cells[2].trim().to_string()),
        );
        assert!(previous.is_none(), "{code} has two rows");
    }
    out
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn check(
    family: &str,
    documented: BTreeMap<String, (String, String)>,
    expected: Vec<(String, String, String)>,
) {
    let wanted: BTreeMap<String, (String, String)> = expected
        .iter()
        .map(|(code, second, meaning)| (code.clone(), (second.clone(), meaning.clone())))
        .collect();
    if documented != wanted {
        let table: Vec<String> = expected
            .iter()
            .map(|(code, second, meaning)| format!("| `{code}` | {second} | {meaning} |"))
            .collect();
        panic!(
            "the docs' {family} rows differ from the registry; the rows should read:\n{}",
            table.join("\n")
        );
    }
}

/// The rows a compiler family's codes should have: code, severity, doc line.
fn compiler_rows(
    codes: impl Iterator<Item = (&'static str, Severity, &'static str)>,
) -> Vec<(String, String, String)> {
    codes
        .map(|(code, level, doc)| {
            (
                code.to_string(),
                severity(level).to_string(),
                doc.to_string(),
            )
        })
        .collect()
}

#[test]
fn diagnostics_md_lists_every_compiler_code() {
    let text = doc("docs/diagnostics.md");
    let mut documented = rows(&text, "RXT");
    // `RXTP-TORCH-*` rows belong to the plugin family (the claim rules' records).
    documented.retain(|code, _| !code.starts_with("RXTP"));
    documented.extend(rows(&text, "RXPY"));
    let rxt = Rxt::ALL.iter().map(|c| (c.code(), c.severity(), c.doc()));
    check("RXT/RXPY", documented, compiler_rows(rxt));
    let rxir = Rxir::ALL.iter().map(|c| (c.code(), c.severity(), c.doc()));
    check("RXIR", rows(&text, "RXIR"), compiler_rows(rxir));
}

#[test]
fn tooling_md_lists_every_doctor_code() {
    let text = doc("docs/tooling.md");
    let expected = Rxd::ALL
        .iter()
        .map(|c| {
            (
                c.code().to_string(),
                c.severity().as_str().to_string(),
                c.doc().to_string(),
            )
        })
        .collect();
    check("RXD", rows(&text, "RXD"), expected);
}

#[test]
fn codes_are_unique_and_round_trip() {
    let mut seen = std::collections::HashSet::new();
    for code in Rxt::ALL.iter().map(|c| c.code()) {
        assert!(seen.insert(code), "{code} twice");
        assert_eq!(Rxt::from_code(code).map(|c| c.code()), Some(code));
    }
    for code in Rxir::ALL.iter().map(|c| c.code()) {
        assert!(seen.insert(code), "{code} twice");
        assert_eq!(Rxir::from_code(code).map(|c| c.code()), Some(code));
    }
    for code in Rxd::ALL.iter().map(|c| c.code()) {
        assert!(seen.insert(code), "{code} twice");
        assert_eq!(Rxd::from_code(code).map(|c| c.code()), Some(code));
    }
    assert_eq!(Rxt::from_code("RXT999"), None);
}
