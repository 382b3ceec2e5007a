//! Dynamic shared memory of each kernel. Kernels carve their shared memory into windows, one
//! after another, each rounded up to 16 bytes; these functions give the host the same totals.
//! (A kernel traps when launched with less than it carves, so a mismatch cannot go unnoticed.)

use crate::block::{blocked_buffer_elems, BlockAlgo};

/// Bytes one window of `elems` elements of `elem_size` bytes takes.
pub const fn smem_window(elems: u32, elem_size: u32) -> u32 {
    (elems * elem_size).next_multiple_of(16)
}

/// Single-pass kernel: the tile index, warp totals, warp prefixes, and the windows the
/// deterministic look-back holds (the ones it passed and the one it is in).
pub const fn single_pass_smem(arch: u32, elem_size: usize) -> u32 {
    let threads = crate::tuning::single_pass(arch, elem_size).threads;
    let windows = crate::tuning::lookback_fixed_windows(arch, elem_size) + 1;
    let held = 32 * crate::tuning::lookback_depth(arch, elem_size) * windows;
    smem_window(1, 4) + 2 * smem_window(threads / 32, elem_size as u32) + smem_window(held as u32, elem_size as u32)
}

/// Staged single-pass kernel: the single-pass windows, then the tile itself.
pub const fn single_pass_staged_smem(arch: u32, elem_size: usize) -> u32 {
    let tile = crate::tuning::single_pass_staged_shape(arch, elem_size).tile();
    single_pass_smem(arch, elem_size) + smem_window(tile, elem_size as u32)
}

/// Pipelined kernel of shape `p` over elements of `elem_size` bytes whose tiles publish
/// aggregates of `aggregate_size` bytes (the element for a scan, a `u64` count for compaction):
/// four barrier words per stage, each stage's tile index, the totals of the scanning warps'
/// shares, the tile's aggregate and its exclusive prefix, then the stages' tiles.
pub const fn single_pass_pipelined_smem(p: crate::tuning::Pipeline, elem_size: usize, aggregate_size: usize) -> u32 {
    let (e, a) = (elem_size as u32, aggregate_size as u32);
    smem_window(4 * p.stages, 8)
        + smem_window(p.stages, 4)
        + smem_window(p.stages * p.warps * p.split, a)
        + 2 * smem_window(p.stages, a)
        + p.stages * smem_window(p.tile(), e)
}

/// Compaction: the tile index, per-warp counts (u32), the tile's output offset (u64) and the
/// tile's kept elements, staged in order.
pub const fn compact_smem(arch: u32, elem_size: usize) -> u32 {
    let shape = crate::tuning::compact(arch, elem_size);
    smem_window(1, 4)
        + smem_window(shape.threads / 32, 4)
        + smem_window(1, 8)
        + smem_window(shape.tile(), elem_size as u32)
}

/// Bytes of a segmented scan's (head, value) pair: twice the larger of the element and 4 bytes.
const fn seg_pair_bytes(elem_size: usize) -> u32 {
    2 * if elem_size > 4 { elem_size as u32 } else { 4 }
}

/// Segmented scan: the tile index, then per-warp (head, value) totals and prefixes.
pub const fn segmented_smem(arch: u32, elem_size: usize) -> u32 {
    let warps = crate::tuning::single_pass(arch, elem_size).threads / 32;
    smem_window(1, 4) + 2 * smem_window(warps, seg_pair_bytes(elem_size))
}

/// Column scan: the tile index, then per-thread totals and per-column prefixes.
pub const fn columns_smem(arch: u32, elem_size: usize) -> u32 {
    let threads = crate::tuning::columns(arch, elem_size).threads;
    smem_window(1, 4) + 2 * smem_window(threads, elem_size as u32)
}

/// Column scan by vectors: the tile index, each warp's totals per column of the widest strip (32
/// threads of one 16-byte vector), and the strip's column prefixes.
pub const fn columns_vec_smem(arch: u32, elem_size: usize) -> u32 {
    let warps = crate::tuning::columns_vec(arch, elem_size).threads / 32;
    let strip = 32 * crate::tuning::VECTOR_BYTES as u32 / elem_size as u32;
    smem_window(1, 4) + smem_window(warps * strip, elem_size as u32) + smem_window(strip, elem_size as u32)
}

/// Column tiles in shared memory, `items` rows a thread group: the tile index, the bulk copy's
/// barrier, each warp's totals per column of the widest strip, the strip's column prefixes, and
/// the tile's rows.
pub const fn columns_bulk_smem(arch: u32, elem_size: usize, items: u32) -> u32 {
    let shape = crate::tuning::columns_bulk_at(arch, elem_size, items);
    let strip = 32 * crate::tuning::VECTOR_BYTES as u32 / elem_size as u32;
    smem_window(1, 4)
        + smem_window(1, 8)
        + smem_window(shape.threads / 32 * strip, elem_size as u32)
        + smem_window(strip, elem_size as u32)
        + smem_window(shape.threads * shape.items, crate::tuning::VECTOR_BYTES as u32)
}

/// Radix sort pass: the tile index, per-warp digit counts, per-digit output shifts, two sets of
/// per-warp digit totals, the match-word ranking's two windows of one word per warp and digit
/// (unless the pass ranks by ballots), and the staged keys and (with values) u32 values.
pub const fn sort_pass_smem(arch: u32, key_size: usize, values: bool) -> u32 {
    let shape = crate::tuning::sort(arch, key_size);
    let digits = 1 << crate::partition::RADIX_BITS;
    smem_window(1, 4)
        + smem_window(shape.threads / 32 * digits, 4)
        + smem_window(digits, 4)
        + 2 * smem_window(digits / 32, 4)
        + smem_window(
            if crate::tuning::sort_rank_by_ballot(key_size, values) { 0 } else { 2 * shape.threads / 32 * digits },
            4,
        )
        + smem_window(shape.tile(), key_size as u32)
        + smem_window(if values { shape.tile() } else { 0 }, 4)
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
pub const fn sort_counts_smem(key_size: usize) -> u32 {
    let passes = key_size as u32 * 8 / crate::partition::RADIX_BITS;
    smem_window((passes << crate::partition::RADIX_BITS) * sort_count_parts(key_size), 4)
}

/// Row scan: two sets of per-warp totals.
pub const fn rows_smem(arch: u32, elem_size: usize) -> u32 {
    smem_window(2 * crate::tuning::rows(arch, elem_size).threads / 32, elem_size as u32)
}

/// Short-row scan: two sets of per-warp (head, value) totals.
pub const fn short_rows_smem(arch: u32, elem_size: usize) -> u32 {
    smem_window(2 * crate::tuning::short_rows(arch, elem_size).threads / 32, seg_pair_bytes(elem_size))
}

/// Hierarchical tile scan: the transposing tile buffer, then the block algorithm's scratch.
pub const fn tile_scan_smem(algo: BlockAlgo, threads: u32, items: u32, elem_size: u32) -> u32 {
    smem_window(blocked_buffer_elems(threads * items), elem_size) + smem_window(algo.smem_elems(threads), elem_size)
}

/// Hierarchical tile reduction: like a warp-shuffle tile scan.
pub const fn tile_reduce_smem(threads: u32, items: u32, elem_size: u32) -> u32 {
    tile_scan_smem(BlockAlgo::WarpShuffle, threads, items, elem_size)
}

/// Traced one-block scan of `m` elements.
pub const fn trace_smem(algo: BlockAlgo, m: u32, elem_size: u32) -> u32 {
    smem_window(algo.smem_elems(m), elem_size)
}
