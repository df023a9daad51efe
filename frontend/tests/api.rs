//! The public API on small modules: import spellings, candidate selection, host rules,
//! literals, the JSON shape, and robustness on malformed input.

use rextio_frontend::{analyze, analyze_with, Analysis, SiteOutcome, Status, Surface};
use rextio_ir::{ExprKind, Severity, Type};

const HEADER: &str =
    "from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D\n";

fn run(body: &str) -> Analysis {
    analyze("t.py", &format!("{HEADER}{body}"))
}

fn targets(analysis: &Analysis, name: &str) -> Vec<(String, SiteOutcome)> {
    let f = analysis.function(name).expect("function");
    f.sites
        .iter()
        .map(|s| (s.target.clone(), s.outcome))
        .collect()
}

#[test]
fn import_spellings_resolve_to_dotted_targets() {
    let source = "\
import torch.nn as nn
from torch.nn import functional as Fn
import rextio_torch.types as t
from torch import relu as r

def a(x: t.TensorF32Cpu2D, w: t.TensorF32Cpu2D, b: t.TensorF32Cpu1D) -> t.TensorF32Cpu2D:
    return nn.functional.linear(x, w, b)

def b(x: t.TensorF32Cpu2D, w: t.TensorF32Cpu2D, b: t.TensorF32Cpu1D) -> t.TensorF32Cpu2D:
    return Fn.linear(x, w, b)

def c(x: 't.TensorF32Cpu2D') -> 't.TensorF32Cpu2D':
    return r(x)
";
    let analysis = analyze("imports.py", source);
    for name in ["a", "b"] {
        let f = analysis.function(name).expect("function");
        assert_eq!(
            f.status,
            Status::Native,
            "{}",
            analysis.render_diagnostics()
        );
        assert_eq!(f.sites[0].target, "torch.nn.functional.linear");
    }
    let c = analysis.function("c").expect("c");
    assert_eq!(
        c.status,
        Status::Native,
        "{}",
        analysis.render_diagnostics()
    );
    assert_eq!(c.sites[0].target, "torch.relu");
}

#[test]
fn functions_without_annotated_parameters_are_not_candidates() {
    let analysis = run("def g(n, m):\n    return len(n) + 1\n");
    let g = analysis.function("g").expect("g");
    assert_eq!(g.status, Status::NotCandidate);
    assert!(g.sites.is_empty() && g.diagnostics.is_empty() && g.ir.is_none());
    assert!(!analysis.has_errors());
}

#[test]
fn scalar_only_functions_are_analysed_as_the_host_does() {
    // The host compiles functions whose parameters and result are plain int/float/bool.
    let analysis = run(
        "def g(n: int, m: int) -> int:\n    k = 0\n    for i in range(n):\n        k = k + m\n    return k\n\n\ndef h(n: int) -> int:\n    return len(n) + 1\n",
    );
    let g = analysis.function("g").expect("g");
    assert_eq!(
        g.status,
        Status::Native,
        "{}",
        analysis.render_diagnostics()
    );
    let h = analysis.function("h").expect("h");
    assert_eq!(h.status, Status::NotCandidate);
    assert_eq!(
        h.diagnostics[0].message,
        "len() requires a sized type (list/set/dict/str/bytes), got int"
    );
}

#[test]
fn scalar_arithmetic_is_lowered_by_the_host_not_offered() {
    // Core lowers int arithmetic itself: no plugin site, and the function is native.
    let analysis =
        run("def f(x: TensorF32Cpu2D, n: int) -> int:\n    y = x.relu()\n    return n + 1\n");
    assert_eq!(
        targets(&analysis, "f"),
        vec![("x.relu".to_string(), SiteOutcome::Claimed)]
    );
    let f = analysis.function("f").expect("f");
    assert_eq!(
        f.status,
        Status::Native,
        "{}",
        analysis.render_diagnostics()
    );
    let ir = rextio_ir::print_function(f.ir.as_ref().expect("ir"));
    assert!(ir.contains("scalar.add"), "{ir}");
}

#[test]
fn builtins_on_a_tensor_are_blocked_by_the_host() {
    // Core checks the builtins it lowers itself (reference: `for_range_len_tensor`,
    // `abs_builtin_tensor` in tests/conformance/control-flow.json).
    for (call, message) in [
        ("len(x)", "len() requires a sized type (list/set/dict/str/bytes), got rextio-torch/tensor-f32-cpu-2d"),
        ("abs(x)", "abs requires int or float, got rextio-torch/tensor-f32-cpu-2d"),
    ] {
        let analysis = run(&format!("def f(x: TensorF32Cpu2D) -> int:\n    return {call}\n"));
        let f = analysis.function("f").expect("f");
        assert_eq!(f.status, Status::NotCandidate, "{call}");
        assert!(f.sites.is_empty(), "{call}: nothing is offered");
        assert!(f.diagnostics.iter().any(|d| d.message == message), "{call}: {:?}", f.diagnostics);
    }
}

#[test]
fn int_params_and_constant_returns_lower() {
    let analysis = run(
        "def f(x: TensorF32Cpu2D, n: int, flag: bool) -> int:\n    h = x.relu()\n    return 7\n",
    );
    let f = analysis.function("f").expect("f");
    assert_eq!(
        f.status,
        Status::Native,
        "{}",
        analysis.render_diagnostics()
    );
    let ir = f.ir.as_ref().expect("ir");
    assert_eq!(ir.params[1].ty, Type::Int);
    assert_eq!(ir.params[2].ty, Type::Bool);
    assert_eq!(ir.ret, Type::Int);
    let ret = ir.returns().into_iter().next().expect("return");
    assert_eq!(ir.exprs[ret].kind, ExprKind::ConstInt(7));
    let relu = ir
        .exprs
        .iter()
        .find(|(_, e)| matches!(e.kind, ExprKind::Unary { .. }))
        .map(|(id, _)| id);
    assert_eq!(relu.and_then(|id| ir.name_of(id)), Some("h"));
    assert_eq!(analysis.to_module().functions.len(), 1);
}

#[test]
fn negative_int_literals_are_folded() {
    // x.sum(-1): a literal dim -1 (not a non-literal). The reference surface rejects it by
    // value; the extended one claims it as dim 1 of the rank-2 input.
    let source =
        format!("{HEADER}def f(x: TensorF32Cpu2D) -> TensorF32Cpu1D:\n    return x.sum(-1)\n");
    let analysis = analyze_with("t.py", &source, Surface::Reference);
    assert_eq!(analysis.surface, Surface::Reference);
    let f = analysis.function("f").expect("f");
    assert_eq!(f.sites[0].outcome, SiteOutcome::Rejected);
    assert!(
        f.sites[0]
            .message
            .as_deref()
            .unwrap_or("")
            .contains("got dim=-1"),
        "{:?}",
        f.sites[0]
    );
    let analysis = analyze("t.py", &source);
    assert_eq!(analysis.surface, Surface::Extended);
    let f = analysis.function("f").expect("f");
    assert_eq!(f.status, Status::Native, "{:?}", f.sites);
    assert_eq!(analysis.to_json()["surface"], "extended");
    // -3 is folded too, and out of range for rank 2.
    let analysis = run("def f(x: TensorF32Cpu2D) -> TensorF32Cpu1D:\n    return x.sum(-3)\n");
    let site = &analysis.function("f").expect("f").sites[0];
    assert_eq!(site.outcome, SiteOutcome::Rejected);
    assert!(
        site.message
            .as_deref()
            .unwrap_or("")
            .contains("sum dim=-3 is out of range for a rank-2 input (expected a dim in [-2, 1])"),
        "{site:?}"
    );
}

#[test]
fn calling_another_plugin_function_is_rxt092() {
    let analysis = run(
        "def g(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.relu()\n\n\
         def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return g(x)\n",
    );
    let f = analysis.function("f").expect("f");
    assert_eq!(f.sites[0].code.as_deref(), Some("RXT092"));
    assert_eq!(f.status, Status::Fallback);
}

#[test]
fn exempt_functions_stay_on_python() {
    let analysis = analyze(
        "t.py",
        &format!("import rextio\n{HEADER}@rextio.exempt\ndef f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.relu()\n"),
    );
    assert_eq!(
        analysis.function("f").expect("f").status,
        Status::NotCandidate
    );
}

#[test]
fn not_offered_functions_keep_only_warnings() {
    let analysis = run("def f(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu1D:\n    y = x.transpose(0, 1)\n    return x.mean(dim=d)\n");
    let f = analysis.function("f").expect("f");
    assert_eq!(f.status, Status::NotCandidate);
    assert!(f.sites.iter().any(|s| s.outcome == SiteOutcome::NotOffered));
    assert!(f
        .diagnostics
        .iter()
        .all(|d| d.severity == Severity::Warning));
    assert!(!analysis.has_errors());
}

#[test]
fn poisoned_values_do_not_cascade() {
    let analysis = run("def f(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:\n    y = x.cumsum(dim=1)\n    z = y + b\n    return z.relu()\n");
    let f = analysis.function("f").expect("f");
    assert_eq!(f.sites.len(), 3);
    assert_eq!(f.diagnostics.len(), 1, "{}", analysis.render_diagnostics());
}

#[test]
fn json_shape_is_stable() {
    let analysis = run("def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.relu()\n");
    let json = analysis.to_json();
    assert_eq!(json["file"], "t.py");
    assert!(json.get("diagnostics").is_none());
    let f = &json["functions"][0];
    assert_eq!(f["status"], "native");
    assert!(f.get("diagnostics").is_none());
    let site = &f["sites"][0];
    for key in [
        "line",
        "column",
        "kind",
        "target",
        "outcome",
        "rule_id",
        "result_type",
        "code",
        "message",
    ] {
        assert!(site.get(key).is_some(), "missing {key}");
    }
    assert_eq!(site["line"], 3);
    assert_eq!(site["column"], 14);
    assert_eq!(site["kind"], "call");
    assert_eq!(site["result_type"], "TensorF32Cpu2D");
}

#[test]
fn malformed_and_odd_sources_never_panic() {
    let sources = [
        "",
        "def",
        "def f(:\n",
        "x = (((((",
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n\treturn x.relu(\n",
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.relu() if x else x\n",
        "def f(x: TensorF32Cpu2D, *a, k=1, **kw) -> TensorF32Cpu2D:\n    return x[0].relu()\n",
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    a, b = x, x\n    return (-x).relu().foo()(1)\n",
        "def f(x: TensorF32Cpu2D) -> None:\n    return None\n",
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.sum(99999999999999999999999)\n",
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x < 1 < 2\n",
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    pass\n",
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.relu()\n    x = 1\n",
        "async def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return await x\n",
        "def f(ünï: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return ünï.relu(ünï) # ✓\n",
    ];
    for source in sources {
        let analysis = run(source);
        let _ = analysis.render_diagnostics();
        let _ = analysis.to_json();
        for f in &analysis.functions {
            assert_eq!(f.ir.is_some(), f.status == Status::Native, "{source}");
        }
    }
    let broken = analyze("b.py", "def f(:\n");
    assert_eq!(broken.diagnostics[0].code, "RXPY-001");
    assert!(broken.functions.is_empty() && broken.has_errors());
}
