//! The numerics of every unary op of the IR's op table (`for_each_unary_op!`, `ir/src/expr.rs`), in
//! one place: a new op is its table row and its arms here (and its tests). Each form below is
//! one `match` over [`UnaryOp`], so the compiler names every form a new op still lacks.
//!
//! - [`scalar`]: one element (the fused kernels' per-element epilogue, and every loop's
//!   fallback); [`scalar_whole`]: the same for an element that is a whole tensor (GELU of one
//!   element takes eager's scalar loop, [`vmath::gelu_one`]).
//! - [`slice`]: a whole tensor into a new buffer; [`in_place`], [`whole_in_place`]: over a
//!   buffer in place. One loop per op, so that the cheap ones vectorize and the
//!   transcendental ones run [`vmath`]'s vector loops.
//! - [`inline_cheap`]: whether the one-pass kernels may apply the op element by element in
//!   their tile loop (one or two instructions) rather than vectorized over each chunk.
//! - [`one_element_differs`]: whether a one-element tensor takes another loop in eager (the
//!   fused kernels then apply the chain to the lone value with [`scalar_whole`]).
//! - [`supported`]: whether [`slice`] computes the op on so many elements (else ATen does).
//! - [`aten`]: the op through libtorch, for values the dense kernels do not take.
//!
//! Every form computes the same bits for the same element (the slice loops are the scalar
//! formula vectorized; `vmath`'s tests hold its vector and scalar loops together), so which
//! form runs never changes a result.

use rextio_ir::UnaryOp;
use tch::Tensor;

use crate::error::Result;
use crate::vmath::{self, Func};

/// `log` on more elements than this goes to ATen, whose vectorized version wins over the C
/// library's scalar one once its dispatch cost is paid (exp, tanh and sigmoid are
/// vectorized here, [`vmath`]).
pub const SCALAR_TRANSCENDENTAL_MAX: usize = 256;

/// `op` of one element.
#[inline(always)]
pub fn scalar(op: UnaryOp, v: f32) -> f32 {
    match op {
        // `v < 0` keeps NaN and -0.0 as ATen's relu does.
        UnaryOp::Relu => {
            if v < 0.0 {
                0.0
            } else {
                v
            }
        }
        UnaryOp::Sigmoid => vmath::sigmoid(v),
        UnaryOp::Tanh => vmath::tanh(v),
        UnaryOp::Abs => v.abs(),
        UnaryOp::Neg => -v,
        UnaryOp::Square => v * v,
        UnaryOp::Exp => vmath::exp(v),
        UnaryOp::Log => v.ln(),
        UnaryOp::Sqrt => v.sqrt(),
        UnaryOp::Gelu => vmath::gelu(v),
        UnaryOp::Silu => vmath::silu(v),
        // ATen's `1 / std::sqrt(a)` (vectorized: a division of a square root), so no
        // reciprocal-square-root estimate.
        UnaryOp::Rsqrt => 1.0 / v.sqrt(),
        // ATen's clamp to [0, 6]. `f32::clamp` is `v < 0 -> 0, v > 6 -> 6, else v`: both
        // compares are false for NaN and for -0.0, so both are kept (eager: relu6(NaN) = NaN,
        // relu6(-0.0) = -0.0, relu6(-inf) = 0).
        UnaryOp::Relu6 => v.clamp(0.0, 6.0),
        // Eager's vectorized loop; a whole tensor's last elements take its scalar loop
        // ([`slice`], [`whole_in_place`]).
        UnaryOp::GeluTanh => vmath::gelu_tanh(v),
    }
}

/// Whether eager computes `op` of a one-element tensor with another loop than of a longer one
/// (with other classes somewhere): then [`scalar_whole`] differs from [`scalar`] at `len == 1`.
pub fn one_element_differs(op: UnaryOp) -> bool {
    matches!(op, UnaryOp::Gelu | UnaryOp::GeluTanh)
}

/// `op` on element `v` of a whole tensor of `len` elements: [`scalar`], except that GELU of
/// a one-element tensor takes eager's scalar loop ([`vmath::gelu_one`]).
#[inline(always)]
pub fn scalar_whole(op: UnaryOp, v: f32, len: usize) -> f32 {
    match op {
        UnaryOp::Gelu if len == 1 => vmath::gelu_one(v),
        // Fewer elements than ATen's vector chunk are all its scalar loop's.
        UnaryOp::GeluTanh if crate::cpu::aten_vector_prefix(len) == 0 => vmath::gelu_tanh_one(v),
        _ => scalar(op, v),
    }
}

/// Whether the one-pass kernels apply `op` element by element inside their tile loop (one or
/// two instructions); the others run vectorized over each finished chunk ([`in_place`]).
pub fn inline_cheap(op: UnaryOp) -> bool {
    matches!(
        op,
        UnaryOp::Relu | UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Square | UnaryOp::Relu6
    )
}

/// Whether [`slice`] computes `op` on `len` elements (else the caller uses ATen, [`aten`]).
pub fn supported(op: UnaryOp, len: usize) -> bool {
    match op {
        UnaryOp::Relu
        | UnaryOp::Gelu
        | UnaryOp::Abs
        | UnaryOp::Neg
        | UnaryOp::Square
        | UnaryOp::Sqrt
        | UnaryOp::Sigmoid
        | UnaryOp::Tanh
        | UnaryOp::Exp
        | UnaryOp::Silu
        | UnaryOp::Rsqrt
        | UnaryOp::Relu6
        | UnaryOp::GeluTanh => true,
        UnaryOp::Log => len <= SCALAR_TRANSCENDENTAL_MAX,
    }
}

/// `dst[i] = op(src[i])` where `src` is a whole tensor (its length decides GELU's loop, as
/// eager's does).
pub fn slice(op: UnaryOp, src: &[f32], dst: &mut [f32]) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    // One loop per op so that the cheap ones vectorize.
    match op {
        UnaryOp::Relu => dst
            .iter_mut()
            .zip(src)
            .for_each(|(d, &v)| *d = scalar(UnaryOp::Relu, v)),
        UnaryOp::Abs => dst.iter_mut().zip(src).for_each(|(d, &v)| *d = v.abs()),
        UnaryOp::Neg => dst.iter_mut().zip(src).for_each(|(d, &v)| *d = -v),
        UnaryOp::Square => dst.iter_mut().zip(src).for_each(|(d, &v)| *d = v * v),
        UnaryOp::Sqrt => dst.iter_mut().zip(src).for_each(|(d, &v)| *d = v.sqrt()),
        UnaryOp::Exp => vmath::map(Func::Exp, src, dst),
        UnaryOp::Tanh => vmath::map(Func::Tanh, src, dst),
        UnaryOp::Sigmoid => vmath::map(Func::Sigmoid, src, dst),
        // Eager's one-element GELU is ATen's scalar loop; longer contiguous tensors take
        // oneDNN's kernel (`vmath::gelu`), with other classes at the edges.
        UnaryOp::Gelu if n == 1 => vmath::map(Func::GeluOne, src, dst),
        UnaryOp::Gelu => vmath::map(Func::Gelu, src, dst),
        UnaryOp::Silu => vmath::map(Func::Silu, src, dst),
        UnaryOp::GeluTanh => {
            dst.copy_from_slice(src);
            gelu_tanh_whole(dst);
        }
        UnaryOp::Rsqrt => dst
            .iter_mut()
            .zip(src)
            .for_each(|(d, &v)| *d = 1.0 / v.sqrt()),
        UnaryOp::Relu6 => dst
            .iter_mut()
            .zip(src)
            .for_each(|(d, &v)| *d = scalar(UnaryOp::Relu6, v)),
        other => dst
            .iter_mut()
            .zip(src)
            .for_each(|(d, &v)| *d = scalar(other, v)),
    }
}

/// [`in_place`] over a buffer that is a whole tensor: GELU of one element takes eager's
/// scalar loop ([`scalar_whole`]).
pub fn whole_in_place(op: UnaryOp, data: &mut [f32]) {
    if let [v] = data {
        *v = scalar_whole(op, *v, 1);
    } else if op == UnaryOp::GeluTanh {
        gelu_tanh_whole(data);
    } else {
        in_place(op, data);
    }
}

/// SiLU of a whole contiguous tensor as eager computes it at one thread, bit for bit: ATen's
/// vector loop over [`crate::cpu::aten_vector_prefix`], its scalar loop over the rest (as
/// `gelu_tanh_whole` splits, but from `src` into `dst`: no copy first).
pub fn silu_aten_whole(src: &[f32], dst: &mut [f32]) {
    let n = src.len().min(dst.len());
    let split = crate::cpu::aten_vector_prefix(n);
    vmath::map(Func::SiluAten, &src[..split], &mut dst[..split]);
    for (d, &v) in dst[split..n].iter_mut().zip(&src[split..n]) {
        *d = vmath::silu_aten_scalar(v);
    }
}

/// GELU's tanh approximation over a whole tensor, in place, as eager splits it
/// ([`crate::cpu::aten_vector_prefix`]): its vector loop's formula over the whole chunks,
/// its scalar loop's over the rest. The two differ in class for x in about [-5.36, -5.06]
/// (Sleef's tanh is exactly -1 there, the C library's is not: -0.0 against about -1.5e-7).
fn gelu_tanh_whole(data: &mut [f32]) {
    let split = crate::cpu::aten_vector_prefix(data.len());
    let (head, tail) = data.split_at_mut(split);
    vmath::map_in_place(Func::GeluTanh, head);
    tail.iter_mut().for_each(|v| *v = vmath::gelu_tanh_one(*v));
}

/// One op over a buffer (part of a tensor of two or more elements), as its own loop so the
/// compiler can vectorize it.
pub fn in_place(op: UnaryOp, data: &mut [f32]) {
    match op {
        UnaryOp::Relu => data.iter_mut().for_each(|v| *v = scalar(UnaryOp::Relu, *v)),
        UnaryOp::Abs => data.iter_mut().for_each(|v| *v = v.abs()),
        UnaryOp::Neg => data.iter_mut().for_each(|v| *v = -*v),
        UnaryOp::Square => data.iter_mut().for_each(|v| *v *= *v),
        UnaryOp::Exp => vmath::map_in_place(Func::Exp, data),
        UnaryOp::Tanh => vmath::map_in_place(Func::Tanh, data),
        UnaryOp::Sigmoid => vmath::map_in_place(Func::Sigmoid, data),
        UnaryOp::Gelu => vmath::map_in_place(Func::Gelu, data),
        UnaryOp::Silu => vmath::map_in_place(Func::Silu, data),
        UnaryOp::GeluTanh => vmath::map_in_place(Func::GeluTanh, data),
        UnaryOp::Rsqrt => data.iter_mut().for_each(|v| *v = 1.0 / v.sqrt()),
        UnaryOp::Relu6 => data
            .iter_mut()
            .for_each(|v| *v = scalar(UnaryOp::Relu6, *v)),
        other => data.iter_mut().for_each(|v| *v = scalar(other, *v)),
    }
}

/// [`aten`] written into `out` (a contiguous tensor of `x`'s size and dtype), by ATen's `_out`
/// op: the same kernel, the same bits.
pub fn aten_into(op: UnaryOp, x: &Tensor, out: &mut Tensor) -> Result<()> {
    // The `_out` ops return `out` itself.
    let _out: Tensor = match op {
        UnaryOp::Sigmoid => x.f_sigmoid_out(out)?,
        UnaryOp::Tanh => x.f_tanh_out(out)?,
        UnaryOp::Exp => x.f_exp_out(out)?,
        UnaryOp::Log => x.f_log_out(out)?,
        UnaryOp::Gelu => x.f_gelu_out(out, "none")?,
        UnaryOp::Silu => x.f_silu_out(out)?,
        UnaryOp::GeluTanh => x.f_gelu_out(out, "tanh")?,
        other => {
            out.f_copy_(&aten(other, x)?)?;
            return Ok(());
        }
    };
    Ok(())
}

/// `op` through libtorch (any dtype, device and size eager takes).
pub fn aten(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    Ok(match op {
        UnaryOp::Relu => x.f_relu()?,
        UnaryOp::Sigmoid => x.f_sigmoid()?,
        UnaryOp::Tanh => x.f_tanh()?,
        UnaryOp::Abs => x.f_abs()?,
        UnaryOp::Neg => x.f_neg()?,
        UnaryOp::Square => x.f_square()?,
        UnaryOp::Exp => x.f_exp()?,
        UnaryOp::Log => x.f_log()?,
        UnaryOp::Sqrt => x.f_sqrt()?,
        // The source option is never interpolated: each option is its own op.
        UnaryOp::Gelu => x.f_gelu("none")?,
        UnaryOp::Silu => x.f_silu()?,
        UnaryOp::Rsqrt => x.f_rsqrt()?,
        UnaryOp::Relu6 => x.f_relu6()?,
        UnaryOp::GeluTanh => x.f_gelu("tanh")?,
    })
}
