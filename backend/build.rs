//! Gathers, at build time, what an emitted crate carries so that it builds anywhere:
//!
//! - `carried_runtime.rs`: every source file of `runtime/src` (recursively) as
//!   `(relative path, include_str!(...))`, so runtime changes flow into emitted crates with no
//!   hand-kept list or copy;
//! - `pins.rs`: the exact versions of the crates.io packages the emitted crate depends on,
//!   read from the workspace's `Cargo.lock` (the versions rextio-torch itself is built and
//!   tested with).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

/// The crates.io packages an emitted crate depends on, with the workspace crate whose
/// dependency list fixes the version (a lock file may hold several versions of one name).
const PINNED: [(&str, &str); 7] = [
    ("tch", "rextio-runtime"),
    ("torch-sys", "rextio-runtime"),
    ("gemm", "rextio-runtime"),
    ("pyo3", "rextio-runtime"),
    ("thiserror", "rextio-runtime"),
    ("la-arena", "rextio-ir"),
    ("serde", "rextio-ir"),
];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .expect("backend/ sits in the workspace root");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it"));

    let runtime_src = root.join("runtime").join("src");
    println!("cargo:rerun-if-changed={}", runtime_src.display());
    let mut files = Vec::new();
    collect_rs(&runtime_src, &runtime_src, &mut files);
    files.sort();
    let mut carried = String::from("&[\n");
    for relative in &files {
        let absolute = runtime_src.join(relative);
        let _ = writeln!(
            carried,
            "    ({:?}, include_str!({:?})),",
            relative.to_string_lossy().replace('\\', "/"),
            absolute.to_string_lossy()
        );
    }
    carried.push(']');
    fs::write(out.join("carried_runtime.rs"), carried).expect("OUT_DIR is writable");

    let lock_path = root.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock_path.display());
    let lock = fs::read_to_string(&lock_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; the emitted crate pins the workspace's locked versions",
            lock_path.display()
        )
    });
    let packages = parse_lock(&lock);
    let mut pins = String::from("&[\n");
    for (name, owner) in PINNED {
        let version = locked_version(&packages, name, owner).unwrap_or_else(|| {
            panic!(
                "{}: no locked version of `{name}` for `{owner}`",
                lock_path.display()
            )
        });
        let _ = writeln!(pins, "    ({name:?}, {version:?}),");
    }
    pins.push(']');
    fs::write(out.join("pins.rs"), pins).expect("OUT_DIR is writable");
}

fn collect_rs(base: &Path, dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("readable directory entry").path();
        if path.is_dir() {
            collect_rs(base, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(
                path.strip_prefix(base)
                    .expect("below the base")
                    .to_path_buf(),
            );
        }
    }
}

/// One `[[package]]` of a lock file: name, version, dependency entries (`name` or
/// `name version`).
struct Package {
    name: String,
    version: String,
    dependencies: Vec<String>,
}

/// The lock file's packages. Its format is plain: `key = "value"` lines and a `dependencies`
/// array of quoted strings, one per line.
fn parse_lock(text: &str) -> Vec<Package> {
    let mut packages = Vec::new();
    let mut current: Option<Package> = None;
    let mut in_dependencies = false;
    for line in text.lines().map(str::trim) {
        if line == "[[package]]" {
            packages.extend(current.take());
            current = Some(Package {
                name: String::new(),
                version: String::new(),
                dependencies: Vec::new(),
            });
            in_dependencies = false;
            continue;
        }
        let Some(package) = current.as_mut() else {
            continue;
        };
        if in_dependencies {
            if line.starts_with(']') {
                in_dependencies = false;
            } else {
                package
                    .dependencies
                    .push(line.trim_end_matches(',').trim_matches('"').to_string());
            }
        } else if let Some(value) = line.strip_prefix("name = ") {
            package.name = value.trim_matches('"').to_string();
        } else if let Some(value) = line.strip_prefix("version = ") {
            package.version = value.trim_matches('"').to_string();
        } else if line.starts_with("dependencies = [") {
            in_dependencies = !line.ends_with(']');
        }
    }
    packages.extend(current);
    packages
}

/// The version of `name` that workspace crate `owner` depends on.
fn locked_version(packages: &[Package], name: &str, owner: &str) -> Option<String> {
    let owner = packages.iter().find(|p| p.name == owner)?;
    let entry = owner
        .dependencies
        .iter()
        .find(|d| d.split(' ').next() == Some(name))?;
    if let Some(version) = entry.split(' ').nth(1) {
        return Some(version.to_string());
    }
    let versions: BTreeMap<&str, ()> = packages
        .iter()
        .filter(|p| p.name == name)
        .map(|p| (p.version.as_str(), ()))
        .collect();
    match versions.len() {
        1 => versions.keys().next().map(|v| v.to_string()),
        _ => None,
    }
}
