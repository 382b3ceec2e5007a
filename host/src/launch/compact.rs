//! Carrying out a compaction plan (`compact_kernels!`, `compact_pipe_kernels!` in gpu/).

use super::{go, pipe, ready, state, ByValue};
use crate::error::Result;
use crate::plan::compact::CompactPlan;
use crate::plan::Launch;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};
use scan_abi::args::CompactArgs;
use std::sync::Arc;

/// The compaction's operands: input, flags (0 for none), output, and how many elements.
pub(crate) struct Operands<T> {
    pub input: u64,
    pub flags: u64,
    pub output: u64,
    pub n: u64,
    pub pred: u32,
    pub threshold: T,
}

/// Sets `flags[i]` to whether `input[i]` satisfies `pred` (with `threshold`), for `n` elements.
#[allow(clippy::too_many_arguments)]
pub(crate) fn kept_flags<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    launch: &Launch,
    input: u64,
    n: u64,
    pred: u32,
    threshold: T,
    flags: u64,
) -> Result<()> {
    let r = ready(gpu, launch)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&input).arg(&n).arg(&pred).arg(&threshold).arg(&flags);
    // SAFETY: matches kept_flags_kernels! in gpu/; input holds n elements of the kernel's type,
    // flags n bytes.
    unsafe { go(&mut b, &r) }
}

/// Carries out `plan`; the count of kept elements goes to the first 8 bytes of `temp`'s scratch.
pub(crate) fn run<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &CompactPlan,
    ops: Operands<T>,
    temp: &mut TempStorage,
) -> Result<()> {
    let r = ready(gpu, &plan.launch)?;
    let s = state(gpu, stream, temp, &plan.state, &r)?;
    let count = temp.scratch(gpu, stream, 8)?;
    let args = plan.stages.map(|stages| {
        let (n, pred, threshold) = (ops.n, ops.pred, ops.threshold);
        ByValue(CompactArgs { n, pred, pipe: pipe(&s, 0, stages), threshold })
    });
    let mut b = stream.launch_builder(&r.f);
    b.arg(&ops.input).arg(&ops.flags).arg(&ops.output).arg(&count);
    match &args {
        Some(args) => {
            b.arg(&s.ptr).arg(args);
        }
        None => {
            b.arg(&ops.n).arg(&ops.pred).arg(&ops.threshold).arg(&s.ptr).arg(&s.counter_base).arg(&s.epoch);
        }
    }
    // SAFETY: the arguments match compact_kernels! (or, with the stages, the buffers and
    // `CompactArgs` of compact_pipe_kernels!) in gpu/; input, flags and output hold n elements, the
    // tile state what the plan sized, the count 8 bytes; the pipelined kernel's input is on a
    // 16-byte boundary (the planner checked).
    temp.poison_on_error(unsafe { go(&mut b, &r) })
}
