//! Matrix transpose through shared memory, 32 × 32 elements per block: reads and writes are
//! both coalesced. Used to scan a row-major matrix down its columns (transpose, scan the rows,
//! transpose back).

use crate::arch::{block_idx, sync_threads, thread_idx};
use crate::smem::Carver;

/// Side of a transposed tile; the block has `SIDE × ROWS_PER_PASS` threads.
const SIDE: u32 = 32;
const ROWS_PER_PASS: u32 = 8;

/// `out[c][r] = inp[r][c]` for the row-major `rows × cols` matrix `inp`.
#[inline(always)]
pub unsafe fn transpose<T: Copy + Default>(inp: *const T, out: *mut T, rows: u64, cols: u64) {
    let mut smem = Carver::new();
    // One padding column keeps the column reads free of bank conflicts.
    let tile = smem.take::<T>(SIDE * (SIDE + 1));
    smem.check();
    let tiles_across = cols.div_ceil(SIDE as u64);
    let (tr, tc) = (block_idx() as u64 / tiles_across, block_idx() as u64 % tiles_across);
    let (x, y0) = (thread_idx() % SIDE, thread_idx() / SIDE);
    let mut y = y0;
    while y < SIDE {
        let (r, c) = (tr * SIDE as u64 + y as u64, tc * SIDE as u64 + x as u64);
        if r < rows && c < cols {
            tile.set(y * (SIDE + 1) + x, *inp.add((r * cols + c) as usize));
        }
        y += ROWS_PER_PASS;
    }
    sync_threads();
    let mut y = y0;
    while y < SIDE {
        // Output row tc*32 + y holds input column tc*32 + y; its element x is input row tr*32 + x.
        let (r, c) = (tr * SIDE as u64 + x as u64, tc * SIDE as u64 + y as u64);
        if r < rows && c < cols {
            *out.add((c * rows + r) as usize) = tile.get(x * (SIDE + 1) + y);
        }
        y += ROWS_PER_PASS;
    }
}

#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_b32(inp: *const u32, out: *mut u32, rows: u64, cols: u64) {
    transpose::<u32>(inp, out, rows, cols)
}

#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_b64(inp: *const u64, out: *mut u64, rows: u64, cols: u64) {
    transpose::<u64>(inp, out, rows, cols)
}
