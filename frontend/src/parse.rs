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

/// The line starts of one source, for many [`line_column`] lookups in it: a lookup is a
/// binary search and a count within the line, where [`line_column`] scans the source up to
/// the offset (a module's report makes one lookup per site and diagnostic, which made it
/// quadratic in the module's size).
pub struct Lines<'a> {
    source: &'a str,
    /// Byte offset of each line's first byte; line 1 starts at 0.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(source: &'a str) -> Lines<'a> {
        let starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { source, starts }
    }

    /// What [`line_column`] gives for `offset` in this source.
    pub fn line_column(&self, offset: u32) -> (u32, u32) {
        let offset = char_floor(self.source, offset);
        // Lines starting at or before `offset`: the 1-based line it stands on (never 0, as
        // line 1 starts at 0).
        let line = self.starts.partition_point(|&start| start <= offset);
        let column = self.source[self.starts[line - 1]..offset].chars().count() + 1;
        (to_u32(line), to_u32(column))
    }
}

/// `offset`, clamped to the source and moved back to a char boundary.
fn char_floor(source: &str, offset: u32) -> usize {
    let mut offset = (offset as usize).min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// 1-based line and 1-based column (in characters, not bytes) of byte `offset`; for one
/// lookup (many in one source go through [`Lines`]).
pub fn line_column(source: &str, offset: u32) -> (u32, u32) {
    let before = &source[..char_floor(source, offset)];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    (to_u32(line), to_u32(column))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::{line_column, Lines};

    /// The index answers what the scan answers, at every offset (past the end, inside a
    /// multi-byte char, on and after each newline, on empty lines, with `\r\n`).
    #[test]
    fn lines_agree_with_the_scan_at_every_offset() {
        for source in [
            "",
            "\n",
            "x",
            "def f(x):\n    return x\n",
            "a\n\nb\r\nc\u{e9}\u{1F600}d\n\u{e9}",
        ] {
            let lines = Lines::new(source);
            for offset in 0..=source.len() as u32 + 2 {
                assert_eq!(
                    lines.line_column(offset),
                    line_column(source, offset),
                    "{source:?} at {offset}"
                );
            }
        }
        assert_eq!(line_column("a\n\u{e9}b", 5), (2, 3));
    }
}
