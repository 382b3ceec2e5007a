//! LSD radix sort: stable, 8 bits per pass (4 passes for 32-bit keys, 8 for 64-bit). Each pass
//! is one sweep: a stable partition whose digit offsets come from the single-pass scan's
//! decoupled look-back over the tiles' digit counts, one digit per thread. Keys are ordered by
//! their `order_key` (floats: `-0.0` before `+0.0`, NaNs last); u32 values ride along.

use super::partition::check_len;
use crate::dispatch::{grid, TempStorage};
use crate::element::{ElemType, Element};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};
use rayon::prelude::*;
use scan_abi::partition::RADIX_BITS;
use scan_abi::{layout, names, status, tuning};
use std::sync::Arc;

/// Key types the sort handles.
pub const KEY_TYPES: [ElemType; 6] =
    [ElemType::U32, ElemType::I32, ElemType::U64, ElemType::I64, ElemType::F32, ElemType::F64];

/// The CPU reference: a stable sort by `order_key`, values alongside.
pub fn reference<T: Element>(keys: &[T], values: Option<&[u32]>) -> (Vec<T>, Option<Vec<u32>>) {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.par_sort_by_key(|&i| keys[i].order_key());
    (idx.iter().map(|&i| keys[i]).collect(), values.map(|v| idx.iter().map(|&i| v[i]).collect()))
}

/// The device memory a sort works in besides its keys and values: the second key and value
/// buffers the passes alternate with, every pass's digit counts, and the tile state. Reused
/// across calls (grown when a call needs more), so repeated sorts allocate nothing.
#[derive(Default)]
pub struct SortBuffers<T> {
    keys: Option<CudaSlice<T>>,
    values: Option<CudaSlice<u32>>,
    counts: Option<CudaSlice<u32>>,
    temp: TempStorage,
}

impl<T: Element> SortBuffers<T> {
    pub fn new() -> SortBuffers<T> {
        SortBuffers { keys: None, values: None, counts: None, temp: TempStorage::new() }
    }
}

/// `slot`, (re)allocated when it holds fewer than `len` items.
fn at_least<'a, U: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    slot: &'a mut Option<CudaSlice<U>>,
    what: &str,
    len: usize,
) -> Result<&'a mut CudaSlice<U>> {
    if slot.as_ref().is_none_or(|b| b.len() < len) {
        *slot = None;
        *slot = Some(gpu.alloc_zeros::<U>(stream, what, len)?);
    }
    Ok(slot.as_mut().expect("allocated above"))
}

impl Gpu {
    /// Sorts `keys` (and `values` with them, when given; as long as `keys`) on `stream`.
    pub fn sort<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut CudaSlice<T>,
        values: Option<&mut CudaSlice<u32>>,
    ) -> Result<()> {
        self.sort_with(stream, keys, values, &mut SortBuffers::new())
    }

    /// [`Gpu::sort`] in the memory of `bufs`, kept for the next call.
    ///
    /// One read of the keys counts every pass's digits; then each pass moves the keys once (see
    /// `gpu/src/kernels/onesweep.rs`): 1 + passes launches, no host round trip.
    pub fn sort_with<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut CudaSlice<T>,
        values: Option<&mut CudaSlice<u32>>,
        bufs: &mut SortBuffers<T>,
    ) -> Result<()> {
        if !KEY_TYPES.contains(&T::TYPE) {
            return Err(Error::invalid(format!(
                "sort keys of type {} are not supported (u32, i32, u64, i64, f32, f64)",
                T::TYPE.name()
            )));
        }
        let n = keys.len() as u64;
        check_len(n)?;
        if values.as_ref().is_some_and(|v| v.len() != keys.len()) {
            return Err(Error::invalid("the values must be as many as the keys"));
        }
        if n <= 1 {
            return Ok(());
        }
        let size = T::TYPE.size();
        let passes = 8 * size as u32 / RADIX_BITS;
        let digits = 1usize << RADIX_BITS;
        let alt_keys = at_least(self, stream, &mut bufs.keys, "sort buffer", n as usize)?;
        let alt_values = match values {
            Some(_) => Some(at_least(self, stream, &mut bufs.values, "sort value buffer", n as usize)?),
            None => None,
        };
        let counts = at_least(self, stream, &mut bufs.counts, "digit counts", passes as usize * digits)?;
        stream.memset_zeros(counts)?;
        let name = format!("{}_{}", names::SORT_COUNTS, T::TYPE.name());
        let f = self.kernel(&name)?;
        let (a, _ra) = keys.device_ptr_mut(stream);
        let (b, _rb) = alt_keys.device_ptr_mut(stream);
        let (va, _rva) = values.map(|v| v.device_ptr_mut(stream)).unzip();
        let (vb, _rvb) = alt_values.map(|v| v.device_ptr_mut(stream)).unzip();
        let (va, vb) = (va.unwrap_or(0), vb.unwrap_or(0));
        let counting = tuning::sort_counts(tuning::DEFAULT_ARCH);
        let blocks = n
            .div_ceil(counting.tile() as u64)
            .min(tuning::SORT_COUNT_BLOCKS_PER_SM * self.info().multiprocessors as u64);
        {
            let (c, _w) = counts.device_ptr_mut(stream);
            let mut l = stream.launch_builder(&f);
            l.arg(&a).arg(&n).arg(&passes).arg(&c);
            // SAFETY: matches onesweep_kernels! in gpu/; keys hold n elements, counts passes × 256.
            unsafe { l.launch(grid(blocks, counting.threads, layout::sort_counts_smem(passes))?) }
                .map_err(|e| Error::kernel(&name, e))?;
        }

        let shape = tuning::sort(tuning::DEFAULT_ARCH, size);
        let tiles = n.div_ceil(shape.tile() as u64);
        let smem = layout::sort_pass_smem(tuning::DEFAULT_ARCH, size, va != 0);
        let name = format!("{}_{}", names::SORT_PASS, T::TYPE.name());
        let f = self.kernel(&name)?;
        let (c, _rc) = counts.device_ptr(stream);
        for p in 0..passes {
            let status_bytes = status::temp_bytes(tiles * digits as u64, 4);
            let (base, epoch, counter_base) = bufs.temp.single_pass(self, stream, status_bytes, tiles as u32)?;
            // Even passes go to the spare buffers, odd ones back: an even count ends in `keys`.
            let (ki, ko, vi, vo) = if p % 2 == 0 { (a, b, va, vb) } else { (b, a, vb, va) };
            let shift = p * RADIX_BITS;
            let pass_counts = c + (p as usize * digits * 4) as u64;
            let mut l = stream.launch_builder(&f);
            l.arg(&ki)
                .arg(&vi)
                .arg(&ko)
                .arg(&vo)
                .arg(&n)
                .arg(&shift)
                .arg(&pass_counts)
                .arg(&base)
                .arg(&counter_base)
                .arg(&epoch);
            // SAFETY: matches onesweep_kernels! in gpu/; the key (and value) buffers hold n
            // elements each, counts this pass's 256 words, the tile state 256 words per tile.
            let launched = unsafe { l.launch(grid(tiles, shape.threads, smem)?) };
            bufs.temp.poison_on_error(launched.map(drop).map_err(|e| Error::kernel(&name, e)))?;
        }
        Ok(())
    }
}
