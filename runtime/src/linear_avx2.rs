//! AVX2+FMA path. Register tiles of `MR` batch rows x `NR` output features: each 8-wide
//! chunk of the `MR` input rows and `NR` weight rows is loaded once and feeds `MR * NR`
//! independent FMA chains. Two-row tiles (2 x 4) for batches, one-row tiles (1 x 8) for
//! the last odd row and batch 1. Along `k` the chains run over blocks of `DOT_BLOCK`,
//! whose partial sums are combined pairwise (see [`crate::kernels`] on accuracy).
//! The AVX-512 path ([`crate::linear_avx512`]) runs the same tiles over its own dot
//! products ([`Dots`]).

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use crate::linear_epilogue::{apply_in_place, element, Shape};
use crate::sum::{finish_reduce, sum_pairwise, PairwiseSum};

/// Inner-dimension elements a dot product of the AVX2 kernel sums in its FMA registers
/// before the block partials are combined pairwise (32 additions per lane). Problems with
/// `k` up to this size (all Phase A cells) run the unblocked loop. Above it every block
/// costs a merge of partial sums: smaller blocks cost more time, larger ones let the error
/// grow towards that of sequential sums (runtime/tests/accuracy.rs holds it to eager's).
const DOT_BLOCK: usize = 256;

#[inline(always)]
unsafe fn hsum(v: __m256) -> f32 {
    let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
    _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)))
}

/// 8-lane partial dot products of the `MR` rows at `x` with the `NR` rows at `w` (rows
/// `k` apart) over columns `lo..hi`, multiples of 8: one FMA chain per pair.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indices address the x, w and acc tiles together
unsafe fn chains<const MR: usize, const NR: usize>(
    x: *const f32,
    w: *const f32,
    k: usize,
    lo: usize,
    hi: usize,
) -> [[__m256; NR]; MR] {
    let mut acc = [[_mm256_setzero_ps(); NR]; MR];
    let mut i = lo;
    while i < hi {
        let mut xv = [_mm256_setzero_ps(); MR];
        for (m, v) in xv.iter_mut().enumerate() {
            *v = _mm256_loadu_ps(x.add(m * k + i));
        }
        for r in 0..NR {
            let wv = _mm256_loadu_ps(w.add(r * k + i));
            for m in 0..MR {
                acc[m][r] = _mm256_fmadd_ps(xv[m], wv, acc[m][r]);
            }
        }
        i += 8;
    }
    acc
}

/// Dot products of the `MR` rows at `x` with the `NR` rows at `w` (all `k` long).
/// `LONG` (rows longer than one block) is a separate instantiation of the whole kernel:
/// a run-time branch here costs the short case several percent.
#[inline(always)]
unsafe fn tile<const MR: usize, const NR: usize, const LONG: bool>(
    x: *const f32,
    w: *const f32,
    k: usize,
) -> [[f32; NR]; MR] {
    if LONG {
        long_tile::<MR, NR>(x, w, k)
    } else {
        finish(chains::<MR, NR>(x, w, k, 0, k / 8 * 8), x, w, k)
    }
}

/// [`tile`] for rows longer than one block: the blocks' partial sums combined pairwise,
/// like a binary counter (level `i` holds the sum of `2^i` blocks), which costs less
/// than recursing over halves.
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::needless_range_loop)] // indices address the tiles of partial sums together
unsafe fn long_tile<const MR: usize, const NR: usize>(
    x: *const f32,
    w: *const f32,
    k: usize,
) -> [[f32; NR]; MR] {
    let full = k / 8 * 8;
    // 2^LEVELS blocks are more than any row: no bound check needed beyond the index's.
    const LEVELS: usize = usize::BITS as usize;
    let mut levels = [const { MaybeUninit::<[[__m256; NR]; MR]>::uninit() }; LEVELS];
    let mut count = 0usize;
    let mut lo = 0;
    while lo < full {
        let hi = full.min(lo + DOT_BLOCK);
        let mut acc = chains::<MR, NR>(x, w, k, lo, hi);
        let mut level = 0;
        while count & (1 << level) != 0 {
            // SAFETY: bit `level` of `count` is set only after levels[level] is written.
            let prev = levels[level].assume_init_ref();
            for m in 0..MR {
                for r in 0..NR {
                    acc[m][r] = _mm256_add_ps(prev[m][r], acc[m][r]);
                }
            }
            level += 1;
        }
        levels[level].write(acc);
        count += 1;
        lo = hi;
    }
    // Smallest partial sums first (there is at least one block: k > DOT_BLOCK).
    let mut rest = count;
    // SAFETY: as above.
    let mut total = levels[rest.trailing_zeros() as usize].assume_init();
    rest &= rest - 1;
    while rest != 0 {
        // SAFETY: as above, every set bit's level was written.
        let part = levels[rest.trailing_zeros() as usize].assume_init_ref();
        for m in 0..MR {
            for r in 0..NR {
                total[m][r] = _mm256_add_ps(total[m][r], part[m][r]);
            }
        }
        rest &= rest - 1;
    }
    finish(total, x, w, k)
}

/// Horizontal sums of the 8-lane partial dot products, plus the last `k % 8` products.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indices address the x, w and acc tiles together
unsafe fn finish<const MR: usize, const NR: usize>(
    acc: [[__m256; NR]; MR],
    x: *const f32,
    w: *const f32,
    k: usize,
) -> [[f32; NR]; MR] {
    let i = k / 8 * 8;
    let mut out = [[0.0f32; NR]; MR];
    for m in 0..MR {
        for r in 0..NR {
            let mut tail = 0.0f32;
            for t in i..k {
                tail = (*x.add(m * k + t)).mul_add(*w.add(r * k + t), tail);
            }
            out[m][r] = hsum(acc[m][r]) + tail;
        }
    }
    out
}

/// Output features the reduction stages before summing them (per row, on the stack).
const CHUNK: usize = 256;

/// Rows `row..row + MR` of the output (or of the reduction). A reduced row is computed
/// in chunks of [`CHUNK`] outputs written to a stack buffer, each chunk summed like the
/// GEMM path's rows (vectorized, pairwise) and the chunk sums combined pairwise: as
/// cheap per output as storing it, where a pairwise running sum inside the tile loop
/// cost 10-30% of the small cells' time.
#[inline(always)]
unsafe fn rows<D: Dots, const MR: usize, const NR: usize, const LONG: bool>(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    row: usize,
    out: &mut [f32],
) {
    let Shape { k, n, reduce, .. } = *shape;
    let xr = x.as_ptr().add(row * k);
    let mut staged = [[MaybeUninit::<f32>::uninit(); CHUNK]; MR];
    let mut reduced: [PairwiseSum; MR] = std::array::from_fn(|_| PairwiseSum::new());
    let mut start = 0;
    while start < n {
        // Without a reduction the whole row is one chunk, written straight to `out`.
        let end = if reduce.is_some() {
            n.min(start + CHUNK)
        } else {
            n
        };
        let dst: [*mut f32; MR] = std::array::from_fn(|m| {
            if reduce.is_some() {
                staged[m].as_mut_ptr().cast::<f32>().wrapping_sub(start)
            } else {
                out.as_mut_ptr().add((row + m) * n)
            }
        });
        // CHUNK is a multiple of NR: only the row's last chunk has single columns.
        let mut j = start;
        while j + NR <= end {
            let d = D::dots::<MR, NR, LONG>(xr, w.as_ptr().add(j * k), k);
            for m in 0..MR {
                for (r, &dot) in d[m].iter().enumerate() {
                    *dst[m].add(j + r) = element(b, shape, j + r, dot);
                }
            }
            j += NR;
        }
        while j < end {
            let d = D::dots::<MR, 1, LONG>(xr, w.as_ptr().add(j * k), k);
            for m in 0..MR {
                *dst[m].add(j) = element(b, shape, j, d[m][0]);
            }
            j += 1;
        }
        if !shape.inline_activations {
            for m in 0..MR {
                // SAFETY: the loops above wrote dst[m][start..end].
                let chunk = std::slice::from_raw_parts_mut(dst[m].add(start), end - start);
                for &op in shape.activations {
                    apply_in_place(op, chunk);
                }
            }
        }
        if reduce.is_some() {
            for m in 0..MR {
                // SAFETY: the loops above wrote staged[m][..end - start].
                let values =
                    std::slice::from_raw_parts(staged[m].as_ptr().cast::<f32>(), end - start);
                reduced[m].push(sum_pairwise(values));
            }
        }
        start = end;
    }
    if let Some(r) = reduce {
        for m in 0..MR {
            out[row + m] = finish_reduce(r.kind, reduced[m].total(), n);
        }
    }
}

/// # Safety
/// The CPU must support AVX2 and FMA; `x`, `w`, `b` and `out` must have the lengths
/// `shape` implies (checked by the caller).
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn fused_linear(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    if shape.k / 8 * 8 > DOT_BLOCK {
        kernel::<true>(x, w, b, shape, out);
    } else {
        kernel::<false>(x, w, b, shape, out);
    }
}

#[inline(always)]
unsafe fn kernel<const LONG: bool>(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    all_rows::<Avx2, false, LONG>(x, w, b, shape, out);
}

/// Every output row: in tiles of 4 rows (`FOUR`, where the registers hold them), then 2,
/// then single rows against 8 output features at a time.
#[inline(always)]
pub(crate) unsafe fn all_rows<D: Dots, const FOUR: bool, const LONG: bool>(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    let mut row = 0;
    while FOUR && row + 4 <= shape.batch {
        rows::<D, 4, 4, LONG>(x, w, b, shape, row, out);
        row += 4;
    }
    while row + 2 <= shape.batch {
        rows::<D, 2, 4, LONG>(x, w, b, shape, row, out);
        row += 2;
    }
    while row < shape.batch {
        rows::<D, 1, 8, LONG>(x, w, b, shape, row, out);
        row += 1;
    }
}

/// Dot products of a register tile: the `MR` rows at `x` with the `NR` rows at `w`, all
/// `k` long. [`rows`] is written once over it; each instruction set gives its own.
pub(crate) trait Dots {
    /// # Safety
    /// The rows must hold `k` values each (rows `k` apart), and the CPU must have the
    /// provider's features (the caller is compiled with them).
    unsafe fn dots<const MR: usize, const NR: usize, const LONG: bool>(
        x: *const f32,
        w: *const f32,
        k: usize,
    ) -> [[f32; NR]; MR];
}

struct Avx2;

impl Dots for Avx2 {
    #[inline(always)]
    unsafe fn dots<const MR: usize, const NR: usize, const LONG: bool>(
        x: *const f32,
        w: *const f32,
        k: usize,
    ) -> [[f32; NR]; MR] {
        tile::<MR, NR, LONG>(x, w, k)
    }
}
