//! Operators and element types, shared with the host through `scan-abi` so that the CPU
//! reference computes exactly what the kernels compute.

pub use scan_abi::element::{Element, IntElement};
pub use scan_abi::op::{Add, Affine, AffineF32, AffineF64, And, Max, Min, Mul, Or, ScanOp, Xor};

use crate::arch::{byte_of, dp4a, pack_low_bytes};
use core::marker::PhantomData;

/// `a ⊕ b`, or `b` alone when there is no `a`: avoids combining with the identity where that
/// is not exact (float addition turns a leading `-0.0` into `+0.0`).
#[inline(always)]
pub fn combine_after<T: Copy, O: ScanOp<T>>(a: Option<T>, b: T) -> T {
    match a {
        Some(a) => O::combine(a, b),
        None => b,
    }
}

/// `a ⊕ b` where either side may be absent.
#[inline(always)]
pub fn combine_opt<T: Copy, O: ScanOp<T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(O::combine(a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A value and whether a segment starts within what it covers (the segmented scans' element).
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub struct Seg<T> {
    pub head: u32,
    pub v: T,
}

/// The segmented form of `O`: a head on the right discards what came before it.
#[derive(Clone, Copy, Default)]
pub struct SegOp<O>(PhantomData<O>);

impl<T: Element, O: ScanOp<T>> ScanOp<Seg<T>> for SegOp<O> {
    #[inline(always)]
    fn identity() -> Seg<T> {
        Seg { head: 0, v: O::identity() }
    }
    #[inline(always)]
    fn combine(a: Seg<T>, b: Seg<T>) -> Seg<T> {
        Seg { head: a.head | b.head, v: if b.head != 0 { b.v } else { O::combine(a.v, b.v) } }
    }
}

/// `O` applied column by column to rows of `C` elements (the aggregates of the narrow-column
/// scan, [`crate::kernels::pipelined::Columns`]): rows combine as their columns do.
#[derive(Clone, Copy, Default)]
pub struct Lanewise<O>(PhantomData<O>);

impl<T: Copy + Send + Sync + 'static, O: ScanOp<T>, const C: usize> ScanOp<[T; C]> for Lanewise<O> {
    const COMMUTATIVE: bool = O::COMMUTATIVE;
    const IDEMPOTENT: bool = O::IDEMPOTENT;
    #[inline(always)]
    fn identity() -> [T; C] {
        [O::identity(); C]
    }
    #[inline(always)]
    fn combine(a: [T; C], b: [T; C]) -> [T; C] {
        core::array::from_fn(|k| O::combine(a[k], b[k]))
    }
}

/// Scans of four 1-byte elements packed in a word, a word at a time: add by `dp4a`, xor, or and
/// and by shifted words, the others byte by byte (each taken out by `prmt`) after a concrete
/// carry, which is exact for integer operators. A few instructions per word where keeping an
/// optional prefix per byte and shifting and masking each byte in and out took several per byte.
/// Bytes are in element order from the lowest.
pub trait PackedBytes: ScanOp<u8> {
    /// `acc` (a byte value in its low byte) combined with the four bytes of `w` in order; only the
    /// low byte of the result counts.
    #[inline(always)]
    fn reduce_word(w: u32, acc: u32) -> u32 {
        (0..4).fold(acc as u8, |a, k| Self::combine(a, byte_of(w, k) as u8)) as u32
    }
    /// The inclusive (or exclusive) scan of the four bytes of `w` after `carry` (a byte value in
    /// its low byte), and the combine of `carry` with all four (in the low byte) for the next word.
    #[inline(always)]
    fn scan_word(w: u32, carry: u32, exclusive: bool) -> (u32, u32) {
        let mut c = carry as u8;
        let out = [0, 1, 2, 3].map(|k| {
            let through = Self::combine(c, byte_of(w, k) as u8);
            let y = if exclusive { c } else { through };
            c = through;
            y as u32
        });
        (pack_low_bytes(out[0], out[1], out[2], out[3]), c as u32)
    }
}

impl PackedBytes for Add {
    #[inline(always)]
    fn reduce_word(w: u32, acc: u32) -> u32 {
        dp4a(w, 0x0101_0101, acc)
    }
    /// Byte `k`'s prefix is `carry` plus the dot product of `w` with ones in bytes `0..=k`, so four
    /// `dp4a` give the four sums (carries past a byte land in bits that are dropped when packing).
    #[inline(always)]
    fn scan_word(w: u32, carry: u32, exclusive: bool) -> (u32, u32) {
        let through = [0x0000_0001, 0x0000_0101, 0x0001_0101, 0x0101_0101].map(|m| dp4a(w, m, carry));
        let packed = if exclusive {
            pack_low_bytes(carry, through[0], through[1], through[2])
        } else {
            pack_low_bytes(through[0], through[1], through[2], through[3])
        };
        (packed, through[3])
    }
}

/// The word-wide scan of a bitwise operator `f`: two shifted combines give every byte's
/// inclusive value within the word; `carry` (its byte copied into all four, with `fill` in the
/// bytes a shift empties) is then combined into all of them.
#[inline(always)]
fn bitwise_scan_word(w: u32, carry: u32, exclusive: bool, fill: u32, f: impl Fn(u32, u32) -> u32) -> (u32, u32) {
    let p = f(w, w << 8 | fill & 0xff);
    let p = f(p, p << 16 | fill & 0xffff);
    let through = f(p, (carry & 0xff) * 0x0101_0101);
    let packed = if exclusive { through << 8 | carry & 0xff } else { through };
    (packed, through >> 24)
}

/// The four bytes of `w` combined by a bitwise operator `f`, in the low byte.
#[inline(always)]
fn bitwise_fold(w: u32, f: impl Fn(u32, u32) -> u32) -> u32 {
    let h = f(w, w >> 16);
    f(h, h >> 8)
}

impl PackedBytes for Xor {
    #[inline(always)]
    fn reduce_word(w: u32, acc: u32) -> u32 {
        acc ^ bitwise_fold(w, |a, b| a ^ b)
    }
    #[inline(always)]
    fn scan_word(w: u32, carry: u32, exclusive: bool) -> (u32, u32) {
        bitwise_scan_word(w, carry, exclusive, 0, |a, b| a ^ b)
    }
}

impl PackedBytes for Or {
    #[inline(always)]
    fn reduce_word(w: u32, acc: u32) -> u32 {
        acc | bitwise_fold(w, |a, b| a | b)
    }
    #[inline(always)]
    fn scan_word(w: u32, carry: u32, exclusive: bool) -> (u32, u32) {
        bitwise_scan_word(w, carry, exclusive, 0, |a, b| a | b)
    }
}

impl PackedBytes for And {
    #[inline(always)]
    fn reduce_word(w: u32, acc: u32) -> u32 {
        acc & bitwise_fold(w, |a, b| a & b)
    }
    #[inline(always)]
    fn scan_word(w: u32, carry: u32, exclusive: bool) -> (u32, u32) {
        bitwise_scan_word(w, carry, exclusive, u32::MAX, |a, b| a & b)
    }
}

impl PackedBytes for Mul {}
impl PackedBytes for Min {}
impl PackedBytes for Max {}
