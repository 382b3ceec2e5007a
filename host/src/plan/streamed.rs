//! Planning a streamed scan (`crate::streamed`): how an array in host memory or in a file is cut
//! into chunks, and how many device buffers carry them. Each slot is one device buffer, scanned
//! in place; with three slots the upload of chunk `i + 1`, the scan of chunk `i` and the download
//! of chunk `i - 1` run at once. Host buffers (pinned staging) are needed only where the caller's
//! memory is not pinned, one per slot, and they add a slot, so the host's copy into and out of
//! them overlaps the transfers too.

use crate::error::{Error, Result};
use std::ops::Range;

/// The smallest chunk worth a round of transfers (about 80 µs of PCIe at 50 GB/s): below it the
/// fixed cost of each copy and launch shows.
pub const MIN_CHUNK_BYTES: u64 = 4 << 20;
/// The largest chunk: enough to hide every per-chunk cost, small enough that filling and
/// draining the pipeline (about two chunks) stays short beside a large input.
pub const MAX_CHUNK_BYTES: u64 = 256 << 20;
/// Chunks a large input is cut into at least, so that the pipeline runs full most of the time.
pub const MIN_CHUNKS: u64 = 16;

/// What a streamed scan needs planned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamRequest {
    /// Elements in the whole array.
    pub n: u64,
    /// Bytes per element.
    pub elem_bytes: u64,
    /// Device memory the stream may use, buffers and tile state together.
    pub device_memory: u64,
    /// Chunks hold a multiple of this many elements (a tile of the kernel, so that a chunk
    /// boundary is a tile boundary and the deterministic order is the in-memory one).
    pub granule: u64,
    /// The host side needs pinned staging buffers (the caller's memory is pageable, or a file).
    pub staged: bool,
    /// The largest chunk, in bytes ([`MAX_CHUNK_BYTES`] unless a caller asks for less).
    pub max_chunk_bytes: u64,
}

/// How a streamed scan runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamPlan {
    pub n: u64,
    /// Elements per chunk (the last chunk may hold fewer).
    pub chunk: u64,
    pub chunks: u64,
    /// Device buffers of `chunk` elements, used round robin.
    pub slots: u64,
    /// Pinned host buffers of `chunk` elements (0 where the caller's memory is pinned).
    pub staging: u64,
    /// Device bytes in all: the buffers and the tile state of one chunk's scan.
    pub device_bytes: u64,
}

impl StreamPlan {
    /// The elements of chunk `i`.
    pub fn range(&self, i: u64) -> Range<u64> {
        let start = i * self.chunk;
        start..(start + self.chunk).min(self.n)
    }

    /// Host bytes of the staging buffers.
    pub fn staging_bytes(&self, elem_bytes: u64) -> u64 {
        self.staging * self.chunk * elem_bytes
    }
}

/// Plans `req`; `state_bytes(chunk)` is the tile state a scan of `chunk` elements needs. An error
/// where the device memory allowed cannot hold the smallest pipeline (it says how much would).
pub fn plan(req: &StreamRequest, state_bytes: impl Fn(u64) -> Result<u64>) -> Result<StreamPlan> {
    let StreamRequest { n, elem_bytes: size, device_memory: cap, granule, staged, max_chunk_bytes } = *req;
    if size == 0 || granule == 0 {
        return Err(Error::invalid("a streamed scan needs elements of at least one byte and chunks of at least one"));
    }
    if max_chunk_bytes < size * granule {
        return Err(Error::out_of_range(
            "the largest chunk",
            format!("{max_chunk_bytes} bytes"),
            format!("at least one tile ({} bytes)", size * granule),
        ));
    }
    if n == 0 {
        // Nothing streams, but the options are checked as for any length: a chunk of one tile.
        state_bytes(granule)?;
        return Ok(StreamPlan { n, chunk: 0, chunks: 0, slots: 0, staging: 0, device_bytes: 0 });
    }
    // A refusal of the chunk's scan (its kernel, type or options) is the caller's to see; only
    // bytes beyond u64 are "too large".
    let need = |chunk: u64, slots: u64| -> Result<u64> {
        let state = state_bytes(chunk)?;
        let buffers = chunk.checked_mul(size).and_then(|b| b.checked_mul(slots));
        buffers.and_then(|b| b.checked_add(state)).ok_or_else(|| Error::invalid("chunk too large"))
    };
    let total = n.saturating_mul(size);
    let target = (total / MIN_CHUNKS).clamp(MIN_CHUNK_BYTES, MAX_CHUNK_BYTES).min(max_chunk_bytes);
    let floor = |bytes: u64| bytes / size / granule * granule;
    let want = floor(target).max(granule);
    // A small input goes in one chunk: nothing to overlap.
    if n <= want && need(n, 1)? <= cap {
        let staging = u64::from(staged);
        return Ok(StreamPlan { n, chunk: n, chunks: 1, slots: 1, staging, device_bytes: need(n, 1)? });
    }
    let slots = if staged { 4 } else { 3 };
    // The largest chunk whose buffers and tile state fit: shrink until they do (the state is a
    // small fraction of the buffers, so this takes a step or two).
    let mut chunk = want.min(floor(cap / slots));
    while chunk > 0 && need(chunk, slots)? > cap {
        let over = (need(chunk, slots)? - cap).div_ceil(slots * size);
        chunk = chunk.saturating_sub(over.div_ceil(granule).max(1) * granule);
    }
    let smallest = need(granule, slots)?;
    if chunk == 0 {
        return Err(Error::out_of_range(
            "the device memory allowed for the stream",
            format!("{cap} bytes"),
            format!("at least {smallest} bytes ({slots} buffers of one {}-element tile and the tile state)", granule),
        ));
    }
    let chunks = n.div_ceil(chunk);
    let slots = slots.min(chunks);
    let staging = if staged { slots } else { 0 };
    Ok(StreamPlan { n, chunk, chunks, slots, staging, device_bytes: need(chunk, slots)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn req(n: u64, size: u64, cap: u64) -> StreamRequest {
        StreamRequest {
            n,
            elem_bytes: size,
            device_memory: cap,
            granule: 4096,
            staged: false,
            max_chunk_bytes: MAX_CHUNK_BYTES,
        }
    }

    /// One 8-byte word per 4096-element tile and a counter line, as the scan's state is sized.
    fn state(chunk: u64) -> Result<u64> {
        Ok(128 + chunk.div_ceil(4096) * 8)
    }

    fn check(p: &StreamPlan, r: &StreamRequest) {
        assert!(p.device_bytes <= r.device_memory, "{p:?} exceeds {r:?}");
        assert_eq!(p.chunk % r.granule, if p.chunks == 1 { p.n % r.granule } else { 0 }, "{p:?}");
        assert!(p.chunk * r.elem_bytes <= r.max_chunk_bytes.max(r.granule * r.elem_bytes));
        // The chunks cover 0..n exactly, in order, none empty.
        let mut next = 0;
        for i in 0..p.chunks {
            let c = p.range(i);
            assert_eq!(c.start, next);
            assert!(c.end > c.start);
            next = c.end;
        }
        assert_eq!(next, p.n);
        assert!(p.slots >= 1 && p.slots <= p.chunks.max(1) && p.slots <= 4);
    }

    #[test]
    fn an_input_far_larger_than_the_cap_streams_through_a_few_buffers() {
        let r = req(1 << 30, 4, 64 * MIB);
        let p = plan(&r, state).unwrap();
        check(&p, &r);
        assert_eq!(p.slots, 3);
        assert!(p.chunk * 4 * 3 <= 64 * MIB && p.chunk * 4 * 3 > 48 * MIB, "{p:?}");
        assert_eq!(p.chunks, (1u64 << 30).div_ceil(p.chunk));
        assert_eq!(p.staging, 0);
    }

    #[test]
    fn a_large_input_with_room_uses_the_largest_chunk_and_many_of_them() {
        let r = req(1 << 33, 4, 64 << 30);
        let p = plan(&r, state).unwrap();
        check(&p, &r);
        assert_eq!(p.chunk * 4, MAX_CHUNK_BYTES);
        assert_eq!(p.chunks, 128);
        // A mid-size input is cut into MIN_CHUNKS chunks.
        let r = req(1 << 28, 4, 64 << 30);
        let p = plan(&r, state).unwrap();
        check(&p, &r);
        assert_eq!(p.chunks, MIN_CHUNKS);
    }

    #[test]
    fn a_small_input_is_one_chunk_of_exactly_its_length() {
        for n in [1, 31, 33, 4095, 4097, 1 << 20] {
            let r = req(n, 4, 1 << 30);
            let p = plan(&r, state).unwrap();
            check(&p, &r);
            assert_eq!((p.chunks, p.chunk, p.slots), (1, n, 1), "{n}");
        }
        let p = plan(&req(0, 4, 1 << 30), state).unwrap();
        assert_eq!((p.chunks, p.slots, p.device_bytes), (0, 0, 0));
    }

    #[test]
    fn staging_adds_a_slot_and_a_host_buffer_per_slot() {
        let r = StreamRequest { staged: true, ..req(1 << 30, 4, 64 * MIB) };
        let p = plan(&r, state).unwrap();
        check(&p, &r);
        assert_eq!((p.slots, p.staging), (4, 4));
        assert_eq!(p.staging_bytes(4), 4 * p.chunk * 4);
        let one = plan(&StreamRequest { staged: true, ..req(100, 4, 64 * MIB) }, state).unwrap();
        assert_eq!((one.slots, one.staging), (1, 1));
    }

    #[test]
    fn a_chunk_boundary_falls_on_the_granule_and_the_last_chunk_takes_the_rest() {
        let max = 8 * MIB;
        for extra in [0, 1, 4095, 4096, 4097] {
            let n = 3 * (max / 8) + extra;
            let r = StreamRequest { max_chunk_bytes: max, ..req(n, 8, 1 << 30) };
            let p = plan(&r, state).unwrap();
            check(&p, &r);
            let last = p.range(p.chunks - 1);
            assert_eq!(last.end - last.start, if extra == 0 { p.chunk } else { extra.min(p.chunk) }.max(1).min(n));
        }
    }

    #[test]
    fn a_cap_below_the_smallest_pipeline_is_refused_with_what_would_do() {
        let r = req(1 << 30, 4, 3 * 4096 * 4);
        let e = plan(&r, state).unwrap_err().to_string();
        assert!(e.contains("at least") && e.contains("49288 bytes"), "{e}");
        assert!(plan(&StreamRequest { device_memory: 49288, ..r }, state).is_ok());
        assert!(plan(&StreamRequest { granule: 0, ..r }, state).is_err());
        assert!(plan(&StreamRequest { max_chunk_bytes: 100, ..r }, state).is_err());
    }

    #[test]
    fn a_refusal_of_the_chunk_scan_passes_through_at_every_length() {
        let refuse = |_: u64| -> Result<u64> { Err(Error::kernel_unavailable("single_pass_det", "not built")) };
        for n in [0, 1, 4097, 1 << 30] {
            let e = plan(&req(n, 4, 64 * MIB), refuse).unwrap_err();
            assert!(matches!(e, Error::KernelUnavailable { .. }), "{n}: {e}");
            assert!(!e.to_string().contains("too large"), "{n}: {e}");
        }
        // Only a size beyond u64 is too large.
        let e = plan(&req(1 << 30, 4, 64 * MIB), |_| Ok(u64::MAX)).unwrap_err().to_string();
        assert!(e.contains("chunk too large"), "{e}");
    }

    #[test]
    fn an_empty_input_plans_nothing_but_checks_the_chunk_scan_of_one_tile() {
        let seen = std::cell::Cell::new(None);
        let p = plan(&req(0, 4, 64 * MIB), |chunk| {
            seen.set(Some(chunk));
            state(chunk)
        })
        .unwrap();
        assert_eq!((p.chunks, p.slots, p.device_bytes), (0, 0, 0));
        assert_eq!(seen.get(), Some(4096));
    }

    #[test]
    fn every_plan_stays_within_its_cap() {
        for n in [1u64, 4096, 4097, 1 << 20, (1 << 26) + 3, 1 << 34] {
            for size in [1, 2, 4, 8] {
                for cap in [MIB, 16 * MIB, 100 * MIB + 7, 8 << 30] {
                    for staged in [false, true] {
                        let r = StreamRequest { staged, ..req(n, size, cap) };
                        if let Ok(p) = plan(&r, state) {
                            check(&p, &r);
                        }
                    }
                }
            }
        }
    }
}
