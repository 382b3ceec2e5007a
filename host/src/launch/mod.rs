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
use cudarc::driver::{CudaFunction, CudaStream, DriverError, LaunchArgs, LaunchConfig};
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
