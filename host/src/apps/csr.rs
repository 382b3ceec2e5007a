//! COO ↔ CSR for sparse matrices: row offsets are the exclusive scan of the row counts; back
//! again, the inclusive scan of row heads gives every nonzero its row.

use crate::dispatch::{grid, ScanOptions, TempStorage};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};
use scan_abi::{names, Op};
use std::sync::Arc;

const THREADS: u32 = 256;

/// CPU reference: the row offsets (`nrows + 1` entries) of sorted row indices.
pub fn offsets_reference(rows: &[u32], nrows: u32) -> Vec<u32> {
    let mut offsets = vec![0u32; nrows as usize + 1];
    for &r in rows {
        offsets[r as usize + 1] += 1;
    }
    for r in 0..nrows as usize {
        offsets[r + 1] += offsets[r];
    }
    offsets
}

impl Gpu {
    /// Row offsets (`nrows + 1` entries) of the sorted row indices `rows` of a COO matrix.
    pub fn coo_to_csr(&self, stream: &Arc<CudaStream>, rows: &CudaSlice<u32>, nrows: u32) -> Result<CudaSlice<u32>> {
        let nnz = rows.len() as u64;
        if nnz >= u32::MAX as u64 {
            return Err(Error::invalid(format!("{nnz} nonzeros: 32-bit offsets hold fewer than 2^32")));
        }
        let mut counts = self.alloc_zeros::<u32>(stream, "row counts", nrows as usize + 1)?;
        if nnz > 0 {
            let name = format!("{}_u32", names::CSR_COUNT);
            let f = self.kernel(&name)?;
            let (r, _r) = rows.device_ptr(stream);
            let (c, _w) = counts.device_ptr_mut(stream);
            let mut b = stream.launch_builder(&f);
            b.arg(&r).arg(&nnz).arg(&nrows).arg(&c);
            // SAFETY: matches csr_count_u32; counts holds nrows + 1 entries.
            unsafe { b.launch(grid(nnz.div_ceil(THREADS as u64), THREADS, 0)?) }
                .map_err(|e| Error::kernel(&name, e))?;
        }
        let mut offsets = self.alloc_zeros::<u32>(stream, "row offsets", nrows as usize + 1)?;
        self.scan(stream, &counts, &mut offsets, &ScanOptions::new(Op::Add).exclusive(true), &mut TempStorage::new())?;
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
        let mut heads = self.alloc_zeros::<u32>(stream, "row heads", nnz.max(1) as usize)?;
        let mut rows = self.alloc_zeros::<u32>(stream, "row indices", nnz as usize)?;
        if nnz == 0 {
            return Ok(rows);
        }
        if nrows > 1 {
            let name = format!("{}_u32", names::CSR_HEADS);
            let f = self.kernel(&name)?;
            let (o, _r) = offsets.device_ptr(stream);
            let (h, _w) = heads.device_ptr_mut(stream);
            let mut b = stream.launch_builder(&f);
            b.arg(&o).arg(&nrows).arg(&nnz).arg(&h);
            // SAFETY: matches csr_heads_u32; heads holds nnz entries.
            unsafe { b.launch(grid((nrows as u64).div_ceil(THREADS as u64), THREADS, 0)?) }
                .map_err(|e| Error::kernel(&name, e))?;
        }
        let heads = heads.slice(0..nnz as usize);
        self.scan(stream, &heads, &mut rows, &ScanOptions::new(Op::Add), &mut TempStorage::new())?;
        Ok(rows)
    }
}
