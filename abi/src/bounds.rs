//! Which kernels a [`Tuning`]'s launch-bound, spill and fit rules name, and each kernel's threads
//! per block (what a launch bound is stated for).

use crate::kernel::{Family, Kernel};
use crate::op::Op;
use crate::tuning::{Rule, Shapes, Tuning};

/// Threads per block of `kernel`, or `None` where the launch decides (a traced scan).
pub fn block_threads(shapes: &Shapes, kernel: Kernel) -> Option<u32> {
    use Family::*;
    let s = shapes;
    let size = kernel.ty.size();
    // The recurrences scan maps of two floats.
    let map = 2 * size;
    let op = kernel.op.unwrap_or(Op::Add);
    Some(match kernel.family {
        Naive => s.naive_threads,
        SinglePass | SinglePassDet | SinglePassTimeline | Widening(_) | WideningDet(_) | Segmented
        | BatchedLongRows => s.single_pass.at(size).threads,
        SinglePassStaged => s.staged.at(size).threads,
        SinglePassPipelined | SinglePassPipelinedDet | BatchedRowsPipelined => {
            s.scan_pipeline_of(kernel.ty, op).threads()
        }
        WideningPipelined(src) => s.widening_pipeline_of(src.size(), kernel.ty).threads(),
        HierTile(_) | HierReduce | HierAdd => s.hierarchical.threads,
        Trace(_) => return None,
        Compact => s.compact.at(size).threads,
        Positions => s.compact.at(1).threads,
        CompactPipelined => s.compact_pipeline.at(size).threads(),
        SegmentedPipelined(_) => s.segmented_pipeline.at(size).threads(),
        PartitionCount | PartitionScatter | HistogramCounts => s.partition.threads,
        SortCounts => s.sort_counts.at(size).threads,
        SortPass => s.sort_pass(size, false).threads,
        SortPassValues => s.sort_pass(size, true).threads,
        CsrCount | CsrHeads | SegmentedHeads | SegmentedKeyHeads | SortFlip | KeptFlags => s.helper_threads,
        Recurrence => s.single_pass.at(map).threads,
        RecurrenceStaged => s.staged.at(map).threads,
        RecurrencePipelined => s.recurrence_pipeline.at(map).threads(),
        BatchedColumns => s.columns.at(size).threads,
        BatchedColumnVectors => s.column_vectors.threads,
        BatchedColumnsVec | BatchedColumnsVecW4 => s.columns_vec.threads,
        BatchedColumnsBulk => s.columns_bulk_threads,
        BatchedColumnsPipelined => s.columns_pipeline.at(size).threads(),
        BatchedColumnsPipelined16 => s.columns16_pipeline.at(size).threads(),
        BatchedRows | BatchedShortRows => s.rows.at(size).threads,
    })
}

/// Every kernel one of `rules` names: (kernel, threads per block, the rule's value).
pub fn expand<'a>(rules: &'a [Rule], shapes: &'a Shapes) -> impl Iterator<Item = (Kernel, u32, u32)> + 'a {
    Kernel::all().filter_map(move |k| {
        let rule = rules.iter().find(|r| r.covers(k))?;
        Some((k, block_threads(shapes, k)?, rule.value))
    })
}

/// Every bounded kernel of `tuning`: (kernel, threads per block, blocks per SM).
pub fn bounded_kernels(tuning: &Tuning) -> impl Iterator<Item = (Kernel, u32, u32)> + '_ {
    expand(tuning.launch_bounds, &tuning.shapes)
}

/// The local memory ptxas may report for `kernel` under `tuning` (0 for most).
pub fn allowed_spill_bytes(tuning: &Tuning, kernel: Kernel) -> u32 {
    tuning.spills.iter().find(|r| r.covers(kernel)).map_or(0, |r| r.value)
}

/// Writes `ptx` to `out` with launch bounds (`.maxntid`, `.minnctapersm`) in every kernel for
/// which `bound(name)` gives (threads per block, blocks per SM). rustc's nvptx backend cannot
/// declare them, and they are what makes ptxas cap a kernel's registers for a target occupancy.
pub fn insert(
    ptx: &str,
    bound: impl Fn(&str) -> Option<(u32, u32)>,
    out: &mut impl core::fmt::Write,
) -> core::fmt::Result {
    let mut pending = None;
    for line in ptx.lines() {
        if let Some(rest) = line.strip_prefix(".visible .entry ") {
            pending = bound(rest.split('(').next().unwrap_or(rest));
        }
        if line.trim() == "{" {
            if let Some((threads, blocks)) = pending.take() {
                writeln!(out, ".maxntid {threads}, 1, 1\n.minnctapersm {blocks}")?;
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
