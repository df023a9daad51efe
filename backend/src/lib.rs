//! The backend: optimized IR to Rust source. For each function it emits a pure-Rust function
//! (`<name>_native`, tensors in, tensor out, no Python) and a PyO3 wrapper that checks
//! arguments at the boundary; around them, a self-contained project that builds a Python
//! package with one command (`pip install --no-build-isolation .`, see `docs/emitted-crate.md`).
//!
//! Generated code calls the same runtime functions as the executor, so both consumers of one
//! optimized IR compute the same values. The emitted crate carries those runtime sources
//! ([`carried`]) and depends only on exact-pinned crates.io packages, so it builds away from
//! this workspace. Emission never panics: IR that breaks an invariant is an [`EmitError`].
//!
//! [`emit_standalone_crate`] writes the same functions as a Rust library with no Python in it
//! (`docs/standalone-crate.md`).
//!
//! Every text of Rust rextio-torch generates is written here, including the Rextio plugin's
//! ([`plugin`]: a claimed site's expression, the types' conversions and helpers). The backend
//! depends on the IR only; the driver sits above it (`docs/architecture.md`, crate map).

mod carried;
pub mod plugin;
mod rust;
mod standalone;

use std::path::PathBuf;

use rextio_ir::Function;
use thiserror::Error;

pub use carried::{inline_modules, pinned, rewrite_paths, IR_MODULE, PINS, RUNTIME_MODULE};
pub use rust::{describe_type, emit_function, emit_lib_rs, emit_standalone_sources};
pub use standalone::{emit_standalone_crate, EXAMPLE};

#[derive(Debug, Error, PartialEq, Eq)]
pub enum EmitError {
    #[error("cannot emit `{function}`: {message}")]
    Invalid { function: String, message: String },
    #[error("`{0}` is not a valid Python module name (letters, digits and '_', not starting with a digit)")]
    ModuleName(String),
    #[error("`{0}` cannot name an emitted module: {1}")]
    ReservedModuleName(String, &'static str),
}

/// One file of an emitted project, relative to its root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmittedFile {
    pub path: PathBuf,
    pub contents: String,
}

/// What to call the emitted crate and where its functions came from.
#[derive(Clone, Debug)]
pub struct CrateOptions {
    /// Python module (package, crate and library) name.
    pub module_name: String,
    /// The source file the functions came from (for headers and the README).
    pub source_name: String,
}

impl CrateOptions {
    pub fn new(module_name: &str, source_name: &str) -> CrateOptions {
        CrateOptions {
            module_name: module_name.to_string(),
            source_name: source_name.to_string(),
        }
    }
}

pub fn valid_module_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Why `name` cannot be an emitted module although it is an identifier.
fn reserved_module_name(name: &str) -> Option<&'static str> {
    if PYTHON_KEYWORDS.contains(&name) {
        return Some("it is a Python keyword");
    }
    if name == "torch" || name == "rextio_torch" {
        return Some("it would hide the Python package of that name");
    }
    let dependency = carried::PINS
        .iter()
        .any(|(dep, _)| dep.replace('-', "_") == name)
        || name == IR_MODULE
        || name == RUNTIME_MODULE;
    dependency.then_some("the emitted crate depends on a crate of that name")
}

/// Refuses module (crate) names that cannot work: not identifiers, Python keywords, names of
/// packages or crates the emitted code needs.
fn check_module_name(module: &str) -> Result<(), EmitError> {
    if !valid_module_name(module) {
        return Err(EmitError::ModuleName(module.to_string()));
    }
    if let Some(reason) = reserved_module_name(module) {
        return Err(EmitError::ReservedModuleName(module.to_string(), reason));
    }
    Ok(())
}

/// The whole project: `Cargo.toml`, `.cargo/config.toml`, `pyproject.toml`, `README.md`,
/// `python/<module>/__init__.py`, `src/lib.rs` and the carried runtime sources under `src/`.
pub fn emit_crate(
    functions: &[Function],
    options: &CrateOptions,
) -> Result<Vec<EmittedFile>, EmitError> {
    let module = options.module_name.as_str();
    check_module_name(module)?;
    let lib_rs = emit_lib_rs(functions, module, &options.source_name)?;
    let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
    let mut files = vec![
        EmittedFile {
            path: PathBuf::from("Cargo.toml"),
            contents: cargo_toml(options),
        },
        EmittedFile {
            path: PathBuf::from(".cargo/config.toml"),
            contents: CARGO_CONFIG.to_string(),
        },
        EmittedFile {
            path: PathBuf::from("pyproject.toml"),
            contents: pyproject_toml(module),
        },
        EmittedFile {
            path: PathBuf::from("README.md"),
            contents: readme(options, &names),
        },
        EmittedFile {
            path: PathBuf::from("python").join(module).join("__init__.py"),
            contents: init_py(options, &names),
        },
        EmittedFile {
            path: PathBuf::from("src/lib.rs"),
            contents: lib_rs,
        },
    ];
    files.extend(carried::carried_files());
    files.push(carried::lock_for(&DEPENDENCIES));
    Ok(files)
}

/// The crates.io packages an emitted crate depends on (its `Cargo.toml`).
pub const DEPENDENCIES: [&str; 7] = [
    "gemm",
    "la-arena",
    "pyo3",
    "serde",
    "tch",
    "thiserror",
    "torch-sys",
];

fn cargo_toml(options: &CrateOptions) -> String {
    format!(
        r#"# Generated by rextio-torch from {source}. Do not edit.
[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
rust-version = "{rust_version}"
publish = false

[lib]
name = "{name}"
crate-type = ["cdylib", "rlib"]

[features]
# The carried runtime compiles its Python boundary under this feature; the extension needs it.
default = ["python"]
python = []

# Exact versions: the ones rextio-torch was built and tested with.
[dependencies]
gemm = {{ version = "={gemm}", default-features = false, features = ["std", "x86-v4"] }}
la-arena = "={la_arena}"
pyo3 = "={pyo3}"
serde = {{ version = "={serde}", features = ["derive"] }}
tch = {{ version = "={tch}", features = ["python-extension"] }}
thiserror = "={thiserror}"
torch-sys = {{ version = "={torch_sys}", features = ["python-extension"] }}

[profile.release]
overflow-checks = true

# A project of its own, not a member of any enclosing workspace.
[workspace]
"#,
        source = options.source_name,
        name = options.module_name,
        rust_version = env!("CARGO_PKG_RUST_VERSION"),
        gemm = pinned("gemm"),
        la_arena = pinned("la-arena"),
        pyo3 = pinned("pyo3"),
        serde = pinned("serde"),
        tch = pinned("tch"),
        thiserror = pinned("thiserror"),
        torch_sys = pinned("torch-sys"),
    )
}

/// Python extensions must not link libpython; pyo3 reads this instead of a feature flag
/// (maturin sets it too; this keeps a plain `cargo build` right).
const CARGO_CONFIG: &str = r#"# Generated by rextio-torch. Do not edit.
[env]
PYO3_BUILD_EXTENSION_MODULE = "1"
"#;

/// The wheel holds the package `<module>` (its `__init__.py` loads torch first) and the
/// extension `<module>._native`. It links against the libtorch of the torch wheel at run time,
/// so auditwheel (which would need patchelf and cannot bundle torch) is skipped.
fn pyproject_toml(module: &str) -> String {
    format!(
        r#"# Generated by rextio-torch. Do not edit.
[build-system]
requires = ["maturin>=1.16,<2"]
build-backend = "maturin"

[project]
name = "{module}"
version = "0.1.0"
requires-python = ">=3.11,<3.12"
dependencies = ["torch==2.13.0"]

[tool.maturin]
module-name = "{module}._native"
python-source = "python"
bindings = "pyo3"
auditwheel = "skip"
"#
    )
}

fn python_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn init_py(options: &CrateOptions, names: &[&str]) -> String {
    format!(
        r#""""Functions of {source} compiled by rextio-torch. Generated; do not edit.

Each checks its arguments exactly as annotated and computes what the Python function computes.
"""

# The extension links against the libtorch that torch ships: torch must be loaded first.
import torch as _torch  # noqa: F401

from ._native import {imports}

__all__ = [{all}]
"#,
        source = options.source_name,
        imports = names.join(", "),
        all = python_list(names),
    )
}

fn readme(options: &CrateOptions, names: &[&str]) -> String {
    let module = &options.module_name;
    let functions: String = names
        .iter()
        .map(|n| format!("- `{module}.{n}` (Rust: `{module}::{n}_native`)\n"))
        .collect();
    format!(
        r#"# {module}

Generated by rextio-torch from `{source}`. Do not edit: emit again instead.

{functions}
## Build and install

In a virtual environment that has `torch==2.13.0` and `maturin` (1.16 or later) installed, with
a Rust toolchain ({rust_version} or later) on `PATH`, from this directory:

```sh
LIBTORCH_USE_PYTORCH=1 pip install --no-build-isolation .
```

Then `import {module}` (it imports torch first). The first build compiles tch's libtorch shim
(a few minutes); later builds take seconds. `LIBTORCH_USE_PYTORCH=1` makes tch use the libtorch
of the installed torch; `--no-build-isolation` lets the build see that torch.

## What is here

- `src/lib.rs`: the compiled functions, the Python wrappers that check arguments, and the
  extension module `{module}._native`;
- `src/rextio_runtime/`, `src/rextio_ir/`: the rextio-torch runtime they call, carried as
  source so that this crate depends only on exact-pinned crates.io packages (`Cargo.toml`);
- `python/{module}/__init__.py`: the package, which loads torch and re-exports the functions.
"#,
        source = options.source_name,
        rust_version = env!("CARGO_PKG_RUST_VERSION"),
    )
}
