//! Small-batch products over a weight as given: `y = x w^T` for `x` [m, k] with a few dozen
//! rows and `w` [n, k] row-major (an `nn.Linear` weight, as users pass it), computed as
//! `y^T = w x^T`.
//!
//! Why: below a batch of about 64 the other paths pay for the weight's layout on every call.
//! The `gemm` crate packs a weight given as [n, k] (or, on the transposed path, the weight is
//! transposed first), which at batch 16 costs as much as the product: a transformer MLP block
//! at batch 16 spent a quarter of its time transposing its weights (`perf`, docs/benchmarks.md).
//! Here the *input* is transposed instead ([k, m], padded to whole vectors of 16 rows: at most
//! 64 x k values, small), and the weight streams once, in its own layout, each of its values
//! broadcast into a fused multiply-add with a vector of 16 rows of `x^T`. So each weight value
//! is read once and used in one to four vector FMAs; nothing is packed.
//!
//! Numerics: every output is its products summed in order of `k` by fused multiply-adds from
//! +0.0, then the bias added once (the order and roundings of the transposed-weight kernel and
//! of the crate within one `k` block), and no output depends on any other row of the batch,
//! so the result does not depend on how a batch is cut into blocks or threads.

use crate::buffer::Buffer;
use crate::transpose::transpose_into;

/// Batches from this many rows: below it much of a 16-row vector of `x^T` is padding, and the
/// other kernels do less work (8x512 -> 512: 76 us here against 55 on the one-pass kernel;
/// 12x256 -> 256: 21 us against 32 and 24 transposing the weight; `kernel_paths`).
pub(crate) const SMALL_M_MIN_BATCH: usize = 12;
/// ... up to this many rows (four vectors of `x^T` per step, with the register tiles below).
pub(crate) const SMALL_M_MAX_BATCH: usize = 64;
/// Outputs at least this wide: a narrower output has too few weight rows for a register tile.
pub(crate) const SMALL_M_MIN_WIDTH: usize = 16;
/// Dot products longer than this: up to it the weight's transposition is cheap and the small
/// transposed-weight kernel is faster (64x32 -> 32: 1.47 us with the transposition, 1.70
/// here).
pub(crate) const SMALL_M_MIN_K: usize = 32;

/// Whether a product of these sizes over a weight as given runs [`gemm`] on this CPU.
pub fn fits(batch: usize, k: usize, n: usize) -> bool {
    available()
        && (SMALL_M_MIN_BATCH..=SMALL_M_MAX_BATCH).contains(&batch)
        && k > SMALL_M_MIN_K
        && n >= SMALL_M_MIN_WIDTH
}

fn available() -> bool {
    crate::cpu::level() == crate::cpu::Level::Avx512
}

/// `y = x w^T (+ bias)` for `x` [batch, k], `w` [n, k], `y` [batch, n], row-major; returns
/// `false` (nothing written) where [`fits`] does not hold, and the caller uses another kernel.
pub(crate) fn gemm(
    x: &[f32],
    w: &[f32],
    batch: usize,
    k: usize,
    n: usize,
    y: &mut [f32],
    bias: Option<&[f32]>,
) -> bool {
    if !fits(batch, k, n) || bias.is_some_and(|b| b.len() < n) {
        return false;
    }
    assert!(x.len() >= batch * k && w.len() >= n * k && y.len() >= batch * n);
    let vectors = batch.div_ceil(16);
    let lanes = vectors * 16;
    // x^T, [k, lanes]: row p holds x[.., p], the lanes past the batch zero (their products
    // are computed and dropped). Transposed in 8x8 register blocks (`transpose_into`); a
    // batch short of whole vectors goes through [k, batch] first.
    let mut xt = Buffer::take(k * lanes);
    let xt = xt.as_mut_slice();
    if batch == lanes {
        transpose_into(&x[..batch * k], batch, k, xt);
    } else {
        let mut compact = Buffer::take(k * batch);
        let compact = compact.as_mut_slice();
        transpose_into(&x[..batch * k], batch, k, compact);
        for (row, from) in xt.chunks_exact_mut(lanes).zip(compact.chunks_exact(batch)) {
            row[..batch].copy_from_slice(from);
            row[batch..].fill(0.0);
        }
    }
    // y^T, [n, lanes].
    let mut yt = Buffer::take(n * lanes);
    let yt = yt.as_mut_slice();
    #[cfg(target_arch = "x86_64")]
    {
        let bias = bias.map_or(std::ptr::null(), <[f32]>::as_ptr);
        // SAFETY: `available()` (in `fits`) says the CPU has AVX-512F; `xt` holds k * lanes
        // values, `yt` n * lanes, `w` n * k (asserted), `bias` n or is null.
        unsafe {
            x86::product(
                w.as_ptr(),
                xt.as_ptr(),
                yt.as_mut_ptr(),
                k,
                n,
                vectors,
                bias,
            )
        };
    }
    // y = (y^T)^T, the padding lanes dropped: [lanes, n] whose first `batch` rows are y.
    if batch == lanes {
        transpose_into(yt, n, lanes, &mut y[..batch * n]);
    } else {
        let mut whole = Buffer::take(lanes * n);
        let whole = whole.as_mut_slice();
        transpose_into(yt, n, lanes, whole);
        y[..batch * n].copy_from_slice(&whole[..batch * n]);
    }
    true
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `yt = w xt (+ bias per row of yt)`: `w` [n, k], `xt` [k, 16 * vectors], `yt`
    /// [n, 16 * vectors], in register tiles of a few weight rows by all `vectors`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F; the pointers must hold the sizes above, `bias` `n` values
    /// or be null, and `vectors` must be 1 to 4.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn product(
        w: *const f32,
        xt: *const f32,
        yt: *mut f32,
        k: usize,
        n: usize,
        vectors: usize,
        bias: *const f32,
    ) {
        // SAFETY: this function's contract, passed on.
        unsafe {
            match vectors {
                1 => rows::<8, 1>(w, xt, yt, k, n, bias),
                2 => rows::<4, 2>(w, xt, yt, k, n, bias),
                3 => rows::<3, 3>(w, xt, yt, k, n, bias),
                _ => rows::<2, 4>(w, xt, yt, k, n, bias),
            }
        }
    }

    /// Every row of `yt`: tiles of `NR` weight rows (eight accumulators or more, enough to
    /// hide the FMA latency, and few enough row pointers to stay in registers), then the
    /// rows left one at a time.
    ///
    /// # Safety
    /// As [`product`], with `MV` the number of vectors.
    #[inline(always)]
    unsafe fn rows<const NR: usize, const MV: usize>(
        w: *const f32,
        xt: *const f32,
        yt: *mut f32,
        k: usize,
        n: usize,
        bias: *const f32,
    ) {
        let mut j = 0;
        // SAFETY: the contract; every tile's rows lie below `n`.
        unsafe {
            while j + NR <= n {
                tile::<NR, MV>(w, xt, yt, k, j, bias);
                j += NR;
            }
            while j < n {
                tile::<1, MV>(w, xt, yt, k, j, bias);
                j += 1;
            }
        }
    }

    /// Rows `j..j + NR` of `yt`.
    ///
    /// # Safety
    /// As [`rows`], with `j + NR <= n`.
    #[inline(always)]
    unsafe fn tile<const NR: usize, const MV: usize>(
        w: *const f32,
        xt: *const f32,
        yt: *mut f32,
        k: usize,
        j: usize,
        bias: *const f32,
    ) {
        let lanes = 16 * MV;
        // SAFETY: the CPU has AVX-512F (contract); weight rows `j..j + NR` hold `k` values
        // each, `xt` rows `0..k` hold `lanes` values, `yt` rows `j..j + NR` hold `lanes`
        // values, and `bias` (when not null) `n > j + NR - 1` values.
        unsafe {
            let wr: [*const f32; NR] = std::array::from_fn(|i| w.add((j + i) * k));
            let mut acc = [[_mm512_setzero_ps(); MV]; NR];
            for p in 0..k {
                let xp = xt.add(p * lanes);
                let xv: [__m512; MV] = std::array::from_fn(|v| _mm512_loadu_ps(xp.add(16 * v)));
                for (acc_i, &wi) in acc.iter_mut().zip(&wr) {
                    let wv = _mm512_set1_ps(*wi.add(p));
                    for (a, &x) in acc_i.iter_mut().zip(&xv) {
                        *a = _mm512_fmadd_ps(wv, x, *a);
                    }
                }
            }
            for (i, acc_i) in acc.iter_mut().enumerate() {
                if !bias.is_null() {
                    // Added once after the whole sum; without a bias nothing is added
                    // (adding +0.0 would turn a -0.0 sum into +0.0).
                    let b = _mm512_set1_ps(*bias.add(j + i));
                    for a in acc_i.iter_mut() {
                        *a = _mm512_add_ps(*a, b);
                    }
                }
                let out = yt.add((j + i) * lanes);
                for (v, &a) in acc_i.iter().enumerate() {
                    _mm512_storeu_ps(out.add(16 * v), a);
                }
            }
        }
    }
}
