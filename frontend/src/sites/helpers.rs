//! Calls to the module's functions that stay on Python (`docs/reference-control-flow.md`
//! section 8, the reference's call-graph rules): from a function marked `@rextio.native`, a
//! call to a scalar one (`@rextio.exempt`, kept on Python, or rejected; `int`/`float`/`bool`
//! parameters and result) outside loops is a scalar boundary call (`RXT075`, a note: the
//! function stays native and lowers it to `boundary_call`), and inside a loop body, a `while`
//! test or an `if` test in a loop an `RXT076` error; from an unmarked function the same call
//! is `RXT070` (kept on Python) or `RXT072` (rejected). A call to a native scalar function
//! is not modelled here (the host calls it directly; ours stays `RXT030`).

use rextio_ir::Diagnostic;
use ruff_python_ast::{Expr, ExprCall};

use super::{Value, Walker};
use crate::codes;
use crate::lower::ValueDef;
use crate::parse::span_of;
use crate::HelperKind;

impl Walker<'_> {
    /// The value of `call` when it names a scalar helper of the module; `None` leaves the call
    /// to the ordinary site path (anything else, an exempt tensor function included).
    pub(super) fn helper_call(&mut self, call: &ExprCall) -> Option<Value> {
        let Expr::Name(name) = &*call.func else {
            return None;
        };
        let id = name.id.as_str();
        if self.is_local(id) || self.ctx.imports.resolve_name(id).is_some() {
            return None;
        }
        let helper = self.ctx.helpers.get(id)?.clone();
        if helper.kind == HelperKind::ExemptOther {
            return None;
        }
        let positional_only = call.arguments.keywords.is_empty()
            && !call
                .arguments
                .args
                .iter()
                .any(|a| matches!(a, Expr::Starred(_)));
        if !positional_only {
            return None;
        }
        let span = span_of(call);
        let args: Vec<Value> = call.arguments.args.iter().map(|a| self.eval(a)).collect();
        let in_loop = !self.loops.is_empty() || self.loop_tests > 0;
        let error = |code: &'static str, message: String, label: &str| {
            Diagnostic::error(code, message).with_primary(span, label.to_string())
        };
        if !self.marked_native {
            let diagnostic = match helper.kind {
                HelperKind::Rejected => error(
                    codes::DEPENDENCY_REJECTED,
                    codes::dependency_rejected(&helper.qualified),
                    "this function is rejected, so its callers fall back",
                ),
                _ => error(
                    codes::CALLS_FALLBACK_ONLY,
                    codes::calls_fallback_only(&helper.qualified),
                    "this function stays on Python",
                ),
            }
            .with_suggestion(
                "mark the caller `@rextio.native` to call it back in Python (outside loops)",
            );
            self.out.diagnostics.push(diagnostic);
            return Some(Value::poisoned());
        }
        if in_loop {
            self.out.diagnostics.push(
                error(
                    codes::BOUNDARY_CALL_IN_LOOP,
                    codes::boundary_call_in_loop(&helper.qualified),
                    "a call back into Python inside a loop",
                )
                .with_suggestion("call it once before the loop and bind its result to a name"),
            );
            return Some(Value::poisoned());
        }
        if args.iter().any(|a| a.poisoned) {
            return Some(Value::poisoned());
        }
        let scalar = |v: &Value| matches!(v.ty.as_deref(), Some("int" | "float" | "bool"));
        let mut ids = Vec::new();
        // Scalar arguments, or none (`observe()`), as the reference accepts both.
        if let Some(ret) = helper.ret.filter(|_| args.iter().all(scalar)) {
            for (arg, expr) in args.iter().zip(&call.arguments.args) {
                match self.value_id(arg, span_of(expr)) {
                    Some(id) => ids.push(id),
                    None => return Some(Value::poisoned()),
                }
            }
            return Some(self.boundary_call(id, &helper.qualified, ids, ret, span));
        }
        // A tensor (or unknown) argument to a scalar function: not a boundary call.
        self.out.diagnostics.push(error(
            codes::NOT_LOWERED,
            codes::unresolved_call(id),
            "this call is not lowered by this build",
        ));
        Some(Value::poisoned())
    }

    /// Lowers a scalar boundary call (`RXT075`, a note) and returns its value.
    fn boundary_call(
        &mut self,
        callee: &str,
        qualified: &str,
        args: Vec<crate::lower::ValueId>,
        ret: rextio_ir::Type,
        span: rextio_ir::Span,
    ) -> Value {
        self.out.diagnostics.push(
            Diagnostic::error(
                codes::SCALAR_BOUNDARY_CALL,
                codes::scalar_boundary_call(qualified),
            )
            .with_primary(span, "called back in Python when this runs"),
        );
        if let Some(d) = self.out.diagnostics.last_mut() {
            d.severity = rextio_ir::Severity::Note;
        }
        let value = self.out.trace.push(
            ValueDef::BoundaryCall {
                callee: callee.to_string(),
                args,
                ret,
            },
            span,
        );
        Value {
            ty: Some(ret.to_string()),
            id: Some(value),
            ..Value::default()
        }
    }
}
