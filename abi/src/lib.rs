//! The contract between the host and the kernels.
//!
//! This crate is compiled twice: for nvptx64 as a dependency of the `gpu` crate, and for the host.
//! Everything both sides must agree on lives here exactly once: the element types and what their
//! operators compute (so the CPU reference reproduces the GPU's arithmetic), the kernel names and
//! argument flags, the tuning table (so the host plans grids and shared memory for the tile shapes
//! the kernels were compiled with), the shared-memory layouts and the tile-status words.
//!
//! Modules depend on each other in one direction: `element` <- `op` <- `kernel` <- `shape`,
//! `tuning` <- `smem`, `bounds`, `fingerprint`; `args`, `block`, `status`, `partition`, `timeline` and
//! `widening` are leaves.
#![no_std]

pub mod args;
pub mod block;
pub mod bounds;
pub mod element;
pub mod fingerprint;
pub mod kernel;
pub mod op;
pub mod partition;
pub mod shape;
pub mod smem;
pub mod status;
pub mod timeline;
pub mod tuning;
pub mod widening;

pub use element::{ElemType, Element, IntElement};
pub use kernel::{Family, Kernel};
pub use op::{Op, ScanOp};
pub use tuning::Tuning;
