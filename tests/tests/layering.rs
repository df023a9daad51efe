//! The crate map of `docs/architecture.md`, checked: every workspace crate's `Cargo.toml` may
//! name only the crates of ours its row allows, in `[dependencies]` and
//! `[build-dependencies]`. The front doors (`cli`, `python`) reach the compiler through the
//! driver only; the driver sits above the frontend, the passes, the backend and the
//! toolchain crate; the runtime sees only the IR.
//!
//! A `[dev-dependencies]` edge is a test's: it may name any crate of ours that does not
//! depend on this one (so tests never close a cycle). The test crates (`tests`, `benches`)
//! may depend on anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folder, then the crates of ours its `[dependencies]` and `[build-dependencies]` may name.
const ALLOWED: &[(&str, &[&str])] = &[
    ("ir", &[]),
    ("frontend", &["rextio-ir"]),
    ("passes", &["rextio-ir"]),
    ("backend", &["rextio-ir"]),
    ("runtime", &["rextio-ir"]),
    ("toolchain", &["rextio-ir", "rextio-backend"]),
    (
        "driver",
        &[
            "rextio-ir",
            "rextio-frontend",
            "rextio-passes",
            "rextio-backend",
            "rextio-toolchain",
        ],
    ),
    ("cli", &["rextio-driver"]),
    ("python", &["rextio-driver", "rextio-runtime"]),
];

/// Test crates: they may depend on any crate of ours.
const TEST_CRATES: &[&str] = &["tests", "benches"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .to_path_buf()
}

/// The `members = [...]` of the workspace manifest.
fn members(manifest: &str) -> Vec<String> {
    let start = manifest
        .find("members = [")
        .expect("the workspace lists its members");
    let list = &manifest[start + "members = [".len()..];
    let list = &list[..list.find(']').expect("the member list ends")];
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// A manifest's package name and the `rextio-*` crates each dependency table names.
struct Manifest {
    name: String,
    /// `(table, crate)`: table is `dependencies`, `build-dependencies` or `dev-dependencies`.
    ours: Vec<(String, String)>,
}

fn read_manifest(text: &str) -> Manifest {
    let mut name = None;
    let mut table = String::new();
    let mut ours = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.trim_matches(|c| c == '[' || c == ']').to_string();
            // `[target.'cfg(...)'.dependencies]` is a dependency table too.
            if let Some(pos) = table.rfind('.') {
                if table.starts_with("target.") {
                    table = table[pos + 1..].to_string();
                }
            }
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let key = line.split(['=', '.']).next().unwrap_or("").trim();
        if table == "package" && key == "name" && name.is_none() {
            name = Some(
                line.split('=')
                    .nth(1)
                    .expect("name = value")
                    .trim()
                    .trim_matches('"')
                    .to_string(),
            );
        }
        let is_deps = matches!(
            table.as_str(),
            "dependencies" | "build-dependencies" | "dev-dependencies"
        );
        if is_deps && key.starts_with("rextio-") {
            ours.push((table.clone(), key.to_string()));
        }
    }
    Manifest {
        name: name.expect("every member has a package name"),
        ours,
    }
}

#[test]
fn every_crate_depends_only_on_the_crates_its_row_allows() {
    let root = root();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace manifest");
    let members = members(&workspace);
    let mut manifests = BTreeMap::new();
    for member in &members {
        let text = std::fs::read_to_string(root.join(member).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{member}/Cargo.toml: {e}"));
        manifests.insert(member.clone(), read_manifest(&text));
    }
    // Every member has a row (or is a test crate), and every row is a member.
    let rows: BTreeSet<&str> = ALLOWED.iter().map(|(m, _)| *m).collect();
    for member in &members {
        assert!(
            rows.contains(member.as_str()) || TEST_CRATES.contains(&member.as_str()),
            "{member} is a workspace member without a row in the layering table: add one \
             (and to docs/architecture.md's crate map)"
        );
    }
    for row in &rows {
        assert!(
            members.iter().any(|m| m == row),
            "{row} is in the table but not a member"
        );
    }
    let folder_of: BTreeMap<&str, &str> = manifests
        .iter()
        .map(|(folder, m)| (m.name.as_str(), folder.as_str()))
        .collect();
    // Normal and build edges: exactly the row's.
    let mut problems = Vec::new();
    for (folder, allowed) in ALLOWED {
        let manifest = &manifests[*folder];
        for (table, dep) in &manifest.ours {
            if table != "dev-dependencies" && !allowed.contains(&dep.as_str()) {
                problems.push(format!(
                    "{folder} ({}) names {dep} in [{table}]; its row allows {allowed:?}",
                    manifest.name
                ));
            }
        }
    }
    // What each crate reaches through normal and build edges.
    let edges = |folder: &str| -> Vec<String> {
        manifests[folder]
            .ours
            .iter()
            .filter(|(t, _)| t != "dev-dependencies")
            .map(|(_, d)| d.clone())
            .collect()
    };
    let reaches = |from: &str, to: &str| -> bool {
        let mut stack = vec![from.to_string()];
        let mut seen = BTreeSet::new();
        while let Some(name) = stack.pop() {
            if name == to {
                return true;
            }
            if !seen.insert(name.clone()) {
                continue;
            }
            if let Some(folder) = folder_of.get(name.as_str()) {
                stack.extend(edges(folder));
            }
        }
        false
    };
    // Dev edges: never to a crate that depends on this one.
    for (folder, manifest) in &manifests {
        for (table, dep) in &manifest.ours {
            if table == "dev-dependencies" && reaches(dep, &manifest.name) {
                problems.push(format!(
                    "{folder} ({}) has the dev-dependency {dep}, which depends on it: a cycle",
                    manifest.name
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_table_reads_dependency_tables() {
    let manifest = read_manifest(
        "[package]\nname = \"rextio-x\"\n\n[dependencies]\nrextio-ir.workspace = true\n\
         serde.workspace = true\nrextio-backend = { path = \"../backend\" }\n\n\
         [dev-dependencies]\nrextio-driver.workspace = true\n\n\
         [target.'cfg(unix)'.build-dependencies]\nrextio-passes.workspace = true\n\n\
         [lints]\nworkspace = true\n",
    );
    assert_eq!(manifest.name, "rextio-x");
    let pairs: Vec<(&str, &str)> = manifest
        .ours
        .iter()
        .map(|(t, d)| (t.as_str(), d.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("dependencies", "rextio-ir"),
            ("dependencies", "rextio-backend"),
            ("dev-dependencies", "rextio-driver"),
            ("build-dependencies", "rextio-passes"),
        ]
    );
}

#[test]
fn every_crate_opts_in_to_the_workspace_lints() {
    let root = root();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace manifest");
    for member in members(&workspace) {
        let text = std::fs::read_to_string(root.join(&member).join("Cargo.toml")).unwrap();
        assert!(
            text.contains("[lints]\nworkspace = true"),
            "{member}/Cargo.toml does not opt in to [workspace.lints]"
        );
    }
}
