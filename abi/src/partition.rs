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

/// Threads per block and elements per thread of the partition kernels.
pub const THREADS: u32 = 256;
pub const ITEMS: u32 = 8;
pub const TILE: u32 = THREADS * ITEMS;

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

/// The digit of a radix pass.
#[inline(always)]
pub fn radix_digit(order_key: u64, shift: u32) -> u32 {
    ((order_key >> shift) & ((1 << RADIX_BITS) - 1)) as u32
}

/// Shared memory of the partition kernels: counting keeps one counter per digit; the scatter
/// one per warp and digit (windows as the kernels carve them).
pub const fn count_smem(digits: u32) -> u32 {
    crate::layout::smem_window(digits, 4)
}
pub const fn scatter_smem(digits: u32) -> u32 {
    crate::layout::smem_window((THREADS / 32) * digits, 4)
}
