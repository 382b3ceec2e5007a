//! LSD radix sort: stable, 8 bits per pass (4 passes for 32-bit keys, 8 for 64-bit). Each pass
//! is one sweep: a stable partition whose digit offsets come from the single-pass scan's
//! decoupled look-back over the tiles' digit counts, one digit per thread. Keys are ordered by
//! their `order_key` (floats: `-0.0` before `+0.0`, NaNs last); u32 values ride along.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::sort::{self as launch, Operands};
use crate::plan::sort::{plan, DIGITS};
use crate::runtime::Gpu;
use crate::temp::{at_least, TempStorage};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut};
use std::sync::Arc;

/// The device memory a sort works in besides its keys and values: the second key and value
/// buffers the passes alternate with, every pass's digit counts, and the tile state. Reused
/// across calls (grown when a call needs more), so repeated sorts allocate nothing.
pub struct SortBuffers<T> {
    keys: Option<CudaSlice<T>>,
    values: Option<CudaSlice<u32>>,
    counts: Option<CudaSlice<u32>>,
    temp: TempStorage,
}

impl<T> Default for SortBuffers<T> {
    fn default() -> Self {
        SortBuffers { keys: None, values: None, counts: None, temp: TempStorage::new() }
    }
}

impl<T: Element> SortBuffers<T> {
    pub fn new() -> SortBuffers<T> {
        SortBuffers::default()
    }
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

    /// [`Gpu::sort`] in the memory of `bufs`, kept for the next call: one read of the keys counts
    /// every pass's digits, then each pass moves the keys once; no host round trip.
    pub fn sort_with<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut CudaSlice<T>,
        values: Option<&mut CudaSlice<u32>>,
        bufs: &mut SortBuffers<T>,
    ) -> Result<()> {
        let n = keys.len() as u64;
        let plan = plan(self.tuning(), T::TYPE, n, values.is_some())?;
        if values.as_ref().is_some_and(|v| v.len() != keys.len()) {
            return Err(Error::invalid("the values must be as many as the keys"));
        }
        if n <= 1 {
            return Ok(());
        }
        let spare_keys = at_least(self, stream, &mut bufs.keys, "sort buffer", n as usize)?;
        let spare_values = match values {
            Some(_) => Some(at_least(self, stream, &mut bufs.values, "sort value buffer", n as usize)?),
            None => None,
        };
        let counts = at_least(self, stream, &mut bufs.counts, "digit counts", (plan.passes as u64 * DIGITS) as usize)?;
        stream.memset_zeros(counts)?;
        let (k, _rk) = keys.device_ptr_mut(stream);
        let (sk, _rsk) = spare_keys.device_ptr_mut(stream);
        let (v, _rv) = values.map(|v| v.device_ptr_mut(stream)).unzip();
        let (sv, _rsv) = spare_values.map(|v| v.device_ptr_mut(stream)).unzip();
        let (c, _rc) = counts.device_ptr_mut(stream);
        let ops =
            Operands { keys: k, spare_keys: sk, values: v.unwrap_or(0), spare_values: sv.unwrap_or(0), counts: c, n };
        launch::run(self, stream, &plan, &ops, &mut bufs.temp)
    }
}
