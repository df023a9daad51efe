//! The IR-to-instruction compiler: [`Program::compile`] turns an optimized IR function into
//! the flat instruction list of [`crate::instr`] (structured control flow becomes jumps, values
//! get slots, moves replace copies where the source dies; see [`crate::executor`]).

use rextio_ir::{
    Block, Carried, Device, ExprId, ExprKind, Function, Iteration, ReusedWeights, Stmt, TensorType,
    Type,
};

use crate::error::{unsupported, Result};
use crate::instr::{instr_out, Instr, Op, Pc, Program};
use crate::reg::Slot;

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
    /// Which ops' weights to transpose once per call (generated code reads the same
    /// analysis, so both run the same kernel).
    reused: ReusedWeights,
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
                self.block(&l.cond_block)?;
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
        let kind = match &expr.kind {
            ExprKind::Bound => {
                return unsupported(format!(
                    "%{index} is bound by a statement; no `let` evaluates it"
                ))
            }
            kind => kind.try_map(|operand| self.slot(operand))?,
        };
        let out = self.fresh();
        self.slot_of[index] = Some(out);
        self.mark_placed(id);
        self.instrs.push(Instr::Op(Op {
            kind,
            out,
            reused: self.reused.contains(id),
        }));
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
            reused: ReusedWeights::of(f),
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
}

#[cfg(test)]
mod tests {
    use rextio_ir::{
        Block, Carried, ExprKind, ForLoop, Function, Iteration, Param, ReusedWeights, Stmt,
        TensorType, Type,
    };

    use crate::instr::{Instr, Op, Program};

    /// `linear(x, w)` before a loop and again in its body: the instructions' flags are the
    /// IR's analysis (which generated code reads too), so the one in the loop transposes its
    /// weight once per call.
    #[test]
    fn the_reused_weights_are_the_irs_analysis() {
        let matrix = Type::Tensor(TensorType::F32_CPU_2D);
        let param = |name: &str| Param {
            name: name.to_string(),
            ty: matrix,
        };
        let mut f = Function::new("f", vec![param("x"), param("w")], matrix);
        let x = f.push_let(ExprKind::Param(0), matrix);
        let w = f.push_let(ExprKind::Param(1), matrix);
        let linear = |input| ExprKind::Linear {
            input,
            weight: w,
            bias: None,
        };
        let before = f.push_let(linear(x), matrix);
        let index = f.push(ExprKind::Bound, Type::Int);
        let arg = f.push(ExprKind::Bound, matrix);
        let result = f.push(ExprKind::Bound, matrix);
        let inside = f.push(linear(arg), matrix);
        f.body.stmts.push(Stmt::For(Box::new(ForLoop {
            index,
            iteration: Iteration::Values(vec![1, 2]),
            carried: vec![Carried {
                arg,
                init: before,
                result,
            }],
            body: Block::new(vec![Stmt::Let(inside), Stmt::Continue(vec![inside])]),
        })));
        f.body.stmts.push(Stmt::Return(result));
        let program = Program::compile(&f).expect("compiles");
        let flags: Vec<bool> = program
            .instrs
            .iter()
            .filter_map(|instr| match instr {
                Instr::Op(
                    op @ Op {
                        kind: ExprKind::Linear { .. },
                        ..
                    },
                ) => Some(op.reused),
                _ => None,
            })
            .collect();
        let analysis = ReusedWeights::of(&f);
        assert_eq!(
            flags,
            vec![analysis.contains(before), analysis.contains(inside)]
        );
        assert_eq!(flags, vec![false, true]);
    }
}
