//! Rust source for optimized IR functions: one pure-Rust function per IR function (one `let`
//! per expression, each a runtime call) plus its PyO3 boundary wrapper, and the crate root.
//!
//! Generated code must build without warnings: it imports exactly what it uses, and parameters
//! or values the body never reads get a leading `_`.

use std::fmt::Write as _;

use la_arena::Idx;
use rextio_ir::{
    BinaryOp, DType, Device, ExprKind, Function, FusedReduce, ReduceKind, Stmt, TensorType, Type,
    UnaryOp,
};

use crate::carried::{IR_MODULE, RUNTIME_MODULE};
use crate::EmitError;

/// What the functions of one crate use from the runtime, so its root imports exactly that.
#[derive(Clone, Copy, Debug, Default)]
struct Uses {
    tensor: bool,
    tensor_type: bool,
    unary: bool,
    binary: bool,
    reduce: bool,
    fused_reduce: bool,
    ops: bool,
    kernels: bool,
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
    }
}

fn tensor_type_expr(t: TensorType) -> String {
    let dtype = match t.dtype {
        DType::F32 => "DType::F32",
        DType::I64 => "DType::I64",
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

fn fused_reduce_expr(reduce: Option<FusedReduce>) -> String {
    match reduce {
        None => "None".to_string(),
        Some(r) => format!(
            "Some(FusedReduce {{ kind: {}, dim: {}, keepdim: {} }})",
            reduce_kind_expr(r.kind),
            r.dim,
            r.keepdim
        ),
    }
}

/// The pure-Rust function and the PyO3 wrapper for `f`.
pub fn emit_function(f: &Function, source_name: &str) -> Result<String, EmitError> {
    emit_function_using(f, source_name, &mut Uses::default())
}

fn emit_function_using(
    f: &Function,
    source_name: &str,
    uses: &mut Uses,
) -> Result<String, EmitError> {
    let name = ident(&f.name, &f.name)?;
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| ident(&f.name, &p.name))
        .collect::<Result<_, _>>()?;
    let returned = match f.body.stmts.as_slice() {
        [Stmt::Return(id)] => id.into_raw().into_u32() as usize,
        _ => return Err(invalid(&f.name, "the body must be exactly one return")),
    };
    // Which values something reads: the others are still computed (their errors are the
    // executor's errors too) but named `_vN`, and unread parameters `_name`.
    let mut read = vec![false; f.exprs.len()];
    let mut params_read = vec![false; f.params.len()];
    for (_, expr) in f.exprs.iter() {
        for operand in expr.kind.operands() {
            if let Some(r) = read.get_mut(operand.into_raw().into_u32() as usize) {
                *r = true;
            }
        }
    }
    if let Some(r) = read.get_mut(returned) {
        *r = true;
    }
    for (index, (_, expr)) in f.exprs.iter().enumerate() {
        if let (ExprKind::Param(p), true) = (&expr.kind, read[index]) {
            if let Some(r) = params_read.get_mut(*p as usize) {
                *r = true;
            }
        }
    }
    // How later code refers to each expression's value: `x` for a tensor parameter (already a
    // reference), `&v3` for a computed tensor, `v3` for a scalar.
    let mut refs: Vec<String> = Vec::with_capacity(f.exprs.len());
    let mut body = String::new();
    for (index, (_, expr)) in f.exprs.iter().enumerate() {
        let operand = |id: Idx<rextio_ir::Expr>| -> Result<String, EmitError> {
            let i = id.into_raw().into_u32() as usize;
            refs.get(i)
                .cloned()
                .ok_or_else(|| invalid(&f.name, format!("%{index} uses %{i} before it is defined")))
        };
        let value = match &expr.kind {
            ExprKind::Param(p) => {
                let Some(param) = params.get(*p as usize) else {
                    return Err(invalid(
                        &f.name,
                        format!("%{index} reads parameter {p}, which does not exist"),
                    ));
                };
                refs.push(param.clone());
                continue;
            }
            ExprKind::ConstInt(v) => format!("{v}i64"),
            ExprKind::ConstBool(v) => format!("{v}"),
            ExprKind::Unary { op, input } => {
                uses.ops = true;
                uses.unary = true;
                format!("ops::unary({}, {})?", unary_expr(*op), operand(*input)?)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                uses.ops = true;
                uses.binary = true;
                format!(
                    "ops::binary({}, {}, {})?",
                    binary_expr(*op),
                    operand(*lhs)?,
                    operand(*rhs)?
                )
            }
            ExprKind::Linear {
                input,
                weight,
                bias,
            } => {
                uses.ops = true;
                format!(
                    "ops::linear({}, {}, {})?",
                    operand(*input)?,
                    operand(*weight)?,
                    optional(bias.map(&operand).transpose()?)
                )
            }
            ExprKind::Matmul { lhs, rhs } => {
                uses.ops = true;
                format!("ops::matmul({}, {})?", operand(*lhs)?, operand(*rhs)?)
            }
            ExprKind::Reduce {
                kind,
                input,
                dim,
                keepdim,
            } => {
                uses.ops = true;
                uses.reduce = true;
                format!(
                    "ops::reduce({}, {}, {dim}, {keepdim})?",
                    reduce_kind_expr(*kind),
                    operand(*input)?
                )
            }
            ExprKind::Softmax { input, dim } => {
                uses.ops = true;
                format!("ops::softmax({}, {dim})?", operand(*input)?)
            }
            ExprKind::Argmax {
                input,
                dim,
                keepdim,
            } => {
                uses.ops = true;
                format!("ops::argmax({}, {dim}, {keepdim})?", operand(*input)?)
            }
            ExprKind::FusedLinear {
                input,
                weight,
                bias,
                activations,
                reduce,
            } => {
                uses.kernels = true;
                uses.unary |= !activations.is_empty();
                uses.reduce |= reduce.is_some();
                uses.fused_reduce |= reduce.is_some();
                format!(
                    "kernels::fused_linear({}, {}, {}, &[{}], {})?",
                    operand(*input)?,
                    operand(*weight)?,
                    optional(bias.map(&operand).transpose()?),
                    activations
                        .iter()
                        .map(|op| unary_expr(*op))
                        .collect::<Vec<_>>()
                        .join(", "),
                    fused_reduce_expr(*reduce)
                )
            }
        };
        uses.tensor |= matches!(expr.ty, Type::Tensor(_));
        let unread = if read[index] { "" } else { "_" };
        let _ = writeln!(
            body,
            "    let {unread}v{index}: {} = {value};",
            rust_type(expr.ty)
        );
        refs.push(match expr.ty {
            Type::Tensor(_) => format!("&v{index}"),
            _ => format!("v{index}"),
        });
    }
    let Some(result) = refs.get(returned) else {
        return Err(invalid(
            &f.name,
            format!("return of %{returned}, which is not defined"),
        ));
    };
    let result = match f.ret {
        Type::Tensor(_) if result.starts_with('&') => result[1..].to_string(),
        // Returning a parameter hands back the same tensor object, as Python would.
        Type::Tensor(_) => format!("{result}.shallow_clone()"),
        _ => result.clone(),
    };

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
    uses.tensor_type |= f.params.iter().any(|p| matches!(p.ty, Type::Tensor(_)));
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
    out.push_str(&body);
    let _ = writeln!(out, "    Ok({result})");
    let _ = writeln!(out, "}}\n");

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
        code.push_str(&emit_function_using(f, source_name, &mut uses)?);
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
    let ir_names: Vec<&str> = [
        (uses.binary, "BinaryOp"),
        (uses.tensor_type, "DType"),
        (uses.tensor_type, "Device"),
        (uses.fused_reduce, "FusedReduce"),
        (uses.reduce, "ReduceKind"),
        (uses.tensor_type, "TensorType"),
        (uses.unary, "UnaryOp"),
    ]
    .into_iter()
    .filter_map(|(used, name)| used.then_some(name))
    .collect();
    match ir_names.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(out, "use {IR_MODULE}::{one};");
        }
        many => {
            let _ = writeln!(out, "use {IR_MODULE}::{{{}}};", many.join(", "));
        }
    }
    let runtime_names: Vec<&str> = [
        (true, "boundary"),
        (uses.kernels, "kernels"),
        (uses.ops, "ops"),
        (true, "RuntimeError"),
        (true, "Value"),
    ]
    .into_iter()
    .filter_map(|(used, name)| used.then_some(name))
    .collect();
    let _ = writeln!(
        out,
        "use {RUNTIME_MODULE}::{{{}}};",
        runtime_names.join(", ")
    );
    if uses.tensor {
        let _ = writeln!(out, "use tch::Tensor;");
    }
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
