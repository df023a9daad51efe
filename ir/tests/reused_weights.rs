//! `ReusedWeights`: which `linear`s read a parameter as their weight inside a loop (the fact
//! that picks the transposed-weight kernels in the executor and in generated code alike).

mod support;

use rextio_ir::{parse_function, ExprId, Function, ReusedWeights};
use support::{every_op, CONTROL_FLOW_TEXT};

fn parse(text: &str) -> Function {
    parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The expressions the analysis marks, by index.
fn marked(f: &Function) -> Vec<usize> {
    let reused = ReusedWeights::of(f);
    f.exprs
        .iter()
        .map(|(id, _)| id)
        .filter(|id| reused.contains(*id))
        .map(|id| u32::from(id.into_raw()) as usize)
        .collect()
}

const LOOPS: &str = "\
fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %n: int) -> tensor<f32, cpu, 2> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cpu, 2> = param 1
  %2: int = param 2
  %3: int = const.int 0
  %4: int = const.int 1
  %5: tensor<f32, cpu, 2> = linear %0, %1
  for %6: int in range(%3, %2, %4) carry(%7: tensor<f32, cpu, 2> = %5 -> %8) {
    %9: tensor<f32, cpu, 2> = linear %7, %1
    %10: tensor<f32, cpu, 2> = relu %1
    %11: tensor<f32, cpu, 2> = linear %9, %10
    %12: bool = scalar.lt %6, %4
    if %12 -> (%13: tensor<f32, cpu, 2>) {
      %14: tensor<f32, cpu, 2> = fused_linear %11, %1, activations=[relu], tail=none
      yield %14
    } else {
      yield %11
    }
    continue %13
  }
  while carry(%15: tensor<f32, cpu, 2> = %8 -> %16) {
    %17: tensor<f32, cpu, 2> = linear %15, %1
    %18: bool = const.bool false
    test %18
  } do {
    continue %17
  }
  %19: tensor<f32, cpu, 2> = fused_linear %16, %1, activations=[], tail=none
  return %19
}
";

#[test]
fn a_parameter_weight_inside_a_loop_is_reused() {
    // In a `for` body (%9), in an `if` arm inside it (%14) and in a `while` condition (%17);
    // not before or after the loops (%5, %19), nor a weight computed in the loop (%11).
    assert_eq!(marked(&parse(LOOPS)), vec![9, 14, 17]);
}

#[test]
fn straight_line_code_reuses_nothing() {
    assert_eq!(marked(&every_op()), Vec::<usize>::new());
}

#[test]
fn both_arms_of_an_if_in_a_loop_count() {
    assert_eq!(marked(&parse(CONTROL_FLOW_TEXT)), vec![19, 21]);
}

#[test]
fn ids_from_elsewhere_are_not_reused() {
    let reused = ReusedWeights::of(&parse(LOOPS));
    let far = ExprId::from_raw(la_arena::RawIdx::from(1000u32));
    assert!(!reused.contains(far));
}
