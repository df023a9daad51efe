//! Functions and modules: typed parameters, one result type, the expression arena, the body
//! of structured statements ([`Stmt`]: `let`, `for`, `while`, `if`, and the terminators that
//! leave them), the side tables (spans, source names), and the one analysis of a body that
//! both the executor and generated code read ([`ReusedWeights`]).

use la_arena::{Arena, ArenaMap};
use serde::Serialize;

use crate::expr::{Expr, ExprId, ExprKind};
use crate::types::Type;

/// A byte range in the source file a function was lowered from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
}

/// Structured statements, executed in order within their [`Block`].
///
/// Expressions are pure and live in the function's arena; a [`Stmt::Let`] says where one is
/// evaluated (so an expression inside a loop body is evaluated once per iteration, and one in
/// an `if` arm only when that arm runs). Control flow is structured (MLIR's `scf` style): a
/// loop carries the values it changes as explicit [`Carried`] values, an `if` yields its
/// results, and every value a statement binds (a loop index, a carried value, a result) is an
/// [`ExprKind::Bound`](crate::expr::ExprKind::Bound) expression that no `Let` evaluates.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Evaluates this expression here. Every expression that is not `Bound` is evaluated by
    /// exactly one `Let`.
    Let(ExprId),
    /// `for index in range(start, stop, step)`, or over literal values.
    For(Box<ForLoop>),
    /// `while cond: body`.
    While(Box<WhileLoop>),
    /// `if cond: then_block else: else_block`.
    If(Box<IfElse>),
    /// Ends the current iteration of the innermost loop; the values (one per carried value)
    /// are what the next iteration, or the loop's results if it was the last, start from.
    Continue(Vec<ExprId>),
    /// Leaves the innermost loop; the values (one per carried value) are its results.
    Break(Vec<ExprId>),
    /// Ends an arm of the innermost `if`; the values (one per result) are its results.
    Yield(Vec<ExprId>),
    /// Leaves the function with this value.
    Return(ExprId),
}

/// A value a loop changes: bound to `init` on entry, to what `Continue` passes on each next
/// iteration, and visible after the loop as `result` (what the last iteration passed, or
/// what `Break` passed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carried {
    /// The value inside the loop (a `Bound` expression).
    pub arg: ExprId,
    /// The value it starts from, defined before the loop.
    pub init: ExprId,
    /// The value after the loop (a `Bound` expression).
    pub result: ExprId,
}

/// What a `for` iterates over.
#[derive(Clone, Debug, PartialEq)]
pub enum Iteration {
    /// Python's `range(start, stop, step)`: ints defined before the loop; a zero step is an
    /// error at run time, as in Python.
    Range {
        start: ExprId,
        stop: ExprId,
        step: ExprId,
    },
    /// A literal list or tuple of ints.
    Values(Vec<i64>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ForLoop {
    /// The loop variable (a `Bound` int).
    pub index: ExprId,
    pub iteration: Iteration,
    pub carried: Vec<Carried>,
    /// Ends with a terminator (`Continue`, `Break` or `Return`).
    pub body: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WhileLoop {
    pub carried: Vec<Carried>,
    /// Evaluated before every iteration (it sees the carried values); no terminator.
    pub cond_block: Block,
    /// A bool defined in `cond_block` or before the loop; false ends the loop normally.
    pub cond: ExprId,
    /// Ends with a terminator (`Continue`, `Break` or `Return`).
    pub body: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub struct IfElse {
    /// A bool defined before the statement.
    pub cond: ExprId,
    /// Each arm ends with a terminator (`Yield`, or one that leaves: `Continue`, `Break`,
    /// `Return`).
    pub then_block: Block,
    pub else_block: Block,
    /// The values after the statement (`Bound` expressions), one per `Yield` value.
    pub results: Vec<ExprId>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

impl Stmt {
    /// Whether control never continues to the next statement of the same block.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            Stmt::Continue(_) | Stmt::Break(_) | Stmt::Yield(_) | Stmt::Return(_)
        )
    }

    /// The values this statement reads directly (not those of nested blocks), in order.
    pub fn uses(&self) -> Vec<ExprId> {
        match self {
            Stmt::Let(_) => Vec::new(),
            Stmt::For(l) => {
                let mut uses = match &l.iteration {
                    Iteration::Range { start, stop, step } => vec![*start, *stop, *step],
                    Iteration::Values(_) => Vec::new(),
                };
                uses.extend(l.carried.iter().map(|c| c.init));
                uses
            }
            // The condition is read by the loop's test on every iteration.
            Stmt::While(l) => l
                .carried
                .iter()
                .map(|c| c.init)
                .chain(std::iter::once(l.cond))
                .collect(),
            Stmt::If(i) => vec![i.cond],
            Stmt::Continue(values) | Stmt::Break(values) | Stmt::Yield(values) => values.clone(),
            Stmt::Return(value) => vec![*value],
        }
    }

    /// The values this statement binds for the statements after it (loop and `if` results).
    pub fn results(&self) -> Vec<ExprId> {
        match self {
            Stmt::For(l) => l.carried.iter().map(|c| c.result).collect(),
            Stmt::While(l) => l.carried.iter().map(|c| c.result).collect(),
            Stmt::If(i) => i.results.clone(),
            _ => Vec::new(),
        }
    }
}

impl Block {
    pub fn new(stmts: Vec<Stmt>) -> Block {
        Block { stmts }
    }

    /// Every statement of this block and of the blocks nested in it, outer before inner, in
    /// order.
    pub fn walk(&self, visit: &mut dyn FnMut(&Stmt)) {
        for stmt in &self.stmts {
            visit(stmt);
            for block in stmt.blocks() {
                block.walk(visit);
            }
        }
    }
}

impl Stmt {
    /// The blocks nested directly in this statement, in execution order.
    pub fn blocks(&self) -> Vec<&Block> {
        match self {
            Stmt::For(l) => vec![&l.body],
            Stmt::While(l) => vec![&l.cond_block, &l.body],
            Stmt::If(i) => vec![&i.then_block, &i.else_block],
            _ => Vec::new(),
        }
    }

    pub fn blocks_mut(&mut self) -> Vec<&mut Block> {
        match self {
            Stmt::For(l) => vec![&mut l.body],
            Stmt::While(l) => vec![&mut l.cond_block, &mut l.body],
            Stmt::If(i) => vec![&mut i.then_block, &mut i.else_block],
            _ => Vec::new(),
        }
    }

    /// The values this statement binds inside its nested blocks (loop index, carried values).
    pub fn bound_inside(&self) -> Vec<ExprId> {
        match self {
            Stmt::For(l) => std::iter::once(l.index)
                .chain(l.carried.iter().map(|c| c.arg))
                .collect(),
            Stmt::While(l) => l.carried.iter().map(|c| c.arg).collect(),
            _ => Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Type,
    pub exprs: Arena<Expr>,
    pub body: Block,
    /// Where each expression came from; absent for expressions made by passes.
    pub spans: ArenaMap<ExprId, Span>,
    /// Source names of named temps and parameters; only for readable dumps.
    pub names: ArenaMap<ExprId, String>,
}

/// Structural equality: side tables (spans, names) are not part of a function's meaning.
impl PartialEq for Function {
    fn eq(&self, other: &Function) -> bool {
        self.name == other.name
            && self.params == other.params
            && self.ret == other.ret
            && self.body == other.body
            && self.exprs.len() == other.exprs.len()
            && self
                .exprs
                .iter()
                .zip(other.exprs.iter())
                .all(|((_, a), (_, b))| a == b)
    }
}

impl Function {
    pub fn new(name: impl Into<String>, params: Vec<Param>, ret: Type) -> Function {
        Function {
            name: name.into(),
            params,
            ret,
            exprs: Arena::new(),
            body: Block::default(),
            spans: ArenaMap::default(),
            names: ArenaMap::default(),
        }
    }

    /// Appends an expression; operands must already be in the arena (definition order is a
    /// topological order, an invariant the validator checks).
    pub fn push(&mut self, kind: ExprKind, ty: Type) -> ExprId {
        self.exprs.alloc(Expr { kind, ty })
    }

    pub fn push_spanned(&mut self, kind: ExprKind, ty: Type, span: Span) -> ExprId {
        let id = self.push(kind, ty);
        self.spans.insert(id, span);
        id
    }

    /// The expression `id` names, if it is in this arena (an id from elsewhere may not be).
    pub fn expr(&self, id: ExprId) -> Option<&Expr> {
        if (u32::from(id.into_raw()) as usize) < self.exprs.len() {
            Some(&self.exprs[id])
        } else {
            None
        }
    }

    pub fn span_of(&self, id: ExprId) -> Option<Span> {
        self.spans.get(id).copied()
    }

    pub fn name_of(&self, id: ExprId) -> Option<&str> {
        self.names.get(id).map(String::as_str)
    }

    /// Appends an expression and a `Let` evaluating it at the end of the top-level body: how
    /// straight-line code is built.
    pub fn push_let(&mut self, kind: ExprKind, ty: Type) -> ExprId {
        let id = self.push(kind, ty);
        self.body.stmts.push(Stmt::Let(id));
        id
    }

    /// The values the function may return, in statement order (nested blocks included).
    pub fn returns(&self) -> Vec<ExprId> {
        let mut values = Vec::new();
        self.body.walk(&mut |stmt| {
            if let Stmt::Return(value) = stmt {
                values.push(*value);
            }
        });
        values
    }

    /// Whether the body is straight-line code: `Let`s and one final `Return`, nothing nested.
    pub fn is_straight_line(&self) -> bool {
        self.body
            .stmts
            .iter()
            .all(|s| matches!(s, Stmt::Let(_) | Stmt::Return(_)))
    }
}

/// Which `linear` ops (plain or fused) read a parameter as their weight inside a loop: the
/// body of a `for` or `while`, or a `while` condition, at any depth.
///
/// Such a weight is the same tensor on every iteration, so the executor and generated code
/// transpose it once per call and run the kernels over the transposed weight, whose bits
/// differ from those of the kernels over the weight as given. Both read this one analysis of
/// the optimized IR, so that they pick the same kernel and give the same bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReusedWeights {
    /// By expression index.
    by_expr: Vec<bool>,
}

impl ReusedWeights {
    pub fn of(f: &Function) -> ReusedWeights {
        let mut reused = ReusedWeights {
            by_expr: vec![false; f.exprs.len()],
        };
        reused.mark(f, &f.body, false);
        reused
    }

    /// Whether `id` is a `linear` or fused op that a loop evaluates and whose weight is a
    /// parameter read.
    pub fn contains(&self, id: ExprId) -> bool {
        let index = u32::from(id.into_raw()) as usize;
        self.by_expr.get(index).copied().unwrap_or(false)
    }

    fn mark(&mut self, f: &Function, block: &Block, in_loop: bool) {
        for stmt in &block.stmts {
            if let (Stmt::Let(id), true) = (stmt, in_loop) {
                let weight = match f.expr(*id).map(|e| &e.kind) {
                    Some(
                        ExprKind::Linear { weight, .. } | ExprKind::FusedLinear { weight, .. },
                    ) => Some(*weight),
                    _ => None,
                };
                let param = |weight: ExprId| {
                    matches!(f.expr(weight).map(|e| &e.kind), Some(ExprKind::Param(_)))
                };
                if weight.is_some_and(param) {
                    if let Some(entry) = self.by_expr.get_mut(u32::from(id.into_raw()) as usize) {
                        *entry = true;
                    }
                }
            }
            let inner = in_loop || matches!(stmt, Stmt::For(_) | Stmt::While(_));
            for nested in stmt.blocks() {
                self.mark(f, nested, inner);
            }
        }
    }
}

/// All functions compiled from one source file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub source_name: String,
    pub functions: Vec<Function>,
}
