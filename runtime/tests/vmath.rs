//! `vmath`'s exp, tanh, sigmoid and silu against float64 over the whole float32 range (every 251st
//! bit pattern, both signs, plus the special values), and every path (AVX-512, AVX2,
//! portable) giving the same bits as the scalar function.

use rextio_runtime::vmath::{self, Func};

/// Error of `ours` in float32 ulps of the exact value `exact` (float64).
fn ulps(ours: f32, exact: f64) -> f64 {
    let rounded = exact as f32;
    if rounded.is_infinite() || ours.is_infinite() {
        return if ours == rounded { 0.0 } else { f64::INFINITY };
    }
    // One ulp at the exact value's binade; subnormals share the smallest one.
    let magnitude = rounded.abs().max(f32::MIN_POSITIVE);
    let ulp = f64::from(f32::from_bits(magnitude.to_bits() + 1) - magnitude);
    (f64::from(ours) - exact).abs() / ulp
}

fn sweep(name: &str, f: fn(f32) -> f32, exact: fn(f64) -> f64, bound: f64, from: f32) {
    let mut worst = (0.0f64, 0.0f32);
    let mut count = 0u64;
    for bits in (0u32..0x7f80_0000).step_by(251) {
        for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
            if x < from {
                continue;
            }
            let e = ulps(f(x), exact(f64::from(x)));
            count += 1;
            if e > worst.0 {
                worst = (e, x);
            }
        }
    }
    eprintln!(
        "{name}: worst {:.3} ulp at {:e} over {count} inputs",
        worst.0, worst.1
    );
    assert!(
        worst.0 <= bound,
        "{name}: {:.3} ulp at {:e} (bound {bound})",
        worst.0,
        worst.1
    );
}

fn sigmoid64(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[test]
fn exp_is_within_one_ulp() {
    sweep("exp", vmath::exp, f64::exp, 1.0, f32::MIN);
}

#[test]
fn tanh_is_within_two_ulps() {
    sweep("tanh", vmath::tanh, f64::tanh, 2.0, f32::MIN);
}

#[test]
fn sigmoid_is_within_three_ulps() {
    // Below -88.72 e^-x overflows float32 and sigmoid is 0, as ATen's (same formula).
    sweep("sigmoid", vmath::sigmoid, sigmoid64, 3.0, -88.72);
    for x in [-88.73f32, -100.0, -1e30] {
        assert_eq!(vmath::sigmoid(x), 0.0);
    }
}

fn silu64(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

#[test]
fn silu_is_within_three_ulps() {
    // Below -88.72 e^-x overflows float32 and silu is -0.0, as ATen's (same formula).
    sweep("silu", vmath::silu, silu64, 3.0, -88.72);
    for x in [-88.73f32, -100.0, -1e30, f32::MIN] {
        assert_eq!(vmath::silu(x).to_bits(), (-0.0f32).to_bits(), "{x:e}");
    }
}

/// Eager's scalar GELU loop, `x * 0.5 * (1 + erf(x * (1/sqrt 2)))` in float32 with a float32
/// erf within an ulp (musl's, as ported by `libm`; eager calls the C library's): the oracle
/// for values and classes, independent of `vmath`.
fn gelu_eager(x: f32) -> f32 {
    x * 0.5 * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
}

#[derive(Debug, PartialEq, Eq)]
enum Class {
    Nan,
    PosInf,
    NegInf,
    PosZero,
    NegZero,
    Finite,
}

fn class(v: f32) -> Class {
    match v {
        v if v.is_nan() => Class::Nan,
        f32::INFINITY => Class::PosInf,
        f32::NEG_INFINITY => Class::NegInf,
        v if v == 0.0 && v.is_sign_negative() => Class::NegZero,
        0.0 => Class::PosZero,
        _ => Class::Finite,
    }
}

/// Every 251st bit pattern of both signs: `gelu_one` has the class of eager's formula, and its
/// value is within 8 ulps of it plus one rounding step of eager's `1 + erf` (2^-24 of x/2 in
/// the negative tail, where that sum cancels: both round erf to float32 before adding 1).
/// Classes may differ only where erf rounds to -1, within a few ulps of x = -5.5426.
#[test]
fn gelu_one_is_eagers_formula_with_its_classes() {
    let mut worst = (0.0f64, 0.0f32);
    let mut class_changes = Vec::new();
    for bits in (0u32..0x7f80_0000).step_by(251) {
        for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
            let (ours, want) = (vmath::gelu_one(x), gelu_eager(x));
            if class(ours) != class(want) {
                class_changes.push((x, ours, want));
                continue;
            }
            if !want.is_finite() || want == 0.0 {
                continue;
            }
            // One rounding step of eager's `1 + erf` in the negative tail, times x/2.
            let tail_step = if x < 0.0 {
                f64::from(x.abs()) * 0.5 * 2f64.powi(-24)
            } else {
                0.0
            };
            let excess = ((f64::from(ours) - f64::from(want)).abs() - tail_step).max(0.0);
            let magnitude = want.abs().max(f32::MIN_POSITIVE);
            let e = excess / f64::from(f32::from_bits(magnitude.to_bits() + 1) - magnitude);
            if e > worst.0 {
                worst = (e, x);
            }
        }
    }
    eprintln!("gelu_one: worst {:.3} ulp at {:e}", worst.0, worst.1);
    assert!(
        worst.0 <= 8.0,
        "gelu_one: {:.3} ulp at {:e}",
        worst.0,
        worst.1
    );
    for &(x, ours, want) in &class_changes {
        assert!(
            (-5.5427..=-5.5425).contains(&x),
            "gelu_one({x:e}) = {ours:e}, eager's formula {want:e}"
        );
    }
    // The class edges of eager's scalar loop.
    assert_eq!(vmath::gelu_one(f32::INFINITY), f32::INFINITY);
    assert!(vmath::gelu_one(f32::NEG_INFINITY).is_nan());
    assert!(vmath::gelu_one(f32::NAN).is_nan());
    assert_eq!(vmath::gelu_one(3e38), 3e38);
    assert_eq!(vmath::gelu_one(-6.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(vmath::gelu_one(-10.0).to_bits(), (-0.0f32).to_bits());
}

/// Eager's GELU of a contiguous tensor of two or more elements is oneDNN's `eltwise_gelu_erf`
/// at oneDNN's level in this process (`cpu::onednn_isa`, capped by `ONEDNN_MAX_CPU_ISA`;
/// `make test` runs this file at each level the CPU has). Ours gives its bits, NaN payloads
/// aside, for a dense sweep of [-15, 15], the special values and both signs of every binade,
/// as one tensor and as every length from 2 to 40 (oneDNN's loop tails), through the scalar
/// function and every slice loop.
#[test]
fn gelu_is_eagers_bit_for_bit_at_onednns_level() {
    let mut xs: Vec<f32> = (-40_000..40_000).map(|i| i as f32 * 3.7e-4).collect();
    xs.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -f32::MAX,
        1.7014118e38,
        1.7e38,
        3e38,
        -3e38,
        -6.0,
        -10.0,
        -14.2,
        -5.6,
        -5.5,
        -5.45,
        -0.0,
        0.0,
        1e-45,
        -1e-45,
        1e-40,
        -1e-40,
    ]);
    for e in 0..255u32 {
        for m in [0u32, 0x2a_aaab, 0x7f_ffff] {
            let v = f32::from_bits((e << 23) | m);
            xs.extend([v, -v]);
        }
    }
    let same =
        |ours: f32, want: f32| ours.to_bits() == want.to_bits() || ours.is_nan() && want.is_nan();
    let t = tch::Tensor::from_slice(&xs);
    let aten = Vec::<f32>::try_from(t.gelu("none")).unwrap();
    let mut mapped = vec![0f32; xs.len()];
    vmath::map(Func::Gelu, &xs, &mut mapped);
    let isa = rextio_runtime::cpu::describe();
    for ((&x, &want), &m) in xs.iter().zip(&aten).zip(&mapped) {
        let ours = vmath::gelu(x);
        assert!(
            same(ours, want) && same(m, want),
            "gelu({x:e} = {:#010x}) at {isa}: ours {ours:e} (slice loop {m:e}), eager {want:e}",
            x.to_bits()
        );
    }
    for len in 2..=40usize {
        let chunk = &xs[xs.len() - len..];
        let want = Vec::<f32>::try_from(tch::Tensor::from_slice(chunk).gelu("none")).unwrap();
        let mut ours = vec![0f32; len];
        vmath::map(Func::Gelu, chunk, &mut ours);
        for i in 0..len {
            assert!(
                same(ours[i], want[i]),
                "length {len}, gelu({:e}) at {isa}: ours {:e}, eager {:e}",
                chunk[i],
                ours[i],
                want[i]
            );
        }
    }
}

/// GELU's tanh approximation in float64, `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
fn gelu_tanh64(x: f64) -> f64 {
    let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
    0.5 * x * (1.0 + inner.tanh())
}

/// Both of our GELU tanh formulas (eager's vector loop's and its scalar loop's) against
/// float64: within 3e-7 * max(1, |x|) (our tanh and the C library's are within an ulp or two
/// of 1 where `1 + tanh` cancels, from about x = -1 down), and within 8 ulps from x = -1 up.
#[test]
fn gelu_tanh_is_close_to_the_exact_formula() {
    for f in [vmath::gelu_tanh as fn(f32) -> f32, vmath::gelu_tanh_one] {
        let mut x = -12.0f32;
        while x < 12.0 {
            let (ours, exact) = (f(x), gelu_tanh64(f64::from(x)));
            let abs = (f64::from(ours) - exact).abs() / f64::from(x.abs().max(1.0));
            assert!(abs <= 3e-7, "gelu_tanh({x:e}) = {ours:e}, exact {exact:e}");
            if x >= -1.0 && exact.abs() > 1e-30 {
                assert!(
                    ulps(ours, exact) <= 8.0,
                    "gelu_tanh({x:e}): {} ulps",
                    ulps(ours, exact)
                );
            }
            x += 0.000_731;
        }
    }
}

#[test]
fn gelu_tanh_specials() {
    for f in [vmath::gelu_tanh as fn(f32) -> f32, vmath::gelu_tanh_one] {
        assert!(f(f32::NAN).is_nan());
        // -inf: `0.5 * -inf * (1 + -1)` is NaN in eager too; +inf stays.
        assert!(f(f32::NEG_INFINITY).is_nan());
        assert_eq!(f(f32::INFINITY), f32::INFINITY);
        assert_eq!(f(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(f(0.0).to_bits(), 0.0f32.to_bits());
        // x^3 overflows: tanh is exactly +-1, the result x or -0.0.
        assert_eq!(f(1e30), 1e30);
        assert_eq!(f(-1e30).to_bits(), (-0.0f32).to_bits());
        assert_eq!(f(f32::MAX), f32::MAX);
    }
    // Where Sleef's tanh saturates and the C library's does not (x = -5.1, tanh's argument
    // -8.80): the vector loop's formula gives -0.0, the scalar loop's a tiny negative number,
    // as eager's do.
    assert_eq!(vmath::gelu_tanh(-5.1).to_bits(), (-0.0f32).to_bits());
    let one = vmath::gelu_tanh_one(-5.1);
    assert!(one < 0.0 && one > -1e-6, "{one:e}");
}

#[test]
fn special_values_keep_their_class() {
    let nan = f32::NAN;
    for f in [vmath::exp, vmath::tanh, vmath::sigmoid] {
        assert!(f(nan).is_nan());
        assert!(f(-nan).is_nan());
    }
    assert_eq!(vmath::exp(f32::INFINITY), f32::INFINITY);
    assert_eq!(vmath::exp(f32::NEG_INFINITY).to_bits(), 0.0f32.to_bits());
    assert_eq!(vmath::exp(89.0), f32::INFINITY);
    assert_eq!(vmath::exp(0.0), 1.0);
    assert_eq!(vmath::exp(-0.0), 1.0);
    // Subnormal results are kept, not flushed.
    let tiny = vmath::exp(-100.0);
    assert!(tiny > 0.0 && tiny < f32::MIN_POSITIVE, "{tiny:e}");
    assert_eq!(vmath::tanh(f32::INFINITY), 1.0);
    assert_eq!(vmath::tanh(f32::NEG_INFINITY), -1.0);
    assert_eq!(vmath::tanh(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(vmath::tanh(0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(vmath::tanh(1e-30), 1e-30);
    assert_eq!(vmath::sigmoid(f32::INFINITY), 1.0);
    assert_eq!(
        vmath::sigmoid(f32::NEG_INFINITY).to_bits(),
        0.0f32.to_bits()
    );
    assert_eq!(vmath::sigmoid(0.0), 0.5);
    // SiLU as eager's `x / (1 + exp(-x))`: -inf / inf is NaN, signed zeros are kept.
    assert!(vmath::silu(nan).is_nan());
    assert!(vmath::silu(f32::NEG_INFINITY).is_nan());
    assert_eq!(vmath::silu(f32::INFINITY), f32::INFINITY);
    assert_eq!(vmath::silu(f32::MAX), f32::MAX);
    assert_eq!(vmath::silu(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(vmath::silu(0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(vmath::silu(1e-40), 1e-40 / 2.0);
}

#[test]
fn slice_loops_give_the_scalar_bits() {
    let mut xs: Vec<f32> = (0..4099).map(|i| (i as f32 - 2049.0) * 0.0517).collect();
    xs.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        0.0,
        1e-40,
        -1e-40,
        200.0,
        -200.0,
    ]);
    for (func, f) in [
        (Func::Exp, vmath::exp as fn(f32) -> f32),
        (Func::Tanh, vmath::tanh),
        (Func::Sigmoid, vmath::sigmoid),
        (Func::Gelu, vmath::gelu),
        (Func::Silu, vmath::silu),
        (Func::GeluTanh, vmath::gelu_tanh),
    ] {
        let mut out = vec![0.0f32; xs.len()];
        vmath::map(func, &xs, &mut out);
        let mut in_place = xs.clone();
        vmath::map_in_place(func, &mut in_place);
        for (i, &x) in xs.iter().enumerate() {
            let want = f(x);
            assert!(
                out[i].to_bits() == want.to_bits() || (out[i].is_nan() && want.is_nan()),
                "{func:?}({x:e}): slice {:e}, scalar {want:e}",
                out[i]
            );
            assert_eq!(out[i].to_bits(), in_place[i].to_bits(), "{func:?} in place");
        }
    }
    let src: Vec<f32> = (0..40).map(|i| i as f32 * 0.25).collect();
    let mut dst = src.clone();
    let sum = vmath::shifted_exp_sum_in_place(&mut dst, 9.75);
    let want: f32 = src.iter().map(|&v| vmath::exp(v - 9.75)).sum();
    assert!((sum - want).abs() <= 1e-5 * want, "{sum} vs {want}");
    assert_eq!(dst[39], vmath::exp(0.0));
}
