//! Ahead-of-time builds: `rextio-torch build` and `rextio_torch.compile(fn, mode="aot")`.
//!
//! The functions are emitted as the PyO3 crate `rextio-torch emit` writes (backend), built
//! with `cargo build --release`, and the extension is kept in a cache entry whose name is the
//! sha256 of everything the build depends on ([`KeyMaterial`]). A later process with the same
//! key loads the entry without running cargo. `docs/aot.md` describes the cache.
//!
//! Layout of a cache directory ([`cache_dir`] picks it):
//!
//! ```text
//! <cache>/CACHEDIR.TAG
//! <cache>/entries/<key>/        one complete build, renamed into place when it is done
//!     key.txt                   what the key hashes (readable)
//!     build.log                 cargo's output
//!     crate/                    the emitted crate that was built
//!     <module>/__init__.py      the package: imports torch, re-exports the functions
//!     <module>/_native<EXT>     the extension
//! <cache>/locks/<key>.lock      flock(2) lock held while <key> is built
//! <cache>/tmp/<key>.<pid>.<n>/  a build in progress
//! <cache>/failed/<key>.log      cargo's output of the last failed build of <key>
//! <cache>/target/<env>/         cargo's target dir, shared by every entry built for one
//!                               libtorch directory (<env> is a hash of it)
//!     rextio-aot-Cargo.lock     the first build's lock file: later builds start from it
//! ```
//!
//! Two processes that build the same key serialize on its lock; the second finds the entry
//! the first renamed into place and uses it. Builds of different keys share the target dir
//! (cargo locks it), so only the first build in a cache compiles tch and its C++ shim.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rextio_backend::{emit_crate, CrateOptions, EmittedFile};
use rextio_ir::Function;
use sha2::{Digest, Sha256};

/// Environment variable naming the cache directory (after an explicit `cache_dir`).
pub const CACHE_DIR_VAR: &str = "REXTIO_TORCH_CACHE_DIR";
/// Environment variable naming the cargo to run (default: `cargo` on `PATH`).
pub const CARGO_VAR: &str = "REXTIO_TORCH_CARGO";
/// Environment variable naming cargo's target dir (default: `<cache>/target/<env>`).
pub const TARGET_DIR_VAR: &str = "REXTIO_TORCH_TARGET_DIR";
/// Environment variable: seconds without output from cargo before a "still building" line
/// (default [`DEFAULT_PROGRESS_SECONDS`]).
pub const PROGRESS_VAR: &str = "REXTIO_TORCH_PROGRESS_SECONDS";
pub const DEFAULT_PROGRESS_SECONDS: u64 = 15;
/// The lock file of the first build in a target dir, which later builds there start from.
pub const LOCK_TEMPLATE: &str = "rextio-aot-Cargo.lock";
/// Version of the key's format: a change makes every old entry a miss.
pub const KEY_VERSION: u32 = 1;
/// Lines of cargo's output an error message quotes.
pub const TAIL_LINES: usize = 30;

/// The target triple this compiler was built for: the built extension is loaded into the
/// process that runs this code, so it is built for the same target.
pub const TARGET: &str = env!("REXTIO_TARGET");

/// Where the cache is and which rule chose it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheDir {
    pub path: PathBuf,
    /// `cache_dir argument`, `REXTIO_TORCH_CACHE_DIR`, `XDG_CACHE_HOME` or `HOME`.
    pub chosen_by: &'static str,
}

/// The cache directory: `explicit` (the `cache_dir=` argument or `--cache-dir`), else
/// `$REXTIO_TORCH_CACHE_DIR`, else `$XDG_CACHE_HOME/rextio-torch`, else
/// `$HOME/.cache/rextio-torch`. Empty values count as unset. A relative path is taken from the
/// current directory.
pub fn cache_dir(
    explicit: Option<&Path>,
    var: impl Fn(&str) -> Option<OsString>,
) -> Result<CacheDir, String> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let (path, chosen_by) = if let Some(p) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        (p.to_path_buf(), "cache_dir argument")
    } else if let Some(p) = set(CACHE_DIR_VAR) {
        (p, CACHE_DIR_VAR)
    } else if let Some(p) = set("XDG_CACHE_HOME") {
        (p.join("rextio-torch"), "XDG_CACHE_HOME")
    } else if let Some(p) = set("HOME") {
        (p.join(".cache").join("rextio-torch"), "HOME")
    } else {
        return Err(format!(
            "no cache directory: pass cache_dir (--cache-dir), or set {CACHE_DIR_VAR}, \
             XDG_CACHE_HOME or HOME"
        ));
    };
    let path = if path.is_absolute() {
        path
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot resolve the cache directory {}: {e}", path.display()))?
            .join(path)
    };
    Ok(CacheDir { path, chosen_by })
}

/// The Python environment the extension is built for and loaded into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonEnv {
    /// The interpreter (tch's build asks it where torch is; pyo3's build reads its config).
    pub executable: PathBuf,
    /// `torch.__version__`.
    pub torch_version: String,
    /// The directory of libtorch inside that torch (`torch/lib`).
    pub torch_lib_dir: String,
    /// `sysconfig.get_config_var("EXT_SUFFIX")`, e.g. `.cpython-311-x86_64-linux-gnu.so`.
    pub ext_suffix: String,
}

/// What [`PythonEnv::probe`] runs in a child interpreter.
pub const PROBE: &str = r#"
import json, os, sys, sysconfig
import torch
print(json.dumps({
    "executable": sys.executable,
    "torch_version": str(torch.__version__),
    "torch_lib_dir": os.path.join(os.path.dirname(torch.__file__), "lib"),
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
}))
"#;

impl PythonEnv {
    /// Asks `python` (a child process) for its torch and extension suffix.
    pub fn probe(python: &Path) -> Result<PythonEnv, String> {
        let output = Command::new(python)
            .arg("-c")
            .arg(PROBE)
            .output()
            .map_err(|e| format!("cannot run `{}`: {e}", python.display()))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().last().unwrap_or("").trim();
            return Err(format!(
                "`{}` cannot import torch ({}): {last}",
                python.display(),
                output.status
            ));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let value: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or(""))
            .map_err(|e| format!("`{}` printed no report: {e}", python.display()))?;
        let text = |key: &str| {
            value
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_string)
                .ok_or_else(|| format!("`{}` did not report `{key}`", python.display()))
        };
        Ok(PythonEnv {
            executable: PathBuf::from(text("executable")?),
            torch_version: text("torch_version")?,
            torch_lib_dir: text("torch_lib_dir")?,
            ext_suffix: text("ext_suffix")?,
        })
    }
}

/// What to build.
#[derive(Clone, Debug)]
pub struct Request {
    /// Where the source came from (a path or a `<source of ...>` label); only its file name
    /// reaches the emitted crate, so moving a project does not change keys.
    pub source_label: String,
    /// The whole source text the functions were compiled from.
    pub source: String,
    /// The optimized IR of each function to build, in order.
    pub functions: Vec<Function>,
    /// Which definitions were selected (e.g. `inference@12`, or the names), for the key.
    pub selection: String,
    /// The Python module to build; `None` derives `rxt_aot_<key prefix>` from the key.
    pub module: Option<String>,
    pub python: PythonEnv,
    pub cache: PathBuf,
}

/// Everything an entry depends on; the key is the sha256 of [`KeyMaterial::text`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyMaterial {
    pub compiler: String,
    /// sha256 of the emitted crate's files (generated code, carried runtime, pins), emitted
    /// under a placeholder module name.
    pub emitted: String,
    /// sha256 of the source text.
    pub source: String,
    pub selection: String,
    pub module: Option<String>,
    pub torch: String,
    pub python_abi: String,
    pub target: String,
    /// CPU features the runtime's kernels choose between at run time, as this host has them.
    pub cpu_features: String,
    pub profile: &'static str,
}

impl KeyMaterial {
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "rextio-torch ahead-of-time build key v{KEY_VERSION}");
        let _ = writeln!(out, "compiler: {}", self.compiler);
        let _ = writeln!(out, "emitted-crate-sha256: {}", self.emitted);
        let _ = writeln!(out, "source-sha256: {}", self.source);
        let _ = writeln!(out, "functions: {}", self.selection);
        let _ = writeln!(
            out,
            "module: {}",
            self.module.as_deref().unwrap_or("(derived from the key)")
        );
        let _ = writeln!(out, "torch: {}", self.torch);
        let _ = writeln!(out, "python-abi: {}", self.python_abi);
        let _ = writeln!(out, "target: {}", self.target);
        let _ = writeln!(out, "cpu-features: {}", self.cpu_features);
        let _ = writeln!(out, "profile: {}", self.profile);
        out
    }

    pub fn key(&self) -> String {
        sha256_hex(self.text().as_bytes())
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The CPU features the runtime's kernels pick between at run time, as `name+`/`name-`.
pub fn cpu_features() -> String {
    #[cfg(target_arch = "x86_64")]
    let found = [
        ("avx2", std::arch::is_x86_feature_detected!("avx2")),
        ("fma", std::arch::is_x86_feature_detected!("fma")),
        ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
        ("avx512dq", std::arch::is_x86_feature_detected!("avx512dq")),
    ];
    #[cfg(target_arch = "aarch64")]
    let found = [("neon", std::arch::is_aarch64_feature_detected!("neon"))];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let found: [(&str, bool); 0] = [];
    found
        .iter()
        .map(|(name, has)| format!("{name}{}", if *has { '+' } else { '-' }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Module name used to fingerprint the emitted code independently of the real name.
const PLACEHOLDER_MODULE: &str = "rxt_aot_key";

/// The file name part of a source label (`/a/b/model.py` -> `model.py`).
fn source_file_name(label: &str) -> String {
    if label.starts_with('<') {
        return label.to_string();
    }
    Path::new(label)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| label.to_string())
}

fn files_digest(files: &[EmittedFile]) -> String {
    let mut hasher = Sha256::new();
    let mut sorted: Vec<&EmittedFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for f in sorted {
        let path = f.path.to_string_lossy();
        hasher.update((path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update((f.contents.len() as u64).to_le_bytes());
        hasher.update(f.contents.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The key material of a request (emits the crate once under a placeholder name).
pub fn key_material(request: &Request) -> Result<KeyMaterial, AotError> {
    let options = CrateOptions::new(PLACEHOLDER_MODULE, &source_file_name(&request.source_label));
    let files =
        emit_crate(&request.functions, &options).map_err(|e| AotError::Emit(e.to_string()))?;
    Ok(KeyMaterial {
        compiler: format!("rextio-torch {}", env!("CARGO_PKG_VERSION")),
        emitted: files_digest(&files),
        source: sha256_hex(request.source.as_bytes()),
        selection: request.selection.clone(),
        module: request.module.clone(),
        torch: request.python.torch_version.clone(),
        python_abi: request.python.ext_suffix.clone(),
        target: TARGET.to_string(),
        cpu_features: cpu_features(),
        profile: "release",
    })
}

/// A finished (or found) build.
#[derive(Clone, Debug, PartialEq)]
pub struct Built {
    pub key: String,
    pub module: String,
    /// `<cache>/entries/<key>`.
    pub entry: PathBuf,
    /// `<entry>/<module>`: the importable package.
    pub package: PathBuf,
    /// `<package>/_native<EXT_SUFFIX>`.
    pub library: PathBuf,
    /// The entry existed: nothing was built.
    pub reused: bool,
    /// Seconds the build took (0 when reused).
    pub seconds: f64,
}

/// Why a build could not give an extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AotError {
    /// The cache cannot be created or written.
    Cache(String),
    /// The functions cannot be emitted.
    Emit(String),
    /// cargo cannot be run.
    CargoMissing { cargo: String, error: String },
    /// cargo ran and failed (or built no library).
    BuildFailed {
        status: String,
        tail: String,
        log: Option<PathBuf>,
    },
    /// The build was cancelled (Ctrl-C).
    Interrupted,
}

impl std::fmt::Display for AotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AotError::Cache(m) => write!(f, "the build cache cannot be used: {m}"),
            AotError::Emit(m) => write!(f, "the crate cannot be emitted: {m}"),
            AotError::CargoMissing { cargo, error } => write!(
                f,
                "cargo is not available (`{cargo}`: {error}); install Rust (https://rustup.rs) or \
                 name a cargo with {CARGO_VAR}"
            ),
            AotError::BuildFailed { status, tail, log } => {
                write!(f, "cargo build failed ({status})")?;
                if let Some(log) = log {
                    write!(f, "; full output in {}", log.display())?;
                }
                write!(f, "; the last lines of its output:\n{tail}")
            }
            AotError::Interrupted => write!(f, "the build was interrupted"),
        }
    }
}

/// Where progress goes while a build runs.
pub trait Progress {
    /// One line of progress (no trailing newline).
    fn line(&mut self, text: &str);
    /// Asked about every 100 ms while cargo runs; `false` stops cargo and the build.
    fn keep_going(&mut self) -> bool {
        true
    }
}

/// Progress written to a stream, line by line.
pub struct WriteProgress<'a>(pub &'a mut dyn std::io::Write);

impl Progress for WriteProgress<'_> {
    fn line(&mut self, text: &str) {
        let _ = writeln!(self.0, "{text}");
        let _ = self.0.flush();
    }
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> AotError {
    AotError::Cache(format!("cannot {what} {}: {e}", path.display()))
}

fn create_dir(path: &Path) -> Result<(), AotError> {
    std::fs::create_dir_all(path).map_err(|e| io_err("create", path, e))
}

/// An exclusive `flock(2)` on a file, released when dropped (or when the process dies).
pub struct Lock {
    _file: std::fs::File,
}

impl Lock {
    /// Takes the lock, telling `progress` when another process holds it.
    pub fn acquire(path: &Path, progress: &mut dyn Progress) -> Result<Lock, AotError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| io_err("open the lock", path, e))?;
        if !flock(&file, false).map_err(|e| io_err("lock", path, e))? {
            progress.line(&format!(
                "rextio-torch: waiting for another process that builds the same entry (lock {})",
                path.display()
            ));
            flock(&file, true).map_err(|e| io_err("lock", path, e))?;
        }
        Ok(Lock { _file: file })
    }
}

/// Locks `file` exclusively; `Ok(false)` when `blocking` is false and another holds it.
#[cfg(unix)]
fn flock(file: &std::fs::File, blocking: bool) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    let mode = if blocking {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        // SAFETY: the descriptor is open for the duration of the call.
        if unsafe { libc::flock(file.as_raw_fd(), mode) } == 0 {
            return Ok(true);
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if !blocking => return Ok(false),
            _ => return Err(error),
        }
    }
}

#[cfg(not(unix))]
fn flock(_file: &std::fs::File, _blocking: bool) -> std::io::Result<bool> {
    // No advisory locks here: concurrent builds of one key may both build; the rename into
    // place still lets only one of them win.
    Ok(true)
}

/// The entry of `key` if it is complete (its extension is there).
fn complete_entry(entry: &Path, module: &str, ext_suffix: &str) -> Option<(PathBuf, PathBuf)> {
    let package = entry.join(module);
    let library = package.join(format!("_native{ext_suffix}"));
    (library.is_file() && package.join("__init__.py").is_file()).then_some((package, library))
}

/// The cargo target dir of a request: `$REXTIO_TORCH_TARGET_DIR`, else
/// `<cache>/target/<hash of the libtorch dir>`.
pub fn target_dir(
    cache: &Path,
    python: &PythonEnv,
    var: impl Fn(&str) -> Option<OsString>,
) -> PathBuf {
    if let Some(dir) = var(TARGET_DIR_VAR).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let env = sha256_hex(python.torch_lib_dir.as_bytes());
    cache.join("target").join(&env[..16])
}

fn progress_interval() -> Duration {
    let seconds = std::env::var(PROGRESS_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(DEFAULT_PROGRESS_SECONDS as f64);
    Duration::from_secs_f64(seconds)
}

const CACHEDIR_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by rextio-torch (ahead-of-time builds).\n\
# For information about cache directory tags see https://bford.info/cachedir/\n";

/// Builds the request's functions into the cache, or finds the entry a previous build left.
pub fn build(request: &Request, progress: &mut dyn Progress) -> Result<Built, AotError> {
    let material = key_material(request)?;
    let key = material.key();
    let module = request
        .module
        .clone()
        .unwrap_or_else(|| format!("rxt_aot_{}", &key[..16]));
    let cache = &request.cache;
    let entry = cache.join("entries").join(&key);
    let ext = &request.python.ext_suffix;
    let found = |reused| {
        complete_entry(&entry, &module, ext).map(|(package, library)| Built {
            key: key.clone(),
            module: module.clone(),
            entry: entry.clone(),
            package,
            library,
            reused,
            seconds: 0.0,
        })
    };
    if let Some(built) = found(true) {
        return Ok(built);
    }
    for dir in ["entries", "locks", "tmp"] {
        create_dir(&cache.join(dir))?;
    }
    let tag = cache.join("CACHEDIR.TAG");
    if !tag.exists() {
        let _ = std::fs::write(&tag, CACHEDIR_TAG);
    }
    let _lock = Lock::acquire(&cache.join("locks").join(format!("{key}.lock")), progress)?;
    // Another process may have finished it while this one waited.
    if let Some(built) = found(true) {
        return Ok(built);
    }
    // An entry with its extension deleted: rebuilt in its place.
    if entry.exists() {
        std::fs::remove_dir_all(&entry)
            .map_err(|e| io_err("remove the incomplete entry", &entry, e))?;
    }
    // Left by builders of this key that died: this process holds the key's lock now.
    if let Ok(entries) = std::fs::read_dir(cache.join("tmp")) {
        for stale in entries.flatten() {
            if stale
                .file_name()
                .to_string_lossy()
                .starts_with(&format!("{key}."))
            {
                let _ = std::fs::remove_dir_all(stale.path());
            }
        }
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let work = cache
        .join("tmp")
        .join(format!("{key}.{}.{nanos}", std::process::id()));
    let result = build_in(request, &material, &key, &module, &work, progress);
    match result {
        Ok(seconds) => {
            match std::fs::rename(&work, &entry) {
                Ok(()) => {}
                // Someone else put it there (without the lock: another platform or a copy).
                Err(_) if found(true).is_some() => {
                    let _ = std::fs::remove_dir_all(&work);
                }
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&work);
                    return Err(io_err("move the build into", &entry, e));
                }
            }
            let mut built = found(false).ok_or_else(|| {
                AotError::Cache(format!("the entry {} is incomplete", entry.display()))
            })?;
            built.seconds = seconds;
            progress.line(&format!(
                "rextio-torch: built {module} in {seconds:.0} s ({})",
                built.library.display()
            ));
            Ok(built)
        }
        Err(error) => {
            if let AotError::BuildFailed { log: Some(log), .. } = &error {
                let failed = cache.join("failed");
                let _ = std::fs::create_dir_all(&failed);
                let _ = std::fs::rename(log, failed.join(format!("{key}.log")));
            }
            let _ = std::fs::remove_dir_all(&work);
            Err(match error {
                AotError::BuildFailed { status, tail, log } => AotError::BuildFailed {
                    status,
                    tail,
                    log: log.map(|_| cache.join("failed").join(format!("{key}.log"))),
                },
                other => other,
            })
        }
    }
}

/// Emits and builds into `work` (which becomes the entry); returns the seconds it took.
fn build_in(
    request: &Request,
    material: &KeyMaterial,
    key: &str,
    module: &str,
    work: &Path,
    progress: &mut dyn Progress,
) -> Result<f64, AotError> {
    let started = Instant::now();
    let crate_dir = work.join("crate");
    let options = CrateOptions::new(module, &source_file_name(&request.source_label));
    let files =
        emit_crate(&request.functions, &options).map_err(|e| AotError::Emit(e.to_string()))?;
    crate::write_files(&crate_dir, &files).map_err(AotError::Cache)?;
    std::fs::write(work.join("key.txt"), material.text())
        .map_err(|e| io_err("write", &work.join("key.txt"), e))?;

    // tch's build runs `python` (VIRTUAL_ENV set) or `python3`: both run this interpreter.
    let shims = work.join("bin");
    write_python_shims(&shims, &request.python.executable)?;
    let target = target_dir(&request.cache, &request.python, |n| std::env::var_os(n));
    create_dir(&target)?;
    // Every entry built in one target dir resolves its dependencies as the first did, so
    // they share its compiled dependencies (and need no registry once it has them).
    let lock_template = target.join(LOCK_TEMPLATE);
    if lock_template.is_file() {
        let lock = crate_dir.join("Cargo.lock");
        std::fs::copy(&lock_template, &lock).map_err(|e| io_err("write", &lock, e))?;
    }

    let names: Vec<&str> = request.functions.iter().map(|f| f.name.as_str()).collect();
    progress.line(&format!(
        "rextio-torch: building {} ahead of time (cache {}, entry {key})",
        names.join(", "),
        request.cache.display()
    ));
    progress.line(&format!(
        "rextio-torch: cargo build --release in {}; target dir {} (shared by every entry: only \
         the first build compiles tch, a few minutes)",
        crate_dir.display(),
        target.display()
    ));

    let cargo = std::env::var_os(CARGO_VAR)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("cargo"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut search = vec![shims.clone()];
    search.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(search).map_err(|e| AotError::Cache(e.to_string()))?;
    let mut command = Command::new(&cargo);
    command
        .args([
            "build",
            "--release",
            "--lib",
            "--color",
            "never",
            "--message-format",
            "json-render-diagnostics",
        ])
        .current_dir(&crate_dir)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", &target)
        .env("LIBTORCH_USE_PYTORCH", "1")
        .env("PYO3_PYTHON", &request.python.executable)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Builds are reproducible: no flags or target of the caller's, no version-check bypass.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "LIBTORCH",
        "LIBTORCH_LIB",
        "LIBTORCH_INCLUDE",
        "LIBTORCH_BYPASS_VERSION_CHECK",
        "LIBTORCH_STATIC",
    ] {
        command.env_remove(var);
    }
    let mut child = command.spawn().map_err(|e| AotError::CargoMissing {
        cargo: cargo.to_string_lossy().into_owned(),
        error: e.to_string(),
    })?;

    let (sender, lines) = mpsc::channel::<Line>();
    let stderr = child.stderr.take().map(|s| {
        let sender = sender.clone();
        std::thread::spawn(move || forward(s, Line::Err, sender))
    });
    let stdout = child.stdout.take().map(|s| {
        let sender = sender.clone();
        std::thread::spawn(move || forward(s, Line::Out, sender))
    });
    drop(sender);

    let interval = progress_interval();
    let mut log = String::new();
    let mut artifacts: Vec<PathBuf> = Vec::new();
    let mut quiet_since = Instant::now();
    let mut interrupted = false;
    loop {
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(Line::Err(text)) => {
                progress.line(&text);
                log.push_str(&text);
                log.push('\n');
                quiet_since = Instant::now();
            }
            Ok(Line::Out(text)) => artifacts.extend(cdylib_artifacts(&text)),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if quiet_since.elapsed() >= interval {
            progress.line(&format!(
                "rextio-torch: still building ({} s)",
                started.elapsed().as_secs()
            ));
            quiet_since = Instant::now();
        }
        if !interrupted && !progress.keep_going() {
            interrupted = true;
            let _ = child.kill();
        }
    }
    for handle in [stderr, stdout].into_iter().flatten() {
        let _ = handle.join();
    }
    let status = child
        .wait()
        .map_err(|e| AotError::Cache(format!("cannot wait for cargo: {e}")))?;
    let log_path = work.join("build.log");
    let _ = std::fs::write(&log_path, &log);
    if interrupted {
        return Err(AotError::Interrupted);
    }
    let tail = tail(&log, TAIL_LINES);
    if !status.success() {
        return Err(AotError::BuildFailed {
            status: status.to_string(),
            tail,
            log: Some(log_path),
        });
    }
    let Some(library) = artifacts.into_iter().next() else {
        return Err(AotError::BuildFailed {
            status: "it reported no library".to_string(),
            tail,
            log: Some(log_path),
        });
    };
    let package = work.join(module);
    create_dir(&package)?;
    let init = crate_dir.join("python").join(module).join("__init__.py");
    std::fs::copy(&init, package.join("__init__.py")).map_err(|e| io_err("copy", &init, e))?;
    let installed = package.join(format!("_native{}", request.python.ext_suffix));
    std::fs::copy(&library, &installed).map_err(|e| io_err("copy", &library, e))?;
    let _ = std::fs::remove_dir_all(&shims);
    if !lock_template.is_file() {
        // Written whole, then renamed: a concurrent build of another key reads all or nothing.
        let partial = work.join("Cargo.lock.template");
        if std::fs::copy(crate_dir.join("Cargo.lock"), &partial).is_ok() {
            let _ = std::fs::rename(&partial, &lock_template);
        }
    }
    Ok(started.elapsed().as_secs_f64())
}

enum Line {
    Out(String),
    Err(String),
}

fn forward(stream: impl Read, wrap: fn(String) -> Line, sender: mpsc::Sender<Line>) {
    let reader = BufReader::new(stream);
    for line in reader.split(b'\n').map_while(Result::ok) {
        let text = String::from_utf8_lossy(&line)
            .trim_end_matches('\r')
            .to_string();
        if sender.send(wrap(text)).is_err() {
            break;
        }
    }
}

/// The cdylib files a `compiler-artifact` message of `cargo --message-format json` names.
pub fn cdylib_artifacts(line: &str) -> Vec<PathBuf> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
        return Vec::new();
    };
    if value.get("reason").and_then(|r| r.as_str()) != Some("compiler-artifact") {
        return Vec::new();
    }
    let is_cdylib = value
        .pointer("/target/kind")
        .and_then(|k| k.as_array())
        .is_some_and(|kinds| kinds.iter().any(|k| k.as_str() == Some("cdylib")));
    if !is_cdylib {
        return Vec::new();
    }
    value
        .get("filenames")
        .and_then(|f| f.as_array())
        .map(|files| {
            files
                .iter()
                .filter_map(|f| f.as_str())
                .filter(|f| {
                    let f = f.to_ascii_lowercase();
                    f.ends_with(".so")
                        || f.ends_with(".dylib")
                        || f.ends_with(".pyd")
                        || f.ends_with(".dll")
                })
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `python` and `python3` scripts in `dir` that run `executable` (a script, not a symlink,
/// so that a virtual environment's interpreter still finds its environment).
fn write_python_shims(dir: &Path, executable: &Path) -> Result<(), AotError> {
    create_dir(dir)?;
    let quoted = format!("'{}'", executable.to_string_lossy().replace('\'', "'\\''"));
    for name in ["python", "python3"] {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\nexec {quoted} \"$@\"\n"))
            .map_err(|e| io_err("write", &path, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| io_err("make executable", &path, e))?;
        }
    }
    Ok(())
}

/// Copies the built package `built.package` to `<out>/<module>` (replacing what was there).
pub fn install_package(built: &Built, out: &Path) -> Result<PathBuf, String> {
    let dest = out.join(&built.module);
    if dest.exists() {
        std::fs::remove_dir_all(&dest)
            .map_err(|e| format!("cannot replace {}: {e}", dest.display()))?;
    }
    std::fs::create_dir_all(&dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let entries = std::fs::read_dir(&built.package)
        .map_err(|e| format!("cannot read {}: {e}", built.package.display()))?;
    for file in entries.flatten() {
        let to = dest.join(file.file_name());
        std::fs::copy(file.path(), &to)
            .map_err(|e| format!("cannot write {}: {e}", to.display()))?;
    }
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_cache_dir_follows_the_documented_order() {
        let all = [
            (CACHE_DIR_VAR, "/env/cache"),
            ("XDG_CACHE_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ];
        let explicit = cache_dir(Some(Path::new("/explicit")), vars(&all)).expect("resolves");
        assert_eq!(explicit.path, PathBuf::from("/explicit"));
        assert_eq!(explicit.chosen_by, "cache_dir argument");
        let env = cache_dir(None, vars(&all)).expect("resolves");
        assert_eq!(
            (env.path, env.chosen_by),
            (PathBuf::from("/env/cache"), CACHE_DIR_VAR)
        );
        let xdg = cache_dir(None, vars(&all[1..])).expect("resolves");
        assert_eq!(xdg.path, PathBuf::from("/xdg/rextio-torch"));
        let home = cache_dir(None, vars(&all[2..])).expect("resolves");
        assert_eq!(home.path, PathBuf::from("/home/u/.cache/rextio-torch"));
        // Empty values are unset.
        let empty = [(CACHE_DIR_VAR, ""), ("XDG_CACHE_HOME", ""), ("HOME", "/h")];
        assert_eq!(
            cache_dir(Some(Path::new("")), vars(&empty))
                .expect("resolves")
                .path,
            PathBuf::from("/h/.cache/rextio-torch")
        );
        assert!(cache_dir(None, vars(&[])).is_err());
        let relative = cache_dir(Some(Path::new("rel")), vars(&[])).expect("resolves");
        assert!(relative.path.is_absolute() && relative.path.ends_with("rel"));
    }

    fn material() -> KeyMaterial {
        KeyMaterial {
            compiler: "rextio-torch 0.1.0".into(),
            emitted: "e".repeat(64),
            source: "s".repeat(64),
            selection: "inference@5".into(),
            module: None,
            torch: "2.13.0".into(),
            python_abi: ".cpython-311-x86_64-linux-gnu.so".into(),
            target: "x86_64-unknown-linux-gnu".into(),
            cpu_features: "avx2+ fma+ avx512f- avx512dq-".into(),
            profile: "release",
        }
    }

    #[test]
    fn every_part_of_the_material_changes_the_key() {
        let base = material();
        let key = base.key();
        assert_eq!(key.len(), 64);
        assert_eq!(key, material().key(), "deterministic");
        let variants: Vec<KeyMaterial> = vec![
            KeyMaterial {
                compiler: "rextio-torch 0.1.1".into(),
                ..material()
            },
            KeyMaterial {
                emitted: "f".repeat(64),
                ..material()
            },
            KeyMaterial {
                source: "t".repeat(64),
                ..material()
            },
            KeyMaterial {
                selection: "inference@6".into(),
                ..material()
            },
            KeyMaterial {
                module: Some("m".into()),
                ..material()
            },
            KeyMaterial {
                torch: "2.13.1".into(),
                ..material()
            },
            KeyMaterial {
                python_abi: ".cpython-312-x86_64-linux-gnu.so".into(),
                ..material()
            },
            KeyMaterial {
                target: "aarch64-unknown-linux-gnu".into(),
                ..material()
            },
            KeyMaterial {
                cpu_features: "avx2+ fma+ avx512f+ avx512dq+".into(),
                ..material()
            },
        ];
        for v in variants {
            assert_ne!(v.key(), key, "{}", v.text());
        }
        assert!(base
            .text()
            .starts_with("rextio-torch ahead-of-time build key v1\n"));
    }

    #[test]
    fn sha256_is_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_source_label_reaches_the_crate_as_a_file_name() {
        assert_eq!(source_file_name("/a/b/model.py"), "model.py");
        assert_eq!(source_file_name("model.py"), "model.py");
        assert_eq!(source_file_name("<source of m.f>"), "<source of m.f>");
    }

    #[test]
    fn cdylib_artifacts_are_read_from_cargo_json() {
        let line = r#"{"reason":"compiler-artifact","target":{"kind":["cdylib","rlib"],"name":"m"},"filenames":["/t/release/libm.so","/t/release/libm.rlib"]}"#;
        assert_eq!(
            cdylib_artifacts(line),
            vec![PathBuf::from("/t/release/libm.so")]
        );
        let dep = r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"tch"},"filenames":["/t/libtch.rlib"]}"#;
        assert!(cdylib_artifacts(dep).is_empty());
        assert!(cdylib_artifacts("   Compiling tch v0.26.0").is_empty());
        assert!(cdylib_artifacts(r#"{"reason":"build-finished","success":true}"#).is_empty());
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
        assert_eq!(tail("", 5), "");
    }

    #[test]
    fn cpu_features_name_what_the_kernels_choose_between() {
        let features = cpu_features();
        #[cfg(target_arch = "x86_64")]
        for name in ["avx2", "fma", "avx512f", "avx512dq"] {
            assert!(
                features.contains(&format!("{name}+")) || features.contains(&format!("{name}-")),
                "{features}"
            );
        }
        let _ = features;
    }

    #[test]
    fn the_target_dir_is_per_libtorch_unless_named() {
        let python = PythonEnv {
            executable: PathBuf::from("/v/bin/python"),
            torch_version: "2.13.0".into(),
            torch_lib_dir: "/v/lib/torch/lib".into(),
            ext_suffix: ".so".into(),
        };
        let other = PythonEnv {
            torch_lib_dir: "/w/lib/torch/lib".into(),
            ..python.clone()
        };
        let cache = Path::new("/c");
        let a = target_dir(cache, &python, vars(&[]));
        assert!(a.starts_with("/c/target"), "{}", a.display());
        assert_eq!(a, target_dir(cache, &python, vars(&[])));
        assert_ne!(a, target_dir(cache, &other, vars(&[])));
        assert_eq!(
            target_dir(cache, &python, vars(&[(TARGET_DIR_VAR, "/t")])),
            PathBuf::from("/t")
        );
    }
}
