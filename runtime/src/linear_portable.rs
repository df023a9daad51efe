//! The portable one-pass kernel (no SIMD intrinsics; the loops vectorize where they can):
//! `LANES` accumulators per dot product over blocks combined pairwise, the epilogue applied
//! per element and a reduction streamed in blocks. CPUs without AVX2+FMA run it, and tests
//! run it everywhere (`Isa::Portable`, `REXTIO_TORCH_ISA=portable`).

use crate::linear_epilogue::{epilogue_element, Shape};
use crate::sum::{add_lanes, finish_reduce, hsum_lanes, pairwise_split, PairwiseSum, LANES};

/// The same for the portable kernel, which rounds each product before adding it (no FMA):
/// with 256, its error at `k` = 255 and two outputs reached 3 to 10 times that of eager
/// (MKL's GEMV); with 64 it stays within twice.
const PORTABLE_DOT_BLOCK: usize = 64;

/// Output values the portable kernel's reduction adds in sequence before combining the
/// block's sum pairwise with the others.
const STREAM_BLOCK: usize = 8;

/// Dot product of equal-length rows: `LANES` accumulators over blocks of
/// [`PORTABLE_DOT_BLOCK`], blocks combined pairwise.
#[inline(always)]
fn dot_pairwise(x: &[f32], w: &[f32]) -> f32 {
    let full = x.len() / LANES * LANES;
    let tail: f32 = x[full..].iter().zip(&w[full..]).map(|(a, b)| a * b).sum();
    let lanes = if full <= PORTABLE_DOT_BLOCK {
        dot_block(&x[..full], &w[..full])
    } else {
        dot_lanes(&x[..full], &w[..full])
    };
    hsum_lanes(lanes) + tail
}

/// `x.len() == w.len()`, a multiple of `LANES`.
fn dot_lanes(x: &[f32], w: &[f32]) -> [f32; LANES] {
    if x.len() > PORTABLE_DOT_BLOCK {
        let mid = pairwise_split(x.len(), PORTABLE_DOT_BLOCK);
        let (x0, x1) = x.split_at(mid);
        let (w0, w1) = w.split_at(mid);
        return add_lanes(dot_lanes(x0, w0), dot_lanes(x1, w1));
    }
    dot_block(x, w)
}

#[inline(always)]
fn dot_block(x: &[f32], w: &[f32]) -> [f32; LANES] {
    let mut acc = [0.0f32; LANES];
    for (xs, ws) in x.chunks_exact(LANES).zip(w.chunks_exact(LANES)) {
        for l in 0..LANES {
            acc[l] += xs[l] * ws[l];
        }
    }
    acc
}

/// Portable path: `LANES` accumulators per dot product.
pub(crate) fn fused_linear_scalar(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    let Shape {
        batch,
        k,
        n,
        reduce,
        ..
    } = *shape;
    for row in 0..batch {
        let xr = &x[row * k..(row + 1) * k];
        let mut reduced = PairwiseSum::new();
        for start in (0..n).step_by(STREAM_BLOCK) {
            let mut block = 0.0f32;
            for j in start..n.min(start + STREAM_BLOCK) {
                let dot = dot_pairwise(xr, &w[j * k..(j + 1) * k]);
                epilogue_element(b, shape, row, j, dot, &mut block, out);
            }
            reduced.push(block);
        }
        if let Some(r) = reduce {
            out[row] = finish_reduce(r.kind, reduced.total(), n);
        }
    }
}
