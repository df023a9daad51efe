//! The parser of the text form written by [`crate::print`]: a hand-written lexer and a
//! recursive-descent parser over its tokens.
//!
//! It checks syntax only: op names, operand counts, attribute spelling, literal ranges, and
//! that every `%label` is defined once before it is used. Labels may be any `%name`; values
//! are numbered densely in definition order, so printing renumbers them. Typing and the other
//! IR invariants are the validator's job. A trailing `# name` on a definition goes into the
//! function's `names` table; comments anywhere else are ignored. No input makes it panic.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::expr::{
    AttentionScale, BagMode, BinaryOp, CompareOp, ElementwiseOp, ExprId, ExprKind, ExtremumOp,
    FillKind, FloatBits, FusedReduce, FusedTail, JoinKind, NormPrologue, ParamUnaryOp,
    PrologueStep, ReduceKind, Residual, ScalarOp, ScalarUnaryOp, SoftmaxKind, TensorScalarOp,
    ToScalarKind, UnaryOp, ViewKind, WeightLayout, WholeReduceOp,
};
use crate::function::{
    Block, Carried, ForLoop, Function, IfElse, Iteration, Module, Param, Stmt, WhileLoop,
};
use crate::types::{DType, Device, TensorType, Type};

/// A syntax error, with the 1-based line and column (in characters) where it was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

/// Parses exactly one function (blank lines and comment lines around it are allowed).
pub fn parse_function(text: &str) -> Result<Function, ParseError> {
    let mut parser = Parser::new(text)?;
    parser.skip_blank_lines();
    if parser.at(&TokenKind::Eof) {
        return Err(parser.error_here("expected `fn`"));
    }
    let function = parser.function()?;
    parser.skip_blank_lines();
    if !parser.at(&TokenKind::Eof) {
        return Err(parser.error_here(
            "expected end of input after the function (use `parse_module` for several functions)",
        ));
    }
    Ok(function)
}

/// Parses any number of functions; `source_name` becomes the module's source name (the text
/// form does not carry it).
pub fn parse_module(text: &str, source_name: &str) -> Result<Module, ParseError> {
    let mut parser = Parser::new(text)?;
    let mut functions = Vec::new();
    loop {
        parser.skip_blank_lines();
        if parser.at(&TokenKind::Eof) {
            break;
        }
        functions.push(parser.function()?);
    }
    Ok(Module {
        source_name: source_name.to_string(),
        functions,
    })
}

// ---------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum TokenKind {
    /// Keywords, op mnemonics (`const.int`, `fused_linear`), type words, attribute keys.
    Ident(String),
    /// `%label`, without the `%`.
    Label(String),
    /// An optionally negative decimal literal, kept as text so that a number too large for
    /// its slot is reported where it stands rather than when it is lexed.
    Int(String),
    /// One of `( ) { } < > [ ] , : =`.
    Punct(char),
    Arrow,
    /// The text after `#`, trimmed.
    Comment(String),
    Newline,
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    kind: TokenKind,
    line: usize,
    column: usize,
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Ident(word) => write!(f, "`{word}`"),
            TokenKind::Label(label) => write!(f, "`%{label}`"),
            TokenKind::Int(digits) => write!(f, "`{digits}`"),
            TokenKind::Punct(c) => write!(f, "`{c}`"),
            TokenKind::Arrow => f.write_str("`->`"),
            TokenKind::Comment(_) => f.write_str("a comment"),
            TokenKind::Newline => f.write_str("end of line"),
            TokenKind::Eof => f.write_str("end of input"),
        }
    }
}

const PUNCTUATION: &str = "(){}<>[],:=";

fn is_label_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.'
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    column: usize,
}

impl Lexer<'_> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let mut taken = String::new();
        while let Some(&c) = self.chars.peek() {
            if !keep(c) {
                break;
            }
            taken.push(c);
            self.bump();
        }
        taken
    }
}

impl Lexer<'_> {
    /// Digits, then optionally a fraction and an exponent (`12`, `1.5`, `1e-7`, `2.5E+10`).
    /// Integer slots reject the fraction and exponent when they parse the text.
    fn number(&mut self) -> String {
        let mut text = self.take_while(|c| c.is_ascii_digit());
        if self.chars.peek() == Some(&'.') {
            text.push('.');
            self.bump();
            text.push_str(&self.take_while(|c| c.is_ascii_digit()));
        }
        if matches!(self.chars.peek(), Some('e' | 'E')) {
            text.push('e');
            self.bump();
            if let Some(&sign @ ('+' | '-')) = self.chars.peek() {
                text.push(sign);
                self.bump();
            }
            text.push_str(&self.take_while(|c| c.is_ascii_digit()));
        }
        text
    }
}

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut lexer = Lexer {
        chars: text.chars().peekable(),
        line: 1,
        column: 1,
    };
    let mut tokens = Vec::new();
    while let Some(&c) = lexer.chars.peek() {
        let (line, column) = (lexer.line, lexer.column);
        let error = |message: String| ParseError {
            message,
            line,
            column,
        };
        let kind = match c {
            '\n' => {
                lexer.bump();
                TokenKind::Newline
            }
            // `\r` counts as a blank so that CRLF text parses like LF text.
            _ if c.is_whitespace() => {
                lexer.bump();
                continue;
            }
            '#' => {
                lexer.bump();
                TokenKind::Comment(lexer.take_while(|c| c != '\n').trim().to_string())
            }
            '%' => {
                lexer.bump();
                let label = lexer.take_while(is_label_char);
                if label.is_empty() {
                    return Err(error("expected a value label after `%`".to_string()));
                }
                TokenKind::Label(label)
            }
            '-' => {
                lexer.bump();
                match lexer.chars.peek() {
                    Some('>') => {
                        lexer.bump();
                        TokenKind::Arrow
                    }
                    Some(d) if d.is_ascii_digit() => TokenKind::Int(format!("-{}", lexer.number())),
                    Some(c) if is_ident_start(*c) => {
                        TokenKind::Ident(format!("-{}", lexer.take_while(is_ident_char)))
                    }
                    _ => return Err(error("expected `->` or a number after `-`".to_string())),
                }
            }
            _ if c.is_ascii_digit() => TokenKind::Int(lexer.number()),
            _ if is_ident_start(c) => TokenKind::Ident(lexer.take_while(is_ident_char)),
            _ if PUNCTUATION.contains(c) => {
                lexer.bump();
                TokenKind::Punct(c)
            }
            _ => {
                return Err(error(format!(
                    "unexpected character `{}`",
                    c.escape_debug()
                )))
            }
        };
        tokens.push(Token { kind, line, column });
    }
    tokens.push(Token {
        kind: TokenKind::Eof,
        line: lexer.line,
        column: lexer.column,
    });
    Ok(tokens)
}

// ---------------------------------------------------------------------------------------
// Parser

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// Returned when reading past the end, so that lookahead never indexes out of bounds.
    eof: Token,
}

/// A defined label: its value and the line that defined it (for duplicate reports).
struct Definition {
    id: ExprId,
    line: usize,
}

type Labels = HashMap<String, Definition>;

/// How a block ends: at `}`, or (a `while` condition) at `test %c` and `}`; a function body
/// must contain a `return`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockEnd {
    Brace,
    Test,
    Function,
}

impl Parser {
    fn new(text: &str) -> Result<Parser, ParseError> {
        let tokens = lex(text)?;
        let eof = match tokens.last() {
            Some(last) => last.clone(),
            None => Token {
                kind: TokenKind::Eof,
                line: 1,
                column: 1,
            },
        };
        Ok(Parser {
            tokens,
            pos: 0,
            eof,
        })
    }

    fn peek_nth(&self, n: usize) -> &Token {
        self.tokens.get(self.pos + n).unwrap_or(&self.eof)
    }

    fn peek(&self) -> &Token {
        self.peek_nth(0)
    }

    fn at(&self, kind: &TokenKind) -> bool {
        &self.peek().kind == kind
    }

    fn bump(&mut self) -> Token {
        let token = self.peek().clone();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        token
    }

    fn error_at(token: &Token, message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
            line: token.line,
            column: token.column,
        }
    }

    /// `"{expected}, found {next token}"` at the next token.
    fn error_here(&self, expected: &str) -> ParseError {
        let token = self.peek();
        Parser::error_at(token, format!("{expected}, found {}", token.kind))
    }

    fn skip_blank_lines(&mut self) {
        while matches!(self.peek().kind, TokenKind::Newline | TokenKind::Comment(_)) {
            self.bump();
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<Token, ParseError> {
        if self.at(&TokenKind::Punct(c)) {
            Ok(self.bump())
        } else {
            Err(self.error_here(&format!("expected `{c}`")))
        }
    }

    fn expect_ident(&mut self, what: &str) -> Result<(String, Token), ParseError> {
        match &self.peek().kind {
            TokenKind::Ident(word) => {
                let word = word.clone();
                Ok((word, self.bump()))
            }
            _ => Err(self.error_here(&format!("expected {what}"))),
        }
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<Token, ParseError> {
        match &self.peek().kind {
            TokenKind::Ident(word) if word == keyword => Ok(self.bump()),
            _ => Err(self.error_here(&format!("expected `{keyword}`"))),
        }
    }

    fn expect_label(&mut self, what: &str) -> Result<(String, Token), ParseError> {
        match &self.peek().kind {
            TokenKind::Label(label) => {
                let label = label.clone();
                Ok((label, self.bump()))
            }
            _ => Err(self.error_here(&format!("expected {what}"))),
        }
    }

    /// A decimal literal that must fit in `T`; `what` names the slot for the messages.
    fn expect_number<T: FromStr>(&mut self, what: &str) -> Result<T, ParseError> {
        match &self.peek().kind {
            TokenKind::Int(digits) => {
                let parsed = digits.parse::<T>().map_err(|_| {
                    Parser::error_at(
                        self.peek(),
                        format!("`{digits}` is out of range for {what}"),
                    )
                });
                let value = parsed?;
                self.bump();
                Ok(value)
            }
            _ => Err(self.error_here(&format!("expected {what}"))),
        }
    }

    /// A float literal as [`crate::print::float_text`] writes it.
    fn expect_float(&mut self) -> Result<f64, ParseError> {
        let value = match &self.peek().kind {
            TokenKind::Int(text) => text.parse::<f64>().ok(),
            TokenKind::Ident(word) => match word.as_str() {
                "inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                "nan" => Some(f64::NAN),
                _ => None,
            },
            _ => None,
        };
        match value {
            Some(value) => {
                self.bump();
                Ok(value)
            }
            None => {
                Err(self.error_here("expected a float (`1.5`, `1e-7`, `inf`, `-inf` or `nan`)"))
            }
        }
    }

    fn expect_bool(&mut self, what: &str) -> Result<bool, ParseError> {
        let value = match &self.peek().kind {
            TokenKind::Ident(word) if word == "true" => true,
            TokenKind::Ident(word) if word == "false" => false,
            _ => return Err(self.error_here(&format!("expected `true` or `false` for {what}"))),
        };
        self.bump();
        Ok(value)
    }

    /// The end of a line: an optional comment (ignored), then a newline or the end of input.
    fn end_of_line(&mut self) -> Result<(), ParseError> {
        if matches!(self.peek().kind, TokenKind::Comment(_)) {
            self.bump();
        }
        match self.peek().kind {
            TokenKind::Newline => {
                self.bump();
                Ok(())
            }
            TokenKind::Eof => Ok(()),
            _ => Err(self.error_here("expected end of line")),
        }
    }

    // fn NAME(%p: TYPE, ...) -> TYPE { BODY }
    fn function(&mut self) -> Result<Function, ParseError> {
        self.expect_keyword("fn")?;
        let (name, _) = self.expect_ident("a function name")?;
        self.expect_punct('(')?;
        let mut params = Vec::new();
        if !self.at(&TokenKind::Punct(')')) {
            loop {
                let (param_name, _) = self.expect_label("a parameter `%name`")?;
                self.expect_punct(':')?;
                let ty = self.ty()?;
                params.push(Param {
                    name: param_name,
                    ty,
                });
                if !self.at(&TokenKind::Punct(',')) {
                    break;
                }
                self.bump();
            }
        }
        self.expect_punct(')')?;
        if !self.at(&TokenKind::Arrow) {
            return Err(self.error_here("expected `->` and the result type"));
        }
        self.bump();
        let ret = self.ty()?;
        self.expect_punct('{')?;
        self.end_of_line()?;
        let mut function = Function::new(name, params, ret);
        self.body(&mut function)?;
        Ok(function)
    }

    // The function body: a block closed by `}`.
    fn body(&mut self, function: &mut Function) -> Result<(), ParseError> {
        let mut labels = Labels::new();
        let (block, _) = self.block(function, &mut labels, BlockEnd::Function)?;
        function.body = block;
        self.end_of_line()
    }

    /// Statements up to the `}` that closes the block (consumed); a `while` condition block
    /// ends with `test %c` before its `}`, returned as the second value.
    fn block(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
        end: BlockEnd,
    ) -> Result<(Block, Option<ExprId>), ParseError> {
        let mut block = Block::default();
        loop {
            self.skip_blank_lines();
            let token = self.peek().clone();
            match &token.kind {
                TokenKind::Punct('}') => {
                    if end == BlockEnd::Test {
                        return Err(Parser::error_at(
                            &token,
                            "expected `test %value` before `}`",
                        ));
                    }
                    if end == BlockEnd::Function {
                        let mut returns = false;
                        block.walk(&mut |stmt| returns |= matches!(stmt, Stmt::Return(_)));
                        if !returns {
                            return Err(Parser::error_at(
                                &token,
                                format!("function `{}` has no `return`", function.name),
                            ));
                        }
                    }
                    self.bump();
                    return Ok((block, None));
                }
                TokenKind::Label(_) => {
                    let id = self.definition(function, labels)?;
                    block.stmts.push(Stmt::Let(id));
                }
                TokenKind::Ident(word) => {
                    let word = word.clone();
                    match word.as_str() {
                        "return" => {
                            self.bump();
                            let value = self.operand(labels, "the returned value")?;
                            self.end_of_line()?;
                            block.stmts.push(Stmt::Return(value));
                        }
                        "continue" | "break" | "yield" => {
                            self.bump();
                            let values = self.value_list(labels, &word)?;
                            self.end_of_line()?;
                            block.stmts.push(match word.as_str() {
                                "continue" => Stmt::Continue(values),
                                "break" => Stmt::Break(values),
                                _ => Stmt::Yield(values),
                            });
                        }
                        "test" if end == BlockEnd::Test => {
                            self.bump();
                            let cond = self.operand(labels, "the loop condition")?;
                            self.end_of_line()?;
                            self.skip_blank_lines();
                            self.expect_punct('}')?;
                            return Ok((block, Some(cond)));
                        }
                        "for" => block.stmts.push(self.for_loop(function, labels)?),
                        "while" => block.stmts.push(self.while_loop(function, labels)?),
                        "if" => block.stmts.push(self.if_else(function, labels)?),
                        _ => return Err(self.error_here("expected a statement or `}`")),
                    }
                }
                TokenKind::Eof => {
                    return Err(Parser::error_at(
                        &token,
                        format!(
                            "unexpected end of input: function `{}` is missing its closing `}}`",
                            function.name
                        ),
                    ));
                }
                _ => return Err(self.error_here("expected a statement or `}`")),
            }
        }
    }

    /// Zero or more comma-separated values, up to the end of the line.
    fn value_list(&mut self, labels: &Labels, what: &str) -> Result<Vec<ExprId>, ParseError> {
        let mut values = Vec::new();
        if !matches!(self.peek().kind, TokenKind::Label(_)) {
            return Ok(values);
        }
        loop {
            values.push(self.operand(labels, &format!("a value of `{what}`"))?);
            if !self.at(&TokenKind::Punct(',')) {
                return Ok(values);
            }
            self.bump();
        }
    }

    /// `%label: TYPE` of a value a statement binds: a new `bound` expression.
    fn binding(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
    ) -> Result<ExprId, ParseError> {
        let (label, token) = self.expect_label("a value label")?;
        self.expect_punct(':')?;
        let ty = self.ty()?;
        self.define(function, labels, label, &token, ExprKind::Bound, ty)
    }

    fn define(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
        label: String,
        token: &Token,
        kind: ExprKind,
        ty: Type,
    ) -> Result<ExprId, ParseError> {
        if let Some(previous) = labels.get(&label) {
            return Err(Parser::error_at(
                token,
                format!(
                    "value `%{label}` is already defined on line {}",
                    previous.line
                ),
            ));
        }
        let id = function.push(kind, ty);
        labels.insert(
            label,
            Definition {
                id,
                line: token.line,
            },
        );
        Ok(id)
    }

    // ` carry(%a: TYPE = %init -> %result, ...)`, or nothing.
    fn carried(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
    ) -> Result<Vec<Carried>, ParseError> {
        let mut carried = Vec::new();
        if !matches!(&self.peek().kind, TokenKind::Ident(w) if w == "carry") {
            return Ok(carried);
        }
        self.bump();
        self.expect_punct('(')?;
        loop {
            let (label, token) = self.expect_label("a carried value `%name`")?;
            self.expect_punct(':')?;
            let ty = self.ty()?;
            self.expect_punct('=')?;
            let init = self.operand(labels, "the carried value's initial value")?;
            if !self.at(&TokenKind::Arrow) {
                return Err(self.error_here("expected `->` and the loop's result"));
            }
            self.bump();
            let arg = self.define(function, labels, label, &token, ExprKind::Bound, ty)?;
            let (result_label, result_token) = self.expect_label("the loop's result `%name`")?;
            let result = self.define(
                function,
                labels,
                result_label,
                &result_token,
                ExprKind::Bound,
                ty,
            )?;
            carried.push(Carried { arg, init, result });
            if self.at(&TokenKind::Punct(',')) {
                self.bump();
            } else {
                self.expect_punct(')')?;
                return Ok(carried);
            }
        }
    }

    // for %i: int in range(%a, %b, %c) | values[1, 2] [carry(...)] { BLOCK }
    fn for_loop(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
    ) -> Result<Stmt, ParseError> {
        self.expect_keyword("for")?;
        let index = self.binding(function, labels)?;
        self.expect_keyword("in")?;
        let (word, token) = self.expect_ident("`range(...)` or `values[...]`")?;
        let iteration = match word.as_str() {
            "range" => {
                self.expect_punct('(')?;
                let start = self.operand(labels, "the range start")?;
                self.expect_punct(',')?;
                let stop = self.operand(labels, "the range stop")?;
                self.expect_punct(',')?;
                let step = self.operand(labels, "the range step")?;
                self.expect_punct(')')?;
                Iteration::Range { start, stop, step }
            }
            "values" => {
                self.expect_punct('[')?;
                let mut values = Vec::new();
                if !self.at(&TokenKind::Punct(']')) {
                    loop {
                        values.push(self.expect_number::<i64>("a 64-bit integer")?);
                        if !self.at(&TokenKind::Punct(',')) {
                            break;
                        }
                        self.bump();
                    }
                }
                self.expect_punct(']')?;
                Iteration::Values(values)
            }
            _ => {
                return Err(Parser::error_at(
                    &token,
                    format!("unknown iteration `{word}` (expected `range` or `values`)"),
                ))
            }
        };
        let carried = self.carried(function, labels)?;
        self.expect_punct('{')?;
        self.end_of_line()?;
        let (body, _) = self.block(function, labels, BlockEnd::Brace)?;
        self.end_of_line()?;
        Ok(Stmt::For(Box::new(ForLoop {
            index,
            iteration,
            carried,
            body,
        })))
    }

    // while [carry(...)] { BLOCK test %c } do { BLOCK }
    fn while_loop(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
    ) -> Result<Stmt, ParseError> {
        self.expect_keyword("while")?;
        let carried = self.carried(function, labels)?;
        self.expect_punct('{')?;
        self.end_of_line()?;
        let (cond_block, cond) = self.block(function, labels, BlockEnd::Test)?;
        let Some(cond) = cond else {
            return Err(self.error_here("expected `test %value`"));
        };
        self.expect_keyword("do")?;
        self.expect_punct('{')?;
        self.end_of_line()?;
        let (body, _) = self.block(function, labels, BlockEnd::Brace)?;
        self.end_of_line()?;
        Ok(Stmt::While(Box::new(WhileLoop {
            carried,
            cond_block,
            cond,
            body,
        })))
    }

    // if %c [-> (%r: TYPE, ...)] { BLOCK } else { BLOCK }
    fn if_else(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
    ) -> Result<Stmt, ParseError> {
        self.expect_keyword("if")?;
        let cond = self.operand(labels, "the condition")?;
        let mut pending = Vec::new();
        if self.at(&TokenKind::Arrow) {
            self.bump();
            self.expect_punct('(')?;
            loop {
                let (label, token) = self.expect_label("a result `%name`")?;
                self.expect_punct(':')?;
                let ty = self.ty()?;
                pending.push((label, token, ty));
                if self.at(&TokenKind::Punct(',')) {
                    self.bump();
                } else {
                    self.expect_punct(')')?;
                    break;
                }
            }
        }
        self.expect_punct('{')?;
        self.end_of_line()?;
        // Results are allocated before the arms (arena order stays a definition order for
        // expressions) but can be named only after the statement.
        let results: Vec<ExprId> = pending
            .iter()
            .map(|(_, _, ty)| function.push(ExprKind::Bound, *ty))
            .collect();
        let (then_block, _) = self.block(function, labels, BlockEnd::Brace)?;
        self.expect_keyword("else")?;
        self.expect_punct('{')?;
        self.end_of_line()?;
        let (else_block, _) = self.block(function, labels, BlockEnd::Brace)?;
        self.end_of_line()?;
        for ((label, token, _), id) in pending.into_iter().zip(&results) {
            if let Some(previous) = labels.get(&label) {
                return Err(Parser::error_at(
                    &token,
                    format!(
                        "value `%{label}` is already defined on line {}",
                        previous.line
                    ),
                ));
            }
            labels.insert(
                label,
                Definition {
                    id: *id,
                    line: token.line,
                },
            );
        }
        Ok(Stmt::If(Box::new(IfElse {
            cond,
            then_block,
            else_block,
            results,
        })))
    }

    // %label: TYPE = OP  [# name]
    fn definition(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
    ) -> Result<ExprId, ParseError> {
        let (label, label_token) = self.expect_label("a value label")?;
        if let Some(previous) = labels.get(&label) {
            return Err(Parser::error_at(
                &label_token,
                format!(
                    "value `%{label}` is already defined on line {}",
                    previous.line
                ),
            ));
        }
        self.expect_punct(':')?;
        let ty = self.ty()?;
        self.expect_punct('=')?;
        let kind = self.op(labels)?;
        let name = match &self.peek().kind {
            TokenKind::Comment(text) if !text.is_empty() => Some(text.clone()),
            _ => None,
        };
        self.end_of_line()?;
        let id = function.push(kind, ty);
        if let Some(name) = name {
            function.names.insert(id, name);
        }
        labels.insert(
            label,
            Definition {
                id,
                line: label_token.line,
            },
        );
        Ok(id)
    }

    // int | bool | tensor<DTYPE, DEVICE, RANK>
    fn ty(&mut self) -> Result<Type, ParseError> {
        let (word, token) =
            self.expect_ident("a type (`tensor<...>`, `int`, `bool` or `float`)")?;
        match word.as_str() {
            "int" => Ok(Type::Int),
            "bool" => Ok(Type::Bool),
            "float" => Ok(Type::Float),
            "tensor" => {
                self.expect_punct('<')?;
                let (dtype_word, dtype_token) =
                    self.expect_ident("a dtype (`f32`, `i64`, `f64` or `bf16`)")?;
                let dtype = match dtype_word.as_str() {
                    "f32" => DType::F32,
                    "i64" => DType::I64,
                    "f64" => DType::F64,
                    "bf16" => DType::BF16,
                    _ => {
                        return Err(Parser::error_at(
                            &dtype_token,
                            format!(
                            "unknown dtype `{dtype_word}` (expected `f32`, `i64`, `f64` or `bf16`)"
                        ),
                        ))
                    }
                };
                self.expect_punct(',')?;
                let (device_word, device_token) =
                    self.expect_ident("a device (`cpu` or `cuda0`)")?;
                let device = match device_word.as_str() {
                    "cpu" => Device::Cpu,
                    "cuda0" => Device::Cuda0,
                    _ => {
                        return Err(Parser::error_at(
                            &device_token,
                            format!("unknown device `{device_word}` (expected `cpu` or `cuda0`)"),
                        ))
                    }
                };
                self.expect_punct(',')?;
                let rank = self.expect_number::<u8>("a rank (0..=255)")?;
                self.expect_punct('>')?;
                Ok(Type::Tensor(TensorType {
                    dtype,
                    device,
                    rank,
                }))
            }
            _ => Err(Parser::error_at(
                &token,
                format!("unknown type `{word}` (expected `tensor<...>`, `int`, `bool` or `float`)"),
            )),
        }
    }

    /// A use of a defined value.
    fn operand(&mut self, labels: &Labels, what: &str) -> Result<ExprId, ParseError> {
        let (label, token) = self.expect_label(what)?;
        match labels.get(&label) {
            Some(definition) => Ok(definition.id),
            None => Err(Parser::error_at(
                &token,
                format!("undefined value `%{label}`"),
            )),
        }
    }

    /// The operands of an op: one or more comma-separated values. The list ends at the first
    /// comma not followed by a value, where the attributes begin. Callers check the count.
    fn operand_list(&mut self, mnemonic: &str, labels: &Labels) -> Result<Vec<ExprId>, ParseError> {
        let what = format!("an operand of `{mnemonic}`");
        let mut operands = vec![self.operand(labels, &what)?];
        while self.at(&TokenKind::Punct(','))
            && matches!(self.peek_nth(1).kind, TokenKind::Label(_))
        {
            self.bump();
            operands.push(self.operand(labels, &what)?);
        }
        Ok(operands)
    }

    fn arity_error(op: &Token, mnemonic: &str, expected: &str, found: usize) -> ParseError {
        Parser::error_at(op, format!("`{mnemonic}` takes {expected}, found {found}"))
    }

    fn one_operand(
        &mut self,
        op: &Token,
        mnemonic: &str,
        labels: &Labels,
    ) -> Result<ExprId, ParseError> {
        match self.operand_list(mnemonic, labels)?.as_slice() {
            [input] => Ok(*input),
            other => Err(Parser::arity_error(op, mnemonic, "1 operand", other.len())),
        }
    }

    fn two_operands(
        &mut self,
        op: &Token,
        mnemonic: &str,
        labels: &Labels,
    ) -> Result<(ExprId, ExprId), ParseError> {
        match self.operand_list(mnemonic, labels)?.as_slice() {
            [lhs, rhs] => Ok((*lhs, *rhs)),
            other => Err(Parser::arity_error(op, mnemonic, "2 operands", other.len())),
        }
    }

    /// `input, weight[, bias]` of `linear` and `fused_linear`.
    fn linear_operands(
        &mut self,
        op: &Token,
        mnemonic: &str,
        labels: &Labels,
    ) -> Result<(ExprId, ExprId, Option<ExprId>), ParseError> {
        match self.operand_list(mnemonic, labels)?.as_slice() {
            [input, weight] => Ok((*input, *weight, None)),
            [input, weight, bias] => Ok((*input, *weight, Some(*bias))),
            other => Err(Parser::arity_error(
                op,
                mnemonic,
                "2 or 3 operands",
                other.len(),
            )),
        }
    }

    /// `, key=` before an attribute value.
    fn attribute_key(&mut self, key: &str) -> Result<(), ParseError> {
        if !self.at(&TokenKind::Punct(',')) {
            return Err(self.error_here(&format!("expected `, {key}=`")));
        }
        self.bump();
        self.expect_keyword(key)?;
        self.expect_punct('=')?;
        Ok(())
    }

    // `dim=D, keepdim=B` (the leading comma is part of each attribute).
    fn dim_keepdim(&mut self) -> Result<(u8, bool), ParseError> {
        self.attribute_key("dim")?;
        let dim = self.expect_number::<u8>("a dim (0..=255)")?;
        self.attribute_key("keepdim")?;
        let keepdim = self.expect_bool("keepdim")?;
        Ok((dim, keepdim))
    }

    // The right-hand side of a definition.
    fn op(&mut self, labels: &Labels) -> Result<ExprKind, ParseError> {
        let (mnemonic, op) = self.expect_ident("an op")?;
        let m = mnemonic.as_str();
        if let Some(unary) = UnaryOp::from_name(m) {
            let input = self.one_operand(&op, m, labels)?;
            return Ok(ExprKind::Unary { op: unary, input });
        }
        if let Some(binary) = BinaryOp::from_name(m) {
            let (lhs, rhs) = self.two_operands(&op, m, labels)?;
            return Ok(ExprKind::Binary {
                op: binary,
                lhs,
                rhs,
            });
        }
        if let Some(scalar_op) = TensorScalarOp::from_name(m) {
            let (tensor, scalar) = self.two_operands(&op, m, labels)?;
            return Ok(ExprKind::TensorScalar {
                op: scalar_op,
                tensor,
                scalar,
            });
        }
        if let Some(param_op) = ParamUnaryOp::from_name(m) {
            let expected = format!("{} operands", 1 + param_op.arity());
            return match (param_op.arity(), self.operand_list(m, labels)?.as_slice()) {
                (1, [input, first]) => Ok(ExprKind::ParamUnary {
                    op: param_op,
                    input: *input,
                    first: *first,
                    second: None,
                }),
                (2, [input, first, second]) => Ok(ExprKind::ParamUnary {
                    op: param_op,
                    input: *input,
                    first: *first,
                    second: Some(*second),
                }),
                (_, other) => Err(Parser::arity_error(&op, m, &expected, other.len())),
            };
        }
        if let Some(scalar) = ScalarOp::from_name(m) {
            let (lhs, rhs) = self.two_operands(&op, m, labels)?;
            return Ok(ExprKind::Scalar {
                op: scalar,
                lhs,
                rhs,
            });
        }
        if let Some(scalar) = ScalarUnaryOp::from_name(m) {
            let input = self.one_operand(&op, m, labels)?;
            return Ok(ExprKind::ScalarUnary { op: scalar, input });
        }
        if let Some(kind) = ReduceKind::from_name(m) {
            let input = self.one_operand(&op, m, labels)?;
            let (dim, keepdim) = self.dim_keepdim()?;
            return Ok(ExprKind::Reduce {
                kind,
                input,
                dim,
                keepdim,
            });
        }
        if let Some(kind) = SoftmaxKind::from_name(m) {
            let input = self.one_operand(&op, m, labels)?;
            self.attribute_key("dim")?;
            let dim = self.expect_number::<u8>("a dim (0..=255)")?;
            return Ok(ExprKind::Softmax { kind, input, dim });
        }
        if let Some(kind) = ViewKind::from_name(m) {
            // The input, then `reshape`/`view`'s sizes, then `unsqueeze`/`squeeze`'s dim.
            let mut operands = self.operand_list(m, labels)?;
            let input = operands.remove(0);
            if !kind.takes_sizes() && !operands.is_empty() {
                return Err(Parser::arity_error(&op, m, "1 operand", operands.len() + 1));
            }
            // A transpose's `dim` (the first of the two dims it swaps) is written only where
            // it is not 0: a rank-3 `transpose(1, 2)`.
            let transpose_dim = kind == ViewKind::Transpose && self.at(&TokenKind::Punct(','));
            let dim = if kind.takes_dim() || transpose_dim {
                self.attribute_key("dim")?;
                self.expect_number::<u8>("a dim (0..=255)")?
            } else {
                0
            };
            return Ok(ExprKind::View {
                kind,
                input,
                sizes: operands,
                dim,
            });
        }
        if let Some(extremum) = ExtremumOp::from_name(m) {
            let input = self.one_operand(&op, m, labels)?;
            let (dim, keepdim) = self.dim_keepdim()?;
            return Ok(ExprKind::Extremum {
                op: extremum,
                input,
                dim,
                keepdim,
            });
        }
        if let Some(kind) = FillKind::from_name(m) {
            // The input, then `full_like`'s value.
            let mut operands = self.operand_list(m, labels)?;
            let input = operands.remove(0);
            let expected = usize::from(kind.takes_value());
            if operands.len() != expected {
                let want = format!("{} operand(s)", expected + 1);
                return Err(Parser::arity_error(&op, m, &want, operands.len() + 1));
            }
            return Ok(ExprKind::FillLike {
                kind,
                input,
                value: operands.pop(),
            });
        }
        if m == "index_select" {
            let (input, ids) = self.two_operands(&op, m, labels)?;
            self.attribute_key("dim")?;
            let dim = self.expect_number::<u8>("a dim (0..=255)")?;
            return Ok(ExprKind::IndexSelect { input, ids, dim });
        }
        if m == "normalize" {
            let input = self.one_operand(&op, m, labels)?;
            self.attribute_key("p")?;
            let p = FloatBits::new(self.expect_float()?);
            self.attribute_key("dim")?;
            let dim = self.expect_number::<u8>("a dim (0..=255)")?;
            self.attribute_key("eps")?;
            let eps = FloatBits::new(self.expect_float()?);
            return Ok(ExprKind::Normalize { input, p, dim, eps });
        }
        if let Some(reduce) = WholeReduceOp::from_name(m) {
            let input = self.one_operand(&op, m, labels)?;
            return Ok(ExprKind::ReduceAll { op: reduce, input });
        }
        if let Some(kind) = ToScalarKind::from_name(m) {
            let input = self.one_operand(&op, m, labels)?;
            return Ok(ExprKind::ToScalar { kind, input });
        }
        if let Some(cmp) = CompareOp::ALL.into_iter().find(|c| c.truth_name() == m) {
            let (lhs, rhs) = self.two_operands(&op, m, labels)?;
            return Ok(ExprKind::TensorTruth { op: cmp, lhs, rhs });
        }
        if m == "size" {
            let input = self.one_operand(&op, m, labels)?;
            self.attribute_key("dim")?;
            let dim = self.expect_number::<u8>("a dim (0..=255)")?;
            return Ok(ExprKind::Size { input, dim });
        }
        if let Some(elementwise) = ElementwiseOp::from_name(m) {
            // The op's operands: a `where`'s four, the others' two.
            let operands = self.operand_list(m, labels)?;
            if operands.len() != elementwise.arity() {
                let expected = format!("{} operands", elementwise.arity());
                return Err(Parser::arity_error(&op, m, &expected, operands.len()));
            }
            return Ok(ExprKind::Elementwise {
                op: elementwise,
                operands,
            });
        }
        if m == "boundary_call" {
            // Scalar arguments (none for `observe()`: `boundary_call callee=observe, ...`),
            // then the callee's name and the declared type.
            let args = if matches!(self.peek().kind, TokenKind::Label(_)) {
                let args = self.operand_list(m, labels)?;
                self.attribute_key("callee")?;
                args
            } else {
                self.expect_keyword("callee")?;
                self.expect_punct('=')?;
                Vec::new()
            };
            let (callee, _) = self.expect_ident("the callee's name")?;
            self.attribute_key("ret")?;
            let ret = self.ty()?;
            return Ok(ExprKind::BoundaryCall { callee, args, ret });
        }
        if let Some(kind) = JoinKind::from_name(m) {
            // One or more parts (a variable count), then the dim.
            let parts = self.operand_list(m, labels)?;
            self.attribute_key("dim")?;
            let dim = self.expect_number::<u8>("a dim (0..=255)")?;
            return Ok(ExprKind::Join { kind, parts, dim });
        }
        match m {
            "param" => Ok(ExprKind::Param(
                self.expect_number::<u32>("a parameter index")?,
            )),
            "const.int" => Ok(ExprKind::ConstInt(
                self.expect_number::<i64>("a 64-bit integer")?,
            )),
            "const.bool" => Ok(ExprKind::ConstBool(self.expect_bool("`const.bool`")?)),
            "const.float" => Ok(ExprKind::ConstFloat(FloatBits::new(self.expect_float()?))),
            "linear" => {
                let (input, weight, bias) = self.linear_operands(&op, m, labels)?;
                Ok(ExprKind::Linear {
                    input,
                    weight,
                    bias,
                })
            }
            "matmul" => {
                let (lhs, rhs) = self.two_operands(&op, m, labels)?;
                Ok(ExprKind::Matmul { lhs, rhs })
            }
            "fused_attention" => {
                let operands = self.operand_list(m, labels)?;
                self.attribute_key("scale")?;
                let (word, token) = self.expect_ident("`div`, `mul` or `none`")?;
                let scale_op = match word.as_str() {
                    "div" => Some(TensorScalarOp::Div),
                    "mul" => Some(TensorScalarOp::Mul),
                    "none" => None,
                    _ => {
                        return Err(Parser::error_at(
                            &token,
                            format!(
                                "expected `div`, `mul` or `none` after `scale=`, found `{word}`"
                            ),
                        ))
                    }
                };
                let expected = if scale_op.is_some() { 4 } else { 3 };
                if operands.len() != expected {
                    let what = if scale_op.is_some() {
                        "4 operands (q, k, v, scale)"
                    } else {
                        "3 operands (q, k, v)"
                    };
                    return Err(Parser::arity_error(&op, m, what, operands.len()));
                }
                Ok(ExprKind::FusedAttention {
                    q: operands[0],
                    k: operands[1],
                    v: operands[2],
                    scale: scale_op.map(|op| AttentionScale {
                        op,
                        value: operands[3],
                    }),
                })
            }
            "bmm" => {
                let (lhs, rhs) = self.two_operands(&op, m, labels)?;
                Ok(ExprKind::Bmm { lhs, rhs })
            }
            "layer_norm" => {
                let (input, normalized, weight, bias) =
                    match self.operand_list(m, labels)?.as_slice() {
                        [input, normalized] => (*input, *normalized, None, None),
                        [input, normalized, weight, bias] => {
                            (*input, *normalized, Some(*weight), Some(*bias))
                        }
                        other => {
                            return Err(Parser::arity_error(
                                &op,
                                m,
                                "2 operands or 4 (input, normalized, weight, bias)",
                                other.len(),
                            ))
                        }
                    };
                self.attribute_key("eps")?;
                let eps = FloatBits::new(self.expect_float()?);
                Ok(ExprKind::LayerNorm {
                    input,
                    normalized,
                    weight,
                    bias,
                    eps,
                })
            }
            "embedding" => {
                let (ids, weight) = self.two_operands(&op, m, labels)?;
                Ok(ExprKind::Embedding { ids, weight })
            }
            "embedding_bag" => {
                let [ids, weight, offsets] = match self.operand_list(m, labels)?.as_slice() {
                    [ids, weight, offsets] => [*ids, *weight, *offsets],
                    other => {
                        return Err(Parser::arity_error(
                            &op,
                            m,
                            "3 operands (ids, weight, offsets)",
                            other.len(),
                        ))
                    }
                };
                self.attribute_key("mode")?;
                let mode = match &self.peek().kind {
                    TokenKind::Ident(word) => BagMode::from_name(word),
                    _ => None,
                };
                let Some(mode) = mode else {
                    return Err(self.error_here("expected `sum`, `mean` or `max` for mode"));
                };
                self.bump();
                Ok(ExprKind::EmbeddingBag {
                    ids,
                    weight,
                    offsets,
                    mode,
                })
            }
            "argmax" => {
                let input = self.one_operand(&op, m, labels)?;
                let (dim, keepdim) = self.dim_keepdim()?;
                Ok(ExprKind::Argmax {
                    input,
                    dim,
                    keepdim,
                })
            }
            "fused_linear" | "fused_matmul" => {
                let layout = if m == "fused_linear" {
                    WeightLayout::OutIn
                } else {
                    WeightLayout::InOut
                };
                let mut operands = self.operand_list(m, labels)?;
                let norm = self.norm_attribute()?;
                let ops = self.prologue_ops()?;
                let activations = self.activations()?;
                let tail = self.fused_tail()?;
                let bias_added = self.bias_added()?;
                let residual_first = self.residual_side()?;
                // The row normalization's operands (1, or 3 when affine), the prologue's,
                // then the residual, follow the 2 or 3 of the product.
                let norm_len = norm.map_or(0, |(_, affine)| if affine { 3 } else { 1 });
                let extra = norm_len + ops.len() + usize::from(residual_first.is_some());
                let base = operands
                    .len()
                    .checked_sub(extra)
                    .filter(|n| (2..=3).contains(n));
                let Some(base) = base else {
                    let mut parts = vec!["2 or 3 operands".to_string()];
                    if norm_len > 0 {
                        parts.push(format!("{norm_len} of the row normalization"));
                    }
                    if !ops.is_empty() {
                        parts.push(format!("one per prologue step ({})", ops.len()));
                    }
                    if residual_first.is_some() {
                        parts.push("the residual".to_string());
                    }
                    let last = parts.pop().unwrap_or_default();
                    let expected = if parts.is_empty() {
                        last
                    } else {
                        format!("{} and {last}", parts.join(", "))
                    };
                    return Err(Parser::arity_error(&op, m, &expected, operands.len()));
                };
                let residual = residual_first
                    .and_then(|first| operands.pop().map(|operand| Residual { operand, first }));
                let prologue = ops
                    .into_iter()
                    .zip(operands.drain(base + norm_len..))
                    .map(|(op, operand)| PrologueStep { op, operand })
                    .collect();
                let norm = norm.map(|(eps, affine)| {
                    let n: Vec<ExprId> = operands.drain(base..).collect();
                    NormPrologue {
                        normalized: n[0],
                        weight: affine.then(|| n[1]),
                        bias: affine.then(|| n[2]),
                        eps,
                    }
                });
                let bias = operands.get(2).copied();
                Ok(ExprKind::FusedLinear {
                    input: operands[0],
                    weight: operands[1],
                    bias,
                    prologue,
                    activations,
                    tail,
                    layout,
                    bias_added,
                    residual,
                    norm,
                })
            }
            _ => Err(Parser::error_at(&op, format!("unknown op `{mnemonic}`"))),
        }
    }

    // `, bias=added` where present (absent: the bias, if any, is `linear`'s argument).
    fn bias_added(&mut self) -> Result<bool, ParseError> {
        let is_key = self.at(&TokenKind::Punct(','))
            && matches!(&self.peek_nth(1).kind, TokenKind::Ident(word) if word == "bias");
        if !is_key {
            return Ok(false);
        }
        self.attribute_key("bias")?;
        let (word, token) = self.expect_ident("`added`")?;
        if word != "added" {
            return Err(Parser::error_at(
                &token,
                format!("expected `added` after `bias=`, found `{word}`"),
            ));
        }
        Ok(true)
    }

    // `, norm=layer_norm(eps=1e-5, affine=true)` where present: the eps and whether the
    // normalization has a weight and bias.
    fn norm_attribute(&mut self) -> Result<Option<(FloatBits, bool)>, ParseError> {
        let is_key = self.at(&TokenKind::Punct(','))
            && matches!(&self.peek_nth(1).kind, TokenKind::Ident(word) if word == "norm");
        if !is_key {
            return Ok(None);
        }
        self.attribute_key("norm")?;
        self.expect_keyword("layer_norm")?;
        self.expect_punct('(')?;
        self.expect_keyword("eps")?;
        self.expect_punct('=')?;
        let eps = FloatBits::new(self.expect_float()?);
        self.attribute_key("affine")?;
        let affine = self.expect_bool("`affine`")?;
        self.expect_punct(')')?;
        Ok(Some((eps, affine)))
    }

    // `, residual=left|right` where present: `Some(true)` for a residual left of the `+`.
    fn residual_side(&mut self) -> Result<Option<bool>, ParseError> {
        let is_key = self.at(&TokenKind::Punct(','))
            && matches!(&self.peek_nth(1).kind, TokenKind::Ident(word) if word == "residual");
        if !is_key {
            return Ok(None);
        }
        self.attribute_key("residual")?;
        let (word, token) = self.expect_ident("`left` or `right`")?;
        match word.as_str() {
            "left" => Ok(Some(true)),
            "right" => Ok(Some(false)),
            _ => Err(Parser::error_at(
                &token,
                format!("expected `left` or `right` after `residual=`, found `{word}`"),
            )),
        }
    }

    // `, prologue=[sub, div]` where present (absent means none).
    fn prologue_ops(&mut self) -> Result<Vec<BinaryOp>, ParseError> {
        let is_key = self.at(&TokenKind::Punct(','))
            && matches!(&self.peek_nth(1).kind, TokenKind::Ident(word) if word == "prologue");
        if !is_key {
            return Ok(Vec::new());
        }
        self.attribute_key("prologue")?;
        self.expect_punct('[')?;
        let mut ops = Vec::new();
        loop {
            let (word, token) = self.expect_ident("a binary op (`add`, `sub`, `mul`, `div`)")?;
            let Some(op) = BinaryOp::from_name(&word) else {
                return Err(Parser::error_at(
                    &token,
                    format!("unknown prologue op `{word}` (expected `add`, `sub`, `mul` or `div`)"),
                ));
            };
            ops.push(op);
            if self.at(&TokenKind::Punct(',')) {
                self.bump();
                continue;
            }
            self.expect_punct(']')?;
            return Ok(ops);
        }
    }

    // `, activations=[relu, tanh]` (possibly `[]`).
    fn activations(&mut self) -> Result<Vec<UnaryOp>, ParseError> {
        self.attribute_key("activations")?;
        self.expect_punct('[')?;
        let mut activations = Vec::new();
        if self.at(&TokenKind::Punct(']')) {
            self.bump();
            return Ok(activations);
        }
        loop {
            let (name, token) = self.expect_ident("an activation (a unary op name)")?;
            match UnaryOp::from_name(&name) {
                Some(op) => activations.push(op),
                None => {
                    return Err(Parser::error_at(
                        &token,
                        format!("unknown activation `{name}`"),
                    ))
                }
            }
            if self.at(&TokenKind::Punct(',')) {
                self.bump();
            } else {
                self.expect_punct(']')?;
                return Ok(activations);
            }
        }
    }

    // `, tail=none`, `, tail=mean(dim=1, keepdim=false)` (or `sum`), `, tail=softmax(dim=1)`
    // (or `log_softmax`) or `, tail=argmax(dim=1, keepdim=false)`.
    fn fused_tail(&mut self) -> Result<Option<FusedTail>, ParseError> {
        self.attribute_key("tail")?;
        let expected = "`none`, `mean(...)`, `sum(...)`, `softmax(...)`, `log_softmax(...)` or \
                        `argmax(...)`";
        let (word, token) = self.expect_ident(expected)?;
        if word == "none" {
            return Ok(None);
        }
        let reduce = ReduceKind::from_name(&word);
        let softmax = SoftmaxKind::from_name(&word);
        if reduce.is_none() && softmax.is_none() && word != "argmax" {
            return Err(Parser::error_at(
                &token,
                format!("unknown tail `{word}` (expected {expected})"),
            ));
        }
        self.expect_punct('(')?;
        self.expect_keyword("dim")?;
        self.expect_punct('=')?;
        let dim = self.expect_number::<u8>("a dim (0..=255)")?;
        if let Some(kind) = softmax {
            self.expect_punct(')')?;
            return Ok(Some(FusedTail::Softmax { kind, dim }));
        }
        self.attribute_key("keepdim")?;
        let keepdim = self.expect_bool("keepdim")?;
        self.expect_punct(')')?;
        Ok(Some(match reduce {
            Some(kind) => FusedTail::Reduce(FusedReduce { kind, dim, keepdim }),
            None => FusedTail::Argmax { dim, keepdim },
        }))
    }
}
