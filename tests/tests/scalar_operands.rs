//! Python scalar operands of `+ - * /` end to end: claimed under the extended surface into
//! `*.scalar` ops, kept out of fusion without stopping the ops around them from fusing, run by
//! the executor with ATen's bits (the oracle here is ATen's own scalar ops, as eager calls
//! them: `x.mul(s)`, `torch.rsub(x, s)`, `x.reciprocal().mul(s)` for `s / x`), and emitted
//! as `exec::tensor_scalar` calls. Under the reference surface the same source stays on
//! Python (`RXTP-TORCH-010`).

use rextio_backend::emit_lib_rs;
use rextio_driver::{compile_function, Surface};
use rextio_ir::print::print_function;
use rextio_runtime::{Program, Value};
use tch::{Kind, Tensor};

const SOURCE: &str = "\
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def scaled(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, t: float, n: int) -> TensorF32Cpu1D:
    h = F.linear(x * 0.5, w, b).relu() / t
    y = 2 - h + n
    return y.sum(dim=1)


def forms(x: TensorF32Cpu2D, t: float, n: int) -> TensorF32Cpu2D:
    s = t * 2.0
    for i in range(n):
        x = 1.0 / x + i
    return (s - x) * -0.0 + x / s - 3
";

fn compiled(name: &str) -> rextio_driver::CompiledFunction {
    compile_function("scalars.py", SOURCE, name, Surface::Extended).expect("compiles")
}

#[test]
fn scalar_operands_are_ops_of_their_own_and_the_ops_around_them_fuse() {
    let f = compiled("scaled");
    let text = print_function(&f.optimized);
    for op in ["mul.scalar", "div.scalar", "rsub.scalar", "add.scalar"] {
        assert!(text.contains(op), "no {op} in\n{text}");
    }
    // linear + relu fuse after `x * 0.5`, and the sum is a plain reduction after the scalars.
    assert!(text.contains("fused_linear"), "{text}");
    assert!(text.contains("activations=[relu]"), "{text}");
    let forms = print_function(&compiled("forms").optimized);
    for op in [
        "mul.scalar",
        "div.scalar",
        "rsub.scalar",
        "sub.scalar",
        "rdiv.scalar",
        "add.scalar",
    ] {
        assert!(forms.contains(op), "no {op} in\n{forms}");
    }
}

#[test]
fn the_reference_surface_keeps_the_source_on_python() {
    for name in ["scaled", "forms"] {
        let err = compile_function("scalars.py", SOURCE, name, Surface::Reference)
            .expect_err("stays on Python");
        assert!(format!("{err:?}").contains("RXTP-TORCH-010"), "{err:?}");
    }
}

fn values(rows: i64, cols: i64, seed: i64) -> Tensor {
    tch::manual_seed(seed);
    let x = Tensor::randn([rows, cols], (Kind::Float, tch::Device::Cpu)) * 3.0;
    let flat = x.view([-1]);
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        3e38,
    ];
    for (i, v) in specials.iter().enumerate() {
        if (i as i64) < rows * cols {
            let _ = flat.get(i as i64).fill_(*v);
        }
    }
    x
}

fn tensor(v: Value) -> Tensor {
    match v {
        Value::Tensor(t) => t,
        other => panic!("expected a tensor, got {other:?}"),
    }
}

/// NaN where ATen has NaN, the same bits elsewhere.
fn assert_bits(ours: &Tensor, eager: &Tensor, what: &str) {
    assert_eq!(ours.size(), eager.size(), "{what}");
    let a = Vec::<f32>::try_from(ours.flatten(0, -1)).unwrap();
    let b = Vec::<f32>::try_from(eager.flatten(0, -1)).unwrap();
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
            "{what}: element {i}: ours {x:?}, ATen {y:?}"
        );
    }
}

#[test]
fn the_executor_gives_atens_bits() {
    let _guard = tch::no_grad_guard();
    let program = Program::compile(&compiled("forms").optimized).expect("compiles");
    for (t, n) in [
        (0.75, 0i64),
        (-3.0, 2),
        (1e-40, 1),
        (f64::INFINITY, 3),
        (-0.0, 1),
    ] {
        let x = values(5, 7, n + 1);
        let ours = tensor(
            program
                .run(vec![
                    Value::Tensor(x.shallow_clone()),
                    Value::Float(t),
                    Value::Int(n),
                ])
                .expect("runs"),
        );
        // The original, op by op as eager calls ATen.
        let s = t * 2.0;
        let mut y = x.shallow_clone();
        for i in 0..n {
            y = y
                .reciprocal()
                .f_mul_scalar(1.0)
                .unwrap()
                .f_add_scalar(i)
                .unwrap();
        }
        let eager =
            y.f_rsub_scalar(s).unwrap().f_mul_scalar(-0.0).unwrap() + y.f_div_scalar(s).unwrap();
        let eager = eager.f_sub_scalar(3i64).unwrap();
        assert_bits(&ours, &eager, &format!("forms(t={t}, n={n})"));
    }
}

#[test]
fn generated_code_calls_the_executors_op() {
    let lib = emit_lib_rs(&[compiled("forms").optimized], "scalars", "scalars.py").expect("emits");
    assert!(
        lib.contains("exec::tensor_scalar(TensorScalarOp::RDiv, "),
        "{lib}"
    );
    assert!(
        lib.contains("exec::tensor_scalar(TensorScalarOp::RSub, "),
        "{lib}"
    );
    assert!(lib.contains("TensorScalarOp"), "{lib}");
}
