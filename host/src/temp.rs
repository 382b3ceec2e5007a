//! Temporary device storage, reusable across calls.

use crate::error::{Error, Result};
use crate::plan::{Claims, TileState};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::status::EPOCH_MAX;
use std::sync::Arc;

/// Temporary device storage for scans and the applications, reusable across calls: it grows when
/// a call needs more and is otherwise never reallocated, so repeated calls allocate nothing.
///
/// It holds two regions: the tile state of single-pass-style launches (tile counter and
/// tile-status words, which carry over from call to call) and scratch space (the hierarchical
/// strategy's tile totals, a compaction's count), so one never disturbs the other.
///
/// Calls that share one `TempStorage` must be ordered: issue them on one stream, or synchronize
/// in between. It belongs to the context of the first [`Gpu`] that used it. Dropping it frees
/// each region ordered on the stream that allocated it, which must still exist then;
/// [`TempStorage::free`] needs no stream.
#[derive(Default)]
pub struct TempStorage {
    state: Option<CudaSlice<u8>>,
    scratch: Option<CudaSlice<u8>>,
    /// Bytes after each region filled with [`GUARD_BYTE`], checked by [`TempStorage::check_guards`].
    guard: usize,
    /// Value of the tile counter before the next launch (it is never reset).
    counter_base: u32,
    /// Epoch of the last launch (status words of older epochs read as empty).
    epoch: u32,
    /// Regions allocated so far, reallocations included.
    allocations: u64,
}

/// What a guarded storage fills its guard bytes with.
pub const GUARD_BYTE: u8 = 0xa5;

/// The tile state of one launch: where it lies, the launch's epoch and the counter's base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub ptr: u64,
    pub epoch: u32,
    pub counter_base: u32,
}

impl TempStorage {
    pub fn new() -> TempStorage {
        TempStorage::default()
    }

    /// Storage whose regions are each followed by `guard` bytes of [`GUARD_BYTE`] that no kernel
    /// may write: [`TempStorage::check_guards`] tells whether one did (for testing that kernels
    /// stay within what their plans reserve).
    pub fn guarded(guard: usize) -> TempStorage {
        TempStorage { guard, ..TempStorage::default() }
    }

    /// Bytes currently held (guards excluded).
    pub fn capacity(&self) -> usize {
        let len = |r: &Option<CudaSlice<u8>>| r.as_ref().map_or(0, |b| b.len() - self.guard);
        len(&self.state) + len(&self.scratch)
    }

    /// How many times a region has been allocated (or reallocated) so far: it stays the same
    /// across calls that allocate nothing.
    pub fn allocations(&self) -> u64 {
        self.allocations
    }

    /// Frees both regions now and leaves the storage empty (the next call allocates afresh).
    ///
    /// It first waits for all work of `gpu`'s context, on every stream whoever owns it, so no
    /// work enqueued with this storage can still be using it, and then frees without going
    /// through the stream that allocated it. That stream may no longer exist: storage kept for
    /// streams another library owns (a foreign caller's cache per stream) is freed this way.
    /// One exception: while the context has streams cudarc created (multi-stream mode, with
    /// its event tracking on), cudarc still makes the allocating stream wait for the regions'
    /// events as they are given up, so that stream must exist then. Blocks until the device is
    /// idle; on an error nothing is freed.
    pub fn free(&mut self, gpu: &Gpu) -> Result<()> {
        let regions = [&self.state, &self.scratch];
        if regions.iter().all(|r| r.is_none()) {
            return Ok(());
        }
        if regions.iter().flat_map(|r| r.as_ref()).any(|b| b.context() != gpu.context()) {
            return Err(Error::invalid("this TempStorage belongs to another CUDA context"));
        }
        gpu.context().synchronize()?;
        for region in [&mut self.state, &mut self.scratch] {
            if let Some(buf) = region.take() {
                let ptr = buf.leak();
                // SAFETY: `ptr` is this storage's own allocation (stream-ordered or not, both of
                // which cuMemFree takes), given up above, freed once; the context is idle, so
                // every access to it has completed.
                unsafe { cudarc::driver::result::memory_free(ptr) }?;
            }
        }
        (self.epoch, self.counter_base) = (0, 0);
        Ok(())
    }

    /// An error if any guard byte changed (waits for `stream`).
    pub fn check_guards(&self, stream: &Arc<CudaStream>) -> Result<()> {
        for (name, region) in [("tile state", &self.state), ("scratch", &self.scratch)] {
            let Some(buf) = region else { continue };
            let mut tail = vec![0u8; self.guard];
            stream.memcpy_dtoh(&buf.slice(buf.len() - self.guard..), &mut tail)?;
            stream.synchronize()?;
            if let Some(i) = tail.iter().position(|&b| b != GUARD_BYTE) {
                return Err(Error::invalid(format!(
                    "a kernel wrote {} bytes past the {name} its plan reserved (first at +{i})",
                    tail.iter().filter(|&&b| b != GUARD_BYTE).count()
                )));
            }
        }
        Ok(())
    }

    /// The region `which` with at least `bytes` bytes, (re)allocated zeroed when too small:
    /// (pointer, whether it was).
    fn grow(&mut self, gpu: &Gpu, stream: &Arc<CudaStream>, scratch: bool, bytes: u64) -> Result<(u64, bool)> {
        let guard = self.guard;
        let region = if scratch { &mut self.scratch } else { &mut self.state };
        if let Some(b) = region.as_ref() {
            if b.context() != gpu.context() {
                return Err(Error::invalid("this TempStorage belongs to another CUDA context"));
            }
        }
        let len = bytes.max(1) as usize;
        let fresh = region.as_ref().is_none_or(|b| b.len() - guard < len);
        if fresh {
            *region = None;
            let mut buf = gpu.alloc_zeros::<u8>(stream, "temporary storage", len + guard)?;
            if guard > 0 {
                stream.memcpy_htod(&vec![GUARD_BYTE; guard], &mut buf.slice_mut(len..))?;
            }
            *region = Some(buf);
            self.allocations += 1;
        }
        let buf = region.as_mut().expect("allocated above");
        let (ptr, _sync) = buf.device_ptr_mut(stream);
        Ok((ptr, fresh))
    }

    /// Scratch space laid out as [`carve`] says for `parts`: the device address of each part.
    pub(crate) fn scratch_parts(&mut self, gpu: &Gpu, stream: &Arc<CudaStream>, parts: &[u64]) -> Result<Vec<u64>> {
        let (offsets, total) = carve(parts)?;
        let base = self.scratch(gpu, stream, total)?;
        Ok(offsets.into_iter().map(|o| base + o).collect())
    }

    /// Scratch space of at least `bytes` bytes (contents unspecified), or 0 for none.
    pub(crate) fn scratch(&mut self, gpu: &Gpu, stream: &Arc<CudaStream>, bytes: u64) -> Result<u64> {
        if bytes == 0 {
            return Ok(0);
        }
        Ok(self.grow(gpu, stream, true, bytes)?.0)
    }

    /// Enqueues a copy of the scratch region's first 8 bytes to device address `dst`.
    pub(crate) fn copy_scratch_word(&self, stream: &Arc<CudaStream>, dst: u64) -> Result<()> {
        let buf = self.scratch.as_ref().ok_or_else(|| Error::invalid("no scratch word to copy"))?;
        let (src, _r) = buf.device_ptr(stream);
        // SAFETY: the scratch region holds at least 8 bytes once allocated, and `dst` 8 (the
        // caller's contract).
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, 8, stream.cu_stream()) }?;
        Ok(())
    }

    /// The tile state for a launch of `blocks` blocks as `state` describes it.
    pub(crate) fn state(
        &mut self,
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        state: &TileState,
        blocks: u64,
    ) -> Result<State> {
        let advance = match state.claims {
            Claims::Tiles(t) => t,
            Claims::TilesAndBlocks(t) => t + blocks,
        };
        let advance =
            u32::try_from(advance).map_err(|_| Error::invalid(format!("{advance} tile claims in one launch")))?;
        let (ptr, fresh) = self.grow(gpu, stream, false, state.bytes())?;
        if fresh {
            (self.epoch, self.counter_base) = (0, 0);
        }
        if self.epoch >= EPOCH_MAX {
            let len = self.state.as_ref().map_or(0, |b| b.len()) - self.guard;
            if let Some(b) = self.state.as_mut() {
                stream.memset_zeros(&mut b.slice_mut(0..len))?;
            }
            (self.epoch, self.counter_base) = (0, 0);
        }
        self.epoch += 1;
        let counter_base = self.counter_base;
        self.counter_base = counter_base.wrapping_add(advance);
        Ok(State { ptr, epoch: self.epoch, counter_base })
    }

    /// `r`, after forgetting the tile state if `r` is an error (a failed launch may have left it
    /// half-written): the next call starts afresh.
    pub(crate) fn poison_on_error<R>(&mut self, r: Result<R>) -> Result<R> {
        if r.is_err() {
            self.state = None;
        }
        r
    }
}

/// Where consecutive parts of `bytes` bytes each lie in a scratch region, every part on a
/// 256-byte boundary: (offsets, total bytes), or an error when the total overflows.
pub(crate) fn carve(parts: &[u64]) -> Result<(Vec<u64>, u64)> {
    let mut offsets = Vec::with_capacity(parts.len());
    let mut end = 0u64;
    for &bytes in parts {
        let start = end.checked_next_multiple_of(256).ok_or_else(overflow)?;
        offsets.push(start);
        end = start.checked_add(bytes).ok_or_else(overflow)?;
    }
    Ok((offsets, end))
}

fn overflow() -> Error {
    Error::out_of_range("the temporary storage", "more than 2^64 bytes", "addressable")
}

/// Bytes of element products, checked: `n` items of `size` bytes.
pub(crate) fn bytes_of(n: u64, size: usize) -> Result<u64> {
    n.checked_mul(size as u64).ok_or_else(overflow)
}
