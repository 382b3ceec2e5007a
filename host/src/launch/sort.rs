//! Carrying out a sort plan (`onesweep_kernels!` in gpu/): the digit counting, then one launch per
//! pass, alternating between the caller's buffers and the spare ones.

use super::{go, ready, state};
use crate::error::Result;
use crate::plan::sort::{SortPlan, DIGITS};
use crate::plan::Launch;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, PushKernelArg};
use std::sync::Arc;

/// The sort's buffers: keys (and values, 0 without), their spares, the zeroed digit counts.
pub(crate) struct Operands {
    pub keys: u64,
    pub spare_keys: u64,
    pub values: u64,
    /// The values start as the positions 0, 1, 2, …, made by the first pass (an argsort): what
    /// `values` holds is not read.
    pub positions: bool,
    pub spare_values: u64,
    pub counts: u64,
    pub n: u64,
}

pub(crate) fn run(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    plan: &SortPlan,
    ops: &Operands,
    temp: &mut TempStorage,
) -> Result<()> {
    let r = ready(gpu, &plan.counting)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&ops.keys).arg(&ops.n).arg(&ops.counts);
    // SAFETY: matches onesweep_kernels! in gpu/; keys hold n elements, counts passes × 256 words.
    unsafe { go(&mut b, &r) }?;
    let r = ready(gpu, &plan.pass)?;
    for p in 0..plan.passes {
        let s = state(gpu, stream, temp, &plan.state, &r)?;
        // Even passes go to the spare buffers, odd ones back: an even count ends in the keys.
        let (ki, ko, vi, vo) = if p % 2 == 0 {
            (ops.keys, ops.spare_keys, ops.values, ops.spare_values)
        } else {
            (ops.spare_keys, ops.keys, ops.spare_values, ops.values)
        };
        // Null values in: the pass writes each key's position as its value.
        let vi = if p == 0 && ops.positions { 0 } else { vi };
        let shift = p * scan_abi::partition::RADIX_BITS;
        let pass_counts = ops.counts + p as u64 * DIGITS * 4;
        let mut b = stream.launch_builder(&r.f);
        b.arg(&ki).arg(&vi).arg(&ko).arg(&vo).arg(&ops.n).arg(&shift).arg(&pass_counts);
        b.arg(&s.ptr).arg(&s.counter_base).arg(&s.epoch);
        // SAFETY: matches onesweep_kernels! in gpu/; the key (and value) buffers hold n elements
        // each, counts this pass's 256 words, the tile state 256 words per tile.
        temp.poison_on_error(unsafe { go(&mut b, &r) })?;
    }
    Ok(())
}

/// Maps the `n` keys at `keys` to their order-reversing image in place (`sort_flip_*` in gpu/).
pub(crate) fn flip(gpu: &Gpu, stream: &Arc<CudaStream>, launch: &Launch, keys: u64, n: u64) -> Result<()> {
    let r = ready(gpu, launch)?;
    let mut b = stream.launch_builder(&r.f);
    b.arg(&keys).arg(&n);
    // SAFETY: matches flip_kernels! in gpu/; keys hold n elements.
    unsafe { go(&mut b, &r) }
}
