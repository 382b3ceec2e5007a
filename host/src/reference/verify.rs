//! Checking a GPU result against the CPU reference.
//!
//! Integer scans and float min/max must match the sequential reference exactly. Float sums and
//! products are combined in a different order on the GPU, so each result `i` must lie within
//!
//! ```text
//! |gpu_i - exact_i| <= c_i * eps * scale_i
//! ```
//!
//! of the exact value (double-double reference), where `eps` is the type's machine epsilon,
//! `scale_i` the sum of magnitudes of the terms combined into result `i` (for products: the
//! magnitude of the exact result), and `c_i` bounds the number of roundings on the way to
//! result `i`: `c_i = i + 1` for the sequential naive scan, else
//! `c_i = 8 * ceil((i + 1) / 1024) + 2 * ceil(log2(n + 1)) + 64` (at most 8 roundings per
//! 1024-element tile passed on the way, plus the depth of the trees inside a tile). Both are
//! worst-case bounds; `max_rel_error` reports what was actually seen.

use crate::element::Element;
use crate::error::Result;
use crate::options::{Algorithm, ScanOptions};
use crate::reference as cpu;
use rayon::prelude::*;
use scan_abi::Op;

/// The first wrong element.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub index: usize,
    pub expected: String,
    pub got: String,
}

/// The outcome of a check.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    pub checked: usize,
    pub wrong: usize,
    pub first: Option<Mismatch>,
    /// For float sums and products: the largest |gpu - exact| / scale seen.
    pub max_rel_error: Option<f64>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.wrong == 0
    }

    /// The verdict on `checked` elements of which `wrong` (ascending) are wrong; `describe(i)`
    /// gives (expected, got) for element `i`.
    fn from_wrong(
        checked: usize,
        wrong: &[usize],
        describe: impl Fn(usize) -> (String, String),
        max_rel_error: Option<f64>,
    ) -> Verdict {
        let first = wrong.first().map(|&index| {
            let (expected, got) = describe(index);
            Mismatch { index, expected, got }
        });
        Verdict { checked, wrong: wrong.len(), first, max_rel_error }
    }
}

/// Worst-case rounding count for result `i` of `n` (see the module documentation).
pub fn roundings(algorithm: Algorithm, i: usize, n: usize) -> f64 {
    match algorithm {
        Algorithm::Naive => (i + 1) as f64,
        _ => 8.0 * (i + 1).div_ceil(1024) as f64 + 2.0 * ((n + 1) as f64).log2().ceil() + 64.0,
    }
}

/// Checks `got` against the CPU reference of the described scan of `input`.
pub fn verify<T: Element>(
    op: Op,
    algorithm: Algorithm,
    input: &[T],
    exclusive: bool,
    init: Option<T>,
    got: &[T],
) -> Result<Verdict> {
    if got.len() != input.len() {
        let describe = |_| (format!("{} elements", input.len()), format!("{} elements", got.len()));
        return Ok(Verdict::from_wrong(0, &[got.len().min(input.len())], describe, None));
    }
    if T::TYPE.is_float() && matches!(op, Op::Add | Op::Mul) {
        return Ok(verify_float(op, algorithm, input, exclusive, init, got));
    }
    let expected = cpu::scan(op, input, exclusive, init)?;
    let same = |a: T, b: T| a == b || (a.to_f64().is_nan() && b.to_f64().is_nan());
    Ok(compare(&expected, got, same))
}

/// Checks the result of a scan run with `opts`: against the reference ([`verify`]) and, for the
/// deterministic single-pass scan, also bit for bit against its CPU replica. Returns the verdict
/// (keeping the reference's `max_rel_error`) and whether the replica was checked.
pub fn verify_run<T: Element>(opts: &ScanOptions<T>, input: &[T], got: &[T]) -> Result<(Verdict, bool)> {
    let verdict = verify(opts.op, opts.algorithm, input, opts.exclusive, opts.init, got)?;
    let replicated = opts.deterministic && opts.algorithm == Algorithm::SinglePass;
    if !replicated || !verdict.passed() {
        return Ok((verdict, replicated));
    }
    let exact = verify_replica(opts.op, input, opts.exclusive, opts.init, got)?;
    Ok((Verdict { max_rel_error: verdict.max_rel_error, ..exact }, true))
}

/// Checks `got` bit for bit against the CPU replica of the deterministic single-pass scan
/// ([`super::replica`]); for floats this is stricter than [`verify`]'s error bound.
pub fn verify_replica<T: Element>(op: Op, input: &[T], exclusive: bool, init: Option<T>, got: &[T]) -> Result<Verdict> {
    let expected = super::replica::single_pass(op, input, exclusive, init)?;
    Ok(compare(&expected, got, |a: T, b: T| a.to_bits() == b.to_bits()))
}

fn compare<T: Element>(expected: &[T], got: &[T], same: impl Fn(T, T) -> bool + Sync) -> Verdict {
    if got.len() != expected.len() {
        let describe = |_| (format!("{} elements", expected.len()), format!("{} elements", got.len()));
        return Verdict::from_wrong(0, &[got.len().min(expected.len())], describe, None);
    }
    let wrong: Vec<usize> = (0..got.len()).into_par_iter().filter(|&i| !same(got[i], expected[i])).collect();
    Verdict::from_wrong(got.len(), &wrong, |i| (expected[i].to_string(), got[i].to_string()), None)
}

fn verify_float<T: Element>(
    op: Op,
    algorithm: Algorithm,
    input: &[T],
    exclusive: bool,
    init: Option<T>,
    got: &[T],
) -> Verdict {
    let reference = cpu::float_reference(op, input, exclusive, init);
    let eps = match T::TYPE.size() {
        4 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    };
    let n = input.len();
    let check = |i: usize| -> (bool, f64) {
        let (g, want, scale) = (got[i].to_f64(), reference.value[i], reference.scale[i]);
        if !want.is_finite() || !g.is_finite() {
            return (g == want || (g.is_nan() && want.is_nan()), 0.0);
        }
        let err = (g - want).abs();
        let rel = if scale > 0.0 {
            err / scale
        } else if err == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        (rel <= roundings(algorithm, i, n) * eps, rel)
    };
    let results: Vec<(bool, f64)> = (0..n).into_par_iter().map(check).collect();
    let wrong: Vec<usize> = results.iter().enumerate().filter(|(_, r)| !r.0).map(|(i, _)| i).collect();
    let describe = |i: usize| (format!("{:e}", reference.value[i]), format!("{:e}", got[i].to_f64()));
    Verdict::from_wrong(n, &wrong, describe, Some(results.iter().map(|r| r.1).fold(0.0, f64::max)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_must_match_exactly() {
        let x = [1u32, 2, 3];
        assert!(verify(Op::Add, Algorithm::SinglePass, &x, false, None, &[1, 3, 6]).unwrap().passed());
        let v = verify(Op::Add, Algorithm::SinglePass, &x, false, None, &[1, 3, 7]).unwrap();
        assert_eq!((v.wrong, v.first.unwrap().index), (1, 2));
    }

    #[test]
    fn floats_pass_within_the_bound_and_fail_outside() {
        let x = vec![0.1f32; 4096];
        let exact: Vec<f32> = (1..=4096).map(|i| (i as f64 * 0.1f32 as f64) as f32).collect();
        assert!(verify(Op::Add, Algorithm::SinglePass, &x, false, None, &exact).unwrap().passed());
        let mut bad = exact.clone();
        bad[100] *= 1.001;
        assert!(!verify(Op::Add, Algorithm::SinglePass, &x, false, None, &bad).unwrap().passed());
    }

    #[test]
    fn nan_must_propagate() {
        let x = [1.0f64, f64::NAN, 2.0];
        assert!(verify(Op::Add, Algorithm::SinglePass, &x, false, None, &[1.0, f64::NAN, f64::NAN]).unwrap().passed());
        assert!(!verify(Op::Add, Algorithm::SinglePass, &x, false, None, &[1.0, f64::NAN, 3.0]).unwrap().passed());
    }

    #[test]
    fn wrong_length_fails() {
        assert!(!verify(Op::Add, Algorithm::SinglePass, &[1u8, 2], false, None, &[1]).unwrap().passed());
    }
}
