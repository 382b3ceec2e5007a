//! The subcommands, one module each (two for closely related ones); each checks its arguments
//! and output paths and plans its request with the tuning in force, says what memory the run
//! needs, and hands the making of its input to `crate::experiment`, which checks that memory
//! before it opens the GPU and makes the input after.

pub mod accuracy;
pub mod bench;
pub mod compact;
pub mod csr;
pub mod multi;
pub mod recurrence;
pub mod report;
pub mod scan;
pub mod segmented;
pub mod sort;
pub mod streamed;
pub mod timeline;
pub mod widening;
