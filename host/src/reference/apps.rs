//! The applications' CPU references: sequential (or plainly parallel) code that states what each
//! GPU application computes.

use crate::element::{Element, OpVisitor};
use crate::error::{Error, Result};
use crate::options::Keep;
use rayon::prelude::*;
use scan_abi::partition::bin_of;
use scan_abi::{Op, ScanOp};

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

/// A stable sort by `order_key`, values alongside.
pub fn sort<T: Element>(keys: &[T], values: Option<&[u32]>) -> (Vec<T>, Option<Vec<u32>>) {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.par_sort_by_key(|&i| keys[i].order_key());
    (idx.iter().map(|&i| keys[i]).collect(), values.map(|v| idx.iter().map(|&i| v[i]).collect()))
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

/// The histogram of `input` in `bins` bins over `[lo, hi)`, with its stable permutation.
pub fn histogram<T: Element>(input: &[T], bins: u32, lo: f64, hi: f64) -> Result<Histogram> {
    check_bins(bins, lo, hi)?;
    let bin: Vec<u32> = input.iter().map(|x| bin_of(x.as_f64(), lo, hi, bins)).collect();
    let mut all = vec![0u64; bins as usize + 1];
    for &b in &bin {
        all[b as usize] += 1;
    }
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
