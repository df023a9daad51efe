//! Rust source for optimized IR functions: one pure-Rust function per IR function (one `let`
//! per expression, each a runtime call) plus its PyO3 boundary wrapper, and the crate root.
//!
//! Generated code must build without warnings: it imports exactly what it uses, and parameters
//! or values the body never reads get a leading `_`.

use std::fmt::Write as _;

use la_arena::Idx;
use rextio_ir::{
    BinaryOp, Block, Carried, DType, Device, ExprId, ExprKind, Function, FusedTail, Iteration,
    ReduceKind, ReusedWeights, Stmt, TensorType, Type, UnaryOp,
};

mod let_expr;

use crate::carried::{IR_MODULE, RUNTIME_MODULE};
use crate::EmitError;

/// What the functions of one crate use from the runtime, so its root imports exactly that.
#[derive(Clone, Copy, Debug, Default)]
struct Uses {
    scalar: bool,
    scalar_op: bool,
    scalar_unary: bool,
    range: bool,
    tensor: bool,
    tensor_type: bool,
    unary: bool,
    binary: bool,
    tensor_scalar: bool,
    param_unary: bool,
    reduce: bool,
    fused_reduce: bool,
    fused_tail: bool,
    softmax_tail: bool,
    /// `BagMode`: an `embedding_bag`'s mode.
    bag_mode: bool,
    /// `ElementwiseOp` (`where`, `maximum`, `minimum`, `pow`), and `CompareOp` for a `where`.
    elementwise: bool,
    compare: bool,
    /// `exec`: the executor's tensor ops.
    ops: bool,
}

/// Rust keywords a Python identifier may collide with; emitted as raw identifiers.
const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "const", "continue", "do", "dyn", "enum",
    "extern", "fn", "final", "gen", "impl", "let", "loop", "macro", "match", "mod", "move", "mut",
    "override", "priv", "pub", "ref", "static", "struct", "trait", "type", "typeof", "unsafe",
    "unsized", "use", "virtual", "where", "yield", "try",
];

fn ident(function: &str, name: &str) -> Result<String, EmitError> {
    let valid = matches!(name.chars().next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid
        || matches!(name, "self" | "Self" | "super" | "crate" | "_")
        || name.starts_with("rxt_")
    {
        return Err(invalid(
            function,
            format!("`{name}` cannot be a Rust identifier in generated code"),
        ));
    }
    Ok(if RUST_KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    })
}

/// `name` as a Rust identifier of generated code (raw where it is a keyword).
pub(crate) fn rust_ident(name: &str) -> Result<String, EmitError> {
    ident(name, name)
}

fn invalid(function: &str, message: impl Into<String>) -> EmitError {
    EmitError::Invalid {
        function: function.to_string(),
        message: message.into(),
    }
}

fn rust_type(ty: Type) -> &'static str {
    match ty {
        Type::Tensor(_) => "Tensor",
        Type::Int => "i64",
        Type::Bool => "bool",
        Type::Float => "f64",
    }
}

fn tensor_type_expr(t: TensorType) -> String {
    let dtype = match t.dtype {
        DType::F32 => "DType::F32",
        DType::I64 => "DType::I64",
        DType::F64 => "DType::F64",
        DType::BF16 => "DType::BF16",
    };
    let device = match t.device {
        Device::Cpu => "Device::Cpu",
        Device::Cuda0 => "Device::Cuda0",
    };
    format!(
        "TensorType {{ dtype: {dtype}, device: {device}, rank: {} }}",
        t.rank
    )
}

fn unary_expr(op: UnaryOp) -> String {
    let name = format!("{op:?}");
    format!("UnaryOp::{name}")
}

fn binary_expr(op: BinaryOp) -> String {
    format!("BinaryOp::{op:?}")
}

fn reduce_kind_expr(kind: ReduceKind) -> String {
    format!("ReduceKind::{kind:?}")
}

fn fused_tail_expr(tail: Option<FusedTail>) -> String {
    match tail {
        None => "None".to_string(),
        Some(FusedTail::Reduce(r)) => format!(
            "Some(FusedTail::Reduce(FusedReduce {{ kind: {}, dim: {}, keepdim: {} }}))",
            reduce_kind_expr(r.kind),
            r.dim,
            r.keepdim
        ),
        Some(FusedTail::Softmax { kind, dim }) => {
            format!("Some(FusedTail::Softmax {{ kind: SoftmaxKind::{kind:?}, dim: {dim} }})")
        }
        Some(FusedTail::Argmax { dim, keepdim }) => {
            format!("Some(FusedTail::Argmax {{ dim: {dim}, keepdim: {keepdim} }})")
        }
    }
}

/// The pure-Rust function and the PyO3 wrapper for `f`.
pub fn emit_function(f: &Function, source_name: &str) -> Result<String, EmitError> {
    emit_function_using(f, source_name, &mut Uses::default(), true)
}

/// The pure-Rust function `<name>_native` for `f`, then (when `python`) its PyO3 wrapper.
fn emit_function_using(
    f: &Function,
    source_name: &str,
    uses: &mut Uses,
    python: bool,
) -> Result<String, EmitError> {
    let name = ident(&f.name, &f.name)?;
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| ident(&f.name, &p.name))
        .collect::<Result<_, _>>()?;
    // Which values something reads: the others are still computed (their errors are the
    // executor's errors too) but named `_vN`, and unread parameters `_name`.
    let mut read = vec![false; f.exprs.len()];
    let mut mark = |id: Idx<rextio_ir::Expr>| {
        if let Some(r) = read.get_mut(id.into_raw().into_u32() as usize) {
            *r = true;
        }
    };
    for (_, expr) in f.exprs.iter() {
        expr.kind.operands().into_iter().for_each(&mut mark);
    }
    f.body
        .walk(&mut |stmt| stmt.uses().into_iter().for_each(&mut mark));
    let mut params_read = vec![false; f.params.len()];
    for (index, (_, expr)) in f.exprs.iter().enumerate() {
        if let (ExprKind::Param(p), true) = (&expr.kind, read[index]) {
            if let Some(r) = params_read.get_mut(*p as usize) {
                *r = true;
            }
        }
    }
    let mut body = Body {
        f,
        params: &params,
        read,
        refs: vec![None; f.exprs.len()],
        uses,
        out: String::new(),
        labels: 0,
        frames: Vec::new(),
        reused: ReusedWeights::of(f),
    };
    body.block(&f.body, 1, true)?;
    let body_text = std::mem::take(&mut body.out);

    let mut out = String::new();
    let signature: Vec<String> = params
        .iter()
        .zip(&f.params)
        .zip(&params_read)
        .map(|((name, p), read)| {
            let name = if *read {
                name.clone()
            } else {
                format!("_{}", name.trim_start_matches("r#"))
            };
            match p.ty {
                Type::Tensor(_) => format!("{name}: &Tensor"),
                other => format!("{name}: {}", rust_type(other)),
            }
        })
        .collect();
    uses.tensor |= matches!(f.ret, Type::Tensor(_));
    uses.tensor |= f.params.iter().any(|p| matches!(p.ty, Type::Tensor(_)));
    // The wrapper's checks name the annotated tensor types.
    uses.tensor_type |= python && f.params.iter().any(|p| matches!(p.ty, Type::Tensor(_)));
    let _ = writeln!(
        out,
        "/// `{}` from {source_name}: tensors in, result out, no Python involved.",
        f.name
    );
    let _ = writeln!(
        out,
        "pub fn {}_native({}) -> Result<{}, RuntimeError> {{",
        name.trim_start_matches("r#"),
        signature.join(", "),
        rust_type(f.ret)
    );
    let _ = writeln!(out, "    let _no_grad = tch::no_grad_guard();");
    out.push_str(&body_text);
    let _ = writeln!(out, "}}");
    if !python {
        return Ok(out);
    }
    let _ = writeln!(out);

    let py_params: Vec<String> = params
        .iter()
        .map(|p| format!("{p}: &Bound<'py, PyAny>"))
        .collect();
    let _ = writeln!(
        out,
        "/// Python entry point of `{}`: checks arguments exactly as annotated.",
        f.name
    );
    let _ = writeln!(out, "#[pyfunction]");
    let _ = writeln!(out, "#[pyo3(name = \"{}\")]", f.name);
    let _ = writeln!(
        out,
        "fn rxt_py_{}<'py>(rxt_py: Python<'py>{}{}) -> PyResult<Bound<'py, PyAny>> {{",
        name.trim_start_matches("r#"),
        if py_params.is_empty() { "" } else { ", " },
        py_params.join(", ")
    );
    for (name, p) in params.iter().zip(&f.params) {
        let conversion = match p.ty {
            Type::Tensor(t) => format!(
                "boundary::extract_tensor({name}, {}, {:?})?",
                tensor_type_expr(t),
                p.name
            ),
            Type::Int => format!("boundary::extract_int({name}, {:?})?", p.name),
            Type::Bool => format!("boundary::extract_bool({name}, {:?})?", p.name),
            Type::Float => format!("boundary::extract_float({name}, {:?})?", p.name),
        };
        let _ = writeln!(out, "    let {name} = {conversion};");
    }
    let args: Vec<String> = params
        .iter()
        .zip(&f.params)
        .map(|(name, p)| match p.ty {
            Type::Tensor(_) => format!("&{name}"),
            _ => name.clone(),
        })
        .collect();
    let wrap = match f.ret {
        Type::Tensor(_) => "Value::Tensor",
        Type::Int => "Value::Int",
        Type::Bool => "Value::Bool",
        Type::Float => "Value::Float",
    };
    let _ = writeln!(
        out,
        "    let result = {}_native({}).map_err(boundary::to_py_err)?;",
        name.trim_start_matches("r#"),
        args.join(", ")
    );
    let _ = writeln!(
        out,
        "    boundary::materialize_value(rxt_py, {wrap}(result))"
    );
    let _ = writeln!(out, "}}");
    Ok(out)
}

fn optional(value: Option<String>) -> String {
    match value {
        Some(v) => format!("Some({v})"),
        None => "None".to_string(),
    }
}

/// `src/lib.rs` of the generated crate: the carried runtime modules, every function and the
/// extension module `{module_name}._native` (the package `{module_name}` re-exports it).
pub fn emit_lib_rs(
    functions: &[Function],
    module_name: &str,
    source_name: &str,
) -> Result<String, EmitError> {
    let mut uses = Uses::default();
    let mut code = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in functions {
        if !seen.insert(f.name.as_str()) {
            return Err(invalid(&f.name, "two functions have this name"));
        }
        let _ = writeln!(code);
        code.push_str(&emit_function_using(f, source_name, &mut uses, true)?);
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! Generated by rextio-torch from {source_name}. Do not edit."
    );
    let _ = writeln!(out, "//!");
    let _ = writeln!(
        out,
        "//! `<name>_native` are plain Rust (tensors in, result out). Python imports them from the"
    );
    let _ = writeln!(
        out,
        "//! package `{module_name}`, which loads torch first: this extension links against the"
    );
    let _ = writeln!(
        out,
        "//! libtorch that torch ships. `{IR_MODULE}` and `{RUNTIME_MODULE}` are rextio-torch's own"
    );
    let _ = writeln!(
        out,
        "//! sources, carried so that this crate builds anywhere."
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "pub mod {IR_MODULE};");
    let _ = writeln!(out, "pub mod {RUNTIME_MODULE};");
    let _ = writeln!(out);
    let _ = writeln!(out, "use pyo3::prelude::*;");
    out.push_str(&import_lines(&uses, "", true));
    out.push_str(&code);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "/// The extension module; `{module_name}/__init__.py` imports torch, then re-exports it."
    );
    let _ = writeln!(out, "#[pymodule]");
    let _ = writeln!(out, "#[pyo3(name = \"_native\")]");
    let _ = writeln!(
        out,
        "fn rxt_module(m: &Bound<'_, PyModule>) -> PyResult<()> {{"
    );
    for f in functions {
        let name = ident(&f.name, &f.name)?;
        let _ = writeln!(
            out,
            "    m.add_function(wrap_pyfunction!(rxt_py_{}, m)?)?;",
            name.trim_start_matches("r#")
        );
    }
    let _ = writeln!(out, "    Ok(())");
    let _ = writeln!(out, "}}");
    Ok(out)
}

/// Names the root of a standalone crate defines besides its functions; a function cannot
/// take one.
pub const STANDALONE_ROOT_NAMES: [&str; 4] = [IR_MODULE, RUNTIME_MODULE, "unchecked", "Error"];

/// A parameter or result type in words, as the docs of a standalone function give it.
pub fn describe_type(ty: Type) -> String {
    match ty {
        Type::Tensor(t) => {
            let dtype = t.dtype.torch_name();
            let device = match t.device {
                Device::Cpu => "CPU",
                Device::Cuda0 => "cuda:0",
            };
            format!("{dtype} {device} rank-{} tensor", t.rank)
        }
        Type::Int => "int (`i64`)".to_string(),
        Type::Bool => "bool".to_string(),
        Type::Float => "float (`f64`)".to_string(),
    }
}

/// The Rust type of a standalone function's parameter or result, by absolute path.
fn standalone_type(ty: Type, param: bool) -> &'static str {
    match (ty, param) {
        (Type::Tensor(_), true) => "&::tch::Tensor",
        (Type::Tensor(_), false) => "::tch::Tensor",
        (other, _) => rust_type(other),
    }
}

/// `src/lib.rs` and `src/unchecked.rs` of a standalone crate (no Python): per function, a
/// checked `<name>` at the root (each tensor argument checked as annotated, with the
/// reference's messages) that calls the unchecked `unchecked::<name>_native`.
pub fn emit_standalone_sources(
    functions: &[Function],
    source_name: &str,
) -> Result<(String, String), EmitError> {
    let mut uses = Uses::default();
    let mut code = String::new();
    let mut checked = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in functions {
        if !seen.insert(f.name.as_str()) {
            return Err(invalid(&f.name, "two functions have this name"));
        }
        if STANDALONE_ROOT_NAMES.contains(&f.name.as_str()) {
            return Err(invalid(
                &f.name,
                "a standalone crate's root defines an item of this name",
            ));
        }
        let _ = writeln!(code);
        code.push_str(&emit_function_using(f, source_name, &mut uses, false)?);
        let _ = writeln!(checked);
        checked.push_str(&emit_checked(f, source_name)?);
    }

    let mut lib = String::new();
    let _ = writeln!(
        lib,
        "//! Generated by rextio-torch from {source_name}. Do not edit: emit again instead."
    );
    let _ = writeln!(lib, "//!");
    for line in [
        "//! Each function that compiles natively, as Rust over `&tch::Tensor` (and `i64`, `bool`,",
        "//! `f64`): it checks its arguments exactly as annotated, runs under a no-grad guard and",
        "//! returns `Result<_, Error>`. No Python is involved. [`unchecked`] holds the same",
        "//! functions without the checks. `rextio_ir` and `rextio_runtime` are rextio-torch's own",
        "//! sources, carried so that this crate builds anywhere.",
    ] {
        let _ = writeln!(lib, "{line}");
    }
    let _ = writeln!(lib);
    let _ = writeln!(lib, "pub mod {IR_MODULE};");
    let _ = writeln!(lib, "pub mod {RUNTIME_MODULE};");
    let _ = writeln!(lib, "pub mod unchecked;");
    let _ = writeln!(lib);
    let _ = writeln!(
        lib,
        "/// Why a call failed: an argument that is not as annotated (`ArgumentValue`, the\n\
         /// reference's message naming the argument), sizes that do not fit, a libtorch error, ..."
    );
    let _ = writeln!(lib, "pub use {RUNTIME_MODULE}::RuntimeError as Error;");
    lib.push_str(&checked);

    let mut unchecked = String::new();
    let _ = writeln!(
        unchecked,
        "//! The functions of {source_name} without argument checks: the checked ones at the"
    );
    let _ = writeln!(
        unchecked,
        "//! crate root call them once their arguments are as annotated. Generated by rextio-torch;"
    );
    let _ = writeln!(unchecked, "//! do not edit.");
    let _ = writeln!(unchecked);
    unchecked.push_str(&import_lines(&uses, "crate::", false));
    unchecked.push_str(&code);
    Ok((lib, unchecked))
}

/// The checked function `<name>` of a standalone crate.
fn emit_checked(f: &Function, source_name: &str) -> Result<String, EmitError> {
    let name = ident(&f.name, &f.name)?;
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| ident(&f.name, &p.name))
        .collect::<Result<_, _>>()?;
    let mut out = String::new();
    let _ = writeln!(out, "/// `{}` from {source_name}.", f.name);
    let _ = writeln!(out, "///");
    for p in &f.params {
        let _ = writeln!(out, "/// - `{}`: {}", p.name, describe_type(p.ty));
    }
    let _ = writeln!(out, "///");
    let _ = writeln!(out, "/// Returns a {}.", describe_type(f.ret));
    let _ = writeln!(out, "///");
    let _ = writeln!(
        out,
        "/// Each tensor argument is checked as annotated (device, dtype, rank, layout): a mismatch"
    );
    let _ = writeln!(
        out,
        "/// is [`Error::ArgumentValue`] with the reference's message, naming the argument."
    );
    let signature: Vec<String> = params
        .iter()
        .zip(&f.params)
        .map(|(n, p)| format!("{n}: {}", standalone_type(p.ty, true)))
        .collect();
    let _ = writeln!(
        out,
        "pub fn {name}({}) -> ::std::result::Result<{}, Error> {{",
        signature.join(", "),
        standalone_type(f.ret, false)
    );
    for (n, p) in params.iter().zip(&f.params) {
        if let Type::Tensor(t) = p.ty {
            let ty = tensor_type_expr(t)
                .replace(
                    "TensorType {",
                    &format!("crate::{IR_MODULE}::TensorType {{"),
                )
                .replace("DType::", &format!("crate::{IR_MODULE}::DType::"))
                .replace("Device::", &format!("crate::{IR_MODULE}::Device::"));
            let _ = writeln!(
                out,
                "    crate::{RUNTIME_MODULE}::checks::check_tensor_argument({n}, {ty}, {:?})?;",
                p.name
            );
        }
    }
    let _ = writeln!(
        out,
        "    crate::unchecked::{}_native({})",
        name.trim_start_matches("r#"),
        params.join(", ")
    );
    let _ = writeln!(out, "}}");
    Ok(out)
}

/// The `use` lines of generated code: exactly the IR and runtime names `uses` says it needs,
/// under `root` (`""` at the crate root, `"crate::"` in a module). The Python flavour also
/// imports the boundary and `Value`, which its wrappers use.
fn import_lines(uses: &Uses, root: &str, python: bool) -> String {
    let mut out = String::new();
    let ir_names: Vec<&str> = [
        (uses.bag_mode, "BagMode"),
        (uses.binary, "BinaryOp"),
        (uses.compare, "CompareOp"),
        (uses.tensor_type, "DType"),
        (uses.tensor_type, "Device"),
        (uses.elementwise, "ElementwiseOp"),
        (uses.fused_reduce, "FusedReduce"),
        (uses.fused_tail, "FusedTail"),
        (uses.param_unary, "ParamUnaryOp"),
        (uses.reduce, "ReduceKind"),
        (uses.scalar_op, "ScalarOp"),
        (uses.scalar_unary, "ScalarUnaryOp"),
        (uses.softmax_tail, "SoftmaxKind"),
        (uses.tensor_scalar, "TensorScalarOp"),
        (uses.tensor_type, "TensorType"),
        (uses.unary, "UnaryOp"),
    ]
    .into_iter()
    .filter_map(|(used, name)| used.then_some(name))
    .collect();
    match ir_names.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(out, "use {root}{IR_MODULE}::{one};");
        }
        many => {
            let _ = writeln!(out, "use {root}{IR_MODULE}::{{{}}};", many.join(", "));
        }
    }
    let runtime_names: Vec<&str> = [
        (python, "boundary"),
        (uses.range, "control"),
        (uses.ops, "exec"),
        (uses.scalar, "scalar"),
        (true, "RuntimeError"),
        (python, "Value"),
    ]
    .into_iter()
    .filter_map(|(used, name)| used.then_some(name))
    .collect();
    match runtime_names.as_slice() {
        [one] => {
            let _ = writeln!(out, "use {root}{RUNTIME_MODULE}::{one};");
        }
        many => {
            let _ = writeln!(out, "use {root}{RUNTIME_MODULE}::{{{}}};", many.join(", "));
        }
    }
    if uses.tensor {
        let _ = writeln!(out, "use tch::Tensor;");
    }
    out
}

/// What `continue`, `break` and `yield` in the block being emitted refer to.
enum Frame {
    Loop {
        label: String,
        args: Vec<ExprId>,
        /// Values placed in this loop's iteration (they may be moved out at its end).
        owned: Vec<bool>,
    },
    Arm {
        owned: Vec<bool>,
    },
}

/// Emits a function body: statements as nested Rust blocks, loops as labelled `loop`s that
/// `break` with their results, `if` as an expression yielding its results.
struct Body<'a> {
    f: &'a Function,
    params: &'a [String],
    read: Vec<bool>,
    /// How code refers to each placed value: `x` (a tensor parameter, already a reference),
    /// `&v3` (a tensor), `v3` (a scalar).
    refs: Vec<Option<String>>,
    uses: &'a mut Uses,
    out: String,
    labels: usize,
    frames: Vec<Frame>,
    /// The `linear`s whose weight the executor transposes once per call: generated code
    /// passes the same fact on, so both pick the same kernel and give the same bits.
    reused: ReusedWeights,
}

fn raw(id: ExprId) -> usize {
    id.into_raw().into_u32() as usize
}

impl Body<'_> {
    fn err(&self, message: impl Into<String>) -> EmitError {
        invalid(&self.f.name, message)
    }

    fn reference(&self, id: ExprId) -> Result<String, EmitError> {
        self.refs
            .get(raw(id))
            .cloned()
            .flatten()
            .ok_or_else(|| self.err(format!("%{} is used before it is defined", raw(id))))
    }

    fn ty(&self, id: ExprId) -> Result<Type, EmitError> {
        self.f
            .expr(id)
            .map(|e| e.ty)
            .ok_or_else(|| self.err(format!("%{} does not exist", raw(id))))
    }

    /// A variable name for a value, `_`-prefixed when nothing reads it.
    fn var(&self, id: ExprId) -> String {
        let unread = if self.read.get(raw(id)).copied().unwrap_or(false) {
            ""
        } else {
            "_"
        };
        format!("{unread}v{}", raw(id))
    }

    fn define(&mut self, id: ExprId) -> Result<(), EmitError> {
        let ty = self.ty(id)?;
        self.uses.tensor |= matches!(ty, Type::Tensor(_));
        let r = match ty {
            Type::Tensor(_) => format!("&v{}", raw(id)),
            _ => format!("v{}", raw(id)),
        };
        if let Some(slot) = self.refs.get_mut(raw(id)) {
            *slot = Some(r);
        }
        for frame in &mut self.frames {
            let owned = match frame {
                Frame::Loop { owned, .. } | Frame::Arm { owned } => owned,
            };
            if let Some(o) = owned.get_mut(raw(id)) {
                *o = true;
            }
        }
        Ok(())
    }

    /// An owned copy of a value for a `continue`/`break`/`yield`/`return`: moved out of its
    /// variable when it dies there (`owned`, and used once in `values`), else a new handle.
    fn owned_value(&self, id: ExprId, movable: bool) -> Result<String, EmitError> {
        let r = self.reference(id)?;
        Ok(match self.ty(id)? {
            Type::Tensor(_) => match r.strip_prefix('&') {
                Some(var) if movable => var.to_string(),
                Some(var) => format!("{var}.shallow_clone()"),
                // A parameter: the same tensor object, as Python would return it.
                None => format!("{r}.shallow_clone()"),
            },
            _ => r,
        })
    }

    fn owned_values(&self, values: &[ExprId], owned: &[bool]) -> Result<Vec<String>, EmitError> {
        values
            .iter()
            .map(|v| {
                let once = values.iter().filter(|w| *w == v).count() == 1;
                let movable = once && owned.get(raw(*v)).copied().unwrap_or(false);
                self.owned_value(*v, movable)
            })
            .collect()
    }

    fn line(&mut self, depth: usize, text: &str) {
        let _ = writeln!(self.out, "{}{text}", "    ".repeat(depth));
    }

    fn tuple(items: &[String]) -> String {
        match items {
            [one] => format!("({one},)"),
            many => format!("({})", many.join(", ")),
        }
    }

    /// Emits `block`; `last` says it is the function body, whose final `return` becomes the
    /// tail `Ok(..)`.
    fn block(&mut self, block: &Block, depth: usize, last: bool) -> Result<(), EmitError> {
        let count = block.stmts.len();
        for (position, stmt) in block.stmts.iter().enumerate() {
            let tail = last && position + 1 == count;
            self.stmt(stmt, depth, tail)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt, depth: usize, tail: bool) -> Result<(), EmitError> {
        match stmt {
            Stmt::Let(id) => self.let_(*id, depth),
            Stmt::Return(value) => {
                let owned = self.owned_value(*value, true)?;
                if tail {
                    self.line(depth, &format!("Ok({owned})"));
                } else {
                    self.line(depth, &format!("return Ok({owned});"));
                }
                Ok(())
            }
            Stmt::Yield(values) => {
                let Some(Frame::Arm { owned }) = self.frames.last() else {
                    return Err(self.err("`yield` outside an `if` arm"));
                };
                let items = self.owned_values(values, owned)?;
                if !items.is_empty() {
                    self.line(depth, &Self::tuple(&items));
                }
                Ok(())
            }
            Stmt::Continue(values) | Stmt::Break(values) => {
                let Some(Frame::Loop { label, args, owned }) = self
                    .frames
                    .iter()
                    .rev()
                    .find(|f| matches!(f, Frame::Loop { .. }))
                else {
                    return Err(self.err("`continue`/`break` outside a loop"));
                };
                let (label, args, owned) = (label.clone(), args.clone(), owned.clone());
                if values.len() != args.len() {
                    return Err(self.err("a loop is passed the wrong number of values"));
                }
                let items = self.owned_values(values, &owned)?;
                if matches!(stmt, Stmt::Break(_)) {
                    self.line(depth, &format!("break {label} {};", Self::tuple(&items)));
                    return Ok(());
                }
                // A parallel assignment: every new value first, then the carried variables.
                let changed: Vec<usize> =
                    (0..args.len()).filter(|i| values[*i] != args[*i]).collect();
                for i in &changed {
                    self.line(depth, &format!("let rxt_next{i} = {};", items[*i]));
                }
                for i in &changed {
                    self.line(depth, &format!("v{} = rxt_next{i};", raw(args[*i])));
                }
                self.line(depth, &format!("continue {label};"));
                Ok(())
            }
            Stmt::If(i) => {
                let cond = self.reference(i.cond)?;
                let pattern = self.results_pattern(&i.results)?;
                let prefix = match &pattern {
                    Some((pattern, ty)) => format!("let {pattern}: {ty} = "),
                    None => String::new(),
                };
                self.line(depth, &format!("{prefix}if {cond} {{"));
                self.arm(&i.then_block, depth + 1)?;
                self.line(depth, "} else {");
                self.arm(&i.else_block, depth + 1)?;
                self.line(depth, if pattern.is_some() { "};" } else { "}" });
                for r in &i.results {
                    self.define(*r)?;
                }
                Ok(())
            }
            Stmt::For(l) => {
                let label = self.next_label();
                self.carried_entry(&l.carried, &l.body, depth)?;
                let results: Vec<ExprId> = l.carried.iter().map(|c| c.result).collect();
                let pattern = self.results_pattern(&results)?;
                let iterator = format!("rxt_iter{}", raw(l.index));
                match &l.iteration {
                    Iteration::Range { start, stop, step } => {
                        self.uses.range = true;
                        let (start, stop, step) = (
                            self.reference(*start)?,
                            self.reference(*stop)?,
                            self.reference(*step)?,
                        );
                        self.line(depth, &format!("let mut {iterator} = control::Range::new({start}, {stop}, {step})?;"));
                    }
                    Iteration::Values(values) => {
                        let list: Vec<String> = values.iter().map(|v| format!("{v}i64")).collect();
                        self.line(
                            depth,
                            &format!("let mut {iterator} = [{}].into_iter();", list.join(", ")),
                        );
                    }
                }
                let exit = self.exit_values(&l.carried)?;
                let head = match &pattern {
                    Some((pattern, ty)) => format!("let {pattern}: {ty} = {label}: loop {{"),
                    None => format!("{label}: loop {{"),
                };
                self.line(depth, &head);
                let index = self.var(l.index);
                self.line(
                    depth + 1,
                    &format!(
                        "let Some({index}) = {iterator}.next() else {{ break {label} {exit}; }};"
                    ),
                );
                self.define(l.index)?;
                self.loop_body(&label, &l.carried, None, &l.body, depth + 1)?;
                self.line(depth, "};");
                for c in &l.carried {
                    self.define(c.result)?;
                }
                Ok(())
            }
            Stmt::While(l) => {
                let label = self.next_label();
                self.carried_entry(&l.carried, &l.body, depth)?;
                let results: Vec<ExprId> = l.carried.iter().map(|c| c.result).collect();
                let pattern = self.results_pattern(&results)?;
                let exit = self.exit_values(&l.carried)?;
                let head = match &pattern {
                    Some((pattern, ty)) => format!("let {pattern}: {ty} = {label}: loop {{"),
                    None => format!("{label}: loop {{"),
                };
                self.line(depth, &head);
                self.loop_body(
                    &label,
                    &l.carried,
                    Some((&l.cond_block, l.cond, exit)),
                    &l.body,
                    depth + 1,
                )?;
                self.line(depth, "};");
                for c in &l.carried {
                    self.define(c.result)?;
                }
                Ok(())
            }
        }
    }

    fn next_label(&mut self) -> String {
        self.labels += 1;
        format!("'l{}", self.labels)
    }

    /// `let (v1, _v2): (Tensor, i64)` for results, `None` when there are none.
    fn results_pattern(&self, results: &[ExprId]) -> Result<Option<(String, String)>, EmitError> {
        if results.is_empty() {
            return Ok(None);
        }
        let names: Vec<String> = results.iter().map(|r| self.var(*r)).collect();
        let types: Vec<String> = results
            .iter()
            .map(|r| self.ty(*r).map(|t| rust_type(t).to_string()))
            .collect::<Result<_, _>>()?;
        Ok(Some((Self::tuple(&names), Self::tuple(&types))))
    }

    /// `let mut vA = init;` for each carried value (`mut` only where a `continue` changes it).
    fn carried_entry(
        &mut self,
        carried: &[Carried],
        body: &Block,
        depth: usize,
    ) -> Result<(), EmitError> {
        for (position, c) in carried.iter().enumerate() {
            let init = self.owned_value(c.init, false)?;
            let ty = rust_type(self.ty(c.arg)?);
            let mutable = if continues_change(body, position, c.arg) {
                "mut "
            } else {
                ""
            };
            self.line(
                depth,
                &format!("let {mutable}v{}: {ty} = {init};", raw(c.arg)),
            );
            self.define(c.arg)?;
        }
        Ok(())
    }

    /// `(vA, vB)`: the carried variables as the loop's results on a normal exit.
    fn exit_values(&self, carried: &[Carried]) -> Result<String, EmitError> {
        let items: Vec<String> = carried
            .iter()
            .map(|c| self.owned_value(c.arg, true))
            .collect::<Result<_, _>>()?;
        Ok(if items.is_empty() {
            String::new()
        } else {
            Self::tuple(&items)
        })
    }

    fn loop_body(
        &mut self,
        label: &str,
        carried: &[Carried],
        cond: Option<(&Block, ExprId, String)>,
        body: &Block,
        depth: usize,
    ) -> Result<(), EmitError> {
        self.frames.push(Frame::Loop {
            label: label.to_string(),
            args: carried.iter().map(|c| c.arg).collect(),
            owned: vec![false; self.f.exprs.len()],
        });
        if let Some((cond_block, cond, exit)) = cond {
            self.block(cond_block, depth, false)?;
            let cond = self.reference(cond)?;
            self.line(depth, &format!("if !{cond} {{"));
            self.line(depth + 1, &format!("break {label} {exit};"));
            self.line(depth, "}");
        }
        self.block(body, depth, false)?;
        self.frames.pop();
        Ok(())
    }

    fn arm(&mut self, block: &Block, depth: usize) -> Result<(), EmitError> {
        self.frames.push(Frame::Arm {
            owned: vec![false; self.f.exprs.len()],
        });
        self.block(block, depth, false)?;
        self.frames.pop();
        Ok(())
    }
}

/// The accessor of a scalar result of type `ty` (`int()`, `boolean()`, `float()`).
fn scalar_getter(ty: Type) -> &'static str {
    match ty {
        Type::Int => "int",
        Type::Bool => "boolean",
        _ => "float",
    }
}

/// Whether a `continue` in `body` (not one of a nested loop) passes position `position`
/// something other than `arg` itself.
fn continues_change(body: &Block, position: usize, arg: ExprId) -> bool {
    body.stmts.iter().any(|stmt| match stmt {
        Stmt::Continue(values) => values.get(position).is_some_and(|v| *v != arg),
        Stmt::If(i) => {
            continues_change(&i.then_block, position, arg)
                || continues_change(&i.else_block, position, arg)
        }
        // A nested loop's `continue` belongs to it.
        _ => false,
    })
}
