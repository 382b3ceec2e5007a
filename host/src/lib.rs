//! # gpu_scan
//!
//! Device-wide parallel prefix sums (scans) and what they are for, on NVIDIA GPUs, with every
//! kernel written in Rust and compiled to PTX, on top of [cudarc](https://docs.rs/cudarc).
//!
//! ```no_run
//! use gpu_scan::{Gpu, Op, ScanOptions, TempStorage};
//! # fn main() -> gpu_scan::Result<()> {
//! let gpu = Gpu::new(0)?;
//! let stream = gpu.stream().clone();
//! let input = stream.clone_htod(&[3u32, 1, 7, 0, 4, 1, 6, 3])?;
//! let mut output = stream.alloc_zeros::<u32>(8)?;
//! let mut temp = TempStorage::new(); // reuse it: repeated scans allocate nothing
//! gpu.scan(&stream, &input, &mut output, &ScanOptions::new(Op::Add), &mut temp)?;
//! assert_eq!(stream.clone_dtoh(&output)?, [3, 4, 11, 11, 15, 16, 22, 25]);
//! # Ok(()) }
//! ```
//!
//! Every call goes the same way: options become a request, a pure planner (`plan`) turns the
//! request and the [`Tuning`] in force into launches, and a launcher (`launch`) runs them on the
//! caller's stream. Integer addition and multiplication wrap around; float min/max follow IEEE
//! minNum/maxNum; operators need not be commutative (elements are combined in index order).
//! With [`ScanOptions::deterministic`] float results are bitwise reproducible, and
//! [`reference::replica`] computes them on the CPU. The library reads no environment variables.
//!
//! Besides `Gpu`'s methods, three modules are public on purpose: [`plan`] (the pure planners,
//! to inspect or check a request without a GPU), [`reference`](mod@reference) (the CPU references and the
//! rules results are verified by) and [`input`] (the seeded inputs the tests and the CLI use).
//! [`foreign`] is the one `unsafe` layer, for memory the library did not allocate.

pub mod apps;
pub mod element;
pub mod error;
pub mod foreign;
pub mod input;
mod launch;
pub mod multi;
pub mod options;
pub mod plan;
pub mod reference;
mod runtime;
mod scan;
pub mod streamed;
mod temp;
pub mod timeline;
pub mod trace;
pub mod tuning;
mod widening;

pub use cudarc;
pub use element::{ElemType, Element, Key, Op, OpVisitor, ScanOp};
pub use error::{Error, Result};
pub use foreign::ForeignSlice;
pub use options::{
    Algorithm, Axis, BatchedKernel, BatchedOptions, CompactKernel, CompactOptions, CsrOptions, HistogramOptions, Keep,
    Matrix, PartitionOptions, Propagation, RecurrenceOptions, ReduceOptions, ScanKernel, ScanOptions, SegmentedKernel,
    SegmentedOptions, SortOptions, StatusOrdering, WideningOptions,
};
pub use runtime::{device_count, driver_present, ptx, DeviceInfo, Gpu};
pub use scan_abi::block::BlockAlgo;
pub use scan_abi::{Kernel, Tuning};
pub use streamed::{ChunkSink, ChunkSource, Progress, StreamOptions};
pub use temp::{TempStorage, GUARD_BYTE};
pub use widening::{Narrow, Source, WidensTo};
