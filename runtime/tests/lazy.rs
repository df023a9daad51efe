//! The values of Rextio-generated functions (`rextio_runtime::lazy`): a chain the plugin
//! lowers site by site runs as the executor's one fused op (bit for bit), a value bound to a
//! name is never extended (so no linear runs twice), and errors come at the site eager
//! raises them, with the executor's message.

use rextio_ir::{BinaryOp, DType, Device, FusedReduce, FusedTail, ReduceKind, TensorType, UnaryOp};
use rextio_runtime::exec;
use rextio_runtime::lazy::{self, LazyTensor, MAX_PENDING_ACTIVATIONS};
use tch::{Kind, Tensor};

fn f32_cpu(rank: u8) -> TensorType {
    TensorType {
        dtype: DType::F32,
        device: Device::Cpu,
        rank,
    }
}

fn arg(t: &Tensor) -> LazyTensor {
    LazyTensor::argument(t.shallow_clone(), f32_cpu(t.dim() as u8)).unwrap()
}

fn randn(shape: &[i64], seed: i64) -> Tensor {
    tch::manual_seed(seed);
    Tensor::randn(shape, (Kind::Float, tch::Device::Cpu))
}

/// Bit equality of float32 tensors (NaN payloads and signed zeros included).
fn assert_same_bits(ours: &Tensor, expected: &Tensor) {
    assert_eq!(ours.size(), expected.size());
    assert_eq!(ours.kind(), expected.kind());
    let a = Vec::<f32>::try_from(ours.flatten(0, -1)).unwrap();
    let b = Vec::<f32>::try_from(expected.flatten(0, -1)).unwrap();
    let (a, b): (Vec<u32>, Vec<u32>) = (
        a.iter().map(|v| v.to_bits()).collect(),
        b.iter().map(|v| v.to_bits()).collect(),
    );
    assert_eq!(a, b);
}

const MEAN1: FusedReduce = FusedReduce {
    kind: ReduceKind::Mean,
    dim: 1,
    keepdim: false,
};

#[test]
fn a_chain_lowered_site_by_site_is_the_executors_fused_op() {
    for (batch, k, n) in [(1, 32, 32), (16, 128, 64), (64, 128, 64), (256, 256, 128)] {
        let (x, w, b) = (randn(&[batch, k], 1), randn(&[n, k], 2), randn(&[n], 3));
        // What the plugin emits for `F.linear(x, w, b).relu().mean(dim=1, keepdim=False)`.
        let (lx, lw, lb) = (arg(&x), arg(&w), arg(&b));
        let h = lazy::linear(&lx, &lw, Some((&lb).into())).unwrap();
        assert!(h.is_pending());
        let h = lazy::unary(UnaryOp::Relu, h).unwrap();
        assert!(h.is_pending());
        let h = lazy::reduce(ReduceKind::Mean, h, 1, false).unwrap();
        assert!(h.is_pending(), "the reduction is the chain's tail");
        let ours = h.into_tensor().unwrap();
        let fused = exec::linear(
            &x,
            &w,
            Some(&b),
            &[],
            &[UnaryOp::Relu],
            Some(FusedTail::Reduce(MEAN1)),
            false,
        )
        .unwrap();
        assert_same_bits(&ours, &fused);
    }
}

#[test]
fn a_named_value_is_run_once_and_never_extended() {
    let (x, w, b) = (randn(&[8, 64], 4), randn(&[32, 64], 5), randn(&[32], 6));
    let (lx, lw, lb) = (arg(&x), arg(&w), arg(&b));
    // `h = F.linear(x, w, b); return h.relu() + h.tanh()`
    let h = lazy::linear(&lx, &lw, Some((&lb).into())).unwrap();
    let r = lazy::unary(UnaryOp::Relu, &h).unwrap();
    assert!(
        !h.is_pending(),
        "a shared use runs the chain and keeps its value"
    );
    assert!(!r.is_pending(), "a shared value is not extended");
    let t = lazy::unary(UnaryOp::Tanh, &h).unwrap();
    let ours = lazy::binary(BinaryOp::Add, r, t)
        .unwrap()
        .into_tensor()
        .unwrap();
    let y = exec::linear(&x, &w, Some(&b), &[], &[], None, false).unwrap();
    let expected = exec::binary(
        BinaryOp::Add,
        &exec::unary(UnaryOp::Relu, &y).unwrap(),
        &exec::unary(UnaryOp::Tanh, &y).unwrap(),
    )
    .unwrap();
    assert_same_bits(&ours, &expected);
}

#[test]
fn a_chain_with_another_handle_is_not_extended() {
    let (x, w) = (randn(&[4, 16], 7), randn(&[8, 16], 8));
    let (lx, lw) = (arg(&x), arg(&w));
    let h = lazy::linear(&lx, &lw, None).unwrap();
    let copy = h.clone();
    let s = lazy::unary(UnaryOp::Sigmoid, copy).unwrap();
    assert!(!s.is_pending());
    assert!(!h.is_pending(), "the other handle reads the one run");
    let expected = exec::unary(
        UnaryOp::Sigmoid,
        &exec::linear(&x, &w, None, &[], &[], None, false).unwrap(),
    )
    .unwrap();
    assert_same_bits(&s.into_tensor().unwrap(), &expected);
    assert_same_bits(
        &h.into_tensor().unwrap(),
        &exec::linear(&x, &w, None, &[], &[], None, false).unwrap(),
    );
}

#[test]
fn long_chains_and_unfusable_tails_run_in_parts() {
    let (x, w, b) = (randn(&[5, 24], 9), randn(&[12, 24], 10), randn(&[12], 11));
    let (lx, lw, lb) = (arg(&x), arg(&w), arg(&b));
    let ops = [UnaryOp::Tanh, UnaryOp::Abs, UnaryOp::Neg];
    let chain: Vec<UnaryOp> = (0..MAX_PENDING_ACTIVATIONS + 2)
        .map(|i| ops[i % ops.len()])
        .collect();
    let mut h = lazy::linear(&lx, &lw, Some((&lb).into())).unwrap();
    for &op in &chain {
        h = lazy::unary(op, h).unwrap();
    }
    // A sum over dim 0 is not a fused tail (the fusion pass does not fuse it either).
    let ours = lazy::reduce(ReduceKind::Sum, h, 0, true)
        .unwrap()
        .into_tensor()
        .unwrap();
    let (fused, rest) = chain.split_at(MAX_PENDING_ACTIVATIONS);
    let mut y = exec::linear(&x, &w, Some(&b), &[], fused, None, false).unwrap();
    for &op in rest {
        y = exec::unary(op, &y).unwrap();
    }
    let expected = exec::reduce(ReduceKind::Sum, &y, 0, true).unwrap();
    assert_same_bits(&ours, &expected);

    // Nothing joins a chain after its reduction.
    let h = lazy::reduce(
        ReduceKind::Sum,
        lazy::linear(&lx, &lw, Some((&lb).into())).unwrap(),
        1,
        true,
    )
    .unwrap();
    let ours = lazy::unary(UnaryOp::Exp, h).unwrap().into_tensor().unwrap();
    let sum1 = FusedReduce {
        kind: ReduceKind::Sum,
        dim: 1,
        keepdim: true,
    };
    let expected = exec::unary(
        UnaryOp::Exp,
        &exec::linear(
            &x,
            &w,
            Some(&b),
            &[],
            &[],
            Some(FusedTail::Reduce(sum1)),
            false,
        )
        .unwrap(),
    )
    .unwrap();
    assert_same_bits(&ours, &expected);
}

#[test]
fn shape_errors_come_at_the_linear_site_with_the_executors_message() {
    let (x, w, b) = (randn(&[3, 5], 12), randn(&[4, 6], 13), randn(&[4], 14));
    let (lx, lw, lb) = (arg(&x), arg(&w), arg(&b));
    let ours = match lazy::linear(&lx, &lw, Some((&lb).into())) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a 3x5 input and a 4x6 weight must not be accepted"),
    };
    let expected = exec::linear(&x, &w, Some(&b), &[], &[], None, false)
        .expect_err("the executor rejects it too")
        .to_string();
    assert_eq!(ours, expected);

    // A bias of the wrong length, too.
    let w = randn(&[4, 5], 15);
    let bad_b = randn(&[3], 16);
    let (lw, lbad) = (arg(&w), arg(&bad_b));
    let ours = lazy::linear(&lx, &lw, Some((&lbad).into()))
        .err()
        .expect("a bias of length 3 for 4 outputs")
        .to_string();
    let expected = exec::linear(&x, &w, Some(&bad_b), &[], &[], None, false)
        .err()
        .unwrap()
        .to_string();
    assert_eq!(ours, expected);
}

#[test]
fn a_non_contiguous_argument_is_read_as_the_executor_reads_it() {
    let (x, w, b) = (randn(&[16, 8], 17), randn(&[6, 16], 18), randn(&[6], 19));
    let xt = x.transpose(0, 1); // 8x16, not contiguous
    let (lx, lw, lb) = (arg(&xt), arg(&w), arg(&b));
    let h = lazy::linear(&lx, &lw, Some((&lb).into())).unwrap();
    let ours = lazy::unary(UnaryOp::Sigmoid, h)
        .unwrap()
        .into_tensor()
        .unwrap();
    let expected = exec::linear(&xt, &w, Some(&b), &[], &[UnaryOp::Sigmoid], None, false).unwrap();
    assert_same_bits(&ours, &expected);
    assert!(
        ours.allclose(
            &x.transpose(0, 1).linear(&w, Some(&b)).sigmoid(),
            1e-5,
            1e-6,
            false
        ),
        "and it is eager's value"
    );
}
