//! The single-pass scan as a pipeline of warp roles in a persistent block, after CUB's
//! warp-specialized scan for sm_100.
//!
//! In the one-tile-per-block kernel ([`crate::kernels::single_pass`]) a tile's 256 threads wait
//! at a barrier while one warp looks back, and the block holds its tile until then, so the
//! loads in flight stop with it. Here a block keeps `stages` tiles in shared memory and splits
//! the work by warp:
//! - the *load* warp claims the next tile from the counter as soon as a stage is free and has the
//!   bulk-copy engine bring it in (one instruction per tile);
//! - the *reduce* warps reduce each tile as soon as it has landed and publish its aggregate, so a
//!   tile's aggregate never waits on an older tile's look-back;
//! - the *look-back* warp finds each tile's exclusive prefix, tile after tile;
//! - the *scan* warps scan each tile from its prefix and store it, then free its stage.
//!
//! Roles hand stages to each other through shared-memory barrier objects (`arch::mbar_*`), four
//! per stage: full (the copy landed), reduced, ready (prefix known), empty. A claimed tile always
//! has a stage and its copy in flight, and its aggregate depends on nothing but its data, so
//! every look-back ends whatever the scheduling.
//!
//! One launch may scan many rows, each on its own (the batched scan along few long rows): tiles
//! never cross a row, and each row's first tile publishes its inclusive prefix at once, so the
//! look-backs of a row stop at its start.
//!
//! The layering: `work.rs`, what a kernel does with a tile ([`TileWork`]); `driver.rs`, the ring
//! of stages and the warp roles; `scan.rs` and `columns.rs`, the scans' work;
//! `entries.rs`, the kernels.

mod columns;
mod driver;
mod entries;
mod scan;
mod work;

pub use columns::{columns_pipelined, Columns};
pub use driver::pipeline;
pub use scan::{single_pass_pipelined, Scan};
pub use work::{blocked, store_share, striped, TileWork};

