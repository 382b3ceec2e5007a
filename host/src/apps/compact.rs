//! Stream compaction: keep the elements that satisfy a predicate, stable, and count them.
//!
//! One pass on the GPU (see `gpu/src/kernels/compact.rs`): the kept elements of each tile are
//! counted, the counts are scanned (within the tile, then across tiles by the single-pass
//! scan's decoupled look-back, in u64), and each kept element goes to its offset. From 64 MiB,
//! 4- and 8-byte elements kept by a comparison run in the pipelined kernel's roles
//! (`tuning::compact_pipelined`; `GPU_SCAN_PIPELINED=0|1` or `Compaction::pipelined` choose).

use crate::dispatch::single_pass::{allow_shared_memory, switch, Persistent};
use crate::dispatch::{check_output, grid, TempStorage};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};
use scan_abi::{layout, names, predicate, tuning};
use std::sync::Arc;

/// Which elements to keep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Keep<T> {
    /// `x > threshold` (false for NaN).
    Greater(T),
    /// `x != 0` (for floats `-0.0` is zero, NaN is not).
    NonZero,
    /// `flags[i] != 0`, from a separate array of bytes.
    Flags,
}

impl<T: Element> Keep<T> {
    /// Whether `x` (with flag `flag`) is kept: the CPU reference of the predicate.
    pub fn keeps(&self, x: T, flag: u8) -> bool {
        match *self {
            Keep::Greater(t) => x > t,
            Keep::NonZero => x != T::zero(),
            Keep::Flags => flag != 0,
        }
    }

    fn code(&self) -> (u32, T) {
        match *self {
            Keep::Greater(t) => (predicate::GREATER, t),
            Keep::NonZero => (predicate::NONZERO, T::zero()),
            Keep::Flags => (predicate::FLAGS, T::zero()),
        }
    }
}

/// The CPU reference: the kept elements in order.
pub fn reference<T: Element>(input: &[T], flags: Option<&[u8]>, keep: Keep<T>) -> Vec<T> {
    input.iter().enumerate().filter(|&(i, &x)| keep.keeps(x, flags.map_or(0, |f| f[i]))).map(|(_, &x)| x).collect()
}

/// A compaction's choices: what to keep, and which kernel runs (`pipelined`, as
/// `ScanOptions::pipelined`): `Some(true)` the pipelined form (4- and 8-byte elements with a
/// 16-byte aligned input; others keep the one-tile-per-block kernel), `Some(false)` the
/// one-tile-per-block kernel, `None` as `tuning::compact_pipelined` says, or
/// `GPU_SCAN_PIPELINED=0|1` for measuring.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compaction<T> {
    pub keep: Keep<T>,
    pub pipelined: Option<bool>,
}

impl<T> From<Keep<T>> for Compaction<T> {
    fn from(keep: Keep<T>) -> Self {
        Compaction { keep, pipelined: None }
    }
}

impl Gpu {
    /// Copies the elements of `input` that `keep` (a [`Keep`], or a [`Compaction`] to choose the
    /// kernel too) selects to the front of `output`, in order, and returns how many there are
    /// (this waits for the stream). `flags` is required by [`Keep::Flags`] and must be as long as
    /// `input`; `output` must be as long as `input`.
    pub fn compact<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        flags: Option<&CudaSlice<u8>>,
        keep: impl Into<Compaction<T>>,
        output: &mut CudaSlice<T>,
        temp: &mut TempStorage,
    ) -> Result<u64> {
        self.compact_async(stream, input, flags, keep, output, temp)?;
        if input.is_empty() {
            return Ok(0);
        }
        let mut word = [0u8; 8];
        let count = temp.scratch_word(self, stream)?;
        stream.memcpy_dtoh(&count.slice(0..8), &mut word)?;
        stream.synchronize()?;
        Ok(u64::from_le_bytes(word))
    }

    /// [`Gpu::compact`] without waiting: the count stays on the device, in `temp` (what a
    /// benchmark times, like CUB's DeviceSelect).
    pub fn compact_async<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        flags: Option<&CudaSlice<u8>>,
        keep: impl Into<Compaction<T>>,
        output: &mut CudaSlice<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let Compaction { keep, pipelined } = keep.into();
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        let flags_ptr = match (keep, flags) {
            (Keep::Flags, None) => return Err(Error::invalid("keeping by flags needs a flags array")),
            (Keep::Flags, Some(f)) if (f.len() as u64) < n => {
                return Err(Error::invalid(format!("the flags array holds {} bytes, the input {n} elements", f.len())));
            }
            (_, Some(f)) => f.device_ptr(stream).0,
            (_, None) => 0,
        };
        if n == 0 {
            return Ok(());
        }
        let size = std::mem::size_of::<T>();
        let (i, _r) = input.device_ptr(stream);
        let (pred, threshold) = keep.code();
        let by_default = tuning::compact_pipelined(tuning::DEFAULT_ARCH, size, n, pred);
        let chosen = pipelined.or_else(|| switch("GPU_SCAN_PIPELINED")).unwrap_or(by_default) && matches!(size, 4 | 8);
        // The tiles publish u64 counts, whatever the element size.
        let count_size = std::mem::size_of::<u64>();
        let (name, f, cfg, base, counter_base, epoch, stages) =
            if chosen && i.is_multiple_of(tuning::VECTOR_BYTES as u64) {
                let name = format!("{}_{}", names::COMPACT_PIPELINED, T::TYPE.name());
                let p = tuning::pipeline_compact(tuning::DEFAULT_ARCH, size);
                let plan = Persistent::plan(self, stream, &name, p, n, n, size, count_size, temp)?;
                (name, plan.f, plan.cfg, plan.base, plan.counter_base, plan.epoch, Some(plan.stages))
            } else {
                let shape = tuning::compact(tuning::DEFAULT_ARCH, size);
                let (tiles, base, epoch, counter_base) = temp.tiles(self, stream, n, shape, count_size)?;
                let name = format!("{}_{}", names::COMPACT, T::TYPE.name());
                let f = self.kernel(&name)?;
                let smem = layout::compact_smem(tuning::DEFAULT_ARCH, size);
                allow_shared_memory(&f, smem).map_err(|e| Error::kernel(&name, e))?;
                let cfg = grid(tiles, shape.threads, smem)?;
                (name, f, cfg, base, counter_base, epoch, None)
            };
        let count_ptr = temp.scratch_word(self, stream)?.device_ptr_mut(stream).0;
        let (o, _w) = output.device_ptr_mut(stream);
        let mut b = stream.launch_builder(&f);
        b.arg(&i)
            .arg(&flags_ptr)
            .arg(&o)
            .arg(&count_ptr)
            .arg(&n)
            .arg(&pred)
            .arg(&threshold)
            .arg(&base)
            .arg(&counter_base)
            .arg(&epoch);
        if let Some(stages) = stages.as_ref() {
            b.arg(stages);
        }
        // SAFETY: the arguments match compact_kernels! (and, with the stages, compact_pipe_kernels!)
        // in gpu/; input, flags and output hold n elements, the tile state what temp.tiles or the
        // plan sized, the count 8 bytes; the pipelined kernel's input is 16-byte aligned for its
        // bulk copies.
        temp.poison_on_error(unsafe { b.launch(cfg) }.map(drop).map_err(|e| Error::kernel(&name, e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_keeps_in_order() {
        let x = [3u32, 5, 0, 7, 1, 4];
        assert_eq!(reference(&x, None, Keep::Greater(3)), [5, 7, 4]);
        assert_eq!(reference(&x, None, Keep::NonZero), [3, 5, 7, 1, 4]);
        assert_eq!(reference(&x, Some(&[1, 0, 0, 1, 0, 1]), Keep::Flags), [3, 7, 4]);
        let f = [-0.0f32, f32::NAN, 2.0];
        assert_eq!(reference(&f, None, Keep::Greater(1.0)), [2.0]);
        assert_eq!(reference(&f, None, Keep::NonZero).len(), 2);
    }
}
