//! Stable partition by digit, in two kernels around a scan: the pass radix sort repeats, and the
//! histogram's counting sort.
//!
//! 1. `partition_count`: each tile of `scan_abi::partition::TILE` elements counts its digits in
//!    shared memory and writes them to a digit-major matrix, `counts[d * tiles + tile]`.
//! 2. The host scans that matrix (exclusive, with the single-pass scan): entry `(d, tile)` becomes
//!    the output position of tile `tile`'s first element with digit `d`.
//! 3. `partition_scatter`: each warp walks its part of the tile 32 elements at a time, in index
//!    order; lanes with equal digits find each other with one ballot per digit bit, so each element's rank
//!    among the warp's equal digits is known without atomics; per-digit warp counts are then
//!    scanned across the warps, and every element goes to its place. Equal digits keep their
//!    input order: the pass is stable.
//!
//! A histogram that wants only its bin counts takes `histogram_counts` instead, one kernel with
//! no count matrix and no scatter.

use crate::arch::{
    atomic_add_shared_u32, atomic_add_u32, block_idx, grid_dim, lane, sync_threads, sync_warp, thread_idx, warp_idx,
    WARP,
};
use crate::op::Element;
use crate::smem::{Carver, Smem};
use crate::warp;
use scan_abi::partition::Digit;

const THREADS: u32 = crate::kernels::SHAPES.partition.threads;
const ITEMS: u32 = crate::kernels::SHAPES.partition.items;

/// Index of this thread's `r`-th element of this block's tile: warp-striped, so a warp's 32
/// lanes read 32 consecutive elements per step.
#[inline(always)]
fn index(r: u32) -> u64 {
    index_in(block_idx() as u64, r)
}

/// [`index`] in tile `tile`.
#[inline(always)]
fn index_in(tile: u64, r: u32) -> u64 {
    tile * (THREADS * ITEMS) as u64 + (warp_idx() * WARP * ITEMS + r * WARP + lane()) as u64
}

/// One zeroed shared-memory counter per digit, the whole block past zeroing them.
#[inline(always)]
unsafe fn zeroed_counters(d_count: u32) -> Smem<u32> {
    let mut smem = Carver::new();
    let hist = smem.take::<u32>(d_count);
    smem.check();
    let mut d = thread_idx();
    while d < d_count {
        hist.set(d, 0);
        d += THREADS;
    }
    sync_threads();
    hist
}

#[inline(always)]
pub unsafe fn count<T: Element>(keys: *const T, n: u64, digit: Digit, counts: *mut u32) {
    let d_count = digit.count();
    let hist = zeroed_counters(d_count);
    for r in 0..ITEMS {
        let i = index(r);
        if i < n {
            atomic_add_shared_u32(hist.at(digit.of(*keys.add(i as usize))), 1);
        }
    }
    sync_threads();
    let tiles = n.div_ceil((THREADS * ITEMS) as u64);
    let mut d = thread_idx();
    while d < d_count {
        *counts.add((d as u64 * tiles + block_idx() as u64) as usize) = hist.get(d);
        d += THREADS;
    }
}

/// The `digit.count()` bin counts of a histogram, added to `counts` (zeroed by the caller): each
/// block of a persistent grid counts its tiles in shared memory, a warp's run of equal bins by
/// one atomic (clustered or sorted input would otherwise put a warp on one counter), then adds
/// its nonzero counters to `counts`, so the global atomics are per block, not per element.
#[inline(always)]
pub unsafe fn histogram_counts<T: Element>(keys: *const T, n: u64, digit: Digit, counts: *mut u32) {
    let d_count = digit.count();
    let hist = zeroed_counters(d_count);
    let tiles = n.div_ceil((THREADS * ITEMS) as u64);
    let mut tile = block_idx() as u64;
    while tile < tiles {
        // Every key of the step is read before any is counted, so the loads are in flight together.
        let mut keys_of = [T::zero(); ITEMS as usize];
        for (r, k) in keys_of.iter_mut().enumerate() {
            let i = index_in(tile, r as u32);
            if i < n {
                *k = *keys.add(i as usize);
            }
        }
        for (r, &k) in keys_of.iter().enumerate() {
            // Places past the end take u32::MAX, which no bin has; they still join the ballots.
            let bin = if index_in(tile, r as u32) < n { digit.of(k) } else { u32::MAX };
            let run = warp::run_end_length(bin);
            if run > 0 && bin != u32::MAX {
                atomic_add_shared_u32(hist.at(bin), run);
            }
        }
        tile += grid_dim() as u64;
    }
    sync_threads();
    let mut d = thread_idx();
    while d < d_count {
        let c = hist.get(d);
        if c > 0 {
            atomic_add_u32(counts.add(d as usize), c);
        }
        d += THREADS;
    }
}

/// `offsets` is the exclusive scan of `count`'s matrix. `values_in` null: no values are read;
/// with `indices` the element's input index is written as its value instead.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scatter<T: Element>(
    keys_in: *const T,
    values_in: *const u32,
    keys_out: *mut T,
    values_out: *mut u32,
    n: u64,
    digit: Digit,
    offsets: *const u32,
    indices: bool,
) {
    let (t, w, l) = (thread_idx(), warp_idx(), lane());
    let d_count = digit.count();
    let warps = THREADS / WARP;
    let mut smem = Carver::new();
    let warp_hist = smem.take::<u32>(warps * d_count);
    smem.check();
    let mut k = t;
    while k < warps * d_count {
        warp_hist.set(k, 0);
        k += THREADS;
    }
    sync_threads();

    let mine = warp_hist.offset(w * d_count);
    let mut keys = [T::zero(); ITEMS as usize];
    let mut digit_of = [u32::MAX; ITEMS as usize];
    let mut rank = [0u32; ITEMS as usize];
    let below = (1u32 << l) - 1;
    for r in 0..ITEMS as usize {
        let i = index(r as u32);
        if i < n {
            keys[r] = *keys_in.add(i as usize);
            digit_of[r] = digit.of(keys[r]);
        }
        // Lanes past the end share the digit u32::MAX, which no element has.
        let valid = digit_of[r] != u32::MAX;
        let peers = warp::peers(digit_of[r], u32::BITS - (d_count - 1).leading_zeros(), valid);
        let before = if valid { mine.get(digit_of[r]) } else { 0 };
        sync_warp();
        rank[r] = before + (peers & below).count_ones();
        if valid && l == 31 - peers.leading_zeros() {
            mine.set(digit_of[r], before + peers.count_ones());
        }
        sync_warp();
    }
    sync_threads();

    // Per digit: where this tile's elements go, split among the warps in order.
    let tiles = n.div_ceil((THREADS * ITEMS) as u64);
    let mut d = t;
    while d < d_count {
        let mut at = *offsets.add((d as u64 * tiles + block_idx() as u64) as usize);
        for v in 0..warps {
            let c = warp_hist.get(v * d_count + d);
            warp_hist.set(v * d_count + d, at);
            at += c;
        }
        d += THREADS;
    }
    sync_threads();

    for r in 0..ITEMS as usize {
        if digit_of[r] != u32::MAX {
            let to = (mine.get(digit_of[r]) + rank[r]) as usize;
            *keys_out.add(to) = keys[r];
            if !values_out.is_null() {
                let i = index(r as u32);
                *values_out.add(to) = if indices { i as u32 } else { *values_in.add(i as usize) };
            }
        }
    }
}

macro_rules! partition_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<partition_count_ $t>](
            keys: *const $t, n: u64, mode: u32, shift: u32, bins: u32, lo: f64, hi: f64, counts: *mut u32,
        ) {
            count::<$t>(keys, n, Digit { mode, shift, bins, lo, hi }, counts)
        }

        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<histogram_counts_ $t>](
            keys: *const $t, n: u64, bins: u32, lo: f64, hi: f64, counts: *mut u32,
        ) {
            histogram_counts::<$t>(keys, n, Digit::bins(bins, lo, hi), counts)
        }

        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<partition_scatter_ $t>](
            keys_in: *const $t, values_in: *const u32, keys_out: *mut $t, values_out: *mut u32, n: u64,
            mode: u32, shift: u32, bins: u32, lo: f64, hi: f64, offsets: *const u32, indices: u32,
        ) {
            scatter::<$t>(keys_in, values_in, keys_out, values_out, n, Digit { mode, shift, bins, lo, hi }, offsets, indices != 0)
        }
    )* } };
}
partition_kernels!(u32, i32, u64, i64, f32, f64);
