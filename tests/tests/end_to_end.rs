//! Source -> frontend -> passes -> (executor | backend), on the repository's examples.
//!
//! - Snapshots: the Phase A IR before and after fusion, the Rust the backend emits for it and
//!   for every surface form (`tests/python/emit_fixture.py`), and the generated files around
//!   it (manifest, pyproject, package, README; the carried runtime is the runtime's own text).
//! - Differential: every compiled function run by the executor on its unoptimized and its
//!   optimized IR gives the same values (the guard on each rewrite rule), within
//!   |a - b| <= 1e-5 * max(1, |b|), NaN/Inf classes equal. This compares the optimizer with
//!   our own executor only; the oracle is eager PyTorch, in the Python tests
//!   (`tests/python/test_corpus_eager.py` for the control-flow corpus, `test_difffuzz.py` for
//!   random programs, `test_parity.py` and `test_control_flow.py` for these files' functions).
//!   Runs where both sides raise must raise the same error but are not counted as compared.

use rextio_backend::{emit_crate, emit_lib_rs, CrateOptions};
use rextio_driver::{compile_function, compile_module, Surface};
use rextio_ir::print::print_function;
use rextio_runtime::Program;
use rextio_tests::{compare_runs, source};

#[test]
fn phase_a_ir_before_and_after_fusion() {
    let (name, text) = source("examples/phase_a.py");
    let compiled =
        compile_function(&name, &text, "inference", Surface::Extended).expect("phase A compiles");
    insta::assert_snapshot!("phase_a_parsed", print_function(&compiled.parsed));
    insta::assert_snapshot!("phase_a_optimized", print_function(&compiled.optimized));
    let stages: Vec<&str> = compiled.stages.iter().map(|(s, _)| *s).collect();
    assert_eq!(stages, ["parsed", "fused", "dce", "optimized"]);
}

#[test]
fn phase_a_emitted_rust() {
    let (name, text) = source("examples/phase_a.py");
    let compiled =
        compile_function(&name, &text, "inference", Surface::Extended).expect("phase A compiles");
    let lib = emit_lib_rs(&[compiled.optimized], "phase_a", &name).expect("emits");
    insta::assert_snapshot!("phase_a_lib_rs", lib);
}

#[test]
fn phase_a_emitted_project() {
    let (name, text) = source("examples/phase_a.py");
    let compiled =
        compile_function(&name, &text, "inference", Surface::Extended).expect("phase A compiles");
    let files =
        emit_crate(&[compiled.optimized], &CrateOptions::new("phase_a", &name)).expect("emits");
    let mut generated = String::new();
    // The carried runtime and lock are copies of the workspace's (backend tests check them).
    for file in files.iter().filter(|f| {
        !f.path.starts_with("src/rextio_runtime")
            && !f.path.starts_with("src/rextio_ir")
            && f.path.as_os_str() != "Cargo.lock"
    }) {
        if file.path.as_os_str() != "src/lib.rs" {
            generated.push_str(&format!(
                "==> {} <==\n{}\n",
                file.path.display(),
                file.contents
            ));
        }
    }
    insta::assert_snapshot!("phase_a_project", generated);
}

#[test]
fn surface_emitted_rust() {
    let (name, text) = source("tests/python/emit_fixture.py");
    let (_, compiled) = compile_module(&name, &text, Surface::Extended);
    let functions: Vec<_> = compiled
        .into_iter()
        .map(|c| c.expect("every function of the fixture compiles").optimized)
        .collect();
    let lib = emit_lib_rs(&functions, "surface", &name).expect("emits");
    insta::assert_snapshot!("surface_lib_rs", lib);
}

#[test]
fn optimized_and_unoptimized_ir_agree_in_the_executor() {
    // Runs where both programs returned values; both raising the same error is not counted.
    let mut compared = 0;
    for file in [
        "examples/phase_a.py",
        "tests/python/surface_fixture.py",
        "tests/python/control_flow_fixture.py",
    ] {
        let (name, text) = source(file);
        let (_, compiled) = compile_module(&name, &text, Surface::Extended);
        for function in compiled {
            let function = function.expect("every function of these files compiles");
            let unoptimized =
                Program::compile(&function.parsed).expect("executor accepts parsed IR");
            let optimized =
                Program::compile(&function.optimized).expect("executor accepts optimized IR");
            // Shapes by convention: weights (`w*`) are [features, features], other rank-2
            // values [rows, features], rank-1 values [features]. Square cases (rows ==
            // features) let every matmul of the files run; the others must fail alike.
            let mut ran = 0;
            for (seed, rows) in [(1i64, 5i64), (2, 300), (3, 1), (4, 8)] {
                let what = format!("{file}:{} seed {seed}", function.name);
                if compare_runs(
                    &unoptimized,
                    &optimized,
                    &function.parsed,
                    seed,
                    rows,
                    &what,
                ) {
                    ran += 1;
                    compared += 1;
                }
            }
            assert!(ran > 0, "{}: no shape ran", function.name);
        }
    }
    assert!(
        compared >= 60,
        "only {compared} runs returned values on both sides"
    );
}
