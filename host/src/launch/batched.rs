//! Carrying out batched-scan plans (`batched_kernels!`, `columns_pipelined_kernels!` and
//! `rows_pipelined_kernels!` in gpu/).

use super::scan::{self, Operands};
use super::{go, pipe, ready, state, ByValue};
use crate::error::Result;
use crate::plan::batched::BatchedPlan;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};
use scan_abi::args::ColumnsArgs;
use std::sync::Arc;

/// Carries out `plan` over the `rows × cols` matrix at `input` into `output`; `identity` is the
/// operator's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &BatchedPlan,
    (input, output): (u64, u64),
    (rows, cols): (u64, u64),
    identity: T,
    temp: &mut TempStorage,
) -> Result<()> {
    let n = rows * cols;
    let ops = Operands { input, output, n, init: identity, identity };
    match plan {
        BatchedPlan::Scan(p) => scan::run(gpu, stream, p, ops, temp),
        BatchedPlan::RowsPipelined(p) => scan::single_pass(gpu, stream, p, ops, Some(cols), temp),
        BatchedPlan::ColumnsPipelined(p) => {
            let r = ready(gpu, &p.launch)?;
            let s = state(gpu, stream, temp, &p.state, &r)?;
            let stages = p.stages.unwrap_or(1);
            let args = ByValue(ColumnsArgs { n, flags: p.flags, pipe: pipe(&s, p.backoff_ns, stages) });
            let mut b = stream.launch_builder(&r.f);
            b.arg(&input).arg(&output).arg(&s.ptr).arg(&args);
            // SAFETY: the buffers and `ColumnsArgs` of columns_pipelined_kernels! in gpu/ (the
            // kernel for this row width); input and output hold rows × cols elements, the tile
            // state one row's status per tile.
            temp.poison_on_error(unsafe { go(&mut b, &r) })
        }
        BatchedPlan::ColumnTiles { launch, arg, bulk, state: tiles, flags } => {
            let r = ready(gpu, launch)?;
            let s = state(gpu, stream, temp, tiles, &r)?;
            let mut b = stream.launch_builder(&r.f);
            b.arg(&input).arg(&output).arg(&rows).arg(&cols).arg(arg);
            if let Some((height, ahead)) = bulk {
                b.arg(height).arg(ahead);
            }
            b.arg(flags).arg(&s.ptr).arg(&s.counter_base).arg(&s.epoch);
            // SAFETY: matches batched_kernels! in gpu/ (the tiles in shared memory take their
            // height and distance ahead before the flags); input and output hold rows × cols
            // elements (rows on 16-byte boundaries for the vector tiles), the tile state one
            // status word per (row block, column).
            temp.poison_on_error(unsafe { go(&mut b, &r) })
        }
        BatchedPlan::ColumnVectors { launch, flags } | BatchedPlan::RowBlocks { launch, flags } => {
            let r = ready(gpu, launch)?;
            let mut b = stream.launch_builder(&r.f);
            b.arg(&input).arg(&output).arg(&rows).arg(&cols).arg(flags);
            // SAFETY: matches batched_kernels! in gpu/; input and output hold rows × cols elements.
            unsafe { go(&mut b, &r) }
        }
        BatchedPlan::ShortRows { launch, rows_per_tile, flags } => {
            let r = ready(gpu, launch)?;
            let mut b = stream.launch_builder(&r.f);
            b.arg(&input).arg(&output).arg(&rows).arg(&cols).arg(rows_per_tile).arg(flags);
            // SAFETY: matches batched_kernels! in gpu/; input and output hold rows × cols elements.
            unsafe { go(&mut b, &r) }
        }
        BatchedPlan::RowChains { launch, tiles_per_row, state: tiles, flags } => {
            let r = ready(gpu, launch)?;
            let s = state(gpu, stream, temp, tiles, &r)?;
            let mut b = stream.launch_builder(&r.f);
            b.arg(&input).arg(&output).arg(&cols).arg(tiles_per_row).arg(flags);
            b.arg(&s.ptr).arg(&s.counter_base).arg(&s.epoch);
            // SAFETY: matches batched_kernels! in gpu/; input and output hold rows × cols
            // elements, the tile state one status word per tile.
            temp.poison_on_error(unsafe { go(&mut b, &r) })
        }
    }
}
