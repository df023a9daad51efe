//! The rextio-torch sources an emitted crate carries, so that it depends on nothing but
//! exact-pinned crates.io packages and builds anywhere.
//!
//! - `src/rextio_runtime/`: every file of `runtime/src`, its `lib.rs` as `mod.rs`;
//! - `src/rextio_ir/`: the IR files the runtime reads types from (`types.rs`, `expr.rs`,
//!   `function.rs`) and a `mod.rs` that re-exports them as the IR crate's root does.
//!
//! The text is the real source, taken at this crate's build time (`build.rs`, `include_str!`),
//! never a copy kept by hand. Only absolute paths change: `crate::` becomes
//! `crate::rextio_runtime::` (or `crate::rextio_ir::`) and `rextio_ir::` becomes
//! `crate::rextio_ir::`, because the two crates become two modules of one crate.

use std::path::PathBuf;

use crate::EmittedFile;

/// Module of the emitted crate that holds the carried IR files.
pub const IR_MODULE: &str = "rextio_ir";
/// Module of the emitted crate that holds the carried runtime.
pub const RUNTIME_MODULE: &str = "rextio_runtime";

/// The IR files the runtime's `rextio_ir::` paths reach (the rest of the IR crate, and its
/// petgraph and codespan dependencies, stay behind).
const IR_FILES: [(&str, &str); 4] = [
    ("attrs.rs", include_str!("../../ir/src/attrs.rs")),
    ("expr.rs", include_str!("../../ir/src/expr.rs")),
    ("function.rs", include_str!("../../ir/src/function.rs")),
    ("types.rs", include_str!("../../ir/src/types.rs")),
];

/// Every file of `runtime/src`, relative to it (written by `build.rs`).
const RUNTIME_FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/carried_runtime.rs"));

/// `(crate name, exact version)` of the crates.io packages the emitted crate depends on, from
/// the workspace's `Cargo.lock` (written by `build.rs`).
pub const PINS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/pins.rs"));

/// The workspace's `Cargo.lock`, carried into emitted crates: cargo keeps the versions it
/// locks for every package the emitted crate needs (transitive ones included) and drops the
/// rest, so an emitted crate builds with the dependency versions rextio-torch is tested with
/// rather than whatever the registry holds on the day.
const WORKSPACE_LOCK: &str = include_str!("../../Cargo.lock");

/// The exact locked version of dependency `name`.
pub fn pinned(name: &str) -> &'static str {
    PINS.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| unreachable!("build.rs pins every dependency the backend names"))
}

/// The files to write under the emitted crate's root.
pub fn carried_files() -> Vec<EmittedFile> {
    let mut files = Vec::new();
    let ir_dir = PathBuf::from("src").join(IR_MODULE);
    let mut ir_mod = String::from(
        "// Carried by rextio-torch: the IR types the runtime reads, re-exported as the IR crate's\n\
         // root does. Do not edit.\n\n",
    );
    for (file, _) in IR_FILES {
        ir_mod.push_str(&format!("pub mod {};\n", file.trim_end_matches(".rs")));
    }
    ir_mod.push('\n');
    // `expr.rs` re-exports `attrs.rs` (as the IR crate does), so a glob of `attrs` too would
    // be an unused import in the emitted crate.
    for (file, _) in IR_FILES.iter().filter(|(file, _)| *file != "attrs.rs") {
        ir_mod.push_str(&format!("pub use {}::*;\n", file.trim_end_matches(".rs")));
    }
    files.push(EmittedFile {
        path: ir_dir.join("mod.rs"),
        contents: ir_mod,
    });
    for (file, text) in IR_FILES {
        files.push(EmittedFile {
            path: ir_dir.join(file),
            contents: carry(&format!("ir/src/{file}"), text, IR_MODULE),
        });
    }
    let runtime_dir = PathBuf::from("src").join(RUNTIME_MODULE);
    for (file, text) in RUNTIME_FILES {
        let target = if *file == "lib.rs" { "mod.rs" } else { file };
        files.push(EmittedFile {
            path: runtime_dir.join(target),
            contents: carry(&format!("runtime/src/{file}"), text, RUNTIME_MODULE),
        });
    }
    files
}

/// The `Cargo.lock` of an emitted crate whose crates.io dependencies are `roots`: the
/// workspace lock's entries for those packages and everything they depend on, in the
/// workspace lock's order (cargo adds the crate's own entry at its first build). The
/// versions are the ones rextio-torch is built and tested with.
pub fn lock_for(roots: &[&str]) -> EmittedFile {
    let (header, packages) = split_lock(WORKSPACE_LOCK);
    let mut keep: Vec<bool> = vec![false; packages.len()];
    let mut todo: Vec<(String, Option<String>)> = roots
        .iter()
        .map(|name| (name.to_string(), Some(pinned(name).to_string())))
        .collect();
    while let Some((name, version)) = todo.pop() {
        // A dependency names a version only where the lock holds several of that name.
        let found = packages
            .iter()
            .position(|p| p.name == name && version.as_deref().is_none_or(|v| p.version == v));
        let Some(at) = found else { continue };
        if std::mem::replace(&mut keep[at], true) {
            continue;
        }
        todo.extend(packages[at].dependencies.iter().cloned());
    }
    let mut contents = header.to_string();
    for (package, kept) in packages.iter().zip(keep) {
        if kept {
            contents.push_str(package.text);
        }
    }
    EmittedFile {
        path: PathBuf::from("Cargo.lock"),
        contents,
    }
}

/// One `[[package]]` entry of a lock file: its text (up to the next entry), name, version and
/// dependencies (`name` or `name version`).
struct LockedPackage<'a> {
    text: &'a str,
    name: String,
    version: String,
    dependencies: Vec<(String, Option<String>)>,
}

/// The text before the first entry, and the entries.
fn split_lock(lock: &str) -> (&str, Vec<LockedPackage<'_>>) {
    const ENTRY: &str = "[[package]]\n";
    let first = lock.find(ENTRY).unwrap_or(lock.len());
    let mut packages = Vec::new();
    let mut rest = &lock[first..];
    while !rest.is_empty() {
        let end = rest[ENTRY.len()..]
            .find(ENTRY)
            .map_or(rest.len(), |i| i + ENTRY.len());
        let text = &rest[..end];
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
                .map(|v| v.trim_end_matches('"').to_string())
                .unwrap_or_default()
        };
        let dependencies = text
            .split_once("dependencies = [")
            .map(|(_, list)| list.split_once(']').map_or(list, |(l, _)| l))
            .unwrap_or("")
            .split(',')
            .filter_map(|item| {
                let item = item.trim().trim_matches('"');
                let mut words = item.split_whitespace();
                let name = words.next()?.to_string();
                Some((name, words.next().map(str::to_string)))
            })
            .collect();
        packages.push(LockedPackage {
            text,
            name: field("name"),
            version: field("version"),
            dependencies,
        });
        rest = &rest[end..];
    }
    (&lock[..first], packages)
}

fn carry(origin: &str, text: &str, own_module: &str) -> String {
    format!(
        "// Carried by rextio-torch from its {origin}. Do not edit.\n{}",
        rewrite_paths(text, own_module)
    )
}

/// `crate::` -> `crate::<own_module>::`, `rextio_ir::` -> `crate::rextio_ir::`, where either
/// starts a path (not inside another identifier or path).
pub fn rewrite_paths(text: &str, own_module: &str) -> String {
    let crate_path = format!("crate::{own_module}::");
    let ir_path = format!("crate::{IR_MODULE}::");
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut rest = text;
    let mut previous: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        let starts_path =
            !matches!(previous, Some(p) if p.is_alphanumeric() || p == '_' || p == ':');
        if starts_path && rest.starts_with("crate::") {
            out.push_str(&crate_path);
            rest = &rest["crate::".len()..];
            previous = Some(':');
        } else if starts_path && rest.starts_with("rextio_ir::") {
            out.push_str(&ir_path);
            rest = &rest["rextio_ir::".len()..];
            previous = Some(':');
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            previous = Some(c);
        }
    }
    out
}

/// The carried runtime and IR as two inline modules (`pub mod rextio_runtime { ... }` and
/// `pub mod rextio_ir { ... }`), one item text for a crate that another tool generates and
/// that takes module items but no files: Rextio core (plugin `helpers`, see
/// `docs/rextio-plugin.md`). Same source as [`carried_files`], with the paths rewritten the
/// same way, and two edits such a crate needs: it always builds with pyo3, so the runtime's
/// `python` feature gate goes; and it may not depend on serde (a crate Rextio core owns and
/// does not give plugin crates), so the IR's `Serialize` derives go.
pub fn inline_modules() -> String {
    let mut out = String::from(
        "// Carried by rextio-torch: its runtime and the IR types the runtime reads. Do not edit.\n",
    );
    out.push_str(&format!("pub mod {IR_MODULE} {{\n"));
    for (file, text) in IR_FILES {
        let name = file.trim_end_matches(".rs");
        let text = without_serde(&rewrite_paths(text, IR_MODULE));
        out.push_str(&format!("pub mod {name} {{\n{text}\n}}\n"));
    }
    for (file, _) in IR_FILES {
        out.push_str(&format!("pub use {}::*;\n", file.trim_end_matches(".rs")));
    }
    out.push_str("}\n");
    let lib = RUNTIME_FILES
        .iter()
        .find(|(file, _)| *file == "lib.rs")
        .map(|(_, text)| *text)
        .unwrap_or_else(|| unreachable!("runtime/src/lib.rs is carried"));
    let mut body = String::new();
    for line in rewrite_paths(lib, RUNTIME_MODULE).lines() {
        if line.trim() == "#[cfg(feature = \"python\")]" {
            continue;
        }
        let declared = line
            .trim()
            .strip_prefix("pub mod ")
            .or_else(|| line.trim().strip_prefix("mod "))
            .and_then(|rest| rest.strip_suffix(';'));
        match declared.and_then(|name| {
            RUNTIME_FILES
                .iter()
                .find(|(file, _)| *file == format!("{name}.rs"))
                .map(|(_, text)| (name, *text))
        }) {
            Some((name, text)) => {
                let visibility = if line.trim().starts_with("pub ") {
                    "pub "
                } else {
                    ""
                };
                body.push_str(&format!(
                    "{visibility}mod {name} {{\n{}\n}}\n",
                    rewrite_paths(text, RUNTIME_MODULE)
                ));
            }
            None => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    out.push_str(&format!("pub mod {RUNTIME_MODULE} {{\n{body}}}\n"));
    out
}

/// The IR text without serde: no `use serde::Serialize;`, no `Serialize` in derives.
fn without_serde(text: &str) -> String {
    text.lines()
        .filter(|line| line.trim() != "use serde::Serialize;")
        .map(|line| {
            if line.trim_start().starts_with("#[derive(") {
                line.replace(", Serialize)", ")")
                    .replace("(Serialize, ", "(")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::standalone::DEPENDENCIES as STANDALONE_ROOTS;
    use crate::DEPENDENCIES as PYTHON_ROOTS;

    #[test]
    fn the_lock_of_an_emitted_crate_is_the_workspace_lock_of_its_dependencies() {
        let lock = lock_for(&PYTHON_ROOTS).contents;
        let (header, packages) = split_lock(&lock);
        assert!(
            header.contains("version = 4") || header.contains("version = 3"),
            "{header}"
        );
        let (_, workspace) = split_lock(WORKSPACE_LOCK);
        // The roots at their pins, and every dependency of a kept entry kept too.
        for root in PYTHON_ROOTS {
            assert!(
                packages
                    .iter()
                    .any(|p| p.name == root && p.version == pinned(root)),
                "{root} {}",
                pinned(root)
            );
        }
        for package in &packages {
            assert!(
                workspace.iter().any(|w| w.text == package.text),
                "{} is the workspace's entry, unchanged",
                package.name
            );
            for (name, version) in &package.dependencies {
                assert!(
                    packages
                        .iter()
                        .any(|p| &p.name == name
                            && version.as_deref().is_none_or(|v| p.version == v)),
                    "{} needs {name} {version:?}, which the lock lacks",
                    package.name
                );
            }
        }
        // Nothing of the workspace's own crates, and fewer entries than the whole lock.
        assert!(packages.iter().all(|p| !p.name.starts_with("rextio")));
        assert!(packages.len() < workspace.len());
        // The standalone crate's has no Python in it.
        let standalone = lock_for(&STANDALONE_ROOTS);
        let (_, standalone) = split_lock(&standalone.contents);
        assert!(standalone.iter().all(|p| p.name != "pyo3"));
        assert!(standalone.len() < packages.len());
    }

    #[test]
    fn paths_are_rewritten_only_where_they_start() {
        let text = "use crate::error::Result;\nuse rextio_ir::{UnaryOp, Type};\n\
                    let x = crate::ops::unary(a)?; // my_crate::x, not_rextio_ir::y\n\
                    $crate::m!(); rextio_ir::ExprId";
        assert_eq!(
            rewrite_paths(text, "rextio_runtime"),
            "use crate::rextio_runtime::error::Result;\nuse crate::rextio_ir::{UnaryOp, Type};\n\
             let x = crate::rextio_runtime::ops::unary(a)?; // my_crate::x, not_rextio_ir::y\n\
             $crate::rextio_runtime::m!(); crate::rextio_ir::ExprId"
        );
        assert_eq!(
            rewrite_paths("use crate::types::Type;", "rextio_ir"),
            "use crate::rextio_ir::types::Type;"
        );
    }

    /// The first segment of every path that follows `prefix`: `a` of `prefix a::b`, and `a`,
    /// `b` of `prefix {a, b::c}`.
    fn names_after(text: &str, prefix: &str) -> Vec<String> {
        let mut names = Vec::new();
        for (at, _) in text.match_indices(prefix) {
            let rest = &text[at + prefix.len()..];
            let items = match rest.strip_prefix('{') {
                Some(list) => list.split('}').next().unwrap_or(""),
                None => rest,
            };
            for item in items.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.push(name);
                }
                if !rest.starts_with('{') {
                    break;
                }
            }
        }
        names
    }

    fn carried_text(module: &str) -> Vec<(String, String)> {
        carried_files()
            .into_iter()
            .filter(|f| f.path.starts_with(PathBuf::from("src").join(module)))
            .map(|f| (f.path.display().to_string(), f.contents))
            .collect()
    }

    /// What the runtime names from the IR must be defined in the carried IR files; the emitted
    /// crate would not build otherwise. (The Python suite builds one for real.)
    #[test]
    fn the_carried_ir_defines_what_the_runtime_uses() {
        let ir: String = carried_text(IR_MODULE)
            .into_iter()
            .map(|(_, text)| text)
            .collect();
        let mut checked = 0;
        for (path, text) in carried_text(RUNTIME_MODULE) {
            for name in names_after(&text, "crate::rextio_ir::") {
                let defined = ["struct", "enum", "type", "fn", "const", "mod", "trait"]
                    .iter()
                    .any(|kind| {
                        ir.contains(&format!("pub {kind} {name} "))
                            || ir.contains(&format!("pub {kind} {name}<"))
                            || ir.contains(&format!("pub {kind} {name}("))
                            || ir.contains(&format!("pub {kind} {name}:"))
                            || ir.contains(&format!("pub {kind} {name};"))
                    });
                assert!(defined, "{path} uses rextio_ir::{name}, which the emitted crate does not carry: add its file to IR_FILES");
                checked += 1;
            }
            assert!(
                !text.replace("crate::rextio_ir", "").contains("rextio_ir"),
                "{path} names rextio_ir other than by a path the backend rewrites"
            );
        }
        assert!(
            checked > 10,
            "the runtime's IR imports were found ({checked})"
        );
    }

    /// Every crate the carried sources `use` is a pinned dependency of the emitted crate.
    #[test]
    fn every_crate_the_carried_sources_use_is_pinned() {
        let pinned: Vec<String> = PINS.iter().map(|(n, _)| n.replace('-', "_")).collect();
        // `use error::...` in a `mod.rs` names a sibling module, not a crate.
        let modules: Vec<String> = carried_files()
            .iter()
            .filter_map(|f| f.path.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        let mut seen = Vec::new();
        for (path, text) in carried_text(IR_MODULE)
            .into_iter()
            .chain(carried_text(RUNTIME_MODULE))
        {
            for line in text.lines().map(str::trim_start) {
                let Some(used) = line
                    .strip_prefix("use ")
                    .or_else(|| line.strip_prefix("pub use "))
                else {
                    continue;
                };
                let root: String = used
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if ["crate", "self", "super", "std", "core", "alloc"].contains(&root.as_str())
                    || modules.contains(&root)
                    || !used[root.len()..].starts_with("::")
                {
                    continue;
                }
                assert!(
                    pinned.contains(&root),
                    "{path} uses crate `{root}`, which the emitted crate does not depend on: add it to PINNED in backend/build.rs"
                );
                seen.push(root);
            }
        }
        for expected in ["tch", "pyo3", "thiserror", "la_arena", "serde"] {
            assert!(seen.iter().any(|s| s == expected), "{expected} is used");
        }
    }

    #[test]
    fn pins_are_exact_versions_from_the_lock_file() {
        for name in [
            "tch",
            "torch-sys",
            "pyo3",
            "thiserror",
            "la-arena",
            "serde",
            "gemm",
        ] {
            let version = pinned(name);
            assert!(
                version.split('.').count() == 3
                    && version.split('.').all(|p| p.parse::<u32>().is_ok()),
                "{name} = {version}"
            );
        }
        assert_eq!(pinned("tch"), "0.26.0");
        assert_eq!(pinned("pyo3"), "0.29.3");
    }

    #[test]
    fn inline_modules_hold_every_runtime_file_and_nothing_a_plugin_crate_lacks() {
        let text = inline_modules();
        for (file, _) in RUNTIME_FILES {
            if *file != "lib.rs" {
                let name = file.trim_end_matches(".rs");
                assert!(text.contains(&format!("pub mod {name} {{\n")), "{file}");
            }
        }
        for (file, _) in IR_FILES {
            let name = file.trim_end_matches(".rs");
            assert!(text.contains(&format!("pub mod {name} {{\n")), "{file}");
        }
        assert!(!text.contains("cfg(feature"));
        assert!(!text.contains("serde") && !text.contains("Serialize"));
        assert!(!text
            .lines()
            .any(|l| l.trim().ends_with(';') && l.trim_start().starts_with("pub mod ")));
    }

    #[test]
    fn the_whole_runtime_is_carried() {
        let files = carried_files();
        for module in [
            "mod.rs",
            "boundary.rs",
            "checks.rs",
            "executor.rs",
            "kernels.rs",
            "ops.rs",
            "error.rs",
        ] {
            assert!(
                files
                    .iter()
                    .any(|f| f.path == PathBuf::from("src/rextio_runtime").join(module)),
                "{module}"
            );
        }
        let kernels = files
            .iter()
            .find(|f| f.path.ends_with("rextio_runtime/kernels.rs"))
            .expect("carried");
        let original = include_str!("../../runtime/src/kernels.rs");
        assert_eq!(
            kernels.contents.lines().count(),
            original.lines().count() + 1,
            "the real file, behind one header line"
        );
    }
}
