//! Single-pass scan with decoupled look-back (Merrill & Garland, 2016): one launch, every element
//! read once and written once.
//!
//! Each block takes the next tile index from an atomic counter, loads its tile with 16-byte
//! vectors, scans it in registers (thread, then warp shuffles, then the warp totals), publishes
//! the tile aggregate, looks back for its exclusive prefix (see [`crate::lookback`]), publishes
//! its inclusive prefix, and stores the finished tile.
//!
//! Tiles are claimed with [`claim_placed`], which overlaps the counter's round trip with the
//! loads. (A persistent grid that asks for its next tile early is slower: successors then wait
//! on tiles that are claimed but not yet loaded.)

use crate::arch::{
    cp_async_16, cp_async_wait_all, lane, load_vec16, opaque_u32, store_vec16, sync_threads, warp_idx, WARP,
};
use crate::kernels::{
    claim_placed, claim_tile, claim_tile_in_one_call, for_each_type, prefetch_tile_l2, Mode, Place, SHAPES,
};
use crate::lookback::{StatusValue, TileStatus};
use crate::op::{combine_after, combine_opt, ScanOp};
use crate::probe::{NoProbe, Probe, Timeline};
use crate::smem::{Carver, Smem};
use crate::tile::{load_striped, store_striped};
use crate::vector::{narrow_bits, Vector16};
use crate::warp;
use core::mem::size_of;
use scan_abi::shape::{vector_elems, Tile, VECTOR_BYTES};
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};
use scan_abi::timeline::Event;

/// What a one-tile-per-block launch passes besides its buffers, its length and its initial value:
/// the mode flags, the tile state `temp` with the counter's value before this launch and a fresh
/// epoch, and the look-back's polling pace. The kernels still take these one by one, as the host
/// pushes them; their drivers take this. (The initial value stays apart: a `[f64; 2]` inside the
/// struct changed the f64 recurrence kernels' code.)
#[derive(Clone, Copy)]
pub struct TileLaunch {
    pub flags: u32,
    pub temp: *mut u8,
    pub counter_base: u32,
    pub epoch: u32,
    pub backoff_ns: u32,
}

impl TileLaunch {
    /// What every one-tile-per-block driver carves and passes first: the tile index's slot and
    /// the tile's scan windows (next from `smem`, in that order), and where the tile publishes.
    #[inline(always)]
    pub(crate) fn begin<T: Copy, const TH: u32, const D: usize, const K: usize>(
        self,
        smem: &mut Carver,
    ) -> (Smem<u32>, TileSmem<T>, Publish) {
        let tile_slot = smem.take::<u32>(1);
        let sh = TileSmem::<T>::take::<TH, D, K>(smem);
        (tile_slot, sh, Publish { temp: self.temp, epoch: self.epoch, backoff_ns: self.backoff_ns })
    }
}

/// Scans one tile of `TH` threads × `VECS` vectors of `V` elements.
///
/// `launch.temp` holds the tile counter (first [`COUNTER_BYTES`]) and then one status word per
/// tile; the host passes the counter's value before this launch (`counter_base`) and a fresh
/// `epoch`, so neither needs clearing between calls. `backoff_ns` paces the look-back's polling.
#[inline(always)]
pub unsafe fn single_pass<
    T: StatusValue,
    O: ScanOp<T>,
    const TH: u32,
    const V: usize,
    const VECS: usize,
    const D: usize,
    const K: usize,
    const FIXED: bool,
>(
    inp: *const T,
    out: *mut T,
    n: u64,
    init: T,
    launch: TileLaunch,
) {
    let tile_elems = TH as u64 * (V * VECS) as u64;
    let place = |tile| Place::flat(tile, n, tile_elems);
    single_pass_placed::<T, O, TH, V, VECS, D, K, FIXED>(inp, out, place, true, init, launch, NoProbe)
}

/// [`single_pass`] over tiles that `place` lays out (tile index -> where the tile lies): several
/// chains of tiles when `place` starts more than one (each looks back no further than its first
/// tile, which publishes at once). `aligned`: every tile starts on a 16-byte boundary. A block
/// prefetches into L2 the tile `Shapes::prefetch_tiles` further on. `probe` records each tile's
/// way through the scan (see [`crate::probe`]).
#[inline(always)]
pub unsafe fn single_pass_placed<
    T: StatusValue,
    O: ScanOp<T>,
    const TH: u32,
    const V: usize,
    const VECS: usize,
    const D: usize,
    const K: usize,
    const FIXED: bool,
>(
    inp: *const T,
    out: *mut T,
    place: impl Fn(u32) -> Place,
    aligned: bool,
    init: T,
    launch: TileLaunch,
    probe: impl Probe,
) {
    let TileLaunch { flags, temp, counter_base, .. } = launch;
    let ahead = SHAPES.prefetch_tiles;
    let mode = Mode::from_flags(flags);
    let (w, l) = (warp_idx(), lane());
    let warps = TH / WARP;
    let started = probe.now();

    let mut smem = Carver::new();
    let (tile_slot, sh, publish) = launch.begin::<T, TH, D, K>(&mut smem);
    smem.check();

    let vectors = aligned && (inp as usize | out as usize) % VECTOR_BYTES == 0;
    prefetch_tile_l2(inp, &place, ahead, vectors);
    let (tile, at, offset, valid, mut vals, ()) = claim_placed::<T, TH, V, VECS, ()>(
        inp,
        place,
        O::identity(),
        vectors,
        temp,
        counter_base,
        tile_slot,
        |_, _| (),
    );

    probe.mark_at(tile, Event::Start, started);
    probe.mark(tile, Event::Claimed);

    // Each vector: inclusive scan in the thread, then across the warp's 32 vectors.
    let mut lane_prefix = [None; VECS];
    let mut warp_running: Option<T> = None;
    for (j, v) in vals.iter_mut().enumerate() {
        for k in 1..V {
            v[k] = O::combine(v[k - 1], v[k]);
        }
        let (before, through) = warp::scan::<T, O>(v[V - 1]);
        lane_prefix[j] = combine_opt::<T, O>(warp_running, before);
        warp_running = Some(combine_after::<T, O>(warp_running, warp::broadcast(through, WARP - 1)));
    }
    if l == 0 {
        sh.warp_totals.set(w, warp_running.unwrap_or(O::identity()));
    }
    sync_threads();
    probe.mark(tile, Event::Reduced);

    if w == 0 {
        let total = if l < warps { sh.warp_totals.get(l) } else { O::identity() };
        let (warp_before, through) = warp::scan::<T, O>(total);
        let tile_total = warp::broadcast(through, warps - 1);
        let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch: publish.epoch, acq_rel: mode.acq_rel_status };
        let tile_prefix = if at.first {
            let prefix = if mode.has_init { Some(init) } else { None };
            if l == 0 {
                status.publish(tile, FLAG_PREFIX, combine_after::<T, O>(prefix, tile_total));
                probe.mark(tile, Event::Published);
                probe.mark(tile, Event::Prefix);
                probe.polls(tile, 0);
            }
            prefix
        } else {
            if l == 0 {
                status.publish(tile, FLAG_AGGREGATE, tile_total);
                probe.mark(tile, Event::Published);
            }
            let mut rounds = 0u32;
            let prefix =
                status.look_back_tallied::<T, O, D, K, u32>(tile, publish.backoff_ns, FIXED, sh.held, &mut rounds);
            if l == 0 {
                status.publish(tile, FLAG_PREFIX, O::combine(prefix, tile_total));
                probe.mark(tile, Event::Prefix);
                probe.polls(tile, rounds);
            }
            Some(prefix)
        };
        if l < warps {
            let p = combine_opt::<T, O>(tile_prefix, warp_before);
            sh.warp_prefixes.set(l, p.unwrap_or(O::identity()));
        }
    }
    sync_threads();

    // Only the first warp of a chain's first tile, without an initial value, has nothing before it.
    let warp_prefix = if !at.first || mode.has_init || w > 0 { Some(sh.warp_prefixes.get(w)) } else { None };
    for (j, v) in vals.iter_mut().enumerate() {
        let prefix = combine_opt::<T, O>(warp_prefix, lane_prefix[j]);
        if mode.exclusive {
            for k in (1..V).rev() {
                v[k] = combine_after::<T, O>(prefix, v[k - 1]);
            }
            v[0] = prefix.unwrap_or(O::identity());
        } else {
            for x in v.iter_mut() {
                *x = combine_after::<T, O>(prefix, *x);
            }
        }
    }
    store_striped::<T, V, VECS>(out.wrapping_add(offset), valid, vals, vectors);
    probe.mark(tile, Event::Stored);
}

/// Where and how a tile publishes and looks back: the temporary storage (tile counter, then
/// status words), this launch's epoch, and the look-back's polling pace.
#[derive(Clone, Copy)]
pub(crate) struct Publish {
    pub temp: *mut u8,
    pub epoch: u32,
    pub backoff_ns: u32,
}

/// Shared-memory windows of one tile's scan: per-warp totals and prefixes, and the deterministic
/// look-back's held windows.
#[derive(Clone, Copy)]
pub(crate) struct TileSmem<T> {
    warp_totals: Smem<T>,
    warp_prefixes: Smem<T>,
    held: Smem<T>,
}

impl<T: Copy> TileSmem<T> {
    /// The windows, carved next from `smem` (after the tile index).
    #[inline(always)]
    pub(crate) fn take<const TH: u32, const D: usize, const K: usize>(smem: &mut Carver) -> TileSmem<T> {
        TileSmem {
            warp_totals: smem.take::<T>(TH / WARP),
            warp_prefixes: smem.take::<T>(TH / WARP),
            held: smem.take::<T>(((K + 1) * D) as u32 * WARP),
        }
    }
}

/// Where warp `w`'s part of tile `tile` starts, and how many of its elements exist, for tiles of
/// `tile_elems` over `n` elements and parts of `segment`.
#[inline(always)]
pub(crate) fn warp_part(tile: u32, n: u64, tile_elems: u64, w: u32, segment: u32) -> (usize, u32) {
    let base = tile as u64 * tile_elems;
    let valid = ((n - base).min(tile_elems) as u32).saturating_sub(w * segment);
    ((base + (w * segment) as u64) as usize, valid)
}

/// The single-pass scan of 1- and 2-byte elements, kept packed four or two to a register through
/// the look-back: before it each vector is only reduced in the thread; after it, it is scanned
/// from its prefix and packed again. A tile then takes as many registers as a 4-byte tile of the
/// same bytes, where one element per register would take four or two times more. (Integers
/// only: adding the prefix first groups the operands differently from the unpacked path, which
/// is exact for these operators.)
#[inline(always)]
pub unsafe fn single_pass_packed<
    T: StatusValue + Vector16<O, Regs = [u32; 4]>,
    O: ScanOp<T>,
    const TH: u32,
    const V: usize,
    const VECS: usize,
    const D: usize,
    const K: usize,
    const FIXED: bool,
>(
    inp: *const T,
    out: *mut T,
    n: u64,
    init: T,
    launch: TileLaunch,
) {
    let TileLaunch { flags, temp, counter_base, .. } = launch;
    let mode = Mode::from_flags(flags);
    let mut smem = Carver::new();
    let (tile_slot, sh, publish) = launch.begin::<T, TH, D, K>(&mut smem);
    smem.check();
    let (w, l) = (warp_idx(), lane());
    let vectors = (inp as usize | out as usize) % VECTOR_BYTES == 0;
    let segment = WARP * (V * VECS) as u32;
    let tile_elems = TH as u64 * (V * VECS) as u64;
    let part = |tile: u32| warp_part(tile, n, tile_elems, w, segment);
    // Full parts come in as 16-byte vectors of words; the last, partial one element by element,
    // packed as it arrives (identity past the end).
    let load = |tile| {
        let (offset, valid) = part(tile);
        if vectors && valid >= segment {
            load_striped::<u32, 4, VECS>(inp.wrapping_add(offset) as *const u32, segment, 0, true)
        } else {
            let (mine, left) = (inp.wrapping_add(offset + (l * V as u32) as usize), valid.saturating_sub(l * V as u32));
            let mut words = [[0u32; 4]; VECS];
            for (j, v) in words.iter_mut().enumerate() {
                for k in 0..V {
                    let c = (j * WARP as usize * V + k) as u32;
                    let x = if c < left { *mine.add(c as usize) } else { <O as ScanOp<T>>::identity() };
                    let bits = 8 * size_of::<T>();
                    v[k * bits / 32] |= narrow_bits(x) << (k * bits % 32);
                }
            }
            words
        }
    };
    // With two calls of the 1-byte loader, LLVM made it a function returning the words through a
    // 248-byte stack frame; with one, it inlines it. (The 2-byte kernels keep the two calls, which
    // LLVM inlines; forcing that inline by hand cost them 8 registers, a block per SM.)
    // Vectors are reduced and scanned packed (`Vector16`).
    let bytewise = size_of::<T>() == 1;
    let (tile, words) = if bytewise {
        claim_tile_in_one_call(temp, counter_base, tile_slot, load)
    } else {
        claim_tile(temp, counter_base, tile_slot, load)
    };

    let mut lane_prefix = [None; VECS];
    let mut warp_running: Option<T> = None;
    for (j, v) in words.iter().enumerate() {
        let total = T::local(*v).1;
        let (before, through) = T::warp_scan(total);
        lane_prefix[j] = combine_opt::<T, O>(warp_running, before);
        warp_running = Some(combine_after::<T, O>(warp_running, warp::broadcast(through, WARP - 1)));
    }
    let warp_prefix = block_prefix::<T, O, TH, D, K, FIXED>((w, l), warp_running, tile, mode, init, publish, sh);

    // Unpacked again from opaque copies, and packed into opaque words: otherwise LLVM keeps the
    // elements unpacked before the look-back alive through it, or every scanned element alive
    // until the store, which is what packing avoids.
    let words = words.map(|v| v.map(opaque_u32));
    let mut scanned = [[0u32; 4]; VECS];
    for (j, (v, o)) in words.iter().zip(scanned.iter_mut()).enumerate() {
        let running = combine_opt::<T, O>(warp_prefix, lane_prefix[j]);
        *o = T::finish(*v, running, mode.exclusive).map(opaque_u32);
    }
    let (offset, valid) = part(tile);
    if vectors && valid >= segment {
        store_striped::<u32, 4, VECS>(out.wrapping_add(offset) as *mut u32, segment, scanned, true);
    } else {
        let (mine, left) = (out.wrapping_add(offset + (l * V as u32) as usize), valid.saturating_sub(l * V as u32));
        for (j, v) in scanned.iter().enumerate() {
            for k in 0..V {
                let c = (j * WARP as usize * V + k) as u32;
                if c < left {
                    *mine.add(c as usize) = T::element(v, k);
                }
            }
        }
    }
}

/// The single-pass scan with the tile staged in shared memory instead of registers: full parts
/// arrive by asynchronous copies straight into shared memory, and a thread holds only its
/// vectors' prefixes through the look-back, reading each vector again to finish it. Fewer
/// registers per thread let more blocks, and so more tiles in flight, share an SM while their
/// look-backs wait. Each thread reads back only what its own copies wrote, so waiting for its
/// own copies is all the ordering it needs.
#[inline(always)]
pub unsafe fn single_pass_staged<
    T: StatusValue,
    O: ScanOp<T>,
    const TH: u32,
    const V: usize,
    const VECS: usize,
    const D: usize,
    const K: usize,
    const FIXED: bool,
>(
    inp: *const T,
    out: *mut T,
    n: u64,
    init: T,
    launch: TileLaunch,
) {
    let TileLaunch { flags, temp, counter_base, .. } = launch;
    let mode = Mode::from_flags(flags);
    let mut smem = Carver::new();
    let (tile_slot, sh, publish) = launch.begin::<T, TH, D, K>(&mut smem);
    let staged = smem.take::<T>(TH * (V * VECS) as u32);
    smem.check();
    let (w, l) = (warp_idx(), lane());
    let vectors = (inp as usize | out as usize) % VECTOR_BYTES == 0;
    let segment = WARP * (V * VECS) as u32;
    let tile_elems = TH as u64 * (V * VECS) as u64;
    let part = |tile: u32| warp_part(tile, n, tile_elems, w, segment);
    let mine = staged.offset(w * segment);
    prefetch_tile_l2(inp, |tile| Place::flat(tile, n, tile_elems), SHAPES.prefetch_tiles, vectors);
    // Element `k` of this lane's vector `j` within the warp's part.
    let at = |j: usize, k: usize| ((j * WARP as usize + l as usize) * V + k) as u32;
    let (tile, ()) = claim_tile(temp, counter_base, tile_slot, |tile| {
        // A second call (the counter named another tile) must not race the first one's copies.
        cp_async_wait_all();
        let (offset, valid) = part(tile);
        let src = inp.wrapping_add(offset);
        if vectors && valid >= segment {
            for j in 0..VECS {
                cp_async_16(mine.at(at(j, 0)) as *mut u8, src.add(at(j, 0) as usize) as *const u8);
            }
        } else {
            for j in 0..VECS {
                for k in 0..V {
                    let i = at(j, k);
                    mine.set(i, if i < valid { *src.add(i as usize) } else { O::identity() });
                }
            }
        }
    });
    cp_async_wait_all();

    let vector = |j: usize| load_vec16::<T, V>(mine.at(at(j, 0)));
    let mut lane_prefix = [None; VECS];
    let mut warp_running: Option<T> = None;
    for (j, prefix) in lane_prefix.iter_mut().enumerate() {
        let v = vector(j);
        let mut total = v[0];
        for &x in &v[1..] {
            total = O::combine(total, x);
        }
        let (before, through) = warp::scan::<T, O>(total);
        *prefix = combine_opt::<T, O>(warp_running, before);
        warp_running = Some(combine_after::<T, O>(warp_running, warp::broadcast(through, WARP - 1)));
    }
    let warp_prefix = block_prefix::<T, O, TH, D, K, FIXED>((w, l), warp_running, tile, mode, init, publish, sh);

    let (offset, valid) = part(tile);
    let dst = out.wrapping_add(offset);
    for (j, &prefix) in lane_prefix.iter().enumerate() {
        let mut v = vector(j);
        let mut running = combine_opt::<T, O>(warp_prefix, prefix);
        for x in v.iter_mut() {
            let through = combine_after::<T, O>(running, *x);
            *x = if mode.exclusive { running.unwrap_or(O::identity()) } else { through };
            running = Some(through);
        }
        if vectors && valid >= segment {
            store_vec16::<T, V>(dst.add(at(j, 0) as usize), v);
        } else {
            for (k, &x) in v.iter().enumerate() {
                if at(j, k) < valid {
                    *dst.add(at(j, k) as usize) = x;
                }
            }
        }
    }
}

/// The block's part of a packed tile's scan between the warps' own scans and their finishing:
/// publishes the warps' totals (`warp_running`, this warp's), scans them, and has the first warp
/// look back for the tile's prefix and publish. Returns what comes before this warp's first
/// element (`None` only for the first warp of tile 0 without an initial value).
///
/// [`single_pass`] keeps its own inline copy of these steps: routed through this function, LLVM
/// orders the wide kernels' code differently, and `recurrence_f32` grows from 80 to 86-88
/// registers, one block per SM fewer; inline, every wide kernel's PTX stays as it was verified.
#[inline(always)]
pub(crate) unsafe fn block_prefix<
    T: StatusValue,
    O: ScanOp<T>,
    const TH: u32,
    const D: usize,
    const K: usize,
    const FIXED: bool,
>(
    (w, l): (u32, u32),
    warp_running: Option<T>,
    tile: u32,
    mode: Mode,
    init: T,
    publish: Publish,
    sh: TileSmem<T>,
) -> Option<T> {
    let warps = TH / WARP;
    if l == 0 {
        sh.warp_totals.set(w, warp_running.unwrap_or(O::identity()));
    }
    sync_threads();

    if w == 0 {
        let status =
            TileStatus { words: publish.temp.add(COUNTER_BYTES), epoch: publish.epoch, acq_rel: mode.acq_rel_status };
        let total = if l < warps { sh.warp_totals.get(l) } else { O::identity() };
        let (warp_before, through) = warp::scan::<T, O>(total);
        let tile_total = warp::broadcast(through, warps - 1);
        let tile_prefix = if tile == 0 {
            let prefix = if mode.has_init { Some(init) } else { None };
            if l == 0 {
                status.publish(0, FLAG_PREFIX, combine_after::<T, O>(prefix, tile_total));
            }
            prefix
        } else {
            if l == 0 {
                status.publish(tile, FLAG_AGGREGATE, tile_total);
            }
            let prefix = status.look_back::<T, O, D, K>(tile, publish.backoff_ns, FIXED, sh.held);
            if l == 0 {
                status.publish(tile, FLAG_PREFIX, O::combine(prefix, tile_total));
            }
            Some(prefix)
        };
        if l < warps {
            let p = combine_opt::<T, O>(tile_prefix, warp_before);
            sh.warp_prefixes.set(l, p.unwrap_or(O::identity()));
        }
    }
    sync_threads();

    // Only the first warp of the first tile, without an initial value, has nothing before it.
    if tile > 0 || mode.has_init || w > 0 {
        Some(sh.warp_prefixes.get(w))
    } else {
        None
    }
}

/// One kernel per (type, operator): `single_pass_<t>_<op>`, and `single_pass_det_<t>_<op>` with
/// the fixed-order look-back where the order matters (float add and mul). Separate kernels keep
/// the free-order kernel's registers, and so its occupancy, as they are.
macro_rules! single_pass_kernel {
    ($name:ident, $t:ty, $op:ident, $fixed:expr) => {
        single_pass_kernel!($name, $t, $op, $fixed, single_pass);
    };
    ($name:ident, $t:ty, $op:ident, $fixed:expr, single_pass_staged) => {
        single_pass_kernel!($name, $t, $op, $fixed, single_pass_staged, staged);
    };
    ($name:ident, $t:ty, $op:ident, $fixed:expr, $driver:ident) => {
        single_pass_kernel!($name, $t, $op, $fixed, $driver, single_pass);
    };
    ($name:ident, $t:ty, $op:ident, $fixed:expr, $driver:ident, $shape:ident) => {
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
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: Tile = SHAPES.$shape.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            const K: usize = SHAPES.lookback_windows;
            let launch = TileLaunch { flags, temp, counter_base, epoch, backoff_ns };
            $driver::<$t, crate::op::$op, { SHAPE.threads }, V, { SHAPE.items as usize / V }, D, K, $fixed>(
                inp, out, n, crate::kernels::initial(flags, temp, init), launch,
            )
        }
    };
}

macro_rules! single_pass_kernels {
    (u8, [$($op:ident),*]) => { paste::paste! { $(
        single_pass_kernel!([<single_pass_u8_ $op:lower>], u8, $op, false, single_pass_packed);
    )* } };
    (u16, [$($op:ident),*]) => { paste::paste! { $(
        single_pass_kernel!([<single_pass_u16_ $op:lower>], u16, $op, false, single_pass_packed);
    )* } };
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        single_pass_kernel!([<single_pass_ $t _ $op:lower>], $t, $op, false);
    )* } };
}
for_each_type!(single_pass_kernels);

/// The staged variant for 4- and 8-byte elements: `single_pass_staged_<t>_<op>`.
macro_rules! single_pass_staged_kernels {
    (u8, [$($op:ident),*]) => {};
    (u16, [$($op:ident),*]) => {};
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        single_pass_kernel!([<single_pass_staged_ $t _ $op:lower>], $t, $op, false, single_pass_staged);
    )* } };
}
for_each_type!(single_pass_staged_kernels);

macro_rules! single_pass_det_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        single_pass_kernel!([<single_pass_det_ $t _add>], $t, Add, true);
        single_pass_kernel!([<single_pass_det_ $t _mul>], $t, Mul, true);
    )* } };
}
single_pass_det_kernels!(f32, f64);

// The linear recurrence x[t] = a[t]*x[t-1] + b[t]: a scan of affine maps, packed f32 pairs in a
// u64, or f64 pairs.
single_pass_kernel!(recurrence_f32, u64, AffineF32, false);
single_pass_kernel!(recurrence_f64, [f64; 2], AffineF64, false);
single_pass_kernel!(recurrence_staged_f32, u64, AffineF32, false, single_pass_staged);
single_pass_kernel!(recurrence_staged_f64, [f64; 2], AffineF64, false, single_pass_staged);

/// The `u32` add scan with a [`Timeline`] of every tile written to `records` (`RECORD_WORDS` words
/// per tile, `scan_abi::timeline`): the diagnostic behind `host timeline`, the default kernel's
/// code path otherwise.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "ptx-kernel" fn single_pass_timeline_u32_add(
    inp: *const u32,
    out: *mut u32,
    n: u64,
    init: u32,
    flags: u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
    backoff_ns: u32,
    records: *mut u64,
) {
    const SHAPE: Tile = SHAPES.single_pass.at(4);
    const V: usize = vector_elems(4) as usize;
    const D: usize = SHAPES.lookback_depth;
    const K: usize = SHAPES.lookback_windows;
    let tile_elems = SHAPE.tile() as u64;
    let place = |tile| Place::flat(tile, n, tile_elems);
    let launch = TileLaunch { flags, temp, counter_base, epoch, backoff_ns };
    single_pass_placed::<u32, crate::op::Add, { SHAPE.threads }, V, { SHAPE.items as usize / V }, D, K, false>(
        inp, out, place, true, init, launch, Timeline { records },
    )
}
