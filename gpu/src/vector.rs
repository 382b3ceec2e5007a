//! One 16-byte vector of a tile as a thread reduces and scans it: the elements themselves for 4-,
//! 8- and 16-byte types, four packed words for 1- and 2-byte types. Packed, a vector of bytes
//! takes four registers instead of sixteen and is scanned a word at a time
//! ([`crate::op::PackedBytes`]), so kernels written against [`Vector16`] serve every type.

use crate::arch::{byte_of, load_vec16, store_vec16};
use crate::op::{combine_after, PackedBytes, ScanOp};
use crate::warp;
use core::mem::size_of;

/// A 16-byte vector of `Self` under operator `O`.
pub trait Vector16<O: ScanOp<Self>>: Copy {
    /// Elements per vector.
    const ELEMS: usize;
    /// The registers holding one vector.
    type Regs: Copy;

    /// Loads the vector at `p` (16-byte aligned).
    unsafe fn load(p: *const Self) -> Self::Regs;
    /// Stores `v` at `p` (16-byte aligned).
    unsafe fn store(p: *mut Self, v: Self::Regs);
    /// Element `k` of `v`.
    fn element(v: &Self::Regs, k: usize) -> Self;
    /// `acc` combined with the elements of `v` in order.
    fn fold(acc: Self, v: &Self::Regs) -> Self;
    /// What the thread does before it knows the vector's prefix: `v` as [`Self::finish`] wants it,
    /// and the combine of all its elements.
    fn local(v: Self::Regs) -> (Self::Regs, Self);
    /// The inclusive (or exclusive) scan of the vector after `prefix` (none: nothing before it),
    /// from what [`Self::local`] returned.
    fn finish(v: Self::Regs, prefix: Option<Self>, exclusive: bool) -> Self::Regs;
    /// The warp's (exclusive, inclusive) scan of the vectors' totals, as [`warp::scan`].
    #[inline(always)]
    fn warp_scan(total: Self) -> (Option<Self>, Self) {
        warp::scan::<Self, O>(total)
    }
}

/// [`Vector16::warp_scan`] of 1- and 2-byte totals in 32-bit lanes: every operator the packed
/// types have gives the same low bits on the widened values, and the shuffles then need no
/// narrowing between steps.
macro_rules! widened_warp_scan {
    ($t:ty) => {
        #[inline(always)]
        fn warp_scan(total: Self) -> (Option<Self>, Self) {
            let (before, through) = warp::scan::<u32, O>(total as u32);
            (before.map(|b| b as $t), through as $t)
        }
    };
}

/// Wide elements: `local` scans the vector in the thread, so `finish` only applies the prefix.
macro_rules! wide_vector {
    ($($t:ty),*) => { $(
        impl<O: ScanOp<$t>> Vector16<O> for $t {
            const ELEMS: usize = 16 / size_of::<$t>();
            type Regs = [$t; 16 / size_of::<$t>()];

            #[inline(always)]
            unsafe fn load(p: *const Self) -> Self::Regs {
                load_vec16(p)
            }
            #[inline(always)]
            unsafe fn store(p: *mut Self, v: Self::Regs) {
                store_vec16(p, v)
            }
            #[inline(always)]
            fn element(v: &Self::Regs, k: usize) -> Self {
                v[k]
            }
            #[inline(always)]
            fn fold(mut acc: Self, v: &Self::Regs) -> Self {
                for &x in v {
                    acc = O::combine(acc, x);
                }
                acc
            }
            #[inline(always)]
            fn local(mut v: Self::Regs) -> (Self::Regs, Self) {
                for k in 1..v.len() {
                    v[k] = O::combine(v[k - 1], v[k]);
                }
                (v, v[v.len() - 1])
            }
            #[inline(always)]
            fn finish(mut v: Self::Regs, prefix: Option<Self>, exclusive: bool) -> Self::Regs {
                if exclusive {
                    for k in (1..v.len()).rev() {
                        v[k] = combine_after::<$t, O>(prefix, v[k - 1]);
                    }
                    v[0] = prefix.unwrap_or(O::identity());
                } else {
                    for x in v.iter_mut() {
                        *x = combine_after::<$t, O>(prefix, *x);
                    }
                }
                v
            }
        }
    )* };
}
wide_vector!(u32, i32, f32, u64, i64, f64, [f64; 2]);

/// Bits of a 1- or 2-byte element, and back.
#[inline(always)]
pub fn narrow_bits<T: Copy>(x: T) -> u32 {
    unsafe {
        if size_of::<T>() == 1 {
            core::mem::transmute_copy::<T, u8>(&x) as u32
        } else {
            core::mem::transmute_copy::<T, u16>(&x) as u32
        }
    }
}

#[inline(always)]
pub fn narrow_from_bits<T: Copy>(b: u32) -> T {
    unsafe {
        if size_of::<T>() == 1 {
            core::mem::transmute_copy::<u8, T>(&(b as u8))
        } else {
            core::mem::transmute_copy::<u16, T>(&(b as u16))
        }
    }
}

/// Element `k` of a 16-byte vector of 1- or 2-byte elements held as four words (bytes by one
/// `prmt`).
#[inline(always)]
pub fn unpack<T: Copy>(words: &[u32; 4], k: usize) -> T {
    let bits = 8 * size_of::<T>();
    let per_word = 32 / bits;
    let w = words[k / per_word];
    narrow_from_bits::<T>(if bits == 8 { byte_of(w, (k % per_word) as u32) } else { w >> (bits * (k % per_word)) })
}

/// The members of [`Vector16`] that every packed type shares: its vector is four words.
macro_rules! packed_words {
    () => {
        type Regs = [u32; 4];

        #[inline(always)]
        unsafe fn load(p: *const Self) -> Self::Regs {
            load_vec16::<u32, 4>(p as *const u32)
        }
        #[inline(always)]
        unsafe fn store(p: *mut Self, v: Self::Regs) {
            store_vec16::<u32, 4>(p as *mut u32, v)
        }
        #[inline(always)]
        fn element(v: &Self::Regs, k: usize) -> Self {
            unpack(v, k)
        }
    };
}

/// Bytes: reduced and scanned a word at a time.
impl<O: ScanOp<u8> + ScanOp<u32> + PackedBytes> Vector16<O> for u8 {
    const ELEMS: usize = 16;
    packed_words!();
    widened_warp_scan!(u8);

    #[inline(always)]
    fn fold(acc: Self, v: &Self::Regs) -> Self {
        narrow_from_bits(v.iter().fold(narrow_bits(acc), |a, &w| O::reduce_word(w, a)))
    }
    #[inline(always)]
    fn local(v: Self::Regs) -> (Self::Regs, Self) {
        (v, <Self as Vector16<O>>::fold(O::identity(), &v))
    }
    #[inline(always)]
    fn finish(v: Self::Regs, prefix: Option<Self>, exclusive: bool) -> Self::Regs {
        let mut carry = narrow_bits(prefix.unwrap_or(O::identity()));
        v.map(|x| {
            let (w, c) = O::scan_word(x, carry, exclusive);
            carry = c;
            w
        })
    }
}

/// 2-byte elements: taken out of their words one by one, packed again after the scan.
impl<O: ScanOp<u16> + ScanOp<u32>> Vector16<O> for u16 {
    const ELEMS: usize = 8;
    packed_words!();
    widened_warp_scan!(u16);

    #[inline(always)]
    fn fold(mut acc: Self, v: &Self::Regs) -> Self {
        for k in 0..8 {
            acc = O::combine(acc, unpack(v, k));
        }
        acc
    }
    #[inline(always)]
    fn local(v: Self::Regs) -> (Self::Regs, Self) {
        let mut total = unpack::<u16>(&v, 0);
        for k in 1..8 {
            total = O::combine(total, unpack(&v, k));
        }
        (v, total)
    }
    #[inline(always)]
    fn finish(v: Self::Regs, mut running: Option<Self>, exclusive: bool) -> Self::Regs {
        let mut o = [0u32; 4];
        for k in 0..8 {
            let through = combine_after::<u16, O>(running, unpack(&v, k));
            let y = if exclusive { running.unwrap_or(O::identity()) } else { through };
            running = Some(through);
            o[k / 2] |= narrow_bits(y) << (16 * (k % 2));
        }
        o
    }
}
