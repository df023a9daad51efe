//! The environment variables rextio-torch reads, parsed in one place so the Python package,
//! its extension and the tests agree on their meaning (`docs/tooling.md`).
//!
//! - `RXT_LOG=ir,passes,codegen` (any subset, comma-separated, or `all`): what `compile`
//!   prints to stderr, in the spirit of PyTorch's `TORCH_LOGS`. Read when a function is
//!   compiled.
//! - `REXTIO_NATIVE_MODE=auto|native|fallback` and `REXTIO_DISABLE_NATIVE`: which way a
//!   compiled callable runs, read on every call as the reference's generated wrappers do
//!   (`rextio/runtime/flags.py` of Rextio core 0.1.8).

use std::ffi::OsStr;
use std::fmt;

/// The variable that selects compile-time logs.
pub const LOG_VAR: &str = "RXT_LOG";
/// The variable that selects how compiled callables run.
pub const NATIVE_MODE_VAR: &str = "REXTIO_NATIVE_MODE";
/// A truthy value (`1`, `true`, `yes`, `on`, any case) forces the Python original, as in the
/// reference.
pub const DISABLE_NATIVE_VAR: &str = "REXTIO_DISABLE_NATIVE";

/// One kind of compile-time log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogChannel {
    /// The IR as the frontend lowered it (stage `parsed`).
    Ir,
    /// The IR after each pass of the pipeline (`fused`, `dce`).
    Passes,
    /// The Rust source the backend emits for the function.
    Codegen,
}

impl LogChannel {
    /// Every channel, in the order logs are printed.
    pub const ALL: [LogChannel; 3] = [LogChannel::Ir, LogChannel::Passes, LogChannel::Codegen];

    pub fn name(self) -> &'static str {
        match self {
            LogChannel::Ir => "ir",
            LogChannel::Passes => "passes",
            LogChannel::Codegen => "codegen",
        }
    }

    pub fn from_name(name: &str) -> Option<LogChannel> {
        LogChannel::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// A parsed `RXT_LOG` value: the channels it enables and the names it does not know.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogSpec {
    channels: Vec<LogChannel>,
    unknown: Vec<String>,
}

impl LogSpec {
    /// Parses a comma-separated list of channel names (case and surrounding blanks ignored,
    /// empty items skipped); `all` enables every channel. Never fails: unknown names are kept
    /// for [`LogSpec::warning`].
    pub fn parse(spec: &str) -> LogSpec {
        let mut parsed = LogSpec::default();
        for item in spec.split(',') {
            let name = item.trim().to_ascii_lowercase();
            if name.is_empty() {
                continue;
            }
            if name == "all" {
                parsed.channels.extend(LogChannel::ALL);
            } else if let Some(channel) = LogChannel::from_name(&name) {
                parsed.channels.push(channel);
            } else if !parsed.unknown.contains(&item.trim().to_string()) {
                parsed.unknown.push(item.trim().to_string());
            }
        }
        parsed.channels.sort();
        parsed.channels.dedup();
        parsed
    }

    /// The enabled channels, in print order.
    pub fn channels(&self) -> &[LogChannel] {
        &self.channels
    }

    pub fn enabled(&self, channel: LogChannel) -> bool {
        self.channels.contains(&channel)
    }

    /// Names that are not channels, as written.
    pub fn unknown(&self) -> &[String] {
        &self.unknown
    }

    /// One warning for every unknown name, naming the valid ones; `None` when all are known.
    pub fn warning(&self) -> Option<String> {
        if self.unknown.is_empty() {
            return None;
        }
        let quoted: Vec<String> = self.unknown.iter().map(|n| format!("'{n}'")).collect();
        let noun = if quoted.len() == 1 { "name" } else { "names" };
        let valid: Vec<&str> = LogChannel::ALL.iter().map(|c| c.name()).collect();
        Some(format!(
            "{LOG_VAR}: unknown {noun} {} ignored; valid names: {}, all (comma-separated)",
            quoted.join(", "),
            valid.join(", ")
        ))
    }
}

/// How a compiled callable runs (`REXTIO_NATIVE_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeMode {
    /// Native code when the function has it, else the Python original (the default).
    Auto,
    /// Native code, or a `RuntimeError` when the function has none.
    Native,
    /// Always the Python original.
    Fallback,
}

/// A `REXTIO_NATIVE_MODE` value that is not a mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidNativeMode {
    pub value: String,
}

impl fmt::Display for InvalidNativeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{NATIVE_MODE_VAR}={:?} is not a valid mode; valid values: auto, native, fallback \
             (unset or empty means auto)",
            self.value
        )
    }
}

impl std::error::Error for InvalidNativeMode {}

impl NativeMode {
    pub fn name(self) -> &'static str {
        match self {
            NativeMode::Auto => "auto",
            NativeMode::Native => "native",
            NativeMode::Fallback => "fallback",
        }
    }

    /// The mode a `REXTIO_NATIVE_MODE` value selects: surrounding blanks and case are ignored
    /// (as in the reference), unset or empty is `auto`. Anything else is an error naming the
    /// valid values (the reference warns and uses `auto`; see `docs/tooling.md`).
    pub fn parse(value: Option<&OsStr>) -> Result<NativeMode, InvalidNativeMode> {
        let Some(value) = value else {
            return Ok(NativeMode::Auto);
        };
        let invalid = || InvalidNativeMode {
            value: value.to_string_lossy().into_owned(),
        };
        let text = value.to_str().ok_or_else(invalid)?;
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(NativeMode::Auto),
            "native" => Ok(NativeMode::Native),
            "fallback" => Ok(NativeMode::Fallback),
            _ => Err(invalid()),
        }
    }

    /// The mode both variables select together: a truthy `REXTIO_DISABLE_NATIVE` means
    /// `fallback` whatever `REXTIO_NATIVE_MODE` says (the reference's `native_disabled()`
    /// checks it first, so the mode is then not read at all).
    pub fn resolve(
        mode: Option<&OsStr>,
        disable: Option<&OsStr>,
    ) -> Result<NativeMode, InvalidNativeMode> {
        if disable.is_some_and(truthy) {
            return Ok(NativeMode::Fallback);
        }
        NativeMode::parse(mode)
    }

    /// The mode this process's environment selects now.
    pub fn from_env() -> Result<NativeMode, InvalidNativeMode> {
        let disable = std::env::var_os(DISABLE_NATIVE_VAR);
        let mode = std::env::var_os(NATIVE_MODE_VAR);
        NativeMode::resolve(mode.as_deref(), disable.as_deref())
    }
}

/// `1`, `true`, `yes` or `on`, ignoring case and surrounding blanks (the reference's set).
fn truthy(value: &OsStr) -> bool {
    value.to_str().is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(value: Option<&str>) -> Result<NativeMode, InvalidNativeMode> {
        NativeMode::parse(value.map(OsStr::new))
    }

    #[test]
    fn log_names_any_subset_all_and_blanks() {
        let spec = LogSpec::parse(" passes , IR,,");
        assert_eq!(spec.channels(), [LogChannel::Ir, LogChannel::Passes]);
        assert!(spec.unknown().is_empty() && spec.warning().is_none());
        assert_eq!(LogSpec::parse("all").channels(), LogChannel::ALL);
        assert_eq!(LogSpec::parse("codegen,all,ir").channels(), LogChannel::ALL);
        assert!(LogSpec::parse("").channels().is_empty());
        assert!(LogSpec::parse(" , ").channels().is_empty());
    }

    #[test]
    fn unknown_log_names_give_one_warning_naming_the_valid_ones() {
        let spec = LogSpec::parse("ir,graphs,Bogus,graphs");
        assert_eq!(spec.channels(), [LogChannel::Ir]);
        assert_eq!(spec.unknown(), ["graphs", "Bogus"]);
        assert_eq!(
            spec.warning().as_deref(),
            Some(
                "RXT_LOG: unknown names 'graphs', 'Bogus' ignored; valid names: ir, passes, \
                 codegen, all (comma-separated)"
            )
        );
        let one = LogSpec::parse("pases").warning().expect("a warning");
        assert!(
            one.starts_with("RXT_LOG: unknown name 'pases' ignored"),
            "{one}"
        );
    }

    #[test]
    fn native_mode_values() {
        assert_eq!(mode(None), Ok(NativeMode::Auto));
        assert_eq!(mode(Some("")), Ok(NativeMode::Auto));
        assert_eq!(mode(Some("auto")), Ok(NativeMode::Auto));
        assert_eq!(mode(Some(" Native ")), Ok(NativeMode::Native));
        assert_eq!(mode(Some("FALLBACK")), Ok(NativeMode::Fallback));
        let error = mode(Some("nativ")).expect_err("not a mode");
        assert_eq!(
            error.to_string(),
            "REXTIO_NATIVE_MODE=\"nativ\" is not a valid mode; valid values: auto, native, \
             fallback (unset or empty means auto)"
        );
    }

    #[test]
    fn disable_native_wins_and_skips_the_mode() {
        let resolve = |m: Option<&str>, d: Option<&str>| {
            NativeMode::resolve(m.map(OsStr::new), d.map(OsStr::new))
        };
        for truthy in ["1", "true", "TRUE", " yes", "on"] {
            assert_eq!(
                resolve(Some("native"), Some(truthy)),
                Ok(NativeMode::Fallback)
            );
            // The reference never reads the mode once native code is disabled.
            assert_eq!(
                resolve(Some("bogus"), Some(truthy)),
                Ok(NativeMode::Fallback)
            );
        }
        for falsy in ["0", "false", "", "no"] {
            assert_eq!(resolve(Some("native"), Some(falsy)), Ok(NativeMode::Native));
        }
        assert!(resolve(Some("bogus"), Some("0")).is_err());
    }
}
