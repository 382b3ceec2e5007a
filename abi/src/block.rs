//! Block-level scan algorithms: names, shared-memory needs and costs.
//!
//! Each algorithm scans one partial per thread of a block of `m` threads. The host sizes the
//! dynamic shared memory with [`BlockAlgo::smem_elems`]; the kernels index it the same way.

/// The block-level algorithms the lectures teach, plus the warp-shuffle one used in practice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockAlgo {
    /// Hillis-Steele / Kogge-Stone, double-buffered: one barrier per round.
    KoggeStone,
    /// Kogge-Stone in one buffer: read, barrier, write, barrier.
    KoggeStoneInPlace,
    /// Kogge-Stone in one buffer with one barrier per round: a data race, kept for teaching.
    KoggeStoneRacy,
    /// Blelloch work-efficient exclusive scan, with bank-conflict padding.
    Blelloch,
    /// Blelloch without the padding, to measure what the padding buys.
    BlellochNoPad,
    /// Brent-Kung inclusive scan: Blelloch's up-sweep, then the inclusive post-scan.
    BrentKung,
    /// Warp-shuffle scans, then a scan of the warp totals.
    WarpShuffle,
}

/// Next power of two at or above `m` (1 for 0).
pub const fn pow2_at_least(m: u32) -> u32 {
    if m <= 1 {
        1
    } else {
        1 << (32 - (m - 1).leading_zeros())
    }
}

/// Shared-memory index with one pad word every 32 entries, so that the strided accesses of the
/// Blelloch sweeps fall into different banks.
#[inline(always)]
pub const fn padded(i: u32) -> u32 {
    i + (i >> 5)
}

impl BlockAlgo {
    pub const ALL: [BlockAlgo; 7] = [
        BlockAlgo::KoggeStone,
        BlockAlgo::KoggeStoneInPlace,
        BlockAlgo::KoggeStoneRacy,
        BlockAlgo::Blelloch,
        BlockAlgo::BlellochNoPad,
        BlockAlgo::BrentKung,
        BlockAlgo::WarpShuffle,
    ];

    /// Name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            BlockAlgo::KoggeStone => "kogge-stone",
            BlockAlgo::KoggeStoneInPlace => "kogge-stone-in-place",
            BlockAlgo::KoggeStoneRacy => "kogge-stone-racy",
            BlockAlgo::Blelloch => "blelloch",
            BlockAlgo::BlellochNoPad => "blelloch-nopad",
            BlockAlgo::BrentKung => "brent-kung",
            BlockAlgo::WarpShuffle => "warp-shuffle",
        }
    }

    /// Token used in kernel names.
    pub const fn token(self) -> &'static str {
        match self {
            BlockAlgo::KoggeStone => "ks",
            BlockAlgo::KoggeStoneInPlace => "ksinplace",
            BlockAlgo::KoggeStoneRacy => "ksracy",
            BlockAlgo::Blelloch => "blelloch",
            BlockAlgo::BlellochNoPad => "blellochnopad",
            BlockAlgo::BrentKung => "brentkung",
            BlockAlgo::WarpShuffle => "warp",
        }
    }

    pub const fn describe(self) -> &'static str {
        match self {
            BlockAlgo::KoggeStone => "Kogge-Stone/Hillis-Steele, double-buffered: log2(m) rounds, 1 barrier each",
            BlockAlgo::KoggeStoneInPlace => "Kogge-Stone in place: read, barrier, write, barrier per round",
            BlockAlgo::KoggeStoneRacy => "Kogge-Stone in place with one barrier per round: RACY, teaching only",
            BlockAlgo::Blelloch => "Blelloch work-efficient exclusive scan with bank-conflict padding",
            BlockAlgo::BlellochNoPad => "Blelloch without bank-conflict padding (for comparison)",
            BlockAlgo::BrentKung => "Brent-Kung: up-sweep, then the inclusive post-scan",
            BlockAlgo::WarpShuffle => "warp-shuffle scans (5 shuffles), then a scan of the warp totals",
        }
    }

    pub fn parse(s: &str) -> Option<BlockAlgo> {
        BlockAlgo::ALL.into_iter().find(|a| a.name() == s)
    }

    /// Whether this algorithm can be traced round by round (`--trace`).
    pub const fn traceable(self) -> bool {
        !matches!(self, BlockAlgo::WarpShuffle)
    }

    /// Shared-memory elements needed to scan `m` partials (one per thread).
    pub const fn smem_elems(self, m: u32) -> u32 {
        match self {
            BlockAlgo::KoggeStone => 2 * m,
            BlockAlgo::KoggeStoneInPlace | BlockAlgo::KoggeStoneRacy | BlockAlgo::BrentKung => m,
            BlockAlgo::Blelloch => padded(pow2_at_least(m)),
            BlockAlgo::BlellochNoPad => pow2_at_least(m),
            BlockAlgo::WarpShuffle => 32,
        }
    }

    /// Entries in one traced state: the padded power of two for Blelloch, else `m`.
    pub const fn trace_width(self, m: u32) -> u32 {
        match self {
            BlockAlgo::Blelloch | BlockAlgo::BlellochNoPad => pow2_at_least(m),
            _ => m,
        }
    }

    /// Upper bound on the number of traced states for `m` partials.
    pub const fn trace_rounds(self, m: u32) -> u32 {
        let log = pow2_at_least(m).trailing_zeros();
        2 * log + 1
    }
}

/// Phase codes of traced states (`--trace`).
pub mod phase {
    /// A Kogge-Stone round.
    pub const SCAN: u32 = 0;
    /// An up-sweep (reduce) round.
    pub const UP: u32 = 1;
    /// Blelloch: the root cleared to the identity.
    pub const ZERO_ROOT: u32 = 2;
    /// A down-sweep round.
    pub const DOWN: u32 = 3;

    pub const fn name(code: u32) -> &'static str {
        match code {
            SCAN => "scan",
            UP => "up",
            ZERO_ROOT => "zero-root",
            DOWN => "down",
            _ => "?",
        }
    }
}

/// Shared-memory elements of the buffer that transposes a tile of `tile` elements between the
/// coalesced and the blocked arrangement (with bank-conflict padding).
pub const fn blocked_buffer_elems(tile: u32) -> u32 {
    padded(tile)
}

impl BlockAlgo {
    /// Operator applications to scan `m` partials (the lectures' work count).
    pub const fn combines(self, m: u32) -> u64 {
        let m = m as u64;
        match self {
            BlockAlgo::KoggeStone | BlockAlgo::KoggeStoneInPlace | BlockAlgo::KoggeStoneRacy => {
                let (mut d, mut c) = (1, 0);
                while d < m {
                    c += m - d;
                    d *= 2;
                }
                c
            }
            BlockAlgo::Blelloch | BlockAlgo::BlellochNoPad => 2 * (pow2_at_least(m as u32) as u64 - 1),
            BlockAlgo::BrentKung => {
                let (mut d, mut c) = (1, 0);
                while d < m {
                    c += m / (2 * d);
                    d *= 2;
                }
                let mut d = pow2_at_least(m as u32) as u64 / 4;
                while d >= 1 {
                    if m > d {
                        c += (m - d) / (2 * d);
                    }
                    d /= 2;
                }
                c
            }
            BlockAlgo::WarpShuffle => {
                // 31 + 30 + 28 + 24 + 16 combines per full warp, then the warp totals, then the
                // warp offsets.
                let warps = m.div_ceil(32);
                warps * 129 + 129 + m
            }
        }
    }

    /// Barrier rounds (parallel steps) to scan `m` partials.
    pub const fn steps(self, m: u32) -> u32 {
        let log = pow2_at_least(m).trailing_zeros();
        match self {
            BlockAlgo::KoggeStone | BlockAlgo::KoggeStoneInPlace | BlockAlgo::KoggeStoneRacy => log,
            BlockAlgo::Blelloch | BlockAlgo::BlellochNoPad => 2 * log,
            BlockAlgo::BrentKung => {
                if log == 0 {
                    0
                } else {
                    2 * log - 1
                }
            }
            BlockAlgo::WarpShuffle => 10,
        }
    }
}

impl BlockAlgo {
    /// Block-wide barriers between the rounds of one scan of `m` partials.
    pub const fn barriers(self, m: u32) -> u32 {
        let log = pow2_at_least(m).trailing_zeros();
        match self {
            BlockAlgo::KoggeStone | BlockAlgo::KoggeStoneRacy => log,
            BlockAlgo::KoggeStoneInPlace => 2 * log,
            BlockAlgo::Blelloch | BlockAlgo::BlellochNoPad => 2 * log + 2,
            BlockAlgo::BrentKung => self.steps(m),
            BlockAlgo::WarpShuffle => 2,
        }
    }
}
