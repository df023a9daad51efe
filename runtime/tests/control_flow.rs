//! The executor runs structured control flow: loops that run zero, one and many times,
//! `break`, `continue`, `while`, `if` results, early returns, literal value lists, carried
//! values that swap, Python's `range` and scalar semantics, and the interrupt check.

use rextio_ir::parse_function;
use rextio_runtime::{Program, RuntimeError, Value};
use tch::{Kind, Tensor};

fn program(text: &str) -> Program {
    let f = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    Program::compile(&f).expect("compiles")
}

fn int(v: Value) -> i64 {
    match v {
        Value::Int(i) => i,
        other => panic!("expected an int, got {other:?}"),
    }
}

fn tensor(v: Value) -> Tensor {
    match v {
        Value::Tensor(t) => t,
        other => panic!("expected a tensor, got {other:?}"),
    }
}

/// sum(i * k for i in range(start, stop, step) if i % 3 != 0), stopping (break) once the
/// sum passes `limit`: every kind of statement over scalars.
const SCALAR_LOOP: &str = "\
fn f(%start: int, %stop: int, %step: int, %k: int, %limit: int) -> int {
  %start: int = param 0
  %stop: int = param 1
  %step: int = param 2
  %k: int = param 3
  %limit: int = param 4
  %zero: int = const.int 0
  %three: int = const.int 3
  for %i: int in range(%start, %stop, %step) carry(%acc: int = %zero -> %total) {
    %r: int = scalar.mod %i, %three
    %skip: bool = scalar.eq %r, %zero
    if %skip {
      continue %acc
    } else {
      yield
    }
    %term: int = scalar.mul %i, %k
    %next: int = scalar.add %acc, %term
    %over: bool = scalar.gt %next, %limit
    if %over {
      break %next
    } else {
      yield
    }
    continue %next
  }
  return %total
}";

fn python_scalar_loop(start: i64, stop: i64, step: i64, k: i64, limit: i64) -> i64 {
    let mut acc = 0i64;
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        if i.rem_euclid(3) != 0 {
            acc += i * k;
            if acc > limit {
                break;
            }
        }
        i += step;
    }
    acc
}

#[test]
fn scalar_loops_follow_python() {
    let p = program(SCALAR_LOOP);
    for (start, stop, step, k, limit) in [
        (0, 10, 1, 2, 1000),
        (0, 0, 1, 2, 1000), // runs zero times
        (5, 6, 1, 2, 1000), // once
        (10, -10, -3, 1, 1000),
        (-7, 50, 4, -3, 1000),
        (0, 1000, 7, 5, 300), // breaks
        (3, 1, 1, 1, 10),     // empty with a positive step
    ] {
        let args = [start, stop, step, k, limit]
            .map(Value::Int)
            .into_iter()
            .collect();
        assert_eq!(
            int(p.run(args).expect("runs")),
            python_scalar_loop(start, stop, step, k, limit),
            "range({start}, {stop}, {step}) k={k} limit={limit}"
        );
    }
}

#[test]
fn a_zero_step_is_pythons_value_error() {
    let p = program(SCALAR_LOOP);
    let err = p
        .run([0, 10, 0, 1, 1].map(Value::Int).into_iter().collect())
        .expect_err("zero step");
    assert!(
        matches!(&err, RuntimeError::Value(m) if m == "range() arg 3 must not be zero"),
        "{err:?}"
    );
}

#[test]
fn huge_ranges_count_without_overflow() {
    // range(i64::MIN, i64::MAX, i64::MAX): indices MIN, -1, MAX-1.
    let p = program(SCALAR_LOOP);
    let result = p.run(
        [i64::MIN, i64::MAX, i64::MAX, 0, 1]
            .map(Value::Int)
            .into_iter()
            .collect(),
    );
    assert_eq!(int(result.expect("runs")), 0);
    // The multiplication overflows: an error, not a wrapped number.
    let err = p
        .run(
            [i64::MAX - 2, i64::MAX, 1, 3, i64::MAX]
                .map(Value::Int)
                .into_iter()
                .collect(),
        )
        .expect_err("overflow");
    assert!(matches!(err, RuntimeError::Overflow(_)), "{err:?}");
}

/// The seed's Phase B program.
const PHASE_B: &str = "\
fn inference(%x: tensor<f32, cpu, 2>, %wa: tensor<f32, cpu, 2>, %wb: tensor<f32, cpu, 2>, %ba: tensor<f32, cpu, 1>, %bb: tensor<f32, cpu, 1>, %depth: int, %phase: int) -> tensor<f32, cpu, 1> {
  %x: tensor<f32, cpu, 2> = param 0
  %wa: tensor<f32, cpu, 2> = param 1
  %wb: tensor<f32, cpu, 2> = param 2
  %ba: tensor<f32, cpu, 1> = param 3
  %bb: tensor<f32, cpu, 1> = param 4
  %depth: int = param 5
  %phase: int = param 6
  %zero: int = const.int 0
  %one: int = const.int 1
  %two: int = const.int 2
  for %layer: int in range(%zero, %depth, %one) carry(%hidden: tensor<f32, cpu, 2> = %x -> %out) {
    %s: int = scalar.add %layer, %phase
    %m: int = scalar.mod %s, %two
    %even: bool = scalar.eq %m, %zero
    if %even -> (%h: tensor<f32, cpu, 2>) {
      %a: tensor<f32, cpu, 2> = fused_linear %hidden, %wa, %ba, activations=[relu], tail=none
      yield %a
    } else {
      %b: tensor<f32, cpu, 2> = linear %hidden, %wb, %bb
      %c: tensor<f32, cpu, 2> = relu %b
      yield %c
    }
    continue %h
  }
  %mean: tensor<f32, cpu, 1> = mean %out, dim=1, keepdim=false
  return %mean
}";

fn eager_phase_b(
    x: &Tensor,
    wa: &Tensor,
    wb: &Tensor,
    ba: &Tensor,
    bb: &Tensor,
    depth: i64,
    phase: i64,
) -> Tensor {
    let mut hidden = x.shallow_clone();
    for layer in 0..depth {
        hidden = if (layer + phase).rem_euclid(2) == 0 {
            hidden.linear(wa, Some(ba)).relu()
        } else {
            hidden.linear(wb, Some(bb)).relu()
        };
    }
    hidden.mean_dim(1, false, Kind::Float)
}

#[test]
fn phase_b_matches_eager_for_every_depth() {
    tch::manual_seed(7);
    let p = program(PHASE_B);
    for (batch, width) in [(1, 16), (4, 32), (8, 64)] {
        let x = Tensor::randn([batch, width], (Kind::Float, tch::Device::Cpu));
        let wa = Tensor::randn([width, width], (Kind::Float, tch::Device::Cpu)) * 0.2;
        let wb = Tensor::randn([width, width], (Kind::Float, tch::Device::Cpu)) * 0.2;
        let ba = Tensor::randn([width], (Kind::Float, tch::Device::Cpu));
        let bb = Tensor::randn([width], (Kind::Float, tch::Device::Cpu));
        for depth in [0, 1, 2, 7, 16] {
            for phase in [0, 1, -3] {
                let args = vec![
                    Value::Tensor(x.shallow_clone()),
                    Value::Tensor(wa.shallow_clone()),
                    Value::Tensor(wb.shallow_clone()),
                    Value::Tensor(ba.shallow_clone()),
                    Value::Tensor(bb.shallow_clone()),
                    Value::Int(depth),
                    Value::Int(phase),
                ];
                let ours = tensor(p.run(args).expect("runs"));
                let eager = eager_phase_b(&x, &wa, &wb, &ba, &bb, depth, phase);
                let diff = (&ours - &eager).abs().max().double_value(&[]);
                let scale = eager.abs().max().double_value(&[]).max(1.0);
                assert!(
                    diff <= 1e-5 * scale,
                    "batch {batch} width {width} depth {depth} phase {phase}: {diff}"
                );
            }
        }
        // The input was never written.
        assert_eq!(x.size(), [batch, width]);
    }
}

#[test]
fn while_loops_swap_carried_values_and_return_early() {
    // Fibonacci with a swap in `continue`, and an early return when n is negative.
    let p = program(
        "fn fib(%n: int) -> int {
  %n: int = param 0
  %zero: int = const.int 0
  %one: int = const.int 1
  %minus: int = const.int -1
  %negative: bool = scalar.lt %n, %zero
  if %negative {
    return %minus
  } else {
    yield
  }
  while carry(%a: int = %zero -> %fa, %b: int = %one -> %fb, %k: int = %n -> %kk) {
    %more: bool = scalar.gt %k, %zero
    test %more
  } do {
    %sum: int = scalar.add %a, %b
    %left: int = scalar.sub %k, %one
    continue %b, %sum, %left
  }
  return %fa
}",
    );
    let fib = |n: i64| int(p.run(vec![Value::Int(n)]).expect("runs"));
    assert_eq!(fib(0), 0);
    assert_eq!(fib(1), 1);
    assert_eq!(fib(10), 55);
    assert_eq!(fib(90), 2_880_067_194_370_816_120);
    assert_eq!(fib(-4), -1);
    // fib(93) does not fit in 64 bits: an overflow error.
    assert!(matches!(
        p.run(vec![Value::Int(93)]),
        Err(RuntimeError::Overflow(_))
    ));
}

#[test]
fn literal_value_lists_and_nested_loops() {
    // sum over i in [3, -1, 4] of sum over j in range(i) of j
    let p = program(
        "fn f() -> int {
  %zero: int = const.int 0
  %one: int = const.int 1
  for %i: int in values[3, -1, 4] carry(%acc: int = %zero -> %total) {
    for %j: int in range(%zero, %i, %one) carry(%inner: int = %acc -> %after) {
      %s: int = scalar.add %inner, %j
      continue %s
    }
    continue %after
  }
  return %total
}",
    );
    assert_eq!(int(p.run(Vec::new()).expect("runs")), 3 + 6);
}

#[test]
fn the_interrupt_check_runs_on_long_loops_and_stops_them() {
    let p = program(SCALAR_LOOP);
    let mut calls = 0;
    let started = std::time::Instant::now();
    let result = p.run_interruptible(
        [0, i64::MAX, 1, 0, 1].map(Value::Int).into_iter().collect(),
        &mut || {
            calls += 1;
            Err(RuntimeError::Interrupted)
        },
    );
    assert!(
        matches!(result, Err(RuntimeError::Interrupted)),
        "{result:?}"
    );
    assert_eq!(calls, 1);
    // Bounded rate: the first check comes after the loop has run a while, not on the first
    // edge.
    assert!(started.elapsed() >= rextio_runtime::executor::FIRST_INTERRUPT_CHECK);
    // Short loops never call it.
    let mut calls = 0;
    let short = p.run_interruptible(
        [0, 100, 1, 1, 1 << 40]
            .map(Value::Int)
            .into_iter()
            .collect(),
        &mut || {
            calls += 1;
            Ok(())
        },
    );
    assert!(short.is_ok());
    assert_eq!(calls, 0);
}

#[test]
fn a_long_loop_pauses_at_its_first_check_and_resumes_to_the_same_result() {
    use rextio_runtime::executor::{Step, FIRST_INTERRUPT_CHECK};
    let p = program(SCALAR_LOOP);
    let args = |stop: i64| {
        [0, stop, 1, 1, 1 << 60]
            .map(Value::Int)
            .into_iter()
            .collect::<Vec<_>>()
    };
    // Long enough to pass the first check (tens of milliseconds), short enough for a test.
    let long = 20_000_000;
    let want = int(p.run(args(long)).expect("runs"));
    let started = std::time::Instant::now();
    let Step::Paused(paused) = p.run_bound_pausing(p.bind(args(long)).unwrap()) else {
        panic!("a loop of {long} iterations should pause at its first check");
    };
    assert!(started.elapsed() >= FIRST_INTERRUPT_CHECK);
    let got = p.resume(paused, &mut || Ok(())).expect("resumes");
    assert_eq!(int(got), want);
    // An interruption after resuming still ends the call.
    let Step::Paused(paused) = p.run_bound_pausing(p.bind(args(i64::MAX)).unwrap()) else {
        panic!("an endless loop pauses");
    };
    let stopped = p.resume(paused, &mut || Err(RuntimeError::Interrupted));
    assert!(
        matches!(stopped, Err(RuntimeError::Interrupted)),
        "{stopped:?}"
    );
    // A short loop never pauses.
    match p.run_bound_pausing(p.bind(args(100)).unwrap()) {
        Step::Done(result) => assert_eq!(int(result.unwrap()), int(p.run(args(100)).unwrap())),
        Step::Paused(_) => panic!("a loop of 100 iterations paused"),
    }
}

/// One value handed on under two names: `continue %z, %z` (what the optimizer leaves when two
/// equal expressions in a loop body merge, or `a = z; b = z` in the source) and `yield %u, %u`
/// in an arm, on tensors and on floats. Each target gets the value; moving it out of its slot
/// for the first target left the second reading an empty slot ("slot N is read before it is
/// written").
#[test]
fn one_value_fills_two_carried_slots_and_two_arm_results() {
    let p = program(
        "\
fn f(%x: tensor<f32, cpu, 2>, %n: int, %s: float) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %n: int = param 1
  %s: float = param 2
  %zero: int = const.int 0
  %one: int = const.int 1
  %step: float = const.float 1.5
  for %i: int in range(%zero, %n, %one) carry(%a: tensor<f32, cpu, 2> = %x -> %ra, %b: tensor<f32, cpu, 2> = %x -> %rb, %f: float = %s -> %rf, %g: float = %s -> %rg) {
    %z: tensor<f32, cpu, 2> = sigmoid %a
    %odd: bool = scalar.eq %i, %one
    if %odd -> (%u: float, %v: float) {
      %t: float = scalar.add %f, %step
      yield %t, %t
    } else {
      yield %f, %g
    }
    continue %z, %z, %u, %v
  }
  %sum: tensor<f32, cpu, 2> = add %ra, %rb
  return %sum
}",
    );
    let x = Tensor::from_slice(&[0.5f32, -1.0, 2.0, 0.0]).view([2, 2]);
    // Eager: the same three sigmoids, op by op through ATen.
    let want = {
        let z = x.sigmoid().sigmoid().sigmoid();
        &z + &z
    };
    let got = tensor(
        p.run(vec![
            Value::Tensor(x.shallow_clone()),
            Value::Int(3),
            Value::Float(0.25),
        ])
        .expect("runs"),
    );
    assert!(got.equal(&want), "{got:?} vs {want:?}");

    // The float pair: `f, g = s, s`; at i == 1 both become `f + 1.5` through one `yield %t, %t`.
    let floats = program(
        "\
fn f(%n: int, %s: float) -> float {
  %n: int = param 0
  %s: float = param 1
  %zero: int = const.int 0
  %one: int = const.int 1
  %step: float = const.float 1.5
  for %i: int in range(%zero, %n, %one) carry(%f: float = %s -> %rf, %g: float = %s -> %rg) {
    %odd: bool = scalar.eq %i, %one
    if %odd -> (%u: float, %v: float) {
      %t: float = scalar.add %f, %step
      yield %t, %t
    } else {
      yield %f, %g
    }
    continue %u, %v
  }
  %both: float = scalar.add %rf, %rg
  return %both
}",
    );
    match floats
        .run(vec![Value::Int(3), Value::Float(0.25)])
        .expect("runs")
    {
        Value::Float(v) => assert_eq!(v, (0.25 + 1.5) * 2.0),
        other => panic!("expected a float, got {other:?}"),
    }
}
