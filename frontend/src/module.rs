//! The `forward` of a user `nn.Module` (`rextio_torch.compile(module)`): the method is
//! analyzed as a function of its own, with `self` taken out of its parameters and the
//! module's members, as the Python side describes them ([`ModuleDescription`]), standing for
//! what they compute:
//!
//! - `self.fc(x)` of a `Linear` is `F.linear(x, <weight>, <bias>)`, of an activation module
//!   the activation (`x.relu()`, `F.gelu(x)`, ...), of a `Softmax(dim)` `x.softmax(dim=...)`,
//!   of a `Dropout` (eval mode) or `Identity` `x` itself, of a `LayerNorm` over the last dim
//!   `F.layer_norm(x, (n,), <weight>, <bias>, eps)` (`None`s without affine parameters), of an
//!   `Embedding` `F.embedding(x, <weight>)`, of a `Sequential` its layers in turn;
//! - `self.w` of a parameter or buffer is a tensor: a hidden parameter (`self.kernels[0]`
//!   of a ParameterList's item too); `self.scale` of a Python `int`/`float`/`bool`/`str`
//!   attribute is its value, a literal, and `if self.mode == "mean":` of a `str` one keeps
//!   only the arm Python takes ([`fold_branches`]); user modules (of any file) and helper
//!   methods of the module's class are inlined where they are called ([`inline`], [`foreign`]);
//! - `self.act(x)` of a function-valued attribute that is a known torch function
//!   (`self.act = torch.relu`, `F.gelu`, ...) is that function, as for the activation module
//!   of the same name (the Python side describes it as a `Method`/`Functional` member).
//!
//! The rewrite is of the syntax tree, not of the text: every node put in place of a call or
//! an attribute carries the span of what it replaces, so the claim rules, the diagnostics and
//! the IR's spans all point at the user's own source. The weights and biases, and every
//! parameter or buffer used, become hidden parameters of the function after its own ones, in
//! the order of [`ModuleDescription::hidden`], typed by their markers. Anything else on
//! `self` is left as written, and is then an unresolved call or name with its diagnostic.

use std::collections::HashMap;

mod foreign;
mod inline;
mod none_args;

use inline::Inliner;

use rextio_ir::types::Marker;
use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::transformer::{walk_body, walk_expr, Transformer};
use ruff_python_ast::{
    self as ast, AtomicNodeIndex, Expr, ExprContext, Identifier, Number, Stmt, StmtFunctionDef,
    UnaryOp,
};
use ruff_text_size::{Ranged, TextRange};
use serde::Deserialize;

use crate::imports::{AnnotatedType, ImportMap};
use crate::signature::ParamInfo;

/// The name the rewritten calls reach `torch.nn.functional` by (bound only for the analysis
/// of a method; no Python name can be spelled like it and also be a user's).
const FUNCTIONAL: &str = "__rextio_torch_nn_functional";

/// What the Python side knows of a module: its members by attribute name, and the hidden
/// parameters (name and marker) in the order the compiled function takes them.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ModuleDescription {
    #[serde(default)]
    pub members: HashMap<String, Member>,
    #[serde(default)]
    pub hidden: Vec<Hidden>,
    /// The types of the forward's own parameters where its source does not annotate them,
    /// by name: a marker's name or `int`/`float`/`bool`, as the Python side read them off a
    /// call's arguments (a module whose forward has no annotations is typed per call, as
    /// torch.compile types it).
    #[serde(default)]
    pub params: Vec<Hidden>,
    /// The files other than the analyzed one that user modules among the members come from,
    /// each once: a [`Member::Module`]'s or [`Member::Helper`]'s `source` is an index here
    /// ([`foreign`]).
    #[serde(default)]
    pub sources: Vec<SourceFile>,
}

/// A file's path and text, as the Python side read them (the text is checked to be the
/// code that runs, as the analyzed file's is).
#[derive(Clone, Debug, Deserialize)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Hidden {
    pub name: String,
    /// A marker's name (`TensorF32Cpu2D`).
    pub marker: String,
}

/// One member of a module (or one layer of a `Sequential`).
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Member {
    /// `nn.Linear`: the hidden parameters of its weight and bias.
    Linear {
        weight: String,
        bias: Option<String>,
    },
    /// `nn.ReLU`, `nn.Sigmoid`, `nn.Tanh` (and an attribute holding `torch.relu`,
    /// `F.sigmoid`, ...): the tensor method of that name.
    Method {
        name: String,
    },
    /// `nn.GELU`, `nn.SiLU`, `nn.ReLU6` (and an attribute holding `F.gelu`, `F.silu`,
    /// `F.relu6`): the `torch.nn.functional` function (GELU's `approximate="tanh"` as its
    /// keyword).
    Functional {
        name: String,
        #[serde(default)]
        approximate: Option<String>,
    },
    Softmax {
        dim: i64,
    },
    /// `nn.Dropout` in eval mode, `nn.Identity`.
    Identity,
    /// `nn.LayerNorm` over its one normalized size: the hidden parameters of its weight and
    /// bias (both or neither).
    LayerNorm {
        normalized: i64,
        weight: Option<String>,
        bias: Option<String>,
        eps: f64,
    },
    /// `nn.Embedding` without `max_norm` (which writes the weight): its weight's hidden
    /// parameter.
    Embedding {
        weight: String,
    },
    Sequential {
        layers: Vec<Member>,
    },
    /// A parameter or buffer: the hidden parameter of that name.
    Tensor {
        hidden: String,
    },
    /// A Python `int`/`float`/`bool`/`str` attribute the forward reads (`self.scale`,
    /// `self.mode`): its value,
    /// written in place of the attribute as a literal (a later value plans the module again,
    /// on the Python side).
    Constant {
        value: Constant,
    },
    /// A user module whose `forward` is the method on `line` of the analyzed source (or,
    /// with `source`, of that file of [`ModuleDescription::sources`]), with its own members:
    /// its calls are inlined ([`inline`]).
    Module {
        line: u32,
        members: HashMap<String, Member>,
        #[serde(default)]
        source: Option<usize>,
    },
    /// A method of the module's own class that its forward calls (`self.gelu(x)`), on
    /// `line` of the analyzed source (or of `source`): inlined like a user module's forward,
    /// over the members of the module it is called on.
    Helper {
        line: u32,
        #[serde(default)]
        source: Option<usize>,
    },
    /// `nn.ModuleList`: its items, each called through a literal index (`self.blocks[0](x)`)
    /// or as the variable of a `for` loop over it, which is unrolled ([`inline`]).
    List {
        items: Vec<Member>,
    },
    /// `nn.ModuleDict`: its items by key, each called through a literal key
    /// (`self.layers["fc"](x)`, [`inline`]).
    Dict {
        items: HashMap<String, Member>,
    },
    /// A member the Python side knows is not compiled (a layer of another kind or options,
    /// a user module whose source cannot be read), and why: its calls are `RXT093` diagnostics.
    Unsupported {
        why: String,
    },
}

/// A constant member's value (JSON's `true`, `3`, `0.5`, `"mean"`).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Constant {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Member {
    /// Whether calls of the member are inlined (or refused) by [`inline`] rather than
    /// rewritten in place: a user module, a member not compiled, a Sequential holding one.
    fn inlined(&self) -> bool {
        match self {
            Member::Module { .. }
            | Member::Helper { .. }
            | Member::Unsupported { .. }
            | Member::List { .. }
            | Member::Dict { .. } => true,
            Member::Sequential { layers } => layers.iter().any(Member::inlined),
            _ => false,
        }
    }
}

impl ModuleDescription {
    /// Parses the JSON the Python side writes.
    pub fn from_json(text: &str) -> Result<ModuleDescription, String> {
        serde_json::from_str(text).map_err(|e| format!("invalid module description: {e}"))
    }
}

/// The method `def` whose name stands on 1-based `line`, in a class of `body` (nested
/// classes too).
pub(crate) fn find_method<'a>(
    body: &'a [Stmt],
    line: u32,
    source: &str,
) -> Option<&'a StmtFunctionDef> {
    for stmt in body {
        if let Stmt::ClassDef(class) = stmt {
            for inner in class.body.iter() {
                if let Stmt::FunctionDef(def) = inner {
                    let (def_line, _) =
                        crate::parse::line_column(source, def.name.start().to_u32());
                    if def_line == line {
                        return Some(def);
                    }
                }
            }
            if let Some(def) = find_method(&class.body, line, source) {
                return Some(def);
            }
        }
    }
    None
}

/// `imports` with the name the rewritten calls use for `torch.nn.functional`.
pub(crate) fn with_functional(mut imports: ImportMap) -> ImportMap {
    imports.bind(FUNCTIONAL, "torch.nn.functional");
    imports
}

/// The method with `self.<member>` rewritten (module docstring) and its user modules'
/// calls inlined ([`inline`]), with the diagnostics of the calls that are not, and the
/// names to bind in the analysis's imports (a callee's imports from its own file,
/// [`foreign`]) as (name, dotted path).
pub(crate) fn rewrite(
    def: &StmtFunctionDef,
    description: &ModuleDescription,
    source: &str,
    module: &[Stmt],
) -> (
    StmtFunctionDef,
    Vec<rextio_ir::Diagnostic>,
    Vec<(String, String)>,
) {
    // The `is None` tests of the arguments the call types are folded first (the arm not
    // taken is then neither inlined nor claimed), and the None ones leave the parameters.
    let mut def = def.clone();
    let refused = none_args::fold(&mut def, description);
    let inliner = Inliner::new(source, module, &description.sources);
    inliner.take(description.hidden.iter().map(|h| h.name.clone()));
    let def = rewrite_in(&def, description, &inliner, None, None);
    let (mut diagnostics, bindings) = inliner.finish();
    diagnostics.extend(refused);
    (def, diagnostics, bindings)
}

/// [`rewrite`] of one method, the names it makes prefixed by `path` (its receiver's name
/// for the method compiled), its spans in `source` (`None`: the analyzed file; else that
/// file of [`ModuleDescription::sources`]).
fn rewrite_in(
    def: &StmtFunctionDef,
    description: &ModuleDescription,
    inliner: &Inliner,
    path: Option<&str>,
    source: Option<usize>,
) -> StmtFunctionDef {
    let mut def = def.clone();
    let receiver = def
        .parameters
        .posonlyargs
        .iter()
        .chain(&def.parameters.args)
        .next()
        .map(|p| p.parameter.name.to_string());
    if let Some(receiver) = receiver {
        let scope = inline::Scope {
            path: path.unwrap_or(&receiver).to_string(),
            receiver: receiver.clone(),
            description,
            aliases: HashMap::new(),
            source,
        };
        let rewriter = Rewriter {
            receiver: Some(receiver),
            description,
        };
        fold_branches(&mut def.body, &rewriter);
        inliner.constant_lengths(&mut def.body, &scope);
        inliner.body(&mut def.body, &scope);
        inliner.refuse_reads(&def.body, &scope);
        walk_body(&rewriter, &mut def.body);
    }
    def
}

/// `if self.flag:` (`elif`, `not self.flag`) of a constant member: the arm Python takes
/// stands in place of the `if`, and the arms it cannot take go, so that a module's
/// configuration costs nothing at run time and the taken arm fuses with what is around it
/// (another value of the attribute plans the module again, on the Python side). Only where
/// the taken arm has no `return`, `break` or `continue` (it would leave the statements after
/// it unreachable); a test that is not a constant keeps the `if` from there on. Runs before
/// the inlining, so a call in an arm that never runs is neither inlined nor refused.
fn fold_branches(body: &mut ast::Suite, members: &Rewriter) {
    let old = std::mem::take(body);
    for mut stmt in old {
        match &mut stmt {
            Stmt::If(stmt_if) => {
                fold_branches(&mut stmt_if.body, members);
                for clause in &mut stmt_if.elif_else_clauses {
                    fold_branches(&mut clause.body, members);
                }
            }
            Stmt::For(stmt_for) => {
                fold_branches(&mut stmt_for.body, members);
                fold_branches(&mut stmt_for.orelse, members);
            }
            Stmt::While(stmt_while) => {
                fold_branches(&mut stmt_while.body, members);
                fold_branches(&mut stmt_while.orelse, members);
            }
            _ => {}
        }
        let Stmt::If(mut stmt_if) = stmt else {
            body.push(stmt);
            continue;
        };
        let truth = |test: &Expr| -> Option<bool> {
            match test {
                Expr::UnaryOp(unary) if unary.op == UnaryOp::Not => {
                    constant_truth(&unary.operand, members).map(|t| !t)
                }
                Expr::Compare(compare) => string_comparison(compare, members),
                other => constant_truth(other, members),
            }
        };
        // The arms' tests in order (`None` for `else`): the first that may run, and whether
        // it surely does.
        let tests: Vec<Option<&Expr>> = std::iter::once(Some(&*stmt_if.test))
            .chain(stmt_if.elif_else_clauses.iter().map(|c| c.test.as_ref()))
            .collect();
        let Some(first) = tests
            .iter()
            .position(|test| test.is_none_or(|t| truth(t) != Some(false)))
        else {
            continue; // every test is a false constant, and there is no `else`: nothing runs
        };
        let taken = tests[first].map_or(Some(true), truth);
        let arm = match first {
            0 => &stmt_if.body,
            clause => &stmt_if.elif_else_clauses[clause - 1].body,
        };
        if taken == Some(true) && !leaves(arm) {
            body.extend(match first {
                0 => stmt_if.body,
                clause => stmt_if.elif_else_clauses.swap_remove(clause - 1).body,
            });
            continue;
        }
        if first > 0 {
            // The false arms before `first` go and the rest is an `if` again; an `else` that
            // leaves is kept as written.
            let mut rest = stmt_if.elif_else_clauses.split_off(first - 1);
            match rest[0].test.take() {
                Some(test) => {
                    let clause = rest.remove(0);
                    stmt_if.test = Box::new(test);
                    stmt_if.body = clause.body;
                    stmt_if.elif_else_clauses = rest;
                }
                None => stmt_if.elif_else_clauses.extend(rest),
            }
        }
        body.push(Stmt::If(stmt_if));
    }
}

/// Python's truth of `test` where it is a constant member (`self.flag`, `self.p` of a
/// number: nonzero).
fn constant_truth(test: &Expr, members: &Rewriter) -> Option<bool> {
    match members.member(test)?.0 {
        Member::Constant { value } => Some(match value {
            Constant::Bool(b) => *b,
            Constant::Int(i) => *i != 0,
            Constant::Float(f) => *f != 0.0,
            Constant::Str(s) => !s.is_empty(),
        }),
        _ => None,
    }
}

/// Python's result of `self.mode == "mean"` (`!=`, the literal on either side, `in` / `not
/// in` a tuple, list or set of string literals) where `self.mode` is a `str` constant
/// member: two `str`s are equal exactly when their code points are, which the JSON's UTF-8
/// keeps. Anything else (another literal's type, a chain `a == b == c`, an f-string) is not
/// folded: the `if` stays, and the compiler says what it does not compile.
fn string_comparison(compare: &ast::ExprCompare, members: &Rewriter) -> Option<bool> {
    use ast::CmpOp;
    let [op] = &*compare.ops else {
        return None;
    };
    let [right] = &*compare.comparators else {
        return None;
    };
    let string = |expr: &Expr| match members.member(expr)?.0 {
        Member::Constant {
            value: Constant::Str(s),
        } => Some(s.clone()),
        _ => None,
    };
    let literal = |expr: &Expr| match expr {
        Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
        _ => None,
    };
    match op {
        CmpOp::Eq | CmpOp::NotEq => {
            let (a, b) = match (string(&compare.left), string(right)) {
                (Some(a), None) => (a, literal(right)?),
                (None, Some(b)) => (literal(&compare.left)?, b),
                _ => return None,
            };
            Some((a == b) == (*op == CmpOp::Eq))
        }
        CmpOp::In | CmpOp::NotIn => {
            let value = string(&compare.left)?;
            let items = match right {
                Expr::Tuple(t) => &t.elts,
                Expr::List(l) => &l.elts,
                Expr::Set(s) => &s.elts,
                _ => return None,
            };
            let items = items.iter().map(literal).collect::<Option<Vec<_>>>()?;
            Some(items.contains(&value) == (*op == CmpOp::In))
        }
        _ => None,
    }
}

/// Whether `body` has a `return`, `break` or `continue` (nested blocks too).
fn leaves(body: &[Stmt]) -> bool {
    use ruff_python_ast::statement_visitor::{walk_stmt, StatementVisitor};
    #[derive(Default)]
    struct Leaves(bool);
    impl<'a> StatementVisitor<'a> for Leaves {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::Return(_) | Stmt::Break(_) | Stmt::Continue(_) => self.0 = true,
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                _ => walk_stmt(self, stmt),
            }
        }
    }
    let mut leaves = Leaves::default();
    leaves.visit_body(body);
    leaves.0
}

/// The signature's parameters without the receiver (`self`), then the hidden ones. The
/// hidden parameters' spans are the receiver's (a wrong weight's type points at `self`).
pub(crate) fn method_params(
    mut params: Vec<ParamInfo>,
    description: &ModuleDescription,
) -> Result<Vec<ParamInfo>, String> {
    if params.is_empty() || params[0].kind_problem.is_some() {
        return Err("a module's forward takes `self` first".to_string());
    }
    let receiver = params.remove(0);
    // A module's forward is called only by `CompiledModule`, which binds every argument as
    // Python does (defaults applied, keyword-only ones included) and passes them all in
    // declaration order: a default or a keyword-only parameter is then an ordinary one.
    // `*args` and `**kwargs` stay refused (the call runs eagerly with its own arguments).
    for param in &mut params {
        if matches!(
            param.kind_problem,
            Some(crate::signature::DEFAULT_VALUE | crate::signature::KEYWORD_ONLY)
        ) {
            param.kind_problem = None;
        }
    }
    // The Python side types by the call every parameter its source does not annotate with a
    // marker (`x`, `x: torch.Tensor`, `mask: Optional[Tensor] = None`, `n: int`), as eager
    // ignores those annotations; a marker's parameter is not listed, its marker decides.
    for typed in &description.params {
        if typed.marker == "None" {
            continue; // no parameter of the compiled function ([`none_args`])
        }
        let Some(param) = params.iter_mut().find(|p| p.name == typed.name) else {
            return Err(format!("the forward has no parameter {:?}", typed.name));
        };
        param.annotated = match typed.marker.as_str() {
            "int" => AnnotatedType::Core("int"),
            "float" => AnnotatedType::Core("float"),
            "bool" => AnnotatedType::Core("bool"),
            name => AnnotatedType::Marker(
                Marker::by_name(name).ok_or_else(|| format!("no marker is called {name:?}"))?,
            ),
        };
    }
    for hidden in &description.hidden {
        let marker = Marker::by_name(&hidden.marker)
            .ok_or_else(|| format!("no marker is called {:?}", hidden.marker))?;
        params.push(ParamInfo {
            name: hidden.name.clone(),
            annotated: AnnotatedType::Marker(marker),
            span: receiver.span,
            kind_problem: None,
        });
    }
    Ok(params)
}

/// The member `expr` names, `<receiver>.<name>`, with its attribute node.
fn member_named<'e, 'd>(
    expr: &'e Expr,
    receiver: &str,
    description: &'d ModuleDescription,
) -> Option<(&'d Member, &'e ast::ExprAttribute)> {
    let Expr::Attribute(attribute) = expr else {
        return None;
    };
    let Expr::Name(name) = &*attribute.value else {
        return None;
    };
    if name.id.as_str() != receiver {
        return None;
    }
    let member = description.members.get(attribute.attr.as_str())?;
    Some((member, attribute))
}

struct Rewriter<'a> {
    receiver: Option<String>,
    description: &'a ModuleDescription,
}

impl Rewriter<'_> {
    /// The member `expr` names (`self.<name>`), with the attribute's range.
    fn member(&self, expr: &Expr) -> Option<(&Member, TextRange)> {
        let (member, attribute) = member_named(expr, self.receiver.as_deref()?, self.description)?;
        Some((member, attribute.range))
    }

    /// What calling `member` on `input` computes, every new node spanning `range` (the
    /// callee) and `call` (the whole call). `None` when it computes nothing (the input).
    fn apply(
        &self,
        member: &Member,
        input: Expr,
        range: TextRange,
        call: &ast::ExprCall,
    ) -> Option<Expr> {
        let name = |id: &str| {
            Expr::Name(ast::ExprName {
                node_index: AtomicNodeIndex::NONE,
                range,
                id: Name::new(id),
                ctx: ExprContext::Load,
            })
        };
        let functional = |function: &str| {
            Expr::Attribute(ast::ExprAttribute {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: Box::new(name(FUNCTIONAL)),
                attr: Identifier::new(function, range),
                ctx: ExprContext::Load,
            })
        };
        let method = |receiver: Expr, method: &str| {
            Expr::Attribute(ast::ExprAttribute {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: Box::new(receiver),
                attr: Identifier::new(method, range),
                ctx: ExprContext::Load,
            })
        };
        let call_of = |func: Expr, args: Vec<Expr>, keywords: Vec<ast::Keyword>| {
            Expr::Call(ast::ExprCall {
                node_index: AtomicNodeIndex::NONE,
                range_start: call.start(),
                func: Box::new(func),
                arguments: ast::Arguments {
                    range: call.arguments.range,
                    node_index: AtomicNodeIndex::NONE,
                    args: args.into_boxed_slice(),
                    keywords: keywords.into_iter().collect(),
                },
            })
        };
        Some(match member {
            Member::Linear { weight, bias } => {
                let mut args = vec![input, name(weight)];
                if let Some(bias) = bias {
                    args.push(name(bias));
                }
                call_of(functional("linear"), args, Vec::new())
            }
            Member::Method { name: op } => call_of(method(input, op), Vec::new(), Vec::new()),
            Member::Functional {
                name: op,
                approximate,
            } => {
                let keywords = approximate
                    .iter()
                    .map(|approximate| ast::Keyword {
                        range,
                        node_index: AtomicNodeIndex::NONE,
                        arg: Some(Identifier::new("approximate", range)),
                        value: Expr::StringLiteral(ast::ExprStringLiteral {
                            node_index: AtomicNodeIndex::NONE,
                            range,
                            value: ast::StringLiteralValue::single(ast::StringLiteral {
                                range,
                                node_index: AtomicNodeIndex::NONE,
                                value: approximate.as_str().into(),
                                flags: ast::StringLiteralFlags::empty(),
                            }),
                        }),
                    })
                    .collect();
                call_of(functional(op), vec![input], keywords)
            }
            Member::Softmax { dim } => {
                let keyword = ast::Keyword {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    arg: Some(Identifier::new("dim", range)),
                    value: literal(Constant::Int(*dim), range),
                };
                call_of(method(input, "softmax"), Vec::new(), vec![keyword])
            }
            Member::Identity => return Some(input),
            Member::LayerNorm {
                normalized,
                weight,
                bias,
                eps,
            } => {
                let shape = Expr::Tuple(ast::ExprTuple {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    elts: vec![literal(Constant::Int(*normalized), range)],
                    ctx: ExprContext::Load,
                    parenthesized: true,
                });
                let slot = |hidden: &Option<String>| match hidden {
                    Some(hidden) => name(hidden),
                    None => Expr::NoneLiteral(ast::ExprNoneLiteral {
                        node_index: AtomicNodeIndex::NONE,
                        range,
                    }),
                };
                let eps = literal(Constant::Float(*eps), range);
                let args = vec![input, shape, slot(weight), slot(bias), eps];
                call_of(functional("layer_norm"), args, Vec::new())
            }
            Member::Embedding { weight } => call_of(
                functional("embedding"),
                vec![input, name(weight)],
                Vec::new(),
            ),
            Member::Sequential { layers } => {
                let mut current = input;
                for layer in layers {
                    current = self.apply(layer, current, range, call)?;
                }
                current
            }
            Member::Tensor { .. }
            | Member::Constant { .. }
            | Member::Module { .. }
            | Member::Helper { .. }
            | Member::Unsupported { .. }
            | Member::List { .. }
            | Member::Dict { .. } => return None,
        })
    }
}

impl Transformer for Rewriter<'_> {
    fn visit_expr(&self, expr: &mut Expr) {
        // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
        rextio_ir::stack::deep(|| {
            // The inner expressions first: `self.b(self.a(x))` rewrites `self.a(x)` before `self.b`.
            walk_expr(self, expr);
            let replacement = match &*expr {
                Expr::Call(call)
                    if call.arguments.keywords.is_empty() && call.arguments.args.len() == 1 =>
                {
                    match self.member(&call.func) {
                        Some((member, range)) if !matches!(member, Member::Tensor { .. }) => {
                            let input = call.arguments.args[0].clone();
                            if matches!(input, Expr::Starred(_)) {
                                None
                            } else {
                                self.apply(member, input, range, call)
                            }
                        }
                        _ => None,
                    }
                }
                attribute @ Expr::Attribute(ast::ExprAttribute {
                    ctx: ExprContext::Load,
                    ..
                }) => match self.member(attribute) {
                    Some((Member::Tensor { hidden }, range)) => Some(Expr::Name(ast::ExprName {
                        node_index: AtomicNodeIndex::NONE,
                        range,
                        id: Name::new(hidden),
                        ctx: ExprContext::Load,
                    })),
                    Some((Member::Constant { value }, range)) => {
                        Some(literal(value.clone(), range))
                    }
                    _ => None,
                },
                // `self.kernels[0]` of a ParameterList: that parameter's hidden name.
                Expr::Subscript(subscript) if subscript.ctx == ExprContext::Load => {
                    match self.member(&subscript.value) {
                        Some((Member::List { items }, _)) => {
                            let index = inline::literal_index(&subscript.slice);
                            let resolved = index.and_then(|i| {
                                if i < 0 {
                                    items.len().checked_sub(i.unsigned_abs() as usize)
                                } else {
                                    Some(i as usize)
                                }
                            });
                            match resolved.and_then(|i| items.get(i)) {
                                Some(Member::Tensor { hidden }) => {
                                    Some(Expr::Name(ast::ExprName {
                                        node_index: AtomicNodeIndex::NONE,
                                        range: subscript.range,
                                        id: Name::new(hidden),
                                        ctx: ExprContext::Load,
                                    }))
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(replacement) = replacement {
                *expr = replacement;
            }
        })
    }
}

/// `value` as the literal Python would print for it (a negative number as `-` of its
/// magnitude, `-0.0` too), spanning `range`.
fn literal(value: Constant, range: TextRange) -> Expr {
    let number = |value: Number| {
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            node_index: AtomicNodeIndex::NONE,
            range,
            value,
        })
    };
    let (negative, magnitude) = match value {
        Constant::Bool(value) => {
            return Expr::BooleanLiteral(ast::ExprBooleanLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
                value,
            })
        }
        Constant::Int(value) => (
            value < 0,
            number(Number::Int(ast::Int::from(value.unsigned_abs()))),
        ),
        Constant::Float(value) => (value.is_sign_negative(), number(Number::Float(value.abs()))),
        Constant::Str(value) => {
            return Expr::StringLiteral(ast::ExprStringLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: ast::StringLiteralValue::single(ast::StringLiteral {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    value: value.into_boxed_str(),
                    flags: ast::StringLiteralFlags::empty(),
                }),
            })
        }
    };
    if negative {
        Expr::UnaryOp(ast::ExprUnaryOp {
            node_index: AtomicNodeIndex::NONE,
            range,
            op: UnaryOp::USub,
            operand: Box::new(magnitude),
        })
    } else {
        magnitude
    }
}
