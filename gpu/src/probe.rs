//! Timestamps of a tile's way through the single-pass scan, for diagnosing what a tile waits on.
//!
//! Kernels take a [`Probe`]; the scan kernels pass [`NoProbe`], whose calls compile to nothing
//! (their PTX is the same as without it), and the diagnostic kernel `single_pass_timeline_u32_add`
//! passes a [`Timeline`], which writes one record per tile (layout in
//! `scan_abi::timeline`).

use crate::arch::{global_timer, sm_id, thread_idx};
use scan_abi::timeline::{Event, RECORD_WORDS};

/// What a kernel reports about each tile it scans.
pub trait Probe: Copy {
    /// The clock to remember for a later [`Probe::mark_at`] (0 when nothing records).
    fn now(self) -> u64;
    /// Records `event` of `tile` at `time`. Any thread may call it; the block's first thread
    /// records.
    unsafe fn mark_at(self, tile: u32, event: Event, time: u64);
    /// Records `event` of `tile` now.
    #[inline(always)]
    unsafe fn mark(self, tile: u32, event: Event) {
        self.mark_at(tile, event, self.now())
    }
    /// Records how many rounds of polls `tile`'s look-back took, and the SM that ran it (as
    /// [`Probe::mark_at`], the block's first thread).
    unsafe fn polls(self, tile: u32, rounds: u32);
}

/// Records nothing.
#[derive(Clone, Copy)]
pub struct NoProbe;

impl Probe for NoProbe {
    #[inline(always)]
    fn now(self) -> u64 {
        0
    }
    #[inline(always)]
    unsafe fn mark_at(self, _: u32, _: Event, _: u64) {}
    #[inline(always)]
    unsafe fn polls(self, _: u32, _: u32) {}
}

/// Writes `RECORD_WORDS` u64 words per tile to `records`: the `%globaltimer` nanoseconds of
/// each [`Event`], the look-back's rounds of polls, and the SM.
#[derive(Clone, Copy)]
pub struct Timeline {
    pub records: *mut u64,
}

impl Probe for Timeline {
    #[inline(always)]
    fn now(self) -> u64 {
        global_timer()
    }
    #[inline(always)]
    unsafe fn mark_at(self, tile: u32, event: Event, time: u64) {
        if thread_idx() == 0 {
            *self.records.add(tile as usize * RECORD_WORDS + event as usize) = time;
        }
    }
    #[inline(always)]
    unsafe fn polls(self, tile: u32, rounds: u32) {
        if thread_idx() == 0 {
            let at = self.records.add(tile as usize * RECORD_WORDS);
            *at.add(Event::Polls as usize) = rounds as u64;
            *at.add(Event::Sm as usize) = sm_id() as u64;
        }
    }
}
