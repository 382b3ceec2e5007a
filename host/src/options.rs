//! What a caller chooses: the scan's options and the strategies and kernels behind them. Every
//! choice is a field here (or a [`crate::Tuning`] passed to `Gpu::with_tuning`); the library
//! reads no environment variables.

use scan_abi::block::BlockAlgo;
use scan_abi::Op;

/// How the tile results of the hierarchical strategy are combined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Propagation {
    /// Reduce every tile, scan the totals, then scan every tile from its offset: the input is
    /// read twice and the output written once (3n element moves).
    #[default]
    ReduceThenScan,
    /// Scan every tile and write its total, scan the totals, then add each tile's offset to its
    /// elements: the lecture's form (4n element moves).
    ScanThenAdd,
}

impl Propagation {
    pub const ALL: [Propagation; 2] = [Propagation::ReduceThenScan, Propagation::ScanThenAdd];

    pub const fn name(self) -> &'static str {
        match self {
            Propagation::ReduceThenScan => "reduce-then-scan",
            Propagation::ScanThenAdd => "scan-then-add",
        }
    }
}

/// Device-wide strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// One launch, decoupled look-back: the fastest, the default.
    #[default]
    SinglePass,
    /// Tile scans, the tile totals scanned recursively, offsets combined back.
    Hierarchical { block: BlockAlgo, propagation: Propagation },
    /// One thread per output, O(n²): a teaching baseline, limited to [`NAIVE_MAX_N`] elements.
    Naive,
}

/// Largest input the naive O(n²) strategy accepts: about 3.4e10 element reads, well under a
/// second on an H100-class GPU; beyond that it is a minutes-long way to learn nothing new.
pub const NAIVE_MAX_N: u64 = 1 << 18;

impl Algorithm {
    /// The hierarchical strategy with its default block algorithm and propagation.
    pub fn hierarchical() -> Algorithm {
        Algorithm::Hierarchical { block: BlockAlgo::WarpShuffle, propagation: Propagation::default() }
    }

    pub fn name(&self) -> String {
        match self {
            Algorithm::SinglePass => "single-pass".into(),
            Algorithm::Naive => "naive".into(),
            Algorithm::Hierarchical { block, propagation } => {
                format!("hierarchical/{}/{}", block.name(), propagation.name())
            }
        }
    }
}

/// How the single-pass scan publishes and reads tile status (see `scan_abi::status`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatusOrdering {
    /// Relaxed atomics: value and flag share one atomic word, so nothing more is needed.
    #[default]
    Relaxed,
    /// Release stores and acquire loads (a memory barrier per publication, an L1 invalidation
    /// per poll on sm_90): kept to measure what they cost.
    AcquireRelease,
}

impl StatusOrdering {
    pub const ALL: [StatusOrdering; 2] = [StatusOrdering::Relaxed, StatusOrdering::AcquireRelease];

    pub const fn name(self) -> &'static str {
        match self {
            StatusOrdering::Relaxed => "relaxed",
            StatusOrdering::AcquireRelease => "acq-rel",
        }
    }
}

/// Which single-pass kernel runs. A kernel that cannot run the request (the pipelined kernel on
/// unaligned buffers, for one) is an error, never a silent substitute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScanKernel {
    /// As the tuning table says for the size, type and operator.
    #[default]
    Auto,
    /// One tile per block, the tile in registers (with the fixed-order look-back when
    /// deterministic).
    Tiles,
    /// One tile per block, the tile staged in shared memory (4- and 8-byte elements).
    Staged,
    /// A persistent grid of warp roles that keeps several tiles in flight per block (relaxed
    /// status ordering, input and output on 16-byte boundaries).
    Pipelined,
}

impl ScanKernel {
    pub const ALL: [ScanKernel; 4] = [ScanKernel::Auto, ScanKernel::Tiles, ScanKernel::Staged, ScanKernel::Pipelined];

    pub const fn name(self) -> &'static str {
        match self {
            ScanKernel::Auto => "auto",
            ScanKernel::Tiles => "tiles",
            ScanKernel::Staged => "staged",
            ScanKernel::Pipelined => "pipelined",
        }
    }
}

/// What a scan computes and how.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ScanOptions<T> {
    pub op: Op,
    /// Exclusive: element i gets the combination of elements 0..i (the initial value, or the
    /// identity, at 0). Inclusive: of elements 0..=i.
    pub exclusive: bool,
    /// Combined in front of the first element (default: none, i.e. the operator's identity).
    pub init: Option<T>,
    pub algorithm: Algorithm,
    /// Single-pass only: memory ordering of the tile-status words.
    pub status_ordering: StatusOrdering,
    /// Single-pass only: nanoseconds the look-back sleeps between polls (default: the tuning's).
    pub backoff_ns: Option<u32>,
    /// Single-pass: combine in one fixed order, so float results are identical run after run
    /// and equal to [`crate::reference::replica`] bit for bit. The hierarchical and naive
    /// strategies have no timing-dependent step and are always deterministic.
    pub deterministic: bool,
    /// Single-pass only: the kernel.
    pub kernel: ScanKernel,
}

impl<T> ScanOptions<T> {
    /// An inclusive scan with `op`, the default algorithm and no initial value.
    pub fn new(op: Op) -> Self {
        ScanOptions {
            op,
            exclusive: false,
            init: None,
            algorithm: Algorithm::default(),
            status_ordering: StatusOrdering::default(),
            backoff_ns: None,
            deterministic: false,
            kernel: ScanKernel::default(),
        }
    }

    pub fn exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    pub fn init(mut self, init: Option<T>) -> Self {
        self.init = init;
        self
    }

    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    pub fn status_ordering(mut self, ordering: StatusOrdering) -> Self {
        self.status_ordering = ordering;
        self
    }

    pub fn backoff_ns(mut self, backoff_ns: Option<u32>) -> Self {
        self.backoff_ns = backoff_ns;
        self
    }

    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    pub fn kernel(mut self, kernel: ScanKernel) -> Self {
        self.kernel = kernel;
        self
    }
}

/// Which axis of a row-major matrix a batched scan runs along.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Axis {
    /// Down every column (axis 0 of a `rows x cols` array).
    #[default]
    Columns,
    /// Along every row (axis 1).
    Rows,
}

impl Axis {
    pub const ALL: [Axis; 2] = [Axis::Columns, Axis::Rows];

    pub const fn name(self) -> &'static str {
        match self {
            Axis::Columns => "columns",
            Axis::Rows => "rows",
        }
    }
}

/// The shape of a row-major matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Matrix {
    pub rows: u64,
    pub cols: u64,
}

impl Matrix {
    pub const fn new(rows: u64, cols: u64) -> Matrix {
        Matrix { rows, cols }
    }
}

/// Which kernel a batched scan runs. A single row or column is always a plain scan; a kernel
/// that cannot take the matrix is an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BatchedKernel {
    /// As the tuning table says for the shape.
    #[default]
    Auto,
    /// Columns: tiles of rows by strips of columns, one look-back chain per column.
    ColumnTiles,
    /// Columns: tiles of 16-byte vectors of adjacent columns (rows on 16-byte boundaries).
    VectorTiles,
    /// Columns: tiles brought into shared memory by bulk copies (rows of a power of two of
    /// 16-byte vectors, at most the tuning's widest, and more rows than one tile).
    BulkTiles,
    /// Columns: one thread per vector of columns walks every row (at most one batch of rows).
    ColumnVectors,
    /// Rows: tiles of whole rows that need nothing from one another (rows of at most one tile).
    ShortRows,
    /// Rows: one block walks each row.
    RowBlocks,
    /// Rows: one single-pass chain of tiles per row.
    RowChains,
    /// Columns: one pipelined scan of rows of 16 or 32 bytes. Rows: one pipelined launch, each
    /// row (starting on a 16-byte boundary) a chain of its own tiles.
    Pipelined,
}

impl BatchedKernel {
    pub const ALL: [BatchedKernel; 9] = [
        BatchedKernel::Auto,
        BatchedKernel::ColumnTiles,
        BatchedKernel::VectorTiles,
        BatchedKernel::BulkTiles,
        BatchedKernel::ColumnVectors,
        BatchedKernel::ShortRows,
        BatchedKernel::RowBlocks,
        BatchedKernel::RowChains,
        BatchedKernel::Pipelined,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            BatchedKernel::Auto => "auto",
            BatchedKernel::ColumnTiles => "column-tiles",
            BatchedKernel::VectorTiles => "vector-tiles",
            BatchedKernel::BulkTiles => "bulk-tiles",
            BatchedKernel::ColumnVectors => "column-vectors",
            BatchedKernel::ShortRows => "short-rows",
            BatchedKernel::RowBlocks => "row-blocks",
            BatchedKernel::RowChains => "row-chains",
            BatchedKernel::Pipelined => "pipelined",
        }
    }
}

/// A batched scan: every row, or every column, of a row-major matrix scanned on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchedOptions {
    pub axis: Axis,
    /// add, mul, min or max, on 32- and 64-bit types.
    pub op: Op,
    pub exclusive: bool,
    pub kernel: BatchedKernel,
}

impl BatchedOptions {
    pub fn new(axis: Axis, op: Op) -> BatchedOptions {
        BatchedOptions { axis, op, exclusive: false, kernel: BatchedKernel::Auto }
    }

    pub fn exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    pub fn kernel(mut self, kernel: BatchedKernel) -> Self {
        self.kernel = kernel;
        self
    }
}

/// Which segmented-scan kernel runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SegmentedKernel {
    /// As the tuning table says.
    #[default]
    Auto,
    /// One tile per block, the head flags read beside the tile.
    Tiles,
    /// The pipelined kernel's warp roles, head flags or keys staged beside the values (segments
    /// from flags or keys, not of a fixed length).
    Pipelined,
}

impl SegmentedKernel {
    pub const ALL: [SegmentedKernel; 3] = [SegmentedKernel::Auto, SegmentedKernel::Tiles, SegmentedKernel::Pipelined];

    pub const fn name(self) -> &'static str {
        match self {
            SegmentedKernel::Auto => "auto",
            SegmentedKernel::Tiles => "tiles",
            SegmentedKernel::Pipelined => "pipelined",
        }
    }
}

/// A segmented scan: every segment scanned on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentedOptions {
    /// add, mul, min or max, on 32- and 64-bit types.
    pub op: Op,
    /// A segment's first element gets the identity.
    pub exclusive: bool,
    pub kernel: SegmentedKernel,
}

impl SegmentedOptions {
    pub fn new(op: Op) -> SegmentedOptions {
        SegmentedOptions { op, exclusive: false, kernel: SegmentedKernel::Auto }
    }

    pub fn exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    pub fn kernel(mut self, kernel: SegmentedKernel) -> Self {
        self.kernel = kernel;
        self
    }
}

/// Which elements a compaction keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Keep<T> {
    /// `x > threshold` (false for NaN).
    Greater(T),
    /// `x != 0` (for floats `-0.0` is zero, NaN is not).
    NonZero,
    /// `flags[i] != 0`, from a separate array of bytes ([`crate::Gpu::compact_flagged`]).
    Flags,
}

/// Which compaction kernel runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompactKernel {
    /// As the tuning table says.
    #[default]
    Auto,
    /// One tile per block.
    Tiles,
    /// The pipelined kernel's warp roles (4- and 8-byte elements, input on a 16-byte boundary).
    Pipelined,
}

impl CompactKernel {
    pub const ALL: [CompactKernel; 3] = [CompactKernel::Auto, CompactKernel::Tiles, CompactKernel::Pipelined];

    pub const fn name(self) -> &'static str {
        match self {
            CompactKernel::Auto => "auto",
            CompactKernel::Tiles => "tiles",
            CompactKernel::Pipelined => "pipelined",
        }
    }
}

/// A stream compaction: what to keep, and the kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct CompactOptions<T> {
    pub keep: Keep<T>,
    pub kernel: CompactKernel,
}

impl<T> CompactOptions<T> {
    pub fn new(keep: Keep<T>) -> CompactOptions<T> {
        CompactOptions { keep, kernel: CompactKernel::Auto }
    }

    pub fn kernel(mut self, kernel: CompactKernel) -> Self {
        self.kernel = kernel;
        self
    }
}

/// A histogram: `bins` equal-width bins over `[lo, hi)`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct HistogramOptions {
    pub bins: u32,
    pub lo: f64,
    pub hi: f64,
}

impl HistogramOptions {
    pub fn new(bins: u32, lo: f64, hi: f64) -> HistogramOptions {
        HistogramOptions { bins, lo, hi }
    }
}

/// The linear recurrence `x[t] = a[t]·x[t-1] + b[t]` from `x[-1] = x0`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RecurrenceOptions<F> {
    pub x0: F,
    pub kernel: ScanKernel,
}

impl<F> RecurrenceOptions<F> {
    pub fn new(x0: F) -> RecurrenceOptions<F> {
        RecurrenceOptions { x0, kernel: ScanKernel::Auto }
    }

    pub fn kernel(mut self, kernel: ScanKernel) -> Self {
        self.kernel = kernel;
        self
    }
}

/// A radix sort: stable, ascending unless `descending`; keys of every 4- and 8-byte type.
/// Floats order `-0.0` before `+0.0` (after it, descending), and NaNs last in both orders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SortOptions {
    pub descending: bool,
}

impl SortOptions {
    pub fn new() -> SortOptions {
        SortOptions::default()
    }

    /// Largest first; equal keys still keep their input order. It maps the keys before the
    /// passes and back after them: two more elementwise passes over the keys.
    pub fn descending(mut self, descending: bool) -> Self {
        self.descending = descending;
        self
    }
}

/// COO <-> CSR conversion (32-bit row indices and offsets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CsrOptions {}

impl CsrOptions {
    pub fn new() -> CsrOptions {
        CsrOptions {}
    }
}

/// A stable two-way partition: the elements inside `[lo, hi)` first.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct PartitionOptions {
    pub lo: f64,
    pub hi: f64,
}

impl PartitionOptions {
    /// Elements in `[lo, hi)` first.
    pub fn within(lo: f64, hi: f64) -> PartitionOptions {
        PartitionOptions { lo, hi }
    }

    /// Elements below `pivot` first (quicksort's partition).
    pub fn less_than(pivot: f64) -> PartitionOptions {
        PartitionOptions { lo: f64::NEG_INFINITY, hi: pivot }
    }
}

/// A reduction of every element with one operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReduceOptions {
    pub op: Op,
}

impl ReduceOptions {
    pub fn new(op: Op) -> ReduceOptions {
        ReduceOptions { op }
    }
}

/// A scan of narrow elements into a wider type: always a sum (see [`crate::Narrow`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct WideningOptions<T> {
    /// As [`ScanOptions::exclusive`].
    pub exclusive: bool,
    /// Added in front of the first element, in the wide type.
    pub init: Option<T>,
    /// Half floats: sum in one fixed order, equal bit for bit to
    /// [`crate::reference::replica`]'s `f32` scan of the widened input (on the tiles kernel).
    /// Integer sums are exact in any order and ignore it.
    pub deterministic: bool,
    /// The kernel: tiles or pipelined (auto picks by size and alignment, as the wide scan does).
    pub kernel: ScanKernel,
}

impl<T> Default for WideningOptions<T> {
    fn default() -> Self {
        WideningOptions { exclusive: false, init: None, deterministic: false, kernel: ScanKernel::Auto }
    }
}

impl<T> WideningOptions<T> {
    /// An inclusive sum with no initial value.
    pub fn new() -> Self {
        WideningOptions::default()
    }

    pub fn exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    pub fn init(mut self, init: Option<T>) -> Self {
        self.init = init;
        self
    }

    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    pub fn kernel(mut self, kernel: ScanKernel) -> Self {
        self.kernel = kernel;
        self
    }
}
