//! The egg view of a straight-line region: the [`TensorLang`] term language, the conversion of
//! a function's expression DAG to terms ([`Region`]), and the conversion of an e-graph's
//! extracted terms back to a function ([`rebuild`]).
//!
//! # Terms
//!
//! Every [`ExprKind`] has a term whose head is its mnemonic in the text format; every
//! non-operand field is a leaf child, so the encoding is lossless:
//!
//! ```text
//! %0 = param 0                              (param 0)
//! %1 = const.int 3 / const.bool true        (const.int 3) / (const.bool true)
//! relu %0 (any unary op)                    (relu x)
//! add %0, %1 (any binary op)                (add x y)
//! linear %0, %1, %2 / linear %0, %1         (linear x w b) / (linear x w none)
//! matmul %0, %1                             (matmul x y)
//! mean %0, dim=1, keepdim=false (or sum,    (mean x 1 false)
//!   amax, amin)
//! softmax %0, dim=1 (or log_softmax)        (softmax x 1)
//! argmax %0, dim=1, keepdim=true            (argmax x 1 true)
//! fused_linear %0, %1, %2,                  (fused_linear x w b
//!   activations=[relu, tanh],                  (then (then nil relu) tanh)
//!   tail=mean(dim=1, keepdim=false)            (mean 1 false) nil)
//! fused_linear ..., activations=[], tail=none  (fused_linear x w b nil none nil)
//!   tail=softmax(dim=1) / tail=argmax(dim=1, keepdim=false)   (softmax 1) / (argmax 1 false)
//!   tail=log_softmax(dim=1)                    (log_softmax 1)
//! fused_matmul ... (the same children)      (fused_matmul x w b nil none nil)
//! fused_linear %0, %1, %3, %4,              (fused_linear x w none nil none
//!   prologue=[sub, div], ...                   (pre sub m (pre div s nil)))
//! ```
//!
//! The activation list is a snoc list (`nil`, `(then prev op)`) so that appending one more
//! activation is a plain pattern rewrite; the prologue is a cons list (`(pre op v rest)`:
//! `op v` first, then `rest`), so that taking the outermost elementwise op off a fused op's
//! input is one too.
//!
//! # Regions are cut into trees at shared values
//!
//! A value with more than one user (or one that is returned as well as used, or unused) is the
//! root of its own tree, and its users see it only as an opaque leaf `(ref N)` (`N` = its
//! index in the original arena). So a rewrite can never look through a shared value: fusing
//! across one would compute it twice (once fused, once for its other users). This is the
//! classic tree cover of instruction selection; it keeps every rule a plain pattern instead of
//! a pattern plus a use-count side condition on e-classes (which would need the counts kept in
//! sync with e-class merges). Parameter reads and constants are free to repeat, so they are
//! inlined into every tree that uses them (the e-graph's hash-consing merges them again).
//!
//! All trees of a function share one e-graph. Extraction picks one node per e-class; the
//! function is rebuilt class by class in the original definition order, with types re-derived
//! by [`result_type`] and every surviving value keeping the span and name of the original
//! expression in its e-class.
//!
//! # Types
//!
//! The e-graph's analysis ([`Types`]) gives every class that computes a tensor its type,
//! derived bottom-up from the region's parameter types and the types of the values its `ref`
//! leaves name, by the IR's own typing rules (`rextio_ir::typing`, one function per op).
//! Rules whose meaning depends on ranks (a `matmul` of two matrices, a rank-1 bias) check
//! it; a class whose type is unknown matches no such rule.

use std::collections::{HashMap, HashSet};

use egg::{define_language, Analysis, DidMerge, EGraph, Id, Language, RecExpr, Symbol};
use rextio_ir::typing;
use rextio_ir::{
    BinaryOp, Diagnostic, ExprId, ExprKind, FloatBits, Function, FusedReduce, FusedTail,
    ReduceKind, SoftmaxKind, TensorType, Type, UnaryOp, WeightLayout,
};

use crate::validate::{Valid, PASS_INTERNAL};

mod extract;
mod rebuild;
pub use extract::LinearExtractor;
pub use rebuild::{rebuild, rebuild_with_map};

/// Emits [`TensorLang`] from the unary op table (`rextio_ir::for_each_unary_op!`): one
/// variant per [`UnaryOp`], in table order and at a fixed place in the language, whose egg
/// text is the op's IR name (`(relu x)`); and [`TensorLang::unary`] /
/// [`TensorLang::as_unary`] between the two.
macro_rules! define_tensor_lang {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal { $($spellings:tt)* },)*) => {
        define_language! {
            /// egg terms for IR expressions (see the module docs for the encoding).
            pub enum TensorLang {
                // Payload leaves.
                "true" = True,
                "false" = False,
                // An absent bias or an absent fused reduction.
                "none" = Absent,
                // A bias written as `+ b` after the product (`(added b)` in a bias slot): the
                // same values as `linear`'s bias argument, with the addition's error for a
                // wrong size.
                "added" = Added(Id),
                // The empty activation list.
                "nil" = Nil,
                // Values without operands.
                "param" = Param(Id),
                "const.int" = ConstInt(Id),
                "const.bool" = ConstBool(Id),
                // The value of original expression `N`, computed by another tree.
                "ref" = Ref(Id),
                // Unary ops: one per `UnaryOp`, from the op table.
                $($name = $variant(Id),)*
                // Binary ops.
                "add" = Add([Id; 2]),
                "sub" = Sub([Id; 2]),
                "mul" = Mul([Id; 2]),
                "div" = Div([Id; 2]),
                // Linear algebra and reductions.
                "linear" = Linear([Id; 3]),
                "matmul" = Matmul([Id; 2]),
                "mean" = Mean([Id; 3]),
                "sum" = Sum([Id; 3]),
                "amax" = Amax([Id; 3]),
                "amin" = Amin([Id; 3]),
                "softmax" = Softmax([Id; 2]),
                "log_softmax" = LogSoftmax([Id; 2]),
                "argmax" = Argmax([Id; 3]),
                // `(layer_norm x normalized weight|none bias|none eps)`, `eps` an `Int`
                // leaf holding the bits of the float.
                "layer_norm" = LayerNorm([Id; 5]),
                // A fused op's input normalized first (its `norm`), with `layer_norm`'s
                // children: no value of its own, only ever a fused op's input.
                "prenorm" = PreNorm([Id; 5]),
                // Fused linear: input, weight, bias|none, activation list, tail|none,
                // prologue list.
                "fused_linear" = FusedLinear([Id; 6]),
                // The same over a weight laid out `[in, out]` (`matmul` then `+ bias`).
                "fused_matmul" = FusedMatmul([Id; 6]),
                // A prologue: `op` (a name leaf) with operand `v` applied to the input, then
                // `rest`.
                "pre" = Pre([Id; 3]),
                // The activation list `prev` followed by one more activation (a name leaf).
                "then" = Then([Id; 2]),
                // The reduction tail of a fused linear: `(mean dim keepdim)`.
                "mean" = MeanTail([Id; 2]),
                "sum" = SumTail([Id; 2]),
                // Extrema never fuse (`fusable_reduce`); their tails exist so that every
                // fused op has a term.
                "amax" = AmaxTail([Id; 2]),
                "amin" = AminTail([Id; 2]),
                // The row-wise tails: `(softmax dim)`, `(log_softmax dim)`,
                // `(argmax dim keepdim)`.
                "softmax" = SoftmaxTail([Id; 1]),
                "log_softmax" = LogSoftmaxTail([Id; 1]),
                "argmax" = ArgmaxTail([Id; 2]),
                // A residual in the tail slot: `(residual r first)`, `r` added after the
                // activations, on the left of the `+` where `first` is `true`.
                "residual" = ResidualTail([Id; 2]),
                Int(i64),
                // An activation name inside a `then` list.
                Name(Symbol),
            }
        }

        impl TensorLang {
            pub fn unary(op: UnaryOp, input: Id) -> TensorLang {
                match op {
                    $(UnaryOp::$variant => TensorLang::$variant(input),)*
                }
            }

            pub fn as_unary(&self) -> Option<(UnaryOp, Id)> {
                Some(match *self {
                    $(TensorLang::$variant(x) => (UnaryOp::$variant, x),)*
                    _ => return None,
                })
            }
        }
    };
}

rextio_ir::for_each_unary_op!(define_tensor_lang);

impl TensorLang {
    pub fn binary(op: BinaryOp, operands: [Id; 2]) -> TensorLang {
        match op {
            BinaryOp::Add => TensorLang::Add(operands),
            BinaryOp::Sub => TensorLang::Sub(operands),
            BinaryOp::Mul => TensorLang::Mul(operands),
            BinaryOp::Div => TensorLang::Div(operands),
        }
    }

    pub fn as_binary(&self) -> Option<(BinaryOp, [Id; 2])> {
        Some(match *self {
            TensorLang::Add(xy) => (BinaryOp::Add, xy),
            TensorLang::Sub(xy) => (BinaryOp::Sub, xy),
            TensorLang::Mul(xy) => (BinaryOp::Mul, xy),
            TensorLang::Div(xy) => (BinaryOp::Div, xy),
            _ => return None,
        })
    }

    /// The term of a reduction: `(mean x dim keepdim)`, `(amax ...)`, ...
    pub fn reduce(kind: ReduceKind, children: [Id; 3]) -> TensorLang {
        match kind {
            ReduceKind::Mean => TensorLang::Mean(children),
            ReduceKind::Sum => TensorLang::Sum(children),
            ReduceKind::Amax => TensorLang::Amax(children),
            ReduceKind::Amin => TensorLang::Amin(children),
        }
    }

    pub fn as_reduce(&self) -> Option<(ReduceKind, [Id; 3])> {
        Some(match *self {
            TensorLang::Mean(c) => (ReduceKind::Mean, c),
            TensorLang::Sum(c) => (ReduceKind::Sum, c),
            TensorLang::Amax(c) => (ReduceKind::Amax, c),
            TensorLang::Amin(c) => (ReduceKind::Amin, c),
            _ => return None,
        })
    }

    /// A fused op's reduction tail: `(mean dim keepdim)`, ...
    pub fn reduce_tail(kind: ReduceKind, children: [Id; 2]) -> TensorLang {
        match kind {
            ReduceKind::Mean => TensorLang::MeanTail(children),
            ReduceKind::Sum => TensorLang::SumTail(children),
            ReduceKind::Amax => TensorLang::AmaxTail(children),
            ReduceKind::Amin => TensorLang::AminTail(children),
        }
    }

    pub fn as_reduce_tail(&self) -> Option<(ReduceKind, [Id; 2])> {
        Some(match *self {
            TensorLang::MeanTail(c) => (ReduceKind::Mean, c),
            TensorLang::SumTail(c) => (ReduceKind::Sum, c),
            TensorLang::AmaxTail(c) => (ReduceKind::Amax, c),
            TensorLang::AminTail(c) => (ReduceKind::Amin, c),
            _ => return None,
        })
    }

    /// The term of a softmax: `(softmax x dim)` or `(log_softmax x dim)`.
    pub fn softmax(kind: SoftmaxKind, children: [Id; 2]) -> TensorLang {
        match kind {
            SoftmaxKind::Softmax => TensorLang::Softmax(children),
            SoftmaxKind::LogSoftmax => TensorLang::LogSoftmax(children),
        }
    }

    pub fn as_softmax(&self) -> Option<(SoftmaxKind, [Id; 2])> {
        Some(match *self {
            TensorLang::Softmax(c) => (SoftmaxKind::Softmax, c),
            TensorLang::LogSoftmax(c) => (SoftmaxKind::LogSoftmax, c),
            _ => return None,
        })
    }

    /// A fused op's row-wise softmax tail: `(softmax dim)` or `(log_softmax dim)`.
    pub fn softmax_tail(kind: SoftmaxKind, dim: Id) -> TensorLang {
        match kind {
            SoftmaxKind::Softmax => TensorLang::SoftmaxTail([dim]),
            SoftmaxKind::LogSoftmax => TensorLang::LogSoftmaxTail([dim]),
        }
    }

    pub fn as_softmax_tail(&self) -> Option<(SoftmaxKind, Id)> {
        Some(match *self {
            TensorLang::SoftmaxTail([dim]) => (SoftmaxKind::Softmax, dim),
            TensorLang::LogSoftmaxTail([dim]) => (SoftmaxKind::LogSoftmax, dim),
            _ => return None,
        })
    }

    /// Whether the node computes a value at run time (as opposed to a payload leaf, a
    /// parameter read, a constant or a reference to another tree). The cost model charges
    /// exactly these.
    pub fn is_op(&self) -> bool {
        !matches!(
            self,
            TensorLang::True
                | TensorLang::False
                | TensorLang::Absent
                | TensorLang::Added(_)
                | TensorLang::Nil
                | TensorLang::Param(_)
                | TensorLang::ConstInt(_)
                | TensorLang::ConstBool(_)
                | TensorLang::Ref(_)
                | TensorLang::Then(_)
                | TensorLang::Pre(_)
                | TensorLang::MeanTail(_)
                | TensorLang::SumTail(_)
                | TensorLang::AmaxTail(_)
                | TensorLang::AminTail(_)
                | TensorLang::SoftmaxTail(_)
                | TensorLang::LogSoftmaxTail(_)
                | TensorLang::ArgmaxTail(_)
                | TensorLang::ResidualTail(_)
                | TensorLang::PreNorm(_)
                | TensorLang::Int(_)
                | TensorLang::Name(_)
        )
    }
}

/// One tree of a region: the term for original expression `root`.
#[derive(Clone, Debug)]
pub struct Tree {
    pub root: ExprId,
    pub term: RecExpr<TensorLang>,
    /// For each node of `term`, the original expression it stands for (`None` for payload
    /// leaves and `ref` leaves).
    pub origin: Vec<Option<ExprId>>,
}

/// A straight-line region as trees, in the order of their roots' definitions.
#[derive(Clone, Debug, Default)]
pub struct Region {
    pub trees: Vec<Tree>,
}

/// The e-classes of a region added to an e-graph.
#[derive(Clone, Debug, Default)]
pub struct Classes {
    /// The class of every original expression (a class may hold several, e.g. repeated reads
    /// of one parameter).
    pub of_expr: HashMap<ExprId, Id>,
    /// The class of every tree's root, in tree order.
    pub roots: Vec<(ExprId, Id)>,
}

fn is_leaf(kind: &ExprKind) -> bool {
    matches!(
        kind,
        ExprKind::Param(_) | ExprKind::ConstInt(_) | ExprKind::ConstBool(_)
    )
}

/// Whether every expression of `f` has a term in [`TensorLang`] and its body is straight-line
/// code, so that [`region_of`] and [`rebuild`] cover it.
pub fn has_terms(f: &Function) -> bool {
    f.is_straight_line() && f.exprs.values().all(|e| has_term(&e.kind))
}

/// Whether [`TensorLang`] has a term for this kind of expression (scalar code, boundary
/// calls into Python, values a statement binds and the tensor ops of [`runs_alone`] have none).
pub fn has_term(kind: &ExprKind) -> bool {
    !matches!(
        kind,
        ExprKind::ConstFloat(_)
            | ExprKind::Bound
            | ExprKind::Scalar { .. }
            | ExprKind::ScalarUnary { .. }
            | ExprKind::BoundaryCall { .. }
    ) && !runs_alone(kind)
}

/// The tensor ops without a term, which the fusion pass keeps out of every region (a run of
/// `let`s of its own) and never fuses: a tensor-scalar op and an op with scalar parameters
/// read scalar code; a join (`cat`, `stack`) has a variable number of operands and nothing
/// to fuse with yet; `bmm` (rank 3) has no fusion either, and `fused_attention` is fused already
/// (by `crate::attention`, before the regions); `embedding` and `embedding_bag` are computed whole by ATen (a fused or own
/// kernel for them is a later optimization; `layer_norm` has a term, for the fused ops'
/// row normalization), and so are the elementwise ops (`where`, `maximum`, `minimum`, `pow`: ATen's own kernels,
/// some with scalar operands), so the ops around them fuse on either side. The
/// views (`transpose`, `reshape`, `view`, `flatten`, `unsqueeze`, `squeeze`) and `size` take
/// part in no rewrite: a view is ATen's (its result may share storage and be strided, which
/// no fused kernel reads), and `size` reads a tensor into scalar code.
/// `max`/`min` over a dim, the fills (`zeros_like`, `ones_like`, `full_like`),
/// `index_select` and `normalize` are ATen's own ops, called whole, and so are the
/// whole-tensor reductions (`sum_all`, ...), which read a tensor into a rank-0 one, `item`
/// and the `truth_*` comparisons, which read one into scalar code.
pub fn runs_alone(kind: &ExprKind) -> bool {
    matches!(
        kind,
        ExprKind::TensorScalar { .. }
            | ExprKind::ParamUnary { .. }
            | ExprKind::Bmm { .. }
            | ExprKind::FusedAttention { .. }
            | ExprKind::Embedding { .. }
            | ExprKind::Join { .. }
            | ExprKind::EmbeddingBag { .. }
            | ExprKind::View { .. }
            | ExprKind::Size { .. }
            | ExprKind::Elementwise { .. }
            | ExprKind::Extremum { .. }
            | ExprKind::FillLike { .. }
            | ExprKind::IndexSelect { .. }
            | ExprKind::Normalize { .. }
            | ExprKind::ReduceAll { .. }
            | ExprKind::ToScalar { .. }
            | ExprKind::TensorTruth { .. }
    )
}

/// Cuts the function's body (one straight-line region) into trees at shared values.
pub fn region_of(f: Valid<'_>) -> Region {
    region_with_roots(f, &HashSet::new())
}

/// [`region_of`], with `extra_roots` kept as values of their own (a region cut out of a
/// larger function: its values used outside it).
pub fn region_with_roots(f: Valid<'_>, extra_roots: &HashSet<ExprId>) -> Region {
    let f = f.function();
    let uses = rextio_ir::uses(f);
    let mut returned: HashSet<ExprId> = f.returns().into_iter().collect();
    returned.extend(extra_roots.iter().copied());
    // Returned values and values with other than one user are roots, except that leaves
    // (parameter reads, constants) used several times are inlined into each user.
    let is_root = |id: ExprId| {
        let count = uses.get(id).copied().unwrap_or(0);
        let shared_leaf = count > 1 && is_leaf(&f.exprs[id].kind);
        returned.contains(&id) || (count != 1 && !shared_leaf)
    };

    let mut region = Region::default();
    for (root, _) in f.exprs.iter() {
        if is_root(root) {
            region.trees.push(tree_of(f, root, &is_root));
        }
    }
    region
}

/// The term for `root`, built bottom-up with an explicit stack (regions can be long chains).
fn tree_of(f: &Function, root: ExprId, is_root: &dyn Fn(ExprId) -> bool) -> Tree {
    let mut tree = Tree {
        root,
        term: RecExpr::default(),
        origin: Vec::new(),
    };
    let mut node_of: HashMap<ExprId, Id> = HashMap::new();
    let mut stack = vec![(root, false)];
    while let Some((id, expanded)) = stack.pop() {
        if node_of.contains_key(&id) {
            continue;
        }
        if id != root && is_root(id) {
            let n = tree.add(TensorLang::Int(i64::from(u32::from(id.into_raw()))), None);
            let node = tree.add(TensorLang::Ref(n), None);
            node_of.insert(id, node);
            continue;
        }
        let kind = &f.exprs[id].kind;
        if !expanded {
            stack.push((id, true));
            for operand in kind.operands().into_iter().rev() {
                stack.push((operand, false));
            }
            continue;
        }
        // Validation guarantees operands precede users, so every operand is built by now.
        let node = tree.node_for(kind, &node_of);
        let node = tree.add(node, Some(id));
        node_of.insert(id, node);
    }
    tree
}

impl Tree {
    fn add(&mut self, node: TensorLang, origin: Option<ExprId>) -> Id {
        self.origin.push(origin);
        self.term.add(node)
    }

    fn leaf(&mut self, node: TensorLang) -> Id {
        self.add(node, None)
    }

    fn int(&mut self, value: i64) -> Id {
        self.leaf(TensorLang::Int(value))
    }

    fn bool(&mut self, value: bool) -> Id {
        self.leaf(if value {
            TensorLang::True
        } else {
            TensorLang::False
        })
    }

    /// The children of a `layer_norm` or `prenorm` node.
    fn norm_children(
        &mut self,
        x: Id,
        normalized: Id,
        weight: Option<Id>,
        bias: Option<Id>,
        eps: FloatBits,
    ) -> [Id; 5] {
        let (weight, bias) = (self.bias(weight), self.bias(bias));
        // The bits of an f64 as an i64 leaf (a bijection).
        let eps = self.int(eps.0 as i64);
        [x, normalized, weight, bias, eps]
    }

    fn bias(&mut self, bias: Option<Id>) -> Id {
        match bias {
            Some(bias) => bias,
            None => self.leaf(TensorLang::Absent),
        }
    }

    /// The node for `kind`, its payload leaves added first; operands come from `node_of`.
    fn node_for(&mut self, kind: &ExprKind, node_of: &HashMap<ExprId, Id>) -> TensorLang {
        // Operands are built before their user (see `tree_of`); a missing one would be a bug in
        // the walk, and maps to an `Absent` leaf rather than a panic.
        let kind = kind.map(|id| match node_of.get(&id) {
            Some(node) => *node,
            None => self.leaf(TensorLang::Absent),
        });
        match kind {
            ExprKind::Param(i) => TensorLang::Param(self.int(i64::from(i))),
            ExprKind::ConstInt(v) => TensorLang::ConstInt(self.int(v)),
            ExprKind::ConstBool(b) => TensorLang::ConstBool(self.bool(b)),
            // Not in the term language: `Fuse` hands over only expressions with a term
            // (see `has_term`).
            ExprKind::ConstFloat(_)
            | ExprKind::Bound
            | ExprKind::Scalar { .. }
            | ExprKind::ScalarUnary { .. }
            | ExprKind::TensorScalar { .. }
            | ExprKind::ParamUnary { .. }
            | ExprKind::Bmm { .. }
            | ExprKind::FusedAttention { .. }
            | ExprKind::Embedding { .. }
            | ExprKind::EmbeddingBag { .. }
            | ExprKind::Join { .. }
            | ExprKind::View { .. }
            | ExprKind::Size { .. }
            | ExprKind::BoundaryCall { .. }
            | ExprKind::Elementwise { .. }
            | ExprKind::Extremum { .. }
            | ExprKind::FillLike { .. }
            | ExprKind::IndexSelect { .. }
            | ExprKind::Normalize { .. }
            | ExprKind::ReduceAll { .. }
            | ExprKind::ToScalar { .. }
            | ExprKind::TensorTruth { .. } => TensorLang::Absent,
            ExprKind::Unary { op, input } => TensorLang::unary(op, input),
            ExprKind::Binary { op, lhs, rhs } => TensorLang::binary(op, [lhs, rhs]),
            ExprKind::Linear {
                input,
                weight,
                bias,
            } => TensorLang::Linear([input, weight, self.bias(bias)]),
            ExprKind::Matmul { lhs, rhs } => TensorLang::Matmul([lhs, rhs]),
            ExprKind::Reduce {
                kind,
                input,
                dim,
                keepdim,
            } => {
                let children = [input, self.int(i64::from(dim)), self.bool(keepdim)];
                TensorLang::reduce(kind, children)
            }
            ExprKind::Softmax { kind, input, dim } => {
                TensorLang::softmax(kind, [input, self.int(i64::from(dim))])
            }
            ExprKind::Argmax {
                input,
                dim,
                keepdim,
            } => TensorLang::Argmax([input, self.int(i64::from(dim)), self.bool(keepdim)]),
            ExprKind::LayerNorm {
                input,
                normalized,
                weight,
                bias,
                eps,
            } => TensorLang::LayerNorm(self.norm_children(input, normalized, weight, bias, eps)),
            ExprKind::FusedLinear {
                input: x,
                weight: w,
                bias,
                prologue,
                activations,
                tail,
                layout,
                bias_added,
                residual,
                norm,
            } => {
                let x = match norm {
                    Some(n) => {
                        let children = self.norm_children(x, n.normalized, n.weight, n.bias, n.eps);
                        self.leaf(TensorLang::PreNorm(children))
                    }
                    None => x,
                };
                let b = match bias {
                    Some(b) if bias_added => Some(self.leaf(TensorLang::Added(b))),
                    other => other,
                };
                let b = self.bias(b);
                let mut pre = self.leaf(TensorLang::Nil);
                for step in prologue.iter().rev() {
                    let name = self.leaf(TensorLang::Name(Symbol::from(step.op.name())));
                    pre = self.leaf(TensorLang::Pre([name, step.operand, pre]));
                }
                let mut acts = self.leaf(TensorLang::Nil);
                for op in activations {
                    let name = self.leaf(TensorLang::Name(Symbol::from(op.name())));
                    acts = self.leaf(TensorLang::Then([acts, name]));
                }
                let tail = match (tail, residual) {
                    // A fused op with a residual has no tail (invariant 6): the slot holds
                    // the residual.
                    (_, Some(r)) => {
                        let first = self.bool(r.first);
                        self.leaf(TensorLang::ResidualTail([r.operand, first]))
                    }
                    (None, None) => self.leaf(TensorLang::Absent),
                    (Some(FusedTail::Reduce(FusedReduce { kind, dim, keepdim })), None) => {
                        let children = [self.int(i64::from(dim)), self.bool(keepdim)];
                        self.leaf(TensorLang::reduce_tail(kind, children))
                    }
                    (Some(FusedTail::Softmax { kind, dim }), None) => {
                        let dim = self.int(i64::from(dim));
                        self.leaf(TensorLang::softmax_tail(kind, dim))
                    }
                    (Some(FusedTail::Argmax { dim, keepdim }), None) => {
                        let children = [self.int(i64::from(dim)), self.bool(keepdim)];
                        self.leaf(TensorLang::ArgmaxTail(children))
                    }
                };
                match layout {
                    WeightLayout::OutIn => TensorLang::FusedLinear([x, w, b, acts, tail, pre]),
                    WeightLayout::InOut => TensorLang::FusedMatmul([x, w, b, acts, tail, pre]),
                }
            }
        }
    }
}

impl Region {
    /// Adds every tree to `egraph`, recording the class of each original expression.
    pub fn add_to<N: egg::Analysis<TensorLang>>(
        &self,
        egraph: &mut EGraph<TensorLang, N>,
    ) -> Classes {
        let mut classes = Classes::default();
        for tree in &self.trees {
            let mut class_of_node: Vec<Id> = Vec::with_capacity(tree.term.len());
            let mut last = None;
            for (node, origin) in tree.term.iter().zip(&tree.origin) {
                // RecExpr children point at earlier nodes, so `class_of_node` has them.
                let node = node.clone().map_children(|child| {
                    class_of_node
                        .get(usize::from(child))
                        .copied()
                        .unwrap_or(child)
                });
                let class = egraph.add(node);
                class_of_node.push(class);
                if let Some(origin) = origin {
                    classes.of_expr.entry(*origin).or_insert(class);
                }
                last = Some(class);
            }
            if let Some(class) = last {
                classes.roots.push((tree.root, class));
            }
        }
        classes
    }
}

/// The e-class analysis: the tensor type of every class that computes a tensor (see the
/// module docs). The rules are `rextio_ir::typing`'s: this decodes a node's leaves and
/// operand classes and asks them; it says `None` where a rule rejects the node or a leaf or
/// an operand's type is unknown.
#[derive(Clone, Debug, Default)]
pub struct Types {
    /// The region's parameter types, by index.
    pub params: Vec<Type>,
    /// The types of the values `ref` leaves name, by original expression index.
    pub refs: HashMap<i64, Type>,
}

impl Types {
    /// The analysis for a region cut out of `f` (its parameters, and every expression a
    /// `ref` may name).
    pub fn of(f: &Function) -> Types {
        Types {
            params: f.params.iter().map(|p| p.ty).collect(),
            refs: f
                .exprs
                .iter()
                .map(|(id, e)| (i64::from(u32::from(id.into_raw())), e.ty))
                .collect(),
        }
    }

    /// The tensor type of `class`, where known.
    pub fn tensor(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<TensorType> {
        egraph[class].data
    }
}

fn int_leaf(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<i64> {
    egraph[class].nodes.iter().find_map(|node| match node {
        TensorLang::Int(value) => Some(*value),
        _ => None,
    })
}

/// A `dim` leaf.
fn dim_leaf(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<u8> {
    u8::try_from(int_leaf(egraph, class)?).ok()
}

fn bool_leaf(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<bool> {
    egraph[class].nodes.iter().find_map(|node| match node {
        TensorLang::True => Some(true),
        TensorLang::False => Some(false),
        _ => None,
    })
}

fn as_tensor(ty: Type) -> Option<TensorType> {
    match ty {
        Type::Tensor(t) => Some(t),
        _ => None,
    }
}

/// The type of the value `class` computes, as the typing rules take an operand.
fn operand_type(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<Type> {
    egraph[class].data.map(Type::Tensor)
}

/// A bias slot: `Some(None)` when absent, the bias's type (through `(added b)`) otherwise.
fn bias_type(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<Option<Type>> {
    match egraph[class].nodes.first()? {
        TensorLang::Absent => Some(None),
        TensorLang::Added(b) => operand_type(egraph, *b).map(Some),
        _ => operand_type(egraph, class).map(Some),
    }
}

/// The types of a prologue list's operands, first applied first.
fn prologue_types(egraph: &EGraph<TensorLang, Types>, mut list: Id) -> Option<Vec<Type>> {
    let mut types = Vec::new();
    loop {
        match egraph[list].nodes.first()? {
            TensorLang::Nil => return Some(types),
            TensorLang::Pre([_, v, rest]) => {
                types.push(operand_type(egraph, *v)?);
                list = *rest;
            }
            _ => return None,
        }
        // A list longer than the e-graph has classes is cyclic.
        if types.len() > egraph.number_of_classes() {
            return None;
        }
    }
}

/// The type of a fused op's residual, from its tail slot: `Some(None)` when there is none.
fn residual_of(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<Option<Type>> {
    match *egraph[class].nodes.first()? {
        TensorLang::ResidualTail([r, _]) => operand_type(egraph, r).map(Some),
        _ => Some(None),
    }
}

/// A fused op's tail slot: `Some(None)` when absent (or holding a residual, see
/// [`residual_of`]).
fn tail_of(egraph: &EGraph<TensorLang, Types>, class: Id) -> Option<Option<FusedTail>> {
    let reduce = |kind, [dim, keepdim]: [Id; 2]| {
        Some(Some(FusedTail::Reduce(FusedReduce {
            kind,
            dim: dim_leaf(egraph, dim)?,
            keepdim: bool_leaf(egraph, keepdim)?,
        })))
    };
    match *egraph[class].nodes.first()? {
        TensorLang::Absent | TensorLang::ResidualTail(_) => Some(None),
        TensorLang::MeanTail(_)
        | TensorLang::SumTail(_)
        | TensorLang::AmaxTail(_)
        | TensorLang::AminTail(_) => {
            let (kind, children) = egraph[class].nodes.first()?.as_reduce_tail()?;
            reduce(kind, children)
        }
        TensorLang::SoftmaxTail(_) | TensorLang::LogSoftmaxTail(_) => {
            let (kind, dim) = egraph[class].nodes.first()?.as_softmax_tail()?;
            Some(Some(FusedTail::Softmax {
                kind,
                dim: dim_leaf(egraph, dim)?,
            }))
        }
        TensorLang::ArgmaxTail([dim, keepdim]) => Some(Some(FusedTail::Argmax {
            dim: dim_leaf(egraph, dim)?,
            keepdim: bool_leaf(egraph, keepdim)?,
        })),
        _ => None,
    }
}

impl Analysis<TensorLang> for Types {
    type Data = Option<TensorType>;

    fn make(egraph: &mut EGraph<TensorLang, Types>, enode: &TensorLang, _id: Id) -> Self::Data {
        let g: &EGraph<TensorLang, Types> = egraph;
        let ty = |class: Id| operand_type(g, class);
        let result = if let Some((op, input)) = enode.as_unary() {
            typing::unary(op, ty(input)?)
        } else if let Some((op, [lhs, rhs])) = enode.as_binary() {
            typing::binary(op, ty(lhs)?, ty(rhs)?)
        } else {
            match *enode {
                // Leaves: the types of the region's parameters and of the values `ref`s name.
                TensorLang::Param(i) => {
                    let i = usize::try_from(int_leaf(g, i)?).ok()?;
                    return as_tensor(*g.analysis.params.get(i)?);
                }
                TensorLang::Ref(n) => return as_tensor(*g.analysis.refs.get(&int_leaf(g, n)?)?),
                TensorLang::Linear([x, w, b]) => typing::linear(ty(x)?, ty(w)?, bias_type(g, b)?),
                TensorLang::FusedLinear([x, w, b, _, tail, pre])
                | TensorLang::FusedMatmul([x, w, b, _, tail, pre]) => typing::fused_linear(
                    ty(x)?,
                    ty(w)?,
                    bias_type(g, b)?,
                    prologue_types(g, pre)?,
                    tail_of(g, tail)?,
                    residual_of(g, tail)?,
                ),
                TensorLang::Matmul([lhs, rhs]) => typing::matmul(ty(lhs)?, ty(rhs)?),
                // `normalized` is an int, which the analysis does not track: the IR it came
                // from was validated.
                TensorLang::LayerNorm([x, _, w, b, _]) | TensorLang::PreNorm([x, _, w, b, _]) => {
                    typing::layer_norm(ty(x)?, Type::Int, bias_type(g, w)?, bias_type(g, b)?)
                }
                TensorLang::Mean(_)
                | TensorLang::Sum(_)
                | TensorLang::Amax(_)
                | TensorLang::Amin(_) => {
                    let (kind, [x, dim, keepdim]) = enode.as_reduce()?;
                    typing::reduce(kind, ty(x)?, dim_leaf(g, dim)?, bool_leaf(g, keepdim)?)
                }
                TensorLang::Softmax(_) | TensorLang::LogSoftmax(_) => {
                    let (kind, [x, dim]) = enode.as_softmax()?;
                    typing::softmax(kind, ty(x)?, dim_leaf(g, dim)?)
                }
                TensorLang::Argmax([x, dim, keepdim]) => {
                    typing::argmax(ty(x)?, dim_leaf(g, dim)?, bool_leaf(g, keepdim)?)
                }
                _ => return None,
            }
        };
        result.ok().and_then(as_tensor)
    }

    fn merge(&mut self, a: &mut Self::Data, b: Self::Data) -> DidMerge {
        // Equal terms have equal types; a class only learns its type from a node that knows it.
        match (a.is_some(), b.is_some()) {
            (false, true) => {
                *a = b;
                DidMerge(true, false)
            }
            (true, false) => DidMerge(false, true),
            _ => DidMerge(false, false),
        }
    }
}

pub(crate) fn internal(message: impl Into<String>) -> Vec<Diagnostic> {
    vec![Diagnostic::error(PASS_INTERNAL, message)
        .with_note("this is a compiler bug: the optimizer could not rebuild IR it extracted")]
}
