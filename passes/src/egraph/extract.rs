//! Extraction in time linear in the e-graph's size: each class's cheapest node under a cost
//! function, found with a worklist instead of egg's `Extractor`.
//!
//! egg's `Extractor::new` recomputes every class's cost in passes over all classes until a
//! pass changes nothing. A class's cost settles one pass after its children's, and classes are
//! visited in hash order, so a chain of `n` ops can take up to `n` passes: quadratic (a
//! 20,000-op chain spent 87% of its compile time there, docs/reliability.md, "Long
//! programs"). Here a class is recomputed only when one of its children's cost falls (the
//! parents of a class whose cost changed go back on the worklist), and the first sweep goes
//! in ascending class id, which for terms added bottom-up (every operand before its user,
//! as `Region::add_to` does) settles a chain in one sweep.
//!
//! The costs are egg's (a least fixpoint: each class costs its cheapest node's cost, a class
//! no node of which can be costed has none); the node kept per class is the first node of
//! least cost in the class's node order under the final costs, so the choice does not depend
//! on the order the worklist ran in.

use std::collections::{HashMap, VecDeque};

use egg::{Analysis, CostFunction, EGraph, Id, Language};

/// The cheapest node of every class that has a cost (see the module doc).
pub struct LinearExtractor<L: Language> {
    best: HashMap<Id, L>,
}

impl<L: Language> LinearExtractor<L> {
    pub fn new<N, CF>(egraph: &EGraph<L, N>, mut cost_function: CF) -> Self
    where
        N: Analysis<L>,
        CF: CostFunction<L>,
    {
        let mut costs: HashMap<Id, CF::Cost> = HashMap::with_capacity(egraph.number_of_classes());
        let mut ids: Vec<Id> = egraph.classes().map(|class| class.id).collect();
        ids.sort_unstable();
        let mut queued: HashMap<Id, bool> = ids.iter().map(|&id| (id, true)).collect();
        let mut worklist: VecDeque<Id> = ids.into_iter().collect();
        while let Some(id) = worklist.pop_front() {
            queued.insert(id, false);
            let Some(cost) = class_cost(egraph, &mut cost_function, &costs, id) else {
                continue;
            };
            let improved = match costs.get(&id) {
                None => true,
                Some(old) => cost < *old,
            };
            if !improved {
                continue;
            }
            costs.insert(id, cost);
            // Only a parent's cost can change when this class's falls.
            for parent in egraph[id].parents() {
                let parent = egraph.find(parent);
                let flag = queued.entry(parent).or_insert(false);
                if !*flag {
                    *flag = true;
                    worklist.push_back(parent);
                }
            }
        }
        let mut best = HashMap::with_capacity(costs.len());
        for class in egraph.classes() {
            if !costs.contains_key(&class.id) {
                continue;
            }
            // The first node of least cost (egg's `min_by` keeps the first of equals too).
            let mut chosen: Option<(CF::Cost, &L)> = None;
            for node in class.iter() {
                let Some(cost) = node_cost(egraph, &mut cost_function, &costs, node) else {
                    continue;
                };
                if chosen.as_ref().is_none_or(|(least, _)| cost < *least) {
                    chosen = Some((cost, node));
                }
            }
            if let Some((_, node)) = chosen {
                best.insert(class.id, node.clone());
            }
        }
        LinearExtractor { best }
    }

    /// The chosen node of `class`'s canonical class; `None` when no node of it has a cost
    /// (egg's extractor panics there).
    pub fn best_node<N: Analysis<L>>(&self, egraph: &EGraph<L, N>, class: Id) -> Option<&L> {
        self.best.get(&egraph.find(class))
    }
}

/// The least cost of `id`'s nodes under the costs known so far.
fn class_cost<L, N, CF>(
    egraph: &EGraph<L, N>,
    cost_function: &mut CF,
    costs: &HashMap<Id, CF::Cost>,
    id: Id,
) -> Option<CF::Cost>
where
    L: Language,
    N: Analysis<L>,
    CF: CostFunction<L>,
{
    let mut least: Option<CF::Cost> = None;
    for node in egraph[id].iter() {
        if let Some(cost) = node_cost(egraph, cost_function, costs, node) {
            if least.as_ref().is_none_or(|l| cost < *l) {
                least = Some(cost);
            }
        }
    }
    least
}

/// `node`'s cost, when every child class has one.
fn node_cost<L, N, CF>(
    egraph: &EGraph<L, N>,
    cost_function: &mut CF,
    costs: &HashMap<Id, CF::Cost>,
    node: &L,
) -> Option<CF::Cost>
where
    L: Language,
    N: Analysis<L>,
    CF: CostFunction<L>,
{
    if !node.all(|child| costs.contains_key(&egraph.find(child))) {
        return None;
    }
    Some(cost_function.cost(node, |child| costs[&egraph.find(child)].clone()))
}
