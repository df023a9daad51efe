//! How deep a parsed module nests, the stated limit on it (RXT035), and a drop of the syntax
//! tree that does not recurse.
//!
//! Every walker after the parser recurses once per nesting level (an operand is walked
//! before its user), and runs each step through `rextio_ir::stack::deep`, so no depth
//! overflows a thread's stack; the limit here bounds the memory those stacks take, as
//! CPython refuses source nested too deep for it (`RecursionError: maximum recursion depth
//! exceeded during compilation`; CPython 3.11 with its default recursion limit refuses a chain
//! of 3,000 method calls, where this limit takes 125,000).
//!
//! Depth is counted in syntax nodes: `x.relu()` is a call of an attribute of `x`, two levels,
//! so a chain of `n` method calls is `2n` levels deep; each statement, call, operator,
//! subscript and argument list is one level.
//!
//! The parser's tree owns its children through `Box`es, so dropping it recurses once per level
//! too, in code that is not ours: [`Ast`] takes the tree apart with an explicit worklist
//! before anything of it is dropped.

use std::cell::RefCell;
use std::ops::Deref;

use ruff_python_ast::visitor::source_order::{SourceOrderVisitor, TraversalSignal};
use ruff_python_ast::visitor::transformer::{walk_expr, walk_pattern, walk_stmt, Transformer};
use ruff_python_ast::{
    AnyNodeRef, AtomicNodeIndex, Expr, ExprNoneLiteral, ModModule, Pattern, PatternMatchAs, Stmt,
    StmtPass,
};
use ruff_text_size::{Ranged, TextRange};

/// The deepest nesting compiled: 250,000 syntax levels, a chain of 125,000 method calls
/// (docs/reliability.md, "Long programs", for what a chain of 100,000 costs).
pub const MAX_DEPTH: usize = 250_000;

/// A parsed module, dropped without recursion (see the module doc).
pub struct Ast {
    module: ModModule,
}

impl Ast {
    pub fn new(module: ModModule) -> Ast {
        Ast { module }
    }
}

impl Deref for Ast {
    type Target = ModModule;

    fn deref(&self) -> &ModModule {
        &self.module
    }
}

impl Drop for Ast {
    fn drop(&mut self) {
        dismantle(std::mem::take(&mut self.module.body));
    }
}

/// The deepest node of `module`: its depth (a module-level statement is 1) and range.
pub fn deepest(module: &ModModule) -> (usize, TextRange) {
    let mut deepest = (0, TextRange::default());
    let mut children = Children::default();
    let mut stack: Vec<(AnyNodeRef<'_>, usize)> = module
        .body
        .iter()
        .map(|stmt| (AnyNodeRef::from(stmt), 1))
        .collect();
    while let Some((node, depth)) = stack.pop() {
        if depth > deepest.0 {
            deepest = (depth, node.range());
        }
        node.visit_source_order(&mut children);
        stack.extend(children.found.drain(..).map(|child| (child, depth + 1)));
    }
    deepest
}

/// Collects the direct children of the node it is run over: every child is entered and
/// skipped, so nothing below it is visited.
#[derive(Default)]
struct Children<'a> {
    found: Vec<AnyNodeRef<'a>>,
}

impl<'a> SourceOrderVisitor<'a> for Children<'a> {
    fn enter_node(&mut self, node: AnyNodeRef<'a>) -> TraversalSignal {
        self.found.push(node);
        TraversalSignal::Skip
    }
}

/// Drops `body` one node at a time: each statement, expression and pattern has its children
/// of those kinds moved out (placeholders left behind) before it is dropped, so no drop
/// recurses more than one level into them.
fn dismantle(body: impl IntoIterator<Item = Stmt>) {
    let detach = Detach::default();
    detach.stmts.borrow_mut().extend(body);
    loop {
        // Each `pop` ends its borrow before the walk pushes the children.
        let stmt = detach.stmts.borrow_mut().pop();
        if let Some(mut stmt) = stmt {
            walk_stmt(&detach, &mut stmt);
            continue;
        }
        let expr = detach.exprs.borrow_mut().pop();
        if let Some(mut expr) = expr {
            walk_expr(&detach, &mut expr);
            continue;
        }
        let pattern = detach.patterns.borrow_mut().pop();
        if let Some(mut pattern) = pattern {
            walk_pattern(&detach, &mut pattern);
            continue;
        }
        break;
    }
}

/// Moves the children a walk reaches out of their parent (`Transformer` walks by `&self`,
/// hence the cells).
#[derive(Default)]
struct Detach {
    stmts: RefCell<Vec<Stmt>>,
    exprs: RefCell<Vec<Expr>>,
    patterns: RefCell<Vec<Pattern>>,
}

impl Transformer for Detach {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        let placeholder = Stmt::Pass(StmtPass {
            node_index: AtomicNodeIndex::default(),
            range: TextRange::default(),
        });
        self.stmts
            .borrow_mut()
            .push(std::mem::replace(stmt, placeholder));
    }

    fn visit_expr(&self, expr: &mut Expr) {
        let placeholder = Expr::NoneLiteral(ExprNoneLiteral::default());
        self.exprs
            .borrow_mut()
            .push(std::mem::replace(expr, placeholder));
    }

    fn visit_pattern(&self, pattern: &mut Pattern) {
        let placeholder = Pattern::MatchAs(PatternMatchAs {
            node_index: AtomicNodeIndex::default(),
            range: TextRange::default(),
            pattern: None,
            name: None,
        });
        self.patterns
            .borrow_mut()
            .push(std::mem::replace(pattern, placeholder));
    }
}
