//! The device-wide scan: `Gpu::scan` and friends. Each call becomes a request, the request a
//! plan (`crate::plan::scan`), and the plan launches (`crate::launch::scan`).

use crate::element::Element;
use crate::error::{at_least, Error, Result};
use crate::launch::scan::{self as launch, hier_steps, Operands};
use crate::options::{ReduceOptions, ScanOptions};
use crate::plan::check_output;
use crate::plan::multi::reduce;
use crate::plan::scan::{aligned, plan, ScanPlan, ScanRequest};
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// The request for a scan of `n` elements of `T` with `opts`, between `input` and `output`.
pub(crate) fn request<T: Element>(opts: &ScanOptions<T>, n: u64, input: u64, output: u64) -> ScanRequest {
    ScanRequest { aligned: aligned(input) && aligned(output), in_place: input == output, ..opts.request(n) }
}

impl<T: Element> ScanOptions<T> {
    /// The planner's request for a scan of `n` elements with these options, between distinct
    /// buffers on 16-byte boundaries (set `in_place` or `aligned` for others): what
    /// [`crate::plan::scan::plan`] checks and plans without a GPU.
    pub fn request(&self, n: u64) -> ScanRequest {
        let opts = self;
        ScanRequest {
            ty: T::TYPE,
            op: opts.op,
            n,
            exclusive: opts.exclusive,
            has_init: opts.init.is_some(),
            algorithm: opts.algorithm,
            kernel: opts.kernel,
            deterministic: opts.deterministic,
            ordering: opts.status_ordering,
            backoff_ns: opts.backoff_ns,
            aligned: true,
            in_place: false,
        }
    }
}

impl Gpu {
    /// Scans `input` into `output` on `stream`. Asynchronous like every stream operation:
    /// kernel faults surface at the next synchronization.
    pub fn scan<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        opts: &ScanOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        let (i, _read) = input.device_ptr(stream);
        let (o, _write) = output.device_ptr_mut(stream);
        self.scan_raw(stream, i, o, n, opts, temp)
    }

    /// Scans `data` in place on `stream` (single-pass and hierarchical strategies).
    pub fn scan_in_place<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        data: &mut impl DevicePtrMut<T>,
        opts: &ScanOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = data.len() as u64;
        let (p, _write) = data.device_ptr_mut(stream);
        self.scan_raw(stream, p, p, n, opts, temp)
    }

    /// The scan of `n` elements on raw device pointers (`output` may equal `input`).
    fn scan_raw<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: u64,
        output: u64,
        n: u64,
        opts: &ScanOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let plan = plan(self.tuning(), &request(opts, n, input, output))?;
        let identity = T::identity(opts.op)?;
        let ops = Operands { input, output, n, init: opts.init.unwrap_or(identity), identity };
        launch::run(self, stream, &plan, ops, temp)
    }

    /// Uploads `input`, scans it on the default stream and returns the result.
    pub fn scan_host<T: Element>(&self, input: &[T], opts: &ScanOptions<T>) -> Result<Vec<T>> {
        let stream = self.stream().clone();
        let src = self.upload(&stream, "scan input", input)?;
        let mut dst = self.alloc_zeros::<T>(&stream, "scan output", input.len())?;
        let mut temp = TempStorage::new();
        self.scan(&stream, &src, &mut dst, opts, &mut temp)?;
        stream.synchronize()?;
        self.download(&stream, &dst)
    }

    /// Combines every element of `input` with `opts.op`, in index order, into `output[0]` (the
    /// identity for an empty input). Asynchronous. Requires `output.len() >= 1`.
    pub fn reduce<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        opts: &ReduceOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        at_least("the output", output.len() as u64, 1, "elements")?;
        let n = input.len() as u64;
        let identity = T::identity(opts.op)?;
        let (steps, scratch) = reduce(self.tuning(), &ScanRequest::new(T::TYPE, opts.op, n), n);
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let scratch = temp.scratch(self, stream, scratch)?;
        let ops = Operands { input: i, output: o, n, init: identity, identity };
        hier_steps(self, stream, &steps, &ops, scratch)
    }

    /// Bytes of temporary storage a reduction of `n` elements of `T` with `opts` needs.
    pub fn reduce_temp_bytes<T: Element>(&self, n: u64, opts: &ReduceOptions) -> Result<u64> {
        T::identity(opts.op)?;
        Ok(reduce(self.tuning(), &ScanRequest::new(T::TYPE, opts.op, n), n).1)
    }

    /// Bytes of temporary storage a scan of `n` elements of `T` with `opts` needs (buffers on
    /// 16-byte boundaries, as fresh allocations are).
    pub fn scan_temp_bytes<T: Element>(&self, n: u64, opts: &ScanOptions<T>) -> Result<u64> {
        let plan: ScanPlan = plan(self.tuning(), &request(opts, n, 0, 16))?;
        let (state, scratch) = plan.temp_bytes();
        state.checked_add(scratch).ok_or_else(|| Error::invalid("the temporary storage overflows"))
    }
}
