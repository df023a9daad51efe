//! Fusion: saturates a region's terms (see [`crate::egraph`]) under the fusion rules and
//! extracts the cheapest equivalent terms with [`FusionCost`].
//!
//! # Rules, by topic
//!
//! - **bias** ([`bias_rules`]): `matmul(x, w) + b` becomes `fused_matmul(x, w, b, [], none)`
//!   (two matrices and a rank-1 bias, checked on the e-graph's types, see
//!   [`crate::egraph::Types`]), a product of two matrices followed by an activation or a
//!   fusable reduction becomes a `fused_matmul` without bias, and `linear(x, w) + b` takes
//!   `b` as its bias. `fused_matmul` computes over the weight as given (`[in, out]`), the
//!   layout the transposed-weight kernels stream. The added bias is marked (`(added b)`,
//!   `bias=added` in the IR): on a bias of the wrong size the op raises the addition's error,
//!   as eager does, not `F.linear`'s.
//! - **prologue** ([`prologue_rules`]): `linear(op(x, v), w, b)` (and a fused op whose input is
//!   `op(x, v)`) takes `op v` into its prologue, for every binary op with a rank-1 `v`
//!   broadcast over the rows of a matrix `x`.
//! - **linear epilogue** ([`linear_epilogue_rules`]): `op(linear(x, w, b?))` becomes
//!   `fused_linear(x, w, b?, [op], none)`, and `op(fused_linear(..., acts, none))` appends
//!   `op` to `acts`, for every [`UnaryOp`] (all elementwise, so the order is kept exactly);
//!   the same for `fused_matmul`.
//! - **row tails** ([`row_tail_rules`]): `softmax(dim=1)`, `log_softmax(dim=1)` and
//!   `argmax(dim=1)` of a linear or fused result (without a tail) end the fused op.
//! - **reduction tail** ([`reduction_tail_rules`]): `mean|sum(fused_linear(..., acts, none),
//!   dim=1, keepdim)` moves the reduction into the fused op, and so does a reduction of a bare
//!   `linear`. Only reductions [`fusable_reduce`] admits are fused (dim 1 of the rank-2 linear
//!   result; a linear's result is always rank 2); a fused op with a reduction takes no more
//!   activations, since those would run after the reduction.
//!
//! - **residual** ([`residual_rules`]): `r + y` and `y + r`, where `y` is a linear or matrix
//!   product (bare, or fused without a tail) and `r` a matrix, end the fused op with the
//!   residual `(residual r first)` in its tail slot: a transformer block's skip connection
//!   `x + F.linear(gelu(F.linear(h, w1, b1)), w2, b2)` is one op after its product. The
//!   side is kept: where sizes do not fit, the fused op runs the addition as written.
//!
//! - **row normalization** ([`norm_rules`]): `linear(layer_norm(x, ...), w, b)` (and a fused
//!   op whose input is a `layer_norm` of a matrix) normalizes its input's rows itself:
//!   `(prenorm x n g b eps)` in the input slot, before the prologue's steps. The fused
//!   kernels compute the normalization within docs/parity.md's layer_norm tolerance of
//!   ATen's, not bit for bit (the one rule whose fused op differs from the unfused chain by
//!   more than the product's summation order).
//!
//! Every rule rewrites to exactly the unfused chain; the fused kernel computes that chain within
//! the float tolerance of docs/parity.md (it sums in another order). Rules never see through a value with
//! other users: regions are cut into trees at shared values (see [`crate::egraph`]), so a
//! fused op never recomputes work another user also needs.
//!
//! The limits only bound how much is fused, never correctness: any extracted term is
//! equivalent to the input.

use std::str::FromStr;
use std::sync::OnceLock;
use std::time::Duration;

use egg::{
    ConditionalApplier, CostFunction, EGraph, Id, Language, Pattern, Rewrite, Runner,
    SimpleScheduler, Subst, Var,
};
use rextio_ir::typing::fusable_reduce;
use std::collections::{HashMap, HashSet};

use rextio_ir::{
    BinaryOp, Block, Carried, DType, Diagnostic, ExprId, ExprKind, ForLoop, Function, IfElse,
    Iteration, Param, ReduceKind, Stmt, UnaryOp, WhileLoop,
};

use crate::egraph::{
    has_term, has_terms, internal, rebuild_with_map, region_with_roots, runs_alone,
    LinearExtractor, TensorLang, Types,
};
use crate::pass::Pass;
use crate::util::index;
use crate::validate::{validate, Valid, PASS_INTERNAL};

/// Most e-nodes one region's e-graph may grow to. Fusion adds about one node per fused op
/// per iteration, so this only stops pathological inputs.
pub const NODE_LIMIT: usize = 100_000;
/// Most saturation iterations: one per activation in the longest chain, plus the tail.
pub const ITER_LIMIT: usize = 64;
/// Wall-clock bound of one saturation.
pub const TIME_LIMIT: Duration = Duration::from_secs(2);

/// The cost of one op that runs at run time: one dispatch and one output allocation (design
/// note 3). A fused op costs the same as any single op, so fusing `n` ops into one saves
/// `n - 1` dispatches and the intermediates between them.
pub const OP_COST: usize = 1;

pub type FusionRewrite = Rewrite<TensorLang, Types>;

/// The fusion pass (`fused` stage).
#[derive(Clone, Debug)]
pub struct Fuse {
    pub node_limit: usize,
    pub iter_limit: usize,
    pub time_limit: Duration,
}

impl Default for Fuse {
    fn default() -> Fuse {
        Fuse {
            node_limit: NODE_LIMIT,
            iter_limit: ITER_LIMIT,
            time_limit: TIME_LIMIT,
        }
    }
}

impl Pass for Fuse {
    fn name(&self) -> &'static str {
        "fused"
    }

    fn run(&self, f: Function) -> Result<Function, Vec<Diagnostic>> {
        // Attention chains first: they run through ops that have no term.
        let f = crate::attention::fuse_attention(f)?;
        // The term conversion relies on definition order and parameter indices.
        let valid = validate(&f)?;
        if has_terms(&f) {
            self.fuse(valid)
        } else {
            Regions::fuse(self, &f)
        }
    }
}

impl Fuse {
    /// The fused form of a validated straight-line function (see [`has_terms`]).
    pub fn fuse(&self, f: Valid<'_>) -> Result<Function, Vec<Diagnostic>> {
        self.fuse_region(f, &HashSet::new()).map(|(f, _)| f)
    }

    /// Saturates and extracts one straight-line function whose values `roots` (besides its
    /// return) are needed elsewhere; also maps the original values to the rebuilt ones.
    fn fuse_region(
        &self,
        f: Valid<'_>,
        roots: &HashSet<ExprId>,
    ) -> Result<(Function, HashMap<ExprId, ExprId>), Vec<Diagnostic>> {
        let rules = cached_rules()?;
        let region = region_with_roots(f, roots);
        let mut egraph = EGraph::new(Types::of(f.function()));
        let classes = region.add_to(&mut egraph);
        let runner = Runner::default()
            .with_scheduler(SimpleScheduler)
            .with_node_limit(self.node_limit)
            .with_iter_limit(self.iter_limit)
            .with_time_limit(self.time_limit)
            .with_egraph(egraph)
            .run(rules);
        // Not egg's `Extractor`: it is quadratic in a chain's length (egraph/extract.rs).
        let extractor = LinearExtractor::new(&runner.egraph, FusionCost);
        rebuild_with_map(f.function(), &runner.egraph, &classes, &|class| {
            match extractor.best_node(&runner.egraph, class) {
                Some(node) => node.clone(),
                // Every term ends in leaves (cost 0), so every class has a cost; were one
                // without, its first node is still a correct choice (all are equal).
                None => runner.egraph[class].nodes[0].clone(),
            }
        })
    }
}

/// Fusion of a function with control flow, one straight-line region at a time: each run of
/// `let`s in a block (maximal, but cut where [`run_cuts`] says) is
/// cut out as a function of its own (the values it reads from
/// outside become parameters, the values used outside it become roots), fused like any
/// straight-line function and spliced back. The whole function is re-allocated in program
/// order, so arena order stays a definition order.
///
/// Only tensor ops and int/bool constants take part in a region's term; parameter reads and
/// scalar ops (which no tensor op reads) are copied unchanged after the region's tensor
/// code, so a region is never fused across a statement, a block boundary or scalar code.
struct Regions<'f> {
    fuse: &'f Fuse,
    f: &'f Function,
    out: Function,
    /// The rebuilt value of each original one.
    map: Vec<Option<ExprId>>,
    /// Whether something outside the value's own run reads it (a statement, another run,
    /// another block).
    used_outside: Vec<bool>,
    /// The run each `let` belongs to ([`number_runs`]): [`Regions::block`] starts a new run
    /// where the number changes.
    run_of: Vec<Option<usize>>,
}

impl<'f> Regions<'f> {
    fn fuse(fuse: &'f Fuse, f: &'f Function) -> Result<Function, Vec<Diagnostic>> {
        let n = f.exprs.len();
        // Which run each `let` belongs to: runs are numbered in walk order.
        let mut run_of: Vec<Option<usize>> = vec![None; n];
        let mut runs = 0usize;
        number_runs(f, &f.body, &mut run_of, &mut runs);
        let mut used_outside = vec![false; n];
        f.body.walk(&mut |stmt| {
            for used in stmt.uses() {
                if let Some(flag) = used_outside.get_mut(index(used)) {
                    *flag = true;
                }
            }
        });
        for (id, e) in f.exprs.iter() {
            for operand in e.kind.operands() {
                let i = index(operand);
                if i < n && run_of[i] != run_of[index(id)] {
                    used_outside[i] = true;
                }
            }
        }
        // A value no statement reaches that can raise stays a root, so that it still runs
        // (Python evaluates every assignment; see `dce::may_raise`): `h = F.linear(x, w)
        // .relu()` with `h` unread keeps its linear, whose shapes may not fit.
        let mut live = vec![false; n];
        f.body.walk(&mut |stmt| {
            for used in stmt
                .uses()
                .into_iter()
                .chain(stmt.bound_inside())
                .chain(stmt.results())
            {
                if let Some(flag) = live.get_mut(index(used)) {
                    *flag = true;
                }
            }
        });
        for (id, e) in f.exprs.iter().rev() {
            if live[index(id)] {
                for operand in e.kind.operands() {
                    if let Some(flag) = live.get_mut(index(operand)) {
                        *flag = true;
                    }
                }
            }
        }
        for (id, e) in f.exprs.iter() {
            let i = index(id);
            if !live[i] && crate::dce::may_raise(f, &e.kind) {
                used_outside[i] = true;
            }
        }
        let mut regions = Regions {
            fuse,
            f,
            out: Function::new(f.name.clone(), f.params.clone(), f.ret),
            map: vec![None; n],
            used_outside,
            run_of,
        };
        regions.out.body = regions.block(&f.body)?;
        Ok(regions.out)
    }

    fn get(&self, id: ExprId) -> Result<ExprId, Vec<Diagnostic>> {
        self.map
            .get(index(id))
            .copied()
            .flatten()
            .ok_or_else(|| internal(format!("%{} is used before it is rebuilt", index(id))))
    }

    fn all(&self, ids: &[ExprId]) -> Result<Vec<ExprId>, Vec<Diagnostic>> {
        ids.iter().map(|id| self.get(*id)).collect()
    }

    /// A copy of original expression `id` (a bound value, or one kept out of the terms).
    fn copy(&mut self, id: ExprId) -> Result<ExprId, Vec<Diagnostic>> {
        let e = &self.f.exprs[id];
        let map = &self.map;
        let kind = e
            .kind
            .map_operands(|operand| map.get(index(operand)).copied().flatten())
            .ok_or_else(|| internal(format!("an operand of %{} is not rebuilt", index(id))))?;
        let new = self.out.push(kind, e.ty);
        if let Some(span) = self.f.span_of(id) {
            self.out.spans.insert(new, span);
        }
        if let Some(name) = self.f.name_of(id) {
            self.out.names.insert(new, name.to_string());
        }
        self.map[index(id)] = Some(new);
        Ok(new)
    }

    fn carried(&mut self, carried: &[Carried]) -> Result<Vec<Carried>, Vec<Diagnostic>> {
        carried
            .iter()
            .map(|c| {
                Ok(Carried {
                    init: self.get(c.init)?,
                    arg: self.copy(c.arg)?,
                    result: self.copy(c.result)?,
                })
            })
            .collect()
    }

    fn block(&mut self, block: &Block) -> Result<Block, Vec<Diagnostic>> {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        let mut run: Vec<ExprId> = Vec::new();
        for stmt in &block.stmts {
            if let Stmt::Let(id) = stmt {
                let run_of = |id: &ExprId| self.run_of.get(index(*id)).copied().flatten();
                if run.last().is_some_and(|last| run_of(last) != run_of(id)) {
                    self.run(&std::mem::take(&mut run), &mut stmts)?;
                }
                run.push(*id);
                continue;
            }
            self.run(&std::mem::take(&mut run), &mut stmts)?;
            stmts.push(match stmt {
                Stmt::Let(_) => continue,
                Stmt::Return(value) => Stmt::Return(self.get(*value)?),
                Stmt::Continue(values) => Stmt::Continue(self.all(values)?),
                Stmt::Break(values) => Stmt::Break(self.all(values)?),
                Stmt::Yield(values) => Stmt::Yield(self.all(values)?),
                Stmt::For(l) => {
                    let iteration = match &l.iteration {
                        Iteration::Range { start, stop, step } => Iteration::Range {
                            start: self.get(*start)?,
                            stop: self.get(*stop)?,
                            step: self.get(*step)?,
                        },
                        Iteration::Values(values) => Iteration::Values(values.clone()),
                    };
                    let index = self.copy(l.index)?;
                    let carried = self.carried(&l.carried)?;
                    let body = self.block(&l.body)?;
                    Stmt::For(Box::new(ForLoop {
                        index,
                        iteration,
                        carried,
                        body,
                    }))
                }
                Stmt::While(l) => {
                    let carried = self.carried(&l.carried)?;
                    let cond_block = self.block(&l.cond_block)?;
                    let cond = self.get(l.cond)?;
                    let body = self.block(&l.body)?;
                    Stmt::While(Box::new(WhileLoop {
                        carried,
                        cond_block,
                        cond,
                        body,
                    }))
                }
                Stmt::If(i) => {
                    let cond = self.get(i.cond)?;
                    let results = i
                        .results
                        .iter()
                        .map(|r| self.copy(*r))
                        .collect::<Result<Vec<_>, _>>()?;
                    let then_block = self.block(&i.then_block)?;
                    let else_block = self.block(&i.else_block)?;
                    Stmt::If(Box::new(IfElse {
                        cond,
                        then_block,
                        else_block,
                        results,
                    }))
                }
            });
        }
        self.run(&run, &mut stmts)?;
        Ok(Block::new(stmts))
    }

    /// One run of `let`s: its tensor code fused as a function of its own, then the rest.
    fn run(&mut self, run: &[ExprId], stmts: &mut Vec<Stmt>) -> Result<(), Vec<Diagnostic>> {
        let f = self.f;
        // Parameter reads have a term, but a region reads them as its own parameters.
        let is_term = |id: ExprId| {
            let kind = &f.exprs[id].kind;
            has_term(kind) && !matches!(kind, ExprKind::Param(_))
        };
        let members: Vec<ExprId> = run.iter().copied().filter(|id| is_term(*id)).collect();
        let member_set: HashSet<ExprId> = members.iter().copied().collect();
        // Roots: members that something other than members of this run reads.
        let mut roots: Vec<ExprId> = members
            .iter()
            .copied()
            .filter(|id| self.used_outside[index(*id)])
            .collect();
        for id in run.iter().filter(|id| !member_set.contains(id)) {
            for operand in f.exprs[*id].kind.operands() {
                if member_set.contains(&operand) && !roots.contains(&operand) {
                    roots.push(operand);
                }
            }
        }
        // Parameter reads first (the region reads them), then the region's tensor code, then
        // the scalar code (which may read the region's constants); dead members stay dead.
        let is_param = |id: &ExprId| matches!(f.exprs[*id].kind, ExprKind::Param(_));
        for id in run.iter().filter(|id| is_param(id)) {
            let new = self.copy(*id)?;
            stmts.push(Stmt::Let(new));
        }
        if !members.is_empty() && !roots.is_empty() {
            self.fused_members(&members, &member_set, &roots, stmts)?;
        }
        for id in run
            .iter()
            .filter(|id| !member_set.contains(id) && !is_param(id))
        {
            let new = self.copy(*id)?;
            stmts.push(Stmt::Let(new));
        }
        Ok(())
    }

    fn fused_members(
        &mut self,
        members: &[ExprId],
        member_set: &HashSet<ExprId>,
        roots: &[ExprId],
        stmts: &mut Vec<Stmt>,
    ) -> Result<(), Vec<Diagnostic>> {
        let f = self.f;
        // The region as a function: outside values become parameters (read first).
        let mut externals: Vec<ExprId> = Vec::new();
        for id in members {
            for operand in f.exprs[*id].kind.operands() {
                if !member_set.contains(&operand) && !externals.contains(&operand) {
                    externals.push(operand);
                }
            }
        }
        let params = externals
            .iter()
            .enumerate()
            .map(|(i, e)| Param {
                name: format!("in{i}"),
                ty: f.exprs[*e].ty,
            })
            .collect();
        let first_root = roots[0];
        let mut region =
            Function::new(format!("{}.region", f.name), params, f.exprs[first_root].ty);
        let mut local: HashMap<ExprId, ExprId> = HashMap::new();
        for (i, external) in externals.iter().enumerate() {
            let read = region.push_let(ExprKind::Param(i as u32), f.exprs[*external].ty);
            local.insert(*external, read);
        }
        for id in members {
            let e = &f.exprs[*id];
            let kind = e
                .kind
                .map_operands(|operand| local.get(&operand).copied())
                .ok_or_else(|| {
                    internal(format!(
                        "an operand of %{} is outside its region",
                        index(*id)
                    ))
                })?;
            let new = region.push_let(kind, e.ty);
            local.insert(*id, new);
        }
        region.body.stmts.push(Stmt::Return(local[&first_root]));
        let region_roots: HashSet<ExprId> = roots.iter().map(|r| local[r]).collect();
        let valid = validate(&region)?;
        let (fused, rebuilt) = self.fuse.fuse_region(valid, &region_roots)?;

        // Splice: parameter reads are the outside values; everything else is new.
        let mut spliced: HashMap<ExprId, ExprId> = HashMap::new();
        for stmt in &fused.body.stmts {
            let Stmt::Let(id) = stmt else { continue };
            let e = &fused.exprs[*id];
            if let ExprKind::Param(i) = e.kind {
                let external = externals
                    .get(i as usize)
                    .copied()
                    .ok_or_else(|| internal("a region reads a parameter it does not have"))?;
                spliced.insert(*id, self.get(external)?);
                continue;
            }
            let kind = e
                .kind
                .map_operands(|operand| spliced.get(&operand).copied())
                .ok_or_else(|| internal("a fused region uses a value before defining it"))?;
            let new = self.out.push(kind, e.ty);
            if let Some(span) = fused.span_of(*id) {
                self.out.spans.insert(new, span);
            }
            if let Some(name) = fused.name_of(*id) {
                self.out.names.insert(new, name.to_string());
            }
            stmts.push(Stmt::Let(new));
            spliced.insert(*id, new);
        }
        for id in members {
            let in_region = local[id];
            if let Some(new) = rebuilt.get(&in_region).and_then(|r| spliced.get(r)) {
                self.map[index(*id)] = Some(*new);
            }
        }
        // The names and spans of the original values, where the region's copy had none.
        for id in members {
            if let Some(new) = self.map[index(*id)] {
                if self.out.name_of(new).is_none() {
                    if let Some(name) = f.name_of(*id) {
                        self.out.names.insert(new, name.to_string());
                    }
                }
                if self.out.span_of(new).is_none() {
                    if let Some(span) = f.span_of(*id) {
                        self.out.spans.insert(new, span);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Which `let`s of `block` close their run (by statement index): scalar code that can raise,
/// followed in the same maximal run of `let`s by tensor code that can raise too. A run's
/// scalar code is emitted after its tensor code, so without the cut of two raising statements
/// (both unread, say `acc % acc` with `acc = 0`, then a mismatched `F.linear`) the later one
/// would raise first, and eager raises the first. Tensor code that cannot raise may move past
/// scalar code freely, so a cut only where it matters keeps the fusion across `i + 1` and the
/// like.
fn run_cuts(f: &Function, block: &Block) -> Vec<bool> {
    let mut cuts = vec![false; block.stmts.len()];
    let mut tensor_raises_later = false;
    for (i, stmt) in block.stmts.iter().enumerate().rev() {
        let Stmt::Let(id) = stmt else {
            tensor_raises_later = false;
            continue;
        };
        if index(*id) >= f.exprs.len() {
            continue;
        }
        let e = &f.exprs[*id];
        let raises = crate::dce::may_raise(f, &e.kind);
        if has_term(&e.kind) {
            tensor_raises_later |= raises;
        } else {
            cuts[i] = raises && tensor_raises_later;
        }
    }
    cuts
}

/// Numbers each run of `let`s in every block, in walk order: a maximal sequence of `let`s,
/// cut after each one [`run_cuts`] names. A tensor-scalar op (`x * 0.5`), like an op with
/// scalar parameters (`clamp(x, lo, hi)`), is a run of its own:
/// it reads scalar code, which a run emits after its tensor code, and tensor code may read it,
/// so neither can share its run. It is never fused: the ops around it fuse on either side.
/// `embedding` and joins (`cat`, `stack`) are runs of their own alike (no term: [`runs_alone`]),
/// and so is an op with a term that reads scalar code ([`reads_scalar_code`]: a `layer_norm`
/// whose normalized size is computed).
fn number_runs(f: &Function, block: &Block, run_of: &mut [Option<usize>], runs: &mut usize) {
    let cuts = run_cuts(f, block);
    let mut open = false;
    for (stmt, cut) in block.stmts.iter().zip(cuts) {
        match stmt {
            Stmt::Let(id) => {
                // A tensor op without a term is a run of its own (see `runs_alone`).
                let alone = index(*id) < f.exprs.len()
                    && (runs_alone(&f.exprs[*id].kind) || reads_scalar_code(f, &f.exprs[*id].kind));
                if !open || alone {
                    *runs += 1;
                    open = true;
                }
                if let Some(slot) = run_of.get_mut(index(*id)) {
                    *slot = Some(*runs);
                }
                if cut || alone {
                    open = false;
                }
            }
            other => {
                open = false;
                for inner in other.blocks() {
                    number_runs(f, inner, run_of, runs);
                }
            }
        }
    }
}

/// Whether `kind` reads a value of scalar code (a scalar op, a float constant, a boundary
/// call: no term, not a run of its own, not bound by a statement), which its run would emit
/// after its tensor code: `layer_norm(x, (d * 2,))`. A literal size or a parameter has a
/// term, and `x.shape[-1]` is a run of its own, so those fuse.
fn reads_scalar_code(f: &Function, kind: &ExprKind) -> bool {
    has_term(kind)
        && kind.operands().into_iter().any(|operand| {
            index(operand) < f.exprs.len() && {
                let k = &f.exprs[operand].kind;
                !has_term(k) && !runs_alone(k) && !matches!(k, ExprKind::Bound)
            }
        })
}

/// Charges [`OP_COST`] per run-time op; payload leaves, parameter reads, constants and
/// references to other trees are free.
#[derive(Clone, Copy, Debug, Default)]
pub struct FusionCost;

impl CostFunction<TensorLang> for FusionCost {
    type Cost = usize;

    fn cost<C>(&mut self, enode: &TensorLang, mut costs: C) -> usize
    where
        C: FnMut(Id) -> usize,
    {
        let own = if enode.is_op() { OP_COST } else { 0 };
        enode.fold(own, |sum, child| sum.saturating_add(costs(child)))
    }
}

/// [`rules`], built once per process: parsing the patterns cost more than saturating a
/// small function.
fn cached_rules() -> Result<&'static [FusionRewrite], Vec<Diagnostic>> {
    static RULES: OnceLock<Result<Vec<FusionRewrite>, Vec<Diagnostic>>> = OnceLock::new();
    match RULES.get_or_init(rules) {
        Ok(rules) => Ok(rules),
        Err(errors) => Err(errors.clone()),
    }
}

/// Every fusion rule, topic by topic.
pub fn rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let mut rules = bias_rules()?;
    rules.extend(prologue_rules()?);
    rules.extend(linear_epilogue_rules()?);
    rules.extend(reduction_tail_rules()?);
    rules.extend(row_tail_rules()?);
    rules.extend(residual_rules()?);
    rules.extend(norm_rules()?);
    Ok(rules)
}

/// The heads of the fused ops, each with the layout of its weight.
const FUSED_HEADS: [&str; 2] = ["fused_linear", "fused_matmul"];

fn pattern(name: &str, text: &str) -> Result<Pattern<TensorLang>, Vec<Diagnostic>> {
    Pattern::<TensorLang>::from_str(text).map_err(|e| malformed(name, e.to_string()))
}

fn malformed(name: &str, e: String) -> Vec<Diagnostic> {
    vec![Diagnostic::error(
        PASS_INTERNAL,
        format!("fusion rule `{name}` is malformed: {e}"),
    )]
}

/// A rule that applies only where every tensor its left side binds is float32: the fused ops
/// run float32 kernels, so a float64 or bfloat16 chain (the extended surface's dtype lane)
/// stays op by op, through ATen.
fn rule(name: String, lhs: &str, rhs: &str) -> Result<FusionRewrite, Vec<Diagnostic>> {
    let (l, r) = (pattern(&name, lhs)?, pattern(&name, rhs)?);
    let vars = l.vars();
    let condition = move |egraph: &mut EGraph<TensorLang, Types>, _: Id, subst: &Subst| {
        vars.iter()
            .filter_map(|var| Types::tensor(egraph, subst[*var]))
            .all(|t| t.dtype == DType::F32)
    };
    let applier = ConditionalApplier {
        condition,
        applier: r,
    };
    Rewrite::new(name.clone(), l, applier).map_err(|e| malformed(&name, e))
}

/// A rule that applies only where each `(variable, rank)` of `ranks` names a float32 tensor
/// of that rank (see [`Types`]).
fn rule_if_ranks(
    name: String,
    lhs: &str,
    rhs: &str,
    ranks: &[(&str, u8)],
) -> Result<FusionRewrite, Vec<Diagnostic>> {
    let (l, r) = (pattern(&name, lhs)?, pattern(&name, rhs)?);
    let ranks = ranks
        .iter()
        .map(|(var, rank)| {
            var.parse::<Var>()
                .map(|var| (var, *rank))
                .map_err(|e| malformed(&name, e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let condition = move |egraph: &mut EGraph<TensorLang, Types>, _: Id, subst: &Subst| {
        ranks.iter().all(|(var, rank)| {
            Types::tensor(egraph, subst[*var])
                .is_some_and(|t| t.dtype == DType::F32 && t.rank == *rank)
        })
    };
    let applier = ConditionalApplier {
        condition,
        applier: r,
    };
    Rewrite::new(name.clone(), l, applier).map_err(|e| malformed(&name, e))
}

/// Matrix products and their bias: `matmul(x, w) + b` (a matrix times a matrix, plus a
/// rank-1 bias broadcast over rows) is `fused_matmul(x, w, b)`, and so is a bare product of
/// two matrices that an activation or reduction follows; a `linear` without bias followed
/// by `+ b` takes `b` as its bias. The bias must be the right operand of the `add`: the
/// fused op falls back to the unfused chain when sizes do not fit, and that chain must raise
/// eager's error with the operands in the order the user wrote them.
pub fn bias_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let matrices = [("?x", 2), ("?w", 2)];
    let with_bias = [("?x", 2), ("?w", 2), ("?b", 1)];
    let mut rules = vec![
        rule_if_ranks(
            "matmul-then-bias".to_string(),
            "(add (matmul ?x ?w) ?b)",
            "(fused_matmul ?x ?w ?b nil none nil)",
            &with_bias,
        )?,
        rule_if_ranks(
            "linear-then-bias".to_string(),
            "(add (linear ?x ?w none) ?b)",
            "(linear ?x ?w (added ?b))",
            &with_bias,
        )?,
    ];
    // An op whose eager result depends on the element's position stays unfused (it runs on
    // the whole tensor: `UnaryOp::depends_on_position`).
    for op in UnaryOp::ALL
        .into_iter()
        .filter(|op| !op.depends_on_position())
    {
        rules.push(rule_if_ranks(
            format!("matmul-then-{op}"),
            &format!("({op} (matmul ?x ?w))"),
            &format!("(fused_matmul ?x ?w none (then nil {op}) none nil)"),
            &matrices,
        )?);
    }
    for kind in [ReduceKind::Mean, ReduceKind::Sum] {
        for dim in (0u8..2).filter(|dim| fusable_reduce(kind, *dim)) {
            rules.push(rule_if_ranks(
                format!("matmul-then-{kind}{dim}"),
                &format!("({kind} (matmul ?x ?w) {dim} ?keepdim)"),
                &format!("(fused_matmul ?x ?w none nil ({kind} {dim} ?keepdim) nil)"),
                &matrices,
            )?);
        }
    }
    Ok(rules)
}

/// Prologue: an elementwise op between the input (a matrix) and a rank-1 operand broadcast
/// over its rows, right before a `linear` or a fused op, moves into the op's prologue, the
/// outermost op last: `linear((x - mean) / scale, w, b)` is `fused_linear(x, w, b,
/// prologue=[sub mean, div scale])`. The input must be the left operand (the fused op falls
/// back to the unfused chain when sizes do not fit, which must raise eager's error in the
/// user's order); the fused kernels compute the steps exactly as the unfused ops do, one
/// rounding each.
pub fn prologue_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let ranks = [("?y", 2), ("?v", 1)];
    let mut rules = Vec::new();
    for op in BinaryOp::ALL {
        rules.push(rule_if_ranks(
            format!("{op}-then-linear"),
            &format!("(linear ({op} ?y ?v) ?w ?b)"),
            &format!("(fused_linear ?y ?w ?b nil none (pre {op} ?v nil))"),
            &ranks,
        )?);
        for head in FUSED_HEADS {
            rules.push(rule_if_ranks(
                format!("{op}-then-{head}"),
                &format!("({head} ({op} ?y ?v) ?w ?b ?acts ?tail ?pre)"),
                &format!("({head} ?y ?w ?b ?acts ?tail (pre {op} ?v ?pre))"),
                &ranks,
            )?);
        }
    }
    Ok(rules)
}

/// Linear epilogue: absorb elementwise activations after a `linear`, in order.
pub fn linear_epilogue_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let mut rules = Vec::new();
    for op in UnaryOp::ALL
        .into_iter()
        .filter(|op| !op.depends_on_position())
    {
        // A linear of a rank-3 input (extended surface) stays unfused: the fused kernels
        // take matrices.
        rules.push(rule_if_ranks(
            format!("linear-then-{op}"),
            &format!("({op} (linear ?x ?w ?b))"),
            &format!("(fused_linear ?x ?w ?b (then nil {op}) none nil)"),
            &[("?x", 2)],
        )?);
        for head in FUSED_HEADS {
            rules.push(rule(
                format!("{head}-then-{op}"),
                &format!("({op} ({head} ?x ?w ?b ?acts none ?pre))"),
                &format!("({head} ?x ?w ?b (then ?acts {op}) none ?pre)"),
            )?);
        }
    }
    Ok(rules)
}

/// Reduction tail: absorb a reduction over dim 1 of the linear result.
pub fn reduction_tail_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let mut rules = Vec::new();
    for kind in [ReduceKind::Mean, ReduceKind::Sum] {
        // A linear result has rank 2, so dims 0 and 1 are all there is to consider.
        for dim in (0u8..2).filter(|dim| fusable_reduce(kind, *dim)) {
            rules.push(rule_if_ranks(
                format!("linear-then-{kind}{dim}"),
                &format!("({kind} (linear ?x ?w ?b) {dim} ?keepdim)"),
                &format!("(fused_linear ?x ?w ?b nil ({kind} {dim} ?keepdim) nil)"),
                &[("?x", 2)],
            )?);
            for head in FUSED_HEADS {
                rules.push(rule(
                    format!("{head}-then-{kind}{dim}"),
                    &format!("({kind} ({head} ?x ?w ?b ?acts none ?pre) {dim} ?keepdim)"),
                    &format!("({head} ?x ?w ?b ?acts ({kind} {dim} ?keepdim) ?pre)"),
                )?);
            }
        }
    }
    Ok(rules)
}

/// Row-wise tails: `softmax(dim=1)`, `log_softmax(dim=1)` and `argmax(dim=1, keepdim)` of a
/// linear result (bare or fused, without a tail yet) end the fused op, which then normalizes each row of its
/// product in place or gives each row's index: classifier heads end in one op. A product of
/// two matrices takes them as well.
pub fn row_tail_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let tails = [
        ("softmax", "(softmax ?y 1)", "(softmax 1)"),
        ("log_softmax", "(log_softmax ?y 1)", "(log_softmax 1)"),
        ("argmax", "(argmax ?y 1 ?keepdim)", "(argmax 1 ?keepdim)"),
    ];
    let mut rules = Vec::new();
    for (name, op, tail) in tails {
        let around = |input: &str| op.replace("?y", input);
        rules.push(rule_if_ranks(
            format!("linear-then-{name}"),
            &around("(linear ?x ?w ?b)"),
            &format!("(fused_linear ?x ?w ?b nil {tail} nil)"),
            &[("?x", 2)],
        )?);
        rules.push(rule_if_ranks(
            format!("matmul-then-{name}"),
            &around("(matmul ?x ?w)"),
            &format!("(fused_matmul ?x ?w none nil {tail} nil)"),
            &[("?x", 2), ("?w", 2)],
        )?);
        for head in FUSED_HEADS {
            rules.push(rule(
                format!("{head}-then-{name}"),
                &around(&format!("({head} ?x ?w ?b ?acts none ?pre)")),
                &format!("({head} ?x ?w ?b ?acts {tail} ?pre)"),
            )?);
        }
    }
    Ok(rules)
}

/// Residual: a matrix added to a linear or matrix product (bare, or a fused op without a
/// tail) on either side ends the fused op: `(add ?r (fused_linear ... none ...))` is
/// `(fused_linear ... (residual ?r true) ...)`. A rank-1 addend is a bias instead
/// ([`bias_rules`]); the residual takes no activations after it (none of the epilogue rules
/// match a fused op with a tail slot other than `none`).
pub fn residual_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let mut rules = Vec::new();
    for (side, first) in [("left", true), ("right", false)] {
        let add = |y: &str| {
            if first {
                format!("(add ?r {y})")
            } else {
                format!("(add {y} ?r)")
            }
        };
        let tail = format!("(residual ?r {first})");
        rules.push(rule_if_ranks(
            format!("linear-then-residual-{side}"),
            &add("(linear ?x ?w ?b)"),
            &format!("(fused_linear ?x ?w ?b nil {tail} nil)"),
            &[("?x", 2), ("?r", 2)],
        )?);
        rules.push(rule_if_ranks(
            format!("matmul-then-residual-{side}"),
            &add("(matmul ?x ?w)"),
            &format!("(fused_matmul ?x ?w none nil {tail} nil)"),
            &[("?x", 2), ("?w", 2), ("?r", 2)],
        )?);
        for head in FUSED_HEADS {
            rules.push(rule_if_ranks(
                format!("{head}-then-residual-{side}"),
                &add(&format!("({head} ?x ?w ?b ?acts none ?pre)")),
                &format!("({head} ?x ?w ?b ?acts {tail} ?pre)"),
                &[("?r", 2)],
            )?);
        }
    }
    Ok(rules)
}

/// Row normalization: a `layer_norm` of a matrix right before a `linear` or a fused op (any
/// prologue, activations and tail) becomes the op's `prenorm` input, which the op applies
/// before its prologue: `F.linear(F.layer_norm(x, (d,), g, b), w1, b1)`, a transformer
/// block's pre-norm, is one op. A `layer_norm` whose value has another user stays (regions
/// are cut at shared values).
pub fn norm_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let norm = "(layer_norm ?x ?n ?g ?nb ?eps)";
    let prenorm = "(prenorm ?x ?n ?g ?nb ?eps)";
    let mut rules = vec![rule_if_ranks(
        "layer_norm-then-linear".to_string(),
        &format!("(linear {norm} ?w ?b)"),
        &format!("(fused_linear {prenorm} ?w ?b nil none nil)"),
        &[("?x", 2)],
    )?];
    for head in FUSED_HEADS {
        rules.push(rule_if_ranks(
            format!("layer_norm-then-{head}"),
            &format!("({head} {norm} ?w ?b ?acts ?tail ?pre)"),
            &format!("({head} {prenorm} ?w ?b ?acts ?tail ?pre)"),
            &[("?x", 2)],
        )?);
    }
    Ok(rules)
}
