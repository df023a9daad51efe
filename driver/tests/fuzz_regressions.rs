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

/// Compiles `body` and checks that `f` stays off the native route with a diagnostic whose
/// message contains `needle`.
fn assert_falls_back_with(body: &str, needle: &str) {
    let analysis = compile_all(body);
    let f = analysis.function("f").expect("f");
    assert_ne!(f.status, Status::Native, "{body}");
    assert!(
        f.diagnostics.iter().any(|d| d.message.contains(needle)),
        "{body}: {:?}",
        f.diagnostics
    );
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
        assert_falls_back_with(body, "integer literal is outside the supported i64 range");
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

/// `mutated_programs` crash-79bcbfc1 (program 61, edits `k = TensorF32Cpu2D` and
/// `range = h.tanh()` in the loop body): two defects.
///
/// Python makes a name assigned anywhere in a function local in all of it, so `range(k)`
/// there reads an unbound local (`UnboundLocalError`), yet the walker resolved it as the
/// builtin and compiled the loop: a native function where Python raises. Names the body binds
/// are now never resolved as imports, builtins or globals (`frontend/src/sites/locals.rs`).
#[test]
fn a_name_assigned_in_the_function_is_local_throughout() {
    let header = "import torch.nn.functional as F\nfrom torch.nn.functional import relu\n\n";
    for body in [
        "def f(x: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:\n    h = x.relu()\n    for i in range(k):\n        range = h.tanh()\n    return h\n",
        "def f(x: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:\n    h = x.relu()\n    for i in range(k):\n        h = h.tanh()\n    range = 3\n    return h\n",
        "def f(x: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:\n    h = relu(x)\n    if k > 0:\n        relu = 3\n    return h\n",
    ] {
        assert_falls_back_with(&format!("{header}{body}"), "UnboundLocalError");
    }
    // Python's own answer for the first form.
    let analysis = compile_all(&format!(
        "{header}def f(x: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:\n    for i in range(k):\n        x = x.tanh()\n    return relu(x)\n"
    ));
    assert_eq!(analysis.function("f").expect("f").status, Status::Native);
}

/// The same crash's other half: `range(k)` with `k` a module global (a marker class) has no
/// type and was refused without a finding, so the `for` vanished from a function that stayed
/// native (RXIR-011, "bound by no statement"). It is now a finding: the function stays on
/// Python, where `range` raises TypeError.
#[test]
fn range_of_an_untyped_global_falls_back() {
    assert_falls_back_with(
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    k = TensorF32Cpu2D\n    h = x.relu()\n    for i in range(k):\n        h = h.tanh()\n    return h\n",
        "range arguments must be int, got a value of unknown type",
    );
}
