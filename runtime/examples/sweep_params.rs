//! The exhaustive sweep of the ops with scalar parameters (`ParamUnaryOp`): every float32 bit
//! pattern (2^32 inputs), ours (`dense::param_unary`, what the executor runs on a dense
//! float32 tensor) against ATen's kernel with the same parameters, at the instruction-set
//! level this process runs (`REXTIO_TORCH_ISA`). These ops compare, select and multiply
//! once, so the expectation is the same bits: the table counts class differences (NaN, ±inf,
//! ±0, finite of each sign) and, separately, any other bit difference (NaN payloads aside).
//!
//! The parameters are those tch can pass to ATen: `leaky_relu` with eager's default slope
//! 0.01, `hardtanh` with its defaults (-1, 1), and `clamp`/`clamp_min`/`clamp_max` with a few
//! bounds (signed zeros, a subnormal, a minimum above the maximum). ELU is ATen's kernel in
//! the runtime (its vector and scalar loops differ), so it is not swept here.
//!
//! ```sh
//! cargo run --release -p rextio-runtime --example sweep_params                  # all 2^32
//! cargo run --release -p rextio-runtime --example sweep_params -- --step 4099  # a sample
//! cargo run --release -p rextio-runtime --example sweep_params -- --op hardtanh
//! ```
//!
//! Exit status 1 when any result differs; the table is printed either way.

use std::process::ExitCode;
use std::time::Instant;

use rextio_ir::ParamUnaryOp;
use rextio_runtime::{cpu, dense};
use tch::{Kind, Tensor};

const CHUNK: usize = 1 << 20;

/// One swept case: the op, its float32 parameters, and its label.
struct Case {
    op: ParamUnaryOp,
    a: f32,
    b: f32,
    label: &'static str,
}

const CASES: [Case; 7] = [
    Case {
        op: ParamUnaryOp::LeakyRelu,
        a: 0.01,
        b: 0.0,
        label: "leaky_relu(x, 0.01)",
    },
    Case {
        op: ParamUnaryOp::Hardtanh,
        a: -1.0,
        b: 1.0,
        label: "hardtanh(x, -1, 1)",
    },
    Case {
        op: ParamUnaryOp::Clamp,
        a: -0.0,
        b: 1e-45,
        label: "clamp(x, -0.0, 1e-45)",
    },
    Case {
        op: ParamUnaryOp::Clamp,
        a: 2.0,
        b: -2.0,
        label: "clamp(x, 2, -2)",
    },
    Case {
        op: ParamUnaryOp::ClampMin,
        a: 0.0,
        b: 0.0,
        label: "clamp_min(x, 0.0)",
    },
    Case {
        op: ParamUnaryOp::ClampMax,
        a: -0.0,
        b: 0.0,
        label: "clamp_max(x, -0.0)",
    },
    Case {
        op: ParamUnaryOp::ClampMax,
        a: f32::INFINITY,
        b: 0.0,
        label: "clamp_max(x, inf)",
    },
];

fn aten(case: &Case, t: &Tensor) -> Tensor {
    let (a, b) = (f64::from(case.a), f64::from(case.b));
    match case.op {
        ParamUnaryOp::LeakyRelu => t.leaky_relu(),
        ParamUnaryOp::Hardtanh => t.hardtanh(),
        ParamUnaryOp::Clamp => t.clamp(a, b),
        ParamUnaryOp::ClampMin => t.clamp_min(a),
        ParamUnaryOp::ClampMax => t.clamp_max(a),
        ParamUnaryOp::Elu => unreachable!("ELU is ATen's kernel, not swept"),
    }
}

/// NaN, +inf, -inf, +0, -0, finite positive, finite negative.
fn class(v: f32) -> u8 {
    match v {
        _ if v.is_nan() => 0,
        f32::INFINITY => 1,
        f32::NEG_INFINITY => 2,
        _ if v == 0.0 && v.is_sign_positive() => 3,
        _ if v == 0.0 => 4,
        _ if v > 0.0 => 5,
        _ => 6,
    }
}

fn main() -> ExitCode {
    let mut step: u64 = 1;
    let mut only: Option<String> = None;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match (flag.as_str(), it.next()) {
            ("--step", Some(v)) if v.parse::<u64>().is_ok_and(|s| s > 0) => {
                step = v.parse().unwrap_or(1)
            }
            ("--op", Some(name)) => only = Some(name),
            _ => {
                eprintln!("sweep_params: usage: [--step N] [--op NAME]");
                return ExitCode::from(2);
            }
        }
    }
    tch::set_num_threads(1);
    let level = cpu::describe();
    let isa = level
        .split_whitespace()
        .next()
        .unwrap_or(&level)
        .to_string();
    let total: u64 = (1u64 << 32).div_ceil(step);
    println!("sweep at {level}: {total} inputs per case (every {step}th bit pattern), one thread");
    println!();
    println!("| case | ISA | inputs | class differences | other bit differences | seconds |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut failed = false;
    let mut xs = vec![0f32; CHUNK];
    let mut want = vec![0f32; CHUNK];
    for case in CASES
        .iter()
        .filter(|c| only.as_deref().is_none_or(|o| o == c.op.name()))
    {
        let started = Instant::now();
        let (mut inputs, mut classes, mut bits) = (0u64, 0u64, 0u64);
        let mut examples = Vec::new();
        let mut next: u64 = 0;
        while next < (1u64 << 32) {
            let mut len = 0;
            while len < CHUNK && next < (1u64 << 32) {
                xs[len] = f32::from_bits(next as u32);
                len += 1;
                next += step;
            }
            let x = Tensor::from_slice(&xs[..len]);
            let ours = dense::param_unary(
                case.op,
                &dense::F32::view(x.shallow_clone()).expect("dense"),
                case.a,
                case.b,
            )
            .expect("a dense op")
            .into_tensor()
            .expect("a tensor");
            let mut got = vec![0f32; len];
            ours.copy_data(&mut got, len);
            aten(case, &x)
                .to_kind(Kind::Float)
                .copy_data(&mut want[..len], len);
            for i in 0..len {
                inputs += 1;
                let (o, w) = (got[i], want[i]);
                if class(o) != class(w) {
                    classes += 1;
                } else if !w.is_nan() && o.to_bits() != w.to_bits() {
                    bits += 1;
                } else {
                    continue;
                }
                if examples.len() < 5 {
                    examples.push((xs[i], o, w));
                }
            }
        }
        println!(
            "| {} | {isa} | {inputs} | {classes} | {bits} | {:.1} |",
            case.label,
            started.elapsed().as_secs_f64()
        );
        for (x, o, w) in examples {
            failed = true;
            eprintln!(
                "  {}({x:e} = {:#010x}): ours {o:e}, ATen {w:e}",
                case.label,
                x.to_bits()
            );
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
