//! The pipelined kernels' scalar arguments: one `#[repr(C)]` struct per family, passed by value
//! after the family's buffers. The host fills the same definition the kernel reads, so their
//! layouts cannot drift apart, and a family's settings travel together instead of one by one.
//!
//! Buffers stay pointer parameters of their own: the nvptx backend knows a kernel's pointer
//! parameters address global memory and reads them with `ld.global`, while an address read out of
//! a struct stays generic. The structs are packed to 4-byte alignment: rustc passes an aggregate
//! in chunks of its alignment, and 4-byte chunks give each `u32` field its own parameter load.

/// The pipeline settings of every pipelined launch (its tile state is the `temp` buffer).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipe {
    /// The tile counter's value at this launch's first tile.
    pub counter_base: u32,
    /// The status words' epoch of this launch.
    pub epoch: u32,
    /// The look-back's pause between polls of a status word not yet published.
    pub backoff_ns: u32,
    /// Tiles in flight per block.
    pub stages: u32,
}

/// `single_pass_pipe_*`, `single_pass_pipe_det_*`, `batched_rows_pipe_*`, `recurrence_pipe_*`
/// and `widen_pipe_*` (buffers `input`, `output`, `temp`): `n` elements scanned into `T`.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScanArgs<T> {
    pub n: u64,
    /// The row length of `batched_rows_pipe_*`, each row scanned on its own; `n` for the others.
    pub row: u64,
    /// [`crate::kernel::flags`].
    pub flags: u32,
    pub pipe: Pipe,
    /// The initial value where `flags` has `HAS_INIT` (the identity otherwise).
    pub init: T,
}

/// `batched_columns_pipe_*` and `batched_columns_pipe16_*` (buffers `input`, `output`, `temp`):
/// the columns of a row-major matrix of `n` elements, each scanned on its own.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnsArgs {
    pub n: u64,
    /// [`crate::kernel::flags`].
    pub flags: u32,
    pub pipe: Pipe,
}

/// `segmented_pipe_*` (buffers `input`, `marks`, `output`, `temp`): `n` values scanned segment by
/// segment, the segments given by `marks` (head flags, or keys whose changes start segments).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedArgs {
    pub n: u64,
    /// [`crate::kernel::flags`] (exclusive or not).
    pub flags: u32,
    pub pipe: Pipe,
}

/// `compact_pipe_*` (buffers `input`, `flags`, `output`, `count`, `temp`): the elements of `n`
/// that `pred` ([`crate::kernel::predicate`], with `threshold`) or the byte flags keep, in order
/// into `output`, and their number into the `u64` at `count`. Its look-back polls without
/// pausing: `pipe.backoff_ns` is 0.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactArgs<T> {
    pub n: u64,
    pub pred: u32,
    pub pipe: Pipe,
    pub threshold: T,
}
