//! Two-level scan built on warp shuffles: every warp scans its 32 partials in registers, the
//! warp totals are scanned by the first warp, and each warp adds the total of the warps before
//! it. Two barriers in all, whatever the block size (a multiple of 32, at most 1024).

use super::{BlockScan, Tracer};
use crate::arch::{block_dim, lane, shfl_up, sync_threads, warp_idx, WARP};
use crate::op::{combine_after, ScanOp};
use crate::smem::Smem;
use crate::warp;
use scan_abi::block::BlockAlgo;

pub struct WarpShuffle;

impl BlockScan for WarpShuffle {
    const ALGO: BlockAlgo = BlockAlgo::WarpShuffle;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, _trace: &mut R) -> (Option<T>, T) {
        let (w, l) = (warp_idx(), lane());
        let warps = block_dim() / WARP;
        let inclusive = warp::inclusive_scan::<T, O>(x);
        let before = shfl_up(inclusive, 1);
        if l == WARP - 1 {
            s.set(w, inclusive);
        }
        sync_threads();
        if w == 0 {
            let total = if l < warps { s.get(l) } else { O::identity() };
            let scanned = warp::inclusive_scan::<T, O>(total);
            if l < warps {
                s.set(l, scanned);
            }
        }
        sync_threads();
        let warp_prefix = if w > 0 { Some(s.get(w - 1)) } else { None };
        let lane_prefix = if l > 0 { Some(before) } else { None };
        let prefix = match lane_prefix {
            Some(p) => Some(combine_after::<T, O>(warp_prefix, p)),
            None => warp_prefix,
        };
        let total = s.get(warps - 1);
        sync_threads();
        (prefix, total)
    }
}
