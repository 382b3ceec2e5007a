//! Histogram of equal-width bins over `[lo, hi)`: counts, bin starts (the exclusive scan of the
//! counts) and the stable counting-sort permutation that groups the elements by bin. Elements
//! outside the range (and NaN) are counted apart and placed after the last bin.

use super::partition::{check_len, pass, Digit, PassBuffers, Values};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream};
use rayon::prelude::*;
use scan_abi::partition::{bin_of, MAX_BINS, TILE};
use std::sync::Arc;

/// A histogram and its counting sort.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub counts: Vec<u64>,
    /// `starts[b]`: where bin `b`'s elements begin in the permutation.
    pub starts: Vec<u64>,
    /// Elements outside `[lo, hi)` or NaN (placed after the last bin).
    pub outside: u64,
    /// `permutation[k]`: the index of the element at place `k` when grouped by bin.
    pub permutation: Vec<u32>,
}

fn check(bins: u32, lo: f64, hi: f64) -> Result<()> {
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::invalid(format!("{bins} bins: between 1 and {MAX_BINS} are supported")));
    }
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(Error::invalid(format!("the range [{lo}, {hi}) is empty or not finite")));
    }
    Ok(())
}

/// The CPU reference.
pub fn reference<T: Element>(input: &[T], bins: u32, lo: f64, hi: f64) -> Result<Histogram> {
    check(bins, lo, hi)?;
    let bin: Vec<u32> = input.iter().map(|x| bin_of(x.as_f64(), lo, hi, bins)).collect();
    let mut all = vec![0u64; bins as usize + 1];
    for &b in &bin {
        all[b as usize] += 1;
    }
    let mut starts = Vec::with_capacity(bins as usize);
    let mut at = 0;
    for &c in &all[..bins as usize] {
        starts.push(at);
        at += c;
    }
    let mut idx: Vec<u32> = (0..input.len() as u32).collect();
    idx.par_sort_by_key(|&i| bin[i as usize]);
    Ok(Histogram { outside: all[bins as usize], counts: all[..bins as usize].to_vec(), starts, permutation: idx })
}

/// Device buffers of a histogram of `n` elements, reusable across calls: the count matrix and its
/// scan, the grouped elements, and the permutation.
pub struct HistogramBuffers<T> {
    digit: Digit,
    pass: PassBuffers,
    grouped: CudaSlice<T>,
    /// After [`Gpu::histogram_async`]: the counting-sort permutation (first `n` entries).
    pub permutation: CudaSlice<u32>,
    n: u64,
}

impl Gpu {
    /// Buffers for histograms of `n` elements in `bins` bins over `[lo, hi)`.
    pub fn histogram_buffers<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        n: u64,
        bins: u32,
        lo: f64,
        hi: f64,
    ) -> Result<HistogramBuffers<T>> {
        check(bins, lo, hi)?;
        check_len(n)?;
        let digit = Digit::bins(bins, lo, hi);
        Ok(HistogramBuffers {
            digit,
            pass: PassBuffers::new(self, stream, n, digit)?,
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
        let b = &mut *bufs;
        pass(self, stream, input, Values::Indices, &mut b.grouped, Some(&mut b.permutation), b.digit, &mut b.pass)
    }

    /// Downloads the result of [`Gpu::histogram_async`] (this waits for the stream).
    pub fn histogram_read<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        bufs: &HistogramBuffers<T>,
    ) -> Result<Histogram> {
        let (n, bins) = (bufs.n, bufs.digit.bins);
        // Bin b starts where the scanned count matrix's row b begins (tile 0).
        let tiles = n.div_ceil(TILE as u64) as usize;
        let mut starts = Vec::with_capacity(bins as usize + 1);
        for b in 0..=bins as usize {
            if n == 0 {
                starts.push(0);
                continue;
            }
            let mut v = [0u32];
            stream.memcpy_dtoh(&bufs.pass.offsets.slice(b * tiles..b * tiles + 1), &mut v)?;
            starts.push(v[0] as u64);
        }
        let mut permutation = self.download(stream, &bufs.permutation)?;
        permutation.truncate(n as usize);
        let counts = (0..bins as usize).map(|b| starts[b + 1] - starts[b]).collect();
        let outside = n - starts[bins as usize];
        starts.truncate(bins as usize);
        Ok(Histogram { counts, starts, outside, permutation })
    }

    /// The histogram of `input` in `bins` bins over `[lo, hi)` with its counting-sort
    /// permutation (downloaded; this waits for the stream).
    pub fn histogram<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        bins: u32,
        lo: f64,
        hi: f64,
    ) -> Result<Histogram> {
        let mut bufs = self.histogram_buffers::<T>(stream, input.len() as u64, bins, lo, hi)?;
        self.histogram_async(stream, input, &mut bufs)?;
        self.histogram_read(stream, &bufs)
    }
}
