//! `rextio_torch._native`: compiles a function in process (driver: frontend + passes) and
//! returns a callable that runs the runtime's executor over the optimized IR. No cargo, no
//! toolchain at run time.

use pyo3::exceptions::PyTypeError;
use pyo3::import_exception;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rextio_driver::{compile_function_at, CompileError as DriverError};
use rextio_ir::print::print_function;
use rextio_runtime::boundary::{extract_value, materialize_value, to_py_err};
use rextio_runtime::{Program, Value};

// Defined in Python (`rextio_torch.CompileError`), so users can catch it without importing
// torch, and it shows under the package's name.
import_exception!(rextio_torch, CompileError);
import_exception!(rextio_torch, InternalCompilerError);

/// Float32 elements in the arguments from which a loop-free call releases the GIL.
const RELEASE_GIL_ELEMENTS: usize = 16 * 1024;

/// A compiled function: checks arguments exactly as annotated, runs under no-grad, never
/// writes its inputs.
#[pyclass(module = "rextio_torch._native", frozen)]
struct CompiledFunction {
    program: Program,
    qualname: String,
    parsed_ir: String,
    optimized_ir: String,
    wrapped: Option<Py<PyAny>>,
}

#[pymethods]
impl CompiledFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = self.bind_arguments(args, kwargs)?;
        // Computing touches no Python object, so other threads may run meanwhile (PyTorch's
        // own bindings release the GIL around every op too). Cheaper than sizing the inputs
        // to decide.
        // Loops check for signals (Ctrl-C) at a bounded rate; the check needs the GIL, which
        // it takes only then. The exception it finds is raised once the call unwinds.
        let mut pending: Option<PyErr> = None;
        let call = self.program.bind(values).map_err(to_py_err)?;
        // Releasing and retaking the GIL costs about 0.2 us, more than a small loop-free call
        // computes; such calls keep it, as a short ATen op's bindings effectively do.
        let release = self.program.has_loops() || call.elements() >= RELEASE_GIL_ELEMENTS;
        let mut run = || {
            self.program.run_bound(call, &mut || {
                Python::attach(|py| py.check_signals()).map_err(|e| {
                    pending = Some(e);
                    rextio_runtime::RuntimeError::Interrupted
                })
            })
        };
        let result = if release { py.detach(run) } else { run() };
        if let Some(error) = pending {
            return Err(error);
        }
        materialize_value(py, result.map_err(to_py_err)?)
    }

    #[getter]
    fn __name__(&self) -> &str {
        self.program.name()
    }

    #[getter]
    fn __qualname__(&self) -> &str {
        &self.qualname
    }

    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.wrapped.as_ref().map(|w| w.clone_ref(py))
    }

    /// The IR as lowered from source, in the text format.
    #[getter]
    fn parsed_ir(&self) -> &str {
        &self.parsed_ir
    }

    /// The IR the executor runs, after fusion and dead-code elimination.
    #[getter]
    fn optimized_ir(&self) -> &str {
        &self.optimized_ir
    }

    fn __repr__(&self) -> String {
        format!("<rextio_torch compiled function {}>", self.qualname)
    }
}

impl CompiledFunction {
    /// Binds positional and keyword arguments to parameters (as Python would) and checks each.
    fn bind_arguments(
        &self,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<Value>> {
        let names = self.program.param_names();
        let types = self.program.param_types();
        let name = self.program.name();
        if args.len() > names.len() {
            return Err(PyTypeError::new_err(format!(
                "{name}() takes {} positional arguments but {} were given",
                names.len(),
                args.len()
            )));
        }
        let mut slots: Vec<Option<Bound<'_, PyAny>>> = args.iter().map(Some).collect();
        slots.resize(names.len(), None);
        if let Some(kwargs) = kwargs {
            for (key, value) in kwargs.iter() {
                let key: String = key.extract()?;
                match names.iter().position(|n| *n == key) {
                    Some(i) if slots[i].is_some() => {
                        return Err(PyTypeError::new_err(format!(
                            "{name}() got multiple values for argument '{key}'"
                        )))
                    }
                    Some(i) => slots[i] = Some(value),
                    None => {
                        return Err(PyTypeError::new_err(format!(
                            "{name}() got an unexpected keyword argument '{key}'"
                        )))
                    }
                }
            }
        }
        let missing: Vec<&str> = names
            .iter()
            .zip(&slots)
            .filter(|(_, s)| s.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(PyTypeError::new_err(format!(
                "{name}() missing {} required argument(s): {}",
                missing.len(),
                missing
                    .iter()
                    .map(|m| format!("'{m}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        slots
            .into_iter()
            .zip(names.iter().zip(types))
            .map(|(obj, (param, ty))| match obj {
                Some(obj) => extract_value(&obj, *ty, param),
                None => Err(PyTypeError::new_err(format!(
                    "{name}() missing argument '{param}'"
                ))),
            })
            .collect()
    }
}

/// Compiles the module-level `def name` on 1-based `line` of `source` (the text of `file`).
#[pyfunction]
#[pyo3(signature = (file, source, name, line, qualname=None, wrapped=None))]
fn compile_function(
    file: &str,
    source: &str,
    name: &str,
    line: u32,
    qualname: Option<String>,
    wrapped: Option<Py<PyAny>>,
) -> PyResult<CompiledFunction> {
    let compiled = compile_function_at(file, source, name, line).map_err(|e| match e {
        DriverError::NotNative { .. }
        | DriverError::NotFound { .. }
        | DriverError::Syntax { .. } => CompileError::new_err(e.to_string()),
        DriverError::Internal { .. } => InternalCompilerError::new_err(e.to_string()),
    })?;
    let program =
        Program::compile(&compiled.optimized).map_err(|e| CompileError::new_err(e.to_string()))?;
    Ok(CompiledFunction {
        program,
        qualname: qualname.unwrap_or_else(|| name.to_string()),
        parsed_ir: print_function(&compiled.parsed),
        optimized_ir: print_function(&compiled.optimized),
        wrapped,
    })
}

/// `rextio-torch check --format json` for a source text, as a JSON string.
#[pyfunction]
fn check_source(file: &str, source: &str) -> String {
    rextio_frontend::analyze(file, source).to_json().to_string()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CompiledFunction>()?;
    m.add_function(wrap_pyfunction!(compile_function, m)?)?;
    m.add_function(wrap_pyfunction!(check_source, m)?)?;
    Ok(())
}
