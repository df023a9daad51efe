//! What compiled loops call: Python's `range` as an iterator over 64-bit ints. The executor
//! and generated code both use it, so a loop runs the same indices in both.

use crate::error::{Result, RuntimeError};

/// `range(start, stop, step)`: the indices Python yields, counted without overflow (the
/// count is computed in 128 bits, and the index after the last is never formed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    next: i64,
    step: i64,
    remaining: u64,
}

impl Range {
    /// A zero step is Python's `ValueError("range() arg 3 must not be zero")`.
    pub fn new(start: i64, stop: i64, step: i64) -> Result<Range> {
        if step == 0 {
            return Err(RuntimeError::Value(
                "range() arg 3 must not be zero".to_string(),
            ));
        }
        let span = i128::from(stop) - i128::from(start);
        let count = if (step > 0 && span > 0) || (step < 0 && span < 0) {
            (span.abs() - 1) / i128::from(step).abs() + 1
        } else {
            0
        };
        Ok(Range {
            next: start,
            step,
            // At most 2^64 - 1 indices fit in i64's range, so the count fits in u64.
            remaining: u64::try_from(count).unwrap_or(u64::MAX),
        })
    }

    /// How many indices are left.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }
}

impl Iterator for Range {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let index = self.next;
        // Past the last index the sum may leave i64; it is never read then.
        self.next = self.next.wrapping_add(self.step);
        Some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::Range;

    fn indices(start: i64, stop: i64, step: i64) -> Vec<i64> {
        Range::new(start, stop, step)
            .expect("non-zero step")
            .collect()
    }

    #[test]
    fn matches_pythons_range() {
        assert_eq!(indices(0, 5, 1), [0, 1, 2, 3, 4]);
        assert_eq!(indices(0, 5, 2), [0, 2, 4]);
        assert_eq!(indices(5, 0, -2), [5, 3, 1]);
        assert_eq!(indices(0, 0, 1), Vec::<i64>::new());
        assert_eq!(indices(3, 1, 1), Vec::<i64>::new());
        assert_eq!(indices(-3, 3, 3), [-3, 0]);
        assert_eq!(
            indices(i64::MIN, i64::MAX, i64::MAX),
            [i64::MIN, -1, i64::MAX - 1]
        );
        assert_eq!(
            Range::new(i64::MIN, i64::MAX, 1).expect("ok").remaining(),
            u64::MAX
        );
        assert!(Range::new(0, 1, 0).is_err());
    }
}
