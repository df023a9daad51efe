//! The crate map of `docs/architecture.md`, checked: every workspace crate's `Cargo.toml` may
//! name only the crates of ours its row allows, in `[dependencies]` and
//! `[build-dependencies]`. The front doors (`cli`, `python`) reach the compiler through the
//! driver only; the driver sits above the frontend, the passes, the backend and the
//! toolchain crate; the runtime sees only the IR.
//!
//! A `[dev-dependencies]` edge is a test's: it may name any crate of ours that does not
//! depend on this one (so tests never close a cycle). The test crates (`tests`, `benches`)
//! may depend on anything.
//!
//! Inside each crate, the top-level modules import each other without a circle
//! ([`no_crate_has_an_import_circle_between_its_modules`]), and no library file is longer
//! than 1,200 lines but for named exceptions ([`no_library_file_is_longer_than_the_limit`]).

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

/// The top-level modules of `crate_dir/src` (a file `x.rs` or folder `x/` is module `x`; the
/// crate root is none), each with the other top-level modules its code names through
/// `crate::` (comment lines and the `#[cfg(test)]` tail of a file left out).
fn module_graph(crate_dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = crate_dir.join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let deps = graph.entry(module.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                deps.extend(crate_paths(line).into_iter().filter(|d| *d != module));
            }
        }
    }
    // Names of the crate root's own items (`crate::Analysis`) are not modules.
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

/// The first path segment after each `crate::` on `line`, and each top-level name of a
/// `crate::{a, b::c}` group.
fn crate_paths(line: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (i, _) in line.match_indices("crate::") {
        let rest = &line[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0usize, 0usize);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident(&group[start..j]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(&group[start..j]));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// A cycle of `graph` if it has one (depth-first search, in name order).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

/// Inside every crate, the top-level modules import each other without a circle (the
/// runtime's finer layer order is `runtime/tests/layers.rs`'s).
#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let root = root();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace manifest");
    for member in members(&workspace) {
        let graph = module_graph(&root.join(&member));
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{member}/src: the modules import each other in a circle: {cycle:?}");
        }
    }
}

#[test]
fn the_circle_check_finds_circles_and_grouped_imports() {
    assert_eq!(
        crate_paths("use crate::{a, b::{c, d}, e::F}; let x = crate::g::h();"),
        ["a", "b", "e", "g"]
    );
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"][..]),
        ("c", &["a"][..]),
        ("d", &[][..]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let mut acyclic = graph.clone();
    acyclic.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&acyclic), None);
}

/// The longest a library source file may be: a file is split by job before it gets here.
const MAX_LINES: usize = 1200;

/// Files allowed past [`MAX_LINES`], each with its reason.
const LONG_FILES: &[(&str, &str)] = &[(
    "ir/src/parse.rs",
    "the text format's parser: one recursive-descent grammar, read as a whole",
)];

/// Every `src/` file of every workspace crate is at most [`MAX_LINES`] lines, but for the
/// named exceptions (`runtime/tests/layers.rs` holds the runtime to the same limit).
#[test]
fn no_library_file_is_longer_than_the_limit() {
    let root = root();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace manifest");
    let mut long = Vec::new();
    for member in members(&workspace) {
        let mut stack = vec![root.join(&member).join("src")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .to_string();
                    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                    if lines > MAX_LINES && !LONG_FILES.iter().any(|(f, _)| *f == rel) {
                        long.push(format!("{rel}: {lines} lines"));
                    }
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these by job (limit {MAX_LINES} lines): {long:#?}"
    );
}
