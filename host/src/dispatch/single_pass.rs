//! Driver of the single-pass scan: one launch of one block per tile.

use super::{grid, kernel_flags, kernel_name, Job, StatusOrdering, TempStorage};
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::{DeviceRepr, PushKernelArg};
use scan_abi::{layout, names, status, tuning};

fn shape(elem_size: usize) -> tuning::TileShape {
    tuning::single_pass(tuning::DEFAULT_ARCH, elem_size)
}

pub(super) fn temp_bytes(elem_size: usize, n: u64) -> u64 {
    status::temp_bytes(n.div_ceil(shape(elem_size).tile() as u64), elem_size)
}

/// Whether the tile-in-shared-memory kernels run (4- and 8-byte elements, free-order look-back
/// only): as `tuning::single_pass_staged` says, unless `GPU_SCAN_STAGED` is `0` or `1`, which
/// lets one run measure both kinds.
pub(crate) fn staged(elem_size: usize, fixed: bool) -> bool {
    let chosen = match std::env::var("GPU_SCAN_STAGED").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => tuning::single_pass_staged(tuning::DEFAULT_ARCH, elem_size),
    };
    chosen && !fixed && matches!(elem_size, 4 | 8 | 16)
}

pub(super) fn run<T: Element>(job: &Job<'_, T>, temp: &mut TempStorage) -> Result<()> {
    let fixed = job.opts.deterministic && job.opts.op.order_sensitive(T::TYPE);
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
    let backoff = job.opts.backoff_ns.unwrap_or(tuning::lookback_backoff_ns(tuning::DEFAULT_ARCH, size));
    let cfg = grid(tiles, shape.threads, smem)?;
    let mut b = job.stream.launch_builder(&f);
    b.arg(&job.input)
        .arg(&job.output)
        .arg(&job.n)
        .arg(&init)
        .arg(&flags)
        .arg(&base)
        .arg(&counter_base)
        .arg(&epoch)
        .arg(&backoff);
    if let Some(r) = records.as_ref() {
        b.arg(r);
    }
    // SAFETY: the arguments match the kernel's signature (single_pass_kernel! in gpu/), the
    // buffers hold n elements and the temporary storage holds temp_bytes().
    unsafe { b.launch(cfg) }.map_err(|e| Error::kernel(name, e))?;
    Ok(())
}
