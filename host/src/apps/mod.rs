//! What scans are for, each a method of [`crate::Gpu`] with one options struct: stream
//! compaction, radix sort, histograms with their counting-sort permutation, COO <-> CSR,
//! segmented and batched scans, and the linear recurrence. Each plans (`crate::plan`), then
//! launches (`crate::launch`); the CPU references are in `crate::reference::apps`.

pub mod batched;
pub mod compact;
pub mod csr;
pub mod histogram;
pub mod partition;
pub mod recurrence;
pub mod segmented;
pub mod sort;
