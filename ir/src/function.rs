//! Functions and modules: typed parameters, one result type, the expression arena, the body
//! of structured statements, and the side tables (spans, source names).

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

/// Structured statements. Straight-line code is a DAG of pure expressions; statements only
/// say where control goes. Later surface (`for` over a range, `if`) adds variants that carry
/// their loop-carried / branch-yielded values explicitly.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Return(ExprId),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
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

    pub fn span_of(&self, id: ExprId) -> Option<Span> {
        self.spans.get(id).copied()
    }

    pub fn name_of(&self, id: ExprId) -> Option<&str> {
        self.names.get(id).map(String::as_str)
    }

    /// The values the body returns, in statement order.
    pub fn returns(&self) -> impl Iterator<Item = ExprId> + '_ {
        self.body.stmts.iter().map(|stmt| match stmt {
            Stmt::Return(id) => *id,
        })
    }
}

/// All functions compiled from one source file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub source_name: String,
    pub functions: Vec<Function>,
}
