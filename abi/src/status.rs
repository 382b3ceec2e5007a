//! Tile-status words of the single-pass scan and the layout of its temporary storage.
//!
//! Each tile publishes one word: its value and a status in the same naturally aligned word, so a
//! single atomic load sees both. Values of up to 4 bytes use an 8-byte word (value in the low
//! half); 8-byte values use a 16-byte word (value, then status). The status is
//! `epoch << 2 | flag`: the host bumps the epoch on every call, so words left by earlier calls
//! read as "not ready" and the status array never needs clearing between calls.
//!
//! Because value and status travel in one single-copy-atomic word, a reader that sees the status
//! also sees the value: relaxed atomics are enough, and no other memory is published through the
//! flag. Release/acquire ordering (`flags::ACQ_REL_STATUS`) is available and measured by
//! `bench`; on sm_90 it costs a `MEMBAR.GPU` per publication and an L1 invalidation per poll.

/// The tile has published the combination of its own elements.
pub const FLAG_AGGREGATE: u32 = 1;
/// The tile has published the combination of all elements up to and including its own.
pub const FLAG_PREFIX: u32 = 2;
/// Largest epoch; after it the host clears the status array and starts again at 1.
pub const EPOCH_MAX: u32 = (1 << 30) - 1;

/// Status field for `flag` in `epoch`.
#[inline(always)]
pub const fn status(epoch: u32, flag: u32) -> u32 {
    epoch << 2 | flag
}

/// Bytes of the tile-status word(s) of one tile for elements of `elem_size` bytes. Values wider
/// than 4 bytes take one 16-byte word per 8 bytes, each 8 bytes of the value with the status:
/// pairs of f64 two, the 32-byte rows of the narrow-column scan four.
pub const fn word_bytes(elem_size: usize) -> usize {
    if elem_size <= 4 {
        8
    } else {
        16 * elem_size.div_ceil(8)
    }
}

/// Bytes at the start of the temporary storage that hold the tile counter (a whole cache line,
/// so the spinning on status words does not share its line).
pub const COUNTER_BYTES: usize = 128;

/// Where in the tile counter's line the host may leave an initial value (up to 16 bytes) for a
/// kernel launched with `flags::INIT_FROM_TEMP`; the counter itself takes the first 4 bytes.
pub const INIT_OFFSET: usize = 16;

/// Temporary storage for `tiles` tiles of `elem_size`-byte elements; `u64::MAX` where that does
/// not fit in 64 bits (no allocation can hold it).
pub const fn temp_bytes(tiles: u64, elem_size: usize) -> u64 {
    (COUNTER_BYTES as u64).saturating_add(tiles.saturating_mul(word_bytes(elem_size) as u64))
}
