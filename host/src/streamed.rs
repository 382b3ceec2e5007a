//! The streamed scan: an array in host memory, or one a [`ChunkSource`] reads from a file, scanned
//! through a few device buffers whatever its size, and written back (or to a [`ChunkSink`]).
//!
//! The chunk planner (`crate::plan::streamed`) cuts the array into chunks and picks the device
//! buffers ("slots") they go through round robin. Three streams overlap the work: the upload
//! stream copies chunk `i + 1` in, the caller's stream scans chunk `i` in place, the download
//! stream copies chunk `i - 1` out. Each chunk's scan starts from a carry that never leaves the
//! device: the inclusive prefix that the previous chunk's last tile published in its status word,
//! copied aside after that chunk's scan and read by the next launch (`INIT_FROM_TEMP`). The host
//! waits only to reuse a slot, to hand a finished chunk to its sink, and to report progress.
//!
//! Host memory that the driver knows as pinned (from [`Gpu::pinned`] or registered) is copied
//! directly; pageable memory and files go through pinned staging buffers, one per slot, filled
//! and drained by the host while the transfers of other chunks run.

use crate::apps::recurrence::RecurrenceFloat;
use crate::element::{Element, Op};
use crate::error::{Error, Result};
use crate::launch::scan::{single_pass_carrying, Operands};
use crate::options::ScanKernel;
use crate::options::WideningOptions;
use crate::options::{Algorithm, RecurrenceOptions, ScanOptions};
use crate::plan::gcd;
use crate::plan::scan::{
    fixed_order, plan as plan_scan, recurrence as recurrence_plan, widening as widening_plan, FixedOrder, ScanPlan,
    ScanRequest, SinglePass, WideningRequest,
};
use crate::plan::streamed::{plan, StreamPlan, StreamRequest, MAX_CHUNK_BYTES};
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use crate::widening::{request as widening_request, WidensTo};
use cudarc::driver::result::{memcpy_dtoh_async, memcpy_htod_async};
use cudarc::driver::sys::{CUmemorytype, CUpointer_attribute, CUresult};
use cudarc::driver::{
    sys, CudaEvent, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, PinnedHostSlice, ValidAsZeroBits,
};
use rayon::prelude::*;
use std::fmt;
use std::sync::Arc;

/// How a streamed scan uses the device and reports its progress.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct StreamOptions<'a> {
    /// Device bytes the stream may use, buffers and tile state together; `None`: half of the
    /// memory free when the call starts.
    pub device_memory: Option<u64>,
    /// The largest chunk in bytes ([`MAX_CHUNK_BYTES`] by default).
    pub max_chunk_bytes: u64,
    /// Called by the calling thread after each chunk is complete in the output.
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
}

impl Default for StreamOptions<'_> {
    fn default() -> Self {
        StreamOptions { device_memory: None, max_chunk_bytes: MAX_CHUNK_BYTES, progress: None }
    }
}

impl fmt::Debug for StreamOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamOptions")
            .field("device_memory", &self.device_memory)
            .field("max_chunk_bytes", &self.max_chunk_bytes)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl<'a> StreamOptions<'a> {
    pub fn new() -> StreamOptions<'a> {
        StreamOptions::default()
    }

    /// Caps the device memory the stream uses at `bytes`.
    pub fn device_memory(self, bytes: u64) -> Self {
        StreamOptions { device_memory: Some(bytes), ..self }
    }

    /// Chunks of at most `bytes` (at least one tile of the scan kernel).
    pub fn max_chunk_bytes(self, bytes: u64) -> Self {
        StreamOptions { max_chunk_bytes: bytes, ..self }
    }

    /// Calls `f` after each chunk.
    pub fn progress(self, f: &'a (dyn Fn(Progress) + Sync)) -> Self {
        StreamOptions { progress: Some(f), ..self }
    }
}

/// Where a streamed scan stands: `done` of `total` elements are in the output, through chunk
/// `chunk` (from 0) of `chunks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub chunk: u64,
    pub chunks: u64,
}

/// The input of a streamed scan: `len` elements, read a chunk at a time, in order.
pub trait ChunkSource<T> {
    /// Elements in the whole input.
    fn elements(&self) -> u64;
    /// Fills `into` with the elements from `start` on.
    fn read(&mut self, start: u64, into: &mut [T]) -> Result<()>;
}

/// The output of a streamed scan, written a chunk at a time, in order.
pub trait ChunkSink<T> {
    /// Takes the results from `start` on.
    fn write(&mut self, start: u64, from: &[T]) -> Result<()>;
}

/// Pageable host memory as a source: copied into the staging buffer by every core.
struct SliceSource<'a, T>(&'a [T]);

impl<T: Copy + Send + Sync> ChunkSource<T> for SliceSource<'_, T> {
    fn elements(&self) -> u64 {
        self.0.len() as u64
    }
    fn read(&mut self, start: u64, into: &mut [T]) -> Result<()> {
        parallel_copy(into, &self.0[start as usize..][..into.len()]);
        Ok(())
    }
}

/// Pageable host memory as a sink.
struct SliceSink<'a, T>(&'a mut [T]);

impl<T: Copy + Send + Sync> ChunkSink<T> for SliceSink<'_, T> {
    fn write(&mut self, start: u64, from: &[T]) -> Result<()> {
        parallel_copy(&mut self.0[start as usize..][..from.len()], from);
        Ok(())
    }
}

/// Chunks of a recurrence's maps, packed from `a` and `b` by every core.
struct MapSource<'a, F> {
    a: &'a [F],
    b: &'a [F],
}

impl<F: RecurrenceFloat + Send + Sync> ChunkSource<F::Map> for MapSource<'_, F> {
    fn elements(&self) -> u64 {
        self.a.len() as u64
    }
    fn read(&mut self, start: u64, into: &mut [F::Map]) -> Result<()> {
        let (a, b) = (&self.a[start as usize..][..into.len()], &self.b[start as usize..][..into.len()]);
        into.par_iter_mut().zip(a.par_iter().zip(b)).for_each(|(m, (&a, &b))| *m = F::map(a, b));
        Ok(())
    }
}

/// A recurrence's results, unpacked from the maps (0, x) into `x`.
struct XSink<'a, F> {
    x: &'a mut [F],
}

impl<F: RecurrenceFloat + Send + Sync> ChunkSink<F::Map> for XSink<'_, F> {
    fn write(&mut self, start: u64, from: &[F::Map]) -> Result<()> {
        let x = &mut self.x[start as usize..][..from.len()];
        x.par_iter_mut().zip(from.par_iter()).for_each(|(x, &m)| *x = F::x(m));
        Ok(())
    }
}

/// Chunks of a recurrence hold a multiple of this many maps (no order needs tile boundaries).
const RECURRENCE_GRANULE: u64 = 1024;

fn parallel_copy<T: Copy + Send + Sync>(dst: &mut [T], src: &[T]) {
    const PIECE: usize = 1 << 20;
    let piece = (PIECE / size_of::<T>().max(1)).max(1);
    dst.par_chunks_mut(piece).zip(src.par_chunks(piece)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// One side of the stream: host memory the driver can copy directly, or a source or sink that
/// goes through the staging buffers.
enum Side<P, S> {
    Pinned(P),
    Staged(S),
}

/// Whether the driver knows all of `bytes` at `ptr` as pinned host memory (allocated or
/// registered through it), so transfers can run from it directly.
fn pinned(gpu: &Gpu, ptr: *const u8, bytes: usize) -> bool {
    if bytes == 0 || gpu.context().bind_to_thread().is_err() {
        return false;
    }
    let host = |p: *const u8| {
        let mut ty = 0u32;
        // SAFETY: the attribute is an unsigned int written to `ty`; the driver only looks the
        // address up.
        let r = unsafe {
            sys::cuPointerGetAttribute(
                (&mut ty as *mut u32).cast(),
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                p as u64,
            )
        };
        r == CUresult::CUDA_SUCCESS && ty == CUmemorytype::CU_MEMORYTYPE_HOST as u32
    };
    host(ptr) && host(ptr.wrapping_add(bytes - 1))
}

/// Waits for every stream of a pipeline when it ends, by success or by error, so that no
/// transfer still runs into memory the caller gets back (or a buffer about to be freed).
struct Drain<'a>(&'a [&'a Arc<CudaStream>]);

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        for s in self.0 {
            let _ = s.synchronize();
        }
    }
}

impl Gpu {
    /// Scans `input`, in host memory, into `output` as `opts` says, through at most
    /// `stream_opts.device_memory` bytes of device memory, on `stream` and two streams of its
    /// own for the transfers. It blocks until `output` holds the whole result. Pinned memory
    /// ([`Gpu::pinned`]) is transferred directly; pageable memory goes through pinned staging
    /// buffers. Integer results equal the in-memory scan's; deterministic float results are
    /// bitwise those of the in-memory deterministic scan (chunks end on tile boundaries).
    pub fn scan_streamed<T: Element + Send + Sync>(
        &self,
        stream: &Arc<CudaStream>,
        input: &[T],
        output: &mut [T],
        opts: &ScanOptions<T>,
        stream_opts: &StreamOptions,
        temp: &mut TempStorage,
    ) -> Result<StreamPlan> {
        crate::error::exactly("the output", output.len() as u64, input.len() as u64, "elements")?;
        let n = input.len() as u64;
        let (mut source, mut sink) = (SliceSource(input), SliceSink(output));
        let (src, dst) = self.host_sides(&mut source, &mut sink);
        self.scan_pipeline(stream, n, src, dst, opts, stream_opts, temp)
    }

    /// The two sides of a stream between host slices: each one the driver knows as pinned is
    /// transferred directly, the other goes through the staging buffers.
    #[allow(clippy::type_complexity)]
    fn host_sides<'s, 'a: 's, I: Copy + Send + Sync, O: Copy + Send + Sync>(
        &self,
        source: &'s mut SliceSource<'a, I>,
        sink: &'s mut SliceSink<'a, O>,
    ) -> (Side<*const I, &'s mut dyn ChunkSource<I>>, Side<*mut O, &'s mut dyn ChunkSink<O>>) {
        let (src, src_bytes) = (source.0.as_ptr(), std::mem::size_of_val(source.0));
        let (dst, dst_bytes) = (sink.0.as_mut_ptr(), std::mem::size_of_val(&*sink.0));
        let input = match pinned(self, src.cast(), src_bytes) {
            true => Side::Pinned(src),
            false => Side::Staged(source as &mut dyn ChunkSource<I>),
        };
        let output = match pinned(self, dst.cast(), dst_bytes) {
            true => Side::Pinned(dst),
            false => Side::Staged(sink as &mut dyn ChunkSink<O>),
        };
        (input, output)
    }

    /// [`Gpu::scan_streamed`] from `source` (its length is the scan's) to `sink`, both through
    /// pinned staging buffers: for files, pipes, or anything larger than host memory, which holds
    /// only the chunks in flight. An error names the chunk; the sink has then taken only the
    /// chunks before it.
    pub fn scan_streamed_from<T: Element + Send + Sync>(
        &self,
        stream: &Arc<CudaStream>,
        source: &mut dyn ChunkSource<T>,
        sink: &mut dyn ChunkSink<T>,
        opts: &ScanOptions<T>,
        stream_opts: &StreamOptions,
        temp: &mut TempStorage,
    ) -> Result<StreamPlan> {
        let n = source.elements();
        self.scan_pipeline(stream, n, Side::Staged(source), Side::Staged(sink), opts, stream_opts, temp)
    }

    /// The plan [`Gpu::scan_streamed`] would follow for `n` elements (`staged`: through staging
    /// buffers), without running it.
    pub fn streamed_plan<T: Element>(
        &self,
        n: u64,
        staged: bool,
        opts: &ScanOptions<T>,
        stream_opts: &StreamOptions,
    ) -> Result<StreamPlan> {
        if opts.algorithm != Algorithm::SinglePass {
            return Err(Error::invalid(
                "a streamed scan runs the single-pass kernels: leave the algorithm at its default",
            ));
        }
        T::identity(opts.op)?;
        let size = size_of::<T>() as u64;
        // Whole tiles of either kernel a chunk may run (the deterministic order's tiles).
        let shapes = &self.tuning().shapes;
        let (tiles, pipelined) = (
            shapes.single_pass.at(size as usize).tile() as u64,
            shapes.scan_pipeline_of(T::TYPE, opts.op).tile() as u64,
        );
        let granule = tiles / gcd(tiles, pipelined) * pipelined;
        let req = self.stream_request(n, size, granule, staged, stream_opts)?;
        // The tile state of a chunk's scan, and the carry's slot.
        plan(&req, |chunk| Ok(self.chunk_plan(opts, n, chunk, false)?.state.bytes() + 16))
    }

    /// The linear recurrence `x[t] = a[t]·x[t-1] + b[t]` from `opts.x0` ([`Gpu::recurrence`]) of
    /// arrays in host memory, streamed as [`Gpu::scan_streamed`] streams a scan: each chunk's
    /// maps are packed on the host into staging buffers, and its carry is the affine map
    /// (0, x) of its last element, which stays on the device. Blocks until `x` is complete.
    #[allow(clippy::too_many_arguments)]
    pub fn recurrence_streamed<F: RecurrenceFloat + Send + Sync>(
        &self,
        stream: &Arc<CudaStream>,
        a: &[F],
        b: &[F],
        x: &mut [F],
        opts: &RecurrenceOptions<F>,
        stream_opts: &StreamOptions,
        temp: &mut TempStorage,
    ) -> Result<StreamPlan> {
        crate::error::exactly("the offsets b", b.len() as u64, a.len() as u64, "values")?;
        crate::error::exactly("the output x", x.len() as u64, a.len() as u64, "values")?;
        let n = a.len() as u64;
        let map = size_of::<F::Map>() as u64;
        let req = self.stream_request(n, map, RECURRENCE_GRANULE, true, stream_opts)?;
        let chunk_plan = |len: u64| recurrence_plan(self.tuning(), F::TYPE, len, opts.kernel, true);
        let p = plan(&req, |chunk| Ok(chunk_plan(chunk)?.state.bytes() + map))?;
        if n == 0 {
            return Ok(p);
        }
        let mut source = MapSource { a, b };
        let mut sink = XSink { x };
        let (init, identity) = (F::start(opts.x0), F::identity_map());
        let mut launch = |i: u64, at: u64, _: u64, len: u64, carry: u64| -> Result<()> {
            let ops = Operands { input: at, output: at, n: len, init, identity };
            single_pass_carrying(self, stream, &chunk_plan(len)?, ops, (i > 0).then_some(carry), carry, temp)
        };
        let (source, sink) = (Side::Staged(&mut source as _), Side::Staged(&mut sink as _));
        self.pipeline(stream, &p, source, sink, true, stream_opts, &mut launch)?;
        Ok(p)
    }

    /// The widening sum ([`Gpu::widening_scan`]) of `input`, in host memory, into the wider
    /// `output`, streamed as [`Gpu::scan_streamed`] streams a scan: each chunk goes up at its
    /// own width into one device buffer and is summed into another, whose wide results come
    /// back. Blocks until `output` holds the whole result. Deterministic half-float sums are
    /// bitwise those of the in-memory deterministic widening scan (chunks end on tile boundaries).
    pub fn widening_scan_streamed<N: WidensTo<T>, T: Element + Send + Sync>(
        &self,
        stream: &Arc<CudaStream>,
        input: &[N],
        output: &mut [T],
        opts: &WideningOptions<T>,
        stream_opts: &StreamOptions,
        temp: &mut TempStorage,
    ) -> Result<StreamPlan> {
        crate::error::exactly("the output", output.len() as u64, input.len() as u64, "elements")?;
        let n = input.len() as u64;
        let (mut source, mut sink) = (SliceSource(input), SliceSink(output));
        let (input, output) = self.host_sides(&mut source, &mut sink);
        let staged = matches!(input, Side::Staged(_)) || matches!(output, Side::Staged(_));
        let p = self.widening_streamed_plan::<N, T>(n, staged, opts, stream_opts)?;
        if n == 0 {
            return Ok(p);
        }
        let identity = T::identity(Op::Add)?;
        let init = opts.init.unwrap_or(identity);
        let mut launch = |i: u64, at_in: u64, at_out: u64, len: u64, carry: u64| -> Result<()> {
            let plan = self.widening_chunk_plan::<N, T>(opts, len, i == 0)?;
            let ops = Operands { input: at_in, output: at_out, n: len, init, identity };
            single_pass_carrying(self, stream, &plan, ops, (i > 0).then_some(carry), carry, temp)
        };
        self.pipeline(stream, &p, input, output, false, stream_opts, &mut launch)?;
        Ok(p)
    }

    /// The plan [`Gpu::widening_scan_streamed`] would follow for `n` elements (`staged`: through
    /// staging buffers): a slot holds a chunk at each width.
    pub fn widening_streamed_plan<N: WidensTo<T>, T: Element>(
        &self,
        n: u64,
        staged: bool,
        opts: &WideningOptions<T>,
        stream_opts: &StreamOptions,
    ) -> Result<StreamPlan> {
        let size = (size_of::<N>() + size_of::<T>()) as u64;
        let granule = self.tuning().shapes.single_pass.at(size_of::<T>()).tile() as u64;
        let req = self.stream_request(n, size, granule, staged, stream_opts)?;
        plan(&req, |chunk| Ok(self.widening_chunk_plan::<N, T>(opts, chunk, false)?.state.bytes() + 16))
    }

    /// The single-pass plan of a widening chunk of `len` elements (`first`: the caller's initial
    /// value goes in front; later chunks take the carry).
    fn widening_chunk_plan<N: WidensTo<T>, T: Element>(
        &self,
        opts: &WideningOptions<T>,
        len: u64,
        first: bool,
    ) -> Result<SinglePass> {
        let req =
            WideningRequest { has_init: first && opts.init.is_some(), ..widening_request::<N, T>(len, opts, true) };
        match widening_plan(self.tuning(), &req)? {
            ScanPlan::SinglePass(s) => Ok(s),
            other => Err(Error::invalid(format!("a streamed widening chunk planned as {other:?}, not single-pass"))),
        }
    }

    /// Whether the driver knows all of `data` as pinned host memory ([`Gpu::pinned`], or memory
    /// registered with it): a streamed scan then transfers it directly, with no staging.
    pub fn is_pinned<T>(&self, data: &[T]) -> bool {
        pinned(self, data.as_ptr().cast(), std::mem::size_of_val(data))
    }

    /// The planner's request for `n` elements of `elem_bytes` in chunks of `granule`, within the
    /// cap of `o` (half of the free memory by default).
    fn stream_request(
        &self,
        n: u64,
        elem_bytes: u64,
        granule: u64,
        staged: bool,
        o: &StreamOptions,
    ) -> Result<StreamRequest> {
        let device_memory = match o.device_memory {
            Some(bytes) => bytes,
            None => self.memory()?.0 / 2,
        };
        Ok(StreamRequest { n, elem_bytes, device_memory, granule, staged, max_chunk_bytes: o.max_chunk_bytes })
    }

    /// Pinned (page-locked) host memory for `n` elements, zeroed: transfers run from and into it
    /// at the full speed of the bus, with no staging.
    pub fn pinned<T: Element>(&self, n: usize) -> Result<PinnedHostSlice<T>> {
        self.pinned_raw(n)
    }

    /// [`Gpu::pinned`] for any plain device type (the staging of maps as well as of elements).
    fn pinned_raw<T: DeviceRepr + ValidAsZeroBits>(&self, n: usize) -> Result<PinnedHostSlice<T>> {
        let bytes = (n as u64).saturating_mul(size_of::<T>() as u64);
        // SAFETY: the memory is zeroed below before anyone reads it; flags 0 (not write-combined)
        // keep it fast for the CPU to read back.
        let mut p = unsafe { self.context().alloc_pinned_with_flags::<T>(n, 0) }.map_err(|e| Error::Io {
            what: format!("pinned host memory of {bytes} bytes could not be allocated"),
            source: std::io::Error::other(e),
        })?;
        let ptr = p.as_mut_ptr()? as usize;
        // SAFETY: `ptr` holds `bytes` bytes, and T is valid as zero bits.
        let all = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, bytes as usize) };
        all.par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
        Ok(p)
    }

    /// The single-pass plan of a chunk of `len` of the `n` elements, scanned in place (`first`:
    /// the caller's initial value goes in front; later chunks take the carry). A deterministic
    /// float scan's chunks follow the fixed order of the whole array's in-memory scan, which
    /// depends on its size.
    fn chunk_plan<T: Element>(&self, opts: &ScanOptions<T>, n: u64, len: u64, first: bool) -> Result<SinglePass> {
        let mut req =
            ScanRequest { in_place: true, aligned: true, has_init: first && opts.init.is_some(), ..opts.request(len) };
        if let Some(order) = fixed_order(self.tuning(), &opts.request(n)) {
            req.kernel = match order {
                FixedOrder::Tiles => ScanKernel::Tiles,
                FixedOrder::Pipelined => ScanKernel::Pipelined,
            };
        }
        match plan_scan(self.tuning(), &req)? {
            ScanPlan::SinglePass(s) => Ok(s),
            other => Err(Error::invalid(format!("a streamed chunk planned as {other:?}, not single-pass"))),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn scan_pipeline<T: Element + Send + Sync>(
        &self,
        stream: &Arc<CudaStream>,
        n: u64,
        input: Side<*const T, &mut dyn ChunkSource<T>>,
        output: Side<*mut T, &mut dyn ChunkSink<T>>,
        opts: &ScanOptions<T>,
        stream_opts: &StreamOptions,
        temp: &mut TempStorage,
    ) -> Result<StreamPlan> {
        let staged = matches!(input, Side::Staged(_)) || matches!(output, Side::Staged(_));
        let p = self.streamed_plan(n, staged, opts, stream_opts)?;
        if n == 0 {
            return Ok(p);
        }
        let identity = T::identity(opts.op)?;
        let init = opts.init.unwrap_or(identity);
        let mut launch = |i: u64, at: u64, _: u64, len: u64, carry: u64| -> Result<()> {
            let plan = self.chunk_plan(opts, n, len, i == 0)?;
            let ops = Operands { input: at, output: at, n: len, init, identity };
            single_pass_carrying(self, stream, &plan, ops, (i > 0).then_some(carry), carry, temp)
        };
        self.pipeline(stream, &p, input, output, true, stream_opts, &mut launch)?;
        Ok(p)
    }

    /// Runs the plan `p`: chunk `i` of `len` elements, uploaded to the device buffer at `at_in`,
    /// is scanned into the one at `at_out` by `launch(i, at_in, at_out, len, carry)` on `stream`,
    /// which also leaves the carry of the next chunk at `carry` (and reads this chunk's there,
    /// after the first). `in_place` (input and output of one size): each slot is one device
    /// buffer, and one staging buffer; otherwise each has one for the input and one for the output.
    #[allow(clippy::too_many_arguments)]
    fn pipeline<I, O>(
        &self,
        stream: &Arc<CudaStream>,
        p: &StreamPlan,
        mut input: Side<*const I, &mut dyn ChunkSource<I>>,
        mut output: Side<*mut O, &mut dyn ChunkSink<O>>,
        in_place: bool,
        stream_opts: &StreamOptions,
        launch: &mut dyn FnMut(u64, u64, u64, u64, u64) -> Result<()>,
    ) -> Result<()>
    where
        I: DeviceRepr + Copy + Send + Sync,
        O: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + Unpin,
    {
        debug_assert!(!in_place || size_of::<I>() == size_of::<O>());
        let (p, n) = (*p, p.n);
        let chunk = p.chunk as usize;
        let (bytes_in, bytes_out) = (chunk * size_of::<I>(), chunk * size_of::<O>());
        let (staged_in, staged_out) = (matches!(input, Side::Staged(_)), matches!(output, Side::Staged(_)));
        let mut buffers: Vec<CudaSlice<u8>> = Vec::new();
        let mut staging: Vec<PinnedHostSlice<u8>> = Vec::new();
        let (mut dev, mut host) = (Vec::new(), Vec::new());
        for _ in 0..p.slots {
            let mut device = |bytes| -> Result<u64> {
                let mut b = self.alloc_zeros::<u8>(stream, "a stream buffer", bytes)?;
                let at = b.device_ptr_mut(stream).0;
                buffers.push(b);
                Ok(at)
            };
            let d_in = device(bytes_in)?;
            let d_out = if in_place { d_in } else { device(bytes_out)? };
            let mut pinned = |wanted: bool, bytes| -> Result<usize> {
                if !wanted {
                    return Ok(0);
                }
                let mut h = self.pinned_raw::<u8>(bytes)?;
                let at = h.as_mut_ptr()? as usize;
                staging.push(h);
                Ok(at)
            };
            let h_in = pinned(staged_in || (in_place && staged_out), bytes_in)?;
            let h_out = if in_place { h_in } else { pinned(staged_out, bytes_out)? };
            dev.push((d_in, d_out));
            host.push((h_in, h_out));
        }
        let mut carry = self.alloc_zeros::<O>(stream, "the stream's carry", 1)?;
        let carry = carry.device_ptr_mut(stream).0;
        let (up, down) = (self.new_stream()?, self.new_stream()?);
        let event = || self.context().new_event(None);
        let events = |_| Ok::<_, Error>([event()?, event()?, event()?]);
        let events: Vec<[CudaEvent; 3]> = (0..p.slots).map(events).collect::<Result<_>>()?;
        // Everything already on the caller's stream (the buffers' zeroing) comes first.
        up.wait(&stream.record_event(None)?)?;
        let streams = [stream, &up, &down];
        let _drain = Drain(&streams);

        // SAFETY (both): the staging buffers of slot `s` hold `chunk >= len` elements; the host
        // touches them only between the slot's download's completion and its next upload.
        let staged_in_at = |s: usize, len: usize| unsafe { std::slice::from_raw_parts_mut(host[s].0 as *mut I, len) };
        let staged_out_at = |s: usize, len: usize| unsafe { std::slice::from_raw_parts_mut(host[s].1 as *mut O, len) };
        let fail = |i: u64| {
            move |e: Error| {
                let r = p.range(i);
                Error::Chunk { chunk: i, chunks: p.chunks, start: r.start, end: r.end, source: Box::new(e) }
            }
        };
        let finish = |j: u64, output: &mut Side<*mut O, &mut dyn ChunkSink<O>>| -> Result<()> {
            let (s, r) = ((j % p.slots) as usize, p.range(j));
            events[s][2].synchronize()?;
            if let Side::Staged(sink) = output {
                sink.write(r.start, staged_out_at(s, (r.end - r.start) as usize))?;
            }
            if let Some(f) = stream_opts.progress {
                f(Progress { done: r.end, total: n, chunk: j, chunks: p.chunks });
            }
            Ok(())
        };
        for i in 0..p.chunks {
            let s = (i % p.slots) as usize;
            if i >= p.slots {
                finish(i - p.slots, &mut output).map_err(fail(i - p.slots))?;
            }
            let r = p.range(i);
            let len = (r.end - r.start) as usize;
            let [uploaded, scanned, downloaded] = &events[s];
            let (d_in, d_out) = dev[s];
            let mut enqueue = || -> Result<()> {
                // SAFETY (all three copies): the device buffers of slot `s` hold `chunk >= len`
                // elements; the caller's pinned memory holds `n`, of which chunk `i` is `r`; a
                // staging buffer is reused only once the host has seen its download complete.
                let src: &[I] = match &mut input {
                    Side::Pinned(ptr) => unsafe { std::slice::from_raw_parts(ptr.add(r.start as usize), len) },
                    Side::Staged(source) => {
                        let into = staged_in_at(s, len);
                        source.read(r.start, into)?;
                        into
                    }
                };
                unsafe { memcpy_htod_async(d_in, src, up.cu_stream()) }?;
                uploaded.record(&up)?;
                stream.wait(uploaded)?;
                launch(i, d_in, d_out, len as u64, carry)?;
                scanned.record(stream)?;
                down.wait(scanned)?;
                let dst: &mut [O] = match &mut output {
                    Side::Pinned(ptr) => unsafe { std::slice::from_raw_parts_mut(ptr.add(r.start as usize), len) },
                    Side::Staged(_) => staged_out_at(s, len),
                };
                unsafe { memcpy_dtoh_async(dst, d_out, down.cu_stream()) }?;
                Ok(downloaded.record(&down)?)
            };
            enqueue().map_err(fail(i))?;
        }
        for j in p.chunks.saturating_sub(p.slots)..p.chunks {
            finish(j, &mut output).map_err(fail(j))?;
        }
        Ok(())
    }
}
