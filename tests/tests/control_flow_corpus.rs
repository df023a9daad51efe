//! Every program of the reference's control-flow corpus (`tests/conformance/control-flow.json`)
//! goes through the whole compiler: analysis never panics, and each function the analysis
//! calls native compiles through the passes (no internal error), into the executor (CPU
//! functions) and into emitted Rust. A stress test of the control-flow paths with programs
//! written by someone else.
//!
//! The oracle for what these programs compute is eager PyTorch:
//! `tests/python/test_corpus_eager.py` runs every native corpus program compiled against its
//! eager Python original (values, and exceptions only where eager raises). Here the optimized
//! and unoptimized IR are only compared with each other in our own executor, an extra check of
//! the optimizer: a run counts as compared only when both return values; both raising (the
//! same error, which is still required) is not agreement with anything.

use rextio_backend::emit_function;
use rextio_driver::{compile_function, CompileError, Surface};
use rextio_frontend::{analyze, Status};
use std::time::{Duration, Instant};

use rextio_runtime::{Program, RuntimeError};
use rextio_tests::{assert_same, conventional_args};

#[test]
fn every_native_corpus_program_compiles_end_to_end() {
    let path = rextio_tests::root().join("tests/conformance/control-flow.json");
    let text = std::fs::read_to_string(&path).expect("the corpus is in the repository");
    let corpus: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let header = corpus["module_header"].as_str().expect("header");
    let mut native = 0;
    let mut ran = 0;
    for case in corpus["cases"].as_array().expect("cases") {
        let field = |key: &str| case.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let source = if field("source").is_empty() {
            let body: String = field("prelude")
                .lines()
                .chain(field("body").lines())
                .map(|l| format!("    {l}\n"))
                .collect();
            let returns = if field("returns").is_empty() {
                String::new()
            } else {
                format!(" -> {}", field("returns"))
            };
            format!("{header}\n\ndef f({}){returns}:\n{body}", field("params"))
        } else {
            format!("{header}\n\n{}", field("source"))
        };
        let analysis = analyze("case.py", &source);
        for function in &analysis.functions {
            if function.status != Status::Native {
                continue;
            }
            let what = format!("{} / {}", field("id"), function.name);
            let compiled =
                match compile_function("case.py", &source, &function.name, Surface::Extended) {
                    Ok(compiled) => compiled,
                    Err(e @ CompileError::Internal { .. }) => panic!("{what}: {e}"),
                    Err(e) => panic!("{what}: native in the analysis but not compiled: {e}"),
                };
            // A scalar boundary call back into Python (RXT075) runs in the executor only;
            // every emitted route refuses it by name.
            let calls_back = compiled
                .optimized
                .exprs
                .values()
                .any(|e| matches!(e.kind, rextio_ir::ExprKind::BoundaryCall { .. }));
            match emit_function(&compiled.optimized, "case.py") {
                Ok(_) => assert!(!calls_back, "{what}: a boundary call was emitted"),
                Err(e) if calls_back => {
                    assert!(
                        e.to_string().contains("scalar boundary call"),
                        "{what}: {e}"
                    )
                }
                Err(e) => panic!("{what}: {e}"),
            }
            // The executor takes every CPU function (the cuda:0 slice is build-only), and
            // the unoptimized and optimized programs agree on conventional arguments.
            match (
                Program::compile(&compiled.parsed),
                Program::compile(&compiled.optimized),
            ) {
                (Ok(unoptimized), Ok(optimized)) => {
                    // A few programs loop 10**12 times on purpose: a run is stopped after a
                    // second through the interrupt check, on both sides alike.
                    for (seed, rows) in [(1i64, 8i64), (2, 3)] {
                        let run = |p: &Program| {
                            let deadline = Instant::now() + Duration::from_secs(1);
                            p.run_interruptible(
                                conventional_args(&compiled.parsed, seed, rows),
                                &mut || {
                                    if Instant::now() > deadline {
                                        Err(RuntimeError::Interrupted)
                                    } else {
                                        Ok(())
                                    }
                                },
                            )
                        };
                        match (run(&unoptimized), run(&optimized)) {
                            (Ok(a), Ok(b)) => {
                                assert_same(&b, &a, &what);
                                ran += 1;
                            }
                            // The same error on both sides, not counted as a compared run.
                            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
                            (a, b) => panic!("{what}: one side failed: {a:?} / {b:?}"),
                        }
                    }
                }
                (_, Err(e)) => assert!(
                    e.to_string().contains("cuda:0 slice is build-only"),
                    "{what}: {e}"
                ),
                (Err(e), Ok(_)) => panic!("{what}: only the optimized program compiles: {e}"),
            }
            native += 1;
        }
    }
    assert!(native >= 90, "only {native} native functions in the corpus");
    assert!(
        ran >= 90,
        "only {ran} differential runs returned values on both sides"
    );
}
