//! Reading a compiled function's arguments: float32 CPU tensors that are exactly as
//! annotated are read in one call into `args.cpp` and viewed in place, with no tch handle of
//! their own; every other argument, and every argument that is wrong, takes the runtime's
//! general path (`rextio_runtime::boundary`), which checks it and words the error.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

use pyo3::prelude::*;
use rextio_driver::{DType, Device, TensorType, Type};
use rextio_runtime::boundary::extract_value;
use rextio_runtime::dense::{Dims, F32};
use rextio_runtime::Arg;

/// `RextioArgInfo` in args.cpp.
#[repr(C)]
struct ArgInfo {
    tensor: *mut c_void,
    data: *const c_void,
    sizes: [i64; 2],
    scalar_type: i32,
    device_type: i32,
    device_index: i32,
    layout: i32,
    rank: i32,
    contiguous: u8,
    plain: u8,
}

extern "C" {
    fn rextio_arg_info(obj: *mut pyo3::ffi::PyObject, out: *mut ArgInfo) -> c_int;
}

const ARG_OK: c_int = 0;
/// `c10::ScalarType::Float`, `c10::DeviceType::CPU`, `c10::Layout::Strided`.
const SCALAR_FLOAT: i32 = 6;
const DEVICE_CPU: i32 = 0;
const LAYOUT_STRIDED: i32 = 0;

/// Argument `param` of type `ty`.
pub fn read_arg(obj: &Bound<'_, PyAny>, ty: Type, param: &str) -> PyResult<Arg> {
    if let Type::Tensor(TensorType {
        dtype: DType::F32,
        device: Device::Cpu,
        rank,
    }) = ty
    {
        if let Some(view) = f32_view(obj, rank) {
            return Ok(Arg::F32(view));
        }
    }
    extract_value(obj, ty, param).map(Arg::Value)
}

/// `obj` viewed in place, when it is a contiguous float32 CPU tensor of rank `rank` (at
/// most 2) with nothing unusual about it; `None` sends it down the general path.
fn f32_view(obj: &Bound<'_, PyAny>, rank: u8) -> Option<F32> {
    if rank > 2 {
        return None;
    }
    let mut info = MaybeUninit::<ArgInfo>::uninit();
    // SAFETY: `obj` is a live object and the GIL is held; the function writes every field
    // of `info` when it returns ARG_OK.
    let info = unsafe {
        if rextio_arg_info(obj.as_ptr(), info.as_mut_ptr()) != ARG_OK {
            return None;
        }
        info.assume_init()
    };
    let exact = info.scalar_type == SCALAR_FLOAT
        && info.device_type == DEVICE_CPU
        && info.layout == LAYOUT_STRIDED
        && info.rank == i32::from(rank)
        && info.contiguous != 0
        && info.plain != 0;
    if !exact {
        return None;
    }
    let dims = Dims::of_sizes(&info.sizes[..usize::from(rank)])?;
    if info.data.is_null() && !dims.is_empty() {
        return None;
    }
    // SAFETY: `info.tensor` is the `at::Tensor` inside `obj`, a contiguous float32 CPU
    // tensor of exactly `dims` whose data is at `info.data` (checked above). `obj` is an
    // element of the call's arguments, alive until the call returns, and the executor drops
    // every value of the call before then.
    Some(unsafe { F32::borrowed_argument(info.tensor.cast(), info.data.cast(), dims) })
}
