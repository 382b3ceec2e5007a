//! # gpu_scan
//!
//! Device-wide parallel prefix sums (scans) on NVIDIA GPUs, with every kernel written in Rust and
//! compiled to PTX, on top of [cudarc](https://docs.rs/cudarc).
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
//! Integer addition and multiplication wrap around. Float min/max follow IEEE minNum/maxNum.
//! Operators need not be commutative: elements are always combined in index order. With
//! [`ScanOptions::deterministic`] float results are bitwise reproducible, and [`replica`]
//! computes them on the CPU.

pub mod accuracy;
pub mod apps;
pub mod bench;
pub mod cpu;
pub mod dispatch;
pub mod element;
pub mod error;
pub mod input;
pub mod io;
mod plot;
pub mod ptx;
pub mod replica;
mod runtime;
pub mod timeline;
pub mod verify;

pub use cudarc;
pub use dispatch::{temp_bytes, Algorithm, Propagation, ScanOptions, StatusOrdering, TempStorage, Trace, TraceStep};
pub use element::{ElemType, Element, Op, OpVisitor, ScanOp};
pub use error::{Error, Result};
pub use runtime::{driver_present, DeviceInfo, Gpu, PTX_ENV};
pub use scan_abi::block::BlockAlgo;
