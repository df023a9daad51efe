//! What every `linear` path shares: the sizes of a slice-level call ([`LinearDims`], checked by
//! [`check_slices`]), its epilogue ([`Epilogue`]: activations, then a reduction), the scalar
//! and vectorized activations ([`activate`], [`apply_in_place`]) and the one-pass kernels'
//! per-element epilogue ([`Shape`], [`element`]).

use rextio_ir::{FusedReduce, UnaryOp};

use crate::error::{Result, RuntimeError};

/// Sizes of one `linear`: `x` is [batch, k], the weight [n, k] (or [k, n] transposed), the
/// output [batch, n] (or [batch], reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearDims {
    pub batch: usize,
    pub k: usize,
    pub n: usize,
}

impl LinearDims {
    pub fn new(batch: usize, k: usize, n: usize) -> LinearDims {
        LinearDims { batch, k, n }
    }
}

/// What a fused `linear` applies after the product (and bias): `activations` in order, then
/// `reduce` over the output features, if any.
#[derive(Clone, Copy, Debug)]
pub struct Epilogue<'a> {
    pub activations: &'a [UnaryOp],
    pub reduce: Option<FusedReduce>,
}

impl<'a> Epilogue<'a> {
    pub fn new(activations: &'a [UnaryOp], reduce: Option<FusedReduce>) -> Epilogue<'a> {
        Epilogue {
            activations,
            reduce,
        }
    }
}

#[inline(always)]
pub(crate) fn activate(op: UnaryOp, v: f32) -> f32 {
    match op {
        // `v < 0` keeps NaN and -0.0 as ATen's relu does.
        UnaryOp::Relu => {
            if v < 0.0 {
                0.0
            } else {
                v
            }
        }
        UnaryOp::Sigmoid => crate::vmath::sigmoid(v),
        UnaryOp::Tanh => crate::vmath::tanh(v),
        UnaryOp::Abs => v.abs(),
        UnaryOp::Neg => -v,
        UnaryOp::Square => v * v,
        UnaryOp::Exp => crate::vmath::exp(v),
        UnaryOp::Log => v.ln(),
        UnaryOp::Sqrt => v.sqrt(),
        UnaryOp::Gelu => crate::vmath::gelu(v),
    }
}

/// `op` on element `v` of a whole tensor of `len` elements: [`activate`], except that GELU
/// of a one-element tensor takes eager's scalar loop ([`crate::vmath::gelu_one`]).
#[inline(always)]
pub(crate) fn activate_whole(op: UnaryOp, v: f32, len: usize) -> f32 {
    if op == UnaryOp::Gelu && len == 1 {
        crate::vmath::gelu_one(v)
    } else {
        activate(op, v)
    }
}

#[inline(always)]
fn activate_all(activations: &[UnaryOp], mut v: f32) -> f32 {
    for &op in activations {
        v = activate(op, v);
    }
    v
}

pub(crate) fn check_reduce(reduce: Option<FusedReduce>) -> Result<()> {
    match reduce {
        Some(r) if r.dim != 1 => Err(RuntimeError::Unsupported(format!(
            "fused_linear reduces only over dim 1, got dim {}",
            r.dim
        ))),
        _ => Ok(()),
    }
}

/// Checks the slice lengths and the reduction of a slice-level kernel (every activation has
/// a scalar and a vectorized form, so the chain itself needs no check).
pub(crate) fn check_slices(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    dims: LinearDims,
    reduce: Option<FusedReduce>,
    out: &[f32],
) -> Result<()> {
    let LinearDims { batch, k, n } = dims;
    let out_len = if reduce.is_some() { batch } else { batch * n };
    if x.len() != batch * k
        || w.len() != n * k
        || b.is_some_and(|b| b.len() != n)
        || out.len() != out_len
    {
        return Err(RuntimeError::Shape(format!(
            "fused_linear buffers do not match {batch}x{k} -> {n} (x {}, w {}, b {:?}, out {})",
            x.len(),
            w.len(),
            b.map(<[f32]>::len),
            out.len()
        )));
    }
    check_reduce(reduce)
}

/// [`apply_in_place`] over a buffer that is a whole tensor: GELU of one element takes eager's
/// scalar loop ([`activate_whole`]).
pub(crate) fn apply_whole_in_place(op: UnaryOp, data: &mut [f32]) {
    if let [v] = data {
        *v = activate_whole(op, *v, 1);
    } else {
        apply_in_place(op, data);
    }
}

/// One activation over a buffer (part of a tensor of two or more elements), as its own loop
/// so the compiler can vectorize it.
pub(crate) fn apply_in_place(op: UnaryOp, data: &mut [f32]) {
    match op {
        UnaryOp::Relu => data
            .iter_mut()
            .for_each(|v| *v = activate(UnaryOp::Relu, *v)),
        UnaryOp::Abs => data.iter_mut().for_each(|v| *v = v.abs()),
        UnaryOp::Neg => data.iter_mut().for_each(|v| *v = -*v),
        UnaryOp::Square => data.iter_mut().for_each(|v| *v *= *v),
        UnaryOp::Exp => crate::vmath::map_in_place(crate::vmath::Func::Exp, data),
        UnaryOp::Tanh => crate::vmath::map_in_place(crate::vmath::Func::Tanh, data),
        UnaryOp::Sigmoid => crate::vmath::map_in_place(crate::vmath::Func::Sigmoid, data),
        UnaryOp::Gelu => crate::vmath::map_in_place(crate::vmath::Func::Gelu, data),
        other => data.iter_mut().for_each(|v| *v = activate(other, *v)),
    }
}

/// A one-pass kernel's sizes and epilogue.
pub(crate) struct Shape<'a> {
    pub(crate) batch: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) activations: &'a [UnaryOp],
    pub(crate) reduce: Option<FusedReduce>,
    /// Whether every activation is cheap enough to apply element by element in the tile
    /// loop (one or two instructions); transcendental ones run vectorized over each chunk.
    pub(crate) inline_activations: bool,
}

impl<'a> Shape<'a> {
    pub(crate) fn new(dims: LinearDims, epilogue: Epilogue<'a>) -> Shape<'a> {
        let LinearDims { batch, k, n } = dims;
        let Epilogue {
            activations,
            reduce,
        } = epilogue;
        Shape {
            batch,
            k,
            n,
            activations,
            reduce,
            inline_activations: activations.iter().all(|op| {
                matches!(
                    op,
                    UnaryOp::Relu | UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Square
                )
            }),
        }
    }
}

/// Output feature `j` from its dot product: bias, then activations.
#[inline(always)]
fn activated(b: Option<&[f32]>, shape: &Shape<'_>, j: usize, dot: f32) -> f32 {
    activate_all(shape.activations, biased(b, j, dot))
}

/// Output feature `j` from its dot product plus the bias. Like ATen's GEMM for batches > 1:
/// the product sum starts from +0.0 and the bias is added last, so an all-zero row gives
/// +0.0 whatever the zero signs.
#[inline(always)]
fn biased(b: Option<&[f32]>, j: usize, dot: f32) -> f32 {
    match b {
        Some(bias) => dot + bias[j],
        None => dot,
    }
}

/// An output element as the one-pass kernel's tile loop stores it: activated there when the
/// activations are cheap, else only biased, and the chain applied afterwards to the whole
/// chunk by the vectorized loops of [`apply_in_place`] (same bits: `vmath`'s slice loops give
/// the scalar functions' results).
#[inline(always)]
pub(crate) fn element(b: Option<&[f32]>, shape: &Shape<'_>, j: usize, dot: f32) -> f32 {
    if shape.inline_activations {
        activated(b, shape, j, dot)
    } else {
        biased(b, j, dot)
    }
}

/// [`activated`], then either the output element or a running sum of outputs.
#[inline(always)]
pub(crate) fn epilogue_element(
    b: Option<&[f32]>,
    shape: &Shape<'_>,
    row: usize,
    j: usize,
    dot: f32,
    sum: &mut f32,
    out: &mut [f32],
) {
    let v = activated(b, shape, j, dot);
    if shape.reduce.is_some() {
        *sum += v;
    } else {
        out[row * shape.n + j] = v;
    }
}
