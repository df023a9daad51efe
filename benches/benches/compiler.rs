//! The compiler itself: Python source to optimized IR (parse, claim rules, lowering, the pass
//! pipeline with validation between passes) per function, and the fusion pass alone on long
//! chains (its e-graph extraction must stay linear in the chain's length).
//!
//! `cargo bench -p rextio-benches --bench compiler`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rextio_driver::{compile_function, Surface};
use rextio_ir::parse_function;
use rextio_passes::{Fuse, Pass};

const PROGRAMS: &str = include_str!("../../tests/python/control_flow_fixture.py");
const PHASE_A: &str = include_str!("../../examples/phase_a.py");

fn per_function(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile_function");
    for (file, source, name) in [
        ("phase_a.py", PHASE_A, "inference"),
        ("control_flow_fixture.py", PROGRAMS, "inference"),
        ("control_flow_fixture.py", PROGRAMS, "score_labels"),
    ] {
        let label = format!("{file}:{name}");
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| compile_function(file, source, name, Surface::Extended).expect("compiles"))
        });
    }
    group.finish();
}

/// `linear` followed by `length` exps, returned.
fn chain(length: usize) -> String {
    let mut text = String::from(
        "fn chain(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %b: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 2> {\n  %x: tensor<f32, cpu, 2> = param 0\n  %w: tensor<f32, cpu, 2> = param 1\n  %b: tensor<f32, cpu, 1> = param 2\n  %a0: tensor<f32, cpu, 2> = linear %x, %w, %b\n",
    );
    for i in 1..=length {
        text.push_str(&format!("  %a{i}: tensor<f32, cpu, 2> = exp %a{}\n", i - 1));
    }
    text.push_str(&format!("  return %a{length}\n}}\n"));
    text
}

fn long_chains(c: &mut Criterion) {
    let mut group = c.benchmark_group("fuse_chain");
    group.sample_size(10);
    for length in [10, 100, 1_000] {
        let f = parse_function(&chain(length)).expect("parses");
        group.bench_function(BenchmarkId::from_parameter(length), |b| {
            b.iter(|| Fuse::default().run(f.clone()).expect("fuses"))
        });
    }
    group.finish();
}

criterion_group!(benches, per_function, long_chains);
criterion_main!(benches);
