//! Pairwise sums: the blocked, pairwise summation every reduction of the crate uses (the GEMM
//! path's rows, the one-pass kernels' staged chunks and dot products, the dense reductions,
//! softmax's row sums), and the combination of a reduction's sum into its result.
//!
//! Short runs are summed in `LANES` registers, then the partial sums are combined pairwise, as
//! BLAS libraries and ATen's cascade sum block theirs (see [`crate::kernels`] on accuracy).
//! The order of every addition here is part of the results' bits: changing it changes
//! numerics.

use rextio_ir::ReduceKind;

/// Independent accumulators per dot product in the portable path: enough to hide add
/// latency, and a multiple of common SIMD widths so the loop vectorizes.
pub(crate) const LANES: usize = 8;

/// Row elements a reduction (the GEMM path's rows, the AVX2 kernel's staged chunks) sums
/// in `LANES` registers before combining pairwise (8 additions per lane), close to ATen's
/// cascade sum, which eager's `sum`/`mean` use.
const SUM_BLOCK: usize = 64;

/// Where to split `len` elements (a multiple of `LANES`) of blocked pairwise summation:
/// after half of the `block`-sized pieces, so every leaf but the last is a full block.
#[inline(always)]
pub(crate) fn pairwise_split(len: usize, block: usize) -> usize {
    len.div_ceil(block) / 2 * block
}

/// Sum of a row: `LANES` independent accumulators (vectorizable) over blocks of
/// [`SUM_BLOCK`], blocks combined pairwise.
#[inline(always)]
pub(crate) fn sum_pairwise(values: &[f32]) -> f32 {
    let full = values.len() / LANES * LANES;
    let tail: f32 = values[full..].iter().sum();
    // One block (the common case) without the recursive call.
    let lanes = if full <= SUM_BLOCK {
        sum_block(&values[..full])
    } else {
        sum_lanes(&values[..full])
    };
    hsum_lanes(lanes) + tail
}

/// `values.len()` is a multiple of `LANES`.
fn sum_lanes(values: &[f32]) -> [f32; LANES] {
    if values.len() > SUM_BLOCK {
        let (lo, hi) = values.split_at(pairwise_split(values.len(), SUM_BLOCK));
        return add_lanes(sum_lanes(lo), sum_lanes(hi));
    }
    sum_block(values)
}

#[inline(always)]
fn sum_block(values: &[f32]) -> [f32; LANES] {
    let mut acc = [0.0f32; LANES];
    for chunk in values.chunks_exact(LANES) {
        for l in 0..LANES {
            acc[l] += chunk[l];
        }
    }
    acc
}

#[inline(always)]
pub(crate) fn add_lanes(a: [f32; LANES], b: [f32; LANES]) -> [f32; LANES] {
    std::array::from_fn(|l| a[l] + b[l])
}

/// The lanes summed pairwise, as the AVX2 horizontal sum does.
#[inline(always)]
pub(crate) fn hsum_lanes(acc: [f32; LANES]) -> f32 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

/// Pairwise sum of block sums that arrive one at a time (the one-pass kernels reduce
/// outputs as they are computed), without storing them: combined like a binary counter,
/// level `i` holding the sum of `2^i` blocks.
pub(crate) struct PairwiseSum {
    /// Bit `i` set: `levels[i]` holds a sum of `2^i` blocks.
    count: usize,
    levels: [f32; usize::BITS as usize],
}

impl PairwiseSum {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        PairwiseSum {
            count: 0,
            levels: [0.0; usize::BITS as usize],
        }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, block: f32) {
        let mut sum = block;
        let mut level = 0;
        while self.count & (1 << level) != 0 {
            sum += self.levels[level];
            level += 1;
        }
        self.levels[level] = sum;
        self.count += 1;
    }

    /// Smallest partial sums first, so each joins the others near its own magnitude.
    #[inline(always)]
    pub(crate) fn total(&self) -> f32 {
        let mut total = 0.0f32;
        let mut rest = self.count;
        while rest != 0 {
            let level = rest.trailing_zeros() as usize;
            total += self.levels[level];
            rest &= rest - 1;
        }
        total
    }
}

#[inline(always)]
pub(crate) fn finish_reduce(kind: ReduceKind, sum: f32, count: usize) -> f32 {
    match kind {
        ReduceKind::Sum => sum,
        // 0/0 gives NaN for an empty row, as ATen's mean does.
        ReduceKind::Mean => sum / count as f32,
        // Extrema are no sums: `dense::reduce` computes them itself and they never fuse
        // (`fusable_reduce`), so no kernel finishes one here.
        ReduceKind::Amax | ReduceKind::Amin => sum,
    }
}
