//! Parsing Python source with `ruff_python_parser`, and the source-position helpers every
//! later stage uses (byte spans, 1-based line/column in characters).
//!
//! A module with syntax errors is never analyzed further: each parse error becomes one
//! `RXPY-001` diagnostic at the error's range.

use rextio_ir::{Diagnostic, Span};
use ruff_python_ast::PySourceType;
use ruff_text_size::{Ranged, TextRange};

use crate::codes;
use crate::depth::{self, Ast};

/// Parses `source` as a module; `Err` carries one diagnostic per syntax error, or the one
/// saying that the module nests deeper than [`depth::MAX_DEPTH`] (RXT035).
pub fn parse_module(source: &str) -> Result<Ast, Vec<Diagnostic>> {
    let parsed = ruff_python_parser::parse_unchecked_source(source, PySourceType::Python);
    if parsed.errors().is_empty() {
        let module = Ast::new(parsed.into_syntax());
        let (depth, at) = depth::deepest(&module);
        if depth > depth::MAX_DEPTH {
            return Err(vec![too_deep(source, depth, at)]);
        }
        return Ok(module);
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

/// RXT035 at the deepest node (its first line: the node can span the whole function).
fn too_deep(source: &str, depth: usize, at: TextRange) -> Diagnostic {
    Diagnostic::error(
        codes::TOO_DEEP,
        format!(
            "this source nests {depth} syntax levels deep, more than the {} this compiler takes",
            depth::MAX_DEPTH
        ),
    )
    .with_primary(first_line(source, span(at)), "the deepest level is here")
    .with_note(format!(
        "a chain of method calls `x.f().g()...` is two levels per call, so at most {} calls; \
         split the expression into statements (`h = h.relu()`), which have no limit",
        depth::MAX_DEPTH / 2
    ))
    .with_note("nothing in this file is compiled (CPython itself refuses far shallower source)")
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
/// binary search and a count of at most [`BLOCK`] bytes, where [`line_column`] scans the
/// source up to the offset (a module's report makes one lookup per site and diagnostic, which
/// made it quadratic in the module's size). Columns count characters, and a line can be the
/// whole program (a chain of 100,000 calls is one 1.3 MB line), so the characters before
/// each [`BLOCK`]-byte boundary are counted once too: counting within a line was quadratic in
/// a long line's length.
pub struct Lines<'a> {
    source: &'a str,
    /// Byte offset of each line's first byte; line 1 starts at 0.
    starts: Vec<usize>,
    /// `chars_before[k]`: characters starting in `source[..k * BLOCK]`.
    chars_before: Vec<usize>,
}

/// Bytes between two counted boundaries of [`Lines`].
const BLOCK: usize = 256;

/// Whether `byte` starts a UTF-8 character (is not a continuation byte).
fn starts_char(byte: &u8) -> bool {
    (*byte as i8) >= -0x40
}

impl<'a> Lines<'a> {
    pub fn new(source: &'a str) -> Lines<'a> {
        let starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut chars_before = vec![0];
        for block in source.as_bytes().chunks(BLOCK) {
            let last = chars_before[chars_before.len() - 1];
            chars_before.push(last + block.iter().filter(|b| starts_char(b)).count());
        }
        Lines {
            source,
            starts,
            chars_before,
        }
    }

    /// Characters starting in `source[..offset]`.
    fn chars_to(&self, offset: usize) -> usize {
        let block = offset / BLOCK;
        let rest = &self.source.as_bytes()[block * BLOCK..offset];
        self.chars_before[block] + rest.iter().filter(|b| starts_char(b)).count()
    }

    /// What [`line_column`] gives for `offset` in this source.
    pub fn line_column(&self, offset: u32) -> (u32, u32) {
        let offset = char_floor(self.source, offset);
        // Lines starting at or before `offset`: the 1-based line it stands on (never 0, as
        // line 1 starts at 0).
        let line = self.starts.partition_point(|&start| start <= offset);
        let column = self.chars_to(offset) - self.chars_to(self.starts[line - 1]) + 1;
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
        // The last two lines cross the counted block boundaries with multi-byte chars.
        let long = format!(
            "{}\n{}x",
            "\u{e9}a".repeat(300),
            "x\u{1F600}.relu()".repeat(100)
        );
        for source in [
            "",
            "\n",
            "x",
            "def f(x):\n    return x\n",
            "a\n\nb\r\nc\u{e9}\u{1F600}d\n\u{e9}",
            long.as_str(),
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
