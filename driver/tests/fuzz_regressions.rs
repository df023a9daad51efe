//! Bugs the cargo-fuzz targets found (docs/reliability.md, "Coverage-guided fuzzing"), each as
//! the Python or IR text of its minimized reproducer. The raw fuzzer inputs are in
//! `fuzz/corpus/<target>/crash-*`, which `fuzz_corpus.rs` runs too.

use rextio_driver::{compile_module, CompileError};
use rextio_frontend::Status;

const HEADER: &str = "from rextio_torch.types import TensorF32Cpu2D\n\n";

/// Compiles the module; no function may end in an internal compiler error.
fn compile_all(body: &str) -> rextio_frontend::Analysis {
    let source = format!("{HEADER}{body}");
    let (analysis, compiled) = compile_module("case.py", &source, rextio_driver::Surface::Extended);
    for result in compiled {
        if let Err(CompileError::Internal { name, rendered }) = result {
            panic!("internal compiler error in `{name}`:\n{rendered}");
        }
    }
    analysis
}

/// `mutated_programs` crash-b53ce40b: the literal `-9223372036854775808` (minus 2**63, one past
/// the largest i64 when negated) evaluated to an int with neither a value nor a diagnostic, so
/// the `if` it stood in vanished and the IR failed validation (RXIR-011 "never evaluated").
/// Like a positive literal out of range it now keeps the function on Python, with the
/// literal's diagnostic.
#[test]
fn negated_literal_outside_i64_falls_back() {
    for body in [
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    if n % -9223372036854775808 == 0:\n        return x.relu()\n    return x.tanh()\n",
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    if n == --9223372036854775808:\n        return x.relu()\n    return x.tanh()\n",
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    k = n - -99999999999999999999\n    for i in range(k):\n        x = x.relu()\n    return x.tanh()\n",
    ] {
        let analysis = compile_all(body);
        let f = analysis.function("f").expect("f");
        assert_ne!(f.status, Status::Native, "{body}");
        assert!(
            f.diagnostics.iter().any(|d| d
                .message
                .contains("integer literal is outside the supported i64 range")),
            "{body}: {:?}",
            f.diagnostics
        );
    }
}

/// The negated literals that fit still compile: -9223372036854775807 is the smallest.
#[test]
fn negated_literal_inside_i64_compiles() {
    let analysis = compile_all(
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    if n % -9223372036854775807 == -1:\n        return x.relu()\n    return x.tanh()\n",
    );
    assert_eq!(analysis.function("f").expect("f").status, Status::Native);
}
