//! Parsing Python source with `ruff_python_parser`, and the source-position helpers every
//! later stage uses (byte spans, 1-based line/column in characters).
//!
//! A module with syntax errors is never analyzed further: each parse error becomes one
//! `RXPY-001` diagnostic at the error's range.

use rextio_ir::{Diagnostic, Span};
use ruff_python_ast::{ModModule, PySourceType};
use ruff_text_size::{Ranged, TextRange};

use crate::codes;

/// Parses `source` as a module; `Err` carries one diagnostic per syntax error.
pub fn parse_module(source: &str) -> Result<ModModule, Vec<Diagnostic>> {
    let parsed = ruff_python_parser::parse_unchecked_source(source, PySourceType::Python);
    if parsed.errors().is_empty() {
        return Ok(parsed.into_syntax());
    }
    let mut errors: Vec<_> = parsed.errors().iter().collect();
    errors.sort_by_key(|error| error.range().start());
    let diagnostics = errors
        .into_iter()
        .map(|error| {
            Diagnostic::error(
                codes::SYNTAX,
                format!("invalid Python syntax: {}", error.error),
            )
            .with_primary(
                first_line(source, span(error.range())),
                "the parser stopped here",
            )
            .with_note("nothing in this file is compiled until it parses")
        })
        .collect();
    Err(diagnostics)
}

/// `span` cut before its first newline (errors at a line end point at the line end only).
pub fn first_line(source: &str, span: Span) -> Span {
    let text = source.get(span.range()).unwrap_or("");
    match text.find('\n') {
        Some(newline) => Span::new(span.start, span.start + newline as u32),
        None => span,
    }
}

/// The byte span of a syntax node or token range.
pub fn span(range: TextRange) -> Span {
    Span::new(range.start().to_u32(), range.end().to_u32())
}

/// The span of anything with a range.
pub fn span_of(node: &impl Ranged) -> Span {
    span(node.range())
}

/// 1-based line and 1-based column (in characters, not bytes) of byte `offset`.
pub fn line_column(source: &str, offset: u32) -> (u32, u32) {
    let mut offset = (offset as usize).min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    (to_u32(line), to_u32(column))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
