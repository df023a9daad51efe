//! User modules whose class is written in another file than the analyzed one
//! (`self.act_fn` of transformers' `SiLUActivation`, from `activations.py`, in
//! `LlamaMLP.forward` of `modeling_llama.py`): the Python side sends each such file once
//! ([`super::SourceFile`]) and a member names its file by index. The analysis stays one of
//! one file (its spans are byte ranges of the analyzed source, rendered with its name), so a
//! callee from another file is brought into it by three changes before it is inlined:
//!
//! - **Its imports.** Every free name of the callee that its own file imports (`F`, `math`,
//!   `torch`) is renamed to a fresh name bound, in the analysis's imports, to the same dotted
//!   path: it resolves as its file resolves it, whatever the analyzed file imports. A free
//!   name its file (or the analyzed one) binds otherwise (a module-level function or
//!   constant) is refused: it would resolve to nothing, or to the analyzed file's name.
//! - **Its spans.** Every node of the callee is moved to the call's span (`self.act_fn`): a
//!   diagnostic of its code points at the call that brought it in, in the analyzed file, and
//!   the `RXT093`s found inside it say the callee's own `file:line` in their message.
//! - **Its syntax.** Only statements and expressions whose every span [`relocate`] moves are
//!   inlined (assignments, `return`, `if`, `for`, `while`, expressions without lambdas,
//!   comprehensions or f-strings); anything else is refused with its reason.

use std::collections::HashSet;

use ruff_python_ast::statement_visitor::{walk_stmt, StatementVisitor};
use ruff_python_ast::visitor::transformer::{
    walk_body, walk_elif_else_clause, walk_expr, walk_keyword, walk_stmt as walk_stmt_mut,
    Transformer,
};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::TextRange;

use crate::depth::Ast;
use crate::imports::ImportMap;

/// One file other than the analyzed one, parsed once per analysis.
pub(super) struct Foreign {
    pub path: String,
    pub text: String,
    /// `None` where the text does not parse (its callees are refused).
    pub ast: Option<Ast>,
    pub imports: ImportMap,
    /// Every name its module level binds.
    pub globals: HashSet<String>,
}

impl Foreign {
    pub(super) fn new(path: &str, text: &str) -> Foreign {
        let ast = crate::parse::parse_module(text).ok();
        let (imports, globals) = match &ast {
            Some(ast) => (ImportMap::from_module(ast), globals(&ast.body)),
            None => (ImportMap::default(), HashSet::new()),
        };
        Foreign {
            path: path.to_string(),
            text: text.to_string(),
            ast,
            imports,
            globals,
        }
    }

    /// The file's name as diagnostics write it (its last path component).
    pub(super) fn file_name(&self) -> &str {
        self.path.rsplit(['/', '\\']).next().unwrap_or(&self.path)
    }
}

/// Every name a module's top level binds: functions, classes, assignments, imports.
pub(super) fn globals(body: &[Stmt]) -> HashSet<String> {
    let mut names = HashSet::new();
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(def) => {
                names.insert(def.name.to_string());
            }
            Stmt::ClassDef(class) => {
                names.insert(class.name.to_string());
            }
            Stmt::Import(import) => {
                for alias in &import.names {
                    let bound = alias.asname.as_ref().map_or_else(
                        || alias.name.split('.').next().unwrap_or("").to_string(),
                        |a| a.to_string(),
                    );
                    names.insert(bound);
                }
            }
            Stmt::ImportFrom(from) => {
                for alias in &from.names {
                    names.insert(alias.asname.as_ref().unwrap_or(&alias.name).to_string());
                }
            }
            other => {
                let mut stores = Stores::default();
                stores.visit_stmt(other);
                names.extend(stores.0);
            }
        }
    }
    names
}

/// Why `body` cannot be moved into another file's analysis (a statement or expression
/// whose spans [`relocate`] does not move), or `None`.
pub(super) fn unsupported_syntax(body: &[Stmt]) -> Option<&'static str> {
    #[derive(Default)]
    struct Check(Option<&'static str>);
    impl<'a> Visitor<'a> for Check {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::Assign(_)
                | Stmt::AnnAssign(_)
                | Stmt::AugAssign(_)
                | Stmt::Return(_)
                | Stmt::Expr(_)
                | Stmt::If(_)
                | Stmt::For(_)
                | Stmt::While(_)
                | Stmt::Pass(_) => visitor::walk_stmt(self, stmt),
                _ => self.0 = Some(
                    "a statement other than assignments, `return`, `if`, `for`, `while` and `pass`",
                ),
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
            rextio_ir::stack::deep(|| match expr {
                Expr::Lambda(_)
                | Expr::ListComp(_)
                | Expr::SetComp(_)
                | Expr::DictComp(_)
                | Expr::Generator(_)
                | Expr::FString(_)
                | Expr::TString(_)
                | Expr::Yield(_)
                | Expr::YieldFrom(_)
                | Expr::Await(_) => {
                    self.0 = Some("a lambda, comprehension, f-string, `yield` or `await`")
                }
                _ => visitor::walk_expr(self, expr),
            })
        }
    }
    let mut check = Check::default();
    visitor::walk_body(&mut check, body);
    check.0
}

/// Every span of `body` (statements, expressions, keywords, attribute names, string parts)
/// moved to `range` (the call's, in the analyzed file). [`unsupported_syntax`] holds `body`
/// to the nodes this reaches.
pub(super) fn relocate(body: &mut [Stmt], range: TextRange) {
    walk_body(&Relocate(range), body);
}

/// A default value of the callee's, moved as its body is.
pub(super) fn relocate_expr(expr: &mut Expr, range: TextRange) {
    Relocate(range).visit_expr(expr);
}

struct Relocate(TextRange);

impl Transformer for Relocate {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        match stmt {
            Stmt::Assign(s) => s.range = self.0,
            Stmt::AnnAssign(s) => s.range = self.0,
            Stmt::AugAssign(s) => s.range = self.0,
            Stmt::Return(s) => s.range = self.0,
            Stmt::Expr(s) => s.range = self.0,
            Stmt::If(s) => s.range = self.0,
            Stmt::For(s) => s.range = self.0,
            Stmt::While(s) => s.range = self.0,
            Stmt::Pass(s) => s.range = self.0,
            _ => {}
        }
        walk_stmt_mut(self, stmt);
    }

    fn visit_elif_else_clause(&self, clause: &mut ast::ElifElseClause) {
        clause.range = self.0;
        walk_elif_else_clause(self, clause);
    }

    fn visit_expr(&self, expr: &mut Expr) {
        // Every expression's range (ruff's relocation walks the whole expression), then the
        // names and literal parts inside it, which that does not reach.
        ruff_python_ast::relocate::relocate_expr(expr, self.0);
        Parts(self.0).visit_expr(expr);
    }
}

/// The spans inside an expression that are not an expression's: attribute names, a call's
/// arguments, keywords, string literal parts.
struct Parts(TextRange);

impl Transformer for Parts {
    fn visit_expr(&self, expr: &mut Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            match expr {
                Expr::Attribute(attribute) => attribute.attr.range = self.0,
                Expr::Call(call) => call.arguments.range = self.0,
                _ => {}
            }
            walk_expr(self, expr);
        })
    }

    fn visit_keyword(&self, keyword: &mut ast::Keyword) {
        keyword.range = self.0;
        if let Some(arg) = &mut keyword.arg {
            arg.range = self.0;
        }
        walk_keyword(self, keyword);
    }

    fn visit_string_literal(&self, literal: &mut ast::StringLiteral) {
        literal.range = self.0;
    }

    fn visit_bytes_literal(&self, literal: &mut ast::BytesLiteral) {
        literal.range = self.0;
    }
}

/// The free names of a callee's `body` (not `locals`, not made by the rewrite): each one its
/// file imports renamed by `rename` (which binds the new name to the import's path); a name
/// the file or the analyzed file binds at module level otherwise is `Err` with that name.
/// Others (builtins: `len`, `float`) stay as written.
pub(super) fn resolve_free(
    body: &mut [Stmt],
    locals: &HashSet<String>,
    foreign: &Foreign,
    main_globals: &HashSet<String>,
    rename: &dyn Fn(&str, &str) -> String,
) -> Result<(), String> {
    let mut free = Free {
        locals,
        found: Vec::new(),
    };
    visitor::walk_body(&mut free, body);
    let mut renames = std::collections::HashMap::new();
    for name in free.found {
        if renames.contains_key(&name) {
            continue;
        }
        if let Some(path) = foreign.imports.resolve_name(&name) {
            let new = rename(&name, path);
            renames.insert(name, new);
        } else if foreign.globals.contains(&name) || main_globals.contains(&name) {
            return Err(name);
        }
    }
    walk_body(&super::inline::Rename(&renames), body);
    Ok(())
}

struct Free<'l> {
    locals: &'l HashSet<String>,
    found: Vec<String>,
}

impl<'a> Visitor<'a> for Free<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Name(name) = expr {
                if name.ctx == ExprContext::Load && !self.locals.contains(name.id.as_str()) {
                    self.found.push(name.id.to_string());
                }
            }
            visitor::walk_expr(self, expr);
        })
    }
}

/// Every name a statement stores (assignment and loop targets, walrus), not in nested
/// functions or classes.
#[derive(Default)]
pub(super) struct Stores(pub Vec<String>);

impl<'a> StatementVisitor<'a> for Stores {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let mut targets = super::inline::Stores::default();
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    visitor::Visitor::visit_expr(&mut targets, target);
                }
            }
            Stmt::AnnAssign(assign) => visitor::Visitor::visit_expr(&mut targets, &assign.target),
            Stmt::AugAssign(aug) => visitor::Visitor::visit_expr(&mut targets, &aug.target),
            Stmt::For(stmt_for) => visitor::Visitor::visit_expr(&mut targets, &stmt_for.target),
            _ => {}
        }
        self.0.extend(targets.0);
        walk_stmt(self, stmt);
    }
}
