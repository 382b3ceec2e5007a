//! Kernel families and their names: the one naming source for the kernels, the host and the tests.
//!
//! A kernel is a family stamped out for one element type and, where the family takes one, one
//! operator: `<family>_<type>[_<op>]` (`single_pass_u32_add`, `compact_f64`). The `gpu` crate's
//! macros spell the same names; a test checks that the PTX holds exactly [`Kernel::all`].

use crate::block::BlockAlgo;
use crate::element::ElemType;
use crate::op::Op;
use crate::widening::Source;
use core::fmt;

/// Bits of the `flags` argument every scan kernel takes.
pub mod flags {
    /// Write the exclusive scan (element i gets the combination of elements 0..i).
    pub const EXCLUSIVE: u32 = 1;
    /// Combine the `init` argument in front of the first element.
    pub const HAS_INIT: u32 = 2;
    /// Publish and read tile-status words with release/acquire ordering instead of relaxed
    /// atomics (see `status`).
    pub const ACQ_REL_STATUS: u32 = 4;
    /// Take the initial value from the temporary storage, `status::INIT_OFFSET` bytes in, instead
    /// of the `init` argument: a value computed on the device (a multi-GPU scan's carry from the
    /// ranks before) goes in without a trip to the host. Used with `HAS_INIT`.
    pub const INIT_FROM_TEMP: u32 = 8;
}

/// Which elements a compaction keeps (its `pred` argument).
pub mod predicate {
    /// `x > threshold` (false for NaN).
    pub const GREATER: u32 = 0;
    /// `x != 0` (for floats, `-0.0` counts as zero and NaN as non-zero).
    pub const NONZERO: u32 = 1;
    /// `flags[i] != 0`, from a separate array of bytes.
    pub const FLAGS: u32 = 2;
}

/// The element types of the segmented and batched scans, the sort and the histogram.
pub const WIDE_TYPES: [ElemType; 6] =
    [ElemType::U32, ElemType::I32, ElemType::U64, ElemType::I64, ElemType::F32, ElemType::F64];

/// The operators of the segmented and batched scans.
pub const ARITHMETIC_OPS: [Op; 4] = [Op::Add, Op::Mul, Op::Min, Op::Max];

/// Declares `Family` with its families named once: the plain ones, then those stamped out once
/// per block algorithm; `PLAIN` lists the plain ones for [`Family::all`].
macro_rules! families {
    (
        $($(#[$doc:meta])* $plain:ident,)* ;
        $($(#[$pdoc:meta])* $per_block:ident,)* ;
        $($(#[$sdoc:meta])* $per_source:ident,)* ;
        $($(#[$gdoc:meta])* $per_segments:ident,)*
    ) => {
        /// A family of kernels: one algorithm, stamped out per element type (and operator).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Family {
            $($(#[$doc])* $plain,)*
            $($(#[$pdoc])* $per_block(BlockAlgo),)*
            $($(#[$sdoc])* $per_source(Source),)*
            $($(#[$gdoc])* $per_segments(Segments),)*
        }

        const PLAIN: &[Family] = &[$(Family::$plain),*];
    };
}

families! {
    /// One thread per output sums its whole prefix.
    Naive,
    /// Single-pass decoupled look-back, one tile per block, the tile in registers.
    SinglePass,
    /// The same with the tile staged in shared memory.
    SinglePassStaged,
    /// The same with the fixed-order look-back (bitwise reproducible float sums and products).
    SinglePassDet,
    /// Single-pass by a persistent pipeline of warp roles.
    SinglePassPipelined,
    /// The same with the fixed-order look-back (bitwise reproducible float sums and products).
    SinglePassPipelinedDet,
    /// The `u32` add single-pass scan recording every tile's timestamps.
    SinglePassTimeline,
    HierReduce,
    HierAdd,
    Compact,
    CompactPipelined,
    /// The positions of the set flags (a compaction of the flags that writes where they are);
    /// the type names the positions'.
    Positions,
    /// A flag byte per element, set where a comparison keeps it (the flags of the positions of
    /// the elements a compaction by a comparison keeps).
    KeptFlags,
    PartitionCount,
    PartitionScatter,
    /// The bin counts of a histogram alone, without the permutation.
    HistogramCounts,
    SortCounts,
    SortPass,
    SortPassValues,
    /// Keys mapped to the order-reversing bijection of their type, in place (a descending sort).
    SortFlip,
    CsrCount,
    CsrHeads,
    Segmented,
    SegmentedHeads,
    /// Segment heads where an integer key changes (scan by key); the type names the key.
    SegmentedKeyHeads,
    /// The linear recurrence, a scan of affine maps (the type names the float).
    Recurrence,
    RecurrenceStaged,
    RecurrencePipelined,
    /// Down the columns: scalar tiles, few rows, vector tiles (look-back window 1 and 4), tiles
    /// in shared memory, and pipelined scans of 32- and 16-byte rows.
    BatchedColumns,
    BatchedColumnVectors,
    BatchedColumnsVec,
    BatchedColumnsVecW4,
    BatchedColumnsBulk,
    BatchedColumnsPipelined,
    BatchedColumnsPipelined16,
    /// Along the rows: one block per row, short rows, chains of tiles per row, pipelined.
    BatchedRows,
    BatchedShortRows,
    BatchedLongRows,
    BatchedRowsPipelined,
    ;
    /// Hierarchical tile scan with a block algorithm inside.
    HierTile,
    /// One-block scan recording the shared array after every round.
    Trace,
    ;
    /// The single-pass scan of narrow elements into a wider type (the kernel's type is the
    /// output's): `widen_<source>_<type>_add`.
    Widening,
    /// The same with the fixed-order look-back, for half floats into f32.
    WideningDet,
    /// The pipelined warp-specialized form (`widen_pipe_<source>_<type>_add`), its narrow tiles
    /// staged in shared memory, in the wide type's pipelined shape.
    WideningPipelined,
    ;
    /// The segmented scan by the pipelined kernel's warp roles, the segments staged beside the
    /// values: `segmented_pipe_<segments>_<type>_<op>`.
    SegmentedPipelined,
}

/// What marks the segments of a pipelined segmented scan: head flags, or where a key of 4 or 8
/// bytes differs from the one before (keys compared by their bits, so signed keys share the
/// unsigned kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segments {
    Flags,
    Keys32,
    Keys64,
}

impl Segments {
    pub const ALL: [Segments; 3] = [Segments::Flags, Segments::Keys32, Segments::Keys64];

    pub const fn name(self) -> &'static str {
        match self {
            Segments::Flags => "flags",
            Segments::Keys32 => "k32",
            Segments::Keys64 => "k64",
        }
    }

    /// Bytes of one entry.
    pub const fn size(self) -> usize {
        match self {
            Segments::Flags => 1,
            Segments::Keys32 => 4,
            Segments::Keys64 => 8,
        }
    }

    /// The kernels for keys of `ty`: integer keys of 4 or 8 bytes.
    pub const fn of_keys(ty: ElemType) -> Option<Segments> {
        match ty {
            ElemType::U32 | ElemType::I32 => Some(Segments::Keys32),
            ElemType::U64 | ElemType::I64 => Some(Segments::Keys64),
            _ => None,
        }
    }
}

use Family::*;

impl Family {
    /// Every family, the block-algorithm ones once per algorithm.
    pub fn all() -> impl Iterator<Item = Family> {
        let blocks = BlockAlgo::ALL.into_iter().map(HierTile);
        let traces = BlockAlgo::ALL.into_iter().filter(|b| b.traceable()).map(Trace);
        let widening = Source::ALL.into_iter().map(Widening);
        let det = Source::ALL.into_iter().filter(|s| s.is_float()).map(WideningDet);
        let pipelined = Source::ALL.into_iter().map(WideningPipelined);
        let segmented = Segments::ALL.into_iter().map(SegmentedPipelined);
        let plain = PLAIN.iter().copied().chain(blocks).chain(traces);
        plain.chain(widening).chain(det).chain(pipelined).chain(segmented)
    }

    /// The name's first part.
    pub fn prefix(self) -> Prefix {
        Prefix(self)
    }

    /// Whether the kernels of this family are named per operator.
    pub const fn has_op(self) -> bool {
        !matches!(
            self,
            Compact
                | CompactPipelined
                | Positions
                | KeptFlags
                | PartitionCount
                | PartitionScatter
                | HistogramCounts
                | SortCounts
                | SortPass
                | SortPassValues
                | SortFlip
                | CsrCount
                | CsrHeads
                | SegmentedHeads
                | SegmentedKeyHeads
                | Recurrence
                | RecurrenceStaged
                | RecurrencePipelined
        )
    }

    /// Whether the family is built for `ty` (and `op`, for families named per operator).
    pub fn built_for(self, ty: ElemType, op: Option<Op>) -> bool {
        let op_ok = |op: Option<Op>| op.is_some_and(|o| o.supports(ty));
        let wide = WIDE_TYPES.contains(&ty);
        let arithmetic = |op: Option<Op>| op.is_some_and(|o| ARITHMETIC_OPS.contains(&o));
        match self {
            Naive | SinglePass | SinglePassPipelined | HierTile(_) | HierReduce | HierAdd | Trace(_) => op_ok(op),
            SinglePassStaged => matches!(ty.size(), 4 | 8) && op_ok(op),
            SinglePassDet | SinglePassPipelinedDet => op.is_some_and(|o| o.order_sensitive(ty)),
            SinglePassTimeline => ty == ElemType::U32 && op == Some(Op::Add),
            Widening(s) | WideningPipelined(s) => s.widens_to(ty) && op == Some(Op::Add),
            WideningDet(s) => s.is_float() && s.widens_to(ty) && op == Some(Op::Add),
            Compact | KeptFlags => op.is_none(),
            CompactPipelined => matches!(ty.size(), 4 | 8) && op.is_none(),
            Positions => matches!(ty, ElemType::U32 | ElemType::U64) && op.is_none(),
            PartitionCount | PartitionScatter | HistogramCounts | SortCounts | SortPass | SortPassValues | SortFlip => {
                wide && op.is_none()
            }
            CsrCount | CsrHeads => ty == ElemType::U32 && op.is_none(),
            SegmentedHeads => ty == ElemType::U64 && op.is_none(),
            SegmentedKeyHeads => !ty.is_float() && op.is_none(),
            Recurrence | RecurrenceStaged | RecurrencePipelined => ty.is_float() && op.is_none(),
            // Every operator of the type but the affine maps; the batched scans, arithmetic alone.
            Segmented | SegmentedPipelined(_) => wide && op.is_some_and(|o| o != Op::Affine && o.supports(ty)),
            BatchedColumns
            | BatchedColumnVectors
            | BatchedColumnsVec
            | BatchedColumnsVecW4
            | BatchedColumnsBulk
            | BatchedColumnsPipelined
            | BatchedColumnsPipelined16
            | BatchedRows
            | BatchedShortRows
            | BatchedLongRows
            | BatchedRowsPipelined => wide && arithmetic(op),
        }
    }
}

/// A family's name prefix (`single_pass`, `hier_blelloch`), for display.
#[derive(Clone, Copy, Debug)]
pub struct Prefix(Family);

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.0 {
            Naive => "naive",
            SinglePass => "single_pass",
            SinglePassStaged => "single_pass_staged",
            SinglePassDet => "single_pass_det",
            SinglePassPipelined => "single_pass_pipe",
            SinglePassPipelinedDet => "single_pass_pipe_det",
            SinglePassTimeline => "single_pass_timeline",
            HierTile(b) => return write!(f, "hier_{}", b.token()),
            HierReduce => "hier_reduce",
            HierAdd => "hier_add",
            Trace(b) => return write!(f, "trace_{}", b.token()),
            Widening(s) => return write!(f, "widen_{}", s.name()),
            WideningDet(s) => return write!(f, "widen_det_{}", s.name()),
            WideningPipelined(s) => return write!(f, "widen_pipe_{}", s.name()),
            SegmentedPipelined(g) => return write!(f, "segmented_pipe_{}", g.name()),
            Compact => "compact",
            CompactPipelined => "compact_pipe",
            Positions => "positions",
            KeptFlags => "kept_flags",
            PartitionCount => "partition_count",
            PartitionScatter => "partition_scatter",
            HistogramCounts => "histogram_counts",
            SortCounts => "sort_counts",
            SortPass => "sort_pass",
            SortPassValues => "sort_pass_values",
            SortFlip => "sort_flip",
            CsrCount => "csr_count",
            CsrHeads => "csr_heads",
            Segmented => "segmented",
            SegmentedHeads => "segmented_heads",
            SegmentedKeyHeads => "segmented_key_heads",
            Recurrence => "recurrence",
            RecurrenceStaged => "recurrence_staged",
            RecurrencePipelined => "recurrence_pipe",
            BatchedColumns => "batched_columns",
            BatchedColumnVectors => "batched_column_vectors",
            BatchedColumnsVec => "batched_columns_vec",
            BatchedColumnsVecW4 => "batched_columns_vecw4",
            BatchedColumnsBulk => "batched_columns_bulk",
            BatchedColumnsPipelined => "batched_columns_pipe",
            BatchedColumnsPipelined16 => "batched_columns_pipe16",
            BatchedRows => "batched_rows",
            BatchedShortRows => "batched_short_rows",
            BatchedLongRows => "batched_long_rows",
            BatchedRowsPipelined => "batched_rows_pipe",
        };
        f.write_str(name)
    }
}

/// One kernel: a family for an element type and, for families named per operator, an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kernel {
    pub family: Family,
    pub ty: ElemType,
    pub op: Option<Op>,
}

impl Kernel {
    /// `family` for `ty` and `op`; the operator is dropped for families not named per operator.
    pub const fn new(family: Family, ty: ElemType, op: Op) -> Kernel {
        Kernel { family, ty, op: if family.has_op() { Some(op) } else { None } }
    }

    /// `family` for `ty`, for families not named per operator.
    pub const fn typed(family: Family, ty: ElemType) -> Kernel {
        Kernel { family, ty, op: None }
    }

    /// Whether the PTX module holds this kernel.
    pub fn exists(&self) -> bool {
        self.family.built_for(self.ty, self.op)
    }

    /// Every kernel the PTX module holds.
    pub fn all() -> impl Iterator<Item = Kernel> {
        Family::all().flat_map(|family| {
            ElemType::ALL.into_iter().flat_map(move |ty| {
                let ops = core::iter::once(None).chain(Op::ALL.into_iter().map(Some));
                ops.map(move |op| Kernel { family, ty, op }).filter(Kernel::exists)
            })
        })
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.family.prefix(), self.ty.name())?;
        match self.op {
            Some(op) => write!(f, "_{}", op.name()),
            None => Ok(()),
        }
    }
}

/// The module group of a kernel: its family and element type (every operator of one family and
/// type). The host loads one small PTX module per group on first use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Group {
    pub family: Family,
    pub ty: ElemType,
}

impl Kernel {
    pub const fn group(self) -> Group {
        Group { family: self.family, ty: self.ty }
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.family.prefix(), self.ty.name())
    }
}
