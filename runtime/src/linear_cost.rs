//! The cost model: which `linear` kernel runs for which sizes ([`CostModel`], fitted to
//! measurements), the thread's forced path for tests ([`force_path`]), and the size limits
//! the dispatch and the dense ops share.

use std::cell::Cell;

use crate::linear_gemm::{small_gemm_t_available, small_t_fits, SMALL_T_ANY_BATCH_K};

/// From this many multiply-adds (`batch * in * out`) on, libtorch's GEMM plus our epilogue
/// beats the one-pass kernel. Measured with `cargo bench -p rextio-benches` (see
/// docs/benchmarks.md): one-pass wins at 16x128x64 (131 K: ~10 us vs ~17 us), GEMM wins at
/// 64x128x64 (524 K: ~29 us vs ~47 us).
pub const GEMM_CROSSOVER_MACS: usize = 1 << 18;

/// Matrix products up to this many multiply-adds run in the dense kernels ([`crate::dense`]);
/// larger ones use the `gemm` crate (or ATen's GEMM). Here because `fused_matmul`'s choice
/// ([`CostModel::fuses_in_out`]) follows it; `dense` re-exports it.
pub const SMALL_MATMUL_MACS: usize = 1 << 16;

/// A `linear` of at least this many multiply-adds (`batch * in * out`) with more than
/// [`LINEAR_ROW_BLOCK`] rows is cut into blocks of that many rows; from two whole blocks on
/// (`batch >= 2 * LINEAR_ROW_BLOCK`) the blocks run on up to `torch.get_num_threads()`
/// threads ([`crate::par`]). Smaller products run as one block on the calling thread, exactly
/// as before threads. Starting the scoped workers and handing them their first blocks costs
/// about 40-50 us on the development machine (2 vCPUs, `par_speed`'s row-wise pass: 262 K
/// ReLUs take 18 us at one thread and 63 at two), so a block must be worth more than that:
/// 512x256x256 (2^25) runs 1.25x faster at 2 threads (439 -> 351 us), 1024x256x256 1.53x,
/// 4096x512x512 1.86x (`cargo run --release -p rextio-runtime --example par_speed`,
/// docs/benchmarks.md "Threads"). No Phase A/B, scoring or chains cell comes near it.
pub const PAR_MIN_MACS: usize = 1 << 25;

/// Rows per block of a blocked `linear`. Fixed, never derived from the thread count, so every
/// thread count computes the same blocks and the results are the same bits (the `gemm` crate
/// picks its blocking from the sizes it is given: a block is always given the same sizes).
/// Each block is one call of the kernel, which repacks the weight: at one thread 256-row
/// blocks cost 4% over one call at 4096x512x512 and 13-16% at 1024x512x512 and
/// 2048x1024x1024 (`par_speed`), the price of a partition that does not depend on the thread
/// count; a batch of 1024 still gives four blocks.
pub const LINEAR_ROW_BLOCK: usize = 256;

/// Row-wise passes (the epilogue after libtorch's GEMM, softmax over rows) over at least
/// this many elements run their row blocks on several threads. A ReLU over 1 M elements is
/// about break-even at 2 threads (145 us at one, 157 at two: memory-bound, and the workers'
/// start); exponentials (softmax, GELU, sigmoid) cost several times more per element, so they
/// gain from here on. Below it (262 K ReLUs: 18 us against 63) one thread is faster.
pub const PAR_MIN_ELEMENTS: usize = 1 << 20;

/// Rows per block of a parallel row-wise pass whose rows are `row_len` long: about 16 K
/// elements, at least one row. Depends on the sizes only.
pub fn row_block(row_len: usize) -> usize {
    ((1usize << 14) / row_len.max(1)).max(1)
}

/// How many threads a call of `work` units (multiply-adds or elements) over `blocks`
/// blocks uses: 1 below `min_work` or with fewer than two blocks, else torch's thread count
/// (at most one per block).
pub fn parallel_threads(work: usize, min_work: usize, blocks: usize) -> usize {
    if work < min_work || blocks < 2 {
        1
    } else {
        crate::par::torch_threads().min(blocks)
    }
}

/// Which way a call went, for benches and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelPath {
    /// [`crate::kernels::small_fused_linear`]: one pass, dot products in registers.
    SmallFused,
    /// [`crate::kernels::blocked_fused_linear`]: the `gemm` crate's packed kernels, then the epilogue.
    Blocked,
    /// [`crate::kernels::blocked_fused_linear_t`]: the same over a weight transposed once per call.
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
    /// Past the small-batch kernel's batches (`linear_small_m`), a weight of at least
    /// `transpose_large_min_weight` elements with dot products at least
    /// `transpose_large_min_k` long is transposed for the product: the crate's packing of a
    /// weight as given, and the one-pass kernel, cost more there on the AMD EPYC (Zen 4)
    /// development machine (`kernel_paths`, three runs each: 128x256 -> 1024 1.15 ms
    /// transposing against 1.64 as given; 128x512 -> 512 1.1 against 2.3 on the one-pass
    /// kernel; 80x256 -> 256 112-117 us against 149-155), and ties below (k 64-128).
    pub transpose_large_min_k: usize,
    pub transpose_large_min_weight: usize,
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
    transpose_large_min_k: 256,
    transpose_large_min_weight: 64 * 1024,
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
        if crate::linear_small_m::fits(batch, k, n) {
            // A few dozen rows against a weight as given: the blocked path transposes the
            // input instead of the weight (`linear_small_m`), as fast as a weight transposed
            // already (16x256 -> 1024: 78 us, against 80 pre-transposed, 176 transposing it
            // and 137 on the one-pass kernel; 32x512 -> 512: 150 us against 226 one-pass).
            return KernelPath::Blocked;
        }
        if !transposed_weight
            && batch > crate::linear_small_m::SMALL_M_MAX_BATCH
            && k >= self.transpose_large_min_k
            && weight >= self.transpose_large_min_weight
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
            && ((small_t_fits(batch, k) && small_gemm_t_available()) || macs > SMALL_MATMUL_MACS)
    }

    /// [`CostModel::choose_for`] a weight as given.
    pub fn choose(&self, batch: usize, k: usize, n: usize) -> KernelPath {
        self.choose_for(batch, k, n, false)
    }
}
/// Whether [`crate::kernels::small_fused_linear`] runs its AVX-512 path for dot products `k` long.
pub(crate) fn one_pass_avx512_available(k: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        k <= crate::linear_avx512::AVX512_MAX_K && crate::cpu::level() == crate::cpu::Level::Avx512
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = k;
        false
    }
}

/// Whether a `linear` of these sizes on `path` calls the `gemm` crate (whose packing
/// buffers are its only allocations), rather than one of this module's kernels.
pub fn runs_gemm_crate(path: KernelPath, batch: usize, k: usize, n: usize) -> bool {
    match path {
        KernelPath::Blocked => !crate::linear_small_m::fits(batch, k, n),
        KernelPath::BlockedTransposed => !(small_t_fits(batch, k) && small_gemm_t_available()),
        KernelPath::SmallFused | KernelPath::GemmThenEpilogue => false,
    }
}
