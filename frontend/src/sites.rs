//! The body walker: statements, the local environment, and every call / operator site offered
//! to the claim rules exactly as the reference Rextio host offers them.
//!
//! Lowered statements are `name = expr` (rebinding makes a new value: SSA by rebinding),
//! `return expr`, docstrings and `pass`. Any other statement is an `RXT031` diagnostic (or
//! `RXT010` for augmented assignment on plugin types) and the names it binds become unknown.
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
//!   `RXT030 ... <dynamic>.relu`;
//! - positional literals are signed ints (unary minus folded), `None` and int tuples; keyword
//!   literals add bools and strings; a keyword's type is its literal's kind.
//!
//! A value computed by a site that was not claimed is *poisoned*: later sites that consume it
//! are still recorded, but their host "not covered" diagnostics are suppressed (the first
//! error already explains the fallback).

mod statements;

use std::collections::HashMap;

use rextio_ir::{Diagnostic, Marker, Severity, Span};
use ruff_python_ast::visitor::{walk_expr, walk_stmt, Visitor};
use ruff_python_ast::{
    CmpOp, Expr, ExprBinOp, ExprCall, ExprCompare, ExprContext, Number, Operator, Stmt,
    StmtFunctionDef, UnaryOp,
};

use crate::claim::{
    self, ClaimOutcome, ClaimSite, ClaimedOp, KeywordArg, Literal, Receiver, ReceiverKind, SiteKind,
};
use crate::codes;
use crate::imports::{dotted_parts, AnnotatedType};
use crate::lower::{ir_type, Trace, ValueDef, ValueId};
use crate::parse::{first_line, line_column, span_of};
use crate::signature::Signature;
use crate::{ModuleContext, SiteOutcome, SiteReport};

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
        out: Walked::default(),
        reachable: true,
        returns: 0,
        statement_error: false,
        loops: Vec::new(),
        loop_poisoned: false,
        def_line_start,
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
    walker.walk_block(&def.body);

    // Core's return-path rule, then its parameter-alias rule (both syntactic).
    let declared = sig.ret.operand_type().filter(|t| t != "None");
    if !statements::always_returns(&def.body) && !walker.statement_error {
        match &declared {
            Some(ty) => {
                let message = format!(
                    "not all control-flow paths return a value; a fall-through path would not return the declared {ty}"
                );
                walker.blocker_at_def(message);
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

struct Walker<'a> {
    ctx: &'a ModuleContext<'a>,
    sig: &'a Signature,
    env: HashMap<String, Value>,
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
}

impl Walker<'_> {
    fn bind(&mut self, name: &str, value: Value) {
        if let Some(id) = value.id {
            let traced = &mut self.out.trace.values[id];
            if traced.name.is_none() {
                traced.name = Some(name.to_string());
            }
        }
        self.env.insert(name.to_string(), value);
    }

    /// Checks the returned type against the return annotation; reports `RXT033` if not.
    fn return_annotation_accepts(&mut self, ty: &str, expr_span: Span) -> bool {
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
        // The host blocks the function (its words), with our explanation beside it.
        let actual = display_type(Some(ty));
        self.blocker(
            expr_span,
            format!("inferred type {ty} does not match expected type {expected}"),
        );
        if let Some(last) = self.out.blockers.last_mut() {
            let mut diagnostic = last.clone().with_note(format!(
                "annotated {shown}, but the returned value is {actual}"
            ));
            if let Some(span) = self.sig.ret_span {
                diagnostic = diagnostic.with_secondary(span, "annotated here");
            }
            *last = diagnostic;
        }
        false
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

    // ---------------------------------------------------------------- expressions

    fn eval(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Name(name) => match self.env.get(name.id.as_str()) {
                Some(value) => value.clone(),
                None if self.ctx.imports.resolve_name(name.id.as_str()).is_some() => {
                    Value::default()
                }
                None => {
                    let message = format!(
                        "name '{}' is not defined in this scope of the native function (module globals, closures, and names first bound inside a nested block then read after it are unsupported)",
                        name.id
                    );
                    self.blocker(span_of(name), message);
                    Value::poisoned()
                }
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
            Expr::BoolOp(bool_op) => self.bool_op(bool_op),
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
            Expr::Compare(compare) => self.eval_compare(compare),
            Expr::Attribute(_) => {
                let env = &self.env;
                match self
                    .ctx
                    .imports
                    .resolve_expr(expr, &|name| env.contains_key(name))
                {
                    // A module attribute such as `torch.float32`: a value we know nothing about.
                    Some(_) => Value::default(),
                    None => self.unsupported_expression(expr, "attribute access"),
                }
            }
            other => self.unsupported_expression(other, expression_kind(other)),
        }
    }

    fn unsupported_expression(&mut self, expr: &Expr, kind: &str) -> Value {
        self.out.diagnostics.push(
            Diagnostic::error(
                codes::UNSUPPORTED_SYNTAX,
                codes::unsupported_expression(kind),
            )
            .with_primary(span_of(expr), "not lowered yet"),
        );
        Value::poisoned()
    }

    fn eval_call(&mut self, call: &ExprCall) -> Value {
        if let Some(value) = self.builtin_on_tensor(call) {
            return value;
        }
        let callee = self.callee(&call.func);
        let mut gate = callee.gate;
        let mut operands = Vec::new();
        for arg in call.arguments.args.iter() {
            if let Expr::Starred(starred) = arg {
                self.eval(&starred.value);
                gate.not_offered("starred positional arguments");
                continue;
            }
            let value = self.eval(arg);
            operands.push(Operand {
                value,
                literal: positional_literal(arg),
                span: span_of(arg),
            });
        }
        let mut keywords = Vec::new();
        for keyword in &call.arguments.keywords {
            self.eval(&keyword.value);
            let Some(name) = &keyword.arg else {
                gate.not_offered("`**kwargs` arguments");
                continue;
            };
            let literal = keyword_literal(&keyword.value);
            let Some(arg_type) = literal_type(&literal) else {
                gate.not_offered(format!("keyword `{name}` has a non-literal value"));
                // The host also blocks the call itself.
                self.blocker(span_of(call), "keyword call arguments are not supported");
                continue;
            };
            keywords.push(KeywordArg {
                name: name.to_string(),
                arg_type: Some(arg_type.to_string()),
                literal,
            });
        }
        let expr_span = span_of(call);
        let span = match callee.method_start {
            Some(start) => Span::new(start, expr_span.end),
            None => expr_span,
        };
        self.site(SiteInput {
            kind: SiteKind::Call,
            target: callee.target,
            receiver: callee.receiver,
            operands,
            keywords,
            gate,
            callee_poisoned: callee.poisoned,
            span,
            expr_span,
        })
    }

    /// Core's own checks of the builtins it lowers (`abs`, `len`) when given a tensor.
    fn builtin_on_tensor(&mut self, call: &ExprCall) -> Option<Value> {
        let Expr::Name(name) = &*call.func else {
            return None;
        };
        let builtin = name.id.as_str();
        if !matches!(builtin, "abs" | "len") || self.env.contains_key(builtin) {
            return None;
        }
        let [arg] = &call.arguments.args[..] else {
            return None;
        };
        // Types Core knows to be wrong here: a tensor for both, any scalar for `len`.
        let known_type = match arg {
            Expr::Name(n) => self.env.get(n.id.as_str()).and_then(|v| v.ty.clone()),
            _ => None,
        };
        let wrong = match builtin {
            "abs" => known_type.filter(|t| Marker::by_key(t).is_some()),
            _ => known_type.filter(|t| {
                Marker::by_key(t).is_some() || matches!(t.as_str(), "int" | "float" | "bool")
            }),
        };
        let key = wrong?;
        self.eval(arg);
        let message = match builtin {
            "abs" => format!("abs requires int or float, got {key}"),
            _ => format!("len() requires a sized type (list/set/dict/str/bytes), got {key}"),
        };
        self.blocker(span_of(call), message);
        Some(Value::poisoned())
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
                let resolved = self.ctx.imports.resolve_name(id).unwrap_or(id);
                Callee::function(resolved.to_string())
            }
            Expr::Attribute(attribute) => {
                let env = &self.env;
                if let Some(path) = self
                    .ctx
                    .imports
                    .resolve_expr(func, &|name| env.contains_key(name))
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
        let offered = matches!(
            binop.op,
            Operator::Add
                | Operator::Sub
                | Operator::Mult
                | Operator::Div
                | Operator::Mod
                | Operator::MatMult
        );
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
            gate,
            callee_poisoned: false,
            span: expr_span,
            expr_span,
        })
    }

    fn eval_compare(&mut self, compare: &ExprCompare) -> Value {
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
            gate: if plain { Gate::Offer } else { Gate::Declined },
            callee_poisoned: false,
            span: expr_span,
            expr_span,
        })
    }

    // ---------------------------------------------------------------- sites

    /// Decides one site, records its report and diagnostic, and returns its value.
    fn site(&mut self, input: SiteInput) -> Value {
        let tensor_site = (input.kind == SiteKind::Call
            && input.target.split('.').next() == Some("torch"))
            || input.operands.iter().any(|o| o.value.is_plugin_typed())
            || input
                .receiver
                .as_ref()
                .is_some_and(|r| r.value.is_plugin_typed());
        let poisoned = input.callee_poisoned
            || input.operands.iter().any(|o| o.value.poisoned)
            || input.receiver.as_ref().is_some_and(|r| r.value.poisoned);

        let verdict = match &input.gate {
            Gate::Dynamic => Verdict::NotCovered {
                code: codes::NOT_LOWERED,
                message: codes::unresolved_call(&input.target),
            },
            _ if !tensor_site => self.host_not_covered(&input),
            Gate::NotOffered(reason) => Verdict::NotOffered {
                reason: reason.clone(),
            },
            Gate::Declined => self.host_not_covered(&input),
            Gate::Offer => match claim::claim_with(&claim_site(&input), self.ctx.surface) {
                ClaimOutcome::Claimed {
                    rule_id,
                    result_type,
                    op,
                } => Verdict::Claimed {
                    rule_id,
                    result_type,
                    op,
                },
                ClaimOutcome::Rejected { code, message } => Verdict::Rejected {
                    code: code.to_string(),
                    message,
                },
                ClaimOutcome::NotCovered => self.host_not_covered(&input),
            },
        };

        let (line, column) = line_column(self.ctx.source, input.span.start);
        let mut report = SiteReport {
            line,
            column,
            kind: input.kind,
            target: input.target.clone(),
            outcome: SiteOutcome::Claimed,
            rule_id: None,
            result_type: None,
            code: None,
            message: None,
            span: input.span,
        };
        let value = match &verdict {
            Verdict::Claimed {
                rule_id,
                result_type,
                op,
            } => {
                report.rule_id = Some(rule_id.to_string());
                report.result_type = Some(display_type(Some(result_type)));
                let def = ValueDef::Op {
                    op: op.clone(),
                    receiver: input.receiver.as_ref().and_then(|r| r.value.id),
                    operands: input.operands.iter().map(|o| o.value.id).collect(),
                    result_type,
                };
                let id = self.out.trace.push(def, input.expr_span);
                Value {
                    ty: Some(result_type.to_string()),
                    id: Some(id),
                    ..Value::default()
                }
            }
            Verdict::Rejected { code, message } => {
                report.outcome = SiteOutcome::Rejected;
                report.code = Some(code.clone());
                report.message = Some(message.clone());
                Value::poisoned()
            }
            Verdict::NotCovered { code, message } => {
                report.outcome = SiteOutcome::NotCovered;
                report.code = Some(code.to_string());
                report.message = Some(message.clone());
                Value::poisoned()
            }
            Verdict::NotOffered { reason } => {
                report.outcome = SiteOutcome::NotOffered;
                report.code = Some(codes::NOT_OFFERED.to_string());
                report.message = Some(codes::not_offered(reason));
                Value::poisoned()
            }
        };
        let suppressed = poisoned && matches!(verdict, Verdict::NotCovered { .. });
        let plugin_compare = input.kind == SiteKind::Compare
            && matches!(verdict, Verdict::NotCovered { .. })
            && input.operands.iter().any(|o| o.value.is_plugin_typed());
        if plugin_compare {
            // Core blocks the comparison itself once the plugin declines it.
            self.blocker(
                input.span,
                "comparing plugin-typed values is not covered by any plugin rule; compute the result with a covered operation or keep the function on the Python fallback",
            );
        } else if !suppressed {
            if let Some(diagnostic) = site_diagnostic(&input, &verdict, &report) {
                self.out.diagnostics.push(diagnostic);
            }
        }
        self.out.sites.push(report);
        value
    }

    /// What the host reports for a site no rule lowers.
    fn host_not_covered(&self, input: &SiteInput) -> Verdict {
        let target = input.target.as_str();
        let (code, message) = match input.kind {
            SiteKind::Call
                if input.receiver.is_none() && self.ctx.plugin_functions.contains(target) =>
            {
                (
                    codes::CALLS_NATIVE_FUNCTION,
                    codes::calls_native_function(target),
                )
            }
            SiteKind::Call
                if input.receiver.is_none() && target.split('.').next() == Some("torch") =>
            {
                (codes::NOT_LOWERED, codes::external_call_not_lowered(target))
            }
            SiteKind::Call => (codes::NOT_LOWERED, codes::unresolved_call(target)),
            _ if !input.operands.iter().any(|o| o.value.is_plugin_typed()) => {
                (codes::NOT_LOWERED, codes::scalar_operator(target))
            }
            SiteKind::Binop => (codes::HOST_PLUGIN_TYPES, codes::uncovered_operator(target)),
            SiteKind::Compare => (
                codes::HOST_PLUGIN_TYPES,
                codes::uncovered_comparison(target),
            ),
        };
        Verdict::NotCovered { code, message }
    }
}

fn claim_site(input: &SiteInput) -> ClaimSite {
    ClaimSite {
        kind: input.kind,
        target: input.target.clone(),
        operand_types: input.operands.iter().map(|o| o.value.ty.clone()).collect(),
        operand_literals: input.operands.iter().map(|o| o.literal.clone()).collect(),
        keywords: input.keywords.clone(),
        receiver: input.receiver.as_ref().map(|r| Receiver {
            arg_type: r.value.ty.clone(),
            expr_kind: r.kind,
        }),
    }
}

/// The diagnostic of a site that was not claimed.
fn site_diagnostic(
    input: &SiteInput,
    verdict: &Verdict,
    report: &SiteReport,
) -> Option<Diagnostic> {
    let message = report.message.clone().unwrap_or_default();
    let what = if input.kind == SiteKind::Call {
        "call"
    } else {
        "operation"
    };
    match verdict {
        Verdict::Claimed { .. } => None,
        Verdict::Rejected { code, .. } => {
            let mut diagnostic = Diagnostic::error(code.clone(), message.clone())
                .with_primary(input.span, format!("rextio-torch rejects this {what}"));
            if ["type", "rank", "float32"]
                .iter()
                .any(|word| message.contains(word))
            {
                // Point at the values outside the float32 CPU surface (`b` in a linear with an
                // int64 bias, `2` in `a * 2`).
                let receiver = input.receiver.as_ref().map(|r| (&r.value, r.span));
                let operands = input.operands.iter().map(|o| (&o.value, o.span));
                for (value, span) in receiver.into_iter().chain(operands) {
                    let ty = value.ty.as_deref();
                    if ty.is_some() && !ty.is_some_and(|t| t == claim::KEY_M || t == claim::KEY_V) {
                        diagnostic = diagnostic
                            .with_secondary(span, format!("this is {}", display_type(ty)));
                    }
                }
            }
            if let Some(suggestion) = reject_suggestion(&input.target, &message) {
                diagnostic = diagnostic.with_suggestion(suggestion);
            }
            Some(diagnostic)
        }
        Verdict::NotCovered { code, .. } => {
            let label = match *code {
                codes::HOST_PLUGIN_TYPES => "no rextio-torch rule covers this operator".to_string(),
                codes::CALLS_NATIVE_FUNCTION => {
                    "calls a function with plugin-typed parameters".to_string()
                }
                _ => format!("this {what} is not lowered by this build"),
            };
            let mut diagnostic = Diagnostic::error(*code, message).with_primary(input.span, label);
            if let Some(suggestion) = not_covered_suggestion(&input.target) {
                diagnostic = diagnostic.with_suggestion(suggestion);
            }
            Some(diagnostic)
        }
        Verdict::NotOffered { reason } => {
            let mut diagnostic = Diagnostic::error(codes::NOT_OFFERED, message).with_primary(
                input.span,
                format!("this {what} is never offered to rextio-torch"),
            );
            diagnostic.severity = Severity::Warning;
            if reason.starts_with("keyword `out`") {
                diagnostic = diagnostic.with_suggestion(
                    "drop `out=`: compiled code returns new tensors and never writes into its arguments",
                );
            } else if reason.starts_with("keyword") {
                // Keyword values must be literal constants (`dim=1`); a tensor or a variable
                // passed by keyword is fine positionally.
                diagnostic = diagnostic.with_suggestion(
                    "pass this value positionally; keyword arguments must be literal constants such as `dim=1`",
                );
            }
            Some(diagnostic)
        }
    }
}

/// A short fix for the common plugin rejections.
fn reject_suggestion(target: &str, message: &str) -> Option<String> {
    let method = target.rsplit('.').next().unwrap_or(target);
    let suggestion = if message.contains("only zero-argument") {
        format!("call it without arguments: `.{method}()`")
    } else if message.contains("at most one positional literal dim") {
        "write dim=1, keepdim=False as keywords".to_string()
    } else if message.contains("requires literal dim=0 or dim=1")
        || message.contains("requires a literal dim=0 or dim=1")
    {
        "reduce over a literal dim=0 or dim=1".to_string()
    } else if let Some(range) = message.split("(expected a dim in ").nth(1) {
        // The extended surface's out-of-range dim: the dims there are, as eager lists them.
        format!("use a literal dim in {}", range.trim_end_matches(')'))
    } else if message.contains("keywords must be unique static literals") {
        "write dim as an int literal and keepdim as True or False".to_string()
    } else if message.contains("plus rank-1 bias") {
        "linear takes TensorF32Cpu2D input and weight and a TensorF32Cpu1D bias".to_string()
    } else if message.contains("operand types are outside") {
        "operands must be TensorF32Cpu2D or TensorF32Cpu1D values; scalar operands are not supported yet"
            .to_string()
    } else if message.contains("GELU requires one positional") {
        "write `F.gelu(x)` or `F.gelu(x, approximate=\"none\")`".to_string()
    } else if message.contains("functional elementwise calls require exactly two") {
        format!("pass exactly two tensors and no keywords: `{target}(a, b)`")
    } else if message.contains("only .matmul(other)") {
        "write `a.matmul(b)` with one tensor, or `a @ b`".to_string()
    } else if message.contains("(tensor) with one positional tensor") {
        format!("pass exactly one tensor: `{target}(x)`")
    } else {
        return None;
    };
    Some(suggestion)
}

/// A short fix for well-known calls the plugin does not cover.
fn not_covered_suggestion(target: &str) -> Option<String> {
    let method = target.rsplit('.').next().unwrap_or(target);
    let suggestion = match target {
        "torch.subtract" => "write `torch.sub(a, b)` or `a - b`".to_string(),
        "torch.multiply" => "write `torch.mul(a, b)` or `a * b`".to_string(),
        "torch.divide" => "write `torch.div(a, b)` or `a / b`".to_string(),
        "torch.nn.functional.tanh" => "write `torch.tanh(x)` or `x.tanh()`".to_string(),
        "torch.nn.functional.sigmoid" => "write `torch.sigmoid(x)` or `x.sigmoid()`".to_string(),
        _ if method.ends_with('_') && method.len() > 1 && !target.contains("<dynamic>") => {
            format!(
                "in-place ops are not supported; use `.{}()`",
                method.trim_end_matches('_')
            )
        }
        _ if target.contains('.') && ["add", "sub", "mul", "div"].contains(&method) => {
            let op = match method {
                "add" => "+",
                "sub" => "-",
                "mul" => "*",
                _ => "/",
            };
            format!("use the operator: `a {op} b`")
        }
        _ if target.starts_with("<dynamic>.") => {
            format!("bind the operand to a name first: `h = ...; h.{method}()`")
        }
        _ => return None,
    };
    Some(suggestion)
}

// -------------------------------------------------------------------- literals

/// A positional literal: signed int (unary minus folded), `None`, or a tuple of ints.
fn positional_literal(expr: &Expr) -> Literal {
    match expr {
        Expr::NoneLiteral(_) => Literal::None,
        Expr::Tuple(tuple) => {
            let ints: Option<Vec<i64>> = tuple.elts.iter().map(int_literal).collect();
            ints.map_or(Literal::NonLiteral, Literal::IntTuple)
        }
        other => int_literal(other).map_or(Literal::NonLiteral, Literal::Int),
    }
}

/// A keyword literal: a positional literal, a bool or a string.
fn keyword_literal(expr: &Expr) -> Literal {
    match expr {
        Expr::BooleanLiteral(boolean) => Literal::Bool(boolean.value),
        Expr::StringLiteral(string) => Literal::Str(string.value.to_str().to_string()),
        other => positional_literal(other),
    }
}

fn int_literal(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::NumberLiteral(number) => match &number.value {
            Number::Int(int) => int.as_i64(),
            _ => None,
        },
        Expr::UnaryOp(unary) if unary.op == UnaryOp::USub => match &*unary.operand {
            Expr::NumberLiteral(number) => match &number.value {
                Number::Int(int) => int.as_i64().and_then(i64::checked_neg),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// A keyword's `arg_type`: the kind of its literal (`None` for non-literals).
fn literal_type(literal: &Literal) -> Option<&'static str> {
    match literal {
        Literal::NonLiteral => None,
        Literal::Int(_) => Some("int"),
        Literal::None => Some("None"),
        Literal::IntTuple(_) => Some("tuple"),
        Literal::Bool(_) => Some("bool"),
        Literal::Str(_) => Some("str"),
    }
}

// -------------------------------------------------------------------- names

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
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr {
            if name.ctx == ExprContext::Store {
                self.names.push(name.id.to_string());
            }
        }
        walk_expr(self, expr);
    }
}
