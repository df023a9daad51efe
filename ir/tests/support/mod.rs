//! Functions shared by the text-format and graph tests.

#![allow(dead_code)] // each test binary uses a different subset

use rextio_ir::{
    BagMode, BinaryOp, ExprKind, FloatBits, Function, FusedReduce, FusedTail, JoinKind,
    NormPrologue, Param, PrologueStep, ReduceKind, Residual, SoftmaxKind, Stmt, TensorType, Type,
    UnaryOp, WeightLayout,
};

pub const F32_2D: Type = Type::Tensor(TensorType::F32_CPU_2D);
pub const F32_1D: Type = Type::Tensor(TensorType::F32_CPU_1D);
pub const I64_1D: Type = Type::Tensor(TensorType::I64_CPU_1D);

fn param(name: &str, ty: Type) -> Param {
    Param {
        name: name.to_string(),
        ty,
    }
}

/// The Phase A example: `mean(relu(linear(x, weight, bias)), dim=1)`.
pub fn phase_a() -> Function {
    let mut f = Function::new(
        "inference",
        vec![
            param("x", F32_2D),
            param("weight", F32_2D),
            param("bias", F32_1D),
        ],
        F32_1D,
    );
    let x = f.push_let(ExprKind::Param(0), F32_2D);
    let w = f.push_let(ExprKind::Param(1), F32_2D);
    let b = f.push_let(ExprKind::Param(2), F32_1D);
    let hidden = f.push_let(
        ExprKind::Linear {
            input: x,
            weight: w,
            bias: Some(b),
        },
        F32_2D,
    );
    let act = f.push_let(
        ExprKind::Unary {
            op: UnaryOp::Relu,
            input: hidden,
        },
        F32_2D,
    );
    let out = f.push_let(
        ExprKind::Reduce {
            kind: ReduceKind::Mean,
            input: act,
            dim: 1,
            keepdim: false,
        },
        F32_1D,
    );
    f.body.stmts.push(Stmt::Return(out));
    f
}

/// One function that holds every op kind and every attribute form (it need not type-check:
/// the text format is syntax only). Some values carry source names.
pub fn every_op() -> Function {
    let mut f = Function::new(
        "every_op",
        vec![
            param("x", F32_2D),
            param("w", F32_2D),
            param("b", F32_1D),
            param("v", F32_1D),
        ],
        F32_2D,
    );
    let x = f.push_let(ExprKind::Param(0), F32_2D);
    let w = f.push_let(ExprKind::Param(1), F32_2D);
    let b = f.push_let(ExprKind::Param(2), F32_1D);
    let v = f.push_let(ExprKind::Param(3), F32_1D);
    f.names.insert(x, "x".to_string());
    let minus_three = f.push_let(ExprKind::ConstInt(-3), Type::Int);
    f.push_let(ExprKind::ConstInt(i64::MIN), Type::Int);
    f.push_let(ExprKind::ConstInt(i64::MAX), Type::Int);
    f.push_let(ExprKind::ConstBool(true), Type::Bool);
    f.push_let(ExprKind::ConstBool(false), Type::Bool);
    for op in UnaryOp::ALL {
        f.push_let(ExprKind::Unary { op, input: x }, F32_2D);
    }
    for op in BinaryOp::ALL {
        f.push_let(ExprKind::Binary { op, lhs: x, rhs: v }, F32_2D);
    }
    let hidden = f.push_let(
        ExprKind::Linear {
            input: x,
            weight: w,
            bias: Some(b),
        },
        F32_2D,
    );
    f.names.insert(hidden, "hidden".to_string());
    f.push_let(
        ExprKind::Linear {
            input: x,
            weight: w,
            bias: None,
        },
        F32_2D,
    );
    f.push_let(ExprKind::Matmul { lhs: x, rhs: w }, F32_2D);
    f.push_let(ExprKind::Matmul { lhs: x, rhs: v }, F32_1D);
    for kind in [ReduceKind::Mean, ReduceKind::Sum] {
        for keepdim in [false, true] {
            let ty = if keepdim { F32_2D } else { F32_1D };
            f.push_let(
                ExprKind::Reduce {
                    kind,
                    input: hidden,
                    dim: 1,
                    keepdim,
                },
                ty,
            );
        }
    }
    f.push_let(
        ExprKind::Reduce {
            kind: ReduceKind::Sum,
            input: hidden,
            dim: 0,
            keepdim: false,
        },
        F32_1D,
    );
    for kind in [ReduceKind::Amax, ReduceKind::Amin] {
        f.push_let(
            ExprKind::Reduce {
                kind,
                input: hidden,
                dim: 1,
                keepdim: true,
            },
            F32_2D,
        );
    }
    f.push_let(
        ExprKind::Softmax {
            kind: SoftmaxKind::LogSoftmax,
            input: hidden,
            dim: 0,
        },
        F32_2D,
    );
    let probs = f.push_let(
        ExprKind::Softmax {
            kind: SoftmaxKind::Softmax,
            input: hidden,
            dim: 1,
        },
        F32_2D,
    );
    f.names.insert(probs, "probs".to_string());
    let ids = f.push_let(
        ExprKind::Argmax {
            input: probs,
            dim: 1,
            keepdim: false,
        },
        I64_1D,
    );
    f.push_let(
        ExprKind::Argmax {
            input: probs,
            dim: 0,
            keepdim: true,
        },
        Type::Tensor(TensorType::I64_CPU_1D.with_rank(2)),
    );
    // Joins: a variable number of operands (two, one, three).
    f.push_let(
        ExprKind::Join {
            kind: JoinKind::Cat,
            parts: vec![x, x],
            dim: 1,
        },
        F32_2D,
    );
    f.push_let(
        ExprKind::Join {
            kind: JoinKind::Cat,
            parts: vec![v],
            dim: 0,
        },
        F32_1D,
    );
    f.push_let(
        ExprKind::Join {
            kind: JoinKind::Stack,
            parts: vec![v, v, v],
            dim: 1,
        },
        F32_2D,
    );
    // A scalar boundary call back into Python: one or more scalar arguments, a declared
    // scalar result, a (possibly qualified) Python name.
    let back = f.push_let(
        ExprKind::BoundaryCall {
            callee: "inc".to_string(),
            args: vec![minus_three],
            ret: Type::Int,
        },
        Type::Int,
    );
    f.push_let(
        ExprKind::BoundaryCall {
            callee: "kernels.scale_2".to_string(),
            args: vec![minus_three, back],
            ret: Type::Float,
        },
        Type::Float,
    );
    f.push_let(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: Some(b),
            prologue: vec![],
            activations: vec![],
            tail: None,
            layout: WeightLayout::OutIn,
            bias_added: false,
            residual: None,
            norm: None,
        },
        F32_2D,
    );
    f.push_let(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: None,
            prologue: vec![
                PrologueStep {
                    op: BinaryOp::Sub,
                    operand: b,
                },
                PrologueStep {
                    op: BinaryOp::Div,
                    operand: b,
                },
            ],
            activations: vec![UnaryOp::Relu, UnaryOp::Tanh],
            tail: Some(FusedTail::Reduce(FusedReduce {
                kind: ReduceKind::Mean,
                dim: 1,
                keepdim: false,
            })),
            layout: WeightLayout::InOut,
            bias_added: false,
            residual: None,
            norm: None,
        },
        F32_1D,
    );
    f.push_let(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: Some(b),
            prologue: vec![],
            activations: vec![UnaryOp::Tanh],
            tail: Some(FusedTail::Softmax {
                kind: SoftmaxKind::Softmax,
                dim: 1,
            }),
            layout: WeightLayout::OutIn,
            bias_added: true,
            residual: None,
            norm: None,
        },
        F32_2D,
    );
    f.push_let(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: Some(b),
            prologue: vec![],
            activations: vec![],
            tail: Some(FusedTail::Softmax {
                kind: SoftmaxKind::LogSoftmax,
                dim: 1,
            }),
            layout: WeightLayout::OutIn,
            bias_added: false,
            residual: None,
            norm: None,
        },
        F32_2D,
    );
    f.push_let(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: None,
            prologue: vec![],
            activations: vec![],
            tail: Some(FusedTail::Argmax {
                dim: 1,
                keepdim: false,
            }),
            layout: WeightLayout::InOut,
            bias_added: false,
            residual: None,
            norm: None,
        },
        Type::Tensor(TensorType::I64_CPU_1D),
    );
    f.push_let(
        ExprKind::LayerNorm {
            input: x,
            normalized: minus_three,
            weight: Some(v),
            bias: Some(b),
            eps: FloatBits::new(1e-5),
        },
        F32_2D,
    );
    f.push_let(
        ExprKind::LayerNorm {
            input: v,
            normalized: minus_three,
            weight: None,
            bias: None,
            eps: FloatBits::new(0.0),
        },
        F32_1D,
    );
    f.push_let(ExprKind::Embedding { ids, weight: w }, F32_2D);
    for mode in BagMode::ALL {
        f.push_let(
            ExprKind::EmbeddingBag {
                ids,
                weight: w,
                offsets: ids,
                mode,
            },
            F32_2D,
        );
    }
    // Residuals on either side, after a prologue and an added bias.
    for (first, bias_added) in [(true, false), (false, true)] {
        f.push_let(
            ExprKind::FusedLinear {
                input: x,
                weight: w,
                bias: Some(b),
                prologue: vec![PrologueStep {
                    op: BinaryOp::Mul,
                    operand: b,
                }],
                activations: vec![UnaryOp::Gelu],
                tail: None,
                layout: WeightLayout::OutIn,
                bias_added,
                residual: Some(Residual { operand: x, first }),
                norm: None,
            },
            F32_2D,
        );
    }
    // Row normalizations, with and without weight and bias.
    let normalized = f.push_let(ExprKind::ConstInt(8), Type::Int);
    for affine in [true, false] {
        f.push_let(
            ExprKind::FusedLinear {
                input: x,
                weight: w,
                bias: None,
                prologue: vec![PrologueStep {
                    op: BinaryOp::Add,
                    operand: b,
                }],
                activations: vec![],
                tail: None,
                layout: WeightLayout::OutIn,
                bias_added: false,
                residual: Some(Residual {
                    operand: x,
                    first: false,
                }),
                norm: Some(NormPrologue {
                    normalized,
                    weight: affine.then_some(b),
                    bias: affine.then_some(b),
                    eps: FloatBits::new(1e-5),
                }),
            },
            F32_2D,
        );
    }
    let fused = f.push_let(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: Some(b),
            prologue: vec![],
            // Every activation a fused op may carry (not a position-dependent one).
            activations: UnaryOp::ALL
                .into_iter()
                .filter(|op| !op.depends_on_position())
                .collect(),
            tail: Some(FusedTail::Reduce(FusedReduce {
                kind: ReduceKind::Sum,
                dim: 1,
                keepdim: true,
            })),
            layout: WeightLayout::OutIn,
            bias_added: false,
            residual: None,
            norm: None,
        },
        F32_2D,
    );
    f.names.insert(fused, "fused".to_string());
    f.body.stmts.push(Stmt::Return(fused));
    f
}

/// The seed's Phase B program with a `while`, an early return and scalar arithmetic added,
/// in the text form: every statement kind and every scalar op once.
pub const CONTROL_FLOW_TEXT: &str = "\
fn phase_b(%x: tensor<f32, cpu, 2>, %wa: tensor<f32, cpu, 2>, %ba: tensor<f32, cpu, 1>, %depth: int, %phase: int, %scale: float) -> tensor<f32, cpu, 1> {
  %0: tensor<f32, cpu, 2> = param 0  # x
  %1: tensor<f32, cpu, 2> = param 1  # wa
  %2: tensor<f32, cpu, 1> = param 2  # ba
  %3: int = param 3  # depth
  %4: int = param 4  # phase
  %5: float = param 5  # scale
  %6: int = const.int 0
  %7: int = const.int 1
  %8: int = const.int 2
  %9: float = const.float 1e-7
  %10: float = const.float -inf
  %11: float = const.float nan
  for %12: int in range(%6, %3, %7) carry(%13: tensor<f32, cpu, 2> = %0 -> %14) {
    %15: int = scalar.add %12, %4  # layer
    %16: int = scalar.mod %15, %8
    %17: bool = scalar.eq %16, %6
    if %17 -> (%18: tensor<f32, cpu, 2>) {
      %19: tensor<f32, cpu, 2> = linear %13, %1, %2
      %20: tensor<f32, cpu, 2> = relu %19
      yield %20
    } else {
      %21: tensor<f32, cpu, 2> = linear %13, %1
      %22: tensor<f32, cpu, 2> = tanh %21
      yield %22
    }
    %23: bool = scalar.gt %12, %8
    if %23 {
      break %18
    } else {
      yield
    }
    continue %18
  }
  while carry(%24: int = %3 -> %25, %26: tensor<f32, cpu, 2> = %14 -> %27) {
    %28: bool = scalar.lt %6, %24
    test %28
  } do {
    %29: int = scalar.floordiv %24, %8
    %30: int = scalar.sub %29, %7
    %31: int = scalar.mul %30, %7
    %32: int = scalar.neg %31
    %33: bool = scalar.not %28
    %34: bool = scalar.truth %32
    %35: bool = scalar.ne %33, %34
    %36: bool = scalar.le %6, %7
    %37: bool = scalar.ge %6, %7
    %38: float = scalar.truediv %5, %9
    if %35 {
      return %37
    } else {
      yield
    }
    continue %31, %26
  }
  for %39: int in values[3, -1, 0] {
    continue
  }
  %40: tensor<f32, cpu, 1> = mean %27, dim=1, keepdim=false
  return %40
}
";
