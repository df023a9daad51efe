//! Times the `linear` paths at 1 and 2 threads (`torch.set_num_threads`'s setting, which
//! `crate::par` follows) on large shapes, against the same product run as one block (what
//! the path did before threads) and against eager's `linear(x, w, b).relu().mean(1)`: the
//! data behind `linear_cost::PAR_MIN_MACS`, `LINEAR_ROW_BLOCK` and `PAR_MIN_ELEMENTS`
//! (docs/benchmarks.md, "Threads").
//!
//! `cargo run --release -p rextio-runtime --example par_speed [BATCHxKxN ...]`

use std::time::Instant;

use rextio_ir::{FusedReduce, ReduceKind, UnaryOp};
use rextio_runtime::kernels::{
    blocked_fused_linear, gemm_then_epilogue, linear_into, transpose_into, Epilogue, KernelPath,
    LinearDims, Products, COST_MODEL,
};
use rextio_runtime::linear_cost::{parallel_threads, PAR_MIN_ELEMENTS};
use tch::{Device, Kind, Tensor};

/// Best of 5 timings of `f`, in us per call.
fn best_us(mut f: impl FnMut(), work: usize) -> f64 {
    let iters = (200_000_000 / work.max(1)).clamp(3, 20_000);
    f();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
    best
}

fn shapes() -> Vec<(usize, usize, usize)> {
    let given: Vec<(usize, usize, usize)> = std::env::args()
        .skip(1)
        .filter_map(|arg| {
            let s: Vec<usize> = arg.split('x').filter_map(|v| v.parse().ok()).collect();
            match s.as_slice() {
                [b, k, n] => Some((*b, *k, *n)),
                _ => None,
            }
        })
        .collect();
    if !given.is_empty() {
        return given;
    }
    vec![
        (128, 256, 256),
        (256, 256, 256),
        (512, 256, 256),
        (1024, 256, 256),
        (1024, 512, 512),
        (4096, 512, 512),
        (8192, 256, 256),
        (2048, 1024, 1024),
    ]
}

fn main() {
    let mean = Some(FusedReduce {
        kind: ReduceKind::Mean,
        dim: 1,
        keepdim: false,
    });
    let relu = [UnaryOp::Relu];
    println!("batch x k x n: path | one block 1t | blocks 1t | blocks 2t | speedup | eager 1t | eager 2t | T: transposed once 1t | 2t | G: libtorch GEMM + epilogue 1t | 2t (us, relu+mean)");
    for (batch, k, n) in shapes() {
        // Our blocked paths (the crate's choice); column G times libtorch's GEMM.
        let path = COST_MODEL.choose_on(Products::Crate, batch, k, n, false);
        let x: Vec<f32> = (0..batch * k)
            .map(|i| (i % 13) as f32 * 0.07 - 0.4)
            .collect();
        let w: Vec<f32> = (0..n * k).map(|i| (i % 11) as f32 * 0.05 - 0.25).collect();
        let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
        let mut out = vec![0.0f32; batch];
        let dims = LinearDims::new(batch, k, n);
        let epi = Epilogue::new(&relu, mean);
        let work = batch * k * n;
        tch::set_num_threads(1);
        let whole = if path == KernelPath::Blocked {
            best_us(
                || blocked_fused_linear(&x, &w, Some(&b), dims, epi, &mut out).unwrap(),
                work,
            )
        } else {
            f64::NAN
        };
        let mut run = || linear_into(path, &x, &w, Some(&b), dims, epi, &mut out).unwrap();
        let one = best_us(&mut run, work);
        tch::set_num_threads(2);
        let two = best_us(&mut run, work);
        // The weight transposed once per call, then the transposed path's blocks.
        let mut wtr = vec![0.0f32; n * k];
        let mut run_t = || {
            transpose_into(&w, n, k, &mut wtr);
            linear_into(
                KernelPath::BlockedTransposed,
                &x,
                &wtr,
                Some(&b),
                dims,
                epi,
                &mut out,
            )
            .unwrap()
        };
        tch::set_num_threads(1);
        let t1 = best_us(&mut run_t, work);
        tch::set_num_threads(2);
        let t2 = best_us(&mut run_t, work);
        let xt = Tensor::from_slice(&x).view([batch as i64, k as i64]);
        let wt = Tensor::from_slice(&w).view([n as i64, k as i64]);
        let bt = Tensor::from_slice(&b);
        let eager = || {
            let _ = xt
                .linear(&wt, Some(&bt))
                .relu()
                .mean_dim(1, false, Kind::Float);
        };
        tch::set_num_threads(1);
        let e1 = best_us(eager, work);
        tch::set_num_threads(2);
        let e2 = best_us(eager, work);
        // libtorch's GEMM, then our (blocked, parallel) epilogue.
        let libtorch = || {
            let _ = gemm_then_epilogue(&xt, &wt, Some(&bt), &relu, mean).unwrap();
        };
        tch::set_num_threads(1);
        let g1 = best_us(libtorch, work);
        tch::set_num_threads(2);
        let g2 = best_us(libtorch, work);
        println!(
            "{batch}x{k}x{n}: {} | {whole:.1} | {one:.1} | {two:.1} | {:.2}x | {e1:.1} | {e2:.1} | T {t1:.1} | {t2:.1} | G {g1:.1} | {g2:.1}",
            path.name(),
            one / two
        );
    }
    // The floor of a parallel call: two blocks of almost no work on 2 threads, on the
    // persistent pool (`par::for_each_block`) against a scoped thread started for the call
    // (what every parallel call did before the pool).
    let mut pair = [0.0f32; 2];
    let pool = best_us(
        || rextio_runtime::par::for_each_block(&mut pair, 1, 2, |_, v| v[0] += 1.0),
        1_000_000,
    );
    let scoped = best_us(
        || {
            let (a, b) = pair.split_at_mut(1);
            std::thread::scope(|scope| {
                scope.spawn(|| a[0] += 1.0);
                b[0] += 1.0;
            })
        },
        1_000_000,
    );
    println!("parallel call floor (2 threads, us): pool {pool:.1} | scoped threads {scoped:.1}");
    // The row-wise passes alone: relu over `len` elements in blocks, 1 and 2 threads.
    println!("row-wise relu (elements: 1t | 2t us)");
    for len in [1usize << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20] {
        let mut data: Vec<f32> = (0..len).map(|i| (i % 7) as f32 - 3.0).collect();
        let mut t = [0.0; 2];
        for (slot, threads) in t.iter_mut().zip([1usize, 2]) {
            let blocks = len.div_ceil(1 << 14);
            let used = if parallel_threads(len, 0, blocks) > 1 {
                threads
            } else {
                1
            };
            *slot = best_us(
                || {
                    rextio_runtime::par::for_each_block(&mut data, 1 << 14, used, |_, block| {
                        block.iter_mut().for_each(|v| *v = v.max(0.0))
                    })
                },
                len * 20,
            );
        }
        let _ = (PAR_MIN_ELEMENTS, Device::Cpu);
        println!("{len}: {:.1} | {:.1}", t[0], t[1]);
    }
}
