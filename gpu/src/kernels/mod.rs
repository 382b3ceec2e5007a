//! Kernel entry points, one file per device-wide strategy. Each file holds the generic kernel
//! body and a macro that stamps out one `extern "ptx-kernel"` function per (element type,
//! operator), named `<strategy>_<type>_<op>` (see `scan_abi::names`).

use crate::arch::{atomic_add_u32, block_idx, grid_dim, prefetch_l2_bulk, sync_threads, thread_idx, warp_idx, WARP};
use crate::smem::Smem;
use crate::tile::load_striped;

pub mod batched;
pub mod compact;
pub mod csr;
pub mod hierarchical;
pub mod naive;
pub mod onesweep;
pub mod partition;
pub mod pipelined;
pub mod segmented;
pub mod segmented_pipelined;
pub mod single_pass;
pub mod trace;
pub mod widening;

/// The tile shapes the kernels are compiled with; the host plans from the same table.
pub const SHAPES: scan_abi::tuning::Shapes = scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH).shapes;

/// The fingerprint of [`SHAPES`] and the abi's sources (`scan_abi::fingerprint`), which the host
/// compares with its own before it takes a module built elsewhere.
#[no_mangle]
pub static SCAN_ABI_FINGERPRINT: u64 = scan_abi::fingerprint::of(&SHAPES);

/// Calls `$m!(type, [operators])` for every element type with the operators it supports
/// (`scan_abi::Op::supports`).
macro_rules! for_each_type {
    ($m:ident) => {
        $m!(u8, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(u16, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(u32, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(i32, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(u64, [Add, Mul, Min, Max, And, Or, Xor, Affine]);
        $m!(i64, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(f32, [Add, Mul, Min, Max]);
        $m!(f64, [Add, Mul, Min, Max]);
    };
}
pub(crate) use for_each_type;

/// Decoded `flags` argument (`scan_abi::flags`).
#[derive(Clone, Copy)]
pub struct Mode {
    pub exclusive: bool,
    pub has_init: bool,
    pub acq_rel_status: bool,
}

impl Mode {
    #[inline(always)]
    pub fn from_flags(flags: u32) -> Mode {
        Mode {
            exclusive: flags & scan_abi::kernel::flags::EXCLUSIVE != 0,
            has_init: flags & scan_abi::kernel::flags::HAS_INIT != 0,
            acq_rel_status: flags & scan_abi::kernel::flags::ACQ_REL_STATUS != 0,
        }
    }
}

/// The scan's initial value: the `init` argument, or, with `INIT_FROM_TEMP`, the one the host
/// left in the counter's line of `temp` (`scan_abi::status::INIT_OFFSET`).
#[inline(always)]
pub unsafe fn initial<T: Copy>(flags: u32, temp: *mut u8, init: T) -> T {
    if flags & scan_abi::kernel::flags::INIT_FROM_TEMP != 0 {
        core::ptr::read_volatile(temp.add(scan_abi::status::INIT_OFFSET) as *const T)
    } else {
        init
    }
}

/// Takes this block's tile index from the counter at `temp` (its value before this launch was
/// `counter_base`) and returns it with `load(tile)`.
///
/// The counter's answer takes a round trip to L2. Blocks are almost always handed out in
/// `block_idx()` order, so `load` starts on tile `block_idx()` at once and only runs again when
/// the counter names another tile: the round trip overlaps the loads instead of preceding them.
#[inline(always)]
pub unsafe fn claim_tile<R>(temp: *mut u8, counter_base: u32, slot: Smem<u32>, load: impl Fn(u32) -> R) -> (u32, R) {
    let guess = block_idx();
    let mut loaded = load(guess);
    let tile = next_tile(temp, counter_base, slot);
    if tile != guess {
        loaded = load(tile);
    }
    (tile, loaded)
}

/// The block's tile from the counter at `temp`: its first thread takes it, the others read it
/// from `slot` after a barrier.
#[inline(always)]
pub unsafe fn next_tile(temp: *mut u8, counter_base: u32, slot: Smem<u32>) -> u32 {
    if thread_idx() == 0 {
        slot.set(0, atomic_add_u32(temp as *mut u32, 1).wrapping_sub(counter_base));
    }
    sync_threads();
    slot.get(0)
}

/// [`claim_tile`] with `load` written once, in a loop that runs a second time only when the
/// counter names another tile than the guess: for loaders LLVM would otherwise make a function of.
#[inline(always)]
pub unsafe fn claim_tile_in_one_call<R>(
    temp: *mut u8,
    counter_base: u32,
    slot: Smem<u32>,
    load: impl Fn(u32) -> R,
) -> (u32, R) {
    let mut tile = block_idx();
    let mut claimed = None;
    loop {
        let loaded = load(tile);
        let next = match claimed {
            Some(c) => c,
            None => next_tile(temp, counter_base, slot),
        };
        if next == tile {
            return (tile, loaded);
        }
        (tile, claimed) = (next, Some(next));
    }
}

/// Has the block's first thread ask the bulk-copy engine to bring the input of tile
/// `block_idx() + ahead` (laid out by `place`) into L2, holding no register or load slot: the
/// block launched `ahead` blocks later most likely claims that tile, and its loads then wait on
/// L2 rather than on memory. A guess only: a wrong one costs bandwidth, not correctness. Nothing
/// when `ahead` is 0, the grid ends before that tile, or the input is not 16-byte aligned
/// (`aligned`).
#[inline(always)]
pub unsafe fn prefetch_tile_l2<T>(inp: *const T, place: impl Fn(u32) -> Place, ahead: u32, aligned: bool) {
    let later = block_idx().wrapping_add(ahead);
    if ahead > 0 && aligned && thread_idx() == 0 && later < grid_dim() {
        let at = place(later);
        let bytes = (at.len as usize * core::mem::size_of::<T>()) as u32 & !15;
        if bytes > 0 {
            prefetch_l2_bulk(inp.wrapping_add(at.base as usize) as *const u8, bytes);
        }
    }
}

/// Where a tile lies: its first element, how many elements it holds, and whether it starts a
/// chain of tiles (nothing before it to look back for).
#[derive(Clone, Copy)]
pub struct Place {
    pub base: u64,
    pub len: u32,
    pub first: bool,
}

impl Place {
    /// Tile `tile` of an array of `n` elements in tiles of `tile_elems`: one chain.
    #[inline(always)]
    pub fn flat(tile: u32, n: u64, tile_elems: u64) -> Place {
        let base = tile as u64 * tile_elems;
        Place { base, len: (n - base).min(tile_elems) as u32, first: tile == 0 }
    }
}

/// Claims a tile with [`claim_tile`] and loads this warp's part of it in the warp-striped
/// arrangement (`tile::load_striped`, tiles of `TH` threads × `VECS` vectors of `V`; `fill`
/// past the end), and runs `also(offset, valid)` for the warp's part with the loads, so that
/// whatever else a tile reads is in flight while the counter answers: (tile, where it lies,
/// where the warp's part starts, how many of its elements exist, the vectors, what `also`
/// returned). `place` maps a tile index to where the tile lies; `vectors` allows 16-byte
/// accesses.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn claim_placed<T: Copy, const TH: u32, const V: usize, const VECS: usize, X>(
    inp: *const T,
    place: impl Fn(u32) -> Place,
    fill: T,
    vectors: bool,
    temp: *mut u8,
    counter_base: u32,
    slot: Smem<u32>,
    also: impl Fn(usize, u32) -> X,
) -> (u32, Place, usize, u32, [[T; V]; VECS], X) {
    let w = warp_idx();
    let segment = WARP * (V * VECS) as u32;
    let (tile, (at, offset, valid, vals, more)) = claim_tile(temp, counter_base, slot, |tile| {
        let at = place(tile);
        let valid = at.len.saturating_sub(w * segment);
        let offset = (at.base + (w * segment) as u64) as usize;
        let vals = load_striped::<T, V, VECS>(inp.wrapping_add(offset), valid, fill, vectors);
        (at, offset, valid, vals, also(offset, valid))
    });
    (tile, at, offset, valid, vals, more)
}

/// [`claim_placed`] for the tiles of one array of `n` elements: (tile, where the warp's part
/// starts, how many of its elements exist, the vectors).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn claim_striped<T: Copy, const TH: u32, const V: usize, const VECS: usize>(
    inp: *const T,
    n: u64,
    fill: T,
    vectors: bool,
    temp: *mut u8,
    counter_base: u32,
    slot: Smem<u32>,
) -> (u32, usize, u32, [[T; V]; VECS]) {
    let tile_elems = TH as u64 * (V * VECS) as u64;
    let place = |tile| Place::flat(tile, n, tile_elems);
    let (tile, _, offset, valid, vals, ()) =
        claim_placed::<T, TH, V, VECS, ()>(inp, place, fill, vectors, temp, counter_base, slot, |_, _| ());
    (tile, offset, valid, vals)
}

/// Scans `items` in place (inclusive or exclusive) after `prefix`, left to right.
#[inline(always)]
pub fn rescan<T: Copy, O: crate::op::ScanOp<T>>(items: &mut [T], prefix: Option<T>, exclusive: bool) {
    let mut running = prefix;
    for x in items.iter_mut() {
        let next = crate::op::combine_after::<T, O>(running, *x);
        *x = if exclusive { running.unwrap_or(O::identity()) } else { next };
        running = Some(next);
    }
}

/// Each thread's `IT` items, scanned in place (inclusive or exclusive) after `prefix`.
#[inline(always)]
pub fn finish<T: Copy, O: crate::op::ScanOp<T>, const IT: usize>(vals: &mut [T; IT], prefix: Option<T>, exclusive: bool) {
    use crate::op::combine_after;
    if exclusive {
        for k in (1..IT).rev() {
            vals[k] = combine_after::<T, O>(prefix, vals[k - 1]);
        }
        vals[0] = prefix.unwrap_or(O::identity());
    } else {
        for x in vals.iter_mut() {
            *x = combine_after::<T, O>(prefix, *x);
        }
    }
}

/// Scans this lane's warp-striped vectors: each in the thread, inclusively, then across the
/// warp's 32 lanes. Returns what comes before each vector within the warp's part, and the part's
/// total (`None` for no vectors). `single_pass_placed` and the batched row tiles keep their own
/// copies of these steps: through this function ptxas gives the row kernels 3-7 fewer registers,
/// a change of occupancy not yet measured.
#[inline(always)]
pub fn scan_vectors<T: Copy, O: crate::op::ScanOp<T>, const V: usize, const VECS: usize>(
    vals: &mut [[T; V]; VECS],
) -> ([Option<T>; VECS], Option<T>) {
    use crate::op::{combine_after, combine_opt};
    let mut lane_prefix = [None; VECS];
    let mut warp_running: Option<T> = None;
    for (j, v) in vals.iter_mut().enumerate() {
        for k in 1..V {
            v[k] = O::combine(v[k - 1], v[k]);
        }
        let (before, through) = crate::warp::scan::<T, O>(v[V - 1]);
        lane_prefix[j] = combine_opt::<T, O>(warp_running, before);
        warp_running = Some(combine_after::<T, O>(warp_running, crate::warp::broadcast(through, WARP - 1)));
    }
    (lane_prefix, warp_running)
}
