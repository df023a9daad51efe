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

/// The sum of `v`'s lanes, pairwise.
///
/// # Safety
/// The CPU must support AVX2 (every function of this module has that contract: the caller
/// checked `crate::cpu::level()`).
#[inline(always)]
unsafe fn hsum(v: __m256) -> f32 {
    // SAFETY: the CPU has AVX2 (contract); no memory is touched.
    unsafe {
        let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
        _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)))
    }
}

/// 8-lane partial dot products of the `MR` rows at `x` with the `NR` rows at `w` (rows
/// `k` apart) over columns `lo..hi`, multiples of 8: one FMA chain per pair.
///
/// # Safety
/// The CPU must support AVX2 and FMA; the `MR` rows at `x` and the `NR` rows at `w` must
/// hold at least `hi` values each.
#[inline(always)]
unsafe fn chains<const MR: usize, const NR: usize>(
    x: *const f32,
    w: *const f32,
    k: usize,
    lo: usize,
    hi: usize,
) -> [[__m256; NR]; MR] {
    // SAFETY: the CPU has AVX2 and FMA (contract); every load reads 8 values at column
    // `i < hi` (a multiple of 8 below `hi`) of a row the contract says is that long.
    unsafe {
        let mut acc = [[_mm256_setzero_ps(); NR]; MR];
        let mut i = lo;
        while i < hi {
            let mut xv = [_mm256_setzero_ps(); MR];
            for (m, v) in xv.iter_mut().enumerate() {
                *v = _mm256_loadu_ps(x.add(m * k + i));
            }
            for r in 0..NR {
                let wv = _mm256_loadu_ps(w.add(r * k + i));
                for (acc_m, &xm) in acc.iter_mut().zip(&xv) {
                    acc_m[r] = _mm256_fmadd_ps(xm, wv, acc_m[r]);
                }
            }
            i += 8;
        }
        acc
    }
}

/// Dot products of the `MR` rows at `x` with the `NR` rows at `w` (all `k` long).
/// `LONG` (rows longer than one block) is a separate instantiation of the whole kernel:
/// a run-time branch here costs the short case several percent.
///
/// # Safety
/// The CPU must support AVX2 and FMA; the `MR` rows at `x` and the `NR` rows at `w` must
/// hold `k` values each.
#[inline(always)]
unsafe fn tile<const MR: usize, const NR: usize, const LONG: bool>(
    x: *const f32,
    w: *const f32,
    k: usize,
) -> [[f32; NR]; MR] {
    // SAFETY: this function's contract is the callees' (`chains` reads columns below
    // `k / 8 * 8 <= k`).
    unsafe {
        if LONG {
            long_tile::<MR, NR>(x, w, k)
        } else {
            finish(chains::<MR, NR>(x, w, k, 0, k / 8 * 8), x, w, k)
        }
    }
}

/// [`tile`] for rows longer than one block: the blocks' partial sums combined pairwise,
/// like a binary counter (level `i` holds the sum of `2^i` blocks), which costs less
/// than recursing over halves.
///
/// # Safety
/// As [`tile`]; `k / 8 * 8 > DOT_BLOCK` (at least one block).
#[target_feature(enable = "avx2,fma")]
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
        // SAFETY: the contract of `chains` is this function's, for columns `lo..hi` within
        // the rows' `k / 8 * 8` full columns.
        let mut acc = unsafe { chains::<MR, NR>(x, w, k, lo, hi) };
        let mut level = 0;
        while count & (1 << level) != 0 {
            // SAFETY: bit `level` of `count` is set only after levels[level] is written.
            let prev = unsafe { levels[level].assume_init_ref() };
            for (acc_m, prev_m) in acc.iter_mut().zip(prev) {
                for (a, &p) in acc_m.iter_mut().zip(prev_m) {
                    *a = _mm256_add_ps(p, *a);
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
    // SAFETY: as above (`count` is not zero: at least one block).
    let mut total = unsafe { levels[rest.trailing_zeros() as usize].assume_init() };
    rest &= rest - 1;
    while rest != 0 {
        // SAFETY: as above, every set bit's level was written.
        let part = unsafe { levels[rest.trailing_zeros() as usize].assume_init_ref() };
        for (total_m, part_m) in total.iter_mut().zip(part) {
            for (t, &p) in total_m.iter_mut().zip(part_m) {
                *t = _mm256_add_ps(*t, p);
            }
        }
        rest &= rest - 1;
    }
    // SAFETY: `finish`'s contract is this function's.
    unsafe { finish(total, x, w, k) }
}

/// Horizontal sums of the 8-lane partial dot products, plus the last `k % 8` products.
///
/// # Safety
/// As [`tile`].
#[inline(always)]
unsafe fn finish<const MR: usize, const NR: usize>(
    acc: [[__m256; NR]; MR],
    x: *const f32,
    w: *const f32,
    k: usize,
) -> [[f32; NR]; MR] {
    let i = k / 8 * 8;
    let mut out = [[0.0f32; NR]; MR];
    for (m, (out_m, acc_m)) in out.iter_mut().zip(&acc).enumerate() {
        for (r, (o, &a)) in out_m.iter_mut().zip(acc_m).enumerate() {
            let mut tail = 0.0f32;
            for t in i..k {
                // SAFETY: column `t < k` of row `m < MR` of `x` and row `r < NR` of `w`,
                // which hold `k` values each (contract).
                tail = unsafe { (*x.add(m * k + t)).mul_add(*w.add(r * k + t), tail) };
            }
            // SAFETY: the CPU has AVX2 (contract).
            *o = unsafe { hsum(a) } + tail;
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
///
/// # Safety
/// The CPU must have `D`'s features; `x`, `w`, `b` and `out` must have the lengths `shape`
/// implies, and `row + MR <= shape.batch`.
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
    // SAFETY: rows `row..row + MR` of `x` ([batch, k]) exist (contract).
    let xr = unsafe { x.as_ptr().add(row * k) };
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
        // Where output `j` of row `m` of the tile goes: `dst[m].add(j)` for `j` in
        // `start..end` (the staged chunk, shifted back by `start`, or the output row).
        let dst: [*mut f32; MR] = std::array::from_fn(|m| {
            if reduce.is_some() {
                staged[m].as_mut_ptr().cast::<f32>().wrapping_sub(start)
            } else {
                // SAFETY: output row `row + m` of [batch, n] exists (contract).
                unsafe { out.as_mut_ptr().add((row + m) * n) }
            }
        });
        // CHUNK is a multiple of NR: only the row's last chunk has single columns.
        let mut j = start;
        while j + NR <= end {
            // SAFETY: weight rows `j..j + NR` of [n, k] exist (`j + NR <= end <= n`), the
            // tile's input rows too, and the CPU has `D`'s features (contract); `dst[m].add(j
            // + r)` is in `start..end` of row `m`'s destination.
            unsafe {
                let d = D::dots::<MR, NR, LONG>(xr, w.as_ptr().add(j * k), k);
                for (&dst_m, d_m) in dst.iter().zip(&d) {
                    for (r, &dot) in d_m.iter().enumerate() {
                        *dst_m.add(j + r) = element(b, shape, j + r, dot);
                    }
                }
            }
            j += NR;
        }
        while j < end {
            // SAFETY: as above, for the one weight row `j < end <= n`.
            unsafe {
                let d = D::dots::<MR, 1, LONG>(xr, w.as_ptr().add(j * k), k);
                for (&dst_m, d_m) in dst.iter().zip(&d) {
                    *dst_m.add(j) = element(b, shape, j, d_m[0]);
                }
            }
            j += 1;
        }
        if !shape.inline_activations {
            for &dst_m in &dst {
                // SAFETY: the loops above wrote dst[m][start..end], which lies in `staged`
                // or `out` and is not otherwise borrowed here.
                let chunk =
                    unsafe { std::slice::from_raw_parts_mut(dst_m.add(start), end - start) };
                for &op in shape.activations {
                    apply_in_place(op, chunk);
                }
            }
        }
        if reduce.is_some() {
            for (staged_m, reduced_m) in staged.iter().zip(&mut reduced) {
                // SAFETY: the loops above wrote staged[m][..end - start].
                let values = unsafe {
                    std::slice::from_raw_parts(staged_m.as_ptr().cast::<f32>(), end - start)
                };
                reduced_m.push(sum_pairwise(values));
            }
        }
        start = end;
    }
    if let Some(r) = reduce {
        for (m, reduced_m) in reduced.iter().enumerate() {
            out[row + m] = finish_reduce(r.kind, reduced_m.total(), n);
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
    // SAFETY: this function's contract; `LONG` is whether rows are longer than one block.
    unsafe {
        if shape.k / 8 * 8 > DOT_BLOCK {
            kernel::<true>(x, w, b, shape, out);
        } else {
            kernel::<false>(x, w, b, shape, out);
        }
    }
}

/// # Safety
/// As [`fused_linear`]; `LONG` only when `shape.k / 8 * 8 > DOT_BLOCK`.
#[inline(always)]
unsafe fn kernel<const LONG: bool>(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    // SAFETY: this function's contract is `all_rows`'s for the AVX2 dot products.
    unsafe { all_rows::<Avx2, false, LONG>(x, w, b, shape, out) };
}

/// Every output row: in tiles of 4 rows (`FOUR`, where the registers hold them), then 2,
/// then single rows against 8 output features at a time.
///
/// # Safety
/// The CPU must have `D`'s features (the caller checked `crate::cpu::level()`); `x`, `w`,
/// `b` and `out` must have the lengths `shape` implies.
#[inline(always)]
pub(crate) unsafe fn all_rows<D: Dots, const FOUR: bool, const LONG: bool>(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    let mut row = 0;
    // SAFETY: this function's contract, for tiles of rows below `shape.batch`.
    unsafe {
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
        // SAFETY: `Dots::dots`'s contract is `tile`'s (AVX2 and FMA for this provider).
        unsafe { tile::<MR, NR, LONG>(x, w, k) }
    }
}
