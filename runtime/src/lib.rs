//! What compiled rextio-torch code calls at run time: argument checks with the reference's
//! exact messages ([`checks`]), op helpers over fallible tch calls ([`ops`]), the
//! instruction-set level every kernel runs at ([`cpu`]), fused CPU kernels with run-time
//! kernel choice ([`kernels`]), vectorized elementwise math ([`vmath`]), dense float32
//! values and their kernels ([`dense`]), Python's scalar semantics ([`scalar`], [`control`]),
//! the IR executor ([`executor`]) and the ops generated code calls ([`exec`], [`lazy`]),
//! and, with feature `python`, the zero-copy Python boundary ([`boundary`]).
//!
//! Nothing reachable from user input panics: every failure is a [`RuntimeError`].
//!
//! # Layers
//!
//! Modules form layers, lowest first; a module uses (`crate::...`) only modules of lower
//! layers, never its own layer's or a higher one's, so there is no import circle
//! (`runtime/tests/layers.rs` reads the sources and holds them to this table). The public
//! API is the documented modules' names as they always were: where an item moved to an
//! internal layer, its old module re-exports it. The internal layers are `pub` but hidden
//! from the docs: the backend carries every file of this crate into emitted crates and
//! Rextio plugin crates, whose tests expect each as a public module (backend/src/carried.rs).
//!
//! 0. [`error`]: [`RuntimeError`] and `Result`. [`cpu`]: the one cached instruction-set
//!    level (`REXTIO_TORCH_ISA` caps it); every AVX2/AVX-512 choice in the crate asks it.
//!    `par`: intra-op threads (torch's thread count, scoped workers, blocks whose bounds
//!    do not depend on the thread count).
//!    `scalar_math`: the `math` module's functions over `f64`/`i64` with CPython's values
//!    and errors (what [`scalar`] calls for `math.sqrt(x)`).
//! 1. `sum`: pairwise sums and reductions' results (their order of additions is part of
//!    the bits). `buffer`: the per-thread buffer pool, [`dense::Dims`], [`dense::F32`] views.
//!    [`checks`]: argument checks with the reference's messages. [`scalar`], [`control`]:
//!    Python's scalar semantics. [`ops`]: op helpers over fallible tch calls.
//! 2. [`vmath`]: the vectorized float32 transcendental functions over slices ([`vmath::Func`]).
//!    `transpose`: matrix transposition over slices (AVX2 8x8 blocks).
//! 3. [`unary`]: the numerics of every unary op of the IR's op table (scalar, slice, in place,
//!    which are cheap enough to inline, the ATen fallback): a new op's runtime is here.
//! 4. `linear_epilogue`: what every `linear` path shares (sizes, slice checks, activations,
//!    the one-pass kernels' per-element epilogue). `linear_small_m`: the small-batch product
//!    over a weight as given (12-64 rows, AVX-512), through the transposed input.
//! 5. `linear_portable`, `linear_avx2`: the one-pass kernel, portable and AVX2+FMA.
//!    `linear_gemm`: the `gemm` crate's blocked paths, the small AVX-512 transposed-weight
//!    kernel, `matmul` over buffers.
//! 6. `linear_avx512`: the one-pass kernel's AVX-512 dot products (over the AVX2 tiles).
//! 7. `linear_cost`: the cost model (which `linear` kernel runs for which sizes) and the
//!    forced path of tests.
//! 8. [`kernels`]: the `fused_linear` tensor API and the dispatch to the kernels above.
//! 9. [`dense`]: the dense float32 kernels (elementwise, reductions, softmax, argmax,
//!    small `matmul`).
//! 10. `reg`: run-time values ([`Value`], [`Arg`], the executor's registers).
//!     [`attention`]: the fused attention kernel (rank 3) over the linear kernels and the
//!     dense softmax.
//! 11. `eval`: one function per op over values, shared by the executor and generated code.
//! 12. `elementwise`: `torch.where` of a comparison, `maximum`/`minimum` and `pow` over
//!     values, through ATen's own kernels.
//! 13. [`exec`]: `eval` over tensors, for generated code. `instr`: the executor's
//!     instructions and [`Program`].
//! 14. [`lazy`]: deferred tensors of Rextio-generated code. `compile`: IR to instructions
//!     ([`Program::compile`]).
//! 15. [`executor`]: the run loop ([`Program::run`] and the pausing calls).
//! 16. [`boundary`] (feature `python`): the zero-copy Python boundary.

pub mod error;

pub mod cpu;

#[doc(hidden)]
pub mod par;

#[doc(hidden)]
pub mod buffer;
pub mod checks;
pub mod control;
pub mod ops;
pub mod scalar;
/// The `math` functions on Python scalars, as CPython computes them.
pub mod scalar_math;
#[doc(hidden)]
pub mod sum;

pub mod vmath;

#[doc(hidden)]
pub mod transpose;

pub mod unary;

#[doc(hidden)]
pub mod linear_epilogue;
#[doc(hidden)]
pub mod linear_small_m;

#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
pub mod linear_avx2;
#[doc(hidden)]
pub mod linear_gemm;
#[doc(hidden)]
pub mod linear_portable;

#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
pub mod linear_avx512;

#[doc(hidden)]
pub mod linear_cost;

pub mod kernels;

pub mod dense;

// The fused attention kernel (rank 3), over the linear kernels and the dense softmax.
pub mod attention;

#[doc(hidden)]
pub mod reg;

#[doc(hidden)]
pub mod eval;
// Elementwise selection and binary math (`where`, `maximum`, `minimum`, `pow`) through ATen.
pub mod elementwise;

pub mod exec;
#[doc(hidden)]
pub mod instr;

#[doc(hidden)]
pub mod compile;
pub mod lazy;

pub mod executor;

#[cfg(feature = "python")]
pub mod boundary;

pub use error::{Result, RuntimeError};
pub use executor::{Arg, Program, Value};
