//! Argument checks at the boundary of a compiled function, with the reference's exact error
//! texts (tests and users match them). Order is fixed: device, dtype, rank, layout.

use rextio_ir::{DType, Device as IrDevice, TensorType};
use tch::{Device, Kind, Tensor};

use crate::error::{Result, RuntimeError};

pub const NOT_A_TENSOR: &str = "rextio-torch: expected a torch.Tensor";
pub const EXPECTED_CPU: &str = "rextio-torch: expected a CPU tensor";
pub const EXPECTED_CUDA0: &str = "rextio-torch: expected a cuda:0 tensor";
pub const EXPECTED_F32: &str = "rextio-torch: expected a float32 tensor";
pub const EXPECTED_I64: &str = "rextio-torch: expected an int64 tensor";
/// Extended surface only (`TensorF64Cpu*`).
pub const EXPECTED_F64: &str = "rextio-torch: expected a float64 tensor";
/// Extended surface only (`TensorBF16Cpu*`).
pub const EXPECTED_BF16: &str = "rextio-torch: expected a bfloat16 tensor";
pub const EXPECTED_STRIDED: &str = "rextio-torch: expected a strided tensor";
pub const EXPECTED_INT: &str = "rextio-torch: expected an int";
pub const EXPECTED_BOOL: &str = "rextio-torch: expected a bool";
pub const EXPECTED_DATA: &str = "rextio-torch: expected a tensor whose data is in memory";

pub fn expected_rank(expected: u8, got: usize) -> String {
    format!("rextio-torch: expected rank-{expected} tensor, got rank {got}")
}

/// Checks that `t` has exactly the annotated type; errors carry the reference's text alone.
pub fn check_tensor(t: &Tensor, expected: TensorType) -> Result<()> {
    match tensor_mismatch(t, expected, device_name) {
        Some((message, _)) => Err(RuntimeError::ArgumentValue(message)),
        None => Ok(()),
    }
}

/// Checks argument `param` against its annotation: the reference's text first, then which
/// argument it was and what it was given, e.g. `... expected a float32 tensor (argument 'x'
/// is float64)`, so a call with five tensors says which one is wrong.
pub fn check_tensor_argument(t: &Tensor, expected: TensorType, param: &str) -> Result<()> {
    check_tensor_argument_on(t, expected, param, device_name)
}

/// [`check_tensor_argument`], naming a wrong device with `device_name` (the Python boundary
/// asks torch, which knows devices tch does not, such as `meta`).
pub fn check_tensor_argument_on(
    t: &Tensor,
    expected: TensorType,
    param: &str,
    device_name: impl FnOnce(Device) -> String,
) -> Result<()> {
    match tensor_mismatch(t, expected, device_name) {
        Some((message, given)) => Err(RuntimeError::ArgumentValue(format!(
            "{message} {}",
            given_note(param, given.as_deref())
        ))),
        None => Ok(()),
    }
}

/// ` (argument 'x' is float64)`, or ` (argument 'x')` where the message already says it all.
pub fn given_note(param: &str, given: Option<&str>) -> String {
    match given {
        Some(given) => format!("(argument '{param}' {given})"),
        None => format!("(argument '{param}')"),
    }
}

/// The first way `t` differs from `expected` (order fixed: device, dtype, rank, layout): the
/// reference's message and, where it does not already say, what `t` is.
fn tensor_mismatch(
    t: &Tensor,
    expected: TensorType,
    device_name: impl FnOnce(Device) -> String,
) -> Option<(String, Option<String>)> {
    let device = t.device();
    let device_ok = match expected.device {
        IrDevice::Cpu => device == Device::Cpu,
        IrDevice::Cuda0 => device == Device::Cuda(0),
    };
    if !device_ok {
        let message = match expected.device {
            IrDevice::Cpu => EXPECTED_CPU,
            IrDevice::Cuda0 => EXPECTED_CUDA0,
        };
        return Some((
            message.to_string(),
            Some(format!("is on {}", device_name(device))),
        ));
    }
    let kind = t.f_kind().ok();
    let (want, message) = match expected.dtype {
        DType::F32 => (Kind::Float, EXPECTED_F32),
        DType::I64 => (Kind::Int64, EXPECTED_I64),
        DType::F64 => (Kind::Double, EXPECTED_F64),
        DType::BF16 => (Kind::BFloat16, EXPECTED_BF16),
    };
    if kind != Some(want) {
        let given = kind.map_or("has an unknown dtype".to_string(), |k| {
            format!("is {}", kind_name(k))
        });
        return Some((message.to_string(), Some(given)));
    }
    let rank = t.dim();
    if rank != usize::from(expected.rank) {
        return Some((expected_rank(expected.rank, rank), None));
    }
    if t.is_sparse() {
        return Some((EXPECTED_STRIDED.to_string(), Some("is sparse".to_string())));
    }
    if t.is_mkldnn() {
        return Some((
            EXPECTED_STRIDED.to_string(),
            Some("is an mkldnn tensor".to_string()),
        ));
    }
    if let Err(error) = has_strides(t) {
        return Some((EXPECTED_STRIDED.to_string(), Some(stride_less(t, &error))));
    }
    match data_ptr(t) {
        Ok(data) if !data.is_null() || t.numel() == 0 => None,
        Ok(_) => Some((EXPECTED_DATA.to_string(), Some("has no data".to_string()))),
        Err(_) => Some((
            EXPECTED_DATA.to_string(),
            Some("has no storage, as inside torch.func transforms".to_string()),
        )),
    }
}

/// libtorch's error from the last call into it, if it failed (tch's `unsafe_torch!` would
/// panic on it, and tch has no fallible form of the calls below).
fn last_torch_error() -> std::result::Result<(), String> {
    unsafe extern "C" {
        fn free(ptr: *mut std::ffi::c_void);
    }
    // SAFETY: returns null or a string the C shim allocated with `strdup`, which is ours to
    // free.
    unsafe {
        let error = torch_sys::get_and_reset_last_err();
        if error.is_null() {
            return Ok(());
        }
        let message = std::ffi::CStr::from_ptr(error)
            .to_string_lossy()
            .into_owned();
        free(error.cast());
        Err(message)
    }
}

/// Whether `t` has strides; an error for layouts without them (sparse compressed, nested).
fn has_strides(t: &Tensor) -> std::result::Result<(), String> {
    // Checked arguments have small ranks: the strides land on the stack.
    let rank = t.dim();
    let mut small = [0i64; 8];
    let mut large = Vec::new();
    let strides = if rank <= small.len() {
        &mut small[..]
    } else {
        large.resize(rank, 0);
        &mut large[..]
    };
    // SAFETY: `strides` holds at least `t.dim()` values, as many as `at_stride` writes.
    unsafe { torch_sys::at_stride(t.as_ptr() as *mut torch_sys::C_tensor, strides.as_mut_ptr()) };
    last_torch_error()
}

/// `t`'s data pointer; an error for tensors without storage (those of functorch's
/// transforms: `vmap`, `grad`); null for a tensor whose storage holds no data (a fake or
/// functionalized tensor's).
fn data_ptr(t: &Tensor) -> std::result::Result<*mut std::ffi::c_void, String> {
    // SAFETY: a defined tensor; errors are read back below.
    let data = unsafe { torch_sys::at_data_ptr(t.as_ptr() as *mut torch_sys::C_tensor) };
    last_torch_error().map(|()| data)
}

/// What a tensor without strides is, as torch names its layout (`is sparse_csr`).
fn stride_less(t: &Tensor, error: &str) -> String {
    let compressed = if t.f_crow_indices().is_ok() {
        Some(("csr", "bsr"))
    } else if t.f_ccol_indices().is_ok() {
        Some(("csc", "bsc"))
    } else {
        None
    };
    if let Some((element, block)) = compressed {
        // A block layout's values hold a block per index: two more dims than the elements'.
        let blocks = match (t.f_values(), t.f_dense_dim()) {
            (Ok(values), Ok(dense)) => values.dim() as i64 - dense == 3,
            _ => false,
        };
        return format!("is sparse_{}", if blocks { block } else { element });
    }
    if error.contains("NestedTensorImpl") {
        "is a nested tensor".to_string()
    } else {
        "has no strides".to_string()
    }
}

/// A device as torch prints it (`cpu`, `cuda:1`); tch folds devices it does not model (such
/// as `meta`) into others, so only these two are named exactly.
pub fn device_name(device: Device) -> String {
    match device {
        Device::Cpu => "cpu".to_string(),
        Device::Cuda(i) => format!("cuda:{i}"),
        Device::Mps | Device::Vulkan => "another device".to_string(),
    }
}

/// A dtype as torch names it (`float64`, `int32`).
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Uint8 => "uint8",
        Kind::Int8 => "int8",
        Kind::Int16 => "int16",
        Kind::Int => "int32",
        Kind::Int64 => "int64",
        Kind::Half => "float16",
        Kind::Float => "float32",
        Kind::Double => "float64",
        Kind::ComplexHalf => "complex32",
        Kind::ComplexFloat => "complex64",
        Kind::ComplexDouble => "complex128",
        Kind::Bool => "bool",
        Kind::BFloat16 => "bfloat16",
        _ => "of another dtype",
    }
}
