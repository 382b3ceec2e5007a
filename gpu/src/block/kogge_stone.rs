//! Kogge-Stone (Hillis-Steele): in round `d = 1, 2, 4, …` element `i` becomes
//! `s[i-d] ⊕ s[i]`. log2(m) rounds, O(m log m) work: fast for small m, wasteful for large.

use super::{BlockScan, Tracer};
use crate::arch::{block_dim, sync_threads, thread_idx};
use crate::op::ScanOp;
use crate::smem::Smem;
use scan_abi::block::{phase, BlockAlgo};

/// Double-buffered: each round reads one buffer and writes the other, so one barrier per round
/// suffices. Threads below the stride still write (their value unchanged), and the result is in
/// the buffer written last.
pub struct KoggeStone;

/// In place with two barriers per round: every thread reads `s[i-d]` into a register, barrier,
/// then writes, barrier, so no thread overwrites a value another thread has yet to read.
pub struct KoggeStoneInPlace;

/// In place with ONE barrier per round. Thread `i` may read `s[i-d]` after thread `i-d` has
/// already overwritten it in the same round: a data race (compute-sanitizer racecheck reports
/// it). Kept only to show that; never used by default.
pub struct KoggeStoneRacy;

/// (exclusive prefix, total) from the finished inclusive scan in `s`.
#[inline(always)]
fn finish<T: Copy>(s: Smem<T>) -> (Option<T>, T) {
    let (t, m) = (thread_idx(), block_dim());
    let prefix = if t > 0 { Some(s.get(t - 1)) } else { None };
    let total = s.get(m - 1);
    sync_threads();
    (prefix, total)
}

impl BlockScan for KoggeStone {
    const ALGO: BlockAlgo = BlockAlgo::KoggeStone;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, scratch: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        let (t, m) = (thread_idx(), block_dim());
        let (mut src, mut dst) = (scratch, scratch.offset(m));
        src.set(t, x);
        sync_threads();
        let mut d = 1;
        while d < m {
            let v = if t >= d { O::combine(src.get(t - d), src.get(t)) } else { src.get(t) };
            dst.set(t, v);
            sync_threads();
            trace.record(phase::SCAN, d, dst, m, false);
            core::mem::swap(&mut src, &mut dst);
            d *= 2;
        }
        finish(src)
    }
}

impl BlockScan for KoggeStoneInPlace {
    const ALGO: BlockAlgo = BlockAlgo::KoggeStoneInPlace;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        let (t, m) = (thread_idx(), block_dim());
        s.set(t, x);
        sync_threads();
        let mut d = 1;
        while d < m {
            let earlier = if t >= d { Some(s.get(t - d)) } else { None };
            sync_threads();
            if let Some(e) = earlier {
                s.set(t, O::combine(e, s.get(t)));
            }
            sync_threads();
            trace.record(phase::SCAN, d, s, m, false);
            d *= 2;
        }
        finish(s)
    }
}

impl BlockScan for KoggeStoneRacy {
    const ALGO: BlockAlgo = BlockAlgo::KoggeStoneRacy;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        let (t, m) = (thread_idx(), block_dim());
        s.set(t, x);
        sync_threads();
        let mut d = 1;
        while d < m {
            if t >= d {
                s.set(t, O::combine(s.get(t - d), s.get(t)));
            }
            sync_threads();
            trace.record(phase::SCAN, d, s, m, false);
            d *= 2;
        }
        finish(s)
    }
}
