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

use rextio_ir::{FusedReduce, ReduceKind, UnaryOp};
use std::cell::Cell;

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

/// Inner-dimension elements a dot product of the AVX2 kernel sums in its FMA registers
/// before the block partials are combined pairwise (32 additions per lane). Problems with
/// `k` up to this size (all Phase A cells) run the unblocked loop. Above it every block
/// costs a merge of partial sums: smaller blocks cost more time, larger ones let the error
/// grow towards that of sequential sums (runtime/tests/accuracy.rs holds it to eager's).
const DOT_BLOCK: usize = 256;

/// The same for the portable kernel, which rounds each product before adding it (no FMA):
/// with 256, its error at `k` = 255 and two outputs reached 3 to 10 times that of eager
/// (MKL's GEMV); with 64 it stays within twice.
const PORTABLE_DOT_BLOCK: usize = 64;

/// Row elements a reduction (the GEMM path's rows, the AVX2 kernel's staged chunks) sums
/// in `LANES` registers before combining pairwise (8 additions per lane), close to ATen's
/// cascade sum, which eager's `sum`/`mean` use.
const SUM_BLOCK: usize = 64;

/// Output values the portable kernel's reduction adds in sequence before combining the
/// block's sum pairwise with the others.
const STREAM_BLOCK: usize = 8;

/// Where to split `len` elements (a multiple of `LANES`) of blocked pairwise summation:
/// after half of the `block`-sized pieces, so every leaf but the last is a full block.
#[inline(always)]
fn pairwise_split(len: usize, block: usize) -> usize {
    len.div_ceil(block) / 2 * block
}

/// Which way a call went, for benches and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelPath {
    /// [`small_fused_linear`]: one pass, dot products in registers.
    SmallFused,
    /// [`blocked_fused_linear`]: the `gemm` crate's packed kernels, then the epilogue.
    Blocked,
    /// [`blocked_fused_linear_t`]: the same over a weight transposed once per call.
    BlockedTransposed,
    /// libtorch's GEMM, then the epilogue (very long dot products).
    GemmThenEpilogue,
}

/// Inner sizes up to this go to the `gemm` crate; longer dot products go to libtorch's GEMM,
/// whose blocking eager's accuracy is defined by (runtime/tests/accuracy.rs).
pub const BLOCKED_MAX_K: usize = 4096;

/// Which `linear` kernel runs, by regime of the sizes. Fitted to
/// `cargo run --release -p rextio-runtime --example kernel_paths` on the development machine
/// (timings of every path on 72 shapes, in docs/benchmarks.md), because no single crossover
/// describes them:
///
/// - the `gemm` crate packs a weight it is given as `[n, k]` only from a batch of about 16
///   on; below that, a large weight makes it 3-15x slower than the one-pass kernel (a
///   2x512 -> 256 product: 91 us against 5), while small weights run 1.4-2x faster than it,
///   batch 1 included. How large "large" is depends on the batch (the limits below);
/// - from a batch of 32 on, the blocked path runs 2-4x faster than the one-pass kernel at
///   every measured width;
/// - a small batch against a weight too large for the crate's unpacked path goes to
///   libtorch's GEMM (which packs) from `GEMM_CROSSOVER_MACS` multiply-adds on, and to the
///   one-pass kernel below that;
/// - a weight that is at hand transposed (`[k, n]`, an argument reused across a loop, see
///   the executor) streams without packing: 2-3x faster than the one-pass kernel from a batch
///   of 2, except for narrow outputs or tiny weights, where its fixed cost dominates. At
///   batch 1 it loses to both others.
#[derive(Clone, Copy, Debug)]
pub struct CostModel {
    /// From this batch on, the blocked path takes any weight as given.
    pub blocked_min_batch: usize,
    /// Largest weight (elements) taken as given, by batch: from `blocked_mid_batch`, from
    /// `blocked_low_batch`, and below it.
    pub blocked_mid_batch: usize,
    pub blocked_mid_weight: usize,
    pub blocked_low_batch: usize,
    pub blocked_low_weight: usize,
    pub blocked_small_weight: usize,
    /// A transposed weight is used from this batch, output width and size on.
    pub transposed_min_batch: usize,
    pub transposed_min_width: usize,
    pub transposed_min_weight: usize,
    /// Where the one-pass kernel has its AVX-512 path (dot products up to 1024 long), it
    /// takes dot products from this long on, up to this batch: the crate, given the weight
    /// as [n, k], runs far from peak there (32x512 -> 256: 115 us against 45).
    pub one_pass_long_k: usize,
    pub one_pass_long_max_batch: usize,
    /// A weight used once is transposed for the product (about 0.1 ns per element) where
    /// the product over the transposed weight saves more than that (8x64x64: 0.47 us with
    /// the transposition against 1.0 us as given): outputs at least `transpose_once_min_width`
    /// wide, batches up to `transpose_once_max_batch` (any batch where the small kernel runs
    /// it: `k` up to 32, 64x32 -> 32: 0.87 us against 1.1) and from `transpose_once_min_batch` or
    /// one row per `transpose_once_k_per_row` of `k`, whichever is more (the transposition
    /// grows with `k` as the saving grows with the batch); at any batch for `k` up to
    /// `transpose_once_any_batch_k` (1x8x512: 0.3 us against 0.95).
    pub transpose_once_min_width: usize,
    pub transpose_once_min_batch: usize,
    pub transpose_once_k_per_row: usize,
    pub transpose_once_max_batch: usize,
    pub transpose_once_any_batch_k: usize,
    /// ... and narrower outputs too from this batch on, for `k` up to 32 (64x32 -> 8: 0.46
    /// us against 0.76).
    pub transpose_once_narrow_batch: usize,
    /// Narrow outputs (at most `narrow_max_width` wide) of dot products at least
    /// `narrow_min_k` long go to the AVX-512 one-pass kernel once the output has more than
    /// `crate_small_output` elements: up to that size the crate runs a kernel without
    /// packing, past it the crate packs the input as well, which costs more than the few
    /// products per input element (64x256 -> 8: 2.3 us against 4.5, 128x512 -> 4: 3.9
    /// against 16).
    pub narrow_max_width: usize,
    pub narrow_min_k: usize,
    pub crate_small_output: usize,
}

pub const COST_MODEL: CostModel = CostModel {
    blocked_min_batch: 32,
    blocked_mid_batch: 16,
    blocked_mid_weight: 16 * 1024,
    blocked_low_batch: 8,
    blocked_low_weight: 4 * 1024,
    blocked_small_weight: 8 * 1024,
    transposed_min_batch: 2,
    transposed_min_width: 16,
    transposed_min_weight: 2 * 1024,
    one_pass_long_k: 512,
    one_pass_long_max_batch: 128,
    transpose_once_min_width: 16,
    transpose_once_min_batch: 4,
    transpose_once_k_per_row: 16,
    transpose_once_max_batch: 32,
    transpose_once_any_batch_k: 8,
    transpose_once_narrow_batch: 16,
    narrow_max_width: 12,
    narrow_min_k: 128,
    crate_small_output: 256,
};

thread_local! {
    /// A path every `linear` of this thread takes whatever its sizes ([`force_path`]); 0
    /// when none is forced. Per thread, so that tests running side by side do not see each
    /// other's choice.
    static FORCED_PATH: Cell<u8> = const { Cell::new(0) };
}

const PATHS: [KernelPath; 4] = [
    KernelPath::SmallFused,
    KernelPath::Blocked,
    KernelPath::BlockedTransposed,
    KernelPath::GemmThenEpilogue,
];

/// For tests (and for bisecting a difference): every fused `linear` run by this thread
/// takes `path`, whatever the cost model would choose, until `force_path(None)`. Every path
/// computes every size (the blocked paths also past `BLOCKED_MAX_K`), held to the same
/// accuracy bounds; only speed differs. `fused_matmul` keeps its own rule
/// ([`CostModel::fuses_in_out`]), since its weight's layout decides its kernel.
pub fn force_path(path: Option<KernelPath>) {
    let code = path.map_or(0, |p| {
        PATHS.iter().position(|&q| q == p).map_or(0, |i| i + 1)
    });
    FORCED_PATH.with(|p| p.set(code as u8));
}

/// The path [`force_path`] set, if any.
pub fn forced_path() -> Option<KernelPath> {
    match FORCED_PATH.with(Cell::get) {
        0 => None,
        code => PATHS.get(usize::from(code) - 1).copied(),
    }
}

impl KernelPath {
    /// The name tools and tests use: `small`, `blocked`, `blocked_t`, `gemm`.
    pub fn name(self) -> &'static str {
        match self {
            KernelPath::SmallFused => "small",
            KernelPath::Blocked => "blocked",
            KernelPath::BlockedTransposed => "blocked_t",
            KernelPath::GemmThenEpilogue => "gemm",
        }
    }

    /// The path named `name` ([`KernelPath::name`]).
    pub fn from_name(name: &str) -> Option<KernelPath> {
        PATHS.into_iter().find(|p| p.name() == name)
    }
}

impl CostModel {
    /// The path for a fusable chain of these sizes; `transposed_weight` says whether the
    /// weight is at hand transposed (a weight reused across a loop's iterations). Where it
    /// is not, [`KernelPath::BlockedTransposed`] means transposing it for this product.
    /// A path set with [`force_path`] wins.
    pub fn choose_for(
        &self,
        batch: usize,
        k: usize,
        n: usize,
        transposed_weight: bool,
    ) -> KernelPath {
        if let Some(path) = forced_path() {
            return path;
        }
        let macs = batch.saturating_mul(k).saturating_mul(n);
        let weight = k.saturating_mul(n);
        if k > BLOCKED_MAX_K {
            return if macs >= GEMM_CROSSOVER_MACS {
                KernelPath::GemmThenEpilogue
            } else {
                KernelPath::SmallFused
            };
        }
        let wide_one_pass = one_pass_avx512_available(k);
        if wide_one_pass
            && n <= self.narrow_max_width
            && k >= self.narrow_min_k
            && batch.saturating_mul(n) > self.crate_small_output
        {
            return KernelPath::SmallFused;
        }
        if transposed_weight && small_t_fits(batch, k) && small_gemm_t_available() {
            // The small kernel streams a transposed weight at a few nanoseconds of fixed
            // cost, batch 1 included.
            return KernelPath::BlockedTransposed;
        }
        if transposed_weight
            && batch >= self.transposed_min_batch
            && n >= self.transposed_min_width
            && weight >= self.transposed_min_weight
        {
            return KernelPath::BlockedTransposed;
        }
        if wide_one_pass && k >= self.one_pass_long_k && batch <= self.one_pass_long_max_batch {
            return KernelPath::SmallFused;
        }
        let transpose_from = self
            .transpose_once_min_batch
            .max(k / self.transpose_once_k_per_row);
        let small_k_rows = k <= SMALL_T_ANY_BATCH_K && batch >= self.transpose_once_narrow_batch;
        if (n >= self.transpose_once_min_width || small_k_rows)
            && (batch <= self.transpose_once_max_batch || small_t_fits(batch, k))
            && (batch >= transpose_from || k <= self.transpose_once_any_batch_k)
        {
            return KernelPath::BlockedTransposed;
        }
        let largest_given = if batch >= self.blocked_min_batch {
            usize::MAX
        } else if batch >= self.blocked_mid_batch {
            self.blocked_mid_weight
        } else if batch >= self.blocked_low_batch {
            self.blocked_low_weight
        } else {
            self.blocked_small_weight
        };
        if weight <= largest_given {
            KernelPath::Blocked
        } else if macs >= GEMM_CROSSOVER_MACS && !wide_one_pass {
            // A small batch against a large weight: the crate would not pack it, the AVX2
            // one-pass kernel is far from peak at this size, libtorch's GEMM packs it. The
            // AVX-512 one-pass kernel beats libtorch's GEMM at these sizes (8x256 -> 128:
            // 3.9 us).
            KernelPath::GemmThenEpilogue
        } else {
            KernelPath::SmallFused
        }
    }

    /// Whether a `fused_matmul` (a weight laid out `[k, n]`, the transposed-weight kernels'
    /// layout) of these sizes runs as one kernel: the small kernel where it applies, and the
    /// `gemm` crate plus the epilogue from the size on which the unfused `matmul` itself
    /// calls the crate (`dense::SMALL_MATMUL_MACS`). Below that, the unfused dense ops cost
    /// tens of nanoseconds each; above `BLOCKED_MAX_K`, the product is libtorch's, as for
    /// `linear`.
    pub fn fuses_in_out(&self, batch: usize, k: usize, n: usize) -> bool {
        let macs = batch.saturating_mul(k).saturating_mul(n);
        k <= BLOCKED_MAX_K
            && ((small_t_fits(batch, k) && small_gemm_t_available())
                || macs > crate::dense::SMALL_MATMUL_MACS)
    }

    /// [`CostModel::choose_for`] a weight as given.
    pub fn choose(&self, batch: usize, k: usize, n: usize) -> KernelPath {
        self.choose_for(batch, k, n, false)
    }
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

#[inline(always)]
pub(crate) fn activate(op: UnaryOp, v: f32) -> f32 {
    match op {
        // `v < 0` keeps NaN and -0.0 as ATen's relu does.
        UnaryOp::Relu => {
            if v < 0.0 {
                0.0
            } else {
                v
            }
        }
        UnaryOp::Sigmoid => crate::vmath::sigmoid(v),
        UnaryOp::Tanh => crate::vmath::tanh(v),
        UnaryOp::Abs => v.abs(),
        UnaryOp::Neg => -v,
        UnaryOp::Square => v * v,
        UnaryOp::Exp => crate::vmath::exp(v),
        UnaryOp::Log => v.ln(),
        UnaryOp::Sqrt => v.sqrt(),
        UnaryOp::Gelu => crate::vmath::gelu(v),
    }
}

/// `op` on element `v` of a whole tensor of `len` elements: [`activate`], except that GELU
/// of a one-element tensor takes eager's scalar loop ([`crate::vmath::gelu_one`]).
#[inline(always)]
fn activate_whole(op: UnaryOp, v: f32, len: usize) -> f32 {
    if op == UnaryOp::Gelu && len == 1 {
        crate::vmath::gelu_one(v)
    } else {
        activate(op, v)
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

fn check_reduce(reduce: Option<FusedReduce>) -> Result<()> {
    match reduce {
        Some(r) if r.dim != 1 => Err(RuntimeError::Unsupported(format!(
            "fused_linear reduces only over dim 1, got dim {}",
            r.dim
        ))),
        _ => Ok(()),
    }
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
    let path = COST_MODEL.choose_for(dims.batch, dims.in_features, dims.out_features, reused);
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
    let weight_len = dims.out_features * dims.in_features;
    // SAFETY: w is a contiguous float32 CPU tensor checked above, alive for the whole call.
    let given = unsafe { f32_slice(w.tensor(), weight_len) };
    let transposed = (path == KernelPath::BlockedTransposed)
        .then(|| transposed(given, dims.out_features, dims.in_features));
    let weight = transposed.as_ref().map_or(given, |wt| wt.as_slice());
    // SAFETY: x, b are contiguous float32 CPU tensors checked above and held alive for
    // the whole call; `out` is a fresh tensor nobody else sees yet.
    unsafe {
        linear_into(
            path,
            f32_slice(x.tensor(), dims.batch * dims.in_features),
            weight,
            b.as_ref().map(|b| f32_slice(b.tensor(), dims.out_features)),
            dims.batch,
            dims.in_features,
            dims.out_features,
            activations,
            reduce,
            f32_slice_mut(&mut out, output_len(dims, reduce)),
        )?;
    }
    Ok((out, path))
}

/// Runs the slice-level `path` ([`KernelPath::SmallFused`], [`KernelPath::Blocked`], or
/// [`KernelPath::BlockedTransposed`], for which `w` holds the weight transposed, [k, n]).
#[allow(clippy::too_many_arguments)]
pub fn linear_into(
    path: KernelPath,
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
    if batch * n == 1 && activations.contains(&UnaryOp::Gelu) {
        // Eager applies GELU to a one-element tensor with its scalar loop, whose classes at
        // +inf and beyond 2^127 differ from its vectorized loop's (`vmath::gelu_one`): the
        // product alone, then the chain on its one value.
        let mut y = [0.0f32];
        linear_into(path, x, w, b, batch, k, n, &[], None, &mut y)?;
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
    match path {
        KernelPath::Blocked => blocked_fused_linear(x, w, b, batch, k, n, activations, reduce, out),
        KernelPath::BlockedTransposed => {
            blocked_fused_linear_t(x, w, b, batch, k, n, activations, reduce, out)
        }
        KernelPath::SmallFused => {
            small_fused_linear(Isa::Best, x, w, b, batch, k, n, activations, reduce, out)
        }
        other => Err(RuntimeError::Unsupported(format!(
            "{other:?} does not run over slices"
        ))),
    }
}

/// Checks the slice lengths and the reduction of a slice-level kernel (every activation has
/// a scalar and a vectorized form, so the chain itself needs no check).
#[allow(clippy::too_many_arguments)]
fn check_slices(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    reduce: Option<FusedReduce>,
    out: &[f32],
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
    check_reduce(reduce)
}

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
#[allow(clippy::too_many_arguments)]
fn gemm_rows(
    x: &[f32],
    w: &[f32],
    layout: WeightLayout,
    batch: usize,
    k: usize,
    n: usize,
    y: &mut [f32],
    bias: Option<&[f32]>,
) -> bool {
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
const SMALL_T_ANY_BATCH_K: usize = 32;

/// Whether a product over a transposed weight runs [`small_gemm_t`] (where the CPU has it).
fn small_t_fits(batch: usize, k: usize) -> bool {
    k <= SMALL_T_ANY_BATCH_K || (batch <= SMALL_T_MAX_BATCH && k <= SMALL_T_MAX_K)
}

/// Whether [`small_fused_linear`] runs its AVX-512 path for dot products `k` long.
fn one_pass_avx512_available(k: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        k <= avx512::AVX512_MAX_K && crate::cpu::level() == crate::cpu::Level::Avx512
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = k;
        false
    }
}

/// Whether a `linear` of these sizes on `path` calls the `gemm` crate (whose packing
/// buffers are its only allocations), rather than one of this module's kernels.
pub fn runs_gemm_crate(path: KernelPath, batch: usize, k: usize) -> bool {
    match path {
        KernelPath::Blocked => true,
        KernelPath::BlockedTransposed => !(small_t_fits(batch, k) && small_gemm_t_available()),
        KernelPath::SmallFused | KernelPath::GemmThenEpilogue => false,
    }
}

fn small_gemm_t_available() -> bool {
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

    /// # Safety
    /// AVX-512F; `x` holds `batch * k` values, `wt` `k * n`, `y` `batch * n`, `bias` `n` or
    /// is null (no bias).
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
        let mut j0 = 0;
        while j0 < n {
            let cols = (n - j0).min(64);
            match cols.div_ceil(16) {
                1 => rows::<1>(x, wt, batch, k, n, j0, cols, y, bias),
                2 => rows::<2>(x, wt, batch, k, n, j0, cols, y, bias),
                3 => rows::<3>(x, wt, batch, k, n, j0, cols, y, bias),
                _ => rows::<4>(x, wt, batch, k, n, j0, cols, y, bias),
            }
            j0 += 64;
        }
    }

    /// Columns `j0..j0 + cols` (`NV` vectors of 16, the last one masked) of every row.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn rows<const NV: usize>(
        x: *const f32,
        wt: *const f32,
        batch: usize,
        k: usize,
        n: usize,
        j0: usize,
        cols: usize,
        y: *mut f32,
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
        // The bias of these columns, if any. Without one nothing is added (adding +0.0
        // would turn a -0.0 sum into +0.0).
        let b: Option<[__m512; NV]> = (!bias.is_null()).then(|| {
            std::array::from_fn(|v| _mm512_maskz_loadu_ps(masks[v], bias.add(j0 + 16 * v)))
        });
        let mut row = 0;
        while row + 4 <= batch {
            tile::<4, NV>(x, wt, k, n, j0, &masks, row, y, b.as_ref());
            row += 4;
        }
        while row < batch {
            tile::<1, NV>(x, wt, k, n, j0, &masks, row, y, b.as_ref());
            row += 1;
        }
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    unsafe fn tile<const MR: usize, const NV: usize>(
        x: *const f32,
        wt: *const f32,
        k: usize,
        n: usize,
        j0: usize,
        masks: &[__mmask16; NV],
        row: usize,
        y: *mut f32,
        bias: Option<&[__m512; NV]>,
    ) {
        let mut acc = [[_mm512_setzero_ps(); NV]; MR];
        for p in 0..k {
            let wp = wt.add(p * n + j0);
            let w: [__m512; NV] =
                std::array::from_fn(|v| _mm512_maskz_loadu_ps(masks[v], wp.add(16 * v)));
            for m in 0..MR {
                let xv = _mm512_set1_ps(*x.add((row + m) * k + p));
                for v in 0..NV {
                    acc[m][v] = _mm512_fmadd_ps(xv, w[v], acc[m][v]);
                }
            }
        }
        if let Some(b) = bias {
            for m in 0..MR {
                for v in 0..NV {
                    acc[m][v] = _mm512_add_ps(acc[m][v], b[v]);
                }
            }
        }
        for m in 0..MR {
            let yp = y.add((row + m) * n + j0);
            for v in 0..NV {
                _mm512_mask_storeu_ps(yp.add(16 * v), masks[v], acc[m][v]);
            }
        }
    }
}

/// The GEMM, then bias, activations and the reduction one output row at a time.
#[allow(clippy::too_many_arguments)]
fn blocked_rows(
    x: &[f32],
    w: &[f32],
    layout: WeightLayout,
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) {
    let mut scratch = None;
    let y: &mut [f32] = match reduce {
        None => out,
        Some(_) => scratch
            .insert(crate::dense::Buffer::take(batch * n))
            .as_mut_slice(),
    };
    let biased = gemm_rows(x, w, layout, batch, k, n, y, b);
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
    gemm_rows(a, b, WeightLayout::Transposed, m, k, n, y, None);
    Ok(())
}

/// Tile edge of the portable [`transpose_into`]: a tile's rows and columns stay in L1.
const TRANSPOSE_TILE: usize = 16;

/// `w^T` for `w` of [rows, cols] row-major, in a pooled buffer.
pub fn transposed(w: &[f32], rows: usize, cols: usize) -> crate::dense::Buffer {
    let mut wt = crate::dense::Buffer::take(rows * cols);
    transpose_into(w, rows, cols, wt.as_mut_slice());
    wt
}

/// `wt = w^T` for `w` of [rows, cols] row-major: 8x8 blocks in AVX registers where the CPU
/// has AVX2, tiles of scalar moves otherwise (and for the edges).
pub fn transpose_into(w: &[f32], rows: usize, cols: usize, wt: &mut [f32]) {
    assert!(w.len() >= rows * cols && wt.len() >= rows * cols);
    let mut done = (0, 0);
    #[cfg(target_arch = "x86_64")]
    {
        if crate::cpu::level() >= crate::cpu::Level::Avx2 {
            // SAFETY: the CPU has AVX2 (`level` is never above what it has); both slices
            // hold rows * cols values (asserted).
            unsafe { avx2::transpose_blocks(w, rows, cols, wt) };
            done = (rows / 8 * 8, cols / 8 * 8);
        }
    }
    let (rows8, cols8) = done;
    // What the blocks did not cover: the right-hand columns of their rows, then the bottom
    // rows (all of it when there were no blocks).
    transpose_tiles(w, rows, cols, 0..rows8, cols8..cols, wt);
    transpose_tiles(w, rows, cols, rows8..rows, 0..cols, wt);
}

/// `wt[c][r] = w[r][c]` for `r` in `rows_of`, `c` in `cols_of`, in tiles.
fn transpose_tiles(
    w: &[f32],
    rows: usize,
    cols: usize,
    rows_of: std::ops::Range<usize>,
    cols_of: std::ops::Range<usize>,
    wt: &mut [f32],
) {
    for r0 in rows_of.clone().step_by(TRANSPOSE_TILE) {
        for c0 in cols_of.clone().step_by(TRANSPOSE_TILE) {
            for r in r0..(r0 + TRANSPOSE_TILE).min(rows_of.end) {
                for c in c0..(c0 + TRANSPOSE_TILE).min(cols_of.end) {
                    wt[c * rows + r] = w[r * cols + c];
                }
            }
        }
    }
}

/// `linear` through the `gemm` crate (operands packed into cache-sized panels, AVX-512
/// microkernels where the CPU has them), then bias, activations and the reduction in one
/// pass over each output row while it is in L1. Same contract as [`small_fused_linear`].
#[allow(clippy::too_many_arguments)]
pub fn blocked_fused_linear(
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
    let shape = (batch, k, n);
    blocked_checked(
        x,
        w,
        WeightLayout::Given,
        b,
        shape,
        activations,
        reduce,
        out,
    )
}

/// [`blocked_fused_linear`] with the weight already transposed (`wt` is [k, n]), so a weight
/// used by several calls is transposed once.
#[allow(clippy::too_many_arguments)]
pub fn blocked_fused_linear_t(
    x: &[f32],
    wt: &[f32],
    b: Option<&[f32]>,
    batch: usize,
    k: usize,
    n: usize,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) -> Result<()> {
    let shape = (batch, k, n);
    blocked_checked(
        x,
        wt,
        WeightLayout::Transposed,
        b,
        shape,
        activations,
        reduce,
        out,
    )
}

/// The blocked path after checking the slices against `(batch, k, n)`.
#[allow(clippy::too_many_arguments)]
fn blocked_checked(
    x: &[f32],
    w: &[f32],
    layout: WeightLayout,
    b: Option<&[f32]>,
    (batch, k, n): (usize, usize, usize),
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    out: &mut [f32],
) -> Result<()> {
    check_slices(x, w, b, batch, k, n, reduce, out)?;
    blocked_rows(x, w, layout, b, batch, k, n, activations, reduce, out);
    Ok(())
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
        apply_whole_in_place(op, data);
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
            *slot = finish_reduce(r.kind, sum_pairwise(row), n);
        }
    }
    Ok(out)
}

/// [`apply_in_place`] over a buffer that is a whole tensor: GELU of one element takes eager's
/// scalar loop ([`activate_whole`]).
fn apply_whole_in_place(op: UnaryOp, data: &mut [f32]) {
    if let [v] = data {
        *v = activate_whole(op, *v, 1);
    } else {
        apply_in_place(op, data);
    }
}

/// One activation over a buffer (part of a tensor of two or more elements), as its own loop
/// so the compiler can vectorize it.
fn apply_in_place(op: UnaryOp, data: &mut [f32]) {
    match op {
        UnaryOp::Relu => data
            .iter_mut()
            .for_each(|v| *v = activate(UnaryOp::Relu, *v)),
        UnaryOp::Abs => data.iter_mut().for_each(|v| *v = v.abs()),
        UnaryOp::Neg => data.iter_mut().for_each(|v| *v = -*v),
        UnaryOp::Square => data.iter_mut().for_each(|v| *v *= *v),
        UnaryOp::Exp => crate::vmath::map_in_place(crate::vmath::Func::Exp, data),
        UnaryOp::Tanh => crate::vmath::map_in_place(crate::vmath::Func::Tanh, data),
        UnaryOp::Sigmoid => crate::vmath::map_in_place(crate::vmath::Func::Sigmoid, data),
        UnaryOp::Gelu => crate::vmath::map_in_place(crate::vmath::Func::Gelu, data),
        other => data.iter_mut().for_each(|v| *v = activate(other, *v)),
    }
}

/// Sum of a row: `LANES` independent accumulators (vectorizable) over blocks of
/// [`SUM_BLOCK`], blocks combined pairwise.
#[inline(always)]
pub(crate) fn sum_pairwise(values: &[f32]) -> f32 {
    let full = values.len() / LANES * LANES;
    let tail: f32 = values[full..].iter().sum();
    // One block (the common case) without the recursive call.
    let lanes = if full <= SUM_BLOCK {
        sum_block(&values[..full])
    } else {
        sum_lanes(&values[..full])
    };
    hsum_lanes(lanes) + tail
}

/// `values.len()` is a multiple of `LANES`.
fn sum_lanes(values: &[f32]) -> [f32; LANES] {
    if values.len() > SUM_BLOCK {
        let (lo, hi) = values.split_at(pairwise_split(values.len(), SUM_BLOCK));
        return add_lanes(sum_lanes(lo), sum_lanes(hi));
    }
    sum_block(values)
}

#[inline(always)]
fn sum_block(values: &[f32]) -> [f32; LANES] {
    let mut acc = [0.0f32; LANES];
    for chunk in values.chunks_exact(LANES) {
        for l in 0..LANES {
            acc[l] += chunk[l];
        }
    }
    acc
}

#[inline(always)]
fn add_lanes(a: [f32; LANES], b: [f32; LANES]) -> [f32; LANES] {
    std::array::from_fn(|l| a[l] + b[l])
}

/// The lanes summed pairwise, as the AVX2 horizontal sum does.
#[inline(always)]
fn hsum_lanes(acc: [f32; LANES]) -> f32 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

/// Pairwise sum of block sums that arrive one at a time (the one-pass kernels reduce
/// outputs as they are computed), without storing them: combined like a binary counter,
/// level `i` holding the sum of `2^i` blocks.
struct PairwiseSum {
    /// Bit `i` set: `levels[i]` holds a sum of `2^i` blocks.
    count: usize,
    levels: [f32; usize::BITS as usize],
}

impl PairwiseSum {
    #[inline(always)]
    fn new() -> Self {
        PairwiseSum {
            count: 0,
            levels: [0.0; usize::BITS as usize],
        }
    }

    #[inline(always)]
    fn push(&mut self, block: f32) {
        let mut sum = block;
        let mut level = 0;
        while self.count & (1 << level) != 0 {
            sum += self.levels[level];
            level += 1;
        }
        self.levels[level] = sum;
        self.count += 1;
    }

    /// Smallest partial sums first, so each joins the others near its own magnitude.
    #[inline(always)]
    fn total(&self) -> f32 {
        let mut total = 0.0f32;
        let mut rest = self.count;
        while rest != 0 {
            let level = rest.trailing_zeros() as usize;
            total += self.levels[level];
            rest &= rest - 1;
        }
        total
    }
}

#[inline(always)]
pub(crate) fn finish_reduce(kind: ReduceKind, sum: f32, count: usize) -> f32 {
    match kind {
        ReduceKind::Sum => sum,
        // 0/0 gives NaN for an empty row, as ATen's mean does.
        ReduceKind::Mean => sum / count as f32,
    }
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
    check_slices(x, w, b, batch, k, n, reduce, out)?;
    let shape = Shape {
        batch,
        k,
        n,
        activations,
        reduce,
        inline_activations: activations.iter().all(|op| {
            matches!(
                op,
                UnaryOp::Relu | UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Square
            )
        }),
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = isa;
    #[cfg(target_arch = "x86_64")]
    {
        if isa != Isa::Portable && crate::cpu::level() >= crate::cpu::Level::Avx2 {
            if isa == Isa::Best && one_pass_avx512_available(k) {
                // SAFETY: the CPU has the features; buffer lengths were checked above.
                unsafe { avx512::fused_linear(x, w, b, &shape, out) };
            } else {
                // SAFETY: as above.
                unsafe { avx2::fused_linear(x, w, b, &shape, out) };
            }
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
    /// Whether every activation is cheap enough to apply element by element in the tile
    /// loop (one or two instructions); transcendental ones run vectorized over each chunk.
    inline_activations: bool,
}

/// Output feature `j` from its dot product: bias, then activations.
#[inline(always)]
fn activated(b: Option<&[f32]>, shape: &Shape<'_>, j: usize, dot: f32) -> f32 {
    activate_all(shape.activations, biased(b, j, dot))
}

/// Output feature `j` from its dot product plus the bias. Like ATen's GEMM for batches > 1:
/// the product sum starts from +0.0 and the bias is added last, so an all-zero row gives
/// +0.0 whatever the zero signs.
#[inline(always)]
fn biased(b: Option<&[f32]>, j: usize, dot: f32) -> f32 {
    match b {
        Some(bias) => dot + bias[j],
        None => dot,
    }
}

/// An output element as the one-pass kernel's tile loop stores it: activated there when the
/// activations are cheap, else only biased, and the chain applied afterwards to the whole
/// chunk by the vectorized loops of [`apply_in_place`] (same bits: `vmath`'s slice loops give
/// the scalar functions' results).
#[inline(always)]
fn element(b: Option<&[f32]>, shape: &Shape<'_>, j: usize, dot: f32) -> f32 {
    if shape.inline_activations {
        activated(b, shape, j, dot)
    } else {
        biased(b, j, dot)
    }
}

/// [`activated`], then either the output element or a running sum of outputs.
#[inline(always)]
fn epilogue_element(
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    row: usize,
    j: usize,
    dot: f32,
    sum: &mut f32,
    out: &mut [f32],
) {
    let v = activated(b, shape, j, dot);
    if shape.reduce.is_some() {
        *sum += v;
    } else {
        out[row * shape.n + j] = v;
    }
}

/// Dot product of equal-length rows: `LANES` accumulators over blocks of
/// [`PORTABLE_DOT_BLOCK`], blocks combined pairwise.
#[inline(always)]
fn dot_pairwise(x: &[f32], w: &[f32]) -> f32 {
    let full = x.len() / LANES * LANES;
    let tail: f32 = x[full..].iter().zip(&w[full..]).map(|(a, b)| a * b).sum();
    let lanes = if full <= PORTABLE_DOT_BLOCK {
        dot_block(&x[..full], &w[..full])
    } else {
        dot_lanes(&x[..full], &w[..full])
    };
    hsum_lanes(lanes) + tail
}

/// `x.len() == w.len()`, a multiple of `LANES`.
fn dot_lanes(x: &[f32], w: &[f32]) -> [f32; LANES] {
    if x.len() > PORTABLE_DOT_BLOCK {
        let mid = pairwise_split(x.len(), PORTABLE_DOT_BLOCK);
        let (x0, x1) = x.split_at(mid);
        let (w0, w1) = w.split_at(mid);
        return add_lanes(dot_lanes(x0, w0), dot_lanes(x1, w1));
    }
    dot_block(x, w)
}

#[inline(always)]
fn dot_block(x: &[f32], w: &[f32]) -> [f32; LANES] {
    let mut acc = [0.0f32; LANES];
    for (xs, ws) in x.chunks_exact(LANES).zip(w.chunks_exact(LANES)) {
        for l in 0..LANES {
            acc[l] += xs[l] * ws[l];
        }
    }
    acc
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
        let mut reduced = PairwiseSum::new();
        for start in (0..n).step_by(STREAM_BLOCK) {
            let mut block = 0.0f32;
            for j in start..n.min(start + STREAM_BLOCK) {
                let dot = dot_pairwise(xr, &w[j * k..(j + 1) * k]);
                epilogue_element(b, shape, row, j, dot, &mut block, out);
            }
            reduced.push(block);
        }
        if let Some(r) = reduce {
            out[row] = finish_reduce(r.kind, reduced.total(), n);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! AVX2+FMA path. Register tiles of `MR` batch rows x `NR` output features: each 8-wide
    //! chunk of the `MR` input rows and `NR` weight rows is loaded once and feeds `MR * NR`
    //! independent FMA chains. Two-row tiles (2 x 4) for batches, one-row tiles (1 x 8) for
    //! the last odd row and batch 1. Along `k` the chains run over blocks of `DOT_BLOCK`,
    //! whose partial sums are combined pairwise (see the module doc).
    use std::arch::x86_64::*;

    use std::mem::MaybeUninit;

    use super::{
        apply_in_place, element, finish_reduce, sum_pairwise, PairwiseSum, Shape, DOT_BLOCK,
    };

    /// The full 8x8 blocks of `w` ([rows, cols]) transposed into `wt` ([cols, rows]).
    ///
    /// # Safety
    /// The CPU must support AVX2; `w` and `wt` must hold at least `rows * cols` values.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn transpose_blocks(w: &[f32], rows: usize, cols: usize, wt: &mut [f32]) {
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
                block_tile(
                    w,
                    rows,
                    cols,
                    wt,
                    tr..rows8.min(tr + TILE_ROWS),
                    tc..cols8.min(tc + TILE_COLS),
                );
            }
        }
    }

    /// The 8x8 blocks of one tile of [`transpose_blocks`].
    #[inline(always)]
    unsafe fn block_tile(
        w: &[f32],
        rows: usize,
        cols: usize,
        wt: &mut [f32],
        row_range: std::ops::Range<usize>,
        col_range: std::ops::Range<usize>,
    ) {
        for r0 in row_range.step_by(8) {
            for c0 in col_range.clone().step_by(8) {
                let p = w.as_ptr().add(r0 * cols + c0);
                let r: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(p.add(i * cols)));
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

    #[inline(always)]
    unsafe fn hsum(v: __m256) -> f32 {
        let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
        _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)))
    }

    /// 8-lane partial dot products of the `MR` rows at `x` with the `NR` rows at `w` (rows
    /// `k` apart) over columns `lo..hi`, multiples of 8: one FMA chain per pair.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // indices address the x, w and acc tiles together
    unsafe fn chains<const MR: usize, const NR: usize>(
        x: *const f32,
        w: *const f32,
        k: usize,
        lo: usize,
        hi: usize,
    ) -> [[__m256; NR]; MR] {
        let mut acc = [[_mm256_setzero_ps(); NR]; MR];
        let mut i = lo;
        while i < hi {
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
        acc
    }

    /// Dot products of the `MR` rows at `x` with the `NR` rows at `w` (all `k` long).
    /// `LONG` (rows longer than one block) is a separate instantiation of the whole kernel:
    /// a run-time branch here costs the short case several percent.
    #[inline(always)]
    unsafe fn tile<const MR: usize, const NR: usize, const LONG: bool>(
        x: *const f32,
        w: *const f32,
        k: usize,
    ) -> [[f32; NR]; MR] {
        if LONG {
            long_tile::<MR, NR>(x, w, k)
        } else {
            finish(chains::<MR, NR>(x, w, k, 0, k / 8 * 8), x, w, k)
        }
    }

    /// [`tile`] for rows longer than one block: the blocks' partial sums combined pairwise,
    /// like a binary counter (level `i` holds the sum of `2^i` blocks), which costs less
    /// than recursing over halves.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::needless_range_loop)] // indices address the tiles of partial sums together
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
            let mut acc = chains::<MR, NR>(x, w, k, lo, hi);
            let mut level = 0;
            while count & (1 << level) != 0 {
                // SAFETY: bit `level` of `count` is set only after levels[level] is written.
                let prev = levels[level].assume_init_ref();
                for m in 0..MR {
                    for r in 0..NR {
                        acc[m][r] = _mm256_add_ps(prev[m][r], acc[m][r]);
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
        // SAFETY: as above.
        let mut total = levels[rest.trailing_zeros() as usize].assume_init();
        rest &= rest - 1;
        while rest != 0 {
            // SAFETY: as above, every set bit's level was written.
            let part = levels[rest.trailing_zeros() as usize].assume_init_ref();
            for m in 0..MR {
                for r in 0..NR {
                    total[m][r] = _mm256_add_ps(total[m][r], part[m][r]);
                }
            }
            rest &= rest - 1;
        }
        finish(total, x, w, k)
    }

    /// Horizontal sums of the 8-lane partial dot products, plus the last `k % 8` products.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // indices address the x, w and acc tiles together
    unsafe fn finish<const MR: usize, const NR: usize>(
        acc: [[__m256; NR]; MR],
        x: *const f32,
        w: *const f32,
        k: usize,
    ) -> [[f32; NR]; MR] {
        let i = k / 8 * 8;
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

    /// Output features the reduction stages before summing them (per row, on the stack).
    const CHUNK: usize = 256;

    /// Rows `row..row + MR` of the output (or of the reduction). A reduced row is computed
    /// in chunks of [`CHUNK`] outputs written to a stack buffer, each chunk summed like the
    /// GEMM path's rows (vectorized, pairwise) and the chunk sums combined pairwise: as
    /// cheap per output as storing it, where a pairwise running sum inside the tile loop
    /// cost 10-30% of the small cells' time.
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
        let xr = x.as_ptr().add(row * k);
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
            let dst: [*mut f32; MR] = std::array::from_fn(|m| {
                if reduce.is_some() {
                    staged[m].as_mut_ptr().cast::<f32>().wrapping_sub(start)
                } else {
                    out.as_mut_ptr().add((row + m) * n)
                }
            });
            // CHUNK is a multiple of NR: only the row's last chunk has single columns.
            let mut j = start;
            while j + NR <= end {
                let d = D::dots::<MR, NR, LONG>(xr, w.as_ptr().add(j * k), k);
                for m in 0..MR {
                    for (r, &dot) in d[m].iter().enumerate() {
                        *dst[m].add(j + r) = element(b, shape, j + r, dot);
                    }
                }
                j += NR;
            }
            while j < end {
                let d = D::dots::<MR, 1, LONG>(xr, w.as_ptr().add(j * k), k);
                for m in 0..MR {
                    *dst[m].add(j) = element(b, shape, j, d[m][0]);
                }
                j += 1;
            }
            if !shape.inline_activations {
                for m in 0..MR {
                    // SAFETY: the loops above wrote dst[m][start..end].
                    let chunk = std::slice::from_raw_parts_mut(dst[m].add(start), end - start);
                    for &op in shape.activations {
                        apply_in_place(op, chunk);
                    }
                }
            }
            if reduce.is_some() {
                for m in 0..MR {
                    // SAFETY: the loops above wrote staged[m][..end - start].
                    let values =
                        std::slice::from_raw_parts(staged[m].as_ptr().cast::<f32>(), end - start);
                    reduced[m].push(sum_pairwise(values));
                }
            }
            start = end;
        }
        if let Some(r) = reduce {
            for m in 0..MR {
                out[row + m] = finish_reduce(r.kind, reduced[m].total(), n);
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
        if shape.k / 8 * 8 > DOT_BLOCK {
            kernel::<true>(x, w, b, shape, out);
        } else {
            kernel::<false>(x, w, b, shape, out);
        }
    }

    #[inline(always)]
    unsafe fn kernel<const LONG: bool>(
        x: &[f32],
        w: &[f32],
        b: Option<&[f32]>,
        shape: &Shape<'_>,
        out: &mut [f32],
    ) {
        all_rows::<Avx2, false, LONG>(x, w, b, shape, out);
    }

    /// Every output row: in tiles of 4 rows (`FOUR`, where the registers hold them), then 2,
    /// then single rows against 8 output features at a time.
    #[inline(always)]
    pub(super) unsafe fn all_rows<D: Dots, const FOUR: bool, const LONG: bool>(
        x: &[f32],
        w: &[f32],
        b: Option<&[f32]>,
        shape: &Shape<'_>,
        out: &mut [f32],
    ) {
        let mut row = 0;
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

    /// Dot products of a register tile: the `MR` rows at `x` with the `NR` rows at `w`, all
    /// `k` long. [`rows`] is written once over it; each instruction set gives its own.
    pub(super) trait Dots {
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
            tile::<MR, NR, LONG>(x, w, k)
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    //! AVX-512 path of the one-pass kernel, for dot products up to [`AVX512_MAX_K`] long:
    //! 16-wide chunks (the last one masked, so no scalar tail) of `MR` input rows and `NR`
    //! weight rows feed `MR * NR` FMA chains, summed across lanes at the end of the tile.
    //! Each lane sums at most `AVX512_MAX_K / 16` products in sequence, fewer than the AVX2
    //! path's blocks; the tiles, chunking, epilogue and reduction are the AVX2 path's
    //! ([`super::avx2::all_rows`]).
    use std::arch::x86_64::*;

    use super::avx2::{all_rows, Dots};
    use super::Shape;

    /// Longest dot product this path takes (64 products per lane); longer ones take the
    /// AVX2 path's blocked pairwise sums.
    pub(super) const AVX512_MAX_K: usize = 1024;

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
    pub(super) unsafe fn fused_linear(
        x: &[f32],
        w: &[f32],
        b: Option<&[f32]>,
        shape: &Shape<'_>,
        out: &mut [f32],
    ) {
        all_rows::<Avx512, true, false>(x, w, b, shape, out);
    }
}
