//! Warp-level scan and reduction with shuffles. All 32 lanes of the warp must call these
//! together. Lane order is index order: lane `i` holds the `i`-th operand.

use crate::arch::{
    atomic_add_shared_u32, atomic_or_shared_u32, ballot, ballot_agree, lane, shfl_down, shfl_idx, shfl_up, sync_warp,
    WARP,
};
use crate::op::{ScanOp, Seg};
use crate::smem::Smem;

/// Inclusive scan: lane `l` gets `x_0 ⊕ … ⊕ x_l`. Five shuffle steps; a lane only combines what
/// lane `l - delta` holds when that lane exists (`l >= delta`), otherwise it would add its own
/// value twice (the bug in a widely copied lecture version). Idempotent operators skip the
/// guard: there the shuffle's own value, combined again, changes nothing.
#[inline(always)]
pub fn inclusive_scan<T: Copy, O: ScanOp<T>>(x: T) -> T {
    let lane = lane();
    let mut v = x;
    let mut delta = 1;
    while delta < WARP {
        let up = shfl_up(v, delta);
        if O::IDEMPOTENT || lane >= delta {
            v = O::combine(up, v);
        }
        delta *= 2;
    }
    v
}

/// (exclusive, inclusive) scan; lane 0's exclusive value is `None`.
#[inline(always)]
pub fn scan<T: Copy, O: ScanOp<T>>(x: T) -> (Option<T>, T) {
    let inclusive = inclusive_scan::<T, O>(x);
    let before = shfl_up(inclusive, 1);
    (if lane() == 0 { None } else { Some(before) }, inclusive)
}

/// Segmented scan: lane `l` holds `x_l`, what its range contributes since its last head, and
/// whether a segment starts in its range. Returns (exclusive, total) as [`SegOp`] values: the
/// lanes before `l` combined (`None` for lane 0), and all 32.
///
/// One ballot finds each lane's nearest head at or before it, and the five shuffle steps combine
/// only from lanes at or after it: one shuffle of `T` per step instead of a (flag, value) pair.
///
/// [`SegOp`]: crate::op::SegOp
#[inline(always)]
pub fn segmented_scan<T: Copy, O: ScanOp<T>>(x: T, head: bool) -> (Option<Seg<T>>, Seg<T>) {
    let lane = lane();
    let heads = ballot(head);
    let through_me = heads & (u32::MAX >> (WARP - 1 - lane));
    let start = if through_me == 0 { 0 } else { WARP - 1 - through_me.leading_zeros() };
    let mut v = x;
    let mut delta = 1;
    while delta < WARP {
        let up = shfl_up(v, delta);
        if lane >= start + delta {
            v = O::combine(up, v);
        }
        delta *= 2;
    }
    let before = shfl_up(v, 1);
    let total = shfl_idx(v, WARP - 1);
    let before_me = heads & !(u32::MAX << lane);
    let exclusive = if lane == 0 { None } else { Some(Seg { head: (before_me != 0) as u32, v: before }) };
    (exclusive, Seg { head: (heads != 0) as u32, v: total })
}

/// `x_0 ⊕ … ⊕ x_31` in lane order, returned to every lane.
#[inline(always)]
pub fn reduce<T: Copy, O: ScanOp<T>>(x: T) -> T {
    let lane = lane();
    let mut v = x;
    let mut delta = 1;
    while delta < WARP {
        let down = shfl_down(v, delta);
        if lane + delta < WARP {
            v = O::combine(v, down);
        }
        delta *= 2;
    }
    shfl_idx(v, 0)
}

/// Lane `src`'s value, to every lane.
#[inline(always)]
pub fn broadcast<T: Copy>(v: T, src: u32) -> T {
    shfl_idx(v, src)
}

/// The lanes whose `value` equals this lane's, among the lanes where `valid` holds, for values
/// below `1 << bits`: one ballot per bit. (`match.any.sync` gives the same answer but issues at a
/// small fraction of the ballot's rate on sm_90.)
#[inline(always)]
pub fn peers(value: u32, bits: u32, valid: bool) -> u32 {
    let mut peers = ballot(valid);
    for b in 0..bits {
        peers = ballot_agree(peers, value, 1 << b);
    }
    peers
}

/// The length of this lane's run of equal `label`s (neighbouring lanes holding the same label)
/// where this lane ends its run, else 0: one counter update per run instead of one per lane,
/// which is what sorted or clustered input needs of its atomics.
#[inline(always)]
pub fn run_end_length(label: u32) -> u32 {
    let l = lane();
    // Every lane takes part in the shuffle: inside `l == 0 || ...` lane 0 would skip a
    // full-mask `shfl.sync`, and the warp would never leave it.
    let before = shfl_up(label, 1);
    let heads = ballot(l == 0 || before != label);
    // The lanes up to this one; lane 31's `2 << 31` is 0, and 0 - 1 takes every lane.
    let through = (2u32 << l).wrapping_sub(1);
    if l == WARP - 1 || heads & (2u32 << l) != 0 {
        l + 1 - (31 - (heads & through).leading_zeros())
    } else {
        0
    }
}

/// [`rank_by_match`] with the lanes of equal labels (below `1 << bits`) found by [`peers`], one
/// ballot per label bit, instead of through shared-memory words: the label's highest lane
/// advances `counts[label]` by one shared-memory atomic and hands the old count to its peers by
/// a shuffle. One shared-memory access per distinct label where the match words take five per
/// lane, for about three more instructions per label bit.
#[inline(always)]
pub unsafe fn rank_by_ballot(label: Option<u32>, bits: u32, counts: Smem<u32>) -> u32 {
    let l = lane();
    let d = label.unwrap_or(0);
    let peers = peers(d, bits, label.is_some());
    // Lanes without a label may have no peers; they read lane 0's count and drop it.
    let leader = 31 - peers.leading_zeros().min(31);
    let mut base = 0;
    if label.is_some() && l == leader {
        base = atomic_add_shared_u32(counts.at(d), peers.count_ones());
    }
    shfl_idx(base, leader) + (peers & ((1u32 << l) - 1)).count_ones()
}

/// Stable rank of this lane's `label` in the warp: `counts[label]` (the warp's keys with that
/// label so far) plus the lanes below it with the same label; `counts` is advanced past this
/// step's lanes. Lanes without a label take no part (rank 0).
///
/// Lanes with equal labels find each other through `masks`, one zeroed shared-memory word per
/// label: each lane sets its bit with one atomic OR and reads the word back, a handful of
/// instructions where [`peers`] issues one ballot per label bit. The label's highest lane zeroes
/// the word after the step; callers alternate two `masks` windows between consecutive steps, so
/// that zeroing never meets the next step's ORs. Lanes with equal labels serialize on their
/// shared word, so many equal labels in one step cost more than distinct ones.
#[inline(always)]
pub unsafe fn rank_by_match(label: Option<u32>, counts: Smem<u32>, masks: Smem<u32>) -> u32 {
    let l = lane();
    if let Some(d) = label {
        atomic_or_shared_u32(masks.at(d), 1 << l);
    }
    sync_warp();
    let (peers, before) = match label {
        Some(d) => (masks.get(d), counts.get(d)),
        None => (0, 0),
    };
    sync_warp();
    if let Some(d) = label {
        if l == 31 - peers.leading_zeros() {
            counts.set(d, before + peers.count_ones());
            masks.set(d, 0);
        }
    }
    before + (peers & ((1u32 << l) - 1)).count_ones()
}
