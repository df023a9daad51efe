//! The forward's arguments whose `None`-ness a call fixes (`def forward(self, x, mask=None)`):
//! a forward typed at the call gets each argument's type ([`super::ModuleDescription::params`]),
//! `None` among them, so `mask is None` / `mask is not None` (alone, under `not`, in `and` /
//! `or`) is a constant of the compilation, as torch.compile guards it. The tests are folded
//! before anything else reads the body: an `if` (`elif`, a conditional expression) whose
//! test folds keeps only the arm Python takes, so the arm using `mask` is never compiled
//! when `mask` is None, and a call with a tensor for `mask` compiles its own signature.
//!
//! A `None` argument is no parameter of the compiled function (the Python side does not pass
//! it): any use of it other than those tests is an `RXT032` diagnostic (the signature runs
//! eagerly, never a wrong answer), and so is binding it again anywhere but in a statement
//! of the forward's own body (`mask = torch.ones_like(x)`, which `if mask is None:` leaves
//! there once folded): from that statement on it is an ordinary local.
//!
//! A test is folded only while its name still holds the argument: a name bound by a
//! statement is known no more after it (in a loop, nowhere in the loop), so a later test of
//! it stays as written (an `is` comparison, which no claim rule compiles: the signature runs
//! eagerly).

use std::collections::{HashMap, HashSet};

use ruff_python_ast::visitor::source_order::{self, SourceOrderVisitor};
use ruff_python_ast::visitor::transformer::{self, Transformer};
use ruff_python_ast::{
    self as ast, AtomicNodeIndex, BoolOp, CmpOp, ElifElseClause, Expr, Stmt, StmtFunctionDef,
    UnaryOp,
};
use ruff_text_size::{Ranged, TextRange};

use rextio_ir::Diagnostic;

use crate::codes;
use crate::parse::span_of;

use super::ModuleDescription;

/// Name -> whether it is None, for the names whose `None`-ness is known where a statement
/// runs.
type Known = HashMap<String, bool>;

/// Folds the `is None` tests of `def`'s arguments typed by the call, and takes the `None`
/// ones out of its parameters; the diagnostics of the uses it refuses.
pub(super) fn fold(def: &mut StmtFunctionDef, description: &ModuleDescription) -> Vec<Diagnostic> {
    let none: HashSet<String> = description
        .params
        .iter()
        .filter(|p| p.marker == "None")
        .map(|p| p.name.clone())
        .collect();
    let mut known: Known = description
        .params
        .iter()
        .map(|p| (p.name.clone(), p.marker == "None"))
        .collect();
    if known.is_empty() {
        return Vec::new();
    }
    let mut folder = Folder {
        none,
        diagnostics: Vec::new(),
    };
    let body = std::mem::take(&mut def.body);
    def.body = folder.block(body, &mut known, true);
    let parameters = &mut def.parameters;
    let keep = |p: &ast::ParameterWithDefault| !folder.none.contains(p.parameter.name.as_str());
    parameters.posonlyargs.retain(keep);
    parameters.args.retain(keep);
    parameters.kwonlyargs.retain(keep);
    folder.diagnostics
}

struct Folder {
    /// The arguments that are None at this call.
    none: HashSet<String>,
    diagnostics: Vec<Diagnostic>,
}

/// A test folded: Python's truth of it, or what is left to evaluate.
enum Folded {
    Truth(bool),
    Test(Expr),
}

impl Folder {
    /// `body` with its tests folded, `known` as it stands after it; `top`: the forward's own
    /// body (where a `None` argument may be bound again).
    fn block(&mut self, body: ast::Suite, known: &mut Known, top: bool) -> ast::Suite {
        let mut out = ast::Suite::new();
        let mut queue: std::collections::VecDeque<Stmt> = body.into_iter().collect();
        while let Some(stmt) = queue.pop_front() {
            match stmt {
                Stmt::If(stmt_if) => {
                    if let Some(arm) = self.fold_if(stmt_if, known, &mut out) {
                        // The arm Python surely takes, in place of the `if`.
                        for stmt in arm.into_iter().rev() {
                            queue.push_front(stmt);
                        }
                    }
                }
                Stmt::For(mut stmt_for) => {
                    let bound = bound_names(&Stmt::For(stmt_for.clone()));
                    let (head, body, orelse) =
                        (&mut stmt_for.iter, &mut stmt_for.body, &mut stmt_for.orelse);
                    self.fold_loop(&bound, head, body, orelse, known);
                    out.push(Stmt::For(stmt_for));
                }
                Stmt::While(mut stmt_while) => {
                    let bound = bound_names(&Stmt::While(stmt_while.clone()));
                    let (head, body, orelse) = (
                        &mut stmt_while.test,
                        &mut stmt_while.body,
                        &mut stmt_while.orelse,
                    );
                    self.fold_loop(&bound, head, body, orelse, known);
                    out.push(Stmt::While(stmt_while));
                }
                mut stmt => {
                    // Any other statement: its conditional expressions folded, then every
                    // mention of a None argument refused, but a plain `name = value` of the
                    // forward's own body, which makes it a local from there on.
                    // A name a `:=` binds in it holds another value within it already, and
                    // so may any a block of it (`with`, `try`, `match`) binds.
                    let early = match stmt {
                        Stmt::With(_) | Stmt::Try(_) | Stmt::Match(_) => bound_names(&stmt),
                        _ => walrus_bound(&stmt),
                    };
                    if !early.is_empty() {
                        *known = self.forget(known, &early, top);
                    }
                    FoldIfs { known }.visit_stmt(&mut stmt);
                    let rebinds = top.then(|| rebound(&stmt)).flatten();
                    let bound = bound_names(&stmt);
                    let mut mentions = Mentions::default();
                    mentions.visit_stmt(&stmt);
                    for (name, range) in mentions.0 {
                        let rebinding = rebinds.as_deref() == Some(name.as_str())
                            && range.start() < stmt_value_start(&stmt);
                        if !rebinding {
                            self.refuse_use(&name, range, known);
                        }
                    }
                    *known = self.forget(known, &bound, top);
                    out.push(stmt);
                }
            }
            if out.last().is_some_and(ends_block) {
                break; // what follows a `return` (`raise`, ...) never runs
            }
        }
        out
    }

    /// An `if` with its tests folded: the arm Python surely takes (to be spliced in its
    /// place), or `None` after pushing to `out` what is left of it (nothing when no arm runs).
    fn fold_if(
        &mut self,
        stmt_if: ast::StmtIf,
        known: &mut Known,
        out: &mut ast::Suite,
    ) -> Option<ast::Suite> {
        let ast::StmtIf {
            node_index,
            range,
            test,
            body,
            elif_else_clauses,
        } = stmt_if;
        let mut arms: Vec<(Option<Expr>, ast::Suite, TextRange)> = vec![(Some(*test), body, range)];
        arms.extend(
            elif_else_clauses
                .into_iter()
                .map(|clause| (clause.test, clause.body, clause.range)),
        );
        // A name a `:=` in a test binds is known no more (from the first test on).
        let mut early = HashMap::new();
        for test in arms.iter().filter_map(|arm| arm.0.as_ref()) {
            let mut walrus = Walrus::default();
            walrus.visit_expr(test);
            early.extend(walrus.0);
        }
        if !early.is_empty() {
            *known = self.forget(known, &early, false);
        }
        // The arms that may run, in order; the first whose test surely holds is the last.
        let mut kept: Vec<(Option<Expr>, ast::Suite, TextRange)> = Vec::new();
        for (test, body, range) in arms {
            match test.map(|t| self.test(t, known)) {
                Some(Folded::Truth(false)) => continue,
                Some(Folded::Truth(true)) | None => {
                    kept.push((None, body, range));
                    break;
                }
                Some(Folded::Test(test)) => kept.push((Some(test), body, range)),
            }
        }
        if kept.is_empty() {
            return None;
        }
        if kept[0].0.is_none() {
            return Some(kept.swap_remove(0).1);
        }
        // An `if` again: each arm folded on its own, and what any of them binds is known no
        // more after it.
        let mut bound = HashSet::new();
        let mut arms = Vec::new();
        for (test, body, range) in kept {
            let mut inner = known.clone();
            let body = self.block(body, &mut inner, false);
            for name in known.keys() {
                if !inner.contains_key(name) {
                    bound.insert(name.clone());
                }
            }
            arms.push((test, body, range));
        }
        known.retain(|name, _| !bound.contains(name));
        let mut arms = arms.into_iter();
        let (test, body, _) = arms.next().expect("an arm is kept");
        out.push(Stmt::If(ast::StmtIf {
            node_index,
            range,
            test: Box::new(test.expect("the first arm has a test")),
            body,
            elif_else_clauses: arms
                .map(|(test, body, range)| ElifElseClause {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    test,
                    body,
                })
                .collect(),
        }));
        None
    }

    /// `test` folded where its value's truth depends only on known `is None` tests; what is
    /// left of it otherwise (its other mentions of a None argument refused).
    fn test(&mut self, test: Expr, known: &Known) -> Folded {
        let folded = truth(test, known);
        match folded {
            Folded::Test(mut test) => {
                self.expr(&mut test, known);
                Folded::Test(test)
            }
            truth => truth,
        }
    }

    /// `expr`'s conditional expressions folded, and its mentions of a None argument refused.
    fn expr(&mut self, expr: &mut Expr, known: &Known) {
        FoldIfs { known }.visit_expr(expr);
        let mut mentions = Mentions::default();
        mentions.visit_expr(expr);
        for (name, range) in mentions.0 {
            self.refuse_use(&name, range, known);
        }
    }

    /// Names bound by a loop: a None argument among them (bound again not in the forward's
    /// own body) is refused where the loop binds it.
    /// A `for` or `while` loop: `head` is its iterable or its test. A name bound in the loop
    /// holds another value on a later iteration, so what it binds is refused where it is a
    /// known argument and forgotten for the head, both arms and after the loop.
    fn fold_loop(
        &mut self,
        bound: &HashMap<String, TextRange>,
        head: &mut Expr,
        body: &mut ast::Suite,
        orelse: &mut ast::Suite,
        known: &mut Known,
    ) {
        self.refuse_bound(bound, known);
        let mut inner = self.forget(known, bound, false);
        self.expr(head, &inner);
        *body = self.block(std::mem::take(body), &mut inner, false);
        let mut inner = self.forget(known, bound, false);
        *orelse = self.block(std::mem::take(orelse), &mut inner, false);
        *known = self.forget(known, bound, false);
    }

    fn refuse_bound(&mut self, bound: &HashMap<String, TextRange>, known: &Known) {
        for (name, range) in bound {
            self.refuse_use(name, *range, known);
        }
    }

    /// `known` without the names of `bound`: they hold other values from there on. A None
    /// argument's binding outside the forward's own body (`top`) is refused, so it stays
    /// known (its later uses are refused too, rather than read as an undefined name).
    fn forget(&self, known: &Known, bound: &HashMap<String, TextRange>, top: bool) -> Known {
        known
            .iter()
            .filter(|(name, is_none)| {
                !bound.contains_key(*name) || (**is_none && !top && self.none.contains(*name))
            })
            .map(|(name, is_none)| (name.clone(), *is_none))
            .collect()
    }

    fn refuse_use(&mut self, name: &str, range: TextRange, known: &Known) {
        if !self.none.contains(name) || known.get(name) != Some(&true) {
            return;
        }
        self.diagnostics.push(
            Diagnostic::error(
                codes::UNSUPPORTED_PARAM,
                format!(
                    "`{name}` is None at this call, and the forward uses it other than in a \
                     `{name} is None` / `{name} is not None` test"
                ),
            )
            .with_primary(span_of(&range), "used here")
            .with_suggestion(format!(
                "test it with `if {name} is None:` (or `is not None`) and use it only where it is \
                 not None; this signature runs eagerly"
            )),
        );
    }
}

/// Python's truth of `test` where it depends only on known `is None` tests (`not`, `and`,
/// `or` of them too), else what is left to evaluate: the operands of `and`/`or` whose
/// truth is known and that do not decide are dropped (the test's truth is the same).
fn truth(test: Expr, known: &Known) -> Folded {
    match test {
        Expr::Compare(compare) => match is_none_test(&compare, known) {
            Some(truth) => Folded::Truth(truth),
            None => Folded::Test(Expr::Compare(compare)),
        },
        Expr::UnaryOp(unary) if unary.op == UnaryOp::Not => match truth(*unary.operand, known) {
            Folded::Truth(t) => Folded::Truth(!t),
            Folded::Test(operand) => Folded::Test(Expr::UnaryOp(ast::ExprUnaryOp {
                operand: Box::new(operand),
                ..unary
            })),
        },
        Expr::BoolOp(bool_op) => {
            // `or` is decided by a true operand, `and` by a false one.
            let decides = bool_op.op == BoolOp::Or;
            let ast::ExprBoolOp {
                node_index,
                range,
                op,
                values,
            } = bool_op;
            let mut left = Vec::new();
            // Operands after a deciding one never run: they are left out.
            for value in values {
                match truth(value, known) {
                    Folded::Truth(t) if t == decides => {
                        if left.is_empty() {
                            return Folded::Truth(decides);
                        }
                        // An operand before it must still run: kept as written, with a
                        // literal standing for this one.
                        left.push(Expr::BooleanLiteral(ast::ExprBooleanLiteral {
                            node_index: AtomicNodeIndex::NONE,
                            range,
                            value: decides,
                        }));
                        break;
                    }
                    Folded::Truth(_) => {}
                    Folded::Test(test) => left.push(test),
                }
            }
            match left.len() {
                0 => Folded::Truth(!decides),
                1 => Folded::Test(left.pop().expect("one operand")),
                _ => Folded::Test(Expr::BoolOp(ast::ExprBoolOp {
                    node_index,
                    range,
                    op,
                    values: left,
                })),
            }
        }
        other => Folded::Test(other),
    }
}

/// `name is None` / `name is not None` (either way round) of a name whose `None`-ness is
/// known: its truth.
fn is_none_test(compare: &ast::ExprCompare, known: &Known) -> Option<bool> {
    if compare.ops.len() != 1 {
        return None;
    }
    let right = &compare.comparators[0];
    let name = match (&*compare.left, right) {
        (Expr::Name(name), Expr::NoneLiteral(_)) | (Expr::NoneLiteral(_), Expr::Name(name)) => name,
        _ => return None,
    };
    let is_none = *known.get(name.id.as_str())?;
    match compare.ops[0] {
        CmpOp::Is => Some(is_none),
        CmpOp::IsNot => Some(!is_none),
        _ => None,
    }
}

/// Folds the conditional expressions (`a if mask is None else b`) whose test folds, outside
/// nested functions and lambdas (which read a name when they run, not where they are) and
/// comprehensions (whose variables may shadow it).
struct FoldIfs<'a> {
    known: &'a Known,
}

impl Transformer for FoldIfs<'_> {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        if matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
            return;
        }
        transformer::walk_stmt(self, stmt);
    }

    fn visit_expr(&self, expr: &mut Expr) {
        rextio_ir::stack::deep(|| {
            // A lambda reads names when it runs; a comprehension binds names of its own.
            if matches!(
                expr,
                Expr::Lambda(_)
                    | Expr::ListComp(_)
                    | Expr::SetComp(_)
                    | Expr::DictComp(_)
                    | Expr::Generator(_)
            ) {
                return;
            }
            transformer::walk_expr(self, expr);
            let Expr::If(if_exp) = expr else {
                return;
            };
            let placeholder = Expr::NoneLiteral(ast::ExprNoneLiteral::default());
            let test = std::mem::replace(&mut *if_exp.test, placeholder);
            match truth(test, self.known) {
                Folded::Truth(true) => {
                    let body =
                        std::mem::replace(&mut *if_exp.body, Expr::NoneLiteral(Default::default()));
                    *expr = body;
                }
                Folded::Truth(false) => {
                    let orelse = std::mem::replace(
                        &mut *if_exp.orelse,
                        Expr::NoneLiteral(Default::default()),
                    );
                    *expr = orelse;
                }
                Folded::Test(test) => *if_exp.test = test,
            }
        })
    }
}

/// Every mention of a name in a node (a name read, bound or deleted, a `def`, `class`,
/// `import`, `except ... as`, `global` name, a match capture, a nested function's
/// parameter), but an attribute's name or a keyword argument's, with where it is.
#[derive(Default)]
struct Mentions(Vec<(String, TextRange)>);

impl<'a> SourceOrderVisitor<'a> for Mentions {
    fn visit_expr(&mut self, expr: &'a Expr) {
        rextio_ir::stack::deep(|| match expr {
            Expr::Name(name) => self.0.push((name.id.to_string(), name.range)),
            Expr::Attribute(attribute) => self.visit_expr(&attribute.value),
            _ => source_order::walk_expr(self, expr),
        })
    }

    fn visit_keyword(&mut self, keyword: &'a ast::Keyword) {
        self.visit_expr(&keyword.value);
    }

    fn visit_identifier(&mut self, identifier: &'a ast::Identifier) {
        self.0.push((identifier.to_string(), identifier.range()));
    }
}

/// The names `stmt` binds or deletes anywhere in it (nested blocks too), with where:
/// every mention but a name read.
fn bound_names(stmt: &Stmt) -> HashMap<String, TextRange> {
    #[derive(Default)]
    struct Bound(HashMap<String, TextRange>);
    impl<'a> SourceOrderVisitor<'a> for Bound {
        fn visit_expr(&mut self, expr: &'a Expr) {
            rextio_ir::stack::deep(|| match expr {
                Expr::Name(name) => {
                    if name.ctx != ast::ExprContext::Load {
                        self.0.entry(name.id.to_string()).or_insert(name.range);
                    }
                }
                Expr::Attribute(attribute) => self.visit_expr(&attribute.value),
                _ => source_order::walk_expr(self, expr),
            })
        }
        fn visit_keyword(&mut self, keyword: &'a ast::Keyword) {
            self.visit_expr(&keyword.value);
        }
        fn visit_identifier(&mut self, identifier: &'a ast::Identifier) {
            self.0
                .entry(identifier.to_string())
                .or_insert(identifier.range());
        }
    }
    let mut bound = Bound::default();
    bound.visit_stmt(stmt);
    bound.0
}

/// The names the `:=` expressions of a node bind.
#[derive(Default)]
struct Walrus(HashMap<String, TextRange>);

impl<'a> SourceOrderVisitor<'a> for Walrus {
    fn visit_expr(&mut self, expr: &'a Expr) {
        rextio_ir::stack::deep(|| {
            if let Expr::Named(named) = expr {
                if let Expr::Name(name) = &*named.target {
                    self.0.insert(name.id.to_string(), name.range);
                }
            }
            source_order::walk_expr(self, expr);
        })
    }
}

fn walrus_bound(stmt: &Stmt) -> HashMap<String, TextRange> {
    let mut walrus = Walrus::default();
    walrus.visit_stmt(stmt);
    walrus.0
}

/// The name a plain `name = value` (`name: T = value`) binds, where `value` does not read it.
fn rebound(stmt: &Stmt) -> Option<String> {
    let (target, value) = match stmt {
        Stmt::Assign(assign) if assign.targets.len() == 1 => (&assign.targets[0], &*assign.value),
        Stmt::AnnAssign(assign) => (&*assign.target, assign.value.as_deref()?),
        _ => return None,
    };
    let Expr::Name(name) = target else {
        return None;
    };
    let mut mentions = Mentions::default();
    mentions.visit_expr(value);
    if mentions.0.iter().any(|(n, _)| n == name.id.as_str()) {
        return None;
    }
    Some(name.id.to_string())
}

/// Where the value of a plain assignment starts (its target's mentions are before it).
fn stmt_value_start(stmt: &Stmt) -> ruff_text_size::TextSize {
    match stmt {
        Stmt::Assign(assign) => assign.value.start(),
        Stmt::AnnAssign(assign) => assign.value.as_ref().map_or(assign.end(), |v| v.start()),
        other => other.start(),
    }
}

/// Whether nothing after `stmt` in its block runs.
fn ends_block(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_)
    )
}
