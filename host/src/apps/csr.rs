//! COO <-> CSR for sparse matrices: row offsets are the exclusive scan of the row counts; back
//! again, the inclusive scan of row heads gives every nonzero its row.

use crate::error::{Error, Result};
use crate::launch::partition::helper;
use crate::launch::scan::{run, Operands};
use crate::plan::partition::{count_scan, helper as plan_helper};
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::Family;
use std::sync::Arc;

impl Gpu {
    /// Row offsets (`nrows + 1` entries) of the sorted row indices `rows` of a COO matrix.
    pub fn coo_to_csr(&self, stream: &Arc<CudaStream>, rows: &CudaSlice<u32>, nrows: u32) -> Result<CudaSlice<u32>> {
        let nnz = rows.len() as u64;
        if nnz >= u32::MAX as u64 {
            return Err(Error::invalid(format!("{nnz} nonzeros: 32-bit offsets hold fewer than 2^32")));
        }
        let entries = nrows as u64 + 1;
        let scan = count_scan(self.tuning(), entries, true)?;
        let mut counts = self.alloc_zeros::<u32>(stream, "row counts", entries as usize)?;
        let mut offsets = self.alloc_zeros::<u32>(stream, "row offsets", entries as usize)?;
        {
            let (r, _r) = rows.device_ptr(stream);
            let (c, _w) = counts.device_ptr_mut(stream);
            if nnz > 0 {
                helper(self, stream, &plan_helper(self.tuning(), Family::CsrCount, nnz), (r, nnz, nrows, c))?;
            }
            let (o, _wo) = offsets.device_ptr_mut(stream);
            let ops = Operands { input: c, output: o, n: entries, init: 0u32, identity: 0u32 };
            run(self, stream, &scan, ops, &mut TempStorage::new())?;
        }
        let mut last = [0u32];
        stream.memcpy_dtoh(&offsets.slice(nrows as usize..), &mut last)?;
        if last[0] as u64 != nnz {
            return Err(Error::invalid(format!("{} of {nnz} row indices are not below {nrows}", nnz - last[0] as u64)));
        }
        Ok(offsets)
    }

    /// Row indices (`nnz` entries) of a CSR matrix with row offsets `offsets` (`nrows + 1`).
    pub fn csr_to_coo(&self, stream: &Arc<CudaStream>, offsets: &CudaSlice<u32>) -> Result<CudaSlice<u32>> {
        if offsets.is_empty() {
            return Err(Error::invalid("row offsets need nrows + 1 >= 1 entries"));
        }
        let nrows = (offsets.len() - 1) as u32;
        let mut last = [0u32];
        stream.memcpy_dtoh(&offsets.slice(nrows as usize..), &mut last)?;
        let nnz = last[0] as u64;
        let scan = count_scan(self.tuning(), nnz, false)?;
        let mut heads = self.alloc_zeros::<u32>(stream, "row heads", nnz.max(1) as usize)?;
        let mut rows = self.alloc_zeros::<u32>(stream, "row indices", nnz as usize)?;
        if nnz == 0 {
            return Ok(rows);
        }
        {
            let (h, _w) = heads.device_ptr_mut(stream);
            if nrows > 1 {
                let (o, _r) = offsets.device_ptr(stream);
                helper(self, stream, &plan_helper(self.tuning(), Family::CsrHeads, nrows as u64), (o, nrows, nnz, h))?;
            }
            let (r, _wr) = rows.device_ptr_mut(stream);
            let ops = Operands { input: h, output: r, n: nnz, init: 0u32, identity: 0u32 };
            run(self, stream, &scan, ops, &mut TempStorage::new())?;
        }
        Ok(rows)
    }
}
