//! The `math` module's functions on Python scalars (`math.sqrt(d)`, `math.exp(t)`), computed
//! and raising exactly as CPython 3.11's `mathmodule.c` does, for the executor and for
//! generated code alike (both reach them through `scalar::unary`, which converts the
//! operand; this module sees only `f64` and `i64`, so it sits below [`crate::scalar`]).
//!
//! - The float functions (`sqrt`, `exp`, `log`, `tanh`, `fabs`) convert an int or bool to a
//!   float first (correctly rounded, as `PyLong_AsDouble`: Rust's `i64 as f64` rounds to
//!   nearest, ties to even), call the platform libm (Rust's `f64::sqrt`/`exp`/`ln`/`tanh`
//!   are the C library's `sqrt`/`exp`/`log`/`tanh`, the functions CPython calls), then apply
//!   CPython's `math_1` checks: a NaN result from a non-NaN input is `ValueError: math domain
//!   error`; an infinite result from a finite input is `OverflowError: math range error`
//!   where the function can overflow (`exp`), else `ValueError: math domain error` (`log(0)`).
//!   Underflow to zero or a subnormal is a result, not an error (CPython's `is_error`).
//! - `log` of an int (or bool) is CPython's `loghelper`: zero and below are `ValueError:
//!   math domain error` before any conversion. Compiled ints are 64-bit, so the int always
//!   converts (CPython's big-int path and its `OverflowError: int too large to convert to
//!   float` are for ints the boundary never admits).
//! - `floor`/`ceil` of an int or bool is the int; of a float it is CPython's
//!   `PyLong_FromDouble(floor(x))`: `OverflowError: cannot convert float infinity to integer`,
//!   `ValueError: cannot convert float NaN to integer`, and an `OverflowError` of ours when
//!   the integral value leaves 64 bits (a Python int there; compiled ints end at 64 bits, as
//!   the scalar arithmetic's do).

use rextio_ir::ScalarUnaryOp;

/// A `math` function's error, as CPython raises it (`crate::scalar` turns it into the
/// crate's `RuntimeError`; this module imports nothing of the crate's, so it sits
/// at layer 0 beside the error module).
#[derive(Clone, Debug, PartialEq)]
pub enum MathError {
    /// `ValueError: <message>`.
    Value(String),
    /// `OverflowError: <message>`.
    Overflow(String),
}

type Result<T> = std::result::Result<T, MathError>;

fn domain_error() -> MathError {
    MathError::Value("math domain error".to_string())
}

/// CPython's `math_1`: `func` over `x` with its NaN/infinity checks.
fn math_1(x: f64, func: fn(f64) -> f64, can_overflow: bool) -> Result<f64> {
    let r = func(x);
    if r.is_nan() && !x.is_nan() {
        return Err(domain_error());
    }
    if r.is_infinite() && x.is_finite() {
        return Err(if can_overflow {
            MathError::Overflow("math range error".to_string())
        } else {
            domain_error()
        });
    }
    Ok(r)
}

/// `math.<op>(x)` of a float operand (an int or bool converted first, by the caller, as
/// CPython's `PyFloat_AsDouble` does), for the float-valued `math` ops of
/// [`ScalarUnaryOp`]; `None` for the others.
pub fn float_fn(op: ScalarUnaryOp, x: f64) -> Option<Result<f64>> {
    Some(match op {
        ScalarUnaryOp::Sqrt => math_1(x, f64::sqrt, false),
        ScalarUnaryOp::Exp => math_1(x, f64::exp, true),
        ScalarUnaryOp::Tanh => math_1(x, f64::tanh, false),
        ScalarUnaryOp::Fabs => math_1(x, f64::abs, false),
        ScalarUnaryOp::Log => math_1(x, f64::ln, false),
        _ => return None,
    })
}

/// `math.log(i)` of an int (or bool): CPython's `loghelper`, zero and below a domain error
/// before any conversion.
pub fn log_int(i: i64) -> Result<f64> {
    if i <= 0 {
        return Err(domain_error());
    }
    Ok((i as f64).ln())
}

/// `math.floor(x)` / `math.ceil(x)` of a float (`ceil` when `up`):
/// `PyLong_FromDouble(round(x))`, within 64 bits. Of an int, both are the int itself (the
/// caller's case).
pub fn round_to_int(x: f64, up: bool) -> Result<i64> {
    let (round, name): (fn(f64) -> f64, &str) = if up {
        (f64::ceil, "ceil")
    } else {
        (f64::floor, "floor")
    };
    if x.is_nan() {
        return Err(MathError::Value(
            "cannot convert float NaN to integer".to_string(),
        ));
    }
    if x.is_infinite() {
        return Err(MathError::Overflow(
            "cannot convert float infinity to integer".to_string(),
        ));
    }
    let r = round(x);
    // 2^63 as a float: every integral float in [-2^63, 2^63) is an i64, exactly.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if (-TWO_63..TWO_63).contains(&r) {
        Ok(r as i64)
    } else {
        Err(MathError::Overflow(format!(
            "rextio-torch: integer overflow in math.{name}({}) (compiled ints are 64-bit)",
            python_float_repr(x)
        )))
    }
}

/// A float as Python's `repr` writes the large finite values that reach this message
/// (`1e+300`, `9.3e+18`): shortest round-trip digits in scientific form.
fn python_float_repr(x: f64) -> String {
    let text = format!("{x:e}");
    match text.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp:0>2}"),
        Some((mantissa, exp)) => format!("{mantissa}e-{:0>2}", &exp[1..]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operand kinds `scalar::unary` passes on (this module's callers), in one place.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Scalar {
        Int(i64),
        Bool(bool),
        Float(f64),
    }

    impl Scalar {
        fn float(self) -> Option<f64> {
            match self {
                Scalar::Float(f) => Some(f),
                _ => None,
            }
        }
    }

    fn run(op: ScalarUnaryOp, a: Scalar) -> Result<Scalar> {
        let int = match a {
            Scalar::Int(i) => Some(i),
            Scalar::Bool(b) => Some(i64::from(b)),
            Scalar::Float(_) => None,
        };
        let x = match a {
            Scalar::Float(f) => f,
            _ => int.unwrap() as f64,
        };
        match (op, int) {
            (ScalarUnaryOp::Floor | ScalarUnaryOp::Ceil, Some(i)) => Ok(Scalar::Int(i)),
            (ScalarUnaryOp::Floor, None) => round_to_int(x, false).map(Scalar::Int),
            (ScalarUnaryOp::Ceil, None) => round_to_int(x, true).map(Scalar::Int),
            (ScalarUnaryOp::Log, Some(i)) => log_int(i).map(Scalar::Float),
            _ => float_fn(op, x).unwrap().map(Scalar::Float),
        }
    }

    fn message(r: Result<Scalar>) -> String {
        match r {
            Err(MathError::Value(m)) => format!("ValueError: {m}"),
            Err(MathError::Overflow(m)) => format!("OverflowError: {m}"),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn domain_and_range_errors_have_cpythons_words() {
        use rextio_ir::ScalarUnaryOp::*;
        let f = Scalar::Float;
        let i = Scalar::Int;
        assert_eq!(message(run(Sqrt, f(-1.0))), "ValueError: math domain error");
        assert_eq!(
            message(run(Sqrt, f(f64::NEG_INFINITY))),
            "ValueError: math domain error"
        );
        assert_eq!(message(run(Log, i(0))), "ValueError: math domain error");
        assert_eq!(
            message(run(Log, Scalar::Bool(false))),
            "ValueError: math domain error"
        );
        assert_eq!(message(run(Log, f(0.0))), "ValueError: math domain error");
        assert_eq!(message(run(Log, f(-0.0))), "ValueError: math domain error");
        assert_eq!(
            message(run(Exp, i(1000))),
            "OverflowError: math range error"
        );
        assert_eq!(
            message(run(Floor, f(f64::INFINITY))),
            "OverflowError: cannot convert float infinity to integer"
        );
        assert_eq!(
            message(run(Ceil, f(f64::NAN))),
            "ValueError: cannot convert float NaN to integer"
        );
        assert_eq!(
            message(run(Floor, f(1e300))),
            "OverflowError: rextio-torch: integer overflow in math.floor(1e+300) (compiled ints are 64-bit)"
        );
    }

    #[test]
    fn special_values_pass_through() {
        use rextio_ir::ScalarUnaryOp::*;
        let f = Scalar::Float;
        assert!(run(Exp, f(f64::NAN)).unwrap().float().unwrap().is_nan());
        assert_eq!(run(Exp, f(f64::NEG_INFINITY)).unwrap(), f(0.0));
        assert_eq!(run(Exp, f(-1000.0)).unwrap(), f(0.0));
        assert_eq!(run(Log, f(f64::INFINITY)).unwrap(), f(f64::INFINITY));
        assert!(run(Sqrt, f(-0.0))
            .unwrap()
            .float()
            .unwrap()
            .is_sign_negative());
        assert_eq!(run(Tanh, f(f64::INFINITY)).unwrap(), f(1.0));
        assert_eq!(run(Fabs, Scalar::Int(-3)).unwrap(), f(3.0));
        assert_eq!(run(Floor, f(-2.5)).unwrap(), Scalar::Int(-3));
        assert_eq!(run(Ceil, f(-2.5)).unwrap(), Scalar::Int(-2));
        assert_eq!(run(Floor, Scalar::Bool(true)).unwrap(), Scalar::Int(1));
        assert_eq!(
            run(Ceil, Scalar::Int(i64::MIN)).unwrap(),
            Scalar::Int(i64::MIN)
        );
        assert_eq!(
            run(Floor, f(-(2.0f64).powi(63))).unwrap(),
            Scalar::Int(i64::MIN)
        );
        assert!(run(Ceil, f((2.0f64).powi(63))).is_err());
        assert!(float_fn(Neg, 1.0).is_none());
        assert!(float_fn(Floor, 1.5).is_none());
    }
}
