//! Driver of the naive O(n²) scan.

use super::{grid, kernel_flags, kernel_name, Job};
use crate::element::Element;
use crate::error::{Error, Result};
use cudarc::driver::PushKernelArg;
use scan_abi::{names, tuning};

pub(super) fn run<T: Element>(job: &Job<'_, T>) -> Result<()> {
    if job.n > tuning::NAIVE_MAX_N {
        return Err(Error::invalid(format!(
            "the naive O(n^2) scan is limited to n <= {} (about {:.1e} element reads there); \
             n = {} would take about {:.0}x as long: use --algo single-pass or hierarchical",
            tuning::NAIVE_MAX_N,
            (tuning::NAIVE_MAX_N as f64).powi(2) / 2.0,
            job.n,
            (job.n as f64 / tuning::NAIVE_MAX_N as f64).powi(2)
        )));
    }
    if job.input == job.output {
        return Err(Error::invalid("the naive scan cannot run in place (every thread reads the whole prefix)"));
    }
    let name = kernel_name(names::NAIVE, T::TYPE, job.opts.op);
    let f = job.gpu.kernel(&name)?;
    let init = job.opts.init.unwrap_or(T::identity(job.opts.op)?);
    let flags = kernel_flags(job.opts.exclusive, job.opts.init.is_some());
    let cfg = grid(job.n.div_ceil(tuning::NAIVE_THREADS as u64), tuning::NAIVE_THREADS, 0)?;
    let mut b = job.stream.launch_builder(&f);
    b.arg(&job.input).arg(&job.output).arg(&job.n).arg(&init).arg(&flags);
    // SAFETY: the arguments match naive_kernels! in gpu/; both buffers hold n elements.
    unsafe { b.launch(cfg) }.map_err(|e| Error::kernel(&name, e))?;
    Ok(())
}
