//! What scans are for, built on the scan kernels and their tile machinery: stream compaction,
//! radix sort and histograms (through a stable partition pass), COO ↔ CSR conversion, and
//! segmented and batched scans, and the linear recurrence.

pub mod batched;
pub mod compact;
pub mod csr;
pub mod histogram;
pub mod partition;
pub mod recurrence;
pub mod segmented;
pub mod sort;
