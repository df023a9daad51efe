//! Nanoseconds per value of exact GELU, ours (`vmath::map(Func::Gelu)`, the loop every
//! compiled GELU runs) against eager's (`gelu_out` on a contiguous float32 tensor: oneDNN's
//! `eltwise_gelu_erf`) on the same data, one thread, best of 7 runs of 100 calls:
//!
//! ```sh
//! ONEDNN_MAX_CPU_ISA=AVX2 REXTIO_TORCH_ISA=avx2 \
//!     cargo run --release -p rextio-runtime --example gelu_speed -- [elements]
//! ```
//!
//! `ONEDNN_MAX_CPU_ISA` picks eager's kernel (and so the formula both compute),
//! `REXTIO_TORCH_ISA` which of our compiled loops runs (docs/benchmarks.md records the
//! numbers).

use std::time::Instant;

use rextio_runtime::cpu;
use rextio_runtime::vmath::{self, Func};
use tch::Tensor;

fn best_of(mut run: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..100 {
            run();
        }
        best = best.min(start.elapsed().as_secs_f64() / 100.0);
    }
    best
}

fn main() {
    tch::set_num_threads(1);
    let n: usize = std::env::args()
        .nth(1)
        .map_or(64 * 1024, |v| v.parse().expect("a number of elements"));
    // Values over [-8, 8): the polynomial ranges, the tails and the saturated ends.
    let src: Vec<f32> = (0..n).map(|i| (i as f32 / n as f32) * 16.0 - 8.0).collect();
    let mut dst = vec![0.0f32; n];
    let x = Tensor::from_slice(&src);
    let out = x.zeros_like();
    let ours = best_of(|| vmath::map(Func::Gelu, &src, &mut dst));
    let eager = best_of(|| {
        let _ = x.gelu_out(&out, "none");
    });
    // The timed results agree bit for bit (the vmath tests hold this on every input).
    let want = Vec::<f32>::try_from(&out).expect("float32 values");
    let same = dst
        .iter()
        .zip(&want)
        .filter(|(a, b)| a.to_bits() == b.to_bits())
        .count();
    let per = |s: f64| s * 1e9 / n as f64;
    println!(
        "{n} values at {}: ours {:.3} ns per value, eager {:.3} ns per value ({:.2}x); {same}/{n} bits equal",
        cpu::describe(),
        per(ours),
        per(eager),
        eager / ours
    );
}
