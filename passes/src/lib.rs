//! The rextio-torch pass pipeline: everything between a lowered [`Function`] and the optimized
//! IR that the executor and the backend consume.
//!
//! - [`validate`] checks every IR invariant and hands out a [`validate::Valid`] proof;
//! - [`egraph`] converts a straight-line region to egg terms and back, losslessly;
//! - [`fuse`] saturates those terms under the fusion rules and extracts the cheapest form,
//!   after [`attention`] fuses attention chains (a view and scalar code: no egg terms);
//! - [`dce`] drops expressions no return reaches;
//! - [`pass`] and [`pipeline`] run them in a fixed order, with dumps and validation between
//!   stages.
//!
//! Every pass returns diagnostics instead of panicking: nothing here unwraps on input.
//!
//! [`Function`]: rextio_ir::Function

pub mod attention;
pub mod dce;
pub mod egraph;
pub mod fuse;
pub mod pass;
pub mod pipeline;
pub mod validate;

mod util;

pub use dce::Dce;
pub use fuse::Fuse;
pub use pass::Pass;
pub use pipeline::{default_pipeline, Pipeline};
pub use validate::{validate, Valid};
