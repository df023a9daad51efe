//! Nanoseconds per element of each `vmath` slice loop on this CPU (32K elements, best of 7):
//! `cargo run --release -p rextio-runtime --example vmath_speed`.

use std::time::Instant;

use rextio_runtime::vmath::{self, Func};

fn main() {
    let n = 32 * 1024;
    let src: Vec<f32> = (0..n).map(|i| (i as f32 - 16384.0) * 3e-4).collect();
    let mut dst = vec![0.0f32; n];
    for f in [Func::Exp, Func::Tanh, Func::Sigmoid, Func::Gelu] {
        let mut best = f64::MAX;
        for _ in 0..7 {
            let start = Instant::now();
            for _ in 0..100 {
                vmath::map(f, &src, &mut dst);
            }
            best = best.min(start.elapsed().as_secs_f64() * 1e9 / (100 * n) as f64);
        }
        println!("{f:?}: {best:.3} ns per element");
    }
}
