//! The cost model: which `linear` kernel runs for which sizes ([`CostModel`], fitted to
//! measurements), whose GEMM computes wide products on this CPU ([`products`]), the thread's
//! forced path for tests ([`force_path`]), and the size limits the dispatch and the dense ops
//! share.

use std::cell::Cell;
use std::sync::OnceLock;

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
/// threads ([`crate::par`]). Smaller products run as one block on the calling thread. A
/// parallel region in libtorch's OpenMP team costs 1.2-1.6 us on the 2-vCPU Intel Xeon
/// (`par_speed`'s call floor; starting scoped threads cost 40-50, the reason this was 2^25
/// before), so blocks pay from about 4 M multiply-adds: at 2 threads 512x128x64 runs 1.44x
/// faster than at one (60 -> 42 us), 1024x256x16 1.67x, 1024x256x64 1.70x, 2048x128x128
/// 1.86x, while cutting into blocks costs 1-3% at one thread (`cargo run --release -p
/// rextio-runtime --example par_speed -- 512x128x64 1024x256x16 1024x256x64 2048x128x128`,
/// docs/benchmarks.md "Threads"). No Phase A/B, scoring or chains cell comes near it.
pub const PAR_MIN_MACS: usize = 1 << 22;

/// Rows per block of a blocked `linear`. Fixed, never derived from the thread count, so every
/// thread count computes the same blocks and the results are the same bits (the `gemm` crate
/// picks its blocking from the sizes it is given: a block is always given the same sizes).
/// Each block is one call of the kernel, which repacks the weight: at one thread 256-row
/// blocks cost 4% over one call at 4096x512x512 and 13-16% at 1024x512x512 and
/// 2048x1024x1024 (`par_speed`), the price of a partition that does not depend on the thread
/// count; a batch of 1024 still gives four blocks.
pub const LINEAR_ROW_BLOCK: usize = 256;

/// Row-wise passes (the epilogue after libtorch's GEMM, softmax over rows) over at least
/// this many elements run their row blocks on several threads. In libtorch's OpenMP team a
/// ReLU, the cheapest pass, breaks even at 64 K elements (4.7 us at one thread and at two)
/// and gains from 128 K (9.3 -> 7.7 us; 1 M: 147 -> 97); exponentials (softmax, GELU,
/// sigmoid) cost several times more per element, so they gain more (`par_speed`).
pub const PAR_MIN_ELEMENTS: usize = 1 << 17;

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
    /// Where [`Products::Libtorch`] is chosen, libtorch's GEMM computes every product of at
    /// least `libtorch_min_batch` rows and `libtorch_min_macs` multiply-adds, except at
    /// `libtorch_narrow_batch` rows or more against a weight under `libtorch_narrow_weight`
    /// elements, where the crate's blocks stay faster (Intel Xeon, one thread: 4096x256 ->
    /// 256 0.92x as fast on libtorch, 1024x256 -> 256 0.98x; 128x128 -> 128, 2 M
    /// multiply-adds: 1.06x eager on the crate, 1.00x on libtorch).
    pub libtorch_min_batch: usize,
    pub libtorch_min_macs: usize,
    pub libtorch_narrow_batch: usize,
    pub libtorch_narrow_weight: usize,
}

/// Whose GEMM computes the wide products ([`CostModel::libtorch_takes`]): the `gemm` crate's
/// blocked kernels with our epilogue, or libtorch's (MKL in the pinned wheel) with our
/// epilogue after it ([`KernelPath::GemmThenEpilogue`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Products {
    Crate,
    Libtorch,
}

/// The environment variable that picks [`Products`]: `auto` (or unset or empty), `crate`
/// or `libtorch`.
pub const PRODUCTS_ENV: &str = "REXTIO_TORCH_PRODUCTS";

impl Products {
    pub fn name(self) -> &'static str {
        match self {
            Products::Crate => "crate",
            Products::Libtorch => "libtorch",
        }
    }

    /// Parses a `REXTIO_TORCH_PRODUCTS` value: `Ok(None)` for `auto` (unset or empty too).
    pub fn parse(value: &str) -> Result<Option<Products>, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(None),
            "crate" => Ok(Some(Products::Crate)),
            "libtorch" => Ok(Some(Products::Libtorch)),
            other => Err(format!(
                "{PRODUCTS_ENV}={other:?} is not one of auto, crate, libtorch; using auto"
            )),
        }
    }

    /// The choice for a CPU of this vendor. Measured with the pinned wheel's MKL (2024.2),
    /// every path forced per call (`force_kernel_path`, docs/benchmarks.md "Whose GEMM"):
    /// on an Intel Xeon (Sapphire Rapids features) libtorch's GEMM beats the crate's from a
    /// batch of 32 and 4 M multiply-adds on, by 1.1-1.6x at one thread (64x512 -> 512: 0.79x
    /// eager on the crate, 1.01x on libtorch); on the AMD EPYC machines the cost model was
    /// fitted on, the crate's products ran at or above eager's there (docs/benchmarks.md).
    pub fn for_vendor(vendor: crate::cpu::Vendor) -> Products {
        match vendor {
            crate::cpu::Vendor::Intel => Products::Libtorch,
            crate::cpu::Vendor::Amd | crate::cpu::Vendor::Other => Products::Crate,
        }
    }
}

struct ProductsChoice {
    products: Products,
    forced: bool,
    problem: Option<String>,
}

fn products_choice() -> &'static ProductsChoice {
    static CHOICE: OnceLock<ProductsChoice> = OnceLock::new();
    CHOICE.get_or_init(|| {
        let by_vendor = Products::for_vendor(crate::cpu::vendor());
        let value = std::env::var(PRODUCTS_ENV).unwrap_or_default();
        match Products::parse(&value) {
            Ok(Some(products)) => ProductsChoice {
                products,
                forced: true,
                problem: None,
            },
            Ok(None) => ProductsChoice {
                products: by_vendor,
                forced: false,
                problem: None,
            },
            Err(problem) => {
                eprintln!("rextio-torch: {problem}");
                ProductsChoice {
                    products: by_vendor,
                    forced: false,
                    problem: Some(problem),
                }
            }
        }
    })
}

thread_local! {
    /// The choice [`force_products`] set on this thread: 0 none, 1 crate, 2 libtorch.
    static FORCED_PRODUCTS: Cell<u8> = const { Cell::new(0) };
}

/// For tests (and for comparing the two on one machine): every product the calling thread
/// sizes up takes `products`' GEMM, until `force_products(None)`; per thread, as
/// [`force_path`] is.
pub fn force_products(products: Option<Products>) {
    let code = match products {
        None => 0,
        Some(Products::Crate) => 1,
        Some(Products::Libtorch) => 2,
    };
    FORCED_PRODUCTS.with(|p| p.set(code));
}

/// Whose GEMM computes wide products on this thread: the crate's in a child forked after the
/// runtime was loaded ([`crate::par::forked`]), else the one [`force_products`] set, else
/// `REXTIO_TORCH_PRODUCTS` where set, else [`Products::for_vendor`] of this CPU. The last
/// two are read once, so every call of a process makes the same choice for the same sizes
/// (the bits do not depend on the call).
pub fn products() -> Products {
    crate::par::init();
    if crate::par::forked() {
        // libtorch's GEMM runs on libgomp's threads, which a forked child lacks.
        return Products::Crate;
    }
    match FORCED_PRODUCTS.with(Cell::get) {
        1 => Products::Crate,
        2 => Products::Libtorch,
        _ => products_choice().products,
    }
}

/// For [`crate::cpu::describe`]: `products: libtorch (Intel)`, or with the variable that
/// forced it.
pub fn describe_products() -> String {
    let c = products_choice();
    let mut text = format!("products: {}", c.products.name());
    if c.forced {
        text.push_str(&format!(
            " ({PRODUCTS_ENV}; this CPU is {})",
            crate::cpu::vendor().name()
        ));
    } else {
        text.push_str(&format!(" ({})", crate::cpu::vendor().name()));
    }
    if let Some(p) = &c.problem {
        text.push_str(&format!("; {p}"));
    }
    text
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
    libtorch_min_batch: 32,
    libtorch_min_macs: 1 << 22,
    libtorch_narrow_batch: 1024,
    libtorch_narrow_weight: 128 * 1024,
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
        self.choose_on(products(), batch, k, n, transposed_weight)
    }

    /// Whether, where [`Products::Libtorch`] is chosen, libtorch's GEMM computes a product
    /// of these sizes (the fields' doc).
    pub fn libtorch_takes(&self, batch: usize, k: usize, n: usize) -> bool {
        let macs = batch.saturating_mul(k).saturating_mul(n);
        batch >= self.libtorch_min_batch
            && macs >= self.libtorch_min_macs
            && (batch < self.libtorch_narrow_batch
                || k.saturating_mul(n) >= self.libtorch_narrow_weight)
    }

    /// Whether this process hands a product of these sizes to libtorch's GEMM: dot products
    /// longer than [`BLOCKED_MAX_K`], or [`CostModel::libtorch_takes`] under
    /// [`Products::Libtorch`]. The unfused `matmul` and `fused_matmul` ask this too.
    pub fn libtorch_product(&self, batch: usize, k: usize, n: usize) -> bool {
        // The sizes first: most products are not wide, and they need not ask for the choice.
        k > BLOCKED_MAX_K || (self.libtorch_takes(batch, k, n) && products() == Products::Libtorch)
    }

    /// [`CostModel::choose_for`] with `products` chosen, no path forced: for tests of the
    /// model on either choice, whichever this CPU makes.
    pub fn choose_on(
        &self,
        products: Products,
        batch: usize,
        k: usize,
        n: usize,
        transposed_weight: bool,
    ) -> KernelPath {
        let macs = batch.saturating_mul(k).saturating_mul(n);
        let weight = k.saturating_mul(n);
        if products == Products::Libtorch && k <= BLOCKED_MAX_K && self.libtorch_takes(batch, k, n)
        {
            return KernelPath::GemmThenEpilogue;
        }
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
    /// tens of nanoseconds each; where [`CostModel::libtorch_product`] says so, the product
    /// is libtorch's, as for `linear`.
    pub fn fuses_in_out(&self, batch: usize, k: usize, n: usize) -> bool {
        let macs = batch.saturating_mul(k).saturating_mul(n);
        !self.libtorch_product(batch, k, n)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Where libtorch's GEMM is the faster (an Intel CPU), it takes the wide products and
    /// leaves the small batches, the small products and the narrow large batches to ours;
    /// where the crate's is, the model's choice is what it was fitted to be. (start => goal)
    #[test]
    fn the_products_choice_moves_only_wide_products() {
        let libtorch = [
            ((64, 512, 512), true),
            ((32, 512, 256), true),
            ((256, 768, 3072), true),
            ((1024, 512, 1024), true),
            ((4096, 256, 1024), true),
            ((4096, 256, 256), false),
            ((1024, 128, 512), false),
            ((16, 768, 3072), false),
            ((64, 128, 128), false),
            ((1, 1024, 1024), false),
        ];
        for ((batch, k, n), takes) in libtorch {
            let on_libtorch = COST_MODEL.choose_on(Products::Libtorch, batch, k, n, false);
            assert_eq!(
                COST_MODEL.libtorch_takes(batch, k, n),
                takes,
                "{batch}x{k}x{n}"
            );
            if takes {
                assert_eq!(on_libtorch, KernelPath::GemmThenEpilogue, "{batch}x{k}x{n}");
                assert_ne!(
                    COST_MODEL.choose_on(Products::Crate, batch, k, n, false),
                    KernelPath::GemmThenEpilogue,
                    "{batch}x{k}x{n} on the crate"
                );
            } else {
                assert_eq!(
                    on_libtorch,
                    COST_MODEL.choose_on(Products::Crate, batch, k, n, false),
                    "{batch}x{k}x{n}: the same choice on both"
                );
            }
        }
        // Long dot products are libtorch's on both.
        for products in [Products::Crate, Products::Libtorch] {
            assert_eq!(
                COST_MODEL.choose_on(products, 64, 5000, 300, false),
                KernelPath::GemmThenEpilogue
            );
        }
    }

    #[test]
    fn a_thread_forces_its_own_choice_and_values_parse() {
        let process = products();
        force_products(Some(Products::Libtorch));
        assert_eq!(products(), Products::Libtorch);
        let other = std::thread::spawn(products).join().unwrap();
        assert_eq!(other, process, "another thread keeps the process's choice");
        force_products(None);
        assert_eq!(products(), process);
        assert_eq!(Products::parse(" LibTorch "), Ok(Some(Products::Libtorch)));
        assert_eq!(Products::parse(""), Ok(None));
        assert_eq!(Products::parse("auto"), Ok(None));
        assert!(Products::parse("mkl")
            .unwrap_err()
            .contains("REXTIO_TORCH_PRODUCTS"));
        assert_eq!(
            Products::for_vendor(crate::cpu::Vendor::Intel),
            Products::Libtorch
        );
        assert_eq!(
            Products::for_vendor(crate::cpu::Vendor::Amd),
            Products::Crate
        );
    }
}
