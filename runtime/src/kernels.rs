//! Fused CPU kernels for `fused_linear`: `linear` followed by elementwise activations and an
//! optional reduction over the output features, computed without intermediate tensors.
//!
//! Kernel choice happens per call, from the concrete sizes (annotations give only ranks):
//! small problems run [`small_fused_linear`], one pass over the inputs with register-blocked
//! dot products and the epilogue applied in registers; large ones call libtorch's GEMM and
//! then run the epilogue in one pass over its result ([`GEMM_CROSSOVER_MACS`]).

use rextio_ir::{FusedReduce, ReduceKind, UnaryOp};
use tch::{Device, Kind, Tensor};

use crate::error::{Result, RuntimeError};

/// From this many multiply-adds (`batch * in * out`) on, libtorch's GEMM plus our epilogue
/// beats the one-pass kernel. Measured with `cargo bench -p rextio-benches` (see
/// docs/benchmarks.md): one-pass wins at 16x128x64 (131 K: ~10 us vs ~17 us), GEMM wins at
/// 64x128x64 (524 K: ~29 us vs ~47 us).
pub const GEMM_CROSSOVER_MACS: usize = 1 << 18;

/// Independent accumulators per dot product in the portable path: enough to hide add
/// latency, and a multiple of common SIMD widths so the loop vectorizes.
const LANES: usize = 8;

/// Which way a call went, for benches and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelPath {
    SmallFused,
    GemmThenEpilogue,
    OpByOp,
}

/// Sizes of one `fused_linear` call, checked against each other.
#[derive(Clone, Copy, Debug)]
struct LinearDims {
    batch: usize,
    in_features: usize,
    out_features: usize,
}

fn check_f32_cpu(t: &Tensor, what: &str, rank: usize) -> Result<()> {
    let kind = t.f_kind()?;
    if kind != Kind::Float {
        return Err(RuntimeError::Shape(format!(
            "{what} must be float32, got {kind:?}"
        )));
    }
    if t.device() != Device::Cpu {
        return Err(RuntimeError::Shape(format!("{what} must be on the CPU")));
    }
    if t.dim() != rank {
        return Err(RuntimeError::Shape(format!(
            "{what} must have rank {rank}, got rank {}",
            t.dim()
        )));
    }
    Ok(())
}

fn linear_dims(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<LinearDims> {
    check_f32_cpu(x, "linear input", 2)?;
    check_f32_cpu(w, "linear weight", 2)?;
    let (batch, in_features) = x.size2()?;
    let (out_features, weight_in) = w.size2()?;
    if weight_in != in_features {
        // Same words as eager PyTorch, so users see one message whichever path ran.
        return Err(RuntimeError::Shape(format!(
            "mat1 and mat2 shapes cannot be multiplied ({batch}x{in_features} and {weight_in}x{out_features})"
        )));
    }
    if let Some(b) = b {
        check_f32_cpu(b, "linear bias", 1)?;
        let bias_len = b.size1()?;
        if bias_len != out_features {
            return Err(RuntimeError::Shape(format!(
                "linear bias has {bias_len} elements but the weight has {out_features} output features"
            )));
        }
    }
    let to_usize =
        |v: i64| usize::try_from(v).map_err(|_| RuntimeError::Shape(format!("negative size {v}")));
    Ok(LinearDims {
        batch: to_usize(batch)?,
        in_features: to_usize(in_features)?,
        out_features: to_usize(out_features)?,
    })
}

/// `t` itself when it is contiguous (no new handle: this is on every small call's path),
/// else a contiguous copy.
enum Contiguous<'a> {
    Borrowed(&'a Tensor),
    Copied(Tensor),
}

impl<'a> Contiguous<'a> {
    fn of(t: &'a Tensor) -> Result<Contiguous<'a>> {
        if t.is_contiguous() {
            Ok(Contiguous::Borrowed(t))
        } else {
            Ok(Contiguous::Copied(t.f_contiguous()?))
        }
    }

    fn tensor(&self) -> &Tensor {
        match self {
            Contiguous::Borrowed(t) => t,
            Contiguous::Copied(t) => t,
        }
    }
}

/// The `len` elements of `t`. `len` comes from sizes the caller already checked: asking the
/// tensor (`numel`) costs an allocation and an FFI call on every small call.
///
/// # Safety
/// `t` must be a contiguous float32 CPU tensor of exactly `len` elements that outlives the
/// returned slice and is not written while the slice lives.
unsafe fn f32_slice(t: &Tensor, len: usize) -> &[f32] {
    if len == 0 {
        return &[];
    }
    std::slice::from_raw_parts(t.data_ptr() as *const f32, len)
}

/// # Safety
/// As [`f32_slice`], and no other reference to the data may exist.
unsafe fn f32_slice_mut(t: &mut Tensor, len: usize) -> &mut [f32] {
    if len == 0 {
        return &mut [];
    }
    std::slice::from_raw_parts_mut(t.data_ptr() as *mut f32, len)
}

/// Whether the scalar epilogue reproduces this activation exactly as ATen computes it
/// (bit-exact or within the documented 1e-6 relative tolerance). GELU needs erf, which std
/// lacks; it stays on ATen.
pub fn scalar_activation_supported(op: UnaryOp) -> bool {
    !matches!(op, UnaryOp::Gelu)
}

#[inline(always)]
fn activate(op: UnaryOp, v: f32) -> f32 {
    match op {
        // `v < 0` keeps NaN and -0.0 as ATen's relu does.
        UnaryOp::Relu => {
            if v < 0.0 {
                0.0
            } else {
                v
            }
        }
        UnaryOp::Sigmoid => 1.0 / (1.0 + (-v).exp()),
        UnaryOp::Tanh => v.tanh(),
        UnaryOp::Abs => v.abs(),
        UnaryOp::Neg => -v,
        UnaryOp::Square => v * v,
        UnaryOp::Exp => v.exp(),
        UnaryOp::Log => v.ln(),
        UnaryOp::Sqrt => v.sqrt(),
        // Unreachable by construction (see scalar_activation_supported); keep the value.
        UnaryOp::Gelu => v,
    }
}

#[inline(always)]
fn activate_all(activations: &[UnaryOp], mut v: f32) -> f32 {
    for &op in activations {
        v = activate(op, v);
    }
    v
}

/// Computes `linear(x, w, b)` then `activations`, then `reduce`, choosing the kernel from the
/// sizes. Inputs are never written.
pub fn fused_linear(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Tensor> {
    fused_linear_with_path(x, w, b, activations, reduce).map(|(t, _)| t)
}

pub fn fused_linear_with_path(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<(Tensor, KernelPath)> {
    let dims = linear_dims(x, w, b)?;
    if let Some(r) = reduce {
        if r.dim != 1 {
            return Err(RuntimeError::Unsupported(format!(
                "fused_linear reduces only over dim 1, got dim {}",
                r.dim
            )));
        }
    }
    if !activations
        .iter()
        .all(|&op| scalar_activation_supported(op))
    {
        return op_by_op(x, w, b, activations, reduce).map(|t| (t, KernelPath::OpByOp));
    }
    let macs = dims
        .batch
        .saturating_mul(dims.in_features)
        .saturating_mul(dims.out_features);
    if macs >= GEMM_CROSSOVER_MACS {
        let y = x.f_linear(w, b)?;
        return epilogue(y, dims, activations, reduce).map(|t| (t, KernelPath::GemmThenEpilogue));
    }
    let x = Contiguous::of(x)?;
    let w = Contiguous::of(w)?;
    let b = b.map(Contiguous::of).transpose()?;
    let mut out = Tensor::f_empty(
        output_shape(dims, reduce).as_slice(),
        (Kind::Float, Device::Cpu),
    )?;
    // SAFETY: x, w, b are contiguous float32 CPU tensors checked above and held alive for
    // the whole call; `out` is a fresh tensor nobody else sees yet.
    unsafe {
        small_fused_linear(
            Isa::Best,
            f32_slice(x.tensor(), dims.batch * dims.in_features),
            f32_slice(w.tensor(), dims.out_features * dims.in_features),
            b.as_ref().map(|b| f32_slice(b.tensor(), dims.out_features)),
            dims.batch,
            dims.in_features,
            dims.out_features,
            activations,
            reduce,
            f32_slice_mut(&mut out, output_len(dims, reduce)),
        )?;
    }
    Ok((out, KernelPath::SmallFused))
}

fn output_len(dims: LinearDims, reduce: Option<FusedReduce>) -> usize {
    match reduce {
        None => dims.batch * dims.out_features,
        Some(_) => dims.batch,
    }
}

fn output_shape(dims: LinearDims, reduce: Option<FusedReduce>) -> Vec<i64> {
    let batch = dims.batch as i64;
    match reduce {
        None => vec![batch, dims.out_features as i64],
        Some(FusedReduce { keepdim: true, .. }) => vec![batch, 1],
        Some(FusedReduce { keepdim: false, .. }) => vec![batch],
    }
}

/// The unfused chain through ATen, for activations the scalar epilogue does not cover.
fn op_by_op(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Tensor> {
    let mut y = crate::ops::linear(x, w, b)?;
    for &op in activations {
        y = crate::ops::unary(op, &y)?;
    }
    match reduce {
        Some(r) => crate::ops::reduce(r.kind, &y, r.dim, r.keepdim),
        None => Ok(y),
    }
}

/// Activations and reduction over a fresh linear result `y` ([batch, out]), which this
/// function owns: activations run in place, one tight loop per op (vectorizable), then each
/// row is reduced with independent accumulators. The row stays in L1 between the two.
fn epilogue(
    y: Tensor,
    dims: LinearDims,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Tensor> {
    let mut y = if y.is_contiguous() {
        y
    } else {
        y.f_contiguous()?
    };
    if activations.is_empty() && reduce.is_none() {
        return Ok(y);
    }
    let expected = [dims.batch as i64, dims.out_features as i64];
    if y.size() != expected || y.f_kind()? != Kind::Float {
        return Err(RuntimeError::Shape(format!(
            "linear returned {:?} {:?}, expected float32 {expected:?}",
            y.f_kind()?,
            y.size()
        )));
    }
    // SAFETY: `y` is a fresh contiguous float32 CPU tensor of exactly batch x out elements
    // (checked above) produced by linear; nothing else refers to it yet.
    let data = unsafe { f32_slice_mut(&mut y, dims.batch * dims.out_features) };
    for &op in activations {
        apply_in_place(op, data);
    }
    let Some(r) = reduce else {
        return Ok(y);
    };
    let mut out = Tensor::f_empty(
        output_shape(dims, reduce).as_slice(),
        (Kind::Float, Device::Cpu),
    )?;
    // SAFETY: `out` is a fresh float32 CPU tensor of `batch` elements.
    let dst = unsafe { f32_slice_mut(&mut out, dims.batch) };
    let n = dims.out_features;
    if n == 0 {
        dst.fill(finish_reduce(r.kind, 0.0, 0));
    } else {
        for (slot, row) in dst.iter_mut().zip(data.chunks_exact(n)) {
            *slot = finish_reduce(r.kind, sum_lanes(row), n);
        }
    }
    Ok(out)
}

/// One activation over a buffer, as its own loop so the compiler can vectorize it.
fn apply_in_place(op: UnaryOp, data: &mut [f32]) {
    match op {
        UnaryOp::Relu => data
            .iter_mut()
            .for_each(|v| *v = activate(UnaryOp::Relu, *v)),
        UnaryOp::Abs => data.iter_mut().for_each(|v| *v = v.abs()),
        UnaryOp::Neg => data.iter_mut().for_each(|v| *v = -*v),
        UnaryOp::Square => data.iter_mut().for_each(|v| *v *= *v),
        other => data.iter_mut().for_each(|v| *v = activate(other, *v)),
    }
}

/// Sum with `LANES` independent accumulators (vectorizable; order differs from a serial sum
/// only within float32 rounding).
fn sum_lanes(values: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for l in 0..LANES {
            acc[l] += chunk[l];
        }
    }
    let tail: f32 = chunks.remainder().iter().sum();
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

#[inline(always)]
fn finish_reduce(kind: ReduceKind, sum: f32, count: usize) -> f32 {
    match kind {
        ReduceKind::Sum => sum,
        // 0/0 gives NaN for an empty row, as ATen's mean does.
        ReduceKind::Mean => sum / count as f32,
    }
}

/// Which instructions the one-pass kernel may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// AVX2+FMA when the CPU has them, portable code otherwise.
    Best,
    /// Portable code only (the path of CPUs without AVX2+FMA; tests cover it everywhere).
    Portable,
}

/// The one-pass kernel over raw slices: for every batch row, blocks of output features at a
/// time (dot products with independent accumulators), then bias, activations and the
/// reduction in registers.
///
/// `x` is [batch, k], `w` is [n, k], `b` is [n], `out` is [batch, n] or [batch] (reduced).
#[allow(clippy::too_many_arguments)]
pub fn small_fused_linear(
    isa: Isa,
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) -> Result<()> {
    let out_len = if reduce.is_some() { batch } else { batch * n };
    if x.len() != batch * k
        || w.len() != n * k
        || b.is_some_and(|b| b.len() != n)
        || out.len() != out_len
    {
        return Err(RuntimeError::Shape(format!(
            "fused_linear buffers do not match {batch}x{k} -> {n} (x {}, w {}, b {:?}, out {})",
            x.len(),
            w.len(),
            b.map(<[f32]>::len),
            out.len()
        )));
    }
    let shape = Shape {
        batch,
        k,
        n,
        activations,
        reduce,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = isa;
    #[cfg(target_arch = "x86_64")]
    {
        if isa == Isa::Best
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has the features; buffer lengths were checked above.
            unsafe { avx2::fused_linear(x, w, b, &shape, out) };
            return Ok(());
        }
    }
    fused_linear_scalar(x, w, b, &shape, out);
    Ok(())
}

struct Shape<'a> {
    batch: usize,
    k: usize,
    n: usize,
    activations: &'a [UnaryOp],
    reduce: Option<FusedReduce>,
}

/// Bias, activations, then either the output element or the running reduction.
#[inline(always)]
fn epilogue_element(
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    row: usize,
    j: usize,
    dot: f32,
    reduced: &mut f32,
    out: &mut [f32],
) {
    // Like ATen's GEMM for batches > 1: the product sum starts from +0.0 and the bias is
    // added last, so an all-zero row gives +0.0 whatever the zero signs.
    let biased = match b {
        Some(bias) => dot + bias[j],
        None => dot,
    };
    let v = activate_all(shape.activations, biased);
    if shape.reduce.is_some() {
        *reduced += v;
    } else {
        out[row * shape.n + j] = v;
    }
}

/// Portable path: `LANES` accumulators per dot product.
fn fused_linear_scalar(
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
        let mut reduced = 0.0f32;
        for j in 0..n {
            let wr = &w[j * k..(j + 1) * k];
            let mut acc = [0.0f32; LANES];
            let mut xc = xr.chunks_exact(LANES);
            let mut wc = wr.chunks_exact(LANES);
            for (xs, ws) in (&mut xc).zip(&mut wc) {
                for l in 0..LANES {
                    acc[l] += xs[l] * ws[l];
                }
            }
            let tail: f32 = xc
                .remainder()
                .iter()
                .zip(wc.remainder())
                .map(|(a, b)| a * b)
                .sum();
            let dot = ((acc[0] + acc[4]) + (acc[1] + acc[5]))
                + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
                + tail;
            epilogue_element(b, shape, row, j, dot, &mut reduced, out);
        }
        if let Some(r) = reduce {
            out[row] = finish_reduce(r.kind, reduced, n);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! AVX2+FMA path. Register tiles of `MR` batch rows x `NR` output features: each 8-wide
    //! chunk of the `MR` input rows and `NR` weight rows is loaded once and feeds `MR * NR`
    //! independent FMA chains. Two-row tiles (2 x 4) for batches, one-row tiles (1 x 8) for
    //! the last odd row and batch 1.
    use std::arch::x86_64::*;

    use super::{epilogue_element, finish_reduce, Shape};

    #[inline(always)]
    unsafe fn hsum(v: __m256) -> f32 {
        let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
        _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)))
    }

    /// Dot products of the `MR` rows at `x` with the `NR` rows at `w` (all `k` long).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // indices address the x, w and acc tiles together
    unsafe fn tile<const MR: usize, const NR: usize>(
        x: *const f32,
        w: *const f32,
        k: usize,
    ) -> [[f32; NR]; MR] {
        let mut acc = [[_mm256_setzero_ps(); NR]; MR];
        let mut i = 0;
        while i + 8 <= k {
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

    /// Rows `row..row + MR` of the output (or of the reduction).
    #[inline(always)]
    unsafe fn rows<const MR: usize, const NR: usize>(
        x: &[f32],
        w: &[f32],
        b: Option<&[f32]>,
        shape: &Shape<'_>,
        row: usize,
        out: &mut [f32],
    ) {
        let Shape { k, n, reduce, .. } = *shape;
        let xr = x.as_ptr().add(row * k);
        let mut reduced = [0.0f32; MR];
        let mut j = 0;
        while j + NR <= n {
            let d = tile::<MR, NR>(xr, w.as_ptr().add(j * k), k);
            for m in 0..MR {
                for (r, &dot) in d[m].iter().enumerate() {
                    epilogue_element(b, shape, row + m, j + r, dot, &mut reduced[m], out);
                }
            }
            j += NR;
        }
        while j < n {
            let d = tile::<MR, 1>(xr, w.as_ptr().add(j * k), k);
            for m in 0..MR {
                epilogue_element(b, shape, row + m, j, d[m][0], &mut reduced[m], out);
            }
            j += 1;
        }
        if let Some(r) = reduce {
            for m in 0..MR {
                out[row + m] = finish_reduce(r.kind, reduced[m], n);
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA; `x`, `w`, `b` and `out` must have the lengths
    /// `shape` implies (checked by the caller).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn fused_linear(
        x: &[f32],
        w: &[f32],
        b: Option<&[f32]>,
        shape: &Shape<'_>,
        out: &mut [f32],
    ) {
        let mut row = 0;
        while row + 2 <= shape.batch {
            rows::<2, 4>(x, w, b, shape, row, out);
            row += 2;
        }
        while row < shape.batch {
            rows::<1, 8>(x, w, b, shape, row, out);
            row += 1;
        }
    }
}
