//! Block-level scans. Every algorithm scans one partial per thread of the block (any block size
//! for the shared-memory algorithms, a multiple of 32 for the warp-shuffle one) and returns each
//! thread's exclusive prefix and the block total. Each file holds one algorithm.

mod blelloch;
mod brent_kung;
mod kogge_stone;
mod warp_shuffle;

pub use blelloch::{Blelloch, BlellochNoPad};
pub use brent_kung::BrentKung;
pub use kogge_stone::{KoggeStone, KoggeStoneInPlace, KoggeStoneRacy};
pub use warp_shuffle::WarpShuffle;

use crate::arch::{block_dim, sync_threads, thread_idx};
use crate::op::ScanOp;
use crate::smem::Smem;
use scan_abi::block::{padded, BlockAlgo};

/// A block-level scan algorithm.
pub trait BlockScan {
    const ALGO: BlockAlgo;

    /// Called by every thread of the block with its partial `x`. Returns (exclusive prefix,
    /// block total); thread 0's prefix is `None`. `scratch` holds `ALGO.smem_elems(block_dim())`
    /// elements. Ends with a barrier, so the caller may reuse `scratch` at once.
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, scratch: Smem<T>, trace: &mut R) -> (Option<T>, T);
}

/// (exclusive prefix, block total) of the calling thread once `s` holds the finished inclusive
/// scan of the block's partials; ends with a barrier.
#[inline(always)]
fn finish_inclusive<T: Copy>(s: Smem<T>) -> (Option<T>, T) {
    let (t, m) = (thread_idx(), block_dim());
    let prefix = if t > 0 { Some(s.get(t - 1)) } else { None };
    let total = s.get(m - 1);
    sync_threads();
    (prefix, total)
}

/// Observes the shared array after every round (for `--trace`); [`NoTrace`] compiles to nothing.
pub trait Tracer<T: Copy> {
    /// Called by every thread right after a barrier. Records entries `0..width` of `s`, read
    /// through the bank-conflict padding when `padded` is set.
    fn record(&mut self, phase: u32, stride: u32, s: Smem<T>, width: u32, padded: bool);
}

/// No tracing.
pub struct NoTrace;

impl<T: Copy> Tracer<T> for NoTrace {
    #[inline(always)]
    fn record(&mut self, _: u32, _: u32, _: Smem<T>, _: u32, _: bool) {}
}

/// Copies every traced state to global memory: state `r` occupies `states[r*width..(r+1)*width]`
/// and `meta[2r..2r+2]` holds its phase code and stride.
pub struct GlobalTrace<T> {
    pub states: *mut T,
    pub meta: *mut u32,
    pub width: u32,
    pub rounds: u32,
}

impl<T: Copy> Tracer<T> for GlobalTrace<T> {
    #[inline(always)]
    fn record(&mut self, phase: u32, stride: u32, s: Smem<T>, width: u32, pad: bool) {
        let t = thread_idx();
        let mut i = t;
        while i < width {
            let v = s.get(if pad { padded(i) } else { i });
            unsafe { *self.states.add((self.rounds * self.width + i) as usize) = v };
            i += block_dim();
        }
        if t == 0 {
            unsafe {
                *self.meta.add(2 * self.rounds as usize) = phase;
                *self.meta.add(2 * self.rounds as usize + 1) = stride;
            }
        }
        self.rounds += 1;
        // The next round may overwrite what this one just read.
        sync_threads();
    }
}
