//! AVX-512 path of the one-pass kernel, for dot products up to [`AVX512_MAX_K`] long:
//! 16-wide chunks (the last one masked, so no scalar tail) of `MR` input rows and `NR`
//! weight rows feed `MR * NR` FMA chains, summed across lanes at the end of the tile.
//! Each lane sums at most `AVX512_MAX_K / 16` products in sequence, fewer than the AVX2
//! path's blocks; the tiles, chunking, epilogue and reduction are the AVX2 path's
//! ([`crate::linear_avx2::all_rows`]).

use std::arch::x86_64::*;

use crate::linear_avx2::{all_rows, Dots};
use crate::linear_epilogue::Shape;

/// Longest dot product this path takes (64 products per lane); longer ones take the
/// AVX2 path's blocked pairwise sums.
pub(crate) const AVX512_MAX_K: usize = 1024;

struct Avx512;

impl Dots for Avx512 {
    #[inline(always)]
    unsafe fn dots<const MR: usize, const NR: usize, const LONG: bool>(
        x: *const f32,
        w: *const f32,
        k: usize,
    ) -> [[f32; NR]; MR] {
        // SAFETY: the CPU has AVX-512F (`Dots::dots`'s contract for this provider); full
        // loads read 16 values at a column `i` with `i + 16 <= k`, the masked loads only the
        // columns `full..k`, all within rows the contract says hold `k` values.
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); NR]; MR];
            let full = k / 16 * 16;
            let mut i = 0;
            while i < full {
                let xv: [__m512; MR] = std::array::from_fn(|m| _mm512_loadu_ps(x.add(m * k + i)));
                for r in 0..NR {
                    let wv = _mm512_loadu_ps(w.add(r * k + i));
                    for (acc_m, &xm) in acc.iter_mut().zip(&xv) {
                        acc_m[r] = _mm512_fmadd_ps(xm, wv, acc_m[r]);
                    }
                }
                i += 16;
            }
            if full < k {
                // The last `k % 16` products, masked (zeros elsewhere add nothing).
                let mask = ((1u32 << (k - full)) - 1) as __mmask16;
                let xv: [__m512; MR] =
                    std::array::from_fn(|m| _mm512_maskz_loadu_ps(mask, x.add(m * k + full)));
                for r in 0..NR {
                    let wv = _mm512_maskz_loadu_ps(mask, w.add(r * k + full));
                    for (acc_m, &xm) in acc.iter_mut().zip(&xv) {
                        acc_m[r] = _mm512_fmadd_ps(xm, wv, acc_m[r]);
                    }
                }
            }
            let mut out = [[0.0f32; NR]; MR];
            for (out_m, acc_m) in out.iter_mut().zip(&acc) {
                for (o, &a) in out_m.iter_mut().zip(acc_m) {
                    *o = _mm512_reduce_add_ps(a);
                }
            }
            out
        }
    }
}

/// # Safety
/// The CPU must support AVX-512F, AVX2 and FMA (`crate::cpu::level()` is `Avx512`, checked
/// by the caller); `x`, `w`, `b` and `out` must have the lengths `shape` implies (checked by
/// the caller), and `shape.k <= AVX512_MAX_K`.
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn fused_linear(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    // SAFETY: this function's contract is `all_rows`'s for the AVX-512 dot products, whose
    // one-block sums need `k <= AVX512_MAX_K` (contract).
    unsafe { all_rows::<Avx512, true, false>(x, w, b, shape, out) };
}
