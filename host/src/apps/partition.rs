//! One stable partition pass on the GPU (see `gpu/src/kernels/partition.rs`): count digits per
//! tile, scan the digit-major count matrix with our scan, scatter. Radix sort runs it once per
//! 8 bits of key; the histogram once, with bins as digits.

use crate::dispatch::{grid, ScanOptions, TempStorage};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};
pub use scan_abi::partition::Digit;
use scan_abi::partition::{count_smem, scatter_smem, THREADS, TILE};
use scan_abi::{names, Op};
use std::sync::Arc;

/// Device buffers a pass needs beyond its input and output: the count matrix and its scan.
pub struct PassBuffers {
    pub counts: CudaSlice<u32>,
    pub offsets: CudaSlice<u32>,
    pub temp: TempStorage,
}

impl PassBuffers {
    pub fn new(gpu: &Gpu, stream: &Arc<CudaStream>, n: u64, digit: Digit) -> Result<PassBuffers> {
        let entries = (n.div_ceil(TILE as u64) * digit.count() as u64) as usize;
        Ok(PassBuffers {
            counts: gpu.alloc_zeros(stream, "partition counts", entries.max(1))?,
            offsets: gpu.alloc_zeros(stream, "partition offsets", entries.max(1))?,
            temp: TempStorage::new(),
        })
    }
}

/// The largest input a pass handles: positions are 32-bit.
pub fn check_len(n: u64) -> Result<()> {
    if n >= u32::MAX as u64 {
        return Err(Error::invalid(format!("{n} elements: sorting and histogram permutations handle fewer than 2^32")));
    }
    Ok(())
}

/// Where to take values from in a pass.
pub enum Values<'a> {
    None,
    /// Carry these along.
    From(&'a CudaSlice<u32>),
    /// Write each element's input index.
    Indices,
}

/// Stably partitions `keys_in[..n]` by `digit` into `keys_out` (and values into `values_out`).
#[allow(clippy::too_many_arguments)]
pub fn pass<T: Element>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    keys_in: &CudaSlice<T>,
    values: Values<'_>,
    keys_out: &mut CudaSlice<T>,
    values_out: Option<&mut CudaSlice<u32>>,
    digit: Digit,
    bufs: &mut PassBuffers,
) -> Result<()> {
    let n = keys_in.len() as u64;
    if n == 0 {
        return Ok(());
    }
    let tiles = n.div_ceil(TILE as u64);
    let ty = T::TYPE.name();
    let count_name = format!("{}_{ty}", names::PARTITION_COUNT);
    let f = gpu.kernel(&count_name)?;
    let (k, _r) = keys_in.device_ptr(stream);
    {
        let (c, _w) = bufs.counts.device_ptr_mut(stream);
        let mut b = stream.launch_builder(&f);
        b.arg(&k).arg(&n).arg(&digit.mode).arg(&digit.shift).arg(&digit.bins).arg(&digit.lo).arg(&digit.hi).arg(&c);
        // SAFETY: arguments match partition_kernels! in gpu/; counts holds tiles × digits.
        unsafe { b.launch(grid(tiles, THREADS, count_smem(digit.count()))?) }
            .map_err(|e| Error::kernel(&count_name, e))?;
    }
    let opts = ScanOptions::new(Op::Add).exclusive(true);
    gpu.scan(stream, &bufs.counts, &mut bufs.offsets, &opts, &mut bufs.temp)?;

    let scatter_name = format!("{}_{ty}", names::PARTITION_SCATTER);
    let f = gpu.kernel(&scatter_name)?;
    let (vin, indices) = match values {
        Values::None => (0u64, 0u32),
        Values::From(v) => (v.device_ptr(stream).0, 0),
        Values::Indices => (0, 1),
    };
    let vout = values_out.map_or(0, |v| v.device_ptr_mut(stream).0);
    let (ko, _w) = keys_out.device_ptr_mut(stream);
    let (o, _ro) = bufs.offsets.device_ptr(stream);
    let mut b = stream.launch_builder(&f);
    b.arg(&k)
        .arg(&vin)
        .arg(&ko)
        .arg(&vout)
        .arg(&n)
        .arg(&digit.mode)
        .arg(&digit.shift)
        .arg(&digit.bins)
        .arg(&digit.lo)
        .arg(&digit.hi)
        .arg(&o)
        .arg(&indices);
    // SAFETY: arguments match partition_kernels! in gpu/; outputs hold n elements.
    unsafe { b.launch(grid(tiles, THREADS, scatter_smem(digit.count()))?) }
        .map_err(|e| Error::kernel(&scatter_name, e))?;
    Ok(())
}
