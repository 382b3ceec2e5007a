//! Stream compaction in one pass: keep the elements that satisfy a predicate, in order.
//!
//! The single-pass scan's structure with counts in place of values: each tile loads its elements
//! (warp-striped 16-byte vectors, tile shape of the single-pass scan), counts the kept ones per
//! lane, scans the counts across the warp and the block, finds how many earlier tiles kept with
//! the decoupled look-back (u64 counts, so any n), and writes its kept elements to consecutive
//! places. The last tile writes the total.
//!
//! Kept elements are gathered in shared memory in output order first (while warp 0 looks back),
//! then the block writes them out with consecutive threads on consecutive places: a warp's store
//! covers one contiguous run instead of 32 scattered ones.
//!
//! [`Compact`] does the same work in the pipelined kernel's roles
//! ([`crate::kernels::pipelined::pipeline`]), the default for 4- and 8-byte elements kept by a
//! comparison from 64 MiB (`scan_abi::tuning::compact_pipelined`): reducing warps count a tile's
//! kept elements as soon as it lands; each scanning warp takes its share blocked, places its kept
//! elements with one warp scan, gathers them in the share at their output alignment and writes
//! them out by one bulk copy.

use crate::arch::{fence_proxy_async_shared, lane, load_vec16, sync_threads, sync_warp, thread_idx, warp_idx, WARP};
use crate::kernels::pipelined::{blocked, pipeline, store_share, striped, TileWork};
use crate::kernels::{claim_striped, prefetch_tile_l2, Place, SHAPES};
use crate::lookback::TileStatus;
use crate::op::{Add, Element};
use crate::smem::{Carver, Smem};
use crate::warp;
use scan_abi::args::{CompactArgs, Pipe};
use scan_abi::kernel::predicate;
use scan_abi::shape::{vector_elems, Pipeline, Tile, VECTOR_BYTES};
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};

/// Writes, for the elements `x` of `inp[..n]` that satisfy `pred` (`scan_abi::predicate`, with
/// `threshold`, or `flags[i] != 0`), `emit(stage(x, place), tile_start)` to `out` in order, and
/// their number to `count`: `place` is the element's index within its tile, which starts at
/// element `tile_start`, and the tile's kept entries wait in shared memory as `S`. A compaction
/// stages and emits the elements themselves; the positions of set flags stage their places.
/// `temp`, `counter_base` and `epoch` are the single-pass scan's tile state.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn compact<T: Element, S: Copy, O: Copy, const TH: u32, const V: usize, const VECS: usize>(
    inp: *const T,
    flags: *const u8,
    out: *mut O,
    count: *mut u64,
    n: u64,
    pred: u32,
    threshold: T,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
    stage: impl Fn(T, u32) -> S,
    emit: impl Fn(S, u64) -> O,
) {
    let (w, l) = (warp_idx(), lane());
    let warps = TH / WARP;
    let tile_elems = TH as u64 * (V * VECS) as u64;

    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    let warp_counts = smem.take::<u32>(warps);
    let tile_offset = smem.take::<u64>(1);
    let staged = smem.take::<S>(TH * (V * VECS) as u32);
    let no_windows = smem.take::<u64>(0);
    smem.check();

    let vectors = inp as usize % VECTOR_BYTES == 0;
    prefetch_tile_l2(inp, |tile| Place::flat(tile, n, tile_elems), SHAPES.compact_prefetch_tiles, vectors);
    let (tile, offset, valid, vals) =
        claim_striped::<T, TH, V, VECS>(inp, n, T::zero(), vectors, temp, counter_base, tile_slot);

    // Kept elements per vector, then each lane's place among the warp's kept elements.
    let mut keep = [[false; V]; VECS];
    let mut lane_before = [0u32; VECS];
    let mut warp_kept = 0u32;
    for j in 0..VECS {
        let mut c = 0;
        for k in 0..V {
            let i = (j as u32 * WARP + l) * V as u32 + k as u32;
            keep[j][k] = i < valid
                && match pred {
                    predicate::GREATER => vals[j][k] > threshold,
                    predicate::NONZERO => vals[j][k] != T::zero(),
                    _ => *flags.add(offset + i as usize) != 0,
                };
            c += keep[j][k] as u32;
        }
        let (before, through) = warp::scan::<u32, Add>(c);
        lane_before[j] = warp_kept + before.unwrap_or(0);
        warp_kept += warp::broadcast(through, WARP - 1);
    }
    if l == 0 {
        warp_counts.set(w, warp_kept);
    }
    sync_threads();

    // The tile's kept elements in order, at their places within the tile.
    let mut at = 0;
    for v in 0..w {
        at += warp_counts.get(v);
    }
    let tile_kept = at + (w..warps).map(|v| warp_counts.get(v)).sum::<u32>();
    let first = (offset as u64 - tile as u64 * tile_elems) as u32;
    for j in 0..VECS {
        let mut k_at = at + lane_before[j];
        for k in 0..V {
            if keep[j][k] {
                staged.set(k_at, stage(vals[j][k], first + (j as u32 * WARP + l) * V as u32 + k as u32));
                k_at += 1;
            }
        }
    }

    if w == 0 {
        let total = tile_kept as u64;
        let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };
        let prefix = if tile == 0 {
            if l == 0 {
                status.publish(0, FLAG_PREFIX, total);
            }
            0
        } else {
            if l == 0 {
                status.publish(tile, FLAG_AGGREGATE, total);
            }
            let p = status.look_back::<u64, Add, 1, 0>(tile, 0, false, no_windows);
            if l == 0 {
                status.publish(tile, FLAG_PREFIX, p + total);
            }
            p
        };
        if l == 0 {
            tile_offset.set(0, prefix);
            if (tile as u64 + 1) * tile_elems >= n {
                *count = prefix + total;
            }
        }
    }
    sync_threads();

    let dst = out.add(tile_offset.get(0) as usize);
    let tile_start = tile as u64 * tile_elems;
    let mut i = thread_idx();
    while i < tile_kept {
        *dst.add(i as usize) = emit(staged.get(i), tile_start);
        i += TH;
    }
}

/// Compaction as the work of the pipelined kernel's roles: tiles publish their kept counts
/// (`u64`), and the last tile's inclusive count is the result. `V` elements per 16-byte vector;
/// a scanning warp's share is blocked, each lane a run of `B` vectors (see
/// [`crate::kernels::pipelined::blocked`]), so a share takes one warp scan of the lanes' counts.
#[derive(Clone, Copy)]
pub struct Compact<T, const V: usize, const B: usize> {
    pub flags: *const u8,
    pub out: *mut T,
    pub count: *mut u64,
    pub n: u64,
    pub pred: u32,
    pub threshold: T,
    /// `out` is 16-byte aligned: a share's kept elements leave by one bulk copy.
    pub aligned_out: bool,
}

impl<T: Element, const V: usize, const B: usize> Compact<T, V, B> {
    /// Whether element `i` of the input, `x`, is kept (`i < n`).
    #[inline(always)]
    unsafe fn keeps(self, x: T, i: u64) -> bool {
        match self.pred {
            predicate::GREATER => x > self.threshold,
            predicate::NONZERO => x != T::zero(),
            _ => *self.flags.add(i as usize) != 0,
        }
    }

    /// Writes a lane's run `vals`, the elements marked in `marks`, to consecutive places of
    /// the share from `place` on; unless `FITS`, places past the share's `len` go straight to
    /// `dst`, the output at the share's place 0.
    #[inline(always)]
    unsafe fn gather<const FITS: bool>(
        share: Smem<T>,
        vals: &[[T; V]; B],
        marks: u32,
        mut place: u32,
        dst: *mut T,
        len: u32,
    ) {
        for (i, v) in vals.iter().enumerate() {
            for (k, &x) in v.iter().enumerate() {
                if marks >> (i * V + k) & 1 != 0 {
                    if FITS || place < len {
                        share.set(place, x);
                    } else {
                        *dst.add(place as usize) = x;
                    }
                    place += 1;
                }
            }
        }
    }
}

impl<T: Element, const V: usize, const B: usize> TileWork for Compact<T, V, B> {
    type T = T;
    type A = u64;
    type O = Add;
    type K = ();
    type L = ();
    const V: usize = V;

    #[inline(always)]
    fn start(self) -> Option<u64> {
        None
    }
    #[inline(always)]
    fn fill(self) -> T {
        T::zero()
    }
    /// Counts in warp-striped rows: a count does not care about order, and striped 16-byte
    /// reads never meet in a bank.
    #[inline(always)]
    unsafe fn reduce(self, part: Smem<T>, _: Smem<()>, _: Smem<()>, rows: core::ops::Range<usize>, first: u64) -> u64 {
        let l = lane();
        let mut c = 0u32;
        for j in rows {
            let at = striped(j, l, V);
            let v = load_vec16::<T, V>(part.at(at));
            for (k, &x) in v.iter().enumerate() {
                let i = first + (at as usize + k) as u64;
                c += (i < self.n && self.keeps(x, i)) as u32;
            }
        }
        warp::reduce::<u32, Add>(c) as u64
    }
    /// Each lane takes its run into registers and marks what it keeps; one warp scan of the
    /// lanes' counts places every kept element. With an aligned output they go back into the
    /// share at their output address's place modulo 16 bytes, so that the whole 16-byte vectors
    /// among them leave by one bulk copy and only the ragged ends (under a vector each) are
    /// stored element by element. Otherwise they gather at the share's front and consecutive
    /// lanes store consecutive places.
    #[inline(always)]
    unsafe fn finish(
        self,
        share: Smem<T>,
        _: Smem<()>,
        _: Smem<()>,
        rows: usize,
        before: Option<u64>,
        first: u64,
        valid: u32,
    ) -> bool {
        const { assert!(B > 0 && B * V <= 32) };
        debug_assert!(rows == B);
        let l = lane();
        let mut vals = [[T::zero(); V]; B];
        let mut marks = 0u32;
        for (i, v) in vals.iter_mut().enumerate() {
            let at = blocked(i, l, B, V);
            *v = load_vec16::<T, V>(share.at(at));
            for (k, &x) in v.iter().enumerate() {
                let kept = at + (k as u32) < valid && self.keeps(x, first + (at as usize + k) as u64);
                marks |= (kept as u32) << (i * V + k);
            }
        }
        let (lane_before, through) = warp::scan::<u32, Add>(marks.count_ones());
        let kept = warp::broadcast(through, WARP - 1);
        let base = before.unwrap_or(0);
        let (vector, len) = (V as u32, WARP * (B * V) as u32);
        let shift = if self.aligned_out { (base % V as u64) as u32 } else { 0 };
        let end = shift + kept;
        let dst = self.out.add((base - shift as u64) as usize);
        // Every lane holds its run before any lane writes over the share.
        sync_warp();
        let place = shift + lane_before.unwrap_or(0);
        if end <= len {
            Self::gather::<true>(share, &vals, marks, place, dst, len);
        } else {
            Self::gather::<false>(share, &vals, marks, place, dst, len);
        }
        sync_warp();
        if !self.aligned_out {
            let mut i = l;
            while i < kept {
                *dst.add(i as usize) = share.get(i);
                i += WARP;
            }
            // The stage's next bulk copy in writes where these threads wrote.
            fence_proxy_async_shared();
            return false;
        }
        // The ragged ends, under a vector each: the head by lanes `0..V`, the tail by `V..2V`.
        let body = vector..end / vector * vector;
        let p = if l < vector { l } else { body.end.max(vector) + l - vector };
        if l < 2 * vector && p >= shift && p < end.min(len) {
            *dst.add(p as usize) = share.get(p);
        }
        if body.is_empty() {
            fence_proxy_async_shared();
            return false;
        }
        store_share(share.offset(body.start), dst.add(body.start as usize), body.len() as u32);
        true
    }
    #[inline(always)]
    unsafe fn prefix_known(self, tile: u32, tiles: u64, inclusive: u64) {
        if tile as u64 + 1 == tiles {
            *self.count = inclusive;
        }
    }
}

macro_rules! compact_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<compact_ $t>](
            inp: *const $t, flags: *const u8, out: *mut $t, count: *mut u64, n: u64, pred: u32,
            threshold: $t, temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: Tile = SHAPES.compact.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            compact::<$t, $t, $t, { SHAPE.threads }, V, { SHAPE.items as usize / V }>(
                inp, flags, out, count, n, pred, threshold, temp, counter_base, epoch, |x, _| x, |x, _| x,
            )
        }
    )* } };
}
compact_kernels!(u8, u16, u32, i32, u64, i64, f32, f64);

/// `positions_<t>`: the positions `i` of the nonzero bytes `flags[i]` as `t`, in order, and
/// their number, with the arguments of `compact_u8` (`inp` is the flags; `flags`, `pred` and
/// `threshold` are not read). The compaction of the bytes in their tile shape, staging each kept
/// byte's place within the tile (a `u16`: tiles hold at most 2^16 bytes).
macro_rules! positions_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<positions_ $t>](
            inp: *const u8, _flags: *const u8, out: *mut $t, count: *mut u64, n: u64, _pred: u32,
            _threshold: u8, temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SHAPE: Tile = SHAPES.compact.at(1);
            const V: usize = VECTOR_BYTES;
            const { assert!(SHAPE.tile() <= 1 << 16) };
            compact::<u8, u16, $t, { SHAPE.threads }, V, { SHAPE.items as usize / V }>(
                inp, inp, out, count, n, predicate::NONZERO, 0, temp, counter_base, epoch,
                |_, place| place as u16, |place, start| (start + place as u64) as $t,
            )
        }
    )* } };
}
positions_kernels!(u32, u64);

/// `kept_flags_<t>`: `flags[i] = 1` where `inp[i]` satisfies `pred` (`predicate::GREATER`, with
/// `threshold`, or `predicate::NONZERO`) as `compact_<t>` tests it, else 0: the flags whose
/// positions `positions_<u32|u64>` writes, for elements kept by a comparison. One thread per
/// element.
macro_rules! kept_flags_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<kept_flags_ $t>](
            inp: *const $t, n: u64, pred: u32, threshold: $t, flags: *mut u8,
        ) {
            let i = crate::arch::block_idx() as u64 * crate::arch::block_dim() as u64 + thread_idx() as u64;
            if i < n {
                let x = *inp.add(i as usize);
                let keep = match pred {
                    predicate::GREATER => x > threshold,
                    _ => x != <$t as Element>::zero(),
                };
                *flags.add(i as usize) = keep as u8;
            }
        }
    )* } };
}
kept_flags_kernels!(u8, u16, u32, i32, u64, i64, f32, f64);

/// The pipelined compaction `compact_pipe_<t>` of 4- and 8-byte types: the buffers of
/// `compact_<t>` and its tile state, then a [`CompactArgs`], a persistent grid (see
/// [`crate::kernels::pipelined::pipeline`]) of `Shapes::compact_pipeline`'s shape. Its look-back
/// polls without pausing (`pipe.backoff_ns` is not read).
macro_rules! compact_pipe_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<compact_pipe_ $t>](
            inp: *const $t, flags: *const u8, out: *mut $t, count: *mut u64, temp: *mut u8, args: CompactArgs<$t>,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const P: Pipeline = SHAPES.compact_pipeline.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const B: usize = P.blocked_run(V as u32);
            let CompactArgs { n, pred, pipe, threshold } = args;
            let aligned_out = out as usize % VECTOR_BYTES == 0;
            let work = Compact::<$t, V, B> { flags, out, count, n, pred, threshold, aligned_out };
            let aligned = inp as usize % VECTOR_BYTES == 0;
            pipeline::<Compact<$t, V, B>, { P.warps }, { P.split }, { P.items as usize / V }, 1, false, false, 0>(
                work, inp, n, n, aligned, temp, Pipe { backoff_ns: 0, ..pipe },
            )
        }
    )* } };
}
compact_pipe_kernels!(u32, i32, u64, i64, f32, f64);
