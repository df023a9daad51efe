//! Run-time errors of compiled code. Each maps to one Python exception class at the boundary
//! (`TypeError`, `ValueError`, `RuntimeError`); nothing here panics.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum RuntimeError {
    /// An argument is not what the annotation promises (`TypeError` in Python).
    #[error("{0}")]
    ArgumentType(String),
    /// A tensor argument has the wrong device, dtype, rank or layout (`ValueError`).
    #[error("{0}")]
    ArgumentValue(String),
    /// Sizes that do not fit together, found while computing (`RuntimeError`).
    #[error("{0}")]
    Shape(String),
    /// libtorch reported an error (`RuntimeError`, with libtorch's message).
    #[error("{0}")]
    Torch(#[from] tch::TchError),
    /// The function uses something this executor cannot run (`RuntimeError`).
    #[error("{0}")]
    Unsupported(String),
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
