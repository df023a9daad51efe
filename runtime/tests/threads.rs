//! Intra-op threads (`crate::par`): every `linear` path, the epilogue after libtorch's GEMM
//! and softmax over rows give the same bits at 1, 2, 3 and 4 threads
//! (`torch.set_num_threads`), on sizes large enough to go parallel; small calls stay on one
//! thread (docs/parity.md, "Threads").

use rextio_ir::{FusedReduce, ReduceKind, UnaryOp};
use rextio_runtime::dense::softmax_rows_in_place;
use rextio_runtime::kernels::{force_path, fused_linear_reused, KernelPath};
use rextio_runtime::par::last_threads;
use tch::{Device, Kind, Tensor};

fn bits(t: &Tensor) -> Vec<u32> {
    let v: Vec<f32> = Vec::try_from(t.flatten(0, -1)).expect("float32 values");
    v.into_iter().map(f32::to_bits).collect()
}

fn operands(batch: i64, k: i64, n: i64) -> (Tensor, Tensor, Tensor) {
    tch::manual_seed(17);
    let opts = (Kind::Float, Device::Cpu);
    (
        Tensor::randn([batch, k], opts),
        Tensor::randn([n, k], opts) / (k as f64).sqrt(),
        Tensor::randn([n], opts),
    )
}

/// The result of `path` (with `reused` as the executor gives it) at every thread count:
/// the same bits as at one thread, and more than one thread used from 2 on.
fn same_bits_at_every_thread_count(
    path: KernelPath,
    reused: bool,
    (batch, k, n): (i64, i64, i64),
    activations: &[UnaryOp],
    reduce: Option<FusedReduce>,
) {
    let (x, w, b) = operands(batch, k, n);
    let mut first: Option<Vec<u32>> = None;
    for threads in 1..=4 {
        tch::set_num_threads(threads);
        force_path(Some(path));
        let (y, ran) =
            fused_linear_reused(&x, &w, Some(&b), activations, reduce, reused).expect("computes");
        force_path(None);
        assert_eq!(ran, path);
        let used = last_threads();
        let what =
            format!("{path:?} {batch}x{k}x{n} {activations:?} {reduce:?} at {threads} threads");
        if threads > 1 {
            assert!(used > 1, "{what}: ran on {used} thread(s)");
        }
        let got = bits(&y);
        match &first {
            None => first = Some(got),
            Some(one) => assert!(one == &got, "{what}: bits differ from 1 thread"),
        }
    }
    tch::set_num_threads(1);
}

const MEAN: Option<FusedReduce> = Some(FusedReduce {
    kind: ReduceKind::Mean,
    dim: 1,
    keepdim: false,
});
const SUM: Option<FusedReduce> = Some(FusedReduce {
    kind: ReduceKind::Sum,
    dim: 1,
    keepdim: true,
});

#[test]
fn every_path_gives_the_same_bits_at_every_thread_count() {
    let chains: [(&[UnaryOp], Option<FusedReduce>); 4] = [
        (&[UnaryOp::Relu], MEAN),
        (&[UnaryOp::Gelu], None),
        (&[UnaryOp::Sigmoid], SUM),
        (&[], None),
    ];
    // 1000 rows: three full row blocks and a short one.
    for (activations, reduce) in chains {
        for (path, reused) in [
            (KernelPath::Blocked, false),
            (KernelPath::BlockedTransposed, true),
            (KernelPath::BlockedTransposed, false),
            (KernelPath::SmallFused, false),
        ] {
            same_bits_at_every_thread_count(path, reused, (1000, 256, 160), activations, reduce);
        }
        // The small transposed-weight kernel (dot products up to 32) and a narrow output
        // (the one-pass kernel's regime at any batch).
        same_bits_at_every_thread_count(
            KernelPath::BlockedTransposed,
            true,
            (16500, 32, 64),
            activations,
            reduce,
        );
        same_bits_at_every_thread_count(
            KernelPath::SmallFused,
            false,
            (8300, 512, 8),
            activations,
            reduce,
        );
        // libtorch's GEMM, then our epilogue in row blocks (when there is one).
        if !activations.is_empty() || reduce.is_some() {
            same_bits_at_every_thread_count(
                KernelPath::GemmThenEpilogue,
                false,
                (1800, 64, 600),
                activations,
                reduce,
            );
        }
    }
}

#[test]
fn softmax_rows_give_the_same_bits_at_every_thread_count() {
    // Long rows (one at a time) and short ones (exponentiated together).
    for (rows, len) in [(2100usize, 513usize), (140_000, 8)] {
        tch::manual_seed(3);
        let x: Vec<f32> =
            Vec::try_from(Tensor::randn([(rows * len) as i64], (Kind::Float, Device::Cpu)) * 4.0)
                .expect("float32");
        let mut first: Option<Vec<u32>> = None;
        for threads in 1..=4 {
            tch::set_num_threads(threads);
            let mut data = x.clone();
            softmax_rows_in_place(&mut data, rows, len);
            if threads > 1 {
                assert!(last_threads() > 1, "{rows}x{len} at {threads} threads");
            }
            let got: Vec<u32> = data.iter().map(|v| v.to_bits()).collect();
            match &first {
                None => first = Some(got),
                Some(one) => assert!(one == &got, "{rows}x{len} at {threads} threads"),
            }
        }
        tch::set_num_threads(1);
    }
}

#[test]
fn small_calls_stay_on_one_thread() {
    tch::set_num_threads(4);
    let (x, w, b) = operands(128, 256, 256);
    let before = last_threads();
    let _ = fused_linear_reused(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN, false).expect("computes");
    // 8 M multiply-adds: below the threshold, so no parallel pass ran.
    assert_eq!(last_threads(), before);
    tch::set_num_threads(1);
}

/// Whole-tensor reductions through ATen (`ops::reduce_all`, what the executor and generated
/// code call for `x.sum()` and the others) and an elementwise op whose two ATen loops round
/// differently (`exec::unary` of a float64 tensor): the same bits at 1 to 4 threads, where
/// ATen's own `sum` of these tensors differs between thread counts (one partial per thread).
#[test]
fn ops_routed_to_aten_give_the_same_bits_at_every_thread_count() {
    use rextio_ir::WholeReduceOp as W;
    use rextio_runtime::ops::reduce_all;
    let _guard = tch::no_grad_guard();
    tch::manual_seed(23);
    let base = Tensor::randn([2000, 1000], (Kind::Float, Device::Cpu));
    let as_bits = |t: &Tensor| -> Vec<i64> {
        let wide = t.to_kind(Kind::Double).flatten(0, -1);
        Vec::<f64>::try_from(&wide)
            .expect("values")
            .into_iter()
            .map(|v| v.to_bits() as i64)
            .collect()
    };
    for kind in [Kind::Float, Kind::Double, Kind::BFloat16] {
        let x = base.to_kind(kind);
        for input in [x.shallow_clone(), x.tr()] {
            for op in [W::Sum, W::Mean, W::Amax, W::Min] {
                let mut first: Option<Vec<i64>> = None;
                for threads in 1..=4 {
                    tch::set_num_threads(threads);
                    let got = as_bits(&reduce_all(op, &input).expect("reduce_all"));
                    match &first {
                        None => first = Some(got),
                        Some(one) => assert_eq!(&got, one, "{kind:?} {op:?} at {threads} threads"),
                    }
                }
            }
        }
    }
    let x = base.to_kind(Kind::Double);
    let expanded = x.narrow(0, 0, 1).expand([2000, 1000], false);
    for input in [x.shallow_clone(), x.tr(), expanded] {
        let mut first: Option<Vec<i64>> = None;
        for threads in 1..=4 {
            tch::set_num_threads(threads);
            let y = rextio_runtime::exec::unary(UnaryOp::Silu, &input).expect("silu");
            // Eager's layout: a transposed input's result is transposed, an expanded
            // input's contiguous.
            tch::set_num_threads(1);
            assert_eq!(y.stride(), input.silu().stride(), "{:?}", input.stride());
            let got = as_bits(&y);
            match &first {
                None => first = Some(got),
                Some(one) => assert!(&got == one, "silu at {threads} threads"),
            }
        }
    }
    tch::set_num_threads(1);
}
