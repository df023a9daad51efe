//! Small helpers shared by the passes: arena indices and how diagnostics name expressions.

use la_arena::{Idx, RawIdx};
use rextio_ir::{Expr, ExprId, Function};

/// The arena position of `id`.
pub(crate) fn index(id: ExprId) -> usize {
    u32::from(id.into_raw()) as usize
}

/// The id of arena position `index`; `None` past `u32::MAX`.
pub(crate) fn id_at(index: usize) -> Option<ExprId> {
    u32::try_from(index)
        .ok()
        .map(|raw| Idx::from_raw(RawIdx::from(raw)))
}

/// The expression `id` names, if it is in `f`'s arena (an id from elsewhere may not be).
pub(crate) fn expr(f: &Function, id: ExprId) -> Option<&Expr> {
    if index(id) < f.exprs.len() {
        Some(&f.exprs[id])
    } else {
        None
    }
}

/// `%3 (linear)`: how diagnostics name an expression.
pub(crate) fn describe(id: ExprId, expr: &Expr) -> String {
    format!("%{} ({})", index(id), expr.kind.mnemonic())
}
