//! Dense float32 values of rank 0 to 2 and the kernels the executor runs on them without
//! going through ATen.
//!
//! On the small tensors of a scoring loop, an ATen op costs about a microsecond of dispatch,
//! type promotion and allocation, while its arithmetic takes tens of nanoseconds. The executor
//! therefore keeps float32 values as plain buffers ([`F32`]) and computes elementwise ops,
//! broadcasts, reductions, softmax, argmax and small matrix products here; what these kernels
//! do not cover (large `log`, large GEMMs, other dtypes) goes to ATen over a
//! zero-copy view, and its result comes back as a buffer again.
//!
//! Buffers come from a per-thread pool ([`Buffer`]) and go back to it when their value dies,
//! so a loop that replaces its hidden state every iteration reuses two buffers and a call in
//! steady state allocates nothing but its result tensor.
//!
//! Numerics follow eager's: elementwise arithmetic and broadcasts are IEEE-exact like ATen's;
//! reductions sum blockwise and pairwise (as `kernels` does); transcendental functions are
//! the C library's, within a few ulps of ATen's vectorized ones (docs/parity.md).

use rextio_ir::{BagMode, BinaryOp, ParamUnaryOp, ReduceKind, TensorScalarOp, UnaryOp};
use tch::{Device, Kind, Tensor};

use crate::error::{Result, RuntimeError};
use crate::linear_cost::{parallel_threads, row_block, PAR_MIN_ELEMENTS};
use crate::sum::{finish_reduce, sum_pairwise, PairwiseSum};
use crate::vmath::{self, Func};

// Buffers and views live in `buffer`, the matmul limit with the cost model; they are part of
// this module's public API as they always were.
pub use crate::buffer::{Buffer, Dims, Handle, TensorRef, F32};
pub use crate::linear_cost::SMALL_MATMUL_MACS;
/// The unary ops' slice loop and where it applies, with the rest of their numerics
/// ([`crate::unary`]); `unary_slice` is what the exhaustive sweep runs
/// (`cargo run -p rextio-runtime --example sweep`).
pub use crate::unary::{
    slice as unary_slice, supported as unary_supported, SCALAR_TRANSCENDENTAL_MAX,
};

/// Contiguous softmax rows shorter than this are exponentiated all together in one pass
/// (per row, the vector loop would hardly start).
const SHORT_SOFTMAX_ROW: usize = 64;
/// Rows summed in sequence per partial when reducing over dim 0; partials combine pairwise.
const COLUMN_BLOCK: usize = 32;

/// `op` over `x`, as a new value.
pub fn unary(op: UnaryOp, x: &F32) -> F32 {
    let dims = x.dims();
    let mut out = Buffer::take(dims.len());
    unary_slice(op, x.data(), out.as_mut_slice());
    F32::Pooled(out, dims)
}

/// `x op s` with `s` a Python scalar already cast to float32, as eager computes it on CPU
/// (`TensorScalarOp::apply`: `s - x` is `s - x`, `s / x` is `(1 / x) * s`). One loop per op,
/// so each vectorizes without a branch inside; IEEE operations only, so every instruction
/// set gives the same bits.
pub fn tensor_scalar(op: TensorScalarOp, x: &F32, s: f32) -> F32 {
    let dims = x.dims();
    let mut out = Buffer::take(dims.len());
    let dst = out.as_mut_slice();
    macro_rules! each {
        ($op:expr) => {
            dst.iter_mut()
                .zip(x.data())
                .for_each(|(d, &a)| *d = $op.apply(a, s))
        };
    }
    match op {
        TensorScalarOp::Add => each!(TensorScalarOp::Add),
        TensorScalarOp::Sub => each!(TensorScalarOp::Sub),
        TensorScalarOp::Mul => each!(TensorScalarOp::Mul),
        TensorScalarOp::Div => each!(TensorScalarOp::Div),
        TensorScalarOp::RSub => each!(TensorScalarOp::RSub),
        TensorScalarOp::RDiv => each!(TensorScalarOp::RDiv),
    }
    F32::Pooled(out, dims)
}

/// `op(x, a[, b])` with the parameters already cast to float32 (and, for the clamps, not
/// NaN: a NaN bound is ATen's), as eager's CPU loops compute each element
/// ([`ParamUnaryOp::apply`]: compares, selects and one product, so the vector and scalar
/// loops agree and every instruction set gives the same bits); `None` for ELU, which only
/// ATen computes. One loop per op, so each vectorizes without a branch on the op inside.
pub fn param_unary(op: ParamUnaryOp, x: &F32, a: f32, b: f32) -> Option<F32> {
    if op == ParamUnaryOp::Elu {
        return None;
    }
    let dims = x.dims();
    let mut out = Buffer::take(dims.len());
    let dst = out.as_mut_slice();
    macro_rules! each {
        ($op:expr) => {
            dst.iter_mut()
                .zip(x.data())
                .for_each(|(d, &v)| *d = $op.apply(v, a, b).unwrap_or(v))
        };
    }
    match op {
        ParamUnaryOp::LeakyRelu => each!(ParamUnaryOp::LeakyRelu),
        ParamUnaryOp::Hardtanh => each!(ParamUnaryOp::Hardtanh),
        ParamUnaryOp::Clamp => each!(ParamUnaryOp::Clamp),
        ParamUnaryOp::ClampMin => each!(ParamUnaryOp::ClampMin),
        ParamUnaryOp::ClampMax => each!(ParamUnaryOp::ClampMax),
        ParamUnaryOp::Elu => return None,
    }
    Some(F32::Pooled(out, dims))
}

/// The broadcast shape of two dense shapes, as eager computes it; `None` where they do not
/// broadcast (the caller lets ATen raise its error).
pub fn broadcast(a: Dims, b: Dims) -> Option<Dims> {
    let rank = a.rank.max(b.rank);
    let [ar, ac] = a.as_matrix();
    let [br, bc] = b.as_matrix();
    let join = |x: usize, y: usize| match (x, y) {
        _ if x == y => Some(x),
        (1, y) => Some(y),
        (x, 1) => Some(x),
        _ => None,
    };
    let cols = join(ac, bc)?;
    let rows = join(ar, br)?;
    Some(match rank {
        0 => Dims::scalar(),
        1 => Dims::vector(cols),
        _ => Dims::matrix(rows, cols),
    })
}

#[inline(always)]
fn apply(op: BinaryOp, a: f32, b: f32) -> f32 {
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
    }
}

/// `a op b` with broadcasting over `out` (from [`broadcast`]).
pub fn binary(op: BinaryOp, a: &F32, b: &F32, out_dims: Dims) -> F32 {
    let mut out = Buffer::take(out_dims.len());
    let [rows, cols] = out_dims.as_matrix();
    let [ar, ac] = a.dims().as_matrix();
    let [br, bc] = b.dims().as_matrix();
    let (x, y) = (a.data(), b.data());
    let dst = out.as_mut_slice();
    if rows > 0 && cols > 0 {
        for (r, row) in dst.chunks_exact_mut(cols).enumerate() {
            let xr = &x[if ar == 1 { 0 } else { r * ac }..][..ac];
            let yr = &y[if br == 1 { 0 } else { r * bc }..][..bc];
            binary_row(op, xr, yr, row);
        }
    }
    F32::Pooled(out, out_dims)
}

/// `torch.cat(parts, dim)` of dense float32 values of one rank (1 or 2), `dim` one of theirs,
/// the other dim equal: each output row is the parts' rows one after another (dim 1), or the
/// parts' rows in turn (dim 0). A copy, so the values are eager's bits. `None` where ATen must
/// answer: ranks that differ (ATen's legacy skip of a 1-D empty part), a dim out of range, or
/// sizes that do not fit (eager's error).
pub fn cat(parts: &[&F32], dim: usize) -> Option<F32> {
    let first = parts.first()?.dims();
    let rank = first.rank();
    if !(1..=2).contains(&rank) || dim >= rank {
        return None;
    }
    if parts.iter().any(|p| p.dims().rank() != rank) {
        return None;
    }
    // As matrices: a vector is one row; the joined dim is the columns (dim 1, or a vector's
    // dim 0) or the rows (dim 0 of a matrix).
    let shape = |p: &F32| p.dims().as_matrix();
    let by_columns = rank == 1 || dim == 1;
    let rows = shape(parts[0])[0];
    let cols = shape(parts[0])[1];
    let (dims, out_rows, out_cols) = if by_columns {
        if parts.iter().any(|p| shape(p)[0] != rows) {
            return None;
        }
        let width: usize = parts.iter().map(|p| shape(p)[1]).sum();
        let dims = if rank == 1 {
            Dims::vector(width)
        } else {
            Dims::matrix(rows, width)
        };
        (dims, rows, width)
    } else {
        if parts.iter().any(|p| shape(p)[1] != cols) {
            return None;
        }
        let height: usize = parts.iter().map(|p| shape(p)[0]).sum();
        (Dims::matrix(height, cols), height, cols)
    };
    let mut out = Buffer::take(out_rows * out_cols);
    let dst = out.as_mut_slice();
    if by_columns {
        let mut at = 0;
        for p in parts {
            let w = shape(p)[1];
            if w > 0 {
                for (r, src) in p.data().chunks_exact(w).enumerate() {
                    dst[r * out_cols + at..][..w].copy_from_slice(src);
                }
            }
            at += w;
        }
    } else {
        let mut at = 0;
        for p in parts {
            let data = p.data();
            dst[at..at + data.len()].copy_from_slice(data);
            at += data.len();
        }
    }
    Some(F32::Pooled(out, dims))
}

/// Lanes of the float64 sums of [`layer_norm_rows`]: independent accumulators, so the sums
/// vectorize (a single running sum is one dependent addition per element).
const NORM_LANES: usize = 8;

/// The float64 sum of `f(v)` over `row`, in [`NORM_LANES`] lanes then across them.
fn lane_sum(row: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0f64; NORM_LANES];
    let chunks = row.chunks_exact(NORM_LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (a, &v) in acc.iter_mut().zip(chunk) {
            *a += f(f64::from(v));
        }
    }
    for (a, &v) in acc.iter_mut().zip(rest) {
        *a += f(f64::from(v));
    }
    acc.iter().sum()
}

/// `layer_norm` of each row of `x` (a [rows, k] matrix, k > 0) over its k elements, then
/// `* weight + bias` where given (vectors of k): a fused op's row normalization. The mean
/// and the biased variance are float64 sums (two passes, so the variance is never negative),
/// `rstd = 1 / sqrt(var + eps)` with `eps` rounded to float32 first as ATen's float32 kernel
/// has it, and each element `(x - mean) * rstd * w + b` is computed in float64 and rounded
/// once. ATen's float32 moments (Welford's updates, cascaded by vector width) differ by
/// a few float32 ulps of the row's magnitude; a row holding a NaN or an infinity is NaN
/// throughout, as eager's is. Rows with magnitudes near float32's square root of its range
/// (about 1e19) overflow ATen's float32 moments, not these, so there eager's and ours
/// differ (docs/parity.md).
pub fn layer_norm_rows(x: &F32, weight: Option<&F32>, bias: Option<&F32>, eps: f64) -> F32 {
    let dims = x.dims();
    let [_, k] = dims.as_matrix();
    let mut out = Buffer::take(dims.len());
    let eps = f64::from(eps as f32);
    let n = k as f64;
    for (row, y) in x
        .data()
        .chunks_exact(k)
        .zip(out.as_mut_slice().chunks_exact_mut(k))
    {
        let mean = lane_sum(row, |v| v) / n;
        let var = lane_sum(row, |v| (v - mean) * (v - mean)) / n;
        let rstd = 1.0 / (var + eps).sqrt();
        match (weight, bias) {
            (Some(w), Some(b)) => {
                for (((y, &v), &w), &b) in y.iter_mut().zip(row).zip(w.data()).zip(b.data()) {
                    *y = ((f64::from(v) - mean) * rstd * f64::from(w) + f64::from(b)) as f32;
                }
            }
            _ => {
                for (y, &v) in y.iter_mut().zip(row) {
                    *y = ((f64::from(v) - mean) * rstd) as f32;
                }
            }
        }
    }
    F32::Pooled(out, dims)
}

/// `dst += r`, elementwise over equal lengths: a fused op's residual on its product, in
/// place. IEEE addition is commutative (only a NaN's payload may depend on the order, and
/// NaN payloads are not part of any result's contract), so `r + y` and `y + r` both land
/// here.
pub fn add_in_place(dst: &mut [f32], r: &[f32]) {
    dst.iter_mut().zip(r).for_each(|(d, &v)| *d += v);
}

/// `x` (a [rows, k] matrix) with `steps` applied in order (`x = x op v`, each `v` a [k]
/// vector broadcast over rows) into one buffer: a fused op's prologue. Each step is the IEEE
/// operation [`binary`] performs, so the bits are the unfused ops'. Up to
/// [`PROLOGUE_ROW_STEPS`] steps run row by row (each row stays in L1 across its steps),
/// any further ones over the whole buffer.
pub fn prologue<'a>(x: &F32, steps: impl Iterator<Item = (BinaryOp, &'a F32)>) -> F32 {
    let dims = x.dims();
    let [_, k] = dims.as_matrix();
    let mut out = Buffer::take(dims.len());
    let dst = out.as_mut_slice();
    dst.copy_from_slice(x.data());
    if k == 0 {
        return F32::Pooled(out, dims);
    }
    let mut first: [(BinaryOp, &[f32]); PROLOGUE_ROW_STEPS] =
        [(BinaryOp::Add, &[]); PROLOGUE_ROW_STEPS];
    let mut count = 0;
    let mut steps = steps;
    for (op, v) in steps.by_ref().take(PROLOGUE_ROW_STEPS) {
        first[count] = (op, &v.data()[..k.min(v.data().len())]);
        count += 1;
    }
    rows_in_place(dst, k, &first[..count]);
    for (op, v) in steps {
        rows_in_place(dst, k, &[(op, &v.data()[..k.min(v.data().len())])]);
    }
    F32::Pooled(out, dims)
}

/// `embedding_bag(ids, weight, offsets, mode)` in `sum` or `mean` mode over a dense float32
/// table: each bag's rows added in the order of its ids, from +0.0, then for `mean` divided by
/// the bag's length (an empty bag is zeros). That is ATen's order and rounding (its fbgemm
/// kernel), so the result is eager's bit for bit (tests/python/test_layers.py compares them
/// on random bags, NaN, infinities and signed zeros), without ATen's dispatch and its
/// offsets-to-bags pass, which cost more than the sums on a batch of a few documents.
///
/// `None` where ATen must answer: `max` mode, ids or offsets that are not contiguous int64
/// CPU vectors, a table that is not a matrix, offsets that do not start at 0, decrease or
/// pass the ids, and ids out of range (ATen's errors, and the checks `ops::embedding_bag`
/// adds to them).
pub fn embedding_bag(weight: &F32, ids: &Tensor, offsets: &Tensor, mode: BagMode) -> Option<F32> {
    let dims = weight.dims();
    if mode == BagMode::Max || dims.rank() != 2 {
        return None;
    }
    let [rows, dim] = dims.as_matrix();
    let (ids, starts) = (int64_vector(ids)?, int64_vector(offsets)?);
    if ids.len().saturating_mul(dim) > DENSE_BAG_MAX_VALUES {
        return None;
    }
    let in_order = starts.first() == Some(&0)
        && starts.windows(2).all(|pair| pair[0] <= pair[1])
        && starts
            .last()
            .is_some_and(|&last| last as usize <= ids.len());
    let in_range = ids.iter().all(|&id| (0..rows as i64).contains(&id));
    if !in_order || !in_range {
        return None;
    }
    let mut out = Buffer::take(starts.len() * dim);
    bags(
        out.as_mut_slice(),
        weight.data(),
        dim,
        ids,
        starts,
        mode == BagMode::Mean,
    );
    Some(F32::Pooled(out, Dims::matrix(starts.len(), dim)))
}

/// The bags of [`embedding_bag`] (ids and offsets checked) into `dst`, compiled for the
/// widest vectors the CPU has: additions and one division per value, IEEE-exact at any width.
fn bags(dst: &mut [f32], table: &[f32], dim: usize, ids: &[i64], starts: &[i64], mean: bool) {
    match crate::cpu::level() {
        #[cfg(target_arch = "x86_64")]
        crate::cpu::Level::Avx512 => {
            // SAFETY: the level is AVX-512 only where the CPU has AVX-512F and AVX2
            // (`crate::cpu`), the function's target features; it has no other requirement.
            unsafe { x86::bags_avx512(dst, table, dim, ids, starts, mean) }
        }
        #[cfg(target_arch = "x86_64")]
        crate::cpu::Level::Avx2 => {
            // SAFETY: the level is AVX2 only where the CPU has AVX2 (`crate::cpu`); the
            // function has no other requirement.
            unsafe { x86::bags_avx2(dst, table, dim, ids, starts, mean) }
        }
        _ => bags_body(dst, table, dim, ids, starts, mean),
    }
}

#[inline(always)]
fn bags_body(dst: &mut [f32], table: &[f32], dim: usize, ids: &[i64], starts: &[i64], mean: bool) {
    for (bag, row) in dst
        .chunks_exact_mut(dim.max(1))
        .enumerate()
        .take(starts.len())
    {
        let start = starts[bag] as usize;
        let end = starts.get(bag + 1).map_or(ids.len(), |&e| e as usize);
        row.fill(0.0);
        for (i, &id) in ids.iter().enumerate().take(end).skip(start) {
            // The rows are gathered from anywhere in a table often larger than L2: ask for
            // the row BAG_PREFETCH ids ahead while this one is summed, as fbgemm does.
            if let Some(&next) = ids.get(i + BAG_PREFETCH) {
                prefetch_row(&table[next as usize * dim..(next as usize + 1) * dim]);
            }
            let from = &table[id as usize * dim..(id as usize + 1) * dim];
            row.iter_mut().zip(from).for_each(|(acc, &v)| *acc += v);
        }
        if mean && end > start {
            let len = (end - start) as f32;
            row.iter_mut().for_each(|v| *v /= len);
        }
    }
}

/// Bags gathering more table values than this go to ATen: its fbgemm kernel gathers rows
/// from a large table faster (about 10 ns per 64-value row against 14.5 here: 256 documents of
/// 32 tokens from a 20,000 x 64 table, 120 us against 139), while below it ATen's fixed cost
/// (dispatch, the offsets-to-bags pass: about 20 us) dominates (16 documents: 11 us here
/// against 32-36 through ATen). Measured on the models benchmark's text classifier.
const DENSE_BAG_MAX_VALUES: usize = 1 << 17;

/// How many ids ahead `embedding_bag` prefetches a table row (fbgemm's default distance).
const BAG_PREFETCH: usize = 16;

/// Asks the CPU to bring `row`'s cache lines in (a hint: it never faults, and does nothing
/// where the target has no prefetch instruction).
#[inline(always)]
fn prefetch_row(row: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for line in row.chunks(16) {
        // SAFETY: SSE is part of x86-64; a prefetch reads nothing architecturally and the
        // address is inside `row`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// The values of a contiguous int64 CPU vector, in place.
fn int64_vector(t: &Tensor) -> Option<&[i64]> {
    let ok = t.f_kind().ok() == Some(Kind::Int64)
        && t.device() == Device::Cpu
        && t.dim() == 1
        && t.is_contiguous();
    if !ok {
        return None;
    }
    let len = t.numel();
    if len == 0 {
        return Some(&[]);
    }
    // SAFETY: a contiguous int64 CPU tensor of `len` elements holds them at its data pointer,
    // and the borrow of `t` keeps the tensor (and so its storage) alive for the slice's life.
    Some(unsafe { std::slice::from_raw_parts(t.data_ptr() as *const i64, len) })
}

/// Prologue steps applied to each row before the next row.
const PROLOGUE_ROW_STEPS: usize = 4;

/// `row = row op v` for every step and every `k`-long row of `dst`, compiled for the widest
/// vectors the CPU has: an IEEE operation gives the same bits at any width, and at SSE
/// width the divisions of `(x - mean) / scale` cost about a cycle per element.
fn rows_in_place(dst: &mut [f32], k: usize, steps: &[(BinaryOp, &[f32])]) {
    match crate::cpu::level() {
        #[cfg(target_arch = "x86_64")]
        crate::cpu::Level::Avx512 => {
            // SAFETY: the level is AVX-512 only where the CPU has AVX-512F, DQ, AVX2 and FMA
            // (`crate::cpu`), a superset of the function's target features; it has no other
            // requirement.
            unsafe { x86::rows_in_place_avx512(dst, k, steps) }
        }
        #[cfg(target_arch = "x86_64")]
        crate::cpu::Level::Avx2 => {
            // SAFETY: the level is AVX2 only where the CPU has AVX2 and FMA (`crate::cpu`), a
            // superset of the function's target features; it has no other requirement.
            unsafe { x86::rows_in_place_avx2(dst, k, steps) }
        }
        _ => rows_in_place_body(dst, k, steps),
    }
}

/// Short rows are processed this many elements at a time (whole rows), against operands
/// repeated to that length: a loop per 32-element row and step cost more than its divisions.
const PROLOGUE_BLOCK: usize = 256;

#[inline(always)]
fn rows_in_place_body(dst: &mut [f32], k: usize, steps: &[(BinaryOp, &[f32])]) {
    let apply = |op: BinaryOp, data: &mut [f32], v: &[f32]| {
        let pairs = data.iter_mut().zip(v);
        match op {
            BinaryOp::Add => pairs.for_each(|(a, &b)| *a += b),
            BinaryOp::Sub => pairs.for_each(|(a, &b)| *a -= b),
            BinaryOp::Mul => pairs.for_each(|(a, &b)| *a *= b),
            BinaryOp::Div => pairs.for_each(|(a, &b)| *a /= b),
        }
    };
    // Worth its set-up (the repeated operands) from 8 rows on.
    let repeat = (PROLOGUE_BLOCK / k).min(dst.len() / k);
    if repeat < 8 || steps.len() > PROLOGUE_ROW_STEPS || steps.iter().any(|(_, v)| v.len() < k) {
        for row in dst.chunks_exact_mut(k) {
            for &(op, v) in steps {
                apply(op, row, v);
            }
        }
        return;
    }
    // Each operand repeated over `repeat` rows, so that one loop covers them all.
    let block = repeat * k;
    let mut repeated = [[0.0f32; PROLOGUE_BLOCK]; PROLOGUE_ROW_STEPS];
    for (pattern, &(_, v)) in repeated.iter_mut().zip(steps) {
        for copy in pattern[..block].chunks_exact_mut(k) {
            copy.copy_from_slice(&v[..k]);
        }
    }
    for rows in dst.chunks_mut(block) {
        for (pattern, &(op, _)) in repeated.iter().zip(steps) {
            apply(op, rows, &pattern[..rows.len()]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;

    /// # Safety
    /// The CPU must have AVX-512F and AVX2 (`crate::cpu::level()` is `Avx512`).
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn rows_in_place_avx512(
        dst: &mut [f32],
        k: usize,
        steps: &[(BinaryOp, &[f32])],
    ) {
        rows_in_place_body(dst, k, steps)
    }

    /// # Safety
    /// The CPU must have AVX-512F and AVX2 (`crate::cpu::level()` is `Avx512`).
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn bags_avx512(
        dst: &mut [f32],
        table: &[f32],
        dim: usize,
        ids: &[i64],
        starts: &[i64],
        mean: bool,
    ) {
        bags_body(dst, table, dim, ids, starts, mean)
    }

    /// # Safety
    /// The CPU must have AVX2 (`crate::cpu::level()` is at least `Avx2`).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn bags_avx2(
        dst: &mut [f32],
        table: &[f32],
        dim: usize,
        ids: &[i64],
        starts: &[i64],
        mean: bool,
    ) {
        bags_body(dst, table, dim, ids, starts, mean)
    }

    /// # Safety
    /// The CPU must have AVX2 (`crate::cpu::level()` is at least `Avx2`).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn rows_in_place_avx2(
        dst: &mut [f32],
        k: usize,
        steps: &[(BinaryOp, &[f32])],
    ) {
        rows_in_place_body(dst, k, steps)
    }
}

/// One output row; each operand row is full length or one element (broadcast).
#[inline(always)]
fn binary_row(op: BinaryOp, x: &[f32], y: &[f32], dst: &mut [f32]) {
    macro_rules! rows {
        ($f:expr) => {
            match (x.len() == dst.len(), y.len() == dst.len()) {
                (true, true) => dst
                    .iter_mut()
                    .zip(x.iter().zip(y))
                    .for_each(|(d, (&a, &b))| *d = $f(a, b)),
                (true, false) => {
                    let b = y[0];
                    dst.iter_mut().zip(x).for_each(|(d, &a)| *d = $f(a, b))
                }
                (false, true) => {
                    let a = x[0];
                    dst.iter_mut().zip(y).for_each(|(d, &b)| *d = $f(a, b))
                }
                (false, false) => {
                    let v = $f(x[0], y[0]);
                    dst.fill(v)
                }
            }
        };
    }
    // A loop per op, so each vectorizes without a branch inside.
    match op {
        BinaryOp::Add => rows!(|a, b| apply(BinaryOp::Add, a, b)),
        BinaryOp::Sub => rows!(|a, b| apply(BinaryOp::Sub, a, b)),
        BinaryOp::Mul => rows!(|a, b| apply(BinaryOp::Mul, a, b)),
        BinaryOp::Div => rows!(|a, b| apply(BinaryOp::Div, a, b)),
    }
}

/// The shape `reduce` over `dim` gives (dim below the rank).
pub fn reduced_dims(dims: Dims, dim: usize, keepdim: bool) -> Dims {
    match (dims.rank(), dim, keepdim) {
        (1, _, true) => Dims::vector(1),
        (1, _, false) => Dims::scalar(),
        (_, 0, true) => Dims::matrix(1, dims.dim(1)),
        (_, 0, false) => Dims::vector(dims.dim(1)),
        (_, _, true) => Dims::matrix(dims.dim(0), 1),
        (_, _, false) => Dims::vector(dims.dim(0)),
    }
}

/// Whether [`reduce`] computes `kind`: sums and means. The extrema `amax`/`amin` go to ATen,
/// whose vectorized loops decide which of `0.0` and `-0.0` a line of both gives (by lane and
/// vector width); ATen's own loop is the one way to give eager's bits there.
pub fn reduce_supported(kind: ReduceKind, _x: &F32, _dim: u8) -> bool {
    matches!(kind, ReduceKind::Mean | ReduceKind::Sum)
}

/// Sum or mean of `x` over `dim` (below its rank, which is 1 or 2); `kind` is one that
/// [`reduce_supported`] admits.
pub fn reduce(kind: ReduceKind, x: &F32, dim: usize, keepdim: bool) -> F32 {
    debug_assert!(matches!(kind, ReduceKind::Mean | ReduceKind::Sum));
    let dims = x.dims();
    let out_dims = reduced_dims(dims, dim, keepdim);
    let mut out = Buffer::take(out_dims.len());
    let src = x.data();
    let dst = out.as_mut_slice();
    if dims.rank() == 1 {
        dst[0] = finish_reduce(kind, sum_pairwise(src), src.len());
    } else if dim == 1 {
        let (rows, cols) = (dims.dim(0), dims.dim(1));
        if cols == 0 {
            dst.fill(finish_reduce(kind, 0.0, 0));
        } else {
            for (slot, row) in dst.iter_mut().zip(src.chunks_exact(cols)).take(rows) {
                *slot = finish_reduce(kind, sum_pairwise(row), cols);
            }
        }
    } else {
        let (rows, cols) = (dims.dim(0), dims.dim(1));
        column_sums(src, rows, cols, dst);
        for v in dst.iter_mut() {
            *v = finish_reduce(kind, *v, rows);
        }
    }
    F32::Pooled(out, out_dims)
}

/// Sums of the columns of `src` ([rows, cols]) into `dst`: blocks of rows in sequence
/// (vectorized over columns), block partials combined pairwise.
fn column_sums(src: &[f32], rows: usize, cols: usize, dst: &mut [f32]) {
    if rows <= COLUMN_BLOCK {
        dst.fill(0.0);
        for row in src.chunks_exact(cols.max(1)).take(rows) {
            dst.iter_mut().zip(row).for_each(|(d, &v)| *d += v);
        }
        if rows == 0 {
            dst.fill(0.0);
        }
        return;
    }
    let half = rows.div_ceil(COLUMN_BLOCK) / 2 * COLUMN_BLOCK;
    let half = half.clamp(1, rows - 1);
    column_sums(&src[..half * cols], half, cols, dst);
    let mut rest = Buffer::take(cols);
    column_sums(&src[half * cols..], rows - half, cols, rest.as_mut_slice());
    dst.iter_mut()
        .zip(rest.as_slice())
        .for_each(|(d, &v)| *d += v);
}

/// The lines along `dim` of a rank-1 or rank-2 shape: (count, length, start step, stride).
fn lines(dims: Dims, dim: usize) -> (usize, usize, usize, usize) {
    if dims.rank() == 1 {
        (1, dims.dim(0), 0, 1)
    } else if dim == 1 {
        (dims.dim(0), dims.dim(1), dims.dim(1), 1)
    } else {
        (dims.dim(1), dims.dim(0), 1, dims.dim(1))
    }
}

/// Lanes of the row loops below: independent maxima, so that the loop is not one chain of
/// dependent compares (a scalar loop took 2 ns per element, most of a softmax's time).
const ROW_LANES: usize = 16;

/// Whether `row` holds a NaN, with every element read (a vectorizable or-reduction).
fn has_nan(row: &[f32]) -> bool {
    let mut lanes = [false; ROW_LANES];
    let chunks = row.chunks_exact(ROW_LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (flag, v) in lanes.iter_mut().zip(chunk) {
            *flag |= v.is_nan();
        }
    }
    lanes.iter().any(|flag| *flag) || tail.iter().any(|v| v.is_nan())
}

/// The maximum of a contiguous row as a sequential scan finds it: the first NaN if there is
/// one, else the largest value (`-inf` for an empty row). Which of `0.0` and `-0.0` it
/// returns on a tie may differ from a scan; softmax subtracts it, where both give one bit
/// pattern of `exp`.
fn row_max(row: &[f32]) -> f32 {
    if has_nan(row) {
        return row.iter().copied().find(|v| v.is_nan()).unwrap_or(f32::NAN);
    }
    let mut lanes = [f32::NEG_INFINITY; ROW_LANES];
    let chunks = row.chunks_exact(ROW_LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (max, &v) in lanes.iter_mut().zip(chunk) {
            *max = if v > *max { v } else { *max };
        }
    }
    let max = lanes
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, |a, b| if b > a { b } else { a });
    tail.iter()
        .copied()
        .fold(max, |a, b| if b > a { b } else { a })
}

/// The index `argmax` gives for a non-empty contiguous row: the first NaN if there is one,
/// else the first occurrence of the largest value (ties, `0.0` and `-0.0` included, go to
/// the smaller index, as in a sequential scan).
fn row_argmax(row: &[f32]) -> usize {
    if has_nan(row) {
        return row.iter().position(|v| v.is_nan()).unwrap_or(0);
    }
    if row.len() > u32::MAX as usize {
        return row
            .iter()
            .enumerate()
            .fold(
                (0, row[0]),
                |(bi, bv), (i, &v)| {
                    if v > bv {
                        (i, v)
                    } else {
                        (bi, bv)
                    }
                },
            )
            .0;
    }
    let mut max = [f32::NEG_INFINITY; ROW_LANES];
    // Each lane's first index of its maximum; a lane that saw only -inf keeps u32::MAX.
    let mut at = [u32::MAX; ROW_LANES];
    let chunks = row.chunks_exact(ROW_LANES);
    let tail_start = row.len() - chunks.remainder().len();
    for (c, chunk) in chunks.enumerate() {
        let base = (c * ROW_LANES) as u32;
        for l in 0..ROW_LANES {
            let v = chunk[l];
            let better = v > max[l];
            max[l] = if better { v } else { max[l] };
            at[l] = if better { base + l as u32 } else { at[l] };
        }
    }
    let (mut best, mut best_at) = (f32::NEG_INFINITY, u32::MAX);
    for l in 0..ROW_LANES {
        if max[l] > best || (max[l] == best && at[l] < best_at) {
            (best, best_at) = (max[l], at[l]);
        }
    }
    for (i, &v) in row.iter().enumerate().skip(tail_start) {
        if v > best {
            (best, best_at) = (v, i as u32);
        }
    }
    // An all -inf row: its first element.
    if best_at == u32::MAX {
        0
    } else {
        best_at as usize
    }
}

/// Softmax along `dim` as ATen computes it: subtract the line's maximum (NaN if the line has
/// one), exponentiate, multiply by the reciprocal of the sum.
pub fn softmax(x: &F32, dim: usize) -> F32 {
    let dims = x.dims();
    let mut out = Buffer::take(dims.len());
    let src = x.data();
    let dst = out.as_mut_slice();
    let (count, len, step, stride) = lines(dims, dim);
    if stride == 1 {
        dst.copy_from_slice(src);
        softmax_rows_in_place(dst, count, len);
        return F32::Pooled(out, dims);
    }
    // Strided lines (softmax over dim 0).
    let line_max = |line: usize| {
        let mut max = f32::NEG_INFINITY;
        for i in 0..len {
            let v = src[line * step + i * stride];
            if v > max || v.is_nan() {
                max = v;
                if v.is_nan() {
                    break;
                }
            }
        }
        max
    };
    for line in 0..count {
        let max = line_max(line);
        // A strided line (softmax over dim 0): gathered, exponentiated by the vector loop,
        // scattered back.
        let mut sum = 0.0f32;
        let mut chunk = [0.0f32; 64];
        let mut start = 0;
        while start < len {
            let end = len.min(start + chunk.len());
            let part = &mut chunk[..end - start];
            for (i, v) in part.iter_mut().enumerate() {
                *v = src[line * step + (start + i) * stride] - max;
            }
            vmath::map_in_place(Func::Exp, part);
            for (i, &e) in part.iter().enumerate() {
                dst[line * step + (start + i) * stride] = e;
                sum += e;
            }
            start = end;
        }
        let scale = 1.0 / sum;
        for i in 0..len {
            dst[line * step + i * stride] *= scale;
        }
    }
    F32::Pooled(out, dims)
}

/// Softmax of each `len`-long row of `data` (`rows` of them), in place: a fused op's tail
/// and [`softmax`]'s contiguous case. Short rows (a classifier's 8 logits) are shifted by
/// their maxima, exponentiated all together in one vectorized pass, then summed and scaled
/// per row; longer rows one at a time.
///
/// From `PAR_MIN_ELEMENTS` elements on, blocks of rows (decided by the sizes alone) run on
/// up to `torch.get_num_threads()` threads (`crate::par`); each row is one block's.
pub fn softmax_rows_in_place(data: &mut [f32], rows: usize, len: usize) {
    each_row_block(data, rows, len, |rows_of| softmax_rows(rows_of, len));
}

/// `each` over whole rows of `data` (`rows` rows of `len`): at once below
/// `PAR_MIN_ELEMENTS` elements, else over blocks of rows (decided by the sizes alone) on up to
/// `torch.get_num_threads()` threads (`crate::par`).
fn each_row_block(data: &mut [f32], rows: usize, len: usize, each: impl Fn(&mut [f32]) + Sync) {
    if len == 0 || rows == 0 {
        return;
    }
    let data = &mut data[..rows * len];
    let elements = rows * len;
    if elements >= PAR_MIN_ELEMENTS {
        let block = row_block(len);
        let threads = parallel_threads(elements, PAR_MIN_ELEMENTS, rows.div_ceil(block));
        crate::par::for_each_block(data, block * len, threads, |_, rows_of| each(rows_of));
    } else {
        each(data);
    }
}

/// [`softmax_rows_in_place`] on one thread over whole rows of `data`.
fn softmax_rows(data: &mut [f32], len: usize) {
    if len < SHORT_SOFTMAX_ROW {
        for row in data.chunks_exact_mut(len) {
            let max = row_max(row);
            row.iter_mut().for_each(|v| *v -= max);
        }
        vmath::map_in_place(Func::Exp, data);
        for row in data.chunks_exact_mut(len) {
            let scale = 1.0 / sum_pairwise(row);
            row.iter_mut().for_each(|v| *v *= scale);
        }
        return;
    }
    for row in data.chunks_exact_mut(len) {
        let max = row_max(row);
        let scale = 1.0 / vmath::shifted_exp_sum_in_place(row, max);
        row.iter_mut().for_each(|v| *v *= scale);
    }
}

/// log_softmax along `dim` as ATen computes it: `x - max - log(sum(exp(x - max)))` per line
/// (the maximum NaN if the line has one, so a line with a NaN, or with `inf`, or all `-inf`,
/// is all NaN). The sum and the `log` round differently from ATen's vectorized ones, so a
/// value may differ from eager's by a few ulps of `log(sum)` (docs/parity.md).
pub fn log_softmax(x: &F32, dim: usize) -> F32 {
    let dims = x.dims();
    let mut out = Buffer::take(dims.len());
    let src = x.data();
    let dst = out.as_mut_slice();
    let (count, len, step, stride) = lines(dims, dim);
    if stride == 1 {
        dst.copy_from_slice(src);
        log_softmax_rows_in_place(dst, count, len);
        return F32::Pooled(out, dims);
    }
    // Strided lines (over dim 0): each gathered into a row, computed, scattered back.
    let mut line = Buffer::take(len);
    let row = line.as_mut_slice();
    for at in 0..count {
        for (i, v) in row.iter_mut().enumerate() {
            *v = src[at * step + i * stride];
        }
        log_softmax_row(row);
        for (i, &v) in row.iter().enumerate() {
            dst[at * step + i * stride] = v;
        }
    }
    F32::Pooled(out, dims)
}

/// log_softmax of each `len`-long row of `data` (`rows` of them), in place: a fused op's
/// tail and [`log_softmax`]'s contiguous case; rows in blocks on threads as in
/// [`softmax_rows_in_place`].
pub fn log_softmax_rows_in_place(data: &mut [f32], rows: usize, len: usize) {
    each_row_block(data, rows, len, |rows_of| {
        rows_of.chunks_exact_mut(len).for_each(log_softmax_row)
    });
}

/// One row of log_softmax in place: its maximum, the sum of `exp(x - max)` (in a scratch
/// copy, by softmax's vector loop), then `(x - max) - log(sum)` as ATen's loop subtracts.
fn log_softmax_row(row: &mut [f32]) {
    let max = row_max(row);
    let mut scratch = [0.0f32; 256];
    let mut sum = PairwiseSum::new();
    for chunk in row.chunks(scratch.len()) {
        let part = &mut scratch[..chunk.len()];
        part.copy_from_slice(chunk);
        sum.push(vmath::shifted_exp_sum_in_place(part, max));
    }
    let total = sum.total();
    let log_sum = total.ln();
    row.iter_mut().for_each(|v| *v = (*v - max) - log_sum);
}

/// Argmax along `dim` as ATen computes it (the first maximum; the first NaN if there is one),
/// as a fresh int64 tensor.
pub fn argmax(x: &F32, dim: usize, keepdim: bool) -> Result<Tensor> {
    let dims = x.dims();
    let (count, len, step, stride) = lines(dims, dim);
    if len == 0 {
        // Eager's words and exception (`IndexError`) for a reduction over an empty dim.
        return Err(RuntimeError::Index(format!(
            "argmax(): Expected reduction dim {dim} to have non-zero size."
        )));
    }
    let out_dims = reduced_dims(dims, dim, keepdim);
    let shape = out_dims.shape();
    let out = Tensor::f_empty(&shape[..out_dims.rank()], (Kind::Int64, Device::Cpu))?;
    // SAFETY: `out` is a fresh contiguous int64 tensor of `count` elements.
    let dst = unsafe { std::slice::from_raw_parts_mut(out.data_ptr() as *mut i64, count) };
    let src = x.data();
    for (line, slot) in dst.iter_mut().enumerate() {
        if stride == 1 {
            *slot = row_argmax(&src[line * step..][..len]) as i64;
            continue;
        }
        let at = |i: usize| line * step + i * stride;
        let mut best = 0;
        let mut max = src[at(0)];
        if !max.is_nan() {
            for i in 1..len {
                let v = src[at(i)];
                if v.is_nan() {
                    best = i;
                    break;
                }
                if v > max {
                    max = v;
                    best = i;
                }
            }
        }
        *slot = best as i64;
    }
    Ok(out)
}

/// Whether [`matmul`] computes `a @ b` ([m, k] or [k] by [k, n]) here: not where
/// `CostModel::libtorch_product` hands the product to libtorch (dot products longer than
/// `kernels::BLOCKED_MAX_K`, and wide products where libtorch's GEMM is the faster), as for
/// `linear`.
pub fn matmul_supported(a: Dims, b: Dims) -> bool {
    let [m, k] = a.as_matrix();
    a.rank() >= 1
        && b.rank() == 2
        && b.dim(0) == k
        && !crate::kernels::COST_MODEL.libtorch_product(m, k, b.dim(1))
}

/// `a @ b` for the shapes [`matmul_supported`] accepts. Small products: rows of `b` scaled
/// and added in order of `k`, vectorized over the output columns; from
/// [`SMALL_MATMUL_MACS`] on, the `gemm` crate (`b` is already laid out as it streams best).
pub fn matmul(a: &F32, b: &F32) -> F32 {
    let [m, k] = a.dims().as_matrix();
    let n = b.dims().dim(1);
    let out_dims = if a.dims().rank() == 1 {
        Dims::vector(n)
    } else {
        Dims::matrix(m, n)
    };
    let mut out = Buffer::take(m * n);
    let (x, w) = (a.data(), b.data());
    let dst = out.as_mut_slice();
    if m.saturating_mul(k).saturating_mul(n) > SMALL_MATMUL_MACS {
        // The lengths come from the dims just read, so this cannot fail.
        let _ = crate::kernels::matmul_into(x, w, m, k, n, dst);
    } else if n > 0 {
        for (i, row) in dst.chunks_exact_mut(n).enumerate() {
            row.fill(0.0);
            for p in 0..k {
                let s = x[i * k + p];
                let wr = &w[p * n..][..n];
                row.iter_mut().zip(wr).for_each(|(d, &v)| *d += s * v);
            }
        }
    }
    F32::Pooled(out, out_dims)
}
