//! The contract between the host and the kernels.
//!
//! This crate is compiled twice: for nvptx64 as a dependency of the `gpu` crate, and for the host.
//! Everything both sides must agree on lives here exactly once: the element types and what their
//! operators compute (so the CPU reference reproduces the GPU's arithmetic), the tuning table (so
//! the host plans grids and shared memory for the tile shapes the kernels were compiled with),
//! the kernel names, the kernel flag bits and the tile-status word layout.
#![no_std]

pub mod block;
pub mod element;
pub mod layout;
pub mod names;
pub mod op;
pub mod partition;
pub mod status;
pub mod timeline;
pub mod tuning;

pub use element::{ElemType, Element, IntElement};
pub use layout::smem_window;
pub use op::{Op, ScanOp};

/// Which elements a compaction keeps (its `pred` argument).
pub mod predicate {
    /// `x > threshold` (false for NaN).
    pub const GREATER: u32 = 0;
    /// `x != 0` (for floats, `-0.0` counts as zero and NaN as non-zero).
    pub const NONZERO: u32 = 1;
    /// `flags[i] != 0`, from a separate array of bytes.
    pub const FLAGS: u32 = 2;
}

/// Bits of the `flags` argument every scan kernel takes.
pub mod flags {
    /// Write the exclusive scan (element i gets the combination of elements 0..i).
    pub const EXCLUSIVE: u32 = 1;
    /// Combine the `init` argument in front of the first element.
    pub const HAS_INIT: u32 = 2;
    /// Single-pass: publish and read tile-status words with release/acquire ordering instead of
    /// relaxed atomics (see `status`).
    pub const ACQ_REL_STATUS: u32 = 4;
}
