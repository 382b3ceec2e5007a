//! Carrying out a partition plan (`partition_kernels!` in gpu/) and the CSR helpers.

use super::scan::{self, Operands};
use super::{go, ready};
use crate::error::Result;
use crate::plan::partition::PartitionPlan;
use crate::plan::Launch;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};
use scan_abi::partition::Digit;
use std::sync::Arc;

/// A partition pass's buffers: keys in and out, values in and out (0 for none; `indices` writes
/// each element's input index instead), the count matrix and its scan.
pub(crate) struct Buffers {
    pub keys: u64,
    pub values: u64,
    pub indices: bool,
    pub keys_out: u64,
    pub values_out: u64,
    pub counts: u64,
    pub offsets: u64,
    pub n: u64,
}

pub(crate) fn run(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &PartitionPlan,
    digit: &Digit,
    bufs: &Buffers,
    temp: &mut TempStorage,
) -> Result<()> {
    let r = ready(gpu, &plan.count)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&bufs.keys).arg(&bufs.n).arg(&digit.mode).arg(&digit.shift).arg(&digit.bins).arg(&digit.lo).arg(&digit.hi);
    b.arg(&bufs.counts);
    // SAFETY: matches partition_kernels! in gpu/; counts holds tiles × digits entries.
    unsafe { go(&mut b, &r) }?;
    let counts = Operands { input: bufs.counts, output: bufs.offsets, n: plan.entries, init: 0u32, identity: 0u32 };
    scan::run(gpu, stream, &plan.scan, counts, temp)?;
    let r = ready(gpu, &plan.scatter)?;
    let indices = bufs.indices as u32;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&bufs.keys).arg(&bufs.values).arg(&bufs.keys_out).arg(&bufs.values_out).arg(&bufs.n);
    b.arg(&digit.mode)
        .arg(&digit.shift)
        .arg(&digit.bins)
        .arg(&digit.lo)
        .arg(&digit.hi)
        .arg(&bufs.offsets)
        .arg(&indices);
    // SAFETY: matches partition_kernels! in gpu/; the outputs hold n elements, the offsets the
    // scanned count matrix.
    unsafe { go(&mut b, &r) }
}

/// The histogram's bin counts (`histogram_counts_<t>`) of the `n` elements at `keys`, added to
/// the `digit.count()` zeroed words at `counts`.
pub(crate) fn histogram_counts(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    launch: &Launch,
    digit: &Digit,
    (keys, n, counts): (u64, u64, u64),
) -> Result<()> {
    let r = ready(gpu, launch)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&keys).arg(&n).arg(&digit.bins).arg(&digit.lo).arg(&digit.hi).arg(&counts);
    // SAFETY: matches partition_kernels! in gpu/; keys holds n elements of the kernel's type,
    // counts digit.count() words.
    unsafe { go(&mut b, &r) }
}

/// A CSR helper (`csr_count_u32`, `csr_heads_u32`): `(input, a, b, output)`.
pub(crate) fn helper<A: DeviceRepr, B: DeviceRepr>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    launch: &Launch,
    (input, a, b, output): (u64, A, B, u64),
) -> Result<()> {
    let r = ready(gpu, launch)?;
    let mut args = stream.launch_builder(&r.f);
    args.arg(&input).arg(&a).arg(&b).arg(&output);
    // SAFETY: the callers pass csr_count_u32's (rows, nnz: u64, nrows: u32, counts of nrows + 1)
    // and csr_heads_u32's (offsets, nrows: u32, nnz: u64, heads of nnz) in gpu/.
    unsafe { go(&mut args, &r) }
}
