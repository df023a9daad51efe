//! Accuracy of `fused_linear` on long rows, held to eager PyTorch's own accuracy: on every
//! kernel path (one-pass AVX2, portable, GEMM + epilogue), for inner sizes K from 1 to 65536
//! and output rows N (the epilogue's reduction) from 1 to 65536, on uniform, normal and
//! cancelling data, our largest error against a float64 evaluation of the same chain on the
//! same float32 inputs must be at most twice eager's (op by op through ATen, one thread),
//! plus a slack of one float32 ulp of the largest reference value (see `SLACK_ULPS`).
//!
//! Why a ratio and not a fixed tolerance: the error of a float32 sum grows with its length
//! and its conditioning (`sum |x_i * w_i|` over `|sum x_i * w_i|`), so no fixed bound holds
//! for every K; what a user can ask is that compiling does not make results worse than
//! eager's. docs/parity.md describes this check and the parity tests' own tolerance.

use rextio_ir::{FusedReduce, ReduceKind, UnaryOp};
use rextio_runtime::kernels::{
    blocked_fused_linear, gemm_then_epilogue, small_fused_linear, Isa, BLOCKED_MAX_K,
};
use rextio_runtime::ops;
use tch::{Kind, Tensor};

/// Slack in float32 ulps of the largest |reference| value. Where the data make a result
/// exactly representable or nearly so (K = 1 or 2, a single output), eager's error can be
/// ~0 by luck of rounding, and a result of ours that differs by one correct rounding step
/// would fail a pure ratio. One ulp of the largest value covers exactly that and nothing
/// more: it is far below the drift this test exists to catch (sequential row sums were about
/// 100 ulps off at 65536 outputs).
const SLACK_ULPS: f64 = 1.0;

#[derive(Clone, Copy, Debug)]
enum Data {
    /// U[0, 1): every product positive, the sum grows with K (no cancellation).
    Uniform,
    /// N(0, 1): products of both signs, the sum a random walk.
    Normal,
    /// Each product appears twice with opposite signs, shuffled, plus a 1e-3 perturbation:
    /// partial sums grow like a random walk while the exact result stays tiny, so the result
    /// is ill-conditioned and every rounding of a partial sum shows.
    Cancelling,
}

const DATA: [Data; 3] = [Data::Uniform, Data::Normal, Data::Cancelling];

#[derive(Clone, Copy, Debug)]
enum Path {
    OnePass,
    OnePassAvx2,
    Portable,
    Gemm,
    Blocked,
}

const PATHS: [Path; 5] = [
    Path::OnePass,
    Path::OnePassAvx2,
    Path::Portable,
    Path::Gemm,
    Path::Blocked,
];

fn reduce(kind: ReduceKind) -> Option<FusedReduce> {
    Some(FusedReduce {
        kind,
        dim: 1,
        keepdim: false,
    })
}

/// Deterministic data, independent of libtorch's global generator (tests run in parallel).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// U[0, 1) with 24 random bits, exact in float32.
    fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// N(0, 1) by Box-Muller.
    fn normal(&mut self) -> f32 {
        let u = 1.0 - (self.next() >> 11) as f64 / (1u64 << 53) as f64; // (0, 1]
        let v = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }

    fn fill(&mut self, len: usize, f: fn(&mut Rng) -> f32) -> Vec<f32> {
        (0..len).map(|_| f(self)).collect()
    }
}

fn tensor(values: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(values).view(shape)
}

/// `x` [batch, k], `w` [n, k], `b` [n] of the given kind.
fn problem(rng: &mut Rng, data: Data, batch: i64, k: i64, n: i64) -> (Tensor, Tensor, Tensor) {
    let (bu, ku, nu) = (batch as usize, k as usize, n as usize);
    let draw: fn(&mut Rng) -> f32 = match data {
        Data::Uniform => Rng::uniform,
        Data::Normal | Data::Cancelling => Rng::normal,
    };
    let mut x = rng.fill(bu * ku, draw);
    let mut w = rng.fill(nu * ku, draw);
    let mut b = rng.fill(nu, draw);
    if let Data::Cancelling = data {
        // Column pairs (p, q): x[q] = x[p] + 1e-3 * noise, w[q] = -w[p]. Pairs are drawn
        // from a shuffled column order, so partners sit far apart in the sum.
        let mut order: Vec<usize> = (0..ku).collect();
        for i in (1..ku).rev() {
            order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        for pair in order.chunks_exact(2) {
            let (p, q) = (pair[0], pair[1]);
            for r in 0..bu {
                x[r * ku + q] = x[r * ku + p] + 1e-3 * rng.normal();
            }
            for r in 0..nu {
                w[r * ku + q] = -w[r * ku + p];
            }
        }
        b.iter_mut().for_each(|v| *v *= 1e-3);
    }
    (
        tensor(&x, &[batch, k]),
        tensor(&w, &[n, k]),
        tensor(&b, &[n]),
    )
}

/// The chain op by op through ATen, in the inputs' dtype.
fn chain(
    x: &Tensor,
    w: &Tensor,
    b: &Tensor,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Tensor {
    let mut y = ops::linear(x, w, Some(b)).unwrap();
    for &op in acts {
        y = ops::unary(op, &y).unwrap();
    }
    match reduce {
        Some(r) => ops::reduce(r.kind, &y, r.dim, r.keepdim).unwrap(),
        None => y,
    }
}

fn f32s(t: &Tensor) -> Vec<f32> {
    let t = t.contiguous().view(-1);
    let len = t.numel();
    let mut out = vec![0f32; len];
    t.copy_data(&mut out, len);
    out
}

fn f64s(t: &Tensor) -> Vec<f64> {
    let t = t.to_kind(Kind::Double).contiguous().view(-1);
    let len = t.numel();
    let mut out = vec![0f64; len];
    t.copy_data(&mut out, len);
    out
}

fn ours(
    path: Path,
    x: &Tensor,
    w: &Tensor,
    b: &Tensor,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Vec<f32> {
    let isa = match path {
        Path::Gemm => return f32s(&gemm_then_epilogue(x, w, Some(b), acts, reduce).unwrap()),
        Path::OnePass => Isa::Best,
        Path::OnePassAvx2 => Isa::Avx2,
        Path::Portable => Isa::Portable,
        Path::Blocked => {
            let (batch, k) = x.size2().unwrap();
            let n = w.size()[0] as usize;
            let (batch, k) = (batch as usize, k as usize);
            let mut out = vec![0f32; if reduce.is_some() { batch } else { batch * n }];
            if k > BLOCKED_MAX_K {
                // Longer dot products never take this path (they go to libtorch's GEMM).
                return f32s(&gemm_then_epilogue(x, w, Some(b), acts, reduce).unwrap());
            }
            blocked_fused_linear(
                &f32s(x),
                &f32s(w),
                Some(&f32s(b)),
                batch,
                k,
                n,
                acts,
                reduce,
                &mut out,
            )
            .unwrap();
            return out;
        }
    };
    let (batch, k) = x.size2().unwrap();
    let n = w.size()[0];
    let (batch, k, n) = (batch as usize, k as usize, n as usize);
    let mut out = vec![0f32; if reduce.is_some() { batch } else { batch * n }];
    small_fused_linear(
        isa,
        &f32s(x),
        &f32s(w),
        Some(&f32s(b)),
        batch,
        k,
        n,
        acts,
        reduce,
        &mut out,
    )
    .unwrap();
    out
}

/// Largest |result - reference| and largest |reference| over all outputs.
fn max_error(got: &[f32], want: &[f64]) -> (f64, f64) {
    assert_eq!(got.len(), want.len());
    got.iter().zip(want).fold((0.0, 0.0), |(e, m), (&g, &r)| {
        assert!(
            g.is_finite() && r.is_finite(),
            "non-finite result {g} vs {r}"
        );
        (e.max((g as f64 - r).abs()), m.max(r.abs()))
    })
}

/// Outputs each comparison takes the largest error over (several draws where one call has
/// fewer): errors are quantized in ulps and vary with the draw, so the largest of a handful
/// would let luck decide the ratio.
const SAMPLES: usize = 48;

/// Runs draws of every data kind through every path and checks the error ratio. Returns the
/// report lines of the failures (all of them, so one run shows the whole picture).
fn compare(
    label: &str,
    batch: i64,
    k: i64,
    n: i64,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Vec<String> {
    let outputs = batch as usize * if reduce.is_some() { 1 } else { n as usize };
    let trials = SAMPLES.div_ceil(outputs).max(2);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (batch * 1_000_003 + k * 1009 + n) as u64);
    let mut failures = Vec::new();
    for data in DATA {
        let mut eager_err = 0.0f64;
        let mut ours_err = [0.0f64; PATHS.len()];
        let mut scale = 0.0f64;
        for _ in 0..trials {
            let (x, w, b) = problem(&mut rng, data, batch, k, n);
            let exact = f64s(&chain(
                &x.to_kind(Kind::Double),
                &w.to_kind(Kind::Double),
                &b.to_kind(Kind::Double),
                acts,
                reduce,
            ));
            let (e, m) = max_error(&f32s(&chain(&x, &w, &b, acts, reduce)), &exact);
            eager_err = eager_err.max(e);
            scale = scale.max(m);
            for (slot, path) in ours_err.iter_mut().zip(PATHS) {
                let (e, _) = max_error(&ours(path, &x, &w, &b, acts, reduce), &exact);
                *slot = slot.max(e);
            }
        }
        let slack = SLACK_ULPS * f32::EPSILON as f64 * scale;
        for (err, path) in ours_err.into_iter().zip(PATHS) {
            let line = format!(
                "{label} {batch}x{k}->{n} {data:?} {path:?}: ours {err:.3e}, eager {eager_err:.3e} (ratio {:.2})",
                err / eager_err.max(f64::MIN_POSITIVE)
            );
            if std::env::var_os("REXTIO_ACCURACY_REPORT").is_some() {
                eprintln!("{line}");
            }
            if err > 2.0 * eager_err + slack {
                failures.push(line);
            }
        }
    }
    failures
}

const LONG: [i64; 10] = [1, 2, 7, 64, 255, 256, 1000, 4097, 16384, 65536];

#[test]
fn dot_products_are_as_accurate_as_eager_for_every_inner_size() {
    tch::set_num_threads(1);
    let mut failures = Vec::new();
    for k in LONG {
        // Batch 1 is eager's GEMV, batch 3 its GEMM; both meet the one-pass kernel's 1x8 and
        // 2x4 tiles and their remainders (11 = 8 + 3 = 2 * 4 + 3 outputs; 2 outputs only
        // remainders).
        for (batch, n) in [(1, 2), (1, 11), (3, 11), (2, 64)] {
            failures.extend(compare("linear", batch, k, n, &[], None));
            failures.extend(compare(
                "linear->relu->mean",
                batch,
                k,
                n,
                &[UnaryOp::Relu],
                reduce(ReduceKind::Mean),
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn row_reductions_are_as_accurate_as_eager_for_every_row_length() {
    tch::set_num_threads(1);
    let mut failures = Vec::new();
    for n in LONG {
        for (label, acts, kind) in [
            ("linear->sum", &[][..], ReduceKind::Sum),
            ("linear->relu->mean", &[UnaryOp::Relu][..], ReduceKind::Mean),
        ] {
            failures.extend(compare(label, 8, 3, n, acts, reduce(kind)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
