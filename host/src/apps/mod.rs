//! What scans are for, built on the scan kernels and their tile machinery: stream compaction,
//! histograms with counting-sort permutations, CSR row offsets and lecture demos.

pub mod compact;
