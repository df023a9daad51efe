//! Fixture harness (rust-analyzer / ruff style): every `tests/fixtures/ok/*.py` must analyze
//! without errors and snapshots the IR of its native functions plus the JSON report; every
//! `tests/fixtures/err/*.py` must produce diagnostics and snapshots them rendered (plus the
//! JSON report). Add a case by adding a file; review new snapshots with `cargo insta review`
//! or `INSTA_UPDATE=always`.

use std::path::{Path, PathBuf};

use rextio_frontend::{analyze, Analysis};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

fn load(path: &Path) -> (String, Analysis) {
    let source =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let analysis = analyze(&name, &source);
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (stem, analysis)
}

fn json_text(analysis: &Analysis) -> String {
    serde_json::to_string_pretty(&analysis.to_json()).unwrap_or_default()
}

fn snapshot(name: String, text: String) {
    insta::with_settings!({
        snapshot_path => "fixtures/snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn ok_fixtures() {
    for path in fixtures("ok") {
        let (stem, analysis) = load(&path);
        assert!(
            !analysis.has_errors(),
            "{} has errors:\n{}",
            path.display(),
            analysis.render_diagnostics()
        );
        let mut text = String::new();
        for function in &analysis.functions {
            if let Some(ir) = &function.ir {
                text.push_str(&rextio_ir::print::print_function(ir));
                text.push('\n');
            }
        }
        assert!(
            !text.is_empty(),
            "{} has no native function",
            path.display()
        );
        text.push_str(&json_text(&analysis));
        snapshot(format!("ok__{stem}"), text);
    }
}

#[test]
fn err_fixtures() {
    for path in fixtures("err") {
        let (stem, analysis) = load(&path);
        let rendered = analysis.render_diagnostics();
        assert!(
            !rendered.is_empty(),
            "{} produced no diagnostics",
            path.display()
        );
        snapshot(
            format!("err__{stem}"),
            format!("{rendered}\n{}", json_text(&analysis)),
        );
    }
}
