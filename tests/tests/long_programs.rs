//! Long and deep programs (issue 31, item 5): a chain of 100,000 method calls compiles and
//! runs like eager on the small stack of a test thread (2 MiB: every recursive walker grows
//! its stack, `rextio_ir::stack`), and one deeper than the stated limit is refused with
//! RXT035 (docs/reliability.md, "Long programs"). The CLI's side (an 8 MiB main thread) is in
//! `cli/tests/cli.rs`.

use rextio_driver::{compile_function, CompileError, Surface};
use rextio_frontend::depth::MAX_DEPTH;
use rextio_runtime::{Program, Value};
use rextio_tests::assert_same;
use tch::{Device, Kind, Tensor};

/// The chain's ops, in turn: each is its own method on the tensor and in tch.
const OPS: [&str; 3] = ["relu", "neg", "tanh"];

/// `def f(x) -> ...: return x.relu().neg().tanh()...` with `calls` calls.
fn chain(calls: usize) -> String {
    let mut text = String::from(
        "from rextio_torch.types import TensorF32Cpu2D\n\n\
         def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x",
    );
    for i in 0..calls {
        text.push('.');
        text.push_str(OPS[i % OPS.len()]);
        text.push_str("()");
    }
    text.push('\n');
    text
}

fn eager(x: &Tensor, calls: usize) -> Tensor {
    let mut h = x.shallow_clone();
    for i in 0..calls {
        h = match OPS[i % OPS.len()] {
            "relu" => h.relu(),
            "neg" => h.neg(),
            _ => h.tanh(),
        };
    }
    h
}

#[test]
fn a_chain_of_100000_calls_compiles_and_runs_like_eager() {
    let calls = 100_000;
    let compiled = compile_function("chain.py", &chain(calls), "f", Surface::Extended)
        .expect("a chain of 100,000 calls compiles");
    let program = Program::compile(&compiled.optimized).expect("the executor takes it");
    tch::manual_seed(7);
    let x = Tensor::randn([3, 4], (Kind::Float, Device::Cpu));
    let got = program
        .run(vec![Value::Tensor(x.shallow_clone())])
        .expect("runs");
    assert_same(&got, &Value::Tensor(eager(&x, calls)), "chain of 100,000");
}

#[test]
fn a_chain_past_the_stated_limit_is_refused_with_rxt035() {
    // Two levels per call: one call more than half the limit is one level too deep.
    let calls = MAX_DEPTH / 2 + 1;
    let err = compile_function("deep.py", &chain(calls), "f", Surface::Extended)
        .expect_err("deeper than the limit");
    let CompileError::Syntax {
        reason, rendered, ..
    } = &err
    else {
        panic!("expected the module to be refused as a whole, got {err:?}");
    };
    assert_eq!(*reason, "nests too deeply to compile");
    assert!(rendered.contains("error[RXT035]"), "{rendered}");
    assert!(
        rendered.contains(&format!("more than the {MAX_DEPTH} this compiler takes")),
        "{rendered}"
    );
}
