//! The Python boundary: tensors cross without a storage copy (tch's `pyobject_unpack` /
//! `pyobject_wrap`), arguments are checked with the reference's exact messages (followed by the argument's name
//! and what it was given), and run-time
//! errors become the matching Python exceptions.

use pyo3::exceptions::{
    PyIndexError, PyKeyboardInterrupt, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError,
    PyZeroDivisionError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyType};
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
        RuntimeError::Index(m) => PyIndexError::new_err(m),
        RuntimeError::Torch(m) if INDEX_ERRORS.iter().any(|e| m.contains(e)) => {
            PyIndexError::new_err(m)
        }
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// Messages of libtorch errors that eager raises as `IndexError` (a `c10::IndexError`; tch
/// keeps only the text) and that a compiled call can reach: an argmax over an empty dim.
const INDEX_ERRORS: &[&str] = &["to have non-zero size"];

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
    if let Some(hook) = overridden_torch_hook(obj)? {
        return Err(PyTypeError::new_err(format!(
            "{NOT_A_TENSOR} {}",
            given_note(
                param,
                Some(&format!(
                    "is {}, which overrides {hook}",
                    is_a(&type_name(obj))
                ))
            )
        )));
    }
    let torch_device = |device| match obj.getattr("device").and_then(|d| d.str()) {
        Ok(name) => name.to_string(),
        Err(_) => device_name(device),
    };
    check_tensor_argument_on(&tensor, expected, param, torch_device).map_err(to_py_err)?;
    Ok(tensor)
}

/// `torch.Tensor`, whose hooks a trivial subclass (and `nn.Parameter`) inherits.
static TORCH_TENSOR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `torch._C.TensorBase`, `torch.Tensor`'s base.
static TORCH_TENSOR_BASE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `torch._C._disabled_torch_function_impl`, `nn.Parameter`'s `__torch_function__`.
static DISABLED_TORCH_FUNCTION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// For an instance of a `torch.Tensor` subclass that defines its own `__torch_dispatch__` or
/// `__torch_function__`, the hook's name. Eager calls run such a hook's Python code (a
/// `FakeTensor` has no data at all, a `FunctionalTensor` or a `DTensor` is a wrapper whose
/// values are elsewhere, a logging or unit-carrying subclass changes what ops return), which a
/// compiled call never could; these are refused. A plain `torch.Tensor`, `nn.Parameter` and
/// subclasses that inherit torch's hooks read as tensors.
fn overridden_torch_hook(obj: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
    let py = obj.py();
    let ty = obj.get_type();
    let tensor = TORCH_TENSOR.import(py, "torch", "Tensor")?;
    if ty.is(tensor) {
        return Ok(None);
    }
    let base = TORCH_TENSOR_BASE.import(py, "torch._C", "TensorBase")?;
    let disabled = DISABLED_TORCH_FUNCTION
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("torch._C")?
                    .getattr("_disabled_torch_function_impl")?
                    .unbind(),
            )
        })?
        .bind(py);
    for hook in ["__torch_dispatch__", "__torch_function__"] {
        for class in ty.mro().iter() {
            let defined = class.getattr("__dict__")?.call_method1("get", (hook,))?;
            if defined.is_none() {
                continue;
            }
            let torchs_own = class.is(tensor) || class.is(base) || defined.is(disabled);
            if !torchs_own {
                return Ok(Some(hook));
            }
            break;
        }
    }
    Ok(None)
}

/// A checked argument as a value of a Rextio-generated function ([`crate::lazy`]).
pub fn extract_lazy(
    obj: &Bound<'_, PyAny>,
    expected: TensorType,
    param: &str,
) -> PyResult<LazyTensor> {
    LazyTensor::argument(extract_tensor(obj, expected, param)?, expected).map_err(to_py_err)
}

/// The name of `obj`'s type as Python qualifies it: `float`, `list` for builtins, the module
/// otherwise (`numpy.bool`, `numpy.ndarray`, `torch.Tensor`), so a type named like a builtin
/// is never mistaken for it.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    let ty = obj.get_type();
    match ty.fully_qualified_name().or_else(|_| ty.name()) {
        Ok(name) => name.to_string(),
        Err(_) => "object of another type".to_string(),
    }
}

/// `a numpy.bool`, `an int`.
fn is_a(name: &str) -> String {
    let article = if name
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c))
    {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// What `obj` is, for an error: `is None`, `is a numpy.ndarray`.
fn given(obj: &Bound<'_, PyAny>) -> String {
    if obj.is_none() {
        "is None".to_string()
    } else {
        format!("is {}", is_a(&type_name(obj)))
    }
}

/// The reference's message, then which argument got what Python type.
fn wrong_kind(message: &str, obj: &Bound<'_, PyAny>, param: &str) -> String {
    format!("{message} {}", given_note(param, Some(&given(obj))))
}

/// A scalar parameter given something else: the reference's message and what it was; a
/// tensor or an array (a 0-d one runs in eager, with the tensor's arithmetic) is told how to
/// pass its value.
fn wrong_scalar(message: &str, obj: &Bound<'_, PyAny>, param: &str, convert: &str) -> PyErr {
    let given = given(obj);
    let hint = if is_tensor(obj) {
        format!("; pass {convert}(t) or t.item() for a one-element tensor t")
    } else if numpy_kind(obj) == Some(NumpyKind::Array) {
        format!("; pass {convert}(a) or a.item() for a one-element array a")
    } else {
        String::new()
    };
    PyTypeError::new_err(format!(
        "{message} {}",
        given_note(param, Some(&format!("{given}{hint}")))
    ))
}

fn is_tensor(obj: &Bound<'_, PyAny>) -> bool {
    TORCH_TENSOR
        .import(obj.py(), "torch", "Tensor")
        .is_ok_and(|tensor| obj.is_instance(tensor).unwrap_or(false))
}

/// What a numpy object is, to a scalar parameter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NumpyKind {
    Bool,
    Integer,
    Floating,
    Array,
    Other,
}

static NUMPY_BOOL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NUMPY_INTEGER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NUMPY_FLOATING: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NUMPY_NDARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The kind of numpy object `obj` is, `None` for anything that is not numpy's (numpy is
/// never imported for them: its types live in module `numpy`, which is then loaded).
fn numpy_kind(obj: &Bound<'_, PyAny>) -> Option<NumpyKind> {
    let ty = obj.get_type();
    if ty.module().ok()?.to_str().ok()? != "numpy" {
        return None;
    }
    let py = obj.py();
    let is = |cell: &PyOnceLock<Py<PyType>>, name: &str| {
        cell.import(py, "numpy", name)
            .is_ok_and(|t| obj.is_instance(t).unwrap_or(false))
    };
    Some(if is(&NUMPY_BOOL, "bool_") {
        NumpyKind::Bool
    } else if is(&NUMPY_INTEGER, "integer") {
        NumpyKind::Integer
    } else if is(&NUMPY_FLOATING, "floating") {
        NumpyKind::Floating
    } else if is(&NUMPY_NDARRAY, "ndarray") {
        NumpyKind::Array
    } else {
        NumpyKind::Other
    })
}

/// An int's value, which must fit in 64 bits (compiled ints are 64-bit and checked).
fn int_in_64_bits(int: &Bound<'_, PyAny>, obj: &Bound<'_, PyAny>, param: &str) -> PyResult<i64> {
    int.extract::<i64>().map_err(|_| {
        let shown = int.str().map(|s| s.to_string()).unwrap_or_default();
        PyOverflowError::new_err(format!(
            "{EXPECTED_INT} that fits in 64 bits {}",
            given_note(
                param,
                Some(&format!("is {}: {shown}", is_a(&type_name(obj))))
            )
        ))
    })
}

/// Converts argument `param` to a [`Value`] of type `ty`. Scalars take what eager Python
/// takes for them without changing the computation: Python's own types, and numpy's scalars
/// by value (integers through `__index__`, floats through `__float__`, `numpy.bool` as a
/// bool); the compiled function then computes with the annotated type (64-bit checked int,
/// float64, bool), as it does for Python's.
pub fn extract_value(obj: &Bound<'_, PyAny>, ty: Type, param: &str) -> PyResult<Value> {
    match ty {
        Type::Tensor(t) => extract_tensor(obj, t, param).map(Value::Tensor),
        // `bool` is a subclass of `int` in Python; an int parameter does not take one.
        Type::Int if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() => {
            int_in_64_bits(obj, obj, param).map(Value::Int)
        }
        Type::Int if numpy_kind(obj) == Some(NumpyKind::Integer) => {
            int_in_64_bits(&obj.call_method0("__index__")?, obj, param).map(Value::Int)
        }
        Type::Int => Err(wrong_scalar(EXPECTED_INT, obj, param, "int")),
        Type::Bool if obj.is_instance_of::<PyBool>() => obj.extract::<bool>().map(Value::Bool),
        Type::Bool if numpy_kind(obj) == Some(NumpyKind::Bool) => obj.is_truthy().map(Value::Bool),
        Type::Bool => Err(wrong_scalar(EXPECTED_BOOL, obj, param, "bool")),
        // A float parameter takes a Python float (`numpy.float64` is one) or an int (as
        // `float(n)` would), not a bool.
        Type::Float if obj.is_instance_of::<PyFloat>() => obj.extract::<f64>().map(Value::Float),
        Type::Float if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() => {
            obj.extract::<f64>().map(Value::Float)
        }
        Type::Float => match numpy_kind(obj) {
            Some(NumpyKind::Floating) => obj
                .call_method0("__float__")?
                .extract::<f64>()
                .map(Value::Float),
            Some(NumpyKind::Integer) => obj
                .call_method0("__index__")?
                .extract::<f64>()
                .map(Value::Float),
            _ => Err(wrong_scalar(EXPECTED_FLOAT, obj, param, "float")),
        },
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
