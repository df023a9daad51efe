//! Statements of a native function body as the reference host (Core 0.1.8) analyses them:
//! assignments with one fixed type per name, `for` over `range` or literal ints, `while`,
//! `if`/`elif`/`else`, `break`/`continue`/`return` anywhere, scalar augmented assignment,
//! and Core's *blockers* (subset violations) with its exact words. Scoping follows Core: the
//! environment is copied into every block and what a block binds first is dropped when it
//! ends; names bound before a block and reassigned in it flow out as loop-carried values or
//! `if` results (structured SSA, see `rextio_ir::Stmt`).
//!
//! The rules and messages are those recorded in `docs/reference-control-flow.md` (observed
//! from the reference on the corpus `tests/conformance/control-flow.json`).

use std::collections::{BTreeSet, HashMap};

use rextio_ir::{Diagnostic, Marker, Span};
use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{
    self as ast, Expr, ExprList, ExprTuple, Number, Stmt, StmtAnnAssign, StmtAssign, StmtAugAssign,
    StmtFor, StmtIf, StmtWhile,
};
use ruff_text_size::Ranged;

use super::{display_type, Constant, StoredNames, Value, Walker};
use crate::claim::Surface;
use crate::codes;
use crate::lower::{TraceIteration, TraceStmt, ValueDef, ValueId};
use crate::parse::span_of;

/// The innermost loop's carried names, for `continue` and `break`.
pub(super) struct LoopFrame {
    pub carried: Vec<String>,
}

impl Walker<'_> {
    // ---------------------------------------------------------------- findings

    /// A subset violation: the function stays on Python (not a candidate in auto mode).
    pub(super) fn blocker(&mut self, span: Span, message: impl Into<String>) {
        self.out.blockers.push(
            Diagnostic::error(codes::HOST_PLUGIN_TYPES, message.into())
                .with_primary(span, "outside the native subset"),
        );
    }

    /// A subset violation reported with its own code and label (the extended surface's
    /// words for what the host calls `RXT010`).
    pub(super) fn blocker_with(
        &mut self,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
        label: &str,
    ) {
        self.out
            .blockers
            .push(Diagnostic::error(code, message.into()).with_primary(span, label));
    }

    /// Core reports some operators a second time at the function (`def` line, column 0).
    pub(super) fn blocker_at_def(&mut self, message: impl Into<String>) {
        let span = self.def_line_start;
        self.blocker(span, message);
    }

    // ---------------------------------------------------------------- statements

    pub(super) fn walk_block(&mut self, body: &[Stmt]) {
        for stmt in body {
            if !self.reachable {
                self.unsupported_statement(stmt, "code after return");
                return;
            }
            self.statement(stmt);
        }
    }

    fn statement(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Pass(pass) => self.blocker(
                span_of(pass),
                "pass statements are not supported in native functions",
            ),
            Stmt::Expr(expr) => {
                let is_print = matches!(&*expr.value, Expr::Call(call)
                    if matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "print"));
                if is_print {
                    // Core lowers `print` of scalars; this build does not lower it yet.
                    self.unsupported_statement(stmt, "print call");
                } else {
                    let docstring = matches!(&*expr.value, Expr::StringLiteral(_));
                    if !docstring {
                        self.eval(&expr.value);
                    }
                    self.blocker(
                        span_of(expr),
                        "expression statements are supported only for list.append, print, and logging calls in native functions",
                    );
                    if docstring {
                        if let Some(last) = self.out.blockers.last_mut() {
                            *last = last.clone().with_suggestion(
                                "the host counts a docstring as an expression statement: make it a comment",
                            );
                        }
                    }
                }
            }
            Stmt::Assign(assign) => self.assign(assign),
            Stmt::AnnAssign(assign) => self.ann_assign(assign),
            Stmt::AugAssign(aug) => self.aug_assign(aug),
            Stmt::Return(ret) => self.ret(ret),
            Stmt::If(stmt_if) => self.if_stmt(stmt_if),
            Stmt::For(stmt_for) => self.for_stmt(stmt_for),
            Stmt::While(stmt_while) => self.while_stmt(stmt_while),
            Stmt::Break(brk) => self.loop_exit(span_of(brk), false),
            Stmt::Continue(cont) => self.loop_exit(span_of(cont), true),
            Stmt::Assert(_) | Stmt::Raise(_) => {
                let span = self.first_line(span_of(stmt));
                self.blocker(
                    span,
                    "explicit exception flow is not supported in native functions",
                );
                self.reachable = !matches!(stmt, Stmt::Raise(_)) && self.reachable;
            }
            Stmt::FunctionDef(def) => {
                self.blocker(span_of(&def.name), "nested functions are not supported");
                // Calls to it consume a blocked value: no finding of their own.
                self.env.insert(def.name.to_string(), Value::poisoned());
            }
            other => self.unsupported_statement(other, super::statement_kind(other)),
        }
    }

    fn assign(&mut self, assign: &StmtAssign) {
        if assign.targets.len() > 1 {
            self.eval(&assign.value);
            self.blocker(
                self.first_line(span_of(assign)),
                "multiple assignment targets (a = b = ...) are not supported in native functions",
            );
            self.poison_targets(assign.targets.iter());
            return;
        }
        let Some(target) = assign.targets.first() else {
            return;
        };
        if self.ctx.surface == Surface::Extended
            && self.unpack(target, &assign.value, span_of(assign))
        {
            return;
        }
        let value = self.eval(&assign.value);
        match target {
            Expr::Name(name) => self.rebind(name.id.as_str(), value, span_of(assign)),
            other => {
                self.blocker(span_of(other), "assignment targets must be local names");
                self.poison_targets(std::iter::once(other));
            }
        }
    }

    /// Tuple unpacking, on the extended surface (the host refuses it: "assignment targets
    /// must be local names"): `a, b = e1, e2` evaluates the display's elements in order, then
    /// binds the names in order, as Python does; `b, t, d = x.shape` (or `x.size()`) of a
    /// tensor name binds each name to that size, `x.shape[i]`, when the names are as many as
    /// the tensor's dims (otherwise eager's `ValueError`, refused here). Whether it took the
    /// statement; anything else (a starred or non-name target, lengths that differ) is left
    /// to the host's rule.
    fn unpack(&mut self, target: &Expr, value: &Expr, span: Span) -> bool {
        let names: Vec<&str> = match target {
            Expr::Tuple(ExprTuple { elts, .. }) | Expr::List(ExprList { elts, .. }) => {
                match elts
                    .iter()
                    .map(|e| match e {
                        Expr::Name(name) => Some(name.id.as_str()),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                {
                    Some(names) if !names.is_empty() => names,
                    _ => return false,
                }
            }
            _ => return false,
        };
        let values = match value {
            Expr::Tuple(ExprTuple { elts, .. }) | Expr::List(ExprList { elts, .. })
                if elts.len() == names.len() && !elts.iter().any(Expr::is_starred_expr) =>
            {
                elts.iter().map(|e| self.eval(e)).collect::<Vec<_>>()
            }
            _ => {
                let Some((tensor, sizes)) = shape_of(value) else {
                    return false;
                };
                let rank = self
                    .env
                    .get(tensor.id.as_str())
                    .and_then(|v| v.ty.as_deref())
                    .and_then(Marker::by_key)
                    .map(|m| usize::from(m.ty.rank));
                match rank {
                    Some(rank) if rank == names.len() => {}
                    Some(rank) => {
                        self.out.diagnostics.push(
                            Diagnostic::error(
                                codes::UNSUPPORTED_SYNTAX,
                                format!(
                                    "unpacking the {rank} sizes of `{}` into {} names (eager raises ValueError)",
                                    tensor.id,
                                    names.len()
                                ),
                            )
                            .with_primary(span, "the names and the sizes differ in number"),
                        );
                        self.statement_error = true;
                        self.poison_targets(std::iter::once(target));
                        return true;
                    }
                    None => return false,
                }
                // `x.shape[i]` for each name, spanning the unpacked value.
                (0..names.len())
                    .map(|i| {
                        let index = Expr::NumberLiteral(ast::ExprNumberLiteral {
                            node_index: ast::AtomicNodeIndex::NONE,
                            range: sizes.range(),
                            value: ast::Number::Int(ast::Int::from(i as u64)),
                        });
                        let size = Expr::Subscript(ast::ExprSubscript {
                            node_index: ast::AtomicNodeIndex::NONE,
                            range: sizes.range(),
                            value: Box::new(sizes.clone()),
                            slice: Box::new(index),
                            ctx: ast::ExprContext::Load,
                        });
                        self.eval(&size)
                    })
                    .collect()
            }
        };
        for (name, value) in names.into_iter().zip(values) {
            self.rebind(name, value, span);
        }
        true
    }

    /// Targets of an assignment the host refuses stay unbound: reading them later is the
    /// host's "not defined" blocker.
    fn poison_targets<'e>(&mut self, targets: impl Iterator<Item = &'e Expr>) {
        let mut names = StoredNames::default();
        for target in targets {
            names.visit_expr(target);
        }
        for name in names.names {
            self.env.remove(&name);
        }
    }

    /// `name = value`: one fixed type per name (Core's rule); a rejected rebinding leaves
    /// the old binding in place, poisoned: the function is already refused, and a later read
    /// of the name (a loop carrying it) must not be taken for a value that was never
    /// lowered (`i = None; i = 0; while i < n: ... i += 1` was an internal error).
    pub(super) fn rebind(&mut self, name: &str, value: Value, span: Span) {
        // A scalar constant bound to a name becomes a value of its own, so that loops and
        // `if`s can carry and yield it.
        let mut value = value;
        if value.id.is_none() && value.constant.is_some() && !value.poisoned {
            value.id = self.value_id(&value, span);
        }
        if let Some(old) = self.env.get(name) {
            if let (Some(from), Some(to)) = (old.ty.as_deref(), value.ty.as_deref()) {
                if from != to && !old.poisoned && !value.poisoned {
                    let message = format!(
                        "rebinding '{name}' changes its type from {from} to {to}; a native local/parameter has one fixed Rust binding type and cannot be reassigned to a different type"
                    );
                    self.blocker(span, message);
                    if let Some(old) = self.env.get_mut(name) {
                        old.poisoned = true;
                    }
                    return;
                }
            }
        }
        self.bind(name, value);
    }

    fn ann_assign(&mut self, assign: &StmtAnnAssign) {
        let Some(value_expr) = assign.value.as_deref() else {
            self.unsupported_statement_span(span_of(assign), "annotation without a value");
            return;
        };
        let value = self.eval(value_expr);
        let Expr::Name(name) = &*assign.target else {
            self.blocker(
                span_of(&*assign.target),
                "assignment targets must be local names",
            );
            return;
        };
        let annotation = &*assign.annotation;
        let scalar = matches!(annotation, Expr::Name(n) if matches!(n.id.as_str(), "int" | "float" | "bool"));
        if !scalar {
            let text = self
                .ctx
                .source
                .get(span_of(annotation).range())
                .unwrap_or("?")
                .to_string();
            self.blocker(
                span_of(annotation),
                format!("unsupported local annotation type: {text}"),
            );
            return;
        }
        self.rebind(name.id.as_str(), value, span_of(assign));
    }

    fn aug_assign(&mut self, aug: &StmtAugAssign) {
        let Expr::Name(name) = &*aug.target else {
            self.blocker(
                span_of(&*aug.target),
                "assignment targets must be local names",
            );
            return;
        };
        let current = self.env.get(name.id.as_str()).cloned().unwrap_or_default();
        if current.is_plugin_typed() && self.tensor_aug_assign(aug, name.id.as_str(), &current) {
            return;
        }
        let value = self.eval(&aug.value);
        if current.is_plugin_typed() || value.is_plugin_typed() {
            self.blocker(
                self.first_line(span_of(aug)),
                "in-place augmented assignment on a plugin-typed value cannot preserve NumPy's aliasing semantics; use a plain assignment with a new value or keep the function on the Python fallback",
            );
            let op = aug.op.as_str();
            if let Some(last) = self.out.blockers.last_mut() {
                *last = last.clone().with_suggestion(format!(
                    "write it as a new binding, e.g. `{0} = {0} {op} ...`",
                    name.id
                ));
            }
            return;
        }
        let span = span_of(aug);
        let result = self.scalar_binop(aug.op, &current, &value, span, span);
        self.rebind(name.id.as_str(), result, span);
    }

    fn ret(&mut self, ret: &ruff_python_ast::StmtReturn) {
        self.reachable = false;
        self.returns += 1;
        let Some(expr) = ret.value.as_deref() else {
            self.out.diagnostics.push(
                Diagnostic::error(
                    codes::MISSING_RETURN,
                    "native function must end with `return <value>`",
                )
                .with_primary(span_of(ret), "returns None"),
            );
            return;
        };
        let value = self.eval(expr);
        if value.poisoned {
            return;
        }
        let expr_span = span_of(expr);
        let ty = match value.ty.as_deref() {
            Some(ty) if crate::lower::ir_type(ty).is_some() => ty.to_string(),
            other => {
                let shown = display_type(other);
                self.out.diagnostics.push(
                    Diagnostic::error(
                        codes::UNSUPPORTED_RETURN,
                        format!(
                            "return value of type {shown} is not supported by native functions yet"
                        ),
                    )
                    .with_primary(expr_span, format!("this is {shown}"))
                    .with_note(
                        "native functions return a marker-typed tensor, an int, a bool or a float",
                    ),
                );
                return;
            }
        };
        if !self.return_annotation_accepts(&ty, expr_span) {
            return;
        }
        let Some(id) = self.value_id(&value, expr_span) else {
            self.out.diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED_RETURN,
                    format!(
                        "return value of type {} is not supported by native functions yet",
                        display_type(Some(&ty))
                    ),
                )
                .with_primary(expr_span, "this value cannot be computed natively"),
            );
            return;
        };
        self.out.trace.ret_type = Some(ty);
        self.out.trace.stmt(TraceStmt::Return(id));
    }

    /// The trace value of `value`, placing a constant here if it is one. A value with
    /// neither (that nothing reported as not lowered, see [`Value::poisoned`]) is a frontend
    /// bug: it is reported as an internal error, so that the function stays on Python rather
    /// than be compiled without the statement that needed the value.
    pub(super) fn value_id(&mut self, value: &Value, span: Span) -> Option<ValueId> {
        match (value.id, value.constant) {
            (Some(id), _) => Some(id),
            (None, Some(Constant::Int(v))) => {
                Some(self.out.trace.push(ValueDef::ConstInt(v), span))
            }
            (None, Some(Constant::Bool(v))) => {
                Some(self.out.trace.push(ValueDef::ConstBool(v), span))
            }
            (None, Some(Constant::Float(v))) => {
                Some(self.out.trace.push(ValueDef::ConstFloat(v), span))
            }
            (None, None) => {
                if !value.poisoned {
                    self.out.diagnostics.push(
                        Diagnostic::error(
                            codes::INTERNAL,
                            format!(
                                "internal: a value of type {} has no native form here; the function stays on Python (please report this)",
                                display_type(value.ty.as_deref())
                            ),
                        )
                        .with_primary(span, "this value was not lowered"),
                    );
                }
                None
            }
        }
    }

    // ---------------------------------------------------------------- blocks

    /// Walks `body` as a block of its own: bindings it makes first are dropped at its end.
    /// Returns the environment at its end (`None` when control never falls off it) and its
    /// trace statements.
    fn sub_block(&mut self, body: &[Stmt]) -> (Option<HashMap<String, Value>>, Vec<TraceStmt>) {
        let saved_reachable = self.reachable;
        self.out.trace.open();
        self.walk_block(body);
        let falls_through = self.reachable;
        let block = self.out.trace.close();
        self.reachable = saved_reachable;
        (falls_through.then(|| self.env.clone()), block)
    }

    /// The names an `if` or loop may change that exist before it, in a stable order.
    fn assigned_before<'s>(&self, stmts: impl IntoIterator<Item = &'s Stmt>) -> Vec<String> {
        self.existing(stored_names(stmts))
    }

    /// Those of `names` that exist before the statement, in a stable order.
    fn existing(&self, names: BTreeSet<String>) -> Vec<String> {
        let names: BTreeSet<String> = names
            .into_iter()
            .filter(|n| {
                self.env
                    .get(n)
                    .is_some_and(|v| !v.poisoned && v.ty.is_some())
            })
            .collect();
        names.into_iter().collect()
    }

    /// A statement-bound value of `ty` named after `name`.
    pub(super) fn bound(&mut self, ty: &str, name: Option<&str>, span: Span) -> Value {
        let id = self
            .out
            .trace
            .alloc(ValueDef::Bound { ty: ty.to_string() }, span);
        if let Some(name) = name {
            self.out.trace.values[id].name = Some(name.to_string());
        }
        Value {
            ty: Some(ty.to_string()),
            id: Some(id),
            ..Value::default()
        }
    }

    fn if_stmt(&mut self, stmt_if: &StmtIf) {
        // The names stored by each clause and every clause after it, collected once from the
        // end: each level of the chain needs the names its whole rest stores, and walking the
        // rest again at every level made a chain of n `elif`s quadratic in time.
        let clauses = &stmt_if.elif_else_clauses;
        let mut rest_names = vec![BTreeSet::new(); clauses.len()];
        let mut after = BTreeSet::new();
        for (i, clause) in clauses.iter().enumerate().rev() {
            after.extend(stored_names(&clause.body));
            rest_names[i] = after.clone();
        }
        // `elif`/`else` clauses are nested `if`s in the `else` arm.
        self.if_chain(
            &stmt_if.test,
            &stmt_if.body,
            clauses,
            &rest_names,
            span_of(stmt_if),
        );
    }

    fn if_chain(
        &mut self,
        test: &Expr,
        body: &[Stmt],
        rest: &[ruff_python_ast::ElifElseClause],
        // `rest_names[i]`: the names `rest[i..]` store (see `if_stmt`).
        rest_names: &[BTreeSet<String>],
        span: Span,
    ) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            let cond = self.eval_condition(test);
            let cond_id = self.condition(&cond, test, "if");
            // The rest of the chain's names come collected: cloning the rest's statements at
            // every level made a chain of n `elif`s quadratic in memory (20,000 of them ran
            // out of it), and walking them quadratic in time.
            let mut names = stored_names(body);
            if let Some(rest) = rest_names.first() {
                names.extend(rest.iter().cloned());
            }
            let merged = self.existing(names);
            let before = self.env.clone();

            let (then_env, then_block) = self.sub_block(body);
            self.env = before.clone();
            let (else_env, else_block) = match rest.split_first() {
                None => (Some(self.env.clone()), Vec::new()),
                Some((clause, more)) => {
                    self.out.trace.open();
                    let saved = self.reachable;
                    match &clause.test {
                        Some(elif_test) => {
                            let more_names = rest_names.get(1..).unwrap_or_default();
                            self.if_chain(
                                elif_test,
                                &clause.body,
                                more,
                                more_names,
                                span_of(clause),
                            )
                        }
                        None => self.walk_block(&clause.body),
                    }
                    let falls = self.reachable;
                    self.reachable = saved;
                    let block = self.out.trace.close();
                    (falls.then(|| self.env.clone()), block)
                }
            };
            self.env = before;
            let Some(cond_id) = cond_id else {
                // The condition was not lowered (its finding explains why); keep going for the
                // rest of the findings.
                self.poison_names(&merged);
                return;
            };
            // When neither arm falls through, nothing follows the `if`: it yields nothing.
            let merged = if then_env.is_none() && else_env.is_none() {
                Vec::new()
            } else {
                merged
            };
            // The `if`'s results: every name an arm changes, typed as before the `if`.
            let results: Vec<(String, Value)> = merged
                .iter()
                .map(|name| {
                    let ty = before_type(&self.env, name);
                    (name.clone(), self.bound(&ty, Some(name), span))
                })
                .collect();
            let yield_of = |env: &Option<HashMap<String, Value>>| -> Option<Vec<ValueId>> {
                let env = env.as_ref()?;
                results
                    .iter()
                    .map(|(name, _)| env.get(name).and_then(|v| v.id))
                    .collect()
            };
            let mut then_block = then_block;
            let mut else_block = else_block;
            let mut lowered = true;
            for (env, block) in [(&then_env, &mut then_block), (&else_env, &mut else_block)] {
                if env.is_some() {
                    match yield_of(env) {
                        Some(values) => block.push(TraceStmt::Yield(values)),
                        None => lowered = false,
                    }
                }
            }
            if !lowered {
                self.poison_names(&merged);
                return;
            }
            self.out.trace.stmt(TraceStmt::If {
                cond: cond_id,
                then_block,
                else_block,
                results: results.iter().filter_map(|(_, v)| v.id).collect(),
            });
            for (name, value) in results {
                self.env.insert(name, value);
            }
            if then_env.is_none() && else_env.is_none() {
                self.reachable = false;
            }
        })
    }

    fn poison_names(&mut self, names: &[String]) {
        for name in names {
            self.env.insert(name.clone(), Value::poisoned());
        }
    }

    /// A condition must be exactly `bool`; its trace value when it is one.
    fn condition(&mut self, cond: &Value, test: &Expr, word: &str) -> Option<ValueId> {
        if cond.poisoned {
            return None;
        }
        match cond.ty.as_deref() {
            Some("bool") => self.value_id(cond, span_of(test)),
            other => {
                let shown = other.unwrap_or("unresolved").to_string();
                self.blocker(
                    span_of(test),
                    format!(
                        "{word} condition must be a bool in native functions, got {shown}; use an explicit comparison (e.g. 'if len(xs) > 0:' or 'if x != 0:')"
                    ),
                );
                None
            }
        }
    }

    fn loop_exit(&mut self, span: Span, is_continue: bool) {
        self.reachable = false;
        let Some(frame) = self.loops.last() else {
            self.unsupported_statement_span(span, if is_continue { "continue" } else { "break" });
            return;
        };
        let values: Option<Vec<ValueId>> = frame
            .carried
            .iter()
            .map(|name| self.env.get(name).and_then(|v| v.id))
            .collect();
        match values {
            Some(values) => self.out.trace.stmt(if is_continue {
                TraceStmt::Continue(values)
            } else {
                TraceStmt::Break(values)
            }),
            None => self.loop_poisoned = true,
        }
    }

    /// Binds the carried names of a loop to new values inside it; returns their initial
    /// values' trace ids and the bound args (`None` if one is not a lowered value).
    fn enter_loop(&mut self, carried: &[String], span: Span) -> Option<Vec<(ValueId, Value)>> {
        let mut entries = Vec::new();
        for name in carried {
            let init = self.env.get(name).cloned().unwrap_or_default();
            // A value with no native form (a tuple, None) cannot be carried: say so, rather
            // than take it for a value that was never lowered (`h = ()` then a loop that
            // rebinds `h` was an internal error, a cargo-fuzz find).
            if init.id.is_none() && init.constant.is_none() && !init.poisoned && init.ty.is_some() {
                let kind = format!(
                    "a loop carrying '{name}', a value of type {} with no native form",
                    display_type(init.ty.as_deref())
                );
                self.unsupported_statement_span(span, &kind);
                return None;
            }
            let init_id = self.value_id(&init, span)?;
            let ty = init.ty.clone()?;
            let arg = self.bound(&ty, Some(name), span);
            entries.push((init_id, arg));
        }
        for (name, (_, arg)) in carried.iter().zip(&entries) {
            self.env.insert(name.clone(), arg.clone());
        }
        Some(entries)
    }

    /// After a loop: the carried names become its results.
    fn leave_loop(
        &mut self,
        before: HashMap<String, Value>,
        carried: &[String],
        entries: &[(ValueId, Value)],
        span: Span,
    ) -> Vec<(ValueId, ValueId, ValueId)> {
        self.env = before;
        let mut triples = Vec::new();
        for (name, (init, arg)) in carried.iter().zip(entries) {
            let ty = arg.ty.clone().unwrap_or_default();
            let result = self.bound(&ty, Some(name), span);
            if let (Some(arg_id), Some(result_id)) = (arg.id, result.id) {
                triples.push((arg_id, *init, result_id));
            }
            self.env.insert(name.clone(), result);
        }
        triples
    }

    /// Walks a loop body with `frame` as the innermost loop; a normal end continues.
    fn loop_body(&mut self, body: &[Stmt], carried: &[String]) -> Vec<TraceStmt> {
        let saved_reachable = self.reachable;
        self.loops.push(LoopFrame {
            carried: carried.to_vec(),
        });
        self.out.trace.open();
        self.walk_block(body);
        if self.reachable {
            self.loop_exit(Span::new(0, 0), true);
        }
        let block = self.out.trace.close();
        self.loops.pop();
        self.reachable = saved_reachable;
        block
    }

    fn for_stmt(&mut self, stmt_for: &StmtFor) {
        let span = self.first_line(span_of(stmt_for));
        if !stmt_for.orelse.is_empty() {
            self.blocker(span, "for ... else is not supported in native functions");
        }
        let iteration = self.iteration(&stmt_for.iter);
        let target = match &*stmt_for.target {
            Expr::Name(name) => Some(name.id.to_string()),
            Expr::Tuple(tuple) => {
                self.blocker(
                    span_of(&*stmt_for.target),
                    format!(
                        "for-loop unpack target count {} does not match iterable item count 1",
                        tuple.elts.len()
                    ),
                );
                None
            }
            other => {
                self.blocker(span_of(other), "assignment targets must be local names");
                None
            }
        };
        if let Some(name) = &target {
            if self.env.contains_key(name) {
                self.blocker(
                    span,
                    format!(
                        "loop target rebinds an existing variable ({name}); use a fresh loop variable name in native functions"
                    ),
                );
            }
        }
        let before = self.env.clone();
        let carried: Vec<String> = self
            .assigned_before(&stmt_for.body)
            .into_iter()
            .filter(|n| Some(n) != target.as_ref())
            .collect();
        let entries = self.enter_loop(&carried, span);
        let index = self.bound("int", target.as_deref(), span);
        if let Some(name) = &target {
            self.env.insert(name.clone(), index.clone());
        }
        let saved_poison = std::mem::replace(&mut self.loop_poisoned, false);
        let body = self.loop_body(&stmt_for.body, &carried);
        let poisoned = std::mem::replace(&mut self.loop_poisoned, saved_poison);
        let (Some(entries), Some(iteration), Some(index_id), false) =
            (entries, iteration, index.id, poisoned)
        else {
            self.env = before;
            self.poison_names(&carried);
            return;
        };
        let triples = self.leave_loop(before, &carried, &entries, span);
        self.out.trace.stmt(TraceStmt::For {
            index: index_id,
            iteration,
            carried: triples,
            body,
        });
    }

    /// What a `for` iterates: `range(...)` (positive literal step) or a literal int list.
    fn iteration(&mut self, iter: &Expr) -> Option<TraceIteration> {
        match iter {
            Expr::Call(call) if matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "range" && !self.is_local("range")) =>
            {
                let args = &call.arguments.args;
                // Keyword arguments count as missing positional ones, as in the host.
                if !call.arguments.keywords.is_empty() || args.is_empty() || args.len() > 3 {
                    let got = args.len();
                    self.blocker(
                        span_of(call),
                        format!("range expects 1, 2, 3 positional argument(s), got {got}"),
                    );
                    return None;
                }
                let mut values = Vec::new();
                let mut ok = true;
                for arg in args.iter() {
                    let value = self.eval(arg);
                    match value.ty.as_deref() {
                        Some("int") if !value.poisoned => values.push(value),
                        Some(other) if !value.poisoned => {
                            self.blocker(
                                span_of(arg),
                                format!("range arguments must be int, got {other}"),
                            );
                            ok = false;
                        }
                        // A module global or attribute (`range(torch.float32)`): no type, no
                        // finding yet. Without one the loop would vanish from a native function.
                        None if !value.poisoned => {
                            self.blocker(
                                span_of(arg),
                                "range arguments must be int, got a value of unknown type (a module global or attribute)",
                            );
                            ok = false;
                        }
                        // Poisoned: its finding is already reported.
                        _ => ok = false,
                    }
                }
                if args.len() == 3 {
                    let positive_literal = matches!(&args[2], Expr::NumberLiteral(n)
                        if matches!(&n.value, Number::Int(i) if i.as_i64().is_some_and(|v| v > 0)));
                    if !positive_literal {
                        self.blocker(
                            span_of(&args[2]),
                            "range step must be a positive int literal in 0.1.8 native functions",
                        );
                        ok = false;
                    }
                }
                if !ok {
                    return None;
                }
                let span = span_of(call);
                let (start, stop, step) = match values.as_slice() {
                    [stop] => (Value::int_constant(0), stop.clone(), Value::int_constant(1)),
                    [start, stop] => (start.clone(), stop.clone(), Value::int_constant(1)),
                    [start, stop, step] => (start.clone(), stop.clone(), step.clone()),
                    _ => return None,
                };
                Some(TraceIteration::Range {
                    start: self.value_id(&start, span)?,
                    stop: self.value_id(&stop, span)?,
                    step: self.value_id(&step, span)?,
                })
            }
            Expr::List(list) => {
                let ints: Option<Vec<i64>> = list.elts.iter().map(super::int_literal).collect();
                match ints {
                    Some(ints) if !ints.is_empty() => Some(TraceIteration::Values(ints)),
                    Some(_) => {
                        self.blocker(
                            span_of(iter),
                            "for-loop iterable must be a supported list, range, enumerate, or zip",
                        );
                        self.blocker(
                            span_of(iter),
                            "empty list literals require a supported list[...] annotation",
                        );
                        None
                    }
                    None => {
                        self.unsupported_expression(
                            iter,
                            "list of non-int values as a loop iterable",
                        );
                        None
                    }
                }
            }
            other => {
                self.eval(other);
                self.blocker(
                    span_of(other),
                    "for-loop iterable must be a supported list, range, enumerate, or zip",
                );
                None
            }
        }
    }

    fn while_stmt(&mut self, stmt_while: &StmtWhile) {
        let span = self.first_line(span_of(stmt_while));
        if !stmt_while.orelse.is_empty() {
            self.blocker(span, "while ... else is not supported in native functions");
        }
        let before = self.env.clone();
        let carried = self.assigned_before(&stmt_while.body);
        let entries = self.enter_loop(&carried, span);
        self.out.trace.open();
        self.loop_tests += 1;
        let cond = self.eval_condition(&stmt_while.test);
        self.loop_tests -= 1;
        let cond_id = self.condition(&cond, &stmt_while.test, "while");
        let cond_block = self.out.trace.close();
        let saved_poison = std::mem::replace(&mut self.loop_poisoned, false);
        let body = self.loop_body(&stmt_while.body, &carried);
        let poisoned = std::mem::replace(&mut self.loop_poisoned, saved_poison);
        let (Some(entries), Some(cond_id), false) = (entries, cond_id, poisoned) else {
            self.env = before;
            self.poison_names(&carried);
            return;
        };
        let triples = self.leave_loop(before, &carried, &entries, span);
        self.out.trace.stmt(TraceStmt::While {
            carried: triples,
            cond_block,
            cond: cond_id,
            body,
        });
    }
}

fn before_type(env: &HashMap<String, Value>, name: &str) -> String {
    env.get(name).and_then(|v| v.ty.clone()).unwrap_or_default()
}

impl Value {
    pub(super) fn int_constant(value: i64) -> Value {
        Value {
            constant: Some(Constant::Int(value)),
            ..Value::typed("int")
        }
    }
}

/// Core's return-path rule: a statement list returns when it has a `return` or `raise` at
/// its top level, or an `if` with an `else` both of whose branches return. Loops never count.
pub(super) fn always_returns(body: &[Stmt]) -> bool {
    body.iter().any(|stmt| match stmt {
        Stmt::Return(_) | Stmt::Raise(_) => true,
        Stmt::If(stmt_if) => if_returns(&stmt_if.body, &stmt_if.elif_else_clauses),
        _ => false,
    })
}

fn if_returns(body: &[Stmt], rest: &[ruff_python_ast::ElifElseClause]) -> bool {
    // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
    rextio_ir::stack::deep(|| {
        if !always_returns(body) {
            return false;
        }
        match rest.split_first() {
            None => false,
            Some((clause, more)) => match clause.test {
                Some(_) => if_returns(&clause.body, more),
                None => always_returns(&clause.body),
            },
        }
    })
}

/// Core's parameter-alias rule: the `return <name>` statements that may return a
/// plugin-typed parameter (or an alias of one), in source order.
pub(super) fn alias_returns<'a>(
    body: &'a [Stmt],
    params: &[String],
) -> Vec<&'a ruff_python_ast::StmtReturn> {
    let mut set: BTreeSet<String> = params.iter().cloned().collect();
    let mut found = Vec::new();
    for stmt in body {
        match stmt {
            Stmt::Assign(assign) => {
                let source = alias_source(&assign.value, &set);
                for target in &assign.targets {
                    if let Expr::Name(name) = target {
                        if source {
                            set.insert(name.id.to_string());
                        } else {
                            set.remove(name.id.as_str());
                        }
                    }
                }
            }
            Stmt::AnnAssign(assign) => {
                if let (Expr::Name(name), Some(value)) = (&*assign.target, &assign.value) {
                    if alias_source(value, &set) {
                        set.insert(name.id.to_string());
                    } else {
                        set.remove(name.id.as_str());
                    }
                }
            }
            Stmt::Return(ret) => {
                if returns_member(ret, &set) {
                    found.push(ret);
                }
            }
            compound => {
                // Inside a compound statement assignments can only add names (to a fixpoint).
                loop {
                    let before = set.len();
                    let mut adder = AliasAdder { set: &mut set };
                    adder.visit_stmt(compound);
                    if set.len() == before {
                        break;
                    }
                }
                let mut returns = ReturnCollector::default();
                returns.visit_stmt(compound);
                found.extend(
                    returns
                        .returns
                        .into_iter()
                        .filter(|r| returns_member(r, &set)),
                );
            }
        }
    }
    found
}

fn returns_member(ret: &ruff_python_ast::StmtReturn, set: &BTreeSet<String>) -> bool {
    matches!(ret.value.as_deref(), Some(Expr::Name(name)) if set.contains(name.id.as_str()))
}

/// Whether an assigned value is a name in the alias set (directly or through a walrus).
fn alias_source(value: &Expr, set: &BTreeSet<String>) -> bool {
    // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
    rextio_ir::stack::deep(|| match value {
        Expr::Name(name) => set.contains(name.id.as_str()),
        Expr::Named(named) => alias_source(&named.value, set),
        _ => false,
    })
}

struct AliasAdder<'s> {
    set: &'s mut BTreeSet<String>,
}

impl<'a> Visitor<'a> for AliasAdder<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
                Stmt::Assign(assign) if alias_source(&assign.value, self.set) => {
                    for target in &assign.targets {
                        if let Expr::Name(name) = target {
                            self.set.insert(name.id.to_string());
                        }
                    }
                }
                Stmt::AnnAssign(assign) => {
                    if let (Expr::Name(name), Some(value)) = (&*assign.target, &assign.value) {
                        if alias_source(value, self.set) {
                            self.set.insert(name.id.to_string());
                        }
                    }
                }
                Stmt::For(stmt_for) => {
                    if let (Expr::Name(target), true) =
                        (&*stmt_for.target, alias_source(&stmt_for.iter, self.set))
                    {
                        self.set.insert(target.id.to_string());
                    }
                }
                _ => {}
            }
            ruff_python_ast::visitor::walk_stmt(self, stmt);
        })
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Named(named) = expr {
                if let (Expr::Name(target), true) =
                    (&*named.target, alias_source(&named.value, self.set))
                {
                    self.set.insert(target.id.to_string());
                }
            }
            ruff_python_ast::visitor::walk_expr(self, expr);
        })
    }
}

#[derive(Default)]
struct ReturnCollector<'a> {
    returns: Vec<&'a ruff_python_ast::StmtReturn>,
}

impl<'a> Visitor<'a> for ReturnCollector<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Return(ret) => self.returns.push(ret),
            other => ruff_python_ast::visitor::walk_stmt(self, other),
        })
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        // The default walk of an expression recurses once per level too.
        rextio_ir::stack::deep(|| ruff_python_ast::visitor::walk_expr(self, expr))
    }
}

/// The names `stmts` store (assign, bind as loop targets, ...), as `StoredNames` finds them.
fn stored_names<'s>(stmts: impl IntoIterator<Item = &'s Stmt>) -> BTreeSet<String> {
    let mut collector = StoredNames::default();
    for stmt in stmts {
        collector.visit_stmt(stmt);
    }
    collector.names.into_iter().collect()
}

/// `x.shape` of a tensor name `x`, as the name and the `x.shape` expression (`x.size()` as
/// `x.shape`, which its sizes equal).
fn shape_of(value: &Expr) -> Option<(&ast::ExprName, Expr)> {
    match value {
        Expr::Attribute(attribute) if attribute.attr.as_str() == "shape" => match &*attribute.value
        {
            Expr::Name(name) => Some((name, value.clone())),
            _ => None,
        },
        Expr::Call(call)
            if call.arguments.args.is_empty() && call.arguments.keywords.is_empty() =>
        {
            let Expr::Attribute(attribute) = &*call.func else {
                return None;
            };
            let Expr::Name(name) = &*attribute.value else {
                return None;
            };
            (attribute.attr.as_str() == "size").then(|| {
                let shape = Expr::Attribute(ast::ExprAttribute {
                    node_index: ast::AtomicNodeIndex::NONE,
                    range: call.range(),
                    value: attribute.value.clone(),
                    attr: ast::Identifier::new("shape", attribute.attr.range()),
                    ctx: ast::ExprContext::Load,
                });
                (name, shape)
            })
        }
        _ => None,
    }
}
