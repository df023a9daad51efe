//! The diagnostic registry: every stable code the project reports, one enum per family, each
//! code with its severity and the line that documents it. Diagnostics carry the code as text
//! (it is what tools and people read: `error[RXT030]`), so emitters write `Rxt::NotLowered`
//! and the registry spells it; nothing else spells a code.
//!
//! | family | enum | who reports it |
//! |---|---|---|
//! | `RXPY-NNN`, `RXTNNN` | [`Rxt`] | the frontend (source and host rules) and the driver |
//! | `RXIR-NNN` | [`Rxir`] | IR validation (`rextio_passes::validate`) |
//! | `RXDNNN` | [`Rxd`] | `rextio-torch doctor` |
//! | `RXTP-TORCH-NNN` | the rule records | the claim rules (`rextio_frontend::claim::rules`), the reference plugin's codes and messages |
//!
//! The plugin family stays with its rule records: its codes are the reference's, each tied to a
//! rule id and a reference message, and the records are already the data the plugin declares.
//!
//! `docs/diagnostics.md` and `docs/tooling.md` list these codes; `ir/tests/codes.rs` checks
//! that their tables say exactly what the enums say.

use crate::diag::Severity;

/// How much a doctor finding matters. Only [`DoctorLevel::Problem`] makes the host not
/// ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DoctorLevel {
    Ok,
    Note,
    Warning,
    Problem,
}

impl DoctorLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            DoctorLevel::Ok => "ok",
            DoctorLevel::Note => "note",
            DoctorLevel::Warning => "warning",
            DoctorLevel::Problem => "problem",
        }
    }
}

/// Declares one family: the enum, its codes, severities and doc lines, `ALL`, and lookups.
macro_rules! family {
    (
        $(#[$meta:meta])*
        $name:ident: $severity:ty {
            $( $(#[$vmeta:meta])* $variant:ident = ($code:literal, $level:expr, $doc:literal), )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
        }

        impl $name {
            /// Every code of the family, in code order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The stable code, as diagnostics and tools spell it.
            pub const fn code(self) -> &'static str {
                match self {
                    $($name::$variant => $code,)*
                }
            }

            /// The severity the code is reported with.
            pub const fn severity(self) -> $severity {
                match self {
                    $($name::$variant => $level,)*
                }
            }

            /// What the code means: the line the docs' tables carry.
            pub const fn doc(self) -> &'static str {
                match self {
                    $($name::$variant => $doc,)*
                }
            }

            /// The code spelled `code`, if the family has it.
            pub fn from_code(code: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|c| c.code() == code)
            }
        }

        impl From<$name> for String {
            fn from(code: $name) -> String {
                code.code().to_string()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.code())
            }
        }

    };
}

use DoctorLevel as D;
use Severity::{Error, Note, Warning};

family! {
    /// The frontend's and the driver's codes: source that does not parse (`RXPY`) and the
    /// host rules around the plugin (`RXT`; the reference's texts where it has one).
    Rxt: Severity {
        Syntax = ("RXPY-001", Error, "the source does not parse"),
        NoMarker = ("RXT001", Error, "`compile` on a function that uses no marker type"),
        HostPluginTypes = ("RXT010", Error, "a host rule on plugin types: an operator on tensors no rule covers (an error: the function falls back), and the host's subset violations, reported as warnings with its exact words because the function is simply not a candidate: a docstring (reference surface only: the extended one passes over a function's docstring) or other expression statement, `pass`, `//`/`**`/bit operators, mixed int/float operands, a non-bool condition, a `range` step that is not a positive literal, a name first bound inside a block and read after it, a rebinding that changes a name's type, returning a parameter or a possible alias of one, a path without `return` and a returned type the annotation contradicts (under `surface=\"reference\"`; the extended surface reports these two as `RXT034` and `RXT033` in its own words), augmented assignment on a tensor (the extended surface lowers `h += e` as `h = h + e` when `h` is a tensor no other name sees, and refuses it, naming why, when `h` is an argument or module member, another name's tensor, a view's, or a loop-carried or `if` value: eager would update that tensor in place), a comparison of tensors, ... (`docs/reference-control-flow.md`)"),
        NotLowered = ("RXT030", Error, "a call or operator the plugin does not cover (`plugin-managed external package call is not lowered by this build: torch.X`, `unsupported unresolved call in native function: x.m`)"),
        UnsupportedSyntax = ("RXT031", Error, "a statement or expression native functions do not lower yet"),
        UnsupportedParam = ("RXT032", Error, "a parameter a native function cannot take (type, default, `*args`, ...); in a module's forward, a `None` argument used other than in an `is None` / `is not None` test (that signature runs eagerly)"),
        UnsupportedReturn = ("RXT033", Error, "a return value or annotation native functions cannot produce, or one that contradicts the annotation (`this returns a TensorF32Cpu2D, but the function is annotated to return a TensorF32Cpu1D`: the function stays on Python, a warning)"),
        MissingReturn = ("RXT034", Error, "a native function that does not end with `return <value>`, or one annotated to return a value that can reach its end without `return` (the function stays on Python, a warning)"),
        TooDeep = ("RXT035", Error, "the source nests deeper than the stated limit of 250,000 syntax levels (a chain of about 125,000 method calls; docs/reliability.md, Long programs): like source that does not parse, nothing in the file is compiled"),
        NotOffered = ("RXT080", Warning, "a site the host never offers to the plugin (non-literal keyword, `**kwargs`, `//`, `**`, bit operators): the function is not a candidate"),
        CallsFallbackOnly = ("RXT070", Error, "a native function calls a module function that stays on Python (`@rextio.exempt`, or a scalar function the host keeps on Python); from a function marked `@rextio.native`, a scalar one outside loops is a boundary call instead (`RXT075`)"),
        DependencyRejected = ("RXT072", Error, "a native function calls a scalar module function the host rejects (an error of its own): the caller falls back too; from a function marked `@rextio.native`, outside loops, a boundary call instead (`RXT075`)"),
        ScalarBoundaryCall = ("RXT075", Note, "a function marked `@rextio.native` calls a scalar module function that stays on Python (`@rextio.exempt`, kept on Python or rejected; `int`/`float`/`bool` arguments, or none (`def observe() -> bool`), and result) outside loops: accepted, and the call goes back into Python when it runs (`boundary_call`)"),
        BoundaryCallInLoop = ("RXT076", Error, "such a scalar boundary call inside a loop body, a `while` test or an `if` test in a loop: the function falls back"),
        ModuleMember = ("RXT093", Error, "a module member's call that is not compiled (`rextio_torch.compile(module)`): a layer of another kind or options, a user module or helper method whose body is not inlined (a `return` before its last statement, `*args`, arguments that do not bind, recursion; from another file: a module-level name of that file that is not an import, a lambda or comprehension), or a call where it would be evaluated conditionally or repeatedly (`and`/`or`, a `while` or `elif` test, a comprehension); the module runs eagerly"),
        CallsNativeFunction = ("RXT092", Error, "a native function calls another marker-typed function of the module"),
        Internal = ("RXT099", Error, "internal: the frontend contradicted itself (a bug; reported, never hidden, and the function stays on Python)"),
    }
}

family! {
    /// IR validation, one code per invariant group of `rextio_ir`'s crate docs (the number in
    /// the doc line).
    Rxir: Severity {
        OperandNotDefined = ("RXIR-001", Error, "(1) an operand or return refers to a value not defined before it (later in the arena, or not in it)"),
        TypeMismatch = ("RXIR-002", Error, "(2) an expression's declared type differs from the type `result_type` derives, or the op is ill-typed"),
        BadParamIndex = ("RXIR-003", Error, "(3) `param i` names a parameter that does not exist"),
        DeviceMix = ("RXIR-004", Error, "(4) an op's tensor operands are on different devices"),
        BadReturns = ("RXIR-005", Error, "(5) a path reaches the end of the body without a `return`"),
        ReturnTypeMismatch = ("RXIR-006", Error, "(5) the returned value's type differs from the function's result type"),
        UnknownSideTableEntry = ("RXIR-007", Error, "(7) the span or name table has an entry for an expression that does not exist"),
        MalformedFusedOp = ("RXIR-008", Error, "(6) a fused op carries a tail (reduction, softmax, argmax) the fused kernels do not implement"),
        UnsupportedType = ("RXIR-009", Error, "(2) a parameter or the result has a type outside the supported set (tensor rank 1 or 2)"),
        PassInternal = ("RXIR-010", Error, "(passes) a pass could not rebuild IR it was given (internal error)"),
        Placement = ("RXIR-011", Error, "(8) an expression is evaluated by no `let` or by several, or a `bound` value is bound by no statement, by several, or evaluated by a `let`; (13) a boundary call placed inside a loop body or a `while` condition"),
        OutOfScope = ("RXIR-012", Error, "(8) a use sees no value: it is placed later, in a block that does not enclose the use, or nowhere"),
        ControlFlow = ("RXIR-013", Error, "(5) misplaced control flow: a statement after a terminator, a block that does not end in one, `continue`/`break` outside a loop, `yield` outside an `if` arm, a wrong number of values"),
        StatementType = ("RXIR-014", Error, "(9) a statement's values have the wrong types (range bounds, index, carried values, results, conditions)"),
    }
}

family! {
    /// What `rextio-torch doctor` finds (`docs/tooling.md`).
    Rxd: DoctorLevel {
        PythonUnusable = ("RXD001", D::Problem, "the Python interpreter cannot be run or probed"),
        PythonVersion = ("RXD002", D::Problem, "the interpreter is not CPython 3.11"),
        TorchImport = ("RXD003", D::Problem, "torch does not import"),
        TorchVersion = ("RXD004", D::Problem, "torch is not 2.13.0"),
        LibtorchVersion = ("RXD005", D::Problem, "the libtorch tch sees is not 2.13.0, or cannot be found"),
        LibtorchMismatch = ("RXD006", D::Warning, "the extension was built against another libtorch directory than the one torch loads"),
        UsePytorchUnset = ("RXD007", D::Warning, "`LIBTORCH_USE_PYTORCH` is not set, so a cargo build outside make finds no libtorch"),
        BypassVersionCheck = ("RXD008", D::Problem, "`LIBTORCH_BYPASS_VERSION_CHECK` is set"),
        CargoMissing = ("RXD009", D::Problem, "cargo is missing"),
        RustcVersion = ("RXD010", D::Problem, "rustc is missing or older than the workspace's rust-version"),
        PackageImport = ("RXD011", D::Problem, "the rextio_torch package or its extension does not import"),
        RextioMissing = ("RXD012", D::Note, "the optional rextio package is not installed"),
        RextioVersion = ("RXD013", D::Warning, "rextio is installed at another version than 0.1.8"),
        CudaUnavailable = ("RXD014", D::Note, "CUDA is not available"),
        NoAvx2 = ("RXD015", D::Warning, "the CPU lacks AVX2 or FMA, so the fused kernel takes its portable path"),
        PlatformExperimental = ("RXD016", D::Note, "this host's platform cell is experimental"),
        PlatformUnpinned = ("RXD017", D::Problem, "this host's platform cell has no pinned runtime"),
        PlatformDeferred = ("RXD018", D::Warning, "this host's platform is deferred or not in the platform table"),
    }
}
