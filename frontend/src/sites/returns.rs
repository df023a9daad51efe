//! The check of a returned value's type against the function's return annotation
//! (`RXT033`; the host's `RXT010` words under the reference surface).

use rextio_ir::{Diagnostic, Span};

use super::{display_type, Walker};
use crate::claim::Surface;
use crate::codes;
use crate::imports::AnnotatedType;
use crate::lower::ir_type;

impl Walker<'_> {
    /// Checks the returned type against the return annotation; reports `RXT033` if not.
    pub(super) fn return_annotation_accepts(&mut self, ty: &str, expr_span: Span) -> bool {
        let annotated = &self.sig.ret;
        if *annotated == AnnotatedType::Missing {
            return true;
        }
        let shown = annotated.display();
        let Some(expected) = annotated.operand_type().filter(|t| ir_type(t).is_some()) else {
            let mut diagnostic = Diagnostic::error(
                codes::UNSUPPORTED_RETURN,
                format!("return type {shown} is not supported by native functions yet"),
            );
            if let Some(span) = self.sig.ret_span {
                diagnostic = diagnostic.with_primary(span, "this return annotation");
            }
            self.out.diagnostics.push(diagnostic);
            return false;
        };
        if expected == ty {
            return true;
        }
        // The host blocks the function (its words under the reference surface, RXT010; ours
        // under the extended one, RXT033), with our explanation beside it.
        let actual = display_type(Some(ty));
        if self.ctx.surface == Surface::Reference {
            self.blocker(
                expr_span,
                format!("inferred type {ty} does not match expected type {expected}"),
            );
        } else {
            self.blocker_with(
                codes::UNSUPPORTED_RETURN,
                expr_span,
                format!(
                    "this returns a {actual}, but the function is annotated to return a {shown}"
                ),
                "returned here",
            );
        }
        if let Some(last) = self.out.blockers.last_mut() {
            let mut diagnostic = last.clone();
            if self.ctx.surface == Surface::Reference {
                diagnostic = diagnostic.with_note(format!(
                    "annotated {shown}, but the returned value is {actual}"
                ));
            }
            if let Some(span) = self.sig.ret_span {
                diagnostic = diagnostic.with_secondary(span, "annotated here");
            }
            *last = diagnostic;
        }
        false
    }
}
