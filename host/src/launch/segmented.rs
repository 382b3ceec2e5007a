//! Carrying out a segmented-scan plan (`segmented_kernels!`, `segmented_pipe_kernels!` in gpu/).

use super::{go, pipe, ready, state, ByValue};
use crate::error::Result;
use crate::plan::segmented::SegmentedPlan;
use crate::plan::Launch;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, PushKernelArg};
use scan_abi::args::SegmentedArgs;
use std::sync::Arc;

/// Carries out `plan` over `n` elements; segments start where `marks` (one entry per element:
/// head flags, or keys where the plan says) says, or, with `marks` 0, at every multiple of
/// `seg_len`. Keys the scan does not read itself become head flags in `n` bytes of scratch first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &SegmentedPlan,
    (input, output, n): (u64, u64, u64),
    (marks, seg_len): (u64, u64),
    temp: &mut TempStorage,
) -> Result<()> {
    let marks = match &plan.key_heads {
        Some(launch) => {
            let heads = temp.scratch(gpu, stream, n)?;
            key_heads(gpu, stream, launch, marks, n, heads)?;
            heads
        }
        None => marks,
    };
    let r = ready(gpu, &plan.launch)?;
    let s = state(gpu, stream, temp, &plan.state, &r)?;
    let args = plan.pipelined.map(|(backoff_ns, stages)| {
        ByValue(SegmentedArgs { n, flags: plan.flags, pipe: pipe(&s, backoff_ns, stages) })
    });
    let mut b = stream.launch_builder(&r.f);
    match &args {
        Some(args) => {
            b.arg(&input).arg(&marks).arg(&output).arg(&s.ptr).arg(args);
        }
        None => {
            b.arg(&input).arg(&marks).arg(&seg_len).arg(&output).arg(&n).arg(&plan.flags);
            b.arg(&s.ptr).arg(&s.counter_base).arg(&s.epoch);
        }
    }
    // SAFETY: matches segmented_kernels! (or, pipelined, the buffers and `SegmentedArgs` of
    // segmented_pipe_kernels!) in gpu/; input, output and the marks hold n elements (the marks of the kernel's entry type: flags,
    // or keys of 4 or 8 bytes for the pipelined kernel of keys), the tile state what the plan
    // sized.
    temp.poison_on_error(unsafe { go(&mut b, &r) })
}

/// Marks `heads[offsets[s]] = 1` for each of `count` offsets below `n`.
pub(crate) fn heads(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    launch: &Launch,
    (offsets, count): (u64, u64),
    n: u64,
    heads: u64,
) -> Result<()> {
    let r = ready(gpu, launch)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&offsets).arg(&count).arg(&n).arg(&heads);
    // SAFETY: matches segmented_heads_u64 in gpu/; heads holds n bytes, offsets count entries.
    unsafe { go(&mut b, &r) }
}

/// Marks `heads[i] = 1` where key `i` differs from key `i - 1` (and at 0), 0 elsewhere.
fn key_heads(gpu: &Gpu, stream: &Arc<CudaStream>, launch: &Launch, keys: u64, n: u64, heads: u64) -> Result<()> {
    let r = ready(gpu, launch)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&keys).arg(&n).arg(&heads);
    // SAFETY: matches segmented_key_heads_* in gpu/; keys hold n keys of the kernel's type, heads
    // n bytes.
    unsafe { go(&mut b, &r) }
}
