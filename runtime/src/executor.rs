//! The executor: compiles an optimized IR function once into a flat instruction list over a
//! slot vector, so a call is a loop over a few instructions (no hashing, no tree walking).
//! This is what `rextio_torch.compile` runs; the backend emits the same calls as source.
//!
//! Structured control flow becomes jumps: a loop is a head instruction that binds the next
//! index (or tests the condition) and jumps past the body when it is done; `continue` moves
//! the new carried values into the carried slots (through temporaries, so `continue b, a`
//! swaps correctly) and jumps back; an `if` is a conditional jump. Values move between slots
//! instead of being copied where the source dies at the move (a value computed in the loop
//! body or the arm), so an iteration allocates nothing but the tensors its ops create. Back
//! edges call an interrupt check at a bounded rate (see [`INTERRUPT_INTERVAL`]).

use std::time::{Duration, Instant};

use rextio_ir::{
    BinaryOp, Block, Carried, Device, ExprId, ExprKind, Function, FusedReduce, FusedTail,
    Iteration, ReduceKind, ScalarOp, ScalarUnaryOp, Stmt, TensorType, Type, UnaryOp, WeightLayout,
};
use tch::Tensor;

use crate::checks::{check_tensor_argument, given_note, EXPECTED_BOOL, EXPECTED_INT, NOT_A_TENSOR};
use crate::control::Range;
use crate::dense::{self, Buffer, Dims, TensorRef, F32};
use crate::error::{Result, RuntimeError};
use crate::kernels::{Epilogue, KernelPath, LinearDims};
use crate::scalar::{self, Scalar};
use crate::{kernels, ops};

/// Expected message for a float parameter given something else.
pub const EXPECTED_FLOAT: &str = "rextio-torch: expected a float";

/// At least this long passes between two interrupt checks of a running loop, so that a check
/// (which takes the GIL) costs nothing measurable, while Ctrl-C still answers promptly.
pub const INTERRUPT_INTERVAL: Duration = Duration::from_millis(20);
/// A loop's first interrupt check comes once it has run about this long. The Python boundary
/// keeps the GIL through a small call and lets it go at this first check, so a short loop
/// never pays for releasing it, and no call holds it much longer than this.
pub const FIRST_INTERRUPT_CHECK: Duration = Duration::from_millis(1);
/// The clock is first read at this back edge (a loop of a few iterations never reads it),
/// then at twice as many edges each time, up to one read per [`CLOCK_EVERY`] edges.
const FIRST_CLOCK_EDGE: u32 = 8;
/// Back edges between two reads of the clock, at most.
const CLOCK_EVERY: u32 = 256;

/// A run-time value: what a parameter receives and what a function returns.
#[derive(Debug)]
pub enum Value {
    Tensor(Tensor),
    Int(i64),
    Bool(bool),
    Float(f64),
}

type Slot = usize;
/// An instruction index.
type Pc = usize;

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
    Float {
        value: f64,
        out: Slot,
    },
    Scalar {
        op: ScalarOp,
        lhs: Slot,
        rhs: Slot,
        out: Slot,
    },
    ScalarUnary {
        op: ScalarUnaryOp,
        input: Slot,
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
        /// The weight is an argument read inside a loop: worth transposing once per call.
        reused: bool,
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
        prologue: Box<[(BinaryOp, Slot)]>,
        activations: Box<[UnaryOp]>,
        tail: Option<FusedTail>,
        layout: WeightLayout,
        out: Slot,
        reused: bool,
        /// The bias was written `+ b` after the product: a wrong size is the addition's error.
        bias_added: bool,
    },
    /// `to = from`, moving when `from` dies here, else sharing the value (a tensor handle).
    Move {
        from: Slot,
        to: Slot,
        take: bool,
    },
    Jump {
        target: Pc,
    },
    /// A loop's back edge: an interrupt check at a bounded rate, then a jump.
    Back {
        target: Pc,
    },
    JumpIfFalse {
        cond: Slot,
        target: Pc,
    },
    /// Starts `range(start, stop, step)` for loop state `state` (a zero step is Python's
    /// `ValueError`).
    RangeInit {
        start: Slot,
        stop: Slot,
        step: Slot,
        state: usize,
    },
    /// Starts iterating over literal values.
    ValuesInit {
        state: usize,
    },
    /// Binds the next index of loop state `state` to `index`, or jumps to `exit` when done.
    Next {
        state: usize,
        index: Slot,
        exit: Pc,
    },
    Return {
        value: Slot,
    },
}

/// The run-time state of one `for` loop: a range, or a position in a literal list.
#[derive(Clone, Debug)]
enum LoopState {
    Range(Range),
    Values { list: usize, position: usize },
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
    /// The literal value lists of `for` loops, by loop state.
    value_lists: Vec<Option<Box<[i64]>>>,
    /// By instruction: whether it computes a value a `return` hands back as it is (its
    /// buffer can then be the result tensor itself).
    returned: Vec<bool>,
}

/// The slot a computing instruction writes.
fn instr_out(instr: &Instr) -> Option<Slot> {
    match instr {
        Instr::Int { out, .. }
        | Instr::Bool { out, .. }
        | Instr::Float { out, .. }
        | Instr::Scalar { out, .. }
        | Instr::ScalarUnary { out, .. }
        | Instr::Unary { out, .. }
        | Instr::Binary { out, .. }
        | Instr::Linear { out, .. }
        | Instr::Matmul { out, .. }
        | Instr::Reduce { out, .. }
        | Instr::Softmax { out, .. }
        | Instr::Argmax { out, .. }
        | Instr::FusedLinear { out, .. } => Some(*out),
        _ => None,
    }
}

fn unsupported<T>(message: impl Into<String>) -> Result<T> {
    Err(RuntimeError::Unsupported(message.into()))
}

fn raw(id: ExprId) -> usize {
    id.into_raw().into_u32() as usize
}

/// What `continue`, `break` and `yield` compile against.
enum Frame {
    Loop {
        args: Vec<Slot>,
        results: Vec<Slot>,
        head: Pc,
        /// `Jump`s to patch with the loop's end (breaks).
        exits: Vec<Pc>,
        /// Values placed in the body die at the end of an iteration.
        body_values: Vec<bool>,
    },
    Arm {
        results: Vec<Slot>,
        ends: Vec<Pc>,
        arm_values: Vec<bool>,
    },
}

/// Compiles a function's statements into instructions.
struct Compiler<'f> {
    f: &'f Function,
    slot_of: Vec<Option<Slot>>,
    next_slot: Slot,
    instrs: Vec<Instr>,
    frames: Vec<Frame>,
    value_lists: Vec<Option<Box<[i64]>>>,
    /// While-condition blocks being compiled: they run every iteration, like a body.
    conditions: usize,
}

impl<'f> Compiler<'f> {
    fn slot(&self, id: ExprId) -> Result<Slot> {
        match self.slot_of.get(raw(id)).copied().flatten() {
            Some(slot) => Ok(slot),
            None => unsupported(format!("%{} is used before it is placed", raw(id))),
        }
    }

    fn fresh(&mut self) -> Slot {
        let slot = self.next_slot;
        self.next_slot += 1;
        slot
    }

    /// A slot for a value a statement binds (it lives in the enclosing frames' iteration or
    /// arm, like a value a `let` places there).
    fn bind(&mut self, id: ExprId) -> Result<Slot> {
        let slot = self.fresh();
        match self.slot_of.get_mut(raw(id)) {
            Some(entry) => {
                *entry = Some(slot);
                self.mark_placed(id);
                Ok(slot)
            }
            None => unsupported(format!("%{} does not exist", raw(id))),
        }
    }

    fn mark_placed(&mut self, id: ExprId) {
        for frame in &mut self.frames {
            let placed = match frame {
                Frame::Loop { body_values, .. } => body_values,
                Frame::Arm { arm_values, .. } => arm_values,
            };
            if let Some(entry) = placed.get_mut(raw(id)) {
                *entry = true;
            }
        }
    }

    /// Moves `values` into `targets` through fresh temporaries (a parallel assignment);
    /// `dies(value)` says whether the source can be moved out.
    fn parallel_move(
        &mut self,
        values: &[ExprId],
        targets: &[Slot],
        dies: &dyn Fn(ExprId) -> bool,
    ) -> Result<()> {
        if values.len() != targets.len() {
            return unsupported("a statement passes the wrong number of values");
        }
        let mut temps = Vec::with_capacity(values.len());
        for (i, value) in values.iter().enumerate() {
            let from = self.slot(*value)?;
            let temp = self.fresh();
            // One value may fill several targets (`continue %12, %12` once the optimizer
            // merged two equal expressions, or `a = z; b = z`): only its last use may move
            // it out of its slot, the earlier ones share it.
            let last_use = !values[i + 1..].contains(value);
            self.instrs.push(Instr::Move {
                from,
                to: temp,
                take: last_use && dies(*value),
            });
            temps.push(temp);
        }
        for (temp, to) in temps.into_iter().zip(targets) {
            self.instrs.push(Instr::Move {
                from: temp,
                to: *to,
                take: true,
            });
        }
        Ok(())
    }

    fn block(&mut self, block: &Block) -> Result<()> {
        for stmt in &block.stmts {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn carried_entry(&mut self, carried: &[Carried]) -> Result<(Vec<Slot>, Vec<Slot>)> {
        let mut args = Vec::with_capacity(carried.len());
        let mut inits = Vec::with_capacity(carried.len());
        for c in carried {
            inits.push(c.init);
            args.push(self.bind(c.arg)?);
        }
        // Initial values may be used again after the loop, so they are shared, not moved.
        self.parallel_move(&inits, &args, &|_| false)?;
        let mut results = Vec::with_capacity(carried.len());
        for c in carried {
            results.push(self.bind(c.result)?);
        }
        Ok((args, results))
    }

    /// The loop body, then its normal exit (the carried values become the results) and the
    /// patching of `break`s.
    /// `body_values` marks what the iteration placed before the body (a `while` test's
    /// values).
    fn loop_body(
        &mut self,
        head: Pc,
        args: Vec<Slot>,
        results: Vec<Slot>,
        body: &Block,
        exit_jumps: Vec<Pc>,
        body_values: Vec<bool>,
    ) -> Result<()> {
        self.frames.push(Frame::Loop {
            args: args.clone(),
            results: results.clone(),
            head,
            exits: Vec::new(),
            body_values,
        });
        self.block(body)?;
        let Some(Frame::Loop { exits, .. }) = self.frames.pop() else {
            return unsupported("internal: loop frame lost");
        };
        let normal_exit = self.instrs.len();
        for (arg, result) in args.iter().zip(&results) {
            self.instrs.push(Instr::Move {
                from: *arg,
                to: *result,
                take: true,
            });
        }
        let end = self.instrs.len();
        for at in exit_jumps {
            self.patch(at, normal_exit)?;
        }
        for at in exits {
            self.patch(at, end)?;
        }
        Ok(())
    }

    fn patch(&mut self, at: Pc, to: Pc) -> Result<()> {
        match self.instrs.get_mut(at) {
            Some(Instr::Jump { target })
            | Some(Instr::JumpIfFalse { target, .. })
            | Some(Instr::Next { exit: target, .. }) => {
                *target = to;
                Ok(())
            }
            _ => unsupported("internal: patching a non-jump"),
        }
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<()> {
        match stmt {
            Stmt::Let(id) => self.let_(*id),
            Stmt::Return(value) => {
                let value = self.slot(*value)?;
                self.instrs.push(Instr::Return { value });
                Ok(())
            }
            Stmt::For(l) => {
                let state = self.value_lists.len();
                match &l.iteration {
                    Iteration::Range { start, stop, step } => {
                        let (start, stop, step) =
                            (self.slot(*start)?, self.slot(*stop)?, self.slot(*step)?);
                        self.value_lists.push(None);
                        self.instrs.push(Instr::RangeInit {
                            start,
                            stop,
                            step,
                            state,
                        });
                    }
                    Iteration::Values(values) => {
                        self.value_lists
                            .push(Some(values.clone().into_boxed_slice()));
                        self.instrs.push(Instr::ValuesInit { state });
                    }
                }
                let (args, results) = self.carried_entry(&l.carried)?;
                let index = self.bind(l.index)?;
                let head = self.instrs.len();
                self.instrs.push(Instr::Next {
                    state,
                    index,
                    exit: usize::MAX,
                });
                let placed = vec![false; self.f.exprs.len()];
                self.loop_body(head, args, results, &l.body, vec![head], placed)
            }
            Stmt::While(l) => {
                let (args, results) = self.carried_entry(&l.carried)?;
                let head = self.instrs.len();
                // The condition block's values live in the iteration, like the body's.
                self.frames.push(Frame::Arm {
                    results: Vec::new(),
                    ends: Vec::new(),
                    arm_values: vec![false; self.f.exprs.len()],
                });
                self.conditions += 1;
                self.block(&l.cond_block)?;
                self.conditions -= 1;
                let Some(Frame::Arm {
                    arm_values: cond_values,
                    ..
                }) = self.frames.pop()
                else {
                    return unsupported("internal: condition frame lost");
                };
                let cond = self.slot(l.cond)?;
                let test = self.instrs.len();
                self.instrs.push(Instr::JumpIfFalse {
                    cond,
                    target: usize::MAX,
                });
                self.loop_body(head, args, results, &l.body, vec![test], cond_values)
            }
            Stmt::If(i) => {
                let cond = self.slot(i.cond)?;
                let mut results = Vec::with_capacity(i.results.len());
                for r in &i.results {
                    results.push(self.bind(*r)?);
                }
                let branch = self.instrs.len();
                self.instrs.push(Instr::JumpIfFalse {
                    cond,
                    target: usize::MAX,
                });
                self.arm(&i.then_block, &results)?;
                let skip_else = self.instrs.len();
                self.instrs.push(Instr::Jump { target: usize::MAX });
                let else_start = self.instrs.len();
                self.patch(branch, else_start)?;
                self.arm(&i.else_block, &results)?;
                let end = self.instrs.len();
                self.patch(skip_else, end)?;
                Ok(())
            }
            Stmt::Yield(values) => {
                let Some(Frame::Arm {
                    results,
                    arm_values,
                    ..
                }) = self.frames.last()
                else {
                    return unsupported("`yield` outside an `if` arm");
                };
                let (results, arm_values) = (results.clone(), arm_values.clone());
                self.parallel_move(values, &results, &|v| {
                    arm_values.get(raw(v)).copied().unwrap_or(false)
                })?;
                let at = self.instrs.len();
                self.instrs.push(Instr::Jump { target: usize::MAX });
                if let Some(Frame::Arm { ends, .. }) = self.frames.last_mut() {
                    ends.push(at);
                }
                Ok(())
            }
            Stmt::Continue(values) | Stmt::Break(values) => {
                let is_continue = matches!(stmt, Stmt::Continue(_));
                let Some(position) = self
                    .frames
                    .iter()
                    .rposition(|f| matches!(f, Frame::Loop { .. }))
                else {
                    return unsupported("`continue`/`break` outside a loop");
                };
                let Frame::Loop {
                    args,
                    results,
                    head,
                    body_values,
                    ..
                } = &self.frames[position]
                else {
                    return unsupported("internal: loop frame lost");
                };
                let (targets, head, body_values) = (
                    if is_continue {
                        args.clone()
                    } else {
                        results.clone()
                    },
                    *head,
                    body_values.clone(),
                );
                self.parallel_move(values, &targets, &|v| {
                    body_values.get(raw(v)).copied().unwrap_or(false)
                })?;
                if is_continue {
                    self.instrs.push(Instr::Back { target: head });
                } else {
                    let at = self.instrs.len();
                    self.instrs.push(Instr::Jump { target: usize::MAX });
                    if let Frame::Loop { exits, .. } = &mut self.frames[position] {
                        exits.push(at);
                    }
                }
                Ok(())
            }
        }
    }

    fn arm(&mut self, block: &Block, results: &[Slot]) -> Result<()> {
        self.frames.push(Frame::Arm {
            results: results.to_vec(),
            ends: Vec::new(),
            arm_values: vec![false; self.f.exprs.len()],
        });
        self.block(block)?;
        let Some(Frame::Arm { ends, .. }) = self.frames.pop() else {
            return unsupported("internal: arm frame lost");
        };
        // A `yield` jumps to just after the arm; the then arm's trailing jump skips the
        // else arm from there.
        let after = self.instrs.len();
        for at in ends {
            self.patch(at, after)?;
        }
        Ok(())
    }

    fn let_(&mut self, id: ExprId) -> Result<()> {
        let f = self.f;
        let index = raw(id);
        let Some(expr) = f.expr(id) else {
            return unsupported(format!("a `let` places %{index}, which does not exist"));
        };
        if let ExprKind::Param(p) = expr.kind {
            if p as usize >= f.params.len() {
                return unsupported(format!(
                    "expression %{index} reads parameter {p}, which does not exist"
                ));
            }
            self.slot_of[index] = Some(p as usize);
            return Ok(());
        }
        let operand = |id: ExprId| self.slot(id);
        let out = self.next_slot;
        // The backend applies the same rule (`reused` there), so both run the same kernel.
        let in_loop =
            self.conditions > 0 || self.frames.iter().any(|f| matches!(f, Frame::Loop { .. }));
        let param_count = f.params.len();
        let reused = |weight: Slot| in_loop && weight < param_count;
        let instr = match &expr.kind {
            ExprKind::Param(_) => {
                return unsupported("internal: parameter reads take no instruction")
            }
            ExprKind::Bound => {
                return unsupported(format!(
                    "%{index} is bound by a statement; no `let` evaluates it"
                ))
            }
            ExprKind::ConstInt(value) => Instr::Int { value: *value, out },
            ExprKind::ConstBool(value) => Instr::Bool { value: *value, out },
            ExprKind::ConstFloat(value) => Instr::Float {
                value: value.value(),
                out,
            },
            ExprKind::Scalar { op, lhs, rhs } => Instr::Scalar {
                op: *op,
                lhs: operand(*lhs)?,
                rhs: operand(*rhs)?,
                out,
            },
            ExprKind::ScalarUnary { op, input } => Instr::ScalarUnary {
                op: *op,
                input: operand(*input)?,
                out,
            },
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
            } => {
                let weight = operand(*weight)?;
                Instr::Linear {
                    input: operand(*input)?,
                    weight,
                    bias: bias.map(operand).transpose()?,
                    out,
                    reused: reused(weight),
                }
            }
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
                prologue,
                activations,
                tail,
                layout,
                bias_added,
            } => {
                let weight = operand(*weight)?;
                Instr::FusedLinear {
                    bias_added: *bias_added,
                    input: operand(*input)?,
                    weight,
                    bias: bias.map(operand).transpose()?,
                    prologue: prologue
                        .iter()
                        .map(|step| Ok((step.op, operand(step.operand)?)))
                        .collect::<Result<Vec<_>>>()?
                        .into_boxed_slice(),
                    activations: activations.clone().into_boxed_slice(),
                    tail: *tail,
                    layout: *layout,
                    out,
                    reused: reused(weight),
                }
            }
        };
        self.next_slot += 1;
        self.slot_of[index] = Some(out);
        self.mark_placed(id);
        self.instrs.push(instr);
        Ok(())
    }
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
        let mut compiler = Compiler {
            f,
            slot_of: vec![None; f.exprs.len()],
            next_slot: f.params.len(),
            instrs: Vec::new(),
            frames: Vec::new(),
            value_lists: Vec::new(),
            conditions: 0,
        };
        compiler.block(&f.body)?;
        if !matches!(
            compiler.instrs.last(),
            Some(Instr::Return { .. }) | Some(Instr::Jump { .. }) | Some(Instr::Back { .. })
        ) {
            // Validated bodies always end in a return; a trailing jump target past the end
            // would read out of bounds, so this is rejected rather than run.
            if !f
                .body
                .stmts
                .last()
                .is_some_and(|s| matches!(s, Stmt::Return(_) | Stmt::If(_)))
            {
                return unsupported("the body does not end in a return");
            }
        }
        let end = compiler.instrs.len();
        for instr in &compiler.instrs {
            let target = match instr {
                Instr::Jump { target }
                | Instr::Back { target }
                | Instr::JumpIfFalse { target, .. } => *target,
                Instr::Next { exit, .. } => *exit,
                _ => 0,
            };
            if target > end {
                return unsupported("internal: a jump was never patched");
            }
        }
        let returned_slots: Vec<Slot> = compiler
            .instrs
            .iter()
            .filter_map(|i| match i {
                Instr::Return { value } => Some(*value),
                _ => None,
            })
            .collect();
        let returned = compiler
            .instrs
            .iter()
            .map(|i| instr_out(i).is_some_and(|out| returned_slots.contains(&out)))
            .collect();
        Ok(Program {
            name: f.name.clone(),
            param_names: f.params.iter().map(|p| p.name.clone()).collect(),
            param_types: f.params.iter().map(|p| p.ty).collect(),
            ret: f.ret,
            instrs: compiler.instrs,
            slot_count: compiler.next_slot,
            returned,
            value_lists: compiler.value_lists,
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
        self.run_interruptible(args, &mut || Ok(()))
    }

    /// [`Program::run_checked`], calling `interrupted` on loop back edges: first once loops
    /// have run about [`FIRST_INTERRUPT_CHECK`], then at most about once per
    /// [`INTERRUPT_INTERVAL`]; an error from it ends the call with that error.
    pub fn run_interruptible(
        &self,
        args: Vec<Value>,
        interrupted: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Value> {
        let call = self.bind(args)?;
        self.run_bound(call, interrupted)
    }

    /// Reads checked arguments into a call's slots (float32 tensors viewed in place), without
    /// running anything: the caller may look at [`BoundCall::elements`] to decide how to run.
    pub fn bind(&self, args: Vec<Value>) -> Result<BoundCall> {
        self.bind_args(args.into_iter().map(|v| Ok(Arg::Value(v))), |e| e)
    }

    /// [`Program::bind`] over arguments as the caller read them, in parameter order; the
    /// first error stops binding, and binding's own errors become `E` by `error`. The Python
    /// boundary passes float32 arguments it has already checked as [`Arg::F32`] views,
    /// without a tch handle of their own.
    pub fn bind_args<E>(
        &self,
        args: impl IntoIterator<Item = std::result::Result<Arg, E>>,
        error: impl Fn(RuntimeError) -> E,
    ) -> std::result::Result<BoundCall, E> {
        let mut slots = Scratch::slots();
        let mut elements = 0usize;
        for (arg, ty) in args.into_iter().zip(&self.param_types) {
            let reg = match arg? {
                Arg::Value(value) => Reg::of_arg(value, *ty).map_err(&error)?,
                Arg::F32(view) => Reg::F32(view),
            };
            if let Reg::F32(v) = &reg {
                elements = elements.saturating_add(v.dims().len());
            }
            slots.push(Some(reg));
        }
        Ok(BoundCall { slots, elements })
    }

    /// Runs a call [`Program::bind`] prepared, as [`Program::run_interruptible`] does.
    pub fn run_bound(
        &self,
        call: BoundCall,
        interrupted: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Value> {
        self.run_to_end(Scratch::take(call.slots), RunState::start(), interrupted)
    }

    /// Runs from `at` to the end of the call, then returns its scratch.
    fn run_to_end(
        &self,
        mut scratch: Scratch,
        mut at: RunState,
        interrupted: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Value> {
        let _no_grad = tch::no_grad_guard();
        let result = self.execute(&mut scratch, &mut at, interrupted, false);
        scratch.give_back();
        match result {
            Ok(Flow::Done(value)) => Ok(value),
            Ok(Flow::Paused) => unsupported("internal: a call paused without being asked to"),
            Err(e) => Err(e),
        }
    }

    /// Runs a call [`Program::bind`] prepared until it returns, or until its first interrupt
    /// check is due (a loop has run about [`FIRST_INTERRUPT_CHECK`]), where it pauses
    /// instead: the Python boundary runs small calls holding the GIL, and continues a paused
    /// one with [`Program::resume`] after letting the GIL go.
    pub fn run_bound_pausing(&self, call: BoundCall) -> Step {
        let _no_grad = tch::no_grad_guard();
        let mut scratch = Scratch::take(call.slots);
        let mut at = RunState::start();
        let result = self.execute(&mut scratch, &mut at, &mut || Ok(()), true);
        match result {
            Ok(Flow::Paused) => Step::Paused(Paused { scratch, at }),
            Ok(Flow::Done(value)) => {
                scratch.give_back();
                Step::Done(Ok(value))
            }
            Err(e) => {
                scratch.give_back();
                Step::Done(Err(e))
            }
        }
    }

    /// Continues a call [`Program::run_bound_pausing`] paused, to its end, calling
    /// `interrupted` at the later checks (the one it paused at counts as done).
    pub fn resume(
        &self,
        paused: Paused,
        interrupted: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Value> {
        let Paused { scratch, mut at } = paused;
        at.checked = true;
        at.last_check = Some(Instant::now());
        self.run_to_end(scratch, at, interrupted)
    }

    fn execute(
        &self,
        scratch: &mut Scratch,
        at: &mut RunState,
        interrupted: &mut dyn FnMut() -> Result<()>,
        pause_at_first_check: bool,
    ) -> Result<Flow> {
        let Scratch {
            slots,
            loops,
            transposed,
        } = scratch;
        if at.pc == 0 {
            slots.resize_with(self.slot_count, || None);
            loops.resize(
                self.value_lists.len(),
                LoopState::Values {
                    list: usize::MAX,
                    position: 0,
                },
            );
        }
        let RunState {
            pc,
            back_edges,
            next_clock,
            last_check,
            checked,
        } = at;
        let mut pc = *pc;
        while let Some(instr) = self.instrs.get(pc) {
            pc += 1;
            match instr {
                Instr::Return { value } => {
                    return match slots.get_mut(*value).and_then(Option::take) {
                        Some(value) => value.into_value().map(Flow::Done),
                        None => unsupported("the returned slot was never written"),
                    };
                }
                Instr::Jump { target } => pc = *target,
                Instr::Back { target } => {
                    pc = *target;
                    *back_edges = back_edges.saturating_add(1);
                    if *back_edges >= *next_clock {
                        *next_clock = next_clock.saturating_add((*next_clock).min(CLOCK_EVERY));
                        let now = Instant::now();
                        let since = *last_check.get_or_insert(now);
                        let due = if *checked {
                            INTERRUPT_INTERVAL
                        } else {
                            FIRST_INTERRUPT_CHECK
                        };
                        if now.duration_since(since) >= due {
                            if pause_at_first_check && !*checked {
                                at.pc = pc;
                                return Ok(Flow::Paused);
                            }
                            interrupted()?;
                            *checked = true;
                            *last_check = Some(Instant::now());
                        }
                    }
                }
                Instr::JumpIfFalse { cond, target } => {
                    let truth = match slots.get(*cond) {
                        Some(Some(Reg::Bool(b))) => *b,
                        _ => scalar_at(slots, *cond)?.truth(),
                    };
                    if !truth {
                        pc = *target;
                    }
                }
                // Scalars are written in place: going through `step`'s fallible, by-value
                // result costs a loop iteration of a small program more than its tensor op.
                Instr::Int { value, out } => set_scalar(slots, *out, Scalar::Int(*value))?,
                Instr::Bool { value, out } => set_scalar(slots, *out, Scalar::Bool(*value))?,
                Instr::Scalar { op, lhs, rhs, out } => {
                    let fast = match (slots.get(*lhs), slots.get(*rhs)) {
                        (Some(Some(Reg::Int(a))), Some(Some(Reg::Int(b)))) => int_fast(*op, *a, *b),
                        _ => None,
                    };
                    let value = match fast {
                        Some(value) => value,
                        None => {
                            scalar::binary(*op, scalar_at(slots, *lhs)?, scalar_at(slots, *rhs)?)?
                        }
                    };
                    set_scalar(slots, *out, value)?;
                }
                Instr::Move { from, to, .. }
                    if matches!(slots.get(*from), Some(Some(Reg::Int(_) | Reg::Bool(_)))) =>
                {
                    let value = scalar_at(slots, *from)?;
                    set_scalar(slots, *to, value)?;
                }
                Instr::Move { from, to, take } => {
                    let value = if *take {
                        slots.get_mut(*from).and_then(Option::take)
                    } else {
                        slots.get(*from).and_then(|v| v.as_ref()).map(Reg::share)
                    };
                    match (value, slots.get_mut(*to)) {
                        (Some(value), Some(slot)) => *slot = Some(value),
                        _ => {
                            return unsupported(format!("slot {from} is read before it is written"))
                        }
                    }
                }
                Instr::RangeInit {
                    start,
                    stop,
                    step,
                    state,
                } => {
                    let range = Range::new(
                        int_at(&slots, *start)?,
                        int_at(&slots, *stop)?,
                        int_at(&slots, *step)?,
                    )?;
                    loops[*state] = LoopState::Range(range);
                }
                Instr::ValuesInit { state } => {
                    loops[*state] = LoopState::Values {
                        list: *state,
                        position: 0,
                    };
                }
                Instr::Next { state, index, exit } => {
                    let next = match &mut loops[*state] {
                        LoopState::Range(range) => range.next(),
                        LoopState::Values { list, position } => {
                            let value = self
                                .value_lists
                                .get(*list)
                                .and_then(|v| v.as_ref())
                                .and_then(|v| v.get(*position))
                                .copied();
                            *position += 1;
                            value
                        }
                    };
                    match next {
                        Some(value) => set_scalar(slots, *index, Scalar::Int(value))?,
                        None => pc = *exit,
                    }
                }
                compute => {
                    // Only a returned value's op touches the flag (the only TLS write on
                    // this path); it is cleared after in case the op took no buffer.
                    let returned = self.returned.get(pc - 1).copied().unwrap_or(false);
                    if returned {
                        Buffer::next_is_output(true);
                    }
                    let result = self.step(compute, slots, transposed);
                    if returned {
                        Buffer::next_is_output(false);
                    }
                    let (out, value) = result?;
                    // The value this replaces (last iteration's) dies here, its buffer
                    // going back to the pool for the next op.
                    slots[out] = Some(value);
                }
            }
        }
        unsupported("the program ended without a return")
    }

    fn step(
        &self,
        instr: &Instr,
        slots: &[Option<Reg>],
        transposed: &mut TransposedWeights,
    ) -> Result<(Slot, Reg)> {
        let t = |slot: Slot| reg_at(slots, slot);
        Ok(match instr {
            Instr::Int { value, out } => (*out, Reg::Int(*value)),
            Instr::Bool { value, out } => (*out, Reg::Bool(*value)),
            Instr::Float { value, out } => (*out, Reg::Float(*value)),
            Instr::Scalar { op, lhs, rhs, out } => {
                let result = scalar::binary(*op, scalar_at(slots, *lhs)?, scalar_at(slots, *rhs)?)?;
                (*out, Reg::from_scalar(result))
            }
            Instr::ScalarUnary { op, input, out } => (
                *out,
                Reg::from_scalar(scalar::unary(*op, scalar_at(slots, *input)?)?),
            ),
            Instr::Unary { op, input, out } => (*out, unary(*op, t(*input)?)?),
            Instr::Binary { op, lhs, rhs, out } => (*out, binary(*op, t(*lhs)?, t(*rhs)?)?),
            Instr::Linear {
                input,
                weight,
                bias,
                out,
                reused,
            } => {
                let (x, w) = (t(*input)?, t(*weight)?);
                let b = bias.map(t).transpose()?;
                let cache = reused.then_some((*weight, transposed));
                (*out, linear(x, w, b, &[], None, cache)?)
            }
            Instr::Matmul { lhs, rhs, out } => (*out, matmul(t(*lhs)?, t(*rhs)?)?),
            Instr::Reduce {
                kind,
                input,
                dim,
                keepdim,
                out,
            } => (*out, reduce(*kind, t(*input)?, *dim, *keepdim)?),
            Instr::Softmax { input, dim, out } => (*out, softmax(t(*input)?, *dim)?),
            Instr::Argmax {
                input,
                dim,
                keepdim,
                out,
            } => (*out, argmax(t(*input)?, *dim, *keepdim)?),
            Instr::FusedLinear {
                input,
                weight,
                bias,
                prologue,
                activations,
                tail,
                layout,
                out,
                reused,
                bias_added,
            } => {
                let (x, w) = (t(*input)?, t(*weight)?);
                let b = bias.map(t).transpose()?;
                let prepared;
                let x = if prologue.is_empty() {
                    x
                } else {
                    for (_, slot) in prologue.iter() {
                        t(*slot)?;
                    }
                    let steps = prologue
                        .iter()
                        .filter_map(|(op, slot)| reg_at(slots, *slot).ok().map(|v| (*op, v)));
                    // The prologue's buffer is scratch; the product's is the op's output.
                    let output = Buffer::output_flag_aside();
                    let result = apply_prologue(x, steps);
                    Buffer::next_is_output(output);
                    prepared = result?;
                    &prepared
                };
                let y = match layout {
                    WeightLayout::OutIn => {
                        let unfused = match (*bias_added, b) {
                            (true, Some(b)) => added_bias_unfused(x, w, b, activations, *tail)?,
                            _ => None,
                        };
                        match unfused {
                            Some(y) => y,
                            None => {
                                let cache = reused.then_some((*weight, transposed));
                                linear(x, w, b, activations, *tail, cache)?
                            }
                        }
                    }
                    WeightLayout::InOut => matmul_linear(x, w, b, activations, *tail)?,
                };
                (*out, y)
            }
            Instr::Move { .. }
            | Instr::Jump { .. }
            | Instr::Back { .. }
            | Instr::JumpIfFalse { .. }
            | Instr::RangeInit { .. }
            | Instr::ValuesInit { .. }
            | Instr::Next { .. }
            | Instr::Return { .. } => {
                return unsupported("internal: a control instruction reached `step`")
            }
        })
    }
}

// One function per op over run-time values, shared by the executor and (through `crate::exec`)
// by generated code, so both compute every op with the same kernel and give the same bits.

pub(crate) fn unary(op: UnaryOp, x: &Reg) -> Result<Reg> {
    match x {
        Reg::F32(v) if dense::unary_supported(op, v.dims().len()) => {
            Ok(Reg::F32(dense::unary(op, v)))
        }
        _ => Reg::of_result(ops::unary(op, &*x.tensor()?)?, &[x]),
    }
}

pub(crate) fn binary(op: BinaryOp, a: &Reg, b: &Reg) -> Result<Reg> {
    if let (Reg::F32(x), Reg::F32(y)) = (a, b) {
        if let Some(dims) = dense::broadcast(x.dims(), y.dims()) {
            return Ok(Reg::F32(dense::binary(op, x, y, dims)));
        }
    }
    Reg::of_result(ops::binary(op, &*a.tensor()?, &*b.tensor()?)?, &[a, b])
}

pub(crate) fn matmul(a: &Reg, b: &Reg) -> Result<Reg> {
    match (a, b) {
        (Reg::F32(x), Reg::F32(y)) if dense::matmul_supported(x.dims(), y.dims()) => {
            Ok(Reg::F32(dense::matmul(x, y)))
        }
        _ => Reg::of_result(ops::matmul(&*a.tensor()?, &*b.tensor()?)?, &[a, b]),
    }
}

/// Whether `dim` is a dimension of a dense value of rank 1 or 2.
fn dense_dim(v: &F32, dim: u8) -> bool {
    let rank = v.dims().rank();
    (1..=2).contains(&rank) && usize::from(dim) < rank
}

pub(crate) fn reduce(kind: ReduceKind, x: &Reg, dim: u8, keepdim: bool) -> Result<Reg> {
    match x {
        Reg::F32(v) if dense_dim(v, dim) => {
            Ok(Reg::F32(dense::reduce(kind, v, usize::from(dim), keepdim)))
        }
        _ => Reg::of_result(ops::reduce(kind, &*x.tensor()?, dim, keepdim)?, &[x]),
    }
}

pub(crate) fn softmax(x: &Reg, dim: u8) -> Result<Reg> {
    match x {
        Reg::F32(v) if dense_dim(v, dim) => Ok(Reg::F32(dense::softmax(v, usize::from(dim)))),
        _ => Reg::of_result(ops::softmax(&*x.tensor()?, dim)?, &[x]),
    }
}

pub(crate) fn argmax(x: &Reg, dim: u8, keepdim: bool) -> Result<Reg> {
    match x {
        Reg::F32(v) if dense_dim(v, dim) && !v.dims().is_empty() => {
            Ok(Reg::Tensor(dense::argmax(v, usize::from(dim), keepdim)?))
        }
        _ => Reg::of_result(ops::argmax(&*x.tensor()?, dim, keepdim)?, &[x]),
    }
}

/// The operands of a `linear` as dense float32 of shapes that fit each other (x [batch, k],
/// w [n, k], b [n]); `None` for anything else, which ATen computes or rejects.
pub(crate) fn dense_linear_operands<'a>(
    x: &'a Reg,
    w: &'a Reg,
    b: Option<&'a Reg>,
) -> Option<(&'a F32, &'a F32, Option<&'a F32>)> {
    dense_product_operands(x, w, b, WeightLayout::OutIn)
}

/// [`dense_linear_operands`] for a weight laid out as `layout` says (`[in, out]`: w [k, n]).
fn dense_product_operands<'a>(
    x: &'a Reg,
    w: &'a Reg,
    b: Option<&'a Reg>,
    layout: WeightLayout,
) -> Option<(&'a F32, &'a F32, Option<&'a F32>)> {
    let (Reg::F32(xv), Reg::F32(wv)) = (x, w) else {
        return None;
    };
    let bv = match b {
        None => None,
        Some(Reg::F32(bv)) => Some(bv),
        Some(_) => return None,
    };
    let (xd, wd) = (xv.dims(), wv.dims());
    let (in_dim, out_dim) = match layout {
        WeightLayout::OutIn => (1, 0),
        WeightLayout::InOut => (0, 1),
    };
    let shapes = xd.rank() == 2 && wd.rank() == 2 && xd.dim(1) == wd.dim(in_dim);
    let bias_fits = bv.is_none_or(|b| b.dims().rank() == 1 && b.dims().dim(0) == wd.dim(out_dim));
    (shapes && bias_fits).then_some((xv, wv, bv))
}

/// `linear` then `activations` then `tail` (a fused op's whole chain).
/// `cache` holds the weight's slot and the call's transposed weights when the weight is an
/// argument reused across iterations.
pub(crate) fn linear(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
    cache: Option<(Slot, &mut TransposedWeights)>,
) -> Result<Reg> {
    with_tail(tail, |reduce| {
        linear_reduced(x, w, b, activations, reduce, cache)
    })
}

/// For a bias written `+ b` after `linear(x, w)`: `None` when a rank-1 bias of the product's
/// width (or of one element) lets the fused kernels run. Otherwise the unfused chain, as eager
/// runs it: `linear(x, w)`'s error if `x` and `w` do not fit, else the addition's, which
/// either raises (`F.linear`'s own bias error has other words) or broadcasts (a one-column
/// product and a longer bias give a wider result), then the activations and the tail.
pub(crate) fn added_bias_unfused(
    x: &Reg,
    w: &Reg,
    b: &Reg,
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
) -> Result<Option<Reg>> {
    let fits = match (w, b) {
        // The common case, without a tch call: dense operands.
        (Reg::F32(wv), Reg::F32(bv)) => {
            let (wd, bd) = (wv.dims(), bv.dims());
            bd.rank() != 1 || wd.rank() == 0 || bd.dim(0) == wd.dim(0) || bd.dim(0) == 1
        }
        _ => {
            let (w_sizes, b_sizes) = (sizes(w)?, sizes(b)?);
            match b_sizes.as_slice() {
                [len] => w_sizes.first() == Some(len) || *len == 1,
                _ => true,
            }
        }
    };
    if fits {
        return Ok(None);
    }
    // Op by op: intermediate buffers are scratch, so the result is copied out if returned.
    Buffer::output_flag_aside();
    let mut y = linear(x, w, None, &[], None, None)?;
    y = binary(BinaryOp::Add, &y, b)?;
    for op in activations {
        y = unary(*op, &y)?;
    }
    Ok(Some(match tail {
        None => y,
        Some(FusedTail::Reduce(r)) => reduce(r.kind, &y, r.dim, r.keepdim)?,
        Some(FusedTail::Softmax { dim }) => softmax(&y, dim)?,
        Some(FusedTail::Argmax { dim, keepdim }) => argmax(&y, dim, keepdim)?,
    }))
}

/// The sizes of a tensor value.
fn sizes(r: &Reg) -> Result<Vec<i64>> {
    match r {
        Reg::F32(v) => Ok(v.dims().sizes()),
        _ => Ok(r.tensor()?.size()),
    }
}

/// A fused op's chain around its `product` (which computes the product, the activations and
/// a reduction tail): under an argmax tail the product is scratch (the result is an int64
/// tensor of its own) and must not take the buffer meant for the call's result; a softmax
/// tail runs in place on the product, an argmax tail reads it.
fn with_tail(
    tail: Option<FusedTail>,
    product: impl FnOnce(Option<FusedReduce>) -> Result<Reg>,
) -> Result<Reg> {
    if matches!(tail, Some(FusedTail::Argmax { .. })) {
        Buffer::output_flag_aside();
    }
    let y = product(tail.and_then(FusedTail::reduction))?;
    row_tail(y, tail)
}

/// The buffer and shape of a dense `linear` result. Taken before anything else the op
/// allocates (a transposed weight): the first buffer taken after `Buffer::next_is_output`
/// becomes the call's result, allocated by libtorch when it is large.
fn product_output(batch: usize, n: usize, reduce: Option<FusedReduce>) -> (Buffer, Dims) {
    let dims = match reduce {
        None => Dims::matrix(batch, n),
        Some(r) if r.keepdim => Dims::matrix(batch, 1),
        Some(_) => Dims::vector(batch),
    };
    (Buffer::take(dims.len()), dims)
}

/// `kernels::linear_into` over dense operands (`weight` laid out as `path` reads it) into
/// `out` (from [`product_output`]).
fn dense_product(
    (mut out, dims): (Buffer, Dims),
    path: KernelPath,
    x: &F32,
    weight: &[f32],
    b: Option<&F32>,
    shape: LinearDims,
    epilogue: Epilogue<'_>,
) -> Result<Reg> {
    kernels::linear_into(
        path,
        x.data(),
        weight,
        b.map(F32::data),
        shape,
        epilogue,
        out.as_mut_slice(),
    )?;
    Ok(Reg::F32(F32::Pooled(out, dims)))
}

/// A fused op's row-wise tail on its product `y` (reductions are the kernels'): softmax in
/// place where `y` is a dense matrix the op owns, argmax straight from it.
fn row_tail(y: Reg, tail: Option<FusedTail>) -> Result<Reg> {
    match tail {
        None | Some(FusedTail::Reduce(_)) => Ok(y),
        Some(FusedTail::Softmax { dim }) => match y {
            Reg::F32(F32::Pooled(mut buffer, dims)) if dims.rank() == 2 && dim == 1 => {
                let (rows, cols) = (dims.dim(0), dims.dim(1));
                dense::softmax_rows_in_place(buffer.as_mut_slice(), rows, cols);
                Ok(Reg::F32(F32::Pooled(buffer, dims)))
            }
            other => softmax(&other, dim),
        },
        Some(FusedTail::Argmax { dim, keepdim }) => argmax(&y, dim, keepdim),
    }
}

/// `linear` then `activations` then `reduce`: the one-pass kernel straight into a pooled
/// buffer where the shapes allow it, else `kernels::fused_linear` (which also raises eager's
/// errors for shapes that do not fit).
pub(crate) fn linear_reduced(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
    cache: Option<(Slot, &mut TransposedWeights)>,
) -> Result<Reg> {
    if let Some((xv, wv, bv)) = dense_linear_operands(x, w, b) {
        let (batch, k, n) = (xv.dims().dim(0), xv.dims().dim(1), wv.dims().dim(0));
        let reduce_fits = reduce.is_none_or(|r| r.dim == 1);
        let path = kernels::COST_MODEL.choose_for(batch, k, n, cache.is_some());
        if reduce_fits && path != KernelPath::GemmThenEpilogue {
            let out = product_output(batch, n, reduce);
            let once;
            let weight = match (path, cache) {
                (KernelPath::BlockedTransposed, Some((slot, cache))) => {
                    cache.get(slot, wv.data(), n, k)
                }
                (KernelPath::BlockedTransposed, None) => {
                    once = kernels::transposed(wv.data(), n, k);
                    once.as_slice()
                }
                _ => wv.data(),
            };
            let shape = LinearDims::new(batch, k, n);
            let epilogue = Epilogue::new(activations, reduce);
            return dense_product(out, path, xv, weight, bv, shape, epilogue);
        }
    }
    let (xt, wt) = (x.tensor()?, w.tensor()?);
    let bt = b.map(Reg::tensor).transpose()?;
    let fits_kernels = xt.dim() == 2 && wt.dim() == 2;
    let y = if activations.is_empty() && reduce.is_none() && !fits_kernels {
        ops::linear(&xt, &wt, bt.as_deref())?
    } else {
        let reused = cache.is_some();
        kernels::fused_linear_for(&xt, &wt, bt.as_deref(), activations, reduce, reused)?
    };
    let operands: Vec<&Reg> = [x, w].into_iter().chain(b).collect();
    Reg::of_result(y, &operands)
}

/// `x` after a fused op's prologue (`x = x op v`, in order): one pass where `x` is a dense
/// matrix and every operand a dense vector of its width ([`dense::prologue`]), else the
/// unfused ops in order, which raise eager's errors for operands that do not broadcast.
pub(crate) fn apply_prologue<'a>(
    x: &Reg,
    mut steps: impl Iterator<Item = (BinaryOp, &'a Reg)> + Clone,
) -> Result<Reg> {
    if let Reg::F32(xv) = x {
        if xv.dims().rank() == 2 {
            let k = xv.dims().dim(1);
            let dense_steps = steps.clone().map(move |(op, v)| match v {
                Reg::F32(v) if v.dims().rank() == 1 && v.dims().dim(0) == k => Some((op, v)),
                _ => None,
            });
            if dense_steps.clone().all(|step| step.is_some()) {
                return Ok(Reg::F32(dense::prologue(xv, dense_steps.flatten())));
            }
        }
    }
    let Some((op, v)) = steps.next() else {
        return unsupported("internal: an empty prologue reached `apply_prologue`");
    };
    let mut y = binary(op, x, v)?;
    for (op, v) in steps {
        y = binary(op, &y, v)?;
    }
    Ok(y)
}

/// `matmul(x, w) + b`, then `activations`, then `tail` (a `fused_matmul`'s whole chain).
pub(crate) fn matmul_linear(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    tail: Option<FusedTail>,
) -> Result<Reg> {
    with_tail(tail, |reduce| matmul_reduced(x, w, b, activations, reduce))
}

/// `matmul(x, w) + b`, then `activations`, then `reduce`. The weight is
/// `[in, out]`, the layout the transposed-weight kernels stream, so it is read in place;
/// where [`kernels::CostModel::fuses_in_out`] says the sizes are better served op by op, or
/// the operands do not fit each other (then eager's errors, with the operands in the user's
/// order), the unfused chain runs through the executor's own ops.
fn matmul_reduced(
    x: &Reg,
    w: &Reg,
    b: Option<&Reg>,
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Result<Reg> {
    if let Some((xv, wv, bv)) = dense_product_operands(x, w, b, WeightLayout::InOut) {
        let (batch, k, n) = (xv.dims().dim(0), xv.dims().dim(1), wv.dims().dim(1));
        let reduce_fits = reduce.is_none_or(|r| r.dim == 1);
        if reduce_fits && kernels::COST_MODEL.fuses_in_out(batch, k, n) {
            let path = KernelPath::BlockedTransposed;
            let shape = LinearDims::new(batch, k, n);
            let epilogue = Epilogue::new(activations, reduce);
            let out = product_output(batch, n, reduce);
            return dense_product(out, path, xv, wv.data(), bv, shape, epilogue);
        }
    }
    // Op by op: intermediate buffers are scratch, so the result is copied out if returned.
    Buffer::output_flag_aside();
    let mut y = matmul(x, w)?;
    if let Some(b) = b {
        y = binary(BinaryOp::Add, &y, b)?;
    }
    for op in activations {
        y = unary(*op, &y)?;
    }
    if let Some(r) = reduce {
        y = self::reduce(r.kind, &y, r.dim, r.keepdim)?;
    }
    Ok(y)
}

/// The transposed weights of one call, by argument slot: a weight that a loop applies every
/// iteration is transposed once ([`KernelPath::BlockedTransposed`]). Arguments are never
/// written during a call, so an entry stays valid for the whole call.
#[derive(Default)]
pub(crate) struct TransposedWeights {
    entries: Vec<(Slot, Buffer)>,
}

impl TransposedWeights {
    /// `w` ([n, k], the argument in `slot`) transposed.
    fn get(&mut self, slot: Slot, w: &[f32], n: usize, k: usize) -> &[f32] {
        let at = match self.entries.iter().position(|(s, _)| *s == slot) {
            Some(at) => at,
            None => {
                self.entries.push((slot, kernels::transposed(w, n, k)));
                self.entries.len() - 1
            }
        };
        self.entries[at].1.as_slice()
    }
}

/// A call's working memory, kept per thread between calls so that a call in steady state
/// allocates nothing of its own (runtime/tests/allocations.rs counts).
#[derive(Default)]
struct Scratch {
    slots: Vec<Option<Reg>>,
    loops: Vec<LoopState>,
    transposed: TransposedWeights,
}

thread_local! {
    /// Spare slot vectors and scratch, one per nesting level of calls on this thread (a call
    /// never re-enters the executor, but a thread may run several programs in turn).
    static SCRATCH: std::cell::RefCell<Vec<Scratch>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Scratch {
    /// An empty slot vector, with capacity from an earlier call where there is one.
    fn slots() -> Vec<Option<Reg>> {
        SCRATCH
            .try_with(|s| {
                s.try_borrow_mut()
                    .ok()?
                    .last_mut()
                    .map(|s| std::mem::take(&mut s.slots))
            })
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// The rest of a call's scratch around its bound `slots`.
    fn take(slots: Vec<Option<Reg>>) -> Scratch {
        let spare = SCRATCH
            .try_with(|s| s.try_borrow_mut().ok()?.pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        Scratch {
            slots,
            loops: spare.loops,
            transposed: spare.transposed,
        }
    }

    /// Drops the call's values (buffers go back to their pool) and keeps the capacity.
    fn give_back(mut self) {
        self.slots.clear();
        self.loops.clear();
        self.transposed.entries.clear();
        let _ = SCRATCH.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < 4 {
                    s.push(self);
                }
            }
        });
    }
}

/// One argument for [`Program::bind_args`].
pub enum Arg {
    /// Checked against its parameter's type as [`Program::bind`] checks values.
    Value(Value),
    /// A float32 CPU tensor the caller checked against its parameter's type (dtype, device,
    /// rank, strided and contiguous), viewed in place.
    F32(F32),
}

/// Where a run is: the next instruction and the interrupt clock.
struct RunState {
    pc: Pc,
    back_edges: u32,
    next_clock: u32,
    /// When the clock was first read, then when the last check ran; read only once a loop
    /// runs long enough to reach a check.
    last_check: Option<Instant>,
    checked: bool,
}

impl RunState {
    fn start() -> RunState {
        RunState {
            pc: 0,
            back_edges: 0,
            next_clock: FIRST_CLOCK_EDGE,
            last_check: None,
            checked: false,
        }
    }
}

enum Flow {
    Done(Value),
    Paused,
}

/// How [`Program::run_bound_pausing`] ended.
pub enum Step {
    Done(Result<Value>),
    Paused(Paused),
}

/// A call paused at its first interrupt check: its values (argument views included, so it
/// must be resumed or dropped before the call's arguments go) and where it was.
pub struct Paused {
    scratch: Scratch,
    at: RunState,
}

/// A call's arguments, read into slots by [`Program::bind`].
pub struct BoundCall {
    slots: Vec<Option<Reg>>,
    elements: usize,
}

impl BoundCall {
    /// Float32 elements the arguments hold: a cheap measure of how long the call may take.
    pub fn elements(&self) -> usize {
        self.elements
    }
}

/// A value during a run: float32 tensors as dense values the executor computes on directly,
/// other tensors (int64, or shapes the dense kernels do not take) as tch tensors.
#[derive(Debug)]
pub(crate) enum Reg {
    Tensor(Tensor),
    F32(F32),
    Int(i64),
    Bool(bool),
    Float(f64),
}

impl Reg {
    /// An argument, already checked against its parameter type `ty`.
    pub(crate) fn of_arg(value: Value, ty: Type) -> Result<Reg> {
        let checked_f32_cpu = matches!(
            ty,
            Type::Tensor(TensorType {
                dtype: rextio_ir::DType::F32,
                device: Device::Cpu,
                ..
            })
        );
        Ok(match value {
            // The type check already read dtype, device and rank: only the layout is left.
            Value::Tensor(t) if checked_f32_cpu && t.is_contiguous() => {
                match F32::view_checked(t) {
                    Ok(v) => Reg::F32(v),
                    Err(t) => Reg::of_owned_tensor(t)?,
                }
            }
            Value::Tensor(t) => Reg::of_owned_tensor(t)?,
            Value::Int(i) => Reg::Int(i),
            Value::Bool(b) => Reg::Bool(b),
            Value::Float(f) => Reg::Float(f),
        })
    }

    /// A tensor handed to generated code's helpers: as [`Reg::of_arg`] reads an argument
    /// (float32 viewed in place, a non-contiguous one copied once), whatever its type.
    pub(crate) fn of_tensor(t: &Tensor) -> Result<Reg> {
        Reg::of_owned_tensor(t.shallow_clone())
    }

    /// A float32 tensor viewed in place; a non-contiguous one is copied once, so every op
    /// after it reads it densely; any other tensor as it is.
    fn of_owned_tensor(t: Tensor) -> Result<Reg> {
        // A tensor with the negative bit (`torch._neg_view`, the imaginary part of a
        // conjugate) stores the negation of its values; ATen ops honour the bit, a dense view
        // would not, so it is materialized once.
        let t = if t.f_is_neg()? { t.f_resolve_neg()? } else { t };
        Ok(match F32::view(t) {
            Ok(v) => Reg::F32(v),
            Err(t) if t.f_kind().ok() == Some(tch::Kind::Float) && !t.is_contiguous() => {
                match F32::view(t.f_contiguous()?) {
                    Ok(v) => Reg::F32(v),
                    Err(t) => Reg::Tensor(t),
                }
            }
            Err(t) => Reg::Tensor(t),
        })
    }

    /// What an ATen op returned from `operands`, dense when it can be; a result that aliases a
    /// pooled operand (whose buffer may be reused) is copied first.
    fn of_result(t: Tensor, operands: &[&Reg]) -> Result<Reg> {
        let aliased = operands.iter().any(|r| match r {
            Reg::F32(v @ F32::Pooled(..)) => v.contains_data_of(&t),
            _ => false,
        });
        let t = if aliased {
            let mut copy = t.f_empty_like()?;
            copy.f_copy_(&t)?;
            copy
        } else {
            t
        };
        Ok(match F32::view(t) {
            Ok(v) => Reg::F32(v),
            Err(t) => Reg::Tensor(t),
        })
    }

    fn tensor(&self) -> Result<TensorRef<'_>> {
        match self {
            Reg::Tensor(t) => Ok(TensorRef::Borrowed(t)),
            Reg::F32(v) => v.tensor(),
            _ => unsupported("a scalar where a tensor is needed"),
        }
    }

    pub(crate) fn into_value(self) -> Result<Value> {
        Ok(match self {
            Reg::Tensor(t) => Value::Tensor(t),
            Reg::F32(v) => Value::Tensor(v.into_tensor()?),
            Reg::Int(i) => Value::Int(i),
            Reg::Bool(b) => Value::Bool(b),
            Reg::Float(f) => Value::Float(f),
        })
    }

    /// A second handle on a value: tensors share their storage, buffers are copied.
    pub(crate) fn share(&self) -> Reg {
        match self {
            Reg::Tensor(t) => Reg::Tensor(t.shallow_clone()),
            Reg::F32(v) => Reg::F32(v.share()),
            Reg::Int(i) => Reg::Int(*i),
            Reg::Bool(b) => Reg::Bool(*b),
            Reg::Float(f) => Reg::Float(*f),
        }
    }

    fn from_scalar(s: Scalar) -> Reg {
        match s {
            Scalar::Int(i) => Reg::Int(i),
            Scalar::Bool(b) => Reg::Bool(b),
            Scalar::Float(f) => Reg::Float(f),
        }
    }
}

/// Writes scalar `value` into `slot`. Where the slot already holds a scalar of the same kind
/// (a loop's counter or carried int, every iteration), only the number is stored: writing a
/// whole new `Reg` goes through the stack in pieces, and reading it back whole stalls store
/// forwarding (that was a third of a small loop's time).
#[inline(always)]
fn set_scalar(slots: &mut [Option<Reg>], slot: Slot, value: Scalar) -> Result<()> {
    match (slots.get_mut(slot), value) {
        (Some(Some(Reg::Int(x))), Scalar::Int(v)) => *x = v,
        (Some(Some(Reg::Bool(x))), Scalar::Bool(v)) => *x = v,
        (Some(Some(Reg::Float(x))), Scalar::Float(v)) => *x = v,
        (Some(s), value) => *s = Some(Reg::from_scalar(value)),
        (None, _) => return unsupported(format!("slot {slot} is out of range")),
    }
    Ok(())
}

/// `a op b` on two ints where the result is plainly Python's: no overflow, and floor
/// division and modulo of non-negative operands; `None` sends every other case (overflow
/// and zero-division errors, negative operands, true division) to [`scalar::binary`].
#[inline(always)]
fn int_fast(op: ScalarOp, a: i64, b: i64) -> Option<Scalar> {
    Some(match op {
        ScalarOp::Add => Scalar::Int(a.checked_add(b)?),
        ScalarOp::Sub => Scalar::Int(a.checked_sub(b)?),
        ScalarOp::Mul => Scalar::Int(a.checked_mul(b)?),
        ScalarOp::FloorDiv if a >= 0 && b > 0 => Scalar::Int(a / b),
        ScalarOp::Mod if a >= 0 && b > 0 => Scalar::Int(a % b),
        ScalarOp::Eq => Scalar::Bool(a == b),
        ScalarOp::Ne => Scalar::Bool(a != b),
        ScalarOp::Lt => Scalar::Bool(a < b),
        ScalarOp::Le => Scalar::Bool(a <= b),
        ScalarOp::Gt => Scalar::Bool(a > b),
        ScalarOp::Ge => Scalar::Bool(a >= b),
        _ => return None,
    })
}

fn reg_at(slots: &[Option<Reg>], slot: Slot) -> Result<&Reg> {
    match slots.get(slot) {
        Some(Some(r @ (Reg::Tensor(_) | Reg::F32(_)))) => Ok(r),
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
        Value::Float(_) => "is a float",
    };
    let wrong = |message: &str| {
        Err(RuntimeError::ArgumentType(format!(
            "{message} {}",
            given_note(param, Some(given))
        )))
    };
    match (value, ty) {
        (Value::Tensor(t), Type::Tensor(expected)) => check_tensor_argument(t, expected, param),
        (Value::Int(_), Type::Int)
        | (Value::Bool(_), Type::Bool)
        | (Value::Float(_), Type::Float) => Ok(()),
        (_, Type::Tensor(_)) => wrong(NOT_A_TENSOR),
        (_, Type::Int) => wrong(EXPECTED_INT),
        (_, Type::Bool) => wrong(EXPECTED_BOOL),
        (_, Type::Float) => wrong(EXPECTED_FLOAT),
    }
}

fn scalar_at(slots: &[Option<Reg>], slot: Slot) -> Result<Scalar> {
    match slots.get(slot) {
        Some(Some(Reg::Int(i))) => Ok(Scalar::Int(*i)),
        Some(Some(Reg::Bool(b))) => Ok(Scalar::Bool(*b)),
        Some(Some(Reg::Float(f))) => Ok(Scalar::Float(*f)),
        Some(Some(Reg::Tensor(_) | Reg::F32(_))) => unsupported(format!(
            "slot {slot} holds a tensor where a scalar is needed"
        )),
        _ => unsupported(format!("slot {slot} is read before it is written")),
    }
}

fn int_at(slots: &[Option<Reg>], slot: Slot) -> Result<i64> {
    match scalar_at(slots, slot)? {
        Scalar::Int(i) => Ok(i),
        Scalar::Bool(b) => Ok(i64::from(b)),
        Scalar::Float(_) => {
            unsupported(format!("slot {slot} holds a float where an int is needed"))
        }
    }
}
