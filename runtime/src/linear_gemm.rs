//! Products through the `gemm` crate and the small transposed-weight kernel: the blocked
//! `linear` paths (the product, then bias, activations and the reduction over each output
//! row) and `matmul` over dense buffers. Transposition is `crate::transpose`'s (re-exported
//! here, where it always was).

use crate::buffer::Buffer;
use crate::error::{Result, RuntimeError};
use crate::linear_epilogue::{apply_whole_in_place, check_slices, Epilogue, LinearDims};
use crate::sum::{finish_reduce, sum_pairwise};
pub use crate::transpose::{transpose_into, transposed};

/// How the weight of a blocked `linear` is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WeightLayout {
    /// `w` as given, [n, k] row-major: the crate packs it (fast from a batch of about 16 on).
    Given,
    /// `w^T`, [k, n] row-major: what the crate's kernels stream without packing, fast at
    /// every batch above 1; worth a transposition when the weight serves several calls.
    Transposed,
}

/// `y = x w^T` ([batch, k] by the weight, `layout`) through the `gemm` crate, or the small
/// kernel; returns whether `bias` was added too (the small kernel adds it to its registers
/// before storing them: one rounding, as a separate pass gives, without that pass over
/// memory).
fn gemm_rows(
    x: &[f32],
    w: &[f32],
    layout: WeightLayout,
    dims: LinearDims,
    y: &mut [f32],
    bias: Option<&[f32]>,
) -> bool {
    let LinearDims { batch, k, n } = dims;
    if batch == 0 || n == 0 {
        return false;
    }
    if k == 0 {
        y.fill(0.0);
        return false;
    }
    if layout == WeightLayout::Transposed
        && small_t_fits(batch, k)
        && small_gemm_t(x, w, batch, k, n, y, bias)
    {
        return bias.is_some();
    }
    // A few dozen rows against a weight as given: the input is transposed instead of the
    // weight (crate::linear_small_m).
    if layout == WeightLayout::Given && crate::linear_small_m::gemm(x, w, batch, k, n, y, bias) {
        return bias.is_some();
    }
    // The k x n right operand: element (p, j) at p * rs + j * cs.
    let (rs, cs) = match layout {
        WeightLayout::Given => (1, k as isize),
        WeightLayout::Transposed => (n as isize, 1),
    };
    // SAFETY: the caller checked the lengths: x is [batch, k] row-major (row stride k), the
    // weight holds n * k values laid out as `layout` says, y is [batch, n] row-major and
    // aliases neither.
    unsafe {
        gemm::gemm(
            batch,
            n,
            k,
            y.as_mut_ptr(),
            1,
            n as isize,
            false,
            x.as_ptr(),
            1,
            k as isize,
            w.as_ptr(),
            cs,
            rs,
            0.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
    false
}

/// Batches up to this many rows against a transposed weight run [`small_gemm_t`], whose
/// fixed cost is a few nanoseconds where the crate's dispatch and blocking cost a hundred or
/// more (a Phase B layer of 4x32x32 is 4 K multiply-adds).
const SMALL_T_MAX_BATCH: usize = 8;
/// ... with dot products up to this long: each output sums its products in one sequence,
/// as the crate does within one of its `k` blocks.
const SMALL_T_MAX_K: usize = 256;
/// Dot products up to this long run [`small_gemm_t`] at any batch: its tiles then hold the
/// whole `k` extent of a weight panel in a few cache lines, where the crate's packing and
/// blocking cost more than the products (64x8 -> 512: 6.4 us on the crate).
pub(crate) const SMALL_T_ANY_BATCH_K: usize = 32;

/// Whether a product over a transposed weight runs [`small_gemm_t`] (where the CPU has it).
pub(crate) fn small_t_fits(batch: usize, k: usize) -> bool {
    k <= SMALL_T_ANY_BATCH_K || (batch <= SMALL_T_MAX_BATCH && k <= SMALL_T_MAX_K)
}

pub(crate) fn small_gemm_t_available() -> bool {
    crate::cpu::level() == crate::cpu::Level::Avx512
}

/// `y = x wt` for `x` [batch, k] and `wt` [k, n] (a transposed weight), row-major, with
/// each output's products summed in order of `k` (fused multiply-adds): register tiles of
/// up to 4 rows by 64 columns, each `wt` row loaded once per tile and broadcast values of
/// `x` multiplied into it. AVX-512 only; `false` (nothing written) where the CPU lacks it,
/// and the caller uses the crate.
fn small_gemm_t(
    x: &[f32],
    wt: &[f32],
    batch: usize,
    k: usize,
    n: usize,
    y: &mut [f32],
    bias: Option<&[f32]>,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if small_gemm_t_available() && bias.is_none_or(|b| b.len() >= n) {
            assert!(x.len() >= batch * k && wt.len() >= k * n && y.len() >= batch * n);
            let bias = bias.map_or(std::ptr::null(), <[f32]>::as_ptr);
            // SAFETY: the CPU has the feature; the lengths are checked above.
            unsafe {
                small_t_x86::gemm(x.as_ptr(), wt.as_ptr(), batch, k, n, y.as_mut_ptr(), bias)
            };
            return true;
        }
    }
    let _ = (x, wt, batch, k, n, y, bias);
    false
}

#[cfg(target_arch = "x86_64")]
mod small_t_x86 {
    use std::arch::x86_64::*;

    /// The operands of one product, row-major: `x` [batch, k], `wt` [k, n], `y` [batch, n].
    #[derive(Clone, Copy)]
    struct Operands {
        x: *const f32,
        wt: *const f32,
        y: *mut f32,
        k: usize,
        n: usize,
    }

    /// # Safety
    /// The CPU must have AVX-512F (the caller checked `crate::cpu::level()`); `x` must hold
    /// `batch * k` values, `wt` `k * n`, `y` `batch * n` (aliasing neither), and `bias` `n`
    /// or be null (no bias).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gemm(
        x: *const f32,
        wt: *const f32,
        batch: usize,
        k: usize,
        n: usize,
        y: *mut f32,
        bias: *const f32,
    ) {
        let ops = Operands { x, wt, y, k, n };
        let mut j0 = 0;
        while j0 < n {
            let cols = (n - j0).min(64);
            // SAFETY: this function's contract, with columns `j0..j0 + cols` within `n` and
            // `cols` at most 16 per vector of the instantiation.
            unsafe {
                match cols.div_ceil(16) {
                    1 => rows::<1>(ops, batch, j0, cols, bias),
                    2 => rows::<2>(ops, batch, j0, cols, bias),
                    3 => rows::<3>(ops, batch, j0, cols, bias),
                    _ => rows::<4>(ops, batch, j0, cols, bias),
                }
            }
            j0 += 64;
        }
    }

    /// Columns `j0..j0 + cols` (`NV` vectors of 16, the last one masked) of every row.
    ///
    /// # Safety
    /// As [`gemm`] for `ops`, `batch` and `bias`; `j0 + cols <= ops.n` and
    /// `cols.div_ceil(16) == NV`.
    #[inline(always)]
    unsafe fn rows<const NV: usize>(
        ops: Operands,
        batch: usize,
        j0: usize,
        cols: usize,
        bias: *const f32,
    ) {
        let masks: [__mmask16; NV] = std::array::from_fn(|v| {
            let lanes = cols.saturating_sub(16 * v).min(16);
            if lanes == 16 {
                0xFFFF
            } else {
                ((1u32 << lanes) - 1) as __mmask16
            }
        });
        // SAFETY: the CPU has AVX-512F (contract). `bias`, when not null, holds `n` values;
        // vector `v < NV` starts at column `j0 + 16 v < j0 + cols <= n` and its mask covers
        // only columns below `j0 + cols`.
        unsafe {
            // The bias of these columns, if any. Without one nothing is added (adding +0.0
            // would turn a -0.0 sum into +0.0).
            let b: Option<[__m512; NV]> = (!bias.is_null()).then(|| {
                std::array::from_fn(|v| _mm512_maskz_loadu_ps(masks[v], bias.add(j0 + 16 * v)))
            });
            let mut row = 0;
            while row + 4 <= batch {
                tile::<4, NV>(ops, j0, &masks, row, b.as_ref());
                row += 4;
            }
            while row < batch {
                tile::<1, NV>(ops, j0, &masks, row, b.as_ref());
                row += 1;
            }
        }
    }

    /// Rows `row..row + MR` of columns `j0..` (the `NV` vectors `masks` select).
    ///
    /// # Safety
    /// As [`rows`], with `row + MR <= batch` and `masks` covering only columns below
    /// `j0 + cols`.
    #[inline(always)]
    unsafe fn tile<const MR: usize, const NV: usize>(
        ops: Operands,
        j0: usize,
        masks: &[__mmask16; NV],
        row: usize,
        bias: Option<&[__m512; NV]>,
    ) {
        let Operands { x, wt, y, k, n } = ops;
        // SAFETY: the CPU has AVX-512F (contract); every pointer below addresses `x`'s rows
        // `row..row + MR` (each `k` long), `wt`'s rows `0..k` and `y`'s rows `row..row + MR`
        // at columns the masks allow, all within the lengths the contract gives.
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); NV]; MR];
            for p in 0..k {
                let wp = wt.add(p * n + j0);
                let w: [__m512; NV] =
                    std::array::from_fn(|v| _mm512_maskz_loadu_ps(masks[v], wp.add(16 * v)));
                for (m, acc_m) in acc.iter_mut().enumerate() {
                    let xv = _mm512_set1_ps(*x.add((row + m) * k + p));
                    for (a, &wv) in acc_m.iter_mut().zip(&w) {
                        *a = _mm512_fmadd_ps(xv, wv, *a);
                    }
                }
            }
            if let Some(b) = bias {
                for acc_m in &mut acc {
                    for (a, &bv) in acc_m.iter_mut().zip(b) {
                        *a = _mm512_add_ps(*a, bv);
                    }
                }
            }
            for (m, acc_m) in acc.iter().enumerate() {
                let yp = y.add((row + m) * n + j0);
                for (v, (&a, &mask)) in acc_m.iter().zip(masks).enumerate() {
                    _mm512_mask_storeu_ps(yp.add(16 * v), mask, a);
                }
            }
        }
    }
}

/// The GEMM, then bias, activations and the reduction one output row at a time.
fn blocked_rows(
    x: &[f32],
    w: &[f32],
    layout: WeightLayout,
    b: Option<&[f32]>,
    dims: LinearDims,
    epilogue: Epilogue<'_>,
    out: &mut [f32],
) {
    let LinearDims { batch, n, .. } = dims;
    let Epilogue {
        activations,
        reduce,
    } = epilogue;
    let mut scratch = None;
    let y: &mut [f32] = match reduce {
        None => out,
        Some(_) => scratch.insert(Buffer::take(batch * n)).as_mut_slice(),
    };
    let biased = gemm_rows(x, w, layout, dims, y, b);
    if n == 0 {
        if let Some(r) = reduce {
            // `y` was the scratch: `out` is free to write.
            drop(scratch);
            out.fill(finish_reduce(r.kind, 0.0, 0));
        }
        return;
    }
    if let (Some(b), false) = (b, biased) {
        for row in y.chunks_exact_mut(n) {
            row.iter_mut().zip(b).for_each(|(v, &bias)| *v += bias);
        }
    }
    // Activations over the whole output at once: with narrow rows, a call per row would
    // hardly reach the vector loop.
    for &op in activations {
        apply_whole_in_place(op, y);
    }
    if let (Some(r), Some(y)) = (reduce, scratch.as_ref()) {
        for (slot, row) in out.iter_mut().zip(y.as_slice().chunks_exact(n)) {
            *slot = finish_reduce(r.kind, sum_pairwise(row), n);
        }
    }
}

/// `y = a b` for `a` [m, k] and `b` [k, n], both row-major, through the `gemm` crate (a
/// right operand laid out this way streams without packing). The lengths must match.
pub fn matmul_into(
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
    y: &mut [f32],
) -> Result<()> {
    if a.len() != m * k || b.len() != k * n || y.len() != m * n {
        return Err(RuntimeError::Shape(format!(
            "matmul buffers do not match {m}x{k} @ {k}x{n} (a {}, b {}, y {})",
            a.len(),
            b.len(),
            y.len()
        )));
    }
    gemm_rows(
        a,
        b,
        WeightLayout::Transposed,
        LinearDims::new(m, k, n),
        y,
        None,
    );
    Ok(())
}

/// `linear` through the `gemm` crate (operands packed into cache-sized panels, AVX-512
/// microkernels where the CPU has them), then bias, activations and the reduction in one
/// pass over each output row while it is in L1. Same contract as
/// [`crate::kernels::small_fused_linear`].
pub fn blocked_fused_linear(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    dims: LinearDims,
    epilogue: Epilogue<'_>,
    out: &mut [f32],
) -> Result<()> {
    blocked_checked(x, w, WeightLayout::Given, b, dims, epilogue, out)
}

/// [`blocked_fused_linear`] with the weight already transposed (`wt` is [k, n]), so a weight
/// used by several calls is transposed once.
pub fn blocked_fused_linear_t(
    x: &[f32],
    wt: &[f32],
    b: Option<&[f32]>,
    dims: LinearDims,
    epilogue: Epilogue<'_>,
    out: &mut [f32],
) -> Result<()> {
    blocked_checked(x, wt, WeightLayout::Transposed, b, dims, epilogue, out)
}

/// The blocked path after checking the slices against `dims`.
fn blocked_checked(
    x: &[f32],
    w: &[f32],
    layout: WeightLayout,
    b: Option<&[f32]>,
    dims: LinearDims,
    epilogue: Epilogue<'_>,
    out: &mut [f32],
) -> Result<()> {
    check_slices(x, w, b, dims, epilogue.reduce, out)?;
    blocked_rows(x, w, layout, b, dims, epilogue, out);
    Ok(())
}
