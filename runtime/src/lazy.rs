//! Tensor values of Rextio-generated functions, where the plugin's lowered sites meet
//! (docs/rextio-plugin.md, "Fusion across sites").
//!
//! Rextio lowers one claimed site at a time and splices the expressions together, so no site
//! sees its neighbours: `F.linear(x, w, b).relu().mean(dim=1)` arrives as three sites. A
//! plugin type's Rust type is the plugin's to choose, so ours is [`LazyTensor`], not a tch
//! tensor. A `linear` site returns its linear *pending*; an elementwise site that consumes it
//! appends its op to the pending epilogue, and a `sum`/`mean` over dim 1 becomes its reduction
//! tail, the same rules as the fusion pass (passes/src/fuse.rs). The chain runs when a value
//! is needed, as the executor's one fused op for it: same kernel choice, same bits as
//! `rextio_torch.compile` on the same function. Every other op runs at its site on the
//! executor's values (dense float32 in pooled buffers, or tensors), so intermediates between
//! sites are never ATen tensors; only the returned value becomes one.
//!
//! **Only single-use values are extended.** A consumer extends a pending chain only when it
//! gets the value by value ([`Arg::Owned`]), which the lowering does only for values used once:
//! the host's receiver temporaries and nested expressions. A value bound to a name is passed by
//! reference ([`Arg::Shared`]): it is computed once, memoized, and read by each use, so fusion
//! never computes a linear twice (the e-graph cuts its trees at shared values for the same
//! reason).
//!
//! **Errors are raised where eager raises them.** A linear is left pending only when its
//! operands are dense float32 of fitting shapes, so that running it later cannot fail; any
//! other linear runs at its site (where it raises eager's error).

use std::cell::OnceCell;
use std::rc::Rc;

use rextio_ir::{
    fusable_reduce, BinaryOp, FusedReduce, ReduceKind, SoftmaxKind, TensorType, Type, UnaryOp,
};
use tch::Tensor;

use crate::error::Result;
use crate::eval;
use crate::reg::{Reg, Value};

/// Most activations one pending chain takes; a longer chain runs its first part and
/// continues op by op (a bound on the inline array, never on correctness).
pub const MAX_PENDING_ACTIVATIONS: usize = 8;

/// A tensor value of a generated function: computed, or a linear chain not yet run.
#[derive(Clone)]
pub struct LazyTensor(State);

#[derive(Clone)]
enum State {
    Ready(Rc<Reg>),
    Linear(Rc<Pending>),
}

struct Pending {
    x: Rc<Reg>,
    w: Rc<Reg>,
    b: Option<Rc<Reg>>,
    activations: [UnaryOp; MAX_PENDING_ACTIVATIONS],
    len: usize,
    reduce: Option<FusedReduce>,
    /// The result, once a shared use needed it.
    value: OnceCell<Rc<Reg>>,
}

impl Pending {
    fn run(&self) -> Result<Rc<Reg>> {
        if let Some(v) = self.value.get() {
            return Ok(v.clone());
        }
        let v = Rc::new(eval::linear_reduced(
            &self.x,
            &self.w,
            self.b.as_deref(),
            &self.activations[..self.len],
            self.reduce,
            None,
        )?);
        // Only this thread can reach the cell (`Rc`), and it was empty above.
        let _ = self.value.set(v.clone());
        Ok(v)
    }
}

/// How a site gets an operand: by value when the value has no other use (it may then be
/// extended in place), by reference otherwise.
pub enum Arg<'a> {
    Owned(LazyTensor),
    Shared(&'a LazyTensor),
}

impl From<LazyTensor> for Arg<'_> {
    fn from(v: LazyTensor) -> Self {
        Arg::Owned(v)
    }
}

impl<'a> From<&'a LazyTensor> for Arg<'a> {
    fn from(v: &'a LazyTensor) -> Self {
        Arg::Shared(v)
    }
}

impl Arg<'_> {
    fn reg(&self) -> Result<Rc<Reg>> {
        match self {
            Arg::Owned(v) => v.reg(),
            Arg::Shared(v) => v.reg(),
        }
    }

    /// The pending chain behind an operand this site may extend: owned, not yet run, and
    /// with no other handle (one that was cloned is run once and read by both instead).
    fn into_extensible(self) -> std::result::Result<Pending, Self> {
        match self {
            Arg::Owned(LazyTensor(State::Linear(p))) if p.value.get().is_none() => {
                Rc::try_unwrap(p).map_err(|p| Arg::Owned(LazyTensor(State::Linear(p))))
            }
            other => Err(other),
        }
    }
}

impl LazyTensor {
    /// An argument already checked against its parameter type (`boundary::extract_tensor`).
    pub fn argument(t: Tensor, ty: TensorType) -> Result<LazyTensor> {
        Ok(Self::ready(Reg::of_arg(
            Value::Tensor(t),
            Type::Tensor(ty),
        )?))
    }

    fn ready(r: Reg) -> LazyTensor {
        LazyTensor(State::Ready(Rc::new(r)))
    }

    fn reg(&self) -> Result<Rc<Reg>> {
        match &self.0 {
            State::Ready(r) => Ok(r.clone()),
            State::Linear(p) => p.run(),
        }
    }

    /// Whether a chain is still pending (tests and diagnostics).
    pub fn is_pending(&self) -> bool {
        matches!(&self.0, State::Linear(p) if p.value.get().is_none())
    }

    /// The value as a tensor, running a pending chain.
    pub fn into_tensor(self) -> Result<Tensor> {
        let reg = self.reg()?;
        drop(self);
        crate::exec::tensor(Rc::try_unwrap(reg).unwrap_or_else(|shared| shared.share()))
    }
}

/// `F.linear(x, w, b)`: pending when it is dense float32 of fitting shapes, else run here.
pub fn linear<'a>(
    x: impl Into<Arg<'a>>,
    w: impl Into<Arg<'a>>,
    b: Option<Arg<'a>>,
) -> Result<LazyTensor> {
    let (x, w) = (x.into().reg()?, w.into().reg()?);
    let b = b.map(|b| b.reg()).transpose()?;
    // Exactly the operands the dense kernels take, so that running the chain later cannot
    // fail.
    if eval::dense_linear_operands(&x, &w, b.as_deref()).is_none() {
        return Ok(LazyTensor::ready(eval::linear_reduced(
            &x,
            &w,
            b.as_deref(),
            &[],
            None,
            None,
        )?));
    }
    Ok(LazyTensor(State::Linear(Rc::new(Pending {
        x,
        w,
        b,
        activations: [UnaryOp::Relu; MAX_PENDING_ACTIVATIONS],
        len: 0,
        reduce: None,
        value: OnceCell::new(),
    }))))
}

/// An elementwise op: appended to a pending chain it owns, else run here.
pub fn unary<'a>(op: UnaryOp, x: impl Into<Arg<'a>>) -> Result<LazyTensor> {
    let x = match x.into().into_extensible() {
        Ok(mut p)
            if p.reduce.is_none()
                && p.len < MAX_PENDING_ACTIVATIONS
                && !op.depends_on_position() =>
        {
            p.activations[p.len] = op;
            p.len += 1;
            return Ok(LazyTensor(State::Linear(Rc::new(p))));
        }
        Ok(p) => p.run()?,
        Err(x) => x.reg()?,
    };
    Ok(LazyTensor::ready(eval::unary(op, &x)?))
}

/// `sum`/`mean` (`amax`/`amin` never fuse): the reduction tail of a pending chain it owns (where the fusion pass would
/// fuse it), else run here.
pub fn reduce<'a>(
    kind: ReduceKind,
    x: impl Into<Arg<'a>>,
    dim: u8,
    keepdim: bool,
) -> Result<LazyTensor> {
    let x = match x.into().into_extensible() {
        Ok(mut p) if p.reduce.is_none() && fusable_reduce(kind, dim) => {
            p.reduce = Some(FusedReduce { kind, dim, keepdim });
            return Ok(LazyTensor(State::Linear(Rc::new(p))));
        }
        Ok(p) => p.run()?,
        Err(x) => x.reg()?,
    };
    Ok(LazyTensor::ready(eval::reduce(kind, &x, dim, keepdim)?))
}

pub fn binary<'a>(
    op: BinaryOp,
    lhs: impl Into<Arg<'a>>,
    rhs: impl Into<Arg<'a>>,
) -> Result<LazyTensor> {
    let (lhs, rhs) = (lhs.into().reg()?, rhs.into().reg()?);
    Ok(LazyTensor::ready(eval::binary(op, &lhs, &rhs)?))
}

pub fn matmul<'a>(lhs: impl Into<Arg<'a>>, rhs: impl Into<Arg<'a>>) -> Result<LazyTensor> {
    let (lhs, rhs) = (lhs.into().reg()?, rhs.into().reg()?);
    Ok(LazyTensor::ready(eval::matmul(&lhs, &rhs)?))
}

pub fn softmax<'a>(x: impl Into<Arg<'a>>, dim: u8) -> Result<LazyTensor> {
    let x = x.into().reg()?;
    Ok(LazyTensor::ready(eval::softmax(
        SoftmaxKind::Softmax,
        &x,
        dim,
    )?))
}

pub fn log_softmax<'a>(x: impl Into<Arg<'a>>, dim: u8) -> Result<LazyTensor> {
    let x = x.into().reg()?;
    Ok(LazyTensor::ready(eval::softmax(
        SoftmaxKind::LogSoftmax,
        &x,
        dim,
    )?))
}

pub fn argmax<'a>(x: impl Into<Arg<'a>>, dim: u8, keepdim: bool) -> Result<LazyTensor> {
    Ok(LazyTensor::ready(eval::argmax(
        &*x.into().reg()?,
        dim,
        keepdim,
    )?))
}
