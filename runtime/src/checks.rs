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
pub const EXPECTED_STRIDED: &str = "rextio-torch: expected a strided tensor";
pub const EXPECTED_INT: &str = "rextio-torch: expected an int";
pub const EXPECTED_BOOL: &str = "rextio-torch: expected a bool";

pub fn expected_rank(expected: u8, got: usize) -> String {
    format!("rextio-torch: expected rank-{expected} tensor, got rank {got}")
}

/// Checks that `t` has exactly the annotated type.
pub fn check_tensor(t: &Tensor, expected: TensorType) -> Result<()> {
    let device_ok = match expected.device {
        IrDevice::Cpu => t.device() == Device::Cpu,
        IrDevice::Cuda0 => t.device() == Device::Cuda(0),
    };
    if !device_ok {
        let message = match expected.device {
            IrDevice::Cpu => EXPECTED_CPU,
            IrDevice::Cuda0 => EXPECTED_CUDA0,
        };
        return Err(RuntimeError::ArgumentValue(message.to_string()));
    }
    let kind = t.f_kind().ok();
    let (want, message) = match expected.dtype {
        DType::F32 => (Kind::Float, EXPECTED_F32),
        DType::I64 => (Kind::Int64, EXPECTED_I64),
    };
    if kind != Some(want) {
        return Err(RuntimeError::ArgumentValue(message.to_string()));
    }
    let rank = t.dim();
    if rank != usize::from(expected.rank) {
        return Err(RuntimeError::ArgumentValue(expected_rank(
            expected.rank,
            rank,
        )));
    }
    if t.is_sparse() || t.is_mkldnn() {
        return Err(RuntimeError::ArgumentValue(EXPECTED_STRIDED.to_string()));
    }
    Ok(())
}
