//! Radix sort passes in one sweep each (after Adinets & Merrill's Onesweep, 2022): every pass
//! reads the keys once and writes them once, with no count kernel and no scan launch between.
//!
//! 1. [`digit_counts`] counts every pass's digits over all keys in one read (per block in shared
//!    memory, each lane with its own counters, then added to the global counts).
//! 2. [`pass`], once per digit: each warp counts its keys' digits, the tile publishes its digit
//!    counts and gives each warp its first place per digit, then ranks its keys (per warp, lanes
//!    with equal digits finding each other by ballots, or for 4-byte keys alone by an atomic OR
//!    into a shared word per digit: stable) straight into their places in shared memory in
//!    digit order (CUB's onesweep order), and looks back per digit for how many keys of that
//!    digit earlier tiles hold: the single-pass scan's decoupled look-back, one digit per
//!    thread, seeded by tile 0 with where each digit starts overall. The tile is then written
//!    out: consecutive threads write consecutive places within a digit's run. Holding no ranks
//!    lets the keys-only pass run 3 blocks per SM. A pass with values copies the tile's values
//!    into shared memory (`cp.async`) as soon as it has claimed the tile, and moves each to its
//!    key's place as the key is ranked, so it holds no ranks either and never waits on memory
//!    for the values after the ranking.

use crate::arch::{
    atomic_add_u32, block_dim, block_idx, cp_async_16, cp_async_wait_all, grid_dim, lane, load_vec16, opaque_u32,
    red_add_shared_u32, shared_window, shfl_xor, sync_threads, sync_threads_any, sync_warp, thread_idx, warp_idx, WARP,
};
use crate::kernels::{claim_tile, SHAPES};
use crate::lookback::TileStatus;
use crate::op::{Add, Element};
use crate::smem::{Carver, Smem};
use crate::warp;
use scan_abi::partition::RADIX_BITS;
use scan_abi::smem;
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};

/// Runs `body` with `r` = 0, 1, … while `r < n` (at most 24), each copy with `r` a constant.
macro_rules! unrolled {
    ($r:ident < $n:expr, $body:block) => {
        unrolled!(@ $r, $n, $body, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23)
    };
    (@ $r:ident, $n:expr, $body:block, $($i:literal)*) => {
        const { assert!($n <= 24) };
        $( if $i < $n { let $r: usize = $i; $body } )*
    };
}

/// Digits of one pass.
const DIGITS: u32 = 1 << RADIX_BITS;

/// The pass digit of `key` (bits `shift..shift + 8` of its order key), recomputed at every use:
/// the key goes through [`opaque_u32`], so LLVM cannot keep a tile's digits in registers from
/// the counting through the ranking to the gathering (16 more registers, or spills under the
/// launch bounds). With `raw`, a 4-byte key goes through it before its order-key transform,
/// which LLVM would otherwise keep for every key beside the key itself: the `i32` and `f32`
/// keys-only passes took 64 and 72 registers unbounded, against 46 and 48 so. The passes with
/// values keep the transform first, which is faster there. Digits never straddle bit 32 (`shift`
/// is a multiple of 8).
#[inline(always)]
fn digit<T: Element>(key: T, shift: u32, raw: bool) -> u32 {
    if raw && core::mem::size_of::<T>() == 4 {
        let key = T::from_bits(opaque_u32(key.to_bits() as u32) as u64);
        return digit_in(key.order_key() as u32, shift);
    }
    let k = key.order_key();
    digit_in(opaque_u32(if shift >= 32 { (k >> 32) as u32 } else { k as u32 }), shift)
}

/// Digit `shift` of an order key from `half`, the 32-bit half of the key that holds it.
#[inline(always)]
fn digit_in(half: u32, shift: u32) -> u32 {
    (half >> (shift % 32)) & (DIGITS - 1)
}

/// Adds the digit counts of `keys[..n]` for every pass (one per key byte) to `counts` (digit `d`
/// of pass `p` at `p * 256 + d`).
///
/// Each block counts a contiguous share of the tiles. Lanes count into counters of their own
/// (word `(p * 256 + d) * parts + l % parts`, `smem::sort_count_parts`), in their own
/// shared-memory banks, so a warp's counter updates never meet in a bank whatever its digits:
/// one shared-memory atomic per key and pass, without bank conflicts, and keys with few distinct
/// digits do not serialize on one word, as one 256-word histogram per pass would. The counters
/// are 32 bits wide, so a key's update is its digit shifted into an address and one atomic (16-bit
/// counters, two digits a word, took twice the instructions a key and were issue-bound), and full
/// tiles come in by 16-byte loads without bounds checks. A counter counts at most a sixteenth of
/// its block's keys, and the block adds them to `counts` once, at the end.
#[inline(always)]
pub unsafe fn digit_counts<T: Element, const TH: u32, const VECS: usize, const V: usize>(
    keys: *const T,
    n: u64,
    counts: *mut u32,
) {
    const { assert!(V * core::mem::size_of::<T>() == 16) };
    let passes = core::mem::size_of::<T>() as u32 * 8 / RADIX_BITS;
    let parts = smem::sort_count_parts(core::mem::size_of::<T>());
    let mut smem = Carver::new();
    let hist = smem.take::<u32>(passes * DIGITS * parts);
    smem.check();
    let (t, l) = (thread_idx(), lane());
    let mut k = t;
    while k < passes * DIGITS * parts / 4 {
        hist.cast::<[u32; 4]>().set(k, [0; 4]);
        k += TH;
    }
    // This lane's counter of digit 0 in pass 0, as a shared-window address.
    let mine = shared_window(hist.at(l % parts) as *const u8);
    let count = |key: T| {
        let k = key.order_key();
        let (low, high) = (k as u32, if core::mem::size_of::<T>() > 4 { (k >> 32) as u32 } else { 0 });
        for p in 0..passes {
            let d = digit_in(if p >= 4 { high } else { low }, p * RADIX_BITS);
            red_add_shared_u32(mine + 4 * (p * DIGITS + d) * parts, 1);
        }
    };
    let tile_elems = (TH * (VECS * V) as u32) as u64;
    let per_block = n.div_ceil(tile_elems).div_ceil(grid_dim() as u64);
    let mut base = block_idx() as u64 * per_block * tile_elems;
    let end = n.min(base + per_block * tile_elems);
    let aligned = keys as usize % 16 == 0;
    sync_threads();
    while base < end {
        let tile = keys.add(base as usize);
        if aligned && end - base >= tile_elems {
            let mut vecs = [[T::zero(); V]; VECS];
            for (j, v) in vecs.iter_mut().enumerate() {
                *v = load_vec16::<T, V>(tile.add((j * TH as usize + t as usize) * V));
            }
            // Indexed, not by value: LLVM leaves array iterators rolled, in local memory.
            for j in 0..VECS {
                for k in 0..V {
                    count(vecs[j][k]);
                }
            }
        } else {
            let in_tile = (end - base).min(tile_elems) as u32;
            for r in 0..(VECS * V) as u32 {
                if r * TH + t < in_tile {
                    count(*tile.add((r * TH + t) as usize));
                }
            }
        }
        base += tile_elems;
    }
    sync_threads();
    flush_counts::<TH>(hist, passes, parts, counts);
}

/// Adds a block's digit counters (see [`digit_counts`]) to `counts`: a warp per row of 32
/// counters (`32 / parts` digits), each digit's `parts` counters summed by shuffles.
#[inline(always)]
unsafe fn flush_counts<const TH: u32>(hist: Smem<u32>, passes: u32, parts: u32, counts: *mut u32) {
    let l = lane();
    let mut row = warp_idx();
    while row < passes * DIGITS * parts / WARP {
        let mut sum = hist.get(row * WARP + l);
        let mut mask = 1;
        while mask < parts {
            sum += shfl_xor(sum, mask);
            mask *= 2;
        }
        if l % parts == 0 && sum > 0 {
            atomic_add_u32(counts.add(((row * WARP + l) / parts) as usize), sum);
        }
        row += TH / WARP;
    }
}

/// Where this thread's `r`-th key lies in its tile, warp-striped: lane `l` of warp `w` holds the
/// warp's elements `r * 32 + l`, in index order.
#[inline(always)]
fn striped<const IT: usize>(w: u32, l: u32, r: usize) -> u32 {
    w * WARP * IT as u32 + r as u32 * WARP + l
}

/// Copies a tile's keys (and values) to the same places in the output, warp-striped as the pass
/// loads them: the whole of a pass whose digit is the same in every key. Out of line, and reading
/// the keys again rather than taking them, so that it adds nothing to the ranking path's
/// registers.
#[inline(never)]
unsafe fn copy_tile<T: Element, const IT: usize>(
    keys_in: *const T,
    keys_out: *mut T,
    values_in: *const u32,
    values_out: *mut u32,
    base: u64,
    in_tile: u32,
) {
    let (w, l) = (warp_idx(), lane());
    for r in 0..IT {
        let at = striped::<IT>(w, l, r);
        if at < in_tile {
            let i = (base + at as u64) as usize;
            *keys_out.add(i) = *keys_in.add(i);
            if !values_out.is_null() {
                *values_out.add(i) = if values_in.is_null() { i as u32 } else { *values_in.add(i) };
            }
        }
    }
}

/// Starts copying the values of the tile from element `base` (`in_tile` of them) into `to`, to
/// the places the keys have in the tile: each warp's run of `WARP * IT` by 16-byte `cp.async`
/// copies spread over its lanes where the tile is full and the values 16-byte aligned, else each
/// lane its own values by plain loads. The warp waits for them (`cp.async.wait_all`, then a warp
/// barrier) before it reads them.
#[inline(always)]
unsafe fn load_values<const IT: usize>(values_in: *const u32, to: Smem<u32>, base: u64, in_tile: u32, tile_elems: u32) {
    let (w, l) = (warp_idx(), lane());
    let run = w * WARP * IT as u32;
    let src = values_in.wrapping_add(base as usize + run as usize);
    if in_tile == tile_elems && values_in as usize % 16 == 0 && tile_elems % 4 == 0 {
        let mut c = l;
        while c < WARP * IT as u32 / 4 {
            cp_async_16(to.at(run + 4 * c) as *mut u8, src.add(4 * c as usize) as *const u8);
            c += WARP;
        }
    } else {
        for r in 0..IT {
            let at = striped::<IT>(w, l, r);
            if at < in_tile {
                to.set(at, *values_in.add(base as usize + at as usize));
            }
        }
    }
}

/// One pass over digit bits `shift..shift + 8`: moves `keys_in[..n]` (and `values_in`, unless
/// `values_out` is null) to `keys_out` (`values_out`) stably by digit. A null `values_in` with a
/// `values_out` stands for the positions 0, 1, 2, …: an argsort's first pass makes them as it
/// moves them, instead of reading them after a pass that writes them. `counts` holds this pass's
/// 256 digit counts over all keys; `temp`, `counter_base` and `epoch` are tile state as in the
/// single-pass scan, with 256 status words per tile.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn pass<T: Element, const TH: u32, const IT: usize, const VALUES: bool>(
    keys_in: *const T,
    values_in: *const u32,
    keys_out: *mut T,
    values_out: *mut u32,
    n: u64,
    shift: u32,
    counts: *const u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
) {
    let (t, w, l) = (thread_idx(), warp_idx(), lane());
    let warps = TH / WARP;
    let tile_elems = TH * IT as u32;
    let with_values = VALUES && !values_out.is_null();

    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    // Per warp and digit: the warp's count of the digit, then where its keys of the digit start
    // among the tile's keys in digit order, advanced by the ranking.
    let warp_digits = smem.take::<u32>(warps * DIGITS);
    // Per digit: where the tile's run of it starts in the output, less where it starts in the tile.
    let out_shift = smem.take::<u32>(DIGITS);
    let digit_warp_totals = smem.take::<u32>(DIGITS / WARP);
    let start_warp_totals = smem.take::<u32>(DIGITS / WARP);
    // The match-word ranking's two windows of one word per warp and digit.
    let by_ballot = smem::sort_by_ballot(&SHAPES, core::mem::size_of::<T>(), VALUES);
    let masks = smem.take::<u32>(if by_ballot { 0 } else { 2 * warps * DIGITS });
    let staged_keys = smem.take::<T>(tile_elems);
    let staged_values = smem.take::<u32>(if with_values { tile_elems } else { 0 });
    // The tile's values as they lie in the input, warp-striped as the keys.
    let loaded_values = smem.take::<u32>(if with_values { tile_elems } else { 0 });
    smem.check();

    let mut k = t;
    while k < warps * DIGITS / 4 {
        warp_digits.cast::<[u32; 4]>().set(k, [0; 4]);
        k += TH;
    }
    let mut k = t;
    while !by_ballot && k < 2 * warps * DIGITS / 4 {
        masks.cast::<[u32; 4]>().set(k, [0; 4]);
        k += TH;
    }
    let local = |r: usize| striped::<IT>(w, l, r);
    let index = |tile: u32, r: usize| tile as u64 * tile_elems as u64 + local(r) as u64;
    // With the keys, thread d < 256 reads how many keys of the whole array have digit d.
    let (tile, (keys, all_one_digit)) = claim_tile(temp, counter_base, tile_slot, |tile| {
        let mut keys = [T::zero(); IT];
        for (r, key) in keys.iter_mut().enumerate() {
            let i = index(tile, r);
            if i < n {
                *key = *keys_in.add(i as usize);
            }
        }
        (keys, t < DIGITS && *counts.add(t as usize) as u64 == n)
    });
    let in_tile = (n - tile as u64 * tile_elems as u64).min(tile_elems as u64) as u32;
    let valid = |r: usize| local(r) < in_tile;

    // A pass in which every key has the same digit leaves the order as it is: the tile is copied
    // (keys with small values, or 64-bit keys that fit in 32 bits, make such passes). No tile
    // looks back then, so none publishes.
    if sync_threads_any(all_one_digit) {
        return copy_tile::<T, IT>(keys_in, keys_out, values_in, values_out, tile as u64 * tile_elems as u64, in_tile);
    }

    if with_values && !values_in.is_null() {
        load_values::<IT>(values_in, loaded_values, tile as u64 * tile_elems as u64, in_tile, tile_elems);
    }

    // Each warp counts its keys' digits (one shared-memory atomic a key), so that the tile can
    // publish its counts and give each warp its first place per digit before the ranking, which
    // then yields every key's place in the tile: keys go to the stage as they are ranked, and
    // neither keys nor ranks stay in registers across the tile's barriers.
    let mine = warp_digits.offset(w * DIGITS);
    let mine_window = shared_window(mine.at(0) as *const u8);
    for r in 0..IT {
        if valid(r) {
            red_add_shared_u32(mine_window + 4 * digit(keys[r], shift, !VALUES), 1);
        }
    }

    // Tile 0 starts every digit's chain at where the digit starts among all keys (an exclusive
    // scan of `counts`).
    let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };
    let word = |k: u32| k * DIGITS + t;
    let mut overall = None;
    if tile == 0 {
        let mut start = 0;
        if t < DIGITS {
            let (before, through) = warp::scan::<u32, Add>(*counts.add(t as usize));
            if l == WARP - 1 {
                start_warp_totals.set(w, through);
            }
            start = before.unwrap_or(0);
        }
        sync_threads();
        if t < DIGITS {
            for v in 0..w {
                start += start_warp_totals.get(v);
            }
            overall = Some(start);
        }
    }
    sync_threads();

    // Thread d < 256: the tile's count of digit d, published at once, each warp's first place
    // among its keys, and where the tile's run of d starts (an exclusive scan over the digits).
    let mut tile_count = 0;
    if t < DIGITS {
        for v in 0..warps {
            let c = warp_digits.get(v * DIGITS + t);
            warp_digits.set(v * DIGITS + t, tile_count);
            tile_count += c;
        }
        match overall {
            Some(start) => status.publish(word(0), FLAG_PREFIX, start + tile_count),
            None => status.publish(word(tile), FLAG_AGGREGATE, tile_count),
        }
        let (before, through) = warp::scan::<u32, Add>(tile_count);
        if l == WARP - 1 {
            digit_warp_totals.set(w, through);
        }
        out_shift.set(t, before.unwrap_or(0));
    }
    sync_threads();
    let mut tile_start = 0;
    if t < DIGITS {
        tile_start = out_shift.get(t);
        for v in 0..w {
            tile_start += digit_warp_totals.get(v);
        }
        for v in 0..warps {
            let at = warp_digits.get(v * DIGITS + t);
            warp_digits.set(v * DIGITS + t, at + tile_start);
        }
    }
    sync_threads();

    // Rank among the warp's keys of the same digit, in index order (lanes past the end take no
    // part), matching equal digits by ballots or through shared-memory words
    // (`Shapes::sort_ballot`): the rank is the key's place in the tile's digit order,
    // where it is staged at once, and the key's value (or position) with it.
    if with_values {
        cp_async_wait_all();
        sync_warp();
    }
    unrolled!(r < IT, {
        let label = if valid(r) { Some(digit(keys[r], shift, !VALUES)) } else { None };
        let at = if by_ballot {
            warp::rank_by_ballot(label, RADIX_BITS, mine)
        } else {
            warp::rank_by_match(label, mine, masks.offset(((r as u32 % 2) * warps + w) * DIGITS))
        };
        if label.is_some() {
            staged_keys.set(at, keys[r]);
            if with_values {
                staged_values.set(at, if values_in.is_null() { index(tile, r) as u32 } else { loaded_values.get(local(r)) });
            }
        }
    });
    if t < DIGITS {
        let before = if let Some(start) = overall {
            start
        } else {
            let p = status.look_back_alone::<u32, Add, { SHAPES.sort_lookback_window }>(tile, word);
            status.publish(word(tile), FLAG_PREFIX, p + tile_count);
            p
        };
        out_shift.set(t, before.wrapping_sub(tile_start));
    }
    sync_threads();

    let mut i = t;
    while i < in_tile {
        let key = staged_keys.get(i);
        let to = out_shift.get(digit(key, shift, !VALUES)).wrapping_add(i) as usize;
        *keys_out.add(to) = key;
        if with_values {
            *values_out.add(to) = staged_values.get(i);
        }
        i += TH;
    }
}

/// One pass kernel for key type `$t`: keys only (`false`) or with u32 values (`true`). Its
/// arguments on two lines, as the other kernels' (`rustfmt` would list them one a line).
#[rustfmt::skip]
macro_rules! sort_pass_kernel {
    ($name:ident, $t:ident, $values:literal) => {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            keys_in: *const $t, values_in: *const u32, keys_out: *mut $t, values_out: *mut u32, n: u64,
            shift: u32, counts: *const u32, temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SHAPE: scan_abi::shape::Tile =
                crate::kernels::SHAPES.sort_pass(core::mem::size_of::<$t>(), $values);
            pass::<$t, { SHAPE.threads }, { SHAPE.items as usize }, $values>(
                keys_in, values_in, keys_out, values_out, n, shift, counts, temp, counter_base, epoch,
            )
        }
    };
}

macro_rules! onesweep_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<sort_counts_ $t>](keys: *const $t, n: u64, counts: *mut u32) {
            const SHAPE: scan_abi::shape::Tile =
                crate::kernels::SHAPES.sort_counts.at(core::mem::size_of::<$t>());
            const V: usize = 16 / core::mem::size_of::<$t>();
            digit_counts::<$t, { SHAPE.threads }, { SHAPE.items as usize / V }, V>(keys, n, counts)
        }

        sort_pass_kernel!([<sort_pass_ $t>], $t, false);
        sort_pass_kernel!([<sort_pass_values_ $t>], $t, true);
    )* } };
}
onesweep_kernels!(u32, i32, u64, i64, f32, f64);

/// Maps key `i < n` in place to the key whose order key is the complement of its own: the bitwise
/// complement of an integer, the sign flip of a float. A stable ascending sort of the mapped keys
/// is the stable descending sort of the keys (NaNs, whose order keys are all ones whatever their
/// sign, stay last), and mapping again restores them.
#[inline(always)]
unsafe fn flip<T: Element>(keys: *mut T, n: u64) {
    let i = block_idx() as u64 * block_dim() as u64 + thread_idx() as u64;
    if i < n {
        let bits = core::mem::size_of::<T>() as u32 * 8;
        let mask = if T::TYPE.is_float() { 1u64 << (bits - 1) } else { u64::MAX };
        let k = keys.add(i as usize);
        *k = T::from_bits((*k).to_bits() ^ mask);
    }
}

macro_rules! flip_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<sort_flip_ $t>](keys: *mut $t, n: u64) {
            flip::<$t>(keys, n)
        }
    )* } };
}
flip_kernels!(u32, i32, u64, i64, f32, f64);
