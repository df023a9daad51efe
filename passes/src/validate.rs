//! IR validation: checks every invariant listed in `rextio_ir`'s crate docs and hands out a
//! [`Valid`] proof that later stages can demand (naga's `Validator` / `ModuleInfo` idea).
//!
//! Validation never stops at the first problem: it collects every error it finds, one
//! [`Diagnostic`] each, with the expression's span as the primary label when it has one. An
//! expression whose operands are already broken (undefined, or on mixed devices) is not
//! type-checked as well, so one mistake yields one diagnostic, not a cascade.
//!
//! # Codes
//!
//! One `RXIR` code per invariant group, declared with its doc line in the registry
//! ([`rextio_ir::codes::Rxir`], listed in `docs/diagnostics.md`); the constants below name
//! them for the checks.

use rextio_ir::codes::Rxir;
use rextio_ir::typing::{fusable_reduce, result_type};
use rextio_ir::{
    Block, Carried, Device, Diagnostic, ExprId, ExprKind, Function, FusedTail, Iteration, Stmt,
    Type, WeightLayout,
};

use crate::util::{describe, expr, index};

/// Proof that a function passed [`validate`]. Only [`validate`] can make one, so a stage that
/// takes a `Valid` may rely on every invariant without checking again.
#[derive(Clone, Copy, Debug)]
pub struct Valid<'a> {
    function: &'a Function,
}

impl<'a> Valid<'a> {
    pub fn function(&self) -> &'a Function {
        self.function
    }
}

impl std::ops::Deref for Valid<'_> {
    type Target = Function;

    fn deref(&self) -> &Function {
        self.function
    }
}

pub const OPERAND_NOT_DEFINED: &str = Rxir::OperandNotDefined.code();
pub const TYPE_MISMATCH: &str = Rxir::TypeMismatch.code();
pub const BAD_PARAM_INDEX: &str = Rxir::BadParamIndex.code();
pub const DEVICE_MIX: &str = Rxir::DeviceMix.code();
pub const BAD_RETURNS: &str = Rxir::BadReturns.code();
pub const RETURN_TYPE_MISMATCH: &str = Rxir::ReturnTypeMismatch.code();
pub const UNKNOWN_SIDE_TABLE_ENTRY: &str = Rxir::UnknownSideTableEntry.code();
pub const MALFORMED_FUSED_OP: &str = Rxir::MalformedFusedOp.code();
pub const UNSUPPORTED_TYPE: &str = Rxir::UnsupportedType.code();
pub const PASS_INTERNAL: &str = Rxir::PassInternal.code();
pub const PLACEMENT: &str = Rxir::Placement.code();
pub const OUT_OF_SCOPE: &str = Rxir::OutOfScope.code();
pub const CONTROL_FLOW: &str = Rxir::ControlFlow.code();
pub const STATEMENT_TYPE: &str = Rxir::StatementType.code();

/// Checks every invariant of `f`; on failure returns all the errors found, in arena order
/// (parameters, expressions, body, side tables).
pub fn validate(f: &Function) -> Result<Valid<'_>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    check_signature(f, &mut errors);
    for (id, _) in f.exprs.iter() {
        check_expr(f, id, &mut errors);
    }
    check_body(f, &mut errors);
    check_side_tables(f, &mut errors);
    if errors.is_empty() {
        Ok(Valid { function: f })
    } else {
        Err(errors)
    }
}

/// A diagnostic about expression `id`, pointing at its span when it has one.
fn at(f: &Function, id: ExprId, code: &str, message: String, label: String) -> Diagnostic {
    let diagnostic = Diagnostic::error(code, message);
    match f.span_of(id) {
        Some(span) => diagnostic.with_primary(span, label),
        None => diagnostic,
    }
}

fn supported(ty: Type) -> bool {
    match ty {
        Type::Tensor(t) => t.rank <= 3,
        Type::Int | Type::Bool | Type::Float => true,
    }
}

fn check_signature(f: &Function, errors: &mut Vec<Diagnostic>) {
    for (i, param) in f.params.iter().enumerate() {
        if !supported(param.ty) {
            errors.push(
                Diagnostic::error(
                    UNSUPPORTED_TYPE,
                    format!(
                        "parameter {i} (%{}) has unsupported type {}",
                        param.name, param.ty
                    ),
                )
                .with_note("tensor types have rank 0 to 3"),
            );
        }
    }
    if !supported(f.ret) {
        errors.push(
            Diagnostic::error(
                UNSUPPORTED_TYPE,
                format!(
                    "function `{}` has unsupported result type {}",
                    f.name, f.ret
                ),
            )
            .with_note("tensor types have rank 0 to 3"),
        );
    }
}

fn check_expr(f: &Function, id: ExprId, errors: &mut Vec<Diagnostic>) {
    let Some(this) = expr(f, id) else { return };
    let what = describe(id, this);

    // Invariant 1: operands are defined before their user.
    let mut operands_ok = true;
    for operand in this.kind.operands() {
        if index(operand) >= index(id) {
            operands_ok = false;
            let defined = if index(operand) < f.exprs.len() {
                "is defined after it"
            } else {
                "does not exist"
            };
            errors.push(at(
                f,
                id,
                OPERAND_NOT_DEFINED,
                format!("{what} uses %{}, which {defined}", index(operand)),
                format!("uses %{} before its definition", index(operand)),
            ));
        }
    }
    if !operands_ok {
        return;
    }

    // Invariant 3: parameter reads name an existing parameter.
    if let ExprKind::Param(i) = this.kind {
        if f.params.get(i as usize).is_none() {
            errors.push(
                at(
                    f,
                    id,
                    BAD_PARAM_INDEX,
                    format!(
                        "{what} reads parameter {i}, but `{}` has {} parameters",
                        f.name,
                        f.params.len()
                    ),
                    format!("no parameter {i}"),
                )
                .with_note("parameters are numbered from 0"),
            );
            return;
        }
    }

    // Invariant 4: tensor operands share one device.
    let devices: Vec<(ExprId, Device)> = this
        .kind
        .operands()
        .into_iter()
        .filter_map(|operand| match expr(f, operand).map(|e| e.ty) {
            Some(Type::Tensor(t)) => Some((operand, t.device)),
            _ => None,
        })
        .collect();
    if let Some(&(_, first)) = devices.first() {
        if devices.iter().any(|&(_, device)| device != first) {
            let listed: Vec<String> = devices
                .iter()
                .map(|(op, device)| format!("%{} on {device}", index(*op)))
                .collect();
            let mut diagnostic = at(
                f,
                id,
                DEVICE_MIX,
                format!("{what} mixes devices: {}", listed.join(", ")),
                "operands on different devices".to_string(),
            );
            for (operand, device) in &devices {
                if let Some(span) = f.span_of(*operand) {
                    diagnostic = diagnostic.with_secondary(span, format!("on {device}"));
                }
            }
            errors.push(diagnostic.with_suggestion("move every operand to one device first"));
            return;
        }
    }

    // A bound value's type is checked against its statement (invariant 9).
    if this.kind == ExprKind::Bound {
        return;
    }

    // Invariant 2: the declared type is the derived one.
    let operand_ty = |operand: ExprId| expr(f, operand).map_or(Type::Int, |e| e.ty);
    match result_type(&this.kind, operand_ty, &f.params) {
        Err(e) => errors.push(at(
            f,
            id,
            TYPE_MISMATCH,
            format!("{what} is ill-typed: {e}"),
            e.to_string(),
        )),
        Ok(derived) if derived != this.ty => errors.push(
            at(
                f,
                id,
                TYPE_MISMATCH,
                format!("{what} has type {}, expected {derived}", this.ty),
                format!("expected {derived}, found {}", this.ty),
            )
            .with_note("the expected type is the one the typing rules derive from the operands"),
        ),
        Ok(_) => {}
    }

    // Invariant 6: an added bias is a bias of `linear`'s layout (`fused_matmul`'s bias is
    // always added, with the addition's errors).
    if let ExprKind::FusedLinear {
        bias,
        layout,
        bias_added: true,
        ..
    } = &this.kind
    {
        if bias.is_none() || *layout != WeightLayout::OutIn {
            errors.push(at(
                f,
                id,
                MALFORMED_FUSED_OP,
                format!("{what} marks its bias as added, but it has no bias or is a fused_matmul"),
                "`bias=added` needs a `fused_linear` bias".to_string(),
            ));
        }
    }

    // Invariant 6: no activation whose eager result depends on the element's position
    // (the fused kernels apply activations per tile or row block).
    if let ExprKind::FusedLinear { activations, .. } = &this.kind {
        if let Some(op) = activations.iter().find(|op| op.depends_on_position()) {
            errors.push(at(
                f,
                id,
                MALFORMED_FUSED_OP,
                format!(
                    "{what} fuses `{op}`, whose result depends on the element's place in the tensor; it runs unfused"
                ),
                "an activation the fused kernels cannot apply per tile".to_string(),
            ));
        }
    }

    // Invariant 6: fused ops carry only tails the fused kernels implement.
    if let ExprKind::FusedLinear {
        tail: Some(tail), ..
    } = &this.kind
    {
        let fusable = match tail {
            FusedTail::Reduce(r) => fusable_reduce(r.kind, r.dim),
            FusedTail::Softmax { dim, .. } | FusedTail::Argmax { dim, .. } => *dim == 1,
        };
        if !fusable {
            errors.push(at(
                f,
                id,
                MALFORMED_FUSED_OP,
                format!(
                    "{what} fuses {}(dim={}), but fused tails are over dim 1 of the linear result",
                    tail.name(),
                    tail.dim()
                ),
                "unsupported fused tail".to_string(),
            ));
        }
    }
}

/// Invariants 5, 8 and 9: walks the body once with the set of values in scope.
fn check_body(f: &Function, errors: &mut Vec<Diagnostic>) {
    let mut walk = BodyWalk {
        f,
        errors,
        visible: vec![false; f.exprs.len()],
        lets: vec![0; f.exprs.len()],
        bindings: vec![0; f.exprs.len()],
        frames: Vec::new(),
        in_loop: 0,
    };
    if walk.block(&f.body, "the function body") == End::FallsThrough {
        walk.errors.push(Diagnostic::error(
            BAD_RETURNS,
            format!(
                "function `{}` can reach the end of its body without a return",
                f.name
            ),
        ));
    }
    for (id, e) in f.exprs.iter() {
        let i = index(id);
        let what = describe(id, e);
        let problem = match (e.kind == ExprKind::Bound, walk.lets[i], walk.bindings[i]) {
            (false, 1, 0) | (true, 0, 1) => continue,
            (false, 0, _) => format!("{what} is never evaluated: no `let` places it"),
            (false, n, _) => format!("{what} is evaluated by {n} `let`s"),
            (true, 0, 0) => format!("{what} is bound by no statement"),
            (true, 0, n) => format!("{what} is bound by {n} statements"),
            (true, _, _) => format!("{what} is a bound value, but a `let` evaluates it"),
        };
        walk.errors
            .push(at(f, id, PLACEMENT, problem, "misplaced".to_string()));
    }
}

/// How control leaves a block or a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// On to the next statement (or off the end of the block).
    FallsThrough,
    /// A `yield`: to the statement after the enclosing `if`.
    Yields,
    /// A `continue`, `break` or `return` (or an `if` both of whose arms leave).
    Leaves,
}

/// What `continue`/`break`/`yield` inside a block refer to.
enum Frame {
    /// A loop and the types of its carried values.
    Loop(Vec<Type>),
    /// An `if` and the types of its results.
    Arm(Vec<Type>),
}

struct BodyWalk<'a, 'e> {
    f: &'a Function,
    errors: &'e mut Vec<Diagnostic>,
    /// Values placed on every path to the current point and in scope there.
    visible: Vec<bool>,
    lets: Vec<u32>,
    bindings: Vec<u32>,
    frames: Vec<Frame>,
    /// Loop bodies and `while` condition blocks around the current point (invariant 13: no
    /// boundary call in one).
    in_loop: usize,
}

impl BodyWalk<'_, '_> {
    fn ty(&self, id: ExprId) -> Option<Type> {
        expr(self.f, id).map(|e| e.ty)
    }

    /// A use of `id` by `user`: it must exist and be visible here.
    fn use_value(&mut self, id: ExprId, user: &str) -> bool {
        match self.visible.get(index(id)) {
            Some(true) => true,
            Some(false) => {
                self.errors.push(at(
                    self.f,
                    id,
                    OUT_OF_SCOPE,
                    format!(
                        "{user} uses %{}, which is not placed before it in an enclosing block",
                        index(id)
                    ),
                    "used out of scope".to_string(),
                ));
                false
            }
            None => {
                self.errors.push(Diagnostic::error(
                    OPERAND_NOT_DEFINED,
                    format!("{user} uses %{}, which does not exist", index(id)),
                ));
                false
            }
        }
    }

    /// `id` is bound here by a statement; `ty` is the type the statement gives it, if known.
    fn bind(&mut self, id: ExprId, ty: Option<Type>, what: &str) {
        let i = index(id);
        let Some(e) = expr(self.f, id) else {
            self.errors.push(Diagnostic::error(
                OPERAND_NOT_DEFINED,
                format!("{what} binds %{i}, which does not exist"),
            ));
            return;
        };
        self.bindings[i] += 1;
        self.visible[i] = true;
        if let Some(ty) = ty {
            if e.ty != ty {
                self.errors.push(at(
                    self.f,
                    id,
                    STATEMENT_TYPE,
                    format!("{what} binds %{i} of type {}, expected {ty}", e.ty),
                    format!("expected {ty}"),
                ));
            }
        }
    }

    fn expect_type(&mut self, id: ExprId, want: Type, what: &str) {
        if let Some(ty) = self.ty(id) {
            if ty != want {
                self.errors.push(at(
                    self.f,
                    id,
                    STATEMENT_TYPE,
                    format!("{what} %{} has type {ty}, expected {want}", index(id)),
                    format!("expected {want}"),
                ));
            }
        }
    }

    /// Values passed to a frame (`continue`, `break`, `yield`): count and types.
    fn pass_values(&mut self, values: &[ExprId], types: &[Type], what: &str) {
        if values.len() != types.len() {
            self.errors.push(Diagnostic::error(
                CONTROL_FLOW,
                format!(
                    "{what} passes {} values, expected {}",
                    values.len(),
                    types.len()
                ),
            ));
            return;
        }
        for (value, want) in values.iter().zip(types) {
            if self.use_value(*value, what) {
                self.expect_type(*value, *want, what);
            }
        }
    }

    /// Checks a block and says how it ends. Values placed in it stop being visible when it
    /// ends.
    fn block(&mut self, block: &Block, what: &str) -> End {
        let before = self.visible.clone();
        let mut end = End::FallsThrough;
        for stmt in &block.stmts {
            if end != End::FallsThrough {
                self.errors.push(Diagnostic::error(
                    CONTROL_FLOW,
                    format!("{what} has a statement after a terminator"),
                ));
                break;
            }
            end = self.stmt(stmt);
        }
        self.visible = before;
        end
    }

    /// Checks a block that must not fall off its end (a loop body, an `if` arm).
    fn closed_block(&mut self, block: &Block, what: &str) -> End {
        let end = self.block(block, what);
        if end == End::FallsThrough {
            self.errors.push(Diagnostic::error(
                CONTROL_FLOW,
                format!("{what} does not end in a terminator"),
            ));
        }
        end
    }

    /// For a loop: checks the initial values and returns the carried types.
    fn carried_entry(&mut self, carried: &[Carried], what: &str) -> Vec<Type> {
        carried
            .iter()
            .map(|c| {
                let init = if self.use_value(c.init, &format!("{what}'s initial value")) {
                    self.ty(c.init)
                } else {
                    None
                };
                let arg = self.ty(c.arg);
                if let (Some(init), Some(arg)) = (init, arg) {
                    if init != arg {
                        self.errors.push(at(
                            self.f,
                            c.arg,
                            STATEMENT_TYPE,
                            format!(
                                "{what} carries %{} of type {arg} but starts it from %{} of type {init}",
                                index(c.arg),
                                index(c.init)
                            ),
                            format!("expected {init}"),
                        ));
                    }
                }
                arg.or(init).unwrap_or(Type::Int)
            })
            .collect()
    }

    /// The loop body with its carried values bound (and, for a `for`, its index); the
    /// results are bound after it. `cond` is a `while`'s condition block and value.
    fn loop_body(
        &mut self,
        index: Option<ExprId>,
        carried: &[Carried],
        cond: Option<(&Block, ExprId)>,
        body: &Block,
        what: &str,
    ) {
        let types = self.carried_entry(carried, what);
        let before = self.visible.clone();
        if let Some(index) = index {
            self.bind(index, Some(Type::Int), &format!("{what} index"));
        }
        for (c, ty) in carried.iter().zip(&types) {
            self.bind(c.arg, Some(*ty), &format!("{what} carried value"));
        }
        self.in_loop += 1;
        // A `while` condition block runs first on every iteration, so its values are
        // visible in the body (not after the loop).
        if let Some((cond_block, cond)) = cond {
            for stmt in &cond_block.stmts {
                if stmt.is_terminator() {
                    self.errors.push(Diagnostic::error(
                        CONTROL_FLOW,
                        "a `while` condition block cannot leave (no terminator in it)",
                    ));
                    break;
                }
                self.stmt(stmt);
            }
            if self.use_value(cond, "a `while` condition") {
                self.expect_type(cond, Type::Bool, "the `while` condition");
            }
        }
        self.frames.push(Frame::Loop(types.clone()));
        self.closed_block(body, &format!("{what} body"));
        self.frames.pop();
        self.in_loop -= 1;
        self.visible = before;
        for (c, ty) in carried.iter().zip(&types) {
            self.bind(c.result, Some(*ty), &format!("{what} result"));
        }
    }

    /// Checks one statement and says where control goes after it.
    fn stmt(&mut self, stmt: &Stmt) -> End {
        match stmt {
            Stmt::Let(id) => {
                let i = index(*id);
                let Some(e) = expr(self.f, *id) else {
                    self.errors.push(Diagnostic::error(
                        OPERAND_NOT_DEFINED,
                        format!("a `let` places %{i}, which does not exist"),
                    ));
                    return End::FallsThrough;
                };
                self.lets[i] += 1;
                let user = describe(*id, e);
                if self.in_loop > 0 && matches!(e.kind, ExprKind::BoundaryCall { .. }) {
                    self.errors.push(Diagnostic::error(
                        PLACEMENT,
                        format!("{user} is a boundary call placed inside a loop (invariant 13)"),
                    ));
                }
                for operand in e.kind.operands() {
                    // Operands not defined before their user are reported with the
                    // expression itself (invariant 1).
                    if index(operand) < i {
                        self.use_value(operand, &user);
                    }
                }
                self.visible[i] = true;
                End::FallsThrough
            }
            Stmt::Return(value) => {
                if self.use_value(*value, "a return") {
                    self.check_return_type(*value);
                }
                End::Leaves
            }
            Stmt::Continue(values) | Stmt::Break(values) => {
                let word = if matches!(stmt, Stmt::Continue(_)) {
                    "continue"
                } else {
                    "break"
                };
                let loop_types = self.frames.iter().rev().find_map(|frame| match frame {
                    Frame::Loop(types) => Some(types.clone()),
                    Frame::Arm(_) => None,
                });
                match loop_types {
                    Some(types) => self.pass_values(values, &types, &format!("a `{word}`")),
                    None => self.errors.push(Diagnostic::error(
                        CONTROL_FLOW,
                        format!("`{word}` outside a loop"),
                    )),
                }
                End::Leaves
            }
            Stmt::Yield(values) => {
                match self.frames.last() {
                    Some(Frame::Arm(types)) => {
                        let types = types.clone();
                        self.pass_values(values, &types, "a `yield`");
                    }
                    _ => self.errors.push(Diagnostic::error(
                        CONTROL_FLOW,
                        "`yield` outside an `if` arm (it ends only an arm of the innermost `if`)",
                    )),
                }
                End::Yields
            }
            Stmt::For(l) => {
                if let Iteration::Range { start, stop, step } = &l.iteration {
                    for (value, what) in [(start, "start"), (stop, "stop"), (step, "step")] {
                        if self.use_value(*value, &format!("a `for` range {what}")) {
                            self.expect_type(*value, Type::Int, &format!("the range {what}"));
                        }
                    }
                }
                self.loop_body(Some(l.index), &l.carried, None, &l.body, "a `for`");
                End::FallsThrough
            }
            Stmt::While(l) => {
                self.loop_body(
                    None,
                    &l.carried,
                    Some((&l.cond_block, l.cond)),
                    &l.body,
                    "a `while`",
                );
                End::FallsThrough
            }
            Stmt::If(i) => {
                if self.use_value(i.cond, "an `if` condition") {
                    self.expect_type(i.cond, Type::Bool, "the `if` condition");
                }
                let types: Vec<Type> = i
                    .results
                    .iter()
                    .map(|r| self.ty(*r).unwrap_or(Type::Int))
                    .collect();
                self.frames.push(Frame::Arm(types));
                let then_end = self.closed_block(&i.then_block, "an `if` then arm");
                let else_end = self.closed_block(&i.else_block, "an `if` else arm");
                self.frames.pop();
                for result in &i.results {
                    self.bind(*result, None, "an `if` result");
                }
                // Control continues after the `if` unless both arms leave.
                if then_end == End::Leaves && else_end == End::Leaves {
                    End::Leaves
                } else {
                    End::FallsThrough
                }
            }
        }
    }

    fn check_return_type(&mut self, value: ExprId) {
        let f = self.f;
        let Some(returned) = expr(f, value) else {
            return;
        };
        if returned.ty != f.ret {
            self.errors.push(
                at(
                    f,
                    value,
                    RETURN_TYPE_MISMATCH,
                    format!(
                        "function `{}` returns {} of type {}, expected {}",
                        f.name,
                        describe(value, returned),
                        returned.ty,
                        f.ret
                    ),
                    format!("expected {}, found {}", f.ret, returned.ty),
                )
                .with_note("the expected type is the function's declared result type"),
            );
        }
    }
}

fn check_side_tables(f: &Function, errors: &mut Vec<Diagnostic>) {
    let len = f.exprs.len();
    for (id, _) in f.spans.iter() {
        if index(id) >= len {
            errors.push(Diagnostic::error(
                UNKNOWN_SIDE_TABLE_ENTRY,
                format!(
                    "the span table has an entry for %{}, which does not exist",
                    index(id)
                ),
            ));
        }
    }
    for (id, name) in f.names.iter() {
        if index(id) >= len {
            errors.push(Diagnostic::error(
                UNKNOWN_SIDE_TABLE_ENTRY,
                format!(
                    "the name table names %{} `{name}`, but %{} does not exist",
                    index(id),
                    index(id)
                ),
            ));
        }
    }
}
