//! Where a single-pass tile's time goes: the `u32` add scan run by the diagnostic kernel
//! `single_pass_timeline_u32_add`, which writes every tile's timestamps (`%globaltimer`, the
//! same clock on every SM), its look-back's rounds of polls and its SM. The summary tells whether
//! tiles wait on their loads, on the look-back, or on nothing, and how many are in flight.

use crate::error::Result;
use crate::launch::scan::{single_pass, Operands};
use crate::plan::scan::timeline;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::timeline::{Event, RECORD_WORDS, TIMED};
use std::sync::Arc;

/// One tile's record: the nanosecond time of each [`TIMED`] event, in that order, the
/// look-back's rounds of polls and the SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileRecord {
    pub times: [u64; TIMED.len()],
    pub polls: u32,
    pub sm: u32,
}

impl TileRecord {
    /// The time of `event` (one of [`TIMED`]).
    pub fn at(&self, event: Event) -> u64 {
        self.times[TIMED.iter().position(|&x| x == event).expect("a timed event")]
    }

    /// Nanoseconds from `from` to `to`.
    pub fn span(&self, from: Event, to: Event) -> i64 {
        self.at(to) as i64 - self.at(from) as i64
    }
}

/// A stretch of a tile's way: from one event to the next, and its color in plots.
#[derive(Clone, Copy)]
pub struct Phase {
    pub name: &'static str,
    pub from: Event,
    pub to: Event,
    pub color: (u8, u8, u8),
}

/// The phases, in order; together they make the whole tile.
pub const PHASES: [Phase; 5] = [
    Phase { name: "claim", from: Event::Start, to: Event::Claimed, color: (150, 150, 150) },
    Phase { name: "loads + reduce", from: Event::Claimed, to: Event::Reduced, color: (31, 119, 180) },
    Phase { name: "publish", from: Event::Reduced, to: Event::Published, color: (255, 187, 120) },
    Phase { name: "look-back", from: Event::Published, to: Event::Prefix, color: (214, 39, 40) },
    Phase { name: "finish + stores", from: Event::Prefix, to: Event::Stored, color: (44, 160, 44) },
];

/// Median, 90th and 99th percentile and maximum of `xs` (sorted in place), or zeros when empty.
pub fn percentiles(xs: &mut [i64]) -> [i64; 4] {
    if xs.is_empty() {
        return [0; 4];
    }
    xs.sort_unstable();
    let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
    [at(0.5), at(0.9), at(0.99), xs[xs.len() - 1]]
}

/// What the records say, in nanoseconds: per phase (claim, loads and block reduce, publishing,
/// look-back, finishing and stores) the median, p90, p99 and maximum over tiles; the kernel's
/// span; the mean number of tiles between their start and their stores at any moment; and the
/// mean rounds of look-back polls.
#[derive(Clone, Debug)]
pub struct Summary {
    pub tiles: usize,
    pub phases: Vec<(&'static str, [i64; 4])>,
    pub span_ns: i64,
    pub mean_in_flight: f64,
    pub mean_polls: f64,
    pub most_polls: u32,
    pub chain: Chain,
}

/// What the look-backs waited on, replayed from the records (median, p90, p99, maximum over
/// tiles after the first). A look-back can end once some predecessor's inclusive prefix and every
/// aggregate after it are out: `ready` is the earliest such moment. `waited` is how long after
/// its own aggregate a tile's `ready` came (the slowest of the predecessors it needed),
/// `after_ready` how long after `ready` it found its prefix (the polls' own latency), and `depth`
/// how many tiles back that earliest-ready prefix lay.
#[derive(Clone, Debug, Default)]
pub struct Chain {
    pub waited: [i64; 4],
    pub after_ready: [i64; 4],
    pub depth: [i64; 4],
}

/// One tile's look-back replayed (tiles after the first): the fields of [`Chain`] for one tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replayed {
    pub waited: i64,
    pub after_ready: i64,
    pub depth: i64,
}

/// Every tile's look-back but the first's, replayed from `records` in tile order.
pub fn replay(records: &[TileRecord]) -> Vec<Replayed> {
    (1..records.len())
        .map(|t| {
            // Walking back from t - 1: `out` is when every aggregate between the candidate and
            // t was out; once it passes the best moment found, older candidates cannot do better.
            let (mut best, mut at, mut out) = (u64::MAX, t - 1, 0u64);
            for j in (0..t).rev() {
                let candidate = records[j].at(Event::Prefix).max(out);
                if candidate < best {
                    (best, at) = (candidate, j);
                }
                out = out.max(records[j].at(Event::Published));
                if out >= best {
                    break;
                }
            }
            let own = records[t].at(Event::Published);
            Replayed {
                waited: best.saturating_sub(own) as i64,
                after_ready: records[t].at(Event::Prefix) as i64 - best.max(own) as i64,
                depth: (t - at) as i64,
            }
        })
        .collect()
}

/// [`Chain`] for `records` in tile order.
pub fn chain(records: &[TileRecord]) -> Chain {
    let replayed = replay(records);
    let stat = |f: fn(&Replayed) -> i64| percentiles(&mut replayed.iter().map(f).collect::<Vec<_>>());
    Chain { waited: stat(|r| r.waited), after_ready: stat(|r| r.after_ready), depth: stat(|r| r.depth) }
}

/// Summarizes `records` (see [`Summary`]).
pub fn summarize(records: &[TileRecord]) -> Summary {
    let whole = Phase { name: "whole tile", from: Event::Start, to: Event::Stored, color: (0, 0, 0) };
    let phases = PHASES
        .iter()
        .chain([&whole])
        .map(|p| {
            let mut xs: Vec<i64> = records.iter().map(|r| r.span(p.from, p.to)).collect();
            (p.name, percentiles(&mut xs))
        })
        .collect();
    let first = records.iter().map(|r| r.times[0]).min().unwrap_or(0);
    let last = records.iter().map(|r| r.times[TIMED.len() - 1]).max().unwrap_or(0);
    let span_ns = last as i64 - first as i64;
    let busy: i64 = records.iter().map(|r| r.span(Event::Start, Event::Stored)).sum();
    let polls: u64 = records.iter().map(|r| r.polls as u64).sum();
    Summary {
        tiles: records.len(),
        phases,
        span_ns,
        mean_in_flight: if span_ns > 0 { busy as f64 / span_ns as f64 } else { 0.0 },
        mean_polls: if records.is_empty() { 0.0 } else { polls as f64 / records.len() as f64 },
        most_polls: records.iter().map(|r| r.polls).max().unwrap_or(0),
        chain: chain(records),
    }
}

/// Decodes the kernel's words, `RECORD_WORDS` per tile.
pub fn decode(words: &[u64]) -> Vec<TileRecord> {
    words
        .as_chunks::<RECORD_WORDS>()
        .0
        .iter()
        .map(|w| TileRecord {
            times: TIMED.map(|e| w[e as usize]),
            polls: w[Event::Polls as usize] as u32,
            sm: w[Event::Sm as usize] as u32,
        })
        .collect()
}

impl Gpu {
    /// The inclusive `u32` add scan of `input` into `output`, as the default single-pass kernel
    /// computes it, with every tile's [`TileRecord`].
    pub fn scan_timeline(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<u32>,
        output: &mut impl DevicePtrMut<u32>,
        temp: &mut TempStorage,
    ) -> Result<Vec<TileRecord>> {
        let n = input.len() as u64;
        crate::plan::check_output(output.len(), n, "elements")?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let plan = timeline(self.tuning(), n)?;
        let mut records = self.alloc_zeros::<u64>(stream, "tile records", plan.state.slots as usize * RECORD_WORDS)?;
        {
            let (input, _r) = input.device_ptr(stream);
            let (output, _w) = output.device_ptr_mut(stream);
            let (r, _rw) = records.device_ptr_mut(stream);
            let ops = Operands { input, output, n, init: 0u32, identity: 0u32 };
            single_pass(self, stream, &plan, ops, Some(r), temp)?;
        }
        Ok(decode(&stream.clone_dtoh(&records)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(times: [u64; 6], polls: u32) -> Vec<u64> {
        let mut w = vec![0u64; RECORD_WORDS];
        for (e, t) in TIMED.iter().zip(times) {
            w[*e as usize] = t;
        }
        w[Event::Polls as usize] = polls as u64;
        w[Event::Sm as usize] = 7;
        w
    }

    #[test]
    fn records_decode_and_summarize() {
        let mut words = record([100, 200, 1200, 1210, 1710, 1800], 0);
        words.extend(record([150, 260, 1300, 1305, 2305, 2400], 3));
        let records = decode(&words);
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].polls, 3);
        assert_eq!(records[0].sm, 7);
        assert_eq!(records[1].span(Event::Published, Event::Prefix), 1000);
        let s = summarize(&records);
        assert_eq!(s.span_ns, 2300);
        // Busy 1700 + 2250 ns over a span of 2300 ns.
        assert!((s.mean_in_flight - 3950.0 / 2300.0).abs() < 1e-9);
        assert!((s.mean_polls - 1.5).abs() < 1e-9);
        assert_eq!(s.most_polls, 3);
        let lookback = s.phases.iter().find(|p| p.0 == "look-back").unwrap().1;
        assert_eq!(lookback[3], 1000);
    }

    #[test]
    fn the_chain_replay_finds_what_each_look_back_waited_on() {
        // Tile 0 publishes its prefix at 100. Tile 1's aggregate is out at 50 and its look-back
        // ends at 400, though it could have ended at 100 (tile 0's prefix): it waited 50 on its
        // predecessor, then 300 on its polls. Tile 2's aggregate is out at 60; tile 1's prefix
        // (400) is later than tile 1's aggregate (50) with tile 0's prefix (100), so tile 2 was
        // ready at 100, two tiles back, and found its prefix at 700.
        let mut words = record([0, 10, 20, 100, 100, 120], 0);
        words.extend(record([0, 10, 20, 50, 400, 420], 2));
        words.extend(record([0, 10, 20, 60, 700, 720], 4));
        let records = decode(&words);
        assert_eq!(
            replay(&records),
            [Replayed { waited: 50, after_ready: 300, depth: 1 }, Replayed { waited: 40, after_ready: 600, depth: 2 }]
        );
        assert_eq!(chain(&records).depth, [2, 2, 2, 2]);
        assert_eq!(chain(&records[..1]).depth, [0; 4]);
    }

    #[test]
    fn percentiles_of_nothing_are_zero() {
        assert_eq!(percentiles(&mut []), [0; 4]);
        assert_eq!(percentiles(&mut [5, 1, 3]), [3, 5, 5, 5]);
    }
}
