//! Stable two-way partition: the elements inside a range first, in order, then the others, in
//! order (quicksort's partition step, made stable). One partition pass with two digits
//! (`gpu/src/kernels/partition.rs`): count per tile, scan the counts, scatter.

use super::histogram::partition_parts;
use crate::element::Element;
use crate::error::{at_least, Result};
use crate::launch::partition::{self as launch, Buffers};
use crate::launch::{copy, zero};
use crate::options::PartitionOptions;
use crate::plan::check_output;
use crate::runtime::Gpu;
use crate::temp::{carve, TempStorage};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::partition::Digit;
use std::sync::Arc;

impl Gpu {
    /// Writes the elements `x` of `input` with `opts.lo <= x < opts.hi` (compared as f64) to the
    /// front of `output`, in order, then every other element (NaN included), in order, and how
    /// many came first to `count[0]`. Asynchronous; [`Gpu::read_count`] reads the count back.
    ///
    /// Requires `output.len() >= input.len()` and `count.len() >= 1`.
    pub fn partition<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
        opts: &PartitionOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        at_least("the count", count.len() as u64, 1, "values")?;
        let digit = opts.digit()?;
        let (plan, parts) = partition_parts::<T>(self, n, &digit)?;
        let (c, _wc) = count.device_ptr_mut(stream);
        zero(stream, c, 8)?;
        if n == 0 {
            return Ok(());
        }
        let at = temp.scratch_parts(self, stream, &parts[..2])?;
        let (keys, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let bufs =
            Buffers { keys, values: 0, indices: false, keys_out: o, values_out: 0, counts: at[0], offsets: at[1], n };
        launch::run(self, stream, &plan, &digit, &bufs, temp)?;
        // The second digit's row of the scanned count matrix begins after every element inside.
        copy(stream, c, at[1] + plan.tiles * 4, 4)
    }

    /// Bytes of temporary storage a partition of `n` elements of `T` needs.
    pub fn partition_temp_bytes<T: Element>(&self, n: u64, opts: &PartitionOptions) -> Result<u64> {
        let (plan, parts) = partition_parts::<T>(self, n, &opts.digit()?)?;
        Ok(plan.scan.temp_bytes().0 + carve(&parts[..2])?.1)
    }
}

impl PartitionOptions {
    /// The two digits: 0 inside `[lo, hi)`, 1 outside.
    fn digit(&self) -> Result<Digit> {
        if self.lo.is_nan() || self.hi.is_nan() {
            return Err(crate::Error::out_of_range("a partition bound", f64::NAN, "a number (infinities allowed)"));
        }
        Ok(Digit::bins(1, self.lo, self.hi))
    }
}
