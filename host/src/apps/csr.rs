//! COO <-> CSR for sparse matrices: row offsets are the exclusive scan of the row counts; back
//! again, the inclusive scan of row heads gives every nonzero its row.

use crate::error::{at_least, Error, Result};
use crate::launch::partition::helper;
use crate::launch::scan::{run, Operands};
use crate::launch::zero;
use crate::options::CsrOptions;
use crate::plan::partition::{count_scan, helper as plan_helper};
use crate::runtime::Gpu;
use crate::temp::{bytes_of, TempStorage};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::Family;
use std::sync::Arc;

/// The CSR kernels index nonzeros and rows in 32 bits.
fn check_counts(nnz: u64, nrows: u64) -> Result<u32> {
    if nnz >= u32::MAX as u64 {
        return Err(Error::out_of_range("the number of nonzeros", nnz, "below 2^32 - 1 (32-bit offsets)"));
    }
    u32::try_from(nrows)
        .ok()
        .filter(|&r| r < u32::MAX)
        .ok_or_else(|| Error::out_of_range("the number of rows", nrows, "below 2^32 - 1"))
}

impl Gpu {
    /// The row offsets of a COO matrix whose nonzeros are in the rows `rows` (in any order),
    /// into `offsets`, which has one entry more than the matrix has rows: `offsets[r]` is where
    /// row `r` starts. Row indices of `offsets.len() - 1` or more are not counted, so then
    /// `offsets[nrows]` is less than `rows.len()`: check it where that matters. Asynchronous.
    pub fn coo_to_csr(
        &self,
        stream: &Arc<CudaStream>,
        rows: &impl DevicePtr<u32>,
        offsets: &mut impl DevicePtrMut<u32>,
        _opts: &CsrOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        at_least("the row offsets", offsets.len() as u64, 1, "entries")?;
        let (nnz, entries) = (rows.len() as u64, offsets.len() as u64);
        let nrows = check_counts(nnz, entries - 1)?;
        let scan = count_scan(self.tuning(), entries, true)?;
        let counts = temp.scratch(self, stream, bytes_of(entries, 4)?)?;
        zero(stream, counts, entries * 4)?;
        if nnz > 0 {
            let (r, _r) = rows.device_ptr(stream);
            helper(self, stream, &plan_helper(self.tuning(), Family::CsrCount, nnz), (r, nnz, nrows, counts))?;
        }
        let (o, _wo) = offsets.device_ptr_mut(stream);
        let ops = Operands { input: counts, output: o, n: entries, init: 0u32, identity: 0u32 };
        run(self, stream, &scan, ops, temp)
    }

    /// The row index of every nonzero of a CSR matrix with row offsets `offsets` (`nrows + 1`
    /// entries, non-decreasing, from 0 to `rows.len()`), into `rows`. Offsets that break that
    /// rule give unspecified rows (never a write outside `rows`). Asynchronous.
    pub fn csr_to_coo(
        &self,
        stream: &Arc<CudaStream>,
        offsets: &impl DevicePtr<u32>,
        rows: &mut impl DevicePtrMut<u32>,
        _opts: &CsrOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        at_least("the row offsets", offsets.len() as u64, 1, "entries")?;
        let nnz = rows.len() as u64;
        let nrows = check_counts(nnz, offsets.len() as u64 - 1)?;
        let scan = count_scan(self.tuning(), nnz, false)?;
        if nnz == 0 {
            return Ok(());
        }
        let heads = temp.scratch(self, stream, bytes_of(nnz, 4)?)?;
        zero(stream, heads, nnz * 4)?;
        if nrows > 1 {
            let (o, _r) = offsets.device_ptr(stream);
            helper(self, stream, &plan_helper(self.tuning(), Family::CsrHeads, nrows as u64), (o, nrows, nnz, heads))?;
        }
        let (r, _wr) = rows.device_ptr_mut(stream);
        let ops = Operands { input: heads, output: r, n: nnz, init: 0u32, identity: 0u32 };
        run(self, stream, &scan, ops, temp)
    }

    /// Bytes of temporary storage [`Gpu::coo_to_csr`] (`items` = rows + 1) or
    /// [`Gpu::csr_to_coo`] (`items` = nonzeros) needs.
    pub fn csr_temp_bytes(&self, items: u64) -> Result<u64> {
        let (state, _) = count_scan(self.tuning(), items, true)?.temp_bytes();
        Ok(state + bytes_of(items, 4)?)
    }
}
