//! The emitted project, file by file, without building it (tests/python/test_emit_build.py
//! builds and imports one): self-contained (exact-pinned crates.io dependencies, the runtime
//! carried as source, no path of this workspace), one documented command, a Python package
//! named after the module, and generated code that leaves nothing for the compiler to warn
//! about.

use std::path::Path;

use rextio_backend::{emit_crate, emit_lib_rs, CrateOptions, EmitError};
use rextio_ir::parse_function;

use rextio_tests::{emit_fixture as fixture, emitted as file};

#[test]
fn the_crate_depends_only_on_exact_pinned_crates_io_packages() {
    let files =
        emit_crate(&fixture(), &CrateOptions::new("surface", "emit_fixture.py")).expect("emits");
    let manifest = file(&files, "Cargo.toml");
    let dependencies = manifest
        .split("[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("a dependency table");
    let lines: Vec<&str> = dependencies.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 7, "{dependencies}");
    for line in lines {
        let version = line
            .split('"')
            .nth(1)
            .unwrap_or_else(|| panic!("{line} has a version"));
        let digits = version.strip_prefix('=').expect("exact");
        assert_eq!(digits.split('.').count(), 3, "{line}");
        assert!(!line.contains("path"), "{line}");
    }
    assert!(manifest.contains("tch = { version = \"=0.26.0\", features = [\"python-extension\"] }"));
    assert!(manifest.contains("pyo3 = \"=0.29.3\""));
    assert!(manifest.contains("gemm = { version = \"=0.19.0\", default-features = false"));
    // Nothing points back into the tree the backend was built in.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .display()
        .to_string();
    for f in &files {
        assert!(
            !f.contents.contains(&workspace),
            "{} names the workspace",
            f.path.display()
        );
        assert!(
            f.path.is_relative() && !f.path.starts_with(".."),
            "{}",
            f.path.display()
        );
    }
}

#[test]
fn the_runtime_is_carried_and_declared() {
    let files =
        emit_crate(&fixture(), &CrateOptions::new("surface", "emit_fixture.py")).expect("emits");
    let lib = file(&files, "src/lib.rs");
    assert!(lib.contains("pub mod rextio_ir;\npub mod rextio_runtime;\n"));
    let runtime = file(&files, "src/rextio_runtime/mod.rs");
    assert!(
        runtime.contains("pub mod boundary;"),
        "runtime/src/lib.rs, carried"
    );
    let ops = file(&files, "src/rextio_runtime/ops.rs");
    assert!(ops.contains("use crate::rextio_ir::{\n"));
    assert!(ops.contains(
        "BagMode, BinaryOp, CompareOp, ExtremumOp, FillKind, JoinKind, ReduceKind, SoftmaxKind,\n    ToScalarKind, ViewKind, WholeReduceOp,"
    ));
    assert!(ops.contains("use crate::rextio_runtime::error::{Result, RuntimeError};"));
    let ir = file(&files, "src/rextio_ir/mod.rs");
    assert!(ir.contains("pub use types::*;"));
    // The runtime gates its boundary on feature `python`; the crate declares it, on.
    assert!(file(&files, "Cargo.toml").contains("default = [\"python\"]\npython = []"));
}

#[test]
fn one_command_builds_a_package_named_after_the_module() {
    let functions = fixture();
    let files =
        emit_crate(&functions, &CrateOptions::new("surface", "emit_fixture.py")).expect("emits");
    let pyproject = file(&files, "pyproject.toml");
    for line in [
        "name = \"surface\"",
        "module-name = \"surface._native\"",
        "python-source = \"python\"",
        "auditwheel = \"skip\"",
    ] {
        assert!(pyproject.contains(line), "{line}\n{pyproject}");
    }
    let readme = file(&files, "README.md");
    assert!(
        readme.contains("```sh\nLIBTORCH_USE_PYTORCH=1 pip install --no-build-isolation .\n```")
    );
    let init = file(&files, "python/surface/__init__.py");
    assert!(init.contains("import torch as _torch"));
    let lib = file(&files, "src/lib.rs");
    assert!(lib.contains("#[pymodule]\n#[pyo3(name = \"_native\")]\nfn rxt_module("));
    for f in &functions {
        assert!(
            init.contains(&format!("\"{}\"", f.name)),
            "{} in __all__",
            f.name
        );
        assert!(
            lib.contains(&format!("wrap_pyfunction!(rxt_py_{}, m)", f.name)),
            "{} registered",
            f.name
        );
        assert!(readme.contains(&format!("`surface.{}`", f.name)));
    }
    assert!(functions.len() >= 30, "the fixture covers the surface");
}

#[test]
fn generated_code_leaves_nothing_to_warn_about() {
    let lib = emit_lib_rs(&fixture(), "surface", "emit_fixture.py").expect("emits");
    assert!(!lib.contains("allow("), "no lint is silenced");
    // Parameters the body does not read are `_`-prefixed in the pure-Rust function only.
    assert!(lib.contains(
        "pub fn scalar_params_native(x: &Tensor, w: &Tensor, _depth: i64, _training: bool)"
    ));
    assert!(
        lib.contains("pub fn returns_int_native(_x: &Tensor, n: i64) -> Result<i64, RuntimeError>")
    );
    assert!(lib.contains("pub fn with_labels_native(_labels: &Tensor, x: &Tensor)"));
    // Imports are exactly what is used: every tensor op goes through the executor's `exec`.
    let plain = fixture()
        .into_iter()
        .find(|f| f.name == "unary_methods")
        .expect("in the fixture");
    let plain_lib = emit_lib_rs(&[plain], "m", "f.py").expect("emits");
    assert!(plain_lib.contains("use rextio_ir::{BinaryOp, DType, Device, TensorType, UnaryOp};"));
    assert!(plain_lib.contains("use rextio_runtime::{boundary, exec, RuntimeError, Value};"));
    let scalar =
        parse_function("fn flag(%b: bool) -> bool {\n  %0: bool = param 0\n  return %0\n}\n")
            .expect("parses");
    let scalar_lib = emit_lib_rs(&[scalar], "m", "f.py").expect("emits");
    assert!(!scalar_lib.contains("use tch::Tensor;"));
    assert!(!scalar_lib.contains("use rextio_ir"));
    assert!(scalar_lib.contains("use rextio_runtime::{boundary, RuntimeError, Value};"));
}

#[test]
fn values_nothing_reads_are_still_computed_under_an_underscore_name() {
    let f = parse_function(
        "fn f(%x: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: tensor<f32, cpu, 2> = exp %0\n  %2: tensor<f32, cpu, 2> = relu %0\n  return %2\n}\n",
    )
    .expect("parses");
    let lib = emit_lib_rs(&[f], "m", "f.py").expect("emits");
    assert!(
        lib.contains("    let _v1: Tensor = exec::unary(UnaryOp::Exp, x)?;\n"),
        "{lib}"
    );
    assert!(
        lib.contains("    let v2: Tensor = exec::unary(UnaryOp::Relu, x)?;\n"),
        "{lib}"
    );
}

#[test]
fn module_names_that_cannot_work_are_refused() {
    let functions = fixture();
    for (name, expected) in [
        ("1abc", "not a valid Python module name"),
        ("my-model", "not a valid Python module name"),
        ("", "not a valid Python module name"),
        ("class", "Python keyword"),
        ("torch", "hide the Python package"),
        ("tch", "depends on a crate of that name"),
        ("la_arena", "depends on a crate of that name"),
        ("rextio_runtime", "depends on a crate of that name"),
    ] {
        let err = emit_crate(&functions, &CrateOptions::new(name, "f.py"))
            .expect_err(name)
            .to_string();
        assert!(err.contains(expected), "{name}: {err}");
    }
    assert!(emit_crate(&functions, &CrateOptions::new("_Model2", "f.py")).is_ok());
}

#[test]
fn two_functions_of_one_name_are_an_error() {
    let f = fixture().remove(0);
    let err = emit_lib_rs(&[f.clone(), f], "m", "f.py").expect_err("duplicate");
    assert!(matches!(err, EmitError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("two functions have this name"));
}
