//! The operand readers of the extension lanes' call sites: a tensor attribute offered as a
//! site (`x.T`, `x.shape[i]`), an int taken from a tensor's shape, the parts of a join, a
//! `where`'s inline comparison, and the builtins applied to a tensor (`len(x)`, `abs(x)`).
//! Split from `sites.rs` (the walker's expression evaluation), whose `Walker` they extend.

use rextio_ir::Marker;
use ruff_python_ast::{self as ast, Expr, ExprCall};

use super::site::{int_literal, positional_literal};
use super::{call_site_span, Callee, Operand, SiteInput, Value, Walker};
use crate::claim::layers::SHAPE_OF_ONE_INT;
use crate::claim::{self, Literal, SiteKind, Surface};
use crate::parse::span_of;

impl Walker<'_> {
    /// A tensor attribute offered as a call site of the views lane (extended surface only):
    /// `x.T` (`attr` is the expression itself, no index) or `x.shape[i]` / `x.size()[i]`
    /// (`attr` is `x.shape` / `x.size`, `index` the subscript, offered as the one operand).
    /// When the receiver is not a plugin-typed tensor, the expression is unsupported
    /// (`what`), as before the lane.
    pub(super) fn tensor_attribute_site(
        &mut self,
        attr: &Expr,
        expr: &Expr,
        index: Option<&Expr>,
        what: &str,
    ) -> Value {
        let callee = self.callee(attr);
        let tensor = callee
            .receiver
            .as_ref()
            .is_some_and(|r| r.value.is_plugin_typed());
        if !tensor {
            return self.unsupported_expression(expr, what);
        }
        let operands = index
            .map(|index| Operand {
                value: self.eval(index),
                literal: positional_literal(index),
                span: span_of(index),
            })
            .into_iter()
            .collect();
        let expr_span = span_of(expr);
        let span = call_site_span(callee.method_start, expr_span);
        self.site(SiteInput {
            kind: SiteKind::Call,
            target: callee.target,
            receiver: callee.receiver,
            operands,
            keywords: Vec::new(),
            keyword_values: Vec::new(),
            sequence: None,
            condition: None,
            part: None,
            truth: false,
            gate: callee.gate,
            callee_poisoned: callee.poisoned,
            span,
            expr_span,
        })
    }

    /// `layer_norm`'s normalized shape of one element, `(n,)` or `[n]`, as that element's
    /// value typed `tuple[int]` (its literal `IntTuple([n])` when `n` is an int literal), so
    /// the size may be an int parameter or expression: the IR reads it as an `int` operand.
    /// `None` (the argument is walked as any other) for anything else.
    /// `w.shape` of a rank-1 tensor `w` (a name: a parameter, or a module's `self.weight`
    /// once inlined; nanoGPT's `F.layer_norm(x, self.weight.shape, ...)`) is `(w.shape[0],)`.
    pub(super) fn shape_of_one_int(&mut self, arg: &Expr) -> Option<Operand> {
        if let Some(size) = self.shape_of_vector(arg) {
            let value = self.eval(&size);
            return Some(Self::one_int_shape(value, Literal::NonLiteral, arg));
        }
        let element = match arg {
            Expr::Tuple(tuple) if tuple.elts.len() == 1 => &tuple.elts[0],
            Expr::List(list) if list.elts.len() == 1 => &list.elts[0],
            _ => return None,
        };
        let value = self.eval(element);
        let literal = match int_literal(element) {
            Some(n) => Literal::IntTuple(vec![n]),
            None => Literal::NonLiteral,
        };
        Some(Self::one_int_shape(value, literal, arg))
    }

    /// `w.shape[0]` for `arg` = `w.shape` with `w` a name of a rank-1 tensor; `None` for
    /// anything else (`m.shape` of a matrix is two sizes: the argument is walked as written,
    /// and refused there).
    fn shape_of_vector(&self, arg: &Expr) -> Option<Expr> {
        let Expr::Attribute(attr) = arg else {
            return None;
        };
        let Expr::Name(base) = &*attr.value else {
            return None;
        };
        let ty = self.env.get(base.id.as_str())?.ty.as_deref()?;
        if attr.attr.as_str() != "shape" || Marker::by_key(ty).is_none_or(|m| m.ty.rank != 1) {
            return None;
        }
        let zero = Expr::NumberLiteral(ast::ExprNumberLiteral {
            node_index: ast::AtomicNodeIndex::NONE,
            range: attr.range,
            value: ast::Number::Int(ast::Int::from(0u64)),
        });
        Some(Expr::Subscript(ast::ExprSubscript {
            node_index: ast::AtomicNodeIndex::NONE,
            range: attr.range,
            value: Box::new(arg.clone()),
            slice: Box::new(zero),
            ctx: ast::ExprContext::Load,
        }))
    }

    /// The operand of a one-int normalized shape whose element has `value`.
    fn one_int_shape(value: Value, literal: Literal, arg: &Expr) -> Operand {
        let ty = match value.ty.as_deref() {
            Some("int") => Some(SHAPE_OF_ONE_INT.to_string()),
            // A bool, float, tensor, ... element: a `tuple` the lane refuses.
            Some(_) => Some("tuple".to_string()),
            None => None,
        };
        Operand {
            value: Value { ty, ..value },
            literal,
            span: span_of(arg),
        }
    }

    /// The parts of a join (`torch.cat([a, b], dim=1)`, `torch.stack((u, v))`) under the
    /// extended surface: when the callee is one of the joins lane's targets and its first
    /// positional argument is a list or tuple display without starred items, each item is
    /// evaluated as an operand of the call (its sites come first, in order) and the display's
    /// length is returned. Anywhere else, and under the reference surface (whose host does
    /// not lower a list display, `RXT031`), the display is an ordinary argument.
    pub(super) fn join_parts(
        &mut self,
        call: &ExprCall,
        callee: &Callee,
        operands: &mut Vec<Operand>,
    ) -> Option<usize> {
        if self.ctx.surface != Surface::Extended
            || callee.receiver.is_some()
            || claim::join_kind(&callee.target).is_none()
        {
            return None;
        }
        let items = match call.arguments.args.first()? {
            Expr::List(list) => &list.elts,
            Expr::Tuple(tuple) => &tuple.elts,
            _ => return None,
        };
        if items.iter().any(|item| matches!(item, Expr::Starred(_))) {
            return None;
        }
        for item in items {
            let value = self.eval(item);
            operands.push(Operand {
                value,
                literal: positional_literal(item),
                span: span_of(item),
            });
        }
        Some(items.len())
    }

    /// The condition of a `where` (`torch.where(x > 0, x, 0.0)`, `a.where(x < t, b)`) under
    /// the extended surface: when the callee is a `where` ([`claim::takes_condition`]) and its
    /// first positional argument is one comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`, not a
    /// chain), its two sides are evaluated as the call's first operands (their sites first,
    /// in order) and the comparison returned. The comparison itself is then no site: no bool
    /// tensor is ever a value. Anywhere else the comparison is an ordinary argument (a compare
    /// site, which no rule claims).
    pub(super) fn where_condition(
        &mut self,
        call: &ExprCall,
        callee: &Callee,
        operands: &mut Vec<Operand>,
    ) -> Option<rextio_ir::CompareOp> {
        if !claim::takes_condition(&callee.target, callee.receiver.is_some(), self.ctx.surface) {
            return None;
        }
        let Expr::Compare(compare) = call.arguments.args.first()? else {
            return None;
        };
        let ([op], [right]) = (&compare.ops[..], &compare.comparators[..]) else {
            return None;
        };
        let cmp = claim::compare_op(op.as_str())?;
        for side in [&*compare.left, right] {
            let value = self.eval(side);
            operands.push(Operand {
                value,
                literal: positional_literal(side),
                span: span_of(side),
            });
        }
        Some(cmp)
    }

    /// Core's own checks of the builtins it lowers (`abs`, `len`) when given a tensor.
    pub(super) fn builtin_on_tensor(&mut self, call: &ExprCall) -> Option<Value> {
        let Expr::Name(name) = &*call.func else {
            return None;
        };
        let builtin = name.id.as_str();
        if !matches!(builtin, "abs" | "len") || self.is_local(builtin) {
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
}
