//! The GPU runtime: context, stream, the tuning in force, kernel modules (loaded per group on
//! first use), kernels by [`Kernel`], memory with clear out-of-memory errors, and CUDA-event
//! timing.

pub mod ptx;

use crate::error::{Error, Result};
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use cudarc::nvrtc::Ptx;
use ptx::{Bounds, PtxModule};
use scan_abi::kernel::Group;
use scan_abi::tuning::Shapes;
use scan_abi::{Kernel, Tuning};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// An error unless the PTX module `text` carries the fingerprint of this crate's abi with
/// `shapes` ([`scan_abi::fingerprint`]).
fn check_fingerprint(text: &str, shapes: &Shapes) -> Result<()> {
    let expected = scan_abi::fingerprint::of(shapes);
    let rebuild = "rebuild it from this checkout with `cargo xtask build-ptx`";
    match scan_abi::fingerprint::find(text) {
        Some(f) if f == expected => Ok(()),
        Some(f) => Err(Error::invalid(format!(
            "the PTX module was built against another scan-abi or other tile shapes \
             (fingerprint {f:#018x}, this library's {expected:#018x}): {rebuild}"
        ))),
        None => Err(Error::invalid(format!(
            "the PTX module carries no {} global, so it was not built from these sources: {rebuild}",
            scan_abi::fingerprint::SYMBOL
        ))),
    }
}

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
    tuning: Tuning,
    bounds: Bounds,
    modules: Mutex<HashMap<Group, Arc<CudaModule>>>,
    kernels: Mutex<HashMap<Kernel, CudaFunction>>,
    /// Blocks per SM by (kernel, threads, shared memory), asked of the driver once each.
    occupancy: Mutex<HashMap<(Kernel, u32, u32), u32>>,
    info: DeviceInfo,
}

/// Whether the CUDA driver library can be loaded at all.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// How many CUDA devices the driver reports.
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    Ok(CudaContext::device_count().map_err(Error::from)?.max(0) as usize)
}

impl Gpu {
    /// Opens device `ordinal` (0 for the first GPU) with its primary context, the embedded
    /// kernels and the tuning table for their architecture.
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
        let ptx = PtxModule::parse(&ptx::embedded());
        let kernel_arch = ptx.arch().unwrap_or(scan_abi::tuning::DEFAULT_ARCH);
        let compute_capability = ctx.compute_capability()?;
        let device_arch = (compute_capability.0 * 10 + compute_capability.1) as u32;
        let name = ctx.name()?;
        if device_arch < kernel_arch {
            return Err(Error::UnsupportedDevice { name, compute_capability, kernel_arch });
        }
        let info = DeviceInfo {
            ordinal: ctx.ordinal(),
            name,
            compute_capability,
            multiprocessors: ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            total_memory: ctx.total_mem()? as u64,
            kernel_arch,
        };
        let tuning = *scan_abi::tuning::for_arch(kernel_arch);
        Ok(Gpu {
            stream: ctx.default_stream(),
            ctx,
            ptx,
            bounds: ptx::bounds(&tuning),
            tuning,
            modules: Mutex::default(),
            kernels: Mutex::default(),
            occupancy: Mutex::default(),
            info,
        })
    }

    /// This GPU with `tuning` in force: its choices and launch bounds apply to every later call.
    /// Tile shapes are compiled into the kernels, so `tuning.shapes` must be the kernels' own
    /// ([`Error::InvalidArgument`] otherwise), and every choice must be in its range
    /// ([`Tuning::validate`]; [`Error::Tuning`] names the first that is not).
    pub fn with_tuning(mut self, tuning: Tuning) -> Result<Gpu> {
        let compiled = scan_abi::tuning::for_arch(self.info.kernel_arch);
        if tuning.shapes != compiled.shapes {
            return Err(Error::invalid(
                "tile shapes are compiled into the kernels: change them in abi/src/tuning/ and rebuild; \
                 only the choices and launch bounds of a tuning can change at run time",
            ));
        }
        tuning.validate()?;
        self.bounds = ptx::bounds(&tuning);
        self.tuning = tuning;
        self.forget_modules();
        Ok(self)
    }

    /// This GPU with the kernels of the PTX module `text` instead of the embedded ones (for
    /// kernel development: `cargo xtask build-ptx` writes one).
    ///
    /// The module must carry the fingerprint ([`scan_abi::fingerprint`]) of this library's
    /// `scan-abi` sources and of the tile shapes it plans with, else it is refused
    /// ([`Error::InvalidArgument`]). That catches a module built from another version of the
    /// abi, or for shapes other than the embedded kernels'; it cannot see the kernels' own code.
    ///
    /// # Safety
    /// `text` must be a PTX module built by this crate's PTX builder from the `gpu/` sources of
    /// this very version of the crate, against the same `scan-abi`. Every launch passes the
    /// arguments those sources declare and sizes shared memory, temporary storage and the
    /// buffers the kernels index as those sources use them; kernels with other argument lists,
    /// other tile shapes or other status-word layouts read and write past the memory they are
    /// given.
    pub unsafe fn with_ptx(mut self, text: &str) -> Result<Gpu> {
        let ptx = PtxModule::parse(text);
        if ptx.kernel_names().next().is_none() {
            return Err(Error::invalid("the PTX module holds no kernels"));
        }
        check_fingerprint(text, &self.tuning.shapes)?;
        self.ptx = ptx;
        self.forget_modules();
        Ok(self)
    }

    fn forget_modules(&mut self) {
        self.modules.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
        self.kernels.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
        self.occupancy.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The tuning in force.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
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

    /// The kernel `kernel`, loading its group's module on first use.
    pub fn kernel(&self, kernel: Kernel) -> Result<CudaFunction> {
        if let Some(f) = self.kernels.lock().unwrap_or_else(|e| e.into_inner()).get(&kernel) {
            return Ok(f.clone());
        }
        let name = kernel.to_string();
        let missing = || Error::invalid(format!("no kernel {name} in the PTX module"));
        let group = kernel.group();
        let module = {
            let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
            match modules.get(&group) {
                Some(m) => m.clone(),
                None => {
                    let src = self.ptx.group_source(group, &self.bounds).ok_or_else(missing)?;
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
                    modules.insert(group, m.clone());
                    m
                }
            }
        };
        let f = module.load_function(&name).map_err(|_| missing())?;
        self.kernels.lock().unwrap_or_else(|e| e.into_inner()).insert(kernel, f.clone());
        Ok(f)
    }

    /// How many blocks of `threads` with `smem` bytes of shared memory `kernel` (loaded as `f`,
    /// allowed that much shared memory) fits on an SM; the driver is asked once per shape.
    pub(crate) fn blocks_per_sm(
        &self,
        kernel: Kernel,
        f: &CudaFunction,
        threads: u32,
        smem: u32,
    ) -> std::result::Result<u32, cudarc::driver::DriverError> {
        let key = (kernel, threads, smem);
        if let Some(&b) = self.occupancy.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(b);
        }
        let b = f.occupancy_max_active_blocks_per_multiprocessor(threads, smem as usize, None)?;
        self.occupancy.lock().unwrap_or_else(|e| e.into_inner()).insert(key, b);
        Ok(b)
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

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::fingerprint::SYMBOL;

    #[test]
    fn the_embedded_module_carries_the_fingerprint_of_the_shapes_planned_with() {
        let text = ptx::embedded();
        let shapes = scan_abi::tuning::for_arch(PtxModule::parse(&text).arch().unwrap()).shapes;
        assert!(check_fingerprint(&text, &shapes).is_ok());
        let mut other = shapes;
        other.prefetch_tiles += 1;
        let e = check_fingerprint(&text, &other).unwrap_err().to_string();
        assert!(e.contains("another scan-abi or other tile shapes"), "{e}");
    }

    #[test]
    fn a_module_without_the_fingerprint_is_refused() {
        let text = ptx::embedded();
        let shapes = scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH).shapes;
        let stripped: String = text.lines().filter(|l| !l.contains(SYMBOL)).map(|l| format!("{l}\n")).collect();
        assert!(PtxModule::parse(&stripped).kernel_names().next().is_some());
        let e = check_fingerprint(&stripped, &shapes).unwrap_err().to_string();
        assert!(e.contains("carries no SCAN_ABI_FINGERPRINT global"), "{e}");
    }
}
