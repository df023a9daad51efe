//! Fused CPU kernels for `fused_linear`: `linear` followed by elementwise activations and an
//! optional reduction over the output features, computed without intermediate tensors.
//!
//! Kernel choice happens per call, from the concrete sizes (annotations give only ranks):
//! small problems run [`small_fused_linear`], one pass over the inputs with register-blocked
//! dot products and the epilogue applied in registers; large ones call libtorch's GEMM and
//! then run the epilogue in one pass over its result ([`GEMM_CROSSOVER_MACS`]).
//!
//! Accuracy: every sum here (dot products on both one-pass paths, the reduction over a row on
//! every path) is blocked and pairwise, as BLAS libraries block theirs: short runs are summed
//! in registers, then the partial sums are combined pairwise, so a value passes through
//! about `block / lanes + log2(len / block)` additions instead of `len / lanes`. Long rows
//! then drift no further from the exact result than eager PyTorch's (runtime/tests/accuracy.rs
//! holds every path to that, for lengths up to 65536; docs/parity.md states the tolerance).

use rextio_ir::{FusedReduce, UnaryOp};

use tch::{Device, Kind, Tensor};

use crate::error::{Result, RuntimeError};
use crate::linear_cost::{
    one_pass_avx512_available, parallel_threads, row_block, LINEAR_ROW_BLOCK, PAR_MIN_ELEMENTS,
    PAR_MIN_MACS,
};
use crate::linear_epilogue::{
    activate_whole, apply_whole_in_place, check_reduce, check_slices, Shape,
};
use crate::sum::{finish_reduce, sum_pairwise};

// The kernels' layers, public here as they always were.
pub use crate::linear_cost::{
    force_path, force_products, forced_path, products, runs_gemm_crate, CostModel, KernelPath,
    Products, BLOCKED_MAX_K, COST_MODEL, GEMM_CROSSOVER_MACS, PRODUCTS_ENV,
};
pub use crate::linear_epilogue::{Epilogue, LinearDims};
pub use crate::linear_gemm::{
    blocked_fused_linear, blocked_fused_linear_t, matmul_into, transpose_into, transposed,
};

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
            // Eager's words for a bias that does not broadcast to the output.
            return Err(RuntimeError::Shape(format!(
                "The expanded size of the tensor ({out_features}) must match the existing size ({bias_len}) at non-singleton dimension 1.  Target sizes: [{batch}, {out_features}].  Tensor sizes: [{bias_len}]"
            )));
        }
    }
    let to_usize =
        |v: i64| usize::try_from(v).map_err(|_| RuntimeError::Shape(format!("negative size {v}")));
    Ok(LinearDims {
        batch: to_usize(batch)?,
        k: to_usize(in_features)?,
        n: to_usize(out_features)?,
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
        // A tensor with the negative bit (`torch._neg_view`, the imaginary part of a
        // conjugate) holds the negation of what it means: it is materialized first.
        if t.f_is_neg()? {
            Ok(Contiguous::Copied(t.f_resolve_neg()?.f_contiguous()?))
        } else if t.is_contiguous() {
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
pub(crate) unsafe fn f32_slice(t: &Tensor, len: usize) -> &[f32] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the data of `t` is `len` float32 values that outlive the slice and are not
    // written while it lives (contract).
    unsafe { std::slice::from_raw_parts(t.data_ptr() as *const f32, len) }
}

/// # Safety
/// As [`f32_slice`], and no other reference to the data may exist.
pub(crate) unsafe fn f32_slice_mut(t: &mut Tensor, len: usize) -> &mut [f32] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: as in `f32_slice`, and no other reference to the data exists (contract).
    unsafe { std::slice::from_raw_parts_mut(t.data_ptr() as *mut f32, len) }
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
    fused_linear_for(x, w, b, activations, reduce, false)
}

/// [`fused_linear`], for a weight reused across a loop's iterations when `reused`
/// ([`CostModel::choose_for`]).
pub fn fused_linear_for(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    reused: bool,
) -> Result<Tensor> {
    // A one-element bias broadcasts over the output features, as in eager `F.linear`.
    if let Some(bias) = b {
        let out_features = w.size().first().copied().unwrap_or(0);
        if bias.dim() == 1 && bias.size() == [1] && out_features != 1 && w.dim() == 2 {
            let expanded = bias.f_expand([out_features], false)?.f_contiguous()?;
            return fused_linear_reused(x, w, Some(&expanded), activations, reduce, reused)
                .map(|(t, _)| t);
        }
    }
    fused_linear_reused(x, w, b, activations, reduce, reused).map(|(t, _)| t)
}

pub fn fused_linear_with_path(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<(Tensor, KernelPath)> {
    fused_linear_reused(x, w, b, activations, reduce, false)
}

/// [`fused_linear_with_path`] for a weight reused across a loop's iterations
/// ([`CostModel::choose_for`]); the transposed weight is made for this call.
pub fn fused_linear_reused(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    reused: bool,
) -> Result<(Tensor, KernelPath)> {
    let dims = linear_dims(x, w, b)?;
    check_reduce(reduce)?;
    let path = COST_MODEL.choose_for(dims.batch, dims.k, dims.n, reused);
    if path == KernelPath::GemmThenEpilogue {
        let y = x.f_linear(w, b)?;
        return epilogue(y, dims, activations, reduce).map(|t| (t, path));
    }
    let x = Contiguous::of(x)?;
    let w = Contiguous::of(w)?;
    let b = b.map(Contiguous::of).transpose()?;
    let mut out = Tensor::f_empty(
        output_shape(dims, reduce).as_slice(),
        (Kind::Float, Device::Cpu),
    )?;
    let weight_len = dims.n * dims.k;
    // SAFETY: w is a contiguous float32 CPU tensor checked above, alive for the whole call.
    let given = unsafe { f32_slice(w.tensor(), weight_len) };
    let transposed = (path == KernelPath::BlockedTransposed).then(|| transposed_for(given, dims));
    let weight = transposed.as_ref().map_or(given, |wt| wt.as_slice());
    // SAFETY: x, b are contiguous float32 CPU tensors checked above and held alive for
    // the whole call; `out` is a fresh tensor nobody else sees yet.
    unsafe {
        linear_into(
            path,
            f32_slice(x.tensor(), dims.batch * dims.k),
            weight,
            b.as_ref().map(|b| f32_slice(b.tensor(), dims.n)),
            dims,
            Epilogue::new(activations, reduce),
            f32_slice_mut(&mut out, output_len(dims, reduce)),
        )?;
    }
    Ok((out, path))
}

/// Runs the slice-level `path` ([`KernelPath::SmallFused`], [`KernelPath::Blocked`], or
/// [`KernelPath::BlockedTransposed`], for which `w` holds the weight transposed, [k, n]).
pub fn linear_into(
    path: KernelPath,
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    dims: LinearDims,
    epilogue: Epilogue<'_>,
    out: &mut [f32],
) -> Result<()> {
    let Epilogue {
        activations,
        reduce,
    } = epilogue;
    if dims.batch * dims.n == 1
        && activations
            .iter()
            .any(|&op| crate::unary::one_element_differs(op))
    {
        // Eager applies GELU to a one-element tensor with ATen's scalar loop
        // (`vmath::gelu_one`), not oneDNN's kernel, whose classes differ at the edges (at
        // `avx512_core`: +inf and beyond 2^127; below: x <= -5.5): the product alone, then
        // the chain on its one value.
        let mut y = [0.0f32];
        linear_into(path, x, w, b, dims, Epilogue::new(&[], None), &mut y)?;
        let v = activations
            .iter()
            .fold(y[0], |v, &op| activate_whole(op, v, 1));
        let Some(slot) = out.first_mut() else {
            return Err(RuntimeError::Shape(
                "fused_linear: empty output buffer".into(),
            ));
        };
        *slot = match reduce {
            Some(r) => finish_reduce(r.kind, sum_pairwise(&[v]), 1),
            None => v,
        };
        return Ok(());
    }
    let macs = dims.batch.saturating_mul(dims.k).saturating_mul(dims.n);
    if macs < PAR_MIN_MACS || dims.batch <= LINEAR_ROW_BLOCK {
        return slice_path(path, x, w, b, dims, epilogue, out);
    }
    // Blocks of `LINEAR_ROW_BLOCK` rows, the same at every thread count (crate::par).
    check_slices(x, w, b, dims, reduce, out)?;
    // The crate packs a weight given as [n, k] in every call, so in every block: it is
    // transposed once instead, which the crate streams without packing (4096x512x512 at
    // one thread: 13.0 ms, against 14.6 packing per block and 12.7 as one call;
    // `par_speed`).
    let threads = linear_threads(dims);
    // The transposition is shared among the same threads (a copy: the same bits).
    let once;
    let (path, w) = if path == KernelPath::Blocked {
        once = crate::transpose::transposed_on(w, dims.n, dims.k, threads);
        (KernelPath::BlockedTransposed, once.as_slice())
    } else {
        (path, w)
    };
    let out_row = if reduce.is_some() { 1 } else { dims.n };
    let failure = std::sync::Mutex::new(None);
    crate::par::for_each_block(out, LINEAR_ROW_BLOCK * out_row, threads, |i, out| {
        let first = i * LINEAR_ROW_BLOCK;
        let rows = out.len() / out_row;
        let x = &x[first * dims.k..(first + rows) * dims.k];
        let block = LinearDims::new(rows, dims.k, dims.n);
        if let Err(e) = slice_path(path, x, w, b, block, epilogue, out) {
            if let Ok(mut f) = failure.lock() {
                f.get_or_insert(e);
            }
        }
    });
    match failure.into_inner() {
        Ok(Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// The threads a blocked `linear` of `dims` runs its row blocks on ([`linear_into`]), and
/// its weight's transposition ([`transposed_for`]): from two whole blocks of
/// [`LINEAR_ROW_BLOCK`] rows on (a short last block is not worth a worker) and
/// [`PAR_MIN_MACS`], torch's thread count.
pub fn linear_threads(dims: LinearDims) -> usize {
    let macs = dims.batch.saturating_mul(dims.k).saturating_mul(dims.n);
    parallel_threads(macs, PAR_MIN_MACS, dims.batch / LINEAR_ROW_BLOCK)
}

/// A `linear`'s weight `w` ([n, k]) transposed for the `BlockedTransposed` path, on the
/// threads the product of `dims` will use.
pub fn transposed_for(w: &[f32], dims: LinearDims) -> crate::buffer::Buffer {
    crate::transpose::transposed_on(w, dims.n, dims.k, linear_threads(dims))
}

/// One block of [`linear_into`] on `path`.
fn slice_path(
    path: KernelPath,
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    dims: LinearDims,
    epilogue: Epilogue<'_>,
    out: &mut [f32],
) -> Result<()> {
    match path {
        KernelPath::Blocked => blocked_fused_linear(x, w, b, dims, epilogue, out),
        KernelPath::BlockedTransposed => blocked_fused_linear_t(x, w, b, dims, epilogue, out),
        KernelPath::SmallFused => small_fused_linear(Isa::Best, x, w, b, dims, epilogue, out),
        other => Err(RuntimeError::Unsupported(format!(
            "{other:?} does not run over slices"
        ))),
    }
}

/// The GEMM + epilogue path whatever the size, so tests and benches can hold every path to
/// the same problem ([`fused_linear`] picks it only from [`GEMM_CROSSOVER_MACS`] on).
pub fn gemm_then_epilogue(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Tensor> {
    let dims = linear_dims(x, w, b)?;
    check_reduce(reduce)?;
    epilogue(x.f_linear(w, b)?, dims, activations, reduce)
}

fn output_len(dims: LinearDims, reduce: Option<FusedReduce>) -> usize {
    match reduce {
        None => dims.batch * dims.n,
        Some(_) => dims.batch,
    }
}

fn output_shape(dims: LinearDims, reduce: Option<FusedReduce>) -> Vec<i64> {
    let batch = dims.batch as i64;
    match reduce {
        None => vec![batch, dims.n as i64],
        Some(FusedReduce { keepdim: true, .. }) => vec![batch, 1],
        Some(FusedReduce { keepdim: false, .. }) => vec![batch],
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
    let expected = [dims.batch as i64, dims.n as i64];
    if y.size() != expected || y.f_kind()? != Kind::Float {
        return Err(RuntimeError::Shape(format!(
            "linear returned {:?} {:?}, expected float32 {expected:?}",
            y.f_kind()?,
            y.size()
        )));
    }
    // SAFETY: `y` is a fresh contiguous float32 CPU tensor of exactly batch x out elements
    // (checked above) produced by linear; nothing else refers to it yet.
    let data = unsafe { f32_slice_mut(&mut y, dims.batch * dims.n) };
    let n = dims.n;
    let elements = dims.batch * n;
    let Some(r) = reduce else {
        if elements < PAR_MIN_ELEMENTS {
            for &op in activations {
                apply_whole_in_place(op, data);
            }
        } else {
            // Row blocks (sizes only decide them), possibly on several threads; libtorch's
            // GEMM has returned, so no op of its runs meanwhile.
            let rows = row_block(n);
            let threads = parallel_threads(elements, PAR_MIN_ELEMENTS, dims.batch.div_ceil(rows));
            crate::par::for_each_block(data, rows * n, threads, |_, block| {
                for &op in activations {
                    apply_whole_in_place(op, block);
                }
            });
        }
        return Ok(y);
    };
    let mut out = Tensor::f_empty(
        output_shape(dims, reduce).as_slice(),
        (Kind::Float, Device::Cpu),
    )?;
    // SAFETY: `out` is a fresh float32 CPU tensor of `batch` elements.
    let dst = unsafe { f32_slice_mut(&mut out, dims.batch) };
    if n == 0 {
        dst.fill(finish_reduce(r.kind, 0.0, 0));
        return Ok(out);
    }
    let reduce_rows = |data: &mut [f32], dst: &mut [f32]| {
        for &op in activations {
            apply_whole_in_place(op, data);
        }
        for (slot, row) in dst.iter_mut().zip(data.chunks_exact(n)) {
            *slot = finish_reduce(r.kind, sum_pairwise(row), n);
        }
    };
    if elements < PAR_MIN_ELEMENTS {
        reduce_rows(data, dst);
    } else {
        let rows = row_block(n);
        let threads = parallel_threads(elements, PAR_MIN_ELEMENTS, dims.batch.div_ceil(rows));
        let pairs = data.chunks_mut(rows * n).zip(dst.chunks_mut(rows));
        crate::par::for_each(pairs, threads, |(data, dst)| reduce_rows(data, dst));
    }
    Ok(out)
}

/// Which instructions the one-pass kernel may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// AVX-512 when the CPU has it (dot products up to 1024 long), else AVX2+FMA when it
    /// has them, portable code otherwise.
    Best,
    /// AVX2+FMA when the CPU has them (so tests cover that path on AVX-512 machines too),
    /// portable code otherwise.
    Avx2,
    /// Portable code only (the path of CPUs without AVX2+FMA; tests cover it everywhere).
    Portable,
}

/// The one-pass kernel over raw slices: for every batch row, blocks of output features at a
/// time (dot products with independent accumulators), then bias, activations and the
/// reduction in registers.
///
/// `x` is [batch, k], `w` is [n, k], `b` is [n], `out` is [batch, n] or [batch] (reduced).
/// Buffers of other lengths and reductions over another dim than 1 are errors.
pub fn small_fused_linear(
    isa: Isa,
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    dims: LinearDims,
    epilogue: Epilogue<'_>,
    out: &mut [f32],
) -> Result<()> {
    check_slices(x, w, b, dims, epilogue.reduce, out)?;
    let shape = Shape::new(dims, epilogue);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = isa;
    #[cfg(target_arch = "x86_64")]
    {
        if isa != Isa::Portable && crate::cpu::level() >= crate::cpu::Level::Avx2 {
            if isa == Isa::Best && one_pass_avx512_available(dims.k) {
                // SAFETY: the level is AVX-512 (`one_pass_avx512_available`), so the CPU has
                // AVX-512F, AVX2 and FMA; `k` is at most `AVX512_MAX_K` (same check); the
                // buffer lengths were checked against `dims` above.
                unsafe { crate::linear_avx512::fused_linear(x, w, b, &shape, out) };
            } else {
                // SAFETY: the level is at least AVX2, so the CPU has AVX2 and FMA; the buffer
                // lengths were checked against `dims` above.
                unsafe { crate::linear_avx2::fused_linear(x, w, b, &shape, out) };
            }
            return Ok(());
        }
    }
    crate::linear_portable::fused_linear_scalar(x, w, b, &shape, out);
    Ok(())
}
