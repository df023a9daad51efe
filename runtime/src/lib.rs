//! What compiled rextio-torch code calls at run time: argument checks with the reference's
//! exact messages ([`checks`]), op helpers over fallible tch calls ([`ops`]), the
//! instruction-set level every kernel runs at ([`cpu`]), fused CPU kernels with run-time
//! kernel choice ([`kernels`]), vectorized elementwise math ([`vmath`]), dense float32
//! values and their kernels ([`dense`]), Python's scalar semantics ([`scalar`], [`control`]),
//! the IR executor ([`executor`]) and the ops generated code calls ([`exec`], [`lazy`]),
//! and, with feature `python`, the zero-copy Python boundary ([`boundary`]).
//!
//! Nothing reachable from user input panics: every failure is a [`RuntimeError`].

pub mod checks;
pub mod control;
pub mod cpu;
pub mod dense;
pub mod error;
pub mod exec;
pub mod executor;
pub mod kernels;
pub mod lazy;
pub mod ops;
pub mod scalar;
pub mod vmath;

#[cfg(feature = "python")]
pub mod boundary;

pub use error::{Result, RuntimeError};
pub use executor::{Arg, Program, Value};
