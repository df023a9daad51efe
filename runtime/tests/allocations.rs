//! Counts the Rust heap allocations of executor calls in steady state, with a counting
//! global allocator: after warm-up, a call of the seed's Phase B and scoring programs
//! allocates nothing of its own (scratch, buffers and transposed weights are reused). Two
//! things are outside that: the result tensor, like every tensor, is allocated by libtorch
//! (C++, not counted here); and the `gemm` crate allocates its packing buffers per product
//! (one or two allocations, measured), so a call may count at most two allocations per
//! `linear` that calls the crate (`kernels::runs_gemm_crate`, from the cost model's choice;
//! small batches against a loop's transposed weight run this crate's own kernel instead). The argument `Value`s are
//! built before counting starts, as the Python boundary builds them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rextio_ir::parse_function;
use rextio_runtime::kernels::{runs_gemm_crate, KernelPath, COST_MODEL};
use rextio_runtime::{Program, Value};
use tch::Tensor;

struct Counting;

thread_local! {
    // Per thread: the test harness runs tests on parallel threads, whose allocations must
    // not count against the calls measured here (a process-wide counter made this flaky).
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `const` thread-locals with no destructor never allocate; after the thread's TLS is
    // torn down there is nothing left to count.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `GlobalAlloc::alloc`, passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator with `layout` (the
        // caller's contract), since every allocation here is the system allocator's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `GlobalAlloc::alloc_zeroed`, passed on unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as in `dealloc` for `ptr` and `layout`; `new_size` is the caller's, valid
        // by its contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const PHASE_B: &str = "\
fn inference(%x: tensor<f32, cpu, 2>, %weight_a: tensor<f32, cpu, 2>, %weight_b: tensor<f32, cpu, 2>, %bias_a: tensor<f32, cpu, 1>, %bias_b: tensor<f32, cpu, 1>, %depth: int, %phase: int) -> tensor<f32, cpu, 1> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cpu, 2> = param 1
  %2: tensor<f32, cpu, 2> = param 2
  %3: tensor<f32, cpu, 1> = param 3
  %4: tensor<f32, cpu, 1> = param 4
  %5: int = param 5
  %6: int = param 6
  %7: int = const.int 0
  %8: int = const.int 1
  for %9: int in range(%7, %5, %8) carry(%10: tensor<f32, cpu, 2> = %0 -> %11) {
    %12: int = const.int 2
    %13: int = const.int 0
    %14: int = scalar.add %9, %6
    %15: int = scalar.mod %14, %12
    %16: bool = scalar.eq %15, %13
    if %16 -> (%17: tensor<f32, cpu, 2>) {
      %18: tensor<f32, cpu, 2> = fused_linear %10, %1, %3, activations=[relu], tail=none
      yield %18
    } else {
      %19: tensor<f32, cpu, 2> = fused_linear %10, %2, %4, activations=[relu], tail=none
      yield %19
    }
    continue %17
  }
  %20: tensor<f32, cpu, 1> = mean %11, dim=1, keepdim=false
  return %20
}
";

const SCORE_LABELS: &str = "\
fn score_labels(%x: tensor<f32, cpu, 2>, %mean: tensor<f32, cpu, 1>, %scale: tensor<f32, cpu, 1>, %hidden_weight: tensor<f32, cpu, 2>, %hidden_bias: tensor<f32, cpu, 1>, %class_weight: tensor<f32, cpu, 2>, %class_bias: tensor<f32, cpu, 1>, %rounds: int, %phase: int) -> tensor<i64, cpu, 1> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cpu, 1> = param 1
  %2: tensor<f32, cpu, 1> = param 2
  %3: tensor<f32, cpu, 2> = param 3
  %4: tensor<f32, cpu, 1> = param 4
  %5: tensor<f32, cpu, 2> = param 5
  %6: tensor<f32, cpu, 1> = param 6
  %7: int = param 7
  %8: int = param 8
  %9: tensor<f32, cpu, 2> = sub %0, %1
  %10: tensor<f32, cpu, 2> = div %9, %2
  %11: tensor<f32, cpu, 2> = linear %10, %3, %4
  %12: int = const.int 0
  %13: int = const.int 1
  for %14: int in range(%12, %7, %13) carry(%15: tensor<f32, cpu, 2> = %11 -> %16) {
    %17: int = const.int 2
    %18: int = const.int 0
    %19: int = scalar.add %14, %8
    %20: int = scalar.mod %19, %17
    %21: bool = scalar.eq %20, %18
    if %21 -> (%22: tensor<f32, cpu, 2>) {
      %23: tensor<f32, cpu, 2> = relu %15
      yield %23
    } else {
      %24: tensor<f32, cpu, 2> = tanh %15
      yield %24
    }
    continue %22
  }
  %25: tensor<f32, cpu, 2> = linear %16, %5, %6
  %26: tensor<f32, cpu, 2> = softmax %25, dim=1
  %27: tensor<i64, cpu, 1> = argmax %26, dim=1, keepdim=false
  return %27
}
";

/// `SCORE_LABELS` as the optimizer leaves it: the normalization is the first linear's
/// prologue and the softmax the second one's tail.
fn score_labels_fused() -> String {
    let fused = SCORE_LABELS
        .replace(
            "  %9: tensor<f32, cpu, 2> = sub %0, %1\n  %10: tensor<f32, cpu, 2> = div %9, %2\n  %11: tensor<f32, cpu, 2> = linear %10, %3, %4\n",
            "  %11: tensor<f32, cpu, 2> = fused_linear %0, %3, %4, %1, %2, prologue=[sub, div], activations=[], tail=none\n",
        )
        .replace(
            "  %25: tensor<f32, cpu, 2> = linear %16, %5, %6\n  %26: tensor<f32, cpu, 2> = softmax %25, dim=1\n",
            "  %26: tensor<f32, cpu, 2> = fused_linear %16, %5, %6, activations=[], tail=softmax(dim=1)\n",
        );
    assert_ne!(
        fused, SCORE_LABELS,
        "the fused form differs from the unfused one"
    );
    fused
}

fn args(shapes: &[&[i64]], ints: &[i64]) -> Vec<Value> {
    let mut values: Vec<Value> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Value::Tensor(
                Tensor::randn(*s, (tch::Kind::Float, tch::Device::Cpu)) * (0.1 + i as f64 * 0.01),
            )
        })
        .collect();
    values.extend(ints.iter().map(|&i| Value::Int(i)));
    values
}

fn copy(values: &[Value]) -> Vec<Value> {
    values
        .iter()
        .map(|v| match v {
            Value::Tensor(t) => Value::Tensor(t.shallow_clone()),
            Value::Int(i) => Value::Int(*i),
            Value::Bool(b) => Value::Bool(*b),
            Value::Float(f) => Value::Float(*f),
        })
        .collect()
}

/// Rust allocations per call, after `warm` calls, over `calls` calls.
fn allocations_per_call(program: &Program, inputs: &[Value]) -> f64 {
    for _ in 0..5 {
        program.run_checked(copy(inputs)).unwrap();
    }
    let calls = 50;
    let prepared: Vec<Vec<Value>> = (0..calls).map(|_| copy(inputs)).collect();
    let mut results = Vec::with_capacity(calls);
    let before = allocations();
    for args in prepared {
        results.push(program.run_checked(args).unwrap());
    }
    let after = allocations();
    drop(results);
    (after - before) as f64 / calls as f64
}

#[test]
fn steady_state_calls_allocate_nothing_of_their_own() {
    let _guard = tch::no_grad_guard();
    let phase_b = Program::compile(&parse_function(PHASE_B).unwrap()).unwrap();
    let scoring = Program::compile(&parse_function(SCORE_LABELS).unwrap()).unwrap();
    let scoring_fused = Program::compile(&parse_function(&score_labels_fused()).unwrap()).unwrap();
    // The six Phase B cells' kinds of shape (one-pass and blocked paths, transposed weights).
    // The gemm crate's packing buffers, per blocked product.
    let blocked = |path: KernelPath, batch: usize, k: usize, n: usize| {
        2.0 * runs_gemm_crate(path, batch, k, n) as usize as f64
    };
    let mut exact_zero = 0;
    for (batch, width, depth) in [
        (1, 16, 4),
        (4, 32, 16),
        (8, 64, 16),
        (64, 128, 4),
        (1, 128, 6),
        (1, 256, 3),
    ] {
        let inputs = args(
            &[
                &[batch, width],
                &[width, width],
                &[width, width],
                &[width],
                &[width],
            ],
            &[depth, 1],
        );
        let per_call = allocations_per_call(&phase_b, &inputs);
        let (b, w, d) = (batch as usize, width as usize, depth as f64);
        let gemm_packing = d * blocked(COST_MODEL.choose_for(b, w, w, true), b, w, w);
        assert!(
            per_call <= gemm_packing,
            "Phase B {batch}x{width} depth {depth}: {per_call} allocations per call, at most {gemm_packing} expected"
        );
        exact_zero += usize::from(gemm_packing == 0.0);
    }
    for batch in [1, 16, 128] {
        let inputs = args(
            &[&[batch, 32], &[32], &[32], &[32, 32], &[32], &[8, 32], &[8]],
            &[4, 0],
        );
        let b = batch as usize;
        let gemm_packing = blocked(COST_MODEL.choose(b, 32, 32), b, 32, 32)
            + blocked(COST_MODEL.choose(b, 32, 8), b, 32, 8);
        for (program, form) in [(&scoring, "unfused"), (&scoring_fused, "fused")] {
            let per_call = allocations_per_call(program, &inputs);
            assert!(
                per_call <= gemm_packing,
                "score_labels ({form}) batch {batch}: {per_call} allocations per call, at most {gemm_packing} expected"
            );
            exact_zero += usize::from(gemm_packing == 0.0);
        }
    }
    // Cells with no blocked product must allocate nothing at all; make sure some were run.
    assert!(
        exact_zero >= 2,
        "only {exact_zero} cells avoid the gemm crate"
    );
}

#[test]
fn the_counter_sees_allocations() {
    // The test above would pass vacuously if the allocator were not installed.
    let before = allocations();
    let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(16));
    let after = allocations();
    drop(v);
    assert!(after > before);
}
