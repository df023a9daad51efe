//! `rextio_torch._native`: compiles a function in process (driver: frontend + passes) and
//! returns a callable that runs the runtime's executor over the optimized IR. No cargo, no
//! toolchain at run time.
//!
//! `aot_build` and `AotFunction` are `compile(fn, mode="aot")`: an ahead-of-time build with
//! cargo into the build cache (`rextio_driver::aot`, `docs/aot.md`) and the built function behind
//! the executor's call contract.
//!
//! Also the tooling's way into the compiler (`docs/tooling.md`): `explain_function` (the
//! driver's explanation), `RXT_LOG` parsing and logs, `native_mode` (`REXTIO_NATIVE_MODE`),
//! and `cli_main` / `doctor_report`, which run the `rextio-torch` command-line library.
//!
//! A front door: of our crates it depends on the driver (the facade: compiler, tooling,
//! codegen and IR types re-exported) and the runtime (values, the executor) only.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::import_exception;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rextio_driver::aot;
use rextio_driver::command::Io;
use rextio_driver::doctor::{self, Facts, Host, Libtorch, PythonFacts};
use rextio_driver::env::{LogChannel, LogSpec, NativeMode};
use rextio_driver::explain::explain_function as driver_explain;
use rextio_driver::log::{compile_log, fallback_log as driver_fallback_log};
use rextio_driver::{compile_function_at, compile_method_at, CompileError as DriverError, Surface};
use rextio_driver::{print_function, Type};
use rextio_runtime::boundary::{materialize_value, to_py_err};
use rextio_runtime::executor::{BoundCall, Boundary, Step};
use rextio_runtime::scalar::Scalar;
use rextio_runtime::{Program, Value};

mod args;
use args::read_arg;

/// The libtorch directory tch was built against (torch-sys's `DEP_TCH_LIBTORCH_LIB`).
const BUILT_LIBTORCH_LIB: Option<&str> = option_env!("REXTIO_BUILT_LIBTORCH_LIB");

// Defined in Python (`rextio_torch.CompileError`), so users can catch it without importing
// torch, and it shows under the package's name.
import_exception!(rextio_torch, CompileError);
import_exception!(rextio_torch, InternalCompilerError);
import_exception!(rextio_torch, AotBuildError);

/// Float32 elements in the arguments from which a call releases the GIL as it starts.
const RELEASE_GIL_ELEMENTS: usize = 16 * 1024;

/// A compiled function: checks arguments exactly as annotated, runs under no-grad, never
/// writes its inputs. Its `__dict__` holds what the Python layer needs to pickle it
/// (`rextio_torch._pickle`).
#[pyclass(module = "rextio_torch._native", frozen, dict)]
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
        // REXTIO_NATIVE_MODE is read on every call, as the reference's wrappers do.
        match native_mode_now() {
            Ok(NativeMode::Fallback) => return self.call_original(py, args, kwargs),
            Ok(NativeMode::Auto | NativeMode::Native) => {}
            Err(invalid) => return Err(PyValueError::new_err(invalid.to_string())),
        }
        let call = self.bind_arguments(args, kwargs)?;
        // Computing touches no Python object, so other threads may run meanwhile. But
        // releasing and retaking the GIL costs about 0.2 us, more than a small call computes:
        // a call with large arguments lets it go at once; any other keeps it and, if a loop
        // runs long, pauses at the loop's first interrupt check (after about
        // `FIRST_INTERRUPT_CHECK`), checks for signals, and continues without the GIL. Later
        // checks (Ctrl-C) take the GIL only for that; the exception found is raised once the
        // call unwinds.
        let mut pending: Option<PyErr> = None;
        let mut check = || {
            Python::attach(|py| py.check_signals()).map_err(|e| {
                pending = Some(e);
                rextio_runtime::RuntimeError::Interrupted
            })
        };
        // Scalar boundary calls (RXT075) go back into Python through the original function's
        // module globals; an exception the callee raises is kept and raised unchanged.
        let mut boundary = PyBoundary {
            wrapped: self.wrapped.as_ref(),
            raised: None,
        };
        let result = if call.elements() >= RELEASE_GIL_ELEMENTS {
            py.detach(|| self.program.run_bound_with(call, &mut check, &mut boundary))
        } else {
            match self.program.run_bound_pausing_with(call, &mut boundary) {
                Step::Done(result) => result,
                Step::Paused(paused) => match py.check_signals() {
                    Ok(()) => {
                        py.detach(|| self.program.resume_with(paused, &mut check, &mut boundary))
                    }
                    Err(e) => return Err(e),
                },
            }
        };
        if let Some(error) = pending.or(boundary.raised) {
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
    /// `REXTIO_NATIVE_MODE=fallback`: the original Python function, called as given.
    fn call_original<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match &self.wrapped {
            Some(original) => original.bind(py).call(args, kwargs),
            None => Err(PyRuntimeError::new_err(format!(
                "REXTIO_NATIVE_MODE=fallback, but `{}` was compiled without its Python \
                 function, so there is nothing to fall back to",
                self.qualname
            ))),
        }
    }

    /// Binds positional and keyword arguments to parameters (as Python would) and checks each.
    fn bind_arguments(
        &self,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<BoundCall> {
        let names = self.program.param_names();
        let types = self.program.param_types();
        let read =
            |(obj, (param, ty)): (Bound<'_, PyAny>, (&String, &Type))| read_arg(&obj, *ty, param);
        // The common call passes every argument positionally: read them straight from the
        // tuple instead of building a slot table.
        if kwargs.is_none_or(|k| k.is_empty()) && args.len() == names.len() {
            return self.program.bind_args(
                args.iter().zip(names.iter().zip(types)).map(read),
                to_py_err,
            );
        }
        let slots = bind_slots(self.program.name(), names, args, kwargs)?;
        self.program.bind_args(
            slots.into_iter().zip(names.iter().zip(types)).map(read),
            to_py_err,
        )
    }
}

/// The embedder's way back into Python for a compiled call's scalar boundary calls
/// (`boundary_call`, RXT075): the callee is looked up by name in the original function's
/// module globals when the call runs (then the builtins, as a Python name lookup would), so a
/// rebinding of the name between calls is seen as Python sees it; scalars cross as Python
/// `int`, `float` and `bool`. What the callee returns comes back as the nearest scalar (the
/// executor checks it against the declared type); anything else is the `TypeError` that names
/// the callee. An exception (the callee's own, or one of these) is kept in `raised` and
/// raised unchanged once the call unwinds.
struct PyBoundary<'a> {
    wrapped: Option<&'a Py<PyAny>>,
    raised: Option<PyErr>,
}

impl Boundary for PyBoundary<'_> {
    fn call(&mut self, callee: &str, args: &[Scalar], ret: Type) -> rextio_runtime::Result<Scalar> {
        Python::attach(|py| {
            boundary_call(py, self.wrapped, callee, args, ret).map_err(|e| {
                let text = e.to_string();
                self.raised = Some(e);
                rextio_runtime::RuntimeError::Raised(text)
            })
        })
    }
}

fn boundary_call(
    py: Python<'_>,
    wrapped: Option<&Py<PyAny>>,
    callee: &str,
    args: &[Scalar],
    ret: Type,
) -> PyResult<Scalar> {
    let Some(wrapped) = wrapped else {
        return Err(PyRuntimeError::new_err(format!(
            "`{callee}` is called back in Python (a scalar boundary call), but this compiled \
             function has no Python function whose module could name it"
        )));
    };
    let globals = wrapped.bind(py).getattr("__globals__")?;
    let function = match globals.get_item(callee) {
        Ok(function) => function,
        Err(_) => match py.import("builtins")?.getattr(callee) {
            Ok(function) => function,
            Err(_) => {
                return Err(pyo3::exceptions::PyNameError::new_err(format!(
                    "name '{callee}' is not defined"
                )))
            }
        },
    };
    let values: Vec<Bound<'_, PyAny>> = args
        .iter()
        .map(|a| match *a {
            Scalar::Int(i) => pyo3::types::PyInt::new(py, i).into_any(),
            Scalar::Float(f) => pyo3::types::PyFloat::new(py, f).into_any(),
            Scalar::Bool(b) => pyo3::types::PyBool::new(py, b).to_owned().into_any(),
        })
        .collect();
    let out = function.call1(PyTuple::new(py, values)?)?;
    if let Ok(b) = out.cast::<pyo3::types::PyBool>() {
        return Ok(Scalar::Bool(b.is_true()));
    }
    if out.is_instance_of::<pyo3::types::PyInt>() {
        return match out.extract::<i64>() {
            Ok(i) => Ok(Scalar::Int(i)),
            Err(_) => Err(pyo3::exceptions::PyOverflowError::new_err(format!(
                "{callee}() returned an int outside 64 bits (compiled ints are 64-bit)"
            ))),
        };
    }
    if let Ok(f) = out.cast::<pyo3::types::PyFloat>() {
        return Ok(Scalar::Float(f.value()));
    }
    let kind = out.get_type().name()?.to_string();
    Err(PyTypeError::new_err(format!(
        "{callee}() returned {kind}, but its return annotation is {ret} (a scalar boundary call)"
    )))
}

/// Binds positional and keyword arguments to the parameters `names` of function `name` as
/// Python would: one object per parameter, in order, or the `TypeError` Python raises.
fn bind_slots<'py>(
    name: &str,
    names: &[String],
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if args.len() > names.len() {
        return Err(PyTypeError::new_err(format!(
            "{name}() takes {} positional arguments but {} were given",
            names.len(),
            args.len()
        )));
    }
    let mut slots: Vec<Option<Bound<'py, PyAny>>> = args.iter().map(Some).collect();
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
    Ok(slots.into_iter().flatten().collect())
}

/// A function built ahead of time (`compile(fn, mode="aot")`): the built extension's function
/// behind the executor's call contract. Arguments are bound as Python would bind them (the
/// executor's messages), `REXTIO_NATIVE_MODE` is read on every call, and the extension checks
/// each argument as annotated with the runtime's own boundary code. Its `__dict__` holds what
/// the Python layer needs to pickle it (`rextio_torch._pickle`).
#[pyclass(module = "rextio_torch._native", frozen, dict)]
struct AotFunction {
    inner: Py<PyAny>,
    name: String,
    qualname: String,
    params: Vec<String>,
    wrapped: Option<Py<PyAny>>,
    build: Py<PyAny>,
}

#[pymethods]
impl AotFunction {
    #[new]
    #[pyo3(signature = (inner, name, qualname, params, wrapped, build))]
    fn new(
        inner: Py<PyAny>,
        name: String,
        qualname: String,
        params: Vec<String>,
        wrapped: Option<Py<PyAny>>,
        build: Py<PyAny>,
    ) -> Self {
        AotFunction {
            inner,
            name,
            qualname,
            params,
            wrapped,
            build,
        }
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match native_mode_now() {
            Ok(NativeMode::Fallback) => {
                return match &self.wrapped {
                    Some(original) => original.bind(py).call(args, kwargs),
                    None => Err(PyRuntimeError::new_err(format!(
                        "REXTIO_NATIVE_MODE=fallback, but `{}` was built without its Python \
                         function, so there is nothing to fall back to",
                        self.qualname
                    ))),
                }
            }
            Ok(NativeMode::Auto | NativeMode::Native) => {}
            Err(invalid) => return Err(PyValueError::new_err(invalid.to_string())),
        }
        let slots = bind_slots(&self.name, &self.params, args, kwargs)?;
        self.inner.bind(py).call1(PyTuple::new(py, slots)?)
    }

    #[getter]
    fn __name__(&self) -> &str {
        &self.name
    }

    #[getter]
    fn __qualname__(&self) -> &str {
        &self.qualname
    }

    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.wrapped.as_ref().map(|w| w.clone_ref(py))
    }

    /// What the build was: `key`, `module`, `entry`, `library`, `reused`, `seconds`, ...
    #[getter]
    fn aot_build(&self, py: Python<'_>) -> Py<PyAny> {
        self.build.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let module = self
            .build
            .bind(py)
            .get_item("module")
            .and_then(|m| m.extract::<String>())
            .unwrap_or_default();
        format!(
            "<rextio_torch ahead-of-time function {} ({module})>",
            self.qualname
        )
    }
}

/// Progress of a build inside Python: lines to `sys.stderr`, Ctrl-C checked while cargo runs.
struct PyProgress {
    pending: Option<PyErr>,
    checked: Instant,
}

impl aot::Progress for PyProgress {
    fn line(&mut self, text: &str) {
        Python::attach(|py| {
            let _ = write_stream(py, "stderr", &format!("{text}\n"));
        });
    }

    fn keep_going(&mut self) -> bool {
        if self.checked.elapsed() < Duration::from_millis(100) {
            return self.pending.is_none();
        }
        self.checked = Instant::now();
        if self.pending.is_none() {
            self.pending = Python::attach(|py| py.check_signals()).err();
        }
        self.pending.is_none()
    }
}

/// Where a function is: `(file, source, line)`, the package's `located` triple (the path,
/// the text of that file and the 1-based line of the `def`).
#[derive(FromPyObject)]
struct Located(String, String, u32);

/// The Python environment an AOT build is for: `(executable, torch_version, torch_lib_dir,
/// ext_suffix)`, as the package reads them from `sys`, `torch` and `sysconfig`.
#[derive(FromPyObject)]
struct PythonEnvArg(PathBuf, String, String, String);

/// `compile(fn, mode="aot")`: builds the module-level `def name` found at `located` ahead of time into the cache, or finds it there; returns what was built as
/// a dict. `CompileError` when the function does not compile, `AotBuildError` when it does
/// but cannot be built (no cargo, cargo fails, the cache cannot be written).
#[pyfunction]
#[pyo3(signature = (located, name, cache_dir, env, log=Vec::new(), surface="extended"))]
fn aot_build<'py>(
    py: Python<'py>,
    located: Located,
    name: &str,
    cache_dir: Option<PathBuf>,
    env: PythonEnvArg,
    log: Vec<String>,
    surface: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let Located(file, source, line) = located;
    let PythonEnvArg(python, torch_version, torch_lib_dir, ext_suffix) = env;
    let (file, source) = (file.as_str(), source.as_str());
    let surface = surface_arg(surface)?;
    let compiled = compile_function_at(file, source, name, line, surface).map_err(|e| match e {
        DriverError::NotNative { .. }
        | DriverError::NotFound { .. }
        | DriverError::Method { .. }
        | DriverError::Syntax { .. } => CompileError::new_err(e.to_string()),
        DriverError::Internal { .. } => InternalCompilerError::new_err(e.to_string()),
    })?;
    // RXT_LOG, as for `compile_function`: what is built is what the log shows.
    let spec = LogSpec::parse(&log.join(","));
    if !spec.channels().is_empty() {
        let text = compile_log(&spec, &compiled, &format!("{file}:{line}"), || {
            rextio_driver::emit_function(&compiled.optimized, file).map_err(|e| e.to_string())
        });
        write_stream(py, "stderr", &text)?;
    }
    let failed = |message: String| {
        AotBuildError::new_err(format!(
            "rextio-torch cannot build `{name}` ahead of time: {message}"
        ))
    };
    let cache = aot::cache_dir(cache_dir.as_deref(), |n| std::env::var_os(n)).map_err(failed)?;
    let params: Vec<String> = compiled
        .optimized
        .params
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let request = aot::Request {
        source_label: file.to_string(),
        source: source.to_string(),
        functions: vec![compiled.optimized],
        selection: format!("{name}@{line}"),
        module: None,
        python: aot::PythonEnv {
            executable: python,
            torch_version,
            torch_lib_dir,
            ext_suffix,
        },
        cache: cache.path.clone(),
    };
    let mut progress = PyProgress {
        pending: None,
        checked: Instant::now(),
    };
    let result = py.detach(|| aot::build(&request, &mut progress));
    if let Some(interrupt) = progress.pending {
        return Err(interrupt);
    }
    let built = result.map_err(|e| failed(e.to_string()))?;
    let info = PyDict::new(py);
    info.set_item("name", name)?;
    info.set_item("params", params)?;
    info.set_item("key", &built.key)?;
    info.set_item("module", &built.module)?;
    info.set_item("cache", cache.path.display().to_string())?;
    info.set_item("cache_chosen_by", cache.chosen_by)?;
    info.set_item("entry", built.entry.display().to_string())?;
    info.set_item("package", built.package.display().to_string())?;
    info.set_item("library", built.library.display().to_string())?;
    info.set_item("reused", built.reused)?;
    info.set_item("seconds", built.seconds)?;
    Ok(info)
}

/// The cache directory `compile(fn, mode="aot", cache_dir=...)` would use, and which rule
/// chose it.
#[pyfunction]
#[pyo3(signature = (cache_dir=None))]
fn aot_cache_dir(cache_dir: Option<PathBuf>) -> PyResult<(String, &'static str)> {
    let cache = aot::cache_dir(cache_dir.as_deref(), |n| std::env::var_os(n))
        .map_err(PyValueError::new_err)?;
    Ok((cache.path.display().to_string(), cache.chosen_by))
}

/// Compiles the module-level `def name` found at `located` (the file, its text and the
/// 1-based line of the `def`). `log` names the `RXT_LOG` channels to print to `sys.stderr`
/// once it compiled; `surface` (`"extended"`, `"reference"`) which surface claims its sites.
#[pyfunction]
#[pyo3(signature = (located, name, qualname=None, wrapped=None, log=Vec::new(), surface="extended", module=None))]
fn compile_function(
    located: Located,
    name: &str,
    qualname: Option<String>,
    wrapped: Option<Py<PyAny>>,
    log: Vec<String>,
    surface: &str,
    module: Option<&str>,
) -> PyResult<CompiledFunction> {
    let Located(file, source, line) = located;
    let (file, source) = (file.as_str(), source.as_str());
    let surface = surface_arg(surface)?;
    // `module`: the method at `line` is a user nn.Module's, whose members this JSON describes
    // (`rextio_torch._module`).
    let compiled = match module {
        Some(description) => compile_method_at(file, source, line, description, surface),
        None => compile_function_at(file, source, name, line, surface),
    };
    let compiled = compiled.map_err(|e| match e {
        DriverError::NotNative { .. }
        | DriverError::NotFound { .. }
        | DriverError::Method { .. }
        | DriverError::Syntax { .. } => CompileError::new_err(e.to_string()),
        DriverError::Internal { .. } => InternalCompilerError::new_err(e.to_string()),
    })?;
    let program =
        Program::compile(&compiled.optimized).map_err(|e| CompileError::new_err(e.to_string()))?;
    let spec = LogSpec::parse(&log.join(","));
    if !spec.channels().is_empty() {
        let text = compile_log(&spec, &compiled, &format!("{file}:{line}"), || {
            rextio_driver::emit_function(&compiled.optimized, file).map_err(|e| e.to_string())
        });
        // Writing the log is all that needs the interpreter here, so the token is taken where
        // it is written (as `PyProgress::line` does; the caller is attached already) rather
        // than as a parameter: the parameters are exactly the Python arguments.
        Python::attach(|py| write_stream(py, "stderr", &text))?;
    }
    Ok(CompiledFunction {
        program,
        qualname: qualname.unwrap_or_else(|| name.to_string()),
        parsed_ir: print_function(&compiled.parsed),
        optimized_ir: print_function(&compiled.optimized),
        wrapped,
    })
}

/// The mode the environment selects now ([`NativeMode::from_env`]), read in one pass over
/// the process environment without locks or allocation: every call of a compiled function
/// pays for it (measured: about 40 ns a call with 39 variables, against about 80 ns for two
/// `std::env::var_os`). The caller holds the GIL, under which Python changes the
/// environment (`os.environ` assignments call `setenv`).
#[cfg(target_os = "linux")]
fn native_mode_now() -> Result<NativeMode, rextio_driver::env::InvalidNativeMode> {
    use std::ffi::{c_char, CStr, OsStr};
    use std::os::unix::ffi::OsStrExt;

    use rextio_driver::env::{DISABLE_NATIVE_VAR, NATIVE_MODE_VAR};

    extern "C" {
        static environ: *const *const c_char;
    }
    const PREFIX: &[u8] = b"REXTIO_";
    let (mut mode, mut disable): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    // SAFETY: `environ` is the C library's NULL-terminated array of NUL-terminated
    // `NAME=value` strings; a prefix compare stops at the first differing byte, so at a NUL
    // at the latest, and only entries with the prefix are measured. The strings are used
    // before this function returns, with the GIL held.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let text = *entry;
            entry = entry.add(1);
            if !PREFIX
                .iter()
                .enumerate()
                .all(|(i, &b)| *text.add(i) as u8 == b)
            {
                continue;
            }
            let bytes = CStr::from_ptr(text).to_bytes();
            let Some(eq) = bytes.iter().position(|&b| b == b'=') else {
                continue;
            };
            let (name, value) = (&bytes[..eq], &bytes[eq + 1..]);
            // Like getenv, the first definition of a name wins.
            if name == NATIVE_MODE_VAR.as_bytes() && mode.is_none() {
                mode = Some(value);
            } else if name == DISABLE_NATIVE_VAR.as_bytes() && disable.is_none() {
                disable = Some(value);
            }
        }
    }
    NativeMode::resolve(mode.map(OsStr::from_bytes), disable.map(OsStr::from_bytes))
}

#[cfg(not(target_os = "linux"))]
fn native_mode_now() -> Result<NativeMode, rextio_driver::env::InvalidNativeMode> {
    NativeMode::from_env()
}

/// Writes `text` to `sys.<stream>` (so Python-level redirection and capture see it).
fn write_stream(py: Python<'_>, stream: &str, text: &str) -> PyResult<()> {
    if text.is_empty() {
        return Ok(());
    }
    let stream = py.import("sys")?.getattr(stream)?;
    stream.call_method1("write", (text,))?;
    stream.call_method0("flush")?;
    Ok(())
}

/// An `RXT_LOG` value: the channel names it enables (in print order) and the warning for its
/// unknown names, if any.
#[pyfunction]
fn log_spec(value: &str) -> (Vec<&'static str>, Option<String>) {
    let spec = LogSpec::parse(value);
    let names = spec.channels().iter().map(|c| c.name()).collect();
    (names, spec.warning())
}

/// The `RXT_LOG` lines of a function that stays on Python (`error` is why).
#[pyfunction]
fn fallback_log(channels: Vec<String>, name: &str, error: &str) -> String {
    let spec = LogSpec::parse(&channels.join(","));
    driver_fallback_log(&spec, name, error)
}

/// Every `RXT_LOG` channel name, in print order.
#[pyfunction]
fn log_channels() -> Vec<&'static str> {
    LogChannel::ALL.iter().map(|c| c.name()).collect()
}

/// The mode `REXTIO_NATIVE_MODE` (and `REXTIO_DISABLE_NATIVE`) select now: `auto`, `native`
/// or `fallback`; `ValueError` for a value that is not a mode.
#[pyfunction]
fn native_mode() -> PyResult<&'static str> {
    NativeMode::from_env()
        .map(NativeMode::name)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The driver's explanation of the module-level `def name` (on `line`, or the one the module
/// binds), or of a user module's method on `line` with its `module` description, as JSON
/// (`docs/tooling.md`).
#[pyfunction]
#[pyo3(signature = (file, source, name, line=None, surface="extended", module=None))]
fn explain_function(
    file: &str,
    source: &str,
    name: &str,
    line: Option<u32>,
    surface: &str,
    module: Option<&str>,
) -> PyResult<String> {
    let surface = surface_arg(surface)?;
    // `module`: the method at `line` is a user nn.Module's forward, with its members (as
    // `compile_function` takes it).
    let explanation = match (module, line) {
        (Some(description), Some(line)) => {
            rextio_driver::explain::explain_method(file, source, line, description, surface)
        }
        _ => driver_explain(file, source, name, line, surface),
    };
    Ok(explanation.to_json().to_string())
}

/// Doctor's host inside Python: this interpreter, probed in process, and the libtorch this
/// extension's tch was linked against.
struct ExtensionHost<'py> {
    py: Python<'py>,
}

impl ExtensionHost<'_> {
    fn probe_here(&self) -> Result<PythonFacts, String> {
        let run = || -> PyResult<String> {
            let code = CString::new(doctor::PROBE)?;
            let module =
                PyModule::from_code(self.py, &code, c"rextio-doctor-probe.py", c"_rextio_probe")?;
            let facts = module.getattr("probe")?.call0()?;
            self.py
                .import("json")?
                .call_method1("dumps", (facts,))?
                .extract()
        };
        let text = run().map_err(|e| format!("the probe failed in this interpreter: {e}"))?;
        let value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        PythonFacts::from_json(&value)
    }
}

impl Host for ExtensionHost<'_> {
    fn facts(&self, python: Option<&Path>) -> Facts {
        let (source, facts) = match python {
            Some(p) => ("named by --python".to_string(), doctor::probe_python(p)),
            None => ("this interpreter".to_string(), self.probe_here()),
        };
        let libtorch = Libtorch::Linked {
            dir: BUILT_LIBTORCH_LIB.unwrap_or("(unknown)").to_string(),
            cuda: tch::Cuda::is_available(),
        };
        Facts::gather(source, facts, libtorch)
    }

    fn python_env(&self, python: Option<&Path>) -> Result<aot::PythonEnv, String> {
        if let Some(p) = python {
            return aot::PythonEnv::probe(p);
        }
        let run = || -> PyResult<aot::PythonEnv> {
            let py = self.py;
            let torch = py.import("torch")?;
            let file: String = torch.getattr("__file__")?.extract()?;
            let lib = Path::new(&file)
                .parent()
                .map(|d| d.join("lib"))
                .unwrap_or_default();
            Ok(aot::PythonEnv {
                executable: PathBuf::from(
                    py.import("sys")?
                        .getattr("executable")?
                        .extract::<String>()?,
                ),
                torch_version: torch.getattr("__version__")?.str()?.to_string(),
                torch_lib_dir: lib.display().to_string(),
                ext_suffix: py
                    .import("sysconfig")?
                    .call_method1("get_config_var", ("EXT_SUFFIX",))?
                    .extract()?,
            })
        };
        run().map_err(|e| format!("this interpreter cannot tell its torch: {e}"))
    }

    fn keep_going(&self) -> bool {
        self.py.check_signals().is_ok()
    }
}

/// `python -m rextio_torch ARGS`: the `rextio-torch` command line on `argv` (without the
/// program name), printing to `sys.stdout`/`sys.stderr`; returns the exit code.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<u8> {
    let bin = "python -m rextio_torch";
    let mut out = Vec::new();
    // stderr streams (a build's progress shows while it runs); stdout is written at the end.
    let mut err = PyStream { py, name: "stderr" };
    let code = {
        let mut io = Io {
            out: &mut out,
            err: &mut err,
        };
        let args = std::iter::once(bin.to_string()).chain(argv);
        rextio_driver::command::run(bin, args, &ExtensionHost { py }, &mut io)
    };
    write_stream(py, "stdout", &String::from_utf8_lossy(&out))?;
    Ok(code)
}

/// `sys.<name>` as a `std::io::Write`: each write goes straight to the Python stream.
struct PyStream<'py> {
    py: Python<'py>,
    name: &'static str,
}

impl std::io::Write for PyStream<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        write_stream(self.py, self.name, &String::from_utf8_lossy(buf))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `rextio_torch.doctor()`: the report as JSON, with its text under `"text"`.
#[pyfunction]
#[pyo3(signature = (python=None))]
fn doctor_report(py: Python<'_>, python: Option<String>) -> String {
    let facts = ExtensionHost { py }.facts(python.as_deref().map(Path::new));
    let report = doctor::diagnose(&facts);
    let mut json = report.to_json();
    json["text"] = serde_json::Value::String(report.render());
    json.to_string()
}

/// `rextio-torch check --format json` for a source text, as a JSON string.
#[pyfunction]
#[pyo3(signature = (file, source, surface="extended"))]
fn check_source(file: &str, source: &str, surface: &str) -> PyResult<String> {
    Ok(
        rextio_driver::analyze_with(file, source, surface_arg(surface)?)
            .to_json()
            .to_string(),
    )
}

/// The surface named by a `surface=` argument; a `ValueError` naming the allowed values.
fn surface_arg(name: &str) -> PyResult<Surface> {
    Surface::parse(name).map_err(|e| PyValueError::new_err(format!("rextio_torch: {e}")))
}

/// Rextio plugin (`rextio_torch/rextio_plugin.py`): the verdict for a `ClaimSite.to_dict()`
/// JSON, decided by the claim rules `check` uses.
#[pyfunction]
fn plugin_claim(site: &str) -> PyResult<String> {
    rextio_driver::plugin::claim_json(site).map_err(PyValueError::new_err)
}

/// Rextio plugin: one claimed site as one Rust expression (`{"rust": ...}`), calling the
/// runtime functions the backend's generated code calls. `ValueError` on drift.
#[pyfunction]
fn plugin_lower(site: &str, ctx: &str) -> PyResult<String> {
    rextio_driver::plugin::lower_json(site, ctx).map_err(PyValueError::new_err)
}

/// Rextio plugin: the Rust text of the plugin types (conversions, extract helpers) and of
/// the function scope guard, as JSON (the backend's; `rextio_plugin.py` adds no Rust of
/// its own).
#[pyfunction]
fn plugin_rust_vocabulary() -> String {
    rextio_driver::plugin::rust_vocabulary_json()
}

/// Rextio plugin: the rule records as JSON.
#[pyfunction]
fn plugin_rule_records() -> String {
    rextio_driver::plugin::rule_records_json()
}

/// Rextio plugin: what it covers and its types, from the unary op table and the IR's markers:
/// `(modules, symbols, types)`, each type `(annotation, key without "rextio-torch/", helper
/// suffix, dtype, device, rank)` (`frontend/src/claim/spellings.rs`).
#[pyfunction]
fn plugin_surface() -> (
    Vec<&'static str>,
    Vec<String>,
    Vec<rextio_driver::plugin::PluginTypeRow>,
) {
    let surface = rextio_driver::plugin::plugin_surface();
    (surface.modules, surface.symbols, surface.types)
}

/// Every annotation marker of the IR (`ir/src/types.rs` MARKERS), in its order:
/// `(name, key, dtype as torch names it, device, rank, reference)`; `reference` is false for
/// the extended surface's float64/bfloat16 markers, which the Rextio plugin does not offer.
#[pyfunction]
fn markers() -> Vec<(&'static str, &'static str, &'static str, String, u8, bool)> {
    rextio_driver::MARKERS
        .iter()
        .map(|m| {
            (
                m.name,
                m.key,
                m.ty.dtype.torch_name(),
                m.ty.device.to_string(),
                m.ty.rank,
                m.reference,
            )
        })
        .collect()
}

/// Rextio plugin: the carried runtime and IR as inline module items for a generated crate.
#[pyfunction]
fn plugin_runtime_modules() -> String {
    rextio_driver::plugin::runtime_modules()
}

/// Rextio plugin: `(crate, exact version)` of every crates.io package the carried runtime
/// needs, from this build's `Cargo.lock`.
#[pyfunction]
fn plugin_crate_pins() -> Vec<(String, String)> {
    rextio_driver::plugin::crate_pins()
        .iter()
        .map(|(name, version)| (name.to_string(), version.to_string()))
        .collect()
}

/// The instruction-set level the kernels run at, and why (`REXTIO_TORCH_ISA`), then oneDNN's
/// (which picks eager's GELU formula): e.g.
/// `avx2 (REXTIO_TORCH_ISA=avx2; this CPU has avx512); oneDNN avx512_core`.
#[pyfunction]
fn kernel_isa() -> String {
    format!(
        "{}; {}",
        rextio_runtime::cpu::describe(),
        rextio_runtime::linear_cost::describe_products()
    )
}

/// For tests: every fused `linear` run by the calling thread takes the kernel path `name` (`small`,
/// `blocked`, `blocked_t`, `gemm`) whatever its sizes, or the cost model's choice again
/// with `None`.
#[pyfunction]
#[pyo3(signature = (name=None))]
fn force_kernel_path(name: Option<&str>) -> PyResult<()> {
    use rextio_runtime::kernels::{force_path, KernelPath};
    let path = match name {
        None => None,
        Some(name) => Some(KernelPath::from_name(name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown kernel path {name:?}: expected small, blocked, blocked_t or gemm"
            ))
        })?),
    };
    force_path(path);
    Ok(())
}

/// For tests: every product sized up by the calling thread takes `name`'s GEMM for wide
/// products (`crate` or `libtorch`), or the process's choice again with `None`
/// (`REXTIO_TORCH_PRODUCTS`, else the CPU's vendor).
#[pyfunction]
#[pyo3(signature = (name=None))]
fn force_products(name: Option<&str>) -> PyResult<()> {
    use rextio_runtime::kernels::Products;
    let products = match name {
        None => None,
        Some(name) => match Products::parse(name) {
            Ok(Some(products)) => Some(products),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown products {name:?}: expected crate or libtorch"
                )))
            }
        },
    };
    rextio_runtime::kernels::force_products(products);
    Ok(())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A child forked after this import must know it is one (`par::forked`).
    rextio_runtime::par::init();
    m.add_function(wrap_pyfunction!(kernel_isa, m)?)?;
    m.add_function(wrap_pyfunction!(force_kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(force_products, m)?)?;
    m.add_class::<CompiledFunction>()?;
    m.add_class::<AotFunction>()?;
    m.add_function(wrap_pyfunction!(aot_build, m)?)?;
    m.add_function(wrap_pyfunction!(aot_cache_dir, m)?)?;
    m.add_function(wrap_pyfunction!(compile_function, m)?)?;
    m.add_function(wrap_pyfunction!(check_source, m)?)?;
    m.add_function(wrap_pyfunction!(explain_function, m)?)?;
    m.add_function(wrap_pyfunction!(log_spec, m)?)?;
    m.add_function(wrap_pyfunction!(log_channels, m)?)?;
    m.add_function(wrap_pyfunction!(fallback_log, m)?)?;
    m.add_function(wrap_pyfunction!(native_mode, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(doctor_report, m)?)?;
    m.add_function(wrap_pyfunction!(call_floor, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_claim, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_lower, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_rule_records, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_surface, m)?)?;
    m.add_function(wrap_pyfunction!(markers, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_rust_vocabulary, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_runtime_modules, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_crate_pins, m)?)?;
    Ok(())
}

/// The floor of a compiled call, for benchmarks: a PyO3 function that takes three arguments
/// and returns a new 1-element float32 tensor, and does nothing else. A compiled call's cost
/// above it is its argument binding, checks, computation and output allocation.
#[pyfunction]
#[pyo3(name = "_call_floor", signature = (*_args))]
fn call_floor<'py>(py: Python<'py>, _args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
    let t = tch::Tensor::f_empty([1i64], (tch::Kind::Float, tch::Device::Cpu))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    materialize_value(py, Value::Tensor(t))
}
