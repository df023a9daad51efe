//! Parity of `fused_linear` with libtorch op by op (eager, the oracle) on every kernel path:
//! the one-pass kernel (AVX2 where the CPU has it, and the portable code), GEMM + epilogue,
//! and the automatic choice.
//!
//! Tolerance (docs/parity.md): elementwise, |ours - eager| is at most the width of an
//! interval that holds the exact value of the chain on the float32 inputs and both float32
//! results ([`envelope`]). NaN positions, infinities (with sign), zeros' signs, shapes and
//! dtypes must be equal. Accuracy against float64 on long rows is runtime/tests/accuracy.rs.

use std::panic::AssertUnwindSafe;

use rextio_ir::{BinaryOp, FusedReduce, FusedTail, ReduceKind, SoftmaxKind, UnaryOp};
use rextio_runtime::kernels::{
    blocked_fused_linear, force_path, fused_linear_with_path, gemm_then_epilogue,
    small_fused_linear, Epilogue, Isa, KernelPath, LinearDims, COST_MODEL, GEMM_CROSSOVER_MACS,
};
use rextio_runtime::{exec, ops};
use tch::{Kind, Tensor};

/// float32 machine epsilon (2^-23).
const EPS: f64 = f32::EPSILON as f64;

fn reference(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Tensor {
    let _g = tch::no_grad_guard();
    epilogue_reference(ops::linear(x, w, b).unwrap(), acts, reduce)
}

/// `acts` then `reduce` on `y`, op by op in eager.
fn epilogue_reference(mut y: Tensor, acts: &[UnaryOp], reduce: Option<FusedReduce>) -> Tensor {
    for &op in acts {
        y = rextio_runtime::unary::aten(op, &y).unwrap();
    }
    match reduce {
        Some(r) => ops::reduce(r.kind, &y, r.dim, r.keepdim).unwrap(),
        None => y,
    }
}

/// `amount` (an elementwise bound) added on both sides where it is finite: an infinite
/// endpoint is an exact infinity, which no rounding moves.
fn widen(lo: Tensor, hi: Tensor, amount: Tensor) -> (Tensor, Tensor) {
    let amount = amount.nan_to_num(0.0, 0.0, 0.0);
    (lo - &amount, hi + amount)
}

fn magnitude(lo: &Tensor, hi: &Tensor) -> Tensor {
    lo.abs().maximum(&hi.abs())
}

/// Eager's float32 GELU is within this times max(1, |x|) of the exact value, not a few ulps:
/// oneDNN's erf approximations (which a contiguous tensor gets) and ATen's are accurate to
/// about 1.5e-7 absolute. Ours is eager's kernel bit for bit on the same input
/// (runtime/tests/vmath.rs); the bound covers the product's rounding carried through it.
const ATEN_GELU_ABS: f64 = 4e-7;

/// The image of `[lo, hi]` under `op`, widened by 4 ulps of its magnitude: ATen's and our
/// float32 activations each round within a few ulps of the exact function (GELU: see
/// [`ATEN_GELU_ABS`]).
fn image(op: UnaryOp, lo: Tensor, hi: Tensor) -> (Tensor, Tensor) {
    let gelu_error =
        (op == UnaryOp::Gelu).then(|| magnitude(&lo, &hi).clamp_min(1.0) * ATEN_GELU_ABS);
    let (lo, hi) = match op {
        UnaryOp::Relu => (lo.relu(), hi.relu()),
        UnaryOp::GeluTanh => {
            panic!("gelu_tanh is never a fused activation (UnaryOp::depends_on_position)")
        }
        UnaryOp::Sigmoid => (lo.sigmoid(), hi.sigmoid()),
        UnaryOp::Tanh => (lo.tanh(), hi.tanh()),
        UnaryOp::Exp => (lo.exp(), hi.exp()),
        UnaryOp::Neg => (-hi, -lo),
        UnaryOp::Abs | UnaryOp::Square => {
            let top = magnitude(&lo, &hi);
            let positive = lo.gt(0.0);
            let negative = hi.lt(0.0);
            let bottom = lo.where_self(&positive, &(-&hi).where_scalarother(&negative, 0.0));
            if op == UnaryOp::Square {
                (bottom.square(), top.square())
            } else {
                (bottom, top)
            }
        }
        // Below 0 the function leaves its domain: the bound opens to -inf (log) or 0 (sqrt).
        UnaryOp::Log => (
            lo.log().where_scalarother(&lo.gt(0.0), f64::NEG_INFINITY),
            hi.log(),
        ),
        UnaryOp::Sqrt => (lo.clamp_min(0.0).sqrt(), hi.sqrt()),
        UnaryOp::Relu6 => (lo.clamp(0.0, 6.0), hi.clamp(0.0, 6.0)),
        // Decreasing on (0, inf): below 0 it leaves its domain and the bound opens to +inf.
        UnaryOp::Rsqrt => (
            hi.rsqrt(),
            lo.rsqrt().where_scalarother(&lo.gt(0.0), f64::INFINITY),
        ),
        UnaryOp::Silu => {
            // Monotone except for one minimum at x = -1.2785 (value -0.2785).
            const ARGMIN: f64 = -1.278_464_542_761_074;
            let (slo, shi) = (lo.silu(), hi.silu());
            let straddles = lo.lt(ARGMIN).logical_and(&hi.gt(ARGMIN));
            let least = Tensor::from(ARGMIN).silu();
            let bottom = slo
                .minimum(&shi)
                .where_self(&straddles.logical_not(), &least.expand_as(&slo));
            (bottom, slo.maximum(&shi))
        }
        UnaryOp::Gelu => {
            // Monotone except for one minimum at x = -0.7518 (value -0.1700).
            const ARGMIN: f64 = -0.751_791_524_693_564_5;
            let (glo, ghi) = (lo.gelu("none"), hi.gelu("none"));
            let straddles = lo.lt(ARGMIN).logical_and(&hi.gt(ARGMIN));
            let least = Tensor::from(ARGMIN).gelu("none");
            let bottom = glo
                .minimum(&ghi)
                .where_self(&straddles.logical_not(), &least.expand_as(&glo));
            (bottom, glo.maximum(&ghi))
        }
    };
    let amount = magnitude(&lo, &hi) * (4.0 * EPS);
    let amount = match gelu_error {
        Some(e) => amount + e,
        None => amount,
    };
    widen(lo, hi, amount)
}

/// The largest |ours - eager| the parity tests accept, elementwise, for the chain
/// `linear(x, w, b) -> acts -> reduce`. Computed in float64 as an interval that holds the
/// exact value and both float32 results:
/// - linear: `y ± 2 * sqrt(K + 1) * eps * (sum_k |x_k * w_k| + |b|)`, the probabilistic
///   rounding bound of a K-term dot product (any summation order, both ours and eager's);
/// - each activation: the image of the interval, plus 4 ulps;
/// - a sum over `n` values: the sum of the intervals, plus `2 * sqrt(n + 1) * eps *
///   sum |v|`; a mean divides that by `n` and adds one ulp.
///
/// The width of the result is the tolerance: it scales with the conditioning of every step
/// (a dot product that cancels, a `sqrt` or `log` near 0) and is a few ulps elsewhere.
fn envelope(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Tensor {
    let _g = tch::no_grad_guard();
    let wide = |t: &Tensor| t.to_kind(Kind::Double);
    let (x, w, b) = (wide(x), wide(w), b.map(wide));
    let k = x.size()[1] as f64;
    let y = x.linear(&w, b.as_ref());
    let scale = x.abs().linear(&w.abs(), b.as_ref().map(Tensor::abs));
    // An infinite y is exact (every order gives the same infinity); no radius around it.
    let radius =
        (scale * (2.0 * (k + 1.0).sqrt() * EPS)).where_scalarother(&y.isinf().logical_not(), 0.0);
    let (mut lo, mut hi) = (&y - &radius, &y + &radius);
    for &op in acts {
        (lo, hi) = image(op, lo, hi);
    }
    if let Some(r) = reduce {
        let n = hi.size()[1] as f64;
        let sum = |t: &Tensor| t.sum_dim_intlist(&[1i64][..], r.keepdim, Kind::Double);
        let rounding = sum(&magnitude(&lo, &hi)) * (2.0 * (n + 1.0).sqrt() * EPS);
        (lo, hi) = widen(sum(&lo), sum(&hi), rounding);
        if r.kind == ReduceKind::Mean {
            let (mlo, mhi) = (lo / n, hi / n);
            let ulp = magnitude(&mlo, &mhi) * EPS;
            (lo, hi) = widen(mlo, mhi, ulp);
        }
    }
    // Equal endpoints (an exact infinity) have width 0, not inf - inf.
    (&hi - &lo).where_scalarother(&hi.ne_tensor(&lo), 0.0)
}

fn values<T: tch::kind::Element + Default + Copy>(t: &Tensor) -> Vec<T> {
    let t = t.contiguous().view(-1);
    let n = t.numel();
    let mut out = vec![T::default(); n];
    t.copy_data(&mut out, n);
    out
}

fn assert_close(got: &Tensor, want: &Tensor, width: &Tensor, what: &str) {
    assert_eq!(got.size(), want.size(), "{what}: shape");
    assert_eq!(got.kind(), want.kind(), "{what}: dtype");
    let width = values::<f64>(&width.expand_as(want));
    for (i, (a, b)) in values::<f32>(got)
        .into_iter()
        .zip(values::<f32>(want))
        .enumerate()
    {
        if b.is_nan() {
            assert!(a.is_nan(), "{what}[{i}]: want NaN, got {a}");
        } else if b.is_infinite() {
            assert_eq!(a, b, "{what}[{i}]: infinity class");
        } else {
            let tol = width[i];
            assert!(!tol.is_nan(), "{what}[{i}]: no bound for finite {b}");
            assert!(
                ((a as f64) - (b as f64)).abs() <= tol,
                "{what}[{i}]: got {a}, want {b}, tolerance {tol:e}"
            );
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

/// Which kernel computes a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// `fused_linear` choosing from the sizes.
    Auto,
    /// The one-pass kernel with the best instructions the CPU has (AVX-512 here).
    OnePass,
    /// The one-pass kernel's AVX2+FMA code (portable where the CPU lacks them).
    OnePassAvx2,
    /// The one-pass kernel's portable code.
    Portable,
    /// GEMM + epilogue whatever the size.
    Gemm,
    /// The `gemm` crate's blocked kernels + epilogue whatever the size.
    Blocked,
}

const ALL_PATHS: [Path; 6] = [
    Path::Auto,
    Path::OnePass,
    Path::OnePassAvx2,
    Path::Portable,
    Path::Gemm,
    Path::Blocked,
];

fn run(
    path: Path,
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> rextio_runtime::Result<Tensor> {
    let isa = match path {
        Path::Auto => return fused_linear_with_path(x, w, b, acts, reduce).map(|(t, _)| t),
        Path::Gemm => return gemm_then_epilogue(x, w, b, acts, reduce),
        Path::OnePass => Some(Isa::Best),
        Path::OnePassAvx2 => Some(Isa::Avx2),
        Path::Portable => Some(Isa::Portable),
        Path::Blocked => None,
    };
    let (batch, k) = x.size2().unwrap();
    let n = w.size()[0];
    let shape = match reduce {
        None => vec![batch, n],
        Some(r) if r.keepdim => vec![batch, 1],
        Some(_) => vec![batch],
    };
    let mut out = vec![0f32; shape.iter().product::<i64>() as usize];
    let (xs, ws, bs) = (values::<f32>(x), values::<f32>(w), b.map(values::<f32>));
    let (batch, k, n) = (batch as usize, k as usize, n as usize);
    match isa {
        Some(isa) => small_fused_linear(
            isa,
            &xs,
            &ws,
            bs.as_deref(),
            LinearDims::new(batch, k, n),
            Epilogue::new(acts, reduce),
            &mut out,
        )?,
        None => blocked_fused_linear(
            &xs,
            &ws,
            bs.as_deref(),
            LinearDims::new(batch, k, n),
            Epilogue::new(acts, reduce),
            &mut out,
        )?,
    }
    Ok(Tensor::from_slice(&out).view(shape.as_slice()))
}

/// `path` against eager on one problem.
fn check(
    path: Path,
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
    what: &str,
) {
    let got = run(path, x, w, b, acts, reduce).unwrap_or_else(|e| panic!("{what} {path:?}: {e}"));
    let want = reference(x, w, b, acts, reduce);
    let width = envelope(x, w, b, acts, reduce);
    assert_close(&got, &want, &width, &format!("{what} {path:?}"));
}

/// Deterministic float32 data, independent of libtorch's global generator (tests run in
/// parallel threads).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> i64 {
        (self.next() % bound) as i64
    }

    /// N(0, scale^2) by Box-Muller.
    fn randn(&mut self, shape: &[i64], scale: f64) -> Tensor {
        let len = shape.iter().product::<i64>() as usize;
        let data: Vec<f32> = (0..len)
            .map(|_| {
                let u = 1.0 - (self.next() >> 11) as f64 / (1u64 << 53) as f64;
                let v = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
                ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos() * scale) as f32
            })
            .collect();
        Tensor::from_slice(&data).view(shape)
    }

    /// x [batch, k], w [n, k], b [n], the weights scaled so linear's outputs are about
    /// N(0, 1) whatever k: exp stays finite, log and sqrt see both signs.
    fn problem(&mut self, batch: i64, k: i64, n: i64) -> (Tensor, Tensor, Tensor) {
        let x = self.randn(&[batch, k], 1.0);
        let w = self.randn(&[n, k], 1.0 / (k.max(1) as f64).sqrt());
        let b = self.randn(&[n], 0.5);
        (x, w, b)
    }
}

const MEAN1: Option<FusedReduce> = Some(FusedReduce {
    kind: ReduceKind::Mean,
    dim: 1,
    keepdim: false,
});

/// No reduction, and sum and mean over dim 1 with and without keepdim.
const REDUCES: [Option<FusedReduce>; 5] = [
    None,
    Some(FusedReduce {
        kind: ReduceKind::Sum,
        dim: 1,
        keepdim: false,
    }),
    Some(FusedReduce {
        kind: ReduceKind::Sum,
        dim: 1,
        keepdim: true,
    }),
    MEAN1,
    Some(FusedReduce {
        kind: ReduceKind::Mean,
        dim: 1,
        keepdim: true,
    }),
];

const ACTIVATIONS: [UnaryOp; 13] = [
    UnaryOp::Relu,
    UnaryOp::Sigmoid,
    UnaryOp::Tanh,
    UnaryOp::Abs,
    UnaryOp::Neg,
    UnaryOp::Square,
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Sqrt,
    UnaryOp::Gelu,
    UnaryOp::Silu,
    UnaryOp::Rsqrt,
    UnaryOp::Relu6,
];

/// No activation, each activation alone, and chains that feed each activation from another.
fn chains() -> Vec<Vec<UnaryOp>> {
    let mut chains = vec![vec![]];
    chains.extend(ACTIVATIONS.iter().map(|&op| vec![op]));
    chains.extend([
        vec![UnaryOp::Sigmoid, UnaryOp::Tanh],
        vec![UnaryOp::Abs, UnaryOp::Sqrt, UnaryOp::Log],
        vec![UnaryOp::Neg, UnaryOp::Square, UnaryOp::Exp],
        vec![UnaryOp::Relu, UnaryOp::Gelu, UnaryOp::Abs],
        vec![UnaryOp::Exp, UnaryOp::Log, UnaryOp::Relu],
        vec![UnaryOp::Silu, UnaryOp::Tanh, UnaryOp::Silu],
        vec![UnaryOp::Square, UnaryOp::Rsqrt, UnaryOp::Neg],
        vec![UnaryOp::Relu6, UnaryOp::Sigmoid, UnaryOp::Relu6],
    ]);
    chains
}

#[test]
fn phase_a_shapes_match_eager_on_both_paths() {
    let mut rng = Rng(20261129);
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
        let (x, w, b) = (
            rng.randn(&[batch, k], 1.0),
            rng.randn(&[n, k], 1.0),
            rng.randn(&[n], 1.0),
        );
        let want = reference(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1);
        let width = envelope(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1);
        // The cost model's choice, then every path forced in turn: each computes every size,
        // and the call reports the path it took.
        for forced in [None].into_iter().chain(FORCED.map(Some)) {
            force_path(forced);
            let result = fused_linear_with_path(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1);
            force_path(None);
            let (got, path) = result.unwrap();
            let what = format!("{batch}x{k}->{n} forced {forced:?}");
            if let Some(forced) = forced {
                assert_eq!(path, forced, "{what}");
            }
            assert_close(&got, &want, &width, &what);
        }
    }
}

/// Every path, to force.
const FORCED: [KernelPath; 4] = [
    KernelPath::SmallFused,
    KernelPath::Blocked,
    KernelPath::BlockedTransposed,
    KernelPath::GemmThenEpilogue,
];

#[test]
fn every_activation_and_reduction_with_and_without_bias_on_every_path() {
    let mut rng = Rng(7);
    // Both tile shapes and their remainders; k past the dot product's block; a long row for
    // the reductions; and a size above the crossover for the automatic choice.
    let shapes = [(4, 19, 9), (3, 300, 13), (2, 5, 300), (64, 128, 64)];
    for (batch, k, n) in shapes {
        let (x, w, b) = rng.problem(batch, k, n);
        let above_crossover = (batch * k * n) as usize >= GEMM_CROSSOVER_MACS;
        for acts in chains() {
            for reduce in REDUCES {
                for bias in [Some(&b), None] {
                    let what = format!(
                        "{batch}x{k}->{n} {acts:?} {reduce:?} bias={}",
                        bias.is_some()
                    );
                    for path in ALL_PATHS {
                        if path != Path::Auto && above_crossover {
                            continue; // the forced paths are covered by the smaller shapes
                        }
                        check(path, &x, &w, bias, &acts, reduce, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn nan_and_inf_in_inputs_weights_and_bias_propagate_as_in_eager_on_every_path() {
    let mut rng = Rng(13);
    // One placement at a time, so each is seen on its own, then all together.
    let place_x = |x: &Tensor| {
        let _ = x.get(0).get(0).fill_(f64::NAN);
        let _ = x.get(1).get(4).fill_(f64::INFINITY);
        let _ = x.get(2).get(10).fill_(f64::NEG_INFINITY);
    };
    let place_w = |w: &Tensor| {
        let _ = w.get(2).get(3).fill_(f64::NEG_INFINITY);
        let _ = w.get(4).get(0).fill_(f64::NAN);
        let _ = w.get(5).get(8).fill_(f64::INFINITY);
    };
    let place_b = |b: &Tensor| {
        let _ = b.get(1).fill_(f64::INFINITY);
        let _ = b.get(3).fill_(f64::NEG_INFINITY);
        let _ = b.get(6).fill_(f64::NAN);
    };
    // The second shape takes the small-batch kernel (`linear_small_m`) on AVX-512 CPUs: a
    // batch past one vector of 16 rows, an output past its 8-row tiles.
    for ((batch, k, n), placement) in [(5, 11, 9), (17, 40, 20)]
        .into_iter()
        .flat_map(|shape| ["x", "w", "b", "all"].map(|p| (shape, p)))
    {
        let (x, w, b) = rng.problem(batch, k, n);
        if placement == "x" || placement == "all" {
            place_x(&x);
        }
        if placement == "w" || placement == "all" {
            place_w(&w);
        }
        if placement == "b" || placement == "all" {
            place_b(&b);
        }
        let plain = reference(&x, &w, Some(&b), &[], None);
        assert!(
            !bool::try_from(plain.isfinite().all()).unwrap(),
            "{placement}: the case must really produce NaN/Inf"
        );
        for acts in chains() {
            for reduce in REDUCES {
                let what = format!("NaN/Inf in {placement} {acts:?} {reduce:?}");
                for path in ALL_PATHS {
                    check(path, &x, &w, Some(&b), &acts, reduce, &what);
                }
            }
        }
    }
}

#[test]
fn small_batch_kernel_shapes_on_every_path() {
    // Batches of 12 to 64 rows against a weight as given run `linear_small_m` where the CPU
    // has AVX-512 (the cost model's pick and the forced blocked path): batches within and
    // past whole vectors of 16 rows (padding lanes), outputs past whole 8-, 4-, 3- and 2-row
    // tiles, and dot products of every length class.
    let mut rng = Rng(29);
    for (batch, k, n) in [
        (12, 33, 16),
        (13, 40, 19),
        (16, 256, 64),
        (17, 100, 37),
        (33, 64, 50),
        (50, 48, 17),
        (64, 257, 26),
    ] {
        if rextio_runtime::cpu::level() == rextio_runtime::cpu::Level::Avx512 {
            assert!(
                rextio_runtime::linear_small_m::fits(batch as usize, k as usize, n as usize),
                "{batch}x{k}->{n} must exercise the small-batch kernel"
            );
        }
        let (x, w, b) = rng.problem(batch, k, n);
        for acts in [
            vec![],
            vec![UnaryOp::Relu],
            vec![UnaryOp::Gelu, UnaryOp::Tanh],
        ] {
            for reduce in [None, MEAN1] {
                for bias in [Some(&b), None] {
                    let what = format!(
                        "{batch}x{k}->{n} {acts:?} {reduce:?} bias={}",
                        bias.is_some()
                    );
                    for path in [Path::Auto, Path::Blocked, Path::Gemm] {
                        check(path, &x, &w, bias, &acts, reduce, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn signed_zeros_propagate_as_in_eager() {
    let x = Tensor::from_slice(&[f32::NAN, 1.0, -0.0, f32::INFINITY, 2.0, -3.0, -0.0, -0.0])
        .view([4, 2]);
    let w = Tensor::from_slice(&[1.0f32, 0.0, 0.5, 1.0, -1.0, 2.0]).view([3, 2]);
    let b = Tensor::from_slice(&[0.0f32, -0.0, 1.0]);
    for path in ALL_PATHS {
        for acts in [&[UnaryOp::Relu][..], &[UnaryOp::Neg]] {
            for reduce in [None, MEAN1] {
                check(path, &x, &w, Some(&b), acts, reduce, "signed zeros");
            }
        }
    }
    // Signed zeros of exact-zero dot products: eager's batch-1 path (gemv) starts from the
    // bias, its batch > 1 path (gemm) adds the bias last. We follow the latter on every batch,
    // so only batch > 1 is compared bit for bit here (the case above); documented in
    // docs/parity.md.
}

#[test]
fn non_contiguous_and_empty_inputs() {
    let mut rng = Rng(3);
    let x = rng.randn(&[6, 10], 1.0).transpose(0, 1); // 10x6, not contiguous
    let w = rng.randn(&[5, 6], 1.0);
    let b = rng.randn(&[5], 1.0);
    assert!(!x.is_contiguous());
    for path in ALL_PATHS {
        check(
            path,
            &x,
            &w,
            Some(&b),
            &[UnaryOp::Relu],
            MEAN1,
            "transposed input",
        );
    }
    for (batch, k, n) in [(0, 4, 3), (2, 0, 3), (2, 4, 0)] {
        let (x, w, b) = rng.problem(batch, k, n);
        for path in ALL_PATHS {
            for reduce in REDUCES {
                let what = format!("empty {batch}x{k}->{n} {reduce:?}");
                check(path, &x, &w, Some(&b), &[UnaryOp::Relu], reduce, &what);
            }
        }
    }
}

#[test]
fn tensors_with_the_negative_bit_are_read_as_their_values() {
    // `torch._neg_view`: the data holds -v and the negative bit says so; reading the data
    // pointer alone would give -v.
    let mut rng = Rng(11);
    for (batch, k, n) in [(4, 8, 6), (64, 128, 64)] {
        let (x, w, b) = rng.problem(batch, k, n);
        let flagged = |t: &Tensor| t.neg().internal_neg_view();
        let (xn, wn, bn) = (flagged(&x), flagged(&w), flagged(&b));
        assert!(xn.is_neg() && xn.is_contiguous());
        for path in [Path::Auto, Path::Gemm] {
            let got = run(path, &xn, &wn, Some(&bn), &[UnaryOp::Tanh], None).unwrap();
            let want = run(path, &x, &w, Some(&b), &[UnaryOp::Tanh], None).unwrap();
            assert!(got.equal(&want), "{batch}x{k}x{n} {path:?}");
        }
    }
}

#[test]
fn inputs_are_not_mutated() {
    let mut rng = Rng(11);
    let (x, w, b) = rng.problem(8, 64, 64);
    let (x0, w0, b0) = (x.copy(), w.copy(), b.copy());
    for path in ALL_PATHS {
        for reduce in [None, MEAN1] {
            let _ = run(path, &x, &w, Some(&b), &[UnaryOp::Relu], reduce).unwrap();
        }
    }
    assert!(x.equal(&x0) && w.equal(&w0) && b.equal(&b0));
}

#[test]
fn mismatched_sizes_are_errors_not_panics() {
    let mut rng = Rng(17);
    let x = rng.randn(&[3, 7], 1.0);
    let w = rng.randn(&[5, 5], 1.0);
    let err = fused_linear_with_path(&x, &w, None, &[UnaryOp::Relu], MEAN1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "mat1 and mat2 shapes cannot be multiplied (3x7 and 5x5)"
    );
    let w = rng.randn(&[5, 7], 1.0);
    let b = rng.randn(&[4], 1.0);
    let err = fused_linear_with_path(&x, &w, Some(&b), &[], None).unwrap_err();
    // Eager's words for a bias that does not broadcast.
    assert_eq!(
        err.to_string(),
        "The expanded size of the tensor (5) must match the existing size (4) at non-singleton dimension 1.  Target sizes: [3, 5].  Tensor sizes: [4]"
    );
    let x64 = x.to_kind(Kind::Double);
    assert!(fused_linear_with_path(&x64, &w, None, &[], None).is_err());
    let bad_reduce = Some(FusedReduce {
        kind: ReduceKind::Mean,
        dim: 0,
        keepdim: false,
    });
    for path in ALL_PATHS {
        let err = run(path, &x, &w, None, &[], bad_reduce).unwrap_err();
        assert!(err.to_string().contains("dim 1"), "{path:?}: {err}");
    }
    let mut short = vec![0f32; 1];
    assert!(small_fused_linear(
        Isa::Best,
        &[1.0; 3],
        &[1.0; 3],
        None,
        LinearDims::new(1, 3, 2),
        Epilogue::new(&[], None),
        &mut short
    )
    .is_err());
}

#[test]
fn random_shapes_match_eager_on_every_path() {
    // Deterministic sweep across both sides of the crossover, every tile remainder and
    // inner sizes on both sides of the dot product's block.
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let activation_sets: [&[UnaryOp]; 4] = [
        &[UnaryOp::Relu],
        &[],
        &[UnaryOp::Tanh],
        &[UnaryOp::Relu, UnaryOp::Square],
    ];
    let reduces = [REDUCES[0], REDUCES[3], REDUCES[2]];
    for case in 0..120 {
        let (batch, k, n) = (1 + rng.below(70), 1 + rng.below(300), 1 + rng.below(90));
        let acts = activation_sets[case % activation_sets.len()];
        let reduce = reduces[case % reduces.len()];
        let (x, w, b) = rng.problem(batch, k, n);
        let bias = if case % 5 == 0 { None } else { Some(&b) };
        let what = format!("case {case}: {batch}x{k}->{n} {acts:?} {reduce:?}");
        for path in ALL_PATHS {
            check(path, &x, &w, bias, acts, reduce, &what);
        }
    }
}

/// The tolerance is not vacuous: a result off by one term of the dot product, or by 1e-3
/// relative on a well-conditioned output, fails it.
#[test]
fn the_tolerance_rejects_wrong_results() {
    let mut rng = Rng(23);
    let (x, w, b) = rng.problem(4, 64, 8);
    for (acts, reduce) in [(&[][..], None), (&[UnaryOp::Relu][..], MEAN1)] {
        let want = reference(&x, &w, Some(&b), acts, reduce);
        let width = envelope(&x, &w, Some(&b), acts, reduce);
        let one_term_short = x.narrow(1, 0, 63).linear(&w.narrow(1, 0, 63), Some(&b));
        if reduce.is_none() {
            let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
                assert_close(&one_term_short, &want, &width, "one term short")
            }));
            assert!(caught.is_err(), "a missing term passed");
        }
        let off = &want * 1.001 + 1e-3;
        let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
            assert_close(&off, &want, &width, "off")
        }));
        assert!(
            caught.is_err(),
            "a result 1e-3 off passed {acts:?} {reduce:?}"
        );
    }
}

/// `matmul(x, w) + b` then `acts` then `reduce`, op by op in eager (the meaning of a
/// `fused_matmul`).
fn matmul_reference(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[UnaryOp],
    reduce: Option<FusedReduce>,
) -> Tensor {
    let _g = tch::no_grad_guard();
    let mut y = ops::matmul(x, w).unwrap();
    if let Some(b) = b {
        y = ops::binary(BinaryOp::Add, &y, b).unwrap();
    }
    epilogue_reference(y, acts, reduce)
}

/// `fused_matmul` (a weight given `[in, out]`) in every regime of
/// `CostModel::fuses_in_out`: the small kernel, the `gemm` crate plus the epilogue, the
/// unfused dense ops for small products, libtorch for long dot products; empty sizes, a
/// weight that is a transposed view, every activation and reduction.
#[test]
fn fused_matmul_matches_eager_in_every_regime() {
    let mut rng = Rng(29);
    let shapes: [(i64, i64, i64); 10] = [
        (1, 256, 256),
        (8, 64, 48),
        (64, 32, 32),
        (16, 64, 16),
        (64, 128, 96),
        (2, 5000, 3),
        (0, 4, 3),
        (3, 0, 5),
        (3, 4, 0),
        (5, 7, 3),
    ];
    let model = COST_MODEL;
    assert!(
        model.fuses_in_out(64, 128, 96),
        "a product past the small size fuses"
    );
    assert!(
        !model.fuses_in_out(16, 64, 16),
        "a small product runs op by op"
    );
    assert!(
        !model.fuses_in_out(2, 5000, 3),
        "long dot products are libtorch's"
    );
    for (batch, k, n) in shapes {
        let x = rng.randn(&[batch, k], 1.0);
        let wn = rng.randn(&[n, k], 1.0 / (k.max(1) as f64).sqrt());
        // The weight as the user holds it, [k, n] contiguous, and as a transposed view.
        let w = wn.tr().contiguous();
        let b = rng.randn(&[n], 0.5);
        for (acts, reduce) in chains().iter().zip(REDUCES.iter().cycle()) {
            for bias in [Some(&b), None] {
                for (weight, form) in [(&w, "contiguous"), (&wn.tr(), "transposed view")] {
                    let what = format!(
                        "{batch}x{k}x{n} {form} {acts:?} {reduce:?} bias {}",
                        bias.is_some()
                    );
                    let got = exec::matmul_linear(
                        &x,
                        weight,
                        bias,
                        &[],
                        acts,
                        reduce.map(FusedTail::Reduce),
                    )
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let want = matmul_reference(&x, weight, bias, acts, *reduce);
                    let width = envelope(&x, &wn, bias, acts, *reduce);
                    assert_close(&got, &want, &width, &what);
                }
            }
        }
    }
}

#[test]
fn fused_matmul_reports_eager_errors_in_the_users_order() {
    let mut rng = Rng(31);
    let x = rng.randn(&[3, 7], 1.0);
    let w = rng.randn(&[5, 4], 1.0);
    let err = exec::matmul_linear(
        &x,
        &w,
        None,
        &[],
        &[UnaryOp::Relu],
        MEAN1.map(FusedTail::Reduce),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "mat1 and mat2 shapes cannot be multiplied (3x7 and 5x4)"
    );
    let w = rng.randn(&[7, 5], 1.0);
    let b = rng.randn(&[4], 1.0);
    let err = exec::matmul_linear(&x, &w, Some(&b), &[], &[], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 1"
    );
    // A bias of one element broadcasts, as in eager.
    let one = rng.randn(&[1], 1.0);
    let got = exec::matmul_linear(&x, &w, Some(&one), &[], &[], None).unwrap();
    let want = matmul_reference(&x, &w, Some(&one), &[], None);
    let width = envelope(&x, &w.tr(), Some(&one.expand([5], false)), &[], None);
    assert_close(&got, &want, &width, "broadcast bias");
}

/// A fused op's prologue (`(x - mean) / scale`, and each binary op) gives the bits of the
/// unfused ops, on the dense path and on a transposed view of `x` (the unfused ops); then
/// the product matches eager on both layouts.
#[test]
fn prologue_steps_match_the_unfused_ops_bit_for_bit() {
    let _g = tch::no_grad_guard();
    let mut rng = Rng(37);
    for (batch, k, n) in [
        (1, 512, 8),
        (16, 8, 32),
        (64, 32, 128),
        (5, 17, 3),
        (0, 4, 3),
    ] {
        let (x, w, b) = rng.problem(batch, k, n);
        let mean = rng.randn(&[k], 1.0);
        let scale = rng.randn(&[k], 1.0).abs() + 0.5;
        let steps = [(BinaryOp::Sub, &mean), (BinaryOp::Div, &scale)];
        let normalized = ops::binary(
            BinaryOp::Div,
            &ops::binary(BinaryOp::Sub, &x, &mean).unwrap(),
            &scale,
        )
        .unwrap();
        for (input, form) in [
            (x.shallow_clone(), "contiguous"),
            (x.tr().contiguous().tr(), "column-major"),
        ] {
            let got = exec::linear(&input, &w, Some(&b), &steps, &[], None, false).unwrap();
            let want = exec::linear(&normalized, &w, Some(&b), &[], &[], None, false).unwrap();
            assert!(
                got.equal(&want),
                "{batch}x{k}x{n} {form}: the prologue must give the unfused bits"
            );
            let wt = w.tr().contiguous();
            let got = exec::matmul_linear(
                &input,
                &wt,
                Some(&b),
                &steps,
                &[UnaryOp::Relu],
                MEAN1.map(FusedTail::Reduce),
            )
            .unwrap();
            let want = matmul_reference(&normalized, &wt, Some(&b), &[UnaryOp::Relu], MEAN1);
            let width = envelope(&normalized, &w, Some(&b), &[UnaryOp::Relu], MEAN1);
            assert_close(
                &got,
                &want,
                &width,
                &format!("{batch}x{k}x{n} {form} fused_matmul"),
            );
        }
        for op in [BinaryOp::Add, BinaryOp::Mul] {
            let got = exec::linear(&x, &w, None, &[(op, &scale)], &[], None, false).unwrap();
            let want = exec::linear(
                &ops::binary(op, &x, &scale).unwrap(),
                &w,
                None,
                &[],
                &[],
                None,
                false,
            )
            .unwrap();
            assert!(got.equal(&want), "{batch}x{k}x{n} {op:?}");
        }
    }
    // An operand that does not broadcast: eager's error, in the user's order.
    let (x, w, b) = rng.problem(3, 7, 5);
    let short = rng.randn(&[6], 1.0);
    let err = exec::linear(
        &x,
        &w,
        Some(&b),
        &[(BinaryOp::Sub, &short)],
        &[],
        None,
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The size of tensor a (7) must match the size of tensor b (6) at non-singleton dimension 1"
    );
}

/// Equal shapes, dtypes and stored bits (NaN payloads and zero signs included).
fn assert_same_bits(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.size(), want.size(), "{what}: shape");
    assert_eq!(got.kind(), want.kind(), "{what}: dtype");
    let bits = |t: &Tensor| match t.kind() {
        Kind::Float => t.contiguous().view_dtype(Kind::Int),
        _ => t.contiguous(),
    };
    assert!(
        bits(got).equal(&bits(want)),
        "{what}: {got:?} against {want:?}"
    );
}

/// Row-wise tails: a fused op ending in `softmax(dim=1)` or `argmax(dim=1)` gives exactly the
/// op's product followed by the executor's own softmax or argmax (bit for bit; the product
/// itself is held to eager by the tests above), on the dense paths, libtorch's GEMM path
/// (k past `BLOCKED_MAX_K`), a transposed view, both layouts, and rows with NaN.
#[test]
fn softmax_and_argmax_tails_are_the_product_then_the_op() {
    let _g = tch::no_grad_guard();
    let mut rng = Rng(41);
    let tails = [
        FusedTail::Softmax {
            kind: SoftmaxKind::Softmax,
            dim: 1,
        },
        FusedTail::Softmax {
            kind: SoftmaxKind::LogSoftmax,
            dim: 1,
        },
        FusedTail::Argmax {
            dim: 1,
            keepdim: false,
        },
        FusedTail::Argmax {
            dim: 1,
            keepdim: true,
        },
    ];
    for (batch, k, n) in [
        (1, 8, 128),
        (4, 32, 8),
        (64, 256, 8),
        (16, 64, 100),
        (2, 5000, 3),
    ] {
        let (x, w, b) = rng.problem(batch, k, n);
        if batch > 1 {
            // One row of NaN products.
            let _ = x.get(1).get(0).fill_(f64::NAN);
        }
        let wt = w.tr().contiguous();
        for (acts, (input, form)) in [vec![], vec![UnaryOp::Tanh]].into_iter().flat_map(|acts| {
            [
                (x.shallow_clone(), "contiguous"),
                (x.tr().contiguous().tr(), "column-major"),
            ]
            .map(|form| (acts.clone(), form))
        }) {
            let plain = exec::linear(&input, &w, Some(&b), &[], &acts, None, false).unwrap();
            let plain_mm = exec::matmul_linear(&input, &wt, Some(&b), &[], &acts, None).unwrap();
            for tail in tails {
                let expected = |y: &Tensor| match tail {
                    FusedTail::Softmax {
                        kind: SoftmaxKind::Softmax,
                        dim,
                    } => exec::softmax(y, dim).unwrap(),
                    FusedTail::Softmax {
                        kind: SoftmaxKind::LogSoftmax,
                        dim,
                    } => exec::log_softmax(y, dim).unwrap(),
                    FusedTail::Argmax { dim, keepdim } => exec::argmax(y, dim, keepdim).unwrap(),
                    FusedTail::Reduce(_) => unreachable!(),
                };
                let what = format!("{batch}x{k}x{n} {form} {acts:?} {tail:?}");
                let got =
                    exec::linear(&input, &w, Some(&b), &[], &acts, Some(tail), false).unwrap();
                assert_same_bits(&got, &expected(&plain), &format!("{what} linear"));
                let got =
                    exec::matmul_linear(&input, &wt, Some(&b), &[], &acts, Some(tail)).unwrap();
                assert_same_bits(&got, &expected(&plain_mm), &format!("{what} matmul"));
            }
        }
    }
}
