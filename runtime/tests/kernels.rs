//! Parity of the fused kernel (both paths) with libtorch op by op: the correctness oracle.
//! Tolerance: max |a - b| <= 1e-5 * max(1, |b|) elementwise (float32, different summation
//! order); NaN/Inf classes must match exactly.

use rextio_ir::{FusedReduce, ReduceKind, UnaryOp};
use rextio_runtime::kernels::{
    fused_linear_with_path, small_fused_linear, Isa, KernelPath, GEMM_CROSSOVER_MACS,
};
use rextio_runtime::ops;
use tch::{Device, Kind, Tensor};

fn reference(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Tensor {
    let _g = tch::no_grad_guard();
    let mut y = ops::linear(x, w, b).unwrap();
    for &op in acts {
        y = ops::unary(op, &y).unwrap();
    }
    match reduce {
        Some(r) => ops::reduce(r.kind, &y, r.dim, r.keepdim).unwrap(),
        None => y,
    }
}

fn values(t: &Tensor) -> Vec<f32> {
    let t = t.contiguous().view(-1);
    let n = t.numel();
    let mut out = vec![0f32; n];
    t.copy_data(&mut out, n);
    out
}

fn assert_close(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.size(), want.size(), "{what}: shape");
    assert_eq!(got.kind(), want.kind(), "{what}: dtype");
    for (i, (a, b)) in values(got).into_iter().zip(values(want)).enumerate() {
        if b.is_nan() {
            assert!(a.is_nan(), "{what}[{i}]: want NaN, got {a}");
        } else if b.is_infinite() {
            assert_eq!(a, b, "{what}[{i}]: infinity class");
        } else {
            let tol = 1e-5 * b.abs().max(1.0);
            assert!((a - b).abs() <= tol, "{what}[{i}]: got {a}, want {b}");
            if b == 0.0 && a == 0.0 {
                assert_eq!(
                    a.is_sign_negative(),
                    b.is_sign_negative(),
                    "{what}[{i}]: signed zero"
                );
            }
        }
    }
}

const MEAN1: Option<FusedReduce> = Some(FusedReduce {
    kind: ReduceKind::Mean,
    dim: 1,
    keepdim: false,
});

fn randn(shape: &[i64]) -> Tensor {
    Tensor::randn(shape, (Kind::Float, Device::Cpu))
}

#[test]
fn phase_a_shapes_match_eager_on_both_paths() {
    tch::manual_seed(20261129);
    let shapes = [
        (1, 32, 32),
        (1, 128, 64),
        (8, 64, 64),
        (16, 128, 64),
        (64, 128, 64),
        (256, 256, 128),
        (3, 7, 5),
        (1, 1, 1),
        (512, 512, 256),
    ];
    for (batch, k, n) in shapes {
        let (x, w, b) = (randn(&[batch, k]), randn(&[n, k]), randn(&[n]));
        let want = reference(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1);
        let (got, path) =
            fused_linear_with_path(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1).unwrap();
        let macs = (batch * k * n) as usize;
        let expected_path = if macs >= GEMM_CROSSOVER_MACS {
            KernelPath::GemmThenEpilogue
        } else {
            KernelPath::SmallFused
        };
        assert_eq!(path, expected_path, "{batch}x{k}->{n}");
        assert_close(&got, &want, &format!("{batch}x{k}->{n}"));
    }
}

#[test]
fn every_activation_reduce_and_bias_combination_matches() {
    tch::manual_seed(7);
    let reduces = [
        None,
        MEAN1,
        Some(FusedReduce {
            kind: ReduceKind::Sum,
            dim: 1,
            keepdim: false,
        }),
        Some(FusedReduce {
            kind: ReduceKind::Mean,
            dim: 1,
            keepdim: true,
        }),
    ];
    for (batch, k, n) in [(4, 19, 9), (300, 80, 64)] {
        let (x, w, b) = (randn(&[batch, k]), randn(&[n, k]), randn(&[n]));
        let xp = x.abs() + 0.5; // log/sqrt need positive inputs to compare finite values
                                // exp amplifies the dot product's rounding by its argument: keep arguments small.
        let xs = &x * 0.05;
        for acts in [
            vec![],
            vec![UnaryOp::Relu],
            vec![UnaryOp::Sigmoid, UnaryOp::Tanh],
            vec![UnaryOp::Gelu],
            vec![UnaryOp::Abs, UnaryOp::Sqrt, UnaryOp::Log],
            vec![UnaryOp::Neg, UnaryOp::Square, UnaryOp::Exp],
        ] {
            for reduce in reduces {
                for bias in [Some(&b), None] {
                    let input = if acts.contains(&UnaryOp::Log) {
                        &xp
                    } else if acts.contains(&UnaryOp::Exp) {
                        &xs
                    } else {
                        &x
                    };
                    let want = reference(
                        input,
                        &w.abs(),
                        bias.map(|b| b.abs()).as_ref(),
                        &acts,
                        reduce,
                    );
                    let got = fused_linear_with_path(
                        input,
                        &w.abs(),
                        bias.map(|b| b.abs()).as_ref(),
                        &acts,
                        reduce,
                    )
                    .unwrap()
                    .0;
                    assert_close(
                        &got,
                        &want,
                        &format!(
                            "{batch}x{k}->{n} {acts:?} {reduce:?} bias={}",
                            bias.is_some()
                        ),
                    );
                }
            }
        }
    }
}

#[test]
fn nan_inf_and_signed_zero_propagate_as_in_eager() {
    let x = Tensor::from_slice(&[f32::NAN, 1.0, -0.0, f32::INFINITY, 2.0, -3.0, -0.0, -0.0])
        .view([4, 2]);
    let w = Tensor::from_slice(&[1.0f32, 0.0, 0.5, 1.0, -1.0, 2.0]).view([3, 2]);
    let b = Tensor::from_slice(&[0.0f32, -0.0, 1.0]);
    for reduce in [None, MEAN1] {
        let want = reference(&x, &w, Some(&b), &[UnaryOp::Relu], reduce);
        let got = fused_linear_with_path(&x, &w, Some(&b), &[UnaryOp::Relu], reduce)
            .unwrap()
            .0;
        assert_close(&got, &want, &format!("special values {reduce:?}"));
    }
    // Signed zeros of exact-zero dot products: eager's batch-1 path (gemv) starts from the
    // bias, its batch > 1 path (gemm) adds the bias last. We follow the latter on every batch,
    // so only batch > 1 is compared bit for bit here (the case above); documented in
    // docs/parity.md.
}

#[test]
fn non_contiguous_and_empty_inputs() {
    tch::manual_seed(3);
    let x = randn(&[6, 10]).transpose(0, 1); // 10x6, not contiguous
    let w = randn(&[5, 6]);
    let b = randn(&[5]);
    assert!(!x.is_contiguous());
    let want = reference(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1);
    let got = fused_linear_with_path(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1)
        .unwrap()
        .0;
    assert_close(&got, &want, "transposed input");
    for (batch, k, n) in [(0, 4, 3), (2, 0, 3), (2, 4, 0)] {
        let (x, w, b) = (randn(&[batch, k]), randn(&[n, k]), randn(&[n]));
        let want = reference(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1);
        let got = fused_linear_with_path(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1)
            .unwrap()
            .0;
        assert_close(&got, &want, &format!("empty {batch}x{k}->{n}"));
    }
}

#[test]
fn inputs_are_not_mutated() {
    tch::manual_seed(11);
    let (x, w, b) = (randn(&[8, 64]), randn(&[64, 64]), randn(&[64]));
    let (x0, w0, b0) = (x.copy(), w.copy(), b.copy());
    for reduce in [None, MEAN1] {
        let _ = fused_linear_with_path(&x, &w, Some(&b), &[UnaryOp::Relu], reduce).unwrap();
    }
    assert!(x.equal(&x0) && w.equal(&w0) && b.equal(&b0));
}

#[test]
fn mismatched_sizes_are_errors_not_panics() {
    let x = randn(&[3, 7]);
    let w = randn(&[5, 5]);
    let err = fused_linear_with_path(&x, &w, None, &[UnaryOp::Relu], MEAN1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "mat1 and mat2 shapes cannot be multiplied (3x7 and 5x5)"
    );
    let w = randn(&[5, 7]);
    let b = randn(&[4]);
    let err = fused_linear_with_path(&x, &w, Some(&b), &[], None).unwrap_err();
    assert!(err.to_string().contains("bias has 4 elements"), "{err}");
    let x64 = randn(&[3, 7]).to_kind(Kind::Double);
    assert!(fused_linear_with_path(&x64, &w, None, &[], None).is_err());
    let bad_reduce = Some(FusedReduce {
        kind: ReduceKind::Mean,
        dim: 0,
        keepdim: false,
    });
    assert!(fused_linear_with_path(&randn(&[3, 7]), &w, None, &[], bad_reduce).is_err());
}

#[test]
fn portable_and_simd_paths_agree_with_eager() {
    tch::manual_seed(5);
    for (batch, k, n) in [(1, 32, 32), (3, 7, 5), (5, 33, 17), (16, 128, 64)] {
        let (x, w, b) = (randn(&[batch, k]), randn(&[n, k]), randn(&[n]));
        for reduce in [None, MEAN1] {
            let want = reference(&x, &w, Some(&b), &[UnaryOp::Relu], reduce);
            let len = want.numel();
            let (xs, ws, bs) = (values(&x), values(&w), values(&b));
            let (batch, k, n) = (batch as usize, k as usize, n as usize);
            let mut simd = vec![0f32; len];
            small_fused_linear(
                Isa::Best,
                &xs,
                &ws,
                Some(&bs),
                batch,
                k,
                n,
                &[UnaryOp::Relu],
                reduce,
                &mut simd,
            )
            .unwrap();
            let mut portable = vec![0f32; len];
            small_fused_linear(
                Isa::Portable,
                &xs,
                &ws,
                Some(&bs),
                batch,
                k,
                n,
                &[UnaryOp::Relu],
                reduce,
                &mut portable,
            )
            .unwrap();
            let shape = want.size();
            assert_close(
                &Tensor::from_slice(&simd).view(shape.as_slice()),
                &want,
                "simd",
            );
            assert_close(
                &Tensor::from_slice(&portable).view(shape.as_slice()),
                &want,
                "portable",
            );
        }
    }
    let mut short = vec![0f32; 1];
    assert!(small_fused_linear(
        Isa::Best,
        &[1.0; 3],
        &[1.0; 3],
        None,
        1,
        3,
        2,
        &[],
        None,
        &mut short
    )
    .is_err());
}

#[test]
fn random_shapes_match_eager_on_every_path() {
    // Deterministic sweep across both sides of the crossover and every tile remainder.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound) as i64
    };
    let activation_sets: [&[UnaryOp]; 4] = [
        &[UnaryOp::Relu],
        &[],
        &[UnaryOp::Tanh],
        &[UnaryOp::Relu, UnaryOp::Square],
    ];
    let reduces = [
        None,
        MEAN1,
        Some(FusedReduce {
            kind: ReduceKind::Sum,
            dim: 1,
            keepdim: true,
        }),
    ];
    tch::manual_seed(99);
    for case in 0..120 {
        let (batch, k, n) = (1 + next(70), 1 + next(200), 1 + next(90));
        let acts = activation_sets[case % activation_sets.len()];
        let reduce = reduces[case % reduces.len()];
        let (x, w, b) = (randn(&[batch, k]), randn(&[n, k]) * 0.2, randn(&[n]));
        let bias = if case % 5 == 0 { None } else { Some(&b) };
        let want = reference(&x, &w, bias, acts, reduce);
        let got = fused_linear_with_path(&x, &w, bias, acts, reduce)
            .unwrap()
            .0;
        assert_close(
            &got,
            &want,
            &format!("case {case}: {batch}x{k}->{n} {acts:?} {reduce:?}"),
        );
    }
}
