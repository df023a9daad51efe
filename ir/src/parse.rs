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

use crate::expr::{BinaryOp, ExprId, ExprKind, FusedReduce, ReduceKind, UnaryOp};
use crate::function::{Function, Module, Param, Stmt};
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
                    Some(d) if d.is_ascii_digit() => {
                        TokenKind::Int(format!("-{}", lexer.take_while(|c| c.is_ascii_digit())))
                    }
                    _ => return Err(error("expected `->` or a number after `-`".to_string())),
                }
            }
            _ if c.is_ascii_digit() => TokenKind::Int(lexer.take_while(|c| c.is_ascii_digit())),
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

    // Definitions, then `return` statements, then `}`.
    fn body(&mut self, function: &mut Function) -> Result<(), ParseError> {
        let mut labels = Labels::new();
        loop {
            self.skip_blank_lines();
            let token = self.peek().clone();
            match &token.kind {
                TokenKind::Punct('}') => {
                    if function.body.stmts.is_empty() {
                        return Err(Parser::error_at(
                            &token,
                            format!("function `{}` has no `return`", function.name),
                        ));
                    }
                    self.bump();
                    return self.end_of_line();
                }
                TokenKind::Label(_) => {
                    if !function.body.stmts.is_empty() {
                        return Err(Parser::error_at(
                            &token,
                            "value definitions must come before the `return` statements",
                        ));
                    }
                    self.definition(function, &mut labels)?;
                }
                TokenKind::Ident(word) if word == "return" => {
                    self.bump();
                    let value = self.operand(&labels, "the returned value")?;
                    self.end_of_line()?;
                    function.body.stmts.push(Stmt::Return(value));
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
                _ => return Err(self.error_here("expected a value definition, `return` or `}`")),
            }
        }
    }

    // %label: TYPE = OP  [# name]
    fn definition(
        &mut self,
        function: &mut Function,
        labels: &mut Labels,
    ) -> Result<(), ParseError> {
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
        Ok(())
    }

    // int | bool | tensor<DTYPE, DEVICE, RANK>
    fn ty(&mut self) -> Result<Type, ParseError> {
        let (word, token) = self.expect_ident("a type (`tensor<...>`, `int` or `bool`)")?;
        match word.as_str() {
            "int" => Ok(Type::Int),
            "bool" => Ok(Type::Bool),
            "tensor" => {
                self.expect_punct('<')?;
                let (dtype_word, dtype_token) = self.expect_ident("a dtype (`f32` or `i64`)")?;
                let dtype = match dtype_word.as_str() {
                    "f32" => DType::F32,
                    "i64" => DType::I64,
                    _ => {
                        return Err(Parser::error_at(
                            &dtype_token,
                            format!("unknown dtype `{dtype_word}` (expected `f32` or `i64`)"),
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
                format!("unknown type `{word}` (expected `tensor<...>`, `int` or `bool`)"),
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
        match m {
            "param" => Ok(ExprKind::Param(
                self.expect_number::<u32>("a parameter index")?,
            )),
            "const.int" => Ok(ExprKind::ConstInt(
                self.expect_number::<i64>("a 64-bit integer")?,
            )),
            "const.bool" => Ok(ExprKind::ConstBool(self.expect_bool("`const.bool`")?)),
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
            "softmax" => {
                let input = self.one_operand(&op, m, labels)?;
                self.attribute_key("dim")?;
                let dim = self.expect_number::<u8>("a dim (0..=255)")?;
                Ok(ExprKind::Softmax { input, dim })
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
            "fused_linear" => {
                let (input, weight, bias) = self.linear_operands(&op, m, labels)?;
                let activations = self.activations()?;
                let reduce = self.fused_reduce()?;
                Ok(ExprKind::FusedLinear {
                    input,
                    weight,
                    bias,
                    activations,
                    reduce,
                })
            }
            _ => Err(Parser::error_at(&op, format!("unknown op `{mnemonic}`"))),
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

    // `, reduce=none` or `, reduce=mean(dim=1, keepdim=false)`.
    fn fused_reduce(&mut self) -> Result<Option<FusedReduce>, ParseError> {
        self.attribute_key("reduce")?;
        let (word, token) = self.expect_ident("`none`, `mean(...)` or `sum(...)`")?;
        if word == "none" {
            return Ok(None);
        }
        let Some(kind) = ReduceKind::from_name(&word) else {
            return Err(Parser::error_at(
                &token,
                format!("unknown reduction `{word}` (expected `none`, `mean` or `sum`)"),
            ));
        };
        self.expect_punct('(')?;
        self.expect_keyword("dim")?;
        self.expect_punct('=')?;
        let dim = self.expect_number::<u8>("a dim (0..=255)")?;
        self.attribute_key("keepdim")?;
        let keepdim = self.expect_bool("keepdim")?;
        self.expect_punct(')')?;
        Ok(Some(FusedReduce { kind, dim, keepdim }))
    }
}
