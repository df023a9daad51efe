//! Helpers for the end-to-end tests: repository paths and reading example sources.

use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// `(display name, text)` of a file under the repository root.
pub fn source(relative: &str) -> (String, String) {
    let text = std::fs::read_to_string(root().join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"));
    (relative.to_string(), text)
}
