//! Stream compaction: keep the elements that satisfy a predicate, stable, and count them, in one
//! pass (`gpu/src/kernels/compact.rs`): each tile counts its kept elements, the counts are scanned
//! across tiles by the single-pass look-back, and each kept element goes to its offset.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::compact::{self as launch, Operands};
use crate::options::{CompactOptions, Keep};
use crate::plan::check_output;
use crate::plan::compact::plan;
use crate::plan::scan::aligned;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::kernel::predicate;
use std::sync::Arc;

impl<T: Element> Keep<T> {
    /// The kernel's `pred` and `threshold` arguments.
    fn code(&self) -> (u32, T) {
        match *self {
            Keep::Greater(t) => (predicate::GREATER, t),
            Keep::NonZero => (predicate::NONZERO, T::zero()),
            Keep::Flags => (predicate::FLAGS, T::zero()),
        }
    }
}

impl Gpu {
    /// Copies the elements of `input` that `opts.keep` selects to the front of `output`, in
    /// order, and returns how many there are (this waits for the stream). `flags` is required by
    /// [`Keep::Flags`] and must be as long as `input`; `output` must be as long as `input`.
    pub fn compact<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        flags: Option<&CudaSlice<u8>>,
        output: &mut CudaSlice<T>,
        opts: &CompactOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<u64> {
        self.compact_async(stream, input, flags, output, opts, temp)?;
        if input.is_empty() {
            return Ok(0);
        }
        temp.read_scratch_word(stream)
    }

    /// [`Gpu::compact`] without waiting: the count stays on the device, in `temp` (what a
    /// benchmark times, like CUB's DeviceSelect).
    pub fn compact_async<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        flags: Option<&CudaSlice<u8>>,
        output: &mut CudaSlice<T>,
        opts: &CompactOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        let flags_ptr = match (opts.keep, flags) {
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
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let (pred, threshold) = opts.keep.code();
        let plan = plan(self.tuning(), T::TYPE, n, pred, opts.kernel, aligned(i))?;
        launch::run(self, stream, &plan, Operands { input: i, flags: flags_ptr, output: o, n, pred, threshold }, temp)
    }
}
