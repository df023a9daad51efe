//! A petgraph view of a function's dataflow, its Graphviz rendering, and use counts.
//!
//! Node `i` of [`to_graph`] is the expression at arena index `i` (see [`node_of`]); one node
//! per `return` statement follows, in body order. Edges run from an operand to its user and
//! are labelled with the operand's position in the user's operand list. Operands that point
//! outside the arena (an invalid function) get no edge, so the view never fails. The dot
//! rendering names each graph after its function.

use std::fmt;

use la_arena::ArenaMap;
use petgraph::dot::Dot;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::expr::ExprId;
use crate::function::{Block, Function, Stmt};
use crate::print::{attributes, printable_name, value_label};
use crate::types::Type;

/// A node of the dataflow graph.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeLabel {
    /// An expression: what it computes (mnemonic and attributes, without operands, e.g.
    /// `mean dim=1, keepdim=false`), its type, its source name if it has one, and the block it
    /// is evaluated in when that is not the function body (`for #1`, `if #2 then`).
    Expr {
        id: ExprId,
        op: String,
        ty: Type,
        name: Option<String>,
        block: Option<String>,
    },
    /// The `return` statement, the `stmt`-th statement of the function in walk order.
    Return { stmt: usize },
    /// A control statement (`for #1`, `while #3`, `if #2`) or a terminator (`continue`,
    /// `break`, `yield`) with the block it ends. Edges run from the values it reads to it
    /// and from it to the values it binds.
    Stmt { stmt: usize, text: String },
}
/// An edge from an operand to its user: the operand's position among the user's operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EdgeLabel {
    pub position: u32,
}

/// `%3 linear\ntensor<f32, cpu, 2>`; a named value adds `  # name` to the first line.
impl fmt::Display for NodeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeLabel::Expr {
                id,
                op,
                ty,
                name,
                block,
            } => {
                write!(f, "{} {op}", value_label(*id))?;
                if let Some(name) = name {
                    write!(f, "  # {name}")?;
                }
                write!(f, "\n{ty}")?;
                if let Some(block) = block {
                    write!(f, "\nin {block}")?;
                }
                Ok(())
            }
            NodeLabel::Return { .. } => f.write_str("return"),
            NodeLabel::Stmt { text, .. } => f.write_str(text),
        }
    }
}

impl fmt::Display for EdgeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.position)
    }
}

/// The graph node of an expression in [`to_graph`]'s result.
pub fn node_of(id: ExprId) -> NodeIndex {
    NodeIndex::new(u32::from(id.into_raw()) as usize)
}

fn in_arena(f: &Function, id: ExprId) -> bool {
    (u32::from(id.into_raw()) as usize) < f.exprs.len()
}

/// The dataflow graph: expressions in arena order, then one node per statement that is not
/// a `let`, in walk order (outer before inner).
pub fn to_graph(f: &Function) -> DiGraph<NodeLabel, EdgeLabel> {
    let mut graph = DiGraph::with_capacity(f.exprs.len() + f.body.stmts.len(), f.exprs.len());
    let mut blocks: ArenaMap<ExprId, String> = ArenaMap::default();
    let mut statements = Vec::new();
    collect(&f.body, None, &mut blocks, &mut statements, &mut 0);
    for (id, expr) in f.exprs.iter() {
        let mut op = expr.kind.mnemonic().to_string();
        let attrs = attributes(&expr.kind);
        if !attrs.is_empty() {
            op = format!("{op} {}", attrs.join(", "));
        }
        let name = f.name_of(id).and_then(printable_name);
        graph.add_node(NodeLabel::Expr {
            id,
            op,
            ty: expr.ty,
            name,
            block: blocks.get(id).cloned(),
        });
    }
    for (id, expr) in f.exprs.iter() {
        for (position, operand) in expr.kind.operands().into_iter().enumerate() {
            if in_arena(f, operand) {
                graph.add_edge(
                    node_of(operand),
                    node_of(id),
                    EdgeLabel {
                        position: position as u32,
                    },
                );
            }
        }
    }
    for (number, (stmt, text)) in statements.into_iter().enumerate() {
        let label = match stmt {
            Stmt::Return(_) => NodeLabel::Return { stmt: number },
            _ => NodeLabel::Stmt { stmt: number, text },
        };
        let node = graph.add_node(label);
        for (position, value) in stmt.uses().into_iter().enumerate() {
            if in_arena(f, value) {
                graph.add_edge(
                    node_of(value),
                    node,
                    EdgeLabel {
                        position: position as u32,
                    },
                );
            }
        }
        let bound = stmt.bound_inside().into_iter().chain(stmt.results());
        for (position, value) in bound.enumerate() {
            if in_arena(f, value) {
                graph.add_edge(
                    node,
                    node_of(value),
                    EdgeLabel {
                        position: position as u32,
                    },
                );
            }
        }
    }
    graph
}

/// Walks `block`: records which block each `let` evaluates in (for nested blocks), and lists
/// every statement that is not a `let` with its label text.
fn collect<'a>(
    block: &'a Block,
    inside: Option<&str>,
    blocks: &mut ArenaMap<ExprId, String>,
    statements: &mut Vec<(&'a Stmt, String)>,
    counter: &mut usize,
) {
    for stmt in &block.stmts {
        if let Stmt::Let(id) = stmt {
            if let Some(inside) = inside {
                blocks.insert(*id, inside.to_string());
            }
            continue;
        }
        *counter += 1;
        let number = *counter;
        let here = |word: &str| match inside {
            Some(inside) => format!("{word}\nin {inside}"),
            None => word.to_string(),
        };
        match stmt {
            Stmt::For(l) => {
                statements.push((stmt, here(&format!("for #{number}"))));
                let name = format!("for #{number}");
                collect(&l.body, Some(&name), blocks, statements, counter);
            }
            Stmt::While(l) => {
                statements.push((stmt, here(&format!("while #{number}"))));
                let cond = format!("while #{number} test");
                collect(&l.cond_block, Some(&cond), blocks, statements, counter);
                let name = format!("while #{number}");
                collect(&l.body, Some(&name), blocks, statements, counter);
            }
            Stmt::If(i) => {
                statements.push((stmt, here(&format!("if #{number}"))));
                let then_name = format!("if #{number} then");
                collect(&i.then_block, Some(&then_name), blocks, statements, counter);
                let else_name = format!("if #{number} else");
                collect(&i.else_block, Some(&else_name), blocks, statements, counter);
            }
            Stmt::Continue(_) => statements.push((stmt, here("continue"))),
            Stmt::Break(_) => statements.push((stmt, here("break"))),
            Stmt::Yield(_) => statements.push((stmt, here("yield"))),
            Stmt::Return(_) => statements.push((stmt, here("return"))),
            Stmt::Let(_) => {}
        }
    }
}

/// The dataflow graph in Graphviz dot syntax (node labels as [`NodeLabel`]'s `Display`),
/// named after the function (`digraph "inference" { ... }`), so that the graphs of several
/// functions in one output can be told apart.
pub fn to_dot(f: &Function) -> String {
    let body = format!("{}", Dot::new(&to_graph(f)));
    // petgraph writes an anonymous `digraph {`; the name goes between the two.
    let rest = body.strip_prefix("digraph").unwrap_or(&body);
    format!("digraph {}{rest}", dot_id(&f.name))
}

/// `name` as a dot double-quoted ID: a quote or backslash is escaped and a line break
/// written as `\n`, so any name yields one well-formed ID.
fn dot_id(name: &str) -> String {
    let mut quoted = String::with_capacity(name.len() + 2);
    quoted.push('"');
    for c in name.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => {}
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// How many times each expression is used as an operand or returned; every expression has
/// an entry (0 when unused). An op that uses a value twice counts twice.
pub fn uses(f: &Function) -> ArenaMap<ExprId, u32> {
    let mut counts: ArenaMap<ExprId, u32> = ArenaMap::with_capacity(f.exprs.len());
    for (id, _) in f.exprs.iter() {
        counts.insert(id, 0);
    }
    let mut statement_uses = Vec::new();
    f.body.walk(&mut |stmt| statement_uses.extend(stmt.uses()));
    let operands = f.exprs.values().flat_map(|expr| expr.kind.operands());
    for used in operands.chain(statement_uses) {
        // An operand outside the arena has no entry; inserting one would grow the map to it.
        if let Some(count) = counts.get_mut(used) {
            *count = count.saturating_add(1);
        }
    }
    counts
}
