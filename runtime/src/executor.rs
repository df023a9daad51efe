//! The executor: compiles an optimized IR function once into a flat instruction list over a
//! slot vector, so a call is a loop over a few instructions (no hashing, no tree walking).
//! This is what `rextio_torch.compile` runs; the backend emits the same calls as source.

use rextio_ir::{
    BinaryOp, Device, ExprKind, Function, FusedReduce, ReduceKind, Stmt, TensorType, Type, UnaryOp,
};
use tch::Tensor;

use crate::checks::{check_tensor_argument, given_note, EXPECTED_BOOL, EXPECTED_INT, NOT_A_TENSOR};
use crate::error::{Result, RuntimeError};
use crate::{kernels, ops};

/// A run-time value: what a parameter receives and what a function returns.
#[derive(Debug)]
pub enum Value {
    Tensor(Tensor),
    Int(i64),
    Bool(bool),
}

type Slot = usize;

#[derive(Debug)]
enum Instr {
    Int {
        value: i64,
        out: Slot,
    },
    Bool {
        value: bool,
        out: Slot,
    },
    Unary {
        op: UnaryOp,
        input: Slot,
        out: Slot,
    },
    Binary {
        op: BinaryOp,
        lhs: Slot,
        rhs: Slot,
        out: Slot,
    },
    Linear {
        input: Slot,
        weight: Slot,
        bias: Option<Slot>,
        out: Slot,
    },
    Matmul {
        lhs: Slot,
        rhs: Slot,
        out: Slot,
    },
    Reduce {
        kind: ReduceKind,
        input: Slot,
        dim: u8,
        keepdim: bool,
        out: Slot,
    },
    Softmax {
        input: Slot,
        dim: u8,
        out: Slot,
    },
    Argmax {
        input: Slot,
        dim: u8,
        keepdim: bool,
        out: Slot,
    },
    FusedLinear {
        input: Slot,
        weight: Slot,
        bias: Option<Slot>,
        activations: Box<[UnaryOp]>,
        reduce: Option<FusedReduce>,
        out: Slot,
    },
}

/// A compiled function. Immutable and `Sync`: one program serves every call and thread.
#[derive(Debug)]
pub struct Program {
    name: String,
    param_names: Vec<String>,
    param_types: Vec<Type>,
    ret: Type,
    instrs: Vec<Instr>,
    slot_count: usize,
    result: Slot,
}

fn unsupported<T>(message: impl Into<String>) -> Result<T> {
    Err(RuntimeError::Unsupported(message.into()))
}

impl Program {
    /// Compiles `f`, which should have passed validation; malformed IR is still an error here,
    /// never a panic.
    pub fn compile(f: &Function) -> Result<Program> {
        if let Some(p) = f.params.iter().find(|p| {
            matches!(
                p.ty,
                Type::Tensor(TensorType {
                    device: Device::Cuda0,
                    ..
                })
            )
        }) {
            return unsupported(format!(
                "parameter `{}` is a cuda:0 tensor: the cuda:0 slice is build-only (emit it with `rextio-torch emit`); the in-process executor runs CPU functions",
                p.name
            ));
        }
        let params = f.params.len();
        let mut slot_of = Vec::with_capacity(f.exprs.len());
        let mut instrs = Vec::new();
        let mut next_slot = params;
        for (index, (_, expr)) in f.exprs.iter().enumerate() {
            let operand = |id: rextio_ir::ExprId| -> Result<Slot> {
                let i = id.into_raw().into_u32() as usize;
                if i < index {
                    Ok(slot_of[i])
                } else {
                    unsupported(format!(
                        "expression %{index} uses %{i}, which is not defined before it"
                    ))
                }
            };
            if let ExprKind::Param(p) = expr.kind {
                if p as usize >= params {
                    return unsupported(format!(
                        "expression %{index} reads parameter {p}, which does not exist"
                    ));
                }
                slot_of.push(p as usize);
                continue;
            }
            let out = next_slot;
            next_slot += 1;
            let instr = match &expr.kind {
                ExprKind::Param(_) => unreachable_param()?,
                ExprKind::ConstInt(value) => Instr::Int { value: *value, out },
                ExprKind::ConstBool(value) => Instr::Bool { value: *value, out },
                ExprKind::Unary { op, input } => Instr::Unary {
                    op: *op,
                    input: operand(*input)?,
                    out,
                },
                ExprKind::Binary { op, lhs, rhs } => Instr::Binary {
                    op: *op,
                    lhs: operand(*lhs)?,
                    rhs: operand(*rhs)?,
                    out,
                },
                ExprKind::Linear {
                    input,
                    weight,
                    bias,
                } => Instr::Linear {
                    input: operand(*input)?,
                    weight: operand(*weight)?,
                    bias: bias.map(operand).transpose()?,
                    out,
                },
                ExprKind::Matmul { lhs, rhs } => Instr::Matmul {
                    lhs: operand(*lhs)?,
                    rhs: operand(*rhs)?,
                    out,
                },
                ExprKind::Reduce {
                    kind,
                    input,
                    dim,
                    keepdim,
                } => Instr::Reduce {
                    kind: *kind,
                    input: operand(*input)?,
                    dim: *dim,
                    keepdim: *keepdim,
                    out,
                },
                ExprKind::Softmax { input, dim } => Instr::Softmax {
                    input: operand(*input)?,
                    dim: *dim,
                    out,
                },
                ExprKind::Argmax {
                    input,
                    dim,
                    keepdim,
                } => Instr::Argmax {
                    input: operand(*input)?,
                    dim: *dim,
                    keepdim: *keepdim,
                    out,
                },
                ExprKind::FusedLinear {
                    input,
                    weight,
                    bias,
                    activations,
                    reduce,
                } => Instr::FusedLinear {
                    input: operand(*input)?,
                    weight: operand(*weight)?,
                    bias: bias.map(operand).transpose()?,
                    activations: activations.clone().into_boxed_slice(),
                    reduce: *reduce,
                    out,
                },
            };
            slot_of.push(out);
            instrs.push(instr);
        }
        let result = match f.body.stmts.as_slice() {
            [Stmt::Return(id)] => {
                let i = id.into_raw().into_u32() as usize;
                match slot_of.get(i) {
                    Some(slot) => *slot,
                    None => return unsupported(format!("return of %{i}, which is not defined")),
                }
            }
            _ => {
                return unsupported("the executor runs functions whose body is exactly one return")
            }
        };
        Ok(Program {
            name: f.name.clone(),
            param_names: f.params.iter().map(|p| p.name.clone()).collect(),
            param_types: f.params.iter().map(|p| p.ty).collect(),
            ret: f.ret,
            instrs,
            slot_count: next_slot,
            result,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn param_names(&self) -> &[String] {
        &self.param_names
    }

    pub fn param_types(&self) -> &[Type] {
        &self.param_types
    }

    pub fn ret(&self) -> Type {
        self.ret
    }

    /// Runs the program under a no-grad guard. Arguments are checked against the parameter
    /// types (same messages as the Python boundary); inputs are never written.
    pub fn run(&self, args: Vec<Value>) -> Result<Value> {
        if args.len() != self.param_types.len() {
            return Err(RuntimeError::ArgumentType(format!(
                "{}() takes {} arguments but {} were given",
                self.name,
                self.param_types.len(),
                args.len()
            )));
        }
        for ((arg, ty), param) in args.iter().zip(&self.param_types).zip(&self.param_names) {
            check_argument(arg, *ty, param)?;
        }
        self.run_checked(args)
    }

    /// Runs with arguments already checked by the caller (the Python boundary).
    pub fn run_checked(&self, args: Vec<Value>) -> Result<Value> {
        let _no_grad = tch::no_grad_guard();
        let mut slots: Vec<Option<Value>> = Vec::with_capacity(self.slot_count);
        slots.extend(args.into_iter().map(Some));
        slots.resize_with(self.slot_count, || None);
        for instr in &self.instrs {
            let (out, value) = self.step(instr, &slots)?;
            slots[out] = Some(value);
        }
        match slots.get_mut(self.result).and_then(Option::take) {
            Some(value) => Ok(value),
            None => unsupported("the result slot was never written"),
        }
    }

    fn step(&self, instr: &Instr, slots: &[Option<Value>]) -> Result<(Slot, Value)> {
        let t = |slot: Slot| tensor_at(slots, slot);
        Ok(match instr {
            Instr::Int { value, out } => (*out, Value::Int(*value)),
            Instr::Bool { value, out } => (*out, Value::Bool(*value)),
            Instr::Unary { op, input, out } => (*out, Value::Tensor(ops::unary(*op, t(*input)?)?)),
            Instr::Binary { op, lhs, rhs, out } => {
                (*out, Value::Tensor(ops::binary(*op, t(*lhs)?, t(*rhs)?)?))
            }
            Instr::Linear {
                input,
                weight,
                bias,
                out,
            } => {
                let bias = bias.map(t).transpose()?;
                (
                    *out,
                    Value::Tensor(ops::linear(t(*input)?, t(*weight)?, bias)?),
                )
            }
            Instr::Matmul { lhs, rhs, out } => {
                (*out, Value::Tensor(ops::matmul(t(*lhs)?, t(*rhs)?)?))
            }
            Instr::Reduce {
                kind,
                input,
                dim,
                keepdim,
                out,
            } => (
                *out,
                Value::Tensor(ops::reduce(*kind, t(*input)?, *dim, *keepdim)?),
            ),
            Instr::Softmax { input, dim, out } => {
                (*out, Value::Tensor(ops::softmax(t(*input)?, *dim)?))
            }
            Instr::Argmax {
                input,
                dim,
                keepdim,
                out,
            } => (
                *out,
                Value::Tensor(ops::argmax(t(*input)?, *dim, *keepdim)?),
            ),
            Instr::FusedLinear {
                input,
                weight,
                bias,
                activations,
                reduce,
                out,
            } => {
                let bias = bias.map(t).transpose()?;
                let y = kernels::fused_linear(t(*input)?, t(*weight)?, bias, activations, *reduce)?;
                (*out, Value::Tensor(y))
            }
        })
    }
}

fn unreachable_param() -> Result<Instr> {
    unsupported("internal: parameter reads take no instruction")
}

fn tensor_at(slots: &[Option<Value>], slot: Slot) -> Result<&Tensor> {
    match slots.get(slot) {
        Some(Some(Value::Tensor(t))) => Ok(t),
        Some(Some(_)) => unsupported(format!(
            "slot {slot} holds a scalar where a tensor is needed"
        )),
        _ => unsupported(format!("slot {slot} is read before it is written")),
    }
}

/// Checks argument `param` against its parameter type; messages as at the Python boundary.
pub fn check_argument(value: &Value, ty: Type, param: &str) -> Result<()> {
    let given = match value {
        Value::Tensor(_) => "is a tensor",
        Value::Int(_) => "is an int",
        Value::Bool(_) => "is a bool",
    };
    let wrong = |message: &str| {
        Err(RuntimeError::ArgumentType(format!(
            "{message} {}",
            given_note(param, Some(given))
        )))
    };
    match (value, ty) {
        (Value::Tensor(t), Type::Tensor(expected)) => check_tensor_argument(t, expected, param),
        (Value::Int(_), Type::Int) | (Value::Bool(_), Type::Bool) => Ok(()),
        (_, Type::Tensor(_)) => wrong(NOT_A_TENSOR),
        (_, Type::Int) => wrong(EXPECTED_INT),
        (_, Type::Bool) => wrong(EXPECTED_BOOL),
    }
}
