//! Times the slice-level `linear` paths (the one-pass kernel, the blocked GEMM over the weight
//! as given, over the weight transposed already, and with its transposition counted) on a
//! grid of shapes, and prints what the
//! cost model picks against what measured fastest, for a weight used once and for one reused
//! (transposed already): the data behind `kernels::COST_MODEL` (docs/benchmarks.md).
//!
//! `cargo run --release -p rextio-runtime --example kernel_paths`

use std::time::Instant;

use rextio_ir::UnaryOp;
use rextio_runtime::kernels::{
    linear_into, transpose_into, Epilogue, KernelPath, LinearDims, Products, COST_MODEL,
};

/// ns per call of `path` (best of 7 timings); with `transposing`, the weight is given as
/// `[n, k]` and transposed in every call (a weight used once on the transposed path).
fn time(path: KernelPath, batch: usize, k: usize, n: usize, transposing: bool) -> f64 {
    let x: Vec<f32> = (0..batch * k)
        .map(|i| (i % 13) as f32 * 0.07 - 0.4)
        .collect();
    let given: Vec<f32> = (0..n * k).map(|i| (i % 11) as f32 * 0.05 - 0.25).collect();
    let mut w = given.clone();
    if path == KernelPath::BlockedTransposed {
        transpose_into(&given, n, k, &mut w);
    }
    let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
    let mut out = vec![0.0f32; batch * n];
    let macs = (batch * k * n).max(1);
    let iters = (20_000_000 / macs).clamp(20, 200_000);
    let mut best = f64::MAX;
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..iters {
            if transposing {
                transpose_into(&given, n, k, &mut w);
            }
            linear_into(
                path,
                &x,
                &w,
                Some(&b),
                LinearDims::new(batch, k, n),
                Epilogue::new(&[UnaryOp::Relu], None),
                &mut out,
            )
            .unwrap();
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e9 / iters as f64);
    }
    best
}

/// The shapes given as `BATCHxKxN` arguments, else the grid the cost model was fitted to.
fn shapes() -> Vec<(usize, usize, usize)> {
    let given: Vec<(usize, usize, usize)> = std::env::args()
        .skip(1)
        .filter_map(|arg| {
            let sizes: Vec<usize> = arg.split('x').filter_map(|s| s.parse().ok()).collect();
            match sizes.as_slice() {
                [batch, k, n] => Some((*batch, *k, *n)),
                _ => {
                    eprintln!("ignoring `{arg}`: expected BATCHxKxN");
                    None
                }
            }
        })
        .collect();
    if !given.is_empty() {
        return given;
    }
    let mut grid = Vec::new();
    for batch in [1, 2, 4, 8, 16, 32, 64, 128, 256] {
        for (k, n) in [
            (16, 16),
            (32, 32),
            (64, 64),
            (128, 64),
            (128, 128),
            (256, 128),
            (32, 8),
            (512, 256),
            (8, 512),
            (128, 512),
        ] {
            grid.push((batch, k, n));
        }
    }
    grid
}

fn main() {
    println!(
        "shape            one-pass   blocked  transposed  +transpose   once: pick       reused: pick"
    );
    let (mut wrong, mut total) = (0, 0);
    for (batch, k, n) in shapes() {
        {
            let one = time(KernelPath::SmallFused, batch, k, n, false);
            let blocked = time(KernelPath::Blocked, batch, k, n, false);
            let transposed = time(KernelPath::BlockedTransposed, batch, k, n, false);
            let transposing = time(KernelPath::BlockedTransposed, batch, k, n, true);
            let cost = |p: KernelPath| match p {
                KernelPath::SmallFused => one,
                KernelPath::Blocked => blocked,
                _ => transposed,
            };
            // Our slice paths only: the crate's choice (where libtorch's GEMM would take the
            // product, `Products::Libtorch`, this table does not time it).
            let once = COST_MODEL.choose_on(Products::Crate, batch, k, n, false);
            let reused = COST_MODEL.choose_on(Products::Crate, batch, k, n, true);
            // A weight used once pays for its transposition.
            let once_cost = match once {
                KernelPath::BlockedTransposed => transposing,
                other => cost(other),
            };
            // A pick within 10% of the best of its options costs little; count the others.
            total += 2;
            if once_cost > 1.1 * one.min(blocked).min(transposing) {
                wrong += 1;
            }
            if cost(reused) > 1.1 * one.min(blocked).min(transposed) {
                wrong += 1;
            }
            println!(
                "{batch:>4}x{k:>4}x{n:>4}  {one:>9.0} {blocked:>9.0} {transposed:>11.0} {transposing:>11.0}   {:<16} {:<16}",
                format!("{once:?}"),
                format!("{reused:?}"),
            );
        }
    }
    println!("{wrong} of {total} picks more than 10% slower than the fastest option");
}
