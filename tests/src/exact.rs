//! Integer-valued float inputs whose sums and products are exact in any combine order, so that
//! every float path of the GPU is compared with the sequential CPU scan bit for bit.
//!
//! - Sums: f32 values in {-1, 0, 1}, so every sum of fewer than 2^24 terms is an integer f32
//!   holds exactly; longer scans (contiguous ranges only) stay exact while their prefix sums,
//!   a zero-mean walk, span less than 2^24, which [`floats`] checks. f64 values are integers in
//!   [-2^20, 2^20], exact in any sum of fewer than 2^33 terms.
//! - Products: ±1, ±2 and ±0.5, chosen so that every prefix product is ±1 or ±2: the product of
//!   any contiguous range is then ±0.5, ±1 or ±2.
//! - The linear recurrence: factors in {-1, 0, 1} with a zero at least every 2^20 steps, offsets
//!   small integers, so every composed map is (a, b) with `a` in {-1, 0, 1} and `|b|` at most
//!   2^20 times the largest offset.
//!
//! The values are random (from [`gpu_scan::input::bits`]), so tile totals differ from tile to
//! tile and a lost or repeated one shows.

use gpu_scan::{input, Element, Op};

/// The float of type `T` nearest to `x` (exact for the integers and powers of two used here).
pub fn from_f64<T: Element>(x: f64) -> T {
    if T::TYPE.size() == 4 {
        T::from_bits((x as f32).to_bits() as u64)
    } else {
        T::from_bits(x.to_bits())
    }
}

/// Largest offset magnitude of [`recurrence`]'s f32 and f64 inputs.
fn offset_range<T: Element>() -> i64 {
    if T::TYPE.size() == 4 {
        4
    } else {
        1 << 20
    }
}

/// Term `i` of a sum for `T`.
fn summand<T: Element>(seed: u64, i: u64) -> i64 {
    let b = input::bits(seed, i);
    if T::TYPE.size() == 4 {
        (b % 3) as i64 - 1
    } else {
        (b % ((1 << 21) + 1)) as i64 - (1 << 20)
    }
}

/// `n` integer-valued floats for a scan with `op` (`Add` or `Mul`; any other operator is exact
/// on any input and gets the sums' values), exact in every combine order of a contiguous scan.
pub fn floats<T: Element>(op: Op, seed: u64, n: usize) -> Vec<T> {
    assert!(T::TYPE.is_float(), "integer-valued floats of {}", T::TYPE.name());
    if op == Op::Mul {
        // Exponent 0 or 1 before each factor: a factor of 2 only from 1, of 0.5 only from 2.
        let mut exponent = 0;
        return (0..n as u64)
            .map(|i| {
                let b = input::bits(seed, i);
                let sign = if b & 1 == 0 { 1.0 } else { -1.0 };
                let magnitude = if b & 2 == 0 {
                    1.0
                } else {
                    exponent = 1 - exponent;
                    if exponent == 1 {
                        2.0
                    } else {
                        0.5
                    }
                };
                from_f64::<T>(sign * magnitude)
            })
            .collect();
    }
    let values: Vec<i64> = (0..n as u64).map(|i| summand::<T>(seed, i)).collect();
    if T::TYPE.size() == 4 && n >= 1 << 24 {
        let (mut low, mut high, mut sum) = (0i64, 0i64, 0i64);
        for &v in &values {
            sum += v;
            (low, high) = (low.min(sum), high.max(sum));
        }
        assert!(high - low < 1 << 23, "the prefix sums of seed {seed} span {low}..{high}: not exact in f32");
    }
    values.into_iter().map(|v| from_f64::<T>(v as f64)).collect()
}

/// An integer-valued initial value for `op`: small enough for every sum above to stay exact, a
/// power of two for products.
pub fn init<T: Element>(op: Op, seed: u64) -> T {
    let b = input::bits(seed, u64::MAX);
    let sign = if b & 1 == 0 { 1.0 } else { -1.0 };
    from_f64::<T>(sign * if op == Op::Mul { 2.0 } else { (b >> 1) as f64 % 5.0 + 1.0 })
}

/// A matrix of `rows × cols` (row-major) for a scan of `op` along `axis`: rows are contiguous
/// ranges of [`floats`], columns too (the walk runs down each column in turn).
pub fn matrix<T: Element>(op: Op, seed: u64, rows: usize, cols: usize, along_rows: bool) -> Vec<T> {
    let flat = floats::<T>(op, seed, rows * cols);
    if along_rows {
        return flat;
    }
    (0..rows * cols).map(|i| flat[(i % cols) * rows + i / cols]).collect()
}

/// Factors and offsets of a linear recurrence of `n` steps that is exact in any order.
pub fn recurrence<T: Element>(seed: u64, n: usize) -> (Vec<T>, Vec<T>) {
    let range = offset_range::<T>();
    let (a, b): (Vec<f64>, Vec<f64>) = (0..n as u64)
        .map(|t| {
            let bits = input::bits(seed, t);
            let a = if bits.is_multiple_of(4096) || t % (1 << 20) == (1 << 20) - 1 {
                0.0
            } else if bits & (1 << 20) == 0 {
                1.0
            } else {
                -1.0
            };
            let b = ((bits >> 32) % (2 * range as u64 + 1)) as i64 - range;
            (a, b as f64)
        })
        .unzip();
    (a.into_iter().map(from_f64::<T>).collect(), b.into_iter().map(from_f64::<T>).collect())
}

/// The first index where `got` and `want` differ in their bits, or where their lengths do.
pub fn first_difference<T: Element>(got: &[T], want: &[T]) -> Option<usize> {
    (0..got.len().min(want.len()))
        .find(|&i| got[i].to_bits() != want[i].to_bits())
        .or((got.len() != want.len()).then(|| got.len().min(want.len())))
}

/// `n` elements for a scan with `op`: random where `op` gives the same bits in any combine order
/// on `T`, else integer-valued floats ([`floats`]).
pub fn scan_input<T: Element>(op: Op, seed: u64, n: usize) -> Vec<T> {
    if op.order_sensitive(T::TYPE) {
        floats::<T>(op, seed, n)
    } else {
        input::generate::<T>(op, seed, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_scan::reference;

    /// Four groupings give the same bits: the deterministic GPU orders (tiles, warps, lanes; the
    /// pipelined kernel's shares), the parallel reference (chunks of 2^16) and the sequential fold.
    #[test]
    fn sums_and_products_are_exact_in_any_order() {
        fn check<T: Element>(op: Op, n: usize) {
            let x = floats::<T>(op, n as u64, n);
            let start = init::<T>(op, 1);
            let init = Some(start);
            let chunked = reference::scan(op, &x, false, init).unwrap();
            let replica = reference::replica::single_pass(op, &x, false, init).unwrap();
            let pipelined = reference::replica::pipelined(op, &x, false, init).unwrap();
            let mut acc = start;
            let sequential: Vec<T> = x
                .iter()
                .map(|&v| {
                    acc = from_f64::<T>(if op == Op::Mul {
                        acc.to_f64() * v.to_f64()
                    } else {
                        acc.to_f64() + v.to_f64()
                    });
                    acc
                })
                .collect();
            let what = format!("{} {} n={n}", T::TYPE.name(), op.name());
            assert_eq!(first_difference(&replica, &chunked), None, "{what}");
            assert_eq!(first_difference(&pipelined, &chunked), None, "{what}");
            assert_eq!(first_difference(&sequential, &chunked), None, "{what}");
        }
        for n in [3, 1000, (1 << 20) + 7] {
            check::<f32>(Op::Add, n);
            check::<f64>(Op::Add, n);
            check::<f32>(Op::Mul, n);
            check::<f64>(Op::Mul, n);
        }
    }

    #[test]
    fn products_stay_within_a_factor_two_of_one() {
        let x = floats::<f32>(Op::Mul, 5, 100_000);
        let p = reference::scan(Op::Mul, &x, false, None).unwrap();
        assert!(p.iter().all(|v| [1.0, 2.0].contains(&v.abs())));
        assert!(x.iter().any(|&v| v.abs() == 0.5) && x.iter().any(|&v| v.abs() == 2.0) && x.iter().any(|&v| v < 0.0));
    }

    #[test]
    fn recurrence_offsets_restart_at_the_zero_factors() {
        let (a, b) = recurrence::<f32>(3, 3 << 20);
        let (x, _) = reference::apps::recurrence(&a, &b, 2.0);
        assert!(x.iter().all(|v| v.fract() == 0.0 && v.abs() < (1 << 23) as f64));
        assert!(a.iter().filter(|&&v| v == 0.0).count() >= 3);
        assert!(a.iter().any(|&v| v == -1.0) && b.iter().any(|&v| v != 0.0));
    }
}
