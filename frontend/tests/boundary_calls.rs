//! Calls to the module's functions that stay on Python (docs/reference-control-flow.md
//! section 8): the host's codes, words, severities and places, and the `boundary_call` a
//! marked function lowers them to.

use rextio_frontend::claim::Surface;
use rextio_frontend::{analyze_with, Status};
use rextio_ir::Severity;

const HEADER: &str =
    "from rextio_torch.types import TensorF32Cpu2D\nimport rextio\nimport torch\n\n";

/// `(code, severity, message, 1-based line)` of one diagnostic.
type Found = (String, Severity, String, u32);

fn f_of(body: &str) -> (Status, Vec<Found>, Option<String>) {
    let source = format!("{HEADER}{body}");
    let analysis = analyze_with("kernels.py", &source, Surface::Reference);
    let f = analysis.function("f").expect("f");
    let diagnostics = f
        .diagnostics
        .iter()
        .map(|d| {
            let start = d.primary.as_ref().map_or(0, |l| l.span.start);
            let line = source[..start as usize].matches('\n').count() as u32 + 1;
            (d.code.clone(), d.severity, d.message.clone(), line)
        })
        .collect();
    let ir = f.ir.as_ref().map(rextio_ir::print_function);
    (f.status, diagnostics, ir)
}

const EXEMPT: &str = "@rextio.exempt\ndef inc(n: int) -> int:\n    return n + 1\n\n";

#[test]
fn a_marked_caller_lowers_an_exempt_scalar_call_to_a_boundary_call() {
    let (status, diagnostics, ir) = f_of(&format!(
        "{EXEMPT}@rextio.native\ndef f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    k = inc(n)\n    h = x.relu()\n    for i in range(k):\n        h = h.tanh()\n    return h\n"
    ));
    assert_eq!(status, Status::Native);
    assert_eq!(
        diagnostics,
        vec![(
            "RXT075".to_string(),
            Severity::Note,
            "native function performs a scalar boundary call to the Python fallback: kernels.inc"
                .to_string(),
            11
        )]
    );
    let ir = ir.expect("IR");
    assert!(
        ir.contains(": int = boundary_call %") && ir.contains(", callee=inc, ret=int"),
        "{ir}"
    );
}

#[test]
fn fallback_only_and_rejected_helpers_are_boundary_calls_too() {
    for helper in [
        "def half(n: int) -> int:\n    return n // 2\n\n",
        "def half(n: int) -> int:\n    return int(n)\n\n",
    ] {
        let (status, diagnostics, ir) = f_of(&format!(
            "{helper}@rextio.native\ndef f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    h = x.relu()\n    for i in range(half(n)):\n        h = h.tanh()\n    return h\n"
        ));
        assert_eq!(status, Status::Native, "{diagnostics:?}");
        assert_eq!(diagnostics[0].0, "RXT075");
        assert!(ir.expect("IR").contains("callee=half, ret=int"));
    }
}

#[test]
fn unmarked_callers_and_loops_stay_on_python_with_the_hosts_codes() {
    let cases = [
        // (helper, marked, body, code)
        (EXEMPT, false, "    k = inc(n)\n    return x.relu()\n", "RXT070"),
        // The call-graph rules apply in modules that use the host's markers (elsewhere an
        // unmarked helper call stays the plain RXT030 it always was).
        (
            "def half(n: int) -> int:\n    return int(n)\n\n@rextio.native\ndef g(n: int) -> int:\n    return n\n\n",
            false,
            "    k = half(n)\n    return x.relu()\n",
            "RXT072",
        ),
        (
            EXEMPT,
            true,
            "    h = x.relu()\n    i = 0\n    while i < n:\n        i = inc(i)\n        h = h.tanh()\n    return h\n",
            "RXT076",
        ),
        (
            EXEMPT,
            true,
            "    h = x.relu()\n    i = 0\n    while inc(i) < n:\n        i = i + 1\n    return h\n",
            "RXT076",
        ),
    ];
    for (helper, marked, body, code) in cases {
        let marker = if marked { "@rextio.native\n" } else { "" };
        let (status, diagnostics, _) = f_of(&format!(
            "{helper}{marker}def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n{body}"
        ));
        assert_eq!(status, Status::Fallback, "{code}: {diagnostics:?}");
        assert!(
            diagnostics
                .iter()
                .any(|d| d.0 == code && d.1 == Severity::Error),
            "{code}: {diagnostics:?}"
        );
    }
}

#[test]
fn a_native_scalar_helper_is_not_a_boundary_call() {
    let (status, diagnostics, _) = f_of(
        "def inc(n: int) -> int:\n    return n + 1\n\n@rextio.native\ndef f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    k = inc(n)\n    return x.relu()\n",
    );
    assert_eq!(status, Status::Fallback);
    assert_eq!(diagnostics[0].0, "RXT030", "{diagnostics:?}");
}
