//! The elementwise selection and binary math ops ([`ElementwiseOp`]: `where` of an inline
//! comparison, `maximum`, `minimum`, `pow` with a scalar exponent), computed by ATen's own
//! kernels so the bits, the broadcasting and the errors are eager's. Owns the scalar
//! conversions eager makes for them: a scalar compared with a float32 tensor is rounded to
//! float32 first (eager's comparison runs in the tensor's dtype: `x > 0.1` compares with
//! `float32(0.1)`, and `1e300` becomes `inf`); a scalar a `where` selects is cast with
//! ATen's checked cast (a finite float beyond float32's range raises eager's
//! `RuntimeError`); `pow`'s exponent goes to ATen as the Python int or float it is, so
//! ATen's special cases (`0.5` is `sqrt`, `2` is `x * x`, ...) are eager's.
//!
//! Every tch call here is a fallible `f_` one over tensors; the one `Scalar` argument
//! (`pow`'s exponent) goes with a float32 base only, for which ATen never raises (tch drops
//! a `Scalar` before it reads ATen's error and panics there).

use rextio_ir::{CompareOp, ElementwiseOp};
use tch::{Kind, Tensor};

use crate::error::{unsupported, Result};
use crate::eval::{checked_f32, scalar_f32};
use crate::ops;
use crate::reg::Reg;
use crate::scalar::Scalar;

/// One operand of an elementwise op: a tensor, or a Python scalar where the op takes one.
#[derive(Clone, Copy)]
pub(crate) enum Operand<'a> {
    Tensor(&'a Reg),
    Scalar(Scalar),
}

/// A float32 value as a 0-d float32 tensor: it broadcasts against any tensor, and a 0-d
/// tensor never changes a dimensioned float32 tensor's dtype, so ATen computes in float32.
fn zero_dim(v: f32) -> Result<Tensor> {
    Ok(Tensor::f_from_slice(&[v])?.f_squeeze()?)
}

fn float32<'t>(what: &str, t: &'t Tensor) -> Result<&'t Tensor> {
    if t.kind() == Kind::Float {
        Ok(t)
    } else {
        unsupported(format!("internal: {what} is not a float32 tensor"))
    }
}

/// `torch.where(lhs <cmp> rhs, on_true, on_false)` over tensors (scalars already 0-d).
pub fn where_compare(
    cmp: CompareOp,
    lhs: &Tensor,
    rhs: &Tensor,
    on_true: &Tensor,
    on_false: &Tensor,
) -> Result<Tensor> {
    let cond = ops::compare(cmp, lhs, rhs)?;
    Ok(on_true.f_where_self(&cond, on_false)?)
}

/// `torch.maximum` / `torch.minimum` (NaN-propagating, broadcasting).
pub fn maximum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_maximum(b)?)
}

pub fn minimum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_minimum(b)?)
}

/// `torch.pow(x, p)` with a Python scalar exponent: ATen's `pow(Tensor, Scalar)`, the
/// exponent an int64 or a double as Python gave it.
pub fn pow(x: &Tensor, exponent: Scalar) -> Result<Tensor> {
    let x = float32("pow's base", x)?;
    Ok(match exponent {
        Scalar::Int(i) => x.f_pow_tensor_scalar(i)?,
        Scalar::Bool(b) => x.f_pow_tensor_scalar(i64::from(b))?,
        Scalar::Float(f) => x.f_pow_tensor_scalar(f)?,
    })
}

/// An operand as a tensor: a tensor as it is, a scalar as a 0-d float32 tensor, cast by
/// `cast` (rounding for a compared scalar, ATen's checked cast for a selected one).
fn as_tensor(operand: Operand<'_>, cast: fn(Scalar) -> Result<f32>) -> Result<TensorOrOwned<'_>> {
    match operand {
        Operand::Tensor(reg) => Ok(TensorOrOwned::Reg(reg)),
        Operand::Scalar(s) => Ok(TensorOrOwned::Owned(zero_dim(cast(s)?)?)),
    }
}

enum TensorOrOwned<'a> {
    Reg(&'a Reg),
    Owned(Tensor),
}

/// The elementwise op over run-time operands, as eager computes it (module doc).
pub(crate) fn elementwise(op: ElementwiseOp, operands: &[Operand<'_>]) -> Result<Reg> {
    if operands.len() != op.arity() {
        return unsupported(format!("internal: {op} takes {} operands", op.arity()));
    }
    let regs: Vec<&Reg> = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Tensor(r) => Some(*r),
            Operand::Scalar(_) => None,
        })
        .collect();
    let round: fn(Scalar) -> Result<f32> = |s| Ok(scalar_f32(s));
    let y = match op {
        ElementwiseOp::Where(cmp) => {
            let parts = [
                as_tensor(operands[0], round)?,
                as_tensor(operands[1], round)?,
                as_tensor(operands[2], checked_f32)?,
                as_tensor(operands[3], checked_f32)?,
            ];
            let mut tensors = Vec::with_capacity(4);
            for part in &parts {
                tensors.push(match part {
                    TensorOrOwned::Reg(r) => Borrowed::Ref(r.tensor()?),
                    TensorOrOwned::Owned(t) => Borrowed::Plain(t),
                });
            }
            let t = |i: usize| -> Result<&Tensor> { float32("a where operand", tensors[i].get()) };
            where_compare(cmp, t(0)?, t(1)?, t(2)?, t(3)?)?
        }
        ElementwiseOp::Maximum | ElementwiseOp::Minimum | ElementwiseOp::Pow => {
            let Operand::Tensor(a) = operands[0] else {
                return unsupported(format!("internal: {op}'s first operand is a scalar"));
            };
            let a = a.tensor()?;
            let a = float32("the first operand", &a)?;
            match (op, operands[1]) {
                (ElementwiseOp::Pow, Operand::Scalar(p)) => pow(a, p)?,
                (ElementwiseOp::Maximum, Operand::Tensor(b)) => {
                    maximum(a, float32("maximum's other", &*b.tensor()?)?)?
                }
                (ElementwiseOp::Minimum, Operand::Tensor(b)) => {
                    minimum(a, float32("minimum's other", &*b.tensor()?)?)?
                }
                _ => return unsupported(format!("internal: {op}'s operands have the wrong kinds")),
            }
        }
    };
    Reg::of_result(y, &regs)
}

/// A tensor borrowed from a register or owned here.
enum Borrowed<'a> {
    Ref(crate::buffer::TensorRef<'a>),
    Plain(&'a Tensor),
}

impl Borrowed<'_> {
    fn get(&self) -> &Tensor {
        match self {
            Borrowed::Ref(r) => r,
            Borrowed::Plain(t) => t,
        }
    }
}
