//! Functions shared by the text-format and graph tests.

#![allow(dead_code)] // each test binary uses a different subset

use rextio_ir::{
    BinaryOp, ExprKind, Function, FusedReduce, Param, ReduceKind, Stmt, TensorType, Type, UnaryOp,
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
    let x = f.push(ExprKind::Param(0), F32_2D);
    let w = f.push(ExprKind::Param(1), F32_2D);
    let b = f.push(ExprKind::Param(2), F32_1D);
    let hidden = f.push(
        ExprKind::Linear {
            input: x,
            weight: w,
            bias: Some(b),
        },
        F32_2D,
    );
    let act = f.push(
        ExprKind::Unary {
            op: UnaryOp::Relu,
            input: hidden,
        },
        F32_2D,
    );
    let out = f.push(
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
    let x = f.push(ExprKind::Param(0), F32_2D);
    let w = f.push(ExprKind::Param(1), F32_2D);
    let b = f.push(ExprKind::Param(2), F32_1D);
    let v = f.push(ExprKind::Param(3), F32_1D);
    f.names.insert(x, "x".to_string());
    f.push(ExprKind::ConstInt(-3), Type::Int);
    f.push(ExprKind::ConstInt(i64::MIN), Type::Int);
    f.push(ExprKind::ConstInt(i64::MAX), Type::Int);
    f.push(ExprKind::ConstBool(true), Type::Bool);
    f.push(ExprKind::ConstBool(false), Type::Bool);
    for op in UnaryOp::ALL {
        f.push(ExprKind::Unary { op, input: x }, F32_2D);
    }
    for op in BinaryOp::ALL {
        f.push(ExprKind::Binary { op, lhs: x, rhs: v }, F32_2D);
    }
    let hidden = f.push(
        ExprKind::Linear {
            input: x,
            weight: w,
            bias: Some(b),
        },
        F32_2D,
    );
    f.names.insert(hidden, "hidden".to_string());
    f.push(
        ExprKind::Linear {
            input: x,
            weight: w,
            bias: None,
        },
        F32_2D,
    );
    f.push(ExprKind::Matmul { lhs: x, rhs: w }, F32_2D);
    f.push(ExprKind::Matmul { lhs: x, rhs: v }, F32_1D);
    for kind in [ReduceKind::Mean, ReduceKind::Sum] {
        for keepdim in [false, true] {
            let ty = if keepdim { F32_2D } else { F32_1D };
            f.push(
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
    f.push(
        ExprKind::Reduce {
            kind: ReduceKind::Sum,
            input: hidden,
            dim: 0,
            keepdim: false,
        },
        F32_1D,
    );
    let probs = f.push(
        ExprKind::Softmax {
            input: hidden,
            dim: 1,
        },
        F32_2D,
    );
    f.names.insert(probs, "probs".to_string());
    f.push(
        ExprKind::Argmax {
            input: probs,
            dim: 1,
            keepdim: false,
        },
        I64_1D,
    );
    f.push(
        ExprKind::Argmax {
            input: probs,
            dim: 0,
            keepdim: true,
        },
        Type::Tensor(TensorType::I64_CPU_1D.with_rank(2)),
    );
    f.push(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: Some(b),
            activations: vec![],
            reduce: None,
        },
        F32_2D,
    );
    f.push(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: None,
            activations: vec![UnaryOp::Relu, UnaryOp::Tanh],
            reduce: Some(FusedReduce {
                kind: ReduceKind::Mean,
                dim: 1,
                keepdim: false,
            }),
        },
        F32_1D,
    );
    let fused = f.push(
        ExprKind::FusedLinear {
            input: x,
            weight: w,
            bias: Some(b),
            activations: UnaryOp::ALL.to_vec(),
            reduce: Some(FusedReduce {
                kind: ReduceKind::Sum,
                dim: 1,
                keepdim: true,
            }),
        },
        F32_2D,
    );
    f.names.insert(fused, "fused".to_string());
    f.body.stmts.push(Stmt::Return(fused));
    f
}
