//! Source -> frontend -> passes -> (executor | backend), on the repository's examples.
//!
//! - Snapshots: the Phase A IR before and after fusion, and the Rust the backend emits.
//! - Differential: every compiled function run by the executor on its unoptimized and its
//!   optimized IR gives the same values (the guard on each rewrite rule), within
//!   |a - b| <= 1e-5 * max(1, |b|), NaN/Inf classes equal.

use rextio_backend::emit_lib_rs;
use rextio_driver::{compile_function, compile_module};
use rextio_ir::print::print_function;
use rextio_ir::{DType, Type};
use rextio_runtime::{Program, Value};
use rextio_tests::source;
use tch::{Device, Kind, Tensor};

#[test]
fn phase_a_ir_before_and_after_fusion() {
    let (name, text) = source("examples/phase_a.py");
    let compiled = compile_function(&name, &text, "inference").expect("phase A compiles");
    insta::assert_snapshot!("phase_a_parsed", print_function(&compiled.parsed));
    insta::assert_snapshot!("phase_a_optimized", print_function(&compiled.optimized));
    let stages: Vec<&str> = compiled.stages.iter().map(|(s, _)| *s).collect();
    assert_eq!(stages, ["parsed", "fused", "dce", "optimized"]);
}

#[test]
fn phase_a_emitted_rust() {
    let (name, text) = source("examples/phase_a.py");
    let compiled = compile_function(&name, &text, "inference").expect("phase A compiles");
    let lib = emit_lib_rs(&[compiled.optimized], "phase_a", &name).expect("emits");
    insta::assert_snapshot!("phase_a_lib_rs", lib);
}

fn random_value(ty: Type, sizes: &[i64; 2], seed: i64) -> Value {
    match ty {
        Type::Tensor(t) => {
            let shape: Vec<i64> = sizes[..t.rank as usize].to_vec();
            tch::manual_seed(seed);
            let tensor = Tensor::randn(shape.as_slice(), (Kind::Float, Device::Cpu));
            Value::Tensor(match t.dtype {
                DType::F32 => tensor,
                DType::I64 => tensor.to_kind(Kind::Int64),
            })
        }
        Type::Int => Value::Int(3),
        Type::Bool => Value::Bool(true),
    }
}

fn values(t: &Tensor) -> Vec<f64> {
    let t = t.to_kind(Kind::Double).contiguous().view(-1);
    let mut out = vec![0f64; t.numel()];
    t.copy_data(&mut out, t.numel());
    out
}

fn assert_same(a: &Value, b: &Value, what: &str) {
    match (a, b) {
        (Value::Tensor(a), Value::Tensor(b)) => {
            assert_eq!(a.size(), b.size(), "{what}: shape");
            assert_eq!(a.kind(), b.kind(), "{what}: dtype");
            for (i, (x, y)) in values(a).into_iter().zip(values(b)).enumerate() {
                if y.is_nan() {
                    assert!(x.is_nan(), "{what}[{i}]: NaN class");
                } else if y.is_infinite() {
                    assert_eq!(x, y, "{what}[{i}]: infinity");
                } else {
                    assert!(
                        (x - y).abs() <= 1e-5 * y.abs().max(1.0),
                        "{what}[{i}]: {x} vs {y}"
                    );
                }
            }
        }
        (Value::Int(a), Value::Int(b)) => assert_eq!(a, b, "{what}"),
        (Value::Bool(a), Value::Bool(b)) => assert_eq!(a, b, "{what}"),
        _ => panic!("{what}: different kinds of value"),
    }
}

#[test]
fn optimized_and_unoptimized_ir_agree_in_the_executor() {
    let mut checked = 0;
    for file in ["examples/phase_a.py", "tests/python/surface_fixture.py"] {
        let (name, text) = source(file);
        let (_, compiled) = compile_module(&name, &text);
        for function in compiled {
            let function = function.expect("every function of these files compiles");
            let unoptimized =
                Program::compile(&function.parsed).expect("executor accepts parsed IR");
            let optimized =
                Program::compile(&function.optimized).expect("executor accepts optimized IR");
            // Shapes by convention: weights (`w*`) are [features, features], other rank-2
            // values [rows, features], rank-1 values [features]. Square cases (rows ==
            // features) let every matmul of the files run; the others must fail alike.
            let mut ran = 0;
            for (seed, rows) in [(1i64, 5i64), (2, 300), (3, 1), (4, 8)] {
                let features = 8;
                let args = |seed: i64| -> Vec<Value> {
                    function
                        .parsed
                        .params
                        .iter()
                        .enumerate()
                        .map(|(i, p)| {
                            let first = if p.name.starts_with('w') {
                                features
                            } else {
                                rows
                            };
                            let sizes = match p.ty {
                                Type::Tensor(t) if t.rank == 1 => [features, 0],
                                _ => [first, features],
                            };
                            random_value(p.ty, &sizes, seed * 100 + i as i64)
                        })
                        .collect()
                };
                let (a, b) = (unoptimized.run(args(seed)), optimized.run(args(seed)));
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        assert_same(&b, &a, &format!("{file}:{} seed {seed}", function.name));
                        ran += 1;
                    }
                    (Err(a), Err(b)) => assert_eq!(
                        a.to_string(),
                        b.to_string(),
                        "{}: same error",
                        function.name
                    ),
                    (a, b) => panic!("{}: one side failed: {a:?} / {b:?}", function.name),
                }
                checked += 1;
            }
            assert!(ran > 0, "{}: no shape ran", function.name);
        }
    }
    assert!(checked >= 27, "only {checked} runs");
}
