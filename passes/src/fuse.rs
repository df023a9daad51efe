//! Fusion: saturates a region's terms (see [`crate::egraph`]) under the fusion rules and
//! extracts the cheapest equivalent terms with [`FusionCost`].
//!
//! # Rules, by topic
//!
//! - **linear epilogue** ([`linear_epilogue_rules`]): `op(linear(x, w, b?))` becomes
//!   `fused_linear(x, w, b?, [op], none)`, and `op(fused_linear(..., acts, none))` appends
//!   `op` to `acts`, for every [`UnaryOp`] (all elementwise, so the order is kept exactly).
//! - **reduction tail** ([`reduction_tail_rules`]): `mean|sum(fused_linear(..., acts, none),
//!   dim=1, keepdim)` moves the reduction into the fused op, and so does a reduction of a bare
//!   `linear`. Only reductions [`fusable_reduce`] admits are fused (dim 1 of the rank-2 linear
//!   result; a linear's result is always rank 2); a fused op with a reduction takes no more
//!   activations, since those would run after the reduction.
//!
//! Every rule rewrites to exactly the unfused chain; the fused kernel computes that chain within
//! the float tolerance of docs/parity.md (it sums in another order). Rules never see through a value with
//! other users: regions are cut into trees at shared values (see [`crate::egraph`]), so a
//! fused op never recomputes work another user also needs.
//!
//! The limits only bound how much is fused, never correctness: any extracted term is
//! equivalent to the input.

use std::str::FromStr;
use std::time::Duration;

use egg::{
    CostFunction, EGraph, Extractor, Id, Language, Pattern, Rewrite, Runner, SimpleScheduler,
};
use rextio_ir::typing::fusable_reduce;
use rextio_ir::{Diagnostic, Function, ReduceKind, UnaryOp};

use crate::egraph::{has_terms, rebuild, region_of, TensorLang};
use crate::pass::Pass;
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

pub type FusionRewrite = Rewrite<TensorLang, ()>;

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
        // The term conversion relies on definition order and parameter indices.
        let valid = validate(&f)?;
        if !has_terms(&f) {
            // Control flow and scalar code are not rewritten yet: the function stays as it is.
            return Ok(f);
        }
        self.fuse(valid)
    }
}

impl Fuse {
    /// The fused form of a validated function.
    pub fn fuse(&self, f: Valid<'_>) -> Result<Function, Vec<Diagnostic>> {
        let rules = rules()?;
        let region = region_of(f);
        let mut egraph = EGraph::<TensorLang, ()>::default();
        let classes = region.add_to(&mut egraph);
        let runner = Runner::default()
            .with_scheduler(SimpleScheduler)
            .with_node_limit(self.node_limit)
            .with_iter_limit(self.iter_limit)
            .with_time_limit(self.time_limit)
            .with_egraph(egraph)
            .run(&rules);
        let extractor = Extractor::new(&runner.egraph, FusionCost);
        rebuild(f.function(), &runner.egraph, &classes, &|class| {
            extractor.find_best_node(class).clone()
        })
    }
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

/// Every fusion rule, topic by topic.
pub fn rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let mut rules = linear_epilogue_rules()?;
    rules.extend(reduction_tail_rules()?);
    Ok(rules)
}

fn rule(name: String, lhs: &str, rhs: &str) -> Result<FusionRewrite, Vec<Diagnostic>> {
    let bad = |e: String| {
        vec![Diagnostic::error(
            PASS_INTERNAL,
            format!("fusion rule `{name}` is malformed: {e}"),
        )]
    };
    let lhs = Pattern::<TensorLang>::from_str(lhs).map_err(|e| bad(e.to_string()))?;
    let rhs = Pattern::<TensorLang>::from_str(rhs).map_err(|e| bad(e.to_string()))?;
    Rewrite::new(name.clone(), lhs, rhs).map_err(bad)
}

/// Linear epilogue: absorb elementwise activations after a `linear`, in order.
pub fn linear_epilogue_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let mut rules = Vec::new();
    for op in UnaryOp::ALL {
        rules.push(rule(
            format!("linear-then-{op}"),
            &format!("({op} (linear ?x ?w ?b))"),
            &format!("(fused_linear ?x ?w ?b (then nil {op}) none)"),
        )?);
        rules.push(rule(
            format!("fused-then-{op}"),
            &format!("({op} (fused_linear ?x ?w ?b ?acts none))"),
            &format!("(fused_linear ?x ?w ?b (then ?acts {op}) none)"),
        )?);
    }
    Ok(rules)
}

/// Reduction tail: absorb a reduction over dim 1 of the linear result.
pub fn reduction_tail_rules() -> Result<Vec<FusionRewrite>, Vec<Diagnostic>> {
    let mut rules = Vec::new();
    for kind in [ReduceKind::Mean, ReduceKind::Sum] {
        // A linear result has rank 2, so dims 0 and 1 are all there is to consider.
        for dim in (0u8..2).filter(|dim| fusable_reduce(kind, *dim)) {
            rules.push(rule(
                format!("linear-then-{kind}{dim}"),
                &format!("({kind} (linear ?x ?w ?b) {dim} ?keepdim)"),
                &format!("(fused_linear ?x ?w ?b nil ({kind} {dim} ?keepdim))"),
            )?);
            rules.push(rule(
                format!("fused-then-{kind}{dim}"),
                &format!("({kind} (fused_linear ?x ?w ?b ?acts none) {dim} ?keepdim)"),
                &format!("(fused_linear ?x ?w ?b ?acts ({kind} {dim} ?keepdim))"),
            )?);
        }
    }
    Ok(rules)
}
