//! Operators and element types, shared with the host through `scan-abi` so that the CPU
//! reference computes exactly what the kernels compute.

pub use scan_abi::element::{Element, IntElement};
pub use scan_abi::op::{Add, Affine, AffineF32, AffineF64, And, Max, Min, Mul, Or, ScanOp, Xor};

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
