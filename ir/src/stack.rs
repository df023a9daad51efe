//! Stack for the compiler's recursive walkers: the one place that says how much stack a
//! recursive step needs and how it gets more.
//!
//! Programs can be deep (a chain of 100,000 `x.relu()` calls is an AST 200,000 nodes deep,
//! docs/reliability.md, "Long programs"), and the walkers over ASTs and terms are recursive
//! because their rules read naturally that way. Each recursive entry point runs its step
//! through [`deep`], which continues on a fresh heap-allocated stack segment when less than
//! [`RED_ZONE`] bytes are left on the current one (the `stacker` crate, which
//! `ruff_python_parser` uses for the same reason), so depth is bounded by memory instead of by
//! the thread's stack: no input overflows the stack of the thread it is compiled on, be it an
//! 8 MiB main thread or a Python thread. How deep a program may be at all is a stated limit
//! checked before any walker runs (`rextio_frontend::depth`, RXT035).

/// Bytes that must be left on the stack for one recursive step (the largest walker frame
/// chain between two [`deep`] calls, with margin): below it, the step runs on a new segment.
pub const RED_ZONE: usize = 256 * 1024;

/// Size of each new stack segment: many steps run on one segment before the next is needed.
pub const SEGMENT: usize = 8 * 1024 * 1024;

/// Runs `step` with at least [`RED_ZONE`] bytes of stack, on a new segment if needed.
#[inline]
pub fn deep<R>(step: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, step)
}
