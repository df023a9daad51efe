//! Matrix transposition over float32 slices: AVX2 8x8 register blocks where the CPU has them,
//! tiles of scalar moves otherwise and for the edges. The blocked `linear` paths transpose a
//! weight for the crate to stream, the small-batch kernel transposes its input and output.

use crate::buffer::Buffer;

/// Tile edge of the portable [`transpose_into`]: a tile's rows and columns stay in L1.
const TRANSPOSE_TILE: usize = 16;

/// Source columns per block of [`transposed_on`]: each block writes that many whole
/// destination rows (a contiguous part of the result), a multiple of the 8x8 register blocks.
const PAR_COLS: usize = 64;

/// `w^T` for `w` of [rows, cols] row-major, in a pooled buffer.
pub fn transposed(w: &[f32], rows: usize, cols: usize) -> Buffer {
    let mut wt = Buffer::take(rows * cols);
    transpose_into(w, rows, cols, wt.as_mut_slice());
    wt
}

/// [`transposed`] on up to `threads` threads ([`crate::par`]), in blocks of [`PAR_COLS`]
/// source columns: the parallel `linear` paths transpose their weight this way rather than
/// on the calling thread alone. A copy: the result is the same at every thread count.
pub fn transposed_on(w: &[f32], rows: usize, cols: usize, threads: usize) -> Buffer {
    assert!(w.len() >= rows * cols);
    let mut wt = Buffer::take(rows * cols);
    if threads <= 1 || rows == 0 {
        transpose_into(w, rows, cols, wt.as_mut_slice());
        return wt;
    }
    crate::par::for_each_block(wt.as_mut_slice(), PAR_COLS * rows, threads, |i, part| {
        let first = i * PAR_COLS;
        transpose_strided(&w[first..], rows, part.len() / rows, cols, part);
    });
    wt
}

/// `wt = w^T` for `w` of [rows, cols] row-major: 8x8 blocks in AVX registers where the CPU
/// has AVX2, tiles of scalar moves otherwise (and for the edges).
pub fn transpose_into(w: &[f32], rows: usize, cols: usize, wt: &mut [f32]) {
    transpose_strided(w, rows, cols, cols, wt);
}

/// `wt = w^T` for the [rows, cols] matrix whose row `r` starts at `w[r * stride]`.
fn transpose_strided(w: &[f32], rows: usize, cols: usize, stride: usize, wt: &mut [f32]) {
    assert!(stride >= cols && wt.len() >= rows * cols);
    assert!(rows == 0 || w.len() >= (rows - 1) * stride + cols);
    let mut done = (0, 0);
    #[cfg(target_arch = "x86_64")]
    {
        if crate::cpu::level() >= crate::cpu::Level::Avx2 {
            // SAFETY: the CPU has AVX2 (`level` is never above what it has); `w` holds the
            // strided rows and `wt` rows * cols values (asserted).
            unsafe { avx2::transpose_blocks(w, rows, cols, stride, wt) };
            done = (rows / 8 * 8, cols / 8 * 8);
        }
    }
    let (rows8, cols8) = done;
    // What the blocks did not cover: the right-hand columns of their rows, then the bottom
    // rows (all of it when there were no blocks).
    transpose_tiles(w, rows, stride, 0..rows8, cols8..cols, wt);
    transpose_tiles(w, rows, stride, rows8..rows, 0..cols, wt);
}

/// `wt[c][r] = w[r * stride + c]` for `r` in `rows_of`, `c` in `cols_of`, in tiles.
fn transpose_tiles(
    w: &[f32],
    rows: usize,
    stride: usize,
    rows_of: std::ops::Range<usize>,
    cols_of: std::ops::Range<usize>,
    wt: &mut [f32],
) {
    for r0 in rows_of.clone().step_by(TRANSPOSE_TILE) {
        for c0 in cols_of.clone().step_by(TRANSPOSE_TILE) {
            for r in r0..(r0 + TRANSPOSE_TILE).min(rows_of.end) {
                for c in c0..(c0 + TRANSPOSE_TILE).min(cols_of.end) {
                    wt[c * rows + r] = w[r * stride + c];
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// The full 8x8 blocks of `w` ([rows, cols], row `r` at `w[r * stride]`) transposed into
    /// `wt` ([cols, rows]).
    ///
    /// # Safety
    /// The CPU must support AVX2; `w` must hold `(rows - 1) * stride + cols` values and `wt`
    /// `rows * cols`, with `stride >= cols`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn transpose_blocks(
        w: &[f32],
        rows: usize,
        cols: usize,
        stride: usize,
        wt: &mut [f32],
    ) {
        // In tiles of 64 source rows by 8 source columns: each tile writes 8 whole
        // destination rows of 64 values (4 full cache lines each) while its source lines stay
        // in L1 for the next tile. Walking whole rows wrote every destination line in halves
        // far apart in time; square tiles of 32 put 32 destination rows 2 KiB apart into two
        // L1 sets. Measured with `cargo run --release -p rextio-runtime --example
        // transpose_speed`: 0.04-0.14 ns per element on every shape there, where whole rows
        // took up to 0.64 (512x128).
        const TILE_ROWS: usize = 64;
        const TILE_COLS: usize = 8;
        let (rows8, cols8) = (rows / 8 * 8, cols / 8 * 8);
        for tr in (0..rows8).step_by(TILE_ROWS) {
            for tc in (0..cols8).step_by(TILE_COLS) {
                // SAFETY: this function's contract; the ranges hold whole 8x8 blocks inside
                // the `rows` x `cols` source.
                unsafe {
                    block_tile(
                        w,
                        rows,
                        stride,
                        wt,
                        tr..rows8.min(tr + TILE_ROWS),
                        tc..cols8.min(tc + TILE_COLS),
                    )
                };
            }
        }
    }

    /// The 8x8 blocks of one tile of [`transpose_blocks`].
    ///
    /// # Safety
    /// As [`transpose_blocks`], and the ranges must hold whole 8x8 blocks within the `rows` x
    /// `cols` source (multiples of 8 up to `rows / 8 * 8` and `cols / 8 * 8`).
    #[inline(always)]
    unsafe fn block_tile(
        w: &[f32],
        rows: usize,
        stride: usize,
        wt: &mut [f32],
        row_range: std::ops::Range<usize>,
        col_range: std::ops::Range<usize>,
    ) {
        for r0 in row_range.step_by(8) {
            for c0 in col_range.clone().step_by(8) {
                // SAFETY: the CPU has AVX2 (contract); the block's 8 source rows of 8 values
                // start at `r0 * stride + c0` and its 8 destination rows at `c0 * rows + r0`,
                // inside both slices for a whole block within the source (contract).
                unsafe {
                    let p = w.as_ptr().add(r0 * stride + c0);
                    let r: [__m256; 8] =
                        std::array::from_fn(|i| _mm256_loadu_ps(p.add(i * stride)));
                    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
                    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
                    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
                    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
                    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
                    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
                    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
                    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
                    let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
                    let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
                    let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
                    let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
                    let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
                    let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
                    let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
                    let s7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
                    let out = [
                        _mm256_permute2f128_ps::<0x20>(s0, s4),
                        _mm256_permute2f128_ps::<0x20>(s1, s5),
                        _mm256_permute2f128_ps::<0x20>(s2, s6),
                        _mm256_permute2f128_ps::<0x20>(s3, s7),
                        _mm256_permute2f128_ps::<0x31>(s0, s4),
                        _mm256_permute2f128_ps::<0x31>(s1, s5),
                        _mm256_permute2f128_ps::<0x31>(s2, s6),
                        _mm256_permute2f128_ps::<0x31>(s3, s7),
                    ];
                    let q = wt.as_mut_ptr().add(c0 * rows + r0);
                    for (j, v) in out.into_iter().enumerate() {
                        _mm256_storeu_ps(q.add(j * rows), v);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_of_transposing_gives_the_transpose() {
        for (rows, cols) in [
            (0, 5),
            (1, 1),
            (3, 70),
            (8, 64),
            (17, 129),
            (64, 200),
            (130, 9),
        ] {
            let w: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
            let expected: Vec<f32> = (0..cols)
                .flat_map(|c| (0..rows).map(move |r| (r * cols + c) as f32))
                .collect();
            let mut wt = vec![f32::NAN; rows * cols];
            transpose_into(&w, rows, cols, &mut wt);
            assert_eq!(wt, expected, "{rows}x{cols}");
            for threads in 1..=3 {
                let on = transposed_on(&w, rows, cols, threads);
                assert_eq!(
                    on.as_slice(),
                    expected.as_slice(),
                    "{rows}x{cols} on {threads}"
                );
            }
        }
    }
}
