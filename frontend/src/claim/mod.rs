//! The claim rules of the rextio-torch surface: a pure function from a [`ClaimSite`] (what
//! the source says at one call/operator site, with resolved operand types) to a
//! [`ClaimOutcome`]. The reference plugin tries its lanes in the order
//! cuda -> linear -> gelu -> activations -> unary -> reductions -> classification -> binops;
//! ours keep that order among themselves (our `functional` lane is the reference's `gelu`
//! lane, generalised to the op table's functional spellings) with the extended surface's
//! lanes between them. First `cuda`; then, under the extended surface, `casts`: `x.float()`,
//! `x.to(dtype)`, `x.type_as(y)` at the dtype `x` already has, eager's no-op (`casts.rs`; before
//! the dtype lane, so a float64 receiver is read at float64); then `dtypes`: the sites of
//! float64 and bfloat16 tensors, read at float32 through the lanes after it, keeping the
//! answers whose op ATen computes at any float dtype (`dtypes.rs`). Then [`LANES`], in this
//! order (a test holds this list to the array); the first lane with an answer wins,
//! otherwise the site is not covered:
//!
//! 1. `scalar_math` (extended): `math.sqrt(d)` and the other `math` functions on Python scalars;
//! 2. `rank0`: whole-tensor reductions, `item()`/`float()`, rank-0 operands, and tensor
//!    comparisons as `if`/`while` conditions (the only compares covered);
//! 3. `rank3`: sites with a rank-3 operand (`TensorF32Cpu3D`): batched matmul, elementwise and
//!    unary ops, softmax, linear, and with `rank3_forms` the reductions along a dim,
//!    layer_norm, pow/maximum/minimum/where;
//! 4. `layers` (extended): `F.layer_norm`, `F.embedding`, `F.embedding_bag`, `F.dropout`;
//! 5. `linear`;
//! 6. `functional`;
//! 7. `activations`;
//! 8. `unary`;
//! 9. `reductions` (`amax`/`amin` extended only);
//! 10. `classification`;
//! 11. `log_softmax` (extended);
//! 12. `param_unary`: `leaky_relu`, `elu`, `hardtanh`, `clamp`;
//! 13. `joins`: `torch.cat`/`torch.stack` of a list or tuple display;
//! 14. `views`;
//! 15. `elemwise`: `torch.where` of an inline comparison, `maximum`/`minimum`, `pow`;
//! 16. `dim_ops`: `max`/`min` over a dim read as `.values`/`.indices`, the fills,
//!     `index_select`, `F.normalize`;
//! 17. `binops`.
//!
//! Every lane decides under a [`Surface`]: the extended one ([`claim`]: `check`,
//! `compile` and the CLI by default) reads every spelling of the op table ([`spellings`]) and
//! admits negative dims (`dim=-1`, normalized here to `dim + rank`, so the IR never sees
//! one); the reference one ([`claim_with`], [`Surface::Reference`]: the Rextio plugin and
//! `surface="reference"`) gives the reference plugin's outcome for every site.
//!
//! Rule ids, diagnostic codes and messages are the reference plugin's (see
//! `docs/reference-plugin.md`): they are a contract with tools and with the Rextio
//! host, so they are reproduced exactly. Unresolved operand types (`None`) give
//! `NotCovered`, never a rejection that depends on them; compares are covered only by the
//! extended surface's rank-0 lane (a tensor comparison as an `if`/`while` condition).
//! Every rule id and code lives in [`rules`], which also declares `RXTP-TORCH-049`.

use rextio_ir::{
    BagMode, BinaryOp, CompareOp, ElementwiseOp, ExtremumOp, FillKind, FloatBits, JoinKind, Marker,
    ParamUnaryOp, ReduceKind, ScalarUnaryOp, SoftmaxKind, TensorScalarOp, TensorType, ToScalarKind,
    UnaryOp, ViewKind, WholeReduceOp, MARKERS,
};

mod activations;
mod binops;
pub mod casts;
mod classification;
mod cuda;
pub mod dim_ops;
mod dtypes;
mod elemwise;
mod functional;
mod joins;
pub mod layers;
mod linear;
mod log_softmax;
mod param_unary;
pub mod pyrepr;
mod rank0;
mod rank3;
mod rank3_forms;
mod reductions;
pub mod rules;
pub mod scalar_math;
pub mod spellings;
mod unary;
pub mod views;

pub use elemwise::{compare_op, offers_pow, takes_condition};
pub use joins::join_kind;
pub use rules::{rule_records, RuleOutcome, RuleRecord, ScopeKind};
pub use spellings::{plugin_surface, PluginSurface, Surface};

/// What the walker reads at a call's arguments beyond what the reference host offers, as
/// the lane that claims the target asks (extended surface only: under the reference one
/// both are false, and every site gets the host's literals and keyword refusals).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArgumentReading {
    /// Float literals and positional bools are literals ([`Literal::Float`],
    /// [`Literal::Bool`]): layer_norm's `eps`, dropout's `p` and `training`, `full_like`'s
    /// value, `max`/`min`'s positional `keepdim`, normalize's `p` and `eps`.
    pub float_literals: bool,
    /// A keyword whose value is not a literal is offered with its value's type, where the
    /// host refuses the call: scalars (`negative_slope=s`, `min=lo`) and tensors
    /// (`weight=w`, `bias=b`). Keyword values follow the positional operands in the
    /// site's operand numbering.
    pub value_keywords: bool,
}

/// [`ArgumentReading`] of a call to `target` (`has_receiver`: a method call).
pub fn argument_reading(target: &str, has_receiver: bool, surface: Surface) -> ArgumentReading {
    let layers = layers::reads_values(target, surface);
    ArgumentReading {
        float_literals: layers || dim_ops::reads_float_literals(target, has_receiver, surface),
        value_keywords: layers || param_unary::takes_scalar_keywords(target, has_receiver, surface),
    }
}

/// Plugin type keys, as Core spells operand types (the IR's [`MARKERS`]).
pub const KEY_M: &str = Marker::of(TensorType::F32_CPU_2D).key;
pub const KEY_V: &str = Marker::of(TensorType::F32_CPU_1D).key;
pub const KEY_L: &str = Marker::of(TensorType::I64_CPU_1D).key;
pub const KEY_CM: &str = Marker::of(TensorType::F32_CUDA0_2D).key;
pub const KEY_CV: &str = Marker::of(TensorType::F32_CUDA0_1D).key;
/// The extended surface's rank-3 float32 CPU key (`T`, `TensorF32Cpu3D`) and rank-2 int64
/// CPU key (`TensorI64Cpu2D`): never offered under the reference surface.
pub const KEY_T: &str = Marker::of(TensorType::F32_CPU_3D).key;
pub const KEY_LM: &str = Marker::of(TensorType::I64_CPU_2D).key;
/// The extended surface's float32 CPU rank-0 key (`S`, `TensorF32Cpu0D`: `x.sum()`).
pub const KEY_S: &str = Marker::of(TensorType::F32_CPU_0D).key;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiteKind {
    Call,
    Binop,
    Compare,
}

/// A statically known value. Positionally only signed ints (unary minus folded), `None` and
/// int tuples are literals; floats, bools and strings are not. Keywords also admit bool and
/// str literals.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Literal {
    NonLiteral,
    Int(i64),
    None,
    IntTuple(Vec<i64>),
    Bool(bool),
    Str(String),
    /// A float literal (unary minus folded), by its bits. Only the targets whose lane reads
    /// them get one, under the extended surface ([`ArgumentReading::float_literals`]);
    /// everywhere else a float is non-literal, as the reference host has it.
    Float(FloatBits),
}

impl Literal {
    /// Whether the value is statically known (Python `ClaimLiteral.is_literal`).
    pub fn is_literal(&self) -> bool {
        !matches!(self, Literal::NonLiteral)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeywordArg {
    pub name: String,
    /// Resolved value type: `"int"`, `"bool"`, `"None"`, `"str"`, a plugin key, ... or `None`
    /// when unresolved.
    pub arg_type: Option<String>,
    pub literal: Literal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReceiverKind {
    Name,
    Attribute,
    Subscript,
    Call,
    Opaque,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Receiver {
    pub arg_type: Option<String>,
    pub expr_kind: ReceiverKind,
}

/// One site as offered for claiming. Mirrors the reference `ClaimSite` (API 1.7) minus the
/// fields Core zeroes before claiming.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClaimSite {
    pub kind: SiteKind,
    /// Calls: the resolved dotted name (`torch.nn.functional.linear`), `x.relu` for a method
    /// on a name, bare `relu` for a method on a call result. Binops/compares: the operator
    /// (`+ - * / % @`, `== != < <= > >=`).
    pub target: String,
    /// Positional operand types (never the receiver); `None` = unresolved.
    pub operand_types: Vec<Option<String>>,
    /// Aligned with `operand_types`.
    pub operand_literals: Vec<Literal>,
    pub keywords: Vec<KeywordArg>,
    pub receiver: Option<Receiver>,
    /// Ours, not the reference API's: the call's first positional argument was a list or
    /// tuple display of this many items (`torch.cat([a, b], dim=1)`), offered as operands
    /// `0..n`, the call's other positional arguments after them. Only the walker under
    /// [`Surface::Extended`] writes one, for the join lane's targets (`torch.cat`,
    /// `torch.concat`, `torch.concatenate`, `torch.stack`); `None` everywhere else (a list
    /// display anywhere else is not lowered, `RXT031`).
    pub sequence: Option<usize>,
    /// Ours, not the reference API's: the call is a `where` (`torch.where(...)`,
    /// `t.where(...)`) whose first positional argument was a comparison written in the call
    /// (`x > 0`), offered as operands 0 and 1 (its two sides), the call's other positional
    /// arguments after them. Only the walker under [`Surface::Extended`] writes one
    /// ([`takes_condition`]); `None` everywhere else.
    pub condition: Option<CompareOp>,
    /// Ours, not the reference API's: the call (`x.max(dim=1)`, `torch.min(x, 0)`) was
    /// written with `.values` / `.indices` / `[0]` / `[1]` after it, and the site is that
    /// part ([`ResultPart`]). Only the walker under [`Surface::Extended`] writes one, for
    /// `max`/`min` calls ([`dim_ops::takes_part`]); `None` everywhere else.
    pub part: Option<ResultPart>,
    /// Ours, not the reference API's: the site is a comparison written as an `if`/`while`
    /// condition (`if p.max() > 0.99:`), where Python reads the truth of its result. Only
    /// the walker under [`Surface::Extended`] writes `true`; the rank-0 lane claims a
    /// comparison of tensors only there.
    pub truth: bool,
}

/// Which part of a `(values, indices)` named tuple a site is ([`ClaimSite::part`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultPart {
    /// `.values` / `[0]`.
    Values,
    /// `.indices` / `[1]`.
    Indices,
}

impl ResultPart {
    /// `values`, `indices` (the named tuple's field).
    pub fn name(self) -> &'static str {
        match self {
            ResultPart::Values => "values",
            ResultPart::Indices => "indices",
        }
    }
}

/// Where a claimed op takes each input from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    Receiver,
    Operand(usize),
}

/// What a claimed site computes, in IR terms: the frontend lowers it without re-reading the
/// site's syntax.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ClaimedOp {
    Linear {
        input: Input,
        weight: Input,
        bias: Option<Input>,
    },
    Unary {
        op: UnaryOp,
        input: Input,
    },
    Binary {
        op: BinaryOp,
        lhs: Input,
        rhs: Input,
    },
    /// A float32 tensor op with `int`/`float` parameters (extended surface only), in the
    /// op's parameter order ([`ParamUnaryOp::arity`] of them once the walker has placed the
    /// defaults: it turns each [`ParamArg::Default`] into a constant operand).
    ParamUnary {
        op: ParamUnaryOp,
        input: Input,
        params: Vec<ParamArg>,
    },
    /// A float32 tensor with an `int`/`float` scalar (extended surface only).
    TensorScalar {
        op: TensorScalarOp,
        tensor: Input,
        scalar: Input,
    },
    Matmul {
        lhs: Input,
        rhs: Input,
    },
    /// `torch.bmm(a, b)` / `a.bmm(b)`: a batched product of two rank-3 tensors whose batch
    /// sizes must be equal (no broadcast; extended surface only).
    Bmm {
        lhs: Input,
        rhs: Input,
    },
    Reduce {
        kind: ReduceKind,
        input: Input,
        dim: u8,
        keepdim: bool,
    },
    /// `softmax` or `log_softmax` (the kind says which).
    Softmax {
        kind: SoftmaxKind,
        input: Input,
        dim: u8,
    },
    Argmax {
        input: Input,
        dim: u8,
        keepdim: bool,
    },
    /// `F.layer_norm` over the last dim (extended surface only): `normalized` the `int` size of
    /// the normalized shape (its one element); `weight` and `bias` both or neither.
    LayerNorm {
        input: Input,
        normalized: Input,
        weight: Option<Input>,
        bias: Option<Input>,
        eps: FloatBits,
    },
    /// `F.embedding(ids, weight)` (extended surface only).
    Embedding {
        ids: Input,
        weight: Input,
    },
    /// `F.embedding_bag(ids, weight, offsets, mode=...)` (extended surface only).
    EmbeddingBag {
        ids: Input,
        weight: Input,
        offsets: Input,
        mode: BagMode,
    },
    /// The operand itself: `F.dropout(x, training=False)` (extended surface only). No IR op:
    /// the walker binds the site's value to its operand's.
    Identity {
        input: Input,
    },
    /// `torch.cat` / `torch.stack` of `parts`, in order (extended surface only).
    Join {
        kind: JoinKind,
        parts: Vec<Input>,
        dim: u8,
    },
    /// A `math` function of a Python scalar (extended surface only): `op` of `input`, and
    /// for `math.log(x, base)` also of `base`, the result `log(x) / log(base)`. No IR op of
    /// its own: the walker places the scalar ops.
    ScalarMath {
        op: ScalarUnaryOp,
        input: Input,
        base: Option<Input>,
    },
    /// A view of a tensor (extended surface only): `sizes` are `reshape`/`view`'s int
    /// operands, `dim` is `unsqueeze`/`squeeze`'s.
    View {
        kind: ViewKind,
        input: Input,
        sizes: Vec<Input>,
        dim: u8,
    },
    /// `x.shape[dim]` / `x.size(dim)`: a Python int (extended surface only).
    Size {
        input: Input,
        dim: u8,
    },
    /// `where` of an inline comparison, `maximum`, `minimum`, `pow` (extended surface only):
    /// the operands in the op's order, tensors or `int`/`float` scalars.
    Elementwise {
        op: ElementwiseOp,
        operands: Vec<Input>,
    },
    /// `x.max(dim=d).values` and the like (extended surface only).
    Extremum {
        op: ExtremumOp,
        input: Input,
        dim: u8,
        keepdim: bool,
    },
    /// `torch.zeros_like` / `ones_like` / `full_like` (extended surface only); `value` is
    /// `full_like`'s `int`/`float`.
    FillLike {
        kind: FillKind,
        input: Input,
        value: Option<Input>,
    },
    /// `torch.index_select(x, dim, ids)` (extended surface only).
    IndexSelect {
        input: Input,
        ids: Input,
        dim: u8,
    },
    /// `F.normalize(x, p, dim, eps)` (extended surface only).
    Normalize {
        input: Input,
        p: FloatBits,
        dim: u8,
        eps: FloatBits,
    },
    /// `x.sum()`, `x.max()`, ... with no dim: a rank-0 tensor (extended surface only).
    ReduceAll {
        op: WholeReduceOp,
        input: Input,
    },
    /// `t.item()` / `float(t)`: a Python `float` (extended surface only).
    ToScalar {
        kind: ToScalarKind,
        input: Input,
    },
    /// `lhs <op> rhs` as an `if`/`while` condition, `lhs` a tensor (the walker's operands
    /// swapped, and `op` with them, when the source has the scalar on the left): a `bool`
    /// (extended surface only).
    TensorTruth {
        op: CompareOp,
        lhs: Input,
        rhs: Input,
    },
}

/// One parameter of a [`ClaimedOp::ParamUnary`]: a value of the site, or eager's default
/// for a parameter the call leaves out (a float constant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamArg {
    Input(Input),
    Default(FloatBits),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ClaimOutcome {
    Claimed {
        rule_id: &'static str,
        /// Plugin type key of the result.
        result_type: &'static str,
        op: ClaimedOp,
    },
    NotCovered,
    Rejected {
        /// `RXTP-TORCH-NNN`.
        code: &'static str,
        /// Full reference message: `rextio-torch cannot lower '<target>': <detail>`.
        message: String,
    },
}

/// Decides one site under the extended surface (the default of `check`, `compile`, the
/// CLI). Pure: the same site always gets the same outcome.
pub fn claim(site: &ClaimSite) -> ClaimOutcome {
    claim_with(site, Surface::Extended)
}

/// Decides one site reading only the op table's spellings in `spellings`; the other lanes
/// are the same for every set. The Rextio plugin claims with [`Surface::Reference`], so
/// a site that only an extension spelling knows gets the reference plugin's outcome. Pure.
pub fn claim_with(site: &ClaimSite, surface: Surface) -> ClaimOutcome {
    cuda::try_claim(site)
        .or_else(|| casts::try_claim(site, surface))
        .or_else(|| dtypes::try_claim(site, surface))
        .unwrap_or_else(|| claim_lanes(site, surface))
}

/// One lane: its name (as the module doc lists it) and its rule.
pub type Lane = (
    &'static str,
    fn(&ClaimSite, Surface) -> Option<ClaimOutcome>,
);

/// The lanes after cuda and the dtype lane, in order (the module doc lists them; a test
/// holds the two together); the dtype lane asks them about its site read at float32.
pub const LANES: &[Lane] = &[
    ("scalar_math", scalar_math::try_claim),
    ("rank0", rank0::try_claim),
    ("rank3", rank3::try_claim),
    ("layers", layers::try_claim),
    ("linear", |site, _| linear::try_claim(site)),
    ("functional", functional::try_claim),
    ("activations", activations::try_claim),
    ("unary", unary::try_claim),
    ("reductions", reductions::try_claim),
    ("classification", classification::try_claim),
    ("log_softmax", log_softmax::try_claim),
    ("param_unary", param_unary::try_claim),
    ("joins", joins::try_claim),
    ("views", views::try_claim),
    ("elemwise", elemwise::try_claim),
    ("dim_ops", dim_ops::try_claim),
    ("binops", binops::try_claim),
];

/// The first answer of [`LANES`], or not covered.
fn claim_lanes(site: &ClaimSite, surface: Surface) -> ClaimOutcome {
    LANES
        .iter()
        .find_map(|(_, lane)| lane(site, surface))
        .unwrap_or(ClaimOutcome::NotCovered)
}

/// A reference rejection: `rextio-torch cannot lower '<target>': <detail>`.
fn reject(site: &ClaimSite, code: &'static str, detail: impl AsRef<str>) -> ClaimOutcome {
    ClaimOutcome::Rejected {
        code,
        message: format!(
            "rextio-torch cannot lower {}: {}",
            pyrepr::str_repr(&site.target),
            detail.as_ref()
        ),
    }
}

fn claimed(rule_id: &'static str, result_type: &'static str, op: ClaimedOp) -> ClaimOutcome {
    ClaimOutcome::Claimed {
        rule_id,
        result_type,
        op,
    }
}

/// How a message names an operand type: its marker name (`TensorF32Cpu3D`), else the type
/// as resolved (`int`).
fn shown(ty: &str) -> &str {
    Marker::by_key(ty).map_or(ty, |m| m.name)
}

/// `site` with every operand, keyword value and receiver of type `from` read as type `to`:
/// how the rank-0 and rank-3 lanes ask the rank-1/2 lanes about a form that does not depend
/// on the rank (a unary op's spellings and options).
fn retyped(site: &ClaimSite, from: &str, to: &str) -> ClaimSite {
    let map = |t: &Option<String>| match t.as_deref() {
        Some(ty) if ty == from => Some(to.to_string()),
        _ => t.clone(),
    };
    let mut out = site.clone();
    out.operand_types = site.operand_types.iter().map(map).collect();
    for keyword in &mut out.keywords {
        keyword.arg_type = map(&keyword.arg_type);
    }
    if let Some(receiver) = &mut out.receiver {
        receiver.arg_type = map(&receiver.arg_type);
    }
    out
}

/// Whether a claim's `input` is a value of type `key` at `site` (the receiver or a positional
/// operand).
fn input_is(site: &ClaimSite, input: &Input, key: &str) -> bool {
    match input {
        Input::Receiver => site
            .receiver
            .as_ref()
            .is_some_and(|r| r.arg_type.as_deref() == Some(key)),
        Input::Operand(i) => site.operand_types.get(*i).and_then(|t| t.as_deref()) == Some(key),
    }
}

/// The last dotted segment of a target (`x.relu` -> `relu`; Python `rpartition(".")[2]`).
fn method_name(target: &str) -> &str {
    target.rsplit('.').next().unwrap_or(target)
}

/// The registered key matching `ty`, as a `'static` string (the five plugin types and the
/// extended surface's rank-3 / int64 rank-2 ones).
fn tensor_key(ty: &str) -> Option<&'static str> {
    MARKERS.iter().map(|m| m.key).find(|key| *key == ty)
}

/// Reference `is_tensor_type`: true for all five plugin keys (so L and CUDA count).
fn is_tensor_type(ty: &str) -> bool {
    tensor_key(ty).is_some()
}

/// The float32 CPU rank-1/rank-2 key matching `ty` (M or V).
fn f32_cpu_key(ty: &str) -> Option<&'static str> {
    [KEY_M, KEY_V].into_iter().find(|key| *key == ty)
}

#[cfg(test)]
mod lane_order {
    /// The module doc's numbered list (`//! N. \`name\``) is [`super::LANES`], in order.
    #[test]
    fn the_module_doc_lists_the_lanes_in_order() {
        let listed: Vec<&str> = include_str!("mod.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .filter_map(|l| {
                let (number, rest) = l.split_once(". `")?;
                number.parse::<u32>().ok()?;
                rest.split('`').next()
            })
            .collect();
        let lanes: Vec<&str> = super::LANES.iter().map(|(name, _)| *name).collect();
        assert_eq!(listed, lanes, "claim/mod.rs's doc list and LANES differ");
    }
}
