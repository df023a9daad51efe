//! What every `linear` path shares: the sizes of a slice-level call ([`LinearDims`], checked by
//! [`check_slices`]), its epilogue ([`Epilogue`]: activations, then a reduction), the scalar
//! and vectorized activations ([`activate`], [`apply_in_place`]) and the one-pass kernels'
//! per-element epilogue ([`Shape`], [`element`]).

use rextio_ir::{FusedReduce, UnaryOp};

use crate::error::{Result, RuntimeError};
/// The activations, as every `linear` path applies them: a unary op's numerics
/// ([`crate::unary`]).
pub(crate) use crate::unary::{
    in_place as apply_in_place, scalar as activate, scalar_whole as activate_whole,
    whole_in_place as apply_whole_in_place,
};

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
            inline_activations: activations.iter().all(|&op| crate::unary::inline_cheap(op)),
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
