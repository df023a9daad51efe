//! The executor's instructions: the flat form a [`Program`] is compiled to ([`crate::compile`])
//! and run in ([`crate::executor`]). Slots are indices into a call's value vector
//! ([`crate::reg::Slot`]); jumps are instruction indices.

use rextio_ir::{
    BinaryOp, FusedTail, ReduceKind, ScalarOp, ScalarUnaryOp, Type, UnaryOp, WeightLayout,
};

use crate::control::Range;
use crate::reg::Slot;

/// An instruction index.
pub(crate) type Pc = usize;

#[derive(Debug)]
pub(crate) enum Instr {
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
