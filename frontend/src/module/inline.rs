//! A user module as a member (`self.block(x)`, where `block`'s class is a user `nn.Module`
//! whose own `forward` is in the same source, or in another file: [`super::foreign`]), and a
//! helper method of the module's own class (`self.gelu(x)`): its call is inlined into the
//! calling method as statements, so the claim rules, the optimizer and the executor see one
//! straight function.
//!
//! - **The callee.** The member's `forward` (found by its line, [`super::find_method`]) is
//!   rewritten as a method of its own first ([`super::rewrite_in`]: its members, its own user
//!   modules), then its every local name (parameters and receiver included) is renamed to a
//!   fresh one (`self_block__h`), so nothing of it can meet a name of the caller, and a
//!   leftover use of its receiver (`self.scale` of a float attribute) stays an unresolved
//!   name of its own rather than the caller's member of that name.
//! - **The call.** Its arguments are bound to the renamed parameters in source order, then
//!   the callee's statements follow, its closing `return value` becoming `result = value`;
//!   the call's place holds `result`. These statements go before the statement holding the
//!   call (hoisting). To keep Python's evaluation order, every subexpression evaluated before
//!   the call in that statement (a left operand, an earlier argument, a method's receiver) is
//!   hoisted too, into a temporary, unless it is a name, a literal or an attribute path,
//!   whose evaluation cannot raise or differ.
//! - **ModuleLists.** `self.layers[i](x)` (a literal `i`, negative too) is a call of that
//!   item; `for layer in self.layers:` is unrolled, one copy of its body per item, in which
//!   `layer(...)` is a call of that item (a `break`/`continue` in the body, or `layer` used
//!   other than called, is refused).
//! - **Where it is refused** (`RXT093`, the call stays as written): a call evaluated only
//!   sometimes or again and again (inside `and`/`or`, a conditional expression, a chained
//!   comparison past its first link, a comprehension or lambda, a `while` or `elif` test,
//!   statements the frontend does not lower), a callee whose `forward` returns before its
//!   last statement or has no `return value` there, takes `*args`/`**kwargs`, or is called
//!   with arguments that do not bind (eager's `TypeError`); and a member the Python side
//!   describes as not compiled (`Member::Unsupported`: a layer of an unknown kind, a user
//!   module whose source cannot be read), with its reason; a callee already being inlined
//!   (recursion).
//!
//! Every node put in place carries the span of what it stands for (the callee's statements
//! keep their own), so diagnostics point at the user's lines: the caller's call, or the
//! callee's line.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use rextio_ir::codes::Rxt;
use rextio_ir::Diagnostic;
use ruff_python_ast::name::Name;
use ruff_python_ast::statement_visitor::{walk_stmt, StatementVisitor};
use ruff_python_ast::visitor::transformer::{walk_body, walk_expr, Transformer};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, AtomicNodeIndex, Expr, ExprContext, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

mod loops;

use super::foreign::{self, Foreign};
use super::{Member, ModuleDescription, Rewriter, SourceFile};
use crate::parse::span_of;

/// What every inlining of one analysis shares: the parsed source (to find callees), the
/// names already taken, and the diagnostics.
pub(crate) struct Inliner<'a> {
    source: &'a str,
    module: &'a [Stmt],
    /// The files other callees come from ([`foreign`]), by their index in the description.
    foreign: Vec<Foreign>,
    /// The names the analyzed file binds at module level.
    globals: HashSet<String>,
    /// Every name of the sources and every name made so far: a fresh name is none of them.
    taken: RefCell<HashSet<String>>,
    diagnostics: RefCell<Vec<Diagnostic>>,
    /// Names made for a foreign callee's imports, with their dotted paths.
    bindings: RefCell<Vec<(String, String)>>,
    /// The callees being inlined, as (source, line): a callee among them calls itself.
    active: RefCell<Vec<(Option<usize>, u32)>>,
}

/// The method being rewritten: its receiver's name, its members, and the prefix of the names
/// made for what it inlines (`self_block`).
pub(super) struct Scope<'a> {
    pub receiver: String,
    pub description: &'a ModuleDescription,
    pub path: String,
    /// The file the method's spans are in: `None` the analyzed one, else a foreign one.
    pub source: Option<usize>,
    /// Loop variables over a ModuleList, each standing for one item in an unrolled copy of
    /// the loop's body.
    pub aliases: HashMap<String, Target<'a>>,
}

impl<'s> Inliner<'s> {
    pub(crate) fn new(source: &'s str, module: &'s [Stmt], sources: &[SourceFile]) -> Inliner<'s> {
        let mut names = Names::default();
        visitor::walk_body(&mut names, module);
        let foreign: Vec<Foreign> = sources
            .iter()
            .map(|s| Foreign::new(&s.path, &s.text))
            .collect();
        for file in &foreign {
            if let Some(ast) = &file.ast {
                visitor::walk_body(&mut names, &ast.body);
            }
        }
        Inliner {
            source,
            module,
            foreign,
            globals: foreign::globals(module),
            taken: RefCell::new(names.0),
            diagnostics: RefCell::new(Vec::new()),
            bindings: RefCell::new(Vec::new()),
            active: RefCell::new(Vec::new()),
        }
    }

    /// The text of `source` (`None`: the analyzed file).
    fn text(&self, source: Option<usize>) -> &str {
        match source {
            None => self.source,
            Some(i) => self.foreign.get(i).map_or("", |f| f.text.as_str()),
        }
    }

    /// The diagnostics of every refused call, in source order, each once (an unrolled loop
    /// body, or a callee inlined twice, would repeat them), and the names to bind in the
    /// analysis's imports.
    pub(crate) fn finish(self) -> (Vec<Diagnostic>, Vec<(String, String)>) {
        let bindings = self.bindings.into_inner();
        let mut diagnostics = self.diagnostics.into_inner();
        let key = |d: &Diagnostic| {
            let span = d.primary.as_ref().map(|l| (l.span.start, l.span.end));
            (span, d.message.clone())
        };
        diagnostics.sort_by_key(key);
        diagnostics.dedup_by_key(|d| key(d));
        (diagnostics, bindings)
    }

    /// A name no source name and no earlier made name is: `base`, else `base_2`, ...
    fn fresh(&self, base: &str) -> String {
        let mut taken = self.taken.borrow_mut();
        let mut name = base.to_string();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        taken.insert(name.clone());
        name
    }

    fn refuse(&self, range: TextRange, message: String, label: &str) {
        self.diagnostics.borrow_mut().push(
            Diagnostic::error(Rxt::ModuleMember.code(), message)
                .with_primary(span_of(&range), label),
        );
    }

    /// A call of a member described as not compiled, with its reason.
    fn refuse_unsupported(&self, site: &Site, why: &str) {
        self.refuse(
            site.at,
            format!("`{}` is not compiled: {why}", site.display),
            "called here",
        );
    }

    /// The diagnostics pushed since `from`, found in a callee of `source` that is moved into
    /// its caller's spans: moved to `at` (the call), their message saying where in the
    /// callee's file they were (the innermost place, once).
    fn move_diagnostics(&self, from: usize, source: Option<usize>, at: TextRange) {
        let text = self.text(source);
        let file = source
            .and_then(|i| self.foreign.get(i))
            .map_or("the compiled file", Foreign::file_name);
        for d in self.diagnostics.borrow_mut().iter_mut().skip(from) {
            if let Some(primary) = &mut d.primary {
                if !d.message.contains(" (at ") {
                    let (line, _) = crate::parse::line_column(text, primary.span.start);
                    d.message = format!("{} (at {file}:{line})", d.message);
                }
                primary.span = span_of(&at);
            }
        }
    }

    /// Names that must stay free (the hidden parameters).
    pub(crate) fn take(&self, names: impl IntoIterator<Item = String>) {
        self.taken.borrow_mut().extend(names);
    }

    /// Inlines the calls of `body` (and of the blocks nested in it).
    pub(super) fn body(&self, body: &mut ast::Suite, scope: &Scope) {
        let old = std::mem::take(body);
        for mut stmt in old {
            if let Stmt::For(stmt_for) = &stmt {
                if let Some(list) = scope.target(&stmt_for.iter) {
                    if let Member::List { items } = list.member {
                        self.unroll(stmt_for, items, &list, body, scope);
                        continue;
                    }
                }
                if let Some(count) = self.range_count(&stmt_for.iter, scope) {
                    if self.unroll_range(stmt_for, count, body, scope) {
                        continue;
                    }
                }
            }
            let mut pre = Vec::new();
            match &mut stmt {
                Stmt::Assign(assign) => {
                    for target in &assign.targets {
                        self.refuse_in(target, scope, "an assignment's target");
                    }
                    self.lift(&mut assign.value, &mut pre, scope);
                }
                Stmt::AnnAssign(assign) => {
                    if let Some(value) = &mut assign.value {
                        self.lift(value, &mut pre, scope);
                    }
                }
                Stmt::AugAssign(aug) => {
                    self.refuse_in(&aug.target, scope, "an assignment's target");
                    self.lift(&mut aug.value, &mut pre, scope);
                }
                Stmt::Return(ret) => {
                    if let Some(value) = &mut ret.value {
                        self.lift(value, &mut pre, scope);
                    }
                }
                Stmt::Expr(expr) => {
                    self.lift(&mut expr.value, &mut pre, scope);
                }
                Stmt::If(stmt_if) => {
                    self.lift(&mut stmt_if.test, &mut pre, scope);
                    self.body(&mut stmt_if.body, scope);
                    for clause in &mut stmt_if.elif_else_clauses {
                        if let Some(test) = &clause.test {
                            self.refuse_in(
                                test,
                                scope,
                                "an `elif` test (write it as `else:` and `if`)",
                            );
                        }
                        self.body(&mut clause.body, scope);
                    }
                }
                Stmt::For(stmt_for) => {
                    self.refuse_in(&stmt_for.target, scope, "a `for` target");
                    self.lift(&mut stmt_for.iter, &mut pre, scope);
                    self.body(&mut stmt_for.body, scope);
                    self.body(&mut stmt_for.orelse, scope);
                }
                Stmt::While(stmt_while) => {
                    self.refuse_in(
                        &stmt_while.test,
                        scope,
                        "a `while` test, evaluated at every iteration",
                    );
                    self.body(&mut stmt_while.body, scope);
                    self.body(&mut stmt_while.orelse, scope);
                }
                other => {
                    let mut calls = Calls {
                        scope,
                        found: Vec::new(),
                    };
                    calls.visit_stmt(other);
                    for range in calls.found {
                        self.refuse_at(range, scope, "a statement native functions do not lower");
                    }
                }
            }
            body.extend(pre);
            body.push(stmt);
        }
    }

    /// Every read of a member described as not compiled (`self.table` of a tensor that is
    /// neither a parameter nor a buffer) that is not a call, refused with its reason: it
    /// would otherwise be an attribute access that is not lowered.
    pub(super) fn refuse_reads(&self, body: &[Stmt], scope: &Scope) {
        let mut reads = Reads {
            scope,
            found: Vec::new(),
        };
        visitor::walk_body(&mut reads, body);
        for (range, display, why) in reads.found {
            self.refuse(
                range,
                format!("`{display}` is not compiled: {why}"),
                "read here",
            );
        }
    }

    /// A member call of `expr` that is inlined, refused: it stands where it cannot be.
    fn refuse_in(&self, expr: &Expr, scope: &Scope, place: &str) {
        let mut calls = Calls {
            scope,
            found: Vec::new(),
        };
        calls.visit_expr(expr);
        for range in calls.found {
            self.refuse_at(range, scope, place);
        }
    }

    fn refuse_at(&self, range: TextRange, scope: &Scope, place: &str) {
        let callee = self
            .text(scope.source)
            .get(range.start().to_usize()..range.end().to_usize())
            .unwrap_or("?");
        self.refuse(
            range,
            format!("a call of the module member `{callee}` is not compiled in {place}"),
            "the member's forward would be inlined here",
        );
    }

    /// Hoists the inlined calls of `expr` (and what is evaluated before them) into `pre`;
    /// whether it held one.
    fn lift(&self, expr: &mut Expr, pre: &mut Vec<Stmt>, scope: &Scope) -> bool {
        if let Expr::Call(call) = expr {
            if let Some(target) = scope.inlined(&call.func) {
                let mut children: Vec<&mut Expr> = call.arguments.args.iter_mut().collect();
                children.extend(call.arguments.keywords.iter_mut().map(|k| &mut k.value));
                self.lift_all(children, pre, scope);
                if let Some(result) = self.call(&target, call, pre, scope) {
                    *expr = result;
                }
                return true;
            }
        }
        match expr {
            Expr::BinOp(binop) => {
                self.lift_all(vec![&mut *binop.left, &mut *binop.right], pre, scope)
            }
            Expr::UnaryOp(unary) => self.lift(&mut unary.operand, pre, scope),
            Expr::Attribute(attribute) => self.lift(&mut attribute.value, pre, scope),
            Expr::Subscript(subscript) => self.lift_all(
                vec![&mut *subscript.value, &mut *subscript.slice],
                pre,
                scope,
            ),
            Expr::Starred(starred) => self.lift(&mut starred.value, pre, scope),
            Expr::Named(named) => self.lift(&mut named.value, pre, scope),
            Expr::Tuple(tuple) => self.lift_all(tuple.elts.iter_mut().collect(), pre, scope),
            Expr::List(list) => self.lift_all(list.elts.iter_mut().collect(), pre, scope),
            Expr::Call(call) => {
                // The callee's receiver is evaluated first, then the arguments in order; the
                // callee itself (`F.linear`, `h.relu`) is never a temporary.
                let mut children: Vec<&mut Expr> = Vec::new();
                if let Expr::Attribute(attribute) = &mut *call.func {
                    children.push(&mut attribute.value);
                }
                children.extend(call.arguments.args.iter_mut());
                children.extend(call.arguments.keywords.iter_mut().map(|k| &mut k.value));
                self.lift_all(children, pre, scope)
            }
            Expr::BoolOp(boolop) => match boolop.values.split_first_mut() {
                Some((first, rest)) => {
                    for value in rest.iter() {
                        self.refuse_in(value, scope, "an operand of `and`/`or` after the first");
                    }
                    self.lift(first, pre, scope)
                }
                None => false,
            },
            Expr::If(ifexp) => {
                for branch in [&*ifexp.body, &*ifexp.orelse] {
                    self.refuse_in(branch, scope, "a branch of a conditional expression");
                }
                self.lift(&mut ifexp.test, pre, scope)
            }
            Expr::Compare(compare) => match compare.comparators.split_first_mut() {
                Some((first, rest)) => {
                    for value in rest.iter() {
                        self.refuse_in(value, scope, "a chained comparison past its first link");
                    }
                    self.lift_all(vec![&mut *compare.left, first], pre, scope)
                }
                None => self.lift(&mut compare.left, pre, scope),
            },
            other => {
                self.refuse_in(
                    other,
                    scope,
                    "this kind of expression (a comprehension, lambda, dict, f-string, ...)",
                );
                false
            }
        }
    }

    /// `children` in evaluation order: each one's calls hoisted, and where one held a call,
    /// every earlier one that is not [`plain`] hoisted into a temporary before it.
    fn lift_all(&self, children: Vec<&mut Expr>, pre: &mut Vec<Stmt>, scope: &Scope) -> bool {
        let mut any = false;
        let mut earlier: Vec<&mut Expr> = Vec::new();
        for child in children {
            let mut mine = Vec::new();
            if self.lift(child, &mut mine, scope) {
                for before in earlier.drain(..) {
                    if !plain(before) {
                        let range = before.range();
                        let temp = self.fresh(&format!("{}__t", scope.path));
                        let value =
                            std::mem::replace(before, name(&temp, range, ExprContext::Load));
                        pre.push(assign(&temp, value, range));
                    }
                }
                pre.extend(mine);
                any = true;
            }
            earlier.push(child);
        }
        any
    }

    /// The value of calling `target`, its statements pushed to `pre`; `None` (with a
    /// diagnostic) where it is refused.
    fn call(
        &self,
        target: &Target,
        call: &ast::ExprCall,
        pre: &mut Vec<Stmt>,
        scope: &Scope,
    ) -> Option<Expr> {
        let member = target.member;
        let site = Site {
            display: target.display.clone(),
            path: target.path.clone(),
            at: call.func.range(),
            range: call.range(),
        };
        let arguments = &call.arguments;
        let callee = match member {
            Member::Module {
                line,
                members,
                source,
            } => Some((*line, *source, members)),
            // A method of the receiver's class: over the receiver's own members.
            Member::Helper { line, source } => Some((*line, *source, &scope.description.members)),
            _ => None,
        };
        if let Some((line, source, members)) = callee {
            let keywords = arguments
                .keywords
                .iter()
                .map(|k| (k.arg.as_ref().map(|a| a.to_string()), k.value.clone()))
                .collect();
            let callee = Callee {
                line,
                source,
                members,
                helper: matches!(member, Member::Helper { .. }),
            };
            return self.inline(
                &callee,
                &site,
                arguments.args.to_vec(),
                keywords,
                pre,
                scope,
            );
        }
        // A layer (a Sequential's): one positional argument, as `nn.Module.__call__` passes
        // it to a layer's forward.
        if arguments.args.len() != 1
            || !arguments.keywords.is_empty()
            || matches!(arguments.args[0], Expr::Starred(_))
        {
            match member {
                Member::Unsupported { why } => self.refuse_unsupported(&site, why),
                _ => self.refuse(
                    site.at,
                    format!(
                        "`{}` is called with other than one positional argument",
                        site.display
                    ),
                    "a layer takes its input alone",
                ),
            }
            return None;
        }
        self.layer(member, arguments.args[0].clone(), &site, call, pre, scope)
    }

    /// `layer` applied to `input`: inlined where it is a user module, else what the
    /// member rewriter makes of it (over `scope`'s members).
    fn layer(
        &self,
        layer: &Member,
        input: Expr,
        site: &Site,
        call: &ast::ExprCall,
        pre: &mut Vec<Stmt>,
        scope: &Scope,
    ) -> Option<Expr> {
        match layer {
            Member::Module {
                line,
                members,
                source,
            } => {
                let callee = Callee {
                    line: *line,
                    source: *source,
                    members,
                    helper: false,
                };
                self.inline(&callee, site, vec![input], Vec::new(), pre, scope)
            }
            Member::Unsupported { why } => {
                self.refuse_unsupported(site, why);
                None
            }
            Member::List { .. } => {
                self.refuse(
                    site.at,
                    format!(
                        "`{}` is a ModuleList, which is not called (iterate it: `for layer in {}:`)",
                        site.display, site.display
                    ),
                    "called here",
                );
                None
            }
            Member::Dict { .. } => {
                self.refuse(
                    site.at,
                    format!(
                        "`{}` is a ModuleDict, which is not called (call an item by its key: `{}[\"name\"](x)`)",
                        site.display, site.display
                    ),
                    "called here",
                );
                None
            }
            Member::Sequential { layers } if layers.iter().any(Member::inlined) => {
                let mut current = input;
                for (index, layer) in layers.iter().enumerate() {
                    current = self.layer(layer, current, &site.nested(index), call, pre, scope)?;
                }
                Some(current)
            }
            other => {
                let rewriter = Rewriter {
                    receiver: Some(scope.receiver.clone()),
                    description: scope.description,
                };
                rewriter.apply(other, input, site.at, call)
            }
        }
    }

    /// The statements of `callee` (a user module's `forward`, or a helper method), called
    /// from `scope` with `args` and `keywords`, pushed to `pre`: the value it returns, or
    /// `None` (with a diagnostic).
    fn inline(
        &self,
        callee: &Callee,
        site: &Site,
        args: Vec<Expr>,
        keywords: Vec<(Option<String>, Expr)>,
        pre: &mut Vec<Stmt>,
        scope: &Scope,
    ) -> Option<Expr> {
        let Callee {
            line,
            source,
            members,
            helper,
        } = *callee;
        let path = site.path.as_str();
        // A callee from another file than its caller's is moved into the caller's spans.
        let moved = source != scope.source;
        let refuse = |why: String| {
            let (what, its) = if helper {
                (
                    "a method of the module whose body is not inlined",
                    "the method",
                )
            } else {
                ("a user module whose forward is not inlined", "its forward")
            };
            self.refuse(
                site.at,
                format!(
                    "`{}` is {what}: {}",
                    site.display,
                    why.replacen("its forward", its, 1)
                ),
                "called here",
            );
            None
        };
        let module: &[Stmt] = match source {
            None => self.module,
            Some(i) => match self.foreign.get(i) {
                Some(Foreign { ast: Some(ast), .. }) => &ast.body,
                Some(file) => return refuse(format!("its file {} does not parse", file.path)),
                None => return refuse(format!("the description names no file {i}")),
            },
        };
        let Some(def) = super::find_method(module, line, self.text(source)) else {
            return refuse(format!("the source has no method on line {line}"));
        };
        if self.active.borrow().contains(&(source, line)) {
            return refuse("it calls itself (a recursive call is not inlined)".to_string());
        }
        if moved {
            if let Some(why) = foreign::unsupported_syntax(&def.body) {
                return refuse(format!(
                    "its forward, from another file, has {why}, which is not inlined across files"
                ));
            }
        }
        let parameters = &def.parameters;
        if parameters.vararg.is_some() || parameters.kwarg.is_some() {
            return refuse("its forward takes `*args` or `**kwargs`".to_string());
        }
        let positional: Vec<&ast::ParameterWithDefault> = parameters
            .posonlyargs
            .iter()
            .chain(&parameters.args)
            .collect();
        if positional.is_empty() {
            return refuse("its forward takes no `self`".to_string());
        }
        let mut body_start = 0;
        if let Some(Stmt::Expr(first)) = def.body.first() {
            if matches!(&*first.value, Expr::StringLiteral(_)) {
                body_start = 1; // a docstring: evaluating it does nothing
            }
        }
        let mut exits = Exits::default();
        exits.visit_body(&def.body);
        if !exits.scoping.is_empty() {
            return refuse("its forward declares `global` or `nonlocal` names".to_string());
        }
        match def.body.last() {
            Some(Stmt::Return(ret)) if ret.value.is_some() && exits.returns.len() == 1 => {}
            Some(Stmt::Return(_)) if exits.returns.len() == 1 => {
                return refuse("its forward returns no value".to_string())
            }
            _ if exits.returns.len() > 1 || exits.returns.is_empty() => {
                return refuse(
                    "its forward has a `return` before its last statement (one `return value` \
                     closing its body is inlined)"
                        .to_string(),
                )
            }
            _ => {
                return refuse("its forward does not end with `return value`".to_string());
            }
        }

        // A callee of another file reads its free names through that file's imports.
        let mut def = def.clone();
        if let Some(i) = source {
            let file = &self.foreign[i];
            let mut locals: HashSet<String> = positional
                .iter()
                .copied()
                .chain(&parameters.kwonlyargs)
                .map(|p| p.parameter.name.to_string())
                .collect();
            let mut stores = Stores::default();
            visitor::walk_body(&mut stores, &def.body);
            locals.extend(stores.0);
            let stem: String = file
                .file_name()
                .trim_end_matches(".py")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let rename = |name: &str, dotted: &str| {
                let new = self.fresh(&format!("{stem}__{name}"));
                self.bindings
                    .borrow_mut()
                    .push((new.clone(), dotted.to_string()));
                new
            };
            if let Err(name) =
                foreign::resolve_free(&mut def.body, &locals, file, &self.globals, &rename)
            {
                return refuse(format!(
                    "its forward reads `{name}`, a module-level name of {} that is not an \
                     import, which is not inlined across files",
                    file.file_name()
                ));
            }
        }

        // The callee as a method of its own: its members and user modules, then its names.
        let description = ModuleDescription {
            members: members.clone(),
            ..ModuleDescription::default()
        };
        let before = self.diagnostics.borrow().len();
        self.active.borrow_mut().push((source, line));
        let callee = super::rewrite_in(&def, &description, self, Some(path), source);
        self.active.borrow_mut().pop();
        if moved {
            self.move_diagnostics(before, source, site.at);
        }
        let receiver = positional[0].parameter.name.to_string();
        let mut locals = vec![receiver];
        locals.extend(
            positional[1..]
                .iter()
                .copied()
                .chain(&parameters.kwonlyargs)
                .map(|p| p.parameter.name.to_string()),
        );
        let mut stores = Stores::default();
        visitor::walk_body(&mut stores, &callee.body);
        locals.extend(stores.0);
        let mut renames = HashMap::new();
        for local in locals {
            if let std::collections::hash_map::Entry::Vacant(entry) = renames.entry(local) {
                let fresh = self.fresh(&format!("{path}__{}", entry.key()));
                entry.insert(fresh);
            }
        }
        let mut body: Vec<Stmt> = callee.body.into_iter().skip(body_start).collect();
        walk_body(&Rename(&renames), &mut body);
        if moved {
            foreign::relocate(&mut body, site.at);
        }

        // The arguments bound in source order (as Python evaluates them), then the defaults.
        let mut bindings = Vec::new();
        let mut bound = HashSet::new();
        let takes = positional.len() - 1;
        if args.len() > takes {
            return refuse(format!(
                "its forward takes {takes} positional argument(s), {} given",
                args.len()
            ));
        }
        for (parameter, arg) in positional[1..].iter().zip(args) {
            if matches!(arg, Expr::Starred(_)) {
                return refuse("a `*` argument does not bind to its parameters here".to_string());
            }
            let name = parameter.parameter.name.to_string();
            let range = arg.range();
            bindings.push(assign(&renames[&name], arg, range));
            bound.insert(name);
        }
        let named: Vec<&ast::ParameterWithDefault> = positional[1..]
            .iter()
            .copied()
            .chain(&parameters.kwonlyargs)
            .collect();
        for (keyword, value) in keywords {
            let Some(keyword) = keyword else {
                return refuse("a `**` argument does not bind to its parameters here".to_string());
            };
            if !named.iter().any(|p| p.parameter.name.as_str() == keyword) {
                return refuse(format!("its forward has no parameter `{keyword}`"));
            }
            if !bound.insert(keyword.clone()) {
                return refuse(format!("`{keyword}` is given twice"));
            }
            let range = value.range();
            bindings.push(assign(&renames[&keyword], value, range));
        }
        for parameter in named {
            let name = parameter.parameter.name.to_string();
            if bound.contains(&name) {
                continue;
            }
            match parameter.default.as_deref() {
                // Another file's default is read here only where it is a literal (a name
                // would be the caller's file's).
                Some(default) if moved && !literal(default) => {
                    return refuse(format!(
                        "`{name}` is not given and its default, in another file, is not a literal"
                    ))
                }
                Some(default) if plain(default) => {
                    let mut value = default.clone();
                    let mut range = default.range();
                    if moved {
                        foreign::relocate_expr(&mut value, site.at);
                        range = site.at;
                    }
                    bindings.push(assign(&renames[&name], value, range));
                }
                Some(_) => {
                    return refuse(format!(
                        "`{name}` is not given and its default is not a literal"
                    ))
                }
                None => return refuse(format!("`{name}` is not given")),
            }
        }

        let Some(Stmt::Return(ret)) = body.pop() else {
            return refuse("its forward does not end with `return value`".to_string());
        };
        let Some(value) = ret.value else {
            return refuse("its forward returns no value".to_string());
        };
        let result = self.fresh(path);
        pre.extend(bindings);
        pre.extend(body);
        pre.push(assign(&result, *value, ret.range));
        Some(name(&result, site.range, ExprContext::Load))
    }
}

/// What [`Inliner::inline`] inlines: the method on `line` of `source`, over `members`; a
/// helper method of the caller's class, or a user module's forward.
struct Callee<'m> {
    line: u32,
    source: Option<usize>,
    members: &'m HashMap<String, Member>,
    helper: bool,
}

/// Whether `expr` is a literal (a number, negated too, a string, `True`, `None`, a tuple of
/// them): its value is the same in any file.
fn literal(expr: &Expr) -> bool {
    match expr {
        Expr::Tuple(tuple) => tuple.elts.iter().all(literal),
        Expr::Name(_) | Expr::Attribute(_) => false,
        other => plain(other),
    }
}

/// One call being inlined: how messages name the callee (`self.block`, `self.body[1]`), the
/// prefix of the names made for it, where the callee is written (diagnostics) and the call.
struct Site {
    display: String,
    path: String,
    at: TextRange,
    range: TextRange,
}

impl Site {
    fn nested(&self, index: usize) -> Site {
        Site {
            display: format!("{}[{index}]", self.display),
            path: format!("{}_{index}", self.path),
            at: self.at,
            range: self.range,
        }
    }
}

/// Every name the source binds or reads.
#[derive(Default)]
struct Names(HashSet<String>);

impl<'a> Visitor<'a> for Names {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Name(name) = expr {
                self.0.insert(name.id.to_string());
            }
            visitor::walk_expr(self, expr);
        })
    }

    fn visit_parameter(&mut self, parameter: &'a ast::Parameter) {
        self.0.insert(parameter.name.to_string());
        visitor::walk_parameter(self, parameter);
    }
}

/// The reads (not calls) of members described as not compiled: range, name, reason.
struct Reads<'s, 'd> {
    scope: &'s Scope<'d>,
    found: Vec<(TextRange, String, String)>,
}

impl<'a> Visitor<'a> for Reads<'_, '_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            match expr {
                Expr::Call(call) => {
                    // A call's callee is the inliner's (refused there, with the call's reason).
                    if let Expr::Attribute(attribute) = &*call.func {
                        self.visit_expr(&attribute.value);
                    } else {
                        self.visit_expr(&call.func);
                    }
                    visitor::walk_arguments(self, &call.arguments);
                }
                Expr::Attribute(_) | Expr::Subscript(_) => match self.scope.target(expr) {
                    Some(Target {
                        member: Member::Unsupported { why },
                        display,
                        ..
                    }) => self.found.push((expr.range(), display, why.clone())),
                    _ => visitor::walk_expr(self, expr),
                },
                _ => visitor::walk_expr(self, expr),
            }
        })
    }
}

/// The ranges of the inlined member calls in what it visits.
struct Calls<'s, 'd> {
    scope: &'s Scope<'d>,
    found: Vec<TextRange>,
}

impl<'a> Visitor<'a> for Calls<'_, '_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Call(call) = expr {
                if self.scope.inlined(&call.func).is_some() {
                    self.found.push(call.func.range());
                }
            }
            visitor::walk_expr(self, expr);
        })
    }
}

/// Whether evaluating `expr` can neither raise nor differ when moved before or after other
/// code: a name, a literal, an attribute path over a name, a tuple of those.
fn plain(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_)
        | Expr::NumberLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::EllipsisLiteral(_) => true,
        Expr::UnaryOp(unary) => {
            matches!(unary.op, UnaryOp::USub | UnaryOp::UAdd)
                && matches!(&*unary.operand, Expr::NumberLiteral(_))
        }
        Expr::Attribute(attribute) => plain(&attribute.value),
        Expr::Tuple(tuple) => tuple.elts.iter().all(plain),
        _ => false,
    }
}

pub(super) fn name(id: &str, range: TextRange, ctx: ExprContext) -> Expr {
    Expr::Name(ast::ExprName {
        node_index: AtomicNodeIndex::NONE,
        range,
        id: Name::new(id),
        ctx,
    })
}

fn assign(target: &str, value: Expr, range: TextRange) -> Stmt {
    Stmt::Assign(ast::StmtAssign {
        node_index: AtomicNodeIndex::NONE,
        range,
        targets: vec![name(target, range, ExprContext::Store)],
        value: Box::new(value),
    })
}

/// Renames every name of `renames` (loads and stores alike).
pub(super) struct Rename<'r>(pub &'r HashMap<String, String>);

impl Transformer for Rename<'_> {
    fn visit_expr(&self, expr: &mut Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Name(name) = expr {
                if let Some(new) = self.0.get(name.id.as_str()) {
                    name.id = Name::new(new);
                }
            }
            walk_expr(self, expr);
        })
    }
}

/// The loads of `name` that are not a call's callee.
struct Uses<'n> {
    name: &'n str,
    found: Vec<TextRange>,
}

impl<'a> Visitor<'a> for Uses<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| match expr {
            Expr::Call(call) if matches!(&*call.func, Expr::Name(n) if n.id.as_str() == self.name) =>
            {
                visitor::walk_arguments(self, &call.arguments);
            }
            Expr::Name(n) if n.id.as_str() == self.name => self.found.push(n.range),
            _ => visitor::walk_expr(self, expr),
        })
    }
}

/// The `break`s and `continue`s of a loop's body (not of loops nested in it).
#[derive(Default)]
struct LoopExits(Vec<TextRange>);

impl<'a> StatementVisitor<'a> for LoopExits {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Break(_) | Stmt::Continue(_) => self.0.push(stmt.range()),
            Stmt::For(_) | Stmt::While(_) | Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            _ => walk_stmt(self, stmt),
        }
    }
}

/// Every name `body` stores (assignment and loop targets, walrus).
#[derive(Default)]
pub(super) struct Stores(pub Vec<String>);

impl<'a> Visitor<'a> for Stores {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            if let Expr::Name(name) = expr {
                if matches!(name.ctx, ExprContext::Store | ExprContext::Del) {
                    self.0.push(name.id.to_string());
                }
            }
            visitor::walk_expr(self, expr);
        })
    }
}

/// The `return`s, `yield`s and scope statements of a body (nested blocks too, not nested
/// functions).
#[derive(Default)]
struct Exits {
    returns: Vec<TextRange>,
    scoping: Vec<TextRange>,
}

impl<'a> StatementVisitor<'a> for Exits {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Return(ret) => self.returns.push(ret.range),
            Stmt::Global(_) | Stmt::Nonlocal(_) => self.scoping.push(stmt.range()),
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            _ => walk_stmt(self, stmt),
        }
    }
}

/// What a call's callee names: a member, or an item of a ModuleList (by a literal index, or
/// as the variable of a loop over it), with how messages name it and the prefix of the names
/// made for it.
#[derive(Clone)]
pub(super) struct Target<'m> {
    member: &'m Member,
    display: String,
    path: String,
}

impl<'a> Scope<'a> {
    /// The member `expr` names: `self.<attr>`, `self.<list>[i]`, or a loop variable over a
    /// list.
    fn target(&self, expr: &Expr) -> Option<Target<'a>> {
        match expr {
            Expr::Attribute(_) => {
                let (member, attribute) =
                    super::member_named(expr, &self.receiver, self.description)?;
                let attr = attribute.attr.as_str();
                Some(Target {
                    member,
                    display: format!("{}.{attr}", self.receiver),
                    path: format!("{}_{attr}", self.path),
                })
            }
            Expr::Subscript(subscript) => {
                let list = self.target(&subscript.value)?;
                if let (Member::Dict { items }, Expr::StringLiteral(key)) =
                    (list.member, &*subscript.slice)
                {
                    // A ModuleDict's item by a literal key.
                    let key = key.value.to_str();
                    let stem: String = key
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect();
                    return Some(Target {
                        member: items.get(key)?,
                        display: format!("{}[{key:?}]", list.display),
                        path: format!("{}_{stem}", list.path),
                    });
                }
                let Member::List { items } = list.member else {
                    return None;
                };
                let index = literal_index(&subscript.slice)?;
                let resolved = if index < 0 {
                    items.len().checked_sub(index.unsigned_abs() as usize)?
                } else {
                    index as usize
                };
                Some(Target {
                    member: items.get(resolved)?,
                    display: format!("{}[{index}]", list.display),
                    path: format!("{}_{resolved}", list.path),
                })
            }
            Expr::Name(name) => self.aliases.get(name.id.as_str()).cloned(),
            _ => None,
        }
    }

    /// The member `func` names where its calls are this module's to inline or refuse
    /// ([`Member::inlined`]; every item of a list, through which no other rewrite reaches).
    fn inlined(&self, func: &Expr) -> Option<Target<'a>> {
        let target = self.target(func)?;
        let through_list = !matches!(func, Expr::Attribute(_));
        (through_list || target.member.inlined()).then_some(target)
    }
}

/// An int literal (`2`, `-1`).
pub(super) fn literal_index(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(int),
            ..
        }) => int.as_i64(),
        Expr::UnaryOp(unary) if unary.op == UnaryOp::USub => literal_index(&unary.operand)
            .filter(|v| *v >= 0)
            .map(|v| -v),
        _ => None,
    }
}
