//! COO ↔ CSR helpers around scans: row counts (whose exclusive scan is the row offsets), and
//! row heads (whose inclusive scan gives every nonzero its row back).

use crate::arch::{atomic_add_u32, block_dim, block_idx, thread_idx};
use crate::warp;

#[inline(always)]
fn global_index() -> u64 {
    block_idx() as u64 * block_dim() as u64 + thread_idx() as u64
}

/// `counts[rows[i]] += 1` for every nonzero `i < nnz` (row indices below `nrows`, checked), a
/// warp's neighbouring nonzeros of one row added at once: rows sorted, as CSR matrices come, put
/// a whole warp on one counter.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn csr_count_u32(rows: *const u32, nnz: u64, nrows: u32, counts: *mut u32) {
    let i = global_index();
    // Lanes past the end hold u32::MAX, which is never a row (nrows < u32::MAX). Every lane takes
    // part in the run lengths; the last lane of each run of one row adds the run.
    let r = if i < nnz { *rows.add(i as usize) } else { u32::MAX };
    let run = warp::run_end_length(r);
    if run > 0 && r < nrows {
        atomic_add_u32(counts.add(r as usize), run);
    }
}

/// `heads[offsets[r]] += 1` for every row `r` in `1..nrows` that starts before `nnz`: the
/// inclusive scan of `heads` then counts, at each nonzero, the rows that started at or before it,
/// which is its row index.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn csr_heads_u32(offsets: *const u32, nrows: u32, nnz: u64, heads: *mut u32) {
    let r = global_index();
    if r >= 1 && r < nrows as u64 {
        let at = *offsets.add(r as usize) as u64;
        if at < nnz {
            atomic_add_u32(heads.add(at as usize), 1);
        }
    }
}
