//! Pure expressions: the nodes of a function's arena.
//!
//! Every node is pure (no side effects, no aliasing of inputs), so any node whose value is
//! unused can be dropped and any DAG of nodes can be rewritten as a whole. Fused ops are
//! ordinary nodes with parameters, so every consumer of the IR sees them.

use std::fmt;

use la_arena::Idx;
use serde::Serialize;

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
    /// `linear` (or, with [`WeightLayout::InOut`], `matmul` then `+ bias`) followed by
    /// elementwise activations and an optional tail (a reduction, softmax, log_softmax or
    /// argmax over dim 1), computed as one op; `prologue`
    /// first applies elementwise steps to `input` (`x = x op v`, in order, each `v` rank 1
    /// and broadcast over rows: the scoring pipeline's `(x - mean) / scale`). Produced only
    /// by the optimizer; its meaning is exactly the unfused chain. Its operands are `input`,
    /// `weight`, `bias` if any, then the prologue's operands in order. `bias_added` says the
    /// bias was written as an addition after the product (`F.linear(x, w) + b`) rather than
    /// as `F.linear`'s argument: the values are the same, the error for a bias of the wrong
    /// size is the addition's (text attribute `bias=added`).
    FusedLinear {
        input: V,
        weight: V,
        bias: Option<V>,
        prologue: Vec<PrologueStep<V>>,
        activations: Vec<UnaryOp>,
        tail: Option<FusedTail>,
        layout: WeightLayout,
        bias_added: bool,
    },
}

/// One step of a fused op's prologue: `x = x op operand`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrologueStep<V = ExprId> {
    pub op: BinaryOp,
    pub operand: V,
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
///   `Functional`); the `Rule(id, code)` values are rule ids and diagnostic codes, byte for
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// True division.
    Div,
}

/// A float32 tensor `x` with a Python scalar `s` (cast to float32 first, `s32`), as eager
/// computes each spelling on CPU. `s + x` and `s * x` are eager's `x + s` and `x * s`
/// (`Tensor.__radd__`/`__rmul__`), so they have no ops of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum TensorScalarOp {
    /// `x + s`, `s + x`.
    Add,
    /// `x - s`.
    Sub,
    /// `x * s`, `s * x`.
    Mul,
    /// `x / s`: a true float32 division by `s32` (not a product with its reciprocal).
    Div,
    /// `s - x` (`torch.rsub`): `s32 - x`.
    RSub,
    /// `s / x` (`Tensor.__rtruediv__`): `reciprocal(x) * s32`, two roundings.
    RDiv,
}

impl TensorScalarOp {
    pub const ALL: [TensorScalarOp; 6] = [
        TensorScalarOp::Add,
        TensorScalarOp::Sub,
        TensorScalarOp::Mul,
        TensorScalarOp::Div,
        TensorScalarOp::RSub,
        TensorScalarOp::RDiv,
    ];

    /// Mnemonic in the text format (`mul.scalar`).
    pub fn name(self) -> &'static str {
        match self {
            TensorScalarOp::Add => "add.scalar",
            TensorScalarOp::Sub => "sub.scalar",
            TensorScalarOp::Mul => "mul.scalar",
            TensorScalarOp::Div => "div.scalar",
            TensorScalarOp::RSub => "rsub.scalar",
            TensorScalarOp::RDiv => "rdiv.scalar",
        }
    }

    pub fn from_name(name: &str) -> Option<TensorScalarOp> {
        TensorScalarOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The op a Python operator spells, with the scalar on the left (`scalar_first`) or the
    /// right: `s + x` is `Add`, `s - x` is `RSub`, `s / x` is `RDiv`.
    pub fn of(op: BinaryOp, scalar_first: bool) -> TensorScalarOp {
        match (op, scalar_first) {
            (BinaryOp::Add, _) => TensorScalarOp::Add,
            (BinaryOp::Mul, _) => TensorScalarOp::Mul,
            (BinaryOp::Sub, false) => TensorScalarOp::Sub,
            (BinaryOp::Sub, true) => TensorScalarOp::RSub,
            (BinaryOp::Div, false) => TensorScalarOp::Div,
            (BinaryOp::Div, true) => TensorScalarOp::RDiv,
        }
    }

    /// One element as eager computes it, `s` already cast to float32.
    #[inline(always)]
    pub fn apply(self, x: f32, s: f32) -> f32 {
        match self {
            TensorScalarOp::Add => x + s,
            TensorScalarOp::Sub => x - s,
            TensorScalarOp::Mul => x * s,
            TensorScalarOp::Div => x / s,
            TensorScalarOp::RSub => s - x,
            TensorScalarOp::RDiv => (1.0 / x) * s,
        }
    }
}

impl fmt::Display for TensorScalarOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An elementwise float32 op with one tensor and one or two Python scalar parameters
/// ([`ExprKind::ParamUnary`]). Eager converts each parameter to float32 with a checked cast
/// (a finite value outside float32's range is an error, `value cannot be converted to type
/// float without overflow`), then computes per element:
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ParamUnaryOp {
    /// `F.leaky_relu(x, slope)`: `x > 0 ? x : x * slope`.
    LeakyRelu,
    /// `F.elu(x, alpha)`: `x < 0 ? (exp(x) - 1) * alpha : x` (a zero stays as it is; ATen's
    /// vector loop uses `expm1`, its scalar tail `exp(x) - 1`, so the runtime always takes
    /// ATen's kernel).
    Elu,
    /// `F.hardtanh(x, min_val, max_val)`: Python's check `min_val > max_val` raises
    /// `ValueError`, then `clamp(x, min_val, max_val)`.
    Hardtanh,
    /// `torch.clamp(x, min, max)` / `clip`: `min(max(x, lo), hi)`, NaN stays NaN; a NaN bound
    /// makes every element NaN; `lo > hi` gives `hi` everywhere (but NaN).
    Clamp,
    /// `torch.clamp(x, min=lo)`: `max(x, lo)`, NaN stays NaN.
    ClampMin,
    /// `torch.clamp(x, max=hi)`: `min(x, hi)`, NaN stays NaN.
    ClampMax,
}

impl ParamUnaryOp {
    pub const ALL: [ParamUnaryOp; 6] = [
        ParamUnaryOp::LeakyRelu,
        ParamUnaryOp::Elu,
        ParamUnaryOp::Hardtanh,
        ParamUnaryOp::Clamp,
        ParamUnaryOp::ClampMin,
        ParamUnaryOp::ClampMax,
    ];

    /// Mnemonic in the text format (`leaky_relu %x, %slope`).
    pub fn name(self) -> &'static str {
        match self {
            ParamUnaryOp::LeakyRelu => "leaky_relu",
            ParamUnaryOp::Elu => "elu",
            ParamUnaryOp::Hardtanh => "hardtanh",
            ParamUnaryOp::Clamp => "clamp",
            ParamUnaryOp::ClampMin => "clamp_min",
            ParamUnaryOp::ClampMax => "clamp_max",
        }
    }

    pub fn from_name(name: &str) -> Option<ParamUnaryOp> {
        ParamUnaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// How many scalar parameters the op takes (after its tensor).
    pub fn arity(self) -> usize {
        match self {
            ParamUnaryOp::Hardtanh | ParamUnaryOp::Clamp => 2,
            ParamUnaryOp::LeakyRelu
            | ParamUnaryOp::Elu
            | ParamUnaryOp::ClampMin
            | ParamUnaryOp::ClampMax => 1,
        }
    }

    /// One element as eager's CPU kernel computes it, the parameters already cast to
    /// float32 and (for the clamps) not NaN. `None` for ELU, whose eager result depends on
    /// where the element sits (vector `expm1` or scalar `exp - 1`): only ATen computes it.
    #[inline(always)]
    pub fn apply(self, x: f32, a: f32, b: f32) -> Option<f32> {
        // `max(x, lo)` and `min(x, hi)` as ATen's `std::max(x, lo)` / `_mm*_max_ps(lo, x)`:
        // NaN `x` stays `x`, and an equal bound of the other sign keeps `x` (-0.0 stays -0.0).
        let max = |x: f32, lo: f32| if x < lo { lo } else { x };
        let min = |x: f32, hi: f32| if x > hi { hi } else { x };
        Some(match self {
            ParamUnaryOp::LeakyRelu => {
                if x > 0.0 {
                    x
                } else {
                    x * a
                }
            }
            ParamUnaryOp::Elu => return None,
            ParamUnaryOp::Hardtanh | ParamUnaryOp::Clamp => min(max(x, a), b),
            ParamUnaryOp::ClampMin => max(x, a),
            ParamUnaryOp::ClampMax => min(x, a),
        })
    }
}

impl fmt::Display for ParamUnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The bits of an `f64` constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FloatBits(pub u64);

impl FloatBits {
    pub fn new(value: f64) -> FloatBits {
        FloatBits(value.to_bits())
    }

    pub fn value(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// Binary scalar ops over `int`, `bool` and `float` (a `bool` operand counts as an int, as
/// in Python).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    /// `/`: always float.
    TrueDiv,
    /// `//`: rounds toward negative infinity.
    FloorDiv,
    /// `%`: the result has the sign of the divisor.
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ScalarUnaryOp {
    /// Unary `-` (of a bool: an int).
    Neg,
    /// `not x`.
    Not,
    /// `bool(x)`: Python truthiness of a scalar (non-zero).
    Truth,
    /// `math.sqrt(x)`: a float, as CPython computes it (libm; `ValueError: math domain
    /// error` below zero).
    Sqrt,
    /// `math.exp(x)`: a float (`OverflowError: math range error` past the float range).
    Exp,
    /// `math.log(x)` with one argument: a float (`ValueError: math domain error` at zero
    /// and below).
    Log,
    /// `math.tanh(x)`: a float; never raises.
    Tanh,
    /// `math.floor(x)`: an int (of a float: `OverflowError` at infinity, `ValueError` at
    /// NaN, as CPython; an `OverflowError` past 64 bits, where compiled ints end).
    Floor,
    /// `math.ceil(x)`: an int, as [`ScalarUnaryOp::Floor`] rounding up.
    Ceil,
    /// `math.fabs(x)`: a float; never raises.
    Fabs,
}

impl ScalarOp {
    pub const ALL: [ScalarOp; 12] = [
        ScalarOp::Add,
        ScalarOp::Sub,
        ScalarOp::Mul,
        ScalarOp::TrueDiv,
        ScalarOp::FloorDiv,
        ScalarOp::Mod,
        ScalarOp::Eq,
        ScalarOp::Ne,
        ScalarOp::Lt,
        ScalarOp::Le,
        ScalarOp::Gt,
        ScalarOp::Ge,
    ];

    /// Mnemonic in the text format (`scalar.add`).
    pub fn name(self) -> &'static str {
        match self {
            ScalarOp::Add => "scalar.add",
            ScalarOp::Sub => "scalar.sub",
            ScalarOp::Mul => "scalar.mul",
            ScalarOp::TrueDiv => "scalar.truediv",
            ScalarOp::FloorDiv => "scalar.floordiv",
            ScalarOp::Mod => "scalar.mod",
            ScalarOp::Eq => "scalar.eq",
            ScalarOp::Ne => "scalar.ne",
            ScalarOp::Lt => "scalar.lt",
            ScalarOp::Le => "scalar.le",
            ScalarOp::Gt => "scalar.gt",
            ScalarOp::Ge => "scalar.ge",
        }
    }

    /// The Python operator (`//`), for messages.
    pub fn symbol(self) -> &'static str {
        match self {
            ScalarOp::Add => "+",
            ScalarOp::Sub => "-",
            ScalarOp::Mul => "*",
            ScalarOp::TrueDiv => "/",
            ScalarOp::FloorDiv => "//",
            ScalarOp::Mod => "%",
            ScalarOp::Eq => "==",
            ScalarOp::Ne => "!=",
            ScalarOp::Lt => "<",
            ScalarOp::Le => "<=",
            ScalarOp::Gt => ">",
            ScalarOp::Ge => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            ScalarOp::Eq | ScalarOp::Ne | ScalarOp::Lt | ScalarOp::Le | ScalarOp::Gt | ScalarOp::Ge
        )
    }

    pub fn from_name(name: &str) -> Option<ScalarOp> {
        ScalarOp::ALL.into_iter().find(|op| op.name() == name)
    }
}

impl ScalarUnaryOp {
    pub const ALL: [ScalarUnaryOp; 10] = [
        ScalarUnaryOp::Neg,
        ScalarUnaryOp::Not,
        ScalarUnaryOp::Truth,
        ScalarUnaryOp::Sqrt,
        ScalarUnaryOp::Exp,
        ScalarUnaryOp::Log,
        ScalarUnaryOp::Tanh,
        ScalarUnaryOp::Floor,
        ScalarUnaryOp::Ceil,
        ScalarUnaryOp::Fabs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ScalarUnaryOp::Neg => "scalar.neg",
            ScalarUnaryOp::Not => "scalar.not",
            ScalarUnaryOp::Truth => "scalar.truth",
            ScalarUnaryOp::Sqrt => "scalar.sqrt",
            ScalarUnaryOp::Exp => "scalar.exp",
            ScalarUnaryOp::Log => "scalar.log",
            ScalarUnaryOp::Tanh => "scalar.tanh",
            ScalarUnaryOp::Floor => "scalar.floor",
            ScalarUnaryOp::Ceil => "scalar.ceil",
            ScalarUnaryOp::Fabs => "scalar.fabs",
        }
    }

    /// The `math` function this op computes (`sqrt` for `math.sqrt`), for the `math` ops.
    pub fn math_name(self) -> Option<&'static str> {
        match self {
            ScalarUnaryOp::Neg | ScalarUnaryOp::Not | ScalarUnaryOp::Truth => None,
            ScalarUnaryOp::Sqrt => Some("sqrt"),
            ScalarUnaryOp::Exp => Some("exp"),
            ScalarUnaryOp::Log => Some("log"),
            ScalarUnaryOp::Tanh => Some("tanh"),
            ScalarUnaryOp::Floor => Some("floor"),
            ScalarUnaryOp::Ceil => Some("ceil"),
            ScalarUnaryOp::Fabs => Some("fabs"),
        }
    }

    pub fn from_name(name: &str) -> Option<ScalarUnaryOp> {
        ScalarUnaryOp::ALL.into_iter().find(|op| op.name() == name)
    }
}

/// What a [`ExprKind::Reduce`] computes over its dim: `mean`, `sum`, or the extrema `amax` /
/// `amin` (NaN if the line has one, as eager's). Only `mean` and `sum` fuse into a
/// [`FusedTail`] ([`fusable_reduce`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ReduceKind {
    Mean,
    Sum,
    Amax,
    Amin,
}

/// The comparison a `where` selects by (`lhs <op> rhs`, elementwise, as ATen compares a
/// float32 tensor: a Python scalar side is rounded to float32 first; any comparison with
/// NaN is false but `!=`, which is true).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    pub const ALL: [CompareOp; 6] = [
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
    ];

    /// `eq`, `ne`, `lt`, `le`, `gt`, `ge` (ATen's names).
    pub fn name(self) -> &'static str {
        match self {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Lt => "lt",
            CompareOp::Le => "le",
            CompareOp::Gt => "gt",
            CompareOp::Ge => "ge",
        }
    }

    /// Python's operator (`==`, `!=`, `<`, `<=`, `>`, `>=`).
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }

    pub fn from_symbol(symbol: &str) -> Option<CompareOp> {
        CompareOp::ALL.into_iter().find(|op| op.symbol() == symbol)
    }

    /// The same comparison with its sides swapped (`s < x` is `x > s`), which is how Python
    /// evaluates a scalar on the left (the scalar's method gives way to the tensor's
    /// reflected one).
    pub fn swapped(self) -> CompareOp {
        match self {
            CompareOp::Eq => CompareOp::Eq,
            CompareOp::Ne => CompareOp::Ne,
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::Le => CompareOp::Ge,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::Ge => CompareOp::Le,
        }
    }

    /// The comparison of two float32 values, IEEE's (NaN compares unequal to everything).
    pub fn holds(self, a: f32, b: f32) -> bool {
        match self {
            CompareOp::Eq => a == b,
            CompareOp::Ne => a != b,
            CompareOp::Lt => a < b,
            CompareOp::Le => a <= b,
            CompareOp::Gt => a > b,
            CompareOp::Ge => a >= b,
        }
    }
}

/// What an [`ExprKind::Elementwise`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ElementwiseOp {
    /// `torch.where(lhs <cmp> rhs, on_true, on_false)`: four operands, each a float32 tensor
    /// or a Python scalar, at least one of `lhs`/`rhs` a tensor; a scalar `on_true`/
    /// `on_false` is cast to float32 as eager casts it (a finite float beyond float32's range
    /// raises eager's `RuntimeError`). Text `where_gt %a, %b, %x, %y`.
    Where(CompareOp),
    /// `torch.maximum(a, b)`: two float32 tensors; NaN wins, as in eager.
    Maximum,
    /// `torch.minimum(a, b)`: two float32 tensors; NaN wins, as in eager.
    Minimum,
    /// `torch.pow(x, p)` / `x ** p` with a Python `int`/`float` exponent: ATen's own
    /// `pow(Tensor, Scalar)` (its special cases `0`, `1`, `0.5`, `-0.5`, `-1`, `2`, `3`, `-2`).
    Pow,
}

impl ElementwiseOp {
    pub const ALL: [ElementwiseOp; 9] = [
        ElementwiseOp::Where(CompareOp::Eq),
        ElementwiseOp::Where(CompareOp::Ne),
        ElementwiseOp::Where(CompareOp::Lt),
        ElementwiseOp::Where(CompareOp::Le),
        ElementwiseOp::Where(CompareOp::Gt),
        ElementwiseOp::Where(CompareOp::Ge),
        ElementwiseOp::Maximum,
        ElementwiseOp::Minimum,
        ElementwiseOp::Pow,
    ];

    /// The op's name in the text format (`where_gt`, `maximum`, `minimum`, `pow`).
    pub fn name(self) -> &'static str {
        match self {
            ElementwiseOp::Where(CompareOp::Eq) => "where_eq",
            ElementwiseOp::Where(CompareOp::Ne) => "where_ne",
            ElementwiseOp::Where(CompareOp::Lt) => "where_lt",
            ElementwiseOp::Where(CompareOp::Le) => "where_le",
            ElementwiseOp::Where(CompareOp::Gt) => "where_gt",
            ElementwiseOp::Where(CompareOp::Ge) => "where_ge",
            ElementwiseOp::Maximum => "maximum",
            ElementwiseOp::Minimum => "minimum",
            ElementwiseOp::Pow => "pow",
        }
    }

    pub fn from_name(name: &str) -> Option<ElementwiseOp> {
        ElementwiseOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// How many operands the op takes.
    pub fn arity(self) -> usize {
        match self {
            ElementwiseOp::Where(_) => 4,
            ElementwiseOp::Maximum | ElementwiseOp::Minimum | ElementwiseOp::Pow => 2,
        }
    }

    /// Whether operand `index` may be a Python `int`/`float` (else it is a float32 tensor):
    /// every operand of `where`, the exponent of `pow`.
    pub fn takes_scalar(self, index: usize) -> bool {
        match self {
            ElementwiseOp::Where(_) => true,
            ElementwiseOp::Pow => index == 1,
            ElementwiseOp::Maximum | ElementwiseOp::Minimum => false,
        }
    }
}

impl fmt::Display for ElementwiseOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a [`ExprKind::Join`] joins its parts: `cat` along an existing dim, `stack` along a
/// new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum JoinKind {
    Cat,
    Stack,
}

impl JoinKind {
    pub const ALL: [JoinKind; 2] = [JoinKind::Cat, JoinKind::Stack];

    /// `cat` or `stack`: the op's name in the text format.
    pub fn name(self) -> &'static str {
        match self {
            JoinKind::Cat => "cat",
            JoinKind::Stack => "stack",
        }
    }

    pub fn from_name(name: &str) -> Option<JoinKind> {
        JoinKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for JoinKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which part of `max(dim)` / `min(dim)` an [`ExprKind::Extremum`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ExtremumOp {
    /// `x.max(dim=d).values`: float32.
    MaxValues,
    /// `x.max(dim=d).indices`: int64.
    MaxIndices,
    /// `x.min(dim=d).values`: float32.
    MinValues,
    /// `x.min(dim=d).indices`: int64.
    MinIndices,
}

impl ExtremumOp {
    pub const ALL: [ExtremumOp; 4] = [
        ExtremumOp::MaxValues,
        ExtremumOp::MaxIndices,
        ExtremumOp::MinValues,
        ExtremumOp::MinIndices,
    ];

    /// `max_values`, `max_indices`, `min_values`, `min_indices` (text and emitted code).
    pub fn name(self) -> &'static str {
        match self {
            ExtremumOp::MaxValues => "max_values",
            ExtremumOp::MaxIndices => "max_indices",
            ExtremumOp::MinValues => "min_values",
            ExtremumOp::MinIndices => "min_indices",
        }
    }

    pub fn from_name(name: &str) -> Option<ExtremumOp> {
        ExtremumOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether the op is `max` (else `min`).
    pub fn is_max(self) -> bool {
        matches!(self, ExtremumOp::MaxValues | ExtremumOp::MaxIndices)
    }

    /// Whether the op is the indices part (int64), else the values (float32).
    pub fn is_indices(self) -> bool {
        matches!(self, ExtremumOp::MaxIndices | ExtremumOp::MinIndices)
    }

    /// The op of `max` (else `min`) and the indices (else the values).
    pub fn of(max: bool, indices: bool) -> ExtremumOp {
        match (max, indices) {
            (true, false) => ExtremumOp::MaxValues,
            (true, true) => ExtremumOp::MaxIndices,
            (false, false) => ExtremumOp::MinValues,
            (false, true) => ExtremumOp::MinIndices,
        }
    }
}

impl fmt::Display for ExtremumOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an [`ExprKind::FillLike`] fills with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum FillKind {
    /// `torch.zeros_like(x)`.
    Zeros,
    /// `torch.ones_like(x)`.
    Ones,
    /// `torch.full_like(x, value)`: the one op with a value operand.
    Full,
}

impl FillKind {
    pub const ALL: [FillKind; 3] = [FillKind::Zeros, FillKind::Ones, FillKind::Full];

    /// `zeros_like`, `ones_like`, `full_like` (text and emitted code).
    pub fn name(self) -> &'static str {
        match self {
            FillKind::Zeros => "zeros_like",
            FillKind::Ones => "ones_like",
            FillKind::Full => "full_like",
        }
    }

    pub fn from_name(name: &str) -> Option<FillKind> {
        FillKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the kind reads a value operand (`full_like`).
    pub fn takes_value(self) -> bool {
        self == FillKind::Full
    }
}

impl fmt::Display for FillKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which view an [`ExprKind::View`] takes (see there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ViewKind {
    Transpose,
    Reshape,
    View,
    Flatten,
    Unsqueeze,
    Squeeze,
}

impl ViewKind {
    pub const ALL: [ViewKind; 6] = [
        ViewKind::Transpose,
        ViewKind::Reshape,
        ViewKind::View,
        ViewKind::Flatten,
        ViewKind::Unsqueeze,
        ViewKind::Squeeze,
    ];

    /// The op's name in the text format (and the emitted code's `exec::` function).
    pub fn name(self) -> &'static str {
        match self {
            ViewKind::Transpose => "transpose",
            ViewKind::Reshape => "reshape",
            ViewKind::View => "view",
            ViewKind::Flatten => "flatten",
            ViewKind::Unsqueeze => "unsqueeze",
            ViewKind::Squeeze => "squeeze",
        }
    }

    pub fn from_name(name: &str) -> Option<ViewKind> {
        ViewKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the view reads its `sizes` operands (`reshape`, `view`).
    pub fn takes_sizes(self) -> bool {
        matches!(self, ViewKind::Reshape | ViewKind::View)
    }

    /// Whether the view reads its `dim` attribute (`unsqueeze`, `squeeze`).
    pub fn takes_dim(self) -> bool {
        matches!(self, ViewKind::Unsqueeze | ViewKind::Squeeze)
    }
}

impl fmt::Display for ViewKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a [`ExprKind::Softmax`] computes along its dim: `softmax`, or `log_softmax`
/// (`x - max - log(sum(exp(x - max)))`, as ATen computes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum SoftmaxKind {
    Softmax,
    LogSoftmax,
}

impl SoftmaxKind {
    pub const ALL: [SoftmaxKind; 2] = [SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax];

    /// `softmax` or `log_softmax`: the op's name in the text format and the egg language.
    pub fn name(self) -> &'static str {
        match self {
            SoftmaxKind::Softmax => "softmax",
            SoftmaxKind::LogSoftmax => "log_softmax",
        }
    }

    pub fn from_name(name: &str) -> Option<SoftmaxKind> {
        SoftmaxKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// How [`ExprKind::EmbeddingBag`] pools a bag's rows: `F.embedding_bag`'s `mode`, whose
/// ATen codes are 0, 1 and 2 ([`BagMode::aten_code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum BagMode {
    Sum,
    Mean,
    Max,
}

impl BagMode {
    pub const ALL: [BagMode; 3] = [BagMode::Sum, BagMode::Mean, BagMode::Max];

    /// `sum`, `mean` or `max`: eager's spelling of the mode, and the text format's.
    pub fn name(self) -> &'static str {
        match self {
            BagMode::Sum => "sum",
            BagMode::Mean => "mean",
            BagMode::Max => "max",
        }
    }

    pub fn from_name(name: &str) -> Option<BagMode> {
        BagMode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The `mode` integer `F.embedding_bag` passes to `torch.embedding_bag`.
    pub fn aten_code(self) -> i64 {
        match self {
            BagMode::Sum => 0,
            BagMode::Mean => 1,
            BagMode::Max => 2,
        }
    }
}

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

impl BinaryOp {
    pub const ALL: [BinaryOp; 4] = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div];

    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
        }
    }

    pub fn from_name(name: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.name() == name)
    }
}

impl ReduceKind {
    pub const ALL: [ReduceKind; 4] = [
        ReduceKind::Mean,
        ReduceKind::Sum,
        ReduceKind::Amax,
        ReduceKind::Amin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Mean => "mean",
            ReduceKind::Sum => "sum",
            ReduceKind::Amax => "amax",
            ReduceKind::Amin => "amin",
        }
    }

    pub fn from_name(name: &str) -> Option<ReduceKind> {
        ReduceKind::ALL.into_iter().find(|k| k.name() == name)
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
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Matmul { lhs, rhs } => vec![*lhs, *rhs],
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
                ..
            } => {
                let mut ops = vec![*input, *weight];
                ops.extend(*bias);
                ops.extend(prologue.iter().map(|step| step.operand));
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
            } => ExprKind::FusedLinear {
                input: map(*input)?,
                weight: map(*weight)?,
                bias: bias.map(&mut map).transpose()?,
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
            ExprKind::FusedLinear { layout, .. } => layout.mnemonic(),
        }
    }
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for ScalarOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for SoftmaxKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for ReduceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
