//! Dead-code elimination keeps exactly what the return reaches, in order, with side tables.

mod support;

use la_arena::{Idx, RawIdx};
use rextio_ir::{print_function, ExprId, Span, Stmt};
use rextio_passes::dce::eliminate_dead_code;
use rextio_passes::validate::validate;
use rextio_passes::{Dce, Pass};
use support::{normalized, parse, PHASE_A};

fn id(index: u32) -> ExprId {
    Idx::from_raw(RawIdx::from(index))
}

#[test]
fn removes_unreached_exprs_and_unused_param_reads() {
    let mut f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %unused: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %u: tensor<f32, cpu, 1> = param 1
  %dead: tensor<f32, cpu, 2> = exp %x  # dead
  %deader: tensor<f32, cpu, 2> = neg %dead
  %live: tensor<f32, cpu, 2> = relu %x  # hidden
  %also_dead: int = const.int 3
  return %live
}",
    );
    f.spans.insert(id(0), Span::new(0, 1));
    f.spans.insert(id(2), Span::new(2, 3));
    f.spans.insert(id(4), Span::new(4, 5));
    let out = Dce.run(f).expect("dce");
    assert_eq!(
        print_function(&out),
        normalized(
            "fn f(%x: tensor<f32, cpu, 2>, %unused: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %live: tensor<f32, cpu, 2> = relu %x  # hidden
  return %live
}"
        )
    );
    assert_eq!(out.span_of(id(0)), Some(Span::new(0, 1)));
    assert_eq!(out.span_of(id(1)), Some(Span::new(4, 5)));
    assert_eq!(out.name_of(id(1)), Some("hidden"));
    assert_eq!(out.spans.iter().count(), 2);
    assert_eq!(out.names.iter().count(), 1);
    validate(&out).expect("dce output validates");
}

#[test]
fn live_function_is_unchanged() {
    let f = parse(PHASE_A);
    let out = eliminate_dead_code(&f).expect("dce");
    assert_eq!(out, f);
}

#[test]
fn broken_input_is_reported_not_panicked_on() {
    let mut f = parse(PHASE_A);
    f.body.stmts = vec![Stmt::Return(id(99))];
    let errors = eliminate_dead_code(&f).expect_err("return of a missing value");
    assert_eq!(errors[0].code, "RXIR-001");
}

#[test]
fn control_flow_keeps_what_statements_read_and_drops_dead_lets_in_every_block() {
    let f = support::parse(
        "fn f(%x: tensor<f32, cpu, 2>, %n: int) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %n: int = param 1
  %zero: int = const.int 0
  %one: int = const.int 1
  %dead0: tensor<f32, cpu, 2> = exp %x
  for %i: int in range(%zero, %n, %one) carry(%h: tensor<f32, cpu, 2> = %x -> %out) {
    %dead1: tensor<f32, cpu, 2> = sqrt %h
    %c: bool = scalar.eq %i, %zero
    if %c -> (%r: tensor<f32, cpu, 2>) {
      %a: tensor<f32, cpu, 2> = relu %h
      %dead2: tensor<f32, cpu, 2> = abs %a
      yield %a
    } else {
      yield %h
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
}",
    );
    let out = rextio_passes::dce::eliminate_dead_code(&f).expect("dce");
    rextio_passes::validate::validate(&out).expect("still valid");
    let text = rextio_ir::print_function(&out);
    for dead in ["exp", "sqrt", "abs"] {
        assert!(!text.contains(dead), "{dead} survived:\n{text}");
    }
    for live in [
        "relu",
        "scalar.eq",
        "scalar.gt",
        "scalar.sub",
        "test %",
        "range(",
        "carry(",
        "continue",
        "yield",
        "return",
    ] {
        assert!(text.contains(live), "{live} was dropped:\n{text}");
    }
}

/// Python evaluates an assignment nobody reads: a dead value that can raise (a division, an
/// int `+ - *` or negation, a binary tensor op, a product, an argmax, an amax/amin over a dim
/// that may be empty, a layer_norm of a size other than the last dim's, an embedding of an
/// id out of range, a join of parts whose sizes may not fit) stays, with what it reads; one that cannot (float `+`, comparisons,
/// elementwise unary ops, sums, log_softmax) goes.
#[test]
fn dead_values_that_can_raise_stay() {
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %t: float, %n: int) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %t: float = param 2
  %n: int = param 3
  %zero: float = const.float 0.0
  %div: float = scalar.truediv %t, %zero
  %fadd: float = scalar.add %t, %zero
  %big: int = scalar.mul %n, %n
  %cmp: bool = scalar.gt %t, %zero
  %lin: tensor<f32, cpu, 2> = linear %x, %w
  %act: tensor<f32, cpu, 2> = tanh %x
  %sum: tensor<f32, cpu, 1> = sum %x, dim=1, keepdim=false
  %top: tensor<f32, cpu, 1> = amax %x, dim=1, keepdim=false
  %lsm: tensor<f32, cpu, 2> = log_softmax %x, dim=1
  %ln: tensor<f32, cpu, 2> = layer_norm %x, %n, eps=1e-5
  %ids: tensor<i64, cpu, 1> = argmax %x, dim=1, keepdim=false
  %emb: tensor<f32, cpu, 2> = embedding %ids, %w
  %cat: tensor<f32, cpu, 2> = cat %x, %w, %x, dim=1
  %live: tensor<f32, cpu, 2> = relu %x
  return %live
}",
    );
    let out = Dce.run(f).expect("dce");
    assert_eq!(
        print_function(&out),
        normalized(
            "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %t: float, %n: int) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %t: float = param 2
  %n: int = param 3
  %zero: float = const.float 0.0
  %div: float = scalar.truediv %t, %zero
  %big: int = scalar.mul %n, %n
  %lin: tensor<f32, cpu, 2> = linear %x, %w
  %top: tensor<f32, cpu, 1> = amax %x, dim=1, keepdim=false
  %ln: tensor<f32, cpu, 2> = layer_norm %x, %n, eps=1e-5
  %ids: tensor<i64, cpu, 1> = argmax %x, dim=1, keepdim=false
  %emb: tensor<f32, cpu, 2> = embedding %ids, %w
  %cat: tensor<f32, cpu, 2> = cat %x, %w, %x, dim=1
  %live: tensor<f32, cpu, 2> = relu %x
  return %live
}"
        )
    );
}
