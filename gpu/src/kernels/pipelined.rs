//! The single-pass scan as a pipeline of warp roles in a persistent block, after CUB's
//! warp-specialized scan for sm_100.
//!
//! In the one-tile-per-block kernel ([`crate::kernels::single_pass`]) a tile's 256 threads wait
//! at a barrier while one warp looks back, and the block holds its tile until then, so the
//! loads in flight stop with it. Here a block keeps `stages` tiles in shared memory and splits
//! the work by warp:
//! - the *load* warp claims the next tile from the counter as soon as a stage is free and has the
//!   bulk-copy engine bring it in (one instruction per tile);
//! - the *reduce* warps reduce each tile as soon as it has landed and publish its aggregate, so a
//!   tile's aggregate never waits on an older tile's look-back;
//! - the *look-back* warp finds each tile's exclusive prefix, tile after tile;
//! - the *scan* warps scan each tile from its prefix and store it, then free its stage.
//!
//! Roles hand stages to each other through shared-memory barrier objects (`arch::mbar_*`), four
//! per stage: full (the copy landed), reduced, ready (prefix known), empty. A claimed tile always
//! has a stage and its copy in flight, and its aggregate depends on nothing but its data, so
//! every look-back ends whatever the scheduling.
//!
//! One launch may scan many rows, each on its own (the batched scan along few long rows): tiles
//! never cross a row, and each row's first tile publishes its inclusive prefix at once, so the
//! look-backs of a row stop at its start.

use crate::arch::{
    atomic_add_u32, bulk_commit, bulk_copy_to_global, bulk_copy_to_shared, bulk_wait_all, bulk_wait_read_all,
    fence_proxy_async_shared, lane, load_vec16, mbar_arrive, mbar_arrive_expect_bytes, mbar_init, mbar_init_fence,
    mbar_wait, shfl_idx, shfl_up, shfl_xor, store_vec16, sync_group, sync_threads, sync_warp, thread_idx, warp_idx,
    WARP,
};
use crate::kernels::{Mode, SHAPES};
use crate::lookback::{StatusValue, TileStatus};
use crate::op::{combine_after, combine_opt, Lanewise, ScanOp};
use crate::smem::{Carver, Smem};
use crate::vector::Vector16;
use crate::warp;
use core::mem::size_of;
use scan_abi::shape::{vector_elems, Pipeline, Tile, VECTOR_BYTES};
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};

/// Where a role is in the ring of stages: the stage its next tile uses, and the parity of that
/// use's barrier phase (it flips each time round the ring).
#[derive(Clone, Copy)]
struct Ring {
    stage: u32,
    phase: u32,
}

impl Ring {
    const START: Ring = Ring { stage: 0, phase: 0 };

    #[inline(always)]
    fn next(self, stages: u32) -> Ring {
        if self.stage + 1 == stages {
            Ring { stage: 0, phase: self.phase ^ 1 }
        } else {
            Ring { stage: self.stage + 1, phase: self.phase }
        }
    }
}

/// Elements of a pipeline's second input staged ahead of each tile: one 16-byte vector, so the
/// tile itself stays on a 16-byte boundary for its bulk copy (1 where there is no second input,
/// which takes no bytes).
#[inline(always)]
const fn side_lead<K>() -> u32 {
    if size_of::<K>() == 0 {
        1
    } else {
        (VECTOR_BYTES / size_of::<K>()) as u32
    }
}

/// Tile index of a stage whose claim found no tile left: every role stops there.
const NO_TILE: u32 = u32::MAX;

/// What a pipelined kernel does with its tiles; [`pipeline`] supplies the roles around it. A
/// tile's work splits in two: a reducing warp's total of its part, as soon as the tile has
/// landed, and a scanning warp's share, once the prefix of everything before it is known.
pub trait TileWork: Copy {
    /// What the stages hold.
    type T: Copy;
    /// A tile's aggregate, published for the look-back.
    type A: StatusValue;
    /// How aggregates combine.
    type O: ScanOp<Self::A>;
    /// A second input staged beside the first, element for element, with the element before
    /// each tile (the keys or head flags of a segmented scan); `()` where there is none.
    type K: Copy;
    /// Elements per 16-byte vector of `T`.
    const V: usize;

    /// Where the second input starts (read only where `K` is not `()`; on a 16-byte boundary
    /// where the pipeline is told its inputs are aligned).
    #[inline(always)]
    fn side(self) -> *const Self::K {
        core::ptr::null()
    }

    /// What comes before the first tile (none: nothing).
    fn start(self) -> Option<Self::A>;
    /// What fills a partial tile's stage past the end.
    fn fill(self) -> Self::T;
    /// The total of rows `rows` (of 32 lanes' vectors each) of the reducing warp's part at
    /// `part`, whose first element is element `first` of the input; in every lane. `side` is the
    /// second input from the element before the part on: `side.get(i + 1)` goes with element `i`.
    unsafe fn reduce(
        self,
        part: Smem<Self::T>,
        side: Smem<Self::K>,
        rows: core::ops::Range<usize>,
        first: u64,
    ) -> Self::A;
    /// Finishes a scanning warp's share of `rows` rows at `share` (its second input at `side`,
    /// as [`Self::reduce`] has it): its first element is element `first` of the input, `valid`
    /// of its elements exist, and `before` comes before it. Returns whether lane 0 left a bulk
    /// copy out of the share in flight (a committed bulk group), so that the stage stays taken
    /// until the copy has read it.
    unsafe fn finish(
        self,
        share: Smem<Self::T>,
        side: Smem<Self::K>,
        rows: usize,
        before: Option<Self::A>,
        first: u64,
        valid: u32,
    ) -> bool;
    /// Whether a tile whose aggregate is `total` has that as its inclusive prefix, whatever came
    /// before it (a segment starts in it): it is published as such at once, and look-backs stop
    /// there.
    #[inline(always)]
    fn closes(self, total: Self::A) -> bool {
        let _ = total;
        false
    }
    /// Told by one thread the inclusive prefix of `tile` (of `tiles`) once it is known.
    #[inline(always)]
    unsafe fn prefix_known(self, tile: u32, tiles: u64, inclusive: Self::A) {
        let _ = (tile, tiles, inclusive);
    }
}

/// Lane `l`'s vector `j` within a warp's part of a tile, as an element index into it
/// (warp-striped, as the register tile), for vectors of `v` elements.
#[inline(always)]
pub fn striped(j: usize, l: u32, v: usize) -> u32 {
    ((j * WARP as usize + l as usize) * v) as u32
}

/// Lane `l`'s vector `i` of a share of `b` vectors per lane in the blocked arrangement (lane `l`
/// holds vectors `l * b .. (l + 1) * b`), as an element index into the share, for vectors of `v`
/// elements. With `b` odd, a quarter-warp's 16-byte accesses fall in eight different bank groups.
#[inline(always)]
pub fn blocked(i: usize, l: u32, b: usize, v: usize) -> u32 {
    ((l as usize * b + i) * v) as u32
}

/// Has lane 0 copy the `elems` finished elements at `share` out to `dst` in one bulk copy (a
/// committed bulk group), once every lane's stores into the share are ordered before it.
#[inline(always)]
pub unsafe fn store_share<T: Copy>(share: Smem<T>, dst: *mut T, elems: u32) {
    fence_proxy_async_shared();
    sync_warp();
    if lane() == 0 {
        bulk_copy_to_global(dst as *mut u8, share.at(0) as *const u8, elems * size_of::<T>() as u32);
        bulk_commit();
    }
}

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
    unsafe fn reduce(self, part: Smem<T>, _: Smem<()>, rows: core::ops::Range<usize>, _first: u64) -> T {
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
    unsafe fn reduce(self, part: Smem<T>, _: Smem<()>, rows: core::ops::Range<usize>, _first: u64) -> [T; C] {
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
#[allow(clippy::too_many_arguments)]
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
    counter_base: u32,
    epoch: u32,
    backoff_ns: u32,
    stages: u32,
) where
    T: Copy + Send + Sync + 'static,
    O: ScanOp<T>,
    [T; C]: StatusValue,
{
    let aligned = (inp as usize | out as usize) % VECTOR_BYTES == 0;
    let exclusive = Mode::from_flags(flags).exclusive;
    let work = Columns::<T, O, V, C, B> { out, exclusive, aligned, op: core::marker::PhantomData };
    pipeline::<Columns<T, O, V, C, B>, R, S, VECS, D, false>(
        work,
        inp,
        n,
        n,
        aligned,
        temp,
        counter_base,
        epoch,
        backoff_ns,
        stages,
    )
}

/// The pipelined single-pass scan of `n` elements, or where `ROWS`, of each row of `cols` of them
/// on its own (the batched scan along few long rows; `cols` is ignored otherwise); shapes as
/// `Shapes::scan_pipeline` (`R` reducing warps, `R * S` scanning warps, each reducing warp's `VECS`
/// vectors per thread split among `S` scanning warps, shares blocked in runs of `B` vectors per
/// lane where `B > 0`, see [`Scan`]), `stages` tiles in flight (the host sizes shared memory for
/// them), other arguments as [`crate::kernels::single_pass::single_pass`].
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
>(
    inp: *const T,
    out: *mut T,
    n: u64,
    cols: u64,
    init: T,
    flags: u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
    backoff_ns: u32,
    stages: u32,
) {
    // Rows start on 16-byte boundaries, or bulk copies cannot take them.
    let rows_aligned = !ROWS || (cols * size_of::<T>() as u64).is_multiple_of(VECTOR_BYTES as u64);
    let aligned = (inp as usize | out as usize) % VECTOR_BYTES == 0 && rows_aligned;
    let work = Scan::<T, O, B> { out, init, mode: Mode::from_flags(flags), aligned, op: core::marker::PhantomData };
    pipeline::<Scan<T, O, B>, R, S, VECS, D, ROWS>(
        work,
        inp,
        n,
        cols,
        aligned,
        temp,
        counter_base,
        epoch,
        backoff_ns,
        stages,
    )
}

/// The roles of a pipelined kernel over the `n` elements at `inp`, doing `work` on each tile
/// (full tiles come in by bulk copies where `aligned`, `inp` 16-byte aligned, says so), where
/// `ROWS` as rows of `cols` elements each scanned on its own: tiles never cross a row, and a
/// row's first tile starts from `work.start()` and publishes its inclusive prefix at once, like
/// tile 0, so look-backs stop there (a const parameter: the division that places a tile in its
/// row, done by every role, cost the kernels with two scanning warps per reducing warp 10-14%
/// when it ran for one-row scans too);
/// `R` reducing warps, `R * S` scanning warps (each reducing warp's `VECS` vectors per thread
/// split among `S` of them), `stages` tiles in flight. `temp` holds the tile counter (its value
/// before this launch `counter_base`) and the tile status of `epoch`. The grid is persistent:
/// each block takes tiles until the counter passes the last, so the counter advances by tiles +
/// blocks.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn pipeline<W: TileWork, const R: u32, const S: u32, const VECS: usize, const D: usize, const ROWS: bool>(
    work: W,
    inp: *const W::T,
    n: u64,
    cols: u64,
    aligned: bool,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
    backoff_ns: u32,
    stages: u32,
) {
    let (w, l) = (warp_idx(), lane());
    let segment = WARP * (W::V * VECS) as u32;
    // A scanning warp's part: `rows` of a reducing warp's vectors.
    let (rows, sub) = (VECS / S as usize, segment / S);
    let tile_elems = R * segment;
    // Where tile `t` lies: its first element, its length, whether it starts a row.
    let row_tiles = if ROWS { cols.div_ceil(tile_elems as u64).max(1) } else { 0 };
    let tiles =
        if ROWS { n.checked_div(cols).map_or(0, |rows| rows * row_tiles) } else { n.div_ceil(tile_elems as u64) };
    // Each role's `if ROWS` keeps the one-row kernels' code as it was (PTX unchanged).
    let place = |t: u32| {
        let (row, k) = (t / row_tiles as u32, t % row_tiles as u32);
        let start = k as u64 * tile_elems as u64;
        (row as u64 * cols + start, (cols - start).min(tile_elems as u64) as u32, k == 0)
    };
    let (load_warp, look_warp) = (R * (1 + S), R * (1 + S) + 1);

    let mut smem = Carver::new();
    let bars = smem.take::<u64>(4 * stages);
    let tile_of = smem.take::<u32>(stages);
    let part_totals = smem.take::<W::A>(stages * R * S);
    let aggregates = smem.take::<W::A>(stages);
    let prefixes = smem.take::<W::A>(stages);
    let bufs = smem.take::<W::T>(stages * tile_elems);
    // The second input's stages (none where `K` is `()`): each its tile after a 16-byte lead whose
    // last element is the one before the tile.
    let side_elems = tile_elems + side_lead::<W::K>();
    let sides = smem.take::<W::K>(stages * side_elems);
    // The free-order look-back holds nothing.
    let held = smem.take::<W::A>(0);
    smem.check();
    let full = |s: u32| bars.at(s);
    let reduced = |s: u32| bars.at(stages + s);
    let ready = |s: u32| bars.at(2 * stages + s);
    let empty = |s: u32| bars.at(3 * stages + s);
    let buf = |s: u32| bufs.offset(s * tile_elems);
    let side_buf = |s: u32| sides.offset(s * side_elems);
    // The second input of the part or share `at` elements into stage `s`'s tile, from the element
    // before it on.
    let side_at = |s: u32, at: u32| side_buf(s).offset(side_lead::<W::K>() + at - 1);
    let has_side = size_of::<W::K>() != 0;
    let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };

    if thread_idx() == 0 {
        for s in 0..stages {
            mbar_init(full(s), 1);
            mbar_init(reduced(s), 1);
            mbar_init(ready(s), 1);
            mbar_init(empty(s), R * S);
        }
        mbar_init_fence();
    }
    sync_threads();

    if w == load_warp {
        // Load: claim, then copy in (bulk for a full aligned tile; the last, partial one element
        // by element, filled past the end).
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(empty(s), phase ^ 1);
            let mut tile = 0;
            if l == 0 {
                tile = atomic_add_u32(temp as *mut u32, 1).wrapping_sub(counter_base);
            }
            tile = shfl_idx(tile, 0);
            if tile as u64 >= tiles {
                if l == 0 {
                    tile_of.set(s, NO_TILE);
                    mbar_arrive(full(s));
                }
                return;
            }
            let (base, len) = if ROWS {
                let (base, len, _) = place(tile);
                (base, len)
            } else {
                let base = tile as u64 * tile_elems as u64;
                (base, (n - base).min(tile_elems as u64) as u32)
            };
            if l == 0 {
                tile_of.set(s, tile);
            }
            if aligned && len == tile_elems {
                if l == 0 {
                    fence_proxy_async_shared();
                    let bytes = tile_elems * size_of::<W::T>() as u32;
                    // The second input from the lead on, or for the first tile from its start.
                    let lead = if base > 0 { side_lead::<W::K>() } else { 0 };
                    let side_bytes = if has_side { (tile_elems + lead) * size_of::<W::K>() as u32 } else { 0 };
                    mbar_arrive_expect_bytes(full(s), bytes + side_bytes);
                    bulk_copy_to_shared(buf(s).at(0) as *mut u8, inp.add(base as usize) as *const u8, bytes, full(s));
                    if has_side {
                        let to = side_buf(s).at(side_lead::<W::K>() - lead) as *mut u8;
                        let from = work.side().add(base as usize - lead as usize) as *const u8;
                        bulk_copy_to_shared(to, from, side_bytes, full(s));
                    }
                }
            } else {
                let mut i = l;
                while i < tile_elems {
                    buf(s).set(i, if i < len { *inp.add((base + i as u64) as usize) } else { work.fill() });
                    if has_side {
                        // Past the end the last element's, repeated: nothing there starts a segment.
                        let from = work.side().add((base + i.min(len - 1) as u64) as usize);
                        side_buf(s).set(side_lead::<W::K>() + i, *from);
                    }
                    i += WARP;
                }
                if has_side && l == 0 && base > 0 {
                    side_buf(s).set(side_lead::<W::K>() - 1, *work.side().add(base as usize - 1));
                }
                sync_warp();
                if l == 0 {
                    mbar_arrive(full(s));
                }
            }
            ring = ring.next(stages);
        }
    } else if w < R {
        // Reduce: the warp's part of each tile as soon as it has landed, one total per scanning
        // warp's share; the first warp adds them up in order and publishes (tile 0 its inclusive
        // prefix at once).
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(full(s), phase);
            let tile = tile_of.get(s);
            if tile == NO_TILE {
                if w == 0 && l == 0 {
                    mbar_arrive(reduced(s));
                }
                return;
            }
            // Dead (constant) in one-row kernels.
            let placed = if ROWS { place(tile) } else { (0, 0, false) };
            let part = buf(s).offset(w * segment);
            let first = if ROWS { placed.0 } else { tile as u64 * tile_elems as u64 } + (w * segment) as u64;
            for h in 0..S as usize {
                let total = work.reduce(part, side_at(s, w * segment), h * rows..(h + 1) * rows, first);
                if l == 0 {
                    part_totals.set((s * R + w) * S + h as u32, total);
                }
            }
            sync_group(1, R * WARP);
            if w == 0 && l == 0 {
                let mut tile_total = part_totals.get(s * R * S);
                for v in 1..R * S {
                    tile_total = W::O::combine(tile_total, part_totals.get(s * R * S + v));
                }
                if if ROWS { placed.2 } else { tile == 0 } {
                    let head = if ROWS { tile } else { 0 };
                    let inclusive = combine_after::<W::A, W::O>(work.start(), tile_total);
                    status.publish(head, FLAG_PREFIX, inclusive);
                    work.prefix_known(head, tiles, inclusive);
                } else {
                    let closed = work.closes(tile_total);
                    status.publish(tile, if closed { FLAG_PREFIX } else { FLAG_AGGREGATE }, tile_total);
                    if closed {
                        work.prefix_known(tile, tiles, tile_total);
                    }
                }
                aggregates.set(s, tile_total);
                mbar_arrive(reduced(s));
            }
            ring = ring.next(stages);
        }
    } else if w == look_warp {
        // Look back, tile after tile.
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(reduced(s), phase);
            let tile = tile_of.get(s);
            if if ROWS { tile != NO_TILE && !place(tile).2 } else { tile != 0 && tile != NO_TILE } {
                let prefix = status.look_back::<W::A, W::O, D, 0>(tile, backoff_ns, false, held);
                if l == 0 {
                    let inclusive = W::O::combine(prefix, aggregates.get(s));
                    status.publish(tile, FLAG_PREFIX, inclusive);
                    prefixes.set(s, prefix);
                    work.prefix_known(tile, tiles, inclusive);
                }
            }
            sync_warp();
            if l == 0 {
                mbar_arrive(ready(s));
            }
            if tile == NO_TILE {
                return;
            }
            ring = ring.next(stages);
        }
    } else {
        // Finish the warp's share of each tile from the tile's prefix, then free the stage; a
        // stage whose share left by a bulk copy is freed once the copy has read it (the warp waits
        // for that read: freeing it only after the warp's next share kept one stage of five out of
        // use).
        let sw = w - R;
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(ready(s), phase);
            mbar_wait(full(s), phase);
            let tile = tile_of.get(s);
            if tile == NO_TILE {
                if l == 0 {
                    bulk_wait_all();
                }
                return;
            }
            let placed = if ROWS { place(tile) } else { (0, 0, false) };
            let head = if ROWS { placed.2 } else { tile == 0 };
            let mut running = if head { work.start() } else { Some(prefixes.get(s)) };
            for v in 0..sw {
                running = Some(combine_after::<W::A, W::O>(running, part_totals.get(s * R * S + v)));
            }
            let (first, valid) = if ROWS {
                let (base, len, _) = placed;
                (base + (sw * sub) as u64, len.saturating_sub(sw * sub).min(sub))
            } else {
                let first = tile as u64 * tile_elems as u64 + (sw * sub) as u64;
                (first, ((n - first.min(n)).min(sub as u64)) as u32)
            };
            let bulk = work.finish(buf(s).offset(sw * sub), side_at(s, sw * sub), rows, running, first, valid);
            sync_warp();
            if l == 0 {
                if bulk {
                    bulk_wait_read_all();
                }
                mbar_arrive(empty(s));
            }
            ring = ring.next(stages);
        }
    }
}

/// One pipelined kernel `$name` over `$t` with operator `$op` and the shape `$shape` (a
/// `Pipeline`), with the single-pass kernel's arguments and the number of stages; with
/// `rows`, then the row length `cols`, each row of the input scanned on its own
/// ([`single_pass_pipelined`]'s `ROWS`). Stamped out below as `single_pass_pipe_<t>_<op>` for
/// every element type and operator (`Shapes::scan_pipeline_of`), the linear recurrence's
/// `recurrence_pipe_<t>` (`Shapes::recurrence_pipeline`), the batched scan along few long rows'
/// `batched_rows_pipe_<t>_<op>`.
macro_rules! pipelined_kernel {
    ($name:ident, $t:ty, $op:ident, $shape:expr) => {
        pipelined_kernel!(@emit $name, $t, $op, $shape, false, []);
    };
    ($name:ident, $t:ty, $op:ident, $shape:expr, rows) => {
        pipelined_kernel!(@emit $name, $t, $op, $shape, true, [cols: u64]);
    };
    (@emit $name:ident, $t:ty, $op:ident, $shape:expr, $rows:literal, [$($cols:ident: $ct:ty)?]) => {
        #[no_mangle]
        // A `[f64; 2]` initial value is a 16-byte, 8-aligned PTX parameter, as the host passes it.
        #[allow(clippy::too_many_arguments, improper_ctypes_definitions)]
        pub unsafe extern "ptx-kernel" fn $name(
            inp: *const $t,
            out: *mut $t,
            n: u64,
            init: $t,
            flags: u32,
            temp: *mut u8,
            counter_base: u32,
            epoch: u32,
            backoff_ns: u32,
            stages: u32,
            $($cols: $ct,)?
        ) {
            // The row length: the whole input unless the kernel takes rows.
            let row = n;
            $(let row = $cols;)?
            const SIZE: usize = core::mem::size_of::<$t>();
            const P: Pipeline = $shape;
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            const B: usize = P.blocked_run(V as u32);
            single_pass_pipelined::<$t, crate::op::$op, { P.warps }, { P.split }, { P.items as usize / V }, D, B, $rows>(
                inp,
                out,
                n,
                row,
                crate::kernels::initial(flags, temp, init),
                flags,
                temp,
                counter_base,
                epoch,
                backoff_ns,
                stages,
            )
        }
    };
}

macro_rules! pipelined_kernels {
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        pipelined_kernel!(
            [<single_pass_pipe_ $t _ $op:lower>], $t, $op,
            SHAPES.scan_pipeline_of(<$t as crate::op::Element>::TYPE, scan_abi::Op::$op)
        );
    )* } };
}
crate::kernels::for_each_type!(pipelined_kernels);

/// `batched_rows_pipe_<t>_<op>`: the rows of `cols` elements of a row-major matrix, each scanned
/// on its own in one launch (the batched scan along few long rows), with the single-pass pipelined
/// kernel's shape (`Shapes::scan_pipeline_of`).
macro_rules! rows_pipelined_kernels {
    ($($t:ident),*) => { $( rows_pipelined_kernels!(@ops $t, [Add, Mul, Min, Max]); )* };
    (@ops $t:ident, [$($op:ident),*]) => { paste::paste! { $(
        pipelined_kernel!(
            [<batched_rows_pipe_ $t _ $op:lower>], $t, $op,
            SHAPES.scan_pipeline_of(<$t as crate::op::Element>::TYPE, scan_abi::Op::$op), rows
        );
    )* } };
}
rows_pipelined_kernels!(u32, i32, u64, i64, f32, f64);

/// `<name>_<t>_<op>`: [`columns_pipelined`] for rows of `C` columns, in the tile shape
/// `Shapes::<shape>`; the status words carry whole rows.
macro_rules! columns_pipelined_kernels {
    ($name:ident, $shape:ident: $($t:ident: $c:literal),*) => { paste::paste! { $(
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Add);
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Mul);
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Min);
        columns_pipelined_kernels!(@one $name, $shape, $t, $c, Max);
    )* } };
    (@one $name:ident, $shape:ident, $t:ident, $c:literal, $op:ident) => { paste::paste! {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<$name _ $t _ $op:lower>](
            inp: *const $t,
            out: *mut $t,
            n: u64,
            flags: u32,
            temp: *mut u8,
            counter_base: u32,
            epoch: u32,
            backoff_ns: u32,
            stages: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const P: Pipeline = SHAPES.$shape.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            // Blocked runs are of whole matrix rows, `C / V` vectors each.
            const B: usize = P.blocked_run(V as u32) / ($c / V);
            const { assert!(P.blocked_run(V as u32) % ($c / V) == 0) };
            columns_pipelined::<$t, crate::op::$op, V, $c, { P.warps }, { P.split }, { P.items as usize / V }, D, B>(
                inp, out, n, flags, temp, counter_base, epoch, backoff_ns, stages,
            )
        }
    } };
}
// Rows of two 16-byte vectors (`names::BATCHED_COLUMNS_PIPELINED`) and of one
// (`names::BATCHED_COLUMNS_PIPELINED16`).
columns_pipelined_kernels!(batched_columns_pipe, columns_pipeline: u32: 8, i32: 8, f32: 8, u64: 4, i64: 4, f64: 4);
columns_pipelined_kernels!(batched_columns_pipe16, columns16_pipeline: u32: 4, i32: 4, f32: 4, u64: 2, i64: 2, f64: 2);

// The linear recurrence's scans of affine maps (see `single_pass::recurrence_f32`).
pipelined_kernel!(recurrence_pipe_f32, u64, AffineF32, SHAPES.recurrence_pipeline.at(8));
pipelined_kernel!(recurrence_pipe_f64, [f64; 2], AffineF64, SHAPES.recurrence_pipeline.at(16));
