//! LSD radix sort: stable, 8 bits per pass (4 passes for 32-bit keys, 8 for 64-bit). Each pass
//! is one sweep: a stable partition whose digit offsets come from the single-pass scan's
//! decoupled look-back over the tiles' digit counts, one digit per thread. Keys are ordered by
//! their `order_key` (floats: `-0.0` before `+0.0`, NaNs last); u32 values ride along.
//!
//! The passes alternate between the caller's buffers and spare ones in the temporary storage's
//! scratch region (spare keys, spare values, every pass's digit counts); the tile state lives in
//! its state region.

use crate::element::Element;
use crate::error::{exactly, Result};
use crate::launch::sort::{self as launch, Operands};
use crate::launch::{fill_u32, zero};
use crate::options::SortOptions;
use crate::plan::sort::{plan, SortPlan, DIGITS};
use crate::runtime::Gpu;
use crate::temp::{bytes_of, carve, TempStorage};
use cudarc::driver::{CudaStream, DevicePtrMut};
use std::sync::Arc;

/// Scratch parts of a sort of `n` keys of `size` bytes: spare keys, spare values, digit counts.
fn scratch_parts(plan: &SortPlan, n: u64, size: usize, values: bool) -> Result<[u64; 3]> {
    let spare_values = if values { bytes_of(n, 4)? } else { 0 };
    Ok([bytes_of(n, size)?, spare_values, bytes_of(plan.passes as u64 * DIGITS, 4)?])
}

/// The values a sort moves with its keys.
enum Values {
    None,
    /// The caller's, at this address.
    Given(u64),
    /// The keys' positions, written to this address: made by the first pass, never read.
    Positions(u64),
}

impl Gpu {
    /// Sorts `keys` in place on `stream`, stable. Asynchronous.
    pub fn sort<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut impl DevicePtrMut<T>,
        opts: &SortOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = keys.len() as u64;
        let (k, _wk) = keys.device_ptr_mut(stream);
        self.sort_ptrs::<T>(stream, (k, Values::None), n, opts, temp)
    }

    /// Sorts `keys` in place and moves `values` with them (stable: equal keys keep their
    /// values' order). Asynchronous. Requires `values.len() == keys.len()`.
    pub fn sort_pairs<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut impl DevicePtrMut<T>,
        values: &mut impl DevicePtrMut<u32>,
        opts: &SortOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = keys.len() as u64;
        exactly("the values", values.len() as u64, n, "values")?;
        let (k, _wk) = keys.device_ptr_mut(stream);
        let (v, _wv) = values.device_ptr_mut(stream);
        self.sort_ptrs::<T>(stream, (k, Values::Given(v)), n, opts, temp)
    }

    /// Sorts `keys` in place, stable, and writes to `positions[k]` the input index of the key
    /// that lands at `k` (the stable argsort). Asynchronous. Requires
    /// `positions.len() == keys.len()`; takes the temporary storage of a sort with values
    /// ([`Gpu::sort_temp_bytes`]).
    pub fn argsort<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        keys: &mut impl DevicePtrMut<T>,
        positions: &mut impl DevicePtrMut<u32>,
        opts: &SortOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = keys.len() as u64;
        exactly("the positions", positions.len() as u64, n, "values")?;
        plan(self.tuning(), T::TYPE, n, true, opts.descending)?;
        let (k, _wk) = keys.device_ptr_mut(stream);
        let (p, _wp) = positions.device_ptr_mut(stream);
        if n == 1 {
            // No pass runs on one key: its position is 0.
            return fill_u32(stream, p, 0, 1);
        }
        self.sort_ptrs::<T>(stream, (k, Values::Positions(p)), n, opts, temp)
    }

    /// Bytes of temporary storage a sort of `n` keys of `T` (with values when `values`) needs.
    pub fn sort_temp_bytes<T: Element>(&self, n: u64, values: bool) -> Result<u64> {
        let plan = plan(self.tuning(), T::TYPE, n, values, false)?;
        let (_, scratch) = carve(&scratch_parts(&plan, n, T::TYPE.size(), values)?)?;
        Ok(plan.state.bytes() + scratch)
    }

    fn sort_ptrs<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        (keys, values): (u64, Values),
        n: u64,
        opts: &SortOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let (values, positions) = match values {
            Values::None => (None, false),
            Values::Given(v) => (Some(v), false),
            Values::Positions(p) => (Some(p), true),
        };
        let plan = plan(self.tuning(), T::TYPE, n, values.is_some(), opts.descending)?;
        if n <= 1 {
            return Ok(());
        }
        let parts = scratch_parts(&plan, n, T::TYPE.size(), values.is_some())?;
        let at = temp.scratch_parts(self, stream, &parts)?;
        zero(stream, at[2], parts[2])?;
        let ops = Operands {
            keys,
            spare_keys: at[0],
            values: values.unwrap_or(0),
            positions,
            spare_values: if values.is_some() { at[1] } else { 0 },
            counts: at[2],
            n,
        };
        if let Some(flip) = &plan.flip {
            launch::flip(self, stream, flip, keys, n)?;
        }
        launch::run(self, stream, &plan, &ops, temp)?;
        match &plan.flip {
            Some(flip) => launch::flip(self, stream, flip, keys, n),
            None => Ok(()),
        }
    }
}
