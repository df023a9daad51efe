//! `rextio-torch doctor` and `rextio_torch.doctor()`: what the project needs, what this host
//! has, and for each problem a stable code (`RXD0NN`) with one sentence saying how to fix
//! it. Ready (exit 0) when nothing required is missing, not ready (exit 1) otherwise; notes
//! and warnings never change the exit code. `docs/tooling.md` lists every code.
//!
//! The facts come from a [`Host`]: the binary probes a child `python` (the interpreter tch's
//! build runs) and resolves libtorch as torch-sys's build script does; the Python extension
//! probes its own interpreter and reports the libtorch its tch was linked against. The
//! checks, the codes and the text are the same for both ([`diagnose`]).

use std::path::PathBuf;

use serde_json::{json, Value};

/// The tch release the workspace pins (`Cargo.toml`).
pub const TCH_VERSION: &str = "0.26.0";
/// The PyTorch (libtorch) release tch 0.26.0's build script requires, exactly.
pub const TORCH_VERSION: &str = "2.13.0";
/// The CPython minor version the package is built for.
pub const PYTHON_VERSION: &str = "3.11";
/// The Rextio core release the reference plugin runs on (optional here).
pub const REXTIO_VERSION: &str = "0.1.8";
/// The oldest rustc the workspace builds with (its `rust-version`).
pub const MIN_RUSTC: &str = env!("CARGO_PKG_RUST_VERSION");

/// How much a finding matters (the registry's doctor levels). Only [`Level::Problem`] makes
/// the host not ready.
pub use rextio_ir::codes::DoctorLevel as Level;
/// The doctor's codes, each with its level and doc line (`docs/tooling.md` lists them).
pub use rextio_ir::codes::Rxd;

mod facts;

pub use facts::{
    default_python, libtorch_from_env, probe_python, simd_features, tool_version, Facts, Host,
    Libtorch, ProcessHost, PythonFacts, TorchFacts, PROBE,
};

/// One cell of the seed's host-platform table (`docs/tooling.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// `linux-x64`, `macos-arm64`, ...
    pub key: String,
    /// `certified`, `experimental`, `availability-gated`, `unsupported`, `deferred` (Windows)
    /// or `not-listed`.
    pub status: &'static str,
    /// `required`, `experimental` or `unavailable`.
    pub native_e2e: &'static str,
    /// The seed's stable reason code (`RXTT-PLATFORM-...`), where it gives one.
    pub reason_code: Option<&'static str>,
    pub detail: &'static str,
}

/// The eight Linux/macOS cells of the seed (rextio-torch 0.1.2 `platforms.py`): os, arch,
/// status, native e2e, reason code, detail.
const CELLS: [(&str, &str, &str, &str, &str, &str); 8] = [
    ("linux", "x86", "unsupported", "unavailable", "RXTT-PLATFORM-TORCH-WHEEL-UNAVAILABLE", "torch publishes no CPython 3.11 Linux i686 wheel"),
    ("linux", "x64", "experimental", "required", "RXTT-PLATFORM-ALPHA-EXPERIMENTAL", "hosted runner and pinned manylinux x86_64 wheel are available; runtime-backed, not certified"),
    ("linux", "arm32", "unsupported", "unavailable", "RXTT-PLATFORM-TORCH-WHEEL-UNAVAILABLE", "torch publishes no CPython 3.11 Linux ARMv7 wheel"),
    ("linux", "arm64", "experimental", "experimental", "RXTT-PLATFORM-ALPHA-EXPERIMENTAL", "pinned manylinux AArch64 wheel exists; runtime-backed, not certified"),
    ("macos", "x86", "unsupported", "unavailable", "RXTT-PLATFORM-MODERN-TARGET-UNAVAILABLE", "no modern macOS i686 runner or torch wheel exists"),
    ("macos", "x64", "availability-gated", "unavailable", "RXTT-PLATFORM-TORCH-WHEEL-UNAVAILABLE", "the pinned torch has no CPython 3.11 macOS x86_64 wheel"),
    ("macos", "arm32", "unsupported", "unavailable", "RXTT-PLATFORM-MODERN-TARGET-UNAVAILABLE", "no modern macOS ARMv7 runner or torch wheel exists"),
    ("macos", "arm64", "certified", "required", "RXTT-PLATFORM-CERTIFIED", "the seed's certified profile (Apple Silicon)"),
];

/// The cell of an OS/architecture pair as Rust names them (`std::env::consts`).
pub fn platform_cell(os: &str, arch: &str) -> Cell {
    let arch = match arch {
        "x86" => "x86",
        "x86_64" => "x64",
        "arm" => "arm32",
        "aarch64" => "arm64",
        other => other,
    };
    let key = format!("{os}-{arch}");
    if let Some(&(_, _, status, native_e2e, reason, detail)) =
        CELLS.iter().find(|c| c.0 == os && c.1 == arch)
    {
        return Cell {
            key,
            status,
            native_e2e,
            reason_code: Some(reason),
            detail,
        };
    }
    let (status, detail) = if os == "windows" {
        (
            "deferred",
            "Windows is unverified and outside the seed's Alpha; no support claim",
        )
    } else {
        (
            "not-listed",
            "the seed's platform table covers Linux and macOS only",
        )
    };
    Cell {
        key,
        status,
        native_e2e: "unavailable",
        reason_code: None,
        detail,
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub level: Level,
    /// What this host has.
    pub found: String,
    /// What the project needs.
    pub need: String,
    /// The reason code, for anything but `ok`.
    pub code: Option<Rxd>,
    /// One sentence saying how to fix it, for anything but `ok`.
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, found: String, need: String) -> Check {
        Check {
            name,
            level: Level::Ok,
            found,
            need,
            code: None,
            fix: None,
        }
    }

    /// A finding: its level is its code's, from the registry ([`Rxd`]).
    fn finding(name: &'static str, code: Rxd, found: String, need: String, fix: String) -> Check {
        let level = code.severity();
        Check {
            name,
            level,
            found,
            need,
            code: Some(code),
            fix: Some(fix),
        }
    }
}

/// The whole report.
#[derive(Clone, Debug)]
pub struct Report {
    pub checks: Vec<Check>,
    pub platform: Cell,
    facts: Value,
}

/// Checks the facts: what is there, what is not, and how to fix it.
pub fn diagnose(facts: &Facts) -> Report {
    let mut checks = Vec::new();
    let need_python = format!("CPython {PYTHON_VERSION}");
    match &facts.python {
        Err(why) => checks.push(Check::finding(
            "python",
            Rxd::PythonUnusable,
            format!("{why} ({})", facts.python_source),
            need_python,
            "Install CPython 3.11 and create the project's environment with `make venv`, or \
             name the interpreter with `--python`."
                .into(),
        )),
        Ok(p) => {
            let found = format!(
                "{} {} at {} ({})",
                implementation_name(&p.implementation),
                p.version,
                p.executable,
                facts.python_source
            );
            let minor_ok =
                p.version == PYTHON_VERSION || p.version.starts_with(&format!("{PYTHON_VERSION}."));
            if p.implementation == "cpython" && minor_ok {
                checks.push(Check::ok("python", found, need_python));
            } else {
                checks.push(Check::finding(
                    "python",
                    Rxd::PythonVersion,
                    found,
                    need_python,
                    "Use CPython 3.11 (`python3.11 -m venv .venv`, as `make venv` does): the \
                     extension is built for that ABI only."
                        .into(),
                ));
            }
        }
    }

    let need_torch = format!("torch {TORCH_VERSION} exactly");
    match &facts.python {
        Err(_) => checks.push(Check::finding(
            "torch",
            Rxd::TorchImport,
            "not probed: no Python".into(),
            need_torch,
            "Fix the Python interpreter first (RXD001).".into(),
        )),
        Ok(p) => match &p.torch {
            Err(why) => checks.push(Check::finding(
                "torch",
                Rxd::TorchImport,
                format!("does not import: {why}"),
                need_torch,
                format!(
                    "Install it in that environment: `pip install torch=={TORCH_VERSION}` \
                     (`make venv` does)."
                ),
            )),
            Ok(t) if base_version(&t.version) == TORCH_VERSION => {
                checks.push(Check::ok("torch", t.version.clone(), need_torch))
            }
            Ok(t) => checks.push(Check::finding(
                "torch",
                Rxd::TorchVersion,
                t.version.clone(),
                need_torch,
                format!(
                    "Install the pinned release: `pip install torch=={TORCH_VERSION}`; tch \
                     {TCH_VERSION} links exactly that libtorch and its version check is never \
                     bypassed."
                ),
            )),
        },
    }

    checks.push(libtorch_check(facts));

    let need_unset = "unset (the version check is never bypassed)".to_string();
    match &facts.bypass {
        None => checks.push(Check::ok(
            "version check",
            "LIBTORCH_BYPASS_VERSION_CHECK is not set".into(),
            need_unset,
        )),
        Some(value) => checks.push(Check::finding(
            "version check",
            Rxd::BypassVersionCheck,
            format!("LIBTORCH_BYPASS_VERSION_CHECK={value:?}"),
            need_unset,
            "Unset LIBTORCH_BYPASS_VERSION_CHECK: a libtorch that is not 2.13.0 must fail the \
             build, not be linked."
                .into(),
        )),
    }

    match &facts.cargo {
        Ok(version) => checks.push(Check::ok("cargo", version.clone(), "any".into())),
        Err(why) => checks.push(Check::finding(
            "cargo",
            Rxd::CargoMissing,
            why.clone(),
            "any".into(),
            "Install Rust with rustup (https://rustup.rs): cargo builds the workspace and \
             emitted projects."
                .into(),
        )),
    }
    let need_rustc = format!("rustc {MIN_RUSTC} or newer");
    match &facts.rustc {
        Ok(version) if rustc_at_least(version, MIN_RUSTC) => {
            checks.push(Check::ok("rustc", version.clone(), need_rustc))
        }
        found => checks.push(Check::finding(
            "rustc",
            Rxd::RustcVersion,
            match found {
                Ok(version) => version.clone(),
                Err(why) => why.clone(),
            },
            need_rustc,
            format!(
                "Install or update the stable toolchain (`rustup update stable`); the \
                 workspace needs rustc {MIN_RUSTC} or newer."
            ),
        )),
    }

    let need_package = "importable, with its extension".to_string();
    match facts.python.as_ref().map(|p| &p.rextio_torch) {
        Ok(Ok(version)) => checks.push(Check::ok(
            "rextio_torch",
            format!("{version} (imports)"),
            need_package,
        )),
        Ok(Err(why)) => checks.push(Check::finding(
            "rextio_torch",
            Rxd::PackageImport,
            format!("does not import: {why}"),
            need_package,
            "Build and install it into that environment with `make build` (after torch \
             imports)."
                .into(),
        )),
        Err(_) => checks.push(Check::finding(
            "rextio_torch",
            Rxd::PackageImport,
            "not probed: no Python".into(),
            need_package,
            "Fix the Python interpreter first (RXD001).".into(),
        )),
    }

    let need_rextio = format!("optional; {REXTIO_VERSION} when installed");
    match facts.python.as_ref().ok().map(|p| p.rextio.as_deref()) {
        Some(Some(version)) if base_version(version) == REXTIO_VERSION => {
            checks.push(Check::ok("rextio", version.to_string(), need_rextio))
        }
        Some(Some(version)) => checks.push(Check::finding(
            "rextio",
            Rxd::RextioVersion,
            version.to_string(),
            need_rextio,
            format!(
                "Optional: `pip install rextio=={REXTIO_VERSION}` to run the reference host \
                 side by side; rextio-torch itself does not import it."
            ),
        )),
        _ => checks.push(Check::finding(
            "rextio",
            Rxd::RextioMissing,
            "not installed".into(),
            need_rextio,
            format!(
                "Nothing to do unless you compare with the reference host (`pip install \
                 rextio=={REXTIO_VERSION}`)."
            ),
        )),
    }

    checks.push(cuda_check(facts));
    checks.push(simd_check(facts));

    let platform = platform_cell(&facts.os, &facts.arch);
    checks.push(platform_check(&platform));

    Report {
        checks,
        facts: facts_json(facts),
        platform,
    }
}

fn implementation_name(implementation: &str) -> &str {
    match implementation {
        "cpython" => "CPython",
        "pypy" => "PyPy",
        other => other,
    }
}

/// `2.13.0` of `2.13.0+cu130`.
fn base_version(version: &str) -> &str {
    version.split('+').next().unwrap_or(version)
}

/// Whether `rustc X.Y.Z (...)` is at least `min` (`X.Y`).
fn rustc_at_least(version: &str, min: &str) -> bool {
    let parse = |v: &str| -> Option<Vec<u64>> {
        v.split(['.', '-'])
            .take(3)
            .map(|part| part.parse::<u64>().ok())
            .collect()
    };
    let Some(found) = version.split_whitespace().nth(1).and_then(parse) else {
        return false;
    };
    let Some(min) = parse(min) else {
        return false;
    };
    let pad = |mut v: Vec<u64>| {
        v.resize(3, 0);
        v
    };
    pad(found) >= pad(min)
}

fn same_dir(a: &str, b: &str) -> bool {
    let canon = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    canon(a) == canon(b)
}

fn libtorch_check(facts: &Facts) -> Check {
    let need = format!("libtorch {TORCH_VERSION} (tch {TCH_VERSION})");
    let torch = facts.torch();
    let wrong_version = |found: String, what: &str| {
        Check::finding(
            "libtorch (tch)",
            Rxd::LibtorchVersion,
            found,
            need.clone(),
            format!(
                "Install torch=={TORCH_VERSION} ({what}) and rebuild with `make build`; tch \
                 {TCH_VERSION} works with no other libtorch."
            ),
        )
    };
    match &facts.libtorch {
        Libtorch::Linked { dir, cuda } => {
            let cuda = if *cuda { "sees CUDA" } else { "sees no CUDA" };
            match torch {
                Some(t) if base_version(&t.version) != TORCH_VERSION => wrong_version(
                    format!(
                        "tch was built against {dir}, but this interpreter's torch is {}",
                        t.version
                    ),
                    "this interpreter's torch",
                ),
                Some(t) if !same_dir(dir, &t.lib_dir) => Check::finding(
                    "libtorch (tch)",
                    Rxd::LibtorchMismatch,
                    format!(
                        "tch was built against {dir}; this interpreter loads {} ({cuda})",
                        t.lib_dir
                    ),
                    need,
                    "Rebuild the extension in this environment (`make build`) so it links \
                     the libtorch torch loads."
                        .into(),
                ),
                Some(t) => Check::ok(
                    "libtorch (tch)",
                    format!(
                        "{} at {dir}, linked into the extension ({cuda})",
                        base_version(&t.version)
                    ),
                    need,
                ),
                None => wrong_version(
                    format!("tch was built against {dir}; torch does not import"),
                    "so that it imports",
                ),
            }
        }
        Libtorch::FromPython => match torch {
            Some(t) if base_version(&t.version) == TORCH_VERSION => Check::ok(
                "libtorch (tch)",
                format!(
                    "{} at {}, from that Python's torch (LIBTORCH_USE_PYTORCH is set)",
                    base_version(&t.version),
                    t.lib_dir
                ),
                need,
            ),
            Some(t) => wrong_version(
                format!(
                    "{} at {}, from that Python's torch (LIBTORCH_USE_PYTORCH is set)",
                    t.version, t.lib_dir
                ),
                "in the Python tch's build runs",
            ),
            None => wrong_version(
                "none: LIBTORCH_USE_PYTORCH is set but that Python has no torch".into(),
                "in the Python tch's build runs",
            ),
        },
        Libtorch::Dir { dir, version } => match version {
            Ok(v) if base_version(v) == TORCH_VERSION => {
                Check::ok("libtorch (tch)", format!("{v} at {dir} (LIBTORCH)"), need)
            }
            Ok(v) => wrong_version(format!("{v} at {dir} (LIBTORCH)"), "and unset LIBTORCH"),
            Err(why) => wrong_version(format!("LIBTORCH={dir}: {why}"), "and unset LIBTORCH"),
        },
        Libtorch::Unset => Check::finding(
            "libtorch (tch)",
            Rxd::UsePytorchUnset,
            "not resolved: neither LIBTORCH_USE_PYTORCH nor LIBTORCH is set".into(),
            need,
            "Export LIBTORCH_USE_PYTORCH=1 (the Makefile does) before running cargo yourself, \
             so tch links the venv's torch."
                .into(),
        ),
    }
}

fn cuda_check(facts: &Facts) -> Check {
    let need = "optional (the cuda:0 slice is claimed and emitted, not run in process)";
    let tch = match &facts.libtorch {
        Libtorch::Linked { cuda, .. } => {
            format!(
                "; tch {}",
                if *cuda { "sees it" } else { "does not see it" }
            )
        }
        _ => String::new(),
    };
    match facts.torch() {
        Some(t) if t.cuda_available => Check::ok(
            "CUDA",
            format!(
                "available: {} device(s), CUDA {}{tch}",
                t.cuda_devices,
                t.cuda_version.as_deref().unwrap_or("?")
            ),
            need.into(),
        ),
        Some(t) => Check::finding(
            "CUDA",
            Rxd::CudaUnavailable,
            match &t.cuda_version {
                Some(v) => format!("not available (torch is built with CUDA {v}){tch}"),
                None => format!("not available (a CPU-only torch){tch}"),
            },
            need.into(),
            "Nothing to do for CPU work; CUDA matters only once the cuda:0 slice runs.".into(),
        ),
        None => Check::finding(
            "CUDA",
            Rxd::CudaUnavailable,
            "unknown: torch does not import".into(),
            need.into(),
            "Fix torch first (RXD003).".into(),
        ),
    }
}

fn simd_check(facts: &Facts) -> Check {
    let found = facts
        .simd
        .iter()
        .map(|(name, has)| match has {
            Some(true) => format!("{name} yes"),
            Some(false) => format!("{name} no"),
            None => format!("{name} n/a"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let has = |feature: &str| {
        facts
            .simd
            .iter()
            .find(|(name, _)| *name == feature)
            .and_then(|(_, has)| *has)
    };
    let need = "avx2 and fma on x86_64 for the fused kernel's fast path".to_string();
    if facts.arch == "x86_64" && (has("avx2") != Some(true) || has("fma") != Some(true)) {
        Check::finding(
            "CPU SIMD",
            Rxd::NoAvx2,
            found,
            need,
            "Nothing to fix: results are the same; use a CPU with AVX2 and FMA for the fused \
             kernel's vector path."
                .into(),
        )
    } else {
        Check::ok("CPU SIMD", found, need)
    }
}

fn platform_check(cell: &Cell) -> Check {
    let reason = cell
        .reason_code
        .map(|code| format!(" [{code}]"))
        .unwrap_or_default();
    let found = format!("{}: {}{reason}: {}", cell.key, cell.status, cell.detail);
    let need = "a runtime-backed cell of the seed's table".to_string();
    match cell.status {
        "certified" => Check::ok("platform", found, need),
        "experimental" => Check::finding(
            "platform",
            Rxd::PlatformExperimental,
            found,
            need,
            "Nothing to do: this cell builds and runs, but the seed certifies only macOS arm64."
                .into(),
        ),
        "availability-gated" | "unsupported" => Check::finding(
            "platform",
            Rxd::PlatformUnpinned,
            found,
            need,
            "Use Linux x86_64/AArch64 or macOS arm64: the pinned torch has no CPython 3.11 \
             wheel here."
                .into(),
        ),
        _ => Check::finding(
            "platform",
            Rxd::PlatformDeferred,
            found,
            need,
            "Expect to be on your own: use Linux x86_64/AArch64 or macOS arm64 for a \
             supported cell."
                .into(),
        ),
    }
}

fn facts_json(facts: &Facts) -> Value {
    let python = match &facts.python {
        Ok(p) => json!({
            "executable": p.executable,
            "version": p.version,
            "implementation": p.implementation,
            "source": facts.python_source,
            "torch": match &p.torch {
                Ok(t) => json!({
                    "version": t.version,
                    "lib_dir": t.lib_dir,
                    "cxx11_abi": t.cxx11_abi,
                    "cuda_version": t.cuda_version,
                    "cuda_available": t.cuda_available,
                    "cuda_devices": t.cuda_devices,
                }),
                Err(why) => json!({ "error": why }),
            },
            "rextio": p.rextio,
            "rextio_torch": match &p.rextio_torch {
                Ok(version) => json!({ "version": version }),
                Err(why) => json!({ "error": why }),
            },
        }),
        Err(why) => json!({ "error": why, "source": facts.python_source }),
    };
    let libtorch = match &facts.libtorch {
        Libtorch::Linked { dir, cuda } => {
            json!({ "source": "linked", "dir": dir, "tch_cuda": cuda })
        }
        Libtorch::FromPython => json!({ "source": "LIBTORCH_USE_PYTORCH" }),
        Libtorch::Dir { dir, version } => json!({
            "source": "LIBTORCH",
            "dir": dir,
            "version": version.as_ref().ok(),
            "error": version.as_ref().err(),
        }),
        Libtorch::Unset => json!({ "source": null }),
    };
    let simd: serde_json::Map<String, Value> = facts
        .simd
        .iter()
        .map(|(name, has)| (name.to_string(), json!(has)))
        .collect();
    json!({
        "python": python,
        "libtorch": libtorch,
        "expected": {
            "python": PYTHON_VERSION,
            "torch": TORCH_VERSION,
            "tch": TCH_VERSION,
            "rustc": MIN_RUSTC,
            "rextio": REXTIO_VERSION,
        },
        "bypass_version_check": facts.bypass,
        "cargo": facts.cargo.as_ref().ok(),
        "rustc": facts.rustc.as_ref().ok(),
        "simd": simd,
        "os": facts.os,
        "arch": facts.arch,
    })
}

impl Report {
    /// Whether everything required is there (no problem).
    pub fn ready(&self) -> bool {
        self.checks.iter().all(|c| c.level != Level::Problem)
    }

    /// 0 when ready, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        if self.ready() {
            0
        } else {
            1
        }
    }

    pub fn problems(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.level == Level::Problem)
    }

    /// The report as data: `ready`, `exit_code`, `checks` (name, level, found, need, code,
    /// fix), `platform` (the cell) and the raw `facts`.
    pub fn to_json(&self) -> Value {
        let checks: Vec<Value> = self
            .checks
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "level": c.level.as_str(),
                    "found": c.found,
                    "need": c.need,
                    "code": c.code.map(Rxd::code),
                    "fix": c.fix,
                })
            })
            .collect();
        json!({
            "ready": self.ready(),
            "exit_code": self.exit_code(),
            "checks": checks,
            "platform": {
                "key": self.platform.key,
                "status": self.platform.status,
                "native_e2e": self.platform.native_e2e,
                "reason_code": self.platform.reason_code,
                "detail": self.platform.detail,
            },
            "facts": self.facts,
        })
    }

    /// The report for people: one line per check, what to do under each finding, a verdict.
    pub fn render(&self) -> String {
        let mut out =
            String::from("rextio-torch doctor: what the project needs, what this host has\n\n");
        let width = self.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        let indent = " ".repeat(2 + 8 + 1 + width + 2);
        for c in &self.checks {
            out.push_str(&format!(
                "  {:<8} {:<width$}  {}\n",
                c.level.as_str(),
                c.name,
                c.found
            ));
            if let (Some(code), Some(fix)) = (c.code, &c.fix) {
                out.push_str(&format!("{indent}needs: {}\n", c.need));
                out.push_str(&format!("{indent}{code}: {fix}\n"));
            }
        }
        let problems: Vec<&str> = self
            .problems()
            .filter_map(|c| c.code.map(Rxd::code))
            .collect();
        out.push('\n');
        if problems.is_empty() {
            out.push_str("ready: everything required is there (exit 0)\n");
        } else {
            out.push_str(&format!(
                "not ready: {} problem(s): {} (exit 1)\n",
                problems.len(),
                problems.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn torch(version: &str) -> TorchFacts {
        TorchFacts {
            version: version.into(),
            lib_dir: "/venv/torch/lib".into(),
            cxx11_abi: true,
            cuda_version: Some("13.0".into()),
            cuda_available: false,
            cuda_devices: 0,
        }
    }

    fn python(version: &str, torch_version: Option<&str>) -> PythonFacts {
        PythonFacts {
            executable: "/venv/bin/python".into(),
            version: version.into(),
            implementation: "cpython".into(),
            torch: torch_version
                .map(torch)
                .ok_or_else(|| "ModuleNotFoundError: No module named 'torch'".into()),
            rextio: None,
            rextio_torch: Ok("0.1.0".into()),
        }
    }

    /// A host with everything required: Linux x86_64 with AVX2, torch 2.13.0 from Python.
    fn ready() -> Facts {
        Facts {
            python_source: "test".into(),
            python: Ok(python("3.11.7", Some("2.13.0+cu130"))),
            libtorch: Libtorch::FromPython,
            bypass: None,
            cargo: Ok("cargo 1.95.0 (f2d3ce0bd 2026-03-21)".into()),
            rustc: Ok("rustc 1.95.0 (59807616e 2026-04-14)".into()),
            simd: vec![
                ("avx2", Some(true)),
                ("fma", Some(true)),
                ("avx512f", Some(false)),
                ("neon", None),
            ],
            os: "linux".into(),
            arch: "x86_64".into(),
        }
    }

    fn codes(report: &Report) -> Vec<(Rxd, Level)> {
        report
            .checks
            .iter()
            .filter_map(|c| c.code.map(|code| (code, c.level)))
            .collect()
    }

    #[test]
    fn a_ready_host_exits_0_with_notes_only() {
        let report = diagnose(&ready());
        assert!(report.ready());
        assert_eq!(report.exit_code(), 0);
        assert_eq!(
            codes(&report),
            [
                (Rxd::RextioMissing, Level::Note),
                (Rxd::CudaUnavailable, Level::Note),
                (Rxd::PlatformExperimental, Level::Note),
            ]
        );
        let names: Vec<&str> = report.checks.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "python",
                "torch",
                "libtorch (tch)",
                "version check",
                "cargo",
                "rustc",
                "rextio_torch",
                "rextio",
                "CUDA",
                "CPU SIMD",
                "platform",
            ]
        );
        let text = report.render();
        assert!(
            text.ends_with("\nready: everything required is there (exit 0)\n"),
            "{text}"
        );
        assert!(
            text.contains("  ok       torch           2.13.0+cu130\n"),
            "{text}"
        );
        assert!(text.contains("RXD016: Nothing to do"), "{text}");
        let json = report.to_json();
        assert_eq!(json["ready"], true);
        assert_eq!(json["platform"]["key"], "linux-x64");
        assert_eq!(
            json["platform"]["reason_code"],
            "RXTT-PLATFORM-ALPHA-EXPERIMENTAL"
        );
        assert_eq!(json["checks"][1]["level"], "ok");
        assert_eq!(json["facts"]["expected"]["torch"], "2.13.0");
    }

    #[test]
    fn every_required_part_missing_is_a_problem_with_its_code() {
        let mut facts = ready();
        facts.python = Ok(python("3.12.1", Some("2.11.0")));
        facts.bypass = Some("1".into());
        facts.cargo = Err("`cargo` not found".into());
        facts.rustc = Ok("rustc 1.80.0 (abc 2024-07-21)".into());
        let report = diagnose(&facts);
        assert_eq!(report.exit_code(), 1);
        let problems: Vec<Rxd> = report.problems().filter_map(|c| c.code).collect();
        assert_eq!(
            problems,
            [
                Rxd::PythonVersion,
                Rxd::TorchVersion,
                Rxd::LibtorchVersion,
                Rxd::BypassVersionCheck,
                Rxd::CargoMissing,
                Rxd::RustcVersion
            ]
        );
        for check in report.problems() {
            let fix = check.fix.as_deref().unwrap_or("");
            assert!(fix.ends_with('.') && fix.len() > 20, "{check:?}");
        }
        let text = report.render();
        assert!(
            text.ends_with(
                "not ready: 6 problem(s): RXD002, RXD004, RXD005, RXD008, RXD009, RXD010 (exit 1)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn no_python_or_no_torch() {
        let mut facts = ready();
        facts.python = Err("cannot run `nope`: No such file or directory".into());
        let found = codes(&diagnose(&facts));
        assert!(found.contains(&(Rxd::PythonUnusable, Level::Problem)));
        assert!(found.contains(&(Rxd::PackageImport, Level::Problem)));

        let mut facts = ready();
        facts.python = Ok(python("3.11.7", None));
        let report = diagnose(&facts);
        let found = codes(&report);
        assert!(found.contains(&(Rxd::TorchImport, Level::Problem)));
        // tch's build would find no libtorch either.
        assert!(found.contains(&(Rxd::LibtorchVersion, Level::Problem)));
    }

    #[test]
    fn libtorch_as_tch_sees_it() {
        let check = |libtorch: Libtorch| {
            let mut facts = ready();
            facts.libtorch = libtorch;
            let report = diagnose(&facts);
            report.checks[2].clone()
        };
        let linked = check(Libtorch::Linked {
            dir: "/venv/torch/lib".into(),
            cuda: false,
        });
        assert_eq!(linked.level, Level::Ok);
        assert!(
            linked.found.contains("linked into the extension"),
            "{linked:?}"
        );
        let elsewhere = check(Libtorch::Linked {
            dir: "/build/torch/lib".into(),
            cuda: false,
        });
        assert_eq!(elsewhere.code, Some(Rxd::LibtorchMismatch));
        assert_eq!(elsewhere.level, Level::Warning);
        let unset = check(Libtorch::Unset);
        assert_eq!(
            (unset.code, unset.level),
            (Some(Rxd::UsePytorchUnset), Level::Warning)
        );
        let dir = check(Libtorch::Dir {
            dir: "/opt/libtorch".into(),
            version: Ok("2.12.1+cpu".into()),
        });
        assert_eq!(
            (dir.code, dir.level),
            (Some(Rxd::LibtorchVersion), Level::Problem)
        );
        let good_dir = check(Libtorch::Dir {
            dir: "/opt/libtorch".into(),
            version: Ok("2.13.0+cpu".into()),
        });
        assert_eq!(good_dir.level, Level::Ok);
    }

    #[test]
    fn optional_parts_never_change_the_exit_code() {
        let mut facts = ready();
        facts.python = Ok(PythonFacts {
            rextio: Some("0.1.6".into()),
            ..python("3.11.7", Some("2.13.0"))
        });
        facts.simd = vec![
            ("avx2", Some(false)),
            ("fma", Some(false)),
            ("avx512f", Some(false)),
            ("neon", None),
        ];
        let report = diagnose(&facts);
        assert_eq!(report.exit_code(), 0);
        let found = codes(&report);
        assert!(found.contains(&(Rxd::RextioVersion, Level::Warning)));
        assert!(found.contains(&(Rxd::NoAvx2, Level::Warning)));

        facts.python = Ok(PythonFacts {
            rextio: Some("0.1.8".into()),
            ..python("3.11.7", Some("2.13.0"))
        });
        if let Ok(p) = &mut facts.python {
            if let Ok(t) = &mut p.torch {
                t.cuda_available = true;
                t.cuda_devices = 1;
            }
        }
        let report = diagnose(&facts);
        let cuda = report.checks.iter().find(|c| c.name == "CUDA").unwrap();
        assert_eq!(cuda.level, Level::Ok);
        assert_eq!(cuda.found, "available: 1 device(s), CUDA 13.0");
        assert!(report
            .checks
            .iter()
            .all(|c| c.code != Some(Rxd::RextioMissing)));
    }

    #[test]
    fn platform_cells_follow_the_seed_table() {
        let cell = |os, arch| platform_cell(os, arch);
        assert_eq!(cell("macos", "aarch64").status, "certified");
        assert_eq!(cell("linux", "x86_64").status, "experimental");
        assert_eq!(cell("linux", "aarch64").native_e2e, "experimental");
        assert_eq!(cell("macos", "x86_64").status, "availability-gated");
        assert_eq!(
            cell("linux", "arm").reason_code,
            Some("RXTT-PLATFORM-TORCH-WHEEL-UNAVAILABLE")
        );
        assert_eq!(
            cell("macos", "x86").reason_code,
            Some("RXTT-PLATFORM-MODERN-TARGET-UNAVAILABLE")
        );
        assert_eq!(cell("windows", "x86_64").status, "deferred");
        assert_eq!(cell("freebsd", "x86_64").status, "not-listed");
        let level = |os: &str, arch: &str| {
            let mut facts = ready();
            facts.os = os.into();
            facts.arch = arch.into();
            let report = diagnose(&facts);
            let platform = report.checks.last().unwrap().clone();
            (platform.code, platform.level)
        };
        assert_eq!(level("macos", "aarch64"), (None, Level::Ok));
        assert_eq!(
            level("macos", "x86_64"),
            (Some(Rxd::PlatformUnpinned), Level::Problem)
        );
        assert_eq!(
            level("linux", "x86"),
            (Some(Rxd::PlatformUnpinned), Level::Problem)
        );
        assert_eq!(
            level("windows", "x86_64"),
            (Some(Rxd::PlatformDeferred), Level::Warning)
        );
    }

    #[test]
    fn probe_reports_parse() {
        let value: Value = serde_json::from_str(
            r#"{"executable": "/p", "version": "3.11.7", "implementation": "cpython",
                "torch_error": "ImportError: nope", "rextio": null,
                "rextio_torch_error": "ImportError: nope too"}"#,
        )
        .unwrap();
        let facts = PythonFacts::from_json(&value).unwrap();
        assert_eq!(facts.torch, Err("ImportError: nope".into()));
        assert_eq!(facts.rextio_torch, Err("ImportError: nope too".into()));
        assert!(PythonFacts::from_json(&serde_json::json!({})).is_err());
    }

    #[test]
    fn rustc_versions() {
        assert!(rustc_at_least(
            "rustc 1.95.0 (59807616e 2026-04-14)",
            "1.85"
        ));
        assert!(rustc_at_least("rustc 1.85.0", "1.85"));
        assert!(!rustc_at_least("rustc 1.84.1 (x)", "1.85"));
        assert!(rustc_at_least("rustc 1.96.0-nightly (x)", "1.85"));
        assert!(!rustc_at_least("garbage", "1.85"));
    }

    #[test]
    fn libtorch_from_the_environment_as_torch_sys_reads_it() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            libtorch_from_env(env(&[("LIBTORCH_USE_PYTORCH", "0"), ("LIBTORCH", "/x")])),
            Libtorch::FromPython
        );
        assert_eq!(libtorch_from_env(env(&[])), Libtorch::Unset);
        let dir = std::env::temp_dir().join("rextio-doctor-libtorch");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("build-version"), "2.13.0+cpu\n").unwrap();
        let path: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
        let pairs: &'static [(&'static str, &'static str)] =
            Box::leak(vec![("LIBTORCH", path)].into_boxed_slice());
        assert_eq!(
            libtorch_from_env(env(pairs)),
            Libtorch::Dir {
                dir: path.to_string(),
                version: Ok("2.13.0+cpu".into())
            }
        );
    }

    #[test]
    fn the_pins_are_the_workspace_pins() {
        let manifest = include_str!("../../Cargo.toml");
        assert!(
            manifest.contains(&format!("tch = {{ version = \"={TCH_VERSION}\"")),
            "the workspace no longer pins tch {TCH_VERSION}: update TCH_VERSION and TORCH_VERSION"
        );
        let requirements = include_str!("../../requirements.txt");
        assert!(requirements
            .lines()
            .any(|l| l == format!("torch=={TORCH_VERSION}")));
        let pyproject = include_str!("../../pyproject.toml");
        assert!(pyproject.contains(&format!("\"torch=={TORCH_VERSION}\"")));
        assert!(pyproject.contains(&format!("requires-python = \">={PYTHON_VERSION},")));
    }

    // Every code is documented with its level and meaning: `ir/tests/codes.rs` holds
    // docs/tooling.md's table to the registry (`Rxd`).
}
