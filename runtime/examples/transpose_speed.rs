//! Nanoseconds per element of `kernels::transpose_into` on weights of a few shapes (best of
//! 7): `cargo run --release -p rextio-runtime --example transpose_speed`.

use std::time::Instant;

use rextio_runtime::kernels::transpose_into;

fn main() {
    for (rows, cols) in [
        (64, 64),
        (128, 128),
        (256, 256),
        (512, 128),
        (128, 512),
        (512, 8),
        (256, 32),
    ] {
        let w: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
        let mut wt = vec![0.0f32; rows * cols];
        let reps = (4 << 20) / (rows * cols);
        let mut best = f64::MAX;
        for _ in 0..7 {
            let start = Instant::now();
            for _ in 0..reps {
                transpose_into(std::hint::black_box(&w), rows, cols, &mut wt);
            }
            best = best.min(start.elapsed().as_secs_f64() * 1e9 / (reps * rows * cols) as f64);
        }
        assert_eq!(wt[1], cols as f32);
        println!("{rows}x{cols}: {best:.3} ns per element");
    }
}
