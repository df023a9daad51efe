//! The typed tensor IR of rextio-torch.
//!
//! A [`Function`] has typed parameters, one result type, an arena of pure expressions
//! ([`Expr`], addressed by [`ExprId`]) and a body of structured statements ([`Stmt`]).
//! Spans and source names live in side tables, never in nodes. [`print`] and [`parse`] give a
//! text form that round-trips; [`graph`] gives a petgraph view and its Graphviz rendering;
//! [`diag`] is the diagnostic model every stage reports through.
//!
//! # Invariants (checked by `rextio_passes::validate`, relied on by every later stage)
//!
//! 1. **Definition order.** Every operand of an expression was allocated before it, so arena
//!    order is a topological order and there are no cycles.
//! 2. **Typing.** Every expression's declared `ty` equals the type [`typing::result_type`]
//!    derives from its operands; tensor types are float32 or int64, rank 1 or 2, on `cpu` or
//!    `cuda0`; no op produces rank 0.
//! 3. **Parameters.** `Param(i)` refers to an existing parameter, and its type is that
//!    parameter's type.
//! 4. **Devices.** The operands of an op are on one device.
//! 5. **Returns.** The body ends with exactly one `Return`, of a value whose type is the
//!    function's result type. No statement follows a `Return`.
//! 6. **Fused ops.** `FusedLinear` carries only elementwise activations and a reduction over
//!    dim 1 of its rank-2 linear result; it means exactly the unfused chain.
//! 7. **Side tables** only name expressions that exist.

pub mod diag;
pub mod expr;
pub mod function;
pub mod graph;
pub mod parse;
pub mod print;
pub mod types;
pub mod typing;

pub use diag::{Diagnostic, Label, Severity};
pub use expr::{BinaryOp, Expr, ExprId, ExprKind, FusedReduce, ReduceKind, UnaryOp};
pub use function::{Block, Function, Module, Param, Span, Stmt};
pub use graph::{to_dot, to_graph, uses, EdgeLabel, NodeLabel};
pub use parse::{parse_function, parse_module, ParseError};
pub use print::{print_function, print_module};
pub use types::{DType, Device, Marker, TensorType, Type, MARKERS};
