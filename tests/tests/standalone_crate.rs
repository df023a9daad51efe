//! The standalone crate (`emit --standalone`), file by file, without building it
//! (tests/python/test_standalone.py builds it and runs its example): no Python in it, a
//! checked Rust function per compiled function over the unchecked one, an example binary
//! that can run each, and an rpath to libtorch for the binaries.

use std::path::Path;

use rextio_backend::{emit_crate, emit_standalone_crate, CrateOptions, EmitError, EmittedFile};
use rextio_ir::{parse_function, Function};

use rextio_tests::{emit_fixture as fixture, emitted as file};

fn standalone() -> Vec<EmittedFile> {
    emit_standalone_crate(&fixture(), &CrateOptions::new("surface", "emit_fixture.py"))
        .expect("emits")
}

#[test]
fn there_is_no_python_in_it() {
    let files = standalone();
    let manifest = file(&files, "Cargo.toml");
    let dependencies = manifest
        .split("[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("a dependency table");
    let names: Vec<&str> = dependencies
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split(' ').next().expect("a name"))
        .collect();
    assert_eq!(
        names,
        ["gemm", "la-arena", "serde", "tch", "thiserror", "torch-sys"],
        "{dependencies}"
    );
    assert!(
        manifest.contains("\ntch = \"=0.26.0\"\n"),
        "no python-extension: {manifest}"
    );
    assert!(manifest.contains("\ntorch-sys = \"=0.26.0\"\n"));
    for line in dependencies.lines().filter(|l| l.contains('=')) {
        assert!(line.contains("\"="), "exact pin: {line}");
    }
    assert!(!manifest.contains("pyo3") && !manifest.contains("cdylib"));
    // Only the carried boundary names pyo3, under a feature this crate does not have.
    for f in &files {
        let boundary = f.path.ends_with("rextio_runtime/boundary.rs");
        assert!(
            boundary || !f.contents.contains("pyo3"),
            "{} names pyo3",
            f.path.display()
        );
    }
    assert!(file(&files, "src/rextio_runtime/mod.rs")
        .contains("#[cfg(feature = \"python\")]\npub mod boundary;"));
    assert!(manifest.contains("check-cfg = ['cfg(feature, values(\"python\"))']"));
    assert!(!manifest.contains("[features]"));
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    assert!(
        !paths
            .iter()
            .any(|p| p.ends_with(".py") || p == "pyproject.toml"),
        "{paths:?}"
    );
}

#[test]
fn each_function_is_checked_then_runs_unchecked() {
    let files = standalone();
    let lib = file(&files, "src/lib.rs");
    let unchecked = file(&files, "src/unchecked.rs");
    assert!(lib.contains("pub mod rextio_ir;\npub mod rextio_runtime;\npub mod unchecked;\n"));
    assert!(lib.contains("pub use rextio_runtime::RuntimeError as Error;"));
    assert!(lib.contains(
        "pub fn inference(x: &::tch::Tensor, weight: &::tch::Tensor, bias: &::tch::Tensor) -> ::std::result::Result<::tch::Tensor, Error> {\n\
         \x20   crate::rextio_runtime::checks::check_tensor_argument(x, crate::rextio_ir::TensorType { dtype: crate::rextio_ir::DType::F32, device: crate::rextio_ir::Device::Cpu, rank: 2 }, \"x\")?;\n"
    ), "{lib}");
    assert!(lib.contains("    crate::unchecked::inference_native(x, weight, bias)\n}\n"));
    // Scalars are typed: nothing to check. Results keep their Rust type.
    assert!(lib.contains(
        "pub fn returns_int(x: &::tch::Tensor, n: i64) -> ::std::result::Result<i64, Error> {"
    ));
    assert!(lib.contains("pub fn float_loop(x: &::tch::Tensor, f: f64, n: i64) -> ::std::result::Result<f64, Error> {"));
    assert!(
        lib.contains("crate::rextio_ir::Device::Cuda0, rank: 2 }, \"x\")?;"),
        "the cuda:0 slice checks its device"
    );
    assert!(lib.contains("dtype: crate::rextio_ir::DType::I64, device: crate::rextio_ir::Device::Cpu, rank: 1 }, \"labels\")?;"));
    for f in fixture() {
        let checks = lib
            .split(&format!("\npub fn {}(", f.name))
            .nth(1)
            .and_then(|rest| rest.split("\n}\n").next())
            .unwrap_or_else(|| panic!("{} at the root", f.name));
        let tensors = f
            .params
            .iter()
            .filter(|p| matches!(p.ty, rextio_ir::Type::Tensor(_)))
            .count();
        assert_eq!(
            checks.matches("check_tensor_argument(").count(),
            tensors,
            "{}",
            f.name
        );
        assert!(
            unchecked.contains(&format!("pub fn {}_native(", f.name)),
            "{} unchecked",
            f.name
        );
    }
    // The unchecked module imports from the crate's modules, and only what it uses.
    assert!(
        unchecked.contains("use crate::rextio_runtime::{control, exec, scalar, RuntimeError};"),
        "{unchecked}"
    );
    assert!(!unchecked.contains("boundary") && !unchecked.contains("Value"));
    assert!(
        !unchecked.contains("TensorType"),
        "the checks live at the root"
    );
    assert!(
        !lib.contains("allow(") && !unchecked.contains("allow("),
        "no lint is silenced"
    );
}

#[test]
fn the_unchecked_code_is_the_extension_s_code() {
    // The same runtime calls as the Python crate's `<name>_native`, line for line.
    let functions = fixture();
    let python =
        emit_crate(&functions, &CrateOptions::new("surface", "emit_fixture.py")).expect("emits");
    let python_lib = file(&python, "src/lib.rs");
    let files = standalone();
    let unchecked = file(&files, "src/unchecked.rs");
    for f in &functions {
        let body = |text: &str| {
            text.split(&format!("pub fn {}_native(", f.name))
                .nth(1)
                .and_then(|rest| rest.split("\n}\n").next())
                .unwrap_or_else(|| panic!("{}", f.name))
                .to_string()
        };
        assert_eq!(body(python_lib), body(unchecked), "{}", f.name);
    }
}

#[test]
fn the_example_runs_every_function_on_saved_inputs() {
    let files = standalone();
    let example = file(&files, "examples/run.rs");
    assert!(example.contains("Tensor::loadz_multi(path)"));
    assert!(example.contains("Tensor::write_npz(&[(\"output\", &saved)], path)"));
    assert!(example.contains(
        "\"inference\" => Output::Tensor(surface::inference(inputs.tensor(\"x\")?, inputs.tensor(\"weight\")?, inputs.tensor(\"bias\")?).map_err(failed)?),"
    ), "{example}");
    assert!(example.contains(
        "\"scalar_params\" => Output::Tensor(surface::scalar_params(inputs.tensor(\"x\")?, inputs.tensor(\"w\")?, inputs.int(\"depth\")?, inputs.boolean(\"training\")?).map_err(failed)?),"
    ));
    assert!(example.contains("\"float_loop\" => Output::Float(surface::float_loop(inputs.tensor(\"x\")?, inputs.float(\"f\")?, inputs.int(\"n\")?).map_err(failed)?),"));
    assert!(example.contains("\"returns_bool\" => Output::Bool("));
    for f in fixture() {
        assert!(
            example.contains(&format!("    {:?} => Output::", f.name)),
            "{}",
            f.name
        );
    }
    assert!(!example.contains("allow("));
}

#[test]
fn binaries_find_libtorch_and_the_readme_says_how_to_build_and_run() {
    let files = standalone();
    let build = file(&files, "build.rs");
    assert!(build.contains("std::env::var(\"DEP_TCH_LIBTORCH_LIB\")"));
    assert!(build.contains("cargo:rustc-link-arg=-Wl,-rpath,{dir}"));
    let readme = file(&files, "README.md");
    for needle in [
        "```sh\nLIBTORCH_USE_PYTORCH=1 cargo build --release\n```",
        "```sh\nLIBTORCH_USE_PYTORCH=1 cargo run --release --example run -- inference inputs.pt out.npz\n```",
        "torch.save({\"x\": ..., \"weight\": ..., \"bias\": ...}, \"inputs.pt\")",
        "- `surface::inference(x: &Tensor, weight: &Tensor, bias: &Tensor) -> Result<Tensor, Error>`",
        "- `surface::returns_bool(flag: bool, x: &Tensor) -> Result<bool, Error>`",
        "LD_LIBRARY_PATH",
        "docs/parity.md",
    ] {
        assert!(readme.contains(needle), "{needle}\n{readme}");
    }
    // Nothing points back into the tree the backend was built in.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .display()
        .to_string();
    for f in &files {
        assert!(!f.contents.contains(&workspace), "{}", f.path.display());
    }
}

#[test]
fn names_the_root_already_uses_are_refused() {
    for name in ["unchecked", "Error", "rextio_ir", "rextio_runtime"] {
        let f = parse_function(&format!(
            "fn {name}(%x: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {{\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: tensor<f32, cpu, 2> = relu %0\n  return %1\n}}\n"
        ))
        .expect("parses");
        let err =
            emit_standalone_crate(&[f], &CrateOptions::new("m", "f.py")).expect_err("refused");
        assert!(
            matches!(&err, EmitError::Invalid { function, .. } if function == name),
            "{err}"
        );
    }
    let err =
        emit_standalone_crate(&fixture(), &CrateOptions::new("tch", "f.py")).expect_err("refused");
    assert!(matches!(err, EmitError::ReservedModuleName(..)), "{err}");
}

#[test]
fn the_example_has_only_the_readers_its_functions_use() {
    // A module of tensor functions only: no scalar readers, no scalar outputs, no `Kind`
    // import, so `cargo run --example` builds without dead-code warnings (a new user saw
    // two on every build before).
    let tensors_only: Vec<Function> = fixture()
        .into_iter()
        .filter(|f| {
            matches!(f.ret, rextio_ir::Type::Tensor(_))
                && f.params
                    .iter()
                    .all(|p| matches!(p.ty, rextio_ir::Type::Tensor(_)))
        })
        .collect();
    assert!(!tensors_only.is_empty());
    let files = emit_standalone_crate(
        &tensors_only,
        &CrateOptions::new("surface", "emit_fixture.py"),
    )
    .expect("emits");
    let example = file(&files, "examples/run.rs");
    for absent in [
        "fn scalar(",
        "fn int(",
        "fn boolean(",
        "fn float(",
        "Int(i64)",
        "Output::Float",
        "Kind",
    ] {
        assert!(!example.contains(absent), "{absent}\n{example}");
    }
    assert!(example.contains("use tch::Tensor;"));
    // The full fixture has every kind, so it keeps every reader and output.
    let example = file(&standalone(), "examples/run.rs").to_string();
    for present in [
        "fn scalar(",
        "fn int(",
        "fn boolean(",
        "fn float(",
        "Int(i64)",
        "Bool(bool)",
        "Float(f64)",
        "Output::Bool(v) =>",
        "use tch::{Kind, Tensor};",
    ] {
        assert!(example.contains(present), "{present}");
    }
}
