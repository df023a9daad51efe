//! Table-driven tests of the claim rules: each row is a site built the way Core offers it
//! (see `docs/reference-plugin.md`, "How the host offers sites") and the reference outcome
//! (rule id and result type, or code and byte-exact message, or not covered). The last tests
//! cross-check the table against the rule records (every rule claimed, every rejection code
//! produced) and the vendored conformance corpus
//! (`tests/conformance/reference-claims.public.json`).

use rextio_frontend::claim::{
    claim, claim_with, rule_records, rules, ClaimOutcome, ClaimSite, ClaimedOp, Input, KeywordArg,
    Literal, ParamArg, Receiver, ReceiverKind, ResultPart, ScopeKind, SiteKind, Surface, KEY_CM,
    KEY_CV, KEY_L, KEY_M, KEY_S, KEY_T, KEY_V,
};
use rextio_ir::{
    BagMode, BinaryOp, CompareOp, ElementwiseOp, ExtremumOp, FillKind, FloatBits, JoinKind,
    ParamUnaryOp, ReduceKind, ScalarUnaryOp, SoftmaxKind, TensorScalarOp, ToScalarKind, UnaryOp,
    ViewKind, WholeReduceOp,
};

// ---------------------------------------------------------------------------------------
// Site builders.

/// One positional argument: resolved type and literal.
#[derive(Clone)]
struct Arg(Option<&'static str>, Literal);

/// A tensor (or any non-literal value) of this type.
fn t(ty: &'static str) -> Arg {
    Arg(Some(ty), Literal::NonLiteral)
}
/// A positional int literal.
fn int(value: i64) -> Arg {
    Arg(Some("int"), Literal::Int(value))
}
/// Positional floats, bools and strings are non-literal.
fn float() -> Arg {
    Arg(Some("float"), Literal::NonLiteral)
}
fn boolean() -> Arg {
    Arg(Some("bool"), Literal::NonLiteral)
}
fn string() -> Arg {
    Arg(Some("str"), Literal::NonLiteral)
}
fn none() -> Arg {
    Arg(Some("None"), Literal::None)
}
fn unresolved() -> Arg {
    Arg(None, Literal::NonLiteral)
}

fn kw(name: &str, ty: &str, literal: Literal) -> KeywordArg {
    KeywordArg {
        name: name.to_string(),
        arg_type: Some(ty.to_string()),
        literal,
    }
}
/// A float keyword: not a literal, offered with its value under the extended surface by
/// the calls that take scalar keywords (`negative_slope=0.2`).
fn kw_float(name: &str) -> KeywordArg {
    kw(name, "float", Literal::NonLiteral)
}
fn kw_int(name: &str, value: i64) -> KeywordArg {
    kw(name, "int", Literal::Int(value))
}
fn kw_bool(name: &str, value: bool) -> KeywordArg {
    kw(name, "bool", Literal::Bool(value))
}
fn kw_str(name: &str, value: &str) -> KeywordArg {
    kw(name, "str", Literal::Str(value.to_string()))
}
fn kw_none(name: &str) -> KeywordArg {
    kw(name, "None", Literal::None)
}

fn site(
    kind: SiteKind,
    target: &str,
    args: &[Arg],
    keywords: &[KeywordArg],
    receiver: Option<Receiver>,
) -> ClaimSite {
    ClaimSite {
        kind,
        target: target.to_string(),
        operand_types: args.iter().map(|a| a.0.map(str::to_string)).collect(),
        operand_literals: args.iter().map(|a| a.1.clone()).collect(),
        keywords: keywords.to_vec(),
        receiver,
        sequence: None,
        condition: None,
        part: None,
        truth: false,
    }
}

/// `target([parts...], rest...)`: a list (or tuple) display of `parts` offered as the first
/// operands, as the walker offers the joins lane's targets under the extended surface.
fn join_call(target: &str, parts: &[Arg], rest: &[Arg], keywords: &[KeywordArg]) -> ClaimSite {
    let args: Vec<Arg> = parts.iter().chain(rest).cloned().collect();
    ClaimSite {
        sequence: Some(parts.len()),
        ..call(target, &args, keywords)
    }
}

/// A function call (no receiver), target already resolved through the import map.
fn call(target: &str, args: &[Arg], keywords: &[KeywordArg]) -> ClaimSite {
    site(SiteKind::Call, target, args, keywords, None)
}

/// `name.method(...)` on a named receiver: target `name.method`.
fn method(
    target: &str,
    receiver: Option<&str>,
    args: &[Arg],
    keywords: &[KeywordArg],
) -> ClaimSite {
    let receiver = Receiver {
        arg_type: receiver.map(str::to_string),
        expr_kind: ReceiverKind::Name,
    };
    site(SiteKind::Call, target, args, keywords, Some(receiver))
}

/// `f(...).method(...)`: bare target, receiver kind Call.
fn chained(target: &str, receiver: &str, args: &[Arg], keywords: &[KeywordArg]) -> ClaimSite {
    let receiver = Receiver {
        arg_type: Some(receiver.to_string()),
        expr_kind: ReceiverKind::Call,
    };
    site(SiteKind::Call, target, args, keywords, Some(receiver))
}

fn binop(op: &str, left: Arg, right: Arg) -> ClaimSite {
    site(SiteKind::Binop, op, &[left, right], &[], None)
}

fn compare(op: &str, left: Arg, right: Arg) -> ClaimSite {
    site(SiteKind::Compare, op, &[left, right], &[], None)
}

// ---------------------------------------------------------------------------------------
// Expectations.

enum Expect {
    Claim(&'static str, &'static str, ClaimedOp),
    Reject(&'static str, &'static str),
    NotCovered,
}

fn claim_ok(rule: &'static str, result: &'static str, op: ClaimedOp) -> Expect {
    Expect::Claim(rule, result, op)
}
fn reject(code: &'static str, message: &'static str) -> Expect {
    Expect::Reject(code, message)
}

const R: Input = Input::Receiver;
const O0: Input = Input::Operand(0);
const O1: Input = Input::Operand(1);
const O2: Input = Input::Operand(2);

fn unary(op: UnaryOp, input: Input) -> ClaimedOp {
    ClaimedOp::Unary { op, input }
}
fn binary(op: BinaryOp) -> ClaimedOp {
    ClaimedOp::Binary {
        op,
        lhs: O0,
        rhs: O1,
    }
}
fn scalar_op(op: TensorScalarOp, tensor: Input, scalar: Input) -> ClaimedOp {
    ClaimedOp::TensorScalar { op, tensor, scalar }
}
fn param_op(op: ParamUnaryOp, input: Input, params: &[ParamArg]) -> ClaimedOp {
    ClaimedOp::ParamUnary {
        op,
        input,
        params: params.to_vec(),
    }
}
fn given(input: Input) -> ParamArg {
    ParamArg::Input(input)
}
fn dflt(value: f64) -> ParamArg {
    ParamArg::Default(FloatBits::new(value))
}
fn matmul(lhs: Input, rhs: Input) -> ClaimedOp {
    ClaimedOp::Matmul { lhs, rhs }
}
fn reduce(kind: ReduceKind, input: Input, dim: u8, keepdim: bool) -> ClaimedOp {
    ClaimedOp::Reduce {
        kind,
        input,
        dim,
        keepdim,
    }
}
fn softmax(input: Input, dim: u8) -> ClaimedOp {
    ClaimedOp::Softmax {
        kind: SoftmaxKind::Softmax,
        input,
        dim,
    }
}
fn log_softmax(input: Input, dim: u8) -> ClaimedOp {
    ClaimedOp::Softmax {
        kind: SoftmaxKind::LogSoftmax,
        input,
        dim,
    }
}
fn view_op(kind: ViewKind, input: Input, sizes: &[Input], dim: u8) -> ClaimedOp {
    ClaimedOp::View {
        kind,
        input,
        sizes: sizes.to_vec(),
        dim,
    }
}

fn join(kind: JoinKind, parts: usize, dim: u8) -> ClaimedOp {
    ClaimedOp::Join {
        kind,
        parts: (0..parts).map(Input::Operand).collect(),
        dim,
    }
}
fn math(op: ScalarUnaryOp, base: bool) -> ClaimedOp {
    ClaimedOp::ScalarMath {
        op,
        input: O0,
        base: base.then_some(O1),
    }
}
fn argmax(input: Input, dim: u8, keepdim: bool) -> ClaimedOp {
    ClaimedOp::Argmax {
        input,
        dim,
        keepdim,
    }
}

const F_LINEAR: &str = "torch.nn.functional.linear";
const F_GELU: &str = "torch.nn.functional.gelu";
const F_RELU: &str = "torch.nn.functional.relu";
/// An extension spelling (ours only, not the reference plugin's: `ir/src/expr.rs`).
const F_SILU: &str = "torch.nn.functional.silu";
/// An extension spelling (`Math`: `torch.rsqrt(t)` and `t.rsqrt()`).
const T_RSQRT: &str = "torch.rsqrt";
/// An extension spelling (`FunctionalInplace`, as `F.relu`).
const F_RELU6: &str = "torch.nn.functional.relu6";
const F_SOFTMAX: &str = "torch.nn.functional.softmax";
/// Extension spellings of the classification and reduction lanes (ours only).
const F_LOG_SOFTMAX: &str = "torch.nn.functional.log_softmax";
const F_LAYER_NORM: &str = "torch.nn.functional.layer_norm";
const F_EMBEDDING: &str = "torch.nn.functional.embedding";
const F_DROPOUT: &str = "torch.nn.functional.dropout";
const F_EMBEDDING_BAG: &str = "torch.nn.functional.embedding_bag";

/// `F.embedding_bag(ids, weight, offsets)` of operands 0, 1, 2 in `mode`.
fn bag(mode: BagMode) -> ClaimedOp {
    ClaimedOp::EmbeddingBag {
        ids: O0,
        weight: O1,
        offsets: O2,
        mode,
    }
}
const BAG_ID: &str = "functional-embedding-bag-i64-ids-offsets-f32-cpu-2d";
const O3: Input = Input::Operand(3);

/// A float literal, as the walker gives one at the layers lane's targets.
fn float_lit(value: f64) -> Arg {
    Arg(Some("float"), Literal::Float(FloatBits::new(value)))
}
fn kw_float_lit(name: &str, value: f64) -> KeywordArg {
    kw(name, "float", Literal::Float(FloatBits::new(value)))
}
/// A positional bool literal (the layers lane's targets only).
fn bool_lit(value: bool) -> Arg {
    Arg(Some("bool"), Literal::Bool(value))
}
/// A tuple of ints, as the host gives one (several elements).
fn tuple(items: &[i64]) -> Arg {
    Arg(Some("tuple"), Literal::IntTuple(items.to_vec()))
}
/// layer_norm's `(n,)` / `[n]` of an int literal, as the walker gives it there.
fn shape(n: i64) -> Arg {
    Arg(Some("tuple[int]"), Literal::IntTuple(vec![n]))
}
/// layer_norm's `(n,)` of an int parameter.
fn shape_param() -> Arg {
    Arg(Some("tuple[int]"), Literal::NonLiteral)
}
fn layer_norm(input: Input, affine: Option<(Input, Input)>, eps: f64) -> ClaimedOp {
    ClaimedOp::LayerNorm {
        input,
        normalized: O1,
        weight: affine.map(|a| a.0),
        bias: affine.map(|a| a.1),
        eps: FloatBits::new(eps),
    }
}
/// Extension spellings of the scalar-parameter lane (ours only).
const F_LEAKY_RELU: &str = "torch.nn.functional.leaky_relu";
const F_ELU: &str = "torch.nn.functional.elu";
const F_HARDTANH: &str = "torch.nn.functional.hardtanh";
const T_CLAMP: &str = "torch.clamp";
const T_CLIP: &str = "torch.clip";
const T_LOG_SOFTMAX: &str = "torch.log_softmax";
/// The joins lane's targets (ours only).
const T_CAT: &str = "torch.cat";
const T_STACK: &str = "torch.stack";
const JOIN_TARGETS: [&str; 4] = [T_CAT, "torch.concat", "torch.concatenate", T_STACK];

fn p(rule: &str) -> &'static str {
    // Rule ids are written without the `rextio-torch/` prefix in the table.
    let id = format!("rextio-torch/{rule}");
    match rules::record(&id) {
        Some(record) => record.id,
        None => panic!("table names an unknown rule id {id}"),
    }
}

/// The table: (case name, site, expected outcome), in parts (one giant function took LLVM
/// a quarter of an hour to optimize in release builds).
fn cases() -> Vec<(&'static str, ClaimSite, Expect)> {
    [
        cases_1(),
        cases_2(),
        cases_3(),
        cases_4(),
        cases_5(),
        cases_6(),
        cases_7(),
        cases_8(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn cases_1() -> Vec<(&'static str, ClaimSite, Expect)> {
    use Expect::NotCovered as NC;
    vec![
        // --- linear ---------------------------------------------------------------------
        ("linear", call(F_LINEAR, &[t(KEY_M), t(KEY_M), t(KEY_V)], &[]),
            claim_ok(p("functional-linear-f32-cpu-2d"), KEY_M, ClaimedOp::Linear { input: O0, weight: O1, bias: Some(O2) })),
        ("linear_omitted_bias", call(F_LINEAR, &[t(KEY_M), t(KEY_M)], &[]),
            claim_ok(p("functional-linear-none-f32-cpu-2d"), KEY_M, ClaimedOp::Linear { input: O0, weight: O1, bias: None })),
        ("linear_positional_none", call(F_LINEAR, &[t(KEY_M), t(KEY_M), none()], &[]),
            claim_ok(p("functional-linear-none-f32-cpu-2d"), KEY_M, ClaimedOp::Linear { input: O0, weight: O1, bias: None })),
        ("linear_keyword_none", call(F_LINEAR, &[t(KEY_M), t(KEY_M)], &[kw_none("bias")]),
            claim_ok(p("functional-linear-none-f32-cpu-2d"), KEY_M, ClaimedOp::Linear { input: O0, weight: O1, bias: None })),
        ("linear_i64_bias", call(F_LINEAR, &[t(KEY_M), t(KEY_M), t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.linear': linear requires float32 CPU rank-2 input and weight plus rank-1 bias; got ('rextio-torch/tensor-f32-cpu-2d', 'rextio-torch/tensor-f32-cpu-2d', 'rextio-torch/tensor-i64-cpu-1d')")),
        ("linear_float_bias", call(F_LINEAR, &[t(KEY_M), t(KEY_M), float()], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.linear': operand types are outside the float32 CPU rank-1/2 tensor surface")),
        ("linear_no_bias_vector_input", call(F_LINEAR, &[t(KEY_V), t(KEY_M)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.linear': linear without bias requires rank-2 input/weight; got ('rextio-torch/tensor-f32-cpu-1d', 'rextio-torch/tensor-f32-cpu-2d')")),
        ("linear_no_bias_float_input", call(F_LINEAR, &[float(), t(KEY_M)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.linear': input/weight types are outside the float32 CPU rank-2 tensor surface")),
        ("linear_one_operand", call(F_LINEAR, &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-023", "rextio-torch cannot lower 'torch.nn.functional.linear': linear accepts three positional tensors, or rank-2 input/weight with omitted/literal-None bias")),
        ("linear_bias_keyword_with_three", call(F_LINEAR, &[t(KEY_M), t(KEY_M), t(KEY_V)], &[kw_none("bias")]),
            reject("RXTP-TORCH-023", "rextio-torch cannot lower 'torch.nn.functional.linear': linear accepts three positional tensors, or rank-2 input/weight with omitted/literal-None bias")),
        ("linear_contradictory_none", call(F_LINEAR, &[t(KEY_M), t(KEY_M), Arg(Some("int"), Literal::None)], &[]),
            reject("RXTP-TORCH-023", "rextio-torch cannot lower 'torch.nn.functional.linear': positional bias metadata contradicts literal None")),
        ("linear_unresolved", call(F_LINEAR, &[t(KEY_M), unresolved(), t(KEY_V)], &[]), NC),
        ("linear_no_bias_unresolved", call(F_LINEAR, &[unresolved(), t(KEY_M)], &[]), NC),
        ("linear_method_form", method("x.linear", Some(KEY_M), &[t(KEY_M)], &[]), NC),
        // --- gelu -----------------------------------------------------------------------
        ("gelu_default_1d", call(F_GELU, &[t(KEY_V)], &[]),
            claim_ok(p("functional-gelu-none-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Gelu, O0))),
        ("gelu_explicit_none", call(F_GELU, &[t(KEY_M)], &[kw_str("approximate", "none")]),
            claim_ok(p("functional-gelu-none-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Gelu, O0))),
        // approximate="tanh": an extension row of the same target (the reference rejects it
        // with 044, `gelu_options_under_each_surface`).
        ("gelu_tanh", call(F_GELU, &[t(KEY_M)], &[kw_str("approximate", "tanh")]),
            claim_ok(p("functional-gelu-tanh-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::GeluTanh, O0))),
        ("gelu_tanh_1d", call(F_GELU, &[t(KEY_V)], &[kw_str("approximate", "tanh")]),
            claim_ok(p("functional-gelu-tanh-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::GeluTanh, O0))),
        ("gelu_tanh_positional_literal", call(F_GELU, &[t(KEY_M), string()], &[kw_str("approximate", "tanh")]),
            reject("RXTP-TORCH-064", "rextio-torch cannot lower 'torch.nn.functional.gelu': GELU requires one positional non-literal tensor and either no keywords or exact literal approximate='none' or approximate='tanh'")),
        ("gelu_tanh_i64", call(F_GELU, &[t(KEY_L)], &[kw_str("approximate", "tanh")]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.gelu': GELU requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("gelu_other_option", call(F_GELU, &[t(KEY_M)], &[kw_str("approximate", "sigmoid")]),
            reject("RXTP-TORCH-044", "rextio-torch cannot lower 'torch.nn.functional.gelu': GELU requires one positional non-literal tensor and either no keywords or exact literal approximate='none' or approximate='tanh'")),
        ("gelu_positional_option", call(F_GELU, &[t(KEY_M), string()], &[]),
            reject("RXTP-TORCH-044", "rextio-torch cannot lower 'torch.nn.functional.gelu': GELU requires one positional non-literal tensor and either no keywords or exact literal approximate='none' or approximate='tanh'")),
        ("gelu_i64", call(F_GELU, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.gelu': GELU requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("gelu_unresolved", call(F_GELU, &[unresolved()], &[]), NC),
        ("gelu_method", method("x.gelu", Some(KEY_M), &[], &[]), NC),
        // --- activations ----------------------------------------------------------------
        ("relu_method_2d", method("x.relu", Some(KEY_M), &[], &[]),
            claim_ok(p("tensor-relu-f32-cpu-2d"), KEY_M, unary(UnaryOp::Relu, R))),
        ("relu_method_1d", method("x.relu", Some(KEY_V), &[], &[]),
            claim_ok(p("tensor-relu-f32-cpu-1d"), KEY_V, unary(UnaryOp::Relu, R))),
        ("sigmoid_method_2d", method("x.sigmoid", Some(KEY_M), &[], &[]),
            claim_ok(p("tensor-sigmoid-f32-cpu-2d"), KEY_M, unary(UnaryOp::Sigmoid, R))),
        ("sigmoid_method_1d", method("x.sigmoid", Some(KEY_V), &[], &[]),
            claim_ok(p("tensor-sigmoid-f32-cpu-1d"), KEY_V, unary(UnaryOp::Sigmoid, R))),
        ("tanh_chain_2d", chained("tanh", KEY_M, &[], &[]),
            claim_ok(p("tensor-tanh-f32-cpu-2d"), KEY_M, unary(UnaryOp::Tanh, R))),
        ("tanh_method_1d", method("b.tanh", Some(KEY_V), &[], &[]),
            claim_ok(p("tensor-tanh-f32-cpu-1d"), KEY_V, unary(UnaryOp::Tanh, R))),
        ("relu_chain_receiver", chained("relu", KEY_M, &[], &[]),
            claim_ok(p("tensor-relu-f32-cpu-2d"), KEY_M, unary(UnaryOp::Relu, R))),
        ("relu_method_with_arg", method("x.relu", Some(KEY_M), &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-002", "rextio-torch cannot lower 'x.relu': only zero-argument .relu() is supported")),
        ("relu_1d_method_kw_uses_2d_code", method("v.relu", Some(KEY_V), &[], &[kw_bool("inplace", false)]),
            reject("RXTP-TORCH-002", "rextio-torch cannot lower 'v.relu': only zero-argument .relu() is supported")),
        ("sigmoid_method_arg", method("v.sigmoid", Some(KEY_V), &[int(1)], &[]),
            reject("RXTP-TORCH-006", "rextio-torch cannot lower 'v.sigmoid': only zero-argument .sigmoid() is supported")),
        ("tanh_method_arg", method("v.tanh", Some(KEY_V), &[int(1)], &[]),
            reject("RXTP-TORCH-008", "rextio-torch cannot lower 'v.tanh': only zero-argument .tanh() is supported")),
        ("relu_method_i64", method("l.relu", Some(KEY_L), &[], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'l.relu': .relu() requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("relu_method_non_tensor", method("n.relu", Some("int"), &[], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'n.relu': receiver type is outside the float32 CPU tensor surface")),
        ("relu_method_unresolved", method("h.relu", None, &[], &[]), NC),
        ("relu_inplace_method", method("x.relu_", Some(KEY_M), &[], &[]), NC),
        ("torch_tanh_2d", call("torch.tanh", &[t(KEY_M)], &[]),
            claim_ok(p("function-tanh-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Tanh, O0))),
        ("torch_relu_1d", call("torch.relu", &[t(KEY_V)], &[]),
            claim_ok(p("function-relu-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Relu, O0))),
        ("torch_relu_2d", call("torch.relu", &[t(KEY_M)], &[]),
            claim_ok(p("function-relu-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Relu, O0))),
        ("torch_sigmoid_2d", call("torch.sigmoid", &[t(KEY_M)], &[]),
            claim_ok(p("function-sigmoid-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Sigmoid, O0))),
        ("torch_relu_two_operands", call("torch.relu", &[t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-024", "rextio-torch cannot lower 'torch.relu': only torch.relu(tensor) with one positional tensor is supported")),
        ("torch_sigmoid_keyword", call("torch.sigmoid", &[t(KEY_M)], &[kw_bool("inplace", false)]),
            reject("RXTP-TORCH-025", "rextio-torch cannot lower 'torch.sigmoid': only torch.sigmoid(tensor) with one positional tensor is supported")),
        ("torch_tanh_no_operand", call("torch.tanh", &[], &[]),
            reject("RXTP-TORCH-026", "rextio-torch cannot lower 'torch.tanh': only torch.tanh(tensor) with one positional tensor is supported")),
        ("torch_relu_i64", call("torch.relu", &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.relu': torch.relu requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("torch_relu_unresolved", call("torch.relu", &[unresolved()], &[]), NC),
        ("F_relu", call(F_RELU, &[t(KEY_M)], &[]),
            claim_ok(p("functional-relu-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Relu, O0))),
        ("F_relu_inplace_false", call(F_RELU, &[t(KEY_V)], &[kw_bool("inplace", false)]),
            claim_ok(p("functional-relu-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Relu, O0))),
        ("F_relu_inplace_true", call(F_RELU, &[t(KEY_M)], &[kw_bool("inplace", true)]),
            reject("RXTP-TORCH-050", "rextio-torch cannot lower 'torch.nn.functional.relu': functional ReLU accepts only the exact literal inplace=False option")),
        ("F_relu_two_keywords", call(F_RELU, &[t(KEY_M)], &[kw_bool("inplace", false), kw_bool("other", false)]),
            reject("RXTP-TORCH-050", "rextio-torch cannot lower 'torch.nn.functional.relu': functional ReLU accepts at most one inplace=False literal")),
        ("F_relu_positional_inplace", call(F_RELU, &[t(KEY_M), boolean()], &[]),
            reject("RXTP-TORCH-050", "rextio-torch cannot lower 'torch.nn.functional.relu': only torch.nn.functional.relu(tensor) with one positional tensor is supported")),
        // F.tanh / F.sigmoid, extension spellings (issue 33): claimed by `claim`, not covered
        // in the Rextio plugin, as the reference has them (`RXT030 ... torch.nn.functional.tanh`).
        ("F_tanh_functional", call("torch.nn.functional.tanh", &[t(KEY_M)], &[]),
            claim_ok(p("functional-tanh-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Tanh, O0))),
        // F.silu, an extension spelling: claimed by `claim` (check, compile), not by the
        // Rextio plugin (`extension_spellings_keep_the_reference_outcome_in_the_plugin`).
        ("F_silu", call(F_SILU, &[t(KEY_M)], &[]),
            claim_ok(p("functional-silu-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Silu, O0))),
        ("F_silu_1d", call(F_SILU, &[t(KEY_V)], &[]),
            claim_ok(p("functional-silu-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Silu, O0))),
        ("F_silu_inplace_false", call(F_SILU, &[t(KEY_V)], &[kw_bool("inplace", false)]),
            claim_ok(p("functional-silu-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Silu, O0))),
        ("F_silu_inplace_true", call(F_SILU, &[t(KEY_M)], &[kw_bool("inplace", true)]),
            reject("RXTP-TORCH-052", "rextio-torch cannot lower 'torch.nn.functional.silu': functional SiLU accepts only the exact literal inplace=False option")),
        ("F_silu_two_keywords", call(F_SILU, &[t(KEY_M)], &[kw_bool("inplace", false), kw_bool("other", false)]),
            reject("RXTP-TORCH-052", "rextio-torch cannot lower 'torch.nn.functional.silu': functional SiLU accepts at most one inplace=False literal")),
        ("F_silu_positional_inplace", call(F_SILU, &[t(KEY_M), boolean()], &[]),
            reject("RXTP-TORCH-052", "rextio-torch cannot lower 'torch.nn.functional.silu': only torch.nn.functional.silu(tensor) with one positional tensor is supported")),
        ("F_silu_i64", call(F_SILU, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.silu': torch.nn.functional.silu requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("F_silu_unresolved", call(F_SILU, &[unresolved()], &[]), NC),
        ("silu_method", method("x.silu", Some(KEY_M), &[], &[]), NC),
        ("torch_silu", call("torch.silu", &[t(KEY_M)], &[]), NC),
        // F.relu6, an extension spelling (ATen's hardtanh(x, 0, 6)).
        ("F_relu6", call(F_RELU6, &[t(KEY_M)], &[]),
            claim_ok(p("functional-relu6-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Relu6, O0))),
        ("F_relu6_1d", call(F_RELU6, &[t(KEY_V)], &[]),
            claim_ok(p("functional-relu6-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Relu6, O0))),
        ("F_relu6_inplace_false", call(F_RELU6, &[t(KEY_M)], &[kw_bool("inplace", false)]),
            claim_ok(p("functional-relu6-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Relu6, O0))),
        ("F_relu6_inplace_true", call(F_RELU6, &[t(KEY_V)], &[kw_bool("inplace", true)]),
            reject("RXTP-TORCH-054", "rextio-torch cannot lower 'torch.nn.functional.relu6': functional ReLU6 accepts only the exact literal inplace=False option")),
        ("F_relu6_two_keywords", call(F_RELU6, &[t(KEY_M)], &[kw_bool("inplace", false), kw_bool("other", false)]),
            reject("RXTP-TORCH-054", "rextio-torch cannot lower 'torch.nn.functional.relu6': functional ReLU6 accepts at most one inplace=False literal")),
        ("F_relu6_positional_inplace", call(F_RELU6, &[t(KEY_M), boolean()], &[]),
            reject("RXTP-TORCH-054", "rextio-torch cannot lower 'torch.nn.functional.relu6': only torch.nn.functional.relu6(tensor) with one positional tensor is supported")),
        ("F_relu6_i64", call(F_RELU6, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.relu6': torch.nn.functional.relu6 requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("F_relu6_unresolved", call(F_RELU6, &[unresolved()], &[]), NC),
        ("relu6_method", method("x.relu6", Some(KEY_M), &[], &[]), NC),
        ("F_sigmoid_functional_V", call("torch.nn.functional.sigmoid", &[t(KEY_V)], &[]),
            claim_ok(p("functional-sigmoid-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Sigmoid, O0))),
        // --- unary math -----------------------------------------------------------------
        ("method_abs_1d", method("x.abs", Some(KEY_V), &[], &[]),
            claim_ok(p("unary-abs-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Abs, R))),
        ("method_negative_1d", method("x.negative", Some(KEY_V), &[], &[]),
            claim_ok(p("unary-negative-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Neg, R))),
        ("method_neg_2d", method("x.neg", Some(KEY_M), &[], &[]),
            claim_ok(p("unary-neg-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Neg, R))),
        ("method_square_1d", method("x.square", Some(KEY_V), &[], &[]),
            claim_ok(p("unary-square-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Square, R))),
        ("torch_sqrt_2d", call("torch.sqrt", &[t(KEY_M)], &[]),
            claim_ok(p("unary-sqrt-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Sqrt, O0))),
        ("torch_exp_1d", call("torch.exp", &[t(KEY_V)], &[]),
            claim_ok(p("unary-exp-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Exp, O0))),
        ("torch_log_2d", call("torch.log", &[t(KEY_M)], &[]),
            claim_ok(p("unary-log-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Log, O0))),
        ("torch_negative_2d", call("torch.negative", &[t(KEY_M)], &[]),
            claim_ok(p("unary-negative-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Neg, O0))),
        ("unary_method_on_call_receiver", chained("sqrt", KEY_M, &[], &[]),
            claim_ok(p("unary-sqrt-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Sqrt, R))),
        ("torch_sqrt_literal", call("torch.sqrt", &[int(4)], &[]),
            reject("RXTP-TORCH-043", "rextio-torch cannot lower 'torch.sqrt': only torch.sqrt(tensor) with one positional tensor is supported")),
        ("torch_abs_two", call("torch.abs", &[t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-037", "rextio-torch cannot lower 'torch.abs': only torch.abs(tensor) with one positional tensor is supported")),
        ("torch_neg_float", call("torch.neg", &[float()], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.neg': torch.neg requires float32 CPU rank-1 or rank-2; got 'float'")),
        ("method_square_arg", method("x.square", Some(KEY_M), &[int(2)], &[]),
            reject("RXTP-TORCH-040", "rextio-torch cannot lower 'x.square': only zero-argument .square() is supported")),
        ("method_exp_i64", method("l.exp", Some(KEY_L), &[], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'l.exp': .exp() requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("method_log_unresolved", method("h.log", None, &[], &[]), NC),
        ("torch_neg_keyword", call("torch.neg", &[t(KEY_M)], &[kw_none("out")]),
            reject("RXTP-TORCH-038", "rextio-torch cannot lower 'torch.neg': only torch.neg(tensor) with one positional tensor is supported")),
        ("method_negative_arg", method("x.negative", Some(KEY_M), &[int(1)], &[]),
            reject("RXTP-TORCH-039", "rextio-torch cannot lower 'x.negative': only zero-argument .negative() is supported")),
        ("torch_exp_two", call("torch.exp", &[t(KEY_V), t(KEY_V)], &[]),
            reject("RXTP-TORCH-041", "rextio-torch cannot lower 'torch.exp': only torch.exp(tensor) with one positional tensor is supported")),
        ("method_log_keyword", method("h.log", Some(KEY_M), &[], &[kw_int("base", 2)]),
            reject("RXTP-TORCH-042", "rextio-torch cannot lower 'h.log': only zero-argument .log() is supported")),
        ("abs_inplace_method", method("x.abs_", Some(KEY_M), &[], &[]), NC),
        ("torch_absolute", call("torch.absolute", &[t(KEY_M)], &[]), NC),
        ("method_positive", method("x.positive", Some(KEY_M), &[], &[]), NC),
        ("torch_linalg_sqrt", call("torch.linalg.sqrt", &[t(KEY_M)], &[]), NC),
        // torch.rsqrt / .rsqrt(), an extension spelling (ours only: `ir/src/expr.rs`).
        ("torch_rsqrt_2d", call(T_RSQRT, &[t(KEY_M)], &[]),
            claim_ok(p("unary-rsqrt-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Rsqrt, O0))),
        ("torch_rsqrt_1d", call(T_RSQRT, &[t(KEY_V)], &[]),
            claim_ok(p("unary-rsqrt-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Rsqrt, O0))),
        ("method_rsqrt_1d", method("x.rsqrt", Some(KEY_V), &[], &[]),
            claim_ok(p("unary-rsqrt-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Rsqrt, R))),
        ("method_rsqrt_2d", method("x.rsqrt", Some(KEY_M), &[], &[]),
            claim_ok(p("unary-rsqrt-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Rsqrt, R))),
        ("torch_rsqrt_two", call(T_RSQRT, &[t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-053", "rextio-torch cannot lower 'torch.rsqrt': only torch.rsqrt(tensor) with one positional tensor is supported")),
        ("torch_rsqrt_out", call(T_RSQRT, &[t(KEY_M)], &[kw_none("out")]),
            reject("RXTP-TORCH-053", "rextio-torch cannot lower 'torch.rsqrt': only torch.rsqrt(tensor) with one positional tensor is supported")),
        ("method_rsqrt_arg", method("x.rsqrt", Some(KEY_M), &[int(1)], &[]),
            reject("RXTP-TORCH-053", "rextio-torch cannot lower 'x.rsqrt': only zero-argument .rsqrt() is supported")),
        ("torch_rsqrt_i64", call(T_RSQRT, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.rsqrt': torch.rsqrt requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("method_rsqrt_i64", method("l.rsqrt", Some(KEY_L), &[], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'l.rsqrt': .rsqrt() requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
        ("torch_rsqrt_unresolved", call(T_RSQRT, &[unresolved()], &[]), NC),
        ("rsqrt_inplace_method", method("x.rsqrt_", Some(KEY_M), &[], &[]), NC),
        // --- reductions -----------------------------------------------------------------
        ("mean_legacy", method("x.mean", Some(KEY_M), &[], &[kw_int("dim", 1), kw_bool("keepdim", false)]),
            claim_ok(p("tensor-mean-dim1-f32-cpu-2d"), KEY_V, reduce(ReduceKind::Mean, R, 1, false))),
        ("mean_keepfalse_dim1_order", method("x.mean", Some(KEY_M), &[], &[kw_bool("keepdim", false), kw_int("dim", 1)]),
            claim_ok(p("tensor-mean-dim1-f32-cpu-2d"), KEY_V, reduce(ReduceKind::Mean, R, 1, false))),
        ("mean_dim1_only_is_static", method("x.mean", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("mean-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Mean, R, 1, false))),
        ("mean_positional_dim", method("x.mean", Some(KEY_M), &[int(0)], &[]),
            claim_ok(p("mean-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Mean, R, 0, false))),
        ("torch_mean_kw_dim0", call("torch.mean", &[t(KEY_M)], &[kw_int("dim", 0)]),
            claim_ok(p("mean-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Mean, O0, 0, false))),
        ("sum_legacy_chain", chained("sum", KEY_M, &[], &[kw_int("dim", 1), kw_bool("keepdim", false)]),
            claim_ok(p("tensor-sum-dim1-f32-cpu-2d"), KEY_V, reduce(ReduceKind::Sum, R, 1, false))),
        ("sum_keepdim_true", method("x.sum", Some(KEY_M), &[], &[kw_int("dim", 1), kw_bool("keepdim", true)]),
            claim_ok(p("sum-static-dim-f32-cpu-rank1-2"), KEY_M, reduce(ReduceKind::Sum, R, 1, true))),
        ("torch_sum_vec_keepdim", call("torch.sum", &[t(KEY_V), int(0)], &[kw_bool("keepdim", true)]),
            claim_ok(p("sum-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Sum, O0, 0, true))),
        ("sum_positional_keepdim", method("x.sum", Some(KEY_M), &[int(0), boolean()], &[]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum accepts one tensor input/receiver and at most one positional literal dim")),
        ("torch_mean_positional_keepdim", call("torch.mean", &[t(KEY_M), int(0), boolean()], &[]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'torch.mean': mean accepts one tensor input/receiver and at most one positional literal dim")),
        ("mean_dynamic_positional_dim", method("x.mean", Some(KEY_M), &[t("int")], &[]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean accepts one tensor input/receiver and at most one positional literal dim")),
        ("sum_keepdim_int", method("x.sum", Some(KEY_M), &[], &[kw_int("dim", 0), kw_int("keepdim", 1)]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum keywords must be unique static literals")),
        ("mean_dim_bool", method("x.mean", Some(KEY_M), &[], &[kw_bool("dim", true)]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean keywords must be unique static literals")),
        ("mean_positional_and_kw_dim", method("x.mean", Some(KEY_M), &[int(1)], &[kw_int("dim", 1)]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': unsupported or duplicate positional/keyword options for mean")),
        ("mean_dtype_none", method("x.mean", Some(KEY_M), &[], &[kw_int("dim", 1), kw_none("dtype")]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': unsupported or duplicate positional/keyword options for mean")),
        // The reference refuses a mean over every dim (RXTP-TORCH-003, `rank0_rows_are_extended_only`); the
        // extended surface's rank-0 lane claims it.
        ("mean_no_dim", method("x.mean", Some(KEY_M), &[], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, ClaimedOp::ReduceAll { op: WholeReduceOp::Mean, input: R })),
        ("sum_keepdim_str_typed_bool", method("x.sum", Some(KEY_M), &[], &[kw_int("dim", 0), kw("keepdim", "bool", Literal::Str("no".into()))]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum keepdim must be a bool literal; got 'no'")),
        ("sum_i64", method("x.sum", Some(KEY_L), &[], &[kw_int("dim", 0), kw_bool("keepdim", true)]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum(dim=0, keepdim=True) on 'rextio-torch/tensor-i64-cpu-1d' does not have an already-registered rank-1/rank-2 result type")),
        ("mean_vec_rank0", method("v.mean", Some(KEY_V), &[], &[kw_int("dim", 0)]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'v.mean': mean(dim=0, keepdim=False) on 'rextio-torch/tensor-f32-cpu-1d' does not have an already-registered rank-1/rank-2 result type")),
        ("torch_mean_float_input", call("torch.mean", &[float()], &[kw_int("dim", 0)]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.mean': input type is outside the float32 CPU tensor surface")),
        ("torch_mean_unresolved", call("torch.mean", &[unresolved()], &[kw_int("dim", 0)]), NC),
        ("mean_unresolved_receiver", method("h.mean", None, &[], &[kw_int("dim", 1)]), NC),
        ("mean_unresolved_receiver_positional_dim", method("h.mean", None, &[int(1)], &[]), NC),
        ("np_mean_noncanonical", call("numpy.mean", &[t(KEY_M)], &[kw_int("dim", 0)]), NC),
    ]
}

fn cases_2() -> Vec<(&'static str, ClaimSite, Expect)> {
    use Expect::NotCovered as NC;
    vec![
        // --- classification -------------------------------------------------------------
        ("softmax_legacy", method("x.softmax", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("tensor-softmax-dim1-f32-cpu-2d"), KEY_M, softmax(R, 1))),
        ("softmax_positional_static", method("x.softmax", Some(KEY_M), &[int(1)], &[]),
            claim_ok(p("softmax-static-dim-f32-cpu-rank1-2"), KEY_M, softmax(R, 1))),
        ("softmax_vec", method("v.softmax", Some(KEY_V), &[], &[kw_int("dim", 0)]),
            claim_ok(p("softmax-static-dim-f32-cpu-rank1-2"), KEY_V, softmax(R, 0))),
        ("torch_softmax_kw_dim1", call("torch.softmax", &[t(KEY_M)], &[kw_int("dim", 1)]),
            claim_ok(p("softmax-static-dim-f32-cpu-rank1-2"), KEY_M, softmax(O0, 1))),
        ("F_softmax_kw_dim1", call(F_SOFTMAX, &[t(KEY_M)], &[kw_int("dim", 1)]),
            claim_ok(p("functional-softmax-f32-cpu-rank1-2"), KEY_M, softmax(O0, 1))),
        ("F_softmax_positional", call(F_SOFTMAX, &[t(KEY_M), int(1)], &[]),
            claim_ok(p("functional-softmax-f32-cpu-rank1-2"), KEY_M, softmax(O0, 1))),
        ("F_softmax_dtype_none", call(F_SOFTMAX, &[t(KEY_V)], &[kw_int("dim", 0), kw_none("dtype")]),
            claim_ok(p("functional-softmax-f32-cpu-rank1-2"), KEY_V, softmax(O0, 0))),
        ("F_softmax_stacklevel", call(F_SOFTMAX, &[t(KEY_M)], &[kw_int("dim", 1), kw_int("_stacklevel", 3)]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.nn.functional.softmax': unsupported or duplicate positional/keyword options for softmax")),
        ("F_softmax_dtype_typed_none_not_none", call(F_SOFTMAX, &[t(KEY_M)], &[kw_int("dim", 1), kw("dtype", "None", Literal::Int(3))]),
            reject("RXTP-TORCH-051", "rextio-torch cannot lower 'torch.nn.functional.softmax': functional softmax accepts dtype only as the exact literal None")),
        ("torch_softmax_dtype_str", call("torch.softmax", &[t(KEY_M)], &[kw_int("dim", 1), kw_str("dtype", "float32")]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.softmax': softmax keywords must be unique static literals")),
        ("torch_softmax_dtype_none", call("torch.softmax", &[t(KEY_M)], &[kw_int("dim", 1), kw_none("dtype")]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.softmax': unsupported or duplicate positional/keyword options for softmax")),
        ("softmax_keepdim", method("x.softmax", Some(KEY_M), &[], &[kw_int("dim", 1), kw_bool("keepdim", false)]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'x.softmax': unsupported or duplicate positional/keyword options for softmax")),
        ("softmax_vec_dim1", method("v.softmax", Some(KEY_V), &[], &[kw_int("dim", 1)]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'v.softmax': softmax(dim=1) on 'rextio-torch/tensor-f32-cpu-1d' does not have an existing exact classification result type")),
        ("softmax_no_dim", call("torch.softmax", &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.softmax': softmax requires a literal dim=0 or dim=1")),
        ("F_softmax_unresolved", call(F_SOFTMAX, &[unresolved()], &[kw_int("dim", 1)]), NC),
        ("argmax_method_dim1_keepfalse", method("p.argmax", Some(KEY_M), &[], &[kw_int("dim", 1), kw_bool("keepdim", false)]),
            claim_ok(p("tensor-argmax-dim1-keepfalse-i64-cpu-1d"), KEY_L, argmax(R, 1, false))),
        ("argmax_dim1_only_static", method("p.argmax", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("argmax-static-dim-i64-cpu-rank1"), KEY_L, argmax(R, 1, false))),
        ("torch_argmax_kw_dim0", call("torch.argmax", &[t(KEY_M)], &[kw_int("dim", 0)]),
            claim_ok(p("argmax-static-dim-i64-cpu-rank1"), KEY_L, argmax(O0, 0, false))),
        ("argmax_vec_keepdim", method("v.argmax", Some(KEY_V), &[int(0)], &[kw_bool("keepdim", true)]),
            claim_ok(p("argmax-static-dim-i64-cpu-rank1"), KEY_L, argmax(R, 0, true))),
        ("argmax_vec_dim0", method("x.argmax", Some(KEY_V), &[], &[kw_int("dim", 0)]),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'x.argmax': argmax(dim=0, keepdim=False) on 'rextio-torch/tensor-f32-cpu-1d' does not have an existing exact classification result type")),
        ("argmax_keepdim_only", method("x.argmax", Some(KEY_M), &[], &[kw_bool("keepdim", false)]),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'x.argmax': argmax requires a literal dim=0 or dim=1")),
        ("torch_argmax_rank2_keeptrue", call("torch.argmax", &[t(KEY_M)], &[kw_int("dim", 1), kw_bool("keepdim", true)]),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'torch.argmax': argmax(dim=1, keepdim=True) on 'rextio-torch/tensor-f32-cpu-2d' does not have an existing exact classification result type")),
        ("argmax_keepdim_typed_bool_int", method("x.argmax", Some(KEY_M), &[], &[kw_int("dim", 1), kw("keepdim", "bool", Literal::Int(1))]),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'x.argmax': argmax keepdim must be a bool literal; got 1")),
        ("argmax_i64_input", method("l.argmax", Some(KEY_L), &[], &[kw_int("dim", 0), kw_bool("keepdim", true)]),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'l.argmax': argmax(dim=0, keepdim=True) on 'rextio-torch/tensor-i64-cpu-1d' does not have an existing exact classification result type")),
        ("argmax_float_receiver", method("f.argmax", Some("float"), &[], &[kw_int("dim", 0)]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'f.argmax': input type is outside the float32 CPU tensor surface")),
        ("F_argmax_noncanonical", call("torch.nn.functional.argmax", &[t(KEY_M)], &[kw_int("dim", 0)]), NC),
        // --- binops: functional elementwise --------------------------------------------
        ("torch_add_MM", call("torch.add", &[t(KEY_M), t(KEY_M)], &[]),
            claim_ok(p("function-add-f32-cpu-rank1-2"), KEY_M, binary(BinaryOp::Add))),
        ("torch_sub_MV", call("torch.sub", &[t(KEY_M), t(KEY_V)], &[]),
            claim_ok(p("function-sub-f32-cpu-rank1-2"), KEY_M, binary(BinaryOp::Sub))),
        ("torch_mul_VM", call("torch.mul", &[t(KEY_V), t(KEY_M)], &[]),
            claim_ok(p("function-mul-f32-cpu-rank1-2"), KEY_M, binary(BinaryOp::Mul))),
        ("torch_div_VV", call("torch.div", &[t(KEY_V), t(KEY_V)], &[]),
            claim_ok(p("function-div-f32-cpu-rank1-2"), KEY_V, binary(BinaryOp::Div))),
        ("torch_sub_alpha", call("torch.sub", &[t(KEY_M), t(KEY_M)], &[kw_int("alpha", 2)]),
            reject("RXTP-TORCH-032", "rextio-torch cannot lower 'torch.sub': functional elementwise calls require exactly two positional tensor operands")),
        ("torch_mul_literal", call("torch.mul", &[t(KEY_M), int(2)], &[]),
            reject("RXTP-TORCH-033", "rextio-torch cannot lower 'torch.mul': functional elementwise calls require exactly two positional tensor operands")),
        ("torch_mul_scalar_float", call("torch.mul", &[t(KEY_M), float()], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.mul': operand types are outside the float32 CPU rank-1/2 tensor surface")),
        ("torch_add_VL", call("torch.add", &[t(KEY_V), t(KEY_L)], &[]),
            reject("RXTP-TORCH-031", "rextio-torch cannot lower 'torch.add': unsupported functional elementwise operand types 'rextio-torch/tensor-f32-cpu-1d' and 'rextio-torch/tensor-i64-cpu-1d'")),
        ("torch_add_one_arg", call("torch.add", &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-031", "rextio-torch cannot lower 'torch.add': functional elementwise calls require exactly two positional tensor operands")),
        ("torch_div_rounding_mode", call("torch.div", &[t(KEY_M), t(KEY_M)], &[kw_str("rounding_mode", "floor")]),
            reject("RXTP-TORCH-034", "rextio-torch cannot lower 'torch.div': functional elementwise calls require exactly two positional tensor operands")),
        ("torch_add_unresolved", call("torch.add", &[t(KEY_M), unresolved()], &[]), NC),
        ("torch_divide_alias", call("torch.divide", &[t(KEY_M), t(KEY_M)], &[]), NC),
        ("torch_subtract_alias", call("torch.subtract", &[t(KEY_M), t(KEY_M)], &[]), NC),
        ("method_add", method("a.add", Some(KEY_M), &[t(KEY_M)], &[]), NC),
        ("method_mul", method("a.mul", Some(KEY_V), &[t(KEY_V)], &[]), NC),
        // --- binops: operators ----------------------------------------------------------
        ("add_MM", binop("+", t(KEY_M), t(KEY_M)),
            claim_ok(p("tensor-add-f32-cpu-same-rank"), KEY_M, binary(BinaryOp::Add))),
        ("add_VV", binop("+", t(KEY_V), t(KEY_V)),
            claim_ok(p("tensor-add-f32-cpu-same-rank"), KEY_V, binary(BinaryOp::Add))),
        ("add_MV", binop("+", t(KEY_M), t(KEY_V)),
            claim_ok(p("tensor-add-f32-cpu-2d-1d-broadcast"), KEY_M, binary(BinaryOp::Add))),
        ("add_VM", binop("+", t(KEY_V), t(KEY_M)),
            claim_ok(p("tensor-add-f32-cpu-2d-1d-broadcast"), KEY_M, binary(BinaryOp::Add))),
        ("mul_VV", binop("*", t(KEY_V), t(KEY_V)),
            claim_ok(p("tensor-mul-f32-cpu-same-rank"), KEY_V, binary(BinaryOp::Mul))),
        ("mul_MV", binop("*", t(KEY_M), t(KEY_V)),
            claim_ok(p("tensor-mul-f32-cpu-2d-1d-broadcast"), KEY_M, binary(BinaryOp::Mul))),
        ("sub_MM", binop("-", t(KEY_M), t(KEY_M)),
            claim_ok(p("tensor-sub-f32-cpu-same-rank"), KEY_M, binary(BinaryOp::Sub))),
        ("sub_VM", binop("-", t(KEY_V), t(KEY_M)),
            claim_ok(p("tensor-sub-f32-cpu-2d-1d-broadcast"), KEY_M, binary(BinaryOp::Sub))),
        ("div_MM", binop("/", t(KEY_M), t(KEY_M)),
            claim_ok(p("tensor-div-f32-cpu-same-rank"), KEY_M, binary(BinaryOp::Div))),
        ("div_MV", binop("/", t(KEY_M), t(KEY_V)),
            claim_ok(p("tensor-div-f32-cpu-2d-1d-broadcast"), KEY_M, binary(BinaryOp::Div))),
        ("div_VM", binop("/", t(KEY_V), t(KEY_M)),
            claim_ok(p("tensor-div-f32-cpu-2d-1d-broadcast"), KEY_M, binary(BinaryOp::Div))),
        // Scalar operands (ours, the extended surface: RXTP-TORCH-055..058); the reference
        // (and the reference surface) rejects each with RXTP-TORCH-010, "operand types are
        // outside ..." (`extension_spellings_keep_the_reference_outcome_in_the_plugin`).
        ("mul_scalar_int", binop("*", t(KEY_V), int(2)),
            claim_ok(p("tensor-mul-scalar-f32-cpu-rank1-2"), KEY_V, scalar_op(TensorScalarOp::Mul, O0, O1))),
        ("sub_scalar_int_param", binop("-", t(KEY_V), t("int")),
            claim_ok(p("tensor-sub-scalar-f32-cpu-rank1-2"), KEY_V, scalar_op(TensorScalarOp::Sub, O0, O1))),
        ("add_float_left", binop("+", float(), t(KEY_M)),
            claim_ok(p("tensor-add-scalar-f32-cpu-rank1-2"), KEY_M, scalar_op(TensorScalarOp::Add, O1, O0))),
        ("add_float_right", binop("+", t(KEY_V), float()),
            claim_ok(p("tensor-add-scalar-f32-cpu-rank1-2"), KEY_V, scalar_op(TensorScalarOp::Add, O0, O1))),
        ("rsub_float_left", binop("-", float(), t(KEY_M)),
            claim_ok(p("tensor-sub-scalar-f32-cpu-rank1-2"), KEY_M, scalar_op(TensorScalarOp::RSub, O1, O0))),
        ("rmul_int_left", binop("*", int(-3), t(KEY_M)),
            claim_ok(p("tensor-mul-scalar-f32-cpu-rank1-2"), KEY_M, scalar_op(TensorScalarOp::Mul, O1, O0))),
        ("div_float_right", binop("/", t(KEY_M), float()),
            claim_ok(p("tensor-div-scalar-f32-cpu-rank1-2"), KEY_M, scalar_op(TensorScalarOp::Div, O0, O1))),
        ("rdiv_int_left", binop("/", int(1), t(KEY_V)),
            claim_ok(p("tensor-div-scalar-f32-cpu-rank1-2"), KEY_V, scalar_op(TensorScalarOp::RDiv, O1, O0))),
        ("mul_bool_scalar", binop("*", t(KEY_M), boolean()),
            reject("RXTP-TORCH-057", "rextio-torch cannot lower '*': a scalar operand of * must be an int or a float, got 'bool' (a bool is not taken as a number here: write the number, e.g. 1.0 or 0.0)")),
        ("add_str_scalar", binop("+", string(), t(KEY_V)),
            reject("RXTP-TORCH-055", "rextio-torch cannot lower '+': a scalar operand of + must be an int or a float, got 'str'")),
        ("sub_none_scalar", binop("-", t(KEY_M), none()),
            reject("RXTP-TORCH-056", "rextio-torch cannot lower '-': a scalar operand of - must be an int or a float, got 'None'")),
        ("div_bool_left", binop("/", boolean(), t(KEY_M)),
            reject("RXTP-TORCH-058", "rextio-torch cannot lower '/': a scalar operand of / must be an int or a float, got 'bool' (a bool is not taken as a number here: write the number, e.g. 1.0 or 0.0)")),
        ("mul_i64_float", binop("*", t(KEY_L), float()),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower '*': operand types are outside the float32 CPU rank-1/2 tensor surface")),
        ("add_unresolved_scalar", binop("+", t(KEY_M), unresolved()), NC),
        ("add_LV", binop("+", t(KEY_L), t(KEY_V)),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower '+': + requires float32 CPU rank-1/2 operands; got 'rextio-torch/tensor-i64-cpu-1d', 'rextio-torch/tensor-f32-cpu-1d'")),
        ("div_ML", binop("/", t(KEY_M), t(KEY_L)),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower '/': / requires float32 CPU rank-1/2 operands; got 'rextio-torch/tensor-f32-cpu-2d', 'rextio-torch/tensor-i64-cpu-1d'")),
        ("add_unresolved", binop("+", unresolved(), t(KEY_M)), NC),
        // The reference's arity guards on operators: the host never builds these sites (an
        // operator has two operands, no keywords, no receiver), but the rule answers them.
        ("add_one_operand", site(SiteKind::Binop, "+", &[t(KEY_M)], &[], None),
            reject("RXTP-TORCH-011", "rextio-torch cannot lower '+': elementwise + requires exactly two operands")),
        ("mul_keyword", site(SiteKind::Binop, "*", &[t(KEY_M), t(KEY_M)], &[kw_int("alpha", 2)], None),
            reject("RXTP-TORCH-017", "rextio-torch cannot lower '*': only binary * between two tensor operands is supported")),
        ("sub_receiver", site(SiteKind::Binop, "-", &[t(KEY_M), t(KEY_M)], &[],
                Some(Receiver { arg_type: Some(KEY_M.to_string()), expr_kind: ReceiverKind::Name })),
            reject("RXTP-TORCH-019", "rextio-torch cannot lower '-': only binary - between two tensor operands is supported")),
        ("div_three_operands", site(SiteKind::Binop, "/", &[t(KEY_M), t(KEY_M), t(KEY_M)], &[], None),
            reject("RXTP-TORCH-021", "rextio-torch cannot lower '/': elementwise / requires exactly two operands")),
        ("mul_unresolved", binop("*", t(KEY_V), unresolved()), NC),
        ("mod_MM", binop("%", t(KEY_M), t(KEY_M)), NC),
        // Not covered by the reference (`rank0_rows_are_extended_only`); the extended
        // surface's rank-0 lane refuses a tensor comparison outside a condition, naming
        // the forms it compiles.
        ("compare_MM", compare("<", t(KEY_M), t(KEY_M)),
            reject("RXTP-TORCH-162", "rextio-torch cannot lower '<': a comparison of tensors gives a bool tensor, which compiled code has no type for; it compiles as an if/while condition (`if t < x:`) or read as a Python value first (`t.item() < x`)")),
        ("compare_eq_VV", compare("==", t(KEY_V), t(KEY_V)),
            reject("RXTP-TORCH-162", "rextio-torch cannot lower '==': a comparison of tensors gives a bool tensor, which compiled code has no type for; it compiles as an if/while condition (`if t == x:`) or read as a Python value first (`t.item() == x`)")),
        // --- binops: matmul -------------------------------------------------------------
        ("matmul_MM", binop("@", t(KEY_M), t(KEY_M)),
            claim_ok(p("tensor-matmul-f32-cpu-2d"), KEY_M, matmul(O0, O1))),
        ("matmul_MV", binop("@", t(KEY_M), t(KEY_V)),
            claim_ok(p("tensor-matmul-f32-cpu-mixed-rank"), KEY_V, matmul(O0, O1))),
        ("matmul_VM", binop("@", t(KEY_V), t(KEY_M)),
            claim_ok(p("tensor-matmul-f32-cpu-mixed-rank"), KEY_V, matmul(O0, O1))),
        ("matmul_binop_VV", binop("@", t(KEY_V), t(KEY_V)),
            reject("RXTP-TORCH-035", "rextio-torch cannot lower '@': unsupported matmul operand ranks for 'rextio-torch/tensor-f32-cpu-1d' and 'rextio-torch/tensor-f32-cpu-1d'")),
        ("matmul_binop_LM", binop("@", t(KEY_L), t(KEY_M)),
            reject("RXTP-TORCH-009", "rextio-torch cannot lower '@': unsupported matmul operand ranks for 'rextio-torch/tensor-i64-cpu-1d' and 'rextio-torch/tensor-f32-cpu-2d'")),
        ("matmul_binop_int", binop("@", t(KEY_M), int(2)),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower '@': operand types are outside the float32 CPU rank-1/2 tensor surface")),
        ("matmul_binop_unresolved", binop("@", t(KEY_M), unresolved()), NC),
        ("torch_matmul_MM", call("torch.matmul", &[t(KEY_M), t(KEY_M)], &[]),
            claim_ok(p("tensor-matmul-call-f32-cpu-2d"), KEY_M, matmul(O0, O1))),
        ("torch_matmul_VM", call("torch.matmul", &[t(KEY_V), t(KEY_M)], &[]),
            claim_ok(p("tensor-matmul-call-f32-cpu-mixed-rank"), KEY_V, matmul(O0, O1))),
        ("torch_matmul_kw", call("torch.matmul", &[t(KEY_M)], &[kw_int("other", 1)]),
            reject("RXTP-TORCH-014", "rextio-torch cannot lower 'torch.matmul': torch.matmul supports only two positional tensor operands")),
        ("torch_matmul_three", call("torch.matmul", &[t(KEY_M), t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-014", "rextio-torch cannot lower 'torch.matmul': matmul requires exactly two positional tensor operands")),
        ("torch_matmul_VV", call("torch.matmul", &[t(KEY_V), t(KEY_V)], &[]),
            reject("RXTP-TORCH-036", "rextio-torch cannot lower 'torch.matmul': unsupported matmul operand ranks for 'rextio-torch/tensor-f32-cpu-1d' and 'rextio-torch/tensor-f32-cpu-1d'")),
        ("method_matmul_MM", method("a.matmul", Some(KEY_M), &[t(KEY_M)], &[]),
            claim_ok(p("tensor-matmul-call-f32-cpu-2d"), KEY_M, matmul(R, O0))),
        ("method_matmul_MV", method("a.matmul", Some(KEY_M), &[t(KEY_V)], &[]),
            claim_ok(p("tensor-matmul-call-f32-cpu-mixed-rank"), KEY_V, matmul(R, O0))),
        ("method_matmul_two_args", method("a.matmul", Some(KEY_M), &[t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-014", "rextio-torch cannot lower 'a.matmul': only .matmul(other) with one positional tensor is supported")),
        ("method_matmul_LL", method("a.matmul", Some(KEY_L), &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-014", "rextio-torch cannot lower 'a.matmul': unsupported matmul operand ranks for 'rextio-torch/tensor-i64-cpu-1d' and 'rextio-torch/tensor-i64-cpu-1d'")),
        ("method_matmul_unresolved", method("a.matmul", None, &[t(KEY_M)], &[]), NC),
        ("linalg_matmul_no_receiver", call("torch.linalg.matmul", &[t(KEY_M), t(KEY_M)], &[]), NC),
        // --- CUDA -----------------------------------------------------------------------
        ("cuda_matmul", binop("@", t(KEY_CM), t(KEY_CM)),
            claim_ok(p("cuda0-matmul-f32-2d"), KEY_CM, matmul(O0, O1))),
        ("cuda_bias_add", binop("+", t(KEY_CM), t(KEY_CV)),
            claim_ok(p("cuda0-bias-add-f32-2d-1d"), KEY_CM, binary(BinaryOp::Add))),
        ("cuda_relu", method("h.relu", Some(KEY_CM), &[], &[]),
            claim_ok(p("cuda0-relu-f32-2d"), KEY_CM, unary(UnaryOp::Relu, R))),
        ("cuda_relu_chain", chained("relu", KEY_CM, &[], &[]),
            claim_ok(p("cuda0-relu-f32-2d"), KEY_CM, unary(UnaryOp::Relu, R))),
        ("cuda_mean_dim1", method("h.mean", Some(KEY_CM), &[], &[kw_int("dim", 1)]),
            claim_ok(p("cuda0-mean-dim1-f32-2d"), KEY_CV, reduce(ReduceKind::Mean, R, 1, false))),
        ("cuda_mean_dim1_keepfalse", method("h.mean", Some(KEY_CM), &[], &[kw_int("dim", 1), kw_bool("keepdim", false)]),
            claim_ok(p("cuda0-mean-dim1-f32-2d"), KEY_CV, reduce(ReduceKind::Mean, R, 1, false))),
        ("cuda_reverse_bias_add", binop("+", t(KEY_CV), t(KEY_CM)),
            reject("RXTP-TORCH-046", "rextio-torch cannot lower '+': CUDA add is limited to rank-2 + rank-1 trailing bias broadcast on cuda:0")),
        ("cuda_same_rank_add", binop("+", t(KEY_CM), t(KEY_CM)),
            reject("RXTP-TORCH-046", "rextio-torch cannot lower '+': CUDA add is limited to rank-2 + rank-1 trailing bias broadcast on cuda:0")),
        ("cuda_matmul_mixed", binop("@", t(KEY_CM), t(KEY_CV)),
            reject("RXTP-TORCH-045", "rextio-torch cannot lower '@': CUDA matmul is limited to cuda:0 float32 rank-2 @ rank-2")),
        ("cuda_cpu_mix_matmul", binop("@", t(KEY_CM), t(KEY_M)),
            reject("RXTP-TORCH-045", "rextio-torch cannot lower '@': CUDA matmul is limited to cuda:0 float32 rank-2 @ rank-2")),
        ("cuda_matmul_unresolved_other", binop("@", t(KEY_CM), unresolved()),
            reject("RXTP-TORCH-045", "rextio-torch cannot lower '@': CUDA matmul is limited to cuda:0 float32 rank-2 @ rank-2")),
        ("cuda_relu_1d", method("v.relu", Some(KEY_CV), &[], &[]),
            reject("RXTP-TORCH-047", "rextio-torch cannot lower 'v.relu': CUDA ReLU is limited to zero-argument rank-2 receiver form")),
        ("cuda_torch_relu", call("torch.relu", &[t(KEY_CM)], &[]),
            reject("RXTP-TORCH-047", "rextio-torch cannot lower 'torch.relu': CUDA ReLU is limited to zero-argument rank-2 receiver form")),
        ("cuda_mean_dim_bool", method("a.mean", Some(KEY_CM), &[], &[kw_bool("dim", true)]),
            reject("RXTP-TORCH-048", "rextio-torch cannot lower 'a.mean': CUDA mean is limited to literal dim=1 and keepdim=False on rank-2 cuda:0")),
        ("cuda_mean_keepdim_true", method("a.mean", Some(KEY_CM), &[], &[kw_int("dim", 1), kw_bool("keepdim", true)]),
            reject("RXTP-TORCH-048", "rextio-torch cannot lower 'a.mean': CUDA mean is limited to literal dim=1 and keepdim=False on rank-2 cuda:0")),
        ("cuda_mean_positional", method("a.mean", Some(KEY_CM), &[int(1)], &[]),
            reject("RXTP-TORCH-048", "rextio-torch cannot lower 'a.mean': CUDA mean is limited to literal dim=1 and keepdim=False on rank-2 cuda:0")),
        ("cuda_mul", binop("*", t(KEY_CM), t(KEY_CM)),
            reject("RXTP-TORCH-049", "rextio-torch cannot lower '*': operation is outside the build-only CUDA E2 vertical slice")),
        ("cuda_linear", call(F_LINEAR, &[t(KEY_CM), t(KEY_CM), t(KEY_CV)], &[]),
            reject("RXTP-TORCH-049", "rextio-torch cannot lower 'torch.nn.functional.linear': operation is outside the build-only CUDA E2 vertical slice")),
        ("cuda_sigmoid_method", method("a.sigmoid", Some(KEY_CM), &[], &[]),
            reject("RXTP-TORCH-049", "rextio-torch cannot lower 'a.sigmoid': operation is outside the build-only CUDA E2 vertical slice")),
        ("cuda_mod", binop("%", t(KEY_CM), t(KEY_CM)),
            reject("RXTP-TORCH-049", "rextio-torch cannot lower '%': operation is outside the build-only CUDA E2 vertical slice")),
        ("cuda_compare", compare(">", t(KEY_CM), t(KEY_CM)), NC),
    ]
}

fn cases_3() -> Vec<(&'static str, ClaimSite, Expect)> {
    use Expect::NotCovered as NC;
    vec![
        // --- log_softmax (extension: RXTP-TORCH-060 / 061) --------------------------------
        ("log_softmax_M_dim1", method("x.log_softmax", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("log-softmax-static-dim-f32-cpu-rank1-2"), KEY_M, log_softmax(R, 1))),
        ("log_softmax_M_positional_m1", method("x.log_softmax", Some(KEY_M), &[int(-1)], &[]),
            claim_ok(p("log-softmax-static-dim-f32-cpu-rank1-2"), KEY_M, log_softmax(R, 1))),
        ("log_softmax_chained_V", chained("log_softmax", KEY_V, &[int(0)], &[]),
            claim_ok(p("log-softmax-static-dim-f32-cpu-rank1-2"), KEY_V, log_softmax(R, 0))),
        ("torch_log_softmax_M_dim0", call(T_LOG_SOFTMAX, &[t(KEY_M), int(0)], &[]),
            claim_ok(p("log-softmax-static-dim-f32-cpu-rank1-2"), KEY_M, log_softmax(O0, 0))),
        ("F_log_softmax_M_dim_m1", call(F_LOG_SOFTMAX, &[t(KEY_M)], &[kw_int("dim", -1)]),
            claim_ok(p("functional-log-softmax-f32-cpu-rank1-2"), KEY_M, log_softmax(O0, 1))),
        ("F_log_softmax_V_positional", call(F_LOG_SOFTMAX, &[t(KEY_V), int(0)], &[]),
            claim_ok(p("functional-log-softmax-f32-cpu-rank1-2"), KEY_V, log_softmax(O0, 0))),
        ("F_log_softmax_no_dim", call(F_LOG_SOFTMAX, &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-061", "rextio-torch cannot lower 'torch.nn.functional.log_softmax': log_softmax requires a literal int dim (eager's implicit dim choice is deprecated and not claimed)")),
        ("F_log_softmax_dtype_none", call(F_LOG_SOFTMAX, &[t(KEY_M)], &[kw_int("dim", 1), kw_none("dtype")]),
            reject("RXTP-TORCH-061", "rextio-torch cannot lower 'torch.nn.functional.log_softmax': log_softmax with dtype= is not claimed (the result keeps the input's float32; convert before or after the call)")),
        ("log_softmax_no_dim", method("x.log_softmax", Some(KEY_M), &[], &[]),
            reject("RXTP-TORCH-060", "rextio-torch cannot lower 'x.log_softmax': log_softmax requires a literal int dim (eager's implicit dim choice is deprecated and not claimed)")),
        ("torch_log_softmax_dtype", call(T_LOG_SOFTMAX, &[t(KEY_M), int(1)], &[kw("dtype", "torch.dtype", Literal::NonLiteral)]),
            reject("RXTP-TORCH-060", "rextio-torch cannot lower 'torch.log_softmax': log_softmax with dtype= is not claimed (the result keeps the input's float32; convert before or after the call)")),
        ("log_softmax_V_dim1", method("x.log_softmax", Some(KEY_V), &[int(1)], &[]),
            reject("RXTP-TORCH-060", "rextio-torch cannot lower 'x.log_softmax': log_softmax(dim=1) on 'rextio-torch/tensor-f32-cpu-1d' does not have an existing exact result type")),
        ("log_softmax_M_dim2", method("x.log_softmax", Some(KEY_M), &[int(2)], &[]),
            reject("RXTP-TORCH-060", "rextio-torch cannot lower 'x.log_softmax': log_softmax dim=2 is out of range for a rank-2 input (expected a dim in [-2, 1])")),
        ("log_softmax_nonliteral_dim", method("x.log_softmax", Some(KEY_M), &[], &[kw("dim", "int", Literal::NonLiteral)]),
            reject("RXTP-TORCH-060", "rextio-torch cannot lower 'x.log_softmax': log_softmax keywords must be unique static literals")),
        ("log_softmax_two_dims", method("x.log_softmax", Some(KEY_M), &[int(1)], &[kw_int("dim", 1)]),
            reject("RXTP-TORCH-060", "rextio-torch cannot lower 'x.log_softmax': unsupported or duplicate positional/keyword options for log_softmax")),
        ("log_softmax_L", method("x.log_softmax", Some(KEY_L), &[int(0)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'x.log_softmax': input type is outside the float32 CPU tensor surface")),
        ("log_softmax_unresolved", method("x.log_softmax", None, &[int(1)], &[]), NC),
        ("other_log_softmax_function", call("mylib.log_softmax", &[t(KEY_M), int(1)], &[]), NC),
        // --- amax / amin (extension: RXTP-TORCH-062 / 063) --------------------------------
        ("amax_M_dim1", method("x.amax", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("amax-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Amax, R, 1, false))),
        ("amax_M_dim_m1_keepdim", method("x.amax", Some(KEY_M), &[], &[kw_int("dim", -1), kw_bool("keepdim", true)]),
            claim_ok(p("amax-static-dim-f32-cpu-rank1-2"), KEY_M, reduce(ReduceKind::Amax, R, 1, true))),
        ("torch_amax_M_dim0", call("torch.amax", &[t(KEY_M), int(0)], &[]),
            claim_ok(p("amax-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Amax, O0, 0, false))),
        ("amin_V_keepdim", method("v.amin", Some(KEY_V), &[int(-1)], &[kw_bool("keepdim", true)]),
            claim_ok(p("amin-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Amin, R, 0, true))),
        ("torch_amin_M_dim1", call("torch.amin", &[t(KEY_M)], &[kw_int("dim", 1), kw_bool("keepdim", false)]),
            claim_ok(p("amin-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Amin, O0, 1, false))),
        ("amax_no_dim", method("x.amax", Some(KEY_M), &[], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, ClaimedOp::ReduceAll { op: WholeReduceOp::Amax, input: R })),
        ("amax_tuple_dim", method("x.amax", Some(KEY_M), &[], &[kw("dim", "tuple[int, ...]", Literal::IntTuple(vec![0, 1]))]),
            reject("RXTP-TORCH-062", "rextio-torch cannot lower 'x.amax': amax takes one int dim, not a tuple of dims")),
        ("amin_V_no_keepdim", method("v.amin", Some(KEY_V), &[int(0)], &[]),
            reject("RXTP-TORCH-063", "rextio-torch cannot lower 'v.amin': amin(dim=0, keepdim=False) on 'rextio-torch/tensor-f32-cpu-1d' does not have an already-registered rank-1/rank-2 result type")),
        ("torch_amin_dim3", call("torch.amin", &[t(KEY_M), int(3)], &[]),
            reject("RXTP-TORCH-063", "rextio-torch cannot lower 'torch.amin': amin dim=3 is out of range for a rank-2 input (expected a dim in [-2, 1])")),
        ("amax_L", method("x.amax", Some(KEY_L), &[int(0)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'x.amax': input type is outside the float32 CPU tensor surface")),
        ("amax_unresolved", method("x.amax", None, &[int(1)], &[]), NC),
        // --- layers (extension: RXTP-TORCH-065..067) --------------------------------------
        ("F_layer_norm_M_affine_eps", call(F_LAYER_NORM, &[t(KEY_M), shape(8), t(KEY_V), t(KEY_V), float_lit(1e-6)], &[]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_M, layer_norm(O0, Some((O2, O3)), 1e-6))),
        ("F_layer_norm_V_plain", call(F_LAYER_NORM, &[t(KEY_V), shape(4)], &[]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_V, layer_norm(O0, None, 1e-5))),
        ("F_layer_norm_kw_eps", call(F_LAYER_NORM, &[t(KEY_M), shape(4)], &[kw_float_lit("eps", 1e-3)]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_M, layer_norm(O0, None, 1e-3))),
        ("F_layer_norm_int_eps_none_affine", call(F_LAYER_NORM, &[t(KEY_M), shape(4), none(), none(), int(0)], &[]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_M, layer_norm(O0, None, 0.0))),
        ("F_layer_norm_kw_none_affine", call(F_LAYER_NORM, &[t(KEY_M), shape(4)], &[kw_none("weight"), kw_none("bias")]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_M, layer_norm(O0, None, 1e-5))),
        // Keyword values follow the positional operands in the claim's numbering.
        ("F_layer_norm_kw_affine", call(F_LAYER_NORM, &[t(KEY_M), shape(4)], &[kw("weight", KEY_V, Literal::NonLiteral), kw("bias", KEY_V, Literal::NonLiteral), kw_float_lit("eps", 1e-3)]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_M, layer_norm(O0, Some((O2, O3)), 1e-3))),
        ("F_layer_norm_kw_bias_only", call(F_LAYER_NORM, &[t(KEY_M), shape(4), t(KEY_V)], &[kw("bias", KEY_V, Literal::NonLiteral)]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_M, layer_norm(O0, Some((O2, O3)), 1e-5))),
        ("F_layer_norm_kw_weight_rank2", call(F_LAYER_NORM, &[t(KEY_M), shape(4)], &[kw("weight", KEY_M, Literal::NonLiteral), kw("bias", KEY_V, Literal::NonLiteral)]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm weight must be a float32 CPU rank-1 tensor (TensorF32Cpu1D) or None")),
        ("F_layer_norm_kw_eps_param", call(F_LAYER_NORM, &[t(KEY_M), shape(4)], &[kw_float("eps")]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm requires eps as a float literal (default 1e-05)")),
        ("F_layer_norm_weight_only", call(F_LAYER_NORM, &[t(KEY_M), shape(4), t(KEY_V)], &[]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm takes weight and bias together, or neither")),
        ("F_layer_norm_two_dims", call(F_LAYER_NORM, &[t(KEY_M), tuple(&[2, 4])], &[]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm requires normalized_shape as a positional one-element tuple or list of an int, `(n,)` or `[n]`: it is normalized over the last dim only")),
        ("F_layer_norm_param_shape", call(F_LAYER_NORM, &[t(KEY_M), shape_param()], &[]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank1-2"), KEY_M, layer_norm(O0, None, 1e-5))),
        ("F_layer_norm_bare_int_shape", call(F_LAYER_NORM, &[t(KEY_M), int(4)], &[]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm requires normalized_shape as a positional one-element tuple or list of an int, `(n,)` or `[n]`: it is normalized over the last dim only")),
        ("F_layer_norm_keyword_shape", call(F_LAYER_NORM, &[t(KEY_M)], &[kw("normalized_shape", "tuple", Literal::IntTuple(vec![4]))]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm requires normalized_shape as a positional one-element tuple or list of an int, `(n,)` or `[n]`: it is normalized over the last dim only")),
        ("F_layer_norm_unresolved_shape", call(F_LAYER_NORM, &[t(KEY_M), unresolved()], &[]), NC),
        ("F_layer_norm_nonliteral_shape", call(F_LAYER_NORM, &[t(KEY_M), Arg(Some("tuple"), Literal::NonLiteral)], &[]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm requires normalized_shape as a positional one-element tuple or list of an int, `(n,)` or `[n]`: it is normalized over the last dim only")),
        ("F_layer_norm_matrix_weight", call(F_LAYER_NORM, &[t(KEY_M), shape(4), t(KEY_M), t(KEY_V)], &[]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm weight must be a float32 CPU rank-1 tensor (TensorF32Cpu1D) or None")),
        ("F_layer_norm_nonliteral_eps", call(F_LAYER_NORM, &[t(KEY_M), shape(4), none(), none(), float()], &[]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm requires eps as a float literal (default 1e-05)")),
        ("F_layer_norm_unknown_kw", call(F_LAYER_NORM, &[t(KEY_M), shape(4)], &[kw_bool("elementwise_affine", true)]),
            reject("RXTP-TORCH-065", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm has no option `elementwise_affine` here")),
        ("F_layer_norm_L", call(F_LAYER_NORM, &[t(KEY_L), shape(4)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': input type is outside the float32 CPU tensor surface")),
        ("F_layer_norm_unresolved", call(F_LAYER_NORM, &[unresolved(), shape(4)], &[]), NC),
        ("F_embedding", call(F_EMBEDDING, &[t(KEY_L), t(KEY_M)], &[]),
            claim_ok(p("functional-embedding-i64-ids-f32-cpu-2d"), KEY_M, ClaimedOp::Embedding { ids: O0, weight: O1 })),
        ("F_embedding_kw_weight", call(F_EMBEDDING, &[t(KEY_L)], &[kw("weight", KEY_M, Literal::NonLiteral)]),
            claim_ok(p("functional-embedding-i64-ids-f32-cpu-2d"), KEY_M, ClaimedOp::Embedding { ids: O0, weight: O1 })),
        ("F_embedding_padding_none", call(F_EMBEDDING, &[t(KEY_L), t(KEY_M)], &[kw_none("padding_idx")]),
            claim_ok(p("functional-embedding-i64-ids-f32-cpu-2d"), KEY_M, ClaimedOp::Embedding { ids: O0, weight: O1 })),
        ("F_embedding_padding_idx", call(F_EMBEDDING, &[t(KEY_L), t(KEY_M)], &[kw_int("padding_idx", 0)]),
            reject("RXTP-TORCH-066", "rextio-torch cannot lower 'torch.nn.functional.embedding': embedding options are not claimed (padding_idx=0): only `embedding(ids, weight)` is compiled (padding_idx=None is accepted)")),
        ("F_embedding_max_norm", call(F_EMBEDDING, &[t(KEY_L), t(KEY_M)], &[kw_float_lit("max_norm", 1.0)]),
            reject("RXTP-TORCH-066", "rextio-torch cannot lower 'torch.nn.functional.embedding': embedding options are not claimed (max_norm=1.0): only `embedding(ids, weight)` is compiled (padding_idx=None is accepted)")),
        ("F_embedding_f32_ids", call(F_EMBEDDING, &[t(KEY_V), t(KEY_M)], &[]),
            reject("RXTP-TORCH-066", "rextio-torch cannot lower 'torch.nn.functional.embedding': embedding ids must be an int64 CPU rank-1 tensor (TensorI64Cpu1D)")),
        ("F_embedding_V_weight", call(F_EMBEDDING, &[t(KEY_L), t(KEY_V)], &[]),
            reject("RXTP-TORCH-066", "rextio-torch cannot lower 'torch.nn.functional.embedding': embedding weight must be a float32 CPU rank-2 tensor (TensorF32Cpu2D)")),
        ("F_embedding_one_arg", call(F_EMBEDDING, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-066", "rextio-torch cannot lower 'torch.nn.functional.embedding': embedding requires ids and a weight table")),
        ("F_embedding_unresolved", call(F_EMBEDDING, &[t(KEY_L), unresolved()], &[]), NC),
        ("F_embedding_bag_default_mean", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[]),
            claim_ok(p(BAG_ID), KEY_M, bag(BagMode::Mean))),
        ("F_embedding_bag_mean", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_str("mode", "mean")]),
            claim_ok(p(BAG_ID), KEY_M, bag(BagMode::Mean))),
        ("F_embedding_bag_sum", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_str("mode", "sum")]),
            claim_ok(p(BAG_ID), KEY_M, bag(BagMode::Sum))),
        ("F_embedding_bag_max", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_str("mode", "max")]),
            claim_ok(p(BAG_ID), KEY_M, bag(BagMode::Max))),
        ("F_embedding_bag_defaults_spelled", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)],
            &[kw_none("max_norm"), kw_int("norm_type", 2), kw_bool("scale_grad_by_freq", false), kw_str("mode", "sum"),
              kw_bool("sparse", false), kw_none("per_sample_weights"), kw_bool("include_last_offset", false), kw_none("padding_idx")]),
            claim_ok(p(BAG_ID), KEY_M, bag(BagMode::Sum))),
        ("F_embedding_bag_float_norm_type", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_float_lit("norm_type", 2.0)]),
            claim_ok(p(BAG_ID), KEY_M, bag(BagMode::Mean))),
        ("F_embedding_bag_bad_mode", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_str("mode", "min")]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': mode has to be one of sum, mean or max (eager raises ValueError)")),
        ("F_embedding_bag_nonliteral_mode", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw("mode", "int", Literal::Int(1))]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag requires mode as a string literal: 'sum', 'mean' or 'max'")),
        ("F_embedding_bag_include_last_offset", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_bool("include_last_offset", true)]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag options are not claimed (include_last_offset=True): only `embedding_bag(ids, weight, offsets, mode=...)` is compiled, other options at their defaults")),
        ("F_embedding_bag_padding_idx", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_int("padding_idx", 0)]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag options are not claimed (padding_idx=0): only `embedding_bag(ids, weight, offsets, mode=...)` is compiled, other options at their defaults")),
        ("F_embedding_bag_max_norm", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_float_lit("max_norm", 1.0)]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag options are not claimed (max_norm=1.0): only `embedding_bag(ids, weight, offsets, mode=...)` is compiled, other options at their defaults")),
        ("F_embedding_bag_psw_positional", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L), none(), int(2), bool_lit(false), Arg(Some("str"), Literal::Str("sum".into())), bool_lit(false), t(KEY_V)], &[]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag options are not claimed (per_sample_weights=<non-literal>): only `embedding_bag(ids, weight, offsets, mode=...)` is compiled, other options at their defaults")),
        ("F_embedding_bag_no_offsets", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M)], &[]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag requires offsets (an int64 CPU rank-1 tensor, positionally): rank-1 ids without offsets are eager's ValueError")),
        ("F_embedding_bag_none_offsets", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M)], &[kw_none("offsets")]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag requires offsets (an int64 CPU rank-1 tensor, positionally): rank-1 ids without offsets are eager's ValueError")),
        ("F_embedding_bag_f32_ids", call(F_EMBEDDING_BAG, &[t(KEY_V), t(KEY_M), t(KEY_L)], &[]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag ids must be an int64 CPU rank-1 tensor (TensorI64Cpu1D)")),
        ("F_embedding_bag_f32_offsets", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_V)], &[]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag offsets must be an int64 CPU rank-1 tensor (TensorI64Cpu1D)")),
        ("F_embedding_bag_V_weight", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_V), t(KEY_L)], &[]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag weight must be a float32 CPU rank-2 tensor (TensorF32Cpu2D)")),
        ("F_embedding_bag_one_arg", call(F_EMBEDDING_BAG, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag requires ids and a weight table")),
        ("F_embedding_bag_unknown_kw", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), t(KEY_L)], &[kw_bool("scale", true)]),
            reject("RXTP-TORCH-090", "rextio-torch cannot lower 'torch.nn.functional.embedding_bag': embedding_bag has no option `scale` here")),
        ("F_embedding_bag_unresolved", call(F_EMBEDDING_BAG, &[t(KEY_L), t(KEY_M), unresolved()], &[]), NC),
        ("F_dropout_eval_kw", call(F_DROPOUT, &[t(KEY_M)], &[kw_bool("training", false)]),
            claim_ok(p("functional-dropout-eval-f32-cpu-rank1-2"), KEY_M, ClaimedOp::Identity { input: O0 })),
        ("F_dropout_eval_p", call(F_DROPOUT, &[t(KEY_V), float_lit(0.1)], &[kw_bool("training", false)]),
            claim_ok(p("functional-dropout-eval-f32-cpu-rank1-2"), KEY_V, ClaimedOp::Identity { input: O0 })),
        ("F_dropout_eval_positional", call(F_DROPOUT, &[t(KEY_M), int(1), bool_lit(false), bool_lit(false)], &[]),
            claim_ok(p("functional-dropout-eval-f32-cpu-rank1-2"), KEY_M, ClaimedOp::Identity { input: O0 })),
        ("F_dropout_default_training", call(F_DROPOUT, &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-067", "rextio-torch cannot lower 'torch.nn.functional.dropout': dropout in training mode is random (it zeroes elements at random and scales the rest); only training=False, an identity, is compiled")),
        ("F_dropout_training_true", call(F_DROPOUT, &[t(KEY_M), float_lit(0.5)], &[kw_bool("training", true)]),
            reject("RXTP-TORCH-067", "rextio-torch cannot lower 'torch.nn.functional.dropout': dropout in training mode is random (it zeroes elements at random and scales the rest); only training=False, an identity, is compiled")),
        ("F_dropout_p_out_of_range", call(F_DROPOUT, &[t(KEY_M)], &[kw_float_lit("p", 1.5), kw_bool("training", false)]),
            reject("RXTP-TORCH-067", "rextio-torch cannot lower 'torch.nn.functional.dropout': dropout probability has to be between 0 and 1, but got 1.5 (eager raises ValueError)")),
        ("F_dropout_p_nonliteral", call(F_DROPOUT, &[t(KEY_M), float()], &[kw_bool("training", false)]),
            reject("RXTP-TORCH-067", "rextio-torch cannot lower 'torch.nn.functional.dropout': dropout requires p as a float literal in [0, 1]")),
        ("F_dropout_inplace", call(F_DROPOUT, &[t(KEY_M)], &[kw_bool("training", false), kw_bool("inplace", true)]),
            reject("RXTP-TORCH-067", "rextio-torch cannot lower 'torch.nn.functional.dropout': dropout with inplace= other than a literal False is not claimed (compiled code never writes into its arguments)")),
        ("F_dropout_L", call(F_DROPOUT, &[t(KEY_L)], &[kw_bool("training", false)]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.dropout': input type is outside the float32 CPU tensor surface")),
        ("F_dropout_unresolved", call(F_DROPOUT, &[unresolved()], &[kw_bool("training", false)]), NC),
        // --- ops with scalar parameters (extension: RXTP-TORCH-070..073) -------------------
        // A keyword's value is the operand after the positional ones; an omitted parameter
        // with a default is that default (the walker places it as a constant).
        ("F_leaky_relu_default", call(F_LEAKY_RELU, &[t(KEY_M)], &[]),
            claim_ok(p("functional-leaky-relu-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::LeakyRelu, O0, &[dflt(0.01)]))),
        ("F_leaky_relu_positional_V", call(F_LEAKY_RELU, &[t(KEY_V), float()], &[]),
            claim_ok(p("functional-leaky-relu-f32-cpu-rank1-2"), KEY_V, param_op(ParamUnaryOp::LeakyRelu, O0, &[given(O1)]))),
        ("F_leaky_relu_keyword_inplace_false", call(F_LEAKY_RELU, &[t(KEY_M)], &[kw_float("negative_slope"), kw_bool("inplace", false)]),
            claim_ok(p("functional-leaky-relu-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::LeakyRelu, O0, &[given(O1)]))),
        ("F_leaky_relu_inplace_false_first", call(F_LEAKY_RELU, &[t(KEY_M)], &[kw_bool("inplace", false), kw_int("negative_slope", 2)]),
            claim_ok(p("functional-leaky-relu-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::LeakyRelu, O0, &[given(O2)]))),
        ("F_leaky_relu_inplace_true", call(F_LEAKY_RELU, &[t(KEY_M), float()], &[kw_bool("inplace", true)]),
            reject("RXTP-TORCH-070", "rextio-torch cannot lower 'torch.nn.functional.leaky_relu': leaky_relu requires literal inplace=False (compiled code returns a new tensor and never writes into its arguments)")),
        ("F_leaky_relu_str_slope", call(F_LEAKY_RELU, &[t(KEY_M), string()], &[]),
            reject("RXTP-TORCH-070", "rextio-torch cannot lower 'torch.nn.functional.leaky_relu': leaky_relu requires negative_slope to be an int or a float, got 'str'")),
        ("F_leaky_relu_twice", call(F_LEAKY_RELU, &[t(KEY_M), float()], &[kw_float("negative_slope")]),
            reject("RXTP-TORCH-070", "rextio-torch cannot lower 'torch.nn.functional.leaky_relu': leaky_relu got multiple values for 'negative_slope'")),
        ("F_leaky_relu_unknown_keyword", call(F_LEAKY_RELU, &[t(KEY_M)], &[kw_float("slope")]),
            reject("RXTP-TORCH-070", "rextio-torch cannot lower 'torch.nn.functional.leaky_relu': leaky_relu got an unsupported keyword 'slope'")),
        ("F_leaky_relu_no_input", call(F_LEAKY_RELU, &[], &[]),
            reject("RXTP-TORCH-070", "rextio-torch cannot lower 'torch.nn.functional.leaky_relu': leaky_relu requires the input tensor as its first positional argument")),
        ("F_leaky_relu_L", call(F_LEAKY_RELU, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.leaky_relu': input type is outside the float32 CPU tensor surface")),
        ("F_leaky_relu_unresolved", call(F_LEAKY_RELU, &[unresolved()], &[]), NC),
        ("F_leaky_relu_unresolved_slope", call(F_LEAKY_RELU, &[t(KEY_M), unresolved()], &[]), NC),
        ("F_elu_default", call(F_ELU, &[t(KEY_M)], &[]),
            claim_ok(p("functional-elu-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::Elu, O0, &[dflt(1.0)]))),
        ("F_elu_positional_int_V", call(F_ELU, &[t(KEY_V), int(2)], &[]),
            claim_ok(p("functional-elu-f32-cpu-rank1-2"), KEY_V, param_op(ParamUnaryOp::Elu, O0, &[given(O1)]))),
        ("F_elu_bool", call(F_ELU, &[t(KEY_M), boolean()], &[]),
            reject("RXTP-TORCH-071", "rextio-torch cannot lower 'torch.nn.functional.elu': elu requires alpha to be an int or a float, got 'bool' (a bool is not taken as a number here: write the number)")),
        ("F_elu_inplace_keyword_non_literal", call(F_ELU, &[t(KEY_M)], &[kw("inplace", "bool", Literal::NonLiteral)]),
            reject("RXTP-TORCH-071", "rextio-torch cannot lower 'torch.nn.functional.elu': elu requires literal inplace=False (compiled code returns a new tensor and never writes into its arguments)")),
        ("F_hardtanh", call(F_HARDTANH, &[t(KEY_M)], &[]),
            claim_ok(p("functional-hardtanh-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::Hardtanh, O0, &[dflt(-1.0), dflt(1.0)]))),
        ("F_hardtanh_positional_and_keyword", call(F_HARDTANH, &[t(KEY_M), float()], &[kw_float("max_val")]),
            claim_ok(p("functional-hardtanh-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::Hardtanh, O0, &[given(O1), given(O2)]))),
        ("F_hardtanh_max_only_V", call(F_HARDTANH, &[t(KEY_V)], &[kw_int("max_val", 2)]),
            claim_ok(p("functional-hardtanh-f32-cpu-rank1-2"), KEY_V, param_op(ParamUnaryOp::Hardtanh, O0, &[dflt(-1.0), given(O1)]))),
        ("F_hardtanh_positional_inplace", call(F_HARDTANH, &[t(KEY_M), float(), float(), boolean()], &[]),
            reject("RXTP-TORCH-072", "rextio-torch cannot lower 'torch.nn.functional.hardtanh': hardtanh takes inplace by keyword only here (write inplace=False)")),
        ("F_hardtanh_too_many", call(F_HARDTANH, &[t(KEY_M), float(), float(), boolean(), boolean()], &[]),
            reject("RXTP-TORCH-072", "rextio-torch cannot lower 'torch.nn.functional.hardtanh': hardtanh takes at most 2 positional parameter(s) after the tensor")),
        ("torch_clamp_both_keywords", call(T_CLAMP, &[t(KEY_M)], &[kw_float("min"), kw_float("max")]),
            claim_ok(p("clamp-scalar-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::Clamp, O0, &[given(O1), given(O2)]))),
        ("torch_clamp_positional_min_V", call(T_CLAMP, &[t(KEY_V), int(0)], &[]),
            claim_ok(p("clamp-scalar-f32-cpu-rank1-2"), KEY_V, param_op(ParamUnaryOp::ClampMin, O0, &[given(O1)]))),
        ("torch_clip_none_min", call(T_CLIP, &[t(KEY_M), none(), float()], &[]),
            claim_ok(p("clamp-scalar-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::ClampMax, O0, &[given(O2)]))),
        ("clamp_method_max", method("x.clamp", Some(KEY_M), &[], &[kw_float("max")]),
            claim_ok(p("clamp-scalar-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::ClampMax, R, &[given(O0)]))),
        ("clip_method_both_V", method("v.clip", Some(KEY_V), &[float(), float()], &[]),
            claim_ok(p("clamp-scalar-f32-cpu-rank1-2"), KEY_V, param_op(ParamUnaryOp::Clamp, R, &[given(O0), given(O1)]))),
        ("clamp_chained", chained("clamp", KEY_M, &[int(0), int(6)], &[]),
            claim_ok(p("clamp-scalar-f32-cpu-rank1-2"), KEY_M, param_op(ParamUnaryOp::Clamp, R, &[given(O0), given(O1)]))),
        ("torch_clamp_no_bound", call(T_CLAMP, &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-073", "rextio-torch cannot lower 'torch.clamp': clamp requires at least one of min or max (eager raises)")),
        ("torch_clamp_none_bounds", call(T_CLAMP, &[t(KEY_M), none()], &[kw_none("max")]),
            reject("RXTP-TORCH-073", "rextio-torch cannot lower 'torch.clamp': clamp requires at least one of min or max (eager raises)")),
        ("torch_clamp_tensor_bound", call(T_CLAMP, &[t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-073", "rextio-torch cannot lower 'torch.clamp': clamp requires min to be an int or a float, got 'rextio-torch/tensor-f32-cpu-2d' (a tensor bound is not claimed: pass a Python number)")),
        ("clamp_method_inplace", method("x.clamp", Some(KEY_M), &[], &[kw_float("min"), kw_bool("inplace", false)]),
            reject("RXTP-TORCH-073", "rextio-torch cannot lower 'x.clamp': clamp got an unsupported keyword 'inplace'")),
        ("clamp_method_L", method("x.clamp", Some(KEY_L), &[int(0)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'x.clamp': input type is outside the float32 CPU tensor surface")),
        ("clamp_method_unresolved", method("x.clamp", None, &[float()], &[]), NC),
        // `.max(dim)` is not claimed (its result is a (values, indices) pair).
        ("max_dim_not_covered", method("x.max", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            reject("RXTP-TORCH-130", "rextio-torch cannot lower 'x.max': max(dim=...) returns a (values, indices) named tuple, which compiled code has no value for; write .values (or .indices, [0], [1]) on the call")),
    ]
}

fn cases_4() -> Vec<(&'static str, ClaimSite, Expect)> {
    use Expect::NotCovered as NC;
    vec![
        // --- cat / stack (extension: RXTP-TORCH-080 / 081) --------------------------------
        ("cat_M_kw_dim1", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[], &[kw_int("dim", 1)]),
            claim_ok(p("cat-static-dim-f32-cpu-rank1-3"), KEY_M, join(JoinKind::Cat, 2, 1))),
        ("cat_M_positional_dim1", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[int(1)], &[]),
            claim_ok(p("cat-static-dim-f32-cpu-rank1-3"), KEY_M, join(JoinKind::Cat, 2, 1))),
        ("cat_M_default_dim0", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[], &[]),
            claim_ok(p("cat-static-dim-f32-cpu-rank1-3"), KEY_M, join(JoinKind::Cat, 2, 0))),
        ("concat_M_dim_m1", join_call("torch.concat", &[t(KEY_M), t(KEY_M)], &[], &[kw_int("dim", -1)]),
            claim_ok(p("cat-static-dim-f32-cpu-rank1-3"), KEY_M, join(JoinKind::Cat, 2, 1))),
        ("concatenate_V_three_m1", join_call("torch.concatenate", &[t(KEY_V), t(KEY_V), t(KEY_V)], &[int(-1)], &[]),
            claim_ok(p("cat-static-dim-f32-cpu-rank1-3"), KEY_V, join(JoinKind::Cat, 3, 0))),
        ("cat_one_part", join_call(T_CAT, &[t(KEY_M)], &[], &[kw_int("dim", -2)]),
            claim_ok(p("cat-static-dim-f32-cpu-rank1-3"), KEY_M, join(JoinKind::Cat, 1, 0))),
        ("stack_V_dim0", join_call(T_STACK, &[t(KEY_V), t(KEY_V)], &[], &[kw_int("dim", 0)]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_M, join(JoinKind::Stack, 2, 0))),
        ("stack_V_default", join_call(T_STACK, &[t(KEY_V), t(KEY_V), t(KEY_V)], &[], &[]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_M, join(JoinKind::Stack, 3, 0))),
        ("stack_V_m1", join_call(T_STACK, &[t(KEY_V), t(KEY_V)], &[int(-1)], &[]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_M, join(JoinKind::Stack, 2, 1))),
        ("stack_V_m2", join_call(T_STACK, &[t(KEY_V), t(KEY_V)], &[int(-2)], &[]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_M, join(JoinKind::Stack, 2, 0))),
        ("cat_mixed_ranks", join_call(T_CAT, &[t(KEY_M), t(KEY_V)], &[], &[]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat mixes ranks: part 0 is TensorF32Cpu2D, part 1 is TensorF32Cpu1D (eager raises RuntimeError: Tensors must have same number of dimensions)")),
        ("cat_L_part", join_call(T_CAT, &[t(KEY_V), t(KEY_L)], &[], &[]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat part 1 is TensorI64Cpu1D; every part must be a float32 CPU tensor (TensorF32Cpu0D to TensorF32Cpu3D)")),
        ("cat_int_part", join_call(T_CAT, &[t(KEY_V), int(3)], &[], &[]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat part 1 is int; every part must be a float32 CPU tensor (TensorF32Cpu0D to TensorF32Cpu3D)")),
        ("cat_M_dim2", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[int(2)], &[]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat dim=2 is out of range for rank-2 parts (expected a dim in [-2, 1])")),
        ("cat_V_dim1", join_call(T_CAT, &[t(KEY_V), t(KEY_V)], &[], &[kw_int("dim", 1)]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat dim=1 is out of range for rank-1 parts (expected a dim in [-1, 0])")),
        ("cat_empty", join_call(T_CAT, &[], &[], &[kw_int("dim", 0)]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat of an empty list is not claimed (eager raises ValueError: expected a non-empty list of Tensors)")),
        ("cat_nonliteral_dim", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[t("int")], &[]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat requires a literal int dim")),
        ("cat_bool_dim", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[], &[kw_bool("dim", true)]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat keywords must be unique static literals (dim=<int>)")),
        ("cat_two_dims", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[int(1)], &[kw_int("dim", 1)]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': unsupported or duplicate positional/keyword options for torch.cat (it takes the tensors and one literal int dim)")),
        ("cat_out_none", join_call(T_CAT, &[t(KEY_M), t(KEY_M)], &[], &[kw_none("out")]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': unsupported or duplicate positional/keyword options for torch.cat (it takes the tensors and one literal int dim)")),
        ("cat_not_a_display", call(T_CAT, &[t(KEY_M), int(0)], &[]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat is claimed only with its tensors written as a list or tuple display in the call (torch.cat([a, b], dim=0))")),
        ("stack_M", join_call(T_STACK, &[t(KEY_M), t(KEY_M)], &[], &[]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_T, join(JoinKind::Stack, 2, 0))),
        ("stack_M_m1", join_call(T_STACK, &[t(KEY_M), t(KEY_M)], &[], &[kw_int("dim", -1)]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_T, join(JoinKind::Stack, 2, 2))),
        ("stack_S", join_call(T_STACK, &[t(KEY_S), t(KEY_S), t(KEY_S)], &[], &[]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_V, join(JoinKind::Stack, 3, 0))),
        ("stack_S_m1", join_call(T_STACK, &[t(KEY_S), t(KEY_S)], &[int(-1)], &[]),
            claim_ok(p("stack-static-dim-f32-cpu-rank0-2"), KEY_V, join(JoinKind::Stack, 2, 0))),
        ("stack_S_dim1", join_call(T_STACK, &[t(KEY_S), t(KEY_S)], &[int(1)], &[]),
            reject("RXTP-TORCH-081", "rextio-torch cannot lower 'torch.stack': torch.stack dim=1 is out of range for a rank-1 result (expected a dim in [-1, 0])")),
        ("stack_T", join_call(T_STACK, &[t(KEY_T), t(KEY_T)], &[], &[]),
            reject("RXTP-TORCH-081", "rextio-torch cannot lower 'torch.stack': torch.stack of TensorF32Cpu3D parts has rank 4, which compiled code does not have (ranks 0 to 3)")),
        ("cat_T_m1", join_call(T_CAT, &[t(KEY_T), t(KEY_T)], &[], &[kw_int("dim", -1)]),
            claim_ok(p("cat-static-dim-f32-cpu-rank1-3"), KEY_T, join(JoinKind::Cat, 2, 2))),
        ("cat_S", join_call(T_CAT, &[t(KEY_S), t(KEY_S)], &[], &[]),
            reject("RXTP-TORCH-080", "rextio-torch cannot lower 'torch.cat': torch.cat of rank-0 tensors is not defined (eager raises RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated); stack them")),
        ("stack_V_dim2", join_call(T_STACK, &[t(KEY_V), t(KEY_V)], &[int(2)], &[]),
            reject("RXTP-TORCH-081", "rextio-torch cannot lower 'torch.stack': torch.stack dim=2 is out of range for a rank-2 result (expected a dim in [-2, 1])")),
        ("cat_unresolved_part", join_call(T_CAT, &[t(KEY_M), unresolved()], &[], &[]), NC),
        ("cat_unresolved_operand", call(T_CAT, &[unresolved(), int(1)], &[]), NC),
        ("other_cat_function", join_call("mylib.cat", &[t(KEY_M), t(KEY_M)], &[], &[]), NC),
        // --- math functions of Python scalars (extension: RXTP-TORCH-120..126) -----------
        ("math_sqrt_int", call("math.sqrt", &[t("int")], &[]),
            claim_ok(p("math-sqrt-int-float"), "float", math(ScalarUnaryOp::Sqrt, false))),
        ("math_sqrt_float_literal", call("math.sqrt", &[float()], &[]),
            claim_ok(p("math-sqrt-int-float"), "float", math(ScalarUnaryOp::Sqrt, false))),
        ("math_sqrt_int_literal", call("math.sqrt", &[int(2)], &[]),
            claim_ok(p("math-sqrt-int-float"), "float", math(ScalarUnaryOp::Sqrt, false))),
        ("math_exp_float", call("math.exp", &[float()], &[]),
            claim_ok(p("math-exp-int-float"), "float", math(ScalarUnaryOp::Exp, false))),
        ("math_log_int", call("math.log", &[t("int")], &[]),
            claim_ok(p("math-log-int-float"), "float", math(ScalarUnaryOp::Log, false))),
        ("math_log_base", call("math.log", &[float(), int(2)], &[]),
            claim_ok(p("math-log-int-float"), "float", math(ScalarUnaryOp::Log, true))),
        ("math_tanh_bool", call("math.tanh", &[boolean()], &[]),
            claim_ok(p("math-tanh-int-float"), "float", math(ScalarUnaryOp::Tanh, false))),
        ("math_floor_float", call("math.floor", &[float()], &[]),
            claim_ok(p("math-floor-int-float"), "int", math(ScalarUnaryOp::Floor, false))),
        ("math_ceil_int", call("math.ceil", &[t("int")], &[]),
            claim_ok(p("math-ceil-int-float"), "int", math(ScalarUnaryOp::Ceil, false))),
        ("math_fabs_float", call("math.fabs", &[float()], &[]),
            claim_ok(p("math-fabs-int-float"), "float", math(ScalarUnaryOp::Fabs, false))),
        ("math_sqrt_tensor", call("math.sqrt", &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-120", "rextio-torch cannot lower 'math.sqrt': math.sqrt() takes an int or float, got TensorF32Cpu2D; the tensor op is torch.sqrt")),
        ("math_exp_str", call("math.exp", &[string()], &[]),
            reject("RXTP-TORCH-121", "rextio-torch cannot lower 'math.exp': math.exp() takes an int or float, got str (CPython raises TypeError: must be real number)")),
        ("math_log_three_args", call("math.log", &[float(), float(), float()], &[]),
            reject("RXTP-TORCH-122", "rextio-torch cannot lower 'math.log': math.log() takes one or two arguments (x[, base]), 3 given (CPython raises TypeError)")),
        ("math_tanh_no_args", call("math.tanh", &[], &[]),
            reject("RXTP-TORCH-123", "rextio-torch cannot lower 'math.tanh': math.tanh() takes exactly one argument, 0 given (CPython raises TypeError)")),
        ("math_floor_none", call("math.floor", &[none()], &[]),
            reject("RXTP-TORCH-124", "rextio-torch cannot lower 'math.floor': math.floor() takes an int or float, got None (CPython raises TypeError: must be real number)")),
        ("math_ceil_vector", call("math.ceil", &[t(KEY_V)], &[]),
            reject("RXTP-TORCH-125", "rextio-torch cannot lower 'math.ceil': math.ceil() takes an int or float, got TensorF32Cpu1D; the tensor op is torch.ceil")),
        ("math_fabs_keyword", call("math.fabs", &[], &[kw_int("x", 1)]),
            reject("RXTP-TORCH-126", "rextio-torch cannot lower 'math.fabs': math.fabs() takes no keyword arguments (CPython raises TypeError)")),
        ("math_sqrt_two_args", call("math.sqrt", &[float(), float()], &[]),
            reject("RXTP-TORCH-120", "rextio-torch cannot lower 'math.sqrt': math.sqrt() takes exactly one argument, 2 given (CPython raises TypeError)")),
        ("math_sqrt_unresolved", call("math.sqrt", &[unresolved()], &[]), NC),
        ("math_sin_not_covered", call("math.sin", &[float()], &[]), NC),
        ("mylib_sqrt_not_covered", call("mylib.sqrt", &[float()], &[]), NC),
        // --- views and shapes (extension: RXTP-TORCH-110..115) ------------------------------
        ("shape_0_M", method("x.shape", Some(KEY_M), &[int(0)], &[]),
            claim_ok(p("size-static-dim-cpu-rank1-2"), "int", ClaimedOp::Size { input: R, dim: 0 })),
        ("shape_m1_M", method("x.shape", Some(KEY_M), &[int(-1)], &[]),
            claim_ok(p("size-static-dim-cpu-rank1-2"), "int", ClaimedOp::Size { input: R, dim: 1 })),
        ("size_kw_dim_L", method("i.size", Some(KEY_L), &[], &[kw_int("dim", 0)]),
            claim_ok(p("size-static-dim-cpu-rank1-2"), "int", ClaimedOp::Size { input: R, dim: 0 })),
        ("shape_5_M", method("x.shape", Some(KEY_M), &[int(5)], &[]),
            reject("RXTP-TORCH-110", "rextio-torch cannot lower 'x.shape': index 5 is out of range for the 2 dims of TensorF32Cpu2D (eager raises IndexError: tuple index out of range / Dimension out of range)")),
        ("size_no_dim", method("x.size", Some(KEY_M), &[], &[]),
            reject("RXTP-TORCH-110", "rextio-torch cannot lower 'x.size': x.size() is a torch.Size, which compiled code does not have; index it (x.size()[0]) or pass a dim (x.size(0))")),
        ("shape_non_literal", method("x.shape", Some(KEY_M), &[t("int")], &[]),
            reject("RXTP-TORCH-110", "rextio-torch cannot lower 'x.shape': x.shape requires a literal int dim")),
        ("t_M", method("x.t", Some(KEY_M), &[], &[]),
            claim_ok(p("transpose-static-dims-f32-cpu-rank1-2"), KEY_M, view_op(ViewKind::Transpose, R, &[], 0))),
        ("T_M", method("x.T", Some(KEY_M), &[], &[]),
            claim_ok(p("transpose-static-dims-f32-cpu-rank1-2"), KEY_M, view_op(ViewKind::Transpose, R, &[], 0))),
        ("t_V_is_itself", method("v.t", Some(KEY_V), &[], &[]),
            claim_ok(p("transpose-static-dims-f32-cpu-rank1-2"), KEY_V, ClaimedOp::Identity { input: R })),
        ("torch_transpose_neg", call("torch.transpose", &[t(KEY_M), int(-1), int(0)], &[]),
            claim_ok(p("transpose-static-dims-f32-cpu-rank1-2"), KEY_M, view_op(ViewKind::Transpose, O0, &[], 0))),
        ("transpose_same_dims", method("x.transpose", Some(KEY_M), &[int(1)], &[kw_int("dim1", -1)]),
            claim_ok(p("transpose-static-dims-f32-cpu-rank1-2"), KEY_M, ClaimedOp::Identity { input: R })),
        ("transpose_dim2", method("x.transpose", Some(KEY_M), &[int(0), int(2)], &[]),
            reject("RXTP-TORCH-111", "rextio-torch cannot lower 'x.transpose': x.transpose dim=2 is out of range for a rank-2 tensor (expected a dim in [-2, 1]; eager raises IndexError)")),
        ("transpose_one_dim", method("x.transpose", Some(KEY_M), &[int(0)], &[]),
            reject("RXTP-TORCH-111", "rextio-torch cannot lower 'x.transpose': x.transpose requires two literal int dims (dim0, dim1)")),
        ("t_L", method("i.t", Some(KEY_L), &[], &[]),
            reject("RXTP-TORCH-111", "rextio-torch cannot lower 'i.t': i.t requires a float32 CPU tensor (TensorF32Cpu1D or TensorF32Cpu2D), got TensorI64Cpu1D")),
        ("t_of_int_not_ours", method("n.t", Some("int"), &[], &[]), NC),
        ("reshape_m1", method("x.reshape", Some(KEY_M), &[int(-1)], &[]),
            claim_ok(p("reshape-view-int-sizes-f32-cpu-rank1-2"), KEY_V, view_op(ViewKind::Reshape, R, &[O0], 0))),
        ("view_two_sizes", method("v.view", Some(KEY_V), &[t("int"), int(-1)], &[]),
            claim_ok(p("reshape-view-int-sizes-f32-cpu-rank1-2"), KEY_M, view_op(ViewKind::View, R, &[O0, O1], 0))),
        ("torch_reshape", call("torch.reshape", &[t(KEY_V), int(2), int(3)], &[]),
            claim_ok(p("reshape-view-int-sizes-f32-cpu-rank1-2"), KEY_M, view_op(ViewKind::Reshape, O0, &[O1, O2], 0))),
        ("reshape_two_inferred", method("x.reshape", Some(KEY_M), &[int(-1), int(-1)], &[]),
            reject("RXTP-TORCH-112", "rextio-torch cannot lower 'x.reshape': x.reshape infers more than one size from -1 (eager raises RuntimeError: only one dimension can be inferred)")),
        ("reshape_four", method("x.reshape", Some(KEY_M), &[int(1), int(2), int(3), int(1)], &[]),
            reject("RXTP-TORCH-112", "rextio-torch cannot lower 'x.reshape': x.reshape to 4 sizes is not claimed: compiled tensors have rank 1, 2 or 3 (give one to three int sizes)")),
        ("reshape_m2", method("x.reshape", Some(KEY_M), &[int(-2)], &[]),
            reject("RXTP-TORCH-112", "rextio-torch cannot lower 'x.reshape': x.reshape size 0 is -2 (eager raises RuntimeError: invalid shape dimension -2)")),
        ("reshape_float", method("x.reshape", Some(KEY_M), &[float()], &[]),
            reject("RXTP-TORCH-112", "rextio-torch cannot lower 'x.reshape': x.reshape size 0 is float; sizes must be ints (literals or int values such as x.shape[0]), given separately or as one tuple or list display")),
        ("reshape_unresolved", method("x.reshape", Some(KEY_M), &[unresolved()], &[]), NC),
        ("flatten_M", method("x.flatten", Some(KEY_M), &[], &[]),
            claim_ok(p("flatten-static-dims-f32-cpu-rank1-2"), KEY_V, view_op(ViewKind::Flatten, R, &[], 0))),
        ("torch_flatten_same", call("torch.flatten", &[t(KEY_M), int(1), int(-1)], &[]),
            claim_ok(p("flatten-static-dims-f32-cpu-rank1-2"), KEY_M, ClaimedOp::Identity { input: O0 })),
        ("flatten_reversed", method("x.flatten", Some(KEY_M), &[int(1), int(0)], &[]),
            reject("RXTP-TORCH-113", "rextio-torch cannot lower 'x.flatten': x.flatten start_dim=1 comes after end_dim=0 (eager raises RuntimeError: flatten() has invalid args)")),
        ("unsqueeze_V", method("v.unsqueeze", Some(KEY_V), &[int(-1)], &[]),
            claim_ok(p("unsqueeze-static-dim-f32-cpu-rank1"), KEY_M, view_op(ViewKind::Unsqueeze, R, &[], 1))),
        ("unsqueeze_M", method("x.unsqueeze", Some(KEY_M), &[int(0)], &[]),
            reject("RXTP-TORCH-114", "rextio-torch cannot lower 'x.unsqueeze': x.unsqueeze of TensorF32Cpu2D has rank 3, which compiled code does not have (ranks 1 and 2)")),
        ("squeeze_M", call("torch.squeeze", &[t(KEY_M), int(-2)], &[]),
            claim_ok(p("squeeze-static-dim-f32-cpu-rank2"), KEY_V, view_op(ViewKind::Squeeze, O0, &[], 0))),
        ("squeeze_bare", method("x.squeeze", Some(KEY_M), &[], &[]),
            reject("RXTP-TORCH-115", "rextio-torch cannot lower 'x.squeeze': x.squeeze() without a dim is not claimed: its rank depends on the sizes at run time; name the dim (x.squeeze(0))")),
        ("squeeze_V", method("v.squeeze", Some(KEY_V), &[int(0)], &[]),
            reject("RXTP-TORCH-115", "rextio-torch cannot lower 'v.squeeze': v.squeeze of TensorF32Cpu1D has rank 0 (or, when the size is not 1, rank 1), which compiled code does not have")),
        // --- where / maximum / minimum / pow (extension: RXTP-TORCH-100..103) --------------
        ("where_gt_MM", where_call(CompareOp::Gt, &[t(KEY_M), t(KEY_M), t(KEY_M), t(KEY_M)]),
            claim_ok(p("where-compare-f32-cpu-rank1-2"), KEY_M, elementwise(ElementwiseOp::Where(CompareOp::Gt), &[0, 1, 2, 3]))),
        ("where_ge_V_int_float", where_call(CompareOp::Ge, &[t(KEY_V), int(0), t(KEY_V), float()]),
            claim_ok(p("where-compare-f32-cpu-rank1-2"), KEY_V, elementwise(ElementwiseOp::Where(CompareOp::Ge), &[0, 1, 2, 3]))),
        ("where_lt_scalar_left_broadcast", where_call(CompareOp::Lt, &[float(), t(KEY_V), t(KEY_M), int(1)]),
            claim_ok(p("where-compare-f32-cpu-rank1-2"), KEY_M, elementwise(ElementwiseOp::Where(CompareOp::Lt), &[0, 1, 2, 3]))),
        ("where_float_branches", where_call(CompareOp::Ne, &[t(KEY_M), float(), float(), int(0)]),
            claim_ok(p("where-compare-f32-cpu-rank1-2"), KEY_M, elementwise(ElementwiseOp::Where(CompareOp::Ne), &[0, 1, 2, 3]))),
        ("where_method", ClaimSite { condition: Some(CompareOp::Eq), ..method("x.where", Some(KEY_M), &[t(KEY_M), t(KEY_V), t(KEY_V)], &[]) },
            claim_ok(p("where-compare-f32-cpu-rank1-2"), KEY_M, ClaimedOp::Elementwise { op: ElementwiseOp::Where(CompareOp::Eq), operands: vec![Input::Operand(0), Input::Operand(1), Input::Receiver, Input::Operand(2)] })),
        ("where_mask_value", call("torch.where", &[t(KEY_M), t(KEY_M), float()], &[]),
            reject("RXTP-TORCH-100", "rextio-torch cannot lower 'torch.where': where is claimed only with its condition written as a comparison in the call (torch.where(x > 0, x, 0.0)); a bool mask tensor has no marker type, so a condition passed as a value is not one compiled code has")),
        ("where_two_ints", where_call(CompareOp::Gt, &[t(KEY_M), int(0), int(1), int(0)]),
            reject("RXTP-TORCH-100", "rextio-torch cannot lower 'torch.where': where of two ints gives eager an int64 tensor, which compiled code does not have (write one as a float)")),
        ("where_no_tensor", where_call(CompareOp::Gt, &[t("int"), int(0), t(KEY_M), float()]),
            reject("RXTP-TORCH-100", "rextio-torch cannot lower 'torch.where': where's condition compares no tensor (> of two numbers is a Python bool, which eager's torch.where does not take)")),
        ("where_bool_branch", where_call(CompareOp::Gt, &[t(KEY_M), int(0), t(KEY_M), t("bool")]),
            reject("RXTP-TORCH-100", "rextio-torch cannot lower 'torch.where': where's other must be a float32 tensor, an int or a float, got 'bool' (a bool is not taken as a number here: write the number)")),
        ("where_L_operand", where_call(CompareOp::Gt, &[t(KEY_L), int(0), t(KEY_M), float()]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.where': where's the compared left side type is outside the float32 CPU tensor surface")),
        ("where_unresolved", where_call(CompareOp::Gt, &[t(KEY_M), unresolved(), t(KEY_M), float()]), NC),
        ("maximum_MV", call("torch.maximum", &[t(KEY_M), t(KEY_V)], &[]),
            claim_ok(p("maximum-f32-cpu-rank1-2"), KEY_M, elementwise(ElementwiseOp::Maximum, &[0, 1]))),
        ("minimum_method_VV", method("a.minimum", Some(KEY_V), &[t(KEY_V)], &[]),
            claim_ok(p("minimum-f32-cpu-rank1-2"), KEY_V, ClaimedOp::Elementwise { op: ElementwiseOp::Minimum, operands: vec![Input::Receiver, Input::Operand(0)] })),
        ("maximum_scalar", call("torch.maximum", &[t(KEY_M), float()], &[]),
            reject("RXTP-TORCH-101", "rextio-torch cannot lower 'torch.maximum': maximum of a tensor and a number is not claimed (eager's torch.maximum takes two tensors)")),
        ("minimum_three", call("torch.minimum", &[t(KEY_M), t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-102", "rextio-torch cannot lower 'torch.minimum': minimum takes two operands, got 3")),
        ("pow_binop_int", binop("**", t(KEY_M), int(2)),
            claim_ok(p("pow-operator-scalar-exponent-f32-cpu-rank1-2"), KEY_M, elementwise(ElementwiseOp::Pow, &[0, 1]))),
        ("pow_function_float", call("torch.pow", &[t(KEY_V), float()], &[]),
            claim_ok(p("pow-scalar-exponent-f32-cpu-rank1-2"), KEY_V, elementwise(ElementwiseOp::Pow, &[0, 1]))),
        ("pow_reverse", binop("**", int(2), t(KEY_M)),
            reject("RXTP-TORCH-104", "rextio-torch cannot lower '**': a number raised to a tensor power ('int' ** x) is not claimed; only a float32 tensor raised to an int or a float is (x ** 2)")),
        ("pow_tensor_exponent", binop("**", t(KEY_M), t(KEY_M)),
            reject("RXTP-TORCH-104", "rextio-torch cannot lower '**': pow with a tensor exponent is not claimed (write the exponent as an int or a float)")),
        ("pow_keyword", call("torch.pow", &[t(KEY_M)], &[kw_int("exponent", 2)]),
            reject("RXTP-TORCH-103", "rextio-torch cannot lower 'torch.pow': pow takes its operands positionally here (got keyword 'exponent')")),
        // --- max/min over a dim, fills, index_select, normalize (extension: RXTP-TORCH-130..134)
        ("max_values_kw_M", part(ResultPart::Values, method("x.max", Some(KEY_M), &[], &[kw_int("dim", 1)])),
            claim_ok(p("max-dim-values-indices-f32-cpu-rank1-2"), KEY_V, extremum(ExtremumOp::MaxValues, Input::Receiver, 1, false))),
        ("max_values_negative_keepdim", part(ResultPart::Values, method("x.max", Some(KEY_M), &[int(-1), bool_lit(true)], &[])),
            claim_ok(p("max-dim-values-indices-f32-cpu-rank1-2"), KEY_M, extremum(ExtremumOp::MaxValues, Input::Receiver, 1, true))),
        ("torch_min_values_V_keepdim", part(ResultPart::Values, call("torch.min", &[t(KEY_V)], &[kw_int("dim", 0), kw_bool("keepdim", true)])),
            claim_ok(p("min-dim-values-indices-f32-cpu-rank1-2"), KEY_V, extremum(ExtremumOp::MinValues, O0, 0, true))),
        ("torch_max_indices_M", part(ResultPart::Indices, call("torch.max", &[t(KEY_M), int(0)], &[])),
            claim_ok(p("max-dim-values-indices-f32-cpu-rank1-2"), KEY_L, extremum(ExtremumOp::MaxIndices, O0, 0, false))),
        ("min_indices_V_keepdim", part(ResultPart::Indices, method("v.min", Some(KEY_V), &[int(0)], &[kw_bool("keepdim", true)])),
            claim_ok(p("min-dim-values-indices-f32-cpu-rank1-2"), KEY_L, extremum(ExtremumOp::MinIndices, Input::Receiver, 0, true))),
        ("max_bare_named_tuple", method("x.max", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            reject("RXTP-TORCH-130", "rextio-torch cannot lower 'x.max': max(dim=...) returns a (values, indices) named tuple, which compiled code has no value for; write .values (or .indices, [0], [1]) on the call")),
        ("torch_min_bare_named_tuple", call("torch.min", &[t(KEY_M), int(1)], &[]),
            reject("RXTP-TORCH-131", "rextio-torch cannot lower 'torch.min': min(dim=...) returns a (values, indices) named tuple, which compiled code has no value for; write .values (or .indices, [0], [1]) on the call")),
        ("max_every_dim", method("x.max", Some(KEY_M), &[], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, ClaimedOp::ReduceAll { op: WholeReduceOp::Max, input: R })),
        ("torch_max_elementwise", call("torch.max", &[t(KEY_M), t(KEY_M)], &[]), NC),
        ("max_values_no_dim", part(ResultPart::Values, method("x.max", Some(KEY_M), &[], &[])),
            reject("RXTP-TORCH-130", "rextio-torch cannot lower 'x.max': max(...).values needs one literal int dim (max over every dim returns a tensor, not a named tuple)")),
        ("max_indices_rank2", part(ResultPart::Indices, method("x.max", Some(KEY_M), &[int(1), bool_lit(true)], &[])),
            reject("RXTP-TORCH-130", "rextio-torch cannot lower 'x.max': max(dim=1, keepdim=True).indices of 'rextio-torch/tensor-f32-cpu-2d' does not have an already-registered rank-1/rank-2 result type")),
        ("min_values_rank0", part(ResultPart::Values, method("v.min", Some(KEY_V), &[int(0)], &[])),
            reject("RXTP-TORCH-131", "rextio-torch cannot lower 'v.min': min(dim=0, keepdim=False).values of 'rextio-torch/tensor-f32-cpu-1d' does not have an already-registered rank-1/rank-2 result type")),
        ("max_dim_out_of_range", part(ResultPart::Values, method("x.max", Some(KEY_M), &[int(2)], &[])),
            reject("RXTP-TORCH-130", "rextio-torch cannot lower 'x.max': max dim=2 is out of range for a rank-2 input (expected a dim in [-2, 1])")),
        ("max_dim_nonliteral", part(ResultPart::Values, method("x.max", Some(KEY_M), &[t("int")], &[])),
            reject("RXTP-TORCH-130", "rextio-torch cannot lower 'x.max': max dim must be a literal int; got <non-literal>")),
        ("max_L", part(ResultPart::Values, method("i.max", Some(KEY_L), &[int(0)], &[])),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'i.max': max input type is outside the float32 CPU tensor surface")),
        ("max_unresolved", part(ResultPart::Values, method("h.max", None, &[int(0)], &[])), NC),
        ("zeros_like_M", call("torch.zeros_like", &[t(KEY_M)], &[]),
            claim_ok(p("zeros-ones-full-like-f32-cpu-rank1-2"), KEY_M, ClaimedOp::FillLike { kind: FillKind::Zeros, input: O0, value: None })),
        ("ones_like_V", call("torch.ones_like", &[t(KEY_V)], &[]),
            claim_ok(p("zeros-ones-full-like-f32-cpu-rank1-2"), KEY_V, ClaimedOp::FillLike { kind: FillKind::Ones, input: O0, value: None })),
        ("full_like_float", call("torch.full_like", &[t(KEY_M), float()], &[]),
            claim_ok(p("zeros-ones-full-like-f32-cpu-rank1-2"), KEY_M, ClaimedOp::FillLike { kind: FillKind::Full, input: O0, value: Some(Input::Operand(1)) })),
        ("full_like_int", call("torch.full_like", &[t(KEY_V), int(3)], &[]),
            claim_ok(p("zeros-ones-full-like-f32-cpu-rank1-2"), KEY_V, ClaimedOp::FillLike { kind: FillKind::Full, input: O0, value: Some(Input::Operand(1)) })),
        ("zeros_like_dtype", call("torch.zeros_like", &[t(KEY_M)], &[kw("dtype", "torch.dtype", Literal::NonLiteral)]),
            reject("RXTP-TORCH-132", "rextio-torch cannot lower 'torch.zeros_like': zeros_like is claimed without keywords (float32 like its input); keyword 'dtype' stays on Python")),
        ("full_like_bool", call("torch.full_like", &[t(KEY_M), boolean()], &[]),
            reject("RXTP-TORCH-132", "rextio-torch cannot lower 'torch.full_like': full_like value must be an int or float, got 'bool'")),
        ("full_like_no_value", call("torch.full_like", &[t(KEY_M)], &[]),
            reject("RXTP-TORCH-132", "rextio-torch cannot lower 'torch.full_like': full_like takes a tensor and a value (an int or float)")),
        ("ones_like_L", call("torch.ones_like", &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.ones_like': ones_like input type is outside the float32 CPU tensor surface")),
        ("zeros_like_unresolved", call("torch.zeros_like", &[unresolved()], &[]), NC),
        ("index_select_rows", call("torch.index_select", &[t(KEY_M), int(0), t(KEY_L)], &[]),
            claim_ok(p("index-select-static-dim-i64-ids-f32-cpu-rank1-2"), KEY_M, ClaimedOp::IndexSelect { input: O0, ids: Input::Operand(2), dim: 0 })),
        ("index_select_method_negative", method("x.index_select", Some(KEY_M), &[int(-1), t(KEY_L)], &[]),
            claim_ok(p("index-select-static-dim-i64-ids-f32-cpu-rank1-2"), KEY_M, ClaimedOp::IndexSelect { input: Input::Receiver, ids: Input::Operand(1), dim: 1 })),
        ("index_select_float_ids", call("torch.index_select", &[t(KEY_M), int(0), t(KEY_V)], &[]),
            reject("RXTP-TORCH-133", "rextio-torch cannot lower 'torch.index_select': index_select ids must be an int64 rank-1 tensor (L), got 'rextio-torch/tensor-f32-cpu-1d'")),
        ("index_select_dim_V", method("v.index_select", Some(KEY_V), &[int(1), t(KEY_L)], &[]),
            reject("RXTP-TORCH-133", "rextio-torch cannot lower 'v.index_select': index_select dim=1 is out of range for a rank-1 input (expected a dim in [-1, 0])")),
        ("index_select_keyword", call("torch.index_select", &[t(KEY_M)], &[kw_int("dim", 0)]),
            reject("RXTP-TORCH-133", "rextio-torch cannot lower 'torch.index_select': index_select takes its operands positionally here (got keyword 'dim')")),
        ("normalize_defaults", call(F_NORMALIZE, &[t(KEY_M)], &[]),
            claim_ok(p("functional-normalize-static-f32-cpu-rank1-2"), KEY_M, normalize(2.0, 1, 1e-12))),
        ("normalize_keywords", call(F_NORMALIZE, &[t(KEY_V)], &[kw_int("dim", -1), kw_float_lit("p", 1.0), kw_float_lit("eps", 1e-6)]),
            claim_ok(p("functional-normalize-static-f32-cpu-rank1-2"), KEY_V, normalize(1.0, 0, 1e-6))),
        ("normalize_positional", call(F_NORMALIZE, &[t(KEY_M), int(3), int(0), Arg(Some("float"), Literal::Float(FloatBits::new(0.5)))], &[]),
            claim_ok(p("functional-normalize-static-f32-cpu-rank1-2"), KEY_M, normalize(3.0, 0, 0.5))),
        ("normalize_p_nonliteral", call(F_NORMALIZE, &[t(KEY_M), float()], &[]),
            reject("RXTP-TORCH-134", "rextio-torch cannot lower 'torch.nn.functional.normalize': normalize p and eps must be number literals; got p=<non-literal>, eps=1e-12")),
        ("normalize_out", call(F_NORMALIZE, &[t(KEY_M)], &[kw_none("out")]),
            reject("RXTP-TORCH-134", "rextio-torch cannot lower 'torch.nn.functional.normalize': normalize takes p, dim and eps only (out= is not claimed)")),
        ("normalize_dim_V", call(F_NORMALIZE, &[t(KEY_V)], &[]),
            reject("RXTP-TORCH-134", "rextio-torch cannot lower 'torch.nn.functional.normalize': normalize dim=1 is out of range for a rank-1 input (expected a dim in [-1, 0])")),
    ]
}

fn cases_5() -> Vec<(&'static str, ClaimSite, Expect)> {
    vec![
        // --- rank 3 (extension: RXTP-TORCH-140..148) -----------------------------------------
        ("rank3_matmul_TT", binop("@", t(KEY_T), t(KEY_T)),
            claim_ok(p("matmul-operator-f32-cpu-rank3"), KEY_T, matmul(O0, O1))),
        ("rank3_matmul_TM", binop("@", t(KEY_T), t(KEY_M)),
            claim_ok(p("matmul-operator-f32-cpu-rank3"), KEY_T, matmul(O0, O1))),
        ("rank3_matmul_MT", binop("@", t(KEY_M), t(KEY_T)),
            claim_ok(p("matmul-operator-f32-cpu-rank3"), KEY_T, matmul(O0, O1))),
        ("rank3_matmul_TV", binop("@", t(KEY_T), t(KEY_V)),
            reject("RXTP-TORCH-140", "rextio-torch cannot lower '@': matmul requires TensorF32Cpu3D with TensorF32Cpu3D or TensorF32Cpu2D (batched or broadcast); got TensorF32Cpu3D and TensorF32Cpu1D")),
        ("rank3_torch_matmul", call("torch.matmul", &[t(KEY_T), t(KEY_T)], &[]),
            claim_ok(p("matmul-call-f32-cpu-rank3"), KEY_T, matmul(O0, O1))),
        ("rank3_method_matmul", method("a.matmul", Some(KEY_T), &[t(KEY_M)], &[]),
            claim_ok(p("matmul-call-f32-cpu-rank3"), KEY_T, matmul(R, O0))),
        ("rank3_torch_matmul_kw", call("torch.matmul", &[t(KEY_T), t(KEY_T)], &[kw_none("out")]),
            reject("RXTP-TORCH-141", "rextio-torch cannot lower 'torch.matmul': matmul of a rank-3 tensor takes exactly two positional tensors (no keywords)")),
        ("rank3_torch_bmm", call("torch.bmm", &[t(KEY_T), t(KEY_T)], &[]),
            claim_ok(p("bmm-f32-cpu-rank3"), KEY_T, ClaimedOp::Bmm { lhs: O0, rhs: O1 })),
        ("rank3_method_bmm", method("a.bmm", Some(KEY_T), &[t(KEY_T)], &[]),
            claim_ok(p("bmm-f32-cpu-rank3"), KEY_T, ClaimedOp::Bmm { lhs: R, rhs: O0 })),
        ("rank3_bmm_TM", call("torch.bmm", &[t(KEY_T), t(KEY_M)], &[]),
            reject("RXTP-TORCH-149", "rextio-torch cannot lower 'torch.bmm': bmm requires two float32 CPU rank-3 tensors (TensorF32Cpu3D); got TensorF32Cpu3D and TensorF32Cpu2D")),
        ("rank3_bmm_kw", method("a.bmm", Some(KEY_T), &[], &[kw_none("mat2")]),
            reject("RXTP-TORCH-149", "rextio-torch cannot lower 'a.bmm': bmm of a rank-3 tensor takes exactly two positional tensors (no keywords)")),
        ("rank3_add_TM", binop("+", t(KEY_T), t(KEY_M)),
            claim_ok(p("elementwise-operator-f32-cpu-rank3"), KEY_T, binary(BinaryOp::Add))),
        ("rank3_div_float", binop("/", t(KEY_T), float()),
            claim_ok(p("elementwise-operator-f32-cpu-rank3"), KEY_T, scalar_op(TensorScalarOp::Div, O0, O1))),
        ("rank3_float_sub", binop("-", float(), t(KEY_T)),
            claim_ok(p("elementwise-operator-f32-cpu-rank3"), KEY_T, scalar_op(TensorScalarOp::RSub, O1, O0))),
        ("rank3_mul_str", binop("*", t(KEY_T), string()),
            reject("RXTP-TORCH-142", "rextio-torch cannot lower '*': * of a rank-3 tensor requires a float32 CPU tensor (rank 1 to 3) or an int or float; got TensorF32Cpu3D and str")),
        ("rank3_torch_mul_VT", call("torch.mul", &[t(KEY_V), t(KEY_T)], &[]),
            claim_ok(p("elementwise-function-f32-cpu-rank3"), KEY_T, binary(BinaryOp::Mul))),
        ("rank3_torch_add_L", call("torch.add", &[t(KEY_T), t(KEY_L)], &[]),
            reject("RXTP-TORCH-143", "rextio-torch cannot lower 'torch.add': torch.add of a rank-3 tensor requires float32 CPU tensors (rank 1 to 3); got TensorF32Cpu3D and TensorI64Cpu1D")),
        ("rank3_relu", method("x.relu", Some(KEY_T), &[], &[]),
            claim_ok(p("unary-ops-f32-cpu-rank3"), KEY_T, unary(UnaryOp::Relu, R))),
        ("rank3_f_gelu", call(F_GELU, &[t(KEY_T)], &[]),
            claim_ok(p("unary-ops-f32-cpu-rank3"), KEY_T, unary(UnaryOp::Gelu, O0))),
        ("rank3_sum_last_dim", method("x.sum", Some(KEY_T), &[], &[kw_int("dim", -1)]),
            claim_ok(p("sum-mean-amax-amin-static-dim-f32-cpu-rank3"), KEY_M, reduce(ReduceKind::Sum, R, 2, false))),
        ("rank3_mean_keepdim", method("x.mean", Some(KEY_T), &[int(-1)], &[kw_bool("keepdim", true)]),
            claim_ok(p("sum-mean-amax-amin-static-dim-f32-cpu-rank3"), KEY_T, reduce(ReduceKind::Mean, R, 2, true))),
        ("rank3_torch_amax_dim1", call("torch.amax", &[t(KEY_T), int(1)], &[kw_bool("keepdim", true)]),
            claim_ok(p("sum-mean-amax-amin-static-dim-f32-cpu-rank3"), KEY_T, reduce(ReduceKind::Amax, O0, 1, true))),
        ("rank3_amin_dim0", method("x.amin", Some(KEY_T), &[], &[kw_int("dim", 0)]),
            claim_ok(p("sum-mean-amax-amin-static-dim-f32-cpu-rank3"), KEY_M, reduce(ReduceKind::Amin, R, 0, false))),
        ("rank3_sum_dim3", method("x.sum", Some(KEY_T), &[], &[kw_int("dim", 3)]),
            reject("RXTP-TORCH-180", "rextio-torch cannot lower 'x.sum': sum dim=3 is out of range for a rank-3 input (expected a dim in [-3, 2])")),
        ("rank3_mean_dtype", method("x.mean", Some(KEY_T), &[int(-1)], &[kw_str("dtype", "float64")]),
            reject("RXTP-TORCH-180", "rextio-torch cannot lower 'x.mean': unsupported or duplicate positional/keyword options for mean")),
        ("rank3_layer_norm_affine", call(F_LAYER_NORM, &[t(KEY_T), shape(16), t(KEY_V), t(KEY_V), float_lit(1e-5)], &[]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank3"), KEY_T, layer_norm(O0, Some((O2, O3)), 1e-5))),
        ("rank3_layer_norm_plain", call(F_LAYER_NORM, &[t(KEY_T), shape_param()], &[]),
            claim_ok(p("functional-layer-norm-last-dim-f32-cpu-rank3"), KEY_T, layer_norm(O0, None, 1e-5))),
        ("rank3_layer_norm_T_weight", call(F_LAYER_NORM, &[t(KEY_T), shape(16), t(KEY_T), t(KEY_V)], &[]),
            reject("RXTP-TORCH-181", "rextio-torch cannot lower 'torch.nn.functional.layer_norm': layer_norm weight must be a float32 CPU rank-1 tensor (TensorF32Cpu1D) or None")),
        ("rank3_pow_method", method("x.pow", Some(KEY_T), &[int(2)], &[]),
            claim_ok(p("pow-maximum-minimum-where-f32-cpu-rank3"), KEY_T, ClaimedOp::Elementwise { op: ElementwiseOp::Pow, operands: vec![R, O0] })),
        ("rank3_torch_maximum_TV", call("torch.maximum", &[t(KEY_T), t(KEY_V)], &[]),
            claim_ok(p("pow-maximum-minimum-where-f32-cpu-rank3"), KEY_T, elementwise(ElementwiseOp::Maximum, &[0, 1]))),
        ("rank3_pow_tensor_exponent", call("torch.pow", &[t(KEY_T), t(KEY_T)], &[]),
            reject("RXTP-TORCH-182", "rextio-torch cannot lower 'torch.pow': pow with a tensor exponent is not claimed (write the exponent as an int or a float)")),
        ("rank3_pow_operator", binop("**", t(KEY_T), float()),
            claim_ok(p("pow-operator-scalar-exponent-f32-cpu-rank3"), KEY_T, elementwise(ElementwiseOp::Pow, &[0, 1]))),
        ("rank3_pow_operator_reverse", binop("**", int(2), t(KEY_T)),
            reject("RXTP-TORCH-183", "rextio-torch cannot lower '**': a number raised to a tensor power ('int' ** x) is not claimed; only a float32 tensor raised to an int or a float is (x ** 2)")),
        ("rank3_argmax_refused", method("x.argmax", Some(KEY_T), &[], &[kw_int("dim", -1)]),
            reject("RXTP-TORCH-144", "rextio-torch cannot lower 'x.argmax': 'x.argmax' of a rank-3 tensor is not claimed (rank-3 tensors take matmul, elementwise and unary ops, pow/maximum/minimum/where, sum/mean/amax/amin along a dim, softmax/log_softmax, layer_norm, linear, transpose and reshape/view)")),
        ("rank3_f_softmax", call(F_SOFTMAX, &[t(KEY_T)], &[kw_int("dim", -1)]),
            claim_ok(p("softmax-log-softmax-static-dim-f32-cpu-rank3"), KEY_T, softmax(O0, 2))),
        ("rank3_log_softmax_method", method("x.log_softmax", Some(KEY_T), &[int(1)], &[]),
            claim_ok(p("softmax-log-softmax-static-dim-f32-cpu-rank3"), KEY_T, log_softmax(R, 1))),
        ("rank3_softmax_dim3", call(F_SOFTMAX, &[t(KEY_T)], &[kw_int("dim", 3)]),
            reject("RXTP-TORCH-145", "rextio-torch cannot lower 'torch.nn.functional.softmax': softmax dim=3 is out of range for a rank-3 input (expected a dim in [-3, 2]; eager raises IndexError)")),
        ("rank3_linear", call(F_LINEAR, &[t(KEY_T), t(KEY_M), t(KEY_V)], &[]),
            claim_ok(p("functional-linear-f32-cpu-rank3"), KEY_T, ClaimedOp::Linear { input: O0, weight: O1, bias: Some(O2) })),
        ("rank3_linear_no_bias", call(F_LINEAR, &[t(KEY_T), t(KEY_M)], &[]),
            claim_ok(p("functional-linear-f32-cpu-rank3"), KEY_T, ClaimedOp::Linear { input: O0, weight: O1, bias: None })),
        ("rank3_linear_T_weight", call(F_LINEAR, &[t(KEY_T), t(KEY_T)], &[]),
            reject("RXTP-TORCH-146", "rextio-torch cannot lower 'torch.nn.functional.linear': linear requires a float32 CPU rank-3 input, a rank-2 weight and a rank-1 bias or none; got (TensorF32Cpu3D, TensorF32Cpu3D)")),
        ("rank3_shape_m1", method("x.shape", Some(KEY_T), &[int(-1)], &[]),
            claim_ok(p("size-static-dim-cpu-rank1-2"), "int", ClaimedOp::Size { input: R, dim: 2 })),
        ("rank3_transpose_last", method("k.transpose", Some(KEY_T), &[int(-2), int(-1)], &[]),
            claim_ok(p("transpose-adjacent-dims-f32-cpu-rank3"), KEY_T, view_op(ViewKind::Transpose, R, &[], 1))),
        ("rank3_transpose_01", call("torch.transpose", &[t(KEY_T), int(1), int(0)], &[]),
            claim_ok(p("transpose-adjacent-dims-f32-cpu-rank3"), KEY_T, view_op(ViewKind::Transpose, O0, &[], 0))),
        ("rank3_transpose_02", method("x.transpose", Some(KEY_T), &[int(0), int(2)], &[]),
            reject("RXTP-TORCH-147", "rextio-torch cannot lower 'x.transpose': x.transpose of dims 0 and 2 of a rank-3 tensor is not claimed: only adjacent dims (0 and 1, 1 and 2, e.g. transpose(-2, -1)) are")),
        ("rank3_reshape_to_M", method("x.reshape", Some(KEY_T), &[int(-1), t("int")], &[]),
            claim_ok(p("reshape-view-int-sizes-f32-cpu-rank3"), KEY_M, view_op(ViewKind::Reshape, R, &[O0, O1], 0))),
        ("rank3_view_from_M", method("m.view", Some(KEY_M), &[int(2), int(-1), int(4)], &[]),
            claim_ok(p("reshape-view-int-sizes-f32-cpu-rank3"), KEY_T, view_op(ViewKind::View, R, &[O0, O1, O2], 0))),
        ("rank3_reshape_two_inferred", method("m.reshape", Some(KEY_M), &[int(-1), int(-1), int(4)], &[]),
            reject("RXTP-TORCH-148", "rextio-torch cannot lower 'm.reshape': m.reshape infers more than one size from -1 (eager raises RuntimeError: only one dimension can be inferred)")),
        // --- float64 / bfloat16 (extension: the dtype lane, RXTP-TORCH-150..153) ---------
        ("f64_linear", call(F_LINEAR, &[t(F64M), t(F64M), t(F64V)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64M, ClaimedOp::Linear { input: O0, weight: O1, bias: Some(O2) })),
        ("bf16_linear_nobias", call(F_LINEAR, &[t(BF16M), t(BF16M)], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16M, ClaimedOp::Linear { input: O0, weight: O1, bias: None })),
        ("f64_matmul_op", binop("@", t(F64M), t(F64M)),
            claim_ok(p("float-binops-f64-cpu-rank0-3"), F64M, matmul(O0, O1))),
        ("bf16_matmul_op_mixed_rank", binop("@", t(BF16M), t(BF16V)),
            claim_ok(p("float-binops-bf16-cpu-rank0-3"), BF16V, matmul(O0, O1))),
        ("f64_add_broadcast", binop("+", t(F64M), t(F64V)),
            claim_ok(p("float-binops-f64-cpu-rank0-3"), F64M, binary(BinaryOp::Add))),
        ("bf16_div_same", binop("/", t(BF16V), t(BF16V)),
            claim_ok(p("float-binops-bf16-cpu-rank0-3"), BF16V, binary(BinaryOp::Div))),
        ("f64_mul_float", binop("*", t(F64M), float()),
            claim_ok(p("float-binops-f64-cpu-rank0-3"), F64M, scalar_op(TensorScalarOp::Mul, O0, O1))),
        ("bf16_rsub_int", binop("-", int(2), t(BF16M)),
            claim_ok(p("float-binops-bf16-cpu-rank0-3"), BF16M, scalar_op(TensorScalarOp::RSub, O1, O0))),
        ("f64_relu_method", method("x.relu", Some(F64M), &[], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64M, unary(UnaryOp::Relu, R))),
        ("bf16_silu", call(F_SILU, &[t(BF16V)], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16V, unary(UnaryOp::Silu, O0))),
        ("f64_softmax_m1", method("x.softmax", Some(F64M), &[], &[kw_int("dim", -1)]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64M, softmax(R, 1))),
        ("bf16_log_softmax", call(F_LOG_SOFTMAX, &[t(BF16M)], &[kw_int("dim", 0)]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16M, log_softmax(O0, 0))),
        ("f64_sum_dim1", method("x.sum", Some(F64M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64V, reduce(ReduceKind::Sum, R, 1, false))),
        ("bf16_argmax", method("x.argmax", Some(BF16M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), KEY_L, argmax(R, 1, false))),
        ("f64_transpose", method("x.t", Some(F64M), &[], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64M, view_op(ViewKind::Transpose, R, &[], 0))),
        ("f64_layer_norm", call(F_LAYER_NORM, &[t(F64M), shape_param(), t(F64V), t(F64V)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64M, layer_norm(O0, Some((O2, O3)), 1e-5))),
        ("f64_f32_mixed_add", binop("+", t(F64M), t(KEY_M)),
            reject("RXTP-TORCH-152", "rextio-torch cannot lower '+': operands mix float64 and float32 tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike")),
        ("f32_bf16_mixed_matmul", binop("@", t(KEY_M), t(BF16M)),
            reject("RXTP-TORCH-153", "rextio-torch cannot lower '@': operands mix float32 and bfloat16 tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike")),
        ("f64_cat_refused", join_call(T_CAT, &[t(F64M), t(F64M)], &[], &[]),
            reject("RXTP-TORCH-150", "rextio-torch cannot lower 'torch.cat': float64 tensors are compiled for linear, matmul, bmm, + - * /, the unary activations, softmax/log_softmax, sum/mean/amax/amin/argmax along a dim, the whole-tensor reductions, item()/float(), comparisons as conditions, the views and layer_norm; this op takes float32 only")),
        ("bf16_clamp_refused", call(T_CLAMP, &[t(BF16M)], &[kw_float("min")]),
            reject("RXTP-TORCH-151", "rextio-torch cannot lower 'torch.clamp': bfloat16 tensors are compiled for linear, matmul, bmm, + - * /, the unary activations, softmax/log_softmax, sum/mean/amax/amin/argmax along a dim, the whole-tensor reductions, item()/float(), comparisons as conditions, the views and layer_norm; this op takes float32 only")),
        ("bf16_sum_bad_dim", method("x.sum", Some(BF16M), &[], &[kw_int("dim", 2)]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum dim=2 is out of range for a rank-2 input (expected a dim in [-2, 1])")),
        ("f64_embedding_refused", call(F_EMBEDDING, &[t(KEY_L), t(F64M)], &[]),
            reject("RXTP-TORCH-150", "rextio-torch cannot lower 'torch.nn.functional.embedding': float64 tensors are compiled for linear, matmul, bmm, + - * /, the unary activations, softmax/log_softmax, sum/mean/amax/amin/argmax along a dim, the whole-tensor reductions, item()/float(), comparisons as conditions, the views and layer_norm; this op takes float32 only")),
    ]
}

/// The extended surface's float64 / bfloat16 keys (the dtype lane's rows).
const F64M: &str = "rextio-torch/tensor-f64-cpu-2d";
const F64V: &str = "rextio-torch/tensor-f64-cpu-1d";
const BF16M: &str = "rextio-torch/tensor-bf16-cpu-2d";
const BF16V: &str = "rextio-torch/tensor-bf16-cpu-1d";
const F64S: &str = "rextio-torch/tensor-f64-cpu-0d";
const F64T: &str = "rextio-torch/tensor-f64-cpu-3d";
const BF16S: &str = "rextio-torch/tensor-bf16-cpu-0d";
const BF16T: &str = "rextio-torch/tensor-bf16-cpu-3d";

/// Whether a site names a float64 / bfloat16 key: the reference surface does not know them
/// (not covered, as unresolved operands are).
fn is_dtype_site(site: &ClaimSite) -> bool {
    reads_any(site, &[F64M, F64V, BF16M, BF16V, F64S, F64T, BF16S, BF16T])
}

/// Whether `site` reads a rank-3 tensor (the rank-3 lane's, extended surface only: the
/// reference surface has no rank-3 type, so it never offers one).
fn is_rank3_site(site: &ClaimSite) -> bool {
    reads_any(site, &[KEY_T])
}

/// Whether an operand or the receiver of `site` has one of `keys` as its type.
fn reads_any(site: &ClaimSite, keys: &[&str]) -> bool {
    site.operand_types
        .iter()
        .flatten()
        .chain(site.receiver.iter().filter_map(|r| r.arg_type.as_ref()))
        .any(|t| keys.contains(&t.as_str()))
}

/// A `max`/`min` call offered as one part of its named tuple (`.values`, `.indices`).
fn part(part: ResultPart, site: ClaimSite) -> ClaimSite {
    ClaimSite {
        part: Some(part),
        ..site
    }
}

fn extremum(op: ExtremumOp, input: Input, dim: u8, keepdim: bool) -> ClaimedOp {
    ClaimedOp::Extremum {
        op,
        input,
        dim,
        keepdim,
    }
}

fn normalize(p: f64, dim: u8, eps: f64) -> ClaimedOp {
    ClaimedOp::Normalize {
        input: O0,
        p: FloatBits::new(p),
        dim,
        eps: FloatBits::new(eps),
    }
}

const F_NORMALIZE: &str = "torch.nn.functional.normalize";

/// `torch.where(l <cmp> r, a, b)` as the walker offers it: the comparison's sides first.
fn where_call(cmp: CompareOp, args: &[Arg]) -> ClaimSite {
    ClaimSite {
        condition: Some(cmp),
        ..call("torch.where", args, &[])
    }
}

fn elementwise(op: ElementwiseOp, operands: &[usize]) -> ClaimedOp {
    ClaimedOp::Elementwise {
        op,
        operands: operands.iter().map(|i| Input::Operand(*i)).collect(),
    }
}

// ---------------------------------------------------------------------------------------
// Tests.

fn check(name: &str, site: &ClaimSite, expected: &Expect) -> Result<(), String> {
    check_outcome(name, claim(site), expected)
}

fn check_outcome(name: &str, got: ClaimOutcome, expected: &Expect) -> Result<(), String> {
    let ok = match (expected, &got) {
        (
            Expect::Claim(rule, result, op),
            ClaimOutcome::Claimed {
                rule_id,
                result_type,
                op: got_op,
            },
        ) => rule == rule_id && result == result_type && op == got_op,
        (
            Expect::Reject(code, message),
            ClaimOutcome::Rejected {
                code: got_code,
                message: got_message,
            },
        ) => code == got_code && message == got_message,
        (Expect::NotCovered, ClaimOutcome::NotCovered) => true,
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let expected = match expected {
        Expect::Claim(rule, result, op) => format!("Claimed {rule} -> {result} {op:?}"),
        Expect::Reject(code, message) => format!("Rejected {code}: {message}"),
        Expect::NotCovered => "NotCovered".to_string(),
    };
    Err(format!(
        "{name}:\n  expected {expected}\n  got      {got:?}"
    ))
}

#[test]
fn claim_table() {
    let failures: Vec<String> = cases()
        .iter()
        .filter_map(|(name, site, expected)| check(name, site, expected).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn claim_case_names_are_unique() {
    let mut names: Vec<&str> = cases().iter().map(|(name, _, _)| *name).collect();
    let total = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), total);
}

/// Core's verdict validation: a claimed rule must be described with the site's scope kind,
/// a rejection code must be declared by some record.
#[test]
fn claim_verdicts_are_declared() {
    for (name, site, _) in cases() {
        match claim(&site) {
            ClaimOutcome::Claimed { rule_id, .. } => {
                let record = rules::record(rule_id)
                    .unwrap_or_else(|| panic!("{name}: undeclared rule {rule_id}"));
                let scope = match site.kind {
                    SiteKind::Call => ScopeKind::Call,
                    SiteKind::Binop => ScopeKind::Binop,
                    SiteKind::Compare => ScopeKind::Compare,
                };
                assert_eq!(record.scope, scope, "{name}: scope kind of {rule_id}");
            }
            ClaimOutcome::Rejected { code, message } => {
                assert!(
                    rules::is_declared_code(code),
                    "{name}: undeclared code {code}"
                );
                assert!(
                    message.starts_with("rextio-torch cannot lower '"),
                    "{name}: {message}"
                );
            }
            ClaimOutcome::NotCovered => {}
        }
    }
}

/// Every non-`type` record is claimed by at least one case.
#[test]
fn claim_table_covers_every_rule() {
    let outcomes: Vec<ClaimOutcome> = cases().iter().map(|(_, site, _)| claim(site)).collect();
    for record in rule_records() {
        if record.scope == ScopeKind::Type {
            continue;
        }
        let claimed = outcomes
            .iter()
            .any(|o| matches!(o, ClaimOutcome::Claimed { rule_id, .. } if *rule_id == record.id));
        assert!(claimed, "no case claims {}", record.id);
    }
}

/// Codes the reference declares in a rule record but never rejects with: the lanes of those
/// records reject with another record's code (rank-1 relu/sigmoid/tanh use the rank-2 codes,
/// the broadcast rules the same-rank codes, the static reductions and classification rules
/// the legacy codes; see `docs/reference-plugin.md`).
const RECORD_ONLY_CODES: [&str; 12] = [
    "RXTP-TORCH-001",
    "RXTP-TORCH-004",
    "RXTP-TORCH-005",
    "RXTP-TORCH-007",
    "RXTP-TORCH-012",
    "RXTP-TORCH-018",
    "RXTP-TORCH-020",
    "RXTP-TORCH-022",
    "RXTP-TORCH-027",
    "RXTP-TORCH-028",
    "RXTP-TORCH-029",
    "RXTP-TORCH-030",
];

/// Every rejection code a rule record declares is produced by some case of the table, except
/// the record-only codes, which no case produces.
#[test]
fn claim_table_produces_every_rejection_code() {
    let rejected: Vec<&str> = cases()
        .iter()
        .filter_map(|(_, site, _)| match claim(site) {
            ClaimOutcome::Rejected { code, .. } => Some(code),
            _ => None,
        })
        .collect();
    let records = rule_records();
    let mut missing = Vec::new();
    for record in records {
        let produced = rejected.contains(&record.code);
        if RECORD_ONLY_CODES.contains(&record.code) {
            assert!(
                !produced,
                "{} is listed as record-only, but a case rejects with it",
                record.code
            );
        } else if !produced {
            missing.push(format!("{} ({})", record.code, record.id));
        }
    }
    assert!(
        missing.is_empty(),
        "no case rejects with:\n{}",
        missing.join("\n")
    );
    for code in RECORD_ONLY_CODES {
        assert!(
            records.iter().any(|r| r.code == code),
            "{code} is listed as record-only but no record declares it"
        );
    }
}

/// Whether `site` is spelled by an extension row of the table (a call of its target, or a
/// method of its `Math` name).
fn is_extension_site(site: &ClaimSite) -> bool {
    let method = site.target.rsplit('.').next().unwrap_or("");
    is_dtype_site(site)
        || is_rank3_site(site)
        || site.target == F_SILU
        || site.target == F_SIGMOID
        || site.target == F_TANH
        || (CAST_METHODS.contains(&method)
            && site.receiver.as_ref().is_some_and(|r| {
                // A CUDA receiver is the CUDA lane's, in both surfaces.
                !matches!(r.arg_type.as_deref(), Some(KEY_CM | KEY_CV))
            }))
        || site.target == F_RELU6
        || site.target == T_RSQRT
        || site.target.ends_with(".rsqrt")
        || ["log_softmax", "amax", "amin"].contains(&method)
        || [F_LAYER_NORM, F_EMBEDDING, F_DROPOUT, F_EMBEDDING_BAG].contains(&site.target.as_str())
        || ["leaky_relu", "elu", "hardtanh", "clamp", "clip"].contains(&method)
        || JOIN_TARGETS.contains(&site.target.as_str())
        || site.target.starts_with("math.")
        || ["where", "maximum", "minimum", "pow"].contains(&method)
        || [
            "max",
            "min",
            "zeros_like",
            "ones_like",
            "full_like",
            "index_select",
            "normalize",
        ]
        .contains(&method)
        || site.target == "**"
        || [
            "shape",
            "size",
            "t",
            "T",
            "transpose",
            "reshape",
            "view",
            "flatten",
            "unsqueeze",
            "squeeze",
        ]
        .contains(&method)
}

/// Whether `site` is `+ - * /` of a float32 CPU tensor with a resolved non-tensor operand
/// (a Python scalar, or a bool, str, None): the extended surface decides it with
/// `RXTP-TORCH-055..058`, the reference with `RXTP-TORCH-010`.
fn is_scalar_operand_site(site: &ClaimSite) -> bool {
    let types: Vec<Option<&str>> = site.operand_types.iter().map(|t| t.as_deref()).collect();
    let f32_cpu = |t: Option<&str>| t == Some(KEY_M) || t == Some(KEY_V);
    let non_tensor =
        |t: Option<&str>| t.is_some_and(|t| ![KEY_M, KEY_V, KEY_L, KEY_CM, KEY_CV].contains(&t));
    site.kind == SiteKind::Binop
        && ["+", "-", "*", "/"].contains(&site.target.as_str())
        && site.receiver.is_none()
        && site.keywords.is_empty()
        && matches!(types.as_slice(), [a, b] if (f32_cpu(*a) && non_tensor(*b)) || (non_tensor(*a) && f32_cpu(*b)))
}

/// The Rextio plugin claims under the reference surface: every extension site of the
/// table (`F.silu`, `torch.rsqrt`/`.rsqrt()` in any form, CPU operands) is not covered there,
/// as the reference plugin (which has no lane for them) leaves it; every other site gets the
/// same outcome as `claim`.
#[test]
fn extension_spellings_keep_the_reference_outcome_in_the_plugin() {
    let mut extension_sites = 0;
    let mut scalar_sites = 0;
    for (name, site, _) in cases() {
        let plugin = claim_with(&site, Surface::Reference);
        if is_extension_site(&site) {
            extension_sites += 1;
            assert_eq!(plugin, ClaimOutcome::NotCovered, "{name}");
        } else if is_rank0_site(&site) {
            // The rank-0 lane's sites keep the reference's own outcome (a refusal of
            // `x.mean()` without a dim, not covered): `rank0_rows_are_extended_only`.
            continue;
        } else if site.target == F_GELU {
            // Exact GELU is the reference's; its extension option, `approximate="tanh"`,
            // changes the extended surface's words (`gelu_options_under_each_surface`).
            continue;
        } else if is_scalar_operand_site(&site) {
            scalar_sites += 1;
            let expected = format!(
                "rextio-torch cannot lower '{}': operand types are outside the float32 CPU rank-1/2 tensor surface",
                site.target
            );
            assert_eq!(
                plugin,
                ClaimOutcome::Rejected {
                    code: "RXTP-TORCH-010",
                    message: expected
                },
                "{name}"
            );
            assert!(
                matches!(
                    claim(&site),
                    ClaimOutcome::Claimed { .. }
                        | ClaimOutcome::Rejected {
                            code: "RXTP-TORCH-055"
                                | "RXTP-TORCH-056"
                                | "RXTP-TORCH-057"
                                | "RXTP-TORCH-058",
                            ..
                        }
                ),
                "{name}"
            );
        } else {
            assert_eq!(plugin, claim(&site), "{name}");
        }
    }
    assert!(extension_sites >= 7 + 10 + 8);
    assert!(scalar_sites >= 12);
    // A CUDA operand is the CUDA lane's, before any spelling is read, in both.
    for target in [F_SILU, T_RSQRT, F_RELU6] {
        let cuda = call(target, &[t(KEY_CM)], &[]);
        assert_eq!(claim_with(&cuda, Surface::Reference), claim(&cuda));
        assert!(matches!(
            claim(&cuda),
            ClaimOutcome::Rejected {
                code: "RXTP-TORCH-049",
                ..
            }
        ));
    }
}

/// `F.gelu` has a reference row (exact, the bare call's) and an extension row
/// (`approximate="tanh"`): under the reference surface every gelu site keeps the reference's
/// outcome and words; under the extended one the tanh option is claimed, and a rejection
/// names both options.
#[test]
fn gelu_options_under_each_surface() {
    const REFERENCE_WORDS: &str = "rextio-torch cannot lower 'torch.nn.functional.gelu': GELU requires one positional non-literal tensor and either no keywords or exact literal approximate='none'";
    let reference_rejection = ClaimOutcome::Rejected {
        code: "RXTP-TORCH-044",
        message: REFERENCE_WORDS.to_string(),
    };
    let mut gelu_sites = 0;
    for (name, site, _) in cases() {
        // A rank-3 operand is the rank-3 lane's, extended only (`rank3_rows_are_extended_only`).
        if site.target != F_GELU || is_rank3_site(&site) {
            continue;
        }
        gelu_sites += 1;
        let reference = claim_with(&site, Surface::Reference);
        match claim(&site) {
            // A claim of exact GELU, or any outcome that is not the functional lane's own
            // rejection (dtype, unresolved operands), is the same in both.
            ClaimOutcome::Claimed { rule_id, .. } if rule_id.contains("gelu-none") => {
                assert_eq!(reference, claim(&site), "{name}")
            }
            ClaimOutcome::Claimed { rule_id, .. } => {
                assert!(rule_id.contains("gelu-tanh"), "{name}: {rule_id}");
                assert_eq!(reference, reference_rejection, "{name}");
            }
            ClaimOutcome::Rejected { code, message } if message.contains("approximate=") => {
                assert!(
                    ["RXTP-TORCH-044", "RXTP-TORCH-064"].contains(&code),
                    "{name}"
                );
                assert!(
                    message.ends_with(" or approximate='tanh'"),
                    "{name}: {message}"
                );
                assert_eq!(reference, reference_rejection, "{name}");
            }
            // Under the reference surface a tanh call names no known option: the lane
            // rejects it before reading the operand's type.
            other if name.starts_with("gelu_tanh") => {
                assert_eq!(reference, reference_rejection, "{name}: {other:?}")
            }
            other => assert_eq!(reference, other, "{name}"),
        }
    }
    assert!(gelu_sites >= 8);
}

#[test]
fn claim_records_are_well_formed() {
    let records = rule_records();
    assert_eq!(
        records.len(),
        125,
        "50 reference records plus our 049 record, then the extension records of F.silu, \
         torch.rsqrt, F.relu6 and GELU tanh, then the scalar operands' (055..058), then \
         log_softmax (2), amax and amin, then layer_norm, embedding and dropout (065..067), \
         then leaky_relu, elu, hardtanh and clamp (070..073), \
         then cat and stack, then embedding_bag (090), then the math functions (120..126), then the views lane's six (110..115), then where, maximum, minimum, pow and ** (100..104), then max/min over a dim, the fills, index_select and normalize (130..134), then the rank-3 lane's ten (140..149) and four (180..183), then the dtype lane's six (150..155), then the rank-0 lane's five (160..164), then the casts lane's two (170, 171); \
         F.sigmoid and F.tanh (068, 069) among the extension spellings"
    );
    assert_eq!(rules::reference_records().len(), 51);
    for record in records {
        assert!(record.id.starts_with("rextio-torch/"), "{}", record.id);
        let digits = record.code.strip_prefix("RXTP-TORCH-").unwrap_or("");
        assert!(
            digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit()),
            "{}",
            record.code
        );
    }
    let mut ids: Vec<&str> = records.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), records.len(), "rule ids are unique");
    let mut codes: Vec<&str> = records.iter().map(|r| r.code).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), records.len(), "codes are unique");
    let extra = rules::record("rextio-torch/cuda0-unsupported-op").map(|r| r.code);
    assert_eq!(extra, Some("RXTP-TORCH-049"));
}

/// Every plugin diagnostic and every claimed rule in the public conformance corpus is
/// reproduced by some row of the table. The corpus is vendored: a missing one is a failure.
#[test]
fn claim_table_reproduces_conformance_corpus() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/conformance/reference-claims.public.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!("the conformance corpus is part of the repository: cannot read {path}: {e}")
    });
    let corpus: serde_json::Value = serde_json::from_str(&text).expect("corpus is JSON");
    // The corpus holds the reference's outcomes: the reference surface reproduces them (the
    // extended one claims more, such as scalar operands and GELU tanh, and names its extra
    // options in rejections).
    let outcomes: Vec<ClaimOutcome> = cases()
        .iter()
        .map(|(_, site, _)| claim_with(site, Surface::Reference))
        .collect();
    let produced_messages: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            ClaimOutcome::Rejected { code, message } => Some(format!("error:{code}: {message}")),
            _ => None,
        })
        .collect();
    let letter = |key: &str| match key {
        KEY_M => "M",
        KEY_V => "V",
        KEY_L => "L",
        KEY_CM => "CM",
        KEY_CV => "CV",
        _ => "?",
    };
    let produced_claims: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            ClaimOutcome::Claimed {
                rule_id,
                result_type,
                ..
            } => Some(format!("{rule_id} -> {}", letter(result_type))),
            _ => None,
        })
        .collect();
    let cases = corpus["cases"].as_array().expect("cases array");
    assert_eq!(cases.len(), 72, "the public corpus has 72 cases");
    let mut missing = Vec::new();
    for case in cases {
        for diagnostic in case["diagnostics"].as_array().into_iter().flatten() {
            let diagnostic = diagnostic.as_str().unwrap_or_default();
            if diagnostic.starts_with("error:RXTP-")
                && !produced_messages.iter().any(|m| m == diagnostic)
            {
                missing.push(format!("{}: {diagnostic}", case["id"]));
            }
        }
        for claimed in case["claims"].as_array().into_iter().flatten() {
            let claimed = claimed.as_str().unwrap_or_default();
            if !produced_claims.iter().any(|c| c == claimed) {
                missing.push(format!("{}: {claimed}", case["id"]));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "corpus outcomes not reproduced:\n{}",
        missing.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Negative dims: the first extension outside the op table's spellings.

/// `(name, site, extended outcome, reference outcome)` for every dim-taking lane: a dim
/// `d` with `-rank <= d < 0` is `d + rank` under the extended surface (always the static
/// rule, never a legacy `dim1` one), and an int dim outside `[-rank, rank)` is rejected
/// naming the dim and the rank; the reference surface keeps the reference's words.
fn negative_dim_cases() -> Vec<(&'static str, ClaimSite, Expect, Expect)> {
    let mean = ReduceKind::Mean;
    let sum = ReduceKind::Sum;
    vec![
        ("sum_M_dim_m1_positional", method("x.sum", Some(KEY_M), &[int(-1)], &[]),
            claim_ok(p("sum-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(sum, R, 1, false)),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum requires literal dim=0 or dim=1; got dim=-1")),
        ("sum_M_dim_m2", method("x.sum", Some(KEY_M), &[], &[kw_int("dim", -2)]),
            claim_ok(p("sum-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(sum, R, 0, false)),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum requires literal dim=0 or dim=1; got dim=-2")),
        ("sum_M_dim_m3", method("x.sum", Some(KEY_M), &[], &[kw_int("dim", -3)]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum dim=-3 is out of range for a rank-2 input (expected a dim in [-2, 1])"),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum requires literal dim=0 or dim=1; got dim=-3")),
        ("torch_sum_V_dim_m1_keepdim", call("torch.sum", &[t(KEY_V), int(-1)], &[kw_bool("keepdim", true)]),
            claim_ok(p("sum-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(sum, O0, 0, true)),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'torch.sum': sum requires literal dim=0 or dim=1; got dim=-1")),
        ("sum_V_dim_m2", method("x.sum", Some(KEY_V), &[], &[kw_int("dim", -2), kw_bool("keepdim", true)]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum dim=-2 is out of range for a rank-1 input (expected a dim in [-1, 0])"),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum requires literal dim=0 or dim=1; got dim=-2")),
        // Written exactly as the legacy rule's syntax, but with -1: the static rule.
        ("mean_M_dim_m1_legacy_syntax", method("x.mean", Some(KEY_M), &[], &[kw_int("dim", -1), kw_bool("keepdim", false)]),
            claim_ok(p("mean-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(mean, R, 1, false)),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean requires literal dim=0 or dim=1; got dim=-1")),
        ("mean_M_dim_m1_keepdim", method("x.mean", Some(KEY_M), &[], &[kw_int("dim", -1), kw_bool("keepdim", true)]),
            claim_ok(p("mean-static-dim-f32-cpu-rank1-2"), KEY_M, reduce(mean, R, 1, true)),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean requires literal dim=0 or dim=1; got dim=-1")),
        ("mean_M_dim2", method("x.mean", Some(KEY_M), &[], &[kw_int("dim", 2)]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean dim=2 is out of range for a rank-2 input (expected a dim in [-2, 1])"),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean requires literal dim=0 or dim=1; got dim=2")),
        // The rank-1 result rule still applies after normalizing: V with dim=-1 and no keepdim
        // has no registered rank-0 type, in both surfaces' words after their dim rule.
        ("mean_V_dim_m1_no_keepdim", method("x.mean", Some(KEY_V), &[], &[kw_int("dim", -1)]),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean(dim=0, keepdim=False) on 'rextio-torch/tensor-f32-cpu-1d' does not have an already-registered rank-1/rank-2 result type"),
            reject("RXTP-TORCH-003", "rextio-torch cannot lower 'x.mean': mean requires literal dim=0 or dim=1; got dim=-1")),
        ("softmax_M_dim_m1", method("x.softmax", Some(KEY_M), &[], &[kw_int("dim", -1)]),
            claim_ok(p("softmax-static-dim-f32-cpu-rank1-2"), KEY_M, softmax(R, 1)),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'x.softmax': softmax requires literal dim=0 or dim=1; got dim=-1")),
        ("softmax_V_dim_m1", method("x.softmax", Some(KEY_V), &[int(-1)], &[]),
            claim_ok(p("softmax-static-dim-f32-cpu-rank1-2"), KEY_V, softmax(R, 0)),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'x.softmax': softmax requires literal dim=0 or dim=1; got dim=-1")),
        ("torch_softmax_M_dim_m2", call("torch.softmax", &[t(KEY_M), int(-2)], &[]),
            claim_ok(p("softmax-static-dim-f32-cpu-rank1-2"), KEY_M, softmax(O0, 0)),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.softmax': softmax requires literal dim=0 or dim=1; got dim=-2")),
        ("softmax_M_dim2", method("x.softmax", Some(KEY_M), &[], &[kw_int("dim", 2)]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'x.softmax': softmax dim=2 is out of range for a rank-2 input (expected a dim in [-2, 1])"),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'x.softmax': softmax requires literal dim=0 or dim=1; got dim=2")),
        ("F_softmax_M_dim_m1", call(F_SOFTMAX, &[t(KEY_M)], &[kw_int("dim", -1)]),
            claim_ok(p("functional-softmax-f32-cpu-rank1-2"), KEY_M, softmax(O0, 1)),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.nn.functional.softmax': softmax requires literal dim=0 or dim=1; got dim=-1")),
        ("F_softmax_V_dim_m1_dtype_none", call(F_SOFTMAX, &[t(KEY_V)], &[kw_int("dim", -1), kw_none("dtype")]),
            claim_ok(p("functional-softmax-f32-cpu-rank1-2"), KEY_V, softmax(O0, 0)),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.nn.functional.softmax': softmax requires literal dim=0 or dim=1; got dim=-1")),
        ("F_softmax_V_dim_m2", call(F_SOFTMAX, &[t(KEY_V)], &[kw_int("dim", -2)]),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.nn.functional.softmax': softmax dim=-2 is out of range for a rank-1 input (expected a dim in [-1, 0])"),
            reject("RXTP-TORCH-015", "rextio-torch cannot lower 'torch.nn.functional.softmax': softmax requires literal dim=0 or dim=1; got dim=-2")),
        ("argmax_M_dim_m1_legacy_syntax", method("p.argmax", Some(KEY_M), &[], &[kw_int("dim", -1), kw_bool("keepdim", false)]),
            claim_ok(p("argmax-static-dim-i64-cpu-rank1"), KEY_L, argmax(R, 1, false)),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'p.argmax': argmax requires literal dim=0 or dim=1; got dim=-1")),
        ("torch_argmax_M_dim_m2", call("torch.argmax", &[t(KEY_M)], &[kw_int("dim", -2)]),
            claim_ok(p("argmax-static-dim-i64-cpu-rank1"), KEY_L, argmax(O0, 0, false)),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'torch.argmax': argmax requires literal dim=0 or dim=1; got dim=-2")),
        ("argmax_V_dim_m1_keepdim", method("x.argmax", Some(KEY_V), &[], &[kw_int("dim", -1), kw_bool("keepdim", true)]),
            claim_ok(p("argmax-static-dim-i64-cpu-rank1"), KEY_L, argmax(R, 0, true)),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'x.argmax': argmax requires literal dim=0 or dim=1; got dim=-1")),
        ("argmax_M_dim_m3", method("p.argmax", Some(KEY_M), &[int(-3)], &[]),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'p.argmax': argmax dim=-3 is out of range for a rank-2 input (expected a dim in [-2, 1])"),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'p.argmax': argmax requires literal dim=0 or dim=1; got dim=-3")),
        ("argmax_dim3", method("x.argmax", Some(KEY_M), &[int(3)], &[]),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'x.argmax': argmax dim=3 is out of range for a rank-2 input (expected a dim in [-2, 1])"),
            reject("RXTP-TORCH-016", "rextio-torch cannot lower 'x.argmax': argmax requires literal dim=0 or dim=1; got dim=3")),
        // A dim that is not an int keeps the reference's words in both.
        ("sum_M_dim_bool", method("x.sum", Some(KEY_M), &[], &[kw("dim", "int", Literal::Bool(true))]),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum requires literal dim=0 or dim=1; got dim=True"),
            reject("RXTP-TORCH-013", "rextio-torch cannot lower 'x.sum': sum requires literal dim=0 or dim=1; got dim=True")),
        // CUDA keeps its own lane (literal dim=1 only) in both surfaces.
        ("cuda_mean_dim_m1", method("a.mean", Some(KEY_CM), &[], &[kw_int("dim", -1)]),
            reject("RXTP-TORCH-048", "rextio-torch cannot lower 'a.mean': CUDA mean is limited to literal dim=1 and keepdim=False on rank-2 cuda:0"),
            reject("RXTP-TORCH-048", "rextio-torch cannot lower 'a.mean': CUDA mean is limited to literal dim=1 and keepdim=False on rank-2 cuda:0")),
    ]
}

#[test]
fn negative_dims_under_each_surface() {
    let mut failures = Vec::new();
    for (name, site, extended, reference) in negative_dim_cases() {
        let got = claim_with(&site, Surface::Extended);
        assert_eq!(got, claim(&site), "{name}: claim is the extended surface");
        if let Err(why) = check_outcome(name, got, &extended) {
            failures.push(format!("extended {why}"));
        }
        if let Err(why) = check_outcome(name, claim_with(&site, Surface::Reference), &reference) {
            failures.push(format!("reference {why}"));
        }
        // Every claim and rejection is one the records declare.
        if let ClaimOutcome::Claimed { rule_id, .. } = claim(&site) {
            assert!(
                rules::record(rule_id).is_some(),
                "{name}: undeclared {rule_id}"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The rank-3 rows are the extended surface's only: under the reference surface (which never
/// offers the rank-3 key, since the annotation is not a known type there) none of them gets a
/// rank-3 rule or code.
#[test]
fn rank3_rows_are_extended_only() {
    for (name, site, _) in cases()
        .iter()
        .filter(|(name, _, _)| name.starts_with("rank3_"))
    {
        match claim_with(site, Surface::Reference) {
            ClaimOutcome::Claimed { rule_id, .. } => {
                assert!(!rule_id.ends_with("rank3"), "{name}: {rule_id}")
            }
            ClaimOutcome::Rejected { code, .. } => {
                let n: u32 = code.trim_start_matches("RXTP-TORCH-").parse().unwrap_or(0);
                assert!(!(140..=148).contains(&n), "{name}: {code}")
            }
            ClaimOutcome::NotCovered => {}
        }
    }
}

/// A comparison written as an `if`/`while` condition (the walker's `truth` flag).
fn condition(op: &str, left: Arg, right: Arg) -> ClaimSite {
    ClaimSite {
        truth: true,
        ..compare(op, left, right)
    }
}

fn cases_6() -> Vec<(&'static str, ClaimSite, Expect)> {
    let reduce_all = |op: WholeReduceOp, input: Input| ClaimedOp::ReduceAll { op, input };
    let truth = |op: CompareOp, lhs: Input, rhs: Input| ClaimedOp::TensorTruth { op, lhs, rhs };
    vec![
        // --- rank 0 (extension: RXTP-TORCH-160..164) -----------------------------------------
        ("rank0_sum_M", method("x.sum", Some(KEY_M), &[], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, reduce_all(WholeReduceOp::Sum, R))),
        ("rank0_max_V", method("x.max", Some(KEY_V), &[], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, reduce_all(WholeReduceOp::Max, R))),
        ("rank0_amin_T", method("x.amin", Some(KEY_T), &[], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, reduce_all(WholeReduceOp::Amin, R))),
        ("rank0_torch_mean", call("torch.mean", &[t(KEY_M)], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, reduce_all(WholeReduceOp::Mean, O0))),
        ("rank0_chained_min", chained("min", KEY_M, &[], &[]),
            claim_ok(p("whole-tensor-reduction-f32-cpu"), KEY_S, reduce_all(WholeReduceOp::Min, R))),
        ("rank0_sum_dim_is_not_rank0", method("x.sum", Some(KEY_M), &[], &[kw_int("dim", 1)]),
            claim_ok(p("sum-static-dim-f32-cpu-rank1-2"), KEY_V, reduce(ReduceKind::Sum, R, 1, false))),
        ("rank0_torch_max_pair_is_not_rank0", call("torch.max", &[t(KEY_M), t(KEY_M)], &[]), Expect::NotCovered),
        ("rank0_sum_L", method("ids.sum", Some(KEY_L), &[], &[]),
            reject("RXTP-TORCH-160", "rextio-torch cannot lower 'ids.sum': sum() of TensorI64Cpu1D is not claimed (float32 CPU tensors of rank 0 to 3 only)")),
        ("rank0_item", method("s.item", Some(KEY_S), &[], &[]),
            claim_ok(p("item-float-f32-cpu"), "float", ClaimedOp::ToScalar { kind: ToScalarKind::Item, input: R })),
        ("rank0_item_M", method("x.item", Some(KEY_M), &[], &[]),
            claim_ok(p("item-float-f32-cpu"), "float", ClaimedOp::ToScalar { kind: ToScalarKind::Item, input: R })),
        ("rank0_float", call("float", &[t(KEY_S)], &[]),
            claim_ok(p("item-float-f32-cpu"), "float", ClaimedOp::ToScalar { kind: ToScalarKind::Float, input: O0 })),
        ("rank0_float_of_int_is_not_rank0", call("float", &[t("int")], &[]), Expect::NotCovered),
        ("rank0_item_L", method("ids.item", Some(KEY_L), &[], &[]),
            reject("RXTP-TORCH-161", "rextio-torch cannot lower 'ids.item': 'ids.item' of TensorI64Cpu1D is not claimed (float32 CPU tensors of rank 0 to 3 only)")),
        ("rank0_condition_S_float", condition(">", t(KEY_S), float()),
            claim_ok(p("tensor-condition-f32-cpu"), "bool", truth(CompareOp::Gt, O0, O1))),
        ("rank0_condition_float_S", condition("<", float(), t(KEY_S)),
            claim_ok(p("tensor-condition-f32-cpu"), "bool", truth(CompareOp::Gt, O1, O0))),
        ("rank0_condition_S_S", condition("==", t(KEY_S), t(KEY_S)),
            claim_ok(p("tensor-condition-f32-cpu"), "bool", truth(CompareOp::Eq, O0, O1))),
        ("rank0_condition_V_int", condition("<=", t(KEY_V), int(0)),
            claim_ok(p("tensor-condition-f32-cpu"), "bool", truth(CompareOp::Le, O0, O1))),
        ("rank0_condition_S_str", condition(">", t(KEY_S), string()),
            reject("RXTP-TORCH-162", "rextio-torch cannot lower '>': a tensor condition compares a float32 CPU tensor with a float32 CPU tensor or an int or float; got TensorF32Cpu0D and str")),
        ("rank0_compare_outside_condition", compare(">", t(KEY_S), float()),
            reject("RXTP-TORCH-162", "rextio-torch cannot lower '>': a comparison of tensors gives a bool tensor, which compiled code has no type for; it compiles as an if/while condition (`if t > x:`) or read as a Python value first (`t.item() > x`)")),
        ("rank0_scalar_condition_is_not_rank0", condition(">", t("int"), int(0)), Expect::NotCovered),
        ("rank0_div_MS", binop("/", t(KEY_M), t(KEY_S)),
            claim_ok(p("elementwise-operator-f32-cpu-rank0"), KEY_M, binary(BinaryOp::Div))),
        ("rank0_sub_SS", binop("-", t(KEY_S), t(KEY_S)),
            claim_ok(p("elementwise-operator-f32-cpu-rank0"), KEY_S, binary(BinaryOp::Sub))),
        ("rank0_mul_S_float", binop("*", t(KEY_S), float()),
            claim_ok(p("elementwise-operator-f32-cpu-rank0"), KEY_S, scalar_op(TensorScalarOp::Mul, O0, O1))),
        ("rank0_int_div_S", binop("/", int(1), t(KEY_S)),
            claim_ok(p("elementwise-operator-f32-cpu-rank0"), KEY_S, scalar_op(TensorScalarOp::RDiv, O1, O0))),
        ("rank0_add_S_L", binop("+", t(KEY_S), t(KEY_L)),
            reject("RXTP-TORCH-163", "rextio-torch cannot lower '+': + of a rank-0 tensor requires a float32 CPU tensor (rank 0 to 3) or an int or float; got TensorF32Cpu0D and TensorI64Cpu1D")),
        ("rank0_matmul", binop("@", t(KEY_S), t(KEY_M)),
            reject("RXTP-TORCH-163", "rextio-torch cannot lower '@': matmul of a rank-0 tensor is not defined (both operands need at least one dim)")),
        ("rank0_exp", method("s.exp", Some(KEY_S), &[], &[]),
            claim_ok(p("unary-ops-f32-cpu-rank0"), KEY_S, ClaimedOp::Unary { op: UnaryOp::Exp, input: R })),
        ("rank0_softmax", call("torch.softmax", &[t(KEY_S), int(0)], &[]),
            reject("RXTP-TORCH-164", "rextio-torch cannot lower 'torch.softmax': 'torch.softmax' of a rank-0 tensor is not claimed (rank-0 tensors take + - * /, the unary ops, item()/float() and comparisons as conditions)")),
    ]
}

/// float64 / bfloat16 at ranks 0 and 3 (the dtype lane reading the rank-0 and rank-3 lanes):
/// the float32 rule's op at the dtype, under the dtype's rule.
fn cases_7() -> Vec<(&'static str, ClaimSite, Expect)> {
    let reduce_all = |op: WholeReduceOp, input: Input| ClaimedOp::ReduceAll { op, input };
    let truth = |op: CompareOp, lhs: Input, rhs: Input| ClaimedOp::TensorTruth { op, lhs, rhs };
    vec![
        // --- rank 3 ----------------------------------------------------------------------
        ("f64_bmm", call("torch.bmm", &[t(F64T), t(F64T)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64T, ClaimedOp::Bmm { lhs: O0, rhs: O1 })),
        ("bf16_method_bmm", method("a.bmm", Some(BF16T), &[t(BF16T)], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16T, ClaimedOp::Bmm { lhs: R, rhs: O0 })),
        ("bf16_matmul_TT", binop("@", t(BF16T), t(BF16T)),
            claim_ok(p("float-binops-bf16-cpu-rank0-3"), BF16T, matmul(O0, O1))),
        ("f64_matmul_TM", binop("@", t(F64T), t(F64M)),
            claim_ok(p("float-binops-f64-cpu-rank0-3"), F64T, matmul(O0, O1))),
        ("f64_matmul_call_MT", call("torch.matmul", &[t(F64M), t(F64T)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64T, matmul(O0, O1))),
        ("bf16_softmax_T", method("x.softmax", Some(BF16T), &[], &[kw_int("dim", -1)]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16T, softmax(R, 2))),
        ("f64_linear_T", call(F_LINEAR, &[t(F64T), t(F64M), t(F64V)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64T, ClaimedOp::Linear { input: O0, weight: O1, bias: Some(O2) })),
        ("f64_transpose_T", method("k.transpose", Some(F64T), &[int(-2), int(-1)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64T, view_op(ViewKind::Transpose, R, &[], 1))),
        ("bf16_reshape_T_to_M", method("x.reshape", Some(BF16T), &[int(-1), t("int")], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16M, view_op(ViewKind::Reshape, R, &[O0, O1], 0))),
        ("f64_view_M_to_T", method("m.view", Some(F64M), &[int(2), int(-1), int(4)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64T, view_op(ViewKind::View, R, &[O0, O1, O2], 0))),
        ("f64_div_T_float", binop("/", t(F64T), float()),
            claim_ok(p("float-binops-f64-cpu-rank0-3"), F64T, scalar_op(TensorScalarOp::Div, O0, O1))),
        ("bf16_add_T_V", binop("+", t(BF16T), t(BF16V)),
            claim_ok(p("float-binops-bf16-cpu-rank0-3"), BF16T, binary(BinaryOp::Add))),
        ("bf16_relu_T", method("x.relu", Some(BF16T), &[], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16T, unary(UnaryOp::Relu, R))),
        ("f64_mixed_bmm", call("torch.bmm", &[t(F64T), t(KEY_T)], &[]),
            reject("RXTP-TORCH-150", "rextio-torch cannot lower 'torch.bmm': operands mix float64 and float32 tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike")),
        ("bf16_f64_mixed_matmul_T", binop("@", t(BF16T), t(F64T)),
            reject("RXTP-TORCH-153", "rextio-torch cannot lower '@': operands mix bfloat16 and float64 tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike")),
        ("bf16_clamp_T_refused", call(T_CLAMP, &[t(BF16T)], &[kw_float("min")]),
            reject("RXTP-TORCH-151", "rextio-torch cannot lower 'torch.clamp': bfloat16 tensors are compiled for linear, matmul, bmm, + - * /, the unary activations, softmax/log_softmax, sum/mean/amax/amin/argmax along a dim, the whole-tensor reductions, item()/float(), comparisons as conditions, the views and layer_norm; this op takes float32 only")),
        // --- rank 0 ----------------------------------------------------------------------
        ("f64_sum_all_M", method("x.sum", Some(F64M), &[], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64S, reduce_all(WholeReduceOp::Sum, R))),
        ("bf16_amax_all_T", method("x.amax", Some(BF16T), &[], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16S, reduce_all(WholeReduceOp::Amax, R))),
        ("f64_torch_mean_all_V", call("torch.mean", &[t(F64V)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64S, reduce_all(WholeReduceOp::Mean, O0))),
        ("f64_item_S", method("s.item", Some(F64S), &[], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), "float", ClaimedOp::ToScalar { kind: ToScalarKind::Item, input: R })),
        ("bf16_float_S", call("float", &[t(BF16S)], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), "float", ClaimedOp::ToScalar { kind: ToScalarKind::Float, input: O0 })),
        ("f64_condition_S_float", condition(">", t(F64S), float()),
            claim_ok(p("tensor-condition-f64-cpu"), "bool", truth(CompareOp::Gt, O0, O1))),
        ("bf16_condition_S_S", condition("==", t(BF16S), t(BF16S)),
            claim_ok(p("tensor-condition-bf16-cpu"), "bool", truth(CompareOp::Eq, O0, O1))),
        ("bf16_div_M_S", binop("/", t(BF16M), t(BF16S)),
            claim_ok(p("float-binops-bf16-cpu-rank0-3"), BF16M, binary(BinaryOp::Div))),
        ("f64_sub_S_int", binop("-", int(1), t(F64S)),
            claim_ok(p("float-binops-f64-cpu-rank0-3"), F64S, scalar_op(TensorScalarOp::RSub, O1, O0))),
        ("f64_exp_S", method("s.exp", Some(F64S), &[], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64S, unary(UnaryOp::Exp, R))),
        ("f64_f32_mixed_S", binop("-", t(F64S), t(KEY_S)),
            reject("RXTP-TORCH-152", "rextio-torch cannot lower '-': operands mix float64 and float32 tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike")),
        ("f64_bf16_mixed_condition", condition(">=", t(F64S), t(BF16S)),
            reject("RXTP-TORCH-154", "rextio-torch cannot lower '>=': operands mix float64 and bfloat16 tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike")),
        ("f64_sum_dim_T", method("x.sum", Some(F64T), &[], &[kw_int("dim", 1)]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64M, reduce(ReduceKind::Sum, R, 1, false))),
        ("bf16_layer_norm_T", call(F_LAYER_NORM, &[t(BF16T), shape(8), t(BF16V), t(BF16V)], &[]),
            claim_ok(p("float-ops-bf16-cpu-rank0-3"), BF16T, layer_norm(O0, Some((O2, O3)), 1e-5))),
        ("f64_pow_T", method("x.pow", Some(F64T), &[int(2)], &[]),
            reject("RXTP-TORCH-150", "rextio-torch cannot lower 'x.pow': float64 tensors are compiled for linear, matmul, bmm, + - * /, the unary activations, softmax/log_softmax, sum/mean/amax/amin/argmax along a dim, the whole-tensor reductions, item()/float(), comparisons as conditions, the views and layer_norm; this op takes float32 only")),
        ("bf16_softmax_S", call("torch.softmax", &[t(BF16S), int(0)], &[]),
            reject("RXTP-TORCH-164", "rextio-torch cannot lower 'torch.softmax': 'torch.softmax' of a rank-0 tensor is not claimed (rank-0 tensors take + - * /, the unary ops, item()/float() and comparisons as conditions)")),
        ("bf16_f32_mixed_condition", condition("<", t(KEY_M), t(BF16S)),
            reject("RXTP-TORCH-155", "rextio-torch cannot lower '<': operands mix float32 and bfloat16 tensors; compiled code takes one float dtype per op (eager would promote to the wider dtype): convert one operand before the call, or annotate both alike")),
    ]
}

/// A dtype known when compiling (`torch.float32`, `x.dtype`), as the walker offers it to
/// the casts lane.
fn dtype(name: &'static str) -> Arg {
    Arg(Some("torch.dtype"), Literal::Str(name.to_string()))
}
fn kw_dtype(name: &str) -> KeywordArg {
    kw("dtype", "torch.dtype", Literal::Str(name.to_string()))
}

const F_SIGMOID: &str = "torch.nn.functional.sigmoid";
const F_TANH: &str = "torch.nn.functional.tanh";
/// The casts lane's methods (extension sites: the reference has no lane for them).
const CAST_METHODS: [&str; 6] = ["to", "type_as", "float", "double", "bfloat16", "contiguous"];

/// Issue 33's idioms: casts to a tensor's own dtype (`RXTP-TORCH-170`), `F.sigmoid` and
/// `F.tanh` (`068`/`069`).
fn cases_8() -> Vec<(&'static str, ClaimSite, Expect)> {
    let same = || p("cast-to-own-dtype");
    let itself = || ClaimedOp::Identity { input: R };
    vec![
        ("cast_float_M", method("x.float", Some(KEY_M), &[], &[]), claim_ok(same(), KEY_M, itself())),
        ("cast_float_S", method("x.float", Some(KEY_S), &[], &[]), claim_ok(same(), KEY_S, itself())),
        ("cast_float_T", chained("float", KEY_T, &[], &[]), claim_ok(same(), KEY_T, itself())),
        ("cast_double_F64M", method("x.double", Some(F64M), &[], &[]), claim_ok(same(), F64M, itself())),
        ("cast_bfloat16_BF16V", method("x.bfloat16", Some(BF16V), &[], &[]), claim_ok(same(), BF16V, itself())),
        ("cast_to_dtype_V", method("x.to", Some(KEY_V), &[dtype("float32")], &[]), claim_ok(same(), KEY_V, itself())),
        ("cast_to_dtype_kw_M", method("w.to", Some(KEY_M), &[], &[kw_dtype("float32")]), claim_ok(same(), KEY_M, itself())),
        ("cast_to_f64_F64T", method("x.to", Some(F64T), &[dtype("float64")], &[]), claim_ok(same(), F64T, itself())),
        ("cast_to_int64_L", method("i.to", Some(KEY_L), &[dtype("int64")], &[]), claim_ok(same(), KEY_L, itself())),
        ("cast_to_tensor_MV", method("x.to", Some(KEY_M), &[t(KEY_V)], &[]), claim_ok(same(), KEY_M, itself())),
        ("cast_type_as_MT", method("x.type_as", Some(KEY_M), &[t(KEY_T)], &[]), claim_ok(same(), KEY_M, itself())),
        ("cast_to_f64_of_M", method("x.to", Some(KEY_M), &[dtype("float64")], &[]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'x.to': converts TensorF32Cpu2D (float32) to float64; compiled code keeps every value at its annotated dtype and device (no conversion is compiled yet): annotate the argument with the dtype it is used at, or convert it before the call")),
        ("cast_float_of_BF16M", method("x.float", Some(BF16M), &[], &[]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'x.float': converts TensorBF16Cpu2D (bfloat16) to float32; compiled code keeps every value at its annotated dtype and device (no conversion is compiled yet): annotate the argument with the dtype it is used at, or convert it before the call")),
        ("cast_type_as_f64", method("x.type_as", Some(KEY_M), &[t(F64M)], &[]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'x.type_as': converts TensorF32Cpu2D (float32) to float64; compiled code keeps every value at its annotated dtype and device (no conversion is compiled yet): annotate the argument with the dtype it is used at, or convert it before the call")),
        ("cast_to_int_of_L_float", method("i.to", Some(KEY_L), &[dtype("float32")], &[]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'i.to': converts TensorI64Cpu1D (int64) to float32; compiled code keeps every value at its annotated dtype and device (no conversion is compiled yet): annotate the argument with the dtype it is used at, or convert it before the call")),
        ("cast_to_copy", method("x.to", Some(KEY_M), &[dtype("float32")], &[kw_bool("copy", true)]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'x.to': only .to(dtype), .to(dtype=dtype) or .to(other) is compiled (copy=, non_blocking=, memory_format= and devices are not)")),
        ("cast_to_string", method("x.to", Some(KEY_M), &[string()], &[]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'x.to': only .to(dtype), .to(dtype=dtype) or .to(other) with a dtype known when compiling (torch.float32, t.dtype) or a typed tensor is compiled")),
        ("cast_float_argument", method("x.float", Some(KEY_M), &[int(1)], &[]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'x.float': only .float() without arguments is compiled (a memory format may copy)")),
        ("cast_type_as_two", method("x.type_as", Some(KEY_M), &[t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-170", "rextio-torch cannot lower 'x.type_as': .type_as(other) takes exactly one typed tensor")),
        ("cast_to_unresolved", method("x.to", Some(KEY_M), &[unresolved()], &[]), Expect::NotCovered),
        ("cast_unresolved_receiver", method("x.float", None, &[], &[]), Expect::NotCovered),
        ("cast_to_cuda_receiver", method("x.to", Some(KEY_CM), &[dtype("float32")], &[]),
            reject("RXTP-TORCH-049", "rextio-torch cannot lower 'x.to': operation is outside the build-only CUDA E2 vertical slice")),
        ("contiguous_M", method("x.contiguous", Some(KEY_M), &[], &[]),
            claim_ok(p("contiguous-cpu-rank1-3"), KEY_M, view_op(ViewKind::Contiguous, R, &[], 0))),
        ("contiguous_BF16T", chained("contiguous", BF16T, &[], &[]),
            claim_ok(p("contiguous-cpu-rank1-3"), BF16T, view_op(ViewKind::Contiguous, R, &[], 0))),
        ("contiguous_S", method("x.contiguous", Some(KEY_S), &[], &[]),
            reject("RXTP-TORCH-171", "rextio-torch cannot lower 'x.contiguous': .contiguous() is compiled for tensors of rank 1 to 3; got TensorF32Cpu0D")),
        ("contiguous_argument", method("x.contiguous", Some(KEY_T), &[int(1)], &[]),
            reject("RXTP-TORCH-171", "rextio-torch cannot lower 'x.contiguous': only .contiguous() without arguments is compiled (a memory format may copy to another layout)")),
        // --- F.sigmoid / F.tanh -----------------------------------------------------------
        ("f_sigmoid_M", call(F_SIGMOID, &[t(KEY_M)], &[]),
            claim_ok(p("functional-sigmoid-f32-cpu-rank1-2"), KEY_M, unary(UnaryOp::Sigmoid, O0))),
        ("f_tanh_V", call(F_TANH, &[t(KEY_V)], &[]),
            claim_ok(p("functional-tanh-f32-cpu-rank1-2"), KEY_V, unary(UnaryOp::Tanh, O0))),
        ("f_tanh_T", call(F_TANH, &[t(KEY_T)], &[]),
            claim_ok(p("unary-ops-f32-cpu-rank3"), KEY_T, unary(UnaryOp::Tanh, O0))),
        ("f_sigmoid_F64M", call(F_SIGMOID, &[t(F64M)], &[]),
            claim_ok(p("float-ops-f64-cpu-rank0-3"), F64M, unary(UnaryOp::Sigmoid, O0))),
        ("f_sigmoid_inplace", call(F_SIGMOID, &[t(KEY_M)], &[kw_bool("inplace", false)]),
            reject("RXTP-TORCH-068", "rextio-torch cannot lower 'torch.nn.functional.sigmoid': only torch.nn.functional.sigmoid(tensor) with one positional tensor is supported")),
        ("f_tanh_two", call(F_TANH, &[t(KEY_M), t(KEY_M)], &[]),
            reject("RXTP-TORCH-069", "rextio-torch cannot lower 'torch.nn.functional.tanh': only torch.nn.functional.tanh(tensor) with one positional tensor is supported")),
        ("f_sigmoid_L", call(F_SIGMOID, &[t(KEY_L)], &[]),
            reject("RXTP-TORCH-010", "rextio-torch cannot lower 'torch.nn.functional.sigmoid': torch.nn.functional.sigmoid requires float32 CPU rank-1 or rank-2; got 'rextio-torch/tensor-i64-cpu-1d'")),
    ]
}

/// Whether the extended surface decides `site` in the rank-0 lane (its rules and codes).
fn is_rank0_site(site: &ClaimSite) -> bool {
    match claim(site) {
        ClaimOutcome::Claimed { rule_id, .. } => rules::record(rule_id)
            .is_some_and(|r| ("RXTP-TORCH-160"..="RXTP-TORCH-164").contains(&r.code)),
        ClaimOutcome::Rejected { code, .. } => {
            ("RXTP-TORCH-160"..="RXTP-TORCH-164").contains(&code)
        }
        ClaimOutcome::NotCovered => false,
    }
}

/// Under the reference surface no site is decided by the rank-0 lane: `x.mean()` without a
/// dim keeps the reference's refusal, a tensor comparison is not covered (even as a
/// condition), a rank-0 operand is not a known type.
#[test]
fn rank0_rows_are_extended_only() {
    let mut rank0 = 0;
    for (name, site, _) in cases() {
        if !is_rank0_site(&site) {
            continue;
        }
        rank0 += 1;
        match claim_with(&site, Surface::Reference) {
            ClaimOutcome::Claimed { rule_id, .. } => {
                let code = rules::record(rule_id).map_or("", |r| r.code);
                assert!(
                    !("RXTP-TORCH-160"..="RXTP-TORCH-164").contains(&code),
                    "{name}: {rule_id}"
                )
            }
            ClaimOutcome::Rejected { code, .. } => {
                assert!(
                    !("RXTP-TORCH-160"..="RXTP-TORCH-164").contains(&code),
                    "{name}: {code}"
                )
            }
            ClaimOutcome::NotCovered => {}
        }
    }
    assert!(rank0 >= 25, "{rank0}");
    // The reference's own words for a mean over every dim.
    assert_eq!(
        claim_with(&method("x.mean", Some(KEY_M), &[], &[]), Surface::Reference),
        ClaimOutcome::Rejected {
            code: "RXTP-TORCH-003",
            message: "rextio-torch cannot lower 'x.mean': mean requires a literal dim=0 or dim=1"
                .into()
        }
    );
}
