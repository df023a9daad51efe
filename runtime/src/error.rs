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
    /// libtorch reported an error (`RuntimeError`, with libtorch's message and without the
    /// C++ backtrace, as eager PyTorch shows it).
    #[error("{0}")]
    Torch(String),
    /// The function uses something this executor cannot run (`RuntimeError`).
    #[error("{0}")]
    Unsupported(String),
    /// A scalar division or modulo by zero (`ZeroDivisionError`, with Python's words).
    #[error("{0}")]
    ZeroDivision(String),
    /// An int result outside 64 bits (`OverflowError`): compiled ints are 64-bit, and the
    /// reference's generated code checks overflow too; never a wrapped number.
    #[error("{0}")]
    Overflow(String),
    /// A bad scalar value, as Python reports it (`ValueError`, e.g. a zero `range` step).
    #[error("{0}")]
    Value(String),
    /// The interrupt check between loop iterations reported a pending signal; the caller
    /// holds the exception to raise (`KeyboardInterrupt`).
    /// An index out of range, as eager's `IndexError` (an argmax over an empty dim).
    #[error("{0}")]
    Index(String),
    #[error("interrupted")]
    Interrupted,
    /// The callee of a boundary call into Python raised; the embedder that ran the call
    /// holds the exception and raises it unchanged (the text is its `str`, for anyone else).
    #[error("{0}")]
    Raised(String),
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

impl From<tch::TchError> for RuntimeError {
    fn from(err: tch::TchError) -> RuntimeError {
        RuntimeError::Torch(torch_message(&err.to_string()))
    }
}

/// libtorch's own message: tch prefixes it and appends the C++ frames.
fn torch_message(text: &str) -> String {
    let text = text.strip_prefix("Internal torch error: ").unwrap_or(text);
    let message = match text.find("\nException raised from") {
        Some(end) => &text[..end],
        None => text,
    };
    message.trim_end().to_string()
}

/// An [`RuntimeError::Unsupported`] error: malformed IR or an internal invariant that does
/// not hold (the executor's compile and run steps answer these with errors, never panics).
pub(crate) fn unsupported<T>(message: impl Into<String>) -> Result<T> {
    Err(RuntimeError::Unsupported(message.into()))
}

#[cfg(test)]
mod tests {
    use super::torch_message;

    #[test]
    fn backtraces_are_dropped() {
        let raw = "Internal torch error: The expanded size of the tensor (8) must match.\nException raised from inferExpandGeometryImpl at x.cpp:98 (most recent call first):\nframe #0: ...";
        assert_eq!(
            torch_message(raw),
            "The expanded size of the tensor (8) must match."
        );
        assert_eq!(torch_message("plain"), "plain");
    }
}
