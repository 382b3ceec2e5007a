//! Kernel names. Every kernel is `<strategy>_<type>_<op>`; the host loads kernels in groups named
//! `<strategy>_<type>` (everything before the last `_`), one small module per group.

pub const NAIVE: &str = "naive";
pub const SINGLE_PASS: &str = "single_pass";
/// Single-pass with the tile staged in shared memory (4- and 8-byte elements).
pub const SINGLE_PASS_STAGED: &str = "single_pass_staged";
/// Single-pass by a persistent pipeline of warp roles.
pub const SINGLE_PASS_PIPELINED: &str = "single_pass_pipe";
/// The same with four scanning warps per reducing warp (`tuning::pipeline_split4`, for measuring).
pub const SINGLE_PASS_PIPELINED_SPLIT4: &str = "single_pass_pipesplit4";
/// Single-pass with the fixed-order look-back, for order-sensitive (type, operator) pairs.
pub const SINGLE_PASS_DET: &str = "single_pass_det";
/// Hierarchical tile scan; followed by `_<block algorithm token>`.
pub const HIER_TILE: &str = "hier";
pub const HIER_REDUCE: &str = "hier_reduce";
pub const HIER_ADD: &str = "hier_add";
/// Stream compaction: `compact_<type>` (no operator; one group for all types).
pub const COMPACT: &str = "compact";
/// Compaction in the pipelined kernel's roles (4- and 8-byte types, large inputs).
pub const COMPACT_PIPELINED: &str = "compact_pipe";
/// Partition pass: `partition_count_<type>`, `partition_scatter_<type>`.
pub const PARTITION_COUNT: &str = "partition_count";
pub const PARTITION_SCATTER: &str = "partition_scatter";
/// Radix sort in one sweep per pass: `sort_counts_<type>` (every pass's digit counts in one
/// read), `sort_pass_<type>` (keys only) and `sort_pass_values_<type>` (keys with u32 values).
pub const SORT_COUNTS: &str = "sort_counts";
pub const SORT_PASS: &str = "sort_pass";
pub const SORT_PASS_VALUES: &str = "sort_pass_values";
/// COO/CSR conversions: `csr_count_u32`, `csr_heads_u32`.
pub const CSR_COUNT: &str = "csr_count";
pub const CSR_HEADS: &str = "csr_heads";
/// Segmented scan: `segmented_<type>_<op>` (add, mul, min, max on 32- and 64-bit types).
pub const SEGMENTED: &str = "segmented";
/// Linear recurrence over f32 (single-pass scan of packed affine maps).
pub const RECURRENCE_F32: &str = "recurrence_f32";
/// Linear recurrence over f64 (single-pass scan of `[a, b]` pairs).
pub const RECURRENCE_F64: &str = "recurrence_f64";
/// The `u32` add single-pass scan recording every tile's way through it (`scan_abi::timeline`).
pub const SINGLE_PASS_TIMELINE: &str = "single_pass_timeline_u32_add";
/// The recurrences with the tile staged in shared memory.
pub const RECURRENCE_STAGED_F32: &str = "recurrence_staged_f32";
pub const RECURRENCE_STAGED_F64: &str = "recurrence_staged_f64";
/// The recurrences as pipelined kernels (`gpu::kernels::pipelined`).
pub const RECURRENCE_PIPELINED_F32: &str = "recurrence_pipe_f32";
pub const RECURRENCE_PIPELINED_F64: &str = "recurrence_pipe_f64";
/// The f64 one with four scanning warps per reducing warp (`tuning::pipeline_split4`, for
/// measuring).
pub const RECURRENCE_PIPELINED_SPLIT4_F64: &str = "recurrence_pipesplit4_f64";
/// Batched scans of a row-major matrix: `batched_columns_<type>_<op>` down the columns,
/// `batched_rows_<type>_<op>` along many long rows, `batched_long_rows_<type>_<op>` along few,
/// `batched_short_rows_<type>_<op>` along rows of at most one tile (add, mul, min, max on 32- and
/// 64-bit types), and `batched_column_vectors_<type>_<op>` down the columns of matrices with few
/// rows.
pub const BATCHED_COLUMNS: &str = "batched_columns";
/// `batched_columns_pipe_<type>_<op>`: down the columns of matrices whose rows are 32 bytes, as
/// one pipelined scan of the rows.
pub const BATCHED_COLUMNS_PIPELINED: &str = "batched_columns_pipe";
/// `batched_columns_pipe16_<type>_<op>`: [`BATCHED_COLUMNS_PIPELINED`] for rows of 16 bytes.
pub const BATCHED_COLUMNS_PIPELINED16: &str = "batched_columns_pipe16";
/// `batched_columns_vec_<type>_<op>`: down the columns of matrices whose rows start on 16-byte
/// boundaries, each thread owning a 16-byte vector of adjacent columns.
pub const BATCHED_COLUMNS_VEC: &str = "batched_columns_vec";
/// `batched_columns_bulk_<type>_<op>`: down the columns of matrices whose row is one strip of at
/// most 16 16-byte vectors (`tuning::columns_bulk_rows`), each tile in shared memory by bulk
/// copies, each look-back thread reading 4 tiles of its column a round.
pub const BATCHED_COLUMNS_BULK: &str = "batched_columns_bulk";
/// `batched_columns_vecw4_<type>_<op>`: [`BATCHED_COLUMNS_VEC`] with each look-back thread reading
/// 4 tiles of its column a round, for matrices of few strips (`tuning::column_lookback_window`).
pub const BATCHED_COLUMNS_VEC_WINDOW4: &str = "batched_columns_vecw4";
/// `batched_rows_pipe_<type>_<op>`: along few long rows, one launch of the pipelined scan with
/// each row a chain of its own tiles.
pub const BATCHED_ROWS_PIPELINED: &str = "batched_rows_pipe";
pub const BATCHED_COLUMN_VECTORS: &str = "batched_column_vectors";
pub const BATCHED_ROWS: &str = "batched_rows";
pub const BATCHED_SHORT_ROWS: &str = "batched_short_rows";
pub const BATCHED_LONG_ROWS: &str = "batched_long_rows";
/// One-block traced scan; followed by `_<block algorithm token>`.
pub const TRACE: &str = "trace";

/// The group a kernel belongs to: its name without the trailing `_<op>`.
pub fn group_of(kernel: &str) -> &str {
    match kernel.rfind('_') {
        Some(i) => &kernel[..i],
        None => kernel,
    }
}
