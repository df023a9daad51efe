//! Python's local names of a function: every name the body binds anywhere (an assignment, a
//! `for` or `with` target, an import, a nested `def`/`class`, an `except ... as`, a walrus,
//! a `match` capture, `del`), minus those declared `global` or `nonlocal`.
//!
//! Python decides scope per function, not per statement: a name bound anywhere in the body is
//! local in all of it, so `range(k)` in a function that assigns `range` later reads an
//! unbound local (`UnboundLocalError`), not the builtin. The walker resolves a name as an
//! import, a builtin or a module global only when it is not one of these.

use std::collections::HashSet;

use ruff_python_ast::visitor::{walk_expr, walk_pattern, walk_stmt, Visitor};
use ruff_python_ast::{ExceptHandler, Expr, Pattern, Stmt, StmtFunctionDef};

/// The names `def` binds as locals: its parameters and every name its body binds.
pub(crate) fn local_names(def: &StmtFunctionDef) -> HashSet<String> {
    let mut collector = Collector::default();
    for param in def.parameters.iter() {
        collector.bound.insert(param.name().to_string());
    }
    for stmt in &def.body {
        collector.visit_stmt(stmt);
    }
    let Collector {
        mut bound,
        declared,
    } = collector;
    bound.retain(|name| !declared.contains(name));
    bound
}

#[derive(Default)]
struct Collector {
    bound: HashSet<String>,
    /// Names declared `global` or `nonlocal`: bound in another scope.
    declared: HashSet<String>,
}

impl Collector {
    /// The names an assignment target binds (`a`, `a, (b, *c)`); an attribute or a subscript
    /// binds none.
    fn target(&mut self, target: &Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| match target {
            Expr::Name(name) => {
                self.bound.insert(name.id.to_string());
            }
            Expr::Tuple(tuple) => tuple.elts.iter().for_each(|e| self.target(e)),
            Expr::List(list) => list.elts.iter().for_each(|e| self.target(e)),
            Expr::Starred(starred) => self.target(&starred.value),
            _ => {}
        })
    }
}

impl<'a> Visitor<'a> for Collector {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            match stmt {
                // A nested scope binds its name here; its body is its own.
                Stmt::FunctionDef(def) => {
                    self.bound.insert(def.name.to_string());
                    return;
                }
                Stmt::ClassDef(class) => {
                    self.bound.insert(class.name.to_string());
                    return;
                }
                Stmt::Assign(assign) => assign.targets.iter().for_each(|t| self.target(t)),
                Stmt::AnnAssign(assign) => self.target(&assign.target),
                Stmt::AugAssign(assign) => self.target(&assign.target),
                Stmt::For(stmt_for) => self.target(&stmt_for.target),
                Stmt::With(with) => {
                    for item in &with.items {
                        if let Some(vars) = &item.optional_vars {
                            self.target(vars);
                        }
                    }
                }
                Stmt::Delete(delete) => delete.targets.iter().for_each(|t| self.target(t)),
                Stmt::Import(import) => {
                    for alias in &import.names {
                        // `import a.b` binds `a`.
                        let name = alias.asname.as_ref().unwrap_or(&alias.name);
                        let first = name.as_str().split('.').next().unwrap_or_default();
                        self.bound.insert(first.to_string());
                    }
                }
                Stmt::ImportFrom(import) => {
                    for alias in &import.names {
                        let name = alias.asname.as_ref().unwrap_or(&alias.name);
                        self.bound.insert(name.to_string());
                    }
                }
                Stmt::Global(global) => {
                    let names = global.names.iter().map(|n| n.to_string());
                    self.declared.extend(names);
                }
                Stmt::Nonlocal(nonlocal) => {
                    let names = nonlocal.names.iter().map(|n| n.to_string());
                    self.declared.extend(names);
                }
                _ => {}
            }
            walk_stmt(self, stmt);
        })
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            match expr {
                // A walrus binds in the function's scope, also inside a comprehension.
                Expr::Named(named) => self.target(&named.target),
                // A lambda's parameters and body are its own scope.
                Expr::Lambda(_) => return,
                _ => {}
            }
            walk_expr(self, expr);
        })
    }

    fn visit_except_handler(&mut self, handler: &'a ExceptHandler) {
        let ExceptHandler::ExceptHandler(handler_) = handler;
        if let Some(name) = &handler_.name {
            self.bound.insert(name.to_string());
        }
        ruff_python_ast::visitor::walk_except_handler(self, handler);
    }

    fn visit_pattern(&mut self, pattern: &'a Pattern) {
        let name = match pattern {
            Pattern::MatchAs(p) => p.name.as_ref(),
            Pattern::MatchStar(p) => p.name.as_ref(),
            Pattern::MatchMapping(p) => p.rest.as_ref(),
            _ => None,
        };
        if let Some(name) = name {
            self.bound.insert(name.to_string());
        }
        walk_pattern(self, pattern);
    }
}

#[cfg(test)]
mod tests {
    use super::local_names;
    use ruff_python_ast::Stmt;

    fn locals_of(source: &str) -> Vec<String> {
        let parsed = ruff_python_parser::parse_module(source).expect("parses");
        let Some(Stmt::FunctionDef(def)) = parsed.suite().first() else {
            panic!("a def");
        };
        let mut names: Vec<String> = local_names(def).into_iter().collect();
        names.sort();
        names
    }

    /// Each binding form Python knows; the expected names are what CPython 3.11's `symtable`
    /// calls local in `f` (`is_local()`) for this source.
    #[test]
    fn every_binding_form_is_a_local() {
        let source = "\
def f(p, *args, q=1, **kw):
    a = 1
    b, (c, *d) = 1, (2, 3)
    e: int
    g += 1
    for h in range(3):
        pass
    with open(p) as (i, j):
        pass
    try:
        pass
    except E as k:
        pass
    import m.n
    import o as r
    from s import t, u as v
    def w(): x = 1
    class y: z = 1
    del aa
    if (bb := 1):
        pass
    [cc for dd in ee if (ff := dd)]
    lambda gg: (hh := gg)
    match p:
        case [ii, *jj]: pass
        case {'k': ll, **mm}: pass
        case nn: pass
    global gl
    gl = 2
    obj.attr = 1
    obj[0] = 2
";
        assert_eq!(
            locals_of(source),
            [
                "a", "aa", "args", "b", "bb", "c", "d", "e", "ff", "g", "h", "i", "ii", "j", "jj",
                "k", "kw", "ll", "m", "mm", "nn", "p", "q", "r", "t", "v", "w", "y"
            ]
        );
    }
}
