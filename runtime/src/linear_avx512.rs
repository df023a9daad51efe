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
    #[allow(clippy::needless_range_loop)] // indices address the x, w and acc tiles together
    unsafe fn dots<const MR: usize, const NR: usize, const LONG: bool>(
        x: *const f32,
        w: *const f32,
        k: usize,
    ) -> [[f32; NR]; MR] {
        let mut acc = [[_mm512_setzero_ps(); NR]; MR];
        let full = k / 16 * 16;
        let mut i = 0;
        while i < full {
            let xv: [__m512; MR] = std::array::from_fn(|m| _mm512_loadu_ps(x.add(m * k + i)));
            for r in 0..NR {
                let wv = _mm512_loadu_ps(w.add(r * k + i));
                for m in 0..MR {
                    acc[m][r] = _mm512_fmadd_ps(xv[m], wv, acc[m][r]);
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
                for m in 0..MR {
                    acc[m][r] = _mm512_fmadd_ps(xv[m], wv, acc[m][r]);
                }
            }
        }
        let mut out = [[0.0f32; NR]; MR];
        for m in 0..MR {
            for r in 0..NR {
                out[m][r] = _mm512_reduce_add_ps(acc[m][r]);
            }
        }
        out
    }
}

/// # Safety
/// The CPU must support AVX-512F, AVX2 and FMA; `x`, `w`, `b` and `out` must have the
/// lengths `shape` implies (checked by the caller), and `shape.k <= AVX512_MAX_K`.
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn fused_linear(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    out: &mut [f32],
) {
    all_rows::<Avx512, true, false>(x, w, b, shape, out);
}
