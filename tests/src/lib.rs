//! Helpers for the end-to-end tests: repository paths, example sources, and the differential
//! check that runs two programs on the same random arguments.

use std::path::PathBuf;

use rextio_ir::{DType, Function, Type};
use rextio_runtime::{Program, Value};
use tch::{Device, Kind, Tensor};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The emitted-crate fixture (`tests/python/emit_fixture.py`), every function compiled and
/// optimized by the driver.
pub fn emit_fixture() -> Vec<Function> {
    let (name, text) = source("tests/python/emit_fixture.py");
    let name = name.rsplit('/').next().unwrap_or(&name).to_string();
    let (_, compiled) =
        rextio_driver::compile_module(&name, &text, rextio_driver::Surface::Extended);
    compiled
        .into_iter()
        .map(|c| c.expect("every function of the fixture compiles").optimized)
        .collect()
}

/// The contents of the emitted file at `path`.
pub fn emitted<'a>(files: &'a [rextio_backend::EmittedFile], path: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.path == std::path::Path::new(path))
        .unwrap_or_else(|| panic!("{path} is emitted"))
        .contents
}

/// `(display name, text)` of a file under the repository root.
pub fn source(relative: &str) -> (String, String) {
    let text = std::fs::read_to_string(root().join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"));
    (relative.to_string(), text)
}

pub fn random_value(ty: Type, sizes: &[i64; 2], seed: i64) -> Value {
    match ty {
        Type::Tensor(t) => {
            let shape: Vec<i64> = sizes[..t.rank as usize].to_vec();
            tch::manual_seed(seed);
            let tensor = Tensor::randn(shape.as_slice(), (Kind::Float, Device::Cpu));
            Value::Tensor(match t.dtype {
                DType::F32 => tensor,
                DType::I64 => tensor.to_kind(Kind::Int64),
                DType::F64 => tensor.to_kind(Kind::Double),
                DType::BF16 => tensor.to_kind(Kind::BFloat16),
            })
        }
        Type::Int => Value::Int(3),
        Type::Bool => Value::Bool(true),
        Type::Float => Value::Float(0.5),
    }
}

fn values(t: &Tensor) -> Vec<f64> {
    let t = t.to_kind(Kind::Double).contiguous().view(-1);
    let mut out = vec![0f64; t.numel()];
    t.copy_data(&mut out, t.numel());
    out
}

pub fn assert_same(a: &Value, b: &Value, what: &str) {
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
        (Value::Float(a), Value::Float(b)) => {
            assert!(
                a.to_bits() == b.to_bits() || (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                "{what}: {a} vs {b}"
            )
        }
        _ => panic!("{what}: different kinds of value"),
    }
}

/// Arguments for `f` by convention: weights (`w*`) are [features, features], other rank-2
/// values [rows, features], rank-1 values [features] (features = 8).
pub fn conventional_args(f: &Function, seed: i64, rows: i64) -> Vec<Value> {
    let features = 8;
    f.params
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
}

/// Runs `a` and `b` on the same conventional arguments of `f`. They must agree: the same
/// values (within 1e-5 relative, NaN/Inf classes equal) or the same error. Returns whether
/// the runs succeeded.
pub fn compare_runs(
    a: &Program,
    b: &Program,
    f: &Function,
    seed: i64,
    rows: i64,
    what: &str,
) -> bool {
    match (
        a.run(conventional_args(f, seed, rows)),
        b.run(conventional_args(f, seed, rows)),
    ) {
        (Ok(x), Ok(y)) => {
            assert_same(&y, &x, what);
            true
        }
        (Err(x), Err(y)) => {
            assert_eq!(x.to_string(), y.to_string(), "{what}: same error");
            false
        }
        (x, y) => panic!("{what}: one side failed: {x:?} / {y:?}"),
    }
}
