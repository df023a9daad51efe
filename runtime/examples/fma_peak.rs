//! The FMA peak of one core (GFLOP/s of float32 fused multiply-adds with no memory traffic),
//! the ceiling of every GEMM-bound cell: a cell whose eager time is already within X of it can
//! run at most 1/X times faster than eager (docs/benchmarks.md, "Roofline").
//!
//! `cargo run --release -p rextio-runtime --example fma_peak`

use std::time::Instant;

/// Independent accumulators per loop: enough to cover the FMA latency at two FMAs per cycle.
const CHAINS: usize = 12;

/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512(iters: u64) -> f32 {
    use std::arch::x86_64::*;
    let mul = _mm512_set1_ps(1.000_000_1);
    let add = _mm512_set1_ps(1e-7);
    let mut acc: [__m512; CHAINS] = std::array::from_fn(|i| _mm512_set1_ps(i as f32));
    for _ in 0..iters {
        for a in acc.iter_mut() {
            *a = _mm512_fmadd_ps(*a, mul, add);
        }
    }
    acc.iter().map(|&a| _mm512_reduce_add_ps(a)).sum()
}

/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2(iters: u64) -> f32 {
    use std::arch::x86_64::*;
    let mul = _mm256_set1_ps(1.000_000_1);
    let add = _mm256_set1_ps(1e-7);
    let mut acc: [__m256; CHAINS] = std::array::from_fn(|i| _mm256_set1_ps(i as f32));
    for _ in 0..iters {
        for a in acc.iter_mut() {
            *a = _mm256_fmadd_ps(*a, mul, add);
        }
    }
    let mut lanes = [0f32; 8];
    let mut total = 0.0;
    for a in acc {
        // SAFETY: `lanes` holds the 8 values a store writes.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), a) };
        total += lanes.iter().sum::<f32>();
    }
    total
}

/// Best GFLOP/s of `run` over 200 timings of `iters` iterations of `lanes`-wide FMAs: short
/// timings, many of them, so that some run undisturbed on a machine shared with other work.
fn best(lanes: usize, iters: u64, run: impl Fn(u64) -> f32) -> f64 {
    let mut best = 0f64;
    for _ in 0..200 {
        let start = Instant::now();
        std::hint::black_box(run(iters));
        let flops = (iters as f64) * (CHAINS * lanes * 2) as f64;
        best = best.max(flops / start.elapsed().as_secs_f64() / 1e9);
    }
    best
}

fn main() {
    let iters = 500_000;
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked above).
            let peak = best(16, iters, |n| unsafe { avx512(n) });
            println!("AVX-512 FMA peak, one core: {peak:.1} GFLOP/s");
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA (checked above).
            let peak = best(8, iters, |n| unsafe { avx2(n) });
            println!("AVX2 FMA peak, one core: {peak:.1} GFLOP/s");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (iters, best as fn(usize, u64, fn(u64) -> f32) -> f64);
        println!("fma_peak measures x86-64 CPUs only");
    }
}
