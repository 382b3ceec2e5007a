//! Blelloch's work-efficient exclusive scan: an up-sweep builds a reduction tree in place, the
//! root (the block total) is saved and cleared to the identity, and a down-sweep pushes prefixes
//! back down. 2(m-1) combines in 2·log2(m) rounds.
//!
//! Any block size works: the tree is built over the next power of two `p >= m`, the entries
//! `m..p` holding the identity. With padding, one pad entry follows every 32, so the power-of-two
//! strided accesses of the sweeps spread over the 32 shared-memory banks instead of piling onto a
//! few.

use super::{BlockScan, Tracer};
use crate::arch::{block_dim, sync_threads, thread_idx};
use crate::op::ScanOp;
use crate::smem::Smem;
use scan_abi::block::{padded, phase, pow2_at_least, BlockAlgo};

/// With bank-conflict padding.
pub struct Blelloch;
/// Without padding, to measure what the padding buys.
pub struct BlellochNoPad;

#[inline(always)]
fn sweep<T: Copy, O: ScanOp<T>, R: Tracer<T>, const PAD: bool>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
    let at = |i: u32| if PAD { padded(i) } else { i };
    let (t, m) = (thread_idx(), block_dim());
    let p = pow2_at_least(m);
    s.set(at(t), x);
    if t < p - m {
        s.set(at(m + t), O::identity());
    }
    sync_threads();

    // Up-sweep: in the round of stride d, p/(2d) threads each combine a left subtree into the
    // right one.
    let mut d = 1;
    while d < p {
        if t < p / (2 * d) {
            let left = (2 * t + 1) * d - 1;
            let right = left + d;
            s.set(at(right), O::combine(s.get(at(left)), s.get(at(right))));
        }
        sync_threads();
        trace.record(phase::UP, d, s, p, PAD);
        d *= 2;
    }

    let total = s.get(at(p - 1));
    sync_threads();
    if t == 0 {
        s.set(at(p - 1), O::identity());
    }
    sync_threads();
    trace.record(phase::ZERO_ROOT, 0, s, p, PAD);

    // Down-sweep: the right child gets parent ⊕ left subtree, the left child gets the parent.
    let mut d = p / 2;
    while d >= 1 {
        if t < p / (2 * d) {
            let left = (2 * t + 1) * d - 1;
            let right = left + d;
            let left_sum = s.get(at(left));
            let parent = s.get(at(right));
            s.set(at(left), parent);
            s.set(at(right), O::combine(parent, left_sum));
        }
        sync_threads();
        trace.record(phase::DOWN, d, s, p, PAD);
        d /= 2;
    }

    let prefix = s.get(at(t));
    sync_threads();
    (if t == 0 { None } else { Some(prefix) }, total)
}

impl BlockScan for Blelloch {
    const ALGO: BlockAlgo = BlockAlgo::Blelloch;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        sweep::<T, O, R, true>(x, s, trace)
    }
}

impl BlockScan for BlellochNoPad {
    const ALGO: BlockAlgo = BlockAlgo::BlellochNoPad;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        sweep::<T, O, R, false>(x, s, trace)
    }
}
