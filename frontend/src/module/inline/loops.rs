//! The loops over a module's lists that [`super::Inliner`] unrolls: `for layer in
//! self.blocks:` over a ModuleList (one copy of the body per layer, `layer(...)` a call of
//! that layer) or a ParameterList (`layer` that parameter), and `for i in range(n):` whose
//! body indexes a list by `i` (`self.kernels[i]`), `n` a literal, an int attribute
//! (`self._num_layers`) or `len(self.<list>)`: one copy per index, `i` that literal.

use std::collections::HashMap;

use ruff_python_ast::statement_visitor::StatementVisitor;
use ruff_python_ast::visitor::transformer::{walk_body, walk_expr, Transformer};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, AtomicNodeIndex, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::{assign, Inliner, LoopExits, Rename, Scope, Stores, Target, Uses};
use crate::module::{Constant, Member};

impl Inliner<'_> {
    /// `for layer in self.blocks: ...` unrolled into `out`: one copy of the body per item,
    /// in which `layer(...)` is a call of that item; then the `else` block.
    pub(super) fn unroll<'d>(
        &self,
        stmt_for: &ast::StmtFor,
        items: &'d [Member],
        list: &Target,
        out: &mut ast::Suite,
        scope: &Scope<'d>,
    ) {
        // Refused at the iterated list, where the loop is also an attribute access that is
        // not lowered (`RXT031`, dropped for this).
        let mut refused = |why: &str| {
            self.refuse(
                stmt_for.iter.range(),
                format!(
                    "the loop over the ModuleList `{}` is not compiled: {why}",
                    list.display
                ),
                "a loop over a ModuleList is unrolled, one copy of its body per layer",
            );
            out.push(Stmt::For(stmt_for.clone()));
        };
        let Expr::Name(variable) = &*stmt_for.target else {
            return refused("it binds more than one name");
        };
        let mut exits = LoopExits::default();
        exits.visit_body(&stmt_for.body);
        if !exits.0.is_empty() {
            return refused("its body has a `break` or `continue`");
        }
        let variable = variable.id.to_string();
        let mut stores = Stores::default();
        visitor::walk_body(&mut stores, &stmt_for.body);
        let tensors = items.iter().any(|i| matches!(i, Member::Tensor { .. }));
        if tensors && stores.0.contains(&variable) {
            return refused(&format!("its body assigns `{variable}`"));
        }
        let mut last = None;
        for (index, item) in items.iter().enumerate() {
            if let Member::Tensor { hidden } = item {
                // A ParameterList's item: `p` is that parameter's hidden name in this copy.
                let renames = HashMap::from([(variable.clone(), hidden.clone())]);
                let mut copy = stmt_for.body.clone();
                walk_body(&Rename(&renames), &mut copy);
                self.body(&mut copy, scope);
                out.extend(copy);
                last = Some(hidden);
                continue;
            }
            last = None;
            let mut aliases = scope.aliases.clone();
            aliases.insert(
                variable.clone(),
                Target {
                    member: item,
                    display: format!("{}[{index}]", list.display),
                    path: format!("{}_{index}", list.path),
                },
            );
            let inner = Scope {
                receiver: scope.receiver.clone(),
                description: scope.description,
                path: scope.path.clone(),
                aliases,
                source: scope.source,
            };
            let mut copy = stmt_for.body.clone();
            self.body(&mut copy, &inner);
            let mut uses = Uses {
                name: &variable,
                found: Vec::new(),
            };
            visitor::walk_body(&mut uses, &copy);
            for range in uses.found {
                self.refuse(
                    range,
                    format!(
                        "`{variable}` stands for a layer of the ModuleList `{}`: only its calls are compiled",
                        list.display
                    ),
                    "used here other than called",
                );
            }
            out.extend(copy);
        }
        if let Some(hidden) = last {
            // After the loop its variable is the last item, as Python leaves it.
            let range = stmt_for.target.range();
            out.push(assign(
                &variable,
                super::name(hidden, range, ExprContext::Load),
                range,
            ));
        }
        let mut orelse = stmt_for.orelse.clone();
        self.body(&mut orelse, scope);
        out.extend(orelse);
    }

    /// The number of iterations of `range(n)` where `n` is known now: an int literal, an int
    /// attribute (`self._num_layers`) or `len(self.<list>)` ([`Inliner::length`]).
    pub(super) fn range_count(&self, iter: &Expr, scope: &Scope) -> Option<i64> {
        let Expr::Call(call) = iter else {
            return None;
        };
        let Expr::Name(func) = &*call.func else {
            return None;
        };
        if func.id.as_str() != "range"
            || self.globals.contains("range")
            || call.arguments.args.len() != 1
            || !call.arguments.keywords.is_empty()
        {
            return None;
        }
        let count = &call.arguments.args[0];
        match count {
            Expr::NumberLiteral(_) => super::literal_index(count),
            Expr::Attribute(_) => match scope.target(count)?.member {
                Member::Constant {
                    value: Constant::Int(n),
                } => Some(*n),
                _ => None,
            },
            other => self.length(other, scope).map(|n| n as i64),
        }
    }

    /// The length of `len(self.<list>)` (a ModuleList, ParameterList or Sequential), where
    /// `len` is the builtin (the file binds no `len`).
    pub(super) fn length(&self, expr: &Expr, scope: &Scope) -> Option<usize> {
        let Expr::Call(call) = expr else {
            return None;
        };
        let Expr::Name(func) = &*call.func else {
            return None;
        };
        if func.id.as_str() != "len"
            || self.globals.contains("len")
            || call.arguments.args.len() != 1
            || !call.arguments.keywords.is_empty()
        {
            return None;
        }
        match scope.target(&call.arguments.args[0])?.member {
            Member::List { items } => Some(items.len()),
            Member::Sequential { layers } => Some(layers.len()),
            _ => None,
        }
    }

    /// `for i in range(n):` whose body indexes a list by `i`, unrolled into `out`: one copy
    /// of the body per index, `i` bound to it first and written as that literal in it (so
    /// `self.kernels[i]` is `self.kernels[0]`, ...); then the `else` block. Whether it was
    /// unrolled (or refused); a loop whose body indexes no list stays a loop.
    pub(super) fn unroll_range(
        &self,
        stmt_for: &ast::StmtFor,
        count: i64,
        out: &mut ast::Suite,
        scope: &Scope,
    ) -> bool {
        let Expr::Name(variable) = &*stmt_for.target else {
            return false;
        };
        let variable = variable.id.to_string();
        let mut indexed = IndexedBy {
            scope,
            variable: &variable,
            found: false,
        };
        visitor::walk_body(&mut indexed, &stmt_for.body);
        if !indexed.found {
            return false;
        }
        let mut refused = |why: &str| {
            self.refuse(
                stmt_for.iter.range(),
                format!("the loop over `range` indexing a module's list is not compiled: {why}"),
                "a loop that indexes a list by its variable is unrolled, one copy per index",
            );
            out.push(Stmt::For(stmt_for.clone()));
            true
        };
        let mut exits = LoopExits::default();
        exits.visit_body(&stmt_for.body);
        if !exits.0.is_empty() {
            return refused("its body has a `break` or `continue`");
        }
        let mut stores = Stores::default();
        visitor::walk_body(&mut stores, &stmt_for.body);
        if stores.0.contains(&variable) {
            return refused(&format!("its body assigns `{variable}`"));
        }
        if count > UNROLLED {
            return refused(&format!(
                "it runs {count} times, more than the {UNROLLED} copies unrolled"
            ));
        }
        let range = stmt_for.target.range();
        for index in 0..count.max(0) {
            let mut copy = stmt_for.body.clone();
            walk_body(
                &Substitute {
                    name: &variable,
                    value: index,
                },
                &mut copy,
            );
            copy.insert(0, assign(&variable, int(index, range), range));
            self.body(&mut copy, scope);
            out.extend(copy);
        }
        let mut orelse = stmt_for.orelse.clone();
        self.body(&mut orelse, scope);
        out.extend(orelse);
        true
    }

    /// `len(self.<list>)` written as its length, a literal, everywhere in `body`.
    pub(crate) fn constant_lengths(&self, body: &mut [Stmt], scope: &Scope) {
        walk_body(
            &Lengths {
                inliner: self,
                scope,
            },
            body,
        );
    }
}

/// The most copies of a `range` loop's body unrolled.
const UNROLLED: i64 = 256;

fn int(value: i64, range: TextRange) -> Expr {
    Expr::NumberLiteral(ast::ExprNumberLiteral {
        node_index: AtomicNodeIndex::NONE,
        range,
        value: ast::Number::Int(ast::Int::from(value.unsigned_abs())),
    })
}

/// Whether a body indexes one of the scope's lists by `variable` (`self.kernels[i]`).
struct IndexedBy<'s, 'd, 'v> {
    scope: &'s Scope<'d>,
    variable: &'v str,
    found: bool,
}

impl<'a> Visitor<'a> for IndexedBy<'_, '_, '_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Subscript(subscript) = expr {
                let by_variable =
                    matches!(&*subscript.slice, Expr::Name(n) if n.id.as_str() == self.variable);
                let of_list = self.scope.target(&subscript.value).is_some_and(|t| {
                    matches!(t.member, Member::List { .. } | Member::Sequential { .. })
                });
                self.found |= by_variable && of_list;
            }
            visitor::walk_expr(self, expr);
        })
    }
}

/// The loads of `name` written as the int `value`.
struct Substitute<'n> {
    name: &'n str,
    value: i64,
}

impl Transformer for Substitute<'_> {
    fn visit_expr(&self, expr: &mut Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Name(n) = expr {
                if n.id.as_str() == self.name && n.ctx == ExprContext::Load {
                    *expr = int(self.value, n.range);
                    return;
                }
            }
            walk_expr(self, expr);
        })
    }
}

/// `len(self.<list>)` as its length.
struct Lengths<'i, 's, 'c, 'd> {
    inliner: &'i Inliner<'s>,
    scope: &'c Scope<'d>,
}

impl Transformer for Lengths<'_, '_, '_, '_> {
    fn visit_expr(&self, expr: &mut Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Some(n) = self.inliner.length(expr, self.scope) {
                *expr = int(n as i64, expr.range());
                return;
            }
            walk_expr(self, expr);
        })
    }
}
