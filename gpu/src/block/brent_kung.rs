//! Brent-Kung inclusive scan: the up-sweep of Blelloch's scan, then, instead of clearing the root
//! and sweeping down, a post-scan that adds each finished prefix into the middle of the next
//! subtree: 2m - 2 - log2(m) combines in 2·log2(m) - 1 rounds. Any block size works; entries at
//! or past `m` are never touched.

use super::{finish_inclusive, BlockScan, Tracer};
use crate::arch::{block_dim, sync_threads, thread_idx};
use crate::op::ScanOp;
use crate::smem::Smem;
use scan_abi::block::{phase, pow2_at_least, BlockAlgo};

pub struct BrentKung;

impl BlockScan for BrentKung {
    const ALGO: BlockAlgo = BlockAlgo::BrentKung;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        let (t, m) = (thread_idx(), block_dim());
        s.set(t, x);
        sync_threads();

        let mut d = 1;
        while d < m {
            let right = (t + 1) * 2 * d - 1;
            if right < m {
                s.set(right, O::combine(s.get(right - d), s.get(right)));
            }
            sync_threads();
            trace.record(phase::UP, d, s, m, false);
            d *= 2;
        }

        let mut d = pow2_at_least(m) / 4;
        while d >= 1 {
            let done = (t + 1) * 2 * d - 1;
            if done + d < m {
                s.set(done + d, O::combine(s.get(done), s.get(done + d)));
            }
            sync_threads();
            trace.record(phase::DOWN, d, s, m, false);
            d /= 2;
        }

        finish_inclusive(s)
    }
}
