//! From an e-graph back to IR: the rebuild of a region's expressions from the classes they
//! ended in, each class's node taken from an extractor's choice (types re-derived by the IR's
//! typing rules, names and spans kept). The inverse of the term encoding in the parent module.

use std::collections::{HashMap, HashSet};

use egg::{EGraph, Id};
use rextio_ir::typing::result_type;
use rextio_ir::{
    BinaryOp, Diagnostic, ExprId, ExprKind, FloatBits, Function, FusedReduce, FusedTail,
    NormPrologue, PrologueStep, ReduceKind, Residual, SoftmaxKind, Stmt, UnaryOp, WeightLayout,
};

use super::{internal, Classes, TensorLang};
use crate::util::{id_at, index};

/// Rebuilds `original` from the e-classes its expressions ended in, taking each class's node
/// from `best` (an extractor's choice). Only classes the returns and the other tree roots need
/// are emitted, in the order of the original expressions.
pub fn rebuild<N: egg::Analysis<TensorLang>>(
    original: &Function,
    egraph: &EGraph<TensorLang, N>,
    classes: &Classes,
    best: &dyn Fn(Id) -> TensorLang,
) -> Result<Function, Vec<Diagnostic>> {
    rebuild_with_map(original, egraph, classes, best).map(|(f, _)| f)
}

/// [`rebuild`], also saying which rebuilt expression stands for each original one that has
/// one (every tree root does).
pub fn rebuild_with_map<N: egg::Analysis<TensorLang>>(
    original: &Function,
    egraph: &EGraph<TensorLang, N>,
    classes: &Classes,
    best: &dyn Fn(Id) -> TensorLang,
) -> Result<(Function, HashMap<ExprId, ExprId>), Vec<Diagnostic>> {
    let rebuilder = Rebuilder {
        original,
        egraph,
        classes,
        best,
    };
    rebuilder.run()
}

struct Rebuilder<'a, N: egg::Analysis<TensorLang>> {
    original: &'a Function,
    egraph: &'a EGraph<TensorLang, N>,
    classes: &'a Classes,
    best: &'a dyn Fn(Id) -> TensorLang,
}

impl<N: egg::Analysis<TensorLang>> Rebuilder<'_, N> {
    fn class_of(&self, id: ExprId) -> Result<Id, Vec<Diagnostic>> {
        match self.classes.of_expr.get(&id) {
            Some(class) => Ok(self.egraph.find(*class)),
            None => Err(internal(format!("%{} has no e-class", index(id)))),
        }
    }

    fn best(&self, class: Id) -> TensorLang {
        (self.best)(self.egraph.find(class))
    }

    fn int(&self, class: Id) -> Result<i64, Vec<Diagnostic>> {
        match self.best(class) {
            TensorLang::Int(value) => Ok(value),
            other => Err(internal(format!(
                "expected an integer leaf, found `{other}`"
            ))),
        }
    }

    fn small<T: TryFrom<i64>>(&self, class: Id) -> Result<T, Vec<Diagnostic>> {
        let value = self.int(class)?;
        T::try_from(value).map_err(|_| internal(format!("integer leaf {value} is out of range")))
    }

    fn bool(&self, class: Id) -> Result<bool, Vec<Diagnostic>> {
        match self.best(class) {
            TensorLang::True => Ok(true),
            TensorLang::False => Ok(false),
            other => Err(internal(format!(
                "expected `true` or `false`, found `{other}`"
            ))),
        }
    }

    fn is_absent(&self, class: Id) -> bool {
        matches!(self.best(class), TensorLang::Absent)
    }

    /// Whether a bias slot holds a bias added after the product (`(added b)`).
    fn is_added(&self, class: Id) -> bool {
        matches!(self.best(class), TensorLang::Added(_))
    }

    /// The class of the value in a bias slot (through `(added b)`).
    fn bias_value(&self, class: Id) -> Id {
        match self.best(class) {
            TensorLang::Added(b) => b,
            _ => class,
        }
    }

    /// The classes whose values `node` reads (payload leaves excluded; a `ref` reads the
    /// class of the expression it names).
    fn operands(&self, node: &TensorLang) -> Result<Vec<Id>, Vec<Diagnostic>> {
        Ok(match node {
            TensorLang::Ref(n) => {
                let target = id_at(self.small::<u32>(*n)? as usize)
                    .ok_or_else(|| internal("ref index out of range"))?;
                vec![self.class_of(target)?]
            }
            node => self
                .decode(node)?
                .map(|kind| kind.operands())
                .unwrap_or_default(),
        })
    }

    fn activations(&self, mut list: Id) -> Result<Vec<UnaryOp>, Vec<Diagnostic>> {
        let mut reversed = Vec::new();
        loop {
            match self.best(list) {
                TensorLang::Nil => break,
                TensorLang::Then([prev, name]) => {
                    let op = match self.best(name) {
                        TensorLang::Name(symbol) => UnaryOp::from_name(symbol.as_str()),
                        _ => None,
                    };
                    reversed.push(op.ok_or_else(|| internal("bad activation in a fused op"))?);
                    list = prev;
                }
                other => {
                    return Err(internal(format!(
                        "expected an activation list, found `{other}`"
                    )))
                }
            }
            if reversed.len() > self.egraph.total_number_of_nodes() {
                return Err(internal("cyclic activation list"));
            }
        }
        reversed.reverse();
        Ok(reversed)
    }

    /// The steps of a prologue list, first applied first (operands as classes).
    fn prologue(&self, mut list: Id) -> Result<Vec<PrologueStep<Id>>, Vec<Diagnostic>> {
        let mut steps = Vec::new();
        loop {
            match self.best(list) {
                TensorLang::Nil => return Ok(steps),
                TensorLang::Pre([name, v, rest]) => {
                    let op = match self.best(name) {
                        TensorLang::Name(symbol) => BinaryOp::from_name(symbol.as_str()),
                        _ => None,
                    };
                    steps.push(PrologueStep {
                        op: op.ok_or_else(|| internal("bad prologue op in a fused op"))?,
                        operand: v,
                    });
                    list = rest;
                }
                other => {
                    return Err(internal(format!(
                        "expected a prologue list, found `{other}`"
                    )))
                }
            }
            if steps.len() > self.egraph.total_number_of_nodes() {
                return Err(internal("cyclic prologue list"));
            }
        }
    }

    fn tail(&self, class: Id) -> Result<Option<FusedTail>, Vec<Diagnostic>> {
        let (kind, [dim, keepdim]) = match self.best(class) {
            TensorLang::Absent | TensorLang::ResidualTail(_) => return Ok(None),
            node @ (TensorLang::MeanTail(_)
            | TensorLang::SumTail(_)
            | TensorLang::AmaxTail(_)
            | TensorLang::AminTail(_)) => node
                .as_reduce_tail()
                .ok_or_else(|| internal("a reduction tail"))?,
            node @ (TensorLang::SoftmaxTail(_) | TensorLang::LogSoftmaxTail(_)) => {
                let (kind, dim) = node
                    .as_softmax_tail()
                    .ok_or_else(|| internal("a softmax tail"))?;
                return Ok(Some(FusedTail::Softmax {
                    kind,
                    dim: self.small(dim)?,
                }));
            }
            TensorLang::ArgmaxTail([dim, keepdim]) => {
                return Ok(Some(FusedTail::Argmax {
                    dim: self.small(dim)?,
                    keepdim: self.bool(keepdim)?,
                }))
            }
            other => return Err(internal(format!("expected a fused tail, found `{other}`"))),
        };
        Ok(Some(FusedTail::Reduce(FusedReduce {
            kind,
            dim: self.small(dim)?,
            keepdim: self.bool(keepdim)?,
        })))
    }

    /// The input and the normalization of a `layer_norm` or `prenorm` node's children.
    fn norm(&self, [x, n, w, b, eps]: [Id; 5]) -> Result<(Id, NormPrologue<Id>), Vec<Diagnostic>> {
        let slot = |class: Id| (!self.is_absent(class)).then_some(class);
        Ok((
            x,
            NormPrologue {
                normalized: n,
                weight: slot(w),
                bias: slot(b),
                eps: FloatBits(self.int(eps)? as u64),
            },
        ))
    }

    /// A fused op's input slot: the input and, for a `prenorm`, its row normalization.
    fn input_slot(&self, x: Id) -> Result<(Id, Option<NormPrologue<Id>>), Vec<Diagnostic>> {
        match self.best(x) {
            TensorLang::PreNorm(children) => {
                let (input, norm) = self.norm(children)?;
                Ok((input, Some(norm)))
            }
            _ => Ok((x, None)),
        }
    }

    /// The residual a fused op's tail slot holds, if any (operand as a class).
    fn residual(&self, class: Id) -> Result<Option<Residual<Id>>, Vec<Diagnostic>> {
        match self.best(class) {
            TensorLang::ResidualTail([operand, first]) => Ok(Some(Residual {
                operand,
                first: self.bool(first)?,
            })),
            _ => Ok(None),
        }
    }

    /// The IR op `node` stands for, its operands as classes (a bias through `(added b)`);
    /// `None` for a node that is no value of its own (a payload leaf, or a `ref`).
    fn decode(&self, node: &TensorLang) -> Result<Option<ExprKind<Id>>, Vec<Diagnostic>> {
        if let Some((op, input)) = node.as_unary() {
            return Ok(Some(ExprKind::Unary { op, input }));
        }
        if let Some((op, [lhs, rhs])) = node.as_binary() {
            return Ok(Some(ExprKind::Binary { op, lhs, rhs }));
        }
        let bias = |class: Id| (!self.is_absent(class)).then(|| self.bias_value(class));
        Ok(Some(match *node {
            TensorLang::Param(i) => ExprKind::Param(self.small(i)?),
            TensorLang::ConstInt(v) => ExprKind::ConstInt(self.int(v)?),
            TensorLang::ConstBool(b) => ExprKind::ConstBool(self.bool(b)?),
            // A linear whose bias was added after it is a fused op without activations or
            // tail: `linear` itself has only its argument's errors.
            TensorLang::Linear([x, w, b]) if self.is_added(b) => ExprKind::FusedLinear {
                input: x,
                weight: w,
                bias: bias(b),
                prologue: Vec::new(),
                activations: Vec::new(),
                tail: None,
                layout: WeightLayout::OutIn,
                bias_added: true,
                residual: None,
                norm: None,
            },
            TensorLang::Linear([x, w, b]) => ExprKind::Linear {
                input: x,
                weight: w,
                bias: bias(b),
            },
            TensorLang::Matmul([lhs, rhs]) => ExprKind::Matmul { lhs, rhs },
            TensorLang::Mean([x, dim, keepdim])
            | TensorLang::Sum([x, dim, keepdim])
            | TensorLang::Amax([x, dim, keepdim])
            | TensorLang::Amin([x, dim, keepdim]) => ExprKind::Reduce {
                kind: node.as_reduce().map_or(ReduceKind::Mean, |(kind, _)| kind),
                input: x,
                dim: self.small(dim)?,
                keepdim: self.bool(keepdim)?,
            },
            TensorLang::Softmax([x, dim]) | TensorLang::LogSoftmax([x, dim]) => ExprKind::Softmax {
                kind: node
                    .as_softmax()
                    .map_or(SoftmaxKind::Softmax, |(kind, _)| kind),
                input: x,
                dim: self.small(dim)?,
            },
            TensorLang::Argmax([x, dim, keepdim]) => ExprKind::Argmax {
                input: x,
                dim: self.small(dim)?,
                keepdim: self.bool(keepdim)?,
            },
            TensorLang::LayerNorm(children) => {
                let (input, n) = self.norm(children)?;
                ExprKind::LayerNorm {
                    input,
                    normalized: n.normalized,
                    weight: n.weight,
                    bias: n.bias,
                    eps: n.eps,
                }
            }
            TensorLang::FusedLinear([x, w, b, acts, tail, pre])
            | TensorLang::FusedMatmul([x, w, b, acts, tail, pre]) => {
                let (input, norm) = self.input_slot(x)?;
                ExprKind::FusedLinear {
                    input,
                    norm,
                    weight: w,
                    bias: bias(b),
                    prologue: self.prologue(pre)?,
                    activations: self.activations(acts)?,
                    tail: self.tail(tail)?,
                    layout: if matches!(node, TensorLang::FusedLinear(_)) {
                        WeightLayout::OutIn
                    } else {
                        WeightLayout::InOut
                    },
                    bias_added: self.is_added(b),
                    residual: self.residual(tail)?,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// The IR op for `node`, operands taken from `done`.
    fn kind(
        &self,
        node: &TensorLang,
        done: &HashMap<Id, ExprId>,
    ) -> Result<ExprKind, Vec<Diagnostic>> {
        let Some(kind) = self.decode(node)? else {
            return Err(internal(format!("`{node}` is not a value")));
        };
        kind.try_map(|class| {
            done.get(&self.egraph.find(class))
                .copied()
                .ok_or_else(|| internal("an operand was not rebuilt before its user"))
        })
    }

    fn run(&self) -> Result<(Function, HashMap<ExprId, ExprId>), Vec<Diagnostic>> {
        let f = self.original;

        // Which classes are needed: everything the tree roots read, transitively.
        let mut needed: HashSet<Id> = HashSet::new();
        let mut todo: Vec<Id> = self.classes.roots.iter().map(|(_, class)| *class).collect();
        while let Some(class) = todo.pop() {
            let class = self.egraph.find(class);
            if needed.insert(class) {
                todo.extend(self.operands(&self.best(class))?);
            }
        }

        // The original expression each class stands for (the first one, in arena order).
        let mut origin: HashMap<Id, ExprId> = HashMap::new();
        for (id, _) in f.exprs.iter() {
            if let Ok(class) = self.class_of(id) {
                origin.entry(class).or_insert(id);
            }
        }

        let mut out = Function::new(f.name.clone(), f.params.clone(), f.ret);
        let mut done: HashMap<Id, ExprId> = HashMap::new();
        for (id, _) in f.exprs.iter() {
            let class = self.class_of(id)?;
            if needed.contains(&class) {
                self.emit(class, &origin, &mut out, &mut done)?;
            }
        }
        for stmt in &f.body.stmts {
            // A straight-line body (the only kind `Fuse` hands over): `let`s, then returns.
            let Stmt::Return(value) = *stmt else { continue };
            let class = self.class_of(value)?;
            let rebuilt = done
                .get(&class)
                .copied()
                .ok_or_else(|| internal(format!("returned %{} was not rebuilt", index(value))))?;
            out.body.stmts.push(Stmt::Return(rebuilt));
        }
        let mut map = HashMap::new();
        for (id, _) in f.exprs.iter() {
            if let Some(rebuilt) = self.class_of(id).ok().and_then(|class| done.get(&class)) {
                map.insert(id, *rebuilt);
            }
        }
        Ok((out, map))
    }

    /// Emits `class` after everything it reads (post-order with an explicit stack).
    fn emit(
        &self,
        class: Id,
        origin: &HashMap<Id, ExprId>,
        out: &mut Function,
        done: &mut HashMap<Id, ExprId>,
    ) -> Result<(), Vec<Diagnostic>> {
        let mut entered: HashSet<Id> = HashSet::new();
        let mut stack = vec![(class, false)];
        while let Some((class, ready)) = stack.pop() {
            let class = self.egraph.find(class);
            if done.contains_key(&class) {
                continue;
            }
            let node = self.best(class);
            let operands = self.operands(&node)?;
            if !ready {
                if !entered.insert(class) {
                    return Err(internal("the extracted terms are cyclic"));
                }
                stack.push((class, true));
                stack.extend(operands.iter().rev().map(|operand| (*operand, false)));
                continue;
            }
            if let TensorLang::Ref(_) = node {
                // A reference is the value of the tree it names: no new expression.
                let target = operands
                    .first()
                    .and_then(|target| done.get(&self.egraph.find(*target)))
                    .copied()
                    .ok_or_else(|| internal("a ref names a value that was not rebuilt"))?;
                done.insert(class, target);
                continue;
            }
            let kind = self.kind(&node, done)?;
            // Operands are expressions this rebuild allocated, so indexing cannot fail.
            let ty = result_type(
                &kind,
                |operand| out.exprs[operand].ty,
                &self.original.params,
            )
            .map_err(|e| internal(format!("rebuilt `{}` is ill-typed: {e}", kind.mnemonic())))?;
            let id = out.push_let(kind, ty);
            if let Some(source) = origin.get(&class) {
                if let Some(span) = self.original.span_of(*source) {
                    out.spans.insert(id, span);
                }
                if let Some(name) = self.original.name_of(*source) {
                    out.names.insert(id, name.to_string());
                }
            }
            done.insert(class, id);
        }
        Ok(())
    }
}
