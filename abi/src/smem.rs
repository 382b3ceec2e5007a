//! Dynamic shared memory of each kernel. Kernels carve their shared memory into windows, one
//! after another, each rounded up to 16 bytes (`gpu::smem::Carver`); these functions give the
//! host the same totals. A kernel traps when launched with less than it carves, so a mismatch
//! cannot go unnoticed.

use crate::block::{blocked_buffer_elems, BlockAlgo};
use crate::partition::RADIX_BITS;
use crate::shape::{Pipeline, Tile, VECTOR_BYTES};
use crate::tuning::Shapes;

/// Bytes one window of `elems` elements of `elem_size` bytes takes.
pub const fn window(elems: u32, elem_size: u32) -> u32 {
    (elems * elem_size).next_multiple_of(16)
}

/// Single-pass kernel: the tile index, warp totals, warp prefixes, and the windows the
/// deterministic look-back holds (the ones it passed and the one it is in).
pub const fn single_pass(s: &Shapes, elem_size: usize) -> u32 {
    let threads = s.single_pass.at(elem_size).threads;
    window(1, 4) + 2 * window(threads / 32, elem_size as u32) + fixed_lookback(s, elem_size)
}

/// The windows of `elem_size`-byte aggregates the fixed-order look-back holds: the ones it passed
/// and the one it is in (the last window of the single-pass kernels and of the pipelined kernels
/// with the fixed order).
pub const fn fixed_lookback(s: &Shapes, elem_size: usize) -> u32 {
    let held = 32 * s.lookback_depth * (s.lookback_windows + 1);
    window(held as u32, elem_size as u32)
}

/// Staged single-pass kernel: the single-pass windows, then the tile itself.
pub const fn single_pass_staged(s: &Shapes, elem_size: usize) -> u32 {
    single_pass(s, elem_size) + window(s.staged.at(elem_size).tile(), elem_size as u32)
}

/// Pipelined kernel of shape `p` over elements of `elem_size` bytes whose tiles publish
/// aggregates of `aggregate_size` bytes (the element for a scan, a `u64` count for compaction):
/// four barrier words per stage, each stage's tile index, the totals of the scanning warps'
/// shares, the tile's aggregate and its exclusive prefix, then the stages' tiles.
pub const fn pipelined(p: Pipeline, elem_size: usize, aggregate_size: usize) -> u32 {
    let (e, a) = (elem_size as u32, aggregate_size as u32);
    window(4 * p.stages, 8)
        + window(p.stages, 4)
        + window(p.stages * p.warps * p.split, a)
        + 2 * window(p.stages, a)
        + p.stages * window(p.tile(), e)
}

/// The pipelined segmented scan of shape `p` over values of `elem_size` bytes with segment
/// entries of `entry_size` bytes: the pipelined windows with (head, value) aggregates, then each
/// stage's entries after a 16-byte lead, then what each reducing lane leaves its scanning lane
/// (its heads and the (head, value) before it: a pair's bytes).
pub const fn segmented_pipelined(p: Pipeline, elem_size: usize, entry_size: usize) -> u32 {
    let lead = VECTOR_BYTES as u32 / entry_size as u32;
    let pair = seg_pair_bytes(elem_size);
    pipelined(p, elem_size, pair as usize)
        + window(p.stages * (p.tile() + lead), entry_size as u32)
        + window(p.stages * p.warps * p.split * 32, pair)
}

/// Compaction: the tile index, per-warp counts (u32), the tile's output offset (u64) and the
/// tile's kept elements, staged in order.
pub const fn compact(s: &Shapes, elem_size: usize) -> u32 {
    compact_staging(s.compact.at(elem_size), elem_size as u32)
}

/// The positions of set flags: the compaction of bytes, its kept elements staged as `u16`
/// places within the tile.
pub const fn positions(s: &Shapes) -> u32 {
    compact_staging(s.compact.at(1), 2)
}

/// A compaction's tile of shape `tile` whose kept entries are staged at `staged_size` bytes.
const fn compact_staging(tile: Tile, staged_size: u32) -> u32 {
    window(1, 4) + window(tile.threads / 32, 4) + window(1, 8) + window(tile.tile(), staged_size)
}

/// Bytes of a segmented scan's (head, value) pair: twice the larger of the element and 4 bytes.
const fn seg_pair_bytes(elem_size: usize) -> u32 {
    2 * if elem_size > 4 { elem_size as u32 } else { 4 }
}

/// Segmented scan: the tile index, then per-warp (head, value) totals and prefixes.
pub const fn segmented(s: &Shapes, elem_size: usize) -> u32 {
    let warps = s.single_pass.at(elem_size).threads / 32;
    window(1, 4) + 2 * window(warps, seg_pair_bytes(elem_size))
}

/// Column scan: the tile index, then per-thread totals and per-column prefixes.
pub const fn columns(s: &Shapes, elem_size: usize) -> u32 {
    let threads = s.columns.at(elem_size).threads;
    window(1, 4) + 2 * window(threads, elem_size as u32)
}

/// Column scan by vectors: the tile index, each warp's totals per column of the widest strip (32
/// threads of one 16-byte vector), and the strip's column prefixes.
pub const fn columns_vec(s: &Shapes, elem_size: usize) -> u32 {
    let warps = s.columns_vec.threads / 32;
    let strip = 32 * VECTOR_BYTES as u32 / elem_size as u32;
    window(1, 4) + window(warps * strip, elem_size as u32) + window(strip, elem_size as u32)
}

/// Column tiles in shared memory, `rows` rows a thread group: the tile index, the bulk copy's
/// barrier, each warp's totals per column of the widest strip, the strip's column prefixes, and
/// the tile's rows.
pub const fn columns_bulk(s: &Shapes, elem_size: usize, rows: u32) -> u32 {
    let threads = s.columns_bulk_threads;
    let strip = 32 * VECTOR_BYTES as u32 / elem_size as u32;
    window(1, 4)
        + window(1, 8)
        + window(threads / 32 * strip, elem_size as u32)
        + window(strip, elem_size as u32)
        + window(threads * rows, VECTOR_BYTES as u32)
}

/// Radix sort pass: the tile index, per-warp digit counts, per-digit output shifts, two sets of
/// per-warp digit totals, the match-word ranking's two windows of one word per warp and digit
/// (unless the pass ranks by ballots), the staged keys, and with values the tile's u32 values
/// twice: as they lie in the input, and staged with their keys.
pub const fn sort_pass(s: &Shapes, key_size: usize, values: bool) -> u32 {
    let tile = s.sort_pass(key_size, values);
    let digits = 1 << RADIX_BITS;
    let match_words = if sort_by_ballot(s, key_size, values) { 0 } else { 2 * tile.threads / 32 * digits };
    window(1, 4)
        + window(tile.threads / 32 * digits, 4)
        + window(digits, 4)
        + 2 * window(digits / 32, 4)
        + window(match_words, 4)
        + window(tile.tile(), key_size as u32)
        + 2 * window(if values { tile.tile() } else { 0 }, 4)
}

/// Whether a sort pass ranks equal digits by ballots rather than match words.
pub const fn sort_by_ballot(s: &Shapes, key_size: usize, values: bool) -> bool {
    values || s.sort_ballot.at(key_size)
}

/// Radix sort digit counting: counters per pass and digit, one for each lane for 4-byte keys and
/// one for each pair of lanes `l` and `l + 16` for 8-byte keys (twice the passes), so that
/// either way they fill 128 KB.
pub const fn sort_count_parts(key_size: usize) -> u32 {
    if key_size > 4 {
        16
    } else {
        32
    }
}

/// Radix sort digit counting: every pass's 256 counters of 32 bits for each of
/// [`sort_count_parts`].
pub const fn sort_counts(key_size: usize) -> u32 {
    let passes = key_size as u32 * 8 / RADIX_BITS;
    window((passes << RADIX_BITS) * sort_count_parts(key_size), 4)
}

/// Row scan: two sets of per-warp totals.
pub const fn rows(s: &Shapes, elem_size: usize) -> u32 {
    window(2 * s.rows.at(elem_size).threads / 32, elem_size as u32)
}

/// Short-row scan: two sets of per-warp (head, value) totals.
pub const fn short_rows(s: &Shapes, elem_size: usize) -> u32 {
    window(2 * s.rows.at(elem_size).threads / 32, seg_pair_bytes(elem_size))
}

/// Hierarchical tile scan: the transposing tile buffer, then the block algorithm's scratch.
pub const fn tile_scan(algo: BlockAlgo, threads: u32, items: u32, elem_size: u32) -> u32 {
    window(blocked_buffer_elems(threads * items), elem_size) + window(algo.smem_elems(threads), elem_size)
}

/// Hierarchical tile reduction: like a warp-shuffle tile scan.
pub const fn tile_reduce(threads: u32, items: u32, elem_size: u32) -> u32 {
    tile_scan(BlockAlgo::WarpShuffle, threads, items, elem_size)
}

/// Traced one-block scan of `m` elements.
pub const fn trace(algo: BlockAlgo, m: u32, elem_size: u32) -> u32 {
    window(algo.smem_elems(m), elem_size)
}

/// Partition counting and the histogram's counts: one counter per digit.
pub const fn partition_count(digits: u32) -> u32 {
    window(digits, 4)
}

/// Partition scatter: one counter per warp and digit.
pub const fn partition_scatter(s: &Shapes, digits: u32) -> u32 {
    window((s.partition.threads / 32) * digits, 4)
}
