//! Histogram of equal-width bins over `[lo, hi)`: counts, bin starts (the exclusive scan of the
//! counts) and the stable counting-sort permutation that groups the elements by bin, by one
//! stable partition pass with the bins as digits. Elements outside the range (and NaN) are
//! counted apart and placed after the last bin.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::partition::{self as launch, Buffers};
use crate::options::HistogramOptions;
use crate::plan::partition::{plan, PartitionPlan};
use crate::plan::sort::check_len;
use crate::reference::apps::check_bins;
pub use crate::reference::apps::Histogram;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::partition::Digit;
use std::sync::Arc;

/// Device buffers of a histogram of `n` elements, reusable across calls: the count matrix and its
/// scan, the grouped elements, and the permutation.
pub struct HistogramBuffers<T> {
    digit: Digit,
    plan: PartitionPlan,
    counts: CudaSlice<u32>,
    offsets: CudaSlice<u32>,
    temp: TempStorage,
    grouped: CudaSlice<T>,
    /// After [`Gpu::histogram_async`]: the counting-sort permutation (first `n` entries).
    pub permutation: CudaSlice<u32>,
    n: u64,
}

impl Gpu {
    /// Buffers for histograms of `n` elements of `T` as `opts` says.
    pub fn histogram_buffers<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        n: u64,
        opts: &HistogramOptions,
    ) -> Result<HistogramBuffers<T>> {
        check_bins(opts.bins, opts.lo, opts.hi)?;
        check_len(n)?;
        let digit = Digit::bins(opts.bins, opts.lo, opts.hi);
        let plan = plan(self.tuning(), T::TYPE, n, &digit)?;
        let entries = plan.entries.max(1) as usize;
        Ok(HistogramBuffers {
            digit,
            counts: self.alloc_zeros(stream, "histogram counts", entries)?,
            offsets: self.alloc_zeros(stream, "histogram offsets", entries)?,
            plan,
            temp: TempStorage::new(),
            grouped: self.alloc_zeros::<T>(stream, "histogram grouped elements", n.max(1) as usize)?,
            permutation: self.alloc_zeros::<u32>(stream, "histogram permutation", n.max(1) as usize)?,
            n,
        })
    }

    /// Computes the histogram of `input` into `bufs` on the device, without waiting (what a
    /// benchmark times).
    pub fn histogram_async<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        bufs: &mut HistogramBuffers<T>,
    ) -> Result<()> {
        if input.len() as u64 != bufs.n {
            return Err(Error::invalid(format!(
                "the buffers are for {} elements, the input has {}",
                bufs.n,
                input.len()
            )));
        }
        if bufs.n == 0 {
            return Ok(());
        }
        let b = &mut *bufs;
        let (keys, _r) = input.device_ptr(stream);
        let (keys_out, _w) = b.grouped.device_ptr_mut(stream);
        let (values_out, _wv) = b.permutation.device_ptr_mut(stream);
        let (counts, _wc) = b.counts.device_ptr_mut(stream);
        let (offsets, _wo) = b.offsets.device_ptr_mut(stream);
        let ptrs = Buffers { keys, values: 0, indices: true, keys_out, values_out, counts, offsets, n: b.n };
        launch::run(self, stream, &b.plan, &b.digit, &ptrs, &mut b.temp)
    }

    /// Downloads the result of [`Gpu::histogram_async`] (this waits for the stream).
    pub fn histogram_read<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        bufs: &HistogramBuffers<T>,
    ) -> Result<Histogram> {
        let (n, bins) = (bufs.n, bufs.digit.bins);
        // Bin b starts where the scanned count matrix's row b begins (tile 0).
        let tiles = bufs.plan.tiles as usize;
        let mut starts = Vec::with_capacity(bins as usize + 1);
        for b in 0..=bins as usize {
            if n == 0 {
                starts.push(0);
                continue;
            }
            let mut v = [0u32];
            stream.memcpy_dtoh(&bufs.offsets.slice(b * tiles..b * tiles + 1), &mut v)?;
            starts.push(v[0] as u64);
        }
        let mut permutation = self.download(stream, &bufs.permutation)?;
        permutation.truncate(n as usize);
        let counts = (0..bins as usize).map(|b| starts[b + 1] - starts[b]).collect();
        let outside = n - starts[bins as usize];
        starts.truncate(bins as usize);
        Ok(Histogram { counts, starts, outside, permutation })
    }

    /// The histogram of `input` as `opts` says, with its counting-sort permutation (downloaded;
    /// this waits for the stream).
    pub fn histogram<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        opts: &HistogramOptions,
    ) -> Result<Histogram> {
        let mut bufs = self.histogram_buffers::<T>(stream, input.len() as u64, opts)?;
        self.histogram_async(stream, input, &mut bufs)?;
        self.histogram_read(stream, &bufs)
    }
}
