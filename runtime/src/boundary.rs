//! The Python boundary: tensors cross without a storage copy (tch's `pyobject_unpack` /
//! `pyobject_wrap`), arguments are checked with the reference's exact messages (followed by the argument's name
//! and what it was given), and run-time
//! errors become the matching Python exceptions.

use pyo3::exceptions::{
    PyKeyboardInterrupt, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError,
    PyZeroDivisionError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};
use rextio_ir::{TensorType, Type};
use tch::Tensor;

use crate::checks::{
    check_tensor_argument_on, device_name, given_note, EXPECTED_BOOL, EXPECTED_INT, NOT_A_TENSOR,
};
use crate::error::RuntimeError;
use crate::executor::{Value, EXPECTED_FLOAT};
use crate::lazy::LazyTensor;

/// The Python exception for a run-time error.
pub fn to_py_err(err: RuntimeError) -> PyErr {
    match err {
        RuntimeError::ArgumentType(m) => PyTypeError::new_err(m),
        RuntimeError::ArgumentValue(m) | RuntimeError::Value(m) => PyValueError::new_err(m),
        RuntimeError::ZeroDivision(m) => PyZeroDivisionError::new_err(m),
        RuntimeError::Overflow(m) => PyOverflowError::new_err(m),
        RuntimeError::Interrupted => PyKeyboardInterrupt::new_err(()),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// Borrows the tensor behind `obj` (a new handle on the same storage) after checking it is
/// exactly `expected`; errors name parameter `param` and what it was given.
pub fn extract_tensor(
    obj: &Bound<'_, PyAny>,
    expected: TensorType,
    param: &str,
) -> PyResult<Tensor> {
    // SAFETY: `obj` is a live Python object for the duration of the call and the GIL is held.
    let unpacked = unsafe { Tensor::pyobject_unpack(obj.as_ptr() as *mut tch::python::CPyObject) };
    let tensor = match unpacked {
        Ok(Some(t)) => t,
        Ok(None) => return Err(PyTypeError::new_err(wrong_kind(NOT_A_TENSOR, obj, param))),
        Err(e) => return Err(PyRuntimeError::new_err(e.to_string())),
    };
    let torch_device = |device| match obj.getattr("device").and_then(|d| d.str()) {
        Ok(name) => name.to_string(),
        Err(_) => device_name(device),
    };
    check_tensor_argument_on(&tensor, expected, param, torch_device).map_err(to_py_err)?;
    Ok(tensor)
}

/// A checked argument as a value of a Rextio-generated function ([`crate::lazy`]).
pub fn extract_lazy(
    obj: &Bound<'_, PyAny>,
    expected: TensorType,
    param: &str,
) -> PyResult<LazyTensor> {
    LazyTensor::argument(extract_tensor(obj, expected, param)?, expected).map_err(to_py_err)
}

/// The reference's message, then which argument got what Python type.
fn wrong_kind(message: &str, obj: &Bound<'_, PyAny>, param: &str) -> String {
    let given = if obj.is_none() {
        "is None".to_string()
    } else {
        match obj.get_type().name() {
            Ok(name) => {
                let article = if name
                    .to_str()
                    .ok()
                    .and_then(|n| n.chars().next())
                    .is_some_and(|c| "aeiouAEIOU".contains(c))
                {
                    "an"
                } else {
                    "a"
                };
                format!("is {article} {name}")
            }
            Err(_) => "is of another type".to_string(),
        }
    };
    format!("{message} {}", given_note(param, Some(&given)))
}

/// Converts argument `param` to a [`Value`] of type `ty`.
pub fn extract_value(obj: &Bound<'_, PyAny>, ty: Type, param: &str) -> PyResult<Value> {
    match ty {
        Type::Tensor(t) => extract_tensor(obj, t, param).map(Value::Tensor),
        // `bool` is a subclass of `int` in Python; an int parameter does not take one.
        Type::Int if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() => {
            obj.extract::<i64>().map(Value::Int)
        }
        Type::Int => Err(PyTypeError::new_err(wrong_kind(EXPECTED_INT, obj, param))),
        Type::Bool if obj.is_instance_of::<PyBool>() => obj.extract::<bool>().map(Value::Bool),
        Type::Bool => Err(PyTypeError::new_err(wrong_kind(EXPECTED_BOOL, obj, param))),
        // A float parameter takes a Python float or an int (as `float(n)` would), not a bool.
        Type::Float if obj.is_instance_of::<PyFloat>() => obj.extract::<f64>().map(Value::Float),
        Type::Float if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() => {
            obj.extract::<f64>().map(Value::Float)
        }
        Type::Float => Err(PyTypeError::new_err(wrong_kind(EXPECTED_FLOAT, obj, param))),
    }
}

/// Hands a result tensor to Python as a `torch.Tensor` (no copy).
pub fn materialize_tensor<'py>(py: Python<'py>, tensor: Tensor) -> PyResult<Bound<'py, PyAny>> {
    let ptr = tensor
        .pyobject_wrap()
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    // SAFETY: `pyobject_wrap` returns a new (owned) reference to a live torch.Tensor.
    unsafe { Ok(Bound::from_owned_ptr(py, ptr as *mut pyo3::ffi::PyObject)) }
}

/// Hands a Rextio-generated function's result to Python, running it if it is pending.
pub fn materialize_lazy<'py>(py: Python<'py>, value: LazyTensor) -> PyResult<Bound<'py, PyAny>> {
    materialize_tensor(py, value.into_tensor().map_err(to_py_err)?)
}

pub fn materialize_value<'py>(py: Python<'py>, value: Value) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Tensor(t) => materialize_tensor(py, t),
        Value::Int(i) => Ok(i.into_pyobject(py)?.into_any()),
        Value::Bool(b) => Ok(PyBool::new(py, b).to_owned().into_any()),
        Value::Float(f) => Ok(PyFloat::new(py, f).into_any()),
    }
}

/// An `int` argument (not a `bool`).
pub fn extract_int(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<i64> {
    match extract_value(obj, Type::Int, param)? {
        Value::Int(i) => Ok(i),
        _ => Err(PyTypeError::new_err(wrong_kind(EXPECTED_INT, obj, param))),
    }
}

/// A `float` argument (a Python float, or an int as `float(n)` would take it).
pub fn extract_float(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<f64> {
    match extract_value(obj, Type::Float, param)? {
        Value::Float(f) => Ok(f),
        _ => Err(PyTypeError::new_err(wrong_kind(EXPECTED_FLOAT, obj, param))),
    }
}

/// A `bool` argument.
pub fn extract_bool(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<bool> {
    match extract_value(obj, Type::Bool, param)? {
        Value::Bool(b) => Ok(b),
        _ => Err(PyTypeError::new_err(wrong_kind(EXPECTED_BOOL, obj, param))),
    }
}
