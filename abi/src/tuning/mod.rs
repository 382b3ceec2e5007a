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
    /// Keys-only radix sort passes.
    pub sort: BySize<Tile>,
    /// Radix sort passes with u32 values (and the argsort's).
    pub sort_values: BySize<Tile>,
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
    /// The pipelined segmented scan (blocked shares; the segments staged beside the values).
    pub segmented_pipeline: BySize<Pipeline>,
    /// How many times the wide sum's tile elements a pipelined widening sum's tiles may hold, by
    /// the wide element's size ([`Shapes::widening_pipeline_of`]).
    pub widening_scale: BySize<usize>,
    /// Tiles each look-back lane inspects per round.
    pub lookback_depth: usize,
    /// Windows the fixed-order look-back holds before it waits.
    pub lookback_windows: usize,
    /// Tiles ahead a single-pass block brings into L2 (register and staged kernels).
    pub prefetch_tiles: u32,
    pub compact_prefetch_tiles: u32,
}

impl Shapes {
    /// The tile of a radix sort pass over keys of `key_size` bytes, with u32 values when `values`.
    pub const fn sort_pass(&self, key_size: usize, values: bool) -> Tile {
        if values {
            self.sort_values.at(key_size)
        } else {
            self.sort.at(key_size)
        }
    }

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

    /// The pipelined widening sum's shape from `src_size`-byte elements into `ty`: the wide sum's,
    /// its tiles holding up to `widening_scale` times its elements (no more bytes staged than the
    /// wide sum stages).
    pub const fn widening_pipeline_of(&self, src_size: usize, ty: ElemType) -> Pipeline {
        let p = self.scan_pipeline_of(ty, Op::Add);
        let (ratio, most) = ((ty.size() / src_size) as u32, self.widening_scale.at(ty.size()) as u32);
        let scale = if ratio < most { ratio } else { most };
        Pipeline { items: p.items * scale, ..p }
    }
}

/// Choices the host makes between kernels and launch settings; none is compiled in. Those with a
/// valid range have it in [`limits`], which [`Tuning::validate`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choices {
    /// The pipelined single-pass scan from this many bytes of input on.
    pub pipelined_min_bytes: BySize<u64>,
    /// (type, operator) pairs that keep the one-tile-per-block scan at every size.
    pub never_pipelined: &'static [(ElemType, Op)],
    /// Whether deterministic float sums and products take the pipelined kernel's fixed order
    /// where the pipelined scan is the default (else the tiles kernel's at every size; either
    /// can be asked for by its kernel).
    pub pipelined_fixed_order: bool,
    /// Whether the one-tile-per-block scan stages its tile in shared memory (off for 1- and
    /// 2-byte elements, which have no staged kernels; 16 bytes: the f64 recurrence's maps).
    pub staged: BySize<bool>,
    pub recurrence_pipelined_min_bytes: u64,
    /// The pipelined compaction (4- and 8-byte elements kept by a comparison) from this size on.
    pub compact_pipelined_min_bytes: u64,
    /// The pipelined segmented scan and scan by key from this many bytes of values on.
    pub segmented_pipelined_min_bytes: u64,
    /// Tiles in flight per pipelined block, for every pipeline (`None`: each pipeline's own).
    pub pipeline_stages: Option<u32>,
    /// Blocks per SM of the pipelined kernels (`None`: as many as fit).
    pub pipeline_blocks_per_sm: Option<u32>,
    /// Nanoseconds the look-back sleeps between polls of an unpublished tile.
    pub lookback_backoff_ns: u32,
    /// Scalar column strips: (most columns, strip width), the first row that holds the matrix;
    /// wider matrices take strips of the vector tiles' threads.
    pub column_strips: &'static [(u64, u32)],
    /// A fixed strip width instead of [`Self::column_strips`] ([`limits::COLUMN_STRIP`]). The
    /// vector column tiles take it where it is a power of two of 16-byte vectors, at most 32 of
    /// them, and their own width otherwise.
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

/// The valid values of one tuning choice: the one place [`Tuning::validate`], `--tune` and their
/// documentation take them from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The name `--tune` knows the value by; for a choice it does not set, the field's name (and
    /// the element type, for a value per element size).
    pub key: &'static str,
    pub min: u64,
    pub max: u64,
    /// Where only some values from `min` to `max` are valid, those; empty where every one is.
    pub only: &'static [u64],
}

impl Range {
    pub const fn new(key: &'static str, min: u64, max: u64) -> Range {
        Range { key, min, max, only: &[] }
    }

    /// Only the values `only`, in ascending order.
    pub const fn one_of(key: &'static str, only: &'static [u64]) -> Range {
        Range { key, min: only[0], max: only[only.len() - 1], only }
    }

    pub const fn contains(&self, value: u64) -> bool {
        if value < self.min || value > self.max {
            return false;
        }
        if self.only.is_empty() {
            return true;
        }
        let mut i = 0;
        while i < self.only.len() {
            if self.only[i] == value {
                return true;
            }
            i += 1;
        }
        false
    }

    /// `value`, or the error naming this range.
    pub const fn check(&self, value: u64) -> Result<u64, TuningError> {
        if self.contains(value) {
            Ok(value)
        } else {
            Err(TuningError { key: self.key, value, min: self.min, max: self.max, only: self.only })
        }
    }
}

/// The ranges of the choices that have one. Every other choice takes any value: the sizes from
/// which a kernel takes over (`*_min_bytes`, `long_rows_pipelined_min_tiles`,
/// `window4_max_strips`: 0 for always, the largest value for never), `never_pipelined`, and
/// `vector_column_tiles`.
pub mod limits {
    use super::Range;

    /// Tiles in flight per pipelined block. A launch whose stages do not fit the device's shared
    /// memory fails with an error.
    pub const PIPE_STAGES: Range = Range::new("pipe_stages", 1, 16);
    /// Pipelined blocks per SM: an SM holds at most 32 blocks.
    pub const PIPE_BLOCKS: Range = Range::new("pipe_blocks", 1, 32);
    /// Nanoseconds between look-back polls: `nanosleep` sleeps at most about a millisecond.
    pub const BACKOFF_NS: Range = Range::new("backoff_ns", 0, 1_000_000);
    /// A fixed strip width of the scalar column tiles: a quarter warp to the tile's 256 threads.
    pub const COLUMN_STRIP: Range = Range::new("column_strip", 8, 256);
    /// The strip widths of the `column_strips` table, as [`COLUMN_STRIP`].
    pub const COLUMN_STRIPS: Range = Range::new("column_strips", 8, 256);
    /// The vector column tiles are built with look-back windows of 1 and 4 tiles.
    pub const COLUMN_WINDOW: Range = Range::one_of("column_window", &[1, 4]);
    /// Rows per thread group of the column tiles in shared memory: 48 make a 196,608-byte tile.
    pub const BULK_ROWS: Range = Range::new("bulk_rows", 1, 48);
    /// Tiles ahead the column tiles in shared memory bring into L2 (0: none).
    pub const BULK_AHEAD: Range = Range::new("bulk_ahead", 0, 1 << 20);
    /// Widest row, in 16-byte vectors, of the column tiles in shared memory: they take 1 to 32.
    pub const BULK_MAX_VECTORS: Range = Range::new("bulk_max_vectors", 1, 32);
    /// Fewest rows of the one-block-per-row kernel.
    pub const ROW_KERNEL_MIN_ROWS: Range = Range::new("row_kernel_min_rows", 1, u64::MAX);
    /// Most blocks of the row kernels: a grid has at most 2^31 - 1.
    pub const ROW_KERNEL_MAX_BLOCKS: Range = Range::new("row_kernel_max_blocks", 1, i32::MAX as u64);
    /// Blocks per SM of a launch bound.
    pub const LAUNCH_BOUNDS: Range = Range::new("launch_bounds", 1, 32);
    /// The staged scans are built for elements of 4 bytes and more: `staged` must be off (0)
    /// for 1- and 2-byte elements.
    pub const STAGED_U8: Range = Range::new("staged.u8", 0, 0);
    pub const STAGED_U16: Range = Range::new("staged.u16", 0, 0);
}

impl Tuning {
    /// An error naming the first choice (or launch bound) outside its range in [`limits`]. The
    /// planners take every tuning this accepts, for any request, without panicking.
    pub fn validate(&self) -> Result<(), TuningError> {
        use limits::*;
        let c = &self.choices;
        if let Some(stages) = c.pipeline_stages {
            PIPE_STAGES.check(stages as u64)?;
        }
        if let Some(blocks) = c.pipeline_blocks_per_sm {
            PIPE_BLOCKS.check(blocks as u64)?;
        }
        BACKOFF_NS.check(c.lookback_backoff_ns as u64)?;
        for &(_, width) in c.column_strips {
            COLUMN_STRIPS.check(width as u64)?;
        }
        if let Some(width) = c.column_strip {
            COLUMN_STRIP.check(width as u64)?;
        }
        if let Some(window) = c.column_window {
            COLUMN_WINDOW.check(window as u64)?;
        }
        BULK_ROWS.check(c.bulk_rows as u64)?;
        BULK_AHEAD.check(c.bulk_ahead as u64)?;
        BULK_MAX_VECTORS.check(c.bulk_max_row_vectors)?;
        ROW_KERNEL_MIN_ROWS.check(c.row_kernel_min_rows)?;
        ROW_KERNEL_MAX_BLOCKS.check(c.row_kernel_max_blocks)?;
        STAGED_U8.check(c.staged.at(1) as u64)?;
        STAGED_U16.check(c.staged.at(2) as u64)?;
        for rule in self.launch_bounds {
            LAUNCH_BOUNDS.check(rule.value as u64)?;
        }
        Ok(())
    }
}

/// A tuning value outside its valid range ([`Range`]). `key` is the name `--tune` knows it by
/// (see [`Range::key`]); the value and the bounds are whole numbers (flags as 0 or 1; absent
/// choices are never out of range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TuningError {
    pub key: &'static str,
    pub value: u64,
    pub min: u64,
    pub max: u64,
    /// Where only some values from `min` to `max` are valid, those; empty where every one is.
    pub only: &'static [u64],
}

impl TuningError {
    pub const fn new(key: &'static str, value: u64, min: u64, max: u64) -> TuningError {
        TuningError { key, value, min, max, only: &[] }
    }
}

impl core::fmt::Display for TuningError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "tuning value {} = {} is out of range: it must be ", self.key, self.value)?;
        match self.only {
            [] if self.min == self.max => write!(f, "{}", self.min),
            [] if self.max == u64::MAX => write!(f, "at least {}", self.min),
            [] => write!(f, "from {} to {}", self.min, self.max),
            [first, rest @ ..] => {
                write!(f, "{first}")?;
                for (i, v) in rest.iter().enumerate() {
                    write!(f, "{}{v}", if i + 1 == rest.len() { " or " } else { ", " })?;
                }
                Ok(())
            }
        }
    }
}

impl core::error::Error for TuningError {}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::boxed::Box;
    use std::string::ToString;
    use std::vec::Vec;

    /// The field `key` names, set to `value` (cut to the field's type).
    fn set(t: &mut Tuning, key: &str, value: u64) {
        let c = &mut t.choices;
        match key {
            "pipe_stages" => c.pipeline_stages = Some(value as u32),
            "pipe_blocks" => c.pipeline_blocks_per_sm = Some(value as u32),
            "backoff_ns" => c.lookback_backoff_ns = value as u32,
            "column_strips" => c.column_strips = Box::leak(Box::new([(512, 16), (u64::MAX, value as u32)])),
            "column_strip" => c.column_strip = Some(value as u32),
            "column_window" => c.column_window = Some(value as u32),
            "bulk_rows" => c.bulk_rows = value as u32,
            "bulk_ahead" => c.bulk_ahead = value as u32,
            "bulk_max_vectors" => c.bulk_max_row_vectors = value,
            "row_kernel_min_rows" => c.row_kernel_min_rows = value,
            "row_kernel_max_blocks" => c.row_kernel_max_blocks = value,
            "staged.u8" => c.staged = c.staged.with(1, value != 0),
            "staged.u16" => c.staged = c.staged.with(2, value != 0),
            "launch_bounds" => {
                let rule = Rule::new(Family::Compact, &[ElemType::U32], &[], value as u32);
                t.launch_bounds = Box::leak(Box::new([t.launch_bounds[0], rule]))
            }
            _ => unreachable!("{key}"),
        }
    }

    /// The largest value of the field `key` names.
    fn widest(key: &str) -> u64 {
        match key {
            "bulk_max_vectors" | "row_kernel_min_rows" | "row_kernel_max_blocks" => u64::MAX,
            "staged.u8" | "staged.u16" => 1,
            _ => u32::MAX as u64,
        }
    }

    const RANGES: [Range; 14] = [
        limits::PIPE_STAGES,
        limits::PIPE_BLOCKS,
        limits::BACKOFF_NS,
        limits::COLUMN_STRIPS,
        limits::COLUMN_STRIP,
        limits::COLUMN_WINDOW,
        limits::BULK_ROWS,
        limits::BULK_AHEAD,
        limits::BULK_MAX_VECTORS,
        limits::ROW_KERNEL_MIN_ROWS,
        limits::ROW_KERNEL_MAX_BLOCKS,
        limits::STAGED_U8,
        limits::STAGED_U16,
        limits::LAUNCH_BOUNDS,
    ];

    #[test]
    fn every_table_is_valid() {
        for t in TABLES {
            assert_eq!(t.validate(), Ok(()), "sm_{}", t.arch);
        }
    }

    /// Zero, one past either end and the largest value of the field's type are refused with the
    /// key and its range; both ends are accepted.
    #[test]
    fn values_outside_their_range_are_refused_by_name() {
        for r in RANGES {
            let top = widest(r.key);
            let mut bad: Vec<u64> = [0, r.min.wrapping_sub(1), r.max.wrapping_add(1), top]
                .into_iter()
                .filter(|&v| v <= top && !r.contains(v))
                .collect();
            bad.dedup();
            assert!(!bad.is_empty() || (r.min == 0 && r.max == top), "{}", r.key);
            for value in bad {
                let mut t = sm90::SM90;
                set(&mut t, r.key, value);
                let e = t.validate().unwrap_err();
                assert_eq!((e.key, e.value, e.min, e.max), (r.key, value, r.min, r.max), "{} = {value}", r.key);
            }
            for value in [r.min, r.max] {
                let mut t = sm90::SM90;
                set(&mut t, r.key, value);
                assert_eq!(t.validate(), Ok(()), "{} = {value}", r.key);
            }
        }
    }

    #[test]
    fn a_window_is_1_or_4() {
        for (w, ok) in [(0, false), (1, true), (2, false), (3, false), (4, true), (5, false)] {
            let mut t = sm90::SM90;
            t.choices.column_window = Some(w);
            assert_eq!(t.validate().is_ok(), ok, "{w}");
        }
    }

    #[test]
    fn errors_say_the_key_the_value_and_what_it_must_be() {
        let s = |r: Range, v: u64| r.check(v).unwrap_err().to_string();
        let out = "is out of range: it must be";
        assert_eq!(s(limits::BULK_ROWS, 0), std::format!("tuning value bulk_rows = 0 {out} from 1 to 48"));
        assert_eq!(s(limits::COLUMN_WINDOW, 2), std::format!("tuning value column_window = 2 {out} 1 or 4"));
        assert_eq!(s(limits::STAGED_U8, 1), std::format!("tuning value staged.u8 = 1 {out} 0"));
        assert_eq!(
            s(limits::ROW_KERNEL_MIN_ROWS, 0),
            std::format!("tuning value row_kernel_min_rows = 0 {out} at least 1")
        );
        let three = Range::one_of("k", &[1, 2, 8]);
        assert_eq!(three.check(3).unwrap_err().to_string(), std::format!("tuning value k = 3 {out} 1, 2 or 8"));
    }
}
