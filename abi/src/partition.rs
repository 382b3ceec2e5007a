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
/// (or NaN): `(x - lo) / (hi - lo) * bins` rounded down, in f64 on both sides, so the GPU and the
/// CPU agree exactly.
#[inline(always)]
pub fn bin_of(x: f64, lo: f64, hi: f64, bins: u32) -> u32 {
    if x >= lo && x < hi {
        let b = scaled_floor(x - lo, hi - lo, bins);
        if b < bins {
            b
        } else {
            bins - 1
        }
    } else {
        bins
    }
}

/// `(d / w * bins) as u32` for `0 <= d < w`, mostly without the division, which costs a GPU
/// thread several times a multiplication. `d * (bins / w)` and `d / w * bins` each lie within
/// two roundings of the exact `d * bins / w`, below 1025, so they differ by less than 2^-40;
/// where the product's fraction keeps 2^-30 from a whole number, both round down alike, and
/// only elsewhere (about one value in 10^9 at random) is the quotient formed.
#[inline(always)]
fn scaled_floor(d: f64, w: f64, bins: u32) -> u32 {
    const MARGIN: f64 = 1.0 / (1u64 << 30) as f64;
    let t = d * (bins as f64 / w);
    // Only a product in range (not NaN) is truncated, so without the saturating cast's clamps.
    if (0.0..2048.0).contains(&t) {
        // SAFETY: 0 <= t < 2048, so its whole part is a u32.
        let whole = unsafe { t.to_int_unchecked::<u32>() };
        // Exact: `whole <= t < 2^11`, so the difference needs no rounding.
        let fraction = t - whole as f64;
        if fraction > MARGIN && fraction < 1.0 - MARGIN {
            return whole;
        }
    }
    (d / w * bins as f64) as u32
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The quotient's rounding, which `scaled_floor` must give.
    fn by_division(x: f64, lo: f64, hi: f64, bins: u32) -> u32 {
        if x >= lo && x < hi {
            (((x - lo) / (hi - lo) * bins as f64) as u32).min(bins - 1)
        } else {
            bins
        }
    }

    fn splitmix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e3779b97f4a7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    #[test]
    fn bins_match_the_division_at_every_edge_and_at_random() {
        let ranges = [(0.0, 1.0), (-0.9, 0.9), (0.0, 1000.0), (-250.0, 1000.0), (0.1, 0.7), (-3.0, 100.0), (0.0, 1e19)];
        let mut checked = 0u64;
        for &(lo, hi) in &ranges {
            for bins in [1u32, 3, 7, 10, 100, 255, 256, 999, 1000, 1023, 1024] {
                let check = |x: f64| {
                    assert_eq!(
                        bin_of(x, lo, hi, bins),
                        by_division(x, lo, hi, bins),
                        "{x} in {bins} bins over [{lo}, {hi})"
                    )
                };
                // Each edge as the quotient puts it, and its neighbours a few units in the last place away.
                for k in 0..=bins {
                    let edge = lo + (hi - lo) * k as f64 / bins as f64;
                    let mut up = edge;
                    let mut down = edge;
                    for _ in 0..4 {
                        check(up);
                        check(down);
                        up = f64::from_bits(up.to_bits().wrapping_add(if up >= 0.0 { 1 } else { u64::MAX }));
                        down = f64::from_bits(down.to_bits().wrapping_add(if down > 0.0 { u64::MAX } else { 1 }));
                    }
                    checked += 8;
                }
                for i in 0..20_000u64 {
                    let unit = (splitmix(i ^ (bins as u64) << 32) >> 11) as f64 / (1u64 << 53) as f64;
                    check(lo + (hi - lo) * unit);
                    check((lo + (hi - lo) * unit) as f32 as f64);
                    checked += 2;
                }
            }
        }
        assert!(checked > 3_000_000);
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1.0, 0.999_999_999_999_999_9] {
            assert_eq!(bin_of(x, 0.0, 1.0, 10), by_division(x, 0.0, 1.0, 10));
        }
    }
}
