//! The exhaustive sweep: every elementwise op of the compiled surface over every float32 bit
//! pattern (2^32 inputs), ours against ATen's, at the instruction-set level this process
//! runs (`REXTIO_TORCH_ISA`, see `rextio_runtime::cpu`; `make sweep` runs all three).
//!
//! For each input it compares the class of the two results (NaN, +inf, -inf, +0, -0, finite
//! positive, finite negative) and, where both are finite, the distance in float32 ulps of
//! ATen's value (for GELU's one-element loop and GELU tanh, also in units of `max(1, |x|)`),
//! and counts the inputs whose results differ in any bit. GELU of a contiguous tensor is
//! oneDNN's kernel at oneDNN's level (`ONEDNN_MAX_CPU_ISA` picks it), which ours must match
//! bit for bit. Ours is `dense::unary_slice` over a whole
//! 2^20-element chunk (what the executor and every fused epilogue compute), ATen's the op on
//! a contiguous tensor of the same chunk, one thread: its vectorized loop. Eager's scalar
//! loop (a one-element tensor) is swept for GELU too, where its classes differ, on every
//! `--one-step`-th input: one ATen call per input.
//!
//! ```sh
//! cargo run --release -p rextio-runtime --example sweep                  # all 2^32 inputs
//! cargo run --release -p rextio-runtime --example sweep -- --step 4099  # a sample (CI)
//! ```
//!
//! Exit status 1 when any class differs outside the documented GELU band (docs/parity.md),
//! any value is outside its op's envelope, or any bit of GELU's vectorized loop differs; the
//! table is printed either way.

use std::process::ExitCode;
use std::time::Instant;

use rextio_ir::UnaryOp;
use rextio_runtime::{cpu, dense};
use tch::{Kind, Tensor};

const CHUNK: usize = 1 << 20;

/// Every elementwise op of the surface, with its envelope against ATen in ulps of ATen's
/// value (ours and ATen's errors against the exact value added: docs/parity.md).
const OPS: [(UnaryOp, f64); 14] = [
    (UnaryOp::Relu, 0.0),
    (UnaryOp::Abs, 0.0),
    (UnaryOp::Neg, 0.0),
    (UnaryOp::Square, 0.0),
    // ATen's vectorized sqrt is 1 ulp off for some subnormal inputs (ours is correctly rounded).
    (UnaryOp::Sqrt, 1.0),
    (UnaryOp::Log, 1.0),
    (UnaryOp::Exp, 2.0),
    (UnaryOp::Tanh, 3.0),
    (UnaryOp::Sigmoid, 4.0),
    (UnaryOp::Gelu, f64::INFINITY),
    // x / (1 + e^-x): sigmoid's e^-x, one division (docs/parity.md).
    (UnaryOp::Silu, 4.0),
    // 1 / sqrt(x), two correctly rounded steps in both: bit for bit.
    (UnaryOp::Rsqrt, 0.0),
    // A clamp to [0, 6] (ATen's hardtanh): exact.
    (UnaryOp::Relu6, 0.0),
    // Our tanh against Sleef's where `1 + tanh` cancels: an absolute envelope
    // (GELU_TANH_ABS).
    (UnaryOp::GeluTanh, f64::INFINITY),
];

/// GELU's envelope: `|ours - ATen| <= GELU_ABS * max(1, |x|)` (ATen's erf is accurate to
/// about 1.5e-7 absolute, and `1 + erf` cancels in the negative tail; the largest difference
/// measured is 4.1e-7 * |x| at x = 3.4867325).
const GELU_ABS: f64 = 5e-7;

/// Where eager's vectorized GELU rounds `1 + erf` to zero at other points than an accurate
/// erf does: classes -0.0 and finite negative may differ here (docs/parity.md, "GELU").
const GELU_BAND: (f32, f32) = (-5.5427, -5.4858);

/// GELU tanh's envelope: `|ours - ATen| <= GELU_TANH_ABS * max(1, |x|)` (our tanh and
/// Sleef's each within an ulp or two of 1 where `1 + tanh` cancels, for x below about -2).
const GELU_TANH_ABS: f64 = 3e-7;

/// The absolute envelope of an op whose ulps against ATen are unbounded (cancellation), in
/// units of `max(1, |x|)`.
fn abs_envelope(op: UnaryOp) -> Option<f64> {
    match op {
        UnaryOp::Gelu => Some(GELU_ABS),
        UnaryOp::GeluTanh => Some(GELU_TANH_ABS),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Class {
    Nan,
    PosInf,
    NegInf,
    PosZero,
    NegZero,
    Positive,
    Negative,
}

fn class(v: f32) -> Class {
    if v.is_nan() {
        Class::Nan
    } else if v == f32::INFINITY {
        Class::PosInf
    } else if v == f32::NEG_INFINITY {
        Class::NegInf
    } else if v == 0.0 {
        if v.is_sign_negative() {
            Class::NegZero
        } else {
            Class::PosZero
        }
    } else if v > 0.0 {
        Class::Positive
    } else {
        Class::Negative
    }
}

/// `|a - b|` in ulps of `b` (subnormals share the smallest ulp).
fn ulps(a: f32, b: f32) -> f64 {
    let m = b.abs().max(f32::MIN_POSITIVE);
    let ulp = f64::from(f32::from_bits(m.to_bits() + 1) - m);
    (f64::from(a) - f64::from(b)).abs() / ulp
}

fn aten(op: UnaryOp, t: &Tensor) -> Tensor {
    match op {
        UnaryOp::Relu => t.relu(),
        UnaryOp::Abs => t.abs(),
        UnaryOp::Neg => t.neg(),
        UnaryOp::Square => t.square(),
        UnaryOp::Sqrt => t.sqrt(),
        UnaryOp::Log => t.log(),
        UnaryOp::Exp => t.exp(),
        UnaryOp::Tanh => t.tanh(),
        UnaryOp::Sigmoid => t.sigmoid(),
        UnaryOp::Gelu => t.gelu("none"),
        UnaryOp::Silu => t.silu(),
        UnaryOp::Rsqrt => t.rsqrt(),
        UnaryOp::Relu6 => t.relu6(),
        UnaryOp::GeluTanh => t.gelu("tanh"),
    }
}

#[derive(Default)]
struct Tally {
    inputs: u64,
    /// Class differences outside the documented band: (count, first few examples).
    class_diffs: u64,
    examples: Vec<(f32, f32, f32)>,
    /// Class differences inside the documented GELU band.
    band_diffs: u64,
    worst_ulps: (f64, f32),
    worst_abs: (f64, f32),
    outside_envelope: u64,
    /// Inputs whose two results differ in any bit (NaN payloads aside).
    bits_differ: u64,
}

impl Tally {
    fn add(&mut self, op: UnaryOp, envelope: f64, x: f32, ours: f32, want: f32) {
        self.inputs += 1;
        if ours.to_bits() != want.to_bits() && !(ours.is_nan() && want.is_nan()) {
            self.bits_differ += 1;
        }
        if class(ours) != class(want) {
            if op == UnaryOp::Gelu && (GELU_BAND.0..=GELU_BAND.1).contains(&x) {
                self.band_diffs += 1;
            } else {
                self.class_diffs += 1;
                if self.examples.len() < 5 {
                    self.examples.push((x, ours, want));
                }
            }
            return;
        }
        if !want.is_finite() || ours.to_bits() == want.to_bits() {
            return;
        }
        let u = ulps(ours, want);
        if u > self.worst_ulps.0 {
            self.worst_ulps = (u, x);
        }
        let outside = if let Some(abs) = abs_envelope(op) {
            let d = (f64::from(ours) - f64::from(want)).abs() / f64::from(x.abs().max(1.0));
            if d > self.worst_abs.0 {
                self.worst_abs = (d, x);
            }
            d > abs
        } else {
            u > envelope
        };
        if outside {
            self.outside_envelope += 1;
            if self.examples.len() < 5 {
                self.examples.push((x, ours, want));
            }
        }
    }
}

struct Args {
    step: u64,
    one_step: u64,
    ops: Vec<UnaryOp>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        step: 1,
        one_step: 65_537,
        ops: OPS.iter().map(|(op, _)| *op).collect(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--step" => args.step = value()?.parse().map_err(|e| format!("--step: {e}"))?,
            "--one-step" => {
                args.one_step = value()?.parse().map_err(|e| format!("--one-step: {e}"))?
            }
            "--op" => {
                let name = value()?;
                let op = OPS
                    .iter()
                    .map(|(op, _)| *op)
                    .find(|op| op.name() == name)
                    .ok_or(format!("unknown op {name}"))?;
                if args.ops.len() == OPS.len() {
                    args.ops.clear();
                }
                args.ops.push(op);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.step == 0 || args.one_step == 0 {
        return Err("steps must be positive".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("sweep: {e}");
            return ExitCode::from(2);
        }
    };
    tch::set_num_threads(1);
    let level = cpu::describe();
    let total: u64 = (1u64 << 32).div_ceil(args.step);
    println!(
        "sweep at {level}: {total} inputs per op (every {}th bit pattern), one thread",
        args.step
    );
    println!();
    println!("| op | ISA | inputs | class differences | in the GELU band | largest ulps | GELU abs / max(1,|x|) | outside envelope | bits differ | seconds |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut failed = false;
    let mut xs = vec![0f32; CHUNK];
    let mut ours = vec![0f32; CHUNK];
    let mut want = vec![0f32; CHUNK];
    for &op in &args.ops {
        let envelope = OPS.iter().find(|(o, _)| *o == op).map_or(0.0, |(_, e)| *e);
        let started = Instant::now();
        let mut tally = Tally::default();
        let mut next: u64 = 0;
        while next < (1u64 << 32) {
            let mut len = 0;
            while len < CHUNK && next < (1u64 << 32) {
                xs[len] = f32::from_bits(next as u32);
                len += 1;
                next += args.step;
            }
            dense::unary_slice(op, &xs[..len], &mut ours[..len]);
            let t = aten(op, &Tensor::from_slice(&xs[..len]));
            t.to_kind(Kind::Float).copy_data(&mut want[..len], len);
            for i in 0..len {
                tally.add(op, envelope, xs[i], ours[i], want[i]);
            }
        }
        report(op, "vectorized loop", &level, &tally, started, &mut failed);
        if rextio_runtime::unary::one_element_differs(op) {
            // Eager's scalar loop: a one-element tensor, one ATen call per input.
            let started = Instant::now();
            let mut tally = Tally::default();
            let mut bits: u64 = 0;
            let specials = [
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                f32::MAX,
                -f32::MAX,
                1.7014118e38,
                -0.0,
                0.0,
            ];
            let mut one = [0f32];
            let mut check = |x: f32, tally: &mut Tally| {
                dense::unary_slice(op, &[x], &mut one);
                let w = f32::try_from(aten(op, &Tensor::from_slice(&[x]))).unwrap_or(f32::NAN);
                tally.add(op, envelope, x, one[0], w);
            };
            for x in specials {
                check(x, &mut tally);
            }
            while bits < (1u64 << 32) {
                check(f32::from_bits(bits as u32), &mut tally);
                bits += args.one_step.max(args.step);
            }
            report(op, "one element", &level, &tally, started, &mut failed);
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn report(op: UnaryOp, what: &str, level: &str, t: &Tally, started: Instant, failed: &mut bool) {
    let isa = level.split_whitespace().next().unwrap_or(level);
    let gelu = if abs_envelope(op).is_some() {
        format!("{:.2e} at {:e}", t.worst_abs.0, t.worst_abs.1)
    } else {
        "".into()
    };
    println!(
        "| {} ({what}) | {isa} | {} | {} | {} | {:.2} at {:e} | {gelu} | {} | {} | {:.1} |",
        op.name(),
        t.inputs,
        t.class_diffs,
        t.band_diffs,
        t.worst_ulps.0,
        t.worst_ulps.1,
        t.outside_envelope,
        t.bits_differ,
        started.elapsed().as_secs_f64()
    );
    // Eager's GELU of a contiguous tensor is oneDNN's kernel, which ours follows bit for bit
    // (`vmath::gelu`): any differing bit fails.
    let exact = op == UnaryOp::Gelu && what == "vectorized loop";
    if t.class_diffs > 0 || t.outside_envelope > 0 || (exact && t.bits_differ > 0) {
        *failed = true;
        for (x, ours, want) in &t.examples {
            eprintln!(
                "  {}({x:e} = {:#010x}): ours {ours:e}, ATen {want:e}",
                op.name(),
                x.to_bits()
            );
        }
    }
}
