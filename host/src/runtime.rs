//! The GPU runtime: context, stream, kernel modules (loaded per group on first use), kernel
//! lookup by name, memory with clear out-of-memory errors, and CUDA-event timing.

use crate::error::{Error, Result};
use crate::ptx::{embedded, PtxModule};
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Environment variable naming a PTX file to load instead of the embedded kernels (for kernel
/// development: rebuild with `cargo xtask build-ptx` and point this at the result).
pub const PTX_ENV: &str = "GPU_SCAN_PTX";

/// What the caller may want to know about the device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub multiprocessors: u32,
    pub total_memory: u64,
    /// The architecture the loaded kernels were compiled for (`sm_XY` as `XY`).
    pub kernel_arch: u32,
}

/// One CUDA device with the scan kernels: create it once, use it from any thread.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ptx: PtxModule,
    modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    kernels: Mutex<HashMap<String, CudaFunction>>,
    info: DeviceInfo,
}

/// Whether the CUDA driver library can be loaded at all.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

impl Gpu {
    /// Opens device `ordinal` (0 for the first GPU) with its primary context.
    pub fn new(ordinal: usize) -> Result<Gpu> {
        if !driver_present() {
            return Err(Error::NoDriver);
        }
        let count = CudaContext::device_count().map_err(Error::from)?;
        if count <= 0 {
            return Err(Error::NoDevice(": the driver reports 0 devices".into()));
        }
        if ordinal >= count as usize {
            return Err(Error::NoDevice(format!(" with ordinal {ordinal} (the driver reports {count})")));
        }
        Gpu::with_context(CudaContext::new(ordinal)?)
    }

    /// Uses a context the caller already has (a program that already uses cudarc).
    pub fn with_context(ctx: Arc<CudaContext>) -> Result<Gpu> {
        let ptx = match std::env::var_os(PTX_ENV) {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    Error::invalid(format!("{PTX_ENV}={}: cannot read it: {e}", path.to_string_lossy()))
                })?;
                PtxModule::parse(&text)
            }
            None => PtxModule::parse(&embedded()),
        };
        let kernel_arch = ptx.arch().unwrap_or(scan_abi::tuning::DEFAULT_ARCH);
        let compute_capability = ctx.compute_capability()?;
        let device_arch = (compute_capability.0 * 10 + compute_capability.1) as u32;
        let name = ctx.name()?;
        if device_arch < kernel_arch {
            return Err(Error::invalid(format!(
                "{name} has compute capability {}.{}, but the kernels were built for sm_{kernel_arch}; \
                 rebuild them for this GPU with GPU_SCAN_ARCH=sm_{device_arch} cargo build",
                compute_capability.0, compute_capability.1
            )));
        }
        let info = DeviceInfo {
            ordinal: ctx.ordinal(),
            name,
            compute_capability,
            multiprocessors: ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            total_memory: ctx.total_mem()? as u64,
            kernel_arch,
        };
        Ok(Gpu { stream: ctx.default_stream(), ctx, ptx, modules: Mutex::default(), kernels: Mutex::default(), info })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The context's default stream.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A new stream of this context (for concurrent work).
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        Ok(self.ctx.new_stream()?)
    }

    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (free, total) = self.ctx.mem_get_info()?;
        Ok((free as u64, total as u64))
    }

    /// The kernel `name`, loading its group's module on first use.
    pub fn kernel(&self, name: &str) -> Result<CudaFunction> {
        if let Some(f) = self.kernels.lock().unwrap_or_else(|e| e.into_inner()).get(name) {
            return Ok(f.clone());
        }
        let group = scan_abi::names::group_of(name);
        let module = {
            let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
            match modules.get(group) {
                Some(m) => m.clone(),
                None => {
                    let src = self
                        .ptx
                        .group_source(group)
                        .ok_or_else(|| Error::invalid(format!("no kernel {name} in the PTX module")))?;
                    // Only these results mean the driver refused the PTX itself; any other (a
                    // sticky fault of an earlier kernel, for one) is reported as it is.
                    let m = self.ctx.load_module(Ptx::from_src(src)).map_err(|e| match e.0 {
                        CUresult::CUDA_ERROR_INVALID_PTX
                        | CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                        | CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
                        | CUresult::CUDA_ERROR_INVALID_IMAGE
                        | CUresult::CUDA_ERROR_JIT_COMPILER_NOT_FOUND => {
                            Error::PtxRejected { module: group.to_string(), source: e }
                        }
                        _ => Error::Driver(e),
                    })?;
                    modules.insert(group.to_string(), m.clone());
                    m
                }
            }
        };
        let f =
            module.load_function(name).map_err(|_| Error::invalid(format!("no kernel {name} in the PTX module")))?;
        self.kernels.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_string(), f.clone());
        Ok(f)
    }

    /// Fails with [`Error::OutOfMemory`] unless `bytes` more can be allocated.
    pub fn check_memory(&self, what: &str, bytes: u64) -> Result<()> {
        let (free, total) = self.memory()?;
        if bytes > free {
            return Err(Error::OutOfMemory { what: what.to_string(), needed: bytes, free, total });
        }
        Ok(())
    }

    /// Allocates `n` zeroed elements on `stream`, with a clear error when the device has too
    /// little memory.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        stream: &Arc<CudaStream>,
        what: &str,
        n: usize,
    ) -> Result<CudaSlice<T>> {
        let bytes = (n as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        self.check_memory(what, bytes)?;
        stream.alloc_zeros::<T>(n).map_err(|e| self.oom_or(e, what, bytes))
    }

    /// Copies `data` to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, stream: &Arc<CudaStream>, what: &str, data: &[T]) -> Result<CudaSlice<T>> {
        let bytes = std::mem::size_of_val(data) as u64;
        self.check_memory(what, bytes)?;
        stream.clone_htod(data).map_err(|e| self.oom_or(e, what, bytes))
    }

    /// Zeroes a device buffer (so that a result that skips an element cannot pass).
    pub fn memset_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        stream: &Arc<CudaStream>,
        data: &mut CudaSlice<T>,
    ) -> Result<()> {
        Ok(stream.memset_zeros(data)?)
    }

    /// Copies a device buffer back.
    pub fn download<T: DeviceRepr + Default + Clone>(
        &self,
        stream: &Arc<CudaStream>,
        data: &CudaSlice<T>,
    ) -> Result<Vec<T>> {
        Ok(stream.clone_dtoh(data)?)
    }

    fn oom_or(&self, e: cudarc::driver::DriverError, what: &str, bytes: u64) -> Error {
        if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = self.memory().unwrap_or((0, 0));
            Error::OutOfMemory { what: what.to_string(), needed: bytes, free, total }
        } else {
            Error::Driver(e)
        }
    }

    /// Milliseconds the work `f` enqueues on `stream` takes, measured with CUDA events.
    pub fn time_ms(&self, stream: &Arc<CudaStream>, f: impl FnOnce() -> Result<()>) -> Result<f32> {
        let start = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let end = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        start.record(stream)?;
        f()?;
        end.record(stream)?;
        end.synchronize()?;
        Ok(start.elapsed_ms(&end)?)
    }
}
