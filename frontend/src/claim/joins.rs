//! The joins lane (ours; [`Surface::Extended`] only): `torch.cat(parts, dim)` (and its
//! aliases `torch.concat`, `torch.concatenate`) and `torch.stack(parts, dim)`, where `parts`
//! is a list or tuple display written in the call (`torch.cat([a, b], dim=1)`,
//! `torch.cat((a, b), 1)`), offered by the walker as the site's first operands
//! ([`ClaimSite::sequence`]). The parts are float32 CPU tensors of one rank (0 to 3); the
//! dim is one literal int, positional or by keyword, `0` when absent (eager's default),
//! normalized as the reduction lane does (`dim=-1` is the last dim of the result). `cat`
//! keeps the parts' type (rank-0 parts: eager's error, refused); `stack` adds a dim (rank-0
//! parts give a V, `torch.stack([x.sum(), x.max()])`; rank-3 parts would give rank 4, which
//! compiled code does not have). The rank-0 and rank-3 lanes leave joins to this one. Lowers
//! to [`ClaimedOp::Join`].
//!
//! Not claimed, each with this lane's code (`RXTP-TORCH-080` for `cat`, `081` for `stack`)
//! and a message naming the reason: tensors not given as a display (a name bound to a list
//! is not a value compiled code has), an empty display (eager raises `ValueError`), a part
//! that is not a float32 CPU tensor, parts of different ranks (eager raises
//! `RuntimeError`), a non-literal or out-of-range dim, any other keyword or operand (`out=`).
//! Parts whose sizes do not fit are found at run time, with eager's `RuntimeError`.
//! Under [`Surface::Reference`] the lane has no answer (and the walker offers the display as
//! the reference host does, where it is not lowered): the site keeps the reference outcome.

use super::reductions::{keyword_map, lookup, names_within};
use super::rules::{CAT_STATIC, CODE_CAT, CODE_STACK, STACK_STATIC};
use super::{
    claimed, reject, shown, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, SiteKind, Surface,
    KEY_M, KEY_S, KEY_T, KEY_V,
};
use rextio_ir::JoinKind;

/// The float32 CPU keys by rank (`S`, `V`, `M`, `T`).
const RANKS: [&str; 4] = [KEY_S, KEY_V, KEY_M, KEY_T];

/// The rank of a float32 CPU tensor key, `None` for any other type.
fn part_rank(ty: &str) -> Option<i64> {
    RANKS.iter().position(|key| *key == ty).map(|r| r as i64)
}

/// The targets of `cat`: eager's `torch.concat` and `torch.concatenate` are aliases of it.
pub const CAT_TARGETS: [&str; 3] = ["torch.cat", "torch.concat", "torch.concatenate"];
pub const STACK_TARGET: &str = "torch.stack";

/// The join a call target names, if it is one of this lane's.
pub fn join_kind(target: &str) -> Option<JoinKind> {
    if CAT_TARGETS.contains(&target) {
        Some(JoinKind::Cat)
    } else if target == STACK_TARGET {
        Some(JoinKind::Stack)
    } else {
        None
    }
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call || surface != Surface::Extended || site.receiver.is_some() {
        return None;
    }
    let kind = join_kind(&site.target)?;
    let (rule_id, code) = match kind {
        JoinKind::Cat => (CAT_STATIC, CODE_CAT),
        JoinKind::Stack => (STACK_STATIC, CODE_STACK),
    };
    let target = site.target.as_str();
    let Some(n) = site.sequence.filter(|n| *n <= site.operand_types.len()) else {
        return Some(match site.operand_types.first() {
            Some(None) => ClaimOutcome::NotCovered,
            _ => reject(
                site,
                code,
                format!(
                    "{target} is claimed only with its tensors written as a list or tuple display in the call ({target}([a, b], dim=0))"
                ),
            ),
        });
    };
    if n == 0 {
        let detail = format!(
            "{target} of an empty list is not claimed (eager raises ValueError: expected a non-empty list of Tensors)"
        );
        return Some(reject(site, code, detail));
    }
    let parts = &site.operand_types[..n];
    if parts.iter().any(Option::is_none) {
        return Some(ClaimOutcome::NotCovered);
    }
    let parts: Vec<&str> = parts.iter().flatten().map(String::as_str).collect();
    for (i, ty) in parts.iter().enumerate() {
        if part_rank(ty).is_none() {
            let detail = format!(
                "{target} part {i} is {}; every part must be a float32 CPU tensor (TensorF32Cpu0D to TensorF32Cpu3D)",
                shown(ty)
            );
            return Some(reject(site, code, detail));
        }
    }
    let first = parts[0];
    if let Some(i) = parts.iter().position(|ty| *ty != first) {
        let detail = format!(
            "{target} mixes ranks: part 0 is {}, part {i} is {} (eager raises RuntimeError: Tensors must have same number of dimensions)",
            shown(first),
            shown(parts[i])
        );
        return Some(reject(site, code, detail));
    }

    // The dim: one more positional operand or `dim=`, a literal int; 0 when absent.
    let rest = &site.operand_literals[n.min(site.operand_literals.len())..];
    let Some(keywords) = keyword_map(site, &[("dim", "int")]) else {
        let detail = format!("{target} keywords must be unique static literals (dim=<int>)");
        return Some(reject(site, code, detail));
    };
    let allowed: &[&str] = if rest.is_empty() { &["dim"] } else { &[] };
    if rest.len() > 1 || !names_within(&keywords, allowed) {
        let detail = format!(
            "unsupported or duplicate positional/keyword options for {target} (it takes the tensors and one literal int dim)"
        );
        return Some(reject(site, code, detail));
    }
    let dim = rest
        .first()
        .or_else(|| lookup(&keywords, "dim"))
        .unwrap_or(&Literal::Int(0));
    let Literal::Int(dim) = *dim else {
        let detail = format!("{target} requires a literal int dim");
        return Some(reject(site, code, detail));
    };

    let part_rank = part_rank(first)?;
    let (result_type, result_rank) = match kind {
        JoinKind::Cat if part_rank == 0 => {
            let detail = format!(
                "{target} of rank-0 tensors is not defined (eager raises RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated); stack them"
            );
            return Some(reject(site, code, detail));
        }
        JoinKind::Cat => (RANKS[part_rank as usize], part_rank),
        JoinKind::Stack if part_rank == 3 => {
            let detail = format!(
                "{target} of TensorF32Cpu3D parts has rank 4, which compiled code does not have (ranks 0 to 3)"
            );
            return Some(reject(site, code, detail));
        }
        JoinKind::Stack => (RANKS[part_rank as usize + 1], part_rank + 1),
    };
    // `cat` names a dim of the parts, `stack` one of the result (eager's ranges).
    let range = match kind {
        JoinKind::Cat => part_rank,
        JoinKind::Stack => result_rank,
    };
    if !(-range..range).contains(&dim) {
        let detail = format!(
            "{target} dim={dim} is out of range for {} (expected a dim in [{}, {}])",
            match kind {
                JoinKind::Cat => format!("rank-{part_rank} parts"),
                JoinKind::Stack => format!("a rank-{result_rank} result"),
            },
            -range,
            range - 1
        );
        return Some(reject(site, code, detail));
    }
    let dim = if dim < 0 { dim + range } else { dim } as u8;
    let op = ClaimedOp::Join {
        kind,
        parts: (0..n).map(Input::Operand).collect(),
        dim,
    };
    Some(claimed(rule_id, result_type, op))
}
