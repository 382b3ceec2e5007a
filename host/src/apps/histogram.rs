//! Histogram of equal-width bins over `[lo, hi)`: bin starts (the exclusive scan of the counts)
//! and the stable counting-sort permutation that groups the elements by bin, by one stable
//! partition pass with the bins as digits. Elements outside the range (and NaN) are counted
//! apart and placed after the last bin. The counts alone ([`Gpu::histogram_counts`]) take one
//! kernel that neither groups nor scans.

use crate::element::Element;
use crate::error::{at_least, Error, Result};
use crate::launch::partition::{self as launch, Buffers};
use crate::launch::{gather_rows, zero};
use crate::options::HistogramOptions;
use crate::plan::partition::{histogram_counts, plan, PartitionPlan};
use crate::plan::sort::check_len;
use crate::reference::apps::check_bins;
pub use crate::reference::apps::Histogram;
use crate::runtime::Gpu;
use crate::temp::{bytes_of, carve, TempStorage};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::partition::Digit;
use std::sync::Arc;

/// The plan and scratch parts (count matrix, its scan, grouped elements) of a partition pass of
/// `n` elements of `T` by `digit`.
pub(crate) fn partition_parts<T: Element>(gpu: &Gpu, n: u64, digit: &Digit) -> Result<(PartitionPlan, [u64; 3])> {
    check_len(n)?;
    let plan = plan(gpu.tuning(), T::TYPE, n, digit)?;
    let matrix = bytes_of(plan.entries, 4)?;
    Ok((plan, [matrix, matrix, bytes_of(n, T::TYPE.size())?]))
}

impl Gpu {
    /// The histogram of `input` as `opts` says, on the device. Asynchronous.
    ///
    /// - `starts` (`opts.bins + 1` entries) gets where each bin begins in the grouped order, and
    ///   last where the elements outside `[lo, hi)` begin: bin `b` holds
    ///   `starts[b + 1] - starts[b]` elements, and `n - starts[bins]` are outside.
    /// - `permutation` (`input.len()` entries) gets the stable counting-sort permutation: the
    ///   input index of the element at each place when grouped by bin.
    pub fn histogram<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        starts: &mut impl DevicePtrMut<u32>,
        permutation: &mut impl DevicePtrMut<u32>,
        opts: &HistogramOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        check_bins(opts.bins, opts.lo, opts.hi)?;
        let n = input.len() as u64;
        let entries = opts.bins as u64 + 1;
        at_least("the bin starts", starts.len() as u64, entries, "entries")?;
        at_least("the permutation", permutation.len() as u64, n, "entries")?;
        let digit = Digit::bins(opts.bins, opts.lo, opts.hi);
        let (plan, parts) = partition_parts::<T>(self, n, &digit)?;
        let (s, _ws) = starts.device_ptr_mut(stream);
        if n == 0 {
            return zero(stream, s, entries * 4);
        }
        let at = temp.scratch_parts(self, stream, &parts)?;
        let (keys, _r) = input.device_ptr(stream);
        let (values_out, _wp) = permutation.device_ptr_mut(stream);
        let bufs =
            Buffers { keys, values: 0, indices: true, keys_out: at[2], values_out, counts: at[0], offsets: at[1], n };
        launch::run(self, stream, &plan, &digit, &bufs, temp)?;
        // Bin b starts where row b of the scanned (digit-major) count matrix begins.
        gather_rows(stream, s, at[1], 4, plan.tiles * 4, entries)
    }

    /// The bin counts alone of the histogram of `input` as `opts` says, into `counts`
    /// (`opts.bins + 1` entries): `counts[b]` elements fall in bin `b`, and `counts[opts.bins]`
    /// lie outside `[lo, hi)` or are NaN. Asynchronous. Far less work than [`Gpu::histogram`],
    /// which also groups the elements; it needs no temporary storage.
    pub fn histogram_counts<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        counts: &mut impl DevicePtrMut<u32>,
        opts: &HistogramOptions,
    ) -> Result<()> {
        check_bins(opts.bins, opts.lo, opts.hi)?;
        let n = input.len() as u64;
        let entries = opts.bins as u64 + 1;
        at_least("the bin counts", counts.len() as u64, entries, "entries")?;
        if n > u32::MAX as u64 {
            return Err(Error::out_of_range("the elements of a histogram's 32-bit counts", n, "at most 2^32 - 1"));
        }
        let digit = Digit::bins(opts.bins, opts.lo, opts.hi);
        let launch = histogram_counts(self.tuning(), T::TYPE, n, &digit)?;
        let (c, _wc) = counts.device_ptr_mut(stream);
        zero(stream, c, entries * 4)?;
        if n == 0 {
            return Ok(());
        }
        let (keys, _r) = input.device_ptr(stream);
        launch::histogram_counts(self, stream, &launch, &digit, (keys, n, c))
    }

    /// Bytes of temporary storage a histogram of `n` elements of `T` needs.
    pub fn histogram_temp_bytes<T: Element>(&self, n: u64, opts: &HistogramOptions) -> Result<u64> {
        check_bins(opts.bins, opts.lo, opts.hi)?;
        let (plan, parts) = partition_parts::<T>(self, n, &Digit::bins(opts.bins, opts.lo, opts.hi))?;
        Ok(plan.scan.temp_bytes().0 + carve(&parts)?.1)
    }

    /// [`Gpu::histogram`] with its results downloaded as counts, starts, the outside count and
    /// the permutation. This allocates its outputs and waits for `stream`.
    pub fn histogram_blocking<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        opts: &HistogramOptions,
        temp: &mut TempStorage,
    ) -> Result<Histogram> {
        check_bins(opts.bins, opts.lo, opts.hi)?;
        let n = input.len();
        let mut starts = self.alloc_zeros::<u32>(stream, "histogram bin starts", opts.bins as usize + 1)?;
        let mut permutation = self.alloc_zeros::<u32>(stream, "histogram permutation", n)?;
        self.histogram(stream, input, &mut starts, &mut permutation, opts, temp)?;
        Ok(Histogram::from_starts(&self.download(stream, &starts)?, self.download(stream, &permutation)?))
    }
}

impl Histogram {
    /// The histogram of `permutation.len()` elements from the `bins + 1` bin starts that
    /// [`Gpu::histogram`] writes.
    pub fn from_starts(starts: &[u32], permutation: Vec<u32>) -> Histogram {
        let mut starts: Vec<u64> = starts.iter().map(|&s| s as u64).collect();
        let end = starts.pop().unwrap_or(0);
        let counts = starts.iter().zip(starts.iter().skip(1).chain([&end])).map(|(a, b)| b - a).collect();
        Histogram { counts, starts, outside: permutation.len() as u64 - end, permutation }
    }
}
