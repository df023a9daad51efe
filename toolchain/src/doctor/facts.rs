//! What a host has: the facts `rextio-torch doctor` decides on ([`Facts`]), gathered by a
//! [`Host`] (a child `python` and torch-sys's rules for the binary, the running interpreter
//! for the extension). Nothing here judges them: the checks, codes and text are the parent
//! module's ([`super::diagnose`]), and so is the facts' JSON form in a report.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The probe of a Python environment, run in a child process or in process.
pub const PROBE: &str = include_str!("../probe.py");

/// What the probe found about torch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TorchFacts {
    pub version: String,
    pub lib_dir: String,
    pub cxx11_abi: bool,
    pub cuda_version: Option<String>,
    pub cuda_available: bool,
    pub cuda_devices: u64,
}

/// What the probe found about a Python environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonFacts {
    pub executable: String,
    pub version: String,
    pub implementation: String,
    pub torch: Result<TorchFacts, String>,
    pub rextio: Option<String>,
    pub rextio_torch: Result<String, String>,
}

impl PythonFacts {
    /// Reads the dict [`PROBE`]'s `probe()` returns (as JSON).
    pub fn from_json(v: &Value) -> Result<PythonFacts, String> {
        let text = |value: &Value, key: &str| -> Result<String, String> {
            value
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("the probe's report has no `{key}`"))
        };
        let torch = match v.get("torch") {
            Some(t) if t.is_object() => Ok(TorchFacts {
                version: text(t, "version")?,
                lib_dir: text(t, "lib_dir")?,
                cxx11_abi: t.get("cxx11_abi").and_then(Value::as_bool).unwrap_or(false),
                cuda_version: t
                    .get("cuda_version")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                cuda_available: t
                    .get("cuda_available")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                cuda_devices: t.get("cuda_devices").and_then(Value::as_u64).unwrap_or(0),
            }),
            _ => Err(text(v, "torch_error").unwrap_or_else(|_| "torch was not probed".into())),
        };
        let rextio_torch = match v.get("rextio_torch").and_then(Value::as_str) {
            Some(version) => Ok(version.to_string()),
            None => Err(text(v, "rextio_torch_error")
                .unwrap_or_else(|_| "rextio_torch was not probed".into())),
        };
        Ok(PythonFacts {
            executable: text(v, "executable")?,
            version: text(v, "version")?,
            implementation: text(v, "implementation")?,
            torch,
            rextio: v.get("rextio").and_then(Value::as_str).map(str::to_string),
            rextio_torch,
        })
    }
}

/// The libtorch tch sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Libtorch {
    /// Linked: the extension's tch was built against libtorch in `dir`; `cuda` is whether
    /// tch itself sees a CUDA device.
    Linked { dir: String, cuda: bool },
    /// `LIBTORCH_USE_PYTORCH` is set: tch's build takes the libtorch of the probed Python's
    /// torch.
    FromPython,
    /// `LIBTORCH` names a libtorch directory; `version` is its `build-version` file.
    Dir {
        dir: String,
        version: Result<String, String>,
    },
    /// Neither variable is set: tch's build looks for a system libtorch or downloads one,
    /// which this project never does.
    Unset,
}

/// Everything doctor checks.
#[derive(Clone, Debug)]
pub struct Facts {
    /// How the interpreter was chosen, in words.
    pub python_source: String,
    pub python: Result<PythonFacts, String>,
    pub libtorch: Libtorch,
    /// The value of `LIBTORCH_BYPASS_VERSION_CHECK`, when set.
    pub bypass: Option<String>,
    pub cargo: Result<String, String>,
    pub rustc: Result<String, String>,
    /// `avx2`, `fma`, `avx512f`, `neon`: detected or not; `None` on another architecture.
    pub simd: Vec<(&'static str, Option<bool>)>,
    /// `std::env::consts::OS` / `ARCH` of this build.
    pub os: String,
    pub arch: String,
}

/// Where doctor's facts come from (the binary or the Python extension).
pub trait Host {
    /// The facts to check; `python` is the interpreter `--python` names, if any.
    fn facts(&self, python: Option<&Path>) -> Facts;

    /// The environment `build` builds for: `python` (a child process), else the interpreter
    /// tch's build would run ([`default_python`]).
    fn python_env(&self, python: Option<&Path>) -> Result<crate::aot::PythonEnv, String> {
        let interpreter = match python {
            Some(p) => p.to_path_buf(),
            None => default_python().0,
        };
        crate::aot::PythonEnv::probe(&interpreter)
    }

    /// Asked while a build runs; `false` stops it (Ctrl-C inside Python).
    fn keep_going(&self) -> bool {
        true
    }
}

/// The binary's host: a child Python, libtorch as tch's build script would resolve it.
pub struct ProcessHost;

impl Host for ProcessHost {
    fn facts(&self, python: Option<&Path>) -> Facts {
        let (interpreter, source) = match python {
            Some(p) => (p.to_path_buf(), "named by --python".to_string()),
            None => default_python(),
        };
        Facts::gather(
            source,
            probe_python(&interpreter),
            libtorch_from_env(|name| std::env::var(name).ok()),
        )
    }
}

/// The interpreter tch's build script runs: `python` when `VIRTUAL_ENV` is set, else
/// `python3` (torch-sys 0.26.0), found on `PATH`.
pub fn default_python() -> (PathBuf, String) {
    if std::env::var_os("VIRTUAL_ENV").is_some() {
        (
            PathBuf::from("python"),
            "`python` on PATH (VIRTUAL_ENV is set), as tch's build runs it".into(),
        )
    } else {
        (
            PathBuf::from("python3"),
            "`python3` on PATH (VIRTUAL_ENV is unset), as tch's build runs it".into(),
        )
    }
}

/// Runs [`PROBE`] in `python` and reads what it prints.
pub fn probe_python(python: &Path) -> Result<PythonFacts, String> {
    let script = format!("{PROBE}\nimport json\nprint(json.dumps(probe()))\n");
    let output = Command::new(python)
        .arg("-c")
        .arg(script)
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", python.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("").trim();
        return Err(format!(
            "`{}` failed to run the probe ({}): {last}",
            python.display(),
            output.status
        ));
    }
    let line = stdout.lines().last().unwrap_or("");
    let value: Value = serde_json::from_str(line)
        .map_err(|e| format!("`{}` printed no probe report: {e}", python.display()))?;
    PythonFacts::from_json(&value)
}

/// libtorch as torch-sys's build script resolves it: `LIBTORCH_USE_PYTORCH` (any value)
/// first, then `LIBTORCH`.
pub fn libtorch_from_env(var: impl Fn(&str) -> Option<String>) -> Libtorch {
    if var("LIBTORCH_USE_PYTORCH").is_some() {
        return Libtorch::FromPython;
    }
    match var("LIBTORCH") {
        Some(dir) => {
            let file = Path::new(&dir).join("build-version");
            let version = std::fs::read_to_string(&file)
                .map(|v| v.trim().to_string())
                .map_err(|e| format!("cannot read {}: {e}", file.display()));
            Libtorch::Dir { dir, version }
        }
        None => Libtorch::Unset,
    }
}

/// The first line `program --version` prints.
pub fn tool_version(program: &str) -> Result<String, String> {
    let output = Command::new(program)
        .arg("--version")
        .output()
        .map_err(|e| format!("`{program}` not found ({e})"))?;
    if !output.status.success() {
        return Err(format!("`{program} --version` failed ({})", output.status));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string())
}

/// The SIMD features doctor reports, as this CPU has them.
pub fn simd_features() -> Vec<(&'static str, Option<bool>)> {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    let x86 = [
        Some(std::arch::is_x86_feature_detected!("avx2")),
        Some(std::arch::is_x86_feature_detected!("fma")),
        Some(std::arch::is_x86_feature_detected!("avx512f")),
    ];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    let x86 = [None, None, None];
    #[cfg(target_arch = "aarch64")]
    let neon = Some(std::arch::is_aarch64_feature_detected!("neon"));
    #[cfg(not(target_arch = "aarch64"))]
    let neon = None;
    vec![
        ("avx2", x86[0]),
        ("fma", x86[1]),
        ("avx512f", x86[2]),
        ("neon", neon),
    ]
}

impl Facts {
    /// The facts every host finds the same way (toolchain, CPU, platform, environment),
    /// around the Python and libtorch facts the host found its own way.
    pub fn gather(
        python_source: String,
        python: Result<PythonFacts, String>,
        libtorch: Libtorch,
    ) -> Facts {
        Facts {
            python_source,
            python,
            libtorch,
            bypass: std::env::var("LIBTORCH_BYPASS_VERSION_CHECK").ok(),
            cargo: tool_version("cargo"),
            rustc: tool_version("rustc"),
            simd: simd_features(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
        }
    }

    pub(super) fn torch(&self) -> Option<&TorchFacts> {
        self.python
            .as_ref()
            .ok()
            .and_then(|p| p.torch.as_ref().ok())
    }
}
