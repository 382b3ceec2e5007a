//! The segmented scan in the pipelined kernel's warp roles ([`pipeline`]): the scan by key, where
//! a segment starts wherever a key differs from the one before, and the scan from head flags.
//!
//! The keys (or flags) are the pipeline's second input, staged with each tile of values by the
//! same bulk copies, with the key before the tile in front, so every role finds an element's
//! head in shared memory. A tile's aggregate is a (head, value) pair under [`SegOp`]; a tile
//! that holds a head knows its inclusive prefix from its own data and publishes it at once
//! ([`TileWork::closes`]), so look-backs stop there.
//!
//! Shares are blocked: each lane of a reducing warp scans a run of `B` vectors in order, and the
//! warp one segmented scan of the lanes' (head, value) totals per share; it leaves the runs
//! scanned in place and each lane's start ([`LaneStart`]), so the scanning warp only combines the
//! share's prefix into each lane's elements before its first head.

use crate::arch::{lane, load_narrow, load_vec16, store_vec16, WARP};
use crate::kernels::pipelined::{blocked, pipeline, store_share, TileWork};
use crate::kernels::{Mode, SHAPES};
use crate::lookback::StatusValue;
use crate::op::{combine_after, combine_opt, Add, And, Element, Max, Min, Mul, Or, ScanOp, Seg, SegOp, Xor};
use crate::smem::Smem;
use crate::warp;
use core::marker::PhantomData;
use scan_abi::args::SegmentedArgs;
use scan_abi::shape::{vector_elems, Pipeline, VECTOR_BYTES};

/// What the second input says about where segments start.
pub trait Starts: Copy {
    /// Whether the element whose entry is `this`, after one whose entry is `before`, starts a
    /// segment.
    fn starts(before: Self, this: Self) -> bool;
}

/// A head flag: nonzero starts a segment.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Flag(pub u8);

impl Starts for Flag {
    #[inline(always)]
    fn starts(_: Flag, this: Flag) -> bool {
        this.0 != 0
    }
}

/// Keys, compared by their bits (a signed key's run is its unsigned twin's).
macro_rules! key_starts {
    ($($k:ty),*) => {$(
        impl Starts for $k {
            #[inline(always)]
            fn starts(before: $k, this: $k) -> bool {
                before != this
            }
        }
    )*};
}
key_starts!(u32, u64);

/// The pipelined segmented scan's work on a tile of values `T` (`V` to a 16-byte vector) with
/// their segment entries `K`, in blocked shares of `B` vectors per lane.
#[derive(Clone, Copy)]
pub struct SegmentedWork<K, T, O, const V: usize, const B: usize> {
    keys: *const K,
    out: *mut T,
    exclusive: bool,
    /// Output on a 16-byte boundary: a full share leaves by one bulk copy.
    aligned: bool,
    op: PhantomData<O>,
}

impl<K: Starts, T: Element + StatusValue, O: ScanOp<T>, const V: usize, const B: usize> SegmentedWork<K, T, O, V, B> {
    /// This lane's run of the blocked share at `share` (entries at `keys`, from the one before
    /// the share on), whose first element is element `first` of the input, scanned in place
    /// segment by segment as it is read (the input's first element always starts one). Returns
    /// the run's heads, bit `i * V + k` for element `k` of vector `i`, and its (head, value) total.
    #[inline(always)]
    unsafe fn run(share: Smem<T>, keys: Smem<K>, first: u64, vals: &mut [[T; V]; B]) -> (u32, Seg<T>) {
        const { assert!(B > 0 && B * V <= 30) };
        let l = lane();
        let mut before = keys.get(blocked(0, l, B, V));
        let mut heads = 0u32;
        let mut acc: Option<T> = None;
        for (i, v) in vals.iter_mut().enumerate() {
            let at = blocked(i, l, B, V);
            *v = load_vec16::<T, V>(share.at(at));
            let entries = load_narrow::<K, V>(keys.at(at + 1));
            for (k, (x, &e)) in v.iter_mut().zip(entries.iter()).enumerate() {
                let head = K::starts(before, e) || (i == 0 && k == 0 && first == 0 && l == 0);
                before = e;
                heads |= (head as u32) << (i * V + k);
                *x = if head { *x } else { combine_after::<T, O>(acc, *x) };
                acc = Some(*x);
            }
        }
        (heads, Seg { head: (heads != 0) as u32, v: acc.unwrap_or(O::identity()) })
    }

    /// [`TileWork::finish`] for one case: `FULL`, every element valid and the output aligned
    /// (the share goes back into its place and out by one bulk copy), else element by element.
    /// The reducing warp left the share scanned lane by lane in place, and each lane's start.
    #[inline(always)]
    unsafe fn scan_share<const FULL: bool, const EXCLUSIVE: bool>(
        self,
        share: Smem<T>,
        left: Smem<LaneStart<T>>,
        before: Option<Seg<T>>,
        first: u64,
        valid: u32,
    ) -> bool {
        let l = lane();
        let start = left.get(l);
        let heads = start.bits & LaneStart::<T>::HEADS;
        // What reaches this lane's elements before its first head.
        let incoming = combine_opt::<Seg<T>, SegOp<O>>(before, start.before()).map(|s| s.v);
        let first_head = heads.trailing_zeros() as usize;
        let dst = self.out.wrapping_add(first as usize);
        let mut previous = incoming;
        for i in 0..B {
            let at = blocked(i, l, B, V);
            let mut v = load_vec16::<T, V>(share.at(at));
            for (k, x) in v.iter_mut().enumerate() {
                let e = i * V + k;
                let inclusive = if e >= first_head { *x } else { combine_after::<T, O>(incoming, *x) };
                if EXCLUSIVE {
                    *x = if heads >> e & 1 != 0 { O::identity() } else { previous.unwrap_or(O::identity()) };
                    previous = Some(inclusive);
                } else {
                    *x = inclusive;
                }
            }
            if FULL {
                store_vec16::<T, V>(share.at(at), v);
            } else {
                for (k, &x) in v.iter().enumerate() {
                    if at + (k as u32) < valid {
                        *dst.add(at as usize + k) = x;
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

/// What a reducing lane leaves its scanning lane: its run's heads (bit `i * V + k` for element
/// `k` of vector `i`), and the warp's (head, value) before the lane, whose presence and head are
/// the top two bits (lane 0 has nothing before it).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct LaneStart<T> {
    bits: u32,
    v: T,
}

impl<T: Copy> LaneStart<T> {
    const HEADS: u32 = u32::MAX >> 2;
    const HEAD: u32 = 1 << 30;
    const SOME: u32 = 1 << 31;

    #[inline(always)]
    fn new(heads: u32, before: Option<Seg<T>>, empty: T) -> LaneStart<T> {
        match before {
            Some(b) => LaneStart { bits: heads | Self::SOME | if b.head != 0 { Self::HEAD } else { 0 }, v: b.v },
            None => LaneStart { bits: heads, v: empty },
        }
    }

    #[inline(always)]
    fn before(self) -> Option<Seg<T>> {
        if self.bits & Self::SOME != 0 {
            Some(Seg { head: (self.bits & Self::HEAD != 0) as u32, v: self.v })
        } else {
            None
        }
    }
}

impl<K: Starts, T: Element + StatusValue, O: ScanOp<T>, const V: usize, const B: usize> TileWork
    for SegmentedWork<K, T, O, V, B>
{
    type T = T;
    type A = Seg<T>;
    type O = SegOp<O>;
    type K = K;
    type L = LaneStart<T>;
    const V: usize = V;

    #[inline(always)]
    fn side(self) -> *const K {
        self.keys
    }
    #[inline(always)]
    fn start(self) -> Option<Seg<T>> {
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
        keys: Smem<K>,
        left: Smem<LaneStart<T>>,
        rows: core::ops::Range<usize>,
        first: u64,
    ) -> Seg<T> {
        let l = lane();
        let at = (rows.start * WARP as usize * V) as u32;
        let (share, mut vals) = (part.offset(at), [[O::identity(); V]; B]);
        let (heads, total) = Self::run(share, keys.offset(at), first + at as u64, &mut vals);
        let (lane_before, warp_total) = warp::segmented_scan::<T, O>(total.v, total.head != 0);
        // The run goes back scanned in place (only this lane reads it again, in its scanning
        // warp), so the scanning warp only adds what comes before each lane's first head.
        for (i, v) in vals.iter().enumerate() {
            store_vec16::<T, V>(share.at(blocked(i, l, B, V)), *v);
        }
        left.set(l, LaneStart::new(heads, lane_before, O::identity()));
        warp_total
    }
    #[inline(always)]
    unsafe fn finish(
        self,
        share: Smem<T>,
        _: Smem<K>,
        left: Smem<LaneStart<T>>,
        rows: usize,
        before: Option<Seg<T>>,
        first: u64,
        valid: u32,
    ) -> bool {
        debug_assert!(rows == B);
        let full = self.aligned && valid == WARP * (V * B) as u32;
        match (full, self.exclusive) {
            (true, false) => self.scan_share::<true, false>(share, left, before, first, valid),
            (true, true) => self.scan_share::<true, true>(share, left, before, first, valid),
            (false, false) => self.scan_share::<false, false>(share, left, before, first, valid),
            (false, true) => self.scan_share::<false, true>(share, left, before, first, valid),
        }
    }
    #[inline(always)]
    fn closes(self, total: Seg<T>) -> bool {
        total.head != 0
    }
}

/// `segmented_pipe_<segments>_<t>_<op>`: scans the `n` values at `inp` segment by segment into
/// `out`, the segments given by `keys` (`n` entries of `$k`: head flags, or keys), the tile state
/// at `temp`, the rest in a [`SegmentedArgs`] (its flags as the segmented scan's, exclusive only),
/// in the shape `Shapes::segmented_pipeline`.
macro_rules! segmented_pipe_kernels {
    ($segments:ident: $k:ty => $($t:ident),*) => { $(
        segmented_pipe_kernels!(@ops $segments, $k, $t, [Add, Mul, Min, Max]);
        segmented_pipe_kernels!(@bitwise $segments, $k, $t);
    )* };
    // The bitwise operators, on the integer types alone.
    (@bitwise $segments:ident, $k:ty, f32) => {};
    (@bitwise $segments:ident, $k:ty, f64) => {};
    (@bitwise $segments:ident, $k:ty, $t:ident) => { segmented_pipe_kernels!(@ops $segments, $k, $t, [And, Or, Xor]); };
    (@ops $segments:ident, $k:ty, $t:ident, [$($op:ident),*]) => { $( segmented_pipe_kernels!(@one $segments, $k, $t, $op); )* };
    (@one $segments:ident, $k:ty, $t:ident, $op:ident) => { paste::paste! {
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<segmented_pipe_ $segments _ $t _ $op:lower>](
            inp: *const $t, keys: *const $k, out: *mut $t, temp: *mut u8, args: SegmentedArgs,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const P: Pipeline = SHAPES.segmented_pipeline.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const B: usize = P.blocked_run(V as u32);
            const D: usize = SHAPES.lookback_depth;
            type W = SegmentedWork<$k, $t, $op, V, B>;
            let SegmentedArgs { n, flags, pipe } = args;
            let exclusive = Mode::from_flags(flags).exclusive;
            let aligned = (inp as usize | keys as usize | out as usize) % VECTOR_BYTES == 0;
            let work = W { keys, out, exclusive, aligned, op: PhantomData };
            pipeline::<W, { P.warps }, { P.split }, { P.items as usize / V }, D, false, false, 0>(
                work, inp, n, n, aligned, temp, pipe,
            )
        }
    } };
}
segmented_pipe_kernels!(flags: Flag => u32, i32, u64, i64, f32, f64);
segmented_pipe_kernels!(k32: u32 => u32, i32, u64, i64, f32, f64);
segmented_pipe_kernels!(k64: u64 => u32, i32, u64, i64, f32, f64);

