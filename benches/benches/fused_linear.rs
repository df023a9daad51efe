//! The fused `linear -> relu -> mean(dim=1)` kernel against the same chain op by op through
//! tch (what an unfused compiler would emit) and against libtorch's GEMM alone (`linear`), on
//! the Phase A cells and on long rows. One thread, as in the reference benchmarks. Throughput
//! is reported as floating-point operations (2 per multiply-add), so criterion's "elem/s"
//! reads as FLOP/s.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rextio_benches::{LONG_ROW_CELLS, PHASE_A_CELLS};
use rextio_ir::{FusedReduce, ReduceKind, UnaryOp};
use rextio_runtime::{kernels, ops};
use tch::{Device, Kind, Tensor};

const MEAN1: Option<FusedReduce> = Some(FusedReduce {
    kind: ReduceKind::Mean,
    dim: 1,
    keepdim: false,
});

fn phase_a(c: &mut Criterion) {
    cells(c, "phase_a", &PHASE_A_CELLS);
}

fn long_rows(c: &mut Criterion) {
    cells(c, "long_rows", &LONG_ROW_CELLS);
}

fn cells(c: &mut Criterion, name: &str, cells: &[(&str, i64, i64, i64)]) {
    tch::set_num_threads(1);
    tch::manual_seed(20260717);
    let mut group = c.benchmark_group(name);
    for &(cell, batch, k, n) in cells {
        let x = Tensor::randn([batch, k], (Kind::Float, Device::Cpu));
        let w = Tensor::randn([n, k], (Kind::Float, Device::Cpu));
        let b = Tensor::randn([n], (Kind::Float, Device::Cpu));
        let label = format!("{cell}_{batch}x{k}x{n}");
        group.throughput(Throughput::Elements(2 * (batch * k * n) as u64));
        group.bench_function(BenchmarkId::new("fused", &label), |bench| {
            bench.iter(|| {
                let _g = tch::no_grad_guard();
                kernels::fused_linear(&x, &w, Some(&b), &[UnaryOp::Relu], MEAN1)
            })
        });
        group.bench_function(BenchmarkId::new("libtorch_gemm", &label), |bench| {
            bench.iter(|| {
                let _g = tch::no_grad_guard();
                ops::linear(&x, &w, Some(&b))
            })
        });
        group.bench_function(BenchmarkId::new("tch_op_by_op", &label), |bench| {
            bench.iter(|| {
                let _g = tch::no_grad_guard();
                let y = ops::linear(&x, &w, Some(&b))?;
                let y = rextio_runtime::unary::aten(UnaryOp::Relu, &y)?;
                ops::reduce(ReduceKind::Mean, &y, 1, false)
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(std::time::Duration::from_millis(300)).measurement_time(std::time::Duration::from_secs(1));
    targets = phase_a, long_rows
}
criterion_main!(benches);
