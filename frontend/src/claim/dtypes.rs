//! The dtype lane (extended surface only): sites whose tensors are float64
//! (`TensorF64Cpu0D`/`1D`/`2D`/`3D`) or bfloat16 (`TensorBF16Cpu0D`/`1D`/`2D`/`3D`) CPU
//! tensors.
//!
//! The float ops of the other lanes are dtype-generic in what they compute (ATen's kernels at
//! the operands' dtype), so this lane does not repeat their rules: it reads the site as if
//! every float64/bfloat16 tensor were the float32 tensor of its rank (rank 0 the rank-0
//! lane's `S`, rank 3 the rank-3 lane's `T`), asks the other lanes
//! ([`super::claim_lanes`]), and keeps their answer where the op is one the runtime computes
//! through ATen at any float dtype ([`admitted`]): `linear` (rank-3 inputs included),
//! `matmul`/`@` (batched and broadcast at rank 3), `torch.bmm`, `+ - * /`
//! (tensor-tensor and tensor-scalar, rank-0 operands included), the unary ops of the op table
//! (`relu`, `gelu`, `silu`, `sigmoid`, `tanh`, `exp`, ...), `softmax`/`log_softmax`,
//! `sum`/`mean`/`amax`/`amin`/`argmax` along a dim, the whole-tensor reductions
//! (`x.sum()`, `x.mean()`, `x.max()`, `x.min()`, `x.amax()`, `x.amin()`: a rank-0 tensor of
//! the dtype), the views (`t`, `transpose`, `reshape`, `view`, `flatten`, `unsqueeze`,
//! `squeeze`, `x.shape[d]`), `F.layer_norm`, `t.item()`/`float(t)` and a comparison read
//! as a condition (whose results are Python scalars). Their result type is the float32
//! answer's at the site's dtype (`argmax` stays int64). At rank 3 the float32 attention
//! chain's fusion (`passes/src/attention.rs`) and its kernel (`runtime/src/attention.rs`) take
//! float32 only, so such a chain stays op by op, each op ATen's. A claim is the dtype's rule
//! for its site kind
//! ([`rules::F64_OPS`], [`rules::BF16_OPS`] for calls, [`rules::F64_BINOPS`],
//! [`rules::BF16_BINOPS`] for operators, [`rules::F64_CONDITIONS`],
//! [`rules::BF16_CONDITIONS`] for a comparison read as a condition); a rejection keeps the
//! other lane's code, its message spoken at the site's dtype.
//!
//! Mixed float dtypes are refused (`RXTP-TORCH-150`/`-151`: a call at float64/bfloat16,
//! `-152`/`-153`: an operator, `-154`/`-155`: a comparison read as a condition), not
//! promoted: eager would promote `f32 + f64` to float64, but a compiled function's types are
//! its annotations', so the user converts before the call. An op outside the admitted list
//! at float64/bfloat16 is refused with the same codes: those ops run float32 kernels of ours
//! (the fused `linear` epilogues, the dense paths) or cast their scalars to float32.

use rextio_ir::{DType, Marker};

use super::rules::{
    self, CODE_BF16_BINOPS, CODE_BF16_CONDITIONS, CODE_BF16_OPS, CODE_F64_BINOPS,
    CODE_F64_CONDITIONS, CODE_F64_OPS,
};
use super::{claimed, reject, ClaimOutcome, ClaimSite, ClaimedOp, SiteKind, Surface};

/// The float dtype a tensor key stands for, with the key of the float32 type of its rank.
fn float_key(key: &str) -> Option<(DType, &'static str)> {
    let m = Marker::by_key(key)?;
    if !m.ty.dtype.is_float() || m.ty.device != rextio_ir::Device::Cpu {
        return None;
    }
    let f32_key = Marker::of(m.ty.with_dtype(DType::F32)).key;
    Some((m.ty.dtype, f32_key))
}

/// Every operand type of the site: positional, receiver, keyword values.
fn types_of(site: &ClaimSite) -> impl Iterator<Item = &str> {
    site.operand_types
        .iter()
        .flatten()
        .map(String::as_str)
        .chain(site.receiver.iter().filter_map(|r| r.arg_type.as_deref()))
        .chain(site.keywords.iter().filter_map(|k| k.arg_type.as_deref()))
}

/// Whether the runtime computes `op` through ATen at any float dtype (see the module docs).
fn admitted(op: &ClaimedOp) -> bool {
    matches!(
        op,
        ClaimedOp::Linear { .. }
            | ClaimedOp::Unary { .. }
            | ClaimedOp::Binary { .. }
            | ClaimedOp::TensorScalar { .. }
            | ClaimedOp::Matmul { .. }
            | ClaimedOp::Bmm { .. }
            | ClaimedOp::Reduce { .. }
            | ClaimedOp::ReduceAll { .. }
            | ClaimedOp::Softmax { .. }
            | ClaimedOp::Argmax { .. }
            | ClaimedOp::LayerNorm { .. }
            | ClaimedOp::View { .. }
            | ClaimedOp::Size { .. }
            | ClaimedOp::ToScalar { .. }
            | ClaimedOp::TensorTruth { .. }
    )
}

/// A float32 type key at `dtype` (its rank kept); any other key as it is.
fn at_dtype(key: &'static str, dtype: DType) -> &'static str {
    match Marker::by_key(key) {
        Some(m) if m.ty.dtype == DType::F32 && m.ty.device == rextio_ir::Device::Cpu => {
            Marker::of(m.ty.with_dtype(dtype)).key
        }
        _ => key,
    }
}

/// A float32 lane's message spoken at `dtype`: marker names and `float32` as the site has
/// them.
fn message_at(message: &str, dtype: DType) -> String {
    let marker = match dtype {
        DType::F64 => "TensorF64Cpu",
        DType::BF16 => "TensorBF16Cpu",
        _ => "TensorF32Cpu",
    };
    message
        .replace("TensorF32Cpu", marker)
        .replace("float32", dtype.torch_name())
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if surface != Surface::Extended {
        // The reference surface has no such types (its annotations leave them unresolved,
        // and the Rextio host never offers them): a site that names one anyway is not
        // covered, as a site of unresolved operands is.
        let extended = types_of(site).any(|t| Marker::by_key(t).is_some_and(|m| !m.reference));
        return extended.then_some(ClaimOutcome::NotCovered);
    }
    let floats: Vec<DType> = types_of(site)
        .filter_map(float_key)
        .map(|(dtype, _)| dtype)
        .collect();
    let dtype = *floats.iter().find(|d| **d != DType::F32)?;
    // One rule per dtype and site kind (a record has one scope kind).
    let (rule, code) = match (dtype, site.kind) {
        (DType::BF16, SiteKind::Call) => (rules::BF16_OPS, CODE_BF16_OPS),
        (DType::BF16, SiteKind::Binop) => (rules::BF16_BINOPS, CODE_BF16_BINOPS),
        (DType::BF16, SiteKind::Compare) => (rules::BF16_CONDITIONS, CODE_BF16_CONDITIONS),
        (_, SiteKind::Call) => (rules::F64_OPS, CODE_F64_OPS),
        (_, SiteKind::Binop) => (rules::F64_BINOPS, CODE_F64_BINOPS),
        (_, SiteKind::Compare) => (rules::F64_CONDITIONS, CODE_F64_CONDITIONS),
    };
    // Named in operand order: the first float dtype, then the first other one.
    if let Some(other) = floats.iter().find(|d| **d != floats[0]) {
        return Some(reject(
            site,
            code,
            format!(
                "operands mix {} and {} tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike",
                floats[0].torch_name(),
                other.torch_name()
            ),
        ));
    }
    let as_f32 = |ty: &Option<String>| -> Option<String> {
        ty.as_deref()
            .map(|t| float_key(t).map_or(t, |(_, key)| key).to_string())
    };
    let mut translated = site.clone();
    translated.operand_types = site.operand_types.iter().map(as_f32).collect();
    if let Some(receiver) = &mut translated.receiver {
        receiver.arg_type = as_f32(&receiver.arg_type);
    }
    for keyword in &mut translated.keywords {
        keyword.arg_type = as_f32(&keyword.arg_type);
    }
    Some(match super::claim_lanes(&translated, surface) {
        ClaimOutcome::Claimed {
            result_type, op, ..
        } if admitted(&op) => claimed(rule, at_dtype(result_type, dtype), op),
        ClaimOutcome::Claimed { .. } => reject(
            site,
            code,
            format!(
                "{} tensors are compiled for linear, matmul, bmm, + - * /, the unary activations, softmax/log_softmax, sum/mean/amax/amin/argmax along a dim, the whole-tensor reductions, item()/float(), comparisons as conditions, the views and layer_norm; this op takes float32 only",
                dtype.torch_name()
            ),
        ),
        ClaimOutcome::Rejected { code, message } => ClaimOutcome::Rejected {
            code,
            message: message_at(&message, dtype),
        },
        ClaimOutcome::NotCovered => ClaimOutcome::NotCovered,
    })
}
