//! The applications' CPU references: sequential (or plainly parallel) code that states what each
//! GPU application computes.

use crate::element::{Element, OpVisitor};
use crate::error::{Error, Result};
use crate::options::Keep;
use rayon::prelude::*;
use scan_abi::partition::bin_of;
use scan_abi::{ElemType, Op, ScanOp};
use std::cmp::Ordering;

impl<T: Element> Keep<T> {
    /// Whether `x` (with flag `flag`) is kept.
    pub fn keeps(&self, x: T, flag: u8) -> bool {
        match *self {
            Keep::Greater(t) => x > t,
            Keep::NonZero => x != T::zero(),
            Keep::Flags => flag != 0,
        }
    }
}

/// The kept elements in order.
pub fn compact<T: Element>(input: &[T], flags: Option<&[u8]>, keep: Keep<T>) -> Vec<T> {
    input.iter().enumerate().filter(|&(i, &x)| keep.keeps(x, flags.map_or(0, |f| f[i]))).map(|(_, &x)| x).collect()
}

/// A stable ascending sort in [`sort_order`], values alongside.
pub fn sort<T: Element>(keys: &[T], values: Option<&[u32]>) -> (Vec<T>, Option<Vec<u32>>) {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.par_sort_by(|&i, &j| sort_order(keys[i], keys[j], false));
    (idx.iter().map(|&i| keys[i]).collect(), values.map(|v| idx.iter().map(|&i| v[i]).collect()))
}

/// The order the sorts promise (see [`crate::SortOptions`]), stated on the values themselves
/// rather than through `Element::order_key`, the mapping the kernels sort by, so that it checks
/// that mapping: integers by value; floats by IEEE total order (`-0.0` before `+0.0`), except
/// that NaNs, whatever their sign and payload, are equal to each other and after every number in
/// both directions. `descending` reverses the order of the numbers.
pub fn sort_order<T: Element>(a: T, b: T, descending: bool) -> Ordering {
    let nan = |x: T| T::TYPE.is_float() && x.as_f64().is_nan();
    let by_value = || {
        let (x, y) = (a.to_bits(), b.to_bits());
        match T::TYPE {
            ElemType::F32 => f32::from_bits(x as u32).total_cmp(&f32::from_bits(y as u32)),
            ElemType::F64 => f64::from_bits(x).total_cmp(&f64::from_bits(y)),
            ElemType::I32 => (x as u32 as i32).cmp(&(y as u32 as i32)),
            ElemType::I64 => (x as i64).cmp(&(y as i64)),
            // `to_bits` zero-extends: an unsigned value's bits are its value.
            ElemType::U8 | ElemType::U16 | ElemType::U32 | ElemType::U64 => x.cmp(&y),
        }
    };
    match (nan(a), nan(b)) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) if descending => by_value().reverse(),
        (false, false) => by_value(),
    }
}

/// A histogram and its counting sort.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub counts: Vec<u64>,
    /// `starts[b]`: where bin `b`'s elements begin in the permutation.
    pub starts: Vec<u64>,
    /// Elements outside `[lo, hi)` or NaN (placed after the last bin).
    pub outside: u64,
    /// `permutation[k]`: the index of the element at place `k` when grouped by bin.
    pub permutation: Vec<u32>,
}

/// An error unless `bins` equal-width bins over `[lo, hi)` can be counted.
pub fn check_bins(bins: u32, lo: f64, hi: f64) -> Result<()> {
    use scan_abi::partition::MAX_BINS;
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::invalid(format!("{bins} bins: between 1 and {MAX_BINS} are supported")));
    }
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(Error::invalid(format!("the range [{lo}, {hi}) is empty or not finite")));
    }
    Ok(())
}

/// The counts of `bins` bins over `[lo, hi)` and, last, of the elements outside it (NaN too).
pub fn bin_counts<T: Element>(input: &[T], bins: u32, lo: f64, hi: f64) -> Result<Vec<u64>> {
    check_bins(bins, lo, hi)?;
    Ok(tally(input.iter().map(|x| bin_of(x.as_f64(), lo, hi, bins)), bins))
}

/// How many of `of` fall in each of the `bins + 1` bins.
fn tally(of: impl Iterator<Item = u32>, bins: u32) -> Vec<u64> {
    let mut all = vec![0u64; bins as usize + 1];
    for b in of {
        all[b as usize] += 1;
    }
    all
}

/// The histogram of `input` in `bins` bins over `[lo, hi)`, with its stable permutation.
pub fn histogram<T: Element>(input: &[T], bins: u32, lo: f64, hi: f64) -> Result<Histogram> {
    check_bins(bins, lo, hi)?;
    let bin: Vec<u32> = input.iter().map(|x| bin_of(x.as_f64(), lo, hi, bins)).collect();
    let all = tally(bin.iter().copied(), bins);
    let mut starts = Vec::with_capacity(bins as usize);
    let mut at = 0;
    for &c in &all[..bins as usize] {
        starts.push(at);
        at += c;
    }
    let mut idx: Vec<u32> = (0..input.len() as u32).collect();
    idx.par_sort_by_key(|&i| bin[i as usize]);
    Ok(Histogram { outside: all[bins as usize], counts: all[..bins as usize].to_vec(), starts, permutation: idx })
}

/// The row offsets (`nrows + 1` entries) of sorted COO row indices.
pub fn csr_offsets(rows: &[u32], nrows: u32) -> Vec<u32> {
    let mut offsets = vec![0u32; nrows as usize + 1];
    for &r in rows {
        offsets[r as usize + 1] += 1;
    }
    for r in 0..nrows as usize {
        offsets[r + 1] += offsets[r];
    }
    offsets
}

/// The scan of every segment on its own (segments start where `head(i)`), sequential.
pub fn segmented<T: Element>(op: Op, input: &[T], head: impl Fn(usize) -> bool, exclusive: bool) -> Result<Vec<T>> {
    struct Visit<'a, T, H> {
        input: &'a [T],
        head: H,
        exclusive: bool,
    }
    impl<T: Element, H: Fn(usize) -> bool> OpVisitor<T> for Visit<'_, T, H> {
        type Output = Vec<T>;
        fn visit<O: ScanOp<T>>(self) -> Vec<T> {
            let mut acc: Option<T> = None;
            let mut out = Vec::with_capacity(self.input.len());
            for (i, &x) in self.input.iter().enumerate() {
                if (self.head)(i) {
                    acc = None;
                }
                let next = acc.map_or(x, |a| O::combine(a, x));
                out.push(if self.exclusive { acc.unwrap_or_else(O::identity) } else { next });
                acc = Some(next);
            }
            out
        }
    }
    T::visit_op(op, Visit { input, head, exclusive })
}

/// The linear recurrence's sequential loop in f64, and the magnitude `s[t] = |a[t]|·s[t-1] +
/// |b[t]|` (from |x0|) against which rounding error is bounded.
pub fn recurrence<F: Copy + Into<f64>>(a: &[F], b: &[F], x0: F) -> (Vec<f64>, Vec<f64>) {
    let (mut x, mut s) = (x0.into(), x0.into().abs());
    a.iter()
        .zip(b)
        .map(|(&a, &b)| {
            let (a, b): (f64, f64) = (a.into(), b.into());
            x = a * x + b;
            s = a.abs() * s + b.abs();
            (x, s)
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_keeps_in_order() {
        let x = [3u32, 5, 0, 7, 1, 4];
        assert_eq!(compact(&x, None, Keep::Greater(3)), [5, 7, 4]);
        assert_eq!(compact(&x, None, Keep::NonZero), [3, 5, 7, 1, 4]);
        assert_eq!(compact(&x, Some(&[1, 0, 0, 1, 0, 1]), Keep::Flags), [3, 7, 4]);
        let f = [-0.0f32, f32::NAN, 2.0];
        assert_eq!(compact(&f, None, Keep::Greater(1.0)), [2.0]);
        assert_eq!(compact(&f, None, Keep::NonZero).len(), 2);
    }

    /// `keys` sorted stably in [`sort_order`], as positions.
    fn argsort<T: Element>(keys: &[T], descending: bool) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..keys.len()).collect();
        idx.sort_by(|&i, &j| sort_order(keys[i], keys[j], descending));
        idx
    }

    #[test]
    fn the_sort_order_puts_minus_zero_first_and_nans_last() {
        let nan = f32::from_bits(0x7fc0_0001);
        let keys = [1.0f32, -0.0, f32::NAN, 0.0, -f32::NAN, f32::INFINITY, nan, f32::NEG_INFINITY, -1.0, 0.0];
        assert_eq!(argsort(&keys, false), [7, 8, 1, 3, 9, 0, 5, 2, 4, 6]);
        assert_eq!(argsort(&keys, true), [5, 0, 3, 9, 1, 8, 7, 2, 4, 6]);
        let doubles: Vec<f64> = keys.iter().map(|&x| x as f64).collect();
        assert_eq!(argsort(&doubles, false), argsort(&keys, false));
        assert_eq!(argsort(&doubles, true), argsort(&keys, true));
        assert_eq!(sort_order(-0.0f64, 0.0, false), Ordering::Less);
        assert_eq!(sort_order(-0.0f64, 0.0, true), Ordering::Greater);
        assert_eq!(sort_order(f64::NAN, -f64::NAN, true), Ordering::Equal);
        assert_eq!(sort_order(f64::NAN, f64::INFINITY, true), Ordering::Greater);
        let sorted = sort(&keys, Some(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9])).1.unwrap();
        assert_eq!(sorted, [7, 8, 1, 3, 9, 0, 5, 2, 4, 6]);
    }

    #[test]
    fn the_sort_order_of_integers_is_their_value() {
        assert_eq!(argsort(&[2i32, -1, i32::MIN, 2, i32::MAX, -1], false), [2, 1, 5, 0, 3, 4]);
        assert_eq!(argsort(&[2i32, -1, i32::MIN, 2, i32::MAX, -1], true), [4, 0, 3, 1, 5, 2]);
        assert_eq!(argsort(&[i64::MIN, -1, 0, i64::MAX], true), [3, 2, 1, 0]);
        assert_eq!(argsort(&[u64::MAX, 0, 1 << 63, u64::MAX], false), [1, 2, 0, 3]);
        assert_eq!(argsort(&[u32::MAX, 0, 1 << 31], true), [0, 2, 1]);
        assert_eq!(argsort(&[255u8, 0, 128, 0], false), [1, 3, 2, 0]);
        assert_eq!(argsort(&[u16::MAX, 1, 0x8000], true), [0, 2, 1]);
    }

    #[test]
    fn segments_restart_at_heads() {
        let x = [1u32, 2, 3, 4, 5, 6];
        let heads = [true, false, true, false, false, true];
        assert_eq!(segmented(Op::Add, &x, |i| heads[i], false).unwrap(), [1, 3, 3, 7, 12, 6]);
        assert_eq!(segmented(Op::Add, &x, |i| heads[i], true).unwrap(), [0, 1, 0, 3, 7, 0]);
        assert_eq!(segmented(Op::Max, &x, |i| i % 4 == 0, false).unwrap(), [1, 2, 3, 4, 5, 6]);
        assert!(segmented::<u32>(Op::Add, &[], |_| false, false).unwrap().is_empty());
    }

    #[test]
    fn histograms_count_bins_and_group_stably() {
        let h = histogram(&[0.5f64, 0.1, 2.0, 0.55, f64::NAN, 0.0], 2, 0.0, 1.0).unwrap();
        assert_eq!((h.counts, h.starts, h.outside), (vec![2, 2], vec![0, 2], 2));
        assert_eq!(h.permutation, [1, 5, 0, 3, 2, 4]);
        assert!(histogram(&[1u32], 0, 0.0, 1.0).unwrap_err().to_string().contains("0 bins"));
        assert!(histogram(&[1u32], 3, 1.0, 1.0).unwrap_err().to_string().contains("empty"));
    }

    #[test]
    fn csr_offsets_count_rows_including_empty_ones() {
        assert_eq!(csr_offsets(&[0, 0, 2, 2, 2], 4), [0, 2, 2, 5, 5]);
        assert_eq!(csr_offsets(&[], 1), [0, 0]);
    }

    #[test]
    fn sorts_are_stable_and_put_nans_last() {
        let (k, v) = sort(&[2.0f32, -0.0, f32::NAN, 0.0, 2.0], Some(&[0, 1, 2, 3, 4]));
        assert_eq!(v.unwrap(), [1, 3, 0, 4, 2]);
        assert!(k[4].is_nan());
    }
}
