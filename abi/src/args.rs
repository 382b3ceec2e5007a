//! The pipelined kernels' arguments: one `#[repr(C)]` struct per family, passed by value as the
//! kernel's only parameter (rustc's nvptx backend makes it one `.param .align 8 .b8 [N]`). The
//! host fills the same definition the kernel reads, so their layouts cannot drift apart, and a
//! family's launch parameters travel together instead of one by one. Buffers are device
//! addresses (`u64`); each kernel gives them their element types.

/// The tile state and pipeline settings of every pipelined launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipe {
    /// The tile state: the counter's line, then one status word per tile ([`crate::status`]).
    pub temp: u64,
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
/// and `widen_pipe_*`: `n` elements from `input` scanned into `output` of `T`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScanArgs<T> {
    pub input: u64,
    pub output: u64,
    pub n: u64,
    /// The row length of `batched_rows_pipe_*`, each row scanned on its own; `n` for the others.
    pub row: u64,
    /// The initial value where `flags` has `HAS_INIT` (the identity otherwise).
    pub init: T,
    /// [`crate::kernel::flags`].
    pub flags: u32,
    pub pipe: Pipe,
}

/// `batched_columns_pipe_*` and `batched_columns_pipe16_*`: the columns of a row-major matrix of
/// `n` elements, each scanned on its own.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnsArgs {
    pub input: u64,
    pub output: u64,
    pub n: u64,
    pub flags: u32,
    pub pipe: Pipe,
}

/// `segmented_pipe_*`: `n` values scanned segment by segment, the segments given by `marks` (head
/// flags, or keys whose changes start segments).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedArgs {
    pub input: u64,
    pub marks: u64,
    pub output: u64,
    pub n: u64,
    pub flags: u32,
    pub pipe: Pipe,
}

/// `compact_pipe_*`: the elements of `input` that `pred` ([`crate::kernel::predicate`], with
/// `threshold`) or the byte flags at `flags` keep, in order into `output`, and their number into
/// the `u64` at `count`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactArgs<T> {
    pub input: u64,
    pub flags: u64,
    pub output: u64,
    pub count: u64,
    pub n: u64,
    pub pred: u32,
    pub threshold: T,
    pub pipe: Pipe,
}
