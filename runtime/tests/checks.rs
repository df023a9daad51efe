//! Argument checks for Rust callers of the executor: the reference's text first, then which
//! argument it was and what it was given.

use rextio_ir::{DType, Device, TensorType, Type};
use rextio_runtime::checks::{check_tensor, check_tensor_argument};
use rextio_runtime::executor::check_argument;
use rextio_runtime::Value;
use tch::{Kind, Tensor};

const F32_2D: TensorType = TensorType {
    dtype: DType::F32,
    device: Device::Cpu,
    rank: 2,
};

fn message(result: rextio_runtime::Result<()>) -> String {
    result.expect_err("must be rejected").to_string()
}

#[test]
fn tensor_errors_name_the_argument_and_what_it_is() {
    let x = Tensor::zeros([2, 3], (Kind::Double, tch::Device::Cpu));
    assert_eq!(
        message(check_tensor_argument(&x, F32_2D, "x")),
        "rextio-torch: expected a float32 tensor (argument 'x' is float64)"
    );
    // The reference's text alone where no argument is named.
    assert_eq!(
        message(check_tensor(&x, F32_2D)),
        "rextio-torch: expected a float32 tensor"
    );
    let v = Tensor::zeros([3], (Kind::Float, tch::Device::Cpu));
    assert_eq!(
        message(check_tensor_argument(&v, F32_2D, "weight")),
        "rextio-torch: expected rank-2 tensor, got rank 1 (argument 'weight')"
    );
    let i = Tensor::zeros([3], (Kind::Int, tch::Device::Cpu));
    let i64_1d = TensorType {
        dtype: DType::I64,
        device: Device::Cpu,
        rank: 1,
    };
    assert_eq!(
        message(check_tensor_argument(&i, i64_1d, "labels")),
        "rextio-torch: expected an int64 tensor (argument 'labels' is int32)"
    );
    assert!(check_tensor_argument(&v.view([1, 3]), F32_2D, "x").is_ok());
}

#[test]
fn scalar_and_kind_errors_name_the_argument() {
    let t = Value::Tensor(Tensor::zeros([1, 1], (Kind::Float, tch::Device::Cpu)));
    assert_eq!(
        message(check_argument(&Value::Int(3), Type::Tensor(F32_2D), "x")),
        "rextio-torch: expected a torch.Tensor (argument 'x' is an int)"
    );
    assert_eq!(
        message(check_argument(&Value::Bool(true), Type::Int, "depth")),
        "rextio-torch: expected an int (argument 'depth' is a bool)"
    );
    assert_eq!(
        message(check_argument(&t, Type::Bool, "flag")),
        "rextio-torch: expected a bool (argument 'flag' is a tensor)"
    );
    assert!(check_argument(&Value::Int(3), Type::Int, "depth").is_ok());
}

#[test]
fn layouts_without_strides_and_tensors_without_data_are_refused() {
    // Sparse compressed layouts have no strides (reading them threw inside tch, a panic);
    // each is named as torch names it. COO keeps its older wording.
    let x = Tensor::ones([4, 4], (Kind::Float, tch::Device::Cpu));
    let cases = [
        (x.to_sparse_csr(None), "is sparse_csr"),
        (x.to_sparse_csc(None), "is sparse_csc"),
        (x.to_sparse_bsr([2, 2], None), "is sparse_bsr"),
        (x.to_sparse_bsc([2, 2], None), "is sparse_bsc"),
        (x.to_sparse_sparse_dim(2), "is sparse"),
    ];
    for (t, given) in cases {
        assert_eq!(
            message(check_tensor_argument(&t, F32_2D, "x")),
            format!("rextio-torch: expected a strided tensor (argument 'x' {given})")
        );
    }
    // Empty tensors may have no data; every strided form of a real one passes.
    assert!(check_tensor_argument(
        &Tensor::zeros([0, 3], (Kind::Float, tch::Device::Cpu)),
        F32_2D,
        "x"
    )
    .is_ok());
    assert!(check_tensor_argument(&x.tr(), F32_2D, "x").is_ok());
    assert!(check_tensor_argument(&x.slice(1, 0, 4, 2), F32_2D, "x").is_ok());
}
