//! Tile status and decoupled look-back, the machinery of the single-pass scan.
//!
//! Every tile publishes one status word (layout in `scan_abi::status`): first its aggregate
//! (the combination of its own elements), then, once known, its inclusive prefix. A tile finds
//! its exclusive prefix by looking back: one warp inspects the 32 preceding tiles at once, waits
//! until each has published something in this call's epoch, combines aggregates from the right
//! until it meets a published inclusive prefix, and slides the window 32 tiles further left
//! while it has not. Tiles take their index from an atomic counter in launch order, so a tile
//! only ever waits on tiles that have already started: no deadlock, whatever the scheduling.

use crate::arch::{
    ballot, lane, load_acquire_u128, load_acquire_u64, load_relaxed_u128, load_relaxed_u64, nanosleep,
    store_relaxed_u128, store_relaxed_u64, store_release_u128, store_release_u64, sync_warp, WARP,
};
use crate::op::{Element, ScanOp, Seg};
use crate::smem::Smem;
use crate::warp;
use core::mem::size_of;
use scan_abi::status::{status, FLAG_PREFIX};

/// The status words of one call: an array with one word per tile, the call's epoch, and
/// whether to use release/acquire ordering rather than relaxed atomics (see
/// `scan_abi::status`).
#[derive(Clone, Copy)]
pub struct TileStatus {
    pub words: *mut u8,
    pub epoch: u32,
    pub acq_rel: bool,
}

/// A value that tile-status words carry (layouts in `scan_abi::status`): values of up to 8 bytes
/// share one atomic word with the status; wider values take one 16-byte word per 8 bytes, each
/// with its own copy of the status, and a reader that finds the statuses different (a value
/// caught between two publications) treats the tile as not ready yet.
pub trait StatusValue: Copy {
    /// Publishes `value` for `tile` with `flag`.
    unsafe fn publish_to(status: TileStatus, tile: u32, flag: u32, value: Self);
    /// Reads `tile`'s word(s): (flag, value), flag 0 while nothing of this epoch has been
    /// published.
    unsafe fn read_from(status: TileStatus, tile: u32) -> (u32, Self);
}

#[inline(always)]
unsafe fn publish_element<T: Element>(s: TileStatus, tile: u32, flag: u32, value: T) {
    let st = status(s.epoch, flag) as u64;
    if size_of::<T>() <= 4 {
        let p = (s.words as *mut u64).add(tile as usize);
        let w = value.to_bits() | st << 32;
        if s.acq_rel {
            store_release_u64(p, w)
        } else {
            store_relaxed_u64(p, w)
        }
    } else {
        let p = (s.words as *mut [u64; 2]).add(tile as usize);
        if s.acq_rel {
            store_release_u128(p, value.to_bits(), st)
        } else {
            store_relaxed_u128(p, value.to_bits(), st)
        }
    }
}

#[inline(always)]
unsafe fn read_element<T: Element>(s: TileStatus, tile: u32) -> (u32, T) {
    let (bits, st) = if size_of::<T>() <= 4 {
        let p = (s.words as *const u64).add(tile as usize);
        let w = if s.acq_rel { load_acquire_u64(p) } else { load_relaxed_u64(p) };
        (w & 0xffff_ffff, (w >> 32) as u32)
    } else {
        let p = (s.words as *const [u64; 2]).add(tile as usize);
        let (lo, hi) = if s.acq_rel { load_acquire_u128(p) } else { load_relaxed_u128(p) };
        (lo, hi as u32)
    };
    let flag = if st >> 2 == s.epoch { st & 3 } else { 0 };
    (flag, T::from_bits(bits))
}

macro_rules! element_status {
    ($($t:ty),*) => {$(
        impl StatusValue for $t {
            #[inline(always)]
            unsafe fn publish_to(status: TileStatus, tile: u32, flag: u32, value: Self) {
                publish_element(status, tile, flag, value)
            }
            #[inline(always)]
            unsafe fn read_from(status: TileStatus, tile: u32) -> (u32, Self) {
                read_element(status, tile)
            }
        }
    )*};
}
element_status!(u8, u16, u32, i32, u64, i64, f32, f64);

/// A segmented value's word holds the value alone, read back with no head: a tile whose aggregate
/// holds a head publishes it as its inclusive prefix at once (`TileWork::closes`), so an
/// aggregate's word never has one, and what follows a prefix never reads the prefix's head.
impl<T: StatusValue> StatusValue for Seg<T> {
    #[inline(always)]
    unsafe fn publish_to(status: TileStatus, tile: u32, flag: u32, value: Self) {
        T::publish_to(status, tile, flag, value.v)
    }
    #[inline(always)]
    unsafe fn read_from(status: TileStatus, tile: u32) -> (u32, Self) {
        let (flag, v) = T::read_from(status, tile);
        (flag, Seg { head: 0, v })
    }
}

/// Publishes a value of `K` 8-byte words as `K` 16-byte words, each one of them with the status.
#[inline(always)]
unsafe fn publish_wide<const K: usize>(s: TileStatus, tile: u32, flag: u32, bits: [u64; K]) {
    let st = status(s.epoch, flag) as u64;
    let p = (s.words as *mut [u64; 2]).add(K * tile as usize);
    for (k, &word) in bits.iter().enumerate() {
        if s.acq_rel {
            store_release_u128(p.add(k), word, st)
        } else {
            store_relaxed_u128(p.add(k), word, st)
        }
    }
}

/// Reads what [`publish_wide`] wrote: flag 0 unless every word carries the same status of this
/// epoch (words of two publications are not one value).
#[inline(always)]
unsafe fn read_wide<const K: usize>(s: TileStatus, tile: u32) -> (u32, [u64; K]) {
    let p = (s.words as *const [u64; 2]).add(K * tile as usize);
    let words: [(u64, u64); K] =
        core::array::from_fn(|k| if s.acq_rel { load_acquire_u128(p.add(k)) } else { load_relaxed_u128(p.add(k)) });
    let st = words[0].1;
    let same = words.iter().all(|w| w.1 == st);
    let st = st as u32;
    let flag = if same && st >> 2 == s.epoch { st & 3 } else { 0 };
    (flag, words.map(|w| w.0))
}

/// Values wider than 8 bytes: the recurrence's `f64` pairs, the narrow-column scan's rows.
macro_rules! wide_status {
    ($($t:ty),*) => {$(
        impl StatusValue for $t {
            #[inline(always)]
            unsafe fn publish_to(s: TileStatus, tile: u32, flag: u32, value: Self) {
                publish_wide::<{ size_of::<$t>() / 8 }>(s, tile, flag, core::mem::transmute_copy(&value))
            }
            #[inline(always)]
            unsafe fn read_from(s: TileStatus, tile: u32) -> (u32, Self) {
                let (flag, bits) = read_wide::<{ size_of::<$t>() / 8 }>(s, tile);
                (flag, core::mem::transmute_copy(&bits))
            }
        }
    )*};
}
wide_status!([f64; 2], [u32; 8], [i32; 8], [f32; 8], [u64; 4], [i64; 4], [f64; 4]);
wide_status!([u32; 4], [i32; 4], [f32; 4], [u64; 2], [i64; 2]);

/// A counter that may count nothing: `u32` counts, `()` does not.
pub trait Tally {
    fn tick(&mut self);
}

impl Tally for () {
    #[inline(always)]
    fn tick(&mut self) {}
}

impl Tally for u32 {
    #[inline(always)]
    fn tick(&mut self) {
        *self += 1;
    }
}

impl TileStatus {
    /// Publishes `value` for `tile` with `flag`.
    #[inline(always)]
    pub unsafe fn publish<T: StatusValue>(self, tile: u32, flag: u32, value: T) {
        T::publish_to(self, tile, flag, value)
    }

    /// Reads `tile`'s word: (flag, value), flag 0 while nothing of this epoch has been
    /// published.
    #[inline(always)]
    pub unsafe fn read<T: StatusValue>(self, tile: u32) -> (u32, T) {
        T::read_from(self, tile)
    }

    /// The exclusive prefix of `tile` (> 0): the combination of all earlier tiles, including the
    /// initial value that tile 0 folded into its inclusive prefix. Called by all 32 lanes of one
    /// warp; every lane gets the result.
    ///
    /// Each lane inspects `D` consecutive tiles, so one round of polls covers `32 * D` tiles.
    /// `backoff_ns` is how long the warp sleeps before polling again when a predecessor has not
    /// published yet (0: poll at once), to keep the polls from crowding the memory system.
    ///
    /// `fixed_order` makes the result independent of timing. Every inclusive prefix is then the
    /// left fold `I(t) = I(t-1) ⊕ a(t)` of the tile aggregates: the warp finds a published
    /// prefix `I(j)` and folds `a(j+1), …, a(t-1)` onto it one at a time, which gives the same
    /// bits whichever `j` it found. It keeps the aggregates of up to `K` windows, and of the one
    /// it is in, in `held` (shared memory, `(K + 1) * 32 * D` elements; registers would cost the
    /// tile's occupancy) while it
    /// slides left, and folds them last, newest last; with `K` windows held it waits in the
    /// oldest for a prefix instead (tiles are claimed in order, so one always comes).
    /// The free order instead combines aggregates in a tree and slides the window as far left as
    /// needed, so its float rounding depends on which tiles had finished.
    #[inline(always)]
    pub unsafe fn look_back<T: StatusValue, O: ScanOp<T>, const D: usize, const K: usize>(
        self,
        tile: u32,
        backoff_ns: u32,
        fixed_order: bool,
        held: Smem<T>,
    ) -> T {
        self.look_back_tallied::<T, O, D, K, ()>(tile, backoff_ns, fixed_order, held, &mut ())
    }

    /// [`TileStatus::look_back`], counting its rounds of polls in `rounds` (for diagnostics;
    /// with `()` it counts nothing and costs nothing).
    #[inline(always)]
    pub unsafe fn look_back_tallied<T: StatusValue, O: ScanOp<T>, const D: usize, const K: usize, R: Tally>(
        self,
        tile: u32,
        backoff_ns: u32,
        fixed_order: bool,
        held: Smem<T>,
        rounds: &mut R,
    ) -> T {
        let l = lane() as i64;
        let window = (WARP as usize * D) as i64;
        // Combination of the tiles from `end` up to `tile`, once the first window is done.
        let mut running: Option<T> = None;
        let mut end = tile as i64;
        // Fixed order: windows passed so far, their aggregates in `held`, newest first.
        let mut windows = 0;
        loop {
            // Lane 31 inspects the D tiles just before `end`, lane 0 the oldest D of the window.
            // Tiles before tile 0 read as an inclusive prefix equal to the identity, which ends
            // the walk there.
            let first = end - window + l * D as i64;
            let mut words = [(FLAG_PREFIX, O::identity()); D];
            loop {
                rounds.tick();
                let mut missing = false;
                for (k, w) in words.iter_mut().enumerate() {
                    let p = first + k as i64;
                    *w = if p >= 0 { self.read::<T>(p as u32) } else { (FLAG_PREFIX, O::identity()) };
                    missing |= w.0 == 0;
                }
                let has_prefix = words.iter().any(|w| w.0 == FLAG_PREFIX);
                if ballot(missing) == 0 && (!fixed_order || windows < K as u32 || ballot(has_prefix) != 0) {
                    break;
                }
                if backoff_ns > 0 {
                    nanosleep(backoff_ns);
                }
            }
            // This lane's part: from its last published prefix on, or all of it.
            let mut part: Option<T> = None;
            let mut has_prefix = false;
            for &(flag, value) in &words {
                if flag == FLAG_PREFIX {
                    part = Some(value);
                    has_prefix = true;
                } else {
                    part = Some(match part {
                        Some(a) => O::combine(a, value),
                        None => value,
                    });
                }
            }
            let part = part.unwrap_or(O::identity());
            let prefixes = ballot(has_prefix);
            if fixed_order {
                // Window `windows` of `held` is this one; the fold reads it back in tile order.
                let slot = |k: u32, i: u32| k * window as u32 + i;
                for (d, w) in words.iter().enumerate() {
                    held.set(slot(windows, l as u32 * D as u32 + d as u32), w.1);
                }
                if prefixes == 0 {
                    windows += 1;
                    end -= window;
                    continue;
                }
                sync_warp();
                let nearest = WARP - 1 - prefixes.leading_zeros();
                let mut folded = warp::broadcast(part, nearest);
                for i in (nearest + 1) * D as u32..window as u32 {
                    folded = O::combine(folded, held.get(slot(windows, i)));
                }
                for k in (0..windows).rev() {
                    for i in 0..window as u32 {
                        folded = O::combine(folded, held.get(slot(k, i)));
                    }
                }
                return folded;
            }
            if prefixes != 0 {
                // The lane with the nearest published prefix, then the lanes after it, in order.
                let nearest = (WARP - 1 - prefixes.leading_zeros()) as i64;
                let found = warp::reduce::<T, O>(if l >= nearest { part } else { O::identity() });
                return match running {
                    Some(r) => O::combine(found, r),
                    None => found,
                };
            }
            let window_total = warp::reduce::<T, O>(part);
            running = Some(match running {
                Some(r) => O::combine(window_total, r),
                None => window_total,
            });
            end -= window;
        }
    }
    /// The exclusive prefix of entry `k > 0` of one chain of status words, walked by one thread
    /// alone: the combination of entries `0..k`, where entry `j` lives in word `word(j)`. The
    /// thread reads the `W` entries just before those it has combined, all at once, combines
    /// published aggregates from the newest down until it meets a published inclusive prefix,
    /// and reads again from the first entry that had published nothing yet. Used where every thread of a
    /// tile owns a chain of its own (a column, a radix digit), so the chains proceed
    /// independently; a wider window takes fewer memory round trips when the nearest published
    /// prefix lies several entries back.
    #[inline(always)]
    pub unsafe fn look_back_alone<T: StatusValue, O: ScanOp<T>, const W: usize>(
        self,
        k: u32,
        word: impl Fn(u32) -> u32,
    ) -> T {
        // Entries `end..k` are combined into `acc`.
        let mut end = k;
        let mut acc: Option<T> = None;
        loop {
            let mut got = [(0u32, O::identity()); W];
            for (i, g) in got.iter_mut().enumerate() {
                if end > i as u32 {
                    *g = self.read::<T>(word(end - 1 - i as u32));
                }
            }
            for &(flag, v) in &got {
                if flag == 0 {
                    break;
                }
                acc = Some(match acc {
                    Some(a) => O::combine(v, a),
                    None => v,
                });
                // Entry 0 always publishes an inclusive prefix, so the walk ends there.
                if flag == FLAG_PREFIX || end == 1 {
                    return acc.unwrap_or(O::identity());
                }
                end -= 1;
            }
        }
    }
}
