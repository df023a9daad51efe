//! The executor's instructions: the flat form a [`Program`] is compiled to ([`crate::compile`])
//! and run in ([`crate::executor`]). Slots are indices into a call's value vector
//! ([`crate::reg::Slot`]); jumps are instruction indices.

use rextio_ir::{ExprKind, Type};

use crate::control::Range;
use crate::reg::Slot;

/// An instruction index.
pub(crate) type Pc = usize;

#[derive(Debug)]
pub(crate) enum Instr {
    /// Computes an op of the IR into a slot.
    Op(Op),
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

/// A pure op of the IR over slots: the IR's own [`ExprKind`] with every operand renamed to
/// its slot (one map over the operands, so the executor keeps no copy of the ops' fields),
/// and what the executor decides about it beyond the IR.
#[derive(Debug)]
pub(crate) struct Op {
    /// Never `Param` (a parameter read takes no instruction: its slot is the argument's) nor
    /// `Bound` (its statement writes it).
    pub(crate) kind: ExprKind<Slot>,
    pub(crate) out: Slot,
    /// A `linear`'s weight is an argument read inside a loop: worth transposing once per
    /// call (`rextio_ir::ReusedWeights`, which generated code reads too).
    pub(crate) reused: bool,
}

/// The run-time state of one `for` loop: a range, or a position in a literal list.
#[derive(Clone, Debug)]
pub(crate) enum LoopState {
    Range(Range),
    Values { list: usize, position: usize },
}

/// A compiled function. Immutable and `Sync`: one program serves every call and thread.
#[derive(Debug)]
pub struct Program {
    pub(crate) name: String,
    pub(crate) param_names: Vec<String>,
    pub(crate) param_types: Vec<Type>,
    pub(crate) ret: Type,
    pub(crate) instrs: Vec<Instr>,
    pub(crate) slot_count: usize,
    /// The literal value lists of `for` loops, by loop state.
    pub(crate) value_lists: Vec<Option<Box<[i64]>>>,
    /// By instruction: whether it computes a value a `return` hands back as it is (its
    /// buffer can then be the result tensor itself).
    pub(crate) returned: Vec<bool>,
}

/// The slot a computing instruction writes.
pub(crate) fn instr_out(instr: &Instr) -> Option<Slot> {
    match instr {
        Instr::Op(op) => Some(op.out),
        _ => None,
    }
}
