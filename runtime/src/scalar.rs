//! Scalar arithmetic with Python's semantics over `int` (64-bit, as the reference's generated
//! Rust code with `overflow-checks = true`), `bool` and `float`: floor division and modulo
//! round toward negative infinity, comparisons between ints and floats are exact, a zero
//! divisor raises `ZeroDivisionError` with Python's words, and an int result that does not
//! fit in 64 bits is an `OverflowError`, never a wrapped number.

use std::cmp::Ordering;

use rextio_ir::{ScalarOp, ScalarUnaryOp};

use crate::error::{Result, RuntimeError};
use crate::scalar_math::{self, MathError};

/// A scalar value. `Bool` takes part in arithmetic as the int 0 or 1, as in Python.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Bool(bool),
    Float(f64),
}

fn overflow(op: &str, a: i64, b: i64) -> RuntimeError {
    RuntimeError::Overflow(format!(
        "rextio-torch: integer overflow in {a} {op} {b} (compiled ints are 64-bit)"
    ))
}

fn zero_division(message: &str) -> RuntimeError {
    RuntimeError::ZeroDivision(message.to_string())
}

impl From<i64> for Scalar {
    fn from(value: i64) -> Scalar {
        Scalar::Int(value)
    }
}

impl From<bool> for Scalar {
    fn from(value: bool) -> Scalar {
        Scalar::Bool(value)
    }
}

impl From<f64> for Scalar {
    fn from(value: f64) -> Scalar {
        Scalar::Float(value)
    }
}

fn wrong_kind(want: &str, got: Scalar) -> RuntimeError {
    RuntimeError::Unsupported(format!("internal: expected {want}, got {got:?}"))
}

impl Scalar {
    /// The int an `int`-typed result holds (generated code knows each result's type).
    pub fn int(self) -> Result<i64> {
        match self {
            Scalar::Int(i) => Ok(i),
            other => Err(wrong_kind("an int", other)),
        }
    }

    pub fn boolean(self) -> Result<bool> {
        match self {
            Scalar::Bool(b) => Ok(b),
            other => Err(wrong_kind("a bool", other)),
        }
    }

    pub fn float(self) -> Result<f64> {
        match self {
            Scalar::Float(f) => Ok(f),
            other => Err(wrong_kind("a float", other)),
        }
    }

    fn as_int(self) -> Option<i64> {
        match self {
            Scalar::Int(i) => Some(i),
            Scalar::Bool(b) => Some(i64::from(b)),
            Scalar::Float(_) => None,
        }
    }

    fn as_float(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Float(f) => f,
        }
    }

    /// Python's `bool(x)`.
    pub fn truth(self) -> bool {
        match self {
            Scalar::Int(i) => i != 0,
            Scalar::Bool(b) => b,
            // NaN is truthy in Python: only zeros are false.
            Scalar::Float(f) => f != 0.0,
        }
    }
}

/// `a op b`.
pub fn binary(op: ScalarOp, a: Scalar, b: Scalar) -> Result<Scalar> {
    if op.is_comparison() {
        return Ok(Scalar::Bool(compare(op, a, b)));
    }
    if op == ScalarOp::TrueDiv {
        return true_div(a, b).map(Scalar::Float);
    }
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => int_op(op, x, y).map(Scalar::Int),
        _ => float_op(op, a.as_float(), b.as_float()).map(Scalar::Float),
    }
}

impl From<MathError> for RuntimeError {
    fn from(e: MathError) -> RuntimeError {
        match e {
            MathError::Value(m) => RuntimeError::Value(m),
            MathError::Overflow(m) => RuntimeError::Overflow(m),
        }
    }
}

/// `-a`, `not a`, `bool(a)`, and the `math` functions (`math.sqrt(a)`, [`crate::scalar_math`]).
pub fn unary(op: ScalarUnaryOp, a: Scalar) -> Result<Scalar> {
    Ok(match op {
        ScalarUnaryOp::Not => Scalar::Bool(!a.truth()),
        ScalarUnaryOp::Truth => Scalar::Bool(a.truth()),
        ScalarUnaryOp::Neg => match a {
            Scalar::Float(f) => Scalar::Float(-f),
            other => {
                let i = other.as_int().unwrap_or(0);
                Scalar::Int(i.checked_neg().ok_or_else(|| {
                    RuntimeError::Overflow(format!(
                        "rextio-torch: integer overflow in -({i}) (compiled ints are 64-bit)"
                    ))
                })?)
            }
        },
        ScalarUnaryOp::Floor | ScalarUnaryOp::Ceil => match a {
            Scalar::Float(x) => {
                Scalar::Int(scalar_math::round_to_int(x, op == ScalarUnaryOp::Ceil)?)
            }
            other => Scalar::Int(other.as_int().unwrap_or(0)),
        },
        ScalarUnaryOp::Log if a.as_int().is_some() => {
            Scalar::Float(scalar_math::log_int(a.as_int().unwrap_or(0))?)
        }
        ScalarUnaryOp::Sqrt
        | ScalarUnaryOp::Exp
        | ScalarUnaryOp::Log
        | ScalarUnaryOp::Tanh
        | ScalarUnaryOp::Fabs => match scalar_math::float_fn(op, a.as_float()) {
            Some(result) => Scalar::Float(result?),
            None => {
                return Err(RuntimeError::Unsupported(format!(
                    "internal: {} is not a math function",
                    op.name()
                )))
            }
        },
    })
}

fn int_op(op: ScalarOp, a: i64, b: i64) -> Result<i64> {
    let symbol = op.symbol();
    match op {
        ScalarOp::Add => a.checked_add(b).ok_or_else(|| overflow(symbol, a, b)),
        ScalarOp::Sub => a.checked_sub(b).ok_or_else(|| overflow(symbol, a, b)),
        ScalarOp::Mul => a.checked_mul(b).ok_or_else(|| overflow(symbol, a, b)),
        ScalarOp::FloorDiv => {
            if b == 0 {
                return Err(zero_division("integer division or modulo by zero"));
            }
            let q = a.checked_div(b).ok_or_else(|| overflow(symbol, a, b))?;
            // Truncation rounds toward zero; Python rounds toward negative infinity.
            Ok(if a % b != 0 && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            })
        }
        ScalarOp::Mod => {
            if b == 0 {
                return Err(zero_division("integer modulo by zero"));
            }
            // i64::MIN % -1 overflows in Rust; its Python value is 0.
            let r = a.checked_rem(b).unwrap_or(0);
            Ok(if r != 0 && ((r < 0) != (b < 0)) {
                r + b
            } else {
                r
            })
        }
        // Handled by the caller; listed so the match stays exhaustive.
        ScalarOp::TrueDiv
        | ScalarOp::Eq
        | ScalarOp::Ne
        | ScalarOp::Lt
        | ScalarOp::Le
        | ScalarOp::Gt
        | ScalarOp::Ge => Ok(0),
    }
}

fn true_div(a: Scalar, b: Scalar) -> Result<f64> {
    let divisor = b.as_float();
    if divisor == 0.0 {
        return Err(zero_division(match (a, b) {
            (Scalar::Float(_), _) | (_, Scalar::Float(_)) => "float division by zero",
            _ => "division by zero",
        }));
    }
    match (a.as_int(), b.as_int()) {
        // Python divides ints exactly and rounds once; through f64 that holds whenever both
        // are exactly representable, which covers |x| <= 2^53.
        (Some(x), Some(y)) if x.unsigned_abs() > (1 << 53) || y.unsigned_abs() > (1 << 53) => {
            Ok((x as f64) / (y as f64))
        }
        _ => Ok(a.as_float() / divisor),
    }
}

fn float_op(op: ScalarOp, a: f64, b: f64) -> Result<f64> {
    Ok(match op {
        ScalarOp::Add => a + b,
        ScalarOp::Sub => a - b,
        ScalarOp::Mul => a * b,
        ScalarOp::FloorDiv => {
            if b == 0.0 {
                return Err(zero_division("float floor division by zero"));
            }
            float_divmod(a, b).0
        }
        ScalarOp::Mod => {
            if b == 0.0 {
                return Err(zero_division("float modulo"));
            }
            float_divmod(a, b).1
        }
        _ => 0.0,
    })
}

/// CPython's `float_divmod`: (floor quotient, modulo with the divisor's sign).
fn float_divmod(vx: f64, wx: f64) -> (f64, f64) {
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f64.copysign(vx / wx)
    };
    (floordiv, m)
}

/// Exact comparison, as Python compares an int with a float (no rounding of the int).
fn compare(op: ScalarOp, a: Scalar, b: Scalar) -> bool {
    let ordering = match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => int_float_cmp(x, b.as_float()),
        (None, Some(y)) => int_float_cmp(y, a.as_float()).map(Ordering::reverse),
        (None, None) => a.as_float().partial_cmp(&b.as_float()),
    };
    match (op, ordering) {
        (ScalarOp::Ne, None) => true,
        (_, None) => false,
        (ScalarOp::Eq, Some(o)) => o == Ordering::Equal,
        (ScalarOp::Ne, Some(o)) => o != Ordering::Equal,
        (ScalarOp::Lt, Some(o)) => o == Ordering::Less,
        (ScalarOp::Le, Some(o)) => o != Ordering::Greater,
        (ScalarOp::Gt, Some(o)) => o == Ordering::Greater,
        (ScalarOp::Ge, Some(o)) => o != Ordering::Less,
        _ => false,
    }
}

/// How int `i` compares with float `f` (`None` when `f` is NaN).
fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // 2^63 as a float; every i64 is below it and at or above its negation.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    let whole = f.trunc();
    // In range and integral, so the cast is exact.
    let whole_int = whole as i64;
    Some(match i.cmp(&whole_int) {
        Ordering::Equal => 0.0f64.partial_cmp(&(f - whole)).unwrap_or(Ordering::Equal),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Scalar {
        Scalar::Int(i)
    }

    #[test]
    fn floor_division_and_modulo_follow_python() {
        // (a, b, a // b, a % b) as CPython computes them.
        for (a, b, q, r) in [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
            (6, 3, 2, 0),
            (-6, 3, -2, 0),
            (i64::MIN, 1, i64::MIN, 0),
            (i64::MIN, -2, 1 << 62, 0),
        ] {
            assert_eq!(
                binary(ScalarOp::FloorDiv, int(a), int(b)).unwrap(),
                int(q),
                "{a} // {b}"
            );
            assert_eq!(
                binary(ScalarOp::Mod, int(a), int(b)).unwrap(),
                int(r),
                "{a} % {b}"
            );
        }
        assert_eq!(
            binary(ScalarOp::Mod, int(i64::MIN), int(-1)).unwrap(),
            int(0)
        );
        assert!(matches!(
            binary(ScalarOp::FloorDiv, int(i64::MIN), int(-1)),
            Err(RuntimeError::Overflow(_))
        ));
        let f = |a: f64, b: f64, op| match binary(op, Scalar::Float(a), Scalar::Float(b)).unwrap() {
            Scalar::Float(x) => x,
            other => panic!("{other:?}"),
        };
        assert_eq!(f(-7.5, 2.0, ScalarOp::FloorDiv), -4.0);
        assert_eq!(f(-7.5, 2.0, ScalarOp::Mod), 0.5);
        assert_eq!(f(7.5, -2.0, ScalarOp::Mod), -0.5);
        assert!(f(-0.0, 5.0, ScalarOp::Mod).is_sign_positive());
        assert!(f(0.0, -5.0, ScalarOp::Mod).is_sign_negative());
    }

    #[test]
    fn zero_divisors_and_overflow_are_errors_with_pythons_words() {
        let message = |r: Result<Scalar>| match r {
            Err(RuntimeError::ZeroDivision(m)) | Err(RuntimeError::Overflow(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message(binary(ScalarOp::FloorDiv, int(1), int(0))),
            "integer division or modulo by zero"
        );
        assert_eq!(
            message(binary(ScalarOp::Mod, int(1), int(0))),
            "integer modulo by zero"
        );
        assert_eq!(
            message(binary(ScalarOp::TrueDiv, int(1), int(0))),
            "division by zero"
        );
        assert_eq!(
            message(binary(ScalarOp::TrueDiv, Scalar::Float(1.0), int(0))),
            "float division by zero"
        );
        assert_eq!(
            message(binary(
                ScalarOp::FloorDiv,
                Scalar::Float(1.0),
                Scalar::Float(0.0)
            )),
            "float floor division by zero"
        );
        assert_eq!(
            message(binary(
                ScalarOp::Mod,
                Scalar::Float(1.0),
                Scalar::Float(0.0)
            )),
            "float modulo"
        );
        assert!(message(binary(ScalarOp::Add, int(i64::MAX), int(1)))
            .contains("integer overflow in 9223372036854775807 + 1"));
        assert!(message(binary(ScalarOp::Mul, int(1 << 40), int(1 << 40))).contains("overflow"));
        assert!(message(unary(ScalarUnaryOp::Neg, int(i64::MIN))).contains("overflow"));
    }

    #[test]
    fn bools_count_as_ints_and_floats_win() {
        assert_eq!(
            binary(ScalarOp::Add, Scalar::Bool(true), Scalar::Bool(true)).unwrap(),
            int(2)
        );
        assert_eq!(
            unary(ScalarUnaryOp::Neg, Scalar::Bool(true)).unwrap(),
            int(-1)
        );
        assert_eq!(
            binary(ScalarOp::Add, int(1), Scalar::Float(0.5)).unwrap(),
            Scalar::Float(1.5)
        );
        assert_eq!(
            binary(ScalarOp::TrueDiv, int(7), int(2)).unwrap(),
            Scalar::Float(3.5)
        );
        assert_eq!(
            unary(ScalarUnaryOp::Not, Scalar::Float(f64::NAN)).unwrap(),
            Scalar::Bool(false)
        );
        assert_eq!(
            unary(ScalarUnaryOp::Truth, int(0)).unwrap(),
            Scalar::Bool(false)
        );
    }

    #[test]
    fn int_float_comparisons_are_exact() {
        let cmp = |op, a, b| binary(op, a, b).unwrap() == Scalar::Bool(true);
        let big = (1i64 << 53) + 1;
        // float(2**53 + 1) rounds to 2**53: Python still says they differ.
        assert!(!cmp(ScalarOp::Eq, int(big), Scalar::Float(big as f64)));
        assert!(cmp(ScalarOp::Gt, int(big), Scalar::Float(big as f64)));
        assert!(cmp(ScalarOp::Lt, int(2), Scalar::Float(2.5)));
        assert!(cmp(ScalarOp::Gt, int(-2), Scalar::Float(-2.5)));
        assert!(cmp(ScalarOp::Eq, int(3), Scalar::Float(3.0)));
        assert!(cmp(
            ScalarOp::Lt,
            int(i64::MAX),
            Scalar::Float(f64::INFINITY)
        ));
        assert!(cmp(ScalarOp::Lt, int(i64::MAX), Scalar::Float(9.3e18)));
        assert!(!cmp(ScalarOp::Eq, int(1), Scalar::Float(f64::NAN)));
        assert!(cmp(ScalarOp::Ne, int(1), Scalar::Float(f64::NAN)));
        assert!(cmp(ScalarOp::Ge, Scalar::Float(2.0), Scalar::Bool(true)));
    }
}
