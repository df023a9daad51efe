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
//!
//! This module is the run loop ([`Program::run`] and the binding and pausing calls); the
//! instructions are `instr`'s, the compiler `compile`'s ([`Program::compile`]), the per-op
//! functions `eval`'s and the values `reg`'s (see the layer table in the crate doc).

use std::time::{Duration, Instant};

use rextio_ir::{ExprKind, ScalarOp, Type, WeightLayout};

use crate::buffer::Buffer;
use crate::control::Range;
use crate::elementwise;
use crate::error::{unsupported, Result, RuntimeError};
use crate::eval::{
    add_residual, added_bias_unfused, apply_prologue, argmax, attention, binary, bmm, embedding,
    embedding_bag, extremum, fill_like, index_select, join, layer_norm, linear, matmul,
    matmul_linear, norm_rows, normalize, param_unary, reduce, reduce_all, size, softmax,
    tensor_scalar, tensor_truth, to_scalar, unary, view, TransposedWeights,
};
use crate::instr::{Instr, LoopState, Op, Pc};
use crate::reg::{Reg, Slot};
use crate::scalar::{self, Scalar};

// The program and the values live in lower layers; they are part of this module's public
// API as they always were.
pub use crate::instr::Program;
pub use crate::reg::{check_argument, Arg, Value, EXPECTED_FLOAT};

/// What runs a scalar boundary call (`boundary_call`, IR invariant 13): the embedder's way
/// back into Python, given with the call (the runtime knows no interpreter; the Python
/// package's is `rextio_torch._native`'s, which looks the callee up in the compiled
/// function's module globals). `call` gets the callee's name and its arguments and returns
/// what the callee returned, as the nearest scalar (a Python `bool` as [`Scalar::Bool`]);
/// the executor then checks it against the declared type ([`boundary_result`]). An error it
/// returns ends the call with that error ([`RuntimeError::Raised`] for an exception the
/// embedder holds).
pub trait Boundary {
    /// Calls `callee` with `args`; `ret` is the callee's declared result, for the
    /// embedder's own message about a returned value that is no scalar at all.
    fn call(&mut self, callee: &str, args: &[Scalar], ret: Type) -> Result<Scalar>;
}

impl<F: FnMut(&str, &[Scalar]) -> Result<Scalar>> Boundary for F {
    fn call(&mut self, callee: &str, args: &[Scalar], _ret: Type) -> Result<Scalar> {
        self(callee, args)
    }
}

/// The boundary of a call that has no way back into Python (the plain `run` entry points,
/// Rust callers): a boundary call is a clear error, never a panic.
pub struct NoBoundary;

impl Boundary for NoBoundary {
    fn call(&mut self, callee: &str, _args: &[Scalar], _ret: Type) -> Result<Scalar> {
        unsupported(format!(
            "`{callee}` is called back in Python (a scalar boundary call), and this call has no \
             Python to call it: run the function through rextio_torch.compile, or pass a \
             rextio_runtime::executor::Boundary"
        ))
    }
}

/// The value a boundary call returned, as its declared type `ret`: a Python `bool` is an
/// `int` (0 or 1) where `int` is declared and a number where `float` is, an `int` is a
/// `float` where `float` is declared (`float(n)`); anything else is the `TypeError` that
/// names the callee.
pub fn boundary_result(callee: &str, value: Scalar, ret: Type) -> Result<Scalar> {
    let kind = |v: Scalar| match v {
        Scalar::Int(_) => "int",
        Scalar::Bool(_) => "bool",
        Scalar::Float(_) => "float",
    };
    match (ret, value) {
        (Type::Int, Scalar::Int(_))
        | (Type::Bool, Scalar::Bool(_))
        | (Type::Float, Scalar::Float(_)) => Ok(value),
        (Type::Int, Scalar::Bool(b)) => Ok(Scalar::Int(i64::from(b))),
        (Type::Float, Scalar::Bool(b)) => Ok(Scalar::Float(f64::from(u8::from(b)))),
        (Type::Float, Scalar::Int(i)) => Ok(Scalar::Float(i as f64)),
        (ret, value) => Err(RuntimeError::ArgumentType(format!(
            "{callee}() returned {}, but its return annotation is {ret} (a scalar boundary call)",
            kind(value)
        ))),
    }
}

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

impl Program {
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

    /// [`Program::run`] with `boundary` running its boundary calls into Python.
    pub fn run_with(&self, args: Vec<Value>, boundary: &mut dyn Boundary) -> Result<Value> {
        if args.len() != self.param_types.len() {
            return self.run(args);
        }
        for ((arg, ty), param) in args.iter().zip(&self.param_types).zip(&self.param_names) {
            check_argument(arg, *ty, param)?;
        }
        let call = self.bind(args)?;
        self.run_bound_with(call, &mut || Ok(()), boundary)
    }

    /// Whether the program makes a boundary call into Python (it then needs a
    /// [`Boundary`] to run it all).
    pub fn calls_back(&self) -> bool {
        self.instrs.iter().any(|i| {
            matches!(
                i,
                Instr::Op(Op {
                    kind: ExprKind::BoundaryCall { .. },
                    ..
                })
            )
        })
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
        self.run_bound_with(call, interrupted, &mut NoBoundary)
    }

    /// [`Program::run_bound`] with `boundary` running its boundary calls into Python.
    pub fn run_bound_with(
        &self,
        call: BoundCall,
        interrupted: &mut dyn FnMut() -> Result<()>,
        boundary: &mut dyn Boundary,
    ) -> Result<Value> {
        self.run_to_end(
            Scratch::take(call.slots),
            RunState::start(),
            interrupted,
            boundary,
        )
    }

    /// Runs from `at` to the end of the call, then returns its scratch.
    fn run_to_end(
        &self,
        mut scratch: Scratch,
        mut at: RunState,
        interrupted: &mut dyn FnMut() -> Result<()>,
        boundary: &mut dyn Boundary,
    ) -> Result<Value> {
        let _no_grad = tch::no_grad_guard();
        let result = self.execute(&mut scratch, &mut at, interrupted, false, boundary);
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
        self.run_bound_pausing_with(call, &mut NoBoundary)
    }

    /// [`Program::run_bound_pausing`] with `boundary` running its boundary calls.
    pub fn run_bound_pausing_with(&self, call: BoundCall, boundary: &mut dyn Boundary) -> Step {
        let _no_grad = tch::no_grad_guard();
        let mut scratch = Scratch::take(call.slots);
        let mut at = RunState::start();
        let result = self.execute(&mut scratch, &mut at, &mut || Ok(()), true, boundary);
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
        self.resume_with(paused, interrupted, &mut NoBoundary)
    }

    /// [`Program::resume`] with `boundary` running its boundary calls.
    pub fn resume_with(
        &self,
        paused: Paused,
        interrupted: &mut dyn FnMut() -> Result<()>,
        boundary: &mut dyn Boundary,
    ) -> Result<Value> {
        let Paused { scratch, mut at } = paused;
        at.checked = true;
        at.last_check = Some(Instant::now());
        self.run_to_end(scratch, at, interrupted, boundary)
    }

    fn execute(
        &self,
        scratch: &mut Scratch,
        at: &mut RunState,
        interrupted: &mut dyn FnMut() -> Result<()>,
        pause_at_first_check: bool,
        boundary: &mut dyn Boundary,
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
                Instr::Op(Op {
                    kind: ExprKind::ConstInt(value),
                    out,
                    ..
                }) => set_scalar(slots, *out, Scalar::Int(*value))?,
                Instr::Op(Op {
                    kind: ExprKind::ConstBool(value),
                    out,
                    ..
                }) => set_scalar(slots, *out, Scalar::Bool(*value))?,
                Instr::Op(Op {
                    kind: ExprKind::Scalar { op, lhs, rhs },
                    out,
                    ..
                }) => {
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
                // A call back into Python: the embedder's, with the arguments' values; what
                // comes back is checked against the declared type.
                Instr::Op(Op {
                    kind: ExprKind::BoundaryCall { callee, args, ret },
                    out,
                    ..
                }) => {
                    let values = args
                        .iter()
                        .map(|a| scalar_at(slots, *a))
                        .collect::<Result<Vec<_>>>()?;
                    let value = boundary.call(callee, &values, *ret)?;
                    set_scalar(slots, *out, boundary_result(callee, value, *ret)?)?;
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
                        int_at(slots, *start)?,
                        int_at(slots, *stop)?,
                        int_at(slots, *step)?,
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
                Instr::Op(compute) => {
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
        op: &Op,
        slots: &[Option<Reg>],
        transposed: &mut TransposedWeights,
    ) -> Result<(Slot, Reg)> {
        let t = |slot: Slot| reg_at(slots, slot);
        let Op { kind, out, reused } = op;
        let value = match kind {
            ExprKind::ConstInt(value) => Reg::Int(*value),
            ExprKind::ConstBool(value) => Reg::Bool(*value),
            ExprKind::ConstFloat(value) => Reg::Float(value.value()),
            ExprKind::Scalar { op, lhs, rhs } => Reg::from_scalar(scalar::binary(
                *op,
                scalar_at(slots, *lhs)?,
                scalar_at(slots, *rhs)?,
            )?),
            ExprKind::ScalarUnary { op, input } => {
                Reg::from_scalar(scalar::unary(*op, scalar_at(slots, *input)?)?)
            }
            ExprKind::Unary { op, input } => unary(*op, t(*input)?)?,
            ExprKind::Binary { op, lhs, rhs } => binary(*op, t(*lhs)?, t(*rhs)?)?,
            ExprKind::TensorScalar { op, tensor, scalar } => {
                tensor_scalar(*op, t(*tensor)?, scalar_at(slots, *scalar)?)?
            }
            ExprKind::ParamUnary {
                op,
                input,
                first,
                second,
            } => param_unary(
                *op,
                t(*input)?,
                scalar_at(slots, *first)?,
                second.map(|s| scalar_at(slots, s)).transpose()?,
            )?,
            ExprKind::Linear {
                input,
                weight,
                bias,
            } => {
                let (x, w) = (t(*input)?, t(*weight)?);
                let b = bias.map(t).transpose()?;
                let cache = reused.then_some((*weight, transposed));
                linear(x, w, b, &[], None, cache)?
            }
            ExprKind::Matmul { lhs, rhs } => matmul(t(*lhs)?, t(*rhs)?)?,
            ExprKind::Bmm { lhs, rhs } => bmm(t(*lhs)?, t(*rhs)?)?,
            ExprKind::FusedAttention { q, k, v, scale } => {
                let scale = match scale {
                    Some(s) => Some((s.op, scalar_at(slots, s.value)?)),
                    None => None,
                };
                attention(t(*q)?, t(*k)?, t(*v)?, scale)?
            }
            ExprKind::Reduce {
                kind,
                input,
                dim,
                keepdim,
            } => reduce(*kind, t(*input)?, *dim, *keepdim)?,
            ExprKind::Softmax { kind, input, dim } => softmax(*kind, t(*input)?, *dim)?,
            ExprKind::Argmax {
                input,
                dim,
                keepdim,
            } => argmax(t(*input)?, *dim, *keepdim)?,
            ExprKind::LayerNorm {
                input,
                normalized,
                weight,
                bias,
                eps,
            } => {
                let Scalar::Int(normalized) = scalar_at(slots, *normalized)? else {
                    return unsupported("internal: layer_norm's normalized size is not an int");
                };
                layer_norm(
                    t(*input)?,
                    weight.map(t).transpose()?,
                    bias.map(t).transpose()?,
                    normalized,
                    eps.value(),
                )?
            }
            ExprKind::Embedding { ids, weight } => embedding(t(*ids)?, t(*weight)?)?,
            ExprKind::View {
                kind,
                input,
                sizes,
                dim,
            } => {
                let sizes = sizes
                    .iter()
                    .map(|s| int_at(slots, *s))
                    .collect::<Result<Vec<_>>>()?;
                view(*kind, t(*input)?, &sizes, *dim)?
            }
            ExprKind::Size { input, dim } => Reg::Int(size(t(*input)?, *dim)?),
            ExprKind::ReduceAll { op, input } => reduce_all(*op, t(*input)?)?,
            ExprKind::ToScalar { kind, input } => Reg::Float(to_scalar(*kind, t(*input)?)?),
            ExprKind::TensorTruth { op, lhs, rhs } => {
                // The other side is a tensor or a Python scalar, read as elementwise reads
                // its operands (no error built on the tensor path).
                let rhs = match slots.get(*rhs) {
                    Some(Some(reg @ (Reg::Tensor(_) | Reg::F32(_)))) => Ok(reg),
                    _ => Err(scalar_at(slots, *rhs)?),
                };
                Reg::Bool(tensor_truth(*op, t(*lhs)?, rhs)?)
            }
            // The run loop makes boundary calls itself (it holds the embedder's boundary).
            ExprKind::BoundaryCall { callee, .. } => {
                return unsupported(format!(
                    "internal: the boundary call to `{callee}` reached the op step"
                ))
            }
            ExprKind::Extremum {
                op,
                input,
                dim,
                keepdim,
            } => extremum(*op, t(*input)?, *dim, *keepdim)?,
            ExprKind::FillLike { kind, input, value } => fill_like(
                *kind,
                t(*input)?,
                value.map(|v| scalar_at(slots, v)).transpose()?,
            )?,
            ExprKind::IndexSelect { input, ids, dim } => index_select(t(*input)?, t(*ids)?, *dim)?,
            ExprKind::Normalize { input, p, dim, eps } => {
                normalize(t(*input)?, p.value(), *dim, eps.value())?
            }
            ExprKind::Join { kind, parts, dim } => {
                let parts = parts.iter().map(|p| t(*p)).collect::<Result<Vec<_>>>()?;
                join(*kind, &parts, *dim)?
            }
            ExprKind::Elementwise { op, operands } => {
                let operands = operands
                    .iter()
                    .map(|slot| match slots.get(*slot) {
                        Some(Some(reg @ (Reg::Tensor(_) | Reg::F32(_)))) => {
                            Ok(elementwise::Operand::Tensor(reg))
                        }
                        _ => scalar_at(slots, *slot).map(elementwise::Operand::Scalar),
                    })
                    .collect::<Result<Vec<_>>>()?;
                elementwise::elementwise(*op, &operands)?
            }
            ExprKind::EmbeddingBag {
                ids,
                weight,
                offsets,
                mode,
            } => embedding_bag(t(*ids)?, t(*weight)?, t(*offsets)?, *mode)?,
            ExprKind::FusedLinear {
                input,
                weight,
                bias,
                prologue,
                activations,
                tail,
                layout,
                bias_added,
                residual,
                norm,
            } => {
                let (x, w) = (t(*input)?, t(*weight)?);
                let b = bias.map(t).transpose()?;
                let normed;
                let x = match norm {
                    Some(n) => {
                        let Scalar::Int(normalized) = scalar_at(slots, n.normalized)? else {
                            return unsupported(
                                "internal: a fused layer_norm's normalized size is not an int",
                            );
                        };
                        let (nw, nb) = (n.weight.map(t).transpose()?, n.bias.map(t).transpose()?);
                        let eps = n.eps.value();
                        normed = Buffer::as_scratch(|| norm_rows(x, nw, nb, normalized, eps))?;
                        &normed
                    }
                    None => x,
                };
                let prepared;
                let x = if prologue.is_empty() {
                    x
                } else {
                    for step in prologue {
                        t(step.operand)?;
                    }
                    let steps = prologue
                        .iter()
                        .filter_map(|step| reg_at(slots, step.operand).ok().map(|v| (step.op, v)));
                    prepared = Buffer::as_scratch(|| apply_prologue(x, steps))?;
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
                match residual {
                    Some(r) => add_residual(y, t(r.operand)?, r.first)?,
                    None => y,
                }
            }
            ExprKind::Param(_) | ExprKind::Bound => {
                return unsupported("internal: a parameter read or bound value reached `step`")
            }
        };
        Ok((*out, value))
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
        self.transposed.clear();
        let _ = SCRATCH.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < 4 {
                    s.push(self);
                }
            }
        });
    }
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
