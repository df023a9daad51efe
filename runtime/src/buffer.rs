//! Float32 buffers and views: the per-thread buffer pool ([`Buffer`]), the dims of a rank 0
//! to 2 value ([`Dims`]), dense values over a buffer or a borrowed tensor ([`F32`]) and the
//! zero-copy tensor views ATen calls get ([`TensorRef`]).
//!
//! Buffers come from a per-thread pool and go back to it when their value dies, so a loop
//! that replaces its hidden state every iteration reuses two buffers and a call in steady
//! state allocates nothing but its result tensor.

use std::cell::RefCell;
use std::mem::ManuallyDrop;

use tch::{Device, Kind, Tensor};

use crate::error::Result;

/// Buffers kept per thread for reuse; more than a loop body holds at once is rare.
const POOL_BUFFERS: usize = 16;
/// A result the call returns is allocated by libtorch from this many elements on (32 KiB),
/// so it needs no copy; below, a pooled buffer and a copy cost less than an ATen allocation.
const TORCH_OUTPUT_MIN: usize = 8 * 1024;
/// Larger buffers (in elements, 16 MiB) are freed rather than kept.
const POOL_MAX_LEN: usize = 1 << 22;

thread_local! {
    static POOL: RefCell<Vec<Vec<f32>>> = const { RefCell::new(Vec::new()) };
}

/// A float32 buffer: from the per-thread pool, where it returns when dropped, or, for a large
/// result the call returns ([`Buffer::next_is_output`]), a libtorch tensor, which the result
/// then becomes without a copy.
#[derive(Debug)]
pub struct Buffer(Storage);

#[derive(Debug)]
enum Storage {
    Pooled(Vec<f32>),
    Torch {
        tensor: Tensor,
        ptr: *mut f32,
        len: usize,
    },
}

// SAFETY: `ptr` points into the data of `tensor`, which the buffer owns (tch tensors are
// Send); moving the buffer moves the owner with the pointer. A buffer dropped on another
// thread joins that thread's pool, which is as good as this one's.
unsafe impl Send for Buffer {}

thread_local! {
    /// Set by the executor just before an op whose value the call returns.
    static OUTPUT_NEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Buffer {
    /// Says that the next buffer taken on this thread holds the call's result. Ops take their
    /// output buffer before any scratch, so the next one is the result's.
    pub fn next_is_output(output: bool) {
        let _ = OUTPUT_NEXT.try_with(|flag| flag.set(output));
    }

    /// Clears the flag of [`Buffer::next_is_output`] and returns it, for an op that takes
    /// scratch before its output (a fused op's prologue) to give back once the scratch is
    /// taken.
    pub fn output_flag_aside() -> bool {
        OUTPUT_NEXT
            .try_with(|flag| flag.replace(false))
            .unwrap_or(false)
    }

    /// Runs `work`, every buffer it takes scratch, then gives the output flag back for the
    /// buffer after it: a fused op's input steps (its row normalization, its prologue) run
    /// before the product, whose buffer is the op's output.
    pub fn as_scratch<T>(work: impl FnOnce() -> T) -> T {
        let output = Buffer::output_flag_aside();
        let result = work();
        Buffer::next_is_output(output);
        result
    }

    /// A buffer of exactly `len` elements (stale contents: every kernel writes all of them).
    pub fn take(len: usize) -> Buffer {
        let output = OUTPUT_NEXT
            .try_with(|flag| flag.replace(false))
            .unwrap_or(false);
        if output && len >= TORCH_OUTPUT_MIN {
            if let Ok(tensor) = Tensor::f_empty([len as i64], (Kind::Float, Device::Cpu)) {
                let ptr = tensor.data_ptr() as *mut f32;
                return Buffer(Storage::Torch { tensor, ptr, len });
            }
        }
        let reused = POOL
            .try_with(|pool| {
                let mut pool = pool.try_borrow_mut().ok()?;
                let best = pool
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.capacity() >= len)
                    .min_by_key(|(_, v)| v.capacity())
                    .map(|(i, _)| i)?;
                Some(pool.swap_remove(best))
            })
            .ok()
            .flatten();
        let mut v = reused.unwrap_or_else(|| Vec::with_capacity(len));
        // Shrinking keeps initialized (stale) values; growing writes zeros only past them.
        if v.len() >= len {
            v.truncate(len);
        } else {
            v.resize(len, 0.0);
        }
        Buffer(Storage::Pooled(v))
    }

    pub fn as_slice(&self) -> &[f32] {
        match &self.0 {
            Storage::Pooled(v) => v,
            // SAFETY: `ptr` is the data of `tensor`, a fresh contiguous float32 tensor of
            // `len` elements that this buffer owns.
            Storage::Torch { ptr, len, .. } if *len > 0 => unsafe {
                std::slice::from_raw_parts(*ptr, *len)
            },
            Storage::Torch { .. } => &[],
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        match &mut self.0 {
            Storage::Pooled(v) => v,
            // SAFETY: as in `as_slice`; nobody else sees the tensor yet.
            Storage::Torch { ptr, len, .. } if *len > 0 => unsafe {
                std::slice::from_raw_parts_mut(*ptr, *len)
            },
            Storage::Torch { .. } => &mut [],
        }
    }

    /// The buffer as a tensor of `sizes` (same number of elements): the libtorch tensor itself
    /// (viewed), or a copy of a pooled buffer.
    fn into_tensor(mut self, sizes: &[i64]) -> Result<Tensor> {
        if let Storage::Torch { tensor, .. } = &mut self.0 {
            let tensor = std::mem::replace(tensor, Tensor::new());
            return Ok(tensor.f_view(sizes)?);
        }
        let t = Tensor::f_empty(sizes, (Kind::Float, Device::Cpu))?;
        let src = self.as_slice();
        if !src.is_empty() {
            // SAFETY: `t` is a fresh contiguous float32 tensor of as many elements.
            let dst =
                unsafe { std::slice::from_raw_parts_mut(t.data_ptr() as *mut f32, src.len()) };
            dst.copy_from_slice(src);
        }
        Ok(t)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let Storage::Pooled(v) = &mut self.0 else {
            return;
        };
        let v = std::mem::take(v);
        if v.capacity() == 0 || v.capacity() > POOL_MAX_LEN {
            return;
        }
        // During thread teardown the pool may be gone; the buffer is then simply freed.
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                if pool.len() < POOL_BUFFERS {
                    pool.push(v);
                }
            }
        });
    }
}

/// The shape of a dense value: rank 0, 1 or 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub(crate) rank: u8,
    pub(crate) size: [usize; 2],
}

impl Dims {
    pub fn scalar() -> Dims {
        Dims {
            rank: 0,
            size: [1, 1],
        }
    }

    pub fn vector(n: usize) -> Dims {
        Dims {
            rank: 1,
            size: [n, 1],
        }
    }

    pub fn matrix(rows: usize, cols: usize) -> Dims {
        Dims {
            rank: 2,
            size: [rows, cols],
        }
    }

    /// From tensor sizes; `None` for rank 3 and up or negative sizes.
    pub fn of_sizes(sizes: &[i64]) -> Option<Dims> {
        let u = |v: i64| usize::try_from(v).ok();
        match sizes {
            [] => Some(Dims::scalar()),
            [n] => Some(Dims::vector(u(*n)?)),
            [r, c] => Some(Dims::matrix(u(*r)?, u(*c)?)),
            _ => None,
        }
    }

    pub fn rank(self) -> usize {
        usize::from(self.rank)
    }

    pub fn len(self) -> usize {
        match self.rank {
            0 => 1,
            1 => self.size[0],
            _ => self.size[0] * self.size[1],
        }
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Size of dimension `d` (which must be below the rank).
    pub fn dim(self, d: usize) -> usize {
        self.size[d]
    }

    /// The sizes as tensor sizes, without allocating (`&dims.shape()[..dims.rank()]`).
    pub fn shape(self) -> [i64; 2] {
        [self.size[0] as i64, self.size[1] as i64]
    }

    pub fn sizes(self) -> Vec<i64> {
        (0..self.rank()).map(|d| self.size[d] as i64).collect()
    }

    /// As a matrix `[rows, cols]` aligned to the right, as broadcasting aligns shapes.
    pub(crate) fn as_matrix(self) -> [usize; 2] {
        match self.rank {
            0 => [1, 1],
            1 => [1, self.size[0]],
            _ => self.size,
        }
    }
}

/// A dense float32 value: a pooled buffer, or a contiguous float32 CPU tensor read in place
/// (an argument, or what an ATen op returned).
#[derive(Debug)]
pub enum F32 {
    Pooled(Buffer, Dims),
    Torch {
        tensor: Handle,
        ptr: *const f32,
        dims: Dims,
    },
}

/// The tch handle behind an [`F32::Torch`] value: owned, or borrowed from an argument the
/// caller keeps alive for the whole call ([`F32::borrowed_argument`]), which saves a handle
/// allocation and two reference-count updates per tensor argument.
pub struct Handle {
    tensor: ManuallyDrop<Tensor>,
    owned: bool,
}

impl Handle {
    fn owned(tensor: Tensor) -> Handle {
        Handle {
            tensor: ManuallyDrop::new(tensor),
            owned: true,
        }
    }

    fn get(&self) -> &Tensor {
        &self.tensor
    }

    /// An owned handle: this one, or a new handle on a borrowed tensor.
    fn into_owned(self) -> Tensor {
        let mut this = ManuallyDrop::new(self);
        if this.owned {
            // SAFETY: `this` is never dropped, so the tensor is taken out exactly once.
            unsafe { ManuallyDrop::take(&mut this.tensor) }
        } else {
            this.tensor.shallow_clone()
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned handle is dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.tensor) }
        }
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("owned", &self.owned)
            .finish()
    }
}

// SAFETY: `ptr` points into the data of `tensor`, which the value owns (tch tensors are
// Send); moving the value to another thread moves the owner with the pointer.
unsafe impl Send for F32 {}

impl F32 {
    /// Views `t` in place when it is a contiguous float32 CPU tensor of rank 0 to 2.
    pub fn view(t: Tensor) -> std::result::Result<F32, Tensor> {
        let ok = t.f_kind().ok() == Some(Kind::Float)
            && t.device() == Device::Cpu
            && t.dim() <= 2
            && t.is_contiguous();
        if !ok {
            return Err(t);
        }
        F32::view_checked(t)
    }

    /// [`F32::view`] of a tensor already known to be a contiguous float32 CPU tensor of
    /// rank 0 to 2 (a checked argument): reads only its negative bit, sizes and data
    /// pointer.
    pub fn view_checked(t: Tensor) -> std::result::Result<F32, Tensor> {
        // Its data holds the negation of its values (see `Reg::of_owned_tensor`).
        if t.f_is_neg().ok() != Some(false) {
            return Err(t);
        }
        let Some(dims) = small_shape(&t) else {
            return Err(t);
        };
        let ptr = t.data_ptr() as *const f32;
        Ok(F32::Torch {
            tensor: Handle::owned(t),
            ptr,
            dims,
        })
    }

    /// A checked float32 argument viewed through a borrowed handle: the C++ `at::Tensor`
    /// inside the caller's Python tensor object, read with no libtorch call.
    ///
    /// # Safety
    /// `tensor` must point to a defined, contiguous float32 CPU `at::Tensor` of exactly
    /// `dims` whose data starts at `data`, and stay valid and unmodified until the value and
    /// everything the executor derives from it are dropped: the Python boundary passes the
    /// `at::Tensor` of an argument object, which the caller's argument tuple keeps alive
    /// until the call returns, and every value of a call is dropped before it returns (a
    /// result that is the argument itself leaves as a new, owned handle).
    pub unsafe fn borrowed_argument(
        tensor: *mut torch_sys::C_tensor,
        data: *const f32,
        dims: Dims,
    ) -> F32 {
        F32::Torch {
            tensor: Handle {
                // SAFETY: the caller's contract above; never dropped (not owned).
                tensor: ManuallyDrop::new(unsafe { Tensor::from_ptr(tensor) }),
                owned: false,
            },
            ptr: data,
            dims,
        }
    }

    pub fn dims(&self) -> Dims {
        match self {
            F32::Pooled(_, dims) | F32::Torch { dims, .. } => *dims,
        }
    }

    pub fn data(&self) -> &[f32] {
        match self {
            F32::Pooled(buffer, _) => buffer.as_slice(),
            F32::Torch { ptr, dims, .. } => {
                let len = dims.len();
                if len == 0 {
                    return &[];
                }
                // SAFETY: `ptr` is the data of `tensor`, a contiguous float32 tensor of
                // exactly `dims` (checked in `view`), which this value keeps alive; the
                // executor never writes arguments or shared results.
                unsafe { std::slice::from_raw_parts(*ptr, len) }
            }
        }
    }

    /// A tensor over the same data: the tensor itself, or a view of the pooled buffer that
    /// must not outlive `self` (ATen ops given it return fresh tensors).
    pub fn tensor(&self) -> Result<TensorRef<'_>> {
        match self {
            F32::Torch { tensor, .. } => Ok(TensorRef::Borrowed(tensor.get())),
            F32::Pooled(buffer, dims) => {
                let sizes = dims.sizes();
                let strides = contiguous_strides(&sizes);
                // SAFETY: the buffer holds exactly `dims.len()` float32 values laid out
                // contiguously; the view is dropped before the buffer (it borrows `self`).
                let t = unsafe {
                    Tensor::f_from_blob(
                        buffer.as_slice().as_ptr() as *const u8,
                        &sizes,
                        &strides,
                        Kind::Float,
                        Device::Cpu,
                    )?
                };
                Ok(TensorRef::View(t))
            }
        }
    }

    /// The value as an owned tensor (a copy of a pooled buffer; the tensor itself otherwise).
    pub fn into_tensor(self) -> Result<Tensor> {
        match self {
            F32::Torch { tensor, .. } => Ok(tensor.into_owned()),
            F32::Pooled(buffer, dims) => {
                let shape = dims.shape();
                buffer.into_tensor(&shape[..dims.rank()])
            }
        }
    }

    /// A second value with the same contents (a new handle on a tensor, a copy of a buffer).
    pub fn share(&self) -> F32 {
        match self {
            F32::Torch { tensor, ptr, dims } => F32::Torch {
                tensor: Handle::owned(tensor.get().shallow_clone()),
                ptr: *ptr,
                dims: *dims,
            },
            F32::Pooled(buffer, dims) => {
                let mut copy = Buffer::take(dims.len());
                copy.as_mut_slice().copy_from_slice(buffer.as_slice());
                F32::Pooled(copy, *dims)
            }
        }
    }

    /// Whether `t`'s data lies inside this value's buffer (an ATen result aliasing a view).
    pub fn contains_data_of(&self, t: &Tensor) -> bool {
        let data = self.data();
        let p = t.data_ptr() as usize;
        let start = data.as_ptr() as usize;
        p >= start && p < start + std::mem::size_of_val(data)
    }
}

/// The dims of a tensor of rank 0 to 2, read without allocating (`Tensor::size` returns a
/// `Vec`, and this is on every call's path).
fn small_shape(t: &Tensor) -> Option<Dims> {
    let rank = t.dim();
    if rank > 2 {
        return None;
    }
    let mut shape = [0i64; 2];
    // SAFETY: `t` is a defined tensor of `rank` <= 2 dimensions, so `at_shape` writes at most
    // two sizes; it cannot fail for a defined tensor.
    unsafe { torch_sys::at_shape(t.as_ptr() as *mut torch_sys::C_tensor, shape.as_mut_ptr()) };
    Dims::of_sizes(&shape[..rank])
}

/// A tensor for an ATen call: borrowed, or a view over a pooled buffer.
pub enum TensorRef<'a> {
    Borrowed(&'a Tensor),
    View(Tensor),
}

impl std::ops::Deref for TensorRef<'_> {
    type Target = Tensor;

    fn deref(&self) -> &Tensor {
        match self {
            TensorRef::Borrowed(t) => t,
            TensorRef::View(t) => t,
        }
    }
}

fn contiguous_strides(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * sizes[d + 1].max(1);
    }
    strides
}
