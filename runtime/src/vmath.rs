//! Vectorized float32 `exp`, `tanh`, `sigmoid`, `gelu` and `silu` over slices.
//!
//! Each function is written once as branch-free scalar code (range reduction, a polynomial,
//! selects for the special ranges), which LLVM vectorizes; the slice loops are compiled three
//! times (AVX-512, AVX2, portable) and the best one the CPU has is chosen at run time, so one
//! binary serves every x86-64 machine (and aarch64, where NEON is baseline); GELU's table
//! lookup at oneDNN's `avx512_core` is written with permutes for the AVX-512 and AVX2 loops,
//! where LLVM would emit slow gathers. Polynomials and
//! range reductions use fused multiply-adds (`mul_add`: one instruction where the code is
//! compiled for FMA, the C library's correctly rounded `fmaf` elsewhere), so every path gives
//! the same bits; with them the loops run about 25% faster than with separate multiplies
//! and adds. Code compiled without FMA (the portable path of old x86-64 CPUs, scalar calls
//! outside the slice loops) pays a library call per multiply-add, so hot scalar callers use
//! the slice loops instead.
//!
//! Accuracy, measured against float64 over the whole float32 range by
//! `runtime/tests/vmath.rs`: `exp` within 1 ulp, `tanh` within 2, `sigmoid` within 3 (ATen's
//! SLEEF and MKL versions are within 1 each, so the two differ by at most 4); `silu`,
//! `x / (1 + e^-x)` over `sigmoid`'s `e^-x`, within 3 like it. NaN stays NaN,
//! infinities and signed zeros map as in ATen (`tanh(-0.0) = -0.0`, `exp(-inf) = 0`,
//! `sigmoid(-inf) = 0`), and results that underflow become subnormal rather than flushing.
//! GELU (erf-based, `approximate='none'`) follows the kernel eager runs, which is not ATen's:
//! for a contiguous float32 tensor of two or more elements ATen's `gelu_out_cpu` calls
//! oneDNN's `eltwise_gelu_erf`, whose formula depends on oneDNN's own instruction set
//! (`crate::cpu::onednn_isa`: the CPU, capped by `ONEDNN_MAX_CPU_ISA`; ATen's capability does
//! not change it). [`gelu`] is that kernel bit for bit at each level (measured over all 2^32
//! inputs by the `sweep` example): [`gelu_minimax`] at `avx512_core` (25 degree-5
//! polynomials picked from the float's bits; `gelu(+inf)` is NaN, from 2^127 on the result
//! overflows to +inf) and [`gelu_abramowitz_stegun`] below (erf by Abramowitz and Stegun
//! 7.1.26 with oneDNN's exp; `gelu(+inf) = +inf`, large values stay finite, `gelu(x) = +0.0`
//! where erf rounds to -1), with fused multiply-adds at `avx2` and separate multiplies and adds
//! at `avx` and `sse41`, as oneDNN emulates them. Our own level (`REXTIO_TORCH_ISA`) only
//! picks which compiled loop computes it; the bits are the same in each. A one-element tensor
//! takes ATen's scalar loop, `x * 0.5 * (1 + erf(x / sqrt 2))` with the C library's erf:
//! [`gelu_one`] computes it with an accurate erf (relative error of `erfc` below 1.2e-7),
//! forming `1 + erf` as eager does so that it cancels to -0.0 where eager's does (erf rounds
//! to -1 from about x = -5.54 on): eager's classes, values within about 1.1e-7 * max(1, |x|).
//! A non-contiguous tensor takes ATen's own kernel in eager, which this module does not
//! follow yet (docs/parity.md, "GELU", says where that shows).

const LOG2E: f32 = std::f32::consts::LOG2_E;
// ln 2 split so that `n * LN2_HI` is exact for |n| < 2^9 (Cody and Waite).
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
const ROUNDER: f32 = 12_582_912.0;
/// `ROUNDER.to_bits()`: the bits of `ROUNDER + i` are these plus `i` for |i| < 2^22.
const ROUNDER_BITS: i32 = 0x4B40_0000;
/// Below this magnitude `tanh(x)` rounds to `x` (2^-12).
const TANH_IDENTITY: f32 = 2.441_406_3e-4;
/// Above this `exp` overflows to +inf.
const EXP_MAX: f32 = 88.722_84;
/// Below this `exp` underflows to +0.0.
const EXP_MIN: f32 = -103.972_08;

/// `e^x`, within 1 ulp.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // x = n ln2 + r, |r| <= ln2/2; e^r by a degree-6 polynomial (Cephes expf's
    // coefficients), then scaled by 2^n in two steps so subnormal results stay exact.
    // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer (ties to even) in
    // every vector unit; |x * LOG2E| beyond 2^22 is saturated below anyway.
    let y = exp_unchecked(x);
    let y = if x > EXP_MAX { f32::INFINITY } else { y };
    let y = if x < EXP_MIN { 0.0 } else { y };
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// [`exp`] without its selects for the special ranges: exact to 1 ulp on
/// `[EXP_MIN, EXP_MAX]`, `+inf` up to 89, a subnormal or zero down to -104 and NaN for NaN;
/// callers clamp their argument into `[-104, 89]` (or know it lies there).
#[inline(always)]
fn exp_unchecked(x: f32) -> f32 {
    let n = (x * LOG2E + ROUNDER) - ROUNDER;
    let r = n.mul_add(-LN2_HI, x);
    let r = n.mul_add(-LN2_LO, r);
    scaled_exp(n, r)
}

/// `2^n e^r` for an integral `n` and `|r| <= ln2/2` (a little beyond is fine): the polynomial
/// and scaling of [`exp`], shared with [`exp_split`].
#[inline(always)]
fn scaled_exp(n: f32, r: f32) -> f32 {
    let p = 1.987_569_1e-4_f32;
    let p = p.mul_add(r, 1.398_199_9e-3);
    let p = p.mul_add(r, 8.333_452e-3);
    let p = p.mul_add(r, 4.166_579_6e-2);
    let p = p.mul_add(r, 1.666_666_5e-1);
    let p = p.mul_add(r, 5e-1);
    let p = (p * r).mul_add(r, r) + 1.0;
    // n is in [-150, 128] for finite, non-saturated x (clamped, so the shifts below stay
    // in range). Its integer value is read from the float's bits after adding ROUNDER, not
    // with `as i32`, whose saturating conversion does not vectorize.
    let ni = ((n.clamp(-150.0, 128.0) + ROUNDER).to_bits() as i32).wrapping_sub(ROUNDER_BITS);
    let half = ni >> 1;
    let s1 = f32::from_bits((half.wrapping_add(127) << 23) as u32);
    let s2 = f32::from_bits((ni.wrapping_sub(half).wrapping_add(127) << 23) as u32);
    p * s1 * s2
}

/// `e^(hi + lo)`, within about 1 ulp, where `hi` is exact and may be large (up to ~100) and
/// `lo` is a few units at most: `n ln2` is taken from `hi` alone (exact, as in [`exp`]) and
/// `lo` added to the small remainder, so the rounding of `hi + lo` never enters. GELU's
/// `exp(-z^2 + P(t))` needs this: rounding `-z^2 + P(t)` near -90 would cost ~30 ulps.
#[inline(always)]
fn exp_split(hi: f32, lo: f32) -> f32 {
    let x = hi + lo;
    let n = (x * LOG2E + ROUNDER) - ROUNDER;
    let r = n.mul_add(-LN2_HI, hi);
    let r = n.mul_add(-LN2_LO, r);
    let y = scaled_exp(n, r + lo);
    let y = if x > EXP_MAX { f32::INFINITY } else { y };
    if x < EXP_MIN {
        0.0
    } else {
        y
    }
}

/// `tanh(x)`, within 2 ulps.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let a = x.abs();
    // Small |x|: an odd polynomial (Cephes tanhf), exact for tiny x and signed zeros.
    let z = x * x;
    let p = -5.704_988_7e-3_f32;
    let p = p.mul_add(z, 2.063_909e-2);
    let p = p.mul_add(z, -5.373_971_6e-2);
    let p = p.mul_add(z, 1.333_144_2e-1);
    let p = p.mul_add(z, -3.333_328e-1);
    let small = (p * z).mul_add(x, x);
    // Larger |x|: 1 - 2 / (e^(2|x|) + 1), saturating to 1 (e^(2|x|) = inf gives exactly 1).
    // In range for `exp_unchecked`; a NaN `a` becomes 44 (`min`), and the select below
    // returns the NaN.
    let e = exp_unchecked(2.0 * a.min(44.0));
    let large = 1.0 - 2.0 / (e + 1.0);
    let large = large.copysign(x);
    let y = if a < 0.625 { small } else { large };
    // Below 2^-12, tanh(x) rounds to x; this also keeps the sign of -0.0.
    let y = if a < TANH_IDENTITY { x } else { y };
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `1 / (1 + e^-x)`, as ATen defines sigmoid, within 3 ulps. Like ATen's, it is 0 below
/// about -88.72, where `e^-x` overflows float32 (the exact value is subnormal there).
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    // Clamped into `exp_unchecked`'s range, where it saturates as `exp` does: `+inf` from
    // 89 on (sigmoid 0), at most a subnormal at -104 (sigmoid 1); NaN stays NaN.
    1.0 / (1.0 + exp_unchecked((-x).clamp(-104.0, 89.0)))
}

/// `x / (1 + e^-x)`, SiLU as ATen computes it (not `x * sigmoid(x)`, which rounds twice),
/// within 3 ulps. Below about -88.72 `e^-x` overflows float32 and the result is -0.0, as
/// eager's is (`silu(-inf)` is NaN, `inf / inf`); NaN stays NaN.
#[inline(always)]
pub fn silu(x: f32) -> f32 {
    // The clamp as in `sigmoid`: `exp_unchecked` saturates to +inf from 89 on.
    x / (1.0 + exp_unchecked((-x).clamp(-104.0, 89.0)))
}

/// SiLU as ATen's vectorized loop computes it (AVX2 and AVX-512 capabilities alike):
/// `x / (1 + e^-x)` with SLEEF's `expf_u10` (ATen's `Vectorized<float>::exp`), whose steps
/// this repeats (with fused multiply-adds, as SLEEF's AVX2 and AVX-512 builds have them):
/// `q = rint(d / ln 2)`, `s = d - q ln 2` in two fused steps (ln 2 split as 0.693145751953125
/// and 1.4286068e-6), a degree-6 polynomial in Horner form, `1 + (s^2 u + s)`, scaled by
/// `2^q` in two halves; 0 below -104, +inf above 100, NaN for NaN. Bit for bit against
/// `F.silu` over all 2^32 float32 inputs at ATen's AVX-512 and AVX2 capabilities (through a
/// compiled rank-3 SiLU, docs/parity.md "Threads"; a sample of them in
/// `tests/python/test_rank3.py`); eager's `exp` itself is not this function.
#[inline(always)]
pub fn silu_aten_vector(x: f32) -> f32 {
    x / (1.0 + sleef_expf_u10(-x))
}

/// SiLU as ATen's scalar loop computes it (the tail of a tensor's vector loop, and every
/// element at ATen's `default` capability): `x / (1 + std::exp(-x))`, the C library's
/// `expf`, which Rust's `f32::exp` calls too.
#[inline]
pub fn silu_aten_scalar(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// SLEEF's `xexpf` (`expf_u10`), the function ATen's `Vectorized<float>::exp` calls.
///
/// Attribution: the steps and constants follow SLEEF (`src/libm/sleefsimdsp.c`, Copyright
/// Naoki Shibata and contributors 2010 - 2021), distributed under the Boost Software License,
/// Version 1.0 (<https://www.boost.org/LICENSE_1_0.txt>). Bit-exact constants are what make our
/// SiLU give eager's bits.
#[inline(always)]
fn sleef_expf_u10(d: f32) -> f32 {
    // SLEEF's float32 constants, by their bits.
    const R_LN2: f32 = f32::from_bits(0x3fb8_aa3b);
    const L2U: f32 = f32::from_bits(0x3f31_7200);
    const L2L: f32 = f32::from_bits(0x35bf_be8e);
    const C: [f32; 5] = [
        f32::from_bits(0x39502bda),
        f32::from_bits(0x3ab696c9),
        f32::from_bits(0x3c0888a6),
        f32::from_bits(0x3d2aaa7a),
        f32::from_bits(0x3e2aaaab),
    ];
    // Outside [-104, 100] the result is a constant (selected below), so the reduction may
    // see a clamped argument: `q` then stays in [-151, 145], where both halves of 2^q are
    // normal floats. Rounding to nearest, ties to even, as `cvtps2dq` does.
    let c = d.clamp(-105.0, 101.0);
    let rounded = c * R_LN2 + ROUNDER;
    let qf = rounded - ROUNDER;
    // The integer from the float's bits (ROUNDER_BITS), which vectorizes where a cast
    // would not.
    let q = (rounded.to_bits() as i32).wrapping_sub(ROUNDER_BITS);
    let s = qf.mul_add(-L2U, c);
    let s = qf.mul_add(-L2L, s);
    let mut u = C[0];
    u = u.mul_add(s, C[1]);
    u = u.mul_add(s, C[2]);
    u = u.mul_add(s, C[3]);
    u = u.mul_add(s, C[4]);
    u = u.mul_add(s, 0.5);
    let u = 1.0 + (s * s).mul_add(u, s);
    let pow2 = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let u = u * pow2(q >> 1) * pow2(q - (q >> 1));
    let u = if d < -104.0 { 0.0 } else { u };
    let u = if d > 100.0 { f32::INFINITY } else { u };
    if d.is_nan() {
        d
    } else {
        u
    }
}

/// `x * 0.5 * (1 + erf(x / sqrt 2))` as ATen's scalar loop computes it (a one-element
/// tensor): NaN for NaN and -inf, +inf for +inf.
///
/// `erfc(z) = t exp(-z^2) exp(P(t))`, `t = 1/(1 + z/2)`, `z = |x|/sqrt 2` (the Chebyshev fit
/// of Numerical Recipes' `erfcc`, relative error below 1.2e-7 for every z >= 0). `z^2 = x^2/2`
/// is split as `hi^2/2 + (hi lo + lo^2/2)` with `hi` the top 12 bits of `|x|`: the large part
/// is exact, so `exp(-z^2)` does not lose the relative accuracy that rounding `z^2` (up to
/// ~90) would cost. Then `1 + erf(x/sqrt 2)` is formed as eager forms it: `2 - erfc(z)` for
/// x >= 0, and `1 - (1 - erfc(z))` for x < 0, where rounding `erf = -(1 - erfc)` to float32
/// first is what makes eager's result -0.0 once erf rounds to -1.
#[inline(always)]
pub fn gelu_one(x: f32) -> f32 {
    // erfc(z) is 0 in float32 beyond z ~ 10.05; clamping keeps `hi`/`lo` finite for inf
    // (a NaN `a` stays NaN through the compare, and so does the result).
    let a = x.abs();
    let a = if a > GELU_CLAMP { GELU_CLAMP } else { a };
    let z = a * std::f32::consts::FRAC_1_SQRT_2;
    let t = 1.0 / (0.5 * z + 1.0);
    let p = 1.708_727_7e-1_f32;
    let p = p.mul_add(t, -8.221_522_3e-1);
    let p = p.mul_add(t, 1.488_515_9);
    let p = p.mul_add(t, -1.135_204);
    let p = p.mul_add(t, 2.788_680_7e-1);
    let p = p.mul_add(t, -1.862_880_6e-1);
    let p = p.mul_add(t, 9.678_418e-2);
    let p = p.mul_add(t, 3.740_919_6e-1);
    let p = p.mul_add(t, 1.000_023_7);
    let p = p.mul_add(t, -1.265_512_2);
    let hi = f32::from_bits(a.to_bits() & 0xFFFF_F000);
    let lo = a - hi;
    let big = (hi * hi) * 0.5;
    let small = hi * lo + (lo * lo) * 0.5;
    let erfc = exp_split(-big, p - small) * t;
    let one_plus_erf = if x < 0.0 {
        1.0 - (1.0 - erfc)
    } else {
        2.0 - erfc
    };
    (x * 0.5) * one_plus_erf
}

/// `gelu(x)` (erf-based) as eager computes it for a contiguous float32 tensor of two or more
/// elements: oneDNN's `eltwise_gelu_erf` at the level oneDNN runs in this process
/// ([`crate::cpu::onednn_isa`]), bit for bit ([`gelu_minimax`] at `avx512_core`,
/// [`gelu_abramowitz_stegun`] below). Without a JIT level (not x86-64, or no SSE4.1) oneDNN's
/// reference kernel computes `0.5 x (1 + erff(x / sqrt 2))`, which [`gelu_one`] follows in
/// formula and class, not bit for bit (untested: no such machine here). Slice loops resolve
/// the formula once ([`map`]); this scalar form asks per call.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    match crate::cpu::onednn_isa() {
        OnednnIsa::Avx512Core => gelu_minimax(x),
        OnednnIsa::Avx2 => gelu_abramowitz_stegun::<true>(x),
        OnednnIsa::Avx | OnednnIsa::Sse41 => gelu_abramowitz_stegun::<false>(x),
        OnednnIsa::Reference => gelu_one(x),
    }
}

/// Beyond this |x|, `erfc(|x|/sqrt 2)` is 0 in float32 (and `gelu_one(x)` is `x` or `-0.0`).
const GELU_CLAMP: f32 = 16.0;

/// `a * b + c`, fused (one rounding) where oneDNN's kernel has FMA (`FMA`), a multiply and an
/// add (two roundings) where it emulates `vfmadd` on SSE4.1 and AVX. `mul_add` is a fused
/// multiply-add whatever our own loop is compiled for, so the bits never depend on it.
#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// x86's `minps(a, b)`: `a < b ? a : b` (`b` when either is NaN), as oneDNN's kernels clamp.
#[inline(always)]
fn x86_min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// x86's `maxps(a, b)`: `a > b ? a : b` (`b` when either is NaN).
#[inline(always)]
fn x86_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// oneDNN's `exp_compute_vector_fwd` (its JIT eltwise injector), step for step: clamp to
/// `[ln FLT_MIN, ln FLT_MAX]` (a NaN becomes `ln FLT_MAX`, as `minps` gives), `n = floor(x
/// log2 e + 1/2)`, `r = x - n ln 2` (one fused step with FMA), a degree-5 polynomial, times
/// `2^(n-1)` built from the exponent bits (0 below `ln FLT_MIN`), times 2. Only GELU uses it:
/// eager's `exp` is ATen's own (Sleef), which [`exp`] follows.
#[inline(always)]
fn onednn_exp<const FMA: bool>(x: f32) -> f32 {
    const LN_FLT_MAX: f32 = f32::from_bits(0x42b1_7218);
    const LN_FLT_MIN: f32 = f32::from_bits(0xc2ae_ac50);
    const LOG2EF: f32 = f32::from_bits(0x3fb8_aa3b);
    const LN2F: f32 = f32::from_bits(0x3f31_7218);
    const P1: f32 = f32::from_bits(0x3f7f_fffb);
    const P2: f32 = f32::from_bits(0x3eff_fee3);
    const P3: f32 = f32::from_bits(0x3e2a_ad40);
    const P4: f32 = f32::from_bits(0x3d2b_9d0d);
    const P5: f32 = f32::from_bits(0x3c07_cfce);
    let underflow = x < LN_FLT_MIN;
    let x = x86_max(x86_min(x, LN_FLT_MAX), LN_FLT_MIN);
    // floor(v), exact either way for |v| < 2^22 (here |v| < 129). With FMA (oneDNN's avx2)
    // our loop is one of the AVX2/AVX-512 ones, where `floor` is one `vroundps` as in
    // oneDNN's JIT code (only a forced portable loop pays a library call, as it does for
    // `mul_add`). Without, the loop may be plain SSE2, where `floor` is a call: round to
    // nearest through ROUNDER (exact), then step down where that went up.
    let v = x * LOG2EF + 0.5;
    let n = if FMA {
        v.floor()
    } else {
        let nearest = (v + ROUNDER) - ROUNDER;
        if nearest > v {
            nearest - 1.0
        } else {
            nearest
        }
    };
    // `vfnmadd231ps`: x - n ln2, fused with FMA; a rounded product subtracted without.
    let r = if FMA {
        (-n).mul_add(LN2F, x)
    } else {
        x - n * LN2F
    };
    // n - 1 is an integer in [-127, 127]: its float bits give it exactly (no saturating
    // `as i32`, which does not vectorize).
    let k = ((n - 1.0 + ROUNDER).to_bits() as i32).wrapping_sub(ROUNDER_BITS);
    let scale = f32::from_bits((k.wrapping_add(127) << 23) as u32);
    let scale = if underflow { 0.0 } else { scale };
    let p = madd::<FMA>(P5, r, P4);
    let p = madd::<FMA>(p, r, P3);
    let p = madd::<FMA>(p, r, P2);
    let p = madd::<FMA>(p, r, P1);
    let p = madd::<FMA>(p, r, 1.0);
    p * scale * 2.0
}

/// GELU as oneDNN's `gelu_erf_compute_vector_fwd` computes it below `avx512_core`
/// (Abramowitz and Stegun 7.1.26 for erf, with [`onednn_exp`]): `z = x / sqrt 2`,
/// `t = 1 / (p |z| + 1)`, `erf = sign(x) (1 - t exp(-z^2) P(t))`, then
/// `0.5 x + 0.5 x erf` as one multiply-add. With `FMA` (oneDNN's `avx2`) each multiply-add
/// is fused; without (its `sse41` and `avx`) it is a multiply and an add. The classes follow:
/// `gelu(+inf) = +inf`, `gelu(-inf)` NaN, `gelu(x) = +0.0` once erf rounds to -1 (about
/// x <= -5.4), large x stay finite.
#[inline(always)]
pub fn gelu_abramowitz_stegun<const FMA: bool>(x: f32) -> f32 {
    const P: f32 = f32::from_bits(0x3ea7_ba05);
    const FRAC_1_SQRT_2: f32 = f32::from_bits(0x3f35_04f3);
    const A1: f32 = f32::from_bits(0x3e82_7906);
    const A2: f32 = f32::from_bits(0xbe91_a98e);
    const A3: f32 = f32::from_bits(0x3fb5_f0e3);
    const A4: f32 = f32::from_bits(0xbfba_00e3);
    const A5: f32 = f32::from_bits(0x3f87_dc22);
    let z = x * FRAC_1_SQRT_2;
    let t = 1.0 / madd::<FMA>(P, z.abs(), 1.0);
    let e = -onednn_exp::<FMA>(-(z * z));
    let et = e * t;
    let r = madd::<FMA>(A5, t, A4);
    let r = madd::<FMA>(r, t, A3);
    let r = madd::<FMA>(r, t, A2);
    let r = madd::<FMA>(r, t, A1);
    let erf = madd::<FMA>(et, r, 1.0);
    let erf = f32::from_bits(erf.to_bits() ^ (x.to_bits() & 0x8000_0000));
    let half = x * 0.5;
    madd::<FMA>(erf, half, half)
}

/// oneDNN's minimax table for erf at `avx512_core` (`gelu_erf_minimax_pol`): 25 degree-5
/// polynomials in `|x|` (coefficient `k` of polynomial `i` at `[k][i]`; padded to 32 as in
/// oneDNN, so that an index fits a permute of two 16-lane registers).
///
/// Attribution: this table, `GELU_MINIMAX_IDX_BIAS`, `GELU_MINIMAX_RBOUND` and the constants of
/// `onednn_exp` and `gelu_abramowitz_stegun` are copied from oneDNN
/// (`src/cpu/x64/injectors/jit_uni_eltwise_injector.cpp`, Copyright 2019-2025 Intel
/// Corporation), licensed under the Apache License, Version 2.0
/// (<http://www.apache.org/licenses/LICENSE-2.0>). Bit-exact copies are what make our GELU give
/// eager's bits.
static GELU_MINIMAX: [[u32; 32]; 6] = [
    [
        0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229,
        0x37b8a3bb, 0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b,
        0x3c515ed3, 0xbb503236, 0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced,
        0x3f470d99, 0x3f7abb28, 0x3f800000, 0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f,
        0x3f4c2d40, 0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07,
        0x3f3b980f, 0x3f48dff3, 0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e,
        0x3e6c8684, 0x3c98f936, 0, 0x3f800000, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb,
        0x3af9b960, 0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660,
        0x3e0f27ab, 0x3d94004b, 0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8,
        0xbdc4f8a8, 0xbbde6422, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0,
        0xbe0e400a, 0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f,
        0xbe96cbca, 0xbe8044aa, 0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91,
        0x3ca46568, 0x3aa1e00a, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527,
        0x3c221712, 0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910,
        0x3dd53f69, 0x3db7dcef, 0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab,
        0xbb097a32, 0xb8ebf380, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623,
        0x3c4c824b, 0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366,
        0xbc492c9e, 0xbc2a7aa6, 0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792,
        0x38b84375, 0x3689bb5a, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ],
];

/// oneDNN's `gelu_erf_idx_bias`: added to the bits of |x| before the shift that picks a
/// polynomial (two mantissa bits per binade).
const GELU_MINIMAX_IDX_BIAS: i32 = 0xc21f_ffff_u32 as i32;
/// oneDNN's `gelu_erf_rbound` (5.5425): beyond it erf is the constant 1 (polynomial 23).
const GELU_MINIMAX_RBOUND: f32 = f32::from_bits(0x40b1_5cee);

/// GELU as oneDNN's `gelu_erf_minimax_approx_compute_vector_fwd` computes it at
/// `avx512_core`: erf(|x| / sqrt 2) (scaled into the polynomials) by one of 25 degree-5
/// polynomials in `|x|`, picked from the float's bits (`(bits(|x|) + 0xc21fffff) >> 21`,
/// arithmetic, clamped to [1, 24]; 23, the constant 1, beyond 5.5425), the sign put back,
/// then `x (1 + erf) * 0.5`. The classes follow: `gelu(+inf)` is NaN (`0 * inf` in the
/// polynomial), from 2^127 on the result overflows to +inf, `gelu(x) = -0.0` for
/// x <= -5.5425.
#[inline(always)]
pub fn gelu_minimax(x: f32) -> f32 {
    let bits = x.to_bits();
    let a_bits = bits & 0x7fff_ffff;
    let a = f32::from_bits(a_bits);
    let i = ((a_bits as i32).wrapping_add(GELU_MINIMAX_IDX_BIAS) >> 21).clamp(1, 24);
    // `RBOUND < a` is false for NaN, which keeps index 24 (the identity polynomial).
    let i = if GELU_MINIMAX_RBOUND < a { 23 } else { i } as usize;
    let c = |k: usize| f32::from_bits(GELU_MINIMAX[k][i & 31]);
    let p = c(5).mul_add(a, c(4));
    let p = p.mul_add(a, c(3));
    let p = p.mul_add(a, c(2));
    let p = p.mul_add(a, c(1));
    let p = p.mul_add(a, c(0));
    let p = f32::from_bits(p.to_bits() ^ (bits & 0x8000_0000));
    x * (p + 1.0) * 0.5
}

/// `sqrt(2/pi)` and the cube's coefficient of GELU's tanh approximation, as ATen rounds them
/// to float32 (`kGeluBeta = M_SQRT2 * M_2_SQRTPI * 0.5`, `kGeluKappa = 0.044715`).
const GELU_TANH_BETA: f32 = 0.797_884_6;
const GELU_TANH_KAPPA: f32 = 0.044_715;

/// From here on (in |x|) Sleef's `tanhf` (ATen's vectorized tanh, `Sleef_tanhf16_u10`)
/// returns exactly +-1, where the correctly rounded value is `1 - 2^-24` up to about 9.01:
/// GELU's `1 + tanh` is then exactly 0 (the result -0.0 for negative x) as eager's is.
/// (Sleef writes `8.664339742f`, the same float32.)
const SLEEF_TANH_SATURATES: f32 = 8.664_34;

/// GELU's tanh approximation as ATen's vectorized loop computes it:
/// `0.5 x (1 + tanh(beta (x + kappa x^3)))`, `x^3` as `(x x) x`, each operation rounded to
/// float32 once (no fused multiply-add), with [`tanh`] saturating where Sleef's does. Its
/// value is within a few ulps of eager's but for the cancellation of `1 + tanh` for x below
/// about -2, where the two agree to an absolute 2^-23 |x| (docs/parity.md); its class is
/// eager's vectorized loop's.
#[inline(always)]
pub fn gelu_tanh(x: f32) -> f32 {
    let cube = x * x * x;
    let inner = GELU_TANH_BETA * (x + GELU_TANH_KAPPA * cube);
    let t = tanh(inner);
    // NaN compares false and keeps `t`'s NaN.
    let t = if inner.abs() > SLEEF_TANH_SATURATES {
        1.0f32.copysign(inner)
    } else {
        t
    };
    0.5 * x * (1.0 + t)
}

/// GELU's tanh approximation as ATen's scalar loop computes it (a tensor's last elements
/// past its vector loop's whole chunks, `crate::cpu::aten_vector_chunk`): the C library's
/// `tanhf` (what `f32::tanh` calls, and eager's `std::tanh`) and the compiler's contraction
/// of `x + kappa * x^3` into one fused multiply-add. Bit for bit eager's on glibc.
#[inline]
pub fn gelu_tanh_one(x: f32) -> f32 {
    let cube = x * x * x;
    let inner = GELU_TANH_BETA * GELU_TANH_KAPPA.mul_add(cube, x);
    0.5 * x * (1.0 + inner.tanh())
}

/// The instruction set the slice loops run with, and oneDNN's (which picks GELU's formula).
use crate::cpu::{level, Level, OnednnIsa};

/// Which elementwise function a slice loop applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Exp,
    Tanh,
    Sigmoid,
    /// Eager's GELU of a contiguous tensor of two or more elements ([`gelu`]: oneDNN's
    /// kernel at its level in this process).
    Gelu,
    /// ATen's scalar GELU loop ([`gelu_one`]): a one-element tensor.
    GeluOne,
    /// [`silu`].
    Silu,
    /// [`gelu_tanh`] (eager's vectorized loop; its scalar loop is [`gelu_tanh_one`], not a
    /// vector loop).
    GeluTanh,
    /// [`silu_aten_vector`]: eager's vectorized SiLU loop, bit for bit (its scalar loop is
    /// [`silu_aten_scalar`], not a vector loop).
    SiluAten,
}

// Plain index loops, not iterator adapters: an adapter's `fold` may stay out of line, and
// then it is compiled without the caller's target features (scalar code).
#[inline(always)]
fn map_body(f: Func, src: &[f32], dst: &mut [f32]) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    match f {
        Func::Exp => {
            for i in 0..n {
                dst[i] = exp(src[i]);
            }
        }
        Func::Tanh => {
            for i in 0..n {
                dst[i] = tanh(src[i]);
            }
        }
        Func::Sigmoid => {
            for i in 0..n {
                dst[i] = sigmoid(src[i]);
            }
        }
        // The formula is resolved once per call, so each loop is one straight-line body.
        Func::Gelu => match crate::cpu::onednn_isa() {
            OnednnIsa::Avx512Core => {
                for i in 0..n {
                    dst[i] = gelu_minimax(src[i]);
                }
            }
            OnednnIsa::Avx2 => {
                for i in 0..n {
                    dst[i] = gelu_abramowitz_stegun::<true>(src[i]);
                }
            }
            OnednnIsa::Avx | OnednnIsa::Sse41 => {
                for i in 0..n {
                    dst[i] = gelu_abramowitz_stegun::<false>(src[i]);
                }
            }
            OnednnIsa::Reference => {
                for i in 0..n {
                    dst[i] = gelu_one(src[i]);
                }
            }
        },
        Func::GeluOne => {
            for i in 0..n {
                dst[i] = gelu_one(src[i]);
            }
        }
        Func::Silu => {
            for i in 0..n {
                dst[i] = silu(src[i]);
            }
        }
        Func::SiluAten => {
            for i in 0..n {
                dst[i] = silu_aten_vector(src[i]);
            }
        }
        Func::GeluTanh => {
            for i in 0..n {
                dst[i] = gelu_tanh(src[i]);
            }
        }
    }
}

#[inline(always)]
fn shifted_exp_sum_in_place_body(data: &mut [f32], shift: f32) -> f32 {
    // Two passes over the row (in L1): exponentiating and summing in one loop kept the
    // lanes in memory and LLVM left the whole loop scalar (2 ns per element).
    for v in data.iter_mut() {
        *v = exp(*v - shift);
    }
    lane_sum(data)
}

/// The sum of `data` in 16 lanes (element `i` into lane `i % 16`), the lanes then pairwise.
#[inline(always)]
fn lane_sum(data: &[f32]) -> f32 {
    let n = data.len();
    let mut lanes = [0.0f32; 16];
    let full = n / 16 * 16;
    for base in (0..full).step_by(16) {
        for l in 0..16 {
            lanes[l] += data[base + l];
        }
    }
    for i in full..n {
        lanes[i - full] += data[i];
    }
    crate::sum::sum_pairwise(&lanes)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;

    /// # Safety
    /// The CPU must have AVX-512F, AVX-512DQ, AVX2 and FMA (`crate::cpu::level()` is
    /// `Avx512`). The same holds for every `_avx512` function here, and AVX2 and FMA
    /// (`Avx2` or above) for every `_avx2` one.
    #[target_feature(enable = "avx512f,avx512dq,avx2,fma")]
    pub(super) unsafe fn map_avx512(f: Func, src: &[f32], dst: &mut [f32]) {
        map_body(f, src, dst)
    }

    /// # Safety
    /// The CPU must have AVX2 and FMA (`crate::cpu::level()` is at least `Avx2`).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn map_avx2(f: Func, src: &[f32], dst: &mut [f32]) {
        map_body(f, src, dst)
    }

    /// [`gelu_minimax`] over a slice with AVX-512 intrinsics, 16 values at a time (the last
    /// chunk masked): each coefficient is one `vpermt2ps` of its two 16-entry table halves, as
    /// in oneDNN's kernel, where LLVM would otherwise emit six gathers (measured 7x slower).
    /// The same operations in the same order as the scalar function, so the same bits.
    ///
    /// # Safety
    /// As [`map_avx512`].
    #[target_feature(enable = "avx512f,avx512dq,avx2,fma")]
    pub(super) unsafe fn gelu_minimax_avx512(src: &[f32], dst: &mut [f32]) {
        use std::arch::x86_64::*;
        let n = src.len().min(dst.len());
        // SAFETY: each table row holds 32 floats; the loads read its two halves.
        let table: [[__m512; 2]; 6] = std::array::from_fn(|k| unsafe {
            let row = GELU_MINIMAX[k].as_ptr() as *const f32;
            [_mm512_loadu_ps(row), _mm512_loadu_ps(row.add(16))]
        });
        let one_lane = |x: __m512| -> __m512 {
            let bits = _mm512_castps_si512(x);
            let a_bits = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fff_ffff));
            let a = _mm512_castsi512_ps(a_bits);
            let i = _mm512_srai_epi32::<21>(_mm512_add_epi32(
                a_bits,
                _mm512_set1_epi32(GELU_MINIMAX_IDX_BIAS),
            ));
            let i = _mm512_min_epi32(
                _mm512_max_epi32(i, _mm512_set1_epi32(1)),
                _mm512_set1_epi32(24),
            );
            let beyond = _mm512_cmp_ps_mask::<_CMP_LT_OS>(_mm512_set1_ps(GELU_MINIMAX_RBOUND), a);
            let i = _mm512_mask_mov_epi32(i, beyond, _mm512_set1_epi32(23));
            let c = |k: usize| _mm512_permutex2var_ps(table[k][0], i, table[k][1]);
            let p = _mm512_fmadd_ps(c(5), a, c(4));
            let p = _mm512_fmadd_ps(p, a, c(3));
            let p = _mm512_fmadd_ps(p, a, c(2));
            let p = _mm512_fmadd_ps(p, a, c(1));
            let p = _mm512_fmadd_ps(p, a, c(0));
            let sign = _mm512_and_si512(bits, _mm512_set1_epi32(i32::MIN));
            let p = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(p), sign));
            let y = _mm512_mul_ps(x, _mm512_add_ps(p, _mm512_set1_ps(1.0)));
            _mm512_mul_ps(y, _mm512_set1_ps(0.5))
        };
        let full = n / 16 * 16;
        let mut at = 0;
        while at < full {
            // SAFETY: `at + 16 <= n`, within both slices.
            unsafe {
                let x = _mm512_loadu_ps(src.as_ptr().add(at));
                _mm512_storeu_ps(dst.as_mut_ptr().add(at), one_lane(x));
            }
            at += 16;
        }
        if full < n {
            let mask = ((1u32 << (n - full)) - 1) as __mmask16;
            // SAFETY: the masked load and store touch only the elements `full..n` of both
            // slices.
            unsafe {
                let x = _mm512_maskz_loadu_ps(mask, src.as_ptr().add(full));
                _mm512_mask_storeu_ps(dst.as_mut_ptr().add(full), mask, one_lane(x));
            }
        }
    }

    /// [`gelu_minimax`] over a slice with AVX2 intrinsics, 8 values at a time (the rest by
    /// the scalar function): each coefficient is four `vpermps` of the table's 8-entry
    /// quarters and three blends on bits 3 and 4 of the index, where LLVM would otherwise
    /// emit six gathers. This is our AVX2 loop where oneDNN runs its AVX-512 kernel (a
    /// forced `REXTIO_TORCH_ISA=avx2`). The same operations as the scalar function, so the
    /// same bits.
    ///
    /// # Safety
    /// As [`map_avx2`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gelu_minimax_avx2(src: &[f32], dst: &mut [f32]) {
        use std::arch::x86_64::*;
        let n = src.len().min(dst.len());
        // SAFETY: each table row holds 32 floats; the loads read its four quarters.
        let table: [[__m256; 4]; 6] = std::array::from_fn(|k| unsafe {
            let row = GELU_MINIMAX[k].as_ptr() as *const f32;
            std::array::from_fn(|q| _mm256_loadu_ps(row.add(8 * q)))
        });
        let one_lane = |x: __m256| -> __m256 {
            let bits = _mm256_castps_si256(x);
            let a_bits = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fff_ffff));
            let a = _mm256_castsi256_ps(a_bits);
            let i = _mm256_srai_epi32::<21>(_mm256_add_epi32(
                a_bits,
                _mm256_set1_epi32(GELU_MINIMAX_IDX_BIAS),
            ));
            let i = _mm256_min_epi32(
                _mm256_max_epi32(i, _mm256_set1_epi32(1)),
                _mm256_set1_epi32(24),
            );
            let beyond = _mm256_cmp_ps::<_CMP_LT_OS>(_mm256_set1_ps(GELU_MINIMAX_RBOUND), a);
            let i = _mm256_blendv_epi8(i, _mm256_set1_epi32(23), _mm256_castps_si256(beyond));
            // Bits 3 and 4 of the index moved to the sign bit, which `blendv` reads.
            let b3 = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(i));
            let b4 = _mm256_castsi256_ps(_mm256_slli_epi32::<27>(i));
            let c = |k: usize| {
                let t = &table[k];
                let q01 = _mm256_blendv_ps(
                    _mm256_permutevar8x32_ps(t[0], i),
                    _mm256_permutevar8x32_ps(t[1], i),
                    b3,
                );
                let q23 = _mm256_blendv_ps(
                    _mm256_permutevar8x32_ps(t[2], i),
                    _mm256_permutevar8x32_ps(t[3], i),
                    b3,
                );
                _mm256_blendv_ps(q01, q23, b4)
            };
            let p = _mm256_fmadd_ps(c(5), a, c(4));
            let p = _mm256_fmadd_ps(p, a, c(3));
            let p = _mm256_fmadd_ps(p, a, c(2));
            let p = _mm256_fmadd_ps(p, a, c(1));
            let p = _mm256_fmadd_ps(p, a, c(0));
            let sign = _mm256_and_si256(bits, _mm256_set1_epi32(i32::MIN));
            let p = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(p), sign));
            let y = _mm256_mul_ps(x, _mm256_add_ps(p, _mm256_set1_ps(1.0)));
            _mm256_mul_ps(y, _mm256_set1_ps(0.5))
        };
        let full = n / 8 * 8;
        let mut at = 0;
        while at < full {
            // SAFETY: `at + 8 <= n`, within both slices.
            unsafe {
                let x = _mm256_loadu_ps(src.as_ptr().add(at));
                _mm256_storeu_ps(dst.as_mut_ptr().add(at), one_lane(x));
            }
            at += 8;
        }
        for i in full..n {
            dst[i] = gelu_minimax(src[i]);
        }
    }

    /// # Safety
    /// As [`map_avx512`].
    #[target_feature(enable = "avx512f,avx512dq,avx2,fma")]
    pub(super) unsafe fn shifted_exp_sum_in_place_avx512(data: &mut [f32], shift: f32) -> f32 {
        shifted_exp_sum_in_place_body(data, shift)
    }

    /// # Safety
    /// As [`map_avx2`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn shifted_exp_sum_in_place_avx2(data: &mut [f32], shift: f32) -> f32 {
        shifted_exp_sum_in_place_body(data, shift)
    }
}

/// `dst[i] = f(src[i])` (the slices must have one length; extra elements are left alone).
pub fn map(f: Func, src: &[f32], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if f == Func::Gelu && crate::cpu::onednn_isa() == OnednnIsa::Avx512Core {
        match level() {
            Level::Avx512 => {
                // SAFETY: the level is AVX-512 only where the CPU has AVX-512F, DQ, AVX2 and
                // FMA (`crate::cpu`), a superset of the function's target features.
                unsafe { x86::gelu_minimax_avx512(src, dst) };
                return;
            }
            Level::Avx2 => {
                // SAFETY: the level is AVX2 only where the CPU has AVX2 and FMA
                // (`crate::cpu`), the function's target features.
                unsafe { x86::gelu_minimax_avx2(src, dst) };
                return;
            }
            Level::Portable => {}
        }
    }
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => {
            // SAFETY: the level is AVX-512 only where the CPU has AVX-512F, DQ, AVX2 and FMA
            // (`crate::cpu`), a superset of the function's target features; it has no other
            // requirement.
            unsafe { x86::map_avx512(f, src, dst) }
        }
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => {
            // SAFETY: the level is AVX2 only where the CPU has AVX2 and FMA (`crate::cpu`), a
            // superset of the function's target features; it has no other requirement.
            unsafe { x86::map_avx2(f, src, dst) }
        }
        _ => map_body(f, src, dst),
    }
}

/// `f` in place.
pub fn map_in_place(f: Func, data: &mut [f32]) {
    // Elementwise, so reading and writing the same element is fine; a copy of the source
    // pointer avoids aliasing `&` and `&mut` borrows.
    let len = data.len();
    let mut chunk = [0.0f32; 256];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(chunk.len());
        chunk[..n].copy_from_slice(&data[at..at + n]);
        map(f, &chunk[..n], &mut data[at..at + n]);
        at += n;
    }
}

/// `data[i] = exp(data[i] - shift)`, returning their sum (in 16 lanes, then pairwise): a
/// softmax row after its maximum.
pub fn shifted_exp_sum_in_place(data: &mut [f32], shift: f32) -> f32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => {
            // SAFETY: the level is AVX-512 only where the CPU has AVX-512F, DQ, AVX2 and FMA
            // (`crate::cpu`), a superset of the function's target features; it has no other
            // requirement.
            unsafe { x86::shifted_exp_sum_in_place_avx512(data, shift) }
        }
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => {
            // SAFETY: the level is AVX2 only where the CPU has AVX2 and FMA (`crate::cpu`), a
            // superset of the function's target features; it has no other requirement.
            unsafe { x86::shifted_exp_sum_in_place_avx2(data, shift) }
        }
        _ => shifted_exp_sum_in_place_body(data, shift),
    }
}
