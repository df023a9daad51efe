//! Attention fusion: `softmax((q @ k.transpose(-2, -1)) / c, dim=-1) @ v` over float32 rank-3
//! tensors becomes one `fused_attention` op. Not an egg rule: the chain runs through a view
//! (`transpose`) and a tensor-scalar op (`/ math.sqrt(d)`), which have no term (a view takes
//! part in no rewrite, a tensor-scalar op reads scalar code: `egraph::runs_alone`), so this
//! pass matches the chain on the IR itself, block by block, as the first step of the `fused`
//! stage (before the egg regions are cut).
//!
//! The chain, every link float32 rank 3 and in one block:
//!
//! ```text
//! %kt = transpose %k, dim=1          k.transpose(-2, -1) / k.transpose(1, 2)
//! %s  = matmul %q, %kt               q @ kt (the operator or torch.matmul)
//! %d  = div.scalar %s, %c            optional: / c or * c, c an int or float
//! %p  = softmax %d, dim=2            F.softmax(..., dim=-1)
//! %o  = matmul %p, %v
//! ```
//!
//! Each of `%kt`, `%s`, `%d`, `%p` has exactly one user, the next link (a value read anywhere
//! else stays, and so does its chain). `%o` becomes `fused_attention %q, %k, %v[, %c]` where it
//! stands (every operand is defined before it) and the other links' `let`s go. A statement
//! between the first link and `%o` that may raise (`dce::may_raise`) keeps the chain as it is:
//! the fused op raises the chain's errors at `%o`, and no other error may move past them.

use std::collections::{HashMap, HashSet};

use rextio_ir::{
    uses, AttentionScale, Block, DType, Diagnostic, ExprId, ExprKind, Function, SoftmaxKind, Stmt,
    TensorScalarOp, Type, ViewKind,
};

use crate::dce::{eliminate_dead_code_but, may_raise};

/// One matched chain: the op to put at `out` and the links it absorbs.
struct Chain {
    out: ExprId,
    fused: ExprKind,
    links: Vec<ExprId>,
}

/// `f` with every attention chain fused; `f` itself where there is none.
pub fn fuse_attention(f: Function) -> Result<Function, Vec<Diagnostic>> {
    let counts = uses(&f);
    let mut chains = Vec::new();
    let mut blocks = vec![&f.body];
    while let Some(block) = blocks.pop() {
        chains.extend(chains_in(&f, block, &|id| {
            counts.get(id).copied().unwrap_or(0) as usize
        }));
        for stmt in &block.stmts {
            blocks.extend(stmt.blocks());
        }
    }
    if chains.is_empty() {
        return Ok(f);
    }
    let mut out = f;
    let mut absorbed = HashSet::new();
    for chain in chains {
        out.exprs[chain.out].kind = chain.fused;
        absorbed.extend(chain.links);
    }
    eliminate_dead_code_but(&out, &|id| absorbed.contains(&id))
}

/// The float32 rank-3 tensor type.
fn is_f32_rank3(f: &Function, id: ExprId) -> bool {
    matches!(f.exprs[id].ty, Type::Tensor(t) if t.dtype == DType::F32 && t.rank == 3)
}

/// The chains that end in `block`'s `let`s.
fn chains_in(f: &Function, block: &Block, count: &dyn Fn(ExprId) -> usize) -> Vec<Chain> {
    let position: HashMap<ExprId, usize> = block
        .stmts
        .iter()
        .enumerate()
        .filter_map(|(i, stmt)| match stmt {
            Stmt::Let(id) => Some((*id, i)),
            _ => None,
        })
        .collect();
    // A link: defined by a `let` of this block, read once (by the next link), rank 3.
    let link = |id: ExprId| position.contains_key(&id) && count(id) == 1 && is_f32_rank3(f, id);
    let mut chains = Vec::new();
    for stmt in &block.stmts {
        let Stmt::Let(out) = stmt else { continue };
        if let Some(chain) = match_chain(f, *out, &link) {
            let first = chain.links.iter().filter_map(|id| position.get(id)).min();
            let last = position.get(out);
            let (Some(&first), Some(&last)) = (first, last) else {
                continue;
            };
            // Nothing between the links may raise (nor be a statement other than a `let`).
            let members: HashSet<ExprId> = chain.links.iter().copied().collect();
            let quiet = block.stmts[first..last].iter().all(|stmt| match stmt {
                Stmt::Let(id) => members.contains(id) || !may_raise(f, &f.exprs[*id].kind),
                _ => false,
            });
            if quiet {
                chains.push(chain);
            }
        }
    }
    chains
}

/// The chain ending at `out`, if `out` is the last link of one.
fn match_chain(f: &Function, out: ExprId, link: &dyn Fn(ExprId) -> bool) -> Option<Chain> {
    let kind = |id: ExprId| &f.exprs[id].kind;
    let ExprKind::Matmul { lhs: p, rhs: v } = *kind(out) else {
        return None;
    };
    if !(is_f32_rank3(f, out) && is_f32_rank3(f, v) && link(p)) {
        return None;
    }
    let ExprKind::Softmax {
        kind: SoftmaxKind::Softmax,
        input: d,
        dim: 2,
    } = *kind(p)
    else {
        return None;
    };
    if !link(d) {
        return None;
    }
    let (s, scale) = match *kind(d) {
        ExprKind::TensorScalar {
            op: op @ (TensorScalarOp::Div | TensorScalarOp::Mul),
            tensor,
            scalar,
        } => (tensor, Some(AttentionScale { op, value: scalar })),
        _ => (d, None),
    };
    if scale.is_some() && !link(s) {
        return None;
    }
    let ExprKind::Matmul { lhs: q, rhs: kt } = *kind(s) else {
        return None;
    };
    if !(is_f32_rank3(f, q) && link(kt)) {
        return None;
    }
    let ExprKind::View {
        kind: ViewKind::Transpose,
        input: k,
        dim: 1,
        ..
    } = *kind(kt)
    else {
        return None;
    };
    if !is_f32_rank3(f, k) {
        return None;
    }
    let mut links = vec![kt, s, p];
    if scale.is_some() {
        links.push(d);
    }
    Some(Chain {
        out,
        fused: ExprKind::FusedAttention { q, k, v, scale },
        links,
    })
}
