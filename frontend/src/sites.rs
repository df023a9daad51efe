//! The body walker: the local environment, expressions, and every call / operator site offered
//! to the claim rules exactly as the reference Rextio host offers them. Its jobs by file:
//!
//! - this file: the walker and its environment, expressions (`eval`), calls and callees;
//! - `statements.rs`: statements, control flow included (assignments, `if`/`elif`/`else`,
//!   `for` over `range` or literal ints, `while`, `break`/`continue`/`return`; rebinding makes
//!   a new value, loop-carried values and `if` results are structured SSA). Any other
//!   statement is an `RXT031` diagnostic (or `RXT010` for augmented assignment on plugin
//!   types) and the names it binds become unknown;
//! - `scalars.rs`: scalar arithmetic, comparisons (chains evaluated as Python does), `and`/`or`
//!   and unary operators;
//! - `site.rs`: deciding one site with the claim rules, its diagnostic, and the literals a
//!   site's arguments carry.
//!
//! Sites are offered in post-order, i.e. in the source order of their claims: a method's
//! receiver, then its positional arguments, then its keyword values, then the call itself.
//! The host rules copied from the reference (see `reference-plugin.md` §1.4, §7):
//! - a call is a tensor site if its target starts with `torch`, or an operand or the receiver
//!   has a plugin type; a binop/compare if an operand has a plugin type. Other sites are plain
//!   Python values, which native functions do not lower (`RXT030`);
//! - never offered (`RXT080`, function stays on Python): `**kwargs`, starred arguments, any
//!   keyword whose value is not a literal, and the operators `//`, `**`, `<<`, `>>`, `&`, `|`,
//!   `^`;
//! - a method whose receiver is a bare operator expression (`(a @ b).relu()`) is not offered:
//!   `RXT030 ... <dynamic>.relu` (ours: under the extended surface, a `+ - * / @ **` or unary
//!   operator's value is a receiver like a call's, target the bare method);
//! - positional literals are signed ints (unary minus folded), `None` and int tuples; keyword
//!   literals add bools and strings; a keyword's type is its literal's kind. Ours: at the
//!   layers lane's targets under the extended surface (`F.layer_norm`, `F.embedding`,
//!   `F.dropout`, `F.embedding_bag`), float literals and positional bools are literals too.
//!
//! A value computed by a site that was not claimed is *poisoned*: later sites that consume it
//! are still recorded, but their host "not covered" diagnostics are suppressed (the first
//! error already explains the fallback).

mod helpers;
mod idioms;
mod locals;
mod operands;
mod returns;
mod scalars;
mod site;
mod statements;

use site::{float_literal, int_literal, keyword_literal, literal_type, positional_literal};

use std::collections::{HashMap, HashSet};

use rextio_ir::{Diagnostic, Marker, Span};
use ruff_python_ast::visitor::{walk_expr, walk_stmt, Visitor};
use ruff_python_ast::{
    CmpOp, Expr, ExprBinOp, ExprCall, ExprCompare, ExprContext, ExprName, Number, Operator, Stmt,
    StmtFunctionDef, UnaryOp,
};

use crate::claim::layers::LAYER_NORM_TARGET;
use crate::claim::{
    self, ClaimedOp, KeywordArg, Literal, ReceiverKind, ResultPart, SiteKind, Surface,
};
use crate::codes;
use crate::imports::dotted_parts;
use crate::lower::{Trace, ValueDef, ValueId};
use crate::parse::{first_line, span_of};
use crate::signature::Signature;
use crate::{ModuleContext, SiteReport};

/// What walking one function body produced.
#[derive(Clone, Debug, Default)]
pub struct Walked {
    pub sites: Vec<SiteReport>,
    pub diagnostics: Vec<Diagnostic>,
    /// Core's subset violations: each keeps the function on Python without rejecting it
    /// (`not-candidate` in auto mode).
    pub blockers: Vec<Diagnostic>,
    pub trace: Trace,
}

/// Walks the body of a candidate function.
pub(crate) fn walk_function(def: &StmtFunctionDef, sig: &Signature, ctx: &ModuleContext) -> Walked {
    let def_start = span_of(def).start;
    let def_line_start = {
        // Core reports function-level findings at the `def` line, column 0.
        let line_start = ctx.source[..def_start as usize]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let name_start = span_of(&def.name).start as usize;
        let def_line = ctx.source[..name_start]
            .rfind('\n')
            .map_or(0, |i| i + 1)
            .max(line_start);
        Span::new(def_line as u32, def_line as u32 + 3)
    };
    let mut walker = Walker {
        ctx,
        sig,
        env: HashMap::new(),
        locals: locals::local_names(def),
        out: Walked::default(),
        reachable: true,
        returns: 0,
        statement_error: false,
        loops: Vec::new(),
        loop_poisoned: false,
        def_line_start,
        marked_native: crate::is_marked_native(def, ctx),
        loop_tests: 0,
    };
    for (index, param) in sig.params.iter().enumerate() {
        let id = walker.out.trace.push(
            ValueDef::Param {
                index: index as u32,
            },
            param.span,
        );
        walker.out.trace.values[id].name = Some(param.name.clone());
        let value = Value {
            ty: param.annotated.operand_type(),
            id: Some(id),
            ..Value::default()
        };
        walker.env.insert(param.name.clone(), value);
    }
    // A docstring does nothing when the function runs: the extended surface passes over it
    // (the host counts it as an expression statement, RXT010, so the reference surface does
    // not).
    let body = match &def.body[..] {
        [Stmt::Expr(doc), rest @ ..]
            if ctx.surface == Surface::Extended
                && !rest.is_empty()
                && matches!(&*doc.value, Expr::StringLiteral(_)) =>
        {
            rest
        }
        body => body,
    };
    walker.walk_block(body);

    // Core's return-path rule, then its parameter-alias rule (both syntactic).
    let declared = sig.ret.operand_type().filter(|t| t != "None");
    if !statements::always_returns(&def.body) && !walker.statement_error {
        match &declared {
            // The reference surface gives the host's words (RXT010); the extended one says
            // it in the user's (RXT034, as docs/diagnostics.md lists it).
            Some(ty) if ctx.surface == Surface::Reference => {
                let message = format!(
                    "not all control-flow paths return a value; a fall-through path would not return the declared {ty}"
                );
                walker.blocker_at_def(message);
            }
            Some(ty) => {
                let message = format!(
                    "`{}` can reach its end without `return`, but it is annotated to return a {}",
                    def.name.id,
                    display_type(Some(ty))
                );
                walker.blocker_with(
                    codes::MISSING_RETURN,
                    span_of(&def.name),
                    message,
                    "a path through this function returns no value",
                );
            }
            None if walker.returns == 0 => walker.out.diagnostics.push(
                Diagnostic::error(
                    codes::MISSING_RETURN,
                    "native function must end with `return <value>`",
                )
                .with_primary(span_of(&def.name), "this function returns no value"),
            ),
            None => {}
        }
    }
    let plugin_params: Vec<String> = sig
        .params
        .iter()
        .filter(|p| {
            p.annotated
                .operand_type()
                .as_deref()
                .is_some_and(is_plugin_key)
        })
        .map(|p| p.name.clone())
        .collect();
    for ret in statements::alias_returns(&def.body, &plugin_params) {
        walker.blocker(
            span_of(ret),
            "returning a plugin-typed parameter (or a possible alias of one) diverges: the fallback returns the caller's own object while the native path returns a copy; compute a new value or keep the function on the Python fallback",
        );
    }
    walker.out
}

/// A statically known scalar, kept so `return 1` can lower to a constant.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Constant {
    Int(i64),
    Bool(bool),
    Float(f64),
}

/// What the walker knows about a Python value.
#[derive(Clone, Debug, Default)]
struct Value {
    /// Operand type as Core spells it: plugin key, core name, or `None` (unresolved).
    ty: Option<String>,
    /// The trace value (parameters, claimed results).
    id: Option<ValueId>,
    constant: Option<Constant>,
    /// Computed by something that was not lowered (see the module docs).
    poisoned: bool,
}

impl Value {
    fn typed(ty: &str) -> Value {
        Value {
            ty: Some(ty.to_string()),
            ..Value::default()
        }
    }

    fn poisoned() -> Value {
        Value {
            poisoned: true,
            ..Value::default()
        }
    }

    fn is_plugin_typed(&self) -> bool {
        self.ty.as_deref().is_some_and(is_plugin_key)
    }
}

fn is_plugin_key(ty: &str) -> bool {
    Marker::by_key(ty).is_some()
}

/// How diagnostics spell an operand type: marker name, core name, or "unresolved".
fn display_type(ty: Option<&str>) -> String {
    match ty {
        Some(key) => Marker::by_key(key).map_or_else(|| key.to_string(), |m| m.name.to_string()),
        None => "unresolved".to_string(),
    }
}

/// Whether the host offers a site at all.
#[derive(Clone, Debug, PartialEq)]
enum Gate {
    Offer,
    /// Never offered to the plugin; the function stays on Python.
    NotOffered(String),
    /// The target cannot be named (`<dynamic>`): the host reports RXT030.
    Dynamic,
    /// Never offered, reported as an uncovered operator (chained / identity comparisons).
    Declined,
}

impl Gate {
    fn not_offered(&mut self, reason: impl Into<String>) {
        if *self == Gate::Offer {
            *self = Gate::NotOffered(reason.into());
        }
    }
}

struct Operand {
    value: Value,
    literal: Literal,
    span: Span,
}

struct ReceiverInput {
    value: Value,
    kind: ReceiverKind,
    span: Span,
}

struct SiteInput {
    kind: SiteKind,
    target: String,
    receiver: Option<ReceiverInput>,
    operands: Vec<Operand>,
    keywords: Vec<KeywordArg>,
    /// The keywords' values, aligned with `keywords`: a claimed op's operands after the
    /// positional ones (read by claims that take keyword values,
    /// [`crate::claim::ArgumentReading::value_keywords`]).
    keyword_values: Vec<Operand>,
    /// The first positional argument was a list or tuple display of this many items, offered
    /// as the first operands ([`crate::claim::ClaimSite::sequence`]).
    sequence: Option<usize>,
    /// A `where` call's inline comparison, its two sides offered as the first operands
    /// ([`crate::claim::ClaimSite::condition`]).
    condition: Option<rextio_ir::CompareOp>,
    /// The part of a `max`/`min` call's named tuple the expression reads
    /// ([`crate::claim::ClaimSite::part`]).
    part: Option<ResultPart>,
    /// A comparison written as an `if`/`while` condition
    /// ([`crate::claim::ClaimSite::truth`]).
    truth: bool,
    gate: Gate,
    /// The callee itself came from something not lowered (`g()(x)` after `g()` failed).
    callee_poisoned: bool,
    /// Where diagnostics point (method calls: the method name to the closing paren).
    span: Span,
    /// The whole expression (recorded in the IR span table).
    expr_span: Span,
}

enum Verdict {
    Claimed {
        rule_id: &'static str,
        result_type: &'static str,
        op: ClaimedOp,
    },
    Rejected {
        code: String,
        message: String,
    },
    NotCovered {
        code: &'static str,
        message: String,
    },
    NotOffered {
        reason: String,
    },
}

struct Callee {
    target: String,
    receiver: Option<ReceiverInput>,
    gate: Gate,
    /// Start of the method name, for method calls.
    method_start: Option<u32>,
    /// See [`SiteInput::callee_poisoned`].
    poisoned: bool,
}

impl Callee {
    fn function(target: String) -> Callee {
        Callee {
            target,
            receiver: None,
            gate: Gate::Offer,
            method_start: None,
            poisoned: false,
        }
    }
}

/// The span a call's site reports: from the method name on for a method call (`x.relu()`
/// points at `relu()`; `method_start` is [`Callee::method_start`]), else the whole
/// expression.
fn call_site_span(method_start: Option<u32>, expr_span: Span) -> Span {
    match method_start {
        Some(start) => Span::new(start, expr_span.end),
        None => expr_span,
    }
}

struct Walker<'a> {
    ctx: &'a ModuleContext<'a>,
    sig: &'a Signature,
    env: HashMap<String, Value>,
    /// Python's local names of the function ([`locals::local_names`]): one of them is never
    /// an import, a builtin or a module global, even where it is not bound yet.
    locals: HashSet<String>,
    out: Walked,
    /// Whether control can reach the current statement (false after `return`, `break` or
    /// `continue` in this block).
    reachable: bool,
    /// `return` statements walked.
    returns: usize,
    /// Some statement was not lowered (then a missing return is not worth reporting).
    statement_error: bool,
    /// The enclosing loops, innermost last.
    loops: Vec<statements::LoopFrame>,
    /// A `continue`/`break` in the current loop passed a value that was not lowered.
    loop_poisoned: bool,
    /// Where Core reports function-level findings (the `def` line).
    def_line_start: Span,
    /// The function is marked `@rextio.native`: a scalar callee that stays on Python is a
    /// boundary call (`RXT075`) rather than an error (`RXT070`/`RXT072`).
    marked_native: bool,
    /// `while` tests being walked (they run on every iteration, like a loop body).
    loop_tests: usize,
}

impl Walker<'_> {
    /// Whether `name` is a local variable here (bound, or bound anywhere in the function),
    /// so that it does not resolve as an import, a builtin or a module global.
    fn is_local(&self, name: &str) -> bool {
        self.env.contains_key(name) || self.locals.contains(name)
    }

    fn bind(&mut self, name: &str, value: Value) {
        if let Some(id) = value.id {
            let traced = &mut self.out.trace.values[id];
            if traced.name.is_none() {
                traced.name = Some(name.to_string());
            }
        }
        self.env.insert(name.to_string(), value);
    }

    fn unsupported_statement(&mut self, stmt: &Stmt, kind: &str) {
        self.unsupported_statement_span(self.first_line(span_of(stmt)), kind);
        self.poison_bound_names(stmt);
    }

    fn unsupported_statement_span(&mut self, span: Span, kind: &str) {
        self.statement_error = true;
        self.out.diagnostics.push(
            Diagnostic::error(
                codes::UNSUPPORTED_SYNTAX,
                codes::unsupported_statement(kind),
            )
            .with_primary(span, "not lowered yet"),
        );
    }

    /// After a statement that was not lowered, every name it may bind is unknown.
    fn poison_bound_names(&mut self, stmt: &Stmt) {
        let mut collector = StoredNames::default();
        collector.visit_stmt(stmt);
        for name in collector.names {
            self.env.insert(name, Value::poisoned());
        }
    }

    /// `span` cut at the end of its first line (compound statements point at their header).
    fn first_line(&self, span: Span) -> Span {
        first_line(self.ctx.source, span)
    }

    /// A read of `name`, which is not bound here: Core's scope blocker.
    fn undefined(&mut self, name: &ExprName) -> Value {
        let message = format!(
            "name '{}' is not defined in this scope of the native function (module globals, closures, and names first bound inside a nested block then read after it are unsupported)",
            name.id
        );
        self.blocker(span_of(name), message);
        Value::poisoned()
    }

    // ---------------------------------------------------------------- expressions

    /// An `if`/`while` condition: a comparison there is offered as one whose truth Python
    /// reads ([`crate::claim::ClaimSite::truth`], extended surface only); anything else is
    /// evaluated as anywhere.
    ///
    /// Python reads the truth of each operand of an `and`/`or` that is itself the condition
    /// (`if t.max() > 0.5 and n < 3:`: the `if` reads the same truth the `and` did), so those
    /// operands are conditions too; `not`'s operand always is (`unary`).
    fn eval_condition(&mut self, test: &Expr) -> Value {
        match test {
            Expr::Compare(compare) if self.ctx.surface == Surface::Extended => {
                self.eval_compare(compare, true)
            }
            Expr::BoolOp(bool_op) if self.ctx.surface == Surface::Extended => {
                self.bool_op(bool_op, true)
            }
            other => self.eval(other),
        }
    }

    /// An expression's value; recursive through its operands, so each step runs with stack
    /// to spare (`rextio_ir::stack`: programs can be 200,000 nodes deep).
    fn eval(&mut self, expr: &Expr) -> Value {
        rextio_ir::stack::deep(|| self.eval_step(expr))
    }

    fn eval_step(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Name(name) => match self.env.get(name.id.as_str()) {
                Some(value) => value.clone(),
                None => match self.ctx.imports.resolve_name(name.id.as_str()) {
                    // A local of the function (assigned somewhere in it) is never the import.
                    Some(_) if self.locals.contains(name.id.as_str()) => self.undefined(name),
                    // `from math import pi`: the constant (extended surface).
                    Some(path) => match claim::scalar_math::constant(path, self.ctx.surface) {
                        Some(v) => Value {
                            constant: Some(Constant::Float(v)),
                            ..Value::typed("float")
                        },
                        None => Value::default(),
                    },
                    None => self.undefined(name),
                },
            },
            Expr::NumberLiteral(number) => match &number.value {
                Number::Int(int) => match int.as_i64() {
                    Some(v) => Value {
                        constant: Some(Constant::Int(v)),
                        ..Value::typed("int")
                    },
                    None => {
                        self.blocker(
                            span_of(expr),
                            "integer literal is outside the supported i64 range in native functions",
                        );
                        Value::poisoned()
                    }
                },
                Number::Float(f) => Value {
                    constant: Some(Constant::Float(*f)),
                    ..Value::typed("float")
                },
                Number::Complex { .. } => Value::typed("complex"),
            },
            Expr::BooleanLiteral(boolean) => Value {
                constant: Some(Constant::Bool(boolean.value)),
                ..Value::typed("bool")
            },
            Expr::NoneLiteral(_) => Value::typed("None"),
            Expr::StringLiteral(_) => Value::typed("str"),
            Expr::BytesLiteral(_) => Value::typed("bytes"),
            Expr::Tuple(tuple) => {
                let mut value = Value::typed("tuple");
                for element in &tuple.elts {
                    let item = self.eval(element);
                    value.poisoned |= item.poisoned;
                    if item.is_plugin_typed() {
                        let key = item.ty.clone().unwrap_or_default();
                        self.blocker(
                            span_of(element),
                            format!("tuple items must be int/float/bool/str/bytes, got {key}"),
                        );
                    }
                }
                value
            }
            Expr::UnaryOp(unary) if unary.op == UnaryOp::USub => match &*unary.operand {
                Expr::NumberLiteral(number) => match &number.value {
                    // A literal out of range is one whatever its sign (`-2**63` too): an int
                    // with neither a value nor a finding would silently drop its statement.
                    Number::Int(int) => match int.as_i64() {
                        Some(v) => Value::int_constant(-v),
                        None => {
                            self.blocker(
                                span_of(expr),
                                "integer literal is outside the supported i64 range in native functions",
                            );
                            Value::poisoned()
                        }
                    },
                    Number::Float(f) => Value {
                        constant: Some(Constant::Float(-f)),
                        ..Value::typed("float")
                    },
                    Number::Complex { .. } => Value::typed("complex"),
                },
                _ => self.unary(unary),
            },
            Expr::UnaryOp(unary) => self.unary(unary),
            Expr::BoolOp(bool_op) => self.bool_op(bool_op, false),
            Expr::Call(call) => self.eval_call(call),
            Expr::Named(named) => {
                self.eval(&named.value);
                self.blocker(
                    span_of(expr),
                    "assignment expressions are supported only inside comprehensions",
                );
                Value::poisoned()
            }
            Expr::If(conditional) => {
                self.eval(&conditional.test);
                self.eval(&conditional.body);
                self.eval(&conditional.orelse);
                self.blocker(
                    span_of(expr),
                    "conditional expressions are not supported in native functions",
                );
                Value::poisoned()
            }
            Expr::BinOp(binop) => self.eval_binop(binop),
            Expr::Compare(compare) => self.eval_compare(compare, false),
            Expr::Attribute(attribute) => {
                match self
                    .ctx
                    .imports
                    .resolve_expr(expr, &|name| self.is_local(name))
                {
                    // `math.pi` (extended surface): the constant.
                    Some(path) => match claim::scalar_math::constant(&path, self.ctx.surface) {
                        Some(v) => Value {
                            constant: Some(Constant::Float(v)),
                            ..Value::typed("float")
                        },
                        // A module attribute such as `torch.float32`: a value we know nothing
                        // about.
                        None => Value::default(),
                    },
                    // `x.max(dim=1).values` / `.indices` (the dim-ops lane, extended surface
                    // only): the call, offered as that part.
                    None if self
                        .call_part(&attribute.value, part_named(attribute.attr.as_str()))
                        .is_some() =>
                    {
                        let part = part_named(attribute.attr.as_str());
                        match &*attribute.value {
                            Expr::Call(call) => self.eval_call_part(call, part),
                            _ => self.unsupported_expression(expr, "attribute access"),
                        }
                    }
                    // `x.T` (the views lane, extended surface only): a site like `x.t()`.
                    None if attribute.attr.as_str() == "T"
                        && self.ctx.surface == Surface::Extended =>
                    {
                        self.tensor_attribute_site(expr, expr, None, "attribute access")
                    }
                    None => self.unsupported_expression(expr, "attribute access"),
                }
            }
            Expr::Subscript(subscript) if self.ctx.surface == Surface::Extended => {
                // `x.shape[i]` and `x.size()[i]` (the views lane): the site `x.shape` with
                // the index as its operand.
                match &*subscript.value {
                    attr @ Expr::Attribute(a) if a.attr.as_str() == "shape" => {
                        self.tensor_attribute_site(attr, expr, Some(&subscript.slice), "subscript")
                    }
                    Expr::Call(call)
                        if call.arguments.args.is_empty()
                            && call.arguments.keywords.is_empty()
                            && matches!(&*call.func, Expr::Attribute(a) if a.attr.as_str() == "size") =>
                    {
                        self.tensor_attribute_site(
                            &call.func,
                            expr,
                            Some(&subscript.slice),
                            "subscript",
                        )
                    }
                    // `x.max(dim=1)[0]` / `[1]` (the dim-ops lane): the call, offered as
                    // its values / indices.
                    Expr::Call(call)
                        if self
                            .call_part(&subscript.value, part_at(&subscript.slice))
                            .is_some() =>
                    {
                        self.eval_call_part(call, part_at(&subscript.slice))
                    }
                    _ => self.unsupported_expression(expr, "subscript"),
                }
            }
            other => self.unsupported_expression(other, expression_kind(other)),
        }
    }

    fn unsupported_expression(&mut self, expr: &Expr, kind: &str) -> Value {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            self.out.diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED_SYNTAX,
                    codes::unsupported_expression(kind),
                )
                .with_primary(span_of(expr), "not lowered yet"),
            );
            Value::poisoned()
        })
    }

    fn eval_call(&mut self, call: &ExprCall) -> Value {
        self.eval_call_part(call, None)
    }

    /// The part of a `max`/`min` call a `.values` / `.indices` / `[0]` / `[1]` after it
    /// reads (the dim-ops lane, extended surface only): `Some` when `expr` is such a call
    /// and `part` names a field of its named tuple.
    fn call_part(&self, expr: &Expr, part: Option<ResultPart>) -> Option<ResultPart> {
        let Expr::Call(call) = expr else {
            return None;
        };
        let Expr::Attribute(method) = &*call.func else {
            return None;
        };
        part.filter(|_| claim::dim_ops::takes_part(method.attr.as_str(), self.ctx.surface))
    }

    /// A call, offered with the part of its result the expression reads (`part`, see
    /// [`crate::claim::ClaimSite::part`]; `None` for a plain call).
    fn eval_call_part(&mut self, call: &ExprCall, part: Option<ResultPart>) -> Value {
        if let Some(value) = self.builtin_on_tensor(call) {
            return value;
        }
        if let Some(value) = self.helper_call(call) {
            return value;
        }
        let callee = self.callee(&call.func);
        // What this call's lane reads beyond the host's literals and keywords.
        let reading =
            claim::argument_reading(&callee.target, callee.receiver.is_some(), self.ctx.surface);
        let floats = reading.float_literals;
        let dtypes = self.reads_dtypes(&callee);
        let mut operands = Vec::new();
        let sequence = self.join_parts(call, &callee, &mut operands);
        let condition = match sequence {
            Some(_) => None,
            None => self.where_condition(call, &callee, &mut operands),
        };
        let mut gate = callee.gate;
        let skip = usize::from(sequence.is_some() || condition.is_some());
        // `reshape` / `view` sizes written as one tuple or list display (the views lane):
        // each item is an operand.
        let spread_at = claim::views::spreads_sizes(
            &callee.target,
            callee.receiver.is_some(),
            self.ctx.surface,
        );
        for (position, arg) in call.arguments.args.iter().enumerate().skip(skip) {
            let items = match arg {
                Expr::Tuple(tuple) if spread_at == Some(position) => Some(&tuple.elts),
                Expr::List(list) if spread_at == Some(position) => Some(&list.elts),
                _ => None,
            };
            if let Some(items) = items.filter(|items| {
                call.arguments.args.len() == position + 1
                    && !items.iter().any(|item| matches!(item, Expr::Starred(_)))
            }) {
                for item in items {
                    let value = self.eval(item);
                    operands.push(Operand {
                        value,
                        literal: positional_literal(item),
                        span: span_of(item),
                    });
                }
                continue;
            }
            if let Expr::Starred(starred) = arg {
                self.eval(&starred.value);
                gate.not_offered("starred positional arguments");
                continue;
            }
            let shape_at = floats && operands.len() == 1 && callee.target == LAYER_NORM_TARGET;
            if let Some(operand) = self.shape_of_one_int(arg).filter(|_| shape_at) {
                operands.push(operand);
                continue;
            }
            if let Some(operand) = dtypes.then(|| self.dtype_operand(arg)).flatten() {
                operands.push(operand);
                continue;
            }
            let value = self.eval(arg);
            let literal = match float_literal(arg) {
                Some(literal) if floats => literal,
                _ => positional_literal(arg),
            };
            operands.push(Operand {
                value,
                literal,
                span: span_of(arg),
            });
        }
        let mut keywords = Vec::new();
        let mut keyword_values = Vec::new();
        for keyword in &call.arguments.keywords {
            // `x.to(dtype=torch.float32)`: the dtype, offered with its type (the casts lane).
            if let Some((arg, operand)) = dtypes.then(|| self.dtype_keyword(keyword)).flatten() {
                keywords.push(arg);
                keyword_values.push(operand);
                continue;
            }
            let value = self.eval(&keyword.value);
            let Some(name) = &keyword.arg else {
                gate.not_offered("`**kwargs` arguments");
                continue;
            };
            let literal = match float_literal(&keyword.value) {
                Some(literal) if floats => literal,
                _ => keyword_literal(&keyword.value),
            };
            let arg_type = match literal_type(&literal) {
                Some(arg_type) => Some(arg_type.to_string()),
                // Calls whose keywords may carry values (`negative_slope=s`, `weight=w`):
                // the extended surface offers them with those values' types, where the
                // host refuses the call.
                None if reading.value_keywords => value.ty.clone(),
                None => {
                    gate.not_offered(format!("keyword `{name}` has a non-literal value"));
                    // The host also blocks the call itself.
                    self.blocker(span_of(call), "keyword call arguments are not supported");
                    continue;
                }
            };
            keywords.push(KeywordArg {
                name: name.to_string(),
                arg_type,
                literal: literal.clone(),
            });
            keyword_values.push(Operand {
                value,
                literal,
                span: span_of(&keyword.value),
            });
        }
        let expr_span = span_of(call);
        let span = call_site_span(callee.method_start, expr_span);
        self.site(SiteInput {
            kind: SiteKind::Call,
            target: callee.target,
            receiver: callee.receiver,
            operands,
            keywords,
            keyword_values,
            sequence,
            condition,
            part,
            truth: false,
            gate,
            callee_poisoned: callee.poisoned,
            span,
            expr_span,
        })
    }

    /// A call through `name`, a local variable of the function (it is assigned somewhere in
    /// it) that is not bound here: not the import, builtin or global of that name.
    fn unbound_local(&mut self, name: &ExprName) -> Callee {
        let id = name.id.as_str();
        let message = format!(
            "`{id}` is assigned in this function, so Python makes it a local variable throughout \
             the function; it is not bound here (Python raises UnboundLocalError), or is bound \
             only inside a nested block"
        );
        self.blocker(span_of(name), message);
        Callee {
            poisoned: true,
            ..Callee::function(id.to_string())
        }
    }

    /// The target of a call, evaluating a method's receiver (its sites come first).
    fn callee(&mut self, func: &Expr) -> Callee {
        match func {
            Expr::Name(name) => {
                let id = name.id.as_str();
                if let Some(value) = self.env.get(id) {
                    let poisoned = value.poisoned;
                    return Callee {
                        poisoned,
                        ..Callee::function(id.to_string())
                    };
                }
                if self.locals.contains(id) {
                    return self.unbound_local(name);
                }
                let resolved = self.ctx.imports.resolve_name(id).unwrap_or(id);
                Callee::function(resolved.to_string())
            }
            Expr::Attribute(attribute) => {
                if let Some(path) = self
                    .ctx
                    .imports
                    .resolve_expr(func, &|name| self.is_local(name))
                {
                    return Callee::function(path);
                }
                let method = attribute.attr.as_str();
                let receiver_expr = &*attribute.value;
                // An unbound receiver name makes the method an unresolved call (RXT030), as
                // in the host, rather than a scope blocker.
                let value = match receiver_expr {
                    Expr::Name(name) if !self.env.contains_key(name.id.as_str()) => {
                        Value::default()
                    }
                    other => self.eval(other),
                };
                let (kind, target, gate) = match receiver_expr {
                    Expr::Name(name) => (
                        ReceiverKind::Name,
                        format!("{}.{method}", name.id),
                        Gate::Offer,
                    ),
                    Expr::Call(_) => (ReceiverKind::Call, method.to_string(), Gate::Offer),
                    Expr::Attribute(_) => {
                        let target = match dotted_parts(receiver_expr) {
                            Some(parts) => format!("{}.{method}", parts.join(".")),
                            None => method.to_string(),
                        };
                        (ReceiverKind::Attribute, target, Gate::Offer)
                    }
                    Expr::Subscript(_) => {
                        (ReceiverKind::Subscript, method.to_string(), Gate::Offer)
                    }
                    // `(a + b).relu()`: the extended surface offers the method on the
                    // operator's value (its sites come first, as a call receiver's do).
                    Expr::BinOp(_) | Expr::UnaryOp(_) if self.ctx.surface == Surface::Extended => {
                        (ReceiverKind::Opaque, method.to_string(), Gate::Offer)
                    }
                    Expr::BinOp(_) | Expr::UnaryOp(_) | Expr::BoolOp(_) | Expr::Compare(_) => (
                        ReceiverKind::Opaque,
                        format!("<dynamic>.{method}"),
                        Gate::Dynamic,
                    ),
                    _ => (ReceiverKind::Opaque, method.to_string(), Gate::Offer),
                };
                Callee {
                    target,
                    receiver: Some(ReceiverInput {
                        value,
                        kind,
                        span: span_of(receiver_expr),
                    }),
                    gate,
                    method_start: Some(attribute.attr.range.start().to_u32()),
                    poisoned: false,
                }
            }
            other => {
                let poisoned = self.eval(other).poisoned;
                Callee {
                    target: "<dynamic>".to_string(),
                    receiver: None,
                    gate: Gate::Dynamic,
                    method_start: None,
                    poisoned,
                }
            }
        }
    }

    fn eval_binop(&mut self, binop: &ExprBinOp) -> Value {
        let left = self.eval(&binop.left);
        let right = self.eval(&binop.right);
        if !left.is_plugin_typed() && !right.is_plugin_typed() {
            // No tensor: Core's own scalar arithmetic, never offered to the plugin.
            let span = span_of(binop);
            return self.scalar_binop(binop.op, &left, &right, span, span);
        }
        let op = binop.op.as_str();
        // `**` is ours (the elementwise lane's `pow`), offered under the extended surface only.
        let offered = matches!(
            binop.op,
            Operator::Add
                | Operator::Sub
                | Operator::Mult
                | Operator::Div
                | Operator::Mod
                | Operator::MatMult
        ) || (binop.op == Operator::Pow && claim::offers_pow(self.ctx.surface));
        let gate = if offered {
            Gate::Offer
        } else {
            Gate::NotOffered(format!("operator `{op}` is never offered"))
        };
        let operands = vec![
            Operand {
                value: left,
                literal: positional_literal(&binop.left),
                span: span_of(&*binop.left),
            },
            Operand {
                value: right,
                literal: positional_literal(&binop.right),
                span: span_of(&*binop.right),
            },
        ];
        let expr_span = span_of(binop);
        self.site(SiteInput {
            kind: SiteKind::Binop,
            target: op.to_string(),
            receiver: None,
            operands,
            keywords: Vec::new(),
            keyword_values: Vec::new(),
            sequence: None,
            condition: None,
            part: None,
            truth: false,
            gate,
            callee_poisoned: false,
            span: expr_span,
            expr_span,
        })
    }

    /// A comparison; `truth`: it is an `if`/`while` condition (Python reads its truth), where
    /// a comparison of tensors can be claimed ([`crate::claim::ClaimSite::truth`]).
    fn eval_compare(&mut self, compare: &ExprCompare, truth: bool) -> Value {
        let mut operands = Vec::new();
        // Python evaluates the third and later operands of a chain only while the links
        // before them hold (`0 < n < 10 % n` never divides when `n == 0`): their trace
        // statements are kept apart here, and a scalar chain places each inside the arm of
        // the link before it. Sites and diagnostics are recorded as for any operand.
        let mut later_blocks = Vec::new();
        for (i, expr) in std::iter::once(&*compare.left)
            .chain(compare.comparators.iter())
            .enumerate()
        {
            if i >= 2 {
                self.out.trace.open();
            }
            let value = self.eval(expr);
            if i >= 2 {
                later_blocks.push(self.out.trace.close());
            }
            operands.push(Operand {
                value,
                literal: positional_literal(expr),
                span: span_of(expr),
            });
        }
        if !operands.iter().any(|o| o.value.is_plugin_typed()) {
            let values: Vec<Value> = operands.into_iter().map(|o| o.value).collect();
            return self.scalar_compare(compare, &values, later_blocks);
        }
        // A comparison of tensors is one site, chained or not (a chain is declined): its
        // operands' statements stay in source order.
        for stmt in later_blocks.into_iter().flatten() {
            self.out.trace.stmt(stmt);
        }
        let first = compare.ops.first().map_or("==", CmpOp::as_str);
        let plain = compare.ops.len() == 1
            && matches!(
                compare.ops[0],
                CmpOp::Eq | CmpOp::NotEq | CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE
            );
        let expr_span = span_of(compare);
        self.site(SiteInput {
            kind: SiteKind::Compare,
            target: first.to_string(),
            receiver: None,
            operands,
            keywords: Vec::new(),
            keyword_values: Vec::new(),
            sequence: None,
            condition: None,
            part: None,
            truth,
            gate: if plain { Gate::Offer } else { Gate::Declined },
            callee_poisoned: false,
            span: expr_span,
            expr_span,
        })
    }
}

// -------------------------------------------------------------------- names

/// The named-tuple field an attribute names (`values`, `indices`).
fn part_named(attr: &str) -> Option<ResultPart> {
    match attr {
        "values" => Some(ResultPart::Values),
        "indices" => Some(ResultPart::Indices),
        _ => None,
    }
}

/// The named-tuple field a literal index names (`[0]` values, `[1]` indices).
fn part_at(index: &Expr) -> Option<ResultPart> {
    match int_literal(index) {
        Some(0) => Some(ResultPart::Values),
        Some(1) => Some(ResultPart::Indices),
        _ => None,
    }
}

fn statement_kind(stmt: &Stmt) -> &'static str {
    match stmt {
        Stmt::For(_) => "for loop",
        Stmt::While(_) => "while loop",
        Stmt::If(_) => "if statement",
        Stmt::With(_) => "with statement",
        Stmt::Match(_) => "match statement",
        Stmt::Raise(_) => "raise statement",
        Stmt::Try(_) => "try statement",
        Stmt::Assert(_) => "assert statement",
        Stmt::Import(_) | Stmt::ImportFrom(_) => "import statement",
        Stmt::Global(_) => "global declaration",
        Stmt::Nonlocal(_) => "nonlocal declaration",
        Stmt::Expr(_) => "expression statement",
        Stmt::Break(_) => "break",
        Stmt::Continue(_) => "continue",
        Stmt::Delete(_) => "del statement",
        Stmt::FunctionDef(_) => "nested function definition",
        Stmt::ClassDef(_) => "class definition",
        Stmt::TypeAlias(_) => "type alias",
        Stmt::AnnAssign(_) => "annotated assignment",
        Stmt::AugAssign(_) => "augmented assignment",
        Stmt::Assign(_) => "assignment to a non-name target",
        Stmt::Return(_) => "return",
        Stmt::Pass(_) => "pass",
        Stmt::IpyEscapeCommand(_) => "IPython escape command",
    }
}

fn expression_kind(expr: &Expr) -> &'static str {
    match expr {
        Expr::BoolOp(_) => "boolean operator",
        Expr::Named(_) => "assignment expression",
        Expr::UnaryOp(_) => "unary operator",
        Expr::Lambda(_) => "lambda",
        Expr::If(_) => "conditional expression",
        Expr::Dict(_) => "dict display",
        Expr::Set(_) => "set display",
        Expr::List(_) => "list display",
        Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
            "comprehension"
        }
        Expr::Await(_) => "await",
        Expr::Yield(_) | Expr::YieldFrom(_) => "yield",
        Expr::FString(_) | Expr::TString(_) => "formatted string",
        Expr::EllipsisLiteral(_) => "ellipsis",
        Expr::Subscript(_) => "subscript",
        Expr::Starred(_) => "starred expression",
        Expr::Slice(_) => "slice",
        Expr::Attribute(_) => "attribute access",
        Expr::IpyEscapeCommand(_) => "IPython escape command",
        _ => "expression",
    }
}

/// Names a statement may bind (assignment targets, loop variables, `with ... as`, defs,
/// imports), found anywhere inside it.
#[derive(Default)]
struct StoredNames {
    names: Vec<String>,
}

impl<'a> Visitor<'a> for StoredNames {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            match stmt {
                Stmt::FunctionDef(def) => self.names.push(def.name.to_string()),
                Stmt::ClassDef(class) => self.names.push(class.name.to_string()),
                Stmt::Import(import) => {
                    for alias in &import.names {
                        let bound = alias
                            .asname
                            .as_ref()
                            .map_or(alias.name.as_str(), |a| a.as_str());
                        self.names
                            .push(bound.split('.').next().unwrap_or(bound).to_string());
                    }
                }
                Stmt::ImportFrom(from) => {
                    for alias in &from.names {
                        self.names
                            .push(alias.asname.as_ref().unwrap_or(&alias.name).to_string());
                    }
                }
                _ => {}
            }
            walk_stmt(self, stmt);
        })
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Name(name) = expr {
                if name.ctx == ExprContext::Store {
                    self.names.push(name.id.to_string());
                }
            }
            walk_expr(self, expr);
        })
    }
}
