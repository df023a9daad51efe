//! The rank-3 lane (ours; [`Surface::Extended`] only): sites with a float32 CPU rank-3
//! operand (`T`, `TensorF32Cpu3D`, a batch of matrices), tried right after the scalar math
//! lane so that no rank-1/2 lane sees one first. The reference has no rank-3 type, so under
//! [`Surface::Reference`] (the Rextio plugin, `surface="reference"`) the annotation is not a
//! known type and no site ever carries the key: the lane has no answer there.
//!
//! - `a @ b`, `torch.matmul(a, b)`, `a.matmul(b)`: `T @ T` (batched) and `T @ M` / `M @ T`
//!   (broadcast) give `T` (`RXTP-TORCH-140`/`141`). `torch.bmm(a, b)` / `a.bmm(b)` take two
//!   `T` (`149`) and are the IR's `bmm`, ATen's `bmm`: it broadcasts no batch, so batch sizes
//!   that differ (1 included) raise eager's error.
//! - `+ - * /` and `torch.add/sub/mul/div` of `T` with `T`, `M` or `V` (broadcast) or, for
//!   the operators, an `int`/`float` scalar: `T` (`142`/`143`).
//! - The unary op table's spellings, the scalar-parameter ops and `F.dropout(t,
//!   training=False)` of `T`: the rank-1/2 lanes decide the site as if `T` were `M` (their
//!   forms do not depend on the rank) and a claim of theirs becomes this lane's (`144`); any
//!   other op they would claim (`argmax`, `F.normalize`, `x.max(dim=1).values`, ...) is
//!   refused with `144`, naming what rank 3 takes.
//! - `sum`/`mean`/`amax`/`amin` along a dim, `F.layer_norm` over the last dim, `pow` /
//!   `maximum` / `minimum` / `where` and `x ** p` (`180`..`183`): decided by the rank-1/2
//!   lanes too, claimed by [`rank3_forms`].
//! - `F.softmax` / `F.log_softmax` / `torch.softmax` / `torch.log_softmax` / `t.softmax` /
//!   `t.log_softmax` of `T` over a literal dim in `[-3, 2]` (`145`).
//! - `F.linear(x, w[, b])` with `x` in `T`, `w` in `M`, `b` in `V` or omitted / `None`
//!   (`146`): ATen's linear over the last dim, never the fused kernels.
//!
//! Transposes and reshapes of `T` are the views lane's (rank-3 records `147`/`148`). Every
//! rank-3 op runs through ATen (the dense kernels are rank 1/2), so the bits are eager's;
//! eager's shape errors are eager's. A site with a rank-3 operand that this lane does not
//! know falls through to the other lanes, which reject it (`RXTP-TORCH-010` or their own
//! code: a rank-3 operand is outside their float32 rank-1/2 surface).

use super::pyrepr::str_repr;
use super::rank3_forms;
use super::reductions::{keyword_map, lookup, resolve_input_and_dim, ResolvedInput};
use super::rules::{
    CODE_RANK3_BINOP, CODE_RANK3_BMM, CODE_RANK3_FUNCTION, CODE_RANK3_LINEAR, CODE_RANK3_MATMUL,
    CODE_RANK3_MATMUL_CALL, CODE_RANK3_SOFTMAX, CODE_RANK3_UNARY, RANK3_BINOP, RANK3_BMM,
    RANK3_FUNCTION, RANK3_LINEAR, RANK3_MATMUL, RANK3_MATMUL_CALL, RANK3_SOFTMAX, RANK3_UNARY,
};
use super::{
    claimed, input_is, method_name, reject, retyped, shown, ClaimOutcome, ClaimSite, ClaimedOp,
    Input, Literal, SiteKind, Surface, KEY_M, KEY_T, KEY_V,
};
use rextio_ir::{BinaryOp, SoftmaxKind, TensorScalarOp};

/// Whether the site has a rank-3 operand or receiver.
fn has_rank3(site: &ClaimSite) -> bool {
    site.operand_types
        .iter()
        .any(|t| t.as_deref() == Some(KEY_T))
        || site
            .keywords
            .iter()
            .any(|k| k.arg_type.as_deref() == Some(KEY_T))
        || site
            .receiver
            .as_ref()
            .is_some_and(|r| r.arg_type.as_deref() == Some(KEY_T))
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if surface != Surface::Extended || !has_rank3(site) {
        return None;
    }
    match site.kind {
        SiteKind::Binop => match site.target.as_str() {
            "@" => Some(matmul(site, RANK3_MATMUL, CODE_RANK3_MATMUL, false)),
            "+" | "-" | "*" | "/" => Some(binop(site)),
            "**" => rank3_forms::elementwise(site),
            _ => None,
        },
        SiteKind::Compare => None,
        // `torch.cat` / `torch.stack` of any rank are the joins lane's.
        SiteKind::Call if super::joins::join_kind(&site.target).is_some() => None,
        SiteKind::Call => call(site),
    }
}

fn call(site: &ClaimSite) -> Option<ClaimOutcome> {
    let target = site.target.as_str();
    let method = site.receiver.is_some();
    let name = method_name(target);
    match (method, target, name) {
        (false, "torch.matmul", _) | (true, _, "matmul") => Some(matmul(
            site,
            RANK3_MATMUL_CALL,
            CODE_RANK3_MATMUL_CALL,
            false,
        )),
        // `torch.bmm` broadcasts no batch (eager raises where `matmul` would broadcast a
        // batch of 1): the IR's `bmm`, not its `matmul`.
        (false, "torch.bmm", _) | (true, _, "bmm") => {
            Some(matmul(site, RANK3_BMM, CODE_RANK3_BMM, true))
        }
        (false, "torch.add" | "torch.sub" | "torch.mul" | "torch.div", _) => Some(function(site)),
        (false, "torch.nn.functional.softmax" | "torch.softmax", _) | (true, _, "softmax") => {
            Some(softmax(site, SoftmaxKind::Softmax))
        }
        (false, "torch.nn.functional.log_softmax" | "torch.log_softmax", _)
        | (true, _, "log_softmax") => Some(softmax(site, SoftmaxKind::LogSoftmax)),
        (false, "torch.nn.functional.linear", _) => Some(linear(site)),
        (false, "torch.nn.functional.layer_norm", _) => rank3_forms::layer_norm(site),
        _ if rank3_forms::is_reduction(method, target, name) => rank3_forms::reduce(site),
        _ if rank3_forms::is_elementwise(method, target, name) => rank3_forms::elementwise(site),
        // Sizes, transposes and reshapes are the views lane's, with the real rank.
        (
            true,
            _,
            "shape" | "size" | "t" | "T" | "transpose" | "reshape" | "view" | "flatten"
            | "unsqueeze" | "squeeze",
        )
        | (
            false,
            "torch.t" | "torch.transpose" | "torch.reshape" | "torch.flatten" | "torch.unsqueeze"
            | "torch.squeeze",
            _,
        ) => None,
        _ => unary(site),
    }
}

/// One operand of a two-operand site: its type key and where the claim reads it.
type Side<'a> = (&'a str, Input);

/// Both operand types when there are exactly two and both are resolved; for a method, the
/// receiver's and the one operand's.
fn pair(site: &ClaimSite) -> Option<(Side<'_>, Side<'_>)> {
    match (&site.receiver, site.operand_types.as_slice()) {
        (Some(receiver), [Some(other)]) => Some((
            (receiver.arg_type.as_deref()?, Input::Receiver),
            (other.as_str(), Input::Operand(0)),
        )),
        (None, [Some(a), Some(b)]) => Some((
            (a.as_str(), Input::Operand(0)),
            (b.as_str(), Input::Operand(1)),
        )),
        _ => None,
    }
}

/// `a @ b`, `torch.matmul`, `.matmul`; `torch.bmm` / `.bmm` (`batched_only`: two `T`).
fn matmul(
    site: &ClaimSite,
    rule: &'static str,
    code: &'static str,
    batched_only: bool,
) -> ClaimOutcome {
    let what = if batched_only { "bmm" } else { "matmul" };
    let arity = site.operand_types.len() + usize::from(site.receiver.is_some());
    if !site.keywords.is_empty() || arity != 2 {
        let detail =
            format!("{what} of a rank-3 tensor takes exactly two positional tensors (no keywords)");
        return reject(site, code, detail);
    }
    let Some(((left, lhs), (right, rhs))) = pair(site) else {
        return ClaimOutcome::NotCovered;
    };
    let fits = match (left, right) {
        (KEY_T, KEY_T) => true,
        (KEY_T, KEY_M) | (KEY_M, KEY_T) => !batched_only,
        _ => false,
    };
    if !fits {
        let expected = if batched_only {
            "two float32 CPU rank-3 tensors (TensorF32Cpu3D)"
        } else {
            "TensorF32Cpu3D with TensorF32Cpu3D or TensorF32Cpu2D (batched or broadcast)"
        };
        let detail = format!(
            "{what} requires {expected}; got {} and {}",
            shown(left),
            shown(right)
        );
        return reject(site, code, detail);
    }
    let op = if batched_only {
        ClaimedOp::Bmm { lhs, rhs }
    } else {
        ClaimedOp::Matmul { lhs, rhs }
    };
    claimed(rule, KEY_T, op)
}

/// A float32 CPU tensor of rank 1, 2 or 3.
fn float_tensor(ty: &str) -> bool {
    [KEY_V, KEY_M, KEY_T].contains(&ty)
}

/// `a op b` with a rank-3 operand: a tensor of rank 1 to 3 or an `int`/`float` scalar.
fn binop(site: &ClaimSite) -> ClaimOutcome {
    // `try_claim` sends only `+ - * /` here.
    let Some(op) = BinaryOp::from_symbol(&site.target) else {
        return ClaimOutcome::NotCovered;
    };
    if site.receiver.is_some() || !site.keywords.is_empty() || site.operand_types.len() != 2 {
        let detail = format!("elementwise {} requires exactly two operands", site.target);
        return reject(site, CODE_RANK3_BINOP, detail);
    }
    let Some(((left, lhs), (right, rhs))) = pair(site) else {
        return ClaimOutcome::NotCovered;
    };
    if float_tensor(left) && float_tensor(right) {
        return claimed(RANK3_BINOP, KEY_T, ClaimedOp::Binary { op, lhs, rhs });
    }
    let scalar = |ty: &str| matches!(ty, "int" | "float");
    let scalar_op = |scalar_first| TensorScalarOp::of(op, scalar_first);
    match (left, right) {
        (KEY_T, s) if scalar(s) => claimed(
            RANK3_BINOP,
            KEY_T,
            ClaimedOp::TensorScalar {
                op: scalar_op(false),
                tensor: lhs,
                scalar: rhs,
            },
        ),
        (s, KEY_T) if scalar(s) => claimed(
            RANK3_BINOP,
            KEY_T,
            ClaimedOp::TensorScalar {
                op: scalar_op(true),
                tensor: rhs,
                scalar: lhs,
            },
        ),
        _ => {
            let detail = format!(
                "{} of a rank-3 tensor requires a float32 CPU tensor (rank 1 to 3) or an int or float; got {} and {}",
                site.target,
                shown(left),
                shown(right)
            );
            reject(site, CODE_RANK3_BINOP, detail)
        }
    }
}

/// `torch.add/sub/mul/div(a, b)` with a rank-3 operand.
fn function(site: &ClaimSite) -> ClaimOutcome {
    let op = match site.target.as_str() {
        "torch.add" => BinaryOp::Add,
        "torch.sub" => BinaryOp::Sub,
        "torch.mul" => BinaryOp::Mul,
        _ => BinaryOp::Div,
    };
    let two = matches!(
        site.operand_literals.as_slice(),
        [Literal::NonLiteral, Literal::NonLiteral]
    );
    if !site.keywords.is_empty() || site.operand_types.len() != 2 || !two {
        let detail = "functional elementwise calls require exactly two positional tensor operands";
        return reject(site, CODE_RANK3_FUNCTION, detail);
    }
    let Some(((left, lhs), (right, rhs))) = pair(site) else {
        return ClaimOutcome::NotCovered;
    };
    if !(float_tensor(left) && float_tensor(right)) {
        let detail = format!(
            "{} of a rank-3 tensor requires float32 CPU tensors (rank 1 to 3); got {} and {}",
            site.target,
            shown(left),
            shown(right)
        );
        return reject(site, CODE_RANK3_FUNCTION, detail);
    }
    claimed(RANK3_FUNCTION, KEY_T, ClaimedOp::Binary { op, lhs, rhs })
}

/// Softmax / log_softmax of `T` over one literal dim (positional or `dim=`).
fn softmax(site: &ClaimSite, kind: SoftmaxKind) -> ClaimOutcome {
    let method = kind.name();
    let resolved = match resolve_input_and_dim(site, method, CODE_RANK3_SOFTMAX) {
        Ok(resolved) => resolved,
        Err(outcome) => return outcome,
    };
    let ResolvedInput {
        input_type,
        input,
        positional_dim,
    } = resolved;
    if input_type != KEY_T {
        let detail = format!(
            "{method} with a rank-3 argument requires the input to be TensorF32Cpu3D; got {}",
            shown(input_type)
        );
        return reject(site, CODE_RANK3_SOFTMAX, detail);
    }
    let Some(keywords) = keyword_map(site, &[("dim", "int")]) else {
        let detail = format!("{method} keywords must be unique static literals");
        return reject(site, CODE_RANK3_SOFTMAX, detail);
    };
    let allowed: &[&str] = if positional_dim.is_some() {
        &[]
    } else {
        &["dim"]
    };
    if !keywords.iter().all(|(name, _)| allowed.contains(name)) {
        let detail =
            format!("{method} of a rank-3 tensor takes one literal int dim only (no dtype=)");
        return reject(site, CODE_RANK3_SOFTMAX, detail);
    }
    let dim = match positional_dim.or_else(|| lookup(&keywords, "dim")) {
        Some(Literal::Int(d)) if (-3..3).contains(d) => (if *d < 0 { d + 3 } else { *d }) as u8,
        Some(Literal::Int(d)) => {
            let detail = format!(
                "{method} dim={d} is out of range for a rank-3 input (expected a dim in [-3, 2]; eager raises IndexError)"
            );
            return reject(site, CODE_RANK3_SOFTMAX, detail);
        }
        _ => {
            let detail = format!("{method} of a rank-3 tensor requires a literal int dim (dim=-1)");
            return reject(site, CODE_RANK3_SOFTMAX, detail);
        }
    };
    claimed(
        RANK3_SOFTMAX,
        KEY_T,
        ClaimedOp::Softmax { kind, input, dim },
    )
}

/// `F.linear(x, w[, b])` with a rank-3 input.
fn linear(site: &ClaimSite) -> ClaimOutcome {
    if site.receiver.is_some() {
        return ClaimOutcome::NotCovered;
    }
    let types: Option<Vec<&str>> = site.operand_types.iter().map(|t| t.as_deref()).collect();
    let Some(types) = types else {
        return ClaimOutcome::NotCovered;
    };
    let none_keyword = match site.keywords.as_slice() {
        [] => false,
        [k] if k.name == "bias" && k.literal == Literal::None => true,
        _ => {
            let detail = "linear of a rank-3 input takes (x, w[, b]) positionally (bias=None alone as a keyword)";
            return reject(site, CODE_RANK3_LINEAR, detail);
        }
    };
    let bias = match (types.as_slice(), site.operand_literals.get(2)) {
        ([KEY_T, KEY_M], _) => None,
        ([KEY_T, KEY_M, _], Some(Literal::None)) if !none_keyword => None,
        ([KEY_T, KEY_M, KEY_V], _) if !none_keyword => Some(Input::Operand(2)),
        _ => {
            let got: Vec<String> = types.iter().map(|t| shown(t).to_string()).collect();
            let detail = format!(
                "linear requires a float32 CPU rank-3 input, a rank-2 weight and a rank-1 bias or none; got ({})",
                got.join(", ")
            );
            return reject(site, CODE_RANK3_LINEAR, detail);
        }
    };
    let op = ClaimedOp::Linear {
        input: Input::Operand(0),
        weight: Input::Operand(1),
        bias,
    };
    claimed(RANK3_LINEAR, KEY_T, op)
}

/// The unary-op lanes decide the site with `T` read as `M` (their forms never depend on the
/// rank); a unary, scalar-parameter or identity claim becomes this lane's, of type `T`.
/// Anything else (their rejections, other ops) is left to the lanes with the real types.
fn unary(site: &ClaimSite) -> Option<ClaimOutcome> {
    let matrix = retyped(site, KEY_T, KEY_M);
    match super::claim_with(&matrix, Surface::Extended) {
        ClaimOutcome::Claimed {
            result_type: KEY_M,
            op:
                op @ (ClaimedOp::Unary { .. }
                | ClaimedOp::ParamUnary { .. }
                | ClaimedOp::Identity { .. }),
            ..
        } => {
            let (ClaimedOp::Unary { input, .. }
            | ClaimedOp::ParamUnary { input, .. }
            | ClaimedOp::Identity { input }) = &op
            else {
                return None;
            };
            // The unary op's input must be the rank-3 value itself.
            if input_is(site, input, KEY_T) {
                Some(claimed(RANK3_UNARY, KEY_T, op))
            } else {
                // A rank-3 value in a parameter's place (`F.leaky_relu(m, t)`).
                let detail = format!(
                    "{} takes the rank-3 tensor as its input only",
                    str_repr(&site.target)
                );
                Some(reject(site, CODE_RANK3_UNARY, detail))
            }
        }
        // Another op of the rank-1/2 lanes (a reduction, argmax, a layer, ...) that the
        // rank-3 lane does not compile: refused with this lane's code, naming what it takes.
        ClaimOutcome::Claimed { .. } => {
            let detail = format!(
                "{} of a rank-3 tensor is not claimed (rank-3 tensors take matmul, elementwise and unary ops, pow/maximum/minimum/where, sum/mean/amax/amin along a dim, softmax/log_softmax, layer_norm, linear, transpose and reshape/view)",
                str_repr(&site.target)
            );
            Some(reject(site, CODE_RANK3_UNARY, detail))
        }
        _ => None,
    }
}
