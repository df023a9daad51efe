//! Pure expressions: the nodes of a function's arena.
//!
//! Every node is pure (no side effects, no aliasing of inputs), so any node whose value is
//! unused can be dropped and any DAG of nodes can be rewritten as a whole. Fused ops are
//! ordinary nodes with parameters, so every consumer of the IR sees them.

use std::fmt;

use la_arena::Idx;
use serde::Serialize;

pub use crate::attrs::*;
use crate::types::Type;

pub type ExprId = Idx<Expr>;

/// A node of the arena: what it computes and the type of its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
}

/// What a node computes: the op, its attributes and its operands.
///
/// `V` names an operand: an [`ExprId`] in a function's arena. Consumers that name values
/// otherwise (the executor's slots, the e-graph's classes and the operand types the typing
/// rules read) take the same shape through [`ExprKind::map`] / [`ExprKind::try_map`], so an
/// op's fields are declared here once rather than copied into each of them.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind<V = ExprId> {
    /// Reads parameter `index` of the function.
    Param(u32),
    ConstInt(i64),
    ConstBool(bool),
    /// A float literal, compared by its bits (so `-0.0` and `0.0` differ and `nan` equals
    /// itself, as a constant of the program should).
    ConstFloat(FloatBits),
    /// A value bound by a statement (loop index, carried value, loop or `if` result); no
    /// `Let` evaluates it.
    Bound,
    /// Scalar arithmetic or comparison with Python's semantics (floor division and modulo
    /// round toward negative infinity; int overflow and division by zero are errors).
    Scalar {
        op: ScalarOp,
        lhs: V,
        rhs: V,
    },
    /// `-x`, `not x`, `bool(x)` of a Python scalar, or one of the `math` functions over an
    /// `int`, `bool` or `float` (`math.sqrt(d)`), computed and raising as CPython does.
    ScalarUnary {
        op: ScalarUnaryOp,
        input: V,
    },
    Unary {
        op: UnaryOp,
        input: V,
    },
    Binary {
        op: BinaryOp,
        lhs: V,
        rhs: V,
    },
    /// A float32 tensor and a Python scalar (`int` or `float`) under `+ - * /`, in either
    /// order, as eager computes it: the scalar is cast to float32 and the op is float32
    /// ([`TensorScalarOp`] says which, `s - x` and `s / x` included).
    TensorScalar {
        op: TensorScalarOp,
        tensor: V,
        scalar: V,
    },
    /// A float32 tensor op with Python scalar parameters (`int` or `float`, read at run
    /// time: a literal is a constant operand, a function parameter its value), as eager
    /// computes it: `leaky_relu(x, slope)`, `elu(x, alpha)`, `hardtanh(x, min, max)`,
    /// `clamp(x, min, max)`, `clamp_min(x, min)`, `clamp_max(x, max)`. `second` is there
    /// exactly when the op takes two parameters ([`ParamUnaryOp::arity`]).
    ParamUnary {
        op: ParamUnaryOp,
        input: V,
        first: V,
        second: Option<V>,
    },
    /// `torch.nn.functional.linear`: `input @ weight.T (+ bias)`.
    Linear {
        input: V,
        weight: V,
        bias: Option<V>,
    },
    Matmul {
        lhs: V,
        rhs: V,
    },
    /// `torch.bmm(lhs, rhs)`: the product of each pair of matrices of two rank-3 float
    /// tensors, as ATen computes it. Unlike [`ExprKind::Matmul`] no batch broadcasts: batch
    /// sizes that differ (1 included) and inner sizes that do not fit are eager's errors.
    Bmm {
        lhs: V,
        rhs: V,
    },
    Reduce {
        kind: ReduceKind,
        input: V,
        dim: u8,
        keepdim: bool,
    },
    /// `softmax` or `log_softmax` over `dim` (the kind says which); keeps its input's type.
    Softmax {
        kind: SoftmaxKind,
        input: V,
        dim: u8,
    },
    Argmax {
        input: V,
        dim: u8,
        keepdim: bool,
    },
    /// `torch.nn.functional.layer_norm(input, (normalized,), weight, bias, eps)` over the last
    /// dim, as ATen computes it; keeps the input's type. `normalized` is an `int` (a constant
    /// or a parameter): the size of the normalized shape, checked against the input's last
    /// dim at run time (eager's error). `weight` and `bias` (rank 1) are both present or both
    /// absent. Operands in order: `input`, `normalized`, then `weight` and `bias` if any.
    LayerNorm {
        input: V,
        normalized: V,
        weight: Option<V>,
        bias: Option<V>,
        eps: FloatBits,
    },
    /// `torch.nn.functional.embedding(ids, weight)`: row `ids[i]` of `weight` for each `i`
    /// (int64 rank-1 ids, a float32 rank-2 table, a rank-2 result), as ATen computes it; an
    /// id outside `[0, rows)` is eager's error.
    Embedding {
        ids: V,
        weight: V,
    },
    /// `torch.cat(parts, dim)` or `torch.stack(parts, dim)` ([`JoinKind`] says which): one
    /// or more float32 tensors of one rank, device and dtype, joined along `dim` (cat: an
    /// existing dim, the result has the parts' rank; stack: a new dim, one rank more). The
    /// parts' other sizes must agree at run time (eager's `RuntimeError` otherwise). The
    /// only op with a variable number of operands: `parts`, in order.
    Join {
        kind: JoinKind,
        parts: Vec<V>,
        dim: u8,
    },
    /// An elementwise selection or binary math op ([`ElementwiseOp`]: `where` of an inline
    /// comparison, `maximum`/`minimum`, `pow` with a scalar exponent), as ATen computes it.
    /// `operands` in the op's order ([`ElementwiseOp::arity`]); which may be Python `int`/
    /// `float` scalars is the op's ([`ElementwiseOp::takes_scalar`]); tensor operands are
    /// float32 and broadcast as the binary ops do (sizes that do not fit are eager's
    /// `RuntimeError` at run time). No bool tensor is ever a value: a `where` holds its
    /// comparison.
    Elementwise {
        op: ElementwiseOp,
        operands: Vec<V>,
    },
    /// `torch.nn.functional.embedding_bag(ids, weight, offsets, mode=...)`: bag `b` is the
    /// sum, mean or max ([`BagMode`]) of the rows `ids[offsets[b]..offsets[b + 1]]` of
    /// `weight` (the last bag runs to the end of `ids`; an empty bag is zeros), as ATen
    /// computes it: int64 rank-1 ids and offsets, a float32 rank-2 table, a rank-2 result
    /// `[len(offsets), dim]`. Ids out of range and bad offsets are eager's errors.
    EmbeddingBag {
        ids: V,
        weight: V,
        offsets: V,
        mode: BagMode,
    },
    /// A view or reshape of one CPU tensor (float32 or int64), as ATen computes it
    /// ([`ViewKind`] says which): `transpose` (`t()`, `.T`, `transpose(0, 1)`; of rank 1,
    /// the tensor itself), `reshape` / `view` to `sizes` (int operands, one per result dim,
    /// `-1` inferred; `view` raises eager's error on a layout it cannot view), `flatten` (to
    /// rank 1), `unsqueeze` / `squeeze` at `dim` (`squeeze` of a dim whose size is not 1 is
    /// an error here: eager would keep the rank, which the static type cannot follow). The
    /// result may share its input's storage and may be non-contiguous (a transpose): the
    /// ops reading it take strides as ATen does or copy once (docs/views.md). `sizes` is
    /// empty and `dim` 0 except where the kind reads them.
    View {
        kind: ViewKind,
        input: V,
        sizes: Vec<V>,
        dim: u8,
    },
    /// A scalar boundary call back into Python (the reference's `RXT075`): the module-level
    /// function `callee` (a Python identifier, looked up in the compiled function's module
    /// globals when the call runs, so a rebinding is seen as Python sees it) called with the
    /// `int`/`float`/`bool` values `args` (one or more, passed as they are: Python converts
    /// nothing at a call), returning the declared scalar type `ret` (checked when the call
    /// returns: an `int` where `float` is declared is converted as Python's `float()` would,
    /// anything else is a `TypeError` naming the callee). Not pure: it runs whoever the
    /// embedder lets it call (`rextio_runtime::Boundary`), so it is never dropped, merged or
    /// moved (`rextio_passes::dce::may_raise` keeps it, the fusion pass never takes it), and
    /// the frontend places one only outside loops (`RXT076` inside one).
    BoundaryCall {
        callee: String,
        args: Vec<V>,
        ret: Type,
    },
    /// `x.shape[dim]` / `x.size(dim)`: the size of one dim of a tensor, a Python `int`.
    Size {
        input: V,
        dim: u8,
    },
    /// `x.max(dim=d).values` / `x.min(dim=d).values` (or `.indices`, `[0]`, `[1]`): one
    /// part of ATen's `max.dim` / `min.dim` of a float32 rank-1/2 tensor ([`ExtremumOp`] says
    /// which), computed by that op so the values are eager's bits (the first extremum's
    /// index; NaN wins). An empty reduced dim is eager's `IndexError`.
    Extremum {
        op: ExtremumOp,
        input: V,
        dim: u8,
        keepdim: bool,
    },
    /// `torch.zeros_like(x)`, `torch.ones_like(x)`, `torch.full_like(x, value)` of a float32
    /// tensor ([`FillKind`] says which): `value` (an `int`/`float`, cast to float32 with
    /// ATen's checked cast) is there exactly for `full_like`. The result has `x`'s type.
    FillLike {
        kind: FillKind,
        input: V,
        value: Option<V>,
    },
    /// `torch.index_select(x, dim, ids)`: the slices of a float32 rank-1/2 tensor at int64
    /// rank-1 `ids` along `dim`, as ATen computes it (an id out of range is eager's error);
    /// the result has `x`'s type.
    IndexSelect {
        input: V,
        ids: V,
        dim: u8,
    },
    /// `torch.nn.functional.normalize(x, p, dim, eps)` of a float32 rank-1/2 tensor, as eager
    /// computes it: `x / x.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(x)`. Keeps
    /// `x`'s type.
    Normalize {
        input: V,
        p: FloatBits,
        dim: u8,
        eps: FloatBits,
    },
    /// `x.sum()`, `x.mean()`, `x.max()`, `x.min()`, `x.amax()`, `x.amin()` with no dim
    /// ([`WholeReduceOp`] says which): the whole float tensor (float32, float64 or bfloat16,
    /// any rank) reduced to a rank-0 tensor of its dtype, as ATen computes it (its summation
    /// order, so eager's bits; `max`/`min` of an empty tensor are eager's `RuntimeError`).
    ReduceAll {
        op: WholeReduceOp,
        input: V,
    },
    /// `t.item()` or `float(t)` ([`ToScalarKind`]) of a float tensor with exactly one
    /// element (any rank): its value as a Python `float`, exactly (every float32, float64
    /// and bfloat16 is a double). Another element count is eager's error: `RuntimeError` for
    /// `item`, `ValueError` for `float`.
    ToScalar {
        kind: ToScalarKind,
        input: V,
    },
    /// `lhs <op> rhs` used as an `if`/`while` condition where a side is a tensor (the other
    /// a tensor or an `int`/`float`): Python's truth of eager's bool tensor, a `bool`. The
    /// comparison is ATen's (a Python scalar is cast to the tensor's dtype first, so
    /// `torch.tensor(0.99) > 0.99` is false where `0.99 > 0.99` of the `.item()` is not;
    /// sizes broadcast), and its result must have exactly one element (eager's
    /// `RuntimeError` "Boolean value of Tensor with ... is ambiguous" otherwise). `lhs` is
    /// always a tensor: the frontend writes `0.5 < t` as `t > 0.5`.
    TensorTruth {
        op: CompareOp,
        lhs: V,
        rhs: V,
    },
    /// `linear` (or, with [`WeightLayout::InOut`], `matmul` then `+ bias`) followed by
    /// elementwise activations and an optional tail (a reduction, softmax, log_softmax or
    /// argmax over dim 1), computed as one op; `prologue`
    /// first applies elementwise steps to `input` (`x = x op v`, in order, each `v` rank 1
    /// and broadcast over rows: the scoring pipeline's `(x - mean) / scale`). Produced only
    /// by the optimizer; its meaning is exactly the unfused chain. Its operands are `input`,
    /// `weight`, `bias` if any, then the prologue's operands in order. `bias_added` says the
    /// bias was written as an addition after the product (`F.linear(x, w) + b`) rather than
    /// as `F.linear`'s argument: the values are the same, the error for a bias of the wrong
    /// size is the addition's (text attribute `bias=added`). `residual`, where present, adds
    /// a tensor to the result after the activations (`x + act(linear(h, w, b))`, a
    /// transformer block's skip connection; text attribute `residual=left|right`, its
    /// operand last); a fused op with a residual has no tail. `norm`, where present, first
    /// normalizes each row of `input` (`F.linear(F.layer_norm(x, ...), w, b)`, a
    /// transformer block's pre-norm; its operands follow the bias), then the prologue's
    /// steps apply.
    FusedLinear {
        input: V,
        weight: V,
        bias: Option<V>,
        prologue: Vec<PrologueStep<V>>,
        activations: Vec<UnaryOp>,
        tail: Option<FusedTail>,
        layout: WeightLayout,
        bias_added: bool,
        residual: Option<Residual<V>>,
        norm: Option<NormPrologue<V>>,
    },
    /// `softmax((q @ k.transpose(-2, -1)) op value, dim=-1) @ v` over float32 rank-3 tensors
    /// (batches of matrices), the scaling optional ([`AttentionScale`]): attention's scores,
    /// their softmax over the keys and the weighted values, as one op. Produced only by the
    /// optimizer (`passes/src/attention.rs`); its meaning is exactly the unfused chain, whose
    /// errors it raises where sizes do not fit. Operands: `q`, `k`, `v`, then the scale's value.
    FusedAttention {
        q: V,
        k: V,
        v: V,
        scale: Option<AttentionScale<V>>,
    },
}

/// The scaling of [`ExprKind::FusedAttention`]'s scores: `scores / value` or `scores * value`
/// (a tensor-scalar `div` or `mul` by an `int`/`float`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttentionScale<V = ExprId> {
    pub op: TensorScalarOp,
    pub value: V,
}

/// One step of a fused op's prologue: `x = x op operand`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrologueStep<V = ExprId> {
    pub op: BinaryOp,
    pub operand: V,
}

/// A fused op's row normalization, applied to its input before anything else:
/// `layer_norm(x, [normalized], weight, bias, eps)` over the last dim, as
/// [`ExprKind::LayerNorm`] has it (weight and bias both present or both absent). The fused
/// kernels compute it themselves (moments in float64, one rounding per element), so it is
/// within docs/parity.md's layer_norm tolerance of eager's float32 moments, not bit for bit;
/// a size eager refuses runs ATen's `layer_norm`, which raises its error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NormPrologue<V = ExprId> {
    pub normalized: V,
    pub weight: Option<V>,
    pub bias: Option<V>,
    pub eps: FloatBits,
}

impl<V: Copy> NormPrologue<V> {
    /// Its operands in order: `normalized`, then `weight` and `bias` if any.
    pub fn operands(&self) -> impl Iterator<Item = V> {
        std::iter::once(self.normalized)
            .chain(self.weight)
            .chain(self.bias)
    }
}

/// A fused op's residual: `operand + y` (`first`, the residual written left of the `+`, as
/// in `x + F.linear(h, w, b)`) or `y + operand`, where `y` is the product after its bias and
/// activations. The order is the user's: where sizes do not fit, the addition raises (or
/// broadcasts) as eager's does with its operands in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Residual<V = ExprId> {
    pub operand: V,
    pub first: bool,
}

impl<V> Residual<V> {
    /// `left` or `right`: the residual's side of the `+` (the IR text's attribute).
    pub fn side(&self) -> &'static str {
        if self.first {
            "left"
        } else {
            "right"
        }
    }
}

/// Which chain a [`ExprKind::FusedLinear`] starts with, that is how its weight is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum WeightLayout {
    /// `[out, in]`: `linear(x, w, b)`, that is `x @ w.T + b` (mnemonic `fused_linear`).
    OutIn,
    /// `[in, out]`: `matmul(x, w) + b`, the bias (rank 1) added after the product
    /// (mnemonic `fused_matmul`).
    InOut,
}

impl WeightLayout {
    /// The mnemonic of a fused op with this layout.
    pub fn mnemonic(self) -> &'static str {
        match self {
            WeightLayout::OutIn => "fused_linear",
            WeightLayout::InOut => "fused_matmul",
        }
    }
}

/// The unary op table: every elementwise float op with one input, declared once.
///
/// `for_each_unary_op!(callback)` invokes `callback! { ... }` with one row per op, in the
/// order of [`UnaryOp::ALL`]:
///
/// ```text
/// /// doc of the op
/// Variant = "name" {
///     Origin Form { field: value, ... },   // one per Python spelling that claims the op
///     ...
/// },
/// ```
///
/// - `Variant` is the [`UnaryOp`] variant; `"name"` is its mnemonic in the IR text format,
///   the head of its egg term (`(relu ?x)`) and its name in a fused op's activation list.
/// - Each spelling row is read by the frontend's claim rules
///   (`frontend/src/claim/spellings.rs`, which defines the forms and their fields): `Origin`
///   is `Reference` (part of the reference plugin's surface: its symbols are in the Rextio
///   plugin's coverage, its rule records are the reference's) or `Extension` (ours only: not
///   in the plugin's coverage, its rule records are generated after the reference's); `Form`
///   says which lane claims it and how (`Activation`, `FunctionalInplace`, `Math`,
///   `Functional`, `Function`); the `Rule(id, code)` values are rule ids and diagnostic codes, byte for
///   byte.
///
/// Consumers: this file (the enum, [`UnaryOp::ALL`], [`UnaryOp::name`]), the egg term
/// language (`passes/src/egraph.rs`), the claim rules and the Rextio plugin's coverage
/// (`frontend/src/claim/spellings.rs`). The numerics live in the runtime. See
/// `docs/adding-an-op.md`.
///
/// This file is carried into emitted crates (as a module of another crate), so the table
/// names no paths: a callback gets plain identifiers and literals, and resolves them itself.
#[macro_export]
macro_rules! for_each_unary_op {
    ($callback:ident) => {
        $callback! {
            /// `max(x, 0)`.
            Relu = "relu" {
                Reference Activation {
                    method: "relu",
                    rule_1d: Rule("rextio-torch/tensor-relu-f32-cpu-1d", "RXTP-TORCH-004"),
                    rule_2d: Rule("rextio-torch/tensor-relu-f32-cpu-2d", "RXTP-TORCH-002"),
                    function: "torch.relu",
                    function_rule: Rule("rextio-torch/function-relu-f32-cpu-rank1-2", "RXTP-TORCH-024"),
                },
                Reference FunctionalInplace {
                    target: "torch.nn.functional.relu",
                    display: "ReLU",
                    rule: Rule("rextio-torch/functional-relu-f32-cpu-rank1-2", "RXTP-TORCH-050"),
                },
            },
            /// `1 / (1 + exp(-x))`.
            Sigmoid = "sigmoid" {
                Reference Activation {
                    method: "sigmoid",
                    rule_1d: Rule("rextio-torch/tensor-sigmoid-f32-cpu-1d", "RXTP-TORCH-005"),
                    rule_2d: Rule("rextio-torch/tensor-sigmoid-f32-cpu-2d", "RXTP-TORCH-006"),
                    function: "torch.sigmoid",
                    function_rule: Rule("rextio-torch/function-sigmoid-f32-cpu-rank1-2", "RXTP-TORCH-025"),
                },
                Extension Function {
                    target: "torch.nn.functional.sigmoid",
                    rule: Rule("rextio-torch/functional-sigmoid-f32-cpu-rank1-2", "RXTP-TORCH-068"),
                },
            },
            /// Hyperbolic tangent.
            Tanh = "tanh" {
                Reference Activation {
                    method: "tanh",
                    rule_1d: Rule("rextio-torch/tensor-tanh-f32-cpu-1d", "RXTP-TORCH-007"),
                    rule_2d: Rule("rextio-torch/tensor-tanh-f32-cpu-2d", "RXTP-TORCH-008"),
                    function: "torch.tanh",
                    function_rule: Rule("rextio-torch/function-tanh-f32-cpu-rank1-2", "RXTP-TORCH-026"),
                },
                Extension Function {
                    target: "torch.nn.functional.tanh",
                    rule: Rule("rextio-torch/functional-tanh-f32-cpu-rank1-2", "RXTP-TORCH-069"),
                },
            },
            /// `|x|`.
            Abs = "abs" {
                Reference Math {
                    name: "abs",
                    rule: Rule("rextio-torch/unary-abs-f32-cpu-rank1-2", "RXTP-TORCH-037"),
                },
            },
            /// `-x` (`torch.neg` and its alias `torch.negative`, each with its own rule).
            Neg = "neg" {
                Reference Math {
                    name: "neg",
                    rule: Rule("rextio-torch/unary-neg-f32-cpu-rank1-2", "RXTP-TORCH-038"),
                },
                Reference Math {
                    name: "negative",
                    rule: Rule("rextio-torch/unary-negative-f32-cpu-rank1-2", "RXTP-TORCH-039"),
                },
            },
            /// `x * x`.
            Square = "square" {
                Reference Math {
                    name: "square",
                    rule: Rule("rextio-torch/unary-square-f32-cpu-rank1-2", "RXTP-TORCH-040"),
                },
            },
            /// `e^x`.
            Exp = "exp" {
                Reference Math {
                    name: "exp",
                    rule: Rule("rextio-torch/unary-exp-f32-cpu-rank1-2", "RXTP-TORCH-041"),
                },
            },
            /// Natural logarithm.
            Log = "log" {
                Reference Math {
                    name: "log",
                    rule: Rule("rextio-torch/unary-log-f32-cpu-rank1-2", "RXTP-TORCH-042"),
                },
            },
            /// Square root.
            Sqrt = "sqrt" {
                Reference Math {
                    name: "sqrt",
                    rule: Rule("rextio-torch/unary-sqrt-f32-cpu-rank1-2", "RXTP-TORCH-043"),
                },
            },
            /// Exact GELU (`approximate="none"`).
            Gelu = "gelu" {
                Reference Functional {
                    target: "torch.nn.functional.gelu",
                    display: "GELU",
                    keyword: ("approximate", Str("none")),
                    rule: Rule("rextio-torch/functional-gelu-none-f32-cpu-rank1-2", "RXTP-TORCH-044"),
                },
            },
            /// SiLU, `x / (1 + exp(-x))` (`x * sigmoid(x)`, as ATen computes it).
            Silu = "silu" {
                Extension FunctionalInplace {
                    target: "torch.nn.functional.silu",
                    display: "SiLU",
                    rule: Rule("rextio-torch/functional-silu-f32-cpu-rank1-2", "RXTP-TORCH-052"),
                },
            },
            /// `1 / sqrt(x)`, one correctly rounded division after a correctly rounded square
            /// root (ATen's CPU kernel and its vectorized loop).
            Rsqrt = "rsqrt" {
                Extension Math {
                    name: "rsqrt",
                    rule: Rule("rextio-torch/unary-rsqrt-f32-cpu-rank1-2", "RXTP-TORCH-053"),
                },
            },
            /// `min(max(x, 0), 6)` as ATen's `hardtanh(x, 0, 6)` (a clamp): NaN stays NaN,
            /// -0.0 stays -0.0.
            Relu6 = "relu6" {
                Extension FunctionalInplace {
                    target: "torch.nn.functional.relu6",
                    display: "ReLU6",
                    rule: Rule("rextio-torch/functional-relu6-f32-cpu-rank1-2", "RXTP-TORCH-054"),
                },
            },
            /// GELU's tanh approximation (`approximate="tanh"`),
            /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
            GeluTanh = "gelu_tanh" {
                Extension Functional {
                    target: "torch.nn.functional.gelu",
                    display: "GELU",
                    keyword: ("approximate", Str("tanh")),
                    rule: Rule("rextio-torch/functional-gelu-tanh-f32-cpu-rank1-2", "RXTP-TORCH-064"),
                },
            },
        }
    };
}

/// Expands the op table into [`UnaryOp`], [`UnaryOp::ALL`] and [`UnaryOp::name`].
macro_rules! define_unary_op {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal { $($spellings:tt)* },)*) => {
        /// Elementwise float ops with one input. Each maps to exactly one ATen op. Declared
        /// once, in the op table ([`for_each_unary_op!`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum UnaryOp {
            $($(#[doc = $doc])* $variant,)*
        }

        impl UnaryOp {
            /// Every op, in table order.
            pub const ALL: [UnaryOp; [$($name),*].len()] = [$(UnaryOp::$variant),*];

            /// Mnemonic in the text format (`relu`).
            pub fn name(self) -> &'static str {
                match self {
                    $(UnaryOp::$variant => $name,)*
                }
            }
        }
    };
}

for_each_unary_op!(define_unary_op);

/// What ends a [`ExprKind::FusedLinear`], over dim 1 of its rank-2 product (the validator
/// checks the dim): a reduction, a row-wise softmax or log_softmax, or a row-wise argmax (an
/// int64 result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum FusedTail {
    Reduce(FusedReduce),
    Softmax { kind: SoftmaxKind, dim: u8 },
    Argmax { dim: u8, keepdim: bool },
}

impl FusedTail {
    /// The reduction the fused kernels compute, if this tail is one.
    pub fn reduction(self) -> Option<FusedReduce> {
        match self {
            FusedTail::Reduce(r) => Some(r),
            _ => None,
        }
    }

    /// The dim the tail works over.
    pub fn dim(self) -> u8 {
        match self {
            FusedTail::Reduce(r) => r.dim,
            FusedTail::Softmax { dim, .. } | FusedTail::Argmax { dim, .. } => dim,
        }
    }

    /// `mean`, `sum`, `softmax`, `log_softmax` or `argmax`.
    pub fn name(self) -> &'static str {
        match self {
            FusedTail::Reduce(r) => r.kind.name(),
            FusedTail::Softmax { kind, .. } => kind.name(),
            FusedTail::Argmax { .. } => "argmax",
        }
    }
}

/// The reduction tail of a [`ExprKind::FusedLinear`]; always over a rank-2 value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FusedReduce {
    pub kind: ReduceKind,
    pub dim: u8,
    pub keepdim: bool,
}

/// Reductions the fused kernels implement (over the output-feature dim of a linear). Here
/// rather than in `typing` because the runtime carried into generated crates needs it too.
pub fn fusable_reduce(kind: ReduceKind, dim: u8) -> bool {
    matches!(kind, ReduceKind::Mean | ReduceKind::Sum) && dim == 1
}

impl UnaryOp {
    pub fn from_name(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether eager's result for an element depends on where the element sits in its
    /// tensor, not on its value alone: ATen computes GELU's tanh approximation with a vector
    /// function over whole chunks of the tensor and a scalar function over the rest, and the
    /// two differ in class on a narrow band (runtime/src/unary.rs). Such an op always runs on
    /// a whole tensor: the fusion pass never moves it into a fused op's activations (which
    /// apply per tile or row block), nor does a pending chain (`runtime/src/lazy.rs`).
    pub fn depends_on_position(self) -> bool {
        matches!(self, UnaryOp::GeluTanh)
    }
}

impl<V: Copy> ExprKind<V> {
    /// Operands in a fixed order (the order the printer writes them, and the order
    /// [`ExprKind::try_map`] visits them in).
    pub fn operands(&self) -> Vec<V> {
        match self {
            ExprKind::Param(_)
            | ExprKind::ConstInt(_)
            | ExprKind::ConstBool(_)
            | ExprKind::ConstFloat(_)
            | ExprKind::Bound => Vec::new(),
            ExprKind::Scalar { lhs, rhs, .. } => vec![*lhs, *rhs],
            ExprKind::ScalarUnary { input, .. } => vec![*input],
            ExprKind::Unary { input, .. }
            | ExprKind::Reduce { input, .. }
            | ExprKind::Softmax { input, .. }
            | ExprKind::Argmax { input, .. } => vec![*input],
            ExprKind::Binary { lhs, rhs, .. }
            | ExprKind::Matmul { lhs, rhs }
            | ExprKind::Bmm { lhs, rhs } => vec![*lhs, *rhs],
            ExprKind::TensorScalar { tensor, scalar, .. } => vec![*tensor, *scalar],
            ExprKind::LayerNorm {
                input,
                normalized,
                weight,
                bias,
                ..
            } => {
                let mut ops = vec![*input, *normalized];
                ops.extend(*weight);
                ops.extend(*bias);
                ops
            }
            ExprKind::Embedding { ids, weight } => vec![*ids, *weight],
            ExprKind::ParamUnary {
                input,
                first,
                second,
                ..
            } => {
                let mut ops = vec![*input, *first];
                ops.extend(*second);
                ops
            }
            ExprKind::Join { parts, .. } => parts.clone(),
            ExprKind::View { input, sizes, .. } => {
                let mut ops = vec![*input];
                ops.extend(sizes.iter().copied());
                ops
            }
            ExprKind::Size { input, .. } => vec![*input],
            ExprKind::Extremum { input, .. } | ExprKind::Normalize { input, .. } => vec![*input],
            ExprKind::ReduceAll { input, .. } | ExprKind::ToScalar { input, .. } => vec![*input],
            ExprKind::TensorTruth { lhs, rhs, .. } => vec![*lhs, *rhs],
            ExprKind::FillLike { input, value, .. } => {
                let mut ops = vec![*input];
                ops.extend(*value);
                ops
            }
            ExprKind::IndexSelect { input, ids, .. } => vec![*input, *ids],
            ExprKind::Elementwise { operands, .. } => operands.clone(),
            ExprKind::BoundaryCall { args, .. } => args.clone(),
            ExprKind::EmbeddingBag {
                ids,
                weight,
                offsets,
                ..
            } => vec![*ids, *weight, *offsets],
            ExprKind::Linear {
                input,
                weight,
                bias,
            } => {
                let mut ops = vec![*input, *weight];
                ops.extend(*bias);
                ops
            }
            ExprKind::FusedLinear {
                input,
                weight,
                bias,
                prologue,
                residual,
                norm,
                ..
            } => {
                let mut ops = vec![*input, *weight];
                ops.extend(*bias);
                ops.extend(norm.iter().flat_map(NormPrologue::operands));
                ops.extend(prologue.iter().map(|step| step.operand));
                ops.extend(residual.map(|r| r.operand));
                ops
            }
            ExprKind::FusedAttention { q, k, v, scale } => {
                let mut ops = vec![*q, *k, *v];
                ops.extend(scale.map(|s| s.value));
                ops
            }
        }
    }

    /// The same op with every operand replaced by `map(operand)`, attributes unchanged;
    /// `map` sees the operands in the order of [`ExprKind::operands`], and the first error
    /// it returns is the result.
    pub fn try_map<W, E>(&self, mut map: impl FnMut(V) -> Result<W, E>) -> Result<ExprKind<W>, E> {
        // Struct fields are evaluated in the order they are written: operand order.
        Ok(match self {
            ExprKind::Param(index) => ExprKind::Param(*index),
            ExprKind::ConstInt(value) => ExprKind::ConstInt(*value),
            ExprKind::ConstBool(value) => ExprKind::ConstBool(*value),
            ExprKind::ConstFloat(value) => ExprKind::ConstFloat(*value),
            ExprKind::Bound => ExprKind::Bound,
            ExprKind::Scalar { op, lhs, rhs } => ExprKind::Scalar {
                op: *op,
                lhs: map(*lhs)?,
                rhs: map(*rhs)?,
            },
            ExprKind::ScalarUnary { op, input } => ExprKind::ScalarUnary {
                op: *op,
                input: map(*input)?,
            },
            ExprKind::Unary { op, input } => ExprKind::Unary {
                op: *op,
                input: map(*input)?,
            },
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: map(*lhs)?,
                rhs: map(*rhs)?,
            },
            ExprKind::TensorScalar { op, tensor, scalar } => ExprKind::TensorScalar {
                op: *op,
                tensor: map(*tensor)?,
                scalar: map(*scalar)?,
            },
            ExprKind::ParamUnary {
                op,
                input,
                first,
                second,
            } => ExprKind::ParamUnary {
                op: *op,
                input: map(*input)?,
                first: map(*first)?,
                second: second.map(&mut map).transpose()?,
            },
            ExprKind::Linear {
                input,
                weight,
                bias,
            } => ExprKind::Linear {
                input: map(*input)?,
                weight: map(*weight)?,
                bias: bias.map(&mut map).transpose()?,
            },
            ExprKind::Bmm { lhs, rhs } => ExprKind::Bmm {
                lhs: map(*lhs)?,
                rhs: map(*rhs)?,
            },
            ExprKind::Matmul { lhs, rhs } => ExprKind::Matmul {
                lhs: map(*lhs)?,
                rhs: map(*rhs)?,
            },
            ExprKind::Reduce {
                kind,
                input,
                dim,
                keepdim,
            } => ExprKind::Reduce {
                kind: *kind,
                input: map(*input)?,
                dim: *dim,
                keepdim: *keepdim,
            },
            ExprKind::Softmax { kind, input, dim } => ExprKind::Softmax {
                kind: *kind,
                input: map(*input)?,
                dim: *dim,
            },
            ExprKind::Argmax {
                input,
                dim,
                keepdim,
            } => ExprKind::Argmax {
                input: map(*input)?,
                dim: *dim,
                keepdim: *keepdim,
            },
            ExprKind::LayerNorm {
                input,
                normalized,
                weight,
                bias,
                eps,
            } => ExprKind::LayerNorm {
                input: map(*input)?,
                normalized: map(*normalized)?,
                weight: weight.map(&mut map).transpose()?,
                bias: bias.map(&mut map).transpose()?,
                eps: *eps,
            },
            ExprKind::Embedding { ids, weight } => ExprKind::Embedding {
                ids: map(*ids)?,
                weight: map(*weight)?,
            },
            ExprKind::Join { kind, parts, dim } => ExprKind::Join {
                kind: *kind,
                parts: parts
                    .iter()
                    .map(|part| map(*part))
                    .collect::<Result<Vec<_>, E>>()?,
                dim: *dim,
            },
            ExprKind::View {
                kind,
                input,
                sizes,
                dim,
            } => ExprKind::View {
                kind: *kind,
                input: map(*input)?,
                sizes: sizes
                    .iter()
                    .map(|size| map(*size))
                    .collect::<Result<Vec<_>, E>>()?,
                dim: *dim,
            },
            ExprKind::Size { input, dim } => ExprKind::Size {
                input: map(*input)?,
                dim: *dim,
            },
            ExprKind::ReduceAll { op, input } => ExprKind::ReduceAll {
                op: *op,
                input: map(*input)?,
            },
            ExprKind::ToScalar { kind, input } => ExprKind::ToScalar {
                kind: *kind,
                input: map(*input)?,
            },
            ExprKind::TensorTruth { op, lhs, rhs } => ExprKind::TensorTruth {
                op: *op,
                lhs: map(*lhs)?,
                rhs: map(*rhs)?,
            },
            ExprKind::BoundaryCall { callee, args, ret } => ExprKind::BoundaryCall {
                callee: callee.clone(),
                args: args
                    .iter()
                    .map(|arg| map(*arg))
                    .collect::<Result<Vec<_>, E>>()?,
                ret: *ret,
            },
            ExprKind::Extremum {
                op,
                input,
                dim,
                keepdim,
            } => ExprKind::Extremum {
                op: *op,
                input: map(*input)?,
                dim: *dim,
                keepdim: *keepdim,
            },
            ExprKind::FillLike { kind, input, value } => ExprKind::FillLike {
                kind: *kind,
                input: map(*input)?,
                value: value.map(&mut map).transpose()?,
            },
            ExprKind::IndexSelect { input, ids, dim } => ExprKind::IndexSelect {
                input: map(*input)?,
                ids: map(*ids)?,
                dim: *dim,
            },
            ExprKind::Normalize { input, p, dim, eps } => ExprKind::Normalize {
                input: map(*input)?,
                p: *p,
                dim: *dim,
                eps: *eps,
            },
            ExprKind::Elementwise { op, operands } => ExprKind::Elementwise {
                op: *op,
                operands: operands
                    .iter()
                    .map(|operand| map(*operand))
                    .collect::<Result<Vec<_>, E>>()?,
            },
            ExprKind::EmbeddingBag {
                ids,
                weight,
                offsets,
                mode,
            } => ExprKind::EmbeddingBag {
                ids: map(*ids)?,
                weight: map(*weight)?,
                offsets: map(*offsets)?,
                mode: *mode,
            },
            ExprKind::FusedLinear {
                input,
                weight,
                bias,
                prologue,
                activations,
                tail,
                layout,
                bias_added,
                residual,
                norm,
            } => ExprKind::FusedLinear {
                input: map(*input)?,
                weight: map(*weight)?,
                bias: bias.map(&mut map).transpose()?,
                norm: match norm {
                    Some(n) => Some(NormPrologue {
                        normalized: map(n.normalized)?,
                        weight: n.weight.map(&mut map).transpose()?,
                        bias: n.bias.map(&mut map).transpose()?,
                        eps: n.eps,
                    }),
                    None => None,
                },
                prologue: prologue
                    .iter()
                    .map(|step| {
                        Ok(PrologueStep {
                            op: step.op,
                            operand: map(step.operand)?,
                        })
                    })
                    .collect::<Result<Vec<_>, E>>()?,
                activations: activations.clone(),
                tail: *tail,
                layout: *layout,
                bias_added: *bias_added,
                residual: residual
                    .map(|r| {
                        Ok(Residual {
                            operand: map(r.operand)?,
                            first: r.first,
                        })
                    })
                    .transpose()?,
            },
            ExprKind::FusedAttention { q, k, v, scale } => ExprKind::FusedAttention {
                q: map(*q)?,
                k: map(*k)?,
                v: map(*v)?,
                scale: match scale {
                    Some(s) => Some(AttentionScale {
                        op: s.op,
                        value: map(s.value)?,
                    }),
                    None => None,
                },
            },
        })
    }

    /// The same op with every operand replaced by `map(operand)` (see [`ExprKind::try_map`]).
    pub fn map<W>(&self, mut map: impl FnMut(V) -> W) -> ExprKind<W> {
        match self.try_map(|operand| Ok::<W, std::convert::Infallible>(map(operand))) {
            Ok(kind) => kind,
            Err(never) => match never {},
        }
    }

    /// The same op with every operand replaced by `map(operand)`; `None` as soon as `map`
    /// has no replacement for one. Passes that rebuild an arena use it to move operands.
    pub fn map_operands<W>(&self, mut map: impl FnMut(V) -> Option<W>) -> Option<ExprKind<W>> {
        self.try_map(|operand| map(operand).ok_or(())).ok()
    }

    /// The op's mnemonic in the text format.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            ExprKind::Param(_) => "param",
            ExprKind::ConstInt(_) => "const.int",
            ExprKind::ConstBool(_) => "const.bool",
            ExprKind::ConstFloat(_) => "const.float",
            ExprKind::Bound => "bound",
            ExprKind::Scalar { op, .. } => op.name(),
            ExprKind::ScalarUnary { op, .. } => op.name(),
            ExprKind::Unary { op, .. } => op.name(),
            ExprKind::Binary { op, .. } => op.name(),
            ExprKind::TensorScalar { op, .. } => op.name(),
            ExprKind::ParamUnary { op, .. } => op.name(),
            ExprKind::Linear { .. } => "linear",
            ExprKind::Matmul { .. } => "matmul",
            ExprKind::Bmm { .. } => "bmm",
            ExprKind::Reduce { kind, .. } => kind.name(),
            ExprKind::Softmax { kind, .. } => kind.name(),
            ExprKind::Argmax { .. } => "argmax",
            ExprKind::LayerNorm { .. } => "layer_norm",
            ExprKind::Embedding { .. } => "embedding",
            ExprKind::Join { kind, .. } => kind.name(),
            ExprKind::Elementwise { op, .. } => op.name(),
            ExprKind::EmbeddingBag { .. } => "embedding_bag",
            ExprKind::View { kind, .. } => kind.name(),
            ExprKind::Size { .. } => "size",
            ExprKind::BoundaryCall { .. } => "boundary_call",
            ExprKind::Extremum { op, .. } => op.name(),
            ExprKind::FillLike { kind, .. } => kind.name(),
            ExprKind::IndexSelect { .. } => "index_select",
            ExprKind::Normalize { .. } => "normalize",
            ExprKind::ReduceAll { op, .. } => op.name(),
            ExprKind::ToScalar { kind, .. } => kind.name(),
            ExprKind::TensorTruth { op, .. } => op.truth_name(),
            ExprKind::FusedLinear { layout, .. } => layout.mnemonic(),
            ExprKind::FusedAttention { .. } => "fused_attention",
        }
    }
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
