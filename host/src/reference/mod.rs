//! CPU references: what every GPU result is checked against.
//!
//! [`scan_with`] is the sequential left fold with exactly the kernels' operator semantics
//! (shared through `scan-abi`): for integers and for min/max it is what every correct GPU scan
//! must match bit for bit. [`scan`] computes the same thing in parallel chunks, which is exact
//! because these operators are associative. For float sums and products the GPU combines in a
//! different order, so [`float_reference`] computes the exact result to about 100 bits
//! (double-double arithmetic) together with the scale against which rounding error is measured
//! (see [`verify`]). [`replica`] is the deterministic scan's own order, [`apps`] the
//! applications' references.

pub mod apps;
#[cfg(test)]
mod bound_tests;
pub mod replica;
pub mod verify;

use crate::element::{Element, OpVisitor};
use crate::error::Result;
use rayon::prelude::*;
use scan_abi::{Op, ScanOp};

/// Elements per chunk of the parallel references.
const CHUNK: usize = 1 << 16;

/// Sequential scan of `input` with `O`.
pub fn scan_with<T: Copy, O: ScanOp<T>>(input: &[T], exclusive: bool, init: Option<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(input.len());
    let mut acc = init;
    for &x in input {
        let next = match acc {
            Some(a) => O::combine(a, x),
            None => x,
        };
        out.push(if exclusive { acc.unwrap_or_else(O::identity) } else { next });
        acc = Some(next);
    }
    out
}

/// The scan of `input` with `O`, computed in parallel chunks: every chunk is scanned alone, the
/// chunk totals are scanned in order, and each chunk's prefix is combined in front of its
/// elements. Equal to [`scan_with`] for every associative operator.
pub fn scan_parallel_with<T: Copy + Send + Sync, O: ScanOp<T>>(
    input: &[T],
    exclusive: bool,
    init: Option<T>,
) -> Vec<T> {
    let mut out = vec![O::identity(); input.len()];
    let totals: Vec<T> = out
        .par_chunks_mut(CHUNK)
        .zip(input.par_chunks(CHUNK))
        .map(|(o, i)| {
            o.copy_from_slice(&scan_with::<T, O>(i, false, None));
            o[o.len() - 1]
        })
        .collect();
    let prefixes = scan_with::<T, O>(&totals, true, init);
    let has_prefix = |c: usize| c > 0 || init.is_some();
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let prefix = has_prefix(c).then_some(prefixes[c]);
        let combine = |p: Option<T>, x: T| p.map_or(x, |p| O::combine(p, x));
        if exclusive {
            for k in (1..o.len()).rev() {
                o[k] = combine(prefix, o[k - 1]);
            }
            o[0] = prefix.unwrap_or_else(O::identity);
        } else {
            for x in o.iter_mut() {
                *x = combine(prefix, *x);
            }
        }
    });
    out
}

/// A CPU scan generic over the operator, callable with a runtime [`Op`] through [`run_with_op`].
pub trait ScanFn {
    fn scan<T: Copy + Send + Sync, O: ScanOp<T>>(input: &[T], exclusive: bool, init: Option<T>) -> Vec<T>;
}

/// Runs `F` with the operator type of `op`.
pub fn run_with_op<T: Element, F: ScanFn>(op: Op, input: &[T], exclusive: bool, init: Option<T>) -> Result<Vec<T>> {
    struct Visit<'a, T, F> {
        input: &'a [T],
        exclusive: bool,
        init: Option<T>,
        f: std::marker::PhantomData<F>,
    }
    impl<T: Element, F: ScanFn> OpVisitor<T> for Visit<'_, T, F> {
        type Output = Vec<T>;
        fn visit<O: ScanOp<T>>(self) -> Vec<T> {
            F::scan::<T, O>(self.input, self.exclusive, self.init)
        }
    }
    T::visit_op(op, Visit::<T, F> { input, exclusive, init, f: std::marker::PhantomData })
}

struct Parallel;

impl ScanFn for Parallel {
    fn scan<T: Copy + Send + Sync, O: ScanOp<T>>(input: &[T], exclusive: bool, init: Option<T>) -> Vec<T> {
        scan_parallel_with::<T, O>(input, exclusive, init)
    }
}

/// The scan of `input` with the runtime operator `op` (in parallel; see [`scan_parallel_with`]).
pub fn scan<T: Element>(op: Op, input: &[T], exclusive: bool, init: Option<T>) -> Result<Vec<T>> {
    run_with_op::<T, Parallel>(op, input, exclusive, init)
}

/// The widening sum of `input` into `T`: each element converted, then summed in index order
/// (in parallel, as [`scan`]). With deterministic half floats the GPU's result is instead
/// [`replica::single_pass`] of the widened input.
pub fn widening<N: crate::WidensTo<T>, T: Element>(input: &[N], exclusive: bool, init: Option<T>) -> Result<Vec<T>> {
    scan(Op::Add, &widened(input), exclusive, init)
}

/// Each element of `input` converted into `T` as the widening scan converts it.
pub fn widened<N: crate::WidensTo<T>, T: Element>(input: &[N]) -> Vec<T> {
    input.par_iter().map(|&x| x.widen()).collect()
}

/// A double-double number: `hi + lo` with `|lo| <= ulp(hi)/2`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    fn new(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    /// Knuth's TwoSum, then renormalise.
    fn add(self, x: f64) -> Dd {
        let s = self.hi + x;
        let v = s - self.hi;
        let err = (self.hi - (s - v)) + (x - v);
        let lo = self.lo + err;
        let hi = s + lo;
        Dd { hi, lo: lo - (hi - s) }
    }

    /// TwoProduct with a fused multiply-add, then renormalise.
    fn mul(self, x: f64) -> Dd {
        let p = self.hi * x;
        let err = self.hi.mul_add(x, -p);
        let lo = err + self.lo * x;
        let hi = p + lo;
        Dd { hi, lo: lo - (hi - p) }
    }

    fn add_dd(self, o: Dd) -> Dd {
        let r = self.add(o.hi);
        let hi = r.hi + (r.lo + o.lo);
        Dd { hi, lo: (r.lo + o.lo) - (hi - r.hi) }
    }

    fn mul_dd(self, o: Dd) -> Dd {
        let r = self.mul(o.hi);
        let extra = self.hi * o.lo;
        let hi = r.hi + (r.lo + extra);
        Dd { hi, lo: (r.lo + extra) - (hi - r.hi) }
    }

    fn value(self) -> f64 {
        self.hi + self.lo
    }
}

/// Exact-to-~106-bits scan values and the error scales of a float sum or product scan.
#[derive(Clone, Debug, Default)]
pub struct FloatReference {
    /// The scan result (inclusive or exclusive as asked), rounded to f64.
    pub value: Vec<f64>,
    /// Sum of magnitudes of the terms combined into each result (for products: the magnitude of
    /// the result); rounding error is bounded relative to this.
    pub scale: Vec<f64>,
}

/// Reference for float `add` and `mul` scans (other operators are exact: use [`scan`]), computed
/// in parallel chunks with double-double arithmetic.
pub fn float_reference<T: Element>(op: Op, input: &[T], exclusive: bool, init: Option<T>) -> FloatReference {
    let product = op == Op::Mul;
    let unit = Dd::new(if product { 1.0 } else { 0.0 });
    let step = |acc: Dd, x: f64| if product { acc.mul(x) } else { acc.add(x) };
    let join = |a: Dd, b: Dd| if product { a.mul_dd(b) } else { a.add_dd(b) };
    // Chunk totals (value, magnitude sum), then each chunk's exact prefix.
    let totals: Vec<(Dd, f64)> = input
        .par_chunks(CHUNK)
        .map(|c| c.iter().fold((unit, 0.0), |(acc, mag), &x| (step(acc, x.to_f64()), mag + x.to_f64().abs())))
        .collect();
    let start = init.map(|v| v.to_f64());
    let mut prefix = Vec::with_capacity(totals.len());
    let mut acc = (Dd::new(start.unwrap_or(unit.hi)), start.map_or(0.0, f64::abs));
    for &(t, m) in &totals {
        prefix.push(acc);
        acc = (join(acc.0, t), acc.1 + m);
    }
    let mut r = FloatReference { value: vec![0.0; input.len()], scale: vec![0.0; input.len()] };
    r.value.par_chunks_mut(CHUNK).zip(r.scale.par_chunks_mut(CHUNK)).zip(input.par_chunks(CHUNK)).enumerate().for_each(
        |(c, ((value, scale), chunk))| {
            let (mut acc, mut mag) = prefix[c];
            for (k, &x) in chunk.iter().enumerate() {
                let x = x.to_f64();
                if exclusive {
                    value[k] = acc.value();
                    scale[k] = if product { acc.value().abs() } else { mag };
                }
                acc = step(acc, x);
                mag += x.abs();
                if !exclusive {
                    value[k] = acc.value();
                    scale[k] = if product { acc.value().abs() } else { mag };
                }
            }
        },
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inclusive_exclusive_and_init() {
        let x = [3u32, 1, 7, 0, 4, 1, 6, 3];
        assert_eq!(scan(Op::Add, &x, false, None).unwrap(), [3, 4, 11, 11, 15, 16, 22, 25]);
        assert_eq!(scan(Op::Add, &x, true, None).unwrap(), [0, 3, 4, 11, 11, 15, 16, 22]);
        assert_eq!(scan(Op::Add, &x, true, Some(10)).unwrap(), [10, 13, 14, 21, 21, 25, 26, 32]);
        assert_eq!(scan(Op::Max, &x, false, None).unwrap(), [3, 3, 7, 7, 7, 7, 7, 7]);
        assert_eq!(scan(Op::Min, &x, true, None).unwrap(), [u32::MAX, 3, 1, 1, 0, 0, 0, 0]);
        assert!(scan::<u32>(Op::Add, &[], false, None).unwrap().is_empty());
    }

    #[test]
    fn parallel_chunks_equal_the_sequential_fold() {
        let x = crate::input::generate::<u64>(Op::Affine, 5, 3 * CHUNK + 17);
        for exclusive in [false, true] {
            for init in [None, Some(scan_abi::op::Affine::pack(3, 4))] {
                assert_eq!(
                    scan(Op::Affine, &x, exclusive, init).unwrap(),
                    scan_with::<u64, scan_abi::op::Affine>(&x, exclusive, init)
                );
            }
        }
        let f = crate::input::generate::<f64>(Op::Add, 5, 2 * CHUNK + 3);
        let r = float_reference(Op::Add, &f, false, None);
        let sequential: f64 = f.iter().sum();
        assert!((r.value.last().unwrap() - sequential).abs() < 1e-9);
    }

    #[test]
    fn integers_wrap() {
        assert_eq!(scan(Op::Add, &[u8::MAX, 2], false, None).unwrap(), [255, 1]);
        assert_eq!(scan(Op::Mul, &[i32::MAX, 2], false, None).unwrap(), [i32::MAX, -2]);
    }

    #[test]
    fn float_min_max_ignore_nan_like_minnum() {
        let x = [1.0f32, f32::NAN, -2.0];
        assert_eq!(scan(Op::Min, &x, false, None).unwrap(), [1.0, 1.0, -2.0]);
    }

    #[test]
    fn double_double_reference_is_exact_where_f64_is_not() {
        let x = [1.0f64, 1e-17, 1e-17, -1.0];
        let r = float_reference(Op::Add, &x, false, None);
        assert_eq!(r.value[3], 2e-17);
        assert_eq!(r.scale[3], 2.0 + 2e-17);
        let p = float_reference(Op::Mul, &[3.0f32, 0.5], true, Some(2.0));
        assert_eq!(p.value, [2.0, 6.0]);
    }
}
