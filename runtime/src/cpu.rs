//! The instruction-set level every kernel of this crate runs at: detected once per process,
//! and capped by `REXTIO_TORCH_ISA` so that tests (and a user chasing a difference) can force
//! the AVX2 or portable paths on a machine that has more.
//!
//! One definition for everything: [`Level::Avx512`] needs AVX-512F and DQ with AVX2 and FMA
//! (the vectorized math, the one-pass and register-tiled kernels and the row loops all
//! compile for that set), [`Level::Avx2`] needs AVX2 and FMA, [`Level::Portable`] is plain
//! x86-64 (SSE2) or any other architecture. A level is never above what the CPU has: asking
//! for `avx512` on an AVX2 machine runs AVX2 and says so once on stderr.
//!
//! The invariant the crate's unsafe SIMD code rests on: every AVX2/AVX-512 choice asks
//! [`level`] (nothing else detects features), and every `#[target_feature]` function enables
//! a subset of the features of the level its caller checked (`vmath`'s loops F+DQ+AVX2+FMA,
//! the one-pass kernel F+AVX2+FMA, the small transposed-weight kernel F, `dense`'s row loops
//! F+AVX2; AVX2+FMA or less at `Avx2`). Their `# Safety` sections say so, and each call
//! site's `// SAFETY:` comment names the check.
//!
//! What the override does not reach: the `gemm` crate (the blocked GEMM paths) picks its own
//! microkernels from the CPU, and libtorch its own. Their results are held to the same
//! accuracy bounds whichever they pick (docs/parity.md).

use std::sync::OnceLock;

/// The environment variable that caps the level: `native` (or unset or empty), `avx512`,
/// `avx2` or `portable`.
pub const ISA_ENV: &str = "REXTIO_TORCH_ISA";

/// An instruction-set level, ordered from the least to the most capable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Portable,
    Avx2,
    Avx512,
}

impl Level {
    /// The name `REXTIO_TORCH_ISA` takes for this level.
    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// Parses a `REXTIO_TORCH_ISA` value: `Ok(None)` for native (unset or empty too).
    pub fn parse(value: &str) -> Result<Option<Level>, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "native" => Ok(None),
            "avx512" => Ok(Some(Level::Avx512)),
            "avx2" => Ok(Some(Level::Avx2)),
            "portable" => Ok(Some(Level::Portable)),
            other => Err(format!(
                "{ISA_ENV}={other:?} is not one of native, avx512, avx2, portable"
            )),
        }
    }
}

/// What the CPU has, detected once.
pub fn detected() -> Level {
    static DETECTED: OnceLock<Level> = OnceLock::new();
    *DETECTED.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            if avx2
                && std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
            {
                return Level::Avx512;
            }
            if avx2 {
                return Level::Avx2;
            }
        }
        Level::Portable
    })
}

/// Who made the CPU, from CPUID's vendor string. It does not gate any instruction (that is
/// [`level`]'s job); the cost model asks it whose matrix product is faster for wide products
/// (`linear_cost::products`): libtorch's BLAS (MKL in the pinned wheel) is tuned for Intel's
/// cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    Intel,
    Amd,
    Other,
}

impl Vendor {
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Intel => "Intel",
            Vendor::Amd => "AMD",
            Vendor::Other => "other",
        }
    }
}

/// The CPU's vendor, read once.
pub fn vendor() -> Vendor {
    static VENDOR: OnceLock<Vendor> = OnceLock::new();
    *VENDOR.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            // Leaf 0 names the vendor in EBX, EDX, ECX (12 ASCII bytes); every x86-64 CPU
            // has CPUID.
            #[allow(unused_unsafe)]
            // SAFETY: CPUID exists on every x86-64 CPU and leaf 0 on every CPU that has it.
            let leaf = unsafe { std::arch::x86_64::__cpuid(0) };
            let mut name = [0u8; 12];
            name[..4].copy_from_slice(&leaf.ebx.to_le_bytes());
            name[4..8].copy_from_slice(&leaf.edx.to_le_bytes());
            name[8..].copy_from_slice(&leaf.ecx.to_le_bytes());
            match &name {
                b"GenuineIntel" => return Vendor::Intel,
                b"AuthenticAMD" | b"HygonGenuine" => return Vendor::Amd,
                _ => {}
            }
        }
        Vendor::Other
    })
}

/// How many leading elements of a contiguous float32 tensor of `len` elements ATen's
/// vectorized elementwise loop computes with its vector function, at one thread: whole
/// chunks of two vectors (32 floats at ATen's AVX-512 capability, 16 at AVX2); the rest,
/// and everything at its `default` capability, goes through the op's scalar function. This
/// is ATen's choice, not ours: `REXTIO_TORCH_ISA` does not change it, `ATEN_CPU_CAPABILITY`
/// does (as ATen reads it). Where an op's two functions differ (GELU's tanh approximation,
/// `crate::unary`), the result follows eager's split.
pub fn aten_vector_prefix(len: usize) -> usize {
    match aten_vector_chunk() {
        Some(chunk) => len / chunk * chunk,
        None => 0,
    }
}

/// ATen's CPU capability as `at::get_cpu_capability` computes it (`ATEN_CPU_CAPABILITY`
/// lowers it), as its vector loop's chunk: 32 floats (AVX-512: AVX-512VL, BW, DQ and FMA),
/// 16 (AVX2 and FMA), `None` (`default`: scalar functions only).
fn aten_vector_chunk() -> Option<usize> {
    static CHUNK: OnceLock<Option<usize>> = OnceLock::new();
    *CHUNK.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            let fma = std::arch::is_x86_feature_detected!("fma");
            let avx512 = fma
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq");
            let avx2 = fma && std::arch::is_x86_feature_detected!("avx2");
            let env = std::env::var("ATEN_CPU_CAPABILITY").unwrap_or_default();
            match env.to_ascii_lowercase().as_str() {
                "default" => None,
                "avx2" if avx2 => Some(16),
                _ if avx512 => Some(32),
                _ if avx2 => Some(16),
                _ => None,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    })
}

/// The instruction set oneDNN's JIT kernels run at in this process, as oneDNN picks it: the
/// best of its x86-64 levels the CPU has, capped by `ONEDNN_MAX_CPU_ISA` (or its older name
/// `DNNL_MAX_CPU_ISA`). Eager's GELU of a contiguous float32 tensor of two or more elements
/// runs oneDNN's `eltwise_gelu_erf` (ATen's `gelu_out_cpu` sends it there whenever
/// oneDNN is enabled), whose formula depends on this level, not on ATen's capability
/// (`crate::vmath`, docs/parity.md "GELU"). Ordered from the least to the most capable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OnednnIsa {
    /// No JIT kernel (not x86-64, or no SSE4.1): oneDNN's reference C++ kernels.
    Reference,
    /// `sse41`: 4-lane kernels, multiply-adds as a multiply and an add.
    Sse41,
    /// `avx`: 8-lane kernels without FMA (multiply-adds as a multiply and an add).
    Avx,
    /// `avx2`: 8-lane kernels with FMA.
    Avx2,
    /// `avx512_core` (AVX-512F, BW, VL and DQ) or above: 16-lane kernels.
    Avx512Core,
}

impl OnednnIsa {
    /// oneDNN's name for the level (`ONEDNN_MAX_CPU_ISA` takes it in upper case).
    pub fn name(self) -> &'static str {
        match self {
            OnednnIsa::Reference => "reference",
            OnednnIsa::Sse41 => "sse41",
            OnednnIsa::Avx => "avx",
            OnednnIsa::Avx2 => "avx2",
            OnednnIsa::Avx512Core => "avx512_core",
        }
    }

    /// The cap a `ONEDNN_MAX_CPU_ISA` value sets, as oneDNN reads it (case-insensitive):
    /// `None` for no cap (`ALL`, and any value oneDNN does not know, which it ignores). The
    /// VNNI and newer AVX-512 levels run the same float32 elementwise kernels as the level
    /// they extend.
    pub fn parse_cap(value: &str) -> Option<OnednnIsa> {
        // Lower-cased and compared whole, as oneDNN does (no trimming: `"AVX2 "` is unknown).
        let v = value.to_ascii_lowercase();
        match v.as_str() {
            "sse41" => Some(OnednnIsa::Sse41),
            "avx" => Some(OnednnIsa::Avx),
            "avx2" | "avx2_vnni" | "avx2_vnni_2" => Some(OnednnIsa::Avx2),
            _ if v.starts_with("avx512_core") || v.starts_with("avx10") => {
                Some(OnednnIsa::Avx512Core)
            }
            _ => None,
        }
    }
}

/// The environment variables oneDNN reads its cap from, in its order (the first set and
/// non-empty one counts).
pub const ONEDNN_ISA_ENVS: [&str; 2] = ["ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"];

/// The best oneDNN level this CPU has, uncapped (oneDNN's `mayiuse`: `avx512_core` needs
/// AVX-512F, BW, VL and DQ; `avx2` AVX2; `avx` AVX; `sse41` SSE4.1).
pub fn onednn_detected() -> OnednnIsa {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") {
            return OnednnIsa::Avx512Core;
        }
        if has!("avx2") {
            return OnednnIsa::Avx2;
        }
        if has!("avx") {
            return OnednnIsa::Avx;
        }
        if has!("sse4.1") {
            return OnednnIsa::Sse41;
        }
    }
    OnednnIsa::Reference
}

/// oneDNN's level in this process: [`onednn_detected`] capped by `ONEDNN_MAX_CPU_ISA` /
/// `DNNL_MAX_CPU_ISA`, read once (as oneDNN reads them once). `REXTIO_TORCH_ISA` does not
/// change it: it picks which of our loops runs, not which formula eager's kernel computes.
pub fn onednn_isa() -> OnednnIsa {
    static ISA: OnceLock<OnednnIsa> = OnceLock::new();
    *ISA.get_or_init(|| {
        let detected = onednn_detected();
        let cap = ONEDNN_ISA_ENVS
            .iter()
            .filter_map(|name| std::env::var(name).ok())
            .find(|v| !v.is_empty())
            .and_then(|v| OnednnIsa::parse_cap(&v));
        match cap {
            // Below SSE4.1 nothing is capped: SSE4.1 is oneDNN's least JIT level.
            Some(cap) if detected > OnednnIsa::Reference => detected.min(cap),
            _ => detected,
        }
    })
}

/// The level kernels run at, with what decided it: `(level, requested, problem)`.
struct Choice {
    level: Level,
    requested: Option<Level>,
    problem: Option<String>,
}

fn choice() -> &'static Choice {
    static CHOICE: OnceLock<Choice> = OnceLock::new();
    CHOICE.get_or_init(|| {
        let detected = detected();
        let value = std::env::var(ISA_ENV).unwrap_or_default();
        let (requested, mut problem) = match Level::parse(&value) {
            Ok(requested) => (requested, None),
            Err(e) => (None, Some(format!("{e}; using native"))),
        };
        let level = requested.map_or(detected, |r| r.min(detected));
        if let Some(r) = requested.filter(|&r| r > detected) {
            problem = Some(format!(
                "{ISA_ENV}={} asks for more than this CPU has; running {}",
                r.name(),
                detected.name()
            ));
        }
        if let Some(p) = &problem {
            eprintln!("rextio-torch: {p}");
        }
        Choice {
            level,
            requested,
            problem,
        }
    })
}

/// The level every kernel runs at: [`detected`], capped by `REXTIO_TORCH_ISA`.
#[inline]
pub fn level() -> Level {
    choice().level
}

/// One line for tools and tests: `avx2 (REXTIO_TORCH_ISA=avx2; this CPU has avx512)`, then
/// eager's kernels' levels: `; oneDNN avx2`.
pub fn describe() -> String {
    let c = choice();
    let mut text = c.level.name().to_string();
    match c.requested {
        Some(r) => text.push_str(&format!(
            " ({ISA_ENV}={}; this CPU has {})",
            r.name(),
            detected().name()
        )),
        None => text.push_str(" (native)"),
    }
    if let Some(p) = &c.problem {
        text.push_str(&format!("; {p}"));
    }
    text.push_str(&format!("; oneDNN {}", onednn_isa().name()));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_levels_order() {
        assert_eq!(Level::parse(""), Ok(None));
        assert_eq!(Level::parse("native"), Ok(None));
        assert_eq!(Level::parse(" AVX2 "), Ok(Some(Level::Avx2)));
        assert_eq!(Level::parse("avx512"), Ok(Some(Level::Avx512)));
        assert_eq!(Level::parse("portable"), Ok(Some(Level::Portable)));
        let e = Level::parse("sse4").unwrap_err();
        assert!(
            e.contains("REXTIO_TORCH_ISA=\"sse4\"") && e.contains("portable"),
            "{e}"
        );
        assert!(Level::Portable < Level::Avx2 && Level::Avx2 < Level::Avx512);
        // Never above the CPU, whatever the environment says.
        assert!(level() <= detected());
    }

    #[test]
    fn onednn_caps_parse_as_onednn_reads_them() {
        assert_eq!(OnednnIsa::parse_cap("AVX2"), Some(OnednnIsa::Avx2));
        assert_eq!(OnednnIsa::parse_cap("avx2_vnni"), Some(OnednnIsa::Avx2));
        assert_eq!(
            OnednnIsa::parse_cap("Avx512_Core_Bf16"),
            Some(OnednnIsa::Avx512Core)
        );
        assert_eq!(OnednnIsa::parse_cap("SSE41"), Some(OnednnIsa::Sse41));
        assert_eq!(OnednnIsa::parse_cap("AVX"), Some(OnednnIsa::Avx));
        for none in ["ALL", "", "AVX2 ", "sse4.1", "avx512"] {
            assert_eq!(OnednnIsa::parse_cap(none), None, "{none:?}");
        }
        assert!(OnednnIsa::Sse41 < OnednnIsa::Avx && OnednnIsa::Avx2 < OnednnIsa::Avx512Core);
        // Never above the CPU, and at the cap when the CPU has it (as `make test` sets it).
        assert!(onednn_isa() <= onednn_detected());
        let cap = ONEDNN_ISA_ENVS
            .iter()
            .filter_map(|name| std::env::var(name).ok())
            .find(|v| !v.is_empty())
            .and_then(|v| OnednnIsa::parse_cap(&v));
        if let Some(cap) = cap.filter(|&c| c <= onednn_detected()) {
            assert_eq!(onednn_isa(), cap);
        }
    }

    /// Under `make test`'s runs with `REXTIO_TORCH_ISA=avx2` or `portable`, the kernels
    /// really run at that level: a typo in the variable fails here instead of silently
    /// testing the native paths again.
    #[test]
    fn the_environment_sets_the_level() {
        let value = std::env::var(ISA_ENV).unwrap_or_default();
        let requested = Level::parse(&value).expect("a valid REXTIO_TORCH_ISA");
        assert_eq!(level(), requested.map_or(detected(), |r| r.min(detected())));
        assert!(describe().starts_with(level().name()), "{}", describe());
    }
}
