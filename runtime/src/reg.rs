//! Run-time values: [`Value`] (what a parameter receives and a function returns), [`Arg`]
//! (an argument as the Python boundary reads it) and [`Reg`] (a value during a run: float32
//! tensors as dense buffers, other tensors as tch tensors, scalars as numbers).

use rextio_ir::{Device, TensorType, Type};
use tch::Tensor;

use crate::buffer::{TensorRef, F32};
use crate::checks::{check_tensor_argument, given_note, EXPECTED_BOOL, EXPECTED_INT, NOT_A_TENSOR};
use crate::error::{unsupported, Result, RuntimeError};
use crate::scalar::Scalar;

/// Expected message for a float parameter given something else.
pub const EXPECTED_FLOAT: &str = "rextio-torch: expected a float";

/// A run-time value: what a parameter receives and what a function returns.
#[derive(Debug)]
pub enum Value {
    Tensor(Tensor),
    Int(i64),
    Bool(bool),
    Float(f64),
}

/// A slot of a call's value vector.
pub(crate) type Slot = usize;

/// One argument for [`Program::bind_args`].
pub enum Arg {
    /// Checked against its parameter's type as [`Program::bind`] checks values.
    Value(Value),
    /// A float32 CPU tensor the caller checked against its parameter's type (dtype, device,
    /// rank, strided and contiguous), viewed in place.
    F32(F32),
}

/// A value during a run: float32 tensors as dense values the executor computes on directly,
/// other tensors (int64, or shapes the dense kernels do not take) as tch tensors.
#[derive(Debug)]
pub(crate) enum Reg {
    Tensor(Tensor),
    F32(F32),
    Int(i64),
    Bool(bool),
    Float(f64),
}

impl Reg {
    /// An argument, already checked against its parameter type `ty`.
    pub(crate) fn of_arg(value: Value, ty: Type) -> Result<Reg> {
        let checked_f32_cpu = matches!(
            ty,
            Type::Tensor(TensorType {
                dtype: rextio_ir::DType::F32,
                device: Device::Cpu,
                ..
            })
        );
        Ok(match value {
            // The type check already read dtype, device and rank: only the layout is left.
            Value::Tensor(t) if checked_f32_cpu && t.is_contiguous() => {
                match F32::view_checked(t) {
                    Ok(v) => Reg::F32(v),
                    Err(t) => Reg::of_owned_tensor(t)?,
                }
            }
            Value::Tensor(t) => Reg::of_owned_tensor(t)?,
            Value::Int(i) => Reg::Int(i),
            Value::Bool(b) => Reg::Bool(b),
            Value::Float(f) => Reg::Float(f),
        })
    }

    /// A tensor handed to generated code's helpers: as [`Reg::of_arg`] reads an argument
    /// (float32 viewed in place, a strided one kept with its strides), whatever its type.
    pub(crate) fn of_tensor(t: &Tensor) -> Result<Reg> {
        Reg::of_owned_tensor(t.shallow_clone())
    }

    /// A contiguous float32 tensor viewed in place; any other tensor as it is. A strided
    /// float32 argument (transposed, sliced, expanded) keeps its strides, as it has them in
    /// eager: a `view` of it follows eager's stride rules (`x.t().view(-1)` of a transposed
    /// argument is a view, of a contiguous one eager's error), ATen's ops read it in eager's
    /// order (a whole `sum` of a transposed matrix is the sum in memory order, as eager's), and
    /// the ops that need dense operands (the fused kernels) copy it themselves, with no
    /// effect on any element's value. Nothing about it is decided when compiling, so a
    /// compiled function needs no key for its arguments' strides.
    pub(crate) fn of_owned_tensor(t: Tensor) -> Result<Reg> {
        // A tensor with the negative bit (`torch._neg_view`, the imaginary part of a
        // conjugate) stores the negation of its values; ATen ops honour the bit, a dense view
        // would not, so it is materialized once.
        let t = if t.f_is_neg()? { t.f_resolve_neg()? } else { t };
        Ok(match F32::view(t) {
            Ok(v) => Reg::F32(v),
            Err(t) => Reg::Tensor(t),
        })
    }

    /// What an ATen op returned from `operands`, dense when it can be; a result that aliases a
    /// pooled operand (whose buffer may be reused) is copied first.
    pub(crate) fn of_result(t: Tensor, operands: &[&Reg]) -> Result<Reg> {
        let aliased = operands.iter().any(|r| match r {
            Reg::F32(v @ F32::Pooled(..)) => v.contains_data_of(&t),
            _ => false,
        });
        let t = if aliased {
            let mut copy = t.f_empty_like()?;
            copy.f_copy_(&t)?;
            copy
        } else {
            t
        };
        Ok(match F32::view(t) {
            Ok(v) => Reg::F32(v),
            Err(t) => Reg::Tensor(t),
        })
    }

    pub(crate) fn tensor(&self) -> Result<TensorRef<'_>> {
        match self {
            Reg::Tensor(t) => Ok(TensorRef::Borrowed(t)),
            Reg::F32(v) => v.tensor(),
            _ => unsupported("a scalar where a tensor is needed"),
        }
    }

    pub(crate) fn into_value(self) -> Result<Value> {
        Ok(match self {
            Reg::Tensor(t) => Value::Tensor(t),
            Reg::F32(v) => Value::Tensor(v.into_tensor()?),
            Reg::Int(i) => Value::Int(i),
            Reg::Bool(b) => Value::Bool(b),
            Reg::Float(f) => Value::Float(f),
        })
    }

    /// A second handle on a value: tensors share their storage, buffers are copied.
    pub(crate) fn share(&self) -> Reg {
        match self {
            Reg::Tensor(t) => Reg::Tensor(t.shallow_clone()),
            Reg::F32(v) => Reg::F32(v.share()),
            Reg::Int(i) => Reg::Int(*i),
            Reg::Bool(b) => Reg::Bool(*b),
            Reg::Float(f) => Reg::Float(*f),
        }
    }

    pub(crate) fn from_scalar(s: Scalar) -> Reg {
        match s {
            Scalar::Int(i) => Reg::Int(i),
            Scalar::Bool(b) => Reg::Bool(b),
            Scalar::Float(f) => Reg::Float(f),
        }
    }
}

/// Checks argument `param` against its parameter type; messages as at the Python boundary.
pub fn check_argument(value: &Value, ty: Type, param: &str) -> Result<()> {
    let given = match value {
        Value::Tensor(_) => "is a tensor",
        Value::Int(_) => "is an int",
        Value::Bool(_) => "is a bool",
        Value::Float(_) => "is a float",
    };
    let wrong = |message: &str| {
        Err(RuntimeError::ArgumentType(format!(
            "{message} {}",
            given_note(param, Some(given))
        )))
    };
    match (value, ty) {
        (Value::Tensor(t), Type::Tensor(expected)) => check_tensor_argument(t, expected, param),
        (Value::Int(_), Type::Int)
        | (Value::Bool(_), Type::Bool)
        | (Value::Float(_), Type::Float) => Ok(()),
        (_, Type::Tensor(_)) => wrong(NOT_A_TENSOR),
        (_, Type::Int) => wrong(EXPECTED_INT),
        (_, Type::Bool) => wrong(EXPECTED_BOOL),
        (_, Type::Float) => wrong(EXPECTED_FLOAT),
    }
}
