//! The scan down the columns of narrow row-major matrices as one scan of their rows.

use crate::arch::{
    lane, load_vec16, shfl_xor, store_vec16,
    WARP,
};
use crate::kernels::Mode;
use crate::lookback::StatusValue;
use crate::op::{combine_after, combine_opt, Lanewise, ScanOp};
use crate::smem::Smem;
use crate::warp;
use scan_abi::args::Pipe;
use scan_abi::shape::VECTOR_BYTES;
use super::{pipeline, blocked, store_share, TileWork};

/// The scan down the columns of a row-major matrix whose rows are `K = C / V` 16-byte vectors,
/// as one scan of its rows under [`Lanewise`] `O`: the narrow matrices that the column tiles of
/// `batched.rs` give one look-back chain per column. Tiles hold whole matrix rows; `O` must
/// commute (the reduction takes lanes out of row order). Kernels exist for rows of 32 bytes
/// (`K = 2`: 8 columns of 4 bytes, 4 of 8) and of 16 bytes (`K = 1`: 4 columns of 4 bytes, 2 of
/// 8). Wider rows are not served here: they need 168-254 registers, and what spills goes to L2,
/// as the stages leave an SM little L1.
///
/// Shares are blocked: each lane a run of `B` whole matrix rows, the warp scanning its lanes' row
/// totals once per share. (Warp-striped shares, a warp scan per row of vectors, are slower for
/// both element sizes.)
#[derive(Clone, Copy)]
pub struct Columns<T, O, const V: usize, const C: usize, const B: usize> {
    out: *mut T,
    exclusive: bool,
    aligned: bool,
    op: core::marker::PhantomData<O>,
}

impl<T, O, const V: usize, const C: usize, const B: usize> TileWork for Columns<T, O, V, C, B>
where
    T: Copy + Send + Sync + 'static,
    O: ScanOp<T>,
    [T; C]: StatusValue,
{
    type T = T;
    type A = [T; C];
    type O = Lanewise<O>;
    type K = ();
    type L = ();
    const V: usize = V;

    #[inline(always)]
    fn start(self) -> Option<[T; C]> {
        None
    }
    #[inline(always)]
    fn fill(self) -> T {
        O::identity()
    }
    #[inline(always)]
    unsafe fn reduce(
        self,
        part: Smem<T>,
        _: Smem<()>,
        _: Smem<()>,
        rows: core::ops::Range<usize>,
        _first: u64,
    ) -> [T; C] {
        const { assert!(O::COMMUTATIVE && C % V == 0 && (C / V).is_power_of_two() && C / V <= 8 && B > 0) };
        let l = lane();
        let share = part.offset((rows.start * WARP as usize * V) as u32);
        let mut acc = [O::identity(); C];
        for i in 0..B {
            acc = Lanewise::<O>::combine(acc, Self::row(share, l, i));
        }
        let mut mask = 1;
        while mask < WARP {
            acc = Lanewise::<O>::combine(acc, shfl_xor(acc, mask));
            mask *= 2;
        }
        acc
    }
    #[inline(always)]
    unsafe fn finish(
        self,
        share: Smem<T>,
        _: Smem<()>,
        _: Smem<()>,
        rows: usize,
        before: Option<[T; C]>,
        first: u64,
        valid: u32,
    ) -> bool {
        let full = self.aligned && valid == WARP * (V * rows) as u32;
        debug_assert!(rows == Self::K * B);
        match (full, self.exclusive) {
            (true, false) => self.scan_blocked::<true, false>(share, before, first, valid),
            (true, true) => self.scan_blocked::<true, true>(share, before, first, valid),
            (false, false) => self.scan_blocked::<false, false>(share, before, first, valid),
            (false, true) => self.scan_blocked::<false, true>(share, before, first, valid),
        }
    }
}

impl<T: Copy + Send + Sync + 'static, O: ScanOp<T>, const V: usize, const C: usize, const B: usize>
    Columns<T, O, V, C, B>
{
    /// Vectors per matrix row.
    const K: usize = C / V;

    /// How far lane `l` turns its rows of a blocked share: it accesses a row's vectors from vector
    /// `rotation` on, round. A 16-byte access is served eight lanes at a time, and in runs of `B`
    /// (odd) rows of `K` vectors, the rows of lanes `l` and `l + 8 / K` start in the same banks;
    /// turning each group of `8 / K` lanes one vector further puts all eight lanes' accesses in
    /// different banks: one wavefront per eight lanes instead of `K` (for `K = 2`, lanes with
    /// bit 2 set take the second vector first).
    #[inline(always)]
    fn rotation(l: u32) -> usize {
        (l as usize / (8 / Self::K)) % Self::K
    }

    /// `x` turned by `by` vectors: vector `s` of the result is vector `(s + by) % K` of `x`. One
    /// select per element for each bit of `by`, not an index by `by`, which would put the row in
    /// local memory.
    #[inline(always)]
    fn rotate(x: [T; C], by: usize) -> [T; C] {
        let mut x = x;
        let mut bit = 1;
        while bit < Self::K {
            let turn = by & bit != 0;
            x = core::array::from_fn(|k| if turn { x[(k + bit * V) % C] } else { x[k] });
            bit *= 2;
        }
        x
    }

    /// Where the `s`-th vector lane `l` accesses of its matrix row `i` of a blocked share lies (an
    /// element index into the share), for the lane's `rotation`.
    #[inline(always)]
    fn vector_at(l: u32, i: usize, s: usize, rotation: usize) -> u32 {
        blocked(i, l, B, C) + (((s + rotation) % Self::K) * V) as u32
    }

    /// Lane `l`'s matrix row `i` of a blocked share, in column order. (Turned back per row by
    /// selects: rows kept in each lane's turned order, turning only the lane's total and prefix,
    /// took the 32-byte rows' kernels from 0 to 96-176 bytes of spills.)
    #[inline(always)]
    unsafe fn row(share: Smem<T>, l: u32, i: usize) -> [T; C] {
        let rot = Self::rotation(l);
        let mut r = [O::identity(); C];
        for s in 0..Self::K {
            let v = load_vec16::<T, V>(share.at(Self::vector_at(l, i, s, rot)));
            for k in 0..V {
                r[s * V + k] = v[k];
            }
        }
        Self::rotate(r, (Self::K - rot) % Self::K)
    }

    /// Stores `r` as lane `l`'s matrix row `i` of a blocked share.
    #[inline(always)]
    unsafe fn set_row(share: Smem<T>, l: u32, i: usize, r: [T; C]) {
        let rot = Self::rotation(l);
        let r = Self::rotate(r, rot);
        for s in 0..Self::K {
            let v: [T; V] = core::array::from_fn(|k| r[s * V + k]);
            store_vec16::<T, V>(share.at(Self::vector_at(l, i, s, rot)), v);
        }
    }

    /// [`TileWork::finish`]: each lane scans its `B` rows, leaving
    /// each row's running value in its place (a row's running value in registers would spill), the
    /// warp scans its lanes' totals, then each lane applies what comes before it to its rows; stored
    /// as [`Scan::scan_blocked`] stores.
    #[inline(always)]
    unsafe fn scan_blocked<const FULL: bool, const EXCLUSIVE: bool>(
        self,
        share: Smem<T>,
        running: Option<[T; C]>,
        first: u64,
        valid: u32,
    ) -> bool {
        let l = lane();
        let mut through = Self::row(share, l, 0);
        for i in 1..B {
            through = Lanewise::<O>::combine(through, Self::row(share, l, i));
            Self::set_row(share, l, i, through);
        }
        let (before, _) = warp::scan::<[T; C], Lanewise<O>>(through);
        let prefix = combine_opt::<[T; C], Lanewise<O>>(running, before);
        let dst = self.out.wrapping_add(first as usize);
        let mut previous = prefix.unwrap_or([O::identity(); C]);
        for i in 0..B {
            let through = combine_after::<[T; C], Lanewise<O>>(prefix, Self::row(share, l, i));
            let v = if EXCLUSIVE { previous } else { through };
            previous = through;
            if FULL {
                Self::set_row(share, l, i, v);
            } else {
                let at = blocked(i, l, B, C);
                for (k, &e) in v.iter().enumerate() {
                    if at + (k as u32) < valid {
                        *dst.add(at as usize + k) = e;
                    }
                }
            }
        }
        if FULL {
            store_share(share, dst, valid)
        }
        FULL
    }
}

/// The pipelined scan down the columns of the `n / C` rows of `C` columns at `inp` (see
/// [`Columns`]); other arguments as [`single_pass_pipelined`] (flags: exclusive only).
#[inline(always)]
pub unsafe fn columns_pipelined<
    T,
    O,
    const V: usize,
    const C: usize,
    const R: u32,
    const S: u32,
    const VECS: usize,
    const D: usize,
    const B: usize,
>(
    inp: *const T,
    out: *mut T,
    n: u64,
    flags: u32,
    temp: *mut u8,
    pipe: Pipe,
) where
    T: Copy + Send + Sync + 'static,
    O: ScanOp<T>,
    [T; C]: StatusValue,
{
    let aligned = (inp as usize | out as usize) % VECTOR_BYTES == 0;
    let exclusive = Mode::from_flags(flags).exclusive;
    let work = Columns::<T, O, V, C, B> { out, exclusive, aligned, op: core::marker::PhantomData };
    pipeline::<Columns<T, O, V, C, B>, R, S, VECS, D, false, false, 0>(
        work,
        inp,
        n,
        n,
        aligned,
        temp,
        pipe,
    )
}

