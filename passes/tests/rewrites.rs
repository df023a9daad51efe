//! The fusion rules as data (egg style): each case is a start and the goal it must become.
//!
//! Two tables: terms (the rules alone, on one tree) and functions (the whole `fused` pass,
//! including the tree cut at shared values, which is what keeps fusion from duplicating work).

mod support;

use egg::{EGraph, Extractor, RecExpr, Runner, SimpleScheduler};
use rextio_ir::{
    print_function, ExprId, ExprKind, Function, TensorType, Type, UnaryOp, WeightLayout,
};
use rextio_passes::egraph::{TensorLang, Types};
use rextio_passes::fuse::{rules, FusionCost, ITER_LIMIT, NODE_LIMIT};
use rextio_passes::validate::validate;
use rextio_passes::{Fuse, Pass};
use support::{normalized, parse};

/// The parameter types of the term cases: `x` and `w` matrices, `b` a vector (as in
/// [`HEADER`]), `c` another matrix, `v` another vector.
fn term_params() -> Vec<Type> {
    let matrix = Type::Tensor(TensorType::F32_CPU_2D);
    let vector = Type::Tensor(TensorType::F32_CPU_2D.with_rank(1));
    vec![matrix, matrix, vector, matrix, vector]
}

/// (name, start term, goal term): the cheapest term equivalent to `start` is `goal`.
/// Parameters 0-4 are typed by [`term_params`].
const TERM_CASES: &[(&str, &str, &str)] = &[
    (
        "phase-a",
        "(mean (relu (linear (param 0) (param 1) (param 2))) 1 false)",
        "(fused_linear (param 0) (param 1) (param 2) (then nil relu) (mean 1 false) nil)",
    ),
    (
        "no-bias-sum-keepdim",
        "(sum (tanh (linear (param 0) (param 1) none)) 1 true)",
        "(fused_linear (param 0) (param 1) none (then nil tanh) (sum 1 true) nil)",
    ),
    (
        "activation-chain-in-order",
        "(gelu (sigmoid (relu (linear (param 0) (param 1) (param 2)))))",
        "(fused_linear (param 0) (param 1) (param 2) (then (then (then nil relu) sigmoid) gelu) none nil)",
    ),
    (
        "every-unary-op",
        "(relu6 (rsqrt (silu (gelu (sqrt (log (exp (square (neg (abs (tanh (sigmoid (relu (linear (param 0) (param 1) none))))))))))))))",
        "(fused_linear (param 0) (param 1) none (then (then (then (then (then (then (then (then (then (then (then (then (then nil relu) sigmoid) tanh) abs) neg) square) exp) log) sqrt) gelu) silu) rsqrt) relu6) none nil)",
    ),
    (
        // GELU tanh's eager result depends on the element's place in the tensor: it stays a
        // whole-tensor op (`UnaryOp::depends_on_position`), after the fused op and before
        // the next activation.
        "gelu-tanh-is-never-fused",
        "(relu (gelu_tanh (tanh (linear (param 0) (param 1) none))))",
        "(relu (gelu_tanh (fused_linear (param 0) (param 1) none (then nil tanh) none nil)))",
    ),
    (
        "reduce-without-activations",
        "(mean (linear (param 0) (param 1) (param 2)) 1 false)",
        "(fused_linear (param 0) (param 1) (param 2) nil (mean 1 false) nil)",
    ),
    (
        "mean-over-dim-0-stays",
        "(mean (relu (linear (param 0) (param 1) (param 2))) 0 false)",
        "(mean (fused_linear (param 0) (param 1) (param 2) (then nil relu) none nil) 0 false)",
    ),
    (
        "activation-after-reduce-stays",
        "(relu (mean (linear (param 0) (param 1) (param 2)) 1 true))",
        "(relu (fused_linear (param 0) (param 1) (param 2) nil (mean 1 true) nil))",
    ),
    (
        "second-reduce-stays",
        "(sum (mean (relu (linear (param 0) (param 1) (param 2))) 1 false) 0 true)",
        "(sum (fused_linear (param 0) (param 1) (param 2) (then nil relu) (mean 1 false) nil) 0 true)",
    ),
    ("rank-1-mean-untouched", "(mean (param 2) 0 true)", "(mean (param 2) 0 true)"),
    (
        "matmul-is-not-linear",
        "(relu (matmul (param 0) (param 1)))",
        "(fused_matmul (param 0) (param 1) none (then nil relu) none nil)",
    ),
    (
        "matmul-bias-chain",
        "(mean (tanh (add (matmul (param 0) (param 1)) (param 2))) 1 false)",
        "(fused_matmul (param 0) (param 1) (param 2) (then nil tanh) (mean 1 false) nil)",
    ),
    (
        "matmul-bias-alone",
        "(add (matmul (param 0) (param 1)) (param 2))",
        "(fused_matmul (param 0) (param 1) (param 2) nil none nil)",
    ),
    (
        "matmul-sum-without-bias",
        "(sum (matmul (param 0) (param 3)) 1 true)",
        "(fused_matmul (param 0) (param 3) none nil (sum 1 true) nil)",
    ),
    (
        "bias-on-the-left-stays",
        "(relu (add (param 2) (matmul (param 0) (param 1))))",
        "(relu (add (param 2) (matmul (param 0) (param 1))))",
    ),
    (
        // A matrix addend is no bias but a residual, which ends the fused op: the relu
        // after it stays.
        "matrix-addend-is-a-residual",
        "(relu (add (matmul (param 0) (param 1)) (param 3)))",
        "(relu (fused_matmul (param 0) (param 1) none nil (residual (param 3) false) nil))",
    ),
    (
        "residual-left-of-a-linear",
        "(add (param 3) (linear (param 0) (param 1) (param 2)))",
        "(fused_linear (param 0) (param 1) (param 2) nil (residual (param 3) true) nil)",
    ),
    (
        "residual-right-after-activations",
        "(add (tanh (relu (linear (param 0) (param 1) (param 2)))) (param 3))",
        "(fused_linear (param 0) (param 1) (param 2) (then (then nil relu) tanh) (residual (param 3) false) nil)",
    ),
    (
        // The transformer MLP block: `x + linear(gelu(linear(x, w1, b1)), w2, b2)`.
        "mlp-block-with-residual",
        "(add (param 0) (linear (gelu (linear (param 0) (param 1) (param 2))) (param 3) (param 4)))",
        "(fused_linear (fused_linear (param 0) (param 1) (param 2) (then nil gelu) none nil) (param 3) (param 4) nil (residual (param 0) true) nil)",
    ),
    (
        "residual-after-a-prologue",
        "(add (param 3) (linear (sub (param 0) (param 4)) (param 1) none))",
        "(fused_linear (param 0) (param 1) none nil (residual (param 3) true) (pre sub (param 4) nil))",
    ),
    (
        "added-bias-then-residual",
        "(add (add (linear (param 0) (param 1) none) (param 2)) (param 3))",
        "(fused_linear (param 0) (param 1) (added (param 2)) nil (residual (param 3) false) nil)",
    ),
    (
        "no-activation-after-a-residual",
        "(relu (add (param 3) (linear (param 0) (param 1) (param 2))))",
        "(relu (fused_linear (param 0) (param 1) (param 2) nil (residual (param 3) true) nil))",
    ),
    (
        "layer-norm-then-linear",
        "(linear (layer_norm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537) (param 1) (param 2))",
        "(fused_linear (prenorm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537) (param 1) (param 2) nil none nil)",
    ),
    (
        // The transformer MLP block: `x + linear(gelu(linear(layer_norm(x), w1, b1)), w2, b2)`
        // is two ops.
        "pre-norm-mlp-block",
        "(add (param 0) (linear (gelu (linear (layer_norm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537) (param 1) (param 2))) (param 3) (param 4)))",
        "(fused_linear (fused_linear (prenorm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537) (param 1) (param 2) (then nil gelu) none nil) (param 3) (param 4) nil (residual (param 0) true) nil)",
    ),
    (
        "layer-norm-without-affine-then-matmul-softmax",
        "(softmax (add (matmul (layer_norm (param 0) (const.int 8) none none 1) (param 1)) (param 2)) 1)",
        "(fused_matmul (prenorm (param 0) (const.int 8) none none 1) (param 1) (param 2) nil (softmax 1) nil)",
    ),
    (
        // The normalization comes first, then the prologue's steps.
        "layer-norm-before-a-prologue",
        "(linear (sub (layer_norm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537) (param 4)) (param 1) none)",
        "(fused_linear (prenorm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537) (param 1) none nil none (pre sub (param 4) nil))",
    ),
    (
        // A step before the normalization stays an op of its own.
        "step-before-a-layer-norm-stays",
        "(linear (layer_norm (sub (param 0) (param 4)) (const.int 8) none none 1) (param 1) none)",
        "(fused_linear (prenorm (sub (param 0) (param 4)) (const.int 8) none none 1) (param 1) none nil none nil)",
    ),
    (
        "layer-norm-alone-stays",
        "(relu (layer_norm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537))",
        "(relu (layer_norm (param 0) (const.int 8) (param 2) (param 4) 4532020583610935537))",
    ),
    (
        "no-residual-after-a-tail",
        "(add (param 3) (softmax (linear (param 0) (param 1) (param 2)) 1))",
        "(add (param 3) (fused_linear (param 0) (param 1) (param 2) nil (softmax 1) nil))",
    ),
    (
        "matrix-vector-product-stays",
        "(relu (add (matmul (param 0) (param 4)) (param 2)))",
        "(relu (add (matmul (param 0) (param 4)) (param 2)))",
    ),
    (
        "linear-then-bias",
        "(relu (add (linear (param 0) (param 1) none) (param 2)))",
        "(fused_linear (param 0) (param 1) (added (param 2)) (then nil relu) none nil)",
    ),
    (
        // Alone, the added bias still fuses (one op), marked as added.
        "linear-then-bias-alone",
        "(add (linear (param 0) (param 1) none) (param 2))",
        "(linear (param 0) (param 1) (added (param 2)))",
    ),
    (
        // `F.linear(x, w, b)`: the bias is the argument's, not marked.
        "linear-bias-argument-then-relu",
        "(relu (linear (param 0) (param 1) (param 2)))",
        "(fused_linear (param 0) (param 1) (param 2) (then nil relu) none nil)",
    ),
    (
        "linear-with-bias-then-add-stays-an-add",
        "(add (linear (param 0) (param 1) (param 2)) (param 4))",
        "(add (linear (param 0) (param 1) (param 2)) (param 4))",
    ),
    (
        "normalize-then-linear",
        "(relu (linear (div (sub (param 0) (param 4)) (param 2)) (param 1) (param 2)))",
        "(fused_linear (param 0) (param 1) (param 2) (then nil relu) none (pre sub (param 4) (pre div (param 2) nil)))",
    ),
    (
        "scaled-input-then-matmul-bias",
        "(add (matmul (mul (param 0) (param 4)) (param 1)) (param 2))",
        "(fused_matmul (param 0) (param 1) (param 2) nil none (pre mul (param 4) nil))",
    ),
    (
        "bare-linear-takes-a-prologue",
        "(linear (add (param 0) (param 4)) (param 1) none)",
        "(fused_linear (param 0) (param 1) none nil none (pre add (param 4) nil))",
    ),
    (
        "matrix-operand-is-no-prologue",
        "(linear (sub (param 0) (param 3)) (param 1) (param 2))",
        "(linear (sub (param 0) (param 3)) (param 1) (param 2))",
    ),
    (
        "input-on-the-right-is-no-prologue",
        "(linear (sub (param 4) (param 0)) (param 1) (param 2))",
        "(linear (sub (param 4) (param 0)) (param 1) (param 2))",
    ),
    (
        "unary-before-linear-stays",
        "(linear (relu (param 0)) (param 1) (param 2))",
        "(linear (relu (param 0)) (param 1) (param 2))",
    ),
    (
        "two-layer-head-ends-in-softmax",
        "(softmax (linear (relu (linear (param 0) (param 1) (param 2))) (param 3) (param 4)) 1)",
        "(fused_linear (fused_linear (param 0) (param 1) (param 2) (then nil relu) none nil) (param 3) (param 4) nil (softmax 1) nil)",
    ),
    (
        "head-ends-in-argmax",
        "(argmax (tanh (linear (param 0) (param 1) (param 2))) 1 false)",
        "(fused_linear (param 0) (param 1) (param 2) (then nil tanh) (argmax 1 false) nil)",
    ),
    (
        "argmax-of-softmax-keeps-its-argmax",
        "(argmax (softmax (linear (param 0) (param 1) (param 2)) 1) 1 false)",
        "(argmax (fused_linear (param 0) (param 1) (param 2) nil (softmax 1) nil) 1 false)",
    ),
    (
        "softmax-over-dim-0-stays",
        "(softmax (linear (param 0) (param 1) (param 2)) 0)",
        "(softmax (linear (param 0) (param 1) (param 2)) 0)",
    ),
    (
        "matmul-softmax",
        "(softmax (add (matmul (param 0) (param 1)) (param 2)) 1)",
        "(fused_matmul (param 0) (param 1) (param 2) nil (softmax 1) nil)",
    ),
    (
        "head-ends-in-log-softmax",
        "(log_softmax (relu (linear (param 0) (param 1) (param 2))) 1)",
        "(fused_linear (param 0) (param 1) (param 2) (then nil relu) (log_softmax 1) nil)",
    ),
    (
        "matmul-log-softmax",
        "(log_softmax (add (matmul (param 0) (param 1)) (param 2)) 1)",
        "(fused_matmul (param 0) (param 1) (param 2) nil (log_softmax 1) nil)",
    ),
    (
        "log-softmax-over-dim-0-stays",
        "(log_softmax (linear (param 0) (param 1) (param 2)) 0)",
        "(log_softmax (linear (param 0) (param 1) (param 2)) 0)",
    ),
    (
        "extrema-never-fuse",
        "(amax (relu (linear (param 0) (param 1) (param 2))) 1 false)",
        "(amax (fused_linear (param 0) (param 1) (param 2) (then nil relu) none nil) 1 false)",
    ),
    (
        "amin-keeps-its-input",
        "(amin (linear (param 0) (param 1) (param 2)) 1 true)",
        "(amin (linear (param 0) (param 1) (param 2)) 1 true)",
    ),
    (
        "unknown-types-match-no-rank-rule",
        "(add (matmul (ref 7) (ref 8)) (ref 9))",
        "(add (matmul (ref 7) (ref 8)) (ref 9))",
    ),
    (
        "bare-linear-stays",
        "(linear (param 0) (param 1) (param 2))",
        "(linear (param 0) (param 1) (param 2))",
    ),
    (
        "opaque-ref-is-not-seen-through",
        "(mean (relu (ref 3)) 1 false)",
        "(mean (relu (ref 3)) 1 false)",
    ),
];

#[test]
fn term_rewrites() {
    let rules = rules().expect("rules parse");
    let mut failures = Vec::new();
    for (name, start, goal) in TERM_CASES {
        let start: RecExpr<TensorLang> = start.parse().expect("start parses");
        let goal: RecExpr<TensorLang> = goal.parse().expect("goal parses");
        let egraph = EGraph::new(Types {
            params: term_params(),
            ..Types::default()
        });
        let runner = Runner::default()
            .with_egraph(egraph)
            .with_scheduler(SimpleScheduler)
            .with_node_limit(NODE_LIMIT)
            .with_iter_limit(ITER_LIMIT)
            .with_expr(&start)
            .with_expr(&goal)
            .run(&rules);
        let [start_class, goal_class] = [runner.roots[0], runner.roots[1]];
        if runner.egraph.find(start_class) != runner.egraph.find(goal_class) {
            failures.push(format!("{name}: goal is not equivalent to start"));
            continue;
        }
        let (_, best) = Extractor::new(&runner.egraph, FusionCost).find_best(start_class);
        if best.to_string() != goal.to_string() {
            failures.push(format!("{name}: extracted {best}, expected {goal}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const HEADER: &str =
    "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %b: tensor<f32, cpu, 1>)";
const PARAMS: &str = "
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %b: tensor<f32, cpu, 1> = param 2";

/// (name, result type, start body, goal body): after the `fused` pass, `start` prints as
/// `goal`. Bodies follow the three parameter reads; labels are renumbered before comparing.
const FUNCTION_CASES: &[(&str, &str, &str, &str)] = &[
    (
        // A join has no term: it is a run of its own, and the chains on either side of it
        // fuse (the DLRM shape: `cat([dense, linear(x)]) -> linear -> relu -> sum`).
        "fusion-on-both-sides-of-a-cat",
        "tensor<f32, cpu, 2>",
        "
  %e: tensor<f32, cpu, 2> = linear %x, %w
  %r: tensor<f32, cpu, 2> = relu %e
  %h: tensor<f32, cpu, 2> = cat %x, %r, dim=1
  %l: tensor<f32, cpu, 2> = linear %h, %w, %b
  %t: tensor<f32, cpu, 2> = tanh %l
  %s: tensor<f32, cpu, 2> = sum %t, dim=1, keepdim=true
  return %s",
        "
  %r: tensor<f32, cpu, 2> = fused_linear %x, %w, activations=[relu], tail=none
  %h: tensor<f32, cpu, 2> = cat %x, %r, dim=1
  %s: tensor<f32, cpu, 2> = fused_linear %h, %w, %b, activations=[tanh], tail=sum(dim=1, keepdim=true)
  return %s",
    ),
    (
        // A transformer block's skip connection: the second product, its bias and the
        // residual are one op (operands: input, weight, bias, then the residual).
        "mlp-block-residual",
        "tensor<f32, cpu, 2>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %g: tensor<f32, cpu, 2> = gelu %l
  %m: tensor<f32, cpu, 2> = linear %g, %w, %b
  %o: tensor<f32, cpu, 2> = add %x, %m
  return %o",
        "
  %g: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[gelu], tail=none
  %o: tensor<f32, cpu, 2> = fused_linear %g, %w, %b, %x, activations=[], tail=none, residual=left
  return %o",
    ),
    (
        "pre-norm-mlp-block",
        "tensor<f32, cpu, 2>",
        "
  %n: int = const.int 8
  %h: tensor<f32, cpu, 2> = layer_norm %x, %n, %b, %b, eps=1e-5
  %l: tensor<f32, cpu, 2> = linear %h, %w, %b
  %g: tensor<f32, cpu, 2> = gelu %l
  %m: tensor<f32, cpu, 2> = linear %g, %w, %b
  %o: tensor<f32, cpu, 2> = add %x, %m
  return %o",
        "
  %n: int = const.int 8
  %g: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, %n, %b, %b, norm=layer_norm(eps=1e-5, affine=true), activations=[gelu], tail=none
  %o: tensor<f32, cpu, 2> = fused_linear %g, %w, %b, %x, activations=[], tail=none, residual=left
  return %o",
    ),
    (
        // The normalized value has a second user: the layer_norm stays, the linear fuses.
        "shared-layer-norm-stays",
        "tensor<f32, cpu, 2>",
        "
  %n: int = const.int 8
  %h: tensor<f32, cpu, 2> = layer_norm %x, %n, eps=1e-5
  %l: tensor<f32, cpu, 2> = linear %h, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %o: tensor<f32, cpu, 2> = mul %r, %h
  return %o",
        "
  %n: int = const.int 8
  %h: tensor<f32, cpu, 2> = layer_norm %x, %n, eps=1e-5
  %r: tensor<f32, cpu, 2> = fused_linear %h, %w, %b, activations=[relu], tail=none
  %o: tensor<f32, cpu, 2> = mul %r, %h
  return %o",
    ),
    (
        // A normalized size computed by scalar code: the layer_norm is a run of its own
        // (its run would emit the scalar code after it), so nothing fuses across it.
        "scalar-normalized-size-stays",
        "tensor<f32, cpu, 2>",
        "
  %d: int = size %x, dim=1
  %one: int = const.int 1
  %n: int = scalar.mul %d, %one
  %h: tensor<f32, cpu, 2> = layer_norm %x, %n, eps=1e-5
  %l: tensor<f32, cpu, 2> = linear %h, %w, %b
  return %l",
        "
  %d: int = size %x, dim=1
  %one: int = const.int 1
  %n: int = scalar.mul %d, %one
  %h: tensor<f32, cpu, 2> = layer_norm %x, %n, eps=1e-5
  %l: tensor<f32, cpu, 2> = linear %h, %w, %b
  return %l",
    ),
    (
        // A residual that is also the fused op's input is read twice, computed once.
        "residual-right-of-a-shared-input",
        "tensor<f32, cpu, 2>",
        "
  %r: tensor<f32, cpu, 2> = relu %x
  %m: tensor<f32, cpu, 2> = linear %r, %w
  %o: tensor<f32, cpu, 2> = add %m, %r
  return %o",
        "
  %r: tensor<f32, cpu, 2> = relu %x
  %o: tensor<f32, cpu, 2> = fused_linear %r, %w, %r, activations=[], tail=none, residual=right
  return %o",
    ),
    (
        "stack-stays-between-unary-ops",
        "tensor<f32, cpu, 2>",
        "
  %a: tensor<f32, cpu, 1> = relu %b
  %k: tensor<f32, cpu, 2> = stack %a, %b, dim=1
  %t: tensor<f32, cpu, 2> = tanh %k
  return %t",
        "
  %a: tensor<f32, cpu, 1> = relu %b
  %k: tensor<f32, cpu, 2> = stack %a, %b, dim=1
  %t: tensor<f32, cpu, 2> = tanh %k
  return %t",
    ),
    (
        "phase-a",
        "tensor<f32, cpu, 1>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %m: tensor<f32, cpu, 1> = mean %r, dim=1, keepdim=false
  return %m",
        "
  %m: tensor<f32, cpu, 1> = fused_linear %x, %w, %b, activations=[relu], tail=mean(dim=1, keepdim=false)
  return %m",
    ),
    (
        "no-bias-chain-sum-keepdim",
        "tensor<f32, cpu, 2>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w
  %a: tensor<f32, cpu, 2> = tanh %l
  %s: tensor<f32, cpu, 2> = sigmoid %a
  %m: tensor<f32, cpu, 2> = sum %s, dim=1, keepdim=true
  return %m",
        "
  %m: tensor<f32, cpu, 2> = fused_linear %x, %w, activations=[tanh, sigmoid], tail=sum(dim=1, keepdim=true)
  return %m",
    ),
    (
        "shared-activation-is-computed-once",
        // %r has two users: linear->relu fuses, but the mean does not fuse across %r.
        "tensor<f32, cpu, 2>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %m: tensor<f32, cpu, 2> = mean %r, dim=1, keepdim=true
  %o: tensor<f32, cpu, 2> = add %r, %m
  return %o",
        "
  %r: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[relu], tail=none
  %m: tensor<f32, cpu, 2> = mean %r, dim=1, keepdim=true
  %o: tensor<f32, cpu, 2> = add %r, %m
  return %o",
    ),
    (
        "shared-linear-is-not-fused",
        "tensor<f32, cpu, 2>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %o: tensor<f32, cpu, 2> = add %r, %l
  return %o",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %o: tensor<f32, cpu, 2> = add %r, %l
  return %o",
    ),
    (
        "returned-activation-is-not-fused-across",
        // %r is returned: it stays a value of its own (here it is the fused op itself).
        "tensor<f32, cpu, 2>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %dead: tensor<f32, cpu, 2> = exp %r
  return %r",
        "
  %r: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[relu], tail=none
  %dead: tensor<f32, cpu, 2> = exp %r
  return %r",
    ),
    (
        "mean-over-dim-0-is-not-fused",
        "tensor<f32, cpu, 1>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %m: tensor<f32, cpu, 1> = mean %r, dim=0, keepdim=false
  return %m",
        "
  %r: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[relu], tail=none
  %m: tensor<f32, cpu, 1> = mean %r, dim=0, keepdim=false
  return %m",
    ),
    (
        "rank-1-mean-untouched",
        "tensor<f32, cpu, 1>",
        "
  %m: tensor<f32, cpu, 1> = mean %b, dim=0, keepdim=true
  return %m",
        "
  %m: tensor<f32, cpu, 1> = mean %b, dim=0, keepdim=true
  return %m",
    ),
    (
        "shared-root-still-fuses-inside",
        // `mul %m, %m` uses %m twice: %m is a tree of its own, fused as a whole.
        "tensor<f32, cpu, 2>",
        "
  %l: tensor<f32, cpu, 2> = linear %x, %w, %b
  %r: tensor<f32, cpu, 2> = relu %l
  %m: tensor<f32, cpu, 2> = mean %r, dim=1, keepdim=true
  %o: tensor<f32, cpu, 2> = mul %m, %m
  return %o",
        "
  %m: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[relu], tail=mean(dim=1, keepdim=true)
  %o: tensor<f32, cpu, 2> = mul %m, %m
  return %o",
    ),
    (
        "matmul-operator-bias-relu",
        "tensor<f32, cpu, 2>",
        "
  %mm: tensor<f32, cpu, 2> = matmul %x, %w
  %y: tensor<f32, cpu, 2> = add %mm, %b
  %r: tensor<f32, cpu, 2> = relu %y
  return %r",
        "
  %r: tensor<f32, cpu, 2> = fused_matmul %x, %w, %b, activations=[relu], tail=none
  return %r",
    ),
    (
        "shared-product-keeps-its-bias-add-apart",
        "tensor<f32, cpu, 2>",
        "
  %mm: tensor<f32, cpu, 2> = matmul %x, %w
  %y: tensor<f32, cpu, 2> = add %mm, %b
  %o: tensor<f32, cpu, 2> = mul %y, %mm
  return %o",
        "
  %mm: tensor<f32, cpu, 2> = matmul %x, %w
  %y: tensor<f32, cpu, 2> = add %mm, %b
  %o: tensor<f32, cpu, 2> = mul %y, %mm
  return %o",
    ),
    (
        "scoring-normalization-is-a-prologue",
        "tensor<f32, cpu, 2>",
        "
  %c: tensor<f32, cpu, 2> = sub %x, %b
  %n: tensor<f32, cpu, 2> = div %c, %b
  %h: tensor<f32, cpu, 2> = linear %n, %w, %b
  return %h",
        "
  %h: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, %b, %b, prologue=[sub, div], activations=[], tail=none
  return %h",
    ),
    (
        "shared-normalized-input-is-not-a-prologue",
        "tensor<f32, cpu, 2>",
        "
  %n: tensor<f32, cpu, 2> = sub %x, %b
  %h: tensor<f32, cpu, 2> = linear %n, %w, %b
  %o: tensor<f32, cpu, 2> = add %h, %n
  return %o",
        // (The shared value is the residual instead: read twice, computed once.)
        "
  %n: tensor<f32, cpu, 2> = sub %x, %b
  %o: tensor<f32, cpu, 2> = fused_linear %n, %w, %b, %n, activations=[], tail=none, residual=right
  return %o",
    ),
];

#[test]
fn function_rewrites() {
    let mut failures = Vec::new();
    for (name, ret, start, goal) in FUNCTION_CASES {
        let start = format!("{HEADER} -> {ret} {{{PARAMS}{start}\n}}\n");
        let goal = format!("{HEADER} -> {ret} {{{PARAMS}{goal}\n}}\n");
        let f = parse(&start);
        validate(&f).unwrap_or_else(|e| panic!("{name}: start must validate: {e:#?}"));
        let fused = match Fuse::default().run(f) {
            Ok(fused) => fused,
            Err(e) => {
                failures.push(format!("{name}: fuse failed: {e:#?}"));
                continue;
            }
        };
        if let Err(e) = validate(&fused) {
            failures.push(format!("{name}: fused function is invalid: {e:#?}"));
        }
        let got = print_function(&fused);
        let want = normalized(&goal);
        if got != want {
            failures.push(format!("{name}:\n--- got\n{got}--- want\n{want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A long activation chain: the iteration limit bounds how much is fused, never correctness,
/// and deep regions do not overflow the stack.
#[test]
fn long_chains_stay_valid() {
    for length in [ITER_LIMIT + 20, 1_000] {
        let mut body = String::from("\n  %a0: tensor<f32, cpu, 2> = linear %x, %w, %b");
        for i in 1..=length {
            body.push_str(&format!("\n  %a{i}: tensor<f32, cpu, 2> = exp %a{}", i - 1));
        }
        let text =
            format!("{HEADER} -> tensor<f32, cpu, 2> {{{PARAMS}{body}\n  return %a{length}\n}}\n");
        let fused = Fuse::default().run(parse(&text)).expect("fuse");
        validate(&fused).expect("valid");
        let fused_ops = fused
            .exprs
            .iter()
            .filter(|(_, e)| e.kind.mnemonic() == "fused_linear")
            .count();
        assert_eq!(fused_ops, 1, "length {length}");
        // Every op of the chain is still computed, fused or not: the returned value is the
        // linear of the three parameters followed by exactly `length` exps, in order.
        let (linear_inputs, activations) = chain_to_return(&fused);
        assert_eq!(
            linear_inputs,
            [ExprKind::Param(0), ExprKind::Param(1), ExprKind::Param(2)],
            "length {length}: the chain starts at linear(x, w, b)"
        );
        assert_eq!(
            activations.len(),
            length,
            "length {length}: every exp of the chain is applied once, fused or not"
        );
        assert!(
            activations.iter().all(|op| *op == UnaryOp::Exp),
            "length {length}: {activations:?}"
        );
    }
}

/// Walks back from the returned value through standalone unary ops and the activations of a
/// `fused_linear` to the `linear` at the start of the chain. Returns what the linear reads
/// (input, weight, bias) and the activations applied to it, first applied first.
fn chain_to_return(f: &Function) -> (Vec<ExprKind>, Vec<UnaryOp>) {
    let returned: Vec<ExprId> = f.returns().into_iter().collect();
    assert_eq!(returned.len(), 1, "one return");
    let mut activations = Vec::new();
    let mut at = returned[0];
    loop {
        match &f.exprs[at].kind {
            ExprKind::Unary { op, input } => {
                activations.push(*op);
                at = *input;
            }
            ExprKind::FusedLinear {
                input,
                weight,
                bias,
                activations: fused,
                tail: None,
                layout: WeightLayout::OutIn,
                ..
            } => {
                activations.extend(fused.iter().rev());
                return finish(f, [Some(*input), Some(*weight), *bias], activations);
            }
            ExprKind::Linear {
                input,
                weight,
                bias,
            } => return finish(f, [Some(*input), Some(*weight), *bias], activations),
            other => panic!("unexpected {} on the chain", other.mnemonic()),
        }
    }
}

fn finish(
    f: &Function,
    reads: [Option<ExprId>; 3],
    mut last_first: Vec<UnaryOp>,
) -> (Vec<ExprKind>, Vec<UnaryOp>) {
    last_first.reverse();
    let kinds = reads
        .into_iter()
        .flatten()
        .map(|id| f.exprs[id].kind.clone())
        .collect();
    (kinds, last_first)
}

/// Phase B with its arms unfused, and an unrelated scalar computation in the loop.
const PHASE_B_UNFUSED: &str = "\
fn inference(%x: tensor<f32, cpu, 2>, %wa: tensor<f32, cpu, 2>, %wb: tensor<f32, cpu, 2>, %ba: tensor<f32, cpu, 1>, %bb: tensor<f32, cpu, 1>, %depth: int, %phase: int) -> tensor<f32, cpu, 1> {
  %x: tensor<f32, cpu, 2> = param 0
  %wa: tensor<f32, cpu, 2> = param 1
  %wb: tensor<f32, cpu, 2> = param 2
  %ba: tensor<f32, cpu, 1> = param 3
  %bb: tensor<f32, cpu, 1> = param 4
  %depth: int = param 5
  %phase: int = param 6
  %zero: int = const.int 0
  %one: int = const.int 1
  %two: int = const.int 2
  for %layer: int in range(%zero, %depth, %one) carry(%hidden: tensor<f32, cpu, 2> = %x -> %out) {
    %s: int = scalar.add %layer, %phase
    %m: int = scalar.mod %s, %two
    %even: bool = scalar.eq %m, %zero
    if %even -> (%h: tensor<f32, cpu, 2>) {
      %a: tensor<f32, cpu, 2> = linear %hidden, %wa, %ba
      %b: tensor<f32, cpu, 2> = relu %a
      yield %b
    } else {
      %c: tensor<f32, cpu, 2> = linear %hidden, %wb, %bb
      %d: tensor<f32, cpu, 2> = tanh %c
      %e: tensor<f32, cpu, 2> = sigmoid %d
      yield %e
    }
    continue %h
  }
  %r: tensor<f32, cpu, 2> = relu %out
  %mean: tensor<f32, cpu, 1> = mean %r, dim=1, keepdim=false
  return %mean
}";

#[test]
fn regions_inside_control_flow_are_fused_one_by_one() {
    let f = support::parse(PHASE_B_UNFUSED);
    let fused = rextio_passes::default_pipeline()
        .validating(true)
        .run_with_dumps(f)
        .expect("the pipeline accepts control flow")
        .0;
    let text = rextio_ir::print_function(&fused);
    assert!(
        text.contains("fused_linear %hidden, %wa, %ba, activations=[relu], tail=none")
            || text.contains("activations=[relu], tail=none"),
        "{text}"
    );
    assert!(
        text.contains("activations=[tanh, sigmoid], tail=none"),
        "{text}"
    );
    // No linear survives unfused; the tail after the loop is not a linear, so it stays.
    assert!(!text.contains("= linear "), "{text}");
    assert!(
        text.contains("= relu %") && text.contains("= mean %"),
        "{text}"
    );
    // The scalar code and the statements are untouched.
    for kept in [
        "scalar.add",
        "scalar.mod",
        "scalar.eq",
        "for %",
        "if %",
        "yield",
        "continue",
        "return",
    ] {
        assert!(text.contains(kept), "{kept} lost:\n{text}");
    }
}

#[test]
fn a_region_reading_parameters_before_a_loop_is_fused() {
    // The scoring pipeline's head: tensor code over parameter reads, then a loop.
    let f = support::parse(
        "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %b: tensor<f32, cpu, 1>, %n: int) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %b: tensor<f32, cpu, 1> = param 2
  %n: int = param 3
  %h: tensor<f32, cpu, 2> = linear %x, %w, %b
  %a: tensor<f32, cpu, 2> = tanh %h
  %zero: int = const.int 0
  %one: int = const.int 1
  for %i: int in range(%zero, %n, %one) carry(%c: tensor<f32, cpu, 2> = %a -> %out) {
    %r: tensor<f32, cpu, 2> = relu %c
    continue %r
  }
  return %out
}",
    );
    let fused = rextio_passes::default_pipeline()
        .validating(true)
        .run_with_dumps(f)
        .expect("fuses")
        .0;
    let text = rextio_ir::print_function(&fused);
    assert!(
        text.contains("fused_linear %0, %1, %2, activations=[tanh], tail=none"),
        "{text}"
    );
}
