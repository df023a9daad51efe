//! The executor's dense kernels against ATen, op by op: same shapes, the same NaN, infinity
//! and zero-sign classes, elementwise arithmetic bit for bit, transcendental functions
//! within a few ulps, sums within a float32 rounding bound. Inputs mix ordinary values with
//! NaN, infinities, signed zeros, huge and tiny values, and shapes include empty and
//! broadcast ones.

use rextio_ir::{BinaryOp, ReduceKind, SoftmaxKind, TensorScalarOp, UnaryOp};
use rextio_runtime::dense::{self, Buffer, Dims, F32};
use tch::{Device, Kind, Tensor};

/// Deterministic values with specials sprinkled in (a small LCG: no rand dependency).
fn values(len: usize, seed: u64, specials: bool) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|i| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((state >> 40) as f32) / ((1u64 << 24) as f32) * 4.0 - 2.0;
            if !specials {
                return u;
            }
            match (state >> 20) % 23 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => -0.0,
                4 => 0.0,
                5 => u * 1e30,
                6 => u * 1e-30,
                7 if i % 2 == 0 => 88.0,
                _ => u,
            }
        })
        .collect()
}

fn tensor(data: &[f32], sizes: &[i64]) -> Tensor {
    Tensor::from_slice(data).reshape(sizes)
}

fn dense_of(t: &Tensor) -> F32 {
    F32::view(t.shallow_clone()).expect("contiguous float32 rank <= 2")
}

fn to_vec(t: &Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()
}

/// Same NaN positions, infinities and zero signs; finite values within `ulps` ulps of each
/// other (0 for bit-exact ops) or `abs` absolutely.
fn assert_close(what: &str, ours: &Tensor, eager: &Tensor, ulps: u32, abs: f32) {
    assert_eq!(ours.size(), eager.size(), "{what}: shape");
    assert_eq!(ours.kind(), eager.kind(), "{what}: dtype");
    for (i, (a, e)) in to_vec(ours).into_iter().zip(to_vec(eager)).enumerate() {
        let ok = if e.is_nan() || a.is_nan() {
            a.is_nan() && e.is_nan()
        } else if e.is_infinite() || a.is_infinite() {
            a == e
        } else if e == 0.0 && a == 0.0 {
            a.is_sign_negative() == e.is_sign_negative()
        } else {
            let ulp_diff = (a.to_bits() as i64 - e.to_bits() as i64).unsigned_abs();
            (a.is_sign_negative() == e.is_sign_negative() && ulp_diff <= u64::from(ulps))
                || (a - e).abs() <= abs
        };
        assert!(
            ok,
            "{what}: element {i}: ours {a:e} ({:#x}), eager {e:e} ({:#x})",
            a.to_bits(),
            e.to_bits()
        );
    }
}

const SHAPES: [&[i64]; 10] = [
    &[],
    &[1],
    &[7],
    &[0],
    &[1, 5],
    &[3, 1],
    &[3, 5],
    &[0, 4],
    &[4, 0],
    &[17, 33],
];

#[test]
fn unary_ops_match_aten() {
    let _guard = tch::no_grad_guard();
    for (s, sizes) in SHAPES.iter().enumerate() {
        let len = sizes.iter().product::<i64>() as usize;
        let x = tensor(&values(len, s as u64, true), sizes);
        for op in UnaryOp::ALL {
            if !dense::unary_supported(op, len) {
                continue;
            }
            let ours = dense::unary(op, &dense_of(&x)).into_tensor().unwrap();
            let eager = rextio_runtime::unary::aten(op, &x).unwrap();
            // Relu, abs, neg and square are exact in both. Our sqrt is correctly rounded;
            // ATen's is 1 ulp off for some inputs. The others are the C library's against
            // ATen's vectorized versions (SLEEF, 1 ulp each).
            let ulps = match op {
                UnaryOp::Relu | UnaryOp::Relu6 | UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Square => 0,
                // Ours and ATen's are both `1 / sqrt(x)`, each step correctly rounded.
                UnaryOp::Rsqrt => 0,
                UnaryOp::Sqrt => 1,
                _ => 4,
            };
            // Tiny results of tanh/sigmoid near zero may round to different denormals. Eager's
            // GELU (oneDNN's kernel; ATen's scalar loop for one element) is only within
            // ~3.5e-7 * max(1, |x|) of exact; ours is eager's kernel bit for bit except for one
            // element (runtime/tests/vmath.rs).
            // GELU tanh: our tanh against Sleef's where `1 + tanh` cancels (3e-7 * max(1, |x|),
            // the sweep's envelope).
            let abs = match op {
                UnaryOp::Gelu | UnaryOp::GeluTanh => 8e-7,
                _ => 1e-37,
            };
            assert_close(&format!("{op:?} {sizes:?}"), &ours, &eager, ulps, abs);
        }
    }
}

#[test]
fn vectorized_ops_match_aten_on_large_inputs() {
    let _guard = tch::no_grad_guard();
    let x = tensor(&values(70_007, 77, true), &[7, 10_001]);
    for op in [
        UnaryOp::Exp,
        UnaryOp::Tanh,
        UnaryOp::Sigmoid,
        UnaryOp::Gelu,
        UnaryOp::Silu,
        UnaryOp::GeluTanh,
    ] {
        let ours = dense::unary(op, &dense_of(&x)).into_tensor().unwrap();
        let eager = rextio_runtime::unary::aten(op, &x).unwrap();
        let abs = match op {
            UnaryOp::Gelu | UnaryOp::GeluTanh => 8e-7,
            _ => 1e-37,
        };
        assert_close(&format!("{op:?} large"), &ours, &eager, 4, abs);
    }
    let ours = dense::softmax(&dense_of(&x), 1).into_tensor().unwrap();
    assert_close("softmax large", &ours, &x.softmax(1, Kind::Float), 4, 1e-7);
}

/// ATen computes GELU tanh with its vector function over whole chunks of 32 (AVX-512) or 16
/// (AVX2) elements and its scalar function over the rest; in about [-5.36, -5.06] the two
/// differ in class (-0.0 against about -1.5e-7). Every length up to 100 with values in that
/// band, as vectors and as matrices: each element's class is eager's, the value within the
/// envelope (and the elements past the vector chunks, the C library's tanh, bit for bit).
#[test]
fn gelu_tanh_follows_eagers_split_between_its_two_loops() {
    let _guard = tch::no_grad_guard();
    // Up to 100 elements: below ATen's grain, one range whatever the thread count.
    // -5.36..-5.06 in 128 steps, then the ends of the band and ordinary values.
    let band: Vec<f32> = (0..128).map(|i| -5.36 + 0.3 * i as f32 / 127.0).collect();
    let mut saw_both = (false, false);
    for len in 1..=100usize {
        let data: Vec<f32> = (0..len)
            .map(|i| band[(i * 37 + len) % band.len()])
            .collect();
        for sizes in [vec![len as i64], vec![1, len as i64]] {
            let x = tensor(&data, &sizes);
            let ours = dense::unary(UnaryOp::GeluTanh, &dense_of(&x))
                .into_tensor()
                .unwrap();
            let eager = rextio_runtime::unary::aten(UnaryOp::GeluTanh, &x).unwrap();
            assert_close(&format!("gelu_tanh {sizes:?}"), &ours, &eager, 4, 8e-7);
            let split = rextio_runtime::cpu::aten_vector_prefix(len);
            let (ours, eager) = (to_vec(&ours), to_vec(&eager));
            for i in split..len {
                assert_eq!(ours[i].to_bits(), eager[i].to_bits(), "tail {i} of {len}");
            }
            saw_both.0 |= eager.contains(&0.0);
            saw_both.1 |= eager.iter().any(|v| *v != 0.0);
        }
    }
    assert!(saw_both.0 && saw_both.1, "the band has both classes");
}

#[test]
fn large_logs_are_left_to_aten() {
    assert!(!dense::unary_supported(UnaryOp::Log, 100_000));
    assert!(dense::unary_supported(UnaryOp::Log, 16));
    assert!(dense::unary_supported(UnaryOp::Tanh, 100_000));
    assert!(dense::unary_supported(UnaryOp::Gelu, 100_000));
    assert!(dense::unary_supported(UnaryOp::Relu, 100_000));
}

#[test]
fn binary_ops_broadcast_bit_for_bit_like_aten() {
    let _guard = tch::no_grad_guard();
    let ops = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div];
    let mut broadcasting = 0;
    for (i, a_sizes) in SHAPES.iter().enumerate() {
        for (j, b_sizes) in SHAPES.iter().enumerate() {
            let a_len = a_sizes.iter().product::<i64>() as usize;
            let b_len = b_sizes.iter().product::<i64>() as usize;
            let a = tensor(&values(a_len, 100 + i as u64, true), a_sizes);
            let b = tensor(&values(b_len, 200 + j as u64, true), b_sizes);
            let (da, db) = (dense_of(&a), dense_of(&b));
            let Some(dims) = dense::broadcast(da.dims(), db.dims()) else {
                // Where ours says no, eager must raise too.
                assert!(
                    a.f_add(&b).is_err(),
                    "{a_sizes:?} + {b_sizes:?} broadcasts in eager"
                );
                continue;
            };
            broadcasting += 1;
            for op in ops {
                let ours = dense::binary(op, &da, &db, dims).into_tensor().unwrap();
                let eager = rextio_runtime::ops::binary(op, &a, &b).unwrap();
                assert_close(
                    &format!("{op:?} {a_sizes:?} {b_sizes:?}"),
                    &ours,
                    &eager,
                    0,
                    0.0,
                );
            }
        }
    }
    assert!(
        broadcasting > 30,
        "only {broadcasting} broadcasting pairs were compared"
    );
}

/// A tensor with a Python scalar, bit for bit as ATen computes each spelling: `x op s` by
/// ATen's `*_scalar` ops (the scalar wrapped as a double or an int64), `s - x` by `rsub`,
/// `s / x` as `Tensor.__rtruediv__` does, `reciprocal(x) * s`.
#[test]
fn tensor_scalar_ops_match_aten_bit_for_bit() {
    use rextio_runtime::scalar::Scalar;
    let _guard = tch::no_grad_guard();
    let scalars = [
        Scalar::Float(0.5),
        Scalar::Float(3.0),
        Scalar::Float(0.1),
        Scalar::Float(-0.0),
        Scalar::Float(f64::NAN),
        Scalar::Float(f64::INFINITY),
        Scalar::Float(f64::NEG_INFINITY),
        Scalar::Float(1e300),
        Scalar::Float(1e-300),
        Scalar::Float(1e-40),
        Scalar::Float(3.4028235677973366e38),
        Scalar::Int(0),
        Scalar::Int(-7),
        Scalar::Int(16_777_217),
        Scalar::Int((1 << 60) + (1 << 36) + 1),
        Scalar::Int(i64::MIN),
    ];
    for (i, sizes) in SHAPES.iter().enumerate() {
        let len = sizes.iter().product::<i64>() as usize;
        let x = tensor(&values(len, 300 + i as u64, true), sizes);
        let dx = dense_of(&x);
        for s in scalars {
            let aten_scalar = || match s {
                Scalar::Int(v) => tch::Scalar::int(v),
                Scalar::Bool(b) => tch::Scalar::int(i64::from(b)),
                Scalar::Float(v) => tch::Scalar::float(v),
            };
            for op in TensorScalarOp::ALL {
                let s32 = rextio_runtime::eval::scalar_f32(s);
                let ours = dense::tensor_scalar(op, &dx, s32).into_tensor().unwrap();
                let a = aten_scalar();
                let eager = match op {
                    TensorScalarOp::Add => x.f_add_scalar(a),
                    TensorScalarOp::Sub => x.f_sub_scalar(a),
                    TensorScalarOp::Mul => x.f_mul_scalar(a),
                    TensorScalarOp::Div => x.f_div_scalar(a),
                    TensorScalarOp::RSub => x.f_rsub_scalar(a),
                    TensorScalarOp::RDiv => x.f_reciprocal().and_then(|r| r.f_mul_scalar(a)),
                }
                .unwrap();
                assert_close(&format!("{op:?} {sizes:?} {s:?}"), &ours, &eager, 0, 0.0);
            }
        }
    }
}

/// `sum |x|` along the reduced lines: the scale of the float32 rounding bound.
fn reduce_tolerance(x: &Tensor, dim: i64) -> f32 {
    let abs_sum = x.abs().sum_dim_intlist(&[dim][..], false, None::<Kind>);
    let m = to_vec(&abs_sum)
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0f32, f32::max);
    m * 1e-6 + f32::MIN_POSITIVE
}

#[test]
fn reductions_match_aten() {
    let _guard = tch::no_grad_guard();
    let mut shapes: Vec<Vec<i64>> = SHAPES.iter().map(|s| s.to_vec()).collect();
    // Long columns exercise the pairwise combination of row blocks.
    shapes.extend([vec![1000, 3], vec![65, 9], vec![3, 1000]]);
    for (s, sizes) in shapes.iter().enumerate() {
        if sizes.is_empty() {
            continue;
        }
        let len = sizes.iter().product::<i64>() as usize;
        for specials in [false, true] {
            let x = tensor(&values(len, 300 + s as u64, specials), sizes);
            for dim in 0..sizes.len() {
                for keepdim in [false, true] {
                    for kind in [ReduceKind::Sum, ReduceKind::Mean] {
                        let ours = dense::reduce(kind, &dense_of(&x), dim, keepdim)
                            .into_tensor()
                            .unwrap();
                        let eager =
                            rextio_runtime::ops::reduce(kind, &x, dim as u8, keepdim).unwrap();
                        let tol = reduce_tolerance(&x, dim as i64);
                        assert_close(
                            &format!("{kind:?} {sizes:?} dim {dim} keepdim {keepdim}"),
                            &ours,
                            &eager,
                            2,
                            tol,
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn softmax_matches_aten() {
    let _guard = tch::no_grad_guard();
    for (s, sizes) in SHAPES.iter().enumerate() {
        if sizes.is_empty() {
            continue;
        }
        let len = sizes.iter().product::<i64>() as usize;
        for specials in [false, true] {
            let mut data = values(len, 400 + s as u64, specials);
            if specials && sizes.len() == 2 && sizes[1] > 1 && sizes[0] > 1 {
                // A row of -inf only (0/0 in eager too) next to ordinary rows.
                for v in &mut data[..sizes[1] as usize] {
                    *v = f32::NEG_INFINITY;
                }
            }
            let x = tensor(&data, sizes);
            for dim in 0..sizes.len() {
                let ours = dense::softmax(&dense_of(&x), dim).into_tensor().unwrap();
                let eager =
                    rextio_runtime::ops::softmax(SoftmaxKind::Softmax, &x, dim as u8).unwrap();
                assert_close(
                    &format!("softmax {sizes:?} dim {dim}"),
                    &ours,
                    &eager,
                    4,
                    1e-7,
                );
            }
        }
    }
}

#[test]
fn argmax_matches_aten_with_ties_and_nan() {
    let _guard = tch::no_grad_guard();
    let rows: Vec<Vec<f32>> = vec![
        vec![1.0, 3.0, 3.0, 2.0],
        vec![f32::NAN, 1.0, f32::NAN, 9.0],
        vec![1.0, 2.0, f32::NAN, 9.0],
        vec![f32::NEG_INFINITY; 4],
        vec![-0.0, 0.0, -0.0, 0.0],
        vec![f32::INFINITY, 1.0, f32::INFINITY, f32::NAN],
    ];
    let flat: Vec<f32> = rows.concat();
    let x = tensor(&flat, &[rows.len() as i64, 4]);
    for dim in 0..2 {
        for keepdim in [false, true] {
            let ours = dense::argmax(&dense_of(&x), dim, keepdim).unwrap();
            let eager = x.argmax(dim as i64, keepdim);
            assert_eq!(ours.size(), eager.size());
            assert_eq!(ours.kind(), Kind::Int64);
            assert!(
                ours.equal(&eager),
                "dim {dim}: ours {ours:?} eager {eager:?}"
            );
        }
    }
    for (s, sizes) in [[7i64].as_slice(), &[17, 33], &[1, 5]].iter().enumerate() {
        let len = sizes.iter().product::<i64>() as usize;
        let x = tensor(&values(len, 500 + s as u64, true), sizes);
        for dim in 0..sizes.len() {
            let ours = dense::argmax(&dense_of(&x), dim, false).unwrap();
            assert!(
                ours.equal(&x.argmax(dim as i64, false)),
                "{sizes:?} dim {dim}"
            );
        }
    }
    // Rows longer than the 16 lanes of the row loops: ties across lanes and with the tail,
    // zeros of both signs, NaN only in the tail, -inf only, and rows without specials.
    let len = 40;
    let mut long: Vec<Vec<f32>> = Vec::new();
    let mut tie = vec![1.0f32; len];
    for at in [35, 19, 3] {
        tie[at] = 5.0;
    }
    long.push(tie);
    let mut tail_tie = vec![0.5f32; len];
    tail_tie[36] = 7.0;
    tail_tie[20] = 7.0;
    long.push(tail_tie);
    let mut zeros = vec![-1.0f32; len];
    zeros[17] = 0.0;
    zeros[2] = -0.0;
    long.push(zeros);
    let mut tail_nan = values(len, 900, false);
    tail_nan[38] = f32::NAN;
    long.push(tail_nan);
    long.push(vec![f32::NEG_INFINITY; len]);
    for seed in 0..4 {
        long.push(values(len, 910 + seed, false));
    }
    let x = tensor(&long.concat(), &[long.len() as i64, len as i64]);
    let ours = dense::argmax(&dense_of(&x), 1, false).unwrap();
    let eager = x.argmax(1, false);
    assert!(
        ours.equal(&eager),
        "long rows: ours {ours:?} eager {eager:?}"
    );
    let ours = dense::softmax(&dense_of(&x), 1).into_tensor().unwrap();
    let eager = rextio_runtime::ops::softmax(SoftmaxKind::Softmax, &x, 1).unwrap();
    assert_close("softmax of long rows", &ours, &eager, 4, 1e-7);
    let empty = tensor(&[], &[0]);
    assert!(dense::argmax(&dense_of(&empty), 0, false).is_err());
}

#[test]
fn matmul_matches_aten() {
    let _guard = tch::no_grad_guard();
    for (m, k, n) in [
        (1, 1, 1),
        (3, 5, 7),
        (8, 32, 16),
        (0, 4, 3),
        (2, 0, 3),
        (16, 64, 64),
    ] {
        let a = tensor(&values(m * k, 600 + k as u64, false), &[m as i64, k as i64]);
        let b = tensor(&values(k * n, 700 + n as u64, false), &[k as i64, n as i64]);
        assert!(dense::matmul_supported(
            dense_of(&a).dims(),
            dense_of(&b).dims()
        ));
        let ours = dense::matmul(&dense_of(&a), &dense_of(&b))
            .into_tensor()
            .unwrap();
        let eager = a.matmul(&b);
        let tol = 4.0 * (k as f32 + 1.0).sqrt() * f32::EPSILON * 4.0 * k as f32;
        assert_close(&format!("matmul {m}x{k}x{n}"), &ours, &eager, 4, tol);
        // A vector on the left gives a vector, as in eager.
        if m > 0 {
            let v = a.get(0);
            let ours = dense::matmul(&dense_of(&v), &dense_of(&b))
                .into_tensor()
                .unwrap();
            assert_close(&format!("vecmat {k}x{n}"), &ours, &v.matmul(&b), 4, tol);
        }
    }
    let a = Dims::matrix(2, 3);
    assert!(
        !dense::matmul_supported(a, Dims::matrix(4, 2)),
        "inner sizes differ"
    );
    assert!(
        !dense::matmul_supported(Dims::matrix(2, 8192), Dims::matrix(8192, 4)),
        "dot products past BLOCKED_MAX_K are libtorch's"
    );
}

#[test]
fn buffers_return_to_the_pool_and_are_reused() {
    let first = Buffer::take(1000);
    let address = first.as_slice().as_ptr();
    drop(first);
    let second = Buffer::take(800);
    assert_eq!(
        second.as_slice().as_ptr(),
        address,
        "a dropped buffer is reused"
    );
    assert_eq!(second.as_slice().len(), 800);
    let third = Buffer::take(1000);
    assert_ne!(
        third.as_slice().as_ptr(),
        address,
        "a live buffer is not handed out twice"
    );
}

#[test]
fn pooled_values_become_independent_tensors() {
    let _guard = tch::no_grad_guard();
    let x = tensor(&[1.0, -2.0, 3.0], &[3]);
    let y = dense::unary(UnaryOp::Neg, &dense_of(&x));
    let view = y.tensor().unwrap().shallow_clone();
    let out = y.into_tensor().unwrap();
    // The buffer may now be reused; the returned tensor owns its copy.
    let mut reuse = Buffer::take(3);
    reuse.as_mut_slice().fill(7.0);
    drop(view);
    assert_eq!(to_vec(&out), vec![-1.0, 2.0, -3.0]);
    assert_eq!(out.device(), Device::Cpu);
}

#[test]
fn transposition_matches_the_definition_at_every_edge() {
    for (rows, cols) in [
        (1, 1),
        (8, 8),
        (9, 17),
        (64, 64),
        (37, 29),
        (128, 3),
        (3, 130),
        // Across the 32x32 tiles of the AVX2 path.
        (128, 128),
        (100, 72),
        (40, 200),
    ] {
        let w: Vec<f32> = (0..rows * cols).map(|i| i as f32 + 0.5).collect();
        let mut wt = vec![f32::NAN; rows * cols];
        rextio_runtime::kernels::transpose_into(&w, rows, cols, &mut wt);
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(
                    wt[c * rows + r],
                    w[r * cols + c],
                    "{rows}x{cols} at ({r}, {c})"
                );
            }
        }
    }
}

/// A large result the call returns is allocated by libtorch and handed back without a copy;
/// it must still be exactly what the pooled path computes, and independent of later calls.
#[test]
fn large_returned_values_are_libtorch_tensors_with_the_same_values() {
    use rextio_ir::parse_function;
    use rextio_runtime::{Program, Value};
    let _guard = tch::no_grad_guard();
    let text = "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {\n  %0: tensor<f32, cpu, 2> = param 0\n  %1: tensor<f32, cpu, 2> = param 1\n  %2: tensor<f32, cpu, 2> = matmul %0, %1\n  %3: tensor<f32, cpu, 2> = tanh %2\n  return %3\n}\n";
    let program = Program::compile(&parse_function(text).unwrap()).unwrap();
    // 300 x 256 = 76 800 outputs: above the size from which results are libtorch's.
    for (m, n) in [(300i64, 256i64), (3, 5)] {
        let x = tensor(&values((m * 16) as usize, 900, false), &[m, 16]);
        let w = tensor(&values((16 * n) as usize, 901, false), &[16, n]);
        let run = || match program
            .run(vec![
                Value::Tensor(x.shallow_clone()),
                Value::Tensor(w.shallow_clone()),
            ])
            .unwrap()
        {
            Value::Tensor(t) => t,
            other => panic!("{other:?}"),
        };
        let first = run();
        let snapshot = first.copy();
        let second = run();
        assert_eq!(first.size(), [m, n]);
        assert!(first.is_contiguous());
        // The second call wrote its own tensor, not the first one's storage.
        assert!(first.equal(&snapshot) && second.equal(&first), "{m}x{n}");
        let eager = x.matmul(&w).tanh();
        assert_close(&format!("{m}x{n}"), &first, &eager, 4, 1e-5);
    }
}

#[test]
fn the_transposed_weight_path_matches_the_weight_as_given_at_every_edge() {
    // Small batches against a transposed weight run their own register-tiled kernel where
    // the CPU has AVX-512 (64-column tiles, masked edges): the same products, summed in the
    // same order, as the `gemm` crate computes with the weight as given.
    use rextio_runtime::kernels::{linear_into, transpose_into, Epilogue, KernelPath, LinearDims};
    let mut seed = 7u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    for batch in [1, 2, 3, 4, 5, 8, 13, 64] {
        for k in [1, 7, 64, 256] {
            for n in [1, 15, 16, 17, 64, 65, 130] {
                let x: Vec<f32> = (0..batch * k).map(|_| next()).collect();
                let w: Vec<f32> = (0..n * k).map(|_| next()).collect();
                let b: Vec<f32> = (0..n).map(|_| next()).collect();
                let mut wt = vec![0.0f32; n * k];
                transpose_into(&w, n, k, &mut wt);
                let mut given = vec![f32::NAN; batch * n];
                let mut transposed = vec![f32::NAN; batch * n];
                let acts = [UnaryOp::Tanh];
                linear_into(
                    KernelPath::Blocked,
                    &x,
                    &w,
                    Some(&b),
                    LinearDims::new(batch, k, n),
                    Epilogue::new(&acts, None),
                    &mut given,
                )
                .unwrap();
                linear_into(
                    KernelPath::BlockedTransposed,
                    &x,
                    &wt,
                    Some(&b),
                    LinearDims::new(batch, k, n),
                    Epilogue::new(&acts, None),
                    &mut transposed,
                )
                .unwrap();
                for (i, (g, t)) in given.iter().zip(&transposed).enumerate() {
                    // Both sum the same products in some order: they may differ by the
                    // rounding of two summations of k terms (tanh and the bias add do not
                    // widen it), k eps sum|x w| each, plus a final rounding.
                    let (r, j) = (i / n, i % n);
                    let magnitude: f32 = (0..k).map(|p| (x[r * k + p] * w[j * k + p]).abs()).sum();
                    let bound = 2.0 * k as f32 * f32::EPSILON * magnitude + 2.0 * f32::EPSILON;
                    assert!(
                        (g - t).abs() <= bound,
                        "{batch}x{k}x{n} at {i}: {g} vs {t} (bound {bound})"
                    );
                }
                // A wrong product (any column or row swapped) is far outside that bound.
                assert!(transposed.iter().all(|v| v.is_finite()));
            }
        }
    }
}

/// The float32 ulp of `|v|` (the smallest subnormal at 0).
fn ulp_of(v: f64) -> f64 {
    let a = (v.abs() as f32).max(f32::from_bits(1));
    f64::from(f32::from_bits(a.to_bits() + 1) - a)
}

/// Worst difference between ours and eager's log_softmax of `x` along `dim`, in ulps of
/// `max(|eager|, 1)`: the result is `(x - max) - log(sum)` with `sum >= 1`, whose rounding
/// gives `log(sum)` an absolute error of a few ulps of 1 however small the result (the
/// envelope of docs/parity.md). NaN positions, infinities and zero signs must match.
fn log_softmax_worst_ulps(x: &Tensor, dim: usize) -> f64 {
    let ours = dense::log_softmax(&dense_of(x), dim).into_tensor().unwrap();
    let eager = rextio_runtime::ops::softmax(SoftmaxKind::LogSoftmax, x, dim as u8).unwrap();
    assert_eq!(ours.size(), eager.size());
    let mut worst = 0.0f64;
    for (i, (a, e)) in to_vec(&ours).into_iter().zip(to_vec(&eager)).enumerate() {
        if e.is_nan() || a.is_nan() || e.is_infinite() || a.is_infinite() || e == 0.0 {
            assert!(
                a.to_bits() == e.to_bits() || (a.is_nan() && e.is_nan()),
                "log_softmax {:?} dim {dim}: element {i}: ours {a:e}, eager {e:e}",
                x.size()
            );
            continue;
        }
        let scale = f64::from(e).abs().max(1.0);
        worst = worst.max((f64::from(a) - f64::from(e)).abs() / ulp_of(scale));
    }
    worst
}

#[test]
fn log_softmax_matches_aten() {
    let _guard = tch::no_grad_guard();
    let mut worst = 0.0f64;
    let mut shapes: Vec<&[i64]> = SHAPES.to_vec();
    shapes.extend([&[2, 5000][..], &[300, 3], &[64, 129]]);
    for (s, sizes) in shapes.iter().enumerate() {
        if sizes.is_empty() {
            continue;
        }
        let len = sizes.iter().product::<i64>() as usize;
        for (specials, scale) in [(false, 1.0f32), (false, 40.0), (true, 1.0)] {
            let data: Vec<f32> = values(len, 900 + s as u64, specials)
                .into_iter()
                .map(|v| v * scale)
                .collect();
            let x = tensor(&data, sizes);
            for dim in 0..sizes.len() {
                worst = worst.max(log_softmax_worst_ulps(&x, dim));
            }
        }
    }
    // Lines of one value, of signed zeros, of -inf, one +inf, and one that underflows.
    for line in [
        vec![-0.0f32],
        vec![5.0, 5.0],
        vec![-0.0, 0.0, -0.0],
        vec![f32::NEG_INFINITY; 3],
        vec![1.0, f32::INFINITY],
        vec![0.0, -200.0, -200.0],
    ] {
        let x = tensor(&line, &[line.len() as i64]);
        worst = worst.max(log_softmax_worst_ulps(&x, 0));
    }
    eprintln!("log_softmax: worst {worst:.3} ulps of max(|eager|, 1)");
    assert!(worst <= 3.0, "log_softmax: {worst} ulps");
}

/// amax/amin are ATen's own loops (their choice between 0.0 and -0.0 depends on ATen's
/// vector width and lanes), so the executor's results are eager's bits, NaN payloads aside.
#[test]
fn amax_amin_are_atens_bits() {
    let _guard = tch::no_grad_guard();
    let mut lines: Vec<Vec<f32>> = vec![vec![-0.0, 0.0], vec![0.0, -0.0], vec![1.0, f32::NAN]];
    for n in [17usize, 64, 65] {
        for pos in [0, n / 2, n - 1] {
            let mut line = vec![-0.0f32; n];
            line[pos] = 0.0;
            lines.push(line);
        }
    }
    for line in &lines {
        for sizes in [
            vec![line.len() as i64],
            vec![1, line.len() as i64],
            vec![line.len() as i64, 1],
        ] {
            let x = tensor(line, &sizes);
            for kind in [ReduceKind::Amax, ReduceKind::Amin] {
                for dim in 0..sizes.len() as u8 {
                    for keepdim in [false, true] {
                        if sizes.len() == 1 && !keepdim {
                            continue;
                        }
                        let ours = rextio_runtime::exec::reduce(kind, &x, dim, keepdim).unwrap();
                        let eager = rextio_runtime::ops::reduce(kind, &x, dim, keepdim).unwrap();
                        let (o, e) = (to_vec(&ours), to_vec(&eager));
                        assert_eq!(ours.size(), eager.size());
                        for (a, b) in o.iter().zip(&e) {
                            assert!(
                                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                                "{kind:?} {sizes:?} dim {dim}: ours {a:e} eager {b:e}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Ops with scalar parameters (`exec::param_unary`, the executor's and emitted code's entry)
/// against ATen's own kernels where tch exposes them with these parameters: `leaky_relu`
/// (slope 0.01), `elu` (alpha 1), `hardtanh` (-1, 1), `relu6` (`hardtanh(0, 6)`) and
/// `clamp`/`clamp_min`/`clamp_max` with any bounds: NaN, infinities, -0.0, subnormals, a
/// minimum above the maximum, ints. Bit for bit, in dense (contiguous) and strided tensors,
/// one-element ones included; a bound beyond float32's range raises ATen's error.
#[test]
fn param_unary_ops_match_aten_bit_for_bit() {
    use rextio_ir::ParamUnaryOp as P;
    use rextio_runtime::exec::param_unary;
    use rextio_runtime::scalar::Scalar::{self, Float, Int};
    let _guard = tch::no_grad_guard();
    let bounds = [
        Float(-1.0),
        Float(1.0),
        Float(0.0),
        Float(-0.0),
        Float(6.0),
        Float(1e-45),
        Float(-1e-40),
        Float(f64::INFINITY),
        Float(f64::NEG_INFINITY),
        Float(f64::NAN),
        Float(0.1),
        Float(3.4028234663852886e38),
        Int(0),
        Int(-3),
        Int(16_777_217),
    ];
    let aten = |s: Scalar| match s {
        Int(v) => tch::Scalar::int(v),
        Scalar::Bool(b) => tch::Scalar::int(i64::from(b)),
        Float(v) => tch::Scalar::float(v),
    };
    let same = |what: &str, ours: Tensor, eager: Tensor| assert_close(what, &ours, &eager, 0, 0.0);
    let mut shapes: Vec<&[i64]> = SHAPES.to_vec();
    shapes.extend([&[1, 1][..], &[4099][..]]);
    for (i, sizes) in shapes.iter().enumerate() {
        let len = sizes.iter().product::<i64>() as usize;
        let base = tensor(&values(len, 900 + i as u64, true), sizes);
        // Dense, and (rank 2) a transposed view, which takes ATen's path.
        let strided = (sizes.len() == 2).then(|| base.tr());
        for x in std::iter::once(base.shallow_clone()).chain(strided) {
            let w = format!("{sizes:?} contiguous={}", x.is_contiguous());
            let run = |op, a, b| param_unary(op, &x, a, b).unwrap();
            same(
                &format!("leaky_relu {w}"),
                run(P::LeakyRelu, Float(0.01), None),
                x.leaky_relu(),
            );
            // ELU is ATen's kernel, whose vector and scalar loops differ (`expm1(x)` against
            // `exp(x) - 1`): a strided argument keeps its strides, so ATen's loop reads it in
            // memory order and its scalar tail holds eager's elements (docs/parity.md).
            same(&format!("elu {w}"), run(P::Elu, Int(1), None), x.elu());
            same(
                &format!("hardtanh {w}"),
                run(P::Hardtanh, Float(-1.0), Some(Int(1))),
                x.hardtanh(),
            );
            same(
                &format!("relu6 {w}"),
                run(P::Hardtanh, Int(0), Some(Float(6.0))),
                x.relu6(),
            );
            let check = |what: String, op, a, b, eager: Tensor| match param_unary(op, &x, a, b) {
                Ok(ours) => same(&what, ours, eager),
                Err(err) => panic!("{what}: {err}"),
            };
            for lo in bounds {
                check(
                    format!("clamp_min {lo:?} {w}"),
                    P::ClampMin,
                    lo,
                    None,
                    x.clamp_min(aten(lo)),
                );
                check(
                    format!("clamp_max {lo:?} {w}"),
                    P::ClampMax,
                    lo,
                    None,
                    x.clamp_max(aten(lo)),
                );
                for hi in bounds {
                    let eager = x.clamp(aten(lo), aten(hi));
                    check(
                        format!("clamp {lo:?} {hi:?} {w}"),
                        P::Clamp,
                        lo,
                        Some(hi),
                        eager,
                    );
                }
            }
        }
    }
    // A bound or slope beyond float32's range: eager's error, with its words (the Python
    // tests compare them with eager's; tch itself panics on this ATen error, in the drop of
    // its `Scalar` argument, so the runtime never hands ATen such a value). Dense and strided.
    let x = tensor(&[1.0, -2.0, f32::NAN, 0.5], &[2, 2]);
    for x in [x.shallow_clone(), x.tr()] {
        for op in [P::LeakyRelu, P::Elu, P::ClampMin, P::ClampMax] {
            for big in [1e300, -3.4028235677973366e38] {
                let ours = param_unary(op, &x, Float(big), None).unwrap_err();
                assert!(
                    matches!(ours, rextio_runtime::RuntimeError::Torch(_)),
                    "{ours:?}"
                );
                assert_eq!(ours.to_string(), rextio_runtime::eval::FLOAT_OVERFLOW);
            }
        }
        assert!(param_unary(P::Clamp, &x, Float(0.0), Some(Float(1e39))).is_err());
    }
    let x = tensor(&[1.0, -2.0, f32::NAN], &[3]);
    // A NaN bound of clamp fills the result with NaN before any cast (ATen's order).
    let ours = param_unary(P::Clamp, &x, Float(f64::NAN), Some(Float(1e300))).unwrap();
    same("clamp nan 1e300", ours, x.clamp(f64::NAN, 1.0));
    // hardtanh checks `min_val > max_val` as Python does (exactly, int against float).
    let err = param_unary(P::Hardtanh, &x, Float(2.0), Some(Int(1))).unwrap_err();
    assert!(
        matches!(err, rextio_runtime::RuntimeError::Value(_)),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "min_val cannot be greater than max_val");
    assert!(param_unary(P::Hardtanh, &x, Int(16_777_217), Some(Float(16_777_216.0))).is_err());
    assert!(param_unary(P::Hardtanh, &x, Float(f64::NAN), Some(Float(1.0))).is_ok());
}
