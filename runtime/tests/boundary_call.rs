//! The executor's scalar boundary calls (`boundary_call`, IR invariant 13): run through the
//! `Boundary` the embedder passes with the call, the returned scalar checked against the
//! declared type with Python's rules, and a clear error (never a panic) without a boundary.

use rextio_ir::{parse_function, Type};
use rextio_runtime::executor::{boundary_result, Boundary};
use rextio_runtime::scalar::Scalar;
use rextio_runtime::{Program, RuntimeError, Value};

/// `f(n) = inc(n) * 2` when `inc(n) > 0` else `-1`, the call outside any loop.
const CALLS_INC: &str = "\
fn f(%n: int) -> int {
  %n: int = param 0
  %k: int = boundary_call %n, callee=inc, ret=int
  %zero: int = const.int 0
  %two: int = const.int 2
  %pos: bool = scalar.gt %k, %zero
  if %pos -> (%r: int) {
    %d: int = scalar.mul %k, %two
    yield %d
  } else {
    %m: int = const.int -1
    yield %m
  }
  return %r
}";

fn program(text: &str) -> Program {
    let f = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    Program::compile(&f).expect("compiles")
}

#[test]
fn a_boundary_call_runs_through_the_embedders_callback() {
    let p = program(CALLS_INC);
    assert!(p.calls_back());
    let mut calls = Vec::new();
    let mut inc = |callee: &str, args: &[Scalar]| {
        calls.push((callee.to_string(), args.to_vec()));
        match args {
            [Scalar::Int(n)] => Ok(Scalar::Int(n + 1)),
            _ => Err(RuntimeError::Value("bad args".into())),
        }
    };
    for (n, want) in [(3, 8), (-1, -1), (0, 2)] {
        match p.run_with(vec![Value::Int(n)], &mut inc) {
            Ok(Value::Int(got)) => assert_eq!(got, want, "n = {n}"),
            other => panic!("n = {n}: {other:?}"),
        }
    }
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0], ("inc".to_string(), vec![Scalar::Int(3)]));
}

#[test]
fn without_a_boundary_the_call_is_a_clear_error() {
    let p = program(CALLS_INC);
    match p.run(vec![Value::Int(1)]) {
        Err(RuntimeError::Unsupported(m)) => {
            assert!(m.contains("`inc`") && m.contains("boundary call"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_callees_error_ends_the_call_unchanged() {
    let p = program(CALLS_INC);
    let mut raising = |_: &str, _: &[Scalar]| -> rextio_runtime::Result<Scalar> {
        Err(RuntimeError::Raised("KeyError: 'boom'".into()))
    };
    match p.run_with(vec![Value::Int(1)], &mut raising) {
        Err(RuntimeError::Raised(m)) => assert_eq!(m, "KeyError: 'boom'"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_returned_value_is_checked_against_the_declared_type() {
    let p = program(CALLS_INC);
    let mut float = |_: &str, _: &[Scalar]| Ok(Scalar::Float(2.0));
    match p.run_with(vec![Value::Int(1)], &mut float) {
        Err(RuntimeError::ArgumentType(m)) => {
            assert!(
                m.starts_with("inc() returned float") && m.contains("int"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Python's rules: bool is an int (0/1), int and bool are floats, nothing else converts.
    let ok = [
        (Scalar::Bool(true), Type::Int, Scalar::Int(1)),
        (Scalar::Int(3), Type::Float, Scalar::Float(3.0)),
        (Scalar::Bool(false), Type::Float, Scalar::Float(0.0)),
        (Scalar::Float(0.5), Type::Float, Scalar::Float(0.5)),
        (Scalar::Bool(true), Type::Bool, Scalar::Bool(true)),
    ];
    for (value, ret, want) in ok {
        assert_eq!(boundary_result("g", value, ret).expect("converts"), want);
    }
    for (value, ret) in [
        (Scalar::Int(1), Type::Bool),
        (Scalar::Float(1.0), Type::Int),
        (Scalar::Float(1.0), Type::Bool),
    ] {
        let e = boundary_result("g", value, ret).expect_err("a TypeError");
        assert!(matches!(e, RuntimeError::ArgumentType(_)), "{e:?}");
    }
}

/// The trait object form the Python package uses.
struct Doubler;

impl Boundary for Doubler {
    fn call(&mut self, _: &str, args: &[Scalar], ret: Type) -> rextio_runtime::Result<Scalar> {
        assert_eq!(ret, Type::Int);
        match args {
            [Scalar::Int(n)] => Ok(Scalar::Int(2 * n)),
            _ => Err(RuntimeError::Value("bad".into())),
        }
    }
}

#[test]
fn a_boundary_trait_object_runs_it_too() {
    let p = program(CALLS_INC);
    match p.run_with(vec![Value::Int(5)], &mut Doubler) {
        Ok(Value::Int(20)) => {}
        other => panic!("{other:?}"),
    }
}
