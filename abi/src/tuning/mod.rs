//! Tuning as data: the shapes the kernels are compiled with and the choices the host makes
//! between kernels, one `const` [`Tuning`] per architecture ([`sm90::SM90`]).
//!
//! [`Shapes`] are compile-time constants of the kernels; the host plans grids, shared memory and
//! temporary storage from the same values, so the two cannot disagree. [`Choices`] and the launch
//! bounds are the host's alone: a caller may pass other values (`Gpu::with_tuning`) without
//! rebuilding. Why each value is what it is, with its measurement, is in docs/decisions.md.

pub mod sm90;

use crate::element::ElemType;
use crate::kernel::{Family, Kernel};
use crate::op::Op;
pub use crate::shape::{vector_elems, BySize, Pipeline, Tile, VECTOR_BYTES};

/// Scanning warps per reducing warp of the pipelined scan for `ty` with any of `ops`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub ty: ElemType,
    pub ops: &'static [Op],
    pub split: u32,
}

/// Tile shapes compiled into the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shapes {
    /// Single-pass tiles in registers (also the segmented scan and the batched long rows).
    pub single_pass: BySize<Tile>,
    /// Single-pass tiles staged in shared memory.
    pub staged: BySize<Tile>,
    pub compact: BySize<Tile>,
    pub hierarchical: Tile,
    pub naive_threads: u32,
    /// Threads of the small helper kernels (CSR, segment heads).
    pub helper_threads: u32,
    pub partition: Tile,
    pub sort: BySize<Tile>,
    pub sort_counts: BySize<Tile>,
    /// Keys-only sort passes rank equal digits by ballots (else by match words); with values
    /// they always do.
    pub sort_ballot: BySize<bool>,
    pub sort_lookback_window: usize,
    /// The batched row kernels (one block per row; short rows).
    pub rows: BySize<Tile>,
    /// Scalar column tiles: items are rows per thread.
    pub columns: BySize<Tile>,
    /// Most thread groups in a scalar column tile.
    pub column_groups: u32,
    pub columns_vec: Tile,
    pub columns_bulk_threads: u32,
    /// The column-vector kernel: threads, and rows each thread has in flight.
    pub column_vectors: Tile,
    /// Bytes of adjacent columns one column-vector thread owns.
    pub column_vector_bytes: BySize<usize>,
    pub scan_pipeline: BySize<Pipeline>,
    pub scan_splits: &'static [Split],
    /// Pipelined scans down the columns of 32-byte and 16-byte rows.
    pub columns_pipeline: BySize<Pipeline>,
    pub columns16_pipeline: BySize<Pipeline>,
    pub recurrence_pipeline: BySize<Pipeline>,
    pub compact_pipeline: BySize<Pipeline>,
    /// Tiles each look-back lane inspects per round.
    pub lookback_depth: usize,
    /// Windows the fixed-order look-back holds before it waits.
    pub lookback_windows: usize,
    /// Tiles ahead a single-pass block brings into L2 (register and staged kernels).
    pub prefetch_tiles: u32,
    pub compact_prefetch_tiles: u32,
}

impl Shapes {
    /// The pipelined scan's shape for `op` over `ty`.
    pub const fn scan_pipeline_of(&self, ty: ElemType, op: Op) -> Pipeline {
        let base = self.scan_pipeline.at(ty.size());
        let mut i = 0;
        while i < self.scan_splits.len() {
            let s = self.scan_splits[i];
            let mut j = 0;
            while j < s.ops.len() {
                if s.ty as u8 == ty as u8 && s.ops[j] as u8 == op as u8 {
                    return base.with_split(s.split);
                }
                j += 1;
            }
            i += 1;
        }
        base
    }
}

/// Choices the host makes between kernels and launch settings; none is compiled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choices {
    /// The pipelined single-pass scan from this many bytes of input on.
    pub pipelined_min_bytes: BySize<u64>,
    /// (type, operator) pairs that keep the one-tile-per-block scan at every size.
    pub never_pipelined: &'static [(ElemType, Op)],
    /// Whether the one-tile-per-block scan stages its tile in shared memory.
    pub staged: BySize<bool>,
    pub recurrence_pipelined_min_bytes: u64,
    /// The pipelined compaction (4- and 8-byte elements kept by a comparison) from this size on.
    pub compact_pipelined_min_bytes: u64,
    /// Tiles in flight per pipelined block, for every pipeline (`None`: each pipeline's own).
    pub pipeline_stages: Option<u32>,
    /// Blocks per SM of the pipelined kernels (`None`: as many as fit).
    pub pipeline_blocks_per_sm: Option<u32>,
    /// Nanoseconds the look-back sleeps between polls of an unpublished tile.
    pub lookback_backoff_ns: u32,
    /// Scalar column strips: (most columns, strip width), the first row that holds the matrix.
    pub column_strips: &'static [(u64, u32)],
    /// A fixed strip width instead of [`Self::column_strips`] (8 to 256 columns).
    pub column_strip: Option<u32>,
    /// Whether rows on 16-byte boundaries take the vector column tiles.
    pub vector_column_tiles: BySize<bool>,
    /// Vector column tiles look back four tiles a round up to this many strips, else one.
    pub window4_max_strips: BySize<u64>,
    /// A fixed look-back window (1 or 4) for the vector column tiles.
    pub column_window: Option<u32>,
    /// Widest row, in 16-byte vectors, the column tiles in shared memory take.
    pub bulk_max_row_vectors: u64,
    /// Rows per thread group of the column tiles in shared memory.
    pub bulk_rows: u32,
    /// Tiles after its own each block of those tiles brings into L2.
    pub bulk_ahead: u32,
    /// Matrices of 32-byte (16-byte) rows scan their columns as one pipelined scan of the rows
    /// from this size on.
    pub columns_pipelined_min_bytes: u64,
    pub columns16_pipelined_min_bytes: u64,
    /// Fewest rows the one-block-per-row kernel takes; fewer go to chains of tiles per row.
    pub row_kernel_min_rows: u64,
    /// Most blocks of the row kernels; beyond that blocks take several rows each.
    pub row_kernel_max_blocks: u64,
    /// Few long rows run as one pipelined launch when each row has this many tiles.
    pub long_rows_pipelined_min_tiles: u64,
}

/// A value for the kernels of `family` built for `types` and `ops` (`ops` is ignored for
/// families not named per operator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub family: Family,
    pub types: &'static [ElemType],
    pub ops: &'static [Op],
    pub value: u32,
}

impl Rule {
    pub const fn new(family: Family, types: &'static [ElemType], ops: &'static [Op], value: u32) -> Rule {
        Rule { family, types, ops, value }
    }

    /// Whether this rule names `kernel`.
    pub fn covers(&self, kernel: Kernel) -> bool {
        self.family == kernel.family
            && self.types.contains(&kernel.ty)
            && kernel.op.is_none_or(|op| self.ops.contains(&op))
    }
}

/// Everything tuned for one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// `sm_XY` as `XY`.
    pub arch: u32,
    pub shapes: Shapes,
    pub choices: Choices,
    /// Launch bounds, in blocks per SM (`.maxntid`, `.minnctapersm`): ptxas then caps registers
    /// for that occupancy. Added to each kernel's PTX when its module is loaded.
    pub launch_bounds: &'static [Rule],
    /// Bytes of local memory (stack or spills) ptxas may report for kernels whose launch bounds
    /// cost some and were measured faster anyway; every other kernel must need none.
    pub spills: &'static [Rule],
    /// Blocks per SM that kernels left without launch bounds must still fit.
    pub unbounded_fits: &'static [Rule],
}

/// The tables, oldest architecture first.
pub const TABLES: [&Tuning; 1] = [&sm90::SM90];

/// The table for `arch`: the newest one not newer than it, or the oldest one.
pub const fn for_arch(arch: u32) -> &'static Tuning {
    let mut chosen = TABLES[0];
    let mut i = 1;
    while i < TABLES.len() {
        if TABLES[i].arch <= arch {
            chosen = TABLES[i];
        }
        i += 1;
    }
    chosen
}

/// The architecture the kernels are built for unless told otherwise.
pub const DEFAULT_ARCH: u32 = 90;

/// A tuning value outside its valid range. `key` is the name `--tune` knows it by; the value and
/// the bounds are whole numbers (flags as 0 or 1, absent choices are never out of range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TuningError {
    pub key: &'static str,
    pub value: u64,
    pub min: u64,
    pub max: u64,
}

impl TuningError {
    pub const fn new(key: &'static str, value: u64, min: u64, max: u64) -> TuningError {
        TuningError { key, value, min, max }
    }
}

impl core::fmt::Display for TuningError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "tuning value {} = {} is out of range: it must be from {} to {}", self.key, self.value, self.min, self.max)
    }
}

impl core::error::Error for TuningError {}
