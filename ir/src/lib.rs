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
//!    derives from its operands (a `bound` value's type is its statement's, see 9); tensor
//!    types are float32 or int64, rank 1 or 2, on `cpu` or `cuda0` (the extended surface
//!    adds float32 rank 3, float64 and bfloat16); only the ops of invariant 15 produce or
//!    take rank 0.
//! 3. **Parameters.** `Param(i)` refers to an existing parameter, and its type is that
//!    parameter's type.
//! 4. **Devices.** The operands of an op are on one device.
//! 5. **Returns and terminators.** Every path through the body ends in a `return` of a value
//!    of the function's result type. In every block no statement follows a terminator
//!    (`continue`, `break`, `yield`, `return`); a loop body and each `if` arm end in one (or
//!    in an `if` both of whose arms leave); `continue` and `break` appear only inside a loop
//!    and `yield` only as the end of an `if` arm, with one value per carried value or result.
//! 6. **Fused ops.** `FusedLinear` carries only elementwise activations and a tail over dim 1
//!    of its rank-2 linear result (a `mean`/`sum` reduction, `softmax`, `log_softmax` or `argmax`); it means exactly the unfused chain. With the
//!    `[in, out]` layout (`fused_matmul`) its input and weight are rank 2 and its bias rank 1,
//!    as for `linear`. Its prologue's operands are float32 rank-1 tensors on the input's
//!    device. `bias=added` (a bias written as `+ b` after the product) needs a bias and the
//!    `[out, in]` layout. A residual (added after the activations) is a float32 tensor of
//!    rank 2 on the input's device, and a fused op with one has no tail. A row normalization
//!    (`norm`) is typed as `layer_norm` of the input and is float32. `FusedAttention` takes
//!    three float32 rank-3 tensors on one device and scales its scores, if at all, by `/` or
//!    `*` with an `int` or `float`. No activation of a fused op depends on its element's position
//!    ([`UnaryOp::depends_on_position`]): the fused kernels apply activations per tile.
//! 7. **Side tables** only name expressions that exist.
//! 8. **Placement and scope.** Every expression that is not `bound` is evaluated by exactly
//!    one `let`; every `bound` expression is bound by exactly one statement and by no `let`.
//!    Every use (an operand, or a value a statement reads) sees a value placed before it in
//!    its own block or before the statement that encloses it in an outer block; a value
//!    placed in a nested block is visible outside it only through that statement's results.
//! 9. **Statement types.** Range bounds and a `for` index are `int`; a carried value, its
//!    initial value, every value passed for it by `continue`/`break` and its result share one
//!    type, and so do an `if` result and every value yielded for it; `if` and `while`
//!    conditions are `bool`.
//! 10. **Joins.** A `cat` or `stack` has at least one part; its parts are float32 tensors of
//!     one rank (0 to 3) and device; its dim is in range (`cat`: an existing dim, so never of
//!     rank-0 parts, the result has the parts' type; `stack`: at most the parts' rank, and
//!     the result, one rank more, is at most rank 3). Checked with the typing rules (RXIR-002; mixed devices: RXIR-004).
//! 11. **Views.** A `transpose`, `reshape`, `view`, `flatten`, `unsqueeze` or `squeeze` reads a
//!     rank-1/2 tensor and keeps its dtype and device; `reshape`/`view` read one or two `int`
//!     sizes (the result's rank), the others none; `unsqueeze`/`squeeze` a dim in range with a
//!     rank-1/2 result. A `size` reads a dim below its tensor's rank and is an `int`.
//! 12. **Elementwise ops.** A `where_*`, `maximum`, `minimum` or `pow` has its op's operand
//!     count; its operands are float32 rank-1/2 tensors on one device, or `int`/`float`
//!     scalars where the op takes one (any operand of `where`, `pow`'s exponent); a `where`
//!     compares at least one tensor and does not select between two ints. Checked with the
//!     typing rules (RXIR-002).
//! 13. **Boundary calls.** A `boundary_call` names its callee by a Python identifier, has
//!     zero or more `int`/`float`/`bool` arguments and declares an `int`/`float`/`bool` result,
//!     which is its type (typing rule `boundary_call`, RXIR-002). It is the one op that is not
//!     pure (it calls back into Python): no pass drops, merges, reorders or duplicates it,
//!     and it is never placed inside a loop body or a `while` condition (the frontend's
//!     `RXT076`), so it runs at most once per call, where the source has it.
//! 14. **Dim extrema, fills, index_select, normalize.** A `max_values`/`min_values` (float32)
//!     or `max_indices`/`min_indices` (int64) reads a float32 rank-1/2 tensor and a dim in
//!     range, ranked as a reduction (never rank 0); a `zeros_like`/`ones_like`/`full_like`
//!     reads a float32 rank-1/2 tensor (`full_like` also one `int`/`float` value) and has its
//!     type; an `index_select` reads a float32 rank-1/2 tensor, int64 rank-1 ids on its device
//!     and a dim in range, and has the tensor's type; a `normalize` reads a float32 rank-1/2
//!     tensor and a dim in range, and has its type. Checked with the typing rules (RXIR-002).
//! 15. **Rank 0.** A rank-0 tensor is the result of a whole-tensor reduction (`sum_all`,
//!     `mean_all`, `max_all`, `min_all`, `amax_all`, `amin_all`: a float tensor of rank 0-3 to a
//!     rank-0 tensor of its dtype) or a parameter; besides those reductions only the
//!     elementwise unary ops, `+ - * /` with tensors or scalars, `item`/`float_of` (a float
//!     tensor to a `float`) and the `truth_*` comparisons (a float tensor with a tensor of its
//!     dtype and device, or with an `int`/`float`, to a `bool`) read one. Checked with the
//!     typing rules (RXIR-002).

pub mod attrs;
pub mod codes;
pub mod diag;
pub mod expr;
pub mod function;
pub mod graph;
pub mod parse;
pub mod print;
pub mod stack;
pub mod types;
pub mod typing;

pub use diag::{Diagnostic, Label, Severity};
pub use expr::{
    fusable_reduce, AttentionScale, BagMode, BinaryOp, CompareOp, ElementwiseOp, Expr, ExprId,
    ExprKind, ExtremumOp, FillKind, FloatBits, FusedReduce, FusedTail, JoinKind, NormPrologue,
    ParamUnaryOp, PrologueStep, ReduceKind, Residual, ScalarOp, ScalarUnaryOp, SoftmaxKind,
    TensorScalarOp, ToScalarKind, UnaryOp, ViewKind, WeightLayout, WholeReduceOp,
};
pub use function::{
    Block, Carried, ForLoop, Function, IfElse, Iteration, Module, Param, ReusedWeights, Span, Stmt,
    WhileLoop,
};
pub use graph::{to_dot, to_graph, uses, EdgeLabel, NodeLabel};
pub use parse::{parse_function, parse_module, ParseError};
pub use print::{print_function, print_module};
pub use types::{DType, Device, Marker, TensorType, Type, MARKERS};
