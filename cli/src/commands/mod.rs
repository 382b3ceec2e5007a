//! The subcommands, one module each (two for closely related ones); each validates its
//! arguments before it opens the GPU, then runs `crate::experiment`.

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
pub mod timeline;
