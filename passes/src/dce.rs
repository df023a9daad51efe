//! Dead-code elimination: keeps only the expressions that statements (returns, loops,
//! conditions, carried and yielded values) reach.
//!
//! Expressions are pure, but some can raise (a division by zero, an int leaving 64 bits, shapes
//! that do not fit, an argmax over an empty dim), and Python evaluates an assignment whose
//! value nobody reads: `c = t / 0.0` raises even when `c` is never used. So an unreached
//! expression goes only when it cannot raise ([`may_raise`]); one that can stays placed where
//! it is, with its operands, and runs. Parameters are referenced by
//! index, so an unused `param` read is dropped like any other expression. The survivors are
//! re-allocated in their original order (so definition order stays topological) and the span
//! and name tables follow them.

use la_arena::ArenaMap;
use rextio_ir::{
    Block, Carried, Diagnostic, ExprId, ExprKind, FillKind, ForLoop, Function, IfElse, Iteration,
    ParamUnaryOp, ReduceKind, ScalarOp, ScalarUnaryOp, Stmt, Type, ViewKind, WhileLoop,
    WholeReduceOp,
};

use crate::pass::Pass;
use crate::util::index;
use crate::validate::OPERAND_NOT_DEFINED;

#[derive(Clone, Copy, Debug, Default)]
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, f: Function) -> Result<Function, Vec<Diagnostic>> {
        eliminate_dead_code(&f)
    }
}

/// Whether evaluating `kind` can raise at run time, so that it must run even when nothing
/// reads its value: scalar division and modulo (by zero), int `+ - *` and negation (leaving
/// 64 bits), the `math` functions that raise (`sqrt`, `exp`, `log`, `floor`, `ceil`), binary tensor ops (broadcasting), products (shapes), argmax, amax and amin
/// (an empty dim), layer_norm (a normalized size other than the last dim), embedding and
/// embedding_bag (an id out of range, bad offsets), joins (the parts' sizes), elementwise ops (`where`, `maximum`, `minimum`, `pow`: broadcasting, a `where` scalar beyond float32), `max`/`min` over a dim (an empty dim), `index_select` (an id out of range), `full_like` (a value beyond float32), `reshape`/`view` (sizes that do not fit, a layout `view` cannot take) and `squeeze` (a dim whose size is not 1), the whole-tensor `max`/`min`/`amax`/`amin` (an empty tensor), `item`/`float` and a tensor condition's truth (not exactly one element), and an op with scalar parameters that may not fit float32 (a float
/// parameter other than a constant within range: eager's checked cast raises) or whose
/// parameters Python checks (`hardtanh`'s `min_val > max_val`), and a boundary call into Python (it may raise, and it
/// may act). Elementwise unary tensor ops, sums and means, softmax and log_softmax,
/// comparisons and constants cannot.
pub fn may_raise(f: &Function, kind: &ExprKind) -> bool {
    let is_int = |id: ExprId| index(id) < f.exprs.len() && f.exprs[id].ty == Type::Int;
    match kind {
        ExprKind::Scalar { op, lhs, rhs } => match op {
            ScalarOp::TrueDiv | ScalarOp::FloorDiv | ScalarOp::Mod => true,
            ScalarOp::Add | ScalarOp::Sub | ScalarOp::Mul => is_int(*lhs) || is_int(*rhs),
            _ => false,
        },
        ExprKind::ScalarUnary { op, input } => match op {
            ScalarUnaryOp::Neg => is_int(*input),
            // A size is never negative: `math.sqrt(q.shape[-1])`, attention's scale.
            ScalarUnaryOp::Sqrt
                if index(*input) < f.exprs.len()
                    && matches!(f.exprs[*input].kind, ExprKind::Size { .. }) =>
            {
                false
            }
            // Domain and range errors (`math.sqrt(-1.0)`, `math.exp(1000)`), and floor/ceil
            // of a float that is not finite or leaves 64 bits.
            ScalarUnaryOp::Sqrt
            | ScalarUnaryOp::Exp
            | ScalarUnaryOp::Log
            | ScalarUnaryOp::Floor
            | ScalarUnaryOp::Ceil => true,
            ScalarUnaryOp::Not
            | ScalarUnaryOp::Truth
            | ScalarUnaryOp::Tanh
            | ScalarUnaryOp::Fabs => false,
        },
        ExprKind::ParamUnary {
            op, first, second, ..
        } => {
            let fits = |id: ExprId| {
                index(id) < f.exprs.len()
                    && match f.exprs[id].kind {
                        ExprKind::ConstFloat(bits) => {
                            let v = bits.value();
                            !v.is_finite() || v.abs() <= f64::from(f32::MAX)
                        }
                        _ => is_int(id),
                    }
            };
            *op == ParamUnaryOp::Hardtanh || !std::iter::once(*first).chain(*second).all(fits)
        }
        ExprKind::Binary { .. }
        | ExprKind::Linear { .. }
        | ExprKind::Matmul { .. }
        | ExprKind::Bmm { .. }
        | ExprKind::FusedAttention { .. }
        | ExprKind::FusedLinear { .. }
        | ExprKind::Argmax { .. }
        | ExprKind::LayerNorm { .. }
        | ExprKind::Embedding { .. }
        | ExprKind::Join { .. }
        | ExprKind::EmbeddingBag { .. }
        | ExprKind::View {
            kind: ViewKind::Reshape | ViewKind::View | ViewKind::Squeeze,
            ..
        }
        | ExprKind::Elementwise { .. }
        // A call back into Python may raise anything, and runs for its effects too.
        | ExprKind::BoundaryCall { .. }
        | ExprKind::Extremum { .. }
        | ExprKind::IndexSelect { .. }
        | ExprKind::FillLike {
            kind: FillKind::Full,
            ..
        }
        | ExprKind::Reduce {
            kind: ReduceKind::Amax | ReduceKind::Amin,
            ..
        }
        // `item`/`float` and a condition's truth need exactly one element.
        | ExprKind::ToScalar { .. }
        | ExprKind::TensorTruth { .. }
        | ExprKind::ReduceAll {
            op: WholeReduceOp::Max | WholeReduceOp::Min | WholeReduceOp::Amax | WholeReduceOp::Amin,
            ..
        } => true,
        _ => false,
    }
}

/// A copy of `f` without the `let`s whose values nothing reaches. Every value a statement
/// reads (returns, loop bounds and carried values, conditions, `continue`/`break`/`yield`
/// values) is live, and so is everything a live expression reads. Fails only if an operand
/// refers to a value not defined before it (which validation rejects).
pub fn eliminate_dead_code(f: &Function) -> Result<Function, Vec<Diagnostic>> {
    eliminate_dead_code_but(f, &|_| false)
}

/// [`eliminate_dead_code`], where the values `absorbed` names go when nothing reads them even
/// if they may raise: a fused op computes them (and raises their errors) itself.
pub(crate) fn eliminate_dead_code_but(
    f: &Function,
    absorbed: &dyn Fn(ExprId) -> bool,
) -> Result<Function, Vec<Diagnostic>> {
    // Mark: statement uses are the roots. Operands precede their users, so one reverse sweep
    // over the arena sees every user before its operands.
    let mut live = vec![false; f.exprs.len()];
    let mut roots = Vec::new();
    f.body.walk(&mut |stmt| {
        roots.extend(stmt.uses());
        roots.extend(stmt.bound_inside());
        roots.extend(stmt.results());
        if let Stmt::Let(id) = stmt {
            if index(*id) < f.exprs.len() && may_raise(f, &f.exprs[*id].kind) && !absorbed(*id) {
                roots.push(*id);
            }
        }
    });
    for value in roots {
        match live.get_mut(index(value)) {
            Some(slot) => *slot = true,
            None => return Err(vec![undefined(value, "a statement")]),
        }
    }
    for (id, e) in f.exprs.iter().rev() {
        if !live[index(id)] {
            continue;
        }
        for operand in e.kind.operands() {
            if index(operand) >= index(id) {
                return Err(vec![undefined(operand, &format!("%{}", index(id)))]);
            }
            live[index(operand)] = true;
        }
    }

    // Sweep: re-allocate the live expressions in order, remapping operands and side tables,
    // then rebuild the statements over the new ids.
    let mut out = Function::new(f.name.clone(), f.params.clone(), f.ret);
    let mut new_id: ArenaMap<ExprId, ExprId> = ArenaMap::default();
    for (id, e) in f.exprs.iter() {
        if !live[index(id)] {
            continue;
        }
        let kind = e
            .kind
            .map_operands(|operand| new_id.get(operand).copied())
            .ok_or_else(|| vec![undefined(id, "a live expression's operand")])?;
        let moved = out.push(kind, e.ty);
        if let Some(span) = f.span_of(id) {
            out.spans.insert(moved, span);
        }
        if let Some(name) = f.name_of(id) {
            out.names.insert(moved, name.to_string());
        }
        new_id.insert(id, moved);
    }
    let map = |id: ExprId| {
        new_id
            .get(id)
            .copied()
            .ok_or_else(|| vec![undefined(id, "a statement")])
    };
    out.body = remap_block(&f.body, &live, &map)?;
    Ok(out)
}

type Remap<'a> = dyn Fn(ExprId) -> Result<ExprId, Vec<Diagnostic>> + 'a;

fn remap_all(values: &[ExprId], map: &Remap<'_>) -> Result<Vec<ExprId>, Vec<Diagnostic>> {
    values.iter().map(|v| map(*v)).collect()
}

fn remap_carried(carried: &[Carried], map: &Remap<'_>) -> Result<Vec<Carried>, Vec<Diagnostic>> {
    carried
        .iter()
        .map(|c| {
            Ok(Carried {
                arg: map(c.arg)?,
                init: map(c.init)?,
                result: map(c.result)?,
            })
        })
        .collect()
}

/// `block` over the surviving ids, without the `let`s of dead values.
fn remap_block(block: &Block, live: &[bool], map: &Remap<'_>) -> Result<Block, Vec<Diagnostic>> {
    let mut stmts = Vec::with_capacity(block.stmts.len());
    for stmt in &block.stmts {
        stmts.push(match stmt {
            Stmt::Let(id) if !live.get(index(*id)).copied().unwrap_or(false) => continue,
            Stmt::Let(id) => Stmt::Let(map(*id)?),
            Stmt::Return(value) => Stmt::Return(map(*value)?),
            Stmt::Continue(values) => Stmt::Continue(remap_all(values, map)?),
            Stmt::Break(values) => Stmt::Break(remap_all(values, map)?),
            Stmt::Yield(values) => Stmt::Yield(remap_all(values, map)?),
            Stmt::For(l) => Stmt::For(Box::new(ForLoop {
                index: map(l.index)?,
                iteration: match &l.iteration {
                    Iteration::Range { start, stop, step } => Iteration::Range {
                        start: map(*start)?,
                        stop: map(*stop)?,
                        step: map(*step)?,
                    },
                    Iteration::Values(values) => Iteration::Values(values.clone()),
                },
                carried: remap_carried(&l.carried, map)?,
                body: remap_block(&l.body, live, map)?,
            })),
            Stmt::While(l) => Stmt::While(Box::new(WhileLoop {
                carried: remap_carried(&l.carried, map)?,
                cond_block: remap_block(&l.cond_block, live, map)?,
                cond: map(l.cond)?,
                body: remap_block(&l.body, live, map)?,
            })),
            Stmt::If(i) => Stmt::If(Box::new(IfElse {
                cond: map(i.cond)?,
                then_block: remap_block(&i.then_block, live, map)?,
                else_block: remap_block(&i.else_block, live, map)?,
                results: remap_all(&i.results, map)?,
            })),
        });
    }
    Ok(Block::new(stmts))
}

fn undefined(value: ExprId, user: &str) -> Diagnostic {
    Diagnostic::error(
        OPERAND_NOT_DEFINED,
        format!(
            "dce: {user} uses %{}, which is not defined before it",
            index(value)
        ),
    )
}
