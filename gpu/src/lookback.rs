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
    ballot, lane, load_acquire_u128, nanosleep, load_acquire_u64, load_relaxed_u128, load_relaxed_u64, store_relaxed_u128,
    store_relaxed_u64, store_release_u128, store_release_u64, WARP,
};
use crate::op::{Element, ScanOp};
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

impl TileStatus {
    /// Publishes `value` for `tile` with `flag`.
    #[inline(always)]
    pub unsafe fn publish<T: Element>(self, tile: u32, flag: u32, value: T) {
        let st = status(self.epoch, flag) as u64;
        if size_of::<T>() <= 4 {
            let p = (self.words as *mut u64).add(tile as usize);
            let w = value.to_bits() | st << 32;
            if self.acq_rel {
                store_release_u64(p, w)
            } else {
                store_relaxed_u64(p, w)
            }
        } else {
            let p = (self.words as *mut [u64; 2]).add(tile as usize);
            if self.acq_rel {
                store_release_u128(p, value.to_bits(), st)
            } else {
                store_relaxed_u128(p, value.to_bits(), st)
            }
        }
    }

    /// Reads `tile`'s word: (flag, value), flag 0 while nothing of this epoch has been
    /// published.
    #[inline(always)]
    pub unsafe fn read<T: Element>(self, tile: u32) -> (u32, T) {
        let (bits, st) = if size_of::<T>() <= 4 {
            let p = (self.words as *const u64).add(tile as usize);
            let w = if self.acq_rel { load_acquire_u64(p) } else { load_relaxed_u64(p) };
            (w & 0xffff_ffff, (w >> 32) as u32)
        } else {
            let p = (self.words as *const [u64; 2]).add(tile as usize);
            let (lo, hi) = if self.acq_rel { load_acquire_u128(p) } else { load_relaxed_u128(p) };
            (lo, hi as u32)
        };
        let flag = if st >> 2 == self.epoch { st & 3 } else { 0 };
        (flag, T::from_bits(bits))
    }

    /// The exclusive prefix of `tile` (> 0): the combination of all earlier tiles, including the
    /// initial value that tile 0 folded into its inclusive prefix. Called by all 32 lanes of one
    /// warp; every lane gets the result.
    #[inline(always)]
    /// `backoff_ns` is how long the warp sleeps before polling again when a predecessor has not
    /// published yet (0: poll at once), to keep the polls from crowding the memory system.
    pub unsafe fn look_back<T: Element, O: ScanOp<T>>(self, tile: u32, backoff_ns: u32) -> T {
        let l = lane();
        // Combination of the tiles from `end` up to `tile`, once the first window is done.
        let mut running: Option<T> = None;
        let mut end = tile as i64;
        loop {
            // Lane 31 inspects tile end-1, lane 0 tile end-32. Lanes before tile 0 read as an
            // inclusive prefix equal to the identity, which ends the walk there.
            let pred = end - WARP as i64 + l as i64;
            let (flag, value) = loop {
                let (flag, value) =
                    if pred >= 0 { self.read::<T>(pred as u32) } else { (FLAG_PREFIX, O::identity()) };
                if ballot(flag == 0) == 0 {
                    break (flag, value);
                }
                if backoff_ns > 0 {
                    nanosleep(backoff_ns);
                }
            };
            let prefixes = ballot(flag == FLAG_PREFIX);
            if prefixes != 0 {
                // The nearest published prefix, then the aggregates after it, in order.
                let nearest = WARP - 1 - prefixes.leading_zeros();
                let v = if l >= nearest { value } else { O::identity() };
                let found = warp::reduce::<T, O>(v);
                return match running {
                    Some(r) => O::combine(found, r),
                    None => found,
                };
            }
            let window = warp::reduce::<T, O>(value);
            running = Some(match running {
                Some(r) => O::combine(window, r),
                None => window,
            });
            end -= WARP as i64;
        }
    }
}
