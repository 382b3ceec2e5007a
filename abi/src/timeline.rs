//! Records of the diagnostic single-pass kernel (`single_pass_timeline_u32_add`): one record of
//! [`RECORD_WORDS`] u64 words per tile, word `Event as usize` holding that event's
//! `%globaltimer` time in nanoseconds (or, for `Polls` and `Sm`, a count and an SM index).

/// Words per tile record.
pub const RECORD_WORDS: usize = 8;

/// The moments of a tile's way through the scan, in order, then what the look-back reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// The block started (before it asked for a tile).
    Start = 0,
    /// The block knows its tile (the counter answered).
    Claimed = 1,
    /// Every warp has its part loaded and reduced (after the block's first barrier).
    Reduced = 2,
    /// The tile's aggregate is published.
    Published = 3,
    /// The look-back found the tile's exclusive prefix (the first tile: when it published).
    Prefix = 4,
    /// The block's first thread has issued its stores.
    Stored = 5,
    /// Rounds of polls the look-back took (0 for the first tile).
    Polls = 6,
    /// The SM that ran the tile.
    Sm = 7,
}

/// The time-stamped events, in order.
pub const TIMED: [Event; 6] =
    [Event::Start, Event::Claimed, Event::Reduced, Event::Published, Event::Prefix, Event::Stored];
