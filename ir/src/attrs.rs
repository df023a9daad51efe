//! The attributes of ops: the small enums and values an [`ExprKind`](crate::expr::ExprKind)
//! carries besides its operands (which binary op, which reduction, which view, a float
//! parameter's bits), with their text-format names. Split from `expr.rs`, which re-exports
//! all of them (`crate::expr::BinaryOp` stays a path); they name no expression, so this
//! module imports nothing of the crate's.

use std::fmt;

use serde::Serialize;

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
/// ([`ExprKind::ParamUnary`](crate::expr::ExprKind::ParamUnary)). Eager converts each parameter to float32 with a checked cast
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

/// What a [`ExprKind::Reduce`](crate::expr::ExprKind::Reduce) computes over its dim: `mean`, `sum`, or the extrema `amax` /
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

    /// `truth_eq`, ... `truth_ge`: the mnemonic of a tensor comparison read as a condition
    /// ([`ExprKind::TensorTruth`](crate::expr::ExprKind::TensorTruth)).
    pub fn truth_name(self) -> &'static str {
        match self {
            CompareOp::Eq => "truth_eq",
            CompareOp::Ne => "truth_ne",
            CompareOp::Lt => "truth_lt",
            CompareOp::Le => "truth_le",
            CompareOp::Gt => "truth_gt",
            CompareOp::Ge => "truth_ge",
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

/// What an [`ExprKind::Elementwise`](crate::expr::ExprKind::Elementwise) computes.
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

/// How a [`ExprKind::Join`](crate::expr::ExprKind::Join) joins its parts: `cat` along an existing dim, `stack` along a
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

/// Which part of `max(dim)` / `min(dim)` an [`ExprKind::Extremum`](crate::expr::ExprKind::Extremum) is.
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

/// What an [`ExprKind::FillLike`](crate::expr::ExprKind::FillLike) fills with.
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

/// Which view an [`ExprKind::View`](crate::expr::ExprKind::View) takes (see there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ViewKind {
    Transpose,
    Reshape,
    View,
    Flatten,
    Unsqueeze,
    Squeeze,
    /// `x.contiguous()`: `x` itself where it is contiguous, else a dense copy (ATen's; the
    /// same shape). Not a view in eager's sense, but like one it may be its input's tensor.
    Contiguous,
}

impl ViewKind {
    pub const ALL: [ViewKind; 7] = [
        ViewKind::Transpose,
        ViewKind::Reshape,
        ViewKind::View,
        ViewKind::Flatten,
        ViewKind::Unsqueeze,
        ViewKind::Squeeze,
        ViewKind::Contiguous,
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
            ViewKind::Contiguous => "contiguous",
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

/// What a [`ExprKind::Softmax`](crate::expr::ExprKind::Softmax) computes along its dim: `softmax`, or `log_softmax`
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

/// How [`ExprKind::EmbeddingBag`](crate::expr::ExprKind::EmbeddingBag) pools a bag's rows: `F.embedding_bag`'s `mode`, whose
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

    /// Python's operator (`+`, `-`, `*`, `/`).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
        }
    }

    pub fn from_symbol(symbol: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.symbol() == symbol)
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

/// Which whole-tensor reduction an [`ExprKind::ReduceAll`](crate::expr::ExprKind::ReduceAll)
/// is: `x.sum()`, `x.mean()`, `x.max()`, `x.min()`, `x.amax()`, `x.amin()` written with no
/// dim, a rank-0 result. `max`/`min` and `amax`/`amin` give the same values but raise with
/// their own words on an empty tensor, so each keeps its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum WholeReduceOp {
    Sum,
    Mean,
    Max,
    Min,
    Amax,
    Amin,
}

impl WholeReduceOp {
    pub const ALL: [WholeReduceOp; 6] = [
        WholeReduceOp::Sum,
        WholeReduceOp::Mean,
        WholeReduceOp::Max,
        WholeReduceOp::Min,
        WholeReduceOp::Amax,
        WholeReduceOp::Amin,
    ];

    /// The method's name (`sum`, `mean`, `max`, `min`, `amax`, `amin`).
    pub fn method(self) -> &'static str {
        match self {
            WholeReduceOp::Sum => "sum",
            WholeReduceOp::Mean => "mean",
            WholeReduceOp::Max => "max",
            WholeReduceOp::Min => "min",
            WholeReduceOp::Amax => "amax",
            WholeReduceOp::Amin => "amin",
        }
    }

    /// `sum_all`, `mean_all`, ... (text and emitted code): apart from the reductions along
    /// a dim ([`ReduceKind`]) and `max`/`min` along one ([`ExtremumOp`]).
    pub fn name(self) -> &'static str {
        match self {
            WholeReduceOp::Sum => "sum_all",
            WholeReduceOp::Mean => "mean_all",
            WholeReduceOp::Max => "max_all",
            WholeReduceOp::Min => "min_all",
            WholeReduceOp::Amax => "amax_all",
            WholeReduceOp::Amin => "amin_all",
        }
    }

    pub fn from_name(name: &str) -> Option<WholeReduceOp> {
        WholeReduceOp::ALL.into_iter().find(|op| op.name() == name)
    }

    pub fn from_method(method: &str) -> Option<WholeReduceOp> {
        WholeReduceOp::ALL
            .into_iter()
            .find(|op| op.method() == method)
    }
}

impl fmt::Display for WholeReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an [`ExprKind::ToScalar`](crate::expr::ExprKind::ToScalar) reads a one-element
/// tensor as a Python `float`: `t.item()` (a tensor of another size is eager's
/// `RuntimeError`) or `float(t)` (eager's `ValueError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ToScalarKind {
    Item,
    Float,
}

impl ToScalarKind {
    pub const ALL: [ToScalarKind; 2] = [ToScalarKind::Item, ToScalarKind::Float];

    /// `item`, `float_of` (text and emitted code).
    pub fn name(self) -> &'static str {
        match self {
            ToScalarKind::Item => "item",
            ToScalarKind::Float => "float_of",
        }
    }

    pub fn from_name(name: &str) -> Option<ToScalarKind> {
        ToScalarKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for ToScalarKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
