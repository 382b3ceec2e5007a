//! Driver of the single-pass scan: one launch of one block per tile.

use super::{grid, kernel_flags, kernel_name, Job, StatusOrdering, TempStorage};
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, DeviceRepr, DriverError, LaunchArgs, PushKernelArg};
use scan_abi::{layout, names, status, tuning};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

fn shape(elem_size: usize) -> tuning::TileShape {
    tuning::single_pass(tuning::DEFAULT_ARCH, elem_size)
}

/// Enough for either kernel: the pipelined one has smaller tiles.
pub(super) fn temp_bytes(elem_size: usize, n: u64) -> u64 {
    let tile = shape(elem_size).tile().min(tuning::pipeline(tuning::DEFAULT_ARCH, elem_size).tile());
    status::temp_bytes(n.div_ceil(tile as u64), elem_size)
}

/// Whether the tile-in-shared-memory kernels run (4- and 8-byte elements, free-order look-back
/// only): as `tuning::single_pass_staged` says, unless `GPU_SCAN_STAGED` is `0` or `1`, which
/// lets one run measure both kinds.
pub(crate) fn staged(elem_size: usize, fixed: bool) -> bool {
    let chosen = switch("GPU_SCAN_STAGED").unwrap_or(tuning::single_pass_staged(tuning::DEFAULT_ARCH, elem_size));
    chosen && !fixed && matches!(elem_size, 4 | 8 | 16)
}

/// A kernel choice from the environment, for measuring both kinds in one run: `Some(false)` when
/// `var` is `0`, `Some(true)` when it is `1`, otherwise none.
pub(crate) fn switch(var: &str) -> Option<bool> {
    match std::env::var(var).as_deref() {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    }
}

/// Whether a pipelined kernel runs for `job` (elements or maps of `T`): never with the fixed-order
/// look-back or unless input and output are 16-byte aligned; otherwise as `job.opts.pipelined` says, else as
/// `GPU_SCAN_PIPELINED=0|1` says (to measure both in one run), else `by_default` (the tuning
/// table's word for this case).
pub(crate) fn pipelined<T>(job: &Job<'_, T>, fixed: bool, by_default: bool) -> bool {
    let aligned = (job.input | job.output).is_multiple_of(tuning::VECTOR_BYTES as u64);
    let chosen = job.opts.pipelined.or_else(|| switch("GPU_SCAN_PIPELINED")).unwrap_or(by_default);
    chosen && !fixed && aligned
}

pub(super) fn run<T: Element>(job: &Job<'_, T>, temp: &mut TempStorage) -> Result<()> {
    let fixed = job.opts.deterministic && job.opts.op.order_sensitive(T::TYPE);
    let by_default = tuning::single_pass_pipelined(tuning::DEFAULT_ARCH, T::TYPE, job.opts.op, job.n);
    // The pipelined kernel's status accesses are relaxed only.
    let relaxed = job.opts.status_ordering == StatusOrdering::Relaxed;
    if relaxed && pipelined(job, fixed, by_default) {
        let init = job.opts.init.unwrap_or(T::identity(job.opts.op)?);
        let (name, p) = pipelined_kernel(job);
        return launch_pipelined(job, &name, p, init, None, temp);
    }
    let prefix = if fixed {
        names::SINGLE_PASS_DET
    } else if staged(T::TYPE.size(), fixed) {
        names::SINGLE_PASS_STAGED
    } else {
        names::SINGLE_PASS
    };
    let name = kernel_name(prefix, T::TYPE, job.opts.op);
    let init = job.opts.init.unwrap_or(T::identity(job.opts.op)?);
    launch(job, &name, prefix == names::SINGLE_PASS_STAGED, init, None, temp)
}

/// The arguments every single-pass-style kernel starts with (`single_pass_kernel!` and
/// `pipelined_kernel!` in gpu/), kept alive for the launch builder that borrows them.
struct ScanArgs<T> {
    input: u64,
    output: u64,
    n: u64,
    init: T,
    flags: u32,
    temp: u64,
    counter_base: u32,
    epoch: u32,
    backoff_ns: u32,
}

impl<T: DeviceRepr> ScanArgs<T> {
    fn new(job: &Job<'_, T>, init: T, flags: u32, temp: u64, counter_base: u32, epoch: u32) -> ScanArgs<T> {
        let size = std::mem::size_of::<T>();
        let backoff_ns = job.opts.backoff_ns.unwrap_or(tuning::lookback_backoff_ns(tuning::DEFAULT_ARCH, size));
        ScanArgs { input: job.input, output: job.output, n: job.n, init, flags, temp, counter_base, epoch, backoff_ns }
    }

    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        b.arg(&self.input)
            .arg(&self.output)
            .arg(&self.n)
            .arg(&self.init)
            .arg(&self.flags)
            .arg(&self.temp)
            .arg(&self.counter_base)
            .arg(&self.epoch)
            .arg(&self.backoff_ns);
    }
}

/// Launches the single-pass kernel `name` (any kernel stamped out by `single_pass_kernel!`, also
/// for operators outside [`scan_abi::Op`]) for `job`, with `init` as the initial value when
/// `job.opts.init` is set. `staged`: the kernel stages its tile in shared memory (its own tile
/// shape and shared memory). `records`: the per-tile records of the diagnostic timeline kernel,
/// its extra last argument.
pub(crate) fn launch<T: DeviceRepr + Copy>(
    job: &Job<'_, T>,
    name: &str,
    staged: bool,
    init: T,
    records: Option<u64>,
    temp: &mut TempStorage,
) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let f = job.gpu.kernel(name)?;
    let (shape, smem) = if staged {
        (
            tuning::single_pass_staged_shape(tuning::DEFAULT_ARCH, size),
            layout::single_pass_staged_smem(tuning::DEFAULT_ARCH, size),
        )
    } else {
        (shape(size), layout::single_pass_smem(tuning::DEFAULT_ARCH, size))
    };
    let (tiles, base, epoch, counter_base) = temp.tiles(job.gpu, job.stream, job.n, shape, size)?;
    let mut flags = kernel_flags(job.opts.exclusive, job.opts.init.is_some());
    if job.opts.status_ordering == StatusOrdering::AcquireRelease {
        flags |= scan_abi::flags::ACQ_REL_STATUS;
    }
    let args = ScanArgs::new(job, init, flags, base, counter_base, epoch);
    let cfg = grid(tiles, shape.threads, smem)?;
    let mut b = job.stream.launch_builder(&f);
    args.push(&mut b);
    if let Some(r) = records.as_ref() {
        b.arg(r);
    }
    // SAFETY: the arguments match the kernel's signature (single_pass_kernel! in gpu/), the
    // buffers hold n elements and the temporary storage holds temp_bytes().
    unsafe { b.launch(cfg) }.map_err(|e| Error::kernel(name, e))?;
    Ok(())
}

/// A tuning override from the environment (`GPU_SCAN_PIPE_*`, for measuring the pipelined
/// kernel's shape in one run): the variable's number, when it is set to one.
pub(crate) fn knob(var: &str) -> Option<u32> {
    std::env::var(var).ok().and_then(|v| v.parse().ok())
}

/// Dynamic shared memory a launch may take without asking for it.
const DEFAULT_DYNAMIC_SMEM: u32 = 48 * 1024;

/// Allows kernel `f` `smem` bytes of dynamic shared memory where that is more than a launch gets
/// without asking (48 KB), at every call (the allowance belongs to the loaded kernel); smaller
/// launches make no driver call.
pub(crate) fn allow_shared_memory(f: &CudaFunction, smem: u32) -> std::result::Result<(), DriverError> {
    if smem > DEFAULT_DYNAMIC_SMEM {
        f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)?;
    }
    Ok(())
}

/// How many blocks of `threads` with `smem` bytes of shared memory kernel `name` (`f`, on device
/// `ordinal`) fits on an SM, after allowing it that much shared memory
/// ([`allow_shared_memory`]). The driver is asked once per kernel and shape, so small scans pay
/// no more than a lookup.
pub(crate) fn blocks_per_sm(
    f: &CudaFunction,
    ordinal: usize,
    name: &str,
    threads: u32,
    smem: u32,
) -> std::result::Result<u32, DriverError> {
    /// (device, kernel, threads, shared memory) -> blocks per SM.
    type Known = Mutex<HashMap<(usize, String, u32, u32), u32>>;
    static KNOWN: OnceLock<Known> = OnceLock::new();
    allow_shared_memory(f, smem)?;
    let key = (ordinal, name.to_string(), threads, smem);
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(&b) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(b);
    }
    let b = f.occupancy_max_active_blocks_per_multiprocessor(threads, smem as usize, None)?;
    known.lock().unwrap_or_else(|e| e.into_inner()).insert(key, b);
    Ok(b)
}

/// The pipelined kernel for `job`'s type and operator and its shape (`tuning::pipeline_of`), or,
/// for measuring, the one with four scanning warps per reducing warp (`tuning::pipeline_split4`)
/// where `GPU_SCAN_PIPE_SPLIT=4` and that kernel exists.
fn pipelined_kernel<T: Element>(job: &Job<'_, T>) -> (String, tuning::Pipeline) {
    if knob("GPU_SCAN_PIPE_SPLIT") == Some(4) {
        let split4 = kernel_name(names::SINGLE_PASS_PIPELINED_SPLIT4, T::TYPE, job.opts.op);
        if job.gpu.kernel(&split4).is_ok() {
            return (split4, tuning::pipeline_split4(tuning::DEFAULT_ARCH, T::TYPE.size()));
        }
    }
    let p = tuning::pipeline_of(tuning::DEFAULT_ARCH, T::TYPE, job.opts.op);
    (kernel_name(names::SINGLE_PASS_PIPELINED, T::TYPE, job.opts.op), p)
}

/// The pipelined recurrence kernel `kernel` of maps of `size` bytes and its shape
/// (`tuning::pipeline_recurrence`), or its form `split4` with four scanning warps per reducing
/// warp where there is one and `GPU_SCAN_PIPE_SPLIT=4` (for measuring, as [`pipelined_kernel`]).
pub(crate) fn pipelined_recurrence(
    size: usize,
    kernel: &'static str,
    split4: Option<&'static str>,
) -> (&'static str, tuning::Pipeline) {
    match split4 {
        Some(k) if knob("GPU_SCAN_PIPE_SPLIT") == Some(4) => (k, tuning::pipeline_split4(tuning::DEFAULT_ARCH, size)),
        _ => (kernel, tuning::pipeline_recurrence(tuning::DEFAULT_ARCH, size)),
    }
}

/// A persistent grid for a pipelined kernel, ready to launch.
pub(crate) struct Persistent {
    pub f: CudaFunction,
    pub cfg: cudarc::driver::LaunchConfig,
    /// The tile state: pointer, epoch and counter base.
    pub base: u64,
    pub epoch: u32,
    pub counter_base: u32,
    pub stages: u32,
}

impl Persistent {
    /// Plans kernel `name` of shape `p` over `n` elements of `elem_size` bytes in rows of `cols`
    /// (`n`: one row; tiles never cross a row) whose tiles publish aggregates of `aggregate_size`
    /// bytes: as many blocks as fit on the GPU at once (at most one per tile), the tile state in
    /// `temp`. `GPU_SCAN_PIPE_STAGES` and `GPU_SCAN_PIPE_BLOCKS`
    /// (per SM) override the stages and the blocks, for measuring.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn plan(
        gpu: &crate::runtime::Gpu,
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
        name: &str,
        mut p: tuning::Pipeline,
        n: u64,
        cols: u64,
        elem_size: usize,
        aggregate_size: usize,
        temp: &mut TempStorage,
    ) -> Result<Persistent> {
        p.stages = knob("GPU_SCAN_PIPE_STAGES").unwrap_or(p.stages).max(1);
        let smem = layout::single_pass_pipelined_smem(p, elem_size, aggregate_size);
        let f = gpu.kernel(name)?;
        let fits =
            blocks_per_sm(&f, gpu.info().ordinal, name, p.threads(), smem).map_err(|e| Error::kernel(name, e))?;
        let per_sm = knob("GPU_SCAN_PIPE_BLOCKS").map_or(fits, |b| b.min(fits));
        if per_sm == 0 {
            return Err(Error::invalid(format!("{name} does not fit on an SM ({smem} bytes of shared memory)")));
        }
        let tiles = n.checked_div(cols).map_or(0, |rows| rows * cols.div_ceil(p.tile() as u64));
        let blocks = tiles.min(per_sm as u64 * gpu.info().multiprocessors as u64);
        // Every block's last claim finds no tile: the counter advances by tiles + blocks.
        let advance =
            u32::try_from(tiles + blocks).map_err(|_| Error::invalid(format!("{n} elements are too many tiles")))?;
        let (base, epoch, counter_base) =
            temp.single_pass(gpu, stream, status::temp_bytes(tiles, aggregate_size), advance)?;
        let cfg = grid(blocks, p.threads(), smem)?;
        Ok(Persistent { f, cfg, base, epoch, counter_base, stages: p.stages })
    }
}

/// Launches the pipelined kernel `name` of shape `p` (any kernel stamped out by
/// `pipelined_kernel!`; with `cols`, one of its `rows` form, `rows_pipelined_kernels!`, each row
/// of that many elements scanned on its own) for `job`, with `init` as the initial value (of every row)
/// when `job.opts.init` is set: a persistent grid ([`Persistent::plan`]), each block taking tiles
/// until none is left.
pub(crate) fn launch_pipelined<T: DeviceRepr + Copy>(
    job: &Job<'_, T>,
    name: &str,
    p: tuning::Pipeline,
    init: T,
    cols: Option<u64>,
    temp: &mut TempStorage,
) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let plan = Persistent::plan(job.gpu, job.stream, name, p, job.n, cols.unwrap_or(job.n), size, size, temp)?;
    let flags = kernel_flags(job.opts.exclusive, job.opts.init.is_some());
    let args = ScanArgs::new(job, init, flags, plan.base, plan.counter_base, plan.epoch);
    let (f, cfg) = (plan.f, plan.cfg);
    let mut b = job.stream.launch_builder(&f);
    args.push(&mut b);
    b.arg(&plan.stages);
    if let Some(cols) = &cols {
        b.arg(cols);
    }
    // SAFETY: the arguments match the kernel's signature (pipelined_kernel! or
    // rows_pipelined_kernels! in gpu/, which takes the row length last), the
    // buffers hold n elements, the temporary storage holds temp_bytes() for these tiles and the
    // shared memory the stages.
    unsafe { b.launch(cfg) }.map_err(|e| Error::kernel(name, e))?;
    Ok(())
}
