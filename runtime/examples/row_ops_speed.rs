//! Microseconds per call of the dense row-wise ops (softmax, argmax, sum over dim 1, and a
//! `(x - v) / v` prologue) on
//! classifier-shaped inputs, best of 7:
//! `cargo run --release -p rextio-runtime --example row_ops_speed`.

use std::time::Instant;

use rextio_ir::{BinaryOp, ReduceKind};
use rextio_runtime::dense::{self, Dims, F32};

fn time(what: &str, rows: usize, cols: usize, f: &dyn Fn(&F32)) {
    // `row_ops_speed softmax`: that op only (for a profiler).
    if std::env::args().nth(1).is_some_and(|only| only != what) {
        return;
    }
    let data: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 7919) % 1000) as f32 * 1e-2 - 5.0)
        .collect();
    let t = tch::Tensor::from_slice(&data).view([rows as i64, cols as i64]);
    let x = F32::view(t).expect("a contiguous float32 matrix");
    assert_eq!(x.dims(), Dims::matrix(rows, cols));
    let iters = (2_000_000 / (rows * cols)).clamp(100, 100_000);
    let mut best = f64::MAX;
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..iters {
            f(&x);
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
    println!("{what:<8} {rows:>4}x{cols:<4} {best:>8.3} us");
}

fn main() {
    for (rows, cols) in [
        (1, 8),
        (64, 8),
        (64, 32),
        (128, 32),
        (256, 128),
        (16, 512),
        (1, 512),
    ] {
        time("softmax", rows, cols, &|x| drop(dense::softmax(x, 1)));
        time("argmax", rows, cols, &|x| drop(dense::argmax(x, 1, false)));
        time("sum", rows, cols, &|x| {
            drop(dense::reduce(ReduceKind::Sum, x, 1, false))
        });
        let v: Vec<f32> = (0..cols).map(|i| 0.5 + i as f32 * 1e-3).collect();
        let v = F32::view(tch::Tensor::from_slice(&v)).expect("a float32 vector");
        let steps = [(BinaryOp::Sub, &v), (BinaryOp::Div, &v)];
        time("prologue", rows, cols, &|x| {
            drop(dense::prologue(x, steps.iter().map(|(op, v)| (*op, *v))))
        });
    }
}
