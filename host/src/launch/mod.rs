//! Launchers: they carry out plans (`crate::plan`) and decide nothing. Each module matches one
//! planner; every kernel argument list is written out once, next to the kernel's signature it
//! must match (the macros in gpu/src/kernels/).

pub mod batched;
pub mod compact;
pub mod partition;
pub mod scan;
pub mod segmented;
pub mod sort;

use crate::error::{Error, Result};
use crate::plan::{Grid, Launch, TileState};
use crate::runtime::Gpu;
use crate::temp::{State, TempStorage};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchArgs, LaunchConfig};
use scan_abi::args::Pipe;
use scan_abi::Kernel;
use std::sync::Arc;

/// A launch resolved on a device: the loaded kernel, its configuration and its blocks.
pub(crate) struct Ready {
    pub kernel: Kernel,
    pub f: CudaFunction,
    pub cfg: LaunchConfig,
    pub blocks: u64,
}

/// Loads `launch`'s kernel, allows it its shared memory, and resolves a persistent grid to as
/// many blocks as fit on `gpu` at once.
pub(crate) fn ready(gpu: &Gpu, launch: &Launch) -> Result<Ready> {
    let kernel = launch.kernel;
    let f = gpu.kernel(kernel)?;
    allow_shared_memory(&f, launch.smem).map_err(|e| Error::kernel(kernel, e))?;
    let blocks = match launch.grid {
        Grid::Blocks(b) => b,
        Grid::Persistent { tiles, per_sm } => {
            let fits =
                gpu.blocks_per_sm(kernel, &f, launch.threads, launch.smem).map_err(|e| Error::kernel(kernel, e))?;
            let per_sm = per_sm.map_or(fits, |b| b.min(fits));
            if per_sm == 0 {
                return Err(Error::invalid(format!(
                    "{kernel} does not fit on an SM ({} threads, {} bytes of shared memory)",
                    launch.threads, launch.smem
                )));
            }
            tiles.min(per_sm as u64 * gpu.info().multiprocessors as u64)
        }
    };
    let grid = u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::invalid(format!("{blocks} blocks exceed the grid limit")))?;
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (launch.threads, 1, 1), shared_mem_bytes: launch.smem };
    Ok(Ready { kernel, f, cfg, blocks })
}

/// The tile state `state` describes, for `ready`'s blocks.
pub(crate) fn state(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    temp: &mut TempStorage,
    state: &TileState,
    ready: &Ready,
) -> Result<State> {
    temp.state(gpu, stream, state, ready.blocks)
}

/// A pipelined family's argument struct (`scan_abi::args`), passed by value after its kernel's
/// buffers.
#[repr(transparent)]
pub(crate) struct ByValue<A>(pub A);

// SAFETY: `A` is one of `scan_abi::args`'s `#[repr(C)]` structs of integers and element values,
// the definitions the kernels are compiled with.
unsafe impl<A: Copy> DeviceRepr for ByValue<A> {}

/// The pipeline part of a pipelined launch's arguments, over tile state `s`.
pub(crate) fn pipe(s: &State, backoff_ns: u32, stages: u32) -> Pipe {
    Pipe { counter_base: s.counter_base, epoch: s.epoch, backoff_ns, stages }
}

/// Launches with the arguments pushed onto `args`.
///
/// # Safety
/// The arguments must match the kernel's signature, and every buffer must be as large as the
/// kernel reads and writes for this launch's configuration.
pub(crate) unsafe fn go(args: &mut LaunchArgs<'_>, ready: &Ready) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { args.launch(ready.cfg) }.map(drop).map_err(|e| Error::kernel(ready.kernel, e))
}

/// Dynamic shared memory a launch may take without asking for it.
const DEFAULT_DYNAMIC_SMEM: u32 = 48 * 1024;

/// Allows kernel `f` `smem` bytes of dynamic shared memory where that is more than a launch gets
/// without asking, at every call (the allowance belongs to the loaded kernel); smaller launches
/// make no driver call.
fn allow_shared_memory(f: &CudaFunction, smem: u32) -> std::result::Result<(), DriverError> {
    if smem > DEFAULT_DYNAMIC_SMEM {
        f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)?;
    }
    Ok(())
}

/// Enqueues the zeroing of `bytes` bytes at device address `ptr` on `stream`.
pub(crate) fn zero(stream: &Arc<CudaStream>, ptr: u64, bytes: u64) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: the callers pass memory of at least `bytes` bytes that they hold for this stream.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes as usize, stream.cu_stream()) }?;
    Ok(())
}

/// Enqueues the filling of `n` 32-bit words at device address `ptr` with `value`.
pub(crate) fn fill_u32(stream: &Arc<CudaStream>, ptr: u64, value: u32, n: u64) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    // SAFETY: the callers pass memory of at least `n` words that they hold for this stream.
    unsafe { cudarc::driver::sys::cuMemsetD32Async(ptr, value, n as usize, stream.cu_stream()) }.result()?;
    Ok(())
}

/// Enqueues a copy of `bytes` bytes from device address `src` to `dst` on `stream`.
pub(crate) fn copy(stream: &Arc<CudaStream>, dst: u64, src: u64, bytes: u64) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: the callers pass two regions of at least `bytes` bytes each, not overlapping.
    unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes as usize, stream.cu_stream()) }?;
    Ok(())
}

/// Enqueues a strided gather of `rows` items of `width` bytes, one every `pitch` bytes from
/// `src`, packed at `dst`.
pub(crate) fn gather_rows(
    stream: &Arc<CudaStream>,
    dst: u64,
    src: u64,
    width: u64,
    pitch: u64,
    rows: u64,
) -> Result<()> {
    use cudarc::driver::sys::{CUmemorytype, CUDA_MEMCPY2D};
    if rows == 0 {
        return Ok(());
    }
    let p = CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: src,
        srcArray: std::ptr::null_mut(),
        srcPitch: pitch as usize,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst,
        dstArray: std::ptr::null_mut(),
        dstPitch: width as usize,
        WidthInBytes: width as usize,
        Height: rows as usize,
    };
    // SAFETY: the callers pass a source of `rows` rows of `pitch` bytes and a destination of
    // `rows * width` bytes.
    unsafe { cudarc::driver::sys::cuMemcpy2DAsync_v2(&p, stream.cu_stream()) }.result()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::runtime::ptx::embedded;
    use scan_abi::args::{ColumnsArgs, CompactArgs, ScanArgs, SegmentedArgs};
    use scan_abi::kernel::Family::*;
    use scan_abi::Kernel;
    use std::mem::size_of;

    /// Bytes of `ScanArgs` or `CompactArgs` over elements of `size` bytes as the host lays them out.
    fn by_size(size: usize, scan: bool) -> usize {
        match (size, scan) {
            (1, true) => size_of::<ScanArgs<u8>>(),
            (2, true) => size_of::<ScanArgs<u16>>(),
            (4, true) => size_of::<ScanArgs<u32>>(),
            (8, true) => size_of::<ScanArgs<u64>>(),
            (16, true) => size_of::<ScanArgs<[f64; 2]>>(),
            (4, false) => size_of::<CompactArgs<u32>>(),
            (8, false) => size_of::<CompactArgs<u64>>(),
            _ => panic!("no argument struct over {size}-byte elements"),
        }
    }

    /// A pipelined kernel's buffers (pointer parameters) and the bytes of the host's struct that
    /// follows them; `None` for kernels that take their arguments one by one.
    fn host_params(k: Kernel) -> Option<(usize, usize)> {
        let size = k.ty.size();
        Some(match k.family {
            SinglePassPipelined | SinglePassPipelinedDet | BatchedRowsPipelined | WideningPipelined(_) => {
                (3, by_size(size, true))
            }
            // The recurrences scan maps of two floats.
            RecurrencePipelined => (3, by_size(2 * size, true)),
            BatchedColumnsPipelined | BatchedColumnsPipelined16 => (3, size_of::<ColumnsArgs>()),
            SegmentedPipelined(_) => (4, size_of::<SegmentedArgs>()),
            CompactPipelined => (5, by_size(size, false)),
            _ => return None,
        })
    }

    /// Every pipelined kernel of the embedded module takes the buffers its launcher pushes, then
    /// one parameter of its family's struct, as large as the host's: rustc's nvptx layout of
    /// `scan_abi::args` and the host's agree.
    #[test]
    fn pipelined_kernels_take_their_buffers_then_their_argument_struct() {
        let ptx = embedded();
        let mut checked = 0;
        for k in Kernel::all() {
            let Some((buffers, bytes)) = host_params(k) else { continue };
            let name = k.to_string();
            let head = format!(".entry {name}(");
            let at = ptx.find(&head).unwrap_or_else(|| panic!("{name} is not in the module"));
            let params = &ptx[at + head.len()..];
            let params: Vec<&str> = params[..params.find(')').unwrap()].split(',').map(str::trim).collect();
            let mut want: Vec<String> =
                (0..buffers).map(|i| format!(".param .u64 .ptr .align 1 {name}_param_{i}")).collect();
            want.push(format!(".param .align 4 .b8 {name}_param_{buffers}[{bytes}]"));
            assert_eq!(params, want, "{name}'s parameters");
            checked += 1;
        }
        assert!(checked > 100, "only {checked} pipelined kernels found");
    }
}
