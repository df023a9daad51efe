//! Validation: one test per diagnostic code, plus collecting several errors at once.

mod support;

use la_arena::{Idx, RawIdx};
use rextio_ir::{
    Diagnostic, ExprId, ExprKind, Function, Param, Span, Stmt, TensorType, Type, UnaryOp,
};
use rextio_passes::validate::validate;
use support::{parse, PHASE_A};

const F32_2D: Type = Type::Tensor(TensorType::F32_CPU_2D);

fn errors(f: &Function) -> Vec<Diagnostic> {
    match validate(f) {
        Ok(_) => panic!("expected validation errors"),
        Err(errors) => errors,
    }
}

fn codes(f: &Function) -> Vec<String> {
    errors(f).into_iter().map(|d| d.code).collect()
}

fn id(index: u32) -> ExprId {
    Idx::from_raw(RawIdx::from(index))
}

/// Phase A text with one line replaced.
fn phase_a_with(from: &str, to: &str) -> Function {
    assert!(PHASE_A.contains(from), "{from} not in Phase A");
    parse(&PHASE_A.replace(from, to))
}

#[test]
fn phase_a_is_valid() {
    let f = parse(PHASE_A);
    let valid = validate(&f).expect("Phase A validates");
    assert_eq!(valid.function().name, "inference");
    assert_eq!(valid.exprs.len(), 6);
}

#[test]
fn rxir_001_operand_defined_after_use() {
    let mut f = Function::new(
        "f",
        vec![Param {
            name: "x".into(),
            ty: F32_2D,
        }],
        F32_2D,
    );
    let relu = f.push_let(
        ExprKind::Unary {
            op: UnaryOp::Relu,
            input: id(1),
        },
        F32_2D,
    );
    f.push_let(ExprKind::Param(0), F32_2D);
    f.body.stmts.push(Stmt::Return(relu));
    let errors = errors(&f);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, "RXIR-001");
    assert_eq!(
        errors[0].message,
        "%0 (relu) uses %1, which is defined after it"
    );
}

#[test]
fn rxir_001_operand_and_return_outside_the_arena() {
    let mut f = Function::new(
        "f",
        vec![Param {
            name: "x".into(),
            ty: F32_2D,
        }],
        F32_2D,
    );
    f.push_let(ExprKind::Param(0), F32_2D);
    f.push_let(
        ExprKind::Unary {
            op: UnaryOp::Tanh,
            input: id(7),
        },
        F32_2D,
    );
    f.body.stmts.push(Stmt::Return(id(9)));
    let errors = errors(&f);
    assert_eq!(codes(&f), ["RXIR-001", "RXIR-001"]);
    assert_eq!(errors[0].message, "%1 (tanh) uses %7, which does not exist");
    assert_eq!(errors[1].message, "a return uses %9, which does not exist");
}

#[test]
fn rxir_002_declared_type_differs_from_derived() {
    let mut f = phase_a_with(
        "%3: tensor<f32, cpu, 2> = linear",
        "%3: tensor<f32, cpu, 1> = linear",
    );
    f.spans.insert(id(3), Span::new(10, 20));
    let errors = errors(&f);
    // %4 (relu) derives rank 1 from the wrong %3 and declares rank 2: a second, local error.
    assert_eq!(
        errors.iter().map(|d| d.code.as_str()).collect::<Vec<_>>(),
        ["RXIR-002", "RXIR-002"]
    );
    assert_eq!(
        errors[0].message,
        "%3 (linear) has type tensor<f32, cpu, 1>, expected tensor<f32, cpu, 2>"
    );
    let primary = errors[0].primary.as_ref().expect("span of %3");
    assert_eq!(primary.span, Span::new(10, 20));
    assert_eq!(
        primary.message,
        "expected tensor<f32, cpu, 2>, found tensor<f32, cpu, 1>"
    );
    assert!(errors[1]
        .message
        .starts_with("%4 (relu) has type tensor<f32, cpu, 2>, expected tensor<f32, cpu, 1>"));
    assert!(errors[1].primary.is_none(), "%4 has no span");
}

#[test]
fn rxir_002_ill_typed_op() {
    // linear's input must be rank 2.
    let f = phase_a_with("linear %0, %1, %2", "linear %2, %1, %2");
    let errors = errors(&f);
    assert_eq!(errors[0].code, "RXIR-002");
    assert_eq!(
        errors[0].message,
        "%3 (linear) is ill-typed: linear needs rank-2 input and weight, got ranks 1 and 2"
    );
}

/// Invariant 10: a join has parts of one rank and device, and a dim in range (its typing
/// rule), reported as RXIR-002 (RXIR-004 for devices, as any op).
#[test]
fn rxir_002_malformed_joins() {
    let sig = "fn f(%a: tensor<f32, cpu, 2>, %v: tensor<f32, cpu, 1>, %g: tensor<f32, cuda0, 2>) -> tensor<f32, cpu, 2> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cpu, 1> = param 1
  %2: tensor<f32, cuda0, 2> = param 2
";
    let with = |line: &str| {
        parse(&format!(
            "{sig}  %3: tensor<f32, cpu, 2> = {line}\n  return %3\n}}\n"
        ))
    };
    for good in [
        "cat %0, %0, %0, dim=1",
        "cat %0, dim=0",
        "stack %1, %1, dim=1",
    ] {
        assert!(validate(&with(good)).is_ok(), "{good}");
    }
    for (bad, code, words) in [
        (
            "cat %0, %1, dim=0",
            "RXIR-002",
            "cat mixes ranks: part 0 is rank 2, part 1 is rank 1",
        ),
        (
            "cat %0, %0, dim=2",
            "RXIR-002",
            "cat dim 2 is out of range for rank 2",
        ),
        (
            // A stack of matrices is rank 3, not the rank 2 declared.
            "stack %0, %0, dim=0",
            "RXIR-002",
            "has type tensor<f32, cpu, 2>, expected tensor<f32, cpu, 3>",
        ),
        (
            "stack %1, %1, dim=2",
            "RXIR-002",
            "stack dim 2 is out of range",
        ),
        (
            "cat %1, %1, dim=0",
            "RXIR-002",
            "has type tensor<f32, cpu, 2>, expected tensor<f32, cpu, 1>",
        ),
        (
            "cat %0, %2, dim=0",
            "RXIR-004",
            "%3 (cat) mixes devices: %0 on cpu, %2 on cuda0",
        ),
    ] {
        let errors = errors(&with(bad));
        assert_eq!(errors.len(), 1, "{bad}: {errors:#?}");
        assert_eq!(errors[0].code, code, "{bad}");
        assert!(
            errors[0].message.contains(words),
            "{bad}: {}",
            errors[0].message
        );
    }
    // No parts (the text format cannot write it; a pass could build it).
    let mut f = with("cat %0, dim=0");
    let last = f.exprs.iter().last().map(|(id, _)| id).expect("an expr");
    f.exprs[last].kind = ExprKind::Join {
        kind: rextio_ir::JoinKind::Cat,
        parts: vec![],
        dim: 0,
    };
    let errors = errors(&f);
    assert_eq!(errors[0].code, "RXIR-002");
    assert!(
        errors[0].message.contains("cat of no tensors"),
        "{}",
        errors[0].message
    );
}

#[test]
fn rxir_003_bad_param_index() {
    let f = phase_a_with(
        "%2: tensor<f32, cpu, 1> = param 2",
        "%2: tensor<f32, cpu, 1> = param 5",
    );
    let errors = errors(&f);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, "RXIR-003");
    assert_eq!(
        errors[0].message,
        "%2 (param) reads parameter 5, but `inference` has 3 parameters"
    );
}

#[test]
fn rxir_004_device_mix() {
    let mut f = parse(
        &PHASE_A
            .replace(
                "%weight: tensor<f32, cpu, 2>",
                "%weight: tensor<f32, cuda0, 2>",
            )
            .replace(
                "%1: tensor<f32, cpu, 2> = param 1",
                "%1: tensor<f32, cuda0, 2> = param 1",
            ),
    );
    f.spans.insert(id(1), Span::new(0, 6));
    f.spans.insert(id(3), Span::new(8, 30));
    let errors = errors(&f);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let d = &errors[0];
    assert_eq!(d.code, "RXIR-004");
    assert_eq!(
        d.message,
        "%3 (linear) mixes devices: %0 on cpu, %1 on cuda0, %2 on cpu"
    );
    assert_eq!(d.primary.as_ref().map(|l| l.span), Some(Span::new(8, 30)));
    assert_eq!(d.secondary.len(), 1);
    assert_eq!(d.secondary[0].message, "on cuda0");
}

#[test]
fn rxir_005_missing_return() {
    let mut f = parse(PHASE_A);
    f.body.stmts.pop();
    assert_eq!(codes(&f), ["RXIR-005"]);
}

#[test]
fn rxir_013_statement_after_return() {
    let mut f = parse(PHASE_A);
    f.body.stmts.push(Stmt::Return(id(5)));
    let errors = errors(&f);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, "RXIR-013");
    assert_eq!(
        errors[0].message,
        "the function body has a statement after a terminator"
    );
}

#[test]
fn rxir_006_return_type_mismatch() {
    let f = phase_a_with("return %5", "return %4");
    let errors = errors(&f);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, "RXIR-006");
    assert_eq!(
        errors[0].message,
        "function `inference` returns %4 (relu) of type tensor<f32, cpu, 2>, expected tensor<f32, cpu, 1>"
    );
}

#[test]
fn rxir_007_side_tables_name_unknown_exprs() {
    let mut f = parse(PHASE_A);
    f.names.insert(id(40), "ghost".to_string());
    f.spans.insert(id(6), Span::new(0, 1));
    let errors = errors(&f);
    assert_eq!(codes(&f), ["RXIR-007", "RXIR-007"]);
    assert!(errors[0].message.contains("span table"));
    assert!(errors[1].message.contains("`ghost`"));
}

#[test]
fn rxir_008_malformed_fused_op() {
    let f = phase_a_with(
        "%5: tensor<f32, cpu, 1> = mean %4, dim=1, keepdim=false",
        "%5: tensor<f32, cpu, 1> = fused_linear %0, %1, %2, activations=[relu], tail=sum(dim=0, keepdim=false)",
    );
    let errors = errors(&f);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, "RXIR-008");
    assert!(errors[0]
        .message
        .starts_with("%5 (fused_linear) fuses sum(dim=0)"));
}

#[test]
fn rxir_008_position_dependent_activation_in_a_fused_op() {
    let f = phase_a_with(
        "%5: tensor<f32, cpu, 1> = mean %4, dim=1, keepdim=false",
        "%5: tensor<f32, cpu, 1> = fused_linear %0, %1, %2, activations=[relu, gelu_tanh], tail=mean(dim=1, keepdim=false)",
    );
    let errors = errors(&f);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, "RXIR-008");
    assert!(
        errors[0]
            .message
            .starts_with("%5 (fused_linear) fuses `gelu_tanh`, whose result depends"),
        "{}",
        errors[0].message
    );
}

#[test]
fn rxir_009_unsupported_signature_types() {
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 4>) -> tensor<f32, cpu, 5> {
  %0: tensor<f32, cpu, 4> = param 0
  return %0
}",
    );
    // The return mismatch (rank 4 vs rank 5) is reported too. (Ranks 0 and 3 are the
    // extended surface's `TensorF32Cpu0D` and `TensorF32Cpu3D`.)
    assert_eq!(codes(&f), ["RXIR-009", "RXIR-009", "RXIR-006"]);
}

#[test]
fn every_error_is_reported_at_once() {
    let f = parse(
        "fn broken(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cuda0, 2>) -> tensor<f32, cpu, 1> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cuda0, 2> = param 1
  %p: tensor<f32, cpu, 1> = param 7
  %a: tensor<f32, cpu, 2> = linear %x, %w
  %b: tensor<f32, cpu, 1> = relu %x
  %c: tensor<f32, cpu, 2> = fused_linear %x, %x, activations=[], tail=mean(dim=0, keepdim=true)
  return %c
}",
    );
    let errors = errors(&f);
    let codes: Vec<&str> = errors.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(
        codes,
        ["RXIR-003", "RXIR-004", "RXIR-002", "RXIR-008", "RXIR-006"],
        "{errors:#?}"
    );
    let messages: Vec<String> = errors
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    insta::assert_snapshot!(messages.join("\n"));
}

/// A valid function with every statement kind (loop-carried tensor, `if` results, `while`).
const LOOPS: &str = "\
fn f(%x: tensor<f32, cpu, 2>, %n: int) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %n: int = param 1
  %zero: int = const.int 0
  %one: int = const.int 1
  for %i: int in range(%zero, %n, %one) carry(%h: tensor<f32, cpu, 2> = %x -> %out) {
    %odd: int = scalar.mod %i, %one
    %c: bool = scalar.eq %odd, %zero
    if %c -> (%r: tensor<f32, cpu, 2>) {
      %a: tensor<f32, cpu, 2> = relu %h
      yield %a
    } else {
      %b: tensor<f32, cpu, 2> = tanh %h
      yield %b
    }
    continue %r
  }
  while carry(%k: int = %n -> %k_out) {
    %more: bool = scalar.gt %k, %zero
    test %more
  } do {
    %next: int = scalar.sub %k, %one
    continue %next
  }
  return %out
}";

fn loops_with(from: &str, to: &str) -> Function {
    assert!(LOOPS.contains(from), "{from} not in LOOPS");
    parse(&LOOPS.replace(from, to))
}

#[test]
fn control_flow_is_valid() {
    validate(&parse(LOOPS)).expect("LOOPS validates");
}

#[test]
fn rxir_011_placement() {
    // An expression no `let` places, and one placed twice.
    let mut f = parse(LOOPS);
    let unplaced = f.push(ExprKind::ConstInt(3), Type::Int);
    f.body.stmts.insert(2, Stmt::Let(id(2)));
    let errors = errors(&f);
    let codes: Vec<&str> = errors.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["RXIR-011", "RXIR-011"], "{errors:#?}");
    assert_eq!(errors[0].message, "%2 (const.int) is evaluated by 2 `let`s");
    assert_eq!(
        errors[1].message,
        format!(
            "%{} (const.int) is never evaluated: no `let` places it",
            u32::from(unplaced.into_raw())
        )
    );
    // A bound value that a `let` evaluates.
    let mut f = parse(LOOPS);
    f.body.stmts.insert(0, Stmt::Let(id(4)));
    assert!(codes_of(&f).contains(&"RXIR-011".to_string()));
}

fn codes_of(f: &Function) -> Vec<String> {
    codes(f)
}

#[test]
fn rxir_012_use_out_of_scope() {
    // The arm's value used after the `if`, the loop's body value after the loop.
    let f = loops_with("    continue %r\n", "    continue %a\n");
    let errors = errors(&f);
    assert_eq!(errors[0].code, "RXIR-012", "{errors:#?}");
    assert_eq!(
        errors[0].message,
        "a `continue` uses %10, which is not placed before it in an enclosing block"
    );
    let f = loops_with("  return %out\n", "  return %r\n");
    assert_eq!(codes(&f), ["RXIR-012"]);
    let f = loops_with("  return %out\n", "  return %next\n");
    assert_eq!(codes(&f), ["RXIR-012"]);
}

#[test]
fn rxir_013_misplaced_control_flow() {
    let cases = [
        (
            "    continue %r\n",
            "",
            "a `for` body does not end in a terminator",
        ),
        (
            "    continue %r\n",
            "    continue %r, %r\n",
            "a `continue` passes 2 values, expected 1",
        ),
        (
            "      yield %a\n",
            "      yield\n",
            "a `yield` passes 0 values, expected 1",
        ),
        (
            "      yield %a\n",
            "      %z: int = const.int 1\n",
            "an `if` then arm does not end in a terminator",
        ),
        (
            "    continue %next\n",
            "    yield %next\n",
            "`yield` outside an `if` arm (it ends only an arm of the innermost `if`)",
        ),
        (
            "  return %out\n",
            "  break\n  return %out\n",
            "`break` outside a loop",
        ),
        (
            "    test %more\n",
            "    return %x\n    test %more\n",
            "a `while` condition block cannot leave (no terminator in it)",
        ),
        (
            "    continue %r\n",
            "    continue %r\n    %z: int = const.int 1\n",
            "a `for` body has a statement after a terminator",
        ),
    ];
    for (from, to, message) in cases {
        let errors = errors(&loops_with(from, to));
        assert!(
            errors
                .iter()
                .any(|d| d.code == "RXIR-013" && d.message == message),
            "{from:?} -> {to:?}: {errors:#?}"
        );
    }
}

#[test]
fn rxir_014_statement_types() {
    let cases = [
        (
            "range(%zero, %n, %one)",
            "range(%zero, %x, %one)",
            "the range stop %0 has type tensor<f32, cpu, 2>, expected int",
        ),
        (
            "for %i: int in",
            "for %i: bool in",
            "a `for` index binds %4 of type bool, expected int",
        ),
        (
            "carry(%k: int = %n -> %k_out)",
            "carry(%k: int = %x -> %k_out)",
            "a `while` carries %12 of type int but starts it from %0 of type tensor<f32, cpu, 2>",
        ),
        (
            "    continue %r\n",
            "    continue %i\n",
            "a `continue` %4 has type int, expected tensor<f32, cpu, 2>",
        ),
        (
            "    if %c ->",
            "    if %i ->",
            "the `if` condition %4 has type int, expected bool",
        ),
        (
            "    test %more\n",
            "    test %k\n",
            "the `while` condition %12 has type int, expected bool",
        ),
        (
            "      yield %b\n",
            "      yield %odd\n",
            "a `yield` %7 has type int, expected tensor<f32, cpu, 2>",
        ),
    ];
    for (from, to, message) in cases {
        let errors = errors(&loops_with(from, to));
        assert!(
            errors
                .iter()
                .any(|d| d.code == "RXIR-014" && d.message == message),
            "{from:?} -> {to:?}: {errors:#?}"
        );
    }
}

#[test]
fn both_arms_returning_ends_the_function() {
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %c: bool) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %c: bool = param 1
  if %c {
    %a: tensor<f32, cpu, 2> = relu %x
    return %a
  } else {
    return %x
  }
}",
    );
    validate(&f).expect("every path returns");
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %c: bool) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %c: bool = param 1
  if %c {
    return %x
  } else {
    yield
  }
}",
    );
    assert_eq!(codes(&f), ["RXIR-005"]);
}

/// `layer_norm` and `embedding` are typed by their operands: wrong ranks, dtypes and a lone
/// weight are `RXIR-002`, a well-typed use is valid.
#[test]
fn rxir_002_layer_norm_and_embedding_operands() {
    const LAYERS: &str = "\
fn layers(%x: tensor<f32, cpu, 2>, %g: tensor<f32, cpu, 1>, %ids: tensor<i64, cpu, 1>, %n: int) -> tensor<f32, cpu, 2> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cpu, 1> = param 1
  %2: tensor<i64, cpu, 1> = param 2
  %3: int = param 3
  %4: tensor<f32, cpu, 2> = layer_norm %0, %3, %1, %1, eps=1e-5
  %5: tensor<f32, cpu, 2> = embedding %2, %4
  %6: tensor<f32, cpu, 2> = embedding_bag %2, %5, %2, mode=mean
  return %6
}
";
    assert!(validate(&parse(LAYERS)).is_ok());
    let cases = [
        (
            "layer_norm %0, %3, %1, %1,",
            "layer_norm %0, %3, %0, %1,",
            "%4 (layer_norm) is ill-typed: layer_norm weight must be rank 1, got rank 2",
        ),
        (
            "%4: tensor<f32, cpu, 2> = layer_norm %0, %3, %1, %1,",
            "%4: tensor<f32, cpu, 2> = layer_norm %2, %3, %1, %1,",
            "%4 (layer_norm) is ill-typed: layer_norm input must be a float rank-1/2/3 tensor, got tensor<i64, cpu, 1>",
        ),
        (
            "layer_norm %0, %3, %1, %1,",
            "layer_norm %0, %1, %1, %1,",
            "%4 (layer_norm) is ill-typed: layer_norm's normalized size must be an int, got tensor<f32, cpu, 1>",
        ),
        (
            "embedding %2, %4",
            "embedding %0, %4",
            "%5 (embedding) is ill-typed: embedding ids must be an int64 rank-1 tensor, got tensor<f32, cpu, 2>",
        ),
        (
            "embedding %2, %4",
            "embedding %2, %1",
            "%5 (embedding) is ill-typed: embedding weight must be a float32 rank-2 tensor, got tensor<f32, cpu, 1>",
        ),
        (
            "embedding_bag %2, %5, %2,",
            "embedding_bag %0, %5, %2,",
            "%6 (embedding_bag) is ill-typed: embedding_bag ids must be an int64 rank-1 tensor, got tensor<f32, cpu, 2>",
        ),
        (
            "embedding_bag %2, %5, %2,",
            "embedding_bag %2, %5, %1,",
            "%6 (embedding_bag) is ill-typed: embedding_bag offsets must be an int64 rank-1 tensor, got tensor<f32, cpu, 1>",
        ),
        (
            "embedding_bag %2, %5, %2,",
            "embedding_bag %2, %1, %2,",
            "%6 (embedding_bag) is ill-typed: embedding_bag weight must be a float32 rank-2 tensor, got tensor<f32, cpu, 1>",
        ),
    ];
    for (from, to, message) in cases {
        assert!(LAYERS.contains(from), "{from}");
        let errors = errors(&parse(&LAYERS.replace(from, to)));
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert_eq!(errors[0].code, "RXIR-002");
        assert_eq!(errors[0].message, message);
    }
    // A result type other than the input's is the declared-type mismatch.
    let f = parse(&LAYERS.replace(
        "%4: tensor<f32, cpu, 2> = layer_norm",
        "%4: tensor<f32, cpu, 1> = layer_norm",
    ));
    assert!(codes(&f).contains(&"RXIR-002".to_string()));
}

/// An op with scalar parameters is typed by its rule (`typing::param_unary`): int or float
/// parameters, never a bool or a tensor.
#[test]
fn rxir_002_ill_typed_param_unary() {
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %t: float, %b: bool) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %t: float = param 1
  %b: bool = param 2
  %ok: tensor<f32, cpu, 2> = clamp %x, %t, %t
  %bad: tensor<f32, cpu, 2> = leaky_relu %ok, %b
  %worse: tensor<f32, cpu, 2> = clamp_min %bad, %x
  return %worse
}",
    );
    let errors = errors(&f);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors.iter().all(|e| e.code == "RXIR-002"), "{errors:#?}");
    assert!(
        errors[0]
            .message
            .contains("leaky_relu takes int or float parameters"),
        "{}",
        errors[0].message
    );
}

/// Invariant 13: a boundary call is well typed (scalars in, the declared scalar out) and is
/// never placed in a loop body or a `while` condition (RXIR-011).
#[test]
fn rxir_011_and_002_boundary_calls() {
    let outside = "\
fn f(%n: int) -> int {
  %n: int = param 0
  %k: int = boundary_call %n, callee=inc, ret=int
  return %k
}";
    assert!(validate(&parse(outside)).is_ok());
    // A callback without arguments (`def observe() -> bool`) is one too.
    let no_arguments = "\
fn f() -> bool {
  %k: bool = boundary_call callee=observe, ret=bool
  return %k
}";
    let parsed = parse(no_arguments);
    assert!(validate(&parsed).is_ok());
    assert!(rextio_ir::print::print_function(&parsed)
        .contains("= boundary_call callee=observe, ret=bool"));
    let in_loop = "\
fn f(%n: int) -> int {
  %n: int = param 0
  %zero: int = const.int 0
  %one: int = const.int 1
  for %i: int in range(%zero, %n, %one) carry(%acc: int = %zero -> %total) {
    %k: int = boundary_call %i, callee=inc, ret=int
    continue %k
  }
  return %total
}";
    assert_eq!(codes(&parse(in_loop)), vec!["RXIR-011".to_string()]);
    let mistyped = "\
fn f(%n: int) -> float {
  %n: int = param 0
  %k: float = boundary_call %n, callee=inc, ret=int
  return %k
}";
    assert!(codes(&parse(mistyped)).contains(&"RXIR-002".to_string()));
}

/// float64 and bfloat16 (the extended surface's dtype lane): the ops ATen computes at any
/// float dtype are well typed at one dtype; mixing dtypes in one op, a float32-only op and a
/// fused op (whose kernels are float32 ones) at another dtype are ill-typed.
#[test]
fn rxir_002_float64_and_bfloat16_operands() {
    const F64: &str = "\
fn f(%x: tensor<f64, cpu, 2>, %w: tensor<f64, cpu, 2>, %b: tensor<f64, cpu, 1>, %y: tensor<f32, cpu, 2>) -> tensor<f64, cpu, 2> {
  %0: tensor<f64, cpu, 2> = param 0
  %1: tensor<f64, cpu, 2> = param 1
  %2: tensor<f64, cpu, 1> = param 2
  %3: tensor<f32, cpu, 2> = param 3
  %4: tensor<f64, cpu, 2> = linear %0, %1, %2
  %5: tensor<f64, cpu, 2> = add %4, %0
  return %5
}
";
    assert!(validate(&parse(F64)).is_ok());
    assert!(validate(&parse(&F64.replace("f64", "bf16"))).is_ok());
    let cases = [
        (
            "add %4, %0",
            "add %4, %3",
            "%5 (add) is ill-typed: add mixes dtypes f64 and f32",
        ),
        (
            "%5: tensor<f64, cpu, 2> = add %4, %0",
            "%5: tensor<f64, cpu, 2> = cat %4, %0, dim=0",
            "%5 (cat) is ill-typed: cat part 0 must be a float32 rank-0/1/2/3 tensor, got tensor<f64, cpu, 2>",
        ),
        (
            "%4: tensor<f64, cpu, 2> = linear %0, %1, %2",
            "%4: tensor<f64, cpu, 2> = fused_linear %0, %1, %2, activations=[relu], tail=none",
            "%4 (fused_linear) is ill-typed: linear input must be a float32 rank-1/2/3 tensor, got tensor<f64, cpu, 2>",
        ),
    ];
    for (from, to, message) in cases {
        let errors = errors(&parse(&F64.replace(from, to)));
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert_eq!(errors[0].code, "RXIR-002");
        assert_eq!(errors[0].message, message);
    }
}
