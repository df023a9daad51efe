//! The fused attention kernel: `softmax((q @ k^T) op c, dim=-1) @ v` over contiguous float32
//! rank-3 tensors, one batch entry at a time, through the linear kernels: the scores of entry
//! `i` are `linear(q_i, k_i)` (`k_i` is already the `[out, in]` weight of that product), scaled
//! in place as eager's tensor-scalar op does each element, normalized by the fused softmax's
//! row kernel, and multiplied by `v_i` (an `[in, out]` weight) into the result. No
//! intermediate tensor is made and libtorch is called once (for the result). The products sum
//! in the linear kernels' order, so the result is within the fused linear tolerance of eager's
//! `bmm`s (docs/parity.md), not bit for bit.

use rextio_ir::TensorScalarOp;
use tch::{Device, Kind, Tensor};

use crate::buffer::Buffer;
use crate::dense;
use crate::error::Result;
use crate::kernels::{self, Epilogue, KernelPath, LinearDims, COST_MODEL};

/// Whether `t` is a contiguous float32 CPU tensor of rank 3.
fn dense_rank3(t: &Tensor) -> bool {
    t.dim() == 3
        && t.f_kind().ok() == Some(Kind::Float)
        && t.device() == Device::Cpu
        && t.is_contiguous()
}

/// `softmax((q @ k.transpose(-2, -1)) op c, dim=-1) @ v` (`scale` the op and `c` cast to
/// float32 as eager casts a Python scalar), or `None` where the unfused chain must run: a
/// tensor that is not a contiguous float32 CPU rank-3 tensor, sizes that do not fit each other
/// exactly (eager's errors, or a batch of 1 that `matmul` broadcasts), an empty dim, or a
/// product long enough for libtorch's GEMM. Inputs are never written.
pub fn fused_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: Option<(TensorScalarOp, f32)>,
) -> Result<Option<Tensor>> {
    if !(dense_rank3(q) && dense_rank3(k) && dense_rank3(v)) {
        return Ok(None);
    }
    let size = |t: &Tensor| -> Option<[usize; 3]> {
        let s = t.size();
        Some([
            usize::try_from(s[0]).ok()?,
            usize::try_from(s[1]).ok()?,
            usize::try_from(s[2]).ok()?,
        ])
    };
    let (Some([b, t, d]), Some([kb, s, kd]), Some([vb, vs, e])) = (size(q), size(k), size(v))
    else {
        return Ok(None);
    };
    if kb != b || vb != b || kd != d || vs != s || [b, t, d, s, e].contains(&0) {
        return Ok(None);
    }
    let (scores_path, values_path) = (COST_MODEL.choose(t, d, s), COST_MODEL.choose(t, s, e));
    if [scores_path, values_path].contains(&KernelPath::GemmThenEpilogue) {
        return Ok(None);
    }
    let mut out = Tensor::f_empty([b as i64, t as i64, e as i64], (Kind::Float, Device::Cpu))?;
    // SAFETY: each tensor is contiguous float32 on the CPU with the sizes read above (checked),
    // alive for this call and not written during it.
    let (qd, kd_, vd) = unsafe {
        (
            kernels::f32_slice(q, b * t * d),
            kernels::f32_slice(k, b * s * d),
            kernels::f32_slice(v, b * s * e),
        )
    };
    // SAFETY: `out` is a fresh contiguous float32 tensor of `b * t * e` elements that only
    // this slice refers to.
    let od = unsafe { kernels::f32_slice_mut(&mut out, b * t * e) };
    let mut scores = Buffer::take(t * s);
    for i in 0..b {
        let (qi, ki, vi) = (
            &qd[i * t * d..][..t * d],
            &kd_[i * s * d..][..s * d],
            &vd[i * s * e..][..s * e],
        );
        // Scores: `q_i @ k_i^T` is `linear(q_i, k_i)`; the transposed-weight path reads the
        // weight as `[in, out]`.
        let kt;
        let weight = if scores_path == KernelPath::BlockedTransposed {
            kt = kernels::transposed(ki, s, d);
            kt.as_slice()
        } else {
            ki
        };
        let dims = LinearDims::new(t, d, s);
        kernels::linear_into(
            scores_path,
            qi,
            weight,
            None,
            dims,
            Epilogue::new(&[], None),
            scores.as_mut_slice(),
        )?;
        if let Some((op, c)) = scale {
            scores
                .as_mut_slice()
                .iter_mut()
                .for_each(|x| *x = op.apply(*x, c));
        }
        dense::softmax_rows_in_place(scores.as_mut_slice(), t, s);
        // Values: `p_i @ v_i`, `v_i` an `[in, out]` weight (as is on the transposed path).
        let vt;
        let weight = if values_path == KernelPath::BlockedTransposed {
            vi
        } else {
            vt = kernels::transposed(vi, s, e);
            vt.as_slice()
        };
        let dims = LinearDims::new(t, s, e);
        let dst = &mut od[i * t * e..][..t * e];
        kernels::linear_into(
            values_path,
            scores.as_slice(),
            weight,
            None,
            dims,
            Epilogue::new(&[], None),
            dst,
        )?;
    }
    Ok(Some(out))
}
