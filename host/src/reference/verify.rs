//! Checking a GPU result against the CPU reference.
//!
//! Integer scans and float min/max must match the sequential reference exactly. Float sums and
//! products are combined in another order on the GPU, so result `i` must lie within a bound
//! `b_i` of the exact value (double-double reference, [`cpu::float_reference`]).
//!
//! # The bound
//!
//! Every correct scan combines the terms of result `i` (the inputs before it and the initial
//! value) by a binary tree of adjacent ranges. Each node `ν` rounds once, so to first order the
//! error is `Σ_ν δ_ν s_ν` with `|δ_ν| <= u = eps/2` and `s_ν` the node's partial result. For
//! sums, with `M_i` the largest exact prefix `|P_j|`, `j <= i` (and `|init|`), and `R_i` the sum
//! of the terms' magnitudes:
//!
//! - a node's range is contiguous, so `|s_ν| = |P_b - P_a| <= 2 M_i`;
//! - a node whose range crosses a tile boundary is either the one node that joins the two sides
//!   of that boundary, or one of the few inside `i`'s own tile that hold an earlier tile's prefix:
//!   `K_i = (i + 1) / TILE + DEPTH` of them, whatever the look-back grouping;
//! - every other node lies inside one tile, and a term sits under at most `DEPTH` of those,
//!   so their `|s_ν|` add up to at most `DEPTH R_i`.
//!
//! Rounding errors of data that is not built to round one way (random data, as every test and
//! generated input is) are independent and nearly unbiased, and by Hoeffding's inequality a sum
//! of independent terms `|δ_ν s_ν| <= u |s_ν|` exceeds `λ u sqrt(Σ s_ν²)` with probability at
//! most `2 exp(-λ²/2)`. With `λ = 8` (2·10^-14 a result) and the bounds above:
//!
//! ```text
//! sums, statistical:     b_i = 8 u sqrt(K_i (2 M_i)² + 2 M_i DEPTH R_i)
//! sums, worst case:      b_i = eps (2 M_i K_i + DEPTH R_i)
//! products, statistical: b_i = u (8 sqrt(i + 1) + (i + 1) / 8) |P_i|
//! products, worst case:  b_i = eps (i + 1) |P_i|
//! ```
//!
//! A product's result carries one factor `1 + δ` per multiplication, `i + 1` at most in any
//! tree. Products of factors near 1 round with a bias: their rounded part spans only a few units
//! in the last place and is not uniform over them (factors within 2^-10 of 1, the tests' own,
//! lose about u/50 per multiplication in a tree), so the statistical bound allows a drift of
//! u/8 per multiplication besides the random walk. The naive kernel folds left: `K_i = i + 1`.
//!
//! On uniform [-1, 1) f32 the statistical bound grows like the real error: at `i = 10^7` it
//! allows about 0.6 (the worst case about 43, the linear count of [`roundings`] about 46,600),
//! at `10^8` about 4 (500; 4.7·10^6). The combine orders of the GPU use under 5% of it for sums
//! and under 20% for products, while a lost, doubled or stale tile total (about ±52 for an
//! 8192-element tile) lies 25 times outside it at 10^8. Data that rounds the same way at every
//! step (a long run of one value, such as 0.1 repeated 10^8 times) can exceed the statistical
//! bound: check such data with [`Tolerance::WorstCase`].

use crate::element::Element;
use crate::error::Result;
use crate::options::{Algorithm, ScanOptions};
use crate::plan::scan::{fixed_order, FixedOrder};
use crate::reference::{self as cpu, FloatReference};
use rayon::prelude::*;
use scan_abi::tuning::Tuning;
use scan_abi::Op;

/// Fewest elements in a tile whose total a later tile combines: every kernel's tiles hold at
/// least this many (the smallest, the hierarchical tile, 2048).
pub const TILE: usize = 1024;

/// Most roundings a term passes inside one tile, and most nodes of a tile that hold an earlier
/// tile's prefix (the deepest tile scan, a lane's run of 32 items and the warp and block trees,
/// takes under 50).
pub const DEPTH: f64 = 64.0;

/// Standard deviations the statistical bound allows.
const LAMBDA: f64 = 8.0;

/// Bias of a product's rounding, in units of `u`, that the statistical bound allows.
const PRODUCT_BIAS: f64 = 1.0 / 8.0;

/// Elements a chunk of the parallel check.
const CHUNK: usize = 1 << 16;

/// How much rounding error a float sum or product may show (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tolerance {
    /// Independent, nearly unbiased roundings: a random walk. Right for random data; a lost,
    /// doubled or stale tile total fails it at 10^8 f32 elements by a factor of 25.
    #[default]
    Statistical,
    /// Every rounding the same way: right for any data; beyond about 10^7 f32 elements of
    /// uniform [-1, 1) it lets a wrong tile total pass.
    WorstCase,
}

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
    /// For float sums and products: the largest |gpu - exact| / bound seen (above 1 fails).
    pub max_bound_fraction: Option<f64>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.wrong == 0
    }

    /// The verdict on `checked` elements of which `wrong` (ascending) are wrong; `describe(i)`
    /// gives (expected, got) for element `i`.
    fn from_wrong(checked: usize, wrong: &[usize], describe: impl Fn(usize) -> (String, String)) -> Verdict {
        let first = wrong.first().map(|&index| {
            let (expected, got) = describe(index);
            Mismatch { index, expected, got }
        });
        Verdict { checked, wrong: wrong.len(), first, ..Verdict::default() }
    }
}

/// Worst-case rounding count for result `i` of `n` in a blocked scan, linear in `i`: 8 per
/// 1024-element tile passed plus the depth of the trees in a tile (`i + 1` for the naive
/// scan). The linear recurrence's error bound counts its roundings with it.
pub fn roundings(algorithm: Algorithm, i: usize, n: usize) -> f64 {
    match algorithm {
        Algorithm::Naive => (i + 1) as f64,
        _ => 8.0 * (i + 1).div_ceil(1024) as f64 + 2.0 * ((n + 1) as f64).log2().ceil() + 64.0,
    }
}

/// The bound on result `i` of a float scan (see the module documentation): `peak` is `M_i`,
/// `scale` is `R_i` for sums and `|P_i|` for products.
pub fn float_bound(
    op: Op,
    algorithm: Algorithm,
    tolerance: Tolerance,
    eps: f64,
    i: usize,
    peak: f64,
    scale: f64,
) -> f64 {
    let u = eps / 2.0;
    let terms = (i + 1) as f64;
    if op == Op::Mul {
        return match tolerance {
            Tolerance::Statistical => u * (LAMBDA * terms.sqrt() + PRODUCT_BIAS * terms) * scale,
            Tolerance::WorstCase => eps * terms * scale,
        };
    }
    let carries = match algorithm {
        Algorithm::Naive => terms,
        _ => ((i + 1) / TILE) as f64 + DEPTH,
    };
    let span = 2.0 * peak;
    match tolerance {
        Tolerance::Statistical => LAMBDA * u * (carries * span * span + span * DEPTH * scale).sqrt(),
        Tolerance::WorstCase => eps * (span * carries + DEPTH * scale),
    }
}

/// Checks `got` against the CPU reference of the described scan of `input`, float sums and
/// products within the statistical bound.
pub fn verify<T: Element>(
    op: Op,
    algorithm: Algorithm,
    input: &[T],
    exclusive: bool,
    init: Option<T>,
    got: &[T],
) -> Result<Verdict> {
    verify_with(Tolerance::Statistical, op, algorithm, input, exclusive, init, got)
}

/// [`verify`] with float sums and products within the bound of `tolerance`.
pub fn verify_with<T: Element>(
    tolerance: Tolerance,
    op: Op,
    algorithm: Algorithm,
    input: &[T],
    exclusive: bool,
    init: Option<T>,
    got: &[T],
) -> Result<Verdict> {
    if got.len() != input.len() {
        let describe = |_| (format!("{} elements", input.len()), format!("{} elements", got.len()));
        return Ok(Verdict::from_wrong(0, &[got.len().min(input.len())], describe));
    }
    if op.order_sensitive(T::TYPE) {
        let reference = cpu::float_reference(op, input, exclusive, init);
        return Ok(verify_float(op, algorithm, tolerance, &reference, init, got));
    }
    let expected = cpu::scan(op, input, exclusive, init)?;
    let same = |a: T, b: T| a == b || (a.to_f64().is_nan() && b.to_f64().is_nan());
    Ok(compare(&expected, got, same))
}

/// Checks the result of a scan run with `opts` under `tuning`: against the reference ([`verify`])
/// and, for the deterministic single-pass scan, also bit for bit against the CPU replica of the
/// fixed order it followed. Returns the verdict (keeping the reference's error figures) and
/// whether the replica was checked.
pub fn verify_run<T: Element>(
    tuning: &Tuning,
    opts: &ScanOptions<T>,
    input: &[T],
    got: &[T],
) -> Result<(Verdict, bool)> {
    verify_run_with(Tolerance::Statistical, tuning, opts, input, got)
}

/// [`verify_run`] with the float tolerance `tolerance` ([`Tolerance::WorstCase`] for data whose
/// roundings may all lean one way, as a user's file may).
pub fn verify_run_with<T: Element>(
    tolerance: Tolerance,
    tuning: &Tuning,
    opts: &ScanOptions<T>,
    input: &[T],
    got: &[T],
) -> Result<(Verdict, bool)> {
    let verdict = verify_with(tolerance, opts.op, opts.algorithm, input, opts.exclusive, opts.init, got)?;
    let replicated = opts.deterministic && opts.algorithm == Algorithm::SinglePass;
    if !replicated || !verdict.passed() {
        return Ok((verdict, replicated));
    }
    // Exact operators give the plain scan in every order, and so in the tiles order too.
    let order = fixed_order(tuning, &opts.request(input.len() as u64)).unwrap_or(FixedOrder::Tiles);
    let exact = verify_replica(order, opts.op, input, opts.exclusive, opts.init, got)?;
    let figures =
        Verdict { max_rel_error: verdict.max_rel_error, max_bound_fraction: verdict.max_bound_fraction, ..exact };
    Ok((figures, true))
}

/// Checks `got` bit for bit against the CPU replica of the deterministic scan in the fixed order
/// `order` ([`super::replica`]); for floats this is stricter than [`verify`]'s error bound.
pub fn verify_replica<T: Element>(
    order: FixedOrder,
    op: Op,
    input: &[T],
    exclusive: bool,
    init: Option<T>,
    got: &[T],
) -> Result<Verdict> {
    let expected = super::replica::deterministic(order, op, input, exclusive, init)?;
    Ok(compare(&expected, got, |a: T, b: T| a.to_bits() == b.to_bits()))
}

fn compare<T: Element>(expected: &[T], got: &[T], same: impl Fn(T, T) -> bool + Sync) -> Verdict {
    if got.len() != expected.len() {
        let describe = |_| (format!("{} elements", expected.len()), format!("{} elements", got.len()));
        return Verdict::from_wrong(0, &[got.len().min(expected.len())], describe);
    }
    let wrong: Vec<usize> = (0..got.len()).into_par_iter().filter(|&i| !same(got[i], expected[i])).collect();
    Verdict::from_wrong(got.len(), &wrong, |i| (expected[i].to_string(), got[i].to_string()))
}

fn finite_abs(x: f64) -> f64 {
    if x.is_finite() {
        x.abs()
    } else {
        0.0
    }
}

/// What one chunk of the float check found: its wrong indices, largest relative error and
/// largest fraction of the bound.
struct ChunkCheck {
    wrong: Vec<usize>,
    rel: f64,
    fraction: f64,
}

/// Checks float sums or products `got` against `reference` within `tolerance`'s bound.
pub(crate) fn verify_float<T: Element>(
    op: Op,
    algorithm: Algorithm,
    tolerance: Tolerance,
    reference: &FloatReference,
    init: Option<T>,
    got: &[T],
) -> Verdict {
    let eps = match T::TYPE.size() {
        4 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    };
    let n = got.len();
    // M_i, the running peak of |exact prefix|, from each chunk's start on.
    let chunk_peaks: Vec<f64> =
        reference.value.par_chunks(CHUNK).map(|c| c.iter().fold(0.0, |m: f64, &v| m.max(finite_abs(v)))).collect();
    let starts: Vec<f64> = chunk_peaks
        .iter()
        .scan(init.map_or(0.0, |v| finite_abs(v.to_f64())), |m, &p| {
            let start = *m;
            *m = m.max(p);
            Some(start)
        })
        .collect();
    let check_chunk = |c: usize| -> ChunkCheck {
        let mut out = ChunkCheck { wrong: Vec::new(), rel: 0.0, fraction: 0.0 };
        let mut peak = starts[c];
        let (start, end) = (c * CHUNK, n.min((c + 1) * CHUNK));
        let exact = reference.value[start..end].iter().zip(&reference.scale[start..end]);
        for (k, (g, (&want, &scale))) in got[start..end].iter().zip(exact).enumerate() {
            let (i, g) = (start + k, g.to_f64());
            peak = peak.max(finite_abs(want));
            if !want.is_finite() || !g.is_finite() {
                if !(g == want || (g.is_nan() && want.is_nan())) {
                    out.wrong.push(i);
                }
                continue;
            }
            let err = (g - want).abs();
            let ratio = |of: f64| {
                if of > 0.0 {
                    err / of
                } else if err == 0.0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            };
            let fraction = ratio(float_bound(op, algorithm, tolerance, eps, i, peak, scale));
            if fraction > 1.0 {
                out.wrong.push(i);
            }
            out.rel = out.rel.max(ratio(scale));
            out.fraction = out.fraction.max(fraction);
        }
        out
    };
    let chunks: Vec<ChunkCheck> = (0..n.div_ceil(CHUNK)).into_par_iter().map(check_chunk).collect();
    let wrong: Vec<usize> = chunks.iter().flat_map(|c| c.wrong.iter().copied()).collect();
    let describe = |i: usize| (format!("{:e}", reference.value[i]), format!("{:e}", got[i].to_f64()));
    Verdict {
        max_rel_error: Some(chunks.iter().map(|c| c.rel).fold(0.0, f64::max)),
        max_bound_fraction: Some(chunks.iter().map(|c| c.fraction).fold(0.0, f64::max)),
        ..Verdict::from_wrong(n, &wrong, describe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data whose roundings all lean one way (a constant that is not a power of two): the GPU's
    /// combine order stays within the worst-case bound the CLI checks a user's file with.
    #[test]
    fn biased_roundings_stay_within_the_worst_case_bound() {
        let x = vec![0.1f32; 1 << 20];
        let got = crate::reference::replica::single_pass(Op::Add, &x, false, None).unwrap();
        let v = verify_with(Tolerance::WorstCase, Op::Add, Algorithm::SinglePass, &x, false, None, &got).unwrap();
        assert!(v.passed(), "{:?}", v.first);
    }

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
