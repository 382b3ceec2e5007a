//! Carrying out scan plans: single-pass launches (also of the recurrences and the timeline
//! kernel), the hierarchical strategy's steps, and the naive kernel.

use super::{go, pipe, ready, state, ByValue};
use crate::error::Result;
use crate::plan::scan::{Buf, HierStep, ScanPlan, SinglePass};
use crate::runtime::Gpu;
use crate::temp::{State, TempStorage};
use cudarc::driver::result::memcpy_dtod_async;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};
use scan_abi::args::ScanArgs;
use scan_abi::kernel::flags::{HAS_INIT, INIT_FROM_TEMP};
use scan_abi::status::{word_bytes, COUNTER_BYTES, INIT_OFFSET};
use std::mem::size_of;
use std::sync::Arc;

/// Raw device pointers and the initial value of one scan: `init` goes in front when the plan's
/// flags ask for it, `identity` everywhere else.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operands<T> {
    pub input: u64,
    pub output: u64,
    pub n: u64,
    pub init: T,
    pub identity: T,
}

/// Carries out `plan`.
pub(crate) fn run<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &ScanPlan,
    ops: Operands<T>,
    temp: &mut TempStorage,
) -> Result<()> {
    let r = match plan {
        ScanPlan::Empty => Ok(()),
        ScanPlan::SinglePass(s) => single_pass(gpu, stream, s, ops, None, temp),
        ScanPlan::Hierarchical(h) => {
            let scratch = temp.scratch(gpu, stream, h.scratch_bytes)?;
            hier_steps(gpu, stream, &h.steps, &ops, scratch)
        }
        ScanPlan::Naive { launch, flags } => {
            let r = ready(gpu, launch)?;
            let init = if flags & HAS_INIT != 0 { ops.init } else { ops.identity };
            let mut b = stream.launch_builder(&r.f);
            b.arg(&ops.input).arg(&ops.output).arg(&ops.n).arg(&init).arg(flags);
            // SAFETY: matches naive_kernels! in gpu/; both buffers hold n elements.
            unsafe { go(&mut b, &r) }
        }
    };
    temp.poison_on_error(r)
}

/// One single-pass-style launch (`single_pass_kernel!`, `pipelined_kernel!` in gpu/) over
/// `ops.n` values, with `extra` as the kernel's last argument where it takes one more (the row
/// length of `batched_rows_pipe`, the records of the timeline kernel).
pub(crate) fn single_pass<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &SinglePass,
    ops: Operands<T>,
    extra: Option<u64>,
    temp: &mut TempStorage,
) -> Result<()> {
    launch_single_pass(gpu, stream, plan, ops, extra, None, temp).map(drop)
}

/// [`single_pass`] with the initial value read by the kernel from device memory: the `T` at
/// `init_at` is copied into the tile counter's line (`status::INIT_OFFSET`) and the launch's
/// flags gain `HAS_INIT | INIT_FROM_TEMP`, so the value never passes through the host.
pub(crate) fn single_pass_init_from<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &SinglePass,
    ops: Operands<T>,
    init_at: u64,
    temp: &mut TempStorage,
) -> Result<()> {
    launch_single_pass(gpu, stream, plan, ops, None, Some(init_at), temp).map(drop)
}

/// [`single_pass`] (from the `T` at `init_at` when given, as [`single_pass_init_from`]), then the
/// inclusive prefix of the scan's last tile, which its status word holds once the launch is done,
/// copied to `carry_to`: the value a scan of what follows starts from. For an exclusive scan it
/// is the last output combined with the last input; for the deterministic order it is the
/// in-memory scan's running prefix, so a chunk that ends on a tile boundary continues it exactly.
pub(crate) fn single_pass_carrying<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &SinglePass,
    ops: Operands<T>,
    init_at: Option<u64>,
    carry_to: u64,
    temp: &mut TempStorage,
) -> Result<()> {
    let s = launch_single_pass(gpu, stream, plan, ops, None, init_at, temp)?;
    let last = plan.state.slots.saturating_sub(1);
    let at = s.ptr + COUNTER_BYTES as u64 + last * word_bytes(plan.state.value_bytes) as u64;
    // Values of up to 8 bytes lead their word; wider ones take 8 bytes from each 16-byte word.
    let size = size_of::<T>();
    let pieces = if size <= 8 { vec![(0, 0, size)] } else { (0..size / 8).map(|k| (8 * k, 16 * k, 8)).collect() };
    for (to, from, bytes) in pieces {
        // SAFETY: `at` is the last tile's word(s) in the state the launch used, laid out as
        // `scan_abi::status` says; `carry_to` holds a T (the caller's contract).
        unsafe { memcpy_dtod_async(carry_to + to as u64, at + from as u64, bytes, stream.cu_stream()) }?;
    }
    Ok(())
}

fn launch_single_pass<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &SinglePass,
    ops: Operands<T>,
    extra: Option<u64>,
    init_at: Option<u64>,
    temp: &mut TempStorage,
) -> Result<State> {
    let r = ready(gpu, &plan.launch)?;
    let s = state(gpu, stream, temp, &plan.state, &r)?;
    let mut flags = plan.flags;
    if let Some(at) = init_at {
        const { assert!(size_of::<T>() <= COUNTER_BYTES - INIT_OFFSET) };
        // SAFETY: `at` holds a T (the caller's contract) and the tile state starts with the
        // counter's line, whose bytes from INIT_OFFSET the kernels leave alone.
        unsafe { memcpy_dtod_async(s.ptr + INIT_OFFSET as u64, at, size_of::<T>(), stream.cu_stream()) }?;
        flags |= HAS_INIT | INIT_FROM_TEMP;
    }
    let init = if flags & HAS_INIT != 0 { ops.init } else { ops.identity };
    let args = plan.stages.map(|stages| {
        let n = ops.n;
        let row = extra.unwrap_or(n);
        ByValue(ScanArgs { n, row, flags, pipe: pipe(&s, plan.backoff_ns, stages), init })
    });
    let mut b = stream.launch_builder(&r.f);
    b.arg(&ops.input).arg(&ops.output);
    match &args {
        Some(args) => {
            b.arg(&s.ptr).arg(args);
        }
        None => {
            b.arg(&ops.n).arg(&init).arg(&flags);
            b.arg(&s.ptr).arg(&s.counter_base).arg(&s.epoch).arg(&plan.backoff_ns);
            if let Some(extra) = &extra {
                b.arg(extra);
            }
        }
    }
    // SAFETY: the arguments match single_pass_kernel! (or the timeline kernel with the extra
    // argument) in gpu/, or, with the stages, the buffers and `ScanArgs` of pipelined_kernel! (the
    // row length its `rows` form reads) and of the pipelined widening kernels; the buffers hold n
    // values, the tile state what the plan sized, the shared memory what the plan computed.
    temp.poison_on_error(unsafe { go(&mut b, &r) })?;
    Ok(s)
}

/// Carries out hierarchical `steps` (with `scratch` the device address of their scratch space).
pub(crate) fn hier_steps<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    steps: &[HierStep],
    ops: &Operands<T>,
    scratch: u64,
) -> Result<()> {
    steps.iter().try_for_each(|step| hier_step(gpu, stream, step, ops, scratch))
}

fn hier_step<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    step: &HierStep,
    ops: &Operands<T>,
    scratch: u64,
) -> Result<()> {
    let at = |buf: Buf| match buf {
        Buf::Input => ops.input,
        Buf::Output => ops.output,
        Buf::Scratch(offset) => scratch + offset,
    };
    let null = 0u64;
    match *step {
        HierStep::TileScan { launch, input, output, n, offsets, sums, flags } => {
            let r = ready(gpu, &launch)?;
            let init = if flags & HAS_INIT != 0 { ops.init } else { ops.identity };
            let (i, o) = (at(input), at(output));
            let (offsets, sums) = (offsets.map_or(null, at), sums.map_or(null, at));
            let mut b = stream.launch_builder(&r.f);
            b.arg(&i).arg(&o).arg(&n).arg(&offsets).arg(&sums).arg(&init).arg(&flags);
            // SAFETY: matches hierarchical_kernels! in gpu/; offsets and sums (when not null) hold
            // one element per tile, in scratch the plan sized.
            unsafe { go(&mut b, &r) }
        }
        HierStep::Reduce { launch, input, n, sums } => {
            let r = ready(gpu, &launch)?;
            let (i, sums) = (at(input), at(sums));
            let mut b = stream.launch_builder(&r.f);
            b.arg(&i).arg(&n).arg(&sums);
            // SAFETY: matches hierarchical_kernels!; sums holds one element per tile.
            unsafe { go(&mut b, &r) }
        }
        HierStep::Add { launch, output, n, offsets } => {
            let r = ready(gpu, &launch)?;
            let (o, offsets) = (at(output), at(offsets));
            let mut b = stream.launch_builder(&r.f);
            b.arg(&o).arg(&n).arg(&offsets);
            // SAFETY: matches hierarchical_kernels!; offsets holds one element per tile.
            unsafe { go(&mut b, &r) }
        }
    }
}

/// The buffers of a traced scan: input, output (exclusive then inclusive), states, their phases
/// and strides, and the count of rounds recorded.
pub(crate) struct TraceBuffers {
    pub input: u64,
    pub output: u64,
    pub states: u64,
    pub meta: u64,
    pub rounds: u64,
}

/// Launches a traced scan (`trace_kernels!` in gpu/).
pub(crate) fn trace(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    launch: &crate::plan::Launch,
    bufs: &TraceBuffers,
) -> Result<()> {
    let r = ready(gpu, launch)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&bufs.input).arg(&bufs.output).arg(&bufs.states).arg(&bufs.meta).arg(&bufs.rounds);
    // SAFETY: matches trace_kernels! in gpu/, the buffers sized for the algorithm's rounds of
    // states (`BlockAlgo::trace_rounds` × `trace_width`).
    unsafe { go(&mut b, &r) }
}
