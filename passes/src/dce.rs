//! Dead-code elimination: keeps only the expressions the body's returns reach.
//!
//! Expressions are pure, so an unreached one can always go. Parameters are referenced by
//! index, so an unused `param` read is dropped like any other expression. The survivors are
//! re-allocated in their original order (so definition order stays topological) and the span
//! and name tables follow them.

use la_arena::ArenaMap;
use rextio_ir::{Diagnostic, ExprId, Function, Stmt};

use crate::pass::Pass;
use crate::util::index;
use crate::validate::OPERAND_NOT_DEFINED;

#[derive(Clone, Copy, Debug, Default)]
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, f: Function) -> Result<Function, Vec<Diagnostic>> {
        eliminate_dead_code(&f)
    }
}

/// A copy of `f` without the expressions no return reaches. Fails only if an operand or a
/// return refers to a value not defined before it (which validation rejects).
pub fn eliminate_dead_code(f: &Function) -> Result<Function, Vec<Diagnostic>> {
    // Mark: walk back from the returns. Operands precede their users, so one reverse sweep
    // over the arena sees every user before its operands.
    let mut live = vec![false; f.exprs.len()];
    for value in f.returns() {
        match live.get_mut(index(value)) {
            Some(slot) => *slot = true,
            None => return Err(vec![undefined(value, "a return")]),
        }
    }
    for (id, e) in f.exprs.iter().rev() {
        if !live[index(id)] {
            continue;
        }
        for operand in e.kind.operands() {
            if index(operand) >= index(id) {
                return Err(vec![undefined(operand, &format!("%{}", index(id)))]);
            }
            live[index(operand)] = true;
        }
    }

    // Sweep: re-allocate the live expressions in order, remapping operands and side tables.
    let mut out = Function::new(f.name.clone(), f.params.clone(), f.ret);
    let mut new_id: ArenaMap<ExprId, ExprId> = ArenaMap::default();
    for (id, e) in f.exprs.iter() {
        if !live[index(id)] {
            continue;
        }
        let kind = e
            .kind
            .map_operands(|operand| new_id.get(operand).copied())
            .ok_or_else(|| vec![undefined(id, "a live expression's operand")])?;
        let moved = out.push(kind, e.ty);
        if let Some(span) = f.span_of(id) {
            out.spans.insert(moved, span);
        }
        if let Some(name) = f.name_of(id) {
            out.names.insert(moved, name.to_string());
        }
        new_id.insert(id, moved);
    }
    for stmt in &f.body.stmts {
        let Stmt::Return(value) = *stmt;
        let moved = new_id
            .get(value)
            .copied()
            .ok_or_else(|| vec![undefined(value, "a return")])?;
        out.body.stmts.push(Stmt::Return(moved));
    }
    Ok(out)
}

fn undefined(value: ExprId, user: &str) -> Diagnostic {
    Diagnostic::error(
        OPERAND_NOT_DEFINED,
        format!(
            "dce: {user} uses %{}, which is not defined before it",
            index(value)
        ),
    )
}
