//! Stable partition by a small digit: the pass that radix sort, the histogram's counting-sort
//! permutation and bin counts are built from. The digit of an element is defined here, once,
//! for the kernels and the CPU references.

/// Bits of key per radix-sort pass.
pub const RADIX_BITS: u32 = 8;

/// Largest number of histogram bins the partition pass handles (its per-warp counters live in
/// shared memory: warps × (bins + 1) words).
pub const MAX_BINS: u32 = 1024;

/// `mode` argument: digit `(order_key >> shift) & 255`.
pub const MODE_RADIX: u32 = 0;
/// `mode` argument: equal-width bin over `[lo, hi)`; `bins` for values outside it or NaN.
pub const MODE_BINS: u32 = 1;

/// Digits of a pass: 256 for radix, `bins + 1` for bins (the last one collects the outside).
pub const fn digits(mode: u32, bins: u32) -> u32 {
    if mode == MODE_RADIX {
        1 << RADIX_BITS
    } else {
        bins + 1
    }
}

/// The bin of `x` among `bins` equal-width bins over `[lo, hi)`, or `bins` when `x` is outside
/// (or NaN). Computed in f64 on both sides, so the GPU and the CPU agree exactly.
#[inline(always)]
pub fn bin_of(x: f64, lo: f64, hi: f64, bins: u32) -> u32 {
    if x >= lo && x < hi {
        let b = ((x - lo) / (hi - lo) * bins as f64) as u32;
        if b < bins {
            b
        } else {
            bins - 1
        }
    } else {
        bins
    }
}

/// Which digit an element has in one pass: a radix digit of its order key, or its bin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Digit {
    pub mode: u32,
    pub shift: u32,
    pub bins: u32,
    pub lo: f64,
    pub hi: f64,
}

impl Digit {
    /// Bits `shift .. shift + RADIX_BITS` of the order key.
    pub const fn radix(shift: u32) -> Digit {
        Digit { mode: MODE_RADIX, shift, bins: 0, lo: 0.0, hi: 0.0 }
    }

    /// `bins` equal-width bins over `[lo, hi)`, and one more for everything else.
    pub const fn bins(bins: u32, lo: f64, hi: f64) -> Digit {
        Digit { mode: MODE_BINS, shift: 0, bins, lo, hi }
    }

    /// How many digits there are.
    pub const fn count(&self) -> u32 {
        digits(self.mode, self.bins)
    }

    /// The digit of `x`.
    #[inline(always)]
    pub fn of<T: crate::element::Element>(&self, x: T) -> u32 {
        if self.mode == MODE_RADIX {
            radix_digit(x.order_key(), self.shift)
        } else {
            bin_of(x.as_f64(), self.lo, self.hi, self.bins)
        }
    }
}

/// The digit of a radix pass.
#[inline(always)]
pub fn radix_digit(order_key: u64, shift: u32) -> u32 {
    ((order_key >> shift) & ((1 << RADIX_BITS) - 1)) as u32
}
