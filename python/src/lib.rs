//! The native half of the Python package `gpu_scan`: the library's functions on raw device
//! pointers and a raw stream, through its one unsafe layer (`ForeignSlice`,
//! `Gpu::borrow_stream`), with the GIL released while they enqueue.
//!
//! The Python half (`gpu_scan/`) finds the pointers, the caller's current stream and the output
//! buffers of a torch, CuPy or `__cuda_array_interface__` array, allocated by its framework; it
//! hands them here with their dtypes as short names (`u8` … `f64`, `bool`, `f16`, `bf16`). The
//! library checks every length and type again. One `Gpu` is opened per device, on its primary
//! context (the one torch and CuPy use), and one `TempStorage` is kept per device and stream, so
//! repeated calls allocate nothing. Every entry point leaves the calling thread's current CUDA
//! context as it found it ([`KeepContext`]).

use gpu_scan::cudarc::driver::sys::{self, CUpointer_attribute, CUresult, CUstream};
use gpu_scan::cudarc::driver::{result, CudaStream, DriverError};
use gpu_scan::{
    Axis, BatchedOptions, CompactOptions, Element, ForeignSlice, Gpu, HistogramOptions, Keep, Matrix, Op,
    RecurrenceOptions, ScanOptions, SegmentedOptions, SortOptions, TempStorage, WideningOptions,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;

pyo3::create_exception!(
    gpu_scan,
    Error,
    PyRuntimeError,
    "A failure of the machine rather than of the arguments: no CUDA driver or device, out of device \
     memory, a driver or kernel error. The message is the library's."
);

/// Temporary storage is kept for at most this many streams of a device. A call on one more
/// frees all of it first (one wait for the device), so streams that no longer exist (a CuPy
/// stream collected, a thread ended) do not keep theirs for ever. Twice the 32 streams of one
/// priority in torch's pool, so cycling through the pool does not make every call wait.
const CACHED_STREAMS: usize = 64;

/// Which temporary storage a call uses: one per stream, whose work runs in issue order, so calls
/// that share it never overlap on the GPU.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum StreamKey {
    /// The legacy default stream (handle 0, or 1, `CU_STREAM_LEGACY`): one stream for every
    /// thread. Its work runs in issue order, and every call enqueues under the cache's lock, so
    /// calls from different threads still use the storage one after the other.
    Legacy,
    /// The per-thread default stream (handle 2, `CU_STREAM_PER_THREAD`): the same handle names
    /// another stream in each thread, and those run concurrently.
    PerThread(ThreadId),
    /// A created stream, by the driver's id, unique for the life of the process: a destroyed
    /// stream's handle can come back for a new stream while the old one's work still runs.
    Id(u64),
    /// A created stream whose id the driver does not give (before CUDA 12.0, or while the stream
    /// is captured into a graph), by its handle.
    Handle(u64),
}

/// One device: its `Gpu`, and the temporary storage of each stream that has used it.
struct Device {
    gpu: Gpu,
    /// Whether the driver has `cuStreamGetId` (CUDA 12.0 and later).
    stream_ids: bool,
    temps: Mutex<HashMap<StreamKey, TempStorage>>,
}

impl Device {
    /// The key of the raw stream `handle` for the calling thread.
    fn key(&self, handle: u64) -> StreamKey {
        match handle {
            0 | 1 => StreamKey::Legacy,
            2 => StreamKey::PerThread(std::thread::current().id()),
            _ => {
                let mut id = 0;
                // SAFETY: `handle` is a live stream of this device's context (`enqueue`'s
                // contract), and the driver has the function.
                if self.stream_ids
                    && unsafe { sys::cuStreamGetId(handle as CUstream, &mut id) } == CUresult::CUDA_SUCCESS
                {
                    StreamKey::Id(id)
                } else {
                    StreamKey::Handle(handle)
                }
            }
        }
    }
}

/// Frees every storage in `temps` and forgets them. `TempStorage::free` waits for the whole
/// device first, so work still queued on any stream, dead or alive, finishes before its storage
/// goes, and it frees without the stream the storage was allocated on. (Dropping one instead
/// would free it on that stream, which may no longer exist.) On an error, what was not freed is
/// kept.
fn free_all(gpu: &Gpu, temps: &mut HashMap<StreamKey, TempStorage>) -> gpu_scan::Result<()> {
    for temp in temps.values_mut() {
        temp.free(gpu)?;
    }
    temps.clear();
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The devices opened so far, by ordinal.
fn devices() -> &'static Mutex<HashMap<usize, Arc<Device>>> {
    static DEVICES: OnceLock<Mutex<HashMap<usize, Arc<Device>>>> = OnceLock::new();
    DEVICES.get_or_init(Default::default)
}

/// The device `ordinal`, opened on first use.
fn device(ordinal: usize) -> gpu_scan::Result<Arc<Device>> {
    let mut devices = lock(devices());
    if let Some(d) = devices.get(&ordinal) {
        return Ok(d.clone());
    }
    let gpu = Gpu::new(ordinal)?;
    let mut version: c_int = 0;
    // SAFETY: writes one int; the driver is loaded (the `Gpu` opened).
    let stream_ids = unsafe { sys::cuDriverGetVersion(&mut version) } == CUresult::CUDA_SUCCESS && version >= 12000;
    let d = Arc::new(Device { gpu, stream_ids, temps: Mutex::new(HashMap::new()) });
    devices.insert(ordinal, d.clone());
    Ok(d)
}

/// The library's error as the Python exception a caller expects: `TypeError` for a type or
/// operator a function lacks, `ValueError` for other mistakes of the caller, [`Error`] for the
/// machine's failures.
fn to_py(e: gpu_scan::Error) -> PyErr {
    match e {
        gpu_scan::Error::UnsupportedType { .. } | gpu_scan::Error::UnsupportedOp { .. } => {
            PyTypeError::new_err(e.to_string())
        }
        e if e.is_usage() => PyValueError::new_err(e.to_string()),
        e => Error::new_err(e.to_string()),
    }
}

/// Where a call runs: the device, and the caller's raw stream (0: the legacy default stream).
#[derive(Clone, Copy)]
struct On {
    device: usize,
    stream: u64,
}

/// The context current on the calling thread when it was saved, made current again when this
/// drops, after a call's driver work, whether that work succeeded or failed.
///
/// cudarc makes a device's primary context current on the calling thread before its work (and
/// before the drops of some of its values) and leaves it there. The CUDA runtime takes the
/// thread's current context for its current device, so without this a call on `cuda:1` would
/// move torch's and CuPy's current device to 1. cudarc asks the driver which context is current
/// each time it binds one, and keeps no copy, so setting another under it confuses nothing.
///
/// Save it on the thread that does the driver work (inside `py.detach`, which runs its closure
/// on the calling thread) before the first driver call, and let it drop after every cudarc value
/// of the call: declared first, it drops last.
struct KeepContext(Option<sys::CUcontext>);

impl KeepContext {
    fn save() -> KeepContext {
        // Without a driver, or where it cannot start, no context can become current: the call
        // fails before any does. Found out once: it is on every call's path.
        static DRIVER: OnceLock<bool> = OnceLock::new();
        if !*DRIVER.get_or_init(|| gpu_scan::driver_present() && result::init().is_ok()) {
            return KeepContext(None);
        }
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle (null where none is current); the driver is initialized.
        let saved = unsafe { sys::cuCtxGetCurrent(&mut ctx) } == CUresult::CUDA_SUCCESS;
        KeepContext(saved.then_some(ctx))
    }
}

impl Drop for KeepContext {
    fn drop(&mut self) {
        if let Some(ctx) = self.0 {
            // SAFETY: `ctx` was current on this thread when saved (null: none was), and the
            // caller still holds it. Nothing can be done about a failure here.
            let _ = unsafe { sys::cuCtxSetCurrent(ctx) };
        }
    }
}

/// Runs `f` without the GIL on the caller's stream with that stream's temporary storage.
fn enqueue<R: Send>(
    py: Python<'_>,
    on: On,
    f: impl FnOnce(&Gpu, &Arc<CudaStream>, &mut TempStorage) -> gpu_scan::Result<R> + Send,
) -> PyResult<R> {
    py.detach(|| {
        let _keep = KeepContext::save();
        let d = device(on.device)?;
        // SAFETY: the Python half passes the current stream of the framework that owns the
        // arrays, on this device's primary context, and holds the arrays while the call runs.
        let stream = unsafe { d.gpu.borrow_stream(on.stream as CUstream) };
        let key = d.key(on.stream);
        let mut temps = lock(&d.temps);
        if !temps.contains_key(&key) && temps.len() >= CACHED_STREAMS {
            free_all(&d.gpu, &mut temps)?;
        }
        let temp = temps.entry(key).or_default();
        f(&d.gpu, &stream, temp)
    })
    .map_err(to_py)
}

/// `len` elements of `T` at `ptr` on `stream`.
///
/// # Safety
/// The Python half passes the address of a live array of `len` elements of `T`, on the device
/// of `stream`, owned by a framework that orders its own work on that stream.
unsafe fn at<T>(ptr: u64, len: usize, stream: &Arc<CudaStream>) -> gpu_scan::Result<ForeignSlice<T>> {
    unsafe { ForeignSlice::new(ptr, len, stream) }
}

fn op(name: &str) -> PyResult<Op> {
    Op::parse(name).ok_or_else(|| PyValueError::new_err(format!("unknown operator {name:?}")))
}

fn unsupported(what: &str, dtype: &str) -> PyErr {
    PyTypeError::new_err(format!("{what} is not built for dtype {dtype}"))
}

/// Runs `$body` with `$T` the element type named by `$dtype` (the library's eight scan types).
macro_rules! by_type {
    ($what:expr, $dtype:expr, |$T:ident| $body:expr) => {
        by_type!(@arms $what, $dtype, $T, $body,
            ("u8", u8), ("u16", u16), ("u32", u32), ("i32", i32), ("u64", u64), ("i64", i64), ("f32", f32), ("f64", f64))
    };
    (@arms $what:expr, $dtype:expr, $T:ident, $body:expr, $(($name:literal, $ty:ty)),*) => {
        match $dtype {
            $($name => {
                type $T = $ty;
                $body
            })*
            other => Err(unsupported($what, other)),
        }
    };
}

/// [`by_type!`] over the key types of a scan by key: the integers of every width, signed or not.
macro_rules! by_key_type {
    ($what:expr, $dtype:expr, |$K:ident| $body:expr) => {
        by_type!(@arms $what, $dtype, $K, $body,
            ("u8", u8), ("i8", i8), ("u16", u16), ("i16", i16), ("u32", u32), ("i32", i32), ("u64", u64), ("i64", i64))
    };
}

/// The scan of `n` elements at `input` into `output`: inclusive or exclusive, from `init`, in
/// the fixed combine order when `deterministic`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scan(
    py: Python<'_>,
    dtype: &str,
    op_name: &str,
    exclusive: bool,
    deterministic: bool,
    init: Option<Bound<'_, PyAny>>,
    input: u64,
    output: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let op = op(op_name)?;
    let on = On { device, stream };
    by_type!("scan", dtype, |T| {
        let init = init.map(|v| v.extract::<T>()).transpose()?;
        let opts = ScanOptions::<T>::new(op).exclusive(exclusive).init(init).deterministic(deterministic);
        enqueue(py, on, move |gpu, s, temp| {
            let (x, mut y) = unsafe { (at::<T>(input, n, s)?, at::<T>(output, n, s)?) };
            if input == output {
                gpu.scan_in_place(s, &mut y, &opts, temp)
            } else {
                gpu.scan(s, &x, &mut y, &opts, temp)
            }
        })
    })
}

/// Runs `$body` with `$N` the narrow type and `$T` the wide one, for every widening sum the
/// library has.
macro_rules! by_widening {
    ($from:expr, $to:expr, |$N:ident, $T:ident| $body:expr) => {
        by_widening!(@pairs ($from, $to), $N, $T, $body,
            ("u8", u8) => [("u32", u32), ("u64", u64), ("i64", i64)],
            ("i8", i8) => [("u32", u32), ("u64", u64), ("i64", i64)],
            ("bool", bool) => [("u32", u32), ("u64", u64), ("i64", i64)],
            ("u16", u16) => [("u32", u32), ("u64", u64), ("i64", i64)],
            ("i16", i16) => [("u32", u32), ("u64", u64), ("i64", i64)],
            ("u32", u32) => [("u64", u64), ("i64", i64)],
            ("i32", i32) => [("u64", u64), ("i64", i64)],
            ("f16", half::f16) => [("f32", f32)],
            ("bf16", half::bf16) => [("f32", f32)]
        )
    };
    (@pairs $key:expr, $N:ident, $T:ident, $body:expr, $(($n:literal, $nt:ty) => [$(($t:literal, $tt:ty)),*]),*) => {
        match $key {
            $($(($n, $t) => {
                type $N = $nt;
                type $T = $tt;
                $body
            })*)*
            (from, to) => Err(PyTypeError::new_err(format!("no widening sum from {from} into {to}"))),
        }
    };
}

/// The sum of `n` narrow elements at `input` into the wider `output`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn widening_sum(
    py: Python<'_>,
    from: &str,
    to: &str,
    exclusive: bool,
    deterministic: bool,
    input: u64,
    output: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let on = On { device, stream };
    by_widening!(from, to, |N, T| {
        let opts = WideningOptions::<T>::new().exclusive(exclusive).deterministic(deterministic);
        enqueue(py, on, move |gpu, s, temp| {
            let (x, mut y) = unsafe { (at::<N>(input, n, s)?, at::<T>(output, n, s)?) };
            gpu.widening_scan(s, &x, &mut y, &opts, temp)
        })
    })
}

/// Every row (`rows_axis`) or every column of a `rows × cols` row-major matrix scanned on its own.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn batched_scan(
    py: Python<'_>,
    dtype: &str,
    op_name: &str,
    exclusive: bool,
    rows_axis: bool,
    input: u64,
    output: u64,
    rows: u64,
    cols: u64,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let op = op(op_name)?;
    let axis = if rows_axis { Axis::Rows } else { Axis::Columns };
    let on = On { device, stream };
    let n = usize::try_from(rows * cols).map_err(|_| PyValueError::new_err("the matrix is too large"))?;
    by_type!("batched_scan", dtype, |T| enqueue(py, on, move |gpu, s, temp| {
        let (x, mut y) = unsafe { (at::<T>(input, n, s)?, at::<T>(output, n, s)?) };
        gpu.batched_scan(
            s,
            &x,
            Matrix::new(rows, cols),
            &mut y,
            &BatchedOptions::new(axis, op).exclusive(exclusive),
            temp,
        )
    }))
}

/// The segmented scan of `n` elements whose segments begin where the `u8` head flag is nonzero.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn segmented_scan(
    py: Python<'_>,
    dtype: &str,
    op_name: &str,
    exclusive: bool,
    input: u64,
    heads: u64,
    output: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let opts = SegmentedOptions::new(op(op_name)?).exclusive(exclusive);
    let on = On { device, stream };
    by_type!("segmented_scan", dtype, |T| enqueue(py, on, move |gpu, s, temp| {
        let (x, h, mut y) = unsafe { (at::<T>(input, n, s)?, at::<u8>(heads, n, s)?, at::<T>(output, n, s)?) };
        gpu.segmented_scan(s, &x, &h, &mut y, &opts, temp)
    }))
}

/// The scan of `n` elements restarted wherever the key changes.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scan_by_key(
    py: Python<'_>,
    key_dtype: &str,
    dtype: &str,
    op_name: &str,
    exclusive: bool,
    keys: u64,
    input: u64,
    output: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let opts = SegmentedOptions::new(op(op_name)?).exclusive(exclusive);
    let on = On { device, stream };
    by_key_type!("scan_by_key (keys)", key_dtype, |K| by_type!("scan_by_key", dtype, |T| enqueue(
        py,
        on,
        move |gpu, s, temp| {
            let (k, x, mut y) = unsafe { (at::<K>(keys, n, s)?, at::<T>(input, n, s)?, at::<T>(output, n, s)?) };
            gpu.scan_by_key(s, &k, &x, &mut y, &opts, temp)
        }
    )))
}

/// The linear recurrence `x[t] = a[t]·x[t-1] + b[t]` from `x0`, on `n` maps `(a[t], b[t])`
/// interleaved at `maps`; `output` gets `n` maps `(0, x[t])`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn recurrence(
    py: Python<'_>,
    dtype: &str,
    x0: f64,
    maps: u64,
    output: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let on = On { device, stream };
    match dtype {
        "f32" => enqueue(py, on, move |gpu, s, temp| {
            let (m, mut y) = unsafe { (at::<u64>(maps, n, s)?, at::<u64>(output, n, s)?) };
            gpu.recurrence::<f32>(s, &m, &mut y, &RecurrenceOptions::new(x0 as f32), temp)
        }),
        "f64" => enqueue(py, on, move |gpu, s, temp| {
            let (m, mut y) = unsafe { (at::<[f64; 2]>(maps, n, s)?, at::<[f64; 2]>(output, n, s)?) };
            gpu.recurrence::<f64>(s, &m, &mut y, &RecurrenceOptions::new(x0), temp)
        }),
        other => Err(unsupported("linear_recurrence", other)),
    }
}

/// Sorts `n` keys in place, stable; with `positions` (nonzero), writes the stable argsort there
/// as `u32`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn sort(
    py: Python<'_>,
    dtype: &str,
    descending: bool,
    keys: u64,
    positions: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let opts = SortOptions::new().descending(descending);
    let on = On { device, stream };
    by_type!("sort", dtype, |T| enqueue(py, on, move |gpu, s, temp| {
        let mut k = unsafe { at::<T>(keys, n, s)? };
        if positions == 0 {
            gpu.sort(s, &mut k, &opts, temp)
        } else {
            let mut p = unsafe { at::<u32>(positions, n, s)? };
            gpu.argsort(s, &mut k, &mut p, &opts, temp)
        }
    }))
}

/// Copies the elements whose `u8` flag is nonzero to the front of `output`, in order, and their
/// count to the `u64` at `count`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn compact(
    py: Python<'_>,
    dtype: &str,
    input: u64,
    flags: u64,
    output: u64,
    count: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let on = On { device, stream };
    by_type!("compact", dtype, |T| enqueue(py, on, move |gpu, s, temp| {
        let (x, f, mut y, mut c) =
            unsafe { (at::<T>(input, n, s)?, at::<u8>(flags, n, s)?, at::<T>(output, n, s)?, at::<u64>(count, 1, s)?) };
        gpu.compact_flagged(s, &x, &f, &mut y, &mut c, &CompactOptions::new(Keep::Flags), temp)
    }))
}

/// Writes the positions of the nonzero `u8` flags to the front of the `u64` `output`, and their
/// count to the `u64` at `count`.
#[pyfunction]
fn nonzero(py: Python<'_>, flags: u64, output: u64, count: u64, n: usize, device: usize, stream: u64) -> PyResult<()> {
    enqueue(py, On { device, stream }, move |gpu, s, temp| {
        let (f, mut y, mut c) = unsafe { (at::<u8>(flags, n, s)?, at::<u64>(output, n, s)?, at::<u64>(count, 1, s)?) };
        gpu.flagged_indices(s, &f, &mut y, &mut c, &CompactOptions::new(Keep::Flags), temp)
    })
}

/// The bin counts of `n` elements in `bins` equal bins over `[lo, hi)` into `counts` (`bins + 1`
/// `u32`, the last for the elements outside the range).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn histogram_counts(
    py: Python<'_>,
    dtype: &str,
    bins: u32,
    lo: f64,
    hi: f64,
    input: u64,
    counts: u64,
    n: usize,
    device: usize,
    stream: u64,
) -> PyResult<()> {
    let opts = HistogramOptions::new(bins, lo, hi);
    let on = On { device, stream };
    by_type!("histogram", dtype, |T| enqueue(py, on, move |gpu, s, _temp| {
        let (x, mut c) = unsafe { (at::<T>(input, n, s)?, at::<u32>(counts, bins as usize + 1, s)?) };
        gpu.histogram_counts(s, &x, &mut c, &opts)
    }))
}

/// Opens device `ordinal` (a no-op once open): raises [`Error`] with the library's message where
/// there is no driver or no such device.
#[pyfunction]
fn open_device(py: Python<'_>, ordinal: usize) -> PyResult<String> {
    py.detach(|| {
        let _keep = KeepContext::save();
        device(ordinal).map(|d| d.gpu.info().name.clone())
    })
    .map_err(to_py)
}

/// Waits for the work queued so far on the caller's raw `stream` of device `ordinal`.
#[pyfunction]
fn synchronize(py: Python<'_>, ordinal: usize, stream: u64) -> PyResult<()> {
    py.detach(|| {
        let _keep = KeepContext::save();
        let d = device(ordinal)?;
        // SAFETY: the Python half passes the current stream of the framework that owns the
        // arrays of the call it waits for, on this device's primary context.
        let s = unsafe { d.gpu.borrow_stream(stream as CUstream) };
        s.synchronize().map_err(gpu_scan::Error::from)
    })
    .map_err(to_py)
}

/// Frees the temporary storage kept for every stream of every device opened so far, after
/// waiting for each of those devices to finish all its work.
#[pyfunction]
fn empty_cache(py: Python<'_>) -> PyResult<()> {
    py.detach(|| {
        let _keep = KeepContext::save();
        let open: Vec<Arc<Device>> = lock(devices()).values().cloned().collect();
        open.iter().try_for_each(|d| free_all(&d.gpu, &mut lock(&d.temps)))
    })
    .map_err(to_py)
}

/// (streams, bytes, allocations) of the temporary storage kept now, over every open device: the
/// allocations are those of the storage kept, so they stay the same across calls that allocate
/// nothing. For the tests.
#[pyfunction]
fn temp_storage() -> (usize, u64, u64) {
    let open: Vec<Arc<Device>> = lock(devices()).values().cloned().collect();
    let mut totals = (0, 0, 0);
    for d in open {
        for temp in lock(&d.temps).values() {
            totals.0 += 1;
            totals.1 += temp.capacity() as u64;
            totals.2 += temp.allocations();
        }
    }
    totals
}

/// The ordinal of the device whose memory holds address `ptr` (a `__cuda_array_interface__`
/// array's, which names no device).
#[pyfunction]
fn pointer_device(py: Python<'_>, ptr: u64) -> PyResult<usize> {
    py.detach(|| {
        if !gpu_scan::driver_present() {
            return Err(gpu_scan::Error::NoDriver);
        }
        result::init()?;
        // The attribute query binds no context; kept so that every entry point leaves the
        // caller's current context as it found it, whatever it calls.
        let _keep = KeepContext::save();
        let mut ordinal: c_int = -1;
        // SAFETY: the attribute is an int, written to `ordinal`; the driver checks `ptr`.
        let r = unsafe {
            sys::cuPointerGetAttribute(
                (&mut ordinal as *mut c_int).cast::<c_void>(),
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )
        };
        match r {
            CUresult::CUDA_SUCCESS if ordinal >= 0 => Ok(ordinal as usize),
            CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_INVALID_VALUE => {
                Err(gpu_scan::Error::invalid(format!("address {ptr:#x} is not memory of a CUDA device")))
            }
            r => Err(DriverError(r).into()),
        }
    })
    .map_err(to_py)
}

/// Whether the CUDA driver library can be loaded here.
#[pyfunction]
fn driver_present() -> bool {
    gpu_scan::driver_present()
}

/// The element types each function is built for, so the Python half can refuse others early.
fn element_names() -> Vec<&'static str> {
    fn name<T: Element>() -> &'static str {
        T::TYPE.name()
    }
    vec![
        name::<u8>(),
        name::<u16>(),
        name::<u32>(),
        name::<i32>(),
        name::<u64>(),
        name::<i64>(),
        name::<f32>(),
        name::<f64>(),
    ]
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("ELEMENT_TYPES", element_names())?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_function(wrap_pyfunction!(widening_sum, m)?)?;
    m.add_function(wrap_pyfunction!(batched_scan, m)?)?;
    m.add_function(wrap_pyfunction!(segmented_scan, m)?)?;
    m.add_function(wrap_pyfunction!(scan_by_key, m)?)?;
    m.add_function(wrap_pyfunction!(recurrence, m)?)?;
    m.add_function(wrap_pyfunction!(sort, m)?)?;
    m.add_function(wrap_pyfunction!(compact, m)?)?;
    m.add_function(wrap_pyfunction!(nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_counts, m)?)?;
    m.add_function(wrap_pyfunction!(open_device, m)?)?;
    m.add_function(wrap_pyfunction!(synchronize, m)?)?;
    m.add_function(wrap_pyfunction!(driver_present, m)?)?;
    m.add_function(wrap_pyfunction!(empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(pointer_device, m)?)?;
    m.add("_temp_storage", wrap_pyfunction!(temp_storage, m)?)?;
    Ok(())
}
