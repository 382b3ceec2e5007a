//! Kogge-Stone (Hillis-Steele): in round `d = 1, 2, 4, …` element `i` becomes
//! `s[i-d] ⊕ s[i]`. log2(m) rounds, O(m log m) work: fast for small m, wasteful for large.

use super::{finish_inclusive, BlockScan, Tracer};
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
        finish_inclusive(src)
    }
}

/// Kogge-Stone in one buffer. With `SAFE`, every thread reads `s[i-d]` into a register and
/// waits at a barrier before anyone writes; without it, reads and writes of one round overlap.
#[inline(always)]
fn in_place<T: Copy, O: ScanOp<T>, R: Tracer<T>, const SAFE: bool>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
    let (t, m) = (thread_idx(), block_dim());
    s.set(t, x);
    sync_threads();
    let mut d = 1;
    while d < m {
        let earlier = if t >= d { Some(s.get(t - d)) } else { None };
        if SAFE {
            sync_threads();
        }
        if let Some(e) = earlier {
            s.set(t, O::combine(e, s.get(t)));
        }
        sync_threads();
        trace.record(phase::SCAN, d, s, m, false);
        d *= 2;
    }
    finish_inclusive(s)
}

impl BlockScan for KoggeStoneInPlace {
    const ALGO: BlockAlgo = BlockAlgo::KoggeStoneInPlace;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        in_place::<T, O, R, true>(x, s, trace)
    }
}

impl BlockScan for KoggeStoneRacy {
    const ALGO: BlockAlgo = BlockAlgo::KoggeStoneRacy;

    #[inline(always)]
    fn scan<T: Copy, O: ScanOp<T>, R: Tracer<T>>(x: T, s: Smem<T>, trace: &mut R) -> (Option<T>, T) {
        in_place::<T, O, R, false>(x, s, trace)
    }
}
