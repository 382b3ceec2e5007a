//! The all-gather of ranks that share one device: copies between their exchange buffers.

use super::{Collective, Exchange};
use crate::error::Result;
use cudarc::driver::{DevicePtr, DevicePtrMut};

/// Device-to-device copies, every rank's total into every rank's gathered totals.
pub struct Copies;

impl Collective for Copies {
    fn all_gather(&self, exchanges: &mut [&mut Exchange], bytes: usize) -> Result<()> {
        // Every rank's buffers live on the one stream the ranks share, so the copies below are
        // ordered after the reductions and before any later write without further events.
        let sends: Vec<u64> = exchanges.iter().map(|e| e.send.device_ptr(e.send.stream()).0).collect();
        for e in exchanges.iter_mut() {
            let stream = e.recv.stream().clone();
            let (recv, _w) = e.recv.device_ptr_mut(&stream);
            for (k, &send) in sends.iter().enumerate() {
                // SAFETY: every send buffer holds `bytes` bytes and every recv buffer one slot
                // per rank (`Group::new`); the ranks share this stream, so the copies follow the
                // reductions that wrote the totals.
                unsafe {
                    cudarc::driver::result::memcpy_dtod_async(
                        recv + (k * bytes) as u64,
                        send,
                        bytes,
                        stream.cu_stream(),
                    )
                }?;
            }
        }
        Ok(())
    }
}
