//! The table for compute capability 9.0 (H100, H200), measured on an H200. Each line says why;
//! the figures behind it are in docs/decisions.md.

use super::{BySize, Choices, Pipeline, Rule, Shapes, Split, Tile, Tuning};
use crate::element::ElemType::{self, *};
use crate::kernel::Family::*;
use crate::kernel::{ARITHMETIC_OPS, WIDE_TYPES};
use crate::op::Op::{self, *};
use crate::widening::Source;

const MIB: u64 = 1 << 20;
const ANY: &[Op] = &Op::ALL;
const ARITH: &[Op] = &ARITHMETIC_OPS;
const WIDE: &[ElemType] = &WIDE_TYPES;
const FOUR_BYTE: &[ElemType] = &[U32, I32, F32];
const EIGHT_BYTE: &[ElemType] = &[U64, I64, F64];

const fn t(threads: u32, items: u32) -> Tile {
    Tile::new(threads, items)
}

pub const SM90: Tuning = Tuning {
    arch: 90,
    shapes: Shapes {
        // The look-back chain limits these tiles, so they are as large as registers allow while
        // two or more blocks share an SM; 1- and 2-byte elements stay packed, as many bytes a tile.
        single_pass: BySize([t(256, 128), t(256, 64), t(256, 32), t(256, 16), t(256, 4)]),
        // Shared memory holds 8 pairs of f64 a thread where registers held 4.
        staged: BySize([t(256, 128), t(256, 64), t(256, 32), t(256, 16), t(256, 8)]),
        // The compaction holds 1- and 2-byte elements one per register.
        compact: BySize([t(256, 64), t(384, 32), t(256, 32), t(256, 16), t(256, 4)]),
        hierarchical: t(256, 8),
        naive_threads: 256,
        helper_threads: 256,
        partition: t(256, 8),
        // 384 threads spread each tile's fixed digit work over more keys. 4-byte keys take 21, with
        // values the most without spills (22 spills; 24 leaves one block an SM). 8-byte keys alone
        // stage 12, three blocks an SM without spilling f64's; with values 16 (8 bytes spilled;
        // 14 was slower, 18 spills more and was slower). Figures in docs/decisions.md.
        sort: BySize::split(t(384, 21), t(384, 12)),
        sort_values: BySize::split(t(384, 21), t(384, 16)),
        // One block of 1024 per SM: its counters fill 128 KB of shared memory.
        sort_counts: BySize::split(t(1024, 16), t(1024, 8)),
        // Ballots beat match words except for 4-byte keys alone (fewer registers there).
        sort_ballot: BySize::split(false, true),
        sort_lookback_window: 4,
        // Half the single-pass tile: nothing waits behind a row, and more blocks fit an SM.
        rows: BySize([t(256, 64), t(256, 32), t(256, 16), t(256, 8), t(256, 2)]),
        // Taller tiles mean fewer look-backs per element.
        columns: BySize::split(t(256, 64), t(256, 16)),
        column_groups: 32,
        columns_vec: t(256, 16),
        columns_bulk_threads: 256,
        column_vectors: t(256, 8),
        // 8-byte accesses ran faster than 16-byte ones for 4-byte columns.
        column_vector_bytes: BySize([8, 8, 8, 8, 16]),
        // 16 KB tiles, 6 in flight: two blocks an SM by shared memory.
        scan_pipeline: Pipeline::striped_all(6),
        // More scanning warps where scanning, not the look-back, was the bottleneck.
        scan_splits: &[
            Split { ty: U8, ops: &[Add], split: 4 },
            Split { ty: U8, ops: &[Min, Max], split: 2 },
            Split { ty: U16, ops: ANY, split: 2 },
        ],
        // Blocked runs of whole rows, stored by one bulk copy; odd runs for 16-byte rows avoid
        // bank conflicts.
        columns_pipeline: Pipeline::blocked_all(10, 1, 5),
        columns16_pipeline: Pipeline::blocked_all(11, 1, 5),
        // f64 pairs (16 bytes) take blocked shares and two scanning warps; f32 pairs the scan's.
        recurrence_pipeline: Pipeline::striped_all(6).with(16, Pipeline::blocked(16, 10, 2, 5)),
        compact_pipeline: Pipeline::blocked_all(10, 2, 5),
        // Values and keys both staged: 20 KB of 4-byte pairs a stage, five stages, two blocks an SM.
        segmented_pipeline: Pipeline::blocked_all(5, 1, 5),
        // Into 4 bytes, narrow tiles as large as the narrow sums' own (16 KB of u8, four times the
        // u32 sum's elements), so each tile's fixed work (claim, look-back, barriers) covers more
        // elements; into 8 bytes the wide sum's tiles (u8 into u64 at four times was 4.5% slower).
        widening_scale: BySize([1, 1, 4, 1, 1]),
        // Deeper look-back windows only put more polls in flight on the same chain.
        lookback_depth: 1,
        lookback_windows: 8,
        // A quarter of the resident blocks ahead; a whole wave ahead evicts tiles before use.
        prefetch_tiles: 128,
        compact_prefetch_tiles: 128,
    },
    choices: Choices {
        // 4- and 8-byte sums were faster pipelined from 4 and 8 MiB (2^20 elements; 8-byte 2^22
        // 0.91x -> 1.05x CUB 3.5) and slower at 2^18 elements of 8 bytes (H100). u8's pipelined
        // kernel is bound by its arithmetic and wins only from 2^28.
        pipelined_min_bytes: BySize([256 * MIB, 64 * MIB, 4 * MIB, 8 * MIB, 64 * MIB]),
        never_pipelined: &[(U8, Mul)],
        // The pipelined fixed order: f32 and f64 sums at 91-96% of a copy from 2^26, where the
        // tiles kernel's order reaches 78-88% (H100).
        pipelined_fixed_order: true,
        // Staging frees registers for 8-byte and wider elements, not for narrower ones.
        staged: BySize([false, false, false, true, true]),
        recurrence_pipelined_min_bytes: 64 * MIB,
        compact_pipelined_min_bytes: 64 * MIB,
        segmented_pipelined_min_bytes: 64 * MIB,
        pipeline_stages: None,
        pipeline_blocks_per_sm: None,
        // Sleeping between polls measured no faster than polling at once.
        lookback_backoff_ns: 0,
        // Narrow matrices need more look-back chains, wide ones longer contiguous runs.
        column_strips: &[(512, 16), (8192, 32), (u64::MAX, 64)],
        column_strip: None,
        vector_column_tiles: BySize([false, false, true, true, true]),
        // Few strips mean few chains, each long: reading four tiles a round shortens them.
        window4_max_strips: BySize([4, 4, 4, 1, 1]),
        column_window: None,
        bulk_max_row_vectors: 32,
        // The tallest tiles (110,592 bytes) that still leave two blocks to an SM.
        bulk_rows: 27,
        bulk_ahead: 66,
        columns_pipelined_min_bytes: 64 * MIB,
        columns16_pipelined_min_bytes: 4 * MIB,
        // With fewer rows SMs idle, and one chain of tiles per row is faster.
        row_kernel_min_rows: 256,
        row_kernel_max_blocks: 1 << 20,
        long_rows_pipelined_min_tiles: 16,
    },
    // Each bound leaves ptxas enough registers without local memory, except `spills` below.
    launch_bounds: &[
        Rule::new(Compact, &[U32, I32, F32, U64, I64, F64], ANY, 4),
        Rule::new(Compact, &[U16], ANY, 2),
        Rule::new(SortPass, EIGHT_BYTE, ANY, 3),
        Rule::new(SortPassValues, WIDE, ANY, 2),
        Rule::new(SortCounts, WIDE, ANY, 1),
        Rule::new(BatchedShortRows, FOUR_BYTE, ARITH, 4),
        Rule::new(BatchedShortRows, EIGHT_BYTE, ARITH, 3),
        Rule::new(Segmented, FOUR_BYTE, ARITH, 3),
        Rule::new(SinglePass, &[U8], &[Add, Mul, And, Or, Xor], 4),
        Rule::new(SinglePass, &[F32], ARITH, 4),
        Rule::new(SinglePassDet, &[F32], &[Add, Mul], 4),
        Rule::new(BatchedLongRows, FOUR_BYTE, &[Add], 4),
        Rule::new(RecurrenceStaged, &[F64], ANY, 4),
        Rule::new(SinglePassPipelined, &[U32, I32], ANY, 3),
        Rule::new(SinglePassPipelined, &[F32], ARITH, 3),
        Rule::new(SinglePassPipelinedDet, &[F32], &[Add, Mul], 3),
        // Shared memory fits two blocks of u8's pipelines.
        Rule::new(SinglePassPipelined, &[U8], ANY, 2),
        Rule::new(BatchedRowsPipelined, FOUR_BYTE, ARITH, 3),
        Rule::new(BatchedColumnsPipelined, WIDE, ARITH, 2),
        Rule::new(BatchedColumnsPipelined16, WIDE, ARITH, 2),
        // Two-byte sources into four bytes hold twice the wide sum's tile (105 registers unbounded).
        Rule::new(WideningPipelined(Source::U16), &[U32], &[Add], 2),
        Rule::new(WideningPipelined(Source::I16), &[U32], &[Add], 2),
        Rule::new(WideningPipelined(Source::F16), &[F32], &[Add], 2),
        Rule::new(WideningPipelined(Source::Bf16), &[F32], &[Add], 2),
    ],
    spills: &[
        Rule::new(SinglePass, &[F32], &[Add, Mul], 16),
        Rule::new(SinglePass, &[F32], &[Min, Max], 24),
        Rule::new(SinglePassDet, &[F32], &[Add, Mul], 8),
        Rule::new(SinglePass, &[U8], &[Add, Mul], 8),
        Rule::new(BatchedLongRows, &[U32, I32], &[Add], 8),
        Rule::new(BatchedLongRows, &[F32], &[Add], 16),
        Rule::new(RecurrenceStaged, &[F64], ANY, 16),
        Rule::new(SortPass, EIGHT_BYTE, ANY, 32),
        Rule::new(SortPassValues, EIGHT_BYTE, ANY, 8),
    ],
    // ptxas does better on these without bounds (no spills at 46-48 registers).
    unbounded_fits: &[Rule::new(SortPass, &[U32, I32, F32], ANY, 3)],
};
