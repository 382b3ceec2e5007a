//! The one `unsafe` layer: memory and streams the library did not allocate (DLPack,
//! `__cuda_array_interface__`, another library's allocator), for foreign callers such as the
//! Python package.
//!
//! [`ForeignSlice`] is a device pointer and a length that every function of the library takes
//! where it takes a `CudaSlice` or a view; [`Gpu::borrow_stream`] makes a raw `CUstream` the
//! stream those functions enqueue on. Nothing here records events or waits: ordering foreign
//! memory with other work is the caller's, exactly as on the foreign side.

use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::sys::{CUdeviceptr, CUstream};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop};
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` elements of `T` at a device address the library does not own.
#[derive(Debug)]
pub struct ForeignSlice<T> {
    ptr: CUdeviceptr,
    len: usize,
    stream: Arc<CudaStream>,
    _elements: PhantomData<T>,
}

impl<T> ForeignSlice<T> {
    /// Wraps `len` elements of `T` at device address `ptr`, to be used on `stream`.
    ///
    /// Fails if `ptr` is null (with `len > 0`) or not aligned for `T`.
    ///
    /// # Safety
    /// - `ptr .. ptr + len * size_of::<T>()` is device memory of `stream`'s context, readable
    ///   (and writable, where the value is passed as an output), and stays allocated while this
    ///   value, or work enqueued with it, may use it;
    /// - the caller orders every other access to that memory with the work the library enqueues
    ///   on the stream it is passed with (the library records no events and never waits);
    /// - the memory holds valid values of `T` where the library reads it.
    pub unsafe fn new(ptr: u64, len: usize, stream: &Arc<CudaStream>) -> Result<ForeignSlice<T>> {
        if len > 0 && ptr == 0 {
            return Err(Error::invalid("a foreign buffer of elements at address 0"));
        }
        let align = std::mem::align_of::<T>() as u64;
        if !ptr.is_multiple_of(align) {
            return Err(Error::invalid(format!("the foreign buffer at {ptr:#x} is not on a {align}-byte boundary")));
        }
        len.checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::out_of_range("a foreign buffer's length", len, "addressable"))?;
        Ok(ForeignSlice { ptr, len, stream: stream.clone(), _elements: PhantomData })
    }

    /// The device address.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
}

impl<T> DeviceSlice<T> for ForeignSlice<T> {
    fn len(&self) -> usize {
        self.len
    }

    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for ForeignSlice<T> {
    fn device_ptr<'a>(&'a self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        (self.ptr, SyncOnDrop::Sync(None))
    }
}

impl<T> DevicePtrMut<T> for ForeignSlice<T> {
    fn device_ptr_mut<'a>(&'a mut self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        (self.ptr, SyncOnDrop::Sync(None))
    }
}

impl Gpu {
    /// A stream of this GPU's context for a raw `CUstream` another library owns (torch's or
    /// CuPy's current stream, the stream a DLPack exchange names). Dropping it leaves the
    /// stream alone.
    ///
    /// # Safety
    /// `stream` is a valid stream of this GPU's context (or the legacy default stream, null),
    /// and its owner keeps it alive while the returned value, or work enqueued on it, is in use.
    pub unsafe fn borrow_stream(&self, stream: CUstream) -> Arc<CudaStream> {
        // SAFETY: the caller's contract is cudarc's.
        unsafe { self.context().wrap_borrowed_stream(stream) }
    }
}
