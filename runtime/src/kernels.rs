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

/// Above this many multiply-adds (`batch * in * out`) libtorch's GEMM beats the one-pass
/// kernel. Measured with `cargo bench -p rextio-benches` (see docs/benchmarks.md): the fused
/// kernel wins clearly at 64x128x64 (0.5 M) and loses at 256x256x128 (8.4 M).
pub const GEMM_CROSSOVER_MACS: usize = 1 << 20;

/// Independent accumulators per dot product: enough to hide FMA latency, and a multiple of
/// the AVX2 lane count so the inner loop vectorizes.
const LANES: usize = 8;

/// Output features computed together so each loaded input chunk is reused.
const ROW_BLOCK: usize = 4;

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

/// A contiguous view of `t` (no copy when it already is contiguous).
fn contiguous(t: &Tensor) -> Result<Tensor> {
    if t.is_contiguous() {
        Ok(t.shallow_clone())
    } else {
        Ok(t.f_contiguous()?)
    }
}

/// # Safety
/// `t` must be a contiguous float32 CPU tensor that outlives the returned slice and is not
/// written while the slice lives.
unsafe fn f32_slice(t: &Tensor) -> &[f32] {
    let len = t.numel();
    if len == 0 {
        return &[];
    }
    std::slice::from_raw_parts(t.data_ptr() as *const f32, len)
}

/// # Safety
/// As [`f32_slice`], and no other reference to the data may exist.
unsafe fn f32_slice_mut(t: &mut Tensor) -> &mut [f32] {
    let len = t.numel();
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
    let x = contiguous(x)?;
    let w = contiguous(w)?;
    let b = b.map(contiguous).transpose()?;
    let mut out = Tensor::f_empty(
        output_shape(dims, reduce).as_slice(),
        (Kind::Float, Device::Cpu),
    )?;
    // SAFETY: x, w, b are contiguous float32 CPU tensors checked above and held alive for
    // the whole call; `out` is a fresh tensor nobody else sees yet.
    unsafe {
        small_fused_linear(
            f32_slice(&x),
            f32_slice(&w),
            b.as_ref().map(|b| f32_slice(b)),
            dims.batch,
            dims.in_features,
            dims.out_features,
            activations,
            reduce,
            f32_slice_mut(&mut out),
        );
    }
    Ok((out, KernelPath::SmallFused))
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

/// Activations and reduction in one pass over a fresh linear result `y` ([batch, out]).
fn epilogue(
    mut y: Tensor,
    dims: LinearDims,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Tensor> {
    let y_contig = contiguous(&y)?;
    match reduce {
        None => {
            if activations.is_empty() {
                return Ok(y);
            }
            if !y.is_contiguous() {
                y = y_contig;
            }
            // SAFETY: `y` is a fresh contiguous float32 tensor produced by linear above and
            // owned only by this function.
            let data = unsafe { f32_slice_mut(&mut y) };
            for v in data.iter_mut() {
                *v = activate_all(activations, *v);
            }
            Ok(y)
        }
        Some(r) => {
            let mut out = Tensor::f_empty(
                output_shape(dims, reduce).as_slice(),
                (Kind::Float, Device::Cpu),
            )?;
            // SAFETY: `y_contig` is contiguous float32 and alive; `out` is fresh.
            let (src, dst) = unsafe { (f32_slice(&y_contig), f32_slice_mut(&mut out)) };
            let n = dims.out_features;
            for (row, slot) in dst.iter_mut().enumerate() {
                let values = &src[row * n..(row + 1) * n];
                let mut acc = 0.0f32;
                for &v in values {
                    acc += activate_all(activations, v);
                }
                *slot = finish_reduce(r.kind, acc, n);
            }
            Ok(out)
        }
    }
}

#[inline(always)]
fn finish_reduce(kind: ReduceKind, sum: f32, count: usize) -> f32 {
    match kind {
        ReduceKind::Sum => sum,
        // 0/0 gives NaN for an empty row, as ATen's mean does.
        ReduceKind::Mean => sum / count as f32,
    }
}

/// The one-pass kernel over raw slices: for every batch row, `ROW_BLOCK` output features at a
/// time, dot products with `LANES` accumulators, then bias, activations and the reduction.
///
/// `x` is [batch, k], `w` is [n, k], `b` is [n], `out` is [batch, n] or [batch] (reduced).
#[allow(clippy::too_many_arguments)]
pub fn small_fused_linear(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports the features the function is compiled for.
            unsafe { small_fused_linear_avx2(x, w, b, batch, k, n, activations, reduce, out) };
            return;
        }
    }
    small_fused_linear_generic(x, w, b, batch, k, n, activations, reduce, out);
}

/// Dot products of one input row with `R` consecutive weight rows starting at `first`.
#[inline(always)]
fn dot_rows<const R: usize>(
    madd: impl Fn(f32, f32, f32) -> f32,
    xr: &[f32],
    w: &[f32],
    first: usize,
    k: usize,
) -> [f32; R] {
    let chunks = k / LANES;
    let mut acc = [[0.0f32; LANES]; R];
    for c in 0..chunks {
        let xs = &xr[c * LANES..(c + 1) * LANES];
        for (r, lanes) in acc.iter_mut().enumerate() {
            let start = (first + r) * k + c * LANES;
            let ws = &w[start..start + LANES];
            for l in 0..LANES {
                lanes[l] = madd(xs[l], ws[l], lanes[l]);
            }
        }
    }
    let mut dots = [0.0f32; R];
    for (r, dot) in dots.iter_mut().enumerate() {
        let wr = &w[(first + r) * k..(first + r + 1) * k];
        let mut tail = 0.0f32;
        for t in chunks * LANES..k {
            tail = madd(xr[t], wr[t], tail);
        }
        let l = &acc[r];
        *dot = ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7])) + tail;
    }
    dots
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn fused_linear_body(
    madd: impl Fn(f32, f32, f32) -> f32 + Copy,
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) {
    let value = |j: usize, dot: f32| {
        // Like ATen's GEMM for batches > 1: the product sum starts from +0.0 and the bias is
        // added last, so an all-zero row gives +0.0 whatever the zero signs.
        let biased = match b {
            Some(bias) => dot + bias[j],
            None => dot,
        };
        activate_all(activations, biased)
    };
    for row in 0..batch {
        let xr = &x[row * k..(row + 1) * k];
        let mut reduced = 0.0f32;
        let mut j = 0;
        while j < n {
            let block = if j + ROW_BLOCK <= n { ROW_BLOCK } else { 1 };
            let dots = if block == ROW_BLOCK {
                dot_rows::<ROW_BLOCK>(madd, xr, w, j, k)
            } else {
                let [dot] = dot_rows::<1>(madd, xr, w, j, k);
                [dot, 0.0, 0.0, 0.0]
            };
            for (r, &dot) in dots.iter().enumerate().take(block) {
                let v = value(j + r, dot);
                if reduce.is_some() {
                    reduced += v;
                } else {
                    out[row * n + j + r] = v;
                }
            }
            j += block;
        }
        if let Some(r) = reduce {
            out[row] = finish_reduce(r.kind, reduced, n);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn small_fused_linear_generic(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) {
    fused_linear_body(
        |a: f32, b: f32, c: f32| a * b + c,
        x,
        w,
        b,
        batch,
        k,
        n,
        activations,
        reduce,
        out,
    )
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn small_fused_linear_avx2(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) {
    fused_linear_body(
        |a: f32, b: f32, c: f32| a.mul_add(b, c),
        x,
        w,
        b,
        batch,
        k,
        n,
        activations,
        reduce,
        out,
    )
}
