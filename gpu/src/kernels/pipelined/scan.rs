//! The scan's work on a tile (reduce, then scan from the prefix), and its kernels' driver.

use crate::arch::{
    lane,
    WARP,
};
use crate::kernels::Mode;
use crate::lookback::StatusValue;
use crate::op::{combine_after, combine_opt, ScanOp};
use crate::smem::Smem;
use crate::vector::Vector16;
use crate::warp;
use core::mem::size_of;
use scan_abi::args::Pipe;
use scan_abi::shape::VECTOR_BYTES;
use super::{pipeline, blocked, store_share, striped, TileWork};

/// The scan's work: each part reduced with `O`, each share scanned from its prefix and stored.
/// `B = 0`: warp-striped rows, a warp scan per row of vectors. `B > 0`: blocked shares of `B`
/// vectors per lane (`B` = rows per share, odd), each lane scanning its own run and the warp
/// scanning the lanes' totals once per share: one warp scan per `B` rows, for elements whose
/// warp scan is dear (a 16-byte affine map takes four shuffles and two multiplies a step).
#[derive(Clone, Copy)]
pub struct Scan<T, O, const B: usize> {
    out: *mut T,
    init: T,
    mode: Mode,
    aligned: bool,
    op: core::marker::PhantomData<O>,
}

impl<T: StatusValue + Vector16<O>, O: ScanOp<T>, const B: usize> TileWork for Scan<T, O, B> {
    type T = T;
    type A = T;
    type O = O;
    type K = ();
    type L = ();
    const V: usize = <T as Vector16<O>>::ELEMS;

    #[inline(always)]
    fn start(self) -> Option<T> {
        if self.mode.has_init {
            Some(self.init)
        } else {
            None
        }
    }
    #[inline(always)]
    fn fill(self) -> T {
        O::identity()
    }
    #[inline(always)]
    unsafe fn reduce(self, part: Smem<T>, _: Smem<()>, _: Smem<()>, rows: core::ops::Range<usize>, _first: u64) -> T {
        let l = lane();
        if B > 0 {
            let share = part.offset((rows.start * WARP as usize * Self::V) as u32);
            let mut acc = O::identity();
            for i in 0..B {
                acc = T::fold(acc, &T::load(share.at(blocked(i, l, B, Self::V))));
            }
            warp::reduce::<T, O>(acc)
        } else if O::COMMUTATIVE {
            let mut acc = O::identity();
            for j in rows {
                acc = T::fold(acc, &T::load(part.at(striped(j, l, Self::V))));
            }
            warp::reduce::<T, O>(acc)
        } else {
            let mut acc: Option<T> = None;
            for j in rows {
                let x = T::local(T::load(part.at(striped(j, l, Self::V)))).1;
                acc = Some(combine_after::<T, O>(acc, warp::reduce::<T, O>(x)));
            }
            acc.unwrap_or(O::identity())
        }
    }
    #[inline(always)]
    unsafe fn finish(
        self,
        share: Smem<T>,
        _: Smem<()>,
        _: Smem<()>,
        rows: usize,
        running: Option<T>,
        first: u64,
        valid: u32,
    ) -> bool {
        // Each case is its own copy of the row loop, so a full tile's rows carry neither the
        // per-element bounds of a partial one nor both modes' finishing code.
        if B > 0 {
            debug_assert!(rows == B);
            let full = self.aligned && valid == WARP * (Self::V * B) as u32;
            return match (full, self.mode.exclusive) {
                (true, false) => self.scan_blocked::<true, false>(share, running, first, valid),
                (true, true) => self.scan_blocked::<true, true>(share, running, first, valid),
                (false, false) => self.scan_blocked::<false, false>(share, running, first, valid),
                (false, true) => self.scan_blocked::<false, true>(share, running, first, valid),
            };
        }
        if self.aligned && valid == WARP * (Self::V * rows) as u32 {
            if self.mode.exclusive {
                self.scan_rows::<true>(share, rows, running, first, valid, true)
            } else {
                self.scan_rows::<true>(share, rows, running, first, valid, false)
            }
        } else {
            self.scan_rows::<false>(share, rows, running, first, valid, self.mode.exclusive)
        }
        false
    }
}

impl<T: StatusValue + Vector16<O>, O: ScanOp<T>, const B: usize> Scan<T, O, B> {
    /// [`TileWork::finish`] for blocked shares (`B > 0`): each lane scans its `B` vectors, the
    /// warp its lanes' totals, then each lane applies what comes before it. A full share goes
    /// back into its place in shared memory and out by one bulk copy (a lane's own stores would
    /// each cover 32 half sectors); a partial one element by element.
    #[inline(always)]
    unsafe fn scan_blocked<const FULL: bool, const EXCLUSIVE: bool>(
        self,
        share: Smem<T>,
        running: Option<T>,
        first: u64,
        valid: u32,
    ) -> bool {
        let l = lane();
        let v_elems = <T as Vector16<O>>::ELEMS;
        let mut vecs = [T::local(T::load(share.at(blocked(0, l, B, v_elems)))); B];
        for (i, v) in vecs.iter_mut().enumerate().skip(1) {
            *v = T::local(T::load(share.at(blocked(i, l, B, v_elems))));
        }
        let mut total = vecs[0].1;
        for v in &vecs[1..] {
            total = O::combine(total, v.1);
        }
        let (before, _) = T::warp_scan(total);
        let mut prefix = combine_opt::<T, O>(running, before);
        let dst = self.out.wrapping_add(first as usize);
        for (i, &(v, t)) in vecs.iter().enumerate() {
            let at = blocked(i, l, B, v_elems);
            let v = T::finish(v, prefix, EXCLUSIVE);
            prefix = Some(combine_after::<T, O>(prefix, t));
            if FULL {
                T::store(share.at(at), v);
            } else {
                for k in 0..v_elems as u32 {
                    if at + k < valid {
                        *dst.add((at + k) as usize) = T::element(&v, k as usize);
                    }
                }
            }
        }
        if FULL {
            store_share(share, dst, valid)
        }
        FULL
    }

    /// [`TileWork::finish`]'s rows: each scanned from what comes before it and stored, by
    /// vectors where `FULL` (every element valid, addresses aligned), else element by element.
    #[inline(always)]
    unsafe fn scan_rows<const FULL: bool>(
        self,
        share: Smem<T>,
        rows: usize,
        mut running: Option<T>,
        first: u64,
        valid: u32,
        exclusive: bool,
    ) {
        let l = lane();
        let dst = self.out.wrapping_add(first as usize);
        let v_elems = <T as Vector16<O>>::ELEMS;
        for j in 0..rows {
            let at = striped(j, l, v_elems);
            let (v, total) = T::local(T::load(share.at(at)));
            let (before, through) = T::warp_scan(total);
            let v = T::finish(v, combine_opt::<T, O>(running, before), exclusive);
            running = Some(combine_after::<T, O>(running, warp::broadcast(through, WARP - 1)));
            if FULL {
                T::store(dst.add(at as usize), v);
            } else {
                for i in 0..v_elems as u32 {
                    if at + i < valid {
                        *dst.add((at + i) as usize) = T::element(&v, i as usize);
                    }
                }
            }
        }
    }
}

/// The pipelined single-pass scan of `n` elements, or where `ROWS`, of each row of `cols` of them
/// on its own (the batched scan along few long rows; `cols` is ignored otherwise); shapes as
/// `Shapes::scan_pipeline` (`R` reducing warps, `R * S` scanning warps, each reducing warp's `VECS`
/// vectors per thread split among `S` scanning warps, shares blocked in runs of `B` vectors per
/// lane where `B > 0`, see [`Scan`]), `stages` tiles in flight (the host sizes shared memory for
/// them), the look-back in the fixed order where `FIXED` (holding `K` windows; see [`pipeline`]),
/// other arguments as [`crate::kernels::single_pass::single_pass`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn single_pass_pipelined<
    T: StatusValue + Vector16<O>,
    O: ScanOp<T>,
    const R: u32,
    const S: u32,
    const VECS: usize,
    const D: usize,
    const B: usize,
    const ROWS: bool,
    const FIXED: bool,
    const K: usize,
>(
    inp: *const T,
    out: *mut T,
    n: u64,
    cols: u64,
    init: T,
    flags: u32,
    temp: *mut u8,
    pipe: Pipe,
) {
    // Rows start on 16-byte boundaries, or bulk copies cannot take them.
    let rows_aligned = !ROWS || (cols * size_of::<T>() as u64).is_multiple_of(VECTOR_BYTES as u64);
    let aligned = (inp as usize | out as usize) % VECTOR_BYTES == 0 && rows_aligned;
    let work = Scan::<T, O, B> { out, init, mode: Mode::from_flags(flags), aligned, op: core::marker::PhantomData };
    pipeline::<Scan<T, O, B>, R, S, VECS, D, ROWS, FIXED, K>(
        work,
        inp,
        n,
        cols,
        aligned,
        temp,
        pipe,
    )
}
