//! Segmented scans: every segment scanned on its own, in one pass (see
//! `gpu/src/kernels/segmented.rs`). Segments are given by head flags (made from start offsets by
//! [`Gpu::heads_from_offsets`]) or by a fixed length (the rows of a row-major matrix).

use crate::element::{Element, Key};
use crate::error::{exactly, Error, Result};
use crate::launch::{segmented as launch, zero};
use crate::options::SegmentedOptions;
use crate::plan::check_output;
use crate::plan::segmented::{heads, plan, Marks, SegmentedPlan};
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

impl Gpu {
    /// Sets `heads[i]` to 1 where a segment starts (at each of `offsets` below `heads.len()`)
    /// and to 0 elsewhere: the head flags of [`Gpu::segmented_scan`]. Asynchronous.
    pub fn heads_from_offsets(
        &self,
        stream: &Arc<CudaStream>,
        offsets: &impl DevicePtr<u64>,
        heads_out: &mut impl DevicePtrMut<u8>,
    ) -> Result<()> {
        let (n, count) = (heads_out.len() as u64, offsets.len() as u64);
        let (h, _w) = heads_out.device_ptr_mut(stream);
        zero(stream, h, n)?;
        if count > 0 && n > 0 {
            let (o, _r) = offsets.device_ptr(stream);
            launch::heads(self, stream, &heads(self.tuning(), count), (o, count), n, h)?;
        }
        Ok(())
    }

    /// Scans every segment of `input` on its own into `output` as `opts` says (add, mul, min,
    /// max; 32- and 64-bit types); a segment starts wherever `heads[i] != 0` (and at 0).
    /// Exclusive: a segment's first element gets the identity. Asynchronous.
    ///
    /// Requires `heads.len() == input.len()` and `output.len() >= input.len()`.
    pub fn segmented_scan<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        heads: &impl DevicePtr<u8>,
        output: &mut impl DevicePtrMut<T>,
        opts: &SegmentedOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        exactly("the head flags", heads.len() as u64, n, "bytes")?;
        let (h, _rh) = heads.device_ptr(stream);
        self.segmented(stream, input, Marks::Flags, (h, 0), output, opts, temp)
    }

    /// [`Gpu::segmented_scan`] with a segment starting at every multiple of `segment_len` (the
    /// rows of a row-major matrix of `segment_len` columns).
    pub fn segmented_scan_fixed<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        segment_len: u64,
        output: &mut impl DevicePtrMut<T>,
        opts: &SegmentedOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        if segment_len == 0 {
            return Err(Error::out_of_range("the segment length", 0, "at least 1"));
        }
        self.segmented(stream, input, Marks::Fixed, (0, segment_len), output, opts, temp)
    }

    /// Scans every run of equal keys of `input` on its own into `output`, as `opts` says (a
    /// segment starts wherever `keys[i] != keys[i - 1]`, as CUB's scan by key and NumPy-style
    /// group-wise cumulative sums take them). Keys of any integer type ([`Key`]). Asynchronous.
    /// Requires `keys.len() == input.len()` and `output.len() >= input.len()`. Keys of 4 and 8
    /// bytes are read by the pipelined scan itself; otherwise their head flags take
    /// `input.len()` bytes of the temporary storage's scratch first.
    pub fn scan_by_key<K: Key, T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &impl DevicePtr<K>,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        opts: &SegmentedOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        exactly("the keys", keys.len() as u64, input.len() as u64, "keys")?;
        let (k, _rk) = keys.device_ptr(stream);
        self.segmented(stream, input, Marks::Keys(K::KERNEL), (k, 0), output, opts, temp)
    }

    /// Bytes of temporary storage [`Gpu::scan_by_key`] of `n` elements with keys of `K` needs.
    pub fn scan_by_key_temp_bytes<K: Key, T: Element>(&self, n: u64, opts: &SegmentedOptions) -> Result<u64> {
        Ok(self.plan_segmented::<T>(n, opts, Marks::Keys(K::KERNEL))?.temp_bytes(n))
    }

    /// Bytes of temporary storage a segmented scan of `n` elements of `T` with `opts` needs
    /// (from head flags; fixed-length segments need no more).
    pub fn segmented_temp_bytes<T: Element>(&self, n: u64, opts: &SegmentedOptions) -> Result<u64> {
        Ok(self.plan_segmented::<T>(n, opts, Marks::Flags)?.temp_bytes(n))
    }

    fn plan_segmented<T: Element>(&self, n: u64, opts: &SegmentedOptions, marks: Marks) -> Result<SegmentedPlan> {
        plan(self.tuning(), T::TYPE, opts.op, n, opts.exclusive, opts.kernel, marks)
    }

    #[allow(clippy::too_many_arguments)]
    fn segmented<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        marks: Marks,
        segments: (u64, u64),
        output: &mut impl DevicePtrMut<T>,
        opts: &SegmentedOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        let plan = self.plan_segmented::<T>(n, opts, marks)?;
        if n == 0 {
            return Ok(());
        }
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        launch::run(self, stream, &plan, (i, o, n), segments, temp)
    }
}
