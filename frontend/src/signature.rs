//! Function signatures: parameter and return annotations resolved to types, and whether the
//! function is a candidate (some parameter or the return uses a marker type).
//!
//! Native functions take positional(-or-keyword) parameters annotated with a marker type,
//! `int`, `bool` or `float`; every other parameter (another type, no annotation, a default value,
//! `*args`, keyword-only, `**kwargs`) is an `RXT032` error that keeps the function on Python.

use rextio_ir::{Diagnostic, Span};
use ruff_python_ast::{Parameter, StmtFunctionDef};

use crate::codes;
use crate::imports::{AnnotatedType, ImportMap};
use crate::parse::span_of;

/// The kind problem of a parameter with a default value.
pub const DEFAULT_VALUE: &str = "parameter with a default value";
/// The kind problem of a keyword-only parameter.
pub const KEYWORD_ONLY: &str = "keyword-only parameter";

#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    pub annotated: AnnotatedType,
    /// The whole parameter (`x: TensorF32Cpu2D`).
    pub span: Span,
    /// Why the parameter's *kind* cannot be native (`*args`, a default value, ...).
    pub kind_problem: Option<&'static str>,
}

#[derive(Clone, Debug)]
pub struct Signature {
    /// In declaration order: positional-only, regular, `*args`, keyword-only, `**kwargs`.
    pub params: Vec<ParamInfo>,
    pub ret: AnnotatedType,
    pub ret_span: Option<Span>,
    pub uses_marker: bool,
    /// Every parameter is a plain `int`, `float` or `bool` (and there is one at least), and
    /// the result is one of them: the host compiles such functions too (`native-direct`).
    pub scalar_only: bool,
    /// Every parameter (none at all too) and the result are plain `int`/`float`/`bool`: an
    /// `@rextio.exempt` function of this signature is a scalar callback, which a function
    /// marked `@rextio.native` calls back into Python (`RXT075`), `def observe() -> bool`
    /// included.
    pub scalar_callback: bool,
}

pub fn signature(def: &StmtFunctionDef, imports: &ImportMap, source: &str) -> Signature {
    let p = &def.parameters;
    let mut params = Vec::new();
    let mut push = |parameter: &Parameter, span: Span, kind_problem: Option<&'static str>| {
        params.push(ParamInfo {
            name: parameter.name.to_string(),
            annotated: imports.resolve_annotation(parameter.annotation(), source),
            span,
            kind_problem,
        });
    };
    for param in p.posonlyargs.iter().chain(&p.args) {
        let problem = param.default.as_ref().map(|_| DEFAULT_VALUE);
        push(&param.parameter, span_of(param), problem);
    }
    if let Some(vararg) = &p.vararg {
        push(vararg, span_of(&**vararg), Some("`*args` parameter"));
    }
    for param in &p.kwonlyargs {
        push(&param.parameter, span_of(param), Some(KEYWORD_ONLY));
    }
    if let Some(kwarg) = &p.kwarg {
        push(kwarg, span_of(&**kwarg), Some("`**kwargs` parameter"));
    }
    let ret = imports.resolve_annotation(def.returns.as_deref(), source);
    let ret_span = def.returns.as_deref().map(span_of);
    let uses_marker = params
        .iter()
        .any(|param| matches!(param.annotated, AnnotatedType::Marker(_)))
        || matches!(ret, AnnotatedType::Marker(_));
    let scalar = |t: &AnnotatedType| matches!(t, AnnotatedType::Core("int" | "float" | "bool"));
    let scalar_callback = !uses_marker
        && params
            .iter()
            .all(|p| p.kind_problem.is_none() && scalar(&p.annotated))
        && scalar(&ret);
    let scalar_only = scalar_callback && !params.is_empty();
    Signature {
        params,
        ret,
        ret_span,
        uses_marker,
        scalar_only,
        scalar_callback,
    }
}

/// Whether native functions can take a parameter of this type (markers, `int`, `bool`,
/// `float`).
pub fn is_native_param_type(annotated: &AnnotatedType) -> bool {
    matches!(
        annotated,
        AnnotatedType::Marker(_) | AnnotatedType::Core("int" | "bool" | "float")
    )
}

/// `RXT032` for every parameter a native function cannot take.
pub fn param_diagnostics(sig: &Signature) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for param in &sig.params {
        if let Some(problem) = param.kind_problem {
            diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED_PARAM,
                    format!("parameter kind is not supported by native functions yet: {problem}"),
                )
                .with_primary(param.span, format!("`{}` is a {problem}", param.name)),
            );
        } else if param.annotated == AnnotatedType::Missing {
            diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED_PARAM,
                    format!(
                        "parameter `{}` needs a type annotation in native functions",
                        param.name
                    ),
                )
                .with_primary(param.span, "no annotation")
                .with_suggestion(
                    "annotate it with a rextio_torch.types marker, `int`, `bool` or `float`",
                ),
            );
        } else if !is_native_param_type(&param.annotated) {
            let ty = param.annotated.display();
            diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED_PARAM,
                    format!("parameter type {ty} is not supported by native functions yet"),
                )
                .with_primary(param.span, format!("`{}` is a {ty}", param.name)),
            );
        }
    }
    diagnostics
}
