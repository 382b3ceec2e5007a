//! Hierarchical (multi-kernel) scans, with the block algorithm as a type parameter.
//!
//! Three kernels, combined by the host level by level until one tile holds all the totals:
//! - [`tile_scan`]: each block scans one tile (blocked arrangement: every thread combines its
//!   items, the block algorithm scans the per-thread partials, every thread rescans its items
//!   from its prefix), optionally seeded with a per-tile offset, optionally writing tile totals;
//! - [`tile_reduce`]: tile totals only (reduce-then-scan reads the input twice, writes it once);
//! - [`add_offsets`]: combines each tile's offset into its already scanned elements
//!   (scan-then-propagate, the lecture's form: reads twice, writes twice).

use crate::arch::{block_dim, block_idx, thread_idx};
use crate::block::{
    Blelloch, BlellochNoPad, BlockScan, BrentKung, KoggeStone, KoggeStoneInPlace, KoggeStoneRacy, NoTrace, WarpShuffle,
};
use crate::kernels::{for_each_type, rescan, Mode, SHAPES};
use crate::op::{combine_opt, ScanOp};
use crate::smem::{Carver, Smem};
use crate::tile::{load_blocked, store_blocked};
use scan_abi::block::blocked_buffer_elems;

/// Valid elements of tile `tile` of `tile_elems`.
#[inline(always)]
fn valid_in(tile: u32, tile_elems: u32, n: u64) -> (u64, u32) {
    let base = tile as u64 * tile_elems as u64;
    (base, (n - base).min(tile_elems as u64) as u32)
}

/// Tile `block_idx()` in the blocked arrangement and this thread's combination of its items.
/// `buf` holds `blocked_buffer_elems(block_dim() * IT)` elements.
#[inline(always)]
unsafe fn load_and_combine<T: Copy, O: ScanOp<T>, const IT: usize>(
    inp: *const T,
    n: u64,
    buf: Smem<T>,
) -> ([T; IT], T) {
    let (base, valid) = valid_in(block_idx(), block_dim() * IT as u32, n);
    let items = load_blocked::<T, IT>(inp.wrapping_add(base as usize), valid, O::identity(), buf);
    let mut partial = items[0];
    for x in &items[1..] {
        partial = O::combine(partial, *x);
    }
    (items, partial)
}

/// Scans tile `block_idx()`. The tile's prefix is `offsets[tile]` when `offsets` is not null,
/// else `init` when the flags say so; `sums[tile]` receives the tile total when `sums` is not
/// null. `inp` may equal `out`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn tile_scan<T: Copy, O: ScanOp<T>, B: BlockScan, const IT: usize>(
    inp: *const T,
    out: *mut T,
    n: u64,
    offsets: *const T,
    sums: *mut T,
    init: T,
    flags: u32,
) {
    let mode = Mode::from_flags(flags);
    let threads = block_dim();
    let tile = block_idx();
    let (base, valid) = valid_in(tile, threads * IT as u32, n);
    let mut smem = Carver::new();
    let buf = smem.take::<T>(blocked_buffer_elems(threads * IT as u32));
    let scratch = smem.take::<T>(B::ALGO.smem_elems(threads));
    smem.check();

    let (mut items, partial) = load_and_combine::<T, O, IT>(inp, n, buf);
    let (before, total) = B::scan::<T, O, _>(partial, scratch, &mut NoTrace);
    let seed = if !offsets.is_null() {
        Some(*offsets.add(tile as usize))
    } else if mode.has_init {
        Some(init)
    } else {
        None
    };
    rescan::<T, O>(&mut items, combine_opt::<T, O>(seed, before), mode.exclusive);
    store_blocked::<T, IT>(out.wrapping_add(base as usize), valid, items, buf);
    if !sums.is_null() && thread_idx() == 0 {
        *sums.add(tile as usize) = total;
    }
}

/// `sums[tile] = ` the combination of tile `block_idx()`'s elements, in order.
#[inline(always)]
pub unsafe fn tile_reduce<T: Copy, O: ScanOp<T>, const IT: usize>(inp: *const T, n: u64, sums: *mut T) {
    let threads = block_dim();
    let tile = block_idx();
    let mut smem = Carver::new();
    let buf = smem.take::<T>(blocked_buffer_elems(threads * IT as u32));
    let scratch = smem.take::<T>(WarpShuffle::ALGO.smem_elems(threads));
    smem.check();

    let (_, partial) = load_and_combine::<T, O, IT>(inp, n, buf);
    let (_, total) = WarpShuffle::scan::<T, O, _>(partial, scratch, &mut NoTrace);
    if thread_idx() == 0 {
        *sums.add(tile as usize) = total;
    }
}

/// `out[i] = offsets[tile] ⊕ out[i]` for every element of tile `block_idx()` (tile 0 included:
/// its offset carries the initial value).
#[inline(always)]
pub unsafe fn add_offsets<T: Copy, O: ScanOp<T>, const IT: usize>(out: *mut T, n: u64, offsets: *const T) {
    let (t, threads) = (thread_idx(), block_dim());
    let tile = block_idx();
    let (base, valid) = valid_in(tile, threads * IT as u32, n);
    let offset = *offsets.add(tile as usize);
    for k in 0..IT as u32 {
        let i = k * threads + t;
        if i < valid {
            let p = out.add(base as usize + i as usize);
            *p = O::combine(offset, *p);
        }
    }
}

macro_rules! hierarchical_kernels {
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        hierarchical_kernels!(@tile $t, $op, ks, KoggeStone);
        hierarchical_kernels!(@tile $t, $op, ksinplace, KoggeStoneInPlace);
        hierarchical_kernels!(@tile $t, $op, ksracy, KoggeStoneRacy);
        hierarchical_kernels!(@tile $t, $op, blelloch, Blelloch);
        hierarchical_kernels!(@tile $t, $op, blellochnopad, BlellochNoPad);
        hierarchical_kernels!(@tile $t, $op, brentkung, BrentKung);
        hierarchical_kernels!(@tile $t, $op, warp, WarpShuffle);

        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<hier_reduce_ $t _ $op:lower>](inp: *const $t, n: u64, sums: *mut $t) {
            const IT: usize = SHAPES.hierarchical.items as usize;
            tile_reduce::<$t, crate::op::$op, IT>(inp, n, sums)
        }

        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<hier_add_ $t _ $op:lower>](out: *mut $t, n: u64, offsets: *const $t) {
            const IT: usize = SHAPES.hierarchical.items as usize;
            add_offsets::<$t, crate::op::$op, IT>(out, n, offsets)
        }
    )* } };
    (@tile $t:ident, $op:ident, $token:ident, $algo:ident) => { paste::paste! {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<hier_ $token _ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, n: u64, offsets: *const $t, sums: *mut $t, init: $t, flags: u32,
        ) {
            const IT: usize = SHAPES.hierarchical.items as usize;
            tile_scan::<$t, crate::op::$op, $algo, IT>(inp, out, n, offsets, sums, init, flags)
        }
    } };
}
for_each_type!(hierarchical_kernels);
