//! Segmented scans: every segment scanned on its own, in one pass (see
//! `gpu/src/kernels/segmented.rs`). Segments are given by head flags, by start offsets, or by a
//! fixed length (the rows of a row-major matrix).

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::segmented as launch;
use crate::options::SegmentedOptions;
use crate::plan::check_output;
use crate::plan::segmented::{heads, plan};
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// Where segments start.
pub enum Segments<'a> {
    /// `heads[i] != 0` starts a segment at `i` (one byte per element).
    Heads(&'a CudaSlice<u8>),
    /// A segment starts at every multiple of this length (rows of a row-major matrix).
    Every(u64),
}

impl Gpu {
    /// Head flags (one byte per element, zeroed elsewhere) from segment start offsets.
    pub fn heads_from_offsets(
        &self,
        stream: &Arc<CudaStream>,
        offsets: &CudaSlice<u64>,
        n: u64,
    ) -> Result<CudaSlice<u8>> {
        let mut out = self.alloc_zeros::<u8>(stream, "segment heads", n.max(1) as usize)?;
        let count = offsets.len() as u64;
        if count > 0 {
            let (o, _r) = offsets.device_ptr(stream);
            let (h, _w) = out.device_ptr_mut(stream);
            launch::heads(self, stream, &heads(self.tuning(), count), (o, count), n, h)?;
        }
        Ok(out)
    }

    /// Scans every segment of `input` on its own into `output` as `opts` says (add, mul, min,
    /// max; 32- and 64-bit types). Exclusive: a segment's first element gets the identity.
    pub fn segmented_scan<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        segments: Segments<'_>,
        output: &mut CudaSlice<T>,
        opts: &SegmentedOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        let plan = plan(self.tuning(), T::TYPE, opts.op, n, opts.exclusive)?;
        let (heads, seg_len) = match segments {
            Segments::Heads(h) if (h.len() as u64) < n => {
                return Err(Error::invalid(format!("the head flags hold {} bytes, the input {n} elements", h.len())));
            }
            Segments::Heads(h) => (h.device_ptr(stream).0, 0u64),
            Segments::Every(0) => return Err(Error::invalid("segments of length 0")),
            Segments::Every(len) => (0, len),
        };
        if n == 0 {
            return Ok(());
        }
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        launch::run(self, stream, &plan, (i, o, n), (heads, seg_len), temp)
    }
}
