//! Moving one tile between global memory and registers.
//!
//! Two arrangements:
//! - *blocked* (hierarchical kernels): thread `t` holds elements `t*IT .. t*IT+IT` of the tile.
//!   Global memory is read and written coalesced (consecutive threads, consecutive elements)
//!   and transposed through shared memory, padded so the transposing reads avoid bank conflicts.
//! - *warp-striped vectors* (single-pass kernel): warp `w` owns a contiguous segment of
//!   `32*IT` elements; lane `l`'s `j`-th vector is the `V` elements at `(j*32 + l)*V` of that
//!   segment. Every access is one 16-byte vector per lane, 512 contiguous bytes per warp, with no
//!   shared-memory round trip.
//!
//! Elements past the end of the input are filled with the identity, so partial tiles scan like
//! full ones; stores skip them.

use crate::arch::{block_dim, lane, load_vec16, store_vec16, sync_threads, thread_idx, WARP};
use crate::smem::Smem;
use scan_abi::block::padded;

/// Loads `IT` elements per thread (`block_dim() * IT` per tile, of which `valid` exist) into the
/// blocked arrangement. `buf` holds `tile_buffer_elems(block_dim() * IT)` elements.
#[inline(always)]
pub unsafe fn load_blocked<T: Copy, const IT: usize>(src: *const T, valid: u32, fill: T, buf: Smem<T>) -> [T; IT] {
    let (t, threads) = (thread_idx(), block_dim());
    for k in 0..IT as u32 {
        let i = k * threads + t;
        buf.set(padded(i), if i < valid { *src.add(i as usize) } else { fill });
    }
    sync_threads();
    let mut items = [fill; IT];
    for (k, item) in items.iter_mut().enumerate() {
        *item = buf.get(padded(t * IT as u32 + k as u32));
    }
    sync_threads();
    items
}

/// Stores a blocked arrangement back, coalesced. Inverse of [`load_blocked`].
#[inline(always)]
pub unsafe fn store_blocked<T: Copy, const IT: usize>(dst: *mut T, valid: u32, items: [T; IT], buf: Smem<T>) {
    let (t, threads) = (thread_idx(), block_dim());
    for (k, item) in items.iter().enumerate() {
        buf.set(padded(t * IT as u32 + k as u32), *item);
    }
    sync_threads();
    for k in 0..IT as u32 {
        let i = k * threads + t;
        if i < valid {
            *dst.add(i as usize) = buf.get(padded(i));
        }
    }
    sync_threads();
}

/// Loads this lane's `VECS` vectors of `V` elements from the warp's segment at `src`, of which
/// `valid` elements exist (may exceed the segment). `vectors` allows 16-byte accesses (both
/// pointers 16-byte aligned); partial segments are read element by element.
#[inline(always)]
pub unsafe fn load_striped<T: Copy, const V: usize, const VECS: usize>(
    src: *const T,
    valid: u32,
    fill: T,
    vectors: bool,
) -> [[T; V]; VECS] {
    let l = lane();
    let mut out = [[fill; V]; VECS];
    if vectors && valid >= WARP * (V * VECS) as u32 {
        for (j, v) in out.iter_mut().enumerate() {
            *v = load_vec16::<T, V>(src.add((j * WARP as usize + l as usize) * V));
        }
    } else {
        for (j, v) in out.iter_mut().enumerate() {
            for (k, x) in v.iter_mut().enumerate() {
                let i = (j as u32 * WARP + l) * V as u32 + k as u32;
                if i < valid {
                    *x = *src.add(i as usize);
                }
            }
        }
    }
    out
}

/// Stores this lane's vectors to the warp's segment at `dst`. Inverse of [`load_striped`].
#[inline(always)]
pub unsafe fn store_striped<T: Copy, const V: usize, const VECS: usize>(
    dst: *mut T,
    valid: u32,
    vals: [[T; V]; VECS],
    vectors: bool,
) {
    let l = lane();
    if vectors && valid >= WARP * (V * VECS) as u32 {
        for (j, v) in vals.iter().enumerate() {
            store_vec16::<T, V>(dst.add((j * WARP as usize + l as usize) * V), *v);
        }
    } else {
        for (j, v) in vals.iter().enumerate() {
            for (k, x) in v.iter().enumerate() {
                let i = (j as u32 * WARP + l) * V as u32 + k as u32;
                if i < valid {
                    *dst.add(i as usize) = *x;
                }
            }
        }
    }
}
