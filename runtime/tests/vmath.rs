//! `vmath`'s exp, tanh and sigmoid against float64 over the whole float32 range (every 251st
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

fn gelu64(x: f64) -> f64 {
    0.5 * x * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

#[test]
fn gelu_is_within_eight_ulps() {
    sweep("gelu", vmath::gelu, gelu64, 8.0, f32::MIN);
}

#[test]
fn gelu_is_close_to_atens_and_keeps_its_classes() {
    // ATen's float32 GELU is itself only within about 3.5e-7 * |x| of the exact value (its
    // vectorized erf is accurate to 1.5e-7 absolute, and `1 + erf` cancels in the negative
    // tail), so the two agree to that bound, not in ulps (docs/parity.md). At x = 2.76,
    // ATen is 4 ulps off and ours 0.4.
    let xs: Vec<f32> = (-40_000..40_000).map(|i| i as f32 * 3.7e-4).collect();
    let t = tch::Tensor::from_slice(&xs);
    let aten = Vec::<f32>::try_from(t.gelu("none")).unwrap();
    let mut worst = (0.0f64, 0.0f32);
    for (&x, &e) in xs.iter().zip(&aten) {
        let d = (f64::from(vmath::gelu(x)) - f64::from(e)).abs() / f64::from(x.abs().max(1.0));
        if d > worst.0 {
            worst = (d, x);
        }
    }
    eprintln!(
        "gelu vs ATen: worst {:.3e} * max(1, |x|) at {:e}",
        worst.0, worst.1
    );
    assert!(worst.0 <= 4e-7, "{worst:?}");
    assert!(vmath::gelu(f32::NAN).is_nan());
    assert!(vmath::gelu(f32::INFINITY).is_nan());
    assert!(vmath::gelu(f32::NEG_INFINITY).is_nan());
    assert_eq!(vmath::gelu(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(vmath::gelu(0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(vmath::gelu(100.0), 100.0);
    assert_eq!(vmath::gelu(-100.0).to_bits(), (-0.0f32).to_bits());
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
