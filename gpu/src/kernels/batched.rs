//! Batched scans of a row-major `rows × cols` matrix, each in one pass over the data.
//!
//! - [`scan_columns`] scans down every column (the outer axis). A tile is a block of rows of one strip
//!   of `strip` adjacent columns; each thread owns one column of `IT` consecutive rows of it, so a
//!   warp's load covers adjacent columns of a row (or, when a strip is the whole row, adjacent
//!   rows). Every column has its own status word per tile, and the threads of the tile's first
//!   group each look back along their own column, independently: the decoupled look-back of the
//!   single-pass scan, one column per thread. Tiles are numbered row-block-major across strips,
//!   so a tile's predecessor in its column was claimed `strips` tiles earlier and has usually
//!   finished: the look-back rarely waits.
//! - [`scan_columns_vec`] is [`scan_columns`] with each thread owning a 16-byte vector of
//!   adjacent columns, for 8-byte elements in rows on 16-byte boundaries.
//! - [`scan_column_vectors`] scans down the columns of a matrix with few rows: each thread owns a
//!   vector of adjacent columns and walks down every row, so nothing is looked back for and every
//!   access is a whole vector.
//! - [`scan_rows`] scans along every row (the inner axis) of long rows: each block takes whole rows
//!   and walks each from left to right one tile at a time, carrying the running value from tile
//!   to tile, so blocks never wait for one another.
//! - Few long rows (`batched_long_rows_*`) are the single-pass scan with one chain of tiles per
//!   row: tiles never cross a row, and each row's first tile publishes at once, so look-backs
//!   stop there.
//! - [`scan_short_rows`] scans rows shorter than a tile: each tile holds whole rows, so it is a
//!   segmented scan whose segments never cross a tile, and tiles need nothing from one another.

use crate::arch::{
    block_dim, block_idx, bulk_commit, bulk_copy_to_global, bulk_copy_to_shared, bulk_wait_read_all,
    fence_proxy_async_shared, grid_dim, lane, load_vec, mbar_arrive_expect_bytes, mbar_init, mbar_init_fence,
    mbar_wait, prefetch_l2_bulk, shfl_up, store_vec, sync_threads, thread_idx, warp_idx, Vec16, WARP,
};
use crate::kernels::segmented::{finish_part, fixed_heads, scan_part};
use crate::kernels::single_pass::{single_pass_placed, TileLaunch};
use crate::kernels::{claim_tile, finish, next_tile, prefetch_tile_l2, Mode, Place, SHAPES};
use crate::lookback::{StatusValue, TileStatus};
use crate::op::{combine_after, combine_opt, Add, Max, Min, Mul, ScanOp, Seg, SegOp};
use crate::smem::{Carver, Smem};
use crate::tile::{load_striped, store_striped};
use crate::warp;
use scan_abi::shape::{vector_elems, Tile, VECTOR_BYTES};
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};

/// The scan down every column of `inp` into `out`, in tiles of `groups * IT` rows by `strip`
/// columns (`groups = min(TH / strip, SHAPES.column_groups)`). `temp` holds the tile
/// counter and one status word per (row block, column); `counter_base` and `epoch` as in the
/// single-pass scan.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scan_columns<T: StatusValue, O: ScanOp<T>, const TH: u32, const IT: usize>(
    inp: *const T,
    out: *mut T,
    rows: u64,
    cols: u64,
    strip: u32,
    flags: u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
) {
    let mode = Mode::from_flags(flags);
    let t = thread_idx();
    let groups = (TH / strip).min(SHAPES.column_groups);
    let (g, c) = (t / strip, t % strip);
    let strips = cols.div_ceil(strip as u64);
    let tile_rows = (groups * IT as u32) as u64;

    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    let totals = smem.take::<T>(TH);
    let prefixes = smem.take::<T>(TH);
    smem.check();

    // (row block, this thread's column (may be past the last), first row of this thread)
    let place = |tile: u32| {
        let (chunk, s) = (tile as u64 / strips, tile as u64 % strips);
        (chunk, s * strip as u64 + c as u64, chunk * tile_rows + (g * IT as u32) as u64)
    };
    let active = g < groups;
    let load = |tile: u32| {
        let (_, col, row0) = place(tile);
        let mut v = [O::identity(); IT];
        if active && col < cols {
            for (k, x) in v.iter_mut().enumerate() {
                if row0 + (k as u64) < rows {
                    *x = *inp.add(((row0 + k as u64) * cols + col) as usize);
                }
            }
        }
        v
    };
    // A tile that holds every row has nothing to look back for: it is its block's index, and it
    // neither claims nor publishes (the host advances the tile counter by nothing).
    let whole = rows <= tile_rows;
    // One strip: a tile is a contiguous run of whole rows, and the block launched `ahead` blocks
    // later most likely claims the tile as many further on, as in the single-pass scan.
    if strips == 1 && !whole {
        let place = |tile: u32| {
            let row = tile as u64 * tile_rows;
            Place { base: row * cols, len: (rows.saturating_sub(row).min(tile_rows) * cols) as u32, first: tile == 0 }
        };
        let ahead = SHAPES.prefetch_tiles;
        prefetch_tile_l2(inp, place, ahead, inp as usize % VECTOR_BYTES == 0);
    }
    let (tile, mut vals) =
        if whole { (block_idx(), load(block_idx())) } else { claim_tile(temp, counter_base, tile_slot, load) };
    let (chunk, col, row0) = place(tile);

    for k in 1..IT {
        vals[k] = O::combine(vals[k - 1], vals[k]);
    }
    if active {
        totals.set(g * strip + c, vals[IT - 1]);
    }
    sync_threads();

    // This thread's groups before it in the tile, and the whole tile, in its column.
    let mut before: Option<T> = None;
    let mut tile_total = O::identity();
    if active {
        for h in 0..groups {
            let x = totals.get(h * strip + c);
            if h == g {
                before = Some(tile_total);
            }
            tile_total = if h == 0 { x } else { O::combine(tile_total, x) };
        }
        before = before.filter(|_| g > 0);
    }

    if active && g == 0 && col < cols && !whole {
        let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };
        let slot = |k: u64| (k * cols + col) as u32;
        if chunk == 0 {
            status.publish(slot(0), FLAG_PREFIX, tile_total);
        } else {
            status.publish(slot(chunk), FLAG_AGGREGATE, tile_total);
            let prefix = status.look_back_alone::<T, O, 1>(chunk as u32, |k| slot(k as u64));
            status.publish(slot(chunk), FLAG_PREFIX, O::combine(prefix, tile_total));
            prefixes.set(c, prefix);
        }
    }
    sync_threads();

    if active && col < cols {
        let column_prefix = if chunk > 0 { Some(prefixes.get(c)) } else { None };
        finish::<T, O, IT>(&mut vals, combine_opt::<T, O>(column_prefix, before), mode.exclusive);
        for (k, x) in vals.iter().enumerate() {
            if row0 + (k as u64) < rows {
                *out.add(((row0 + k as u64) * cols + col) as usize) = *x;
            }
        }
    }
}

/// The scan down every column of `inp` into `out` when every row starts on a 16-byte boundary:
/// [`scan_columns`] with each thread owning a vector of `V` adjacent columns (16 bytes) for `IT`
/// consecutive rows, so that every access is one 16-byte load or store instead of `V`. `tpr`
/// threads (a power of two up to 32) cover a strip of `tpr * V` columns, and the tile's
/// `TH / tpr` groups of rows are combined per column in two steps: a shuffle scan across the
/// groups of a warp (lanes `tpr` apart own the same columns), then across the warps through
/// shared memory. The strip's first `tpr * V` threads then look back, one column each, reading
/// `LW` tiles of their column a round (`Choices::window4_max_strips`: a matrix of few strips
/// has few chains, each long, whose look-backs walk far). `temp`, `counter_base` and `epoch` as
/// in [`scan_columns`]; `cols` must be a multiple of `V`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scan_columns_vec<
    T: StatusValue,
    O: ScanOp<T>,
    const TH: u32,
    const IT: usize,
    const V: usize,
    const LW: usize,
>(
    inp: *const T,
    out: *mut T,
    rows: u64,
    cols: u64,
    tpr: u32,
    flags: u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
) {
    const { assert!(V * core::mem::size_of::<T>() == VECTOR_BYTES) };
    let mode = Mode::from_flags(flags);
    let t = thread_idx();
    let warps = TH / WARP;
    let strip = tpr * V as u32;
    let (g, c) = (t / tpr, t % tpr);
    let strips = cols.div_ceil(strip as u64);
    let tile_rows = ((TH / tpr) * IT as u32) as u64;

    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    // Per warp, its groups' totals per column of the strip; then per column, the tile's prefix.
    let warp_totals = smem.take::<T>(warps * strip);
    let prefixes = smem.take::<T>(strip);
    smem.check();

    // (row block, this thread's first column (may be past the last), first row of this thread)
    let place = |tile: u32| {
        let (chunk, s) = (tile as u64 / strips, tile as u64 % strips);
        (chunk, s * strip as u64 + (c * V as u32) as u64, chunk * tile_rows + (g * IT as u32) as u64)
    };
    // Rows of this thread's run that exist.
    let run_rows = |row0: u64| rows.saturating_sub(row0).min(IT as u64) as usize;
    let load = |tile: u32| {
        let (_, col, row0) = place(tile);
        let mut v = [[O::identity(); V]; IT];
        if col < cols {
            let (p, n) = (inp.add((row0 * cols + col) as usize), run_rows(row0));
            for (k, x) in v.iter_mut().enumerate() {
                if k < n {
                    *x = load_vec::<T, V>(p.add(k * cols as usize));
                }
            }
        }
        v
    };
    let whole = rows <= tile_rows;
    let (tile, mut vals) =
        if whole { (block_idx(), load(block_idx())) } else { claim_tile(temp, counter_base, tile_slot, load) };
    let (chunk, col, row0) = place(tile);

    for k in 1..IT {
        for e in 0..V {
            vals[k][e] = O::combine(vals[k - 1][e], vals[k][e]);
        }
    }
    let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };
    let first_col = (tile as u64 % strips) * strip as u64;
    let prefix = vector_tile_prefix::<T, O, TH, V, LW>(
        vals[IT - 1],
        tpr,
        warp_totals,
        prefixes,
        status,
        chunk,
        cols,
        first_col,
        whole,
    );

    if col < cols {
        for e in 0..V {
            let mut column = [O::identity(); IT];
            for k in 0..IT {
                column[k] = vals[k][e];
            }
            finish::<T, O, IT>(&mut column, prefix[e], mode.exclusive);
            for k in 0..IT {
                vals[k][e] = column[k];
            }
        }
        let (p, n) = (out.add((row0 * cols + col) as usize), run_rows(row0));
        for (k, x) in vals.iter().enumerate() {
            if k < n {
                store_vec::<T, V>(p.add(k * cols as usize), *x);
            }
        }
    }
}

/// [`scan_columns_vec`] for matrices whose row is one strip of `tpr` vectors (`cols == tpr * V`),
/// with the tile in shared memory: one bulk copy brings its contiguous rows in, each thread
/// combines its `items` rows from there, the tile looks back as the vector tiles do, each thread
/// scans its rows in place, and one bulk copy writes the tile out. No register holds the tile while
/// it arrives or while the block waits for its prefix, so a tile may be taller than the vector
/// tiles' (216 rows of 512 bytes against 128), and the copies ask for whole lines. The tile's
/// height is the launch's (`items` rows a thread group, the shared memory for them), so that the
/// host can size it to the blocks an SM should hold. With `ahead` > 0, the block also asks the
/// bulk-copy engine to bring the tile `ahead` after its own into L2 (`kernels::prefetch_tile_l2`'s
/// idea, by the claimed tile), so that the block claiming it then waits on L2 rather than memory.
/// With `items` odd the groups of a warp fall on both halves of the banks for 64-byte rows. At
/// least two tiles. A tile is copied once the counter names it: copying the block's own index's
/// tile while the counter answered, and again when it named another, was slower
/// (`Choices::bulk_rows`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn scan_columns_bulk<T: StatusValue, O: ScanOp<T>, const TH: u32, const V: usize, const LW: usize>(
    inp: *const T,
    out: *mut T,
    rows: u64,
    cols: u64,
    tpr: u32,
    items: u32,
    ahead: u32,
    flags: u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
) {
    const { assert!(V * core::mem::size_of::<T>() == VECTOR_BYTES) };
    let mode = Mode::from_flags(flags);
    let t = thread_idx();
    let warps = TH / WARP;
    let (g, c) = (t / tpr, t % tpr);
    let tile_rows = ((TH / tpr) * items) as u64;
    let row_bytes = cols * core::mem::size_of::<T>() as u64;

    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    let bar = smem.take::<u64>(1);
    let warp_totals = smem.take::<T>(warps * tpr * V as u32);
    let prefixes = smem.take::<T>(tpr * V as u32);
    let rows_buf = smem.take::<Vec16<T, V>>(TH * items);
    smem.check();

    let rows_in = |tile: u32| rows.saturating_sub(tile as u64 * tile_rows).min(tile_rows);
    let bytes = |tile: u32| (rows_in(tile) * row_bytes) as u32;
    let fetch = |tile: u32| {
        mbar_arrive_expect_bytes(bar.at(0), bytes(tile));
        let src = (inp as *const u8).add((tile as u64 * tile_rows * row_bytes) as usize);
        bulk_copy_to_shared(rows_buf.at(0) as *mut u8, src, bytes(tile), bar.at(0));
    };
    if t == 0 {
        mbar_init(bar.at(0), 1);
        mbar_init_fence();
    }
    let tile = next_tile(temp, counter_base, tile_slot);
    if t == 0 {
        fetch(tile);
        let later = tile.wrapping_add(ahead);
        if ahead > 0 && (later as u64) < rows.div_ceil(tile_rows) {
            let src = (inp as *const u8).add((later as u64 * tile_rows * row_bytes) as usize);
            prefetch_l2_bulk(src, bytes(later));
        }
    }
    mbar_wait(bar.at(0), 0);

    let row0 = g * items;
    let n = rows_in(tile).saturating_sub(row0 as u64).min(items as u64) as u32;
    let at = |k: u32| (row0 + k) * tpr + c;
    let mut run = [O::identity(); V];
    for k in 0..n {
        let x = rows_buf.get(at(k)).0;
        for e in 0..V {
            run[e] = O::combine(run[e], x[e]);
        }
    }
    let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };
    let mut acc =
        vector_tile_prefix::<T, O, TH, V, LW>(run, tpr, warp_totals, prefixes, status, tile as u64, cols, 0, false);
    for k in 0..n {
        let x = rows_buf.get(at(k)).0;
        let mut y = x;
        for e in 0..V {
            let through = combine_after::<T, O>(acc[e], x[e]);
            y[e] = if mode.exclusive { acc[e].unwrap_or(O::identity()) } else { through };
            acc[e] = Some(through);
        }
        rows_buf.set(at(k), Vec16(y));
    }
    fence_proxy_async_shared();
    sync_threads();
    if t == 0 {
        let dst = (out as *mut u8).add((tile as u64 * tile_rows * row_bytes) as usize);
        bulk_copy_to_global(dst, rows_buf.at(0) as *const u8, bytes(tile));
        bulk_commit();
        bulk_wait_read_all();
    }
}

/// What comes before each column of this thread's vector in its tile, for the vector column
/// tiles (`tpr` threads a row of a strip of `tpr * V` columns from `first_col`, thread `t`'s
/// vector the `t % tpr`-th): `run` combines the thread's own rows. The groups of a warp are
/// combined by shuffles (lanes `tpr` apart own the same columns, in row order), the warps through
/// `warp_totals`; unless the tile is `alone` in its strip, the strip's first `tpr * V` threads
/// publish the tile's column totals in `status` and look back along their columns (slot
/// `chunk * cols + column`, `LW` tiles a round), leaving the columns' prefixes in `prefixes`.
/// Every thread of the block calls it (two barriers).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn vector_tile_prefix<T: StatusValue, O: ScanOp<T>, const TH: u32, const V: usize, const LW: usize>(
    run: [T; V],
    tpr: u32,
    warp_totals: Smem<T>,
    prefixes: Smem<T>,
    status: TileStatus,
    chunk: u64,
    cols: u64,
    first_col: u64,
    alone: bool,
) -> [Option<T>; V] {
    let (t, w, l) = (thread_idx(), warp_idx(), lane());
    let (warps, strip, c) = (TH / WARP, tpr * V as u32, t % tpr);
    let mut run = run;
    let mut delta = tpr;
    while delta < WARP {
        let up = shfl_up(run, delta);
        if l >= delta {
            for e in 0..V {
                run[e] = O::combine(up[e], run[e]);
            }
        }
        delta *= 2;
    }
    let up = shfl_up(run, tpr);
    let in_warp = if l >= tpr { Some(up) } else { None };
    if l >= WARP - tpr {
        warp_totals.cast::<Vec16<T, V>>().set(w * tpr + c, Vec16(run));
    }
    sync_threads();

    let look_col = first_col + t as u64;
    if t < strip && look_col < cols && !alone {
        let mut tile_total = warp_totals.get(t);
        for v in 1..warps {
            tile_total = O::combine(tile_total, warp_totals.get(v * strip + t));
        }
        let slot = |k: u64| (k * cols + look_col) as u32;
        if chunk == 0 {
            status.publish(slot(0), FLAG_PREFIX, tile_total);
        } else {
            status.publish(slot(chunk), FLAG_AGGREGATE, tile_total);
            let prefix = status.look_back_alone::<T, O, LW>(chunk as u32, |k| slot(k as u64));
            status.publish(slot(chunk), FLAG_PREFIX, O::combine(prefix, tile_total));
            prefixes.set(t, prefix);
        }
    }
    sync_threads();

    let column_prefix = if chunk > 0 { Some(prefixes.cast::<Vec16<T, V>>().get(c).0) } else { None };
    // The warps before this thread's, per column of its vector.
    let mut before: [Option<T>; V] = [None; V];
    for v in 0..w {
        let x = warp_totals.cast::<Vec16<T, V>>().get(v * tpr + c).0;
        for e in 0..V {
            before[e] = Some(combine_after::<T, O>(before[e], x[e]));
        }
    }
    let mut prefix: [Option<T>; V] = [None; V];
    for e in 0..V {
        prefix[e] =
            combine_opt::<T, O>(combine_opt::<T, O>(column_prefix.map(|p| p[e]), before[e]), in_warp.map(|p| p[e]));
    }
    prefix
}

/// The scan down every column of `inp` into `out` for matrices of few rows: thread `i` of the
/// grid owns columns `V*i .. V*i + V` (one vector access per row when rows stay aligned to it),
/// then `V*(i + grid threads)`, …, and walks down every row `B` rows at a time: `B` vectors in
/// flight, then scanned on from the running values and stored (the host sends at most `B`
/// rows). Threads never wait for one another, so this is a copy with a few additions, where the
/// tiled kernel gives every thread one element per row and a block little work.
#[inline(always)]
pub unsafe fn scan_column_vectors<T: Copy, O: ScanOp<T>, const V: usize, const B: usize>(
    inp: *const T,
    out: *mut T,
    rows: u64,
    cols: u64,
    flags: u32,
) {
    let mode = Mode::from_flags(flags);
    let size = core::mem::size_of::<T>() as u64;
    // Every row starts on a vector boundary, so `cols` is a multiple of `V` and no vector is partial.
    let width = V * size as usize;
    let vectors = (inp as usize | out as usize) % width == 0 && (cols * size).is_multiple_of(width as u64);
    let owned = cols.div_ceil(V as u64);
    let stride = grid_dim() as u64 * block_dim() as u64;
    let mut own = block_idx() as u64 * block_dim() as u64 + thread_idx() as u64;
    while own < owned {
        let col = own * V as u64;
        let owned_cols = (cols - col).min(V as u64) as usize;
        let mut running = [O::identity(); V];
        let mut row = 0u64;
        while row < rows {
            let mut batch = [[O::identity(); V]; B];
            for (b, v) in batch.iter_mut().enumerate() {
                let r = row + b as u64;
                if r < rows {
                    let p = inp.add((r * cols + col) as usize);
                    if vectors {
                        *v = load_vec::<T, V>(p);
                    } else {
                        for (k, x) in v.iter_mut().enumerate() {
                            if k < owned_cols {
                                *x = *p.add(k);
                            }
                        }
                    }
                }
            }
            for (b, v) in batch.iter_mut().enumerate() {
                // The first row starts each column: nothing is combined into it (an identity
                // combined in could change it, as 0.0 + -0.0 does).
                let first = row == 0 && b == 0;
                for (x, run) in v.iter_mut().zip(running.iter_mut()) {
                    let through = if first { *x } else { O::combine(*run, *x) };
                    *x = if !mode.exclusive {
                        through
                    } else if first {
                        O::identity()
                    } else {
                        *run
                    };
                    *run = through;
                }
            }
            for (b, v) in batch.iter().enumerate() {
                let r = row + b as u64;
                if r < rows {
                    let p = out.add((r * cols + col) as usize);
                    if vectors {
                        store_vec::<T, V>(p, *v);
                    } else {
                        for (k, x) in v.iter().enumerate() {
                            if k < owned_cols {
                                *p.add(k) = *x;
                            }
                        }
                    }
                }
            }
            row += B as u64;
        }
        own += stride;
    }
}

/// The scan along every row of `inp` into `out`: block `b` takes rows `b, b + grid, …` and scans
/// each in tiles of `TH` threads × `VECS` vectors of `V` (warp-striped, as the single-pass scan
/// loads them), carrying the row's running value from one tile to the next.
#[inline(always)]
pub unsafe fn scan_rows<T: Copy, O: ScanOp<T>, const TH: u32, const V: usize, const VECS: usize>(
    inp: *const T,
    out: *mut T,
    rows: u64,
    cols: u64,
    flags: u32,
) {
    let mode = Mode::from_flags(flags);
    let (w, l) = (warp_idx(), lane());
    let warps = TH / WARP;
    let segment = (WARP as usize * V * VECS) as u64;
    let tile_elems = TH as u64 * (V * VECS) as u64;

    let mut smem = Carver::new();
    // Two sets of warp totals, used by alternate tiles: a warp writing one set never overtakes
    // a warp still reading the other, since both passed the barrier in between.
    let warp_totals = smem.take::<T>(2 * warps);
    smem.check();

    let size = core::mem::size_of::<T>() as u64;
    let aligned =
        (inp as usize | out as usize) % VECTOR_BYTES == 0 && (cols * size).is_multiple_of(VECTOR_BYTES as u64);
    let mut parity = 0;
    let mut row = block_idx() as u64;
    while row < rows {
        let mut carry: Option<T> = None;
        let mut start = 0u64;
        while start < cols {
            let first = row * cols + start + w as u64 * segment;
            let valid = ((cols - start).min(tile_elems) as u32).saturating_sub(w * segment as u32);
            let mut vals = load_striped::<T, V, VECS>(inp.wrapping_add(first as usize), valid, O::identity(), aligned);

            let mut lane_prefix = [None; VECS];
            let mut warp_running: Option<T> = None;
            for (j, v) in vals.iter_mut().enumerate() {
                for k in 1..V {
                    v[k] = O::combine(v[k - 1], v[k]);
                }
                let (before, through) = warp::scan::<T, O>(v[V - 1]);
                lane_prefix[j] = combine_opt::<T, O>(warp_running, before);
                warp_running = Some(combine_after::<T, O>(warp_running, warp::broadcast(through, WARP - 1)));
            }
            let set = warp_totals.offset(parity * warps);
            if l == 0 {
                set.set(w, warp_running.unwrap_or(O::identity()));
            }
            sync_threads();

            // This warp's prefix: the carry and the warps before it; the new carry: all of them.
            let mut warp_prefix = carry;
            for v in 0..warps {
                if v == w {
                    warp_prefix = carry;
                }
                carry = Some(combine_after::<T, O>(carry, set.get(v)));
            }

            for (j, v) in vals.iter_mut().enumerate() {
                let prefix = combine_opt::<T, O>(warp_prefix, lane_prefix[j]);
                finish::<T, O, V>(v, prefix, mode.exclusive);
            }
            store_striped::<T, V, VECS>(out.wrapping_add(first as usize), valid, vals, aligned);
            parity ^= 1;
            start += tile_elems;
        }
        row += grid_dim() as u64;
    }
}

/// The scan along every row of `inp` into `out` for rows of `cols` elements, `rows_per_tile` whole
/// rows per tile (at most `TH * V * VECS` elements): block `b` takes tiles `b, b + grid, …`, and
/// each tile is a segmented scan with a head every `cols` elements and nothing carried in.
#[inline(always)]
pub unsafe fn scan_short_rows<T: Copy, O: ScanOp<T>, const TH: u32, const V: usize, const VECS: usize>(
    inp: *const T,
    out: *mut T,
    rows: u64,
    cols: u64,
    rows_per_tile: u64,
    flags: u32,
) where
    SegOp<O>: ScanOp<Seg<T>>,
{
    let mode = Mode::from_flags(flags);
    let (w, l) = (warp_idx(), lane());
    let warps = TH / WARP;
    let part = (WARP as usize * V * VECS) as u64;
    let tile_elems = rows_per_tile * cols;
    let n = rows * cols;

    let mut smem = Carver::new();
    // Two sets of warp totals for alternate tiles, as in `scan_rows`.
    let warp_totals = smem.take::<Seg<T>>(2 * warps);
    smem.check();

    let size = core::mem::size_of::<T>() as u64;
    let aligned =
        (inp as usize | out as usize) % VECTOR_BYTES == 0 && (tile_elems * size).is_multiple_of(VECTOR_BYTES as u64);
    let mut parity = 0;
    let mut tile = block_idx() as u64;
    while tile * tile_elems < n {
        let first = tile * tile_elems + w as u64 * part;
        let valid = ((n - tile * tile_elems).min(tile_elems) as u32).saturating_sub(w * part as u32);
        let mut vals = load_striped::<T, V, VECS>(inp.wrapping_add(first as usize), valid, O::identity(), aligned);
        let head = fixed_heads::<V, VECS>(w as u64 * part, cols, valid);
        let (lane_in, warp_total) = scan_part::<T, O, V, VECS>(&mut vals, head);
        let set = warp_totals.offset(parity * warps);
        if l == 0 {
            set.set(w, warp_total);
        }
        sync_threads();

        let mut warp_in: Option<Seg<T>> = None;
        for v in 0..w {
            warp_in = Some(combine_after::<Seg<T>, SegOp<O>>(warp_in, set.get(v)));
        }
        let incoming = lane_in.map(|x| combine_opt::<Seg<T>, SegOp<O>>(warp_in, x).map(|s| s.v));
        finish_part::<T, O, V, VECS>(&mut vals, head, incoming, mode.exclusive);
        store_striped::<T, V, VECS>(out.wrapping_add(first as usize), valid, vals, aligned);
        parity ^= 1;
        tile += grid_dim() as u64;
    }
}

/// Every batched kernel of each type and operator; the vector column tiles for the types after
/// `vectors:`.
macro_rules! batched_kernels {
    ($($t:ident),* ; vectors: $($v:ident),*) => {
        $( batched_kernels!(@ops one $t); )*
        $( batched_kernels!(@ops vec $v); )*
    };
    (@ops $arm:ident $t:ident) => {
        batched_kernels!(@$arm $t, Add);
        batched_kernels!(@$arm $t, Mul);
        batched_kernels!(@$arm $t, Min);
        batched_kernels!(@$arm $t, Max);
    };
    (@one $t:ident, $op:ident) => { paste::paste! {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<batched_columns_ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, rows: u64, cols: u64, strip: u32, flags: u32,
            temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SHAPE: Tile = SHAPES.columns.at(core::mem::size_of::<$t>());
            scan_columns::<$t, $op, { SHAPE.threads }, { SHAPE.items as usize }>(
                inp, out, rows, cols, strip, flags, temp, counter_base, epoch,
            )
        }

        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<batched_column_vectors_ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, rows: u64, cols: u64, flags: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const V: usize = SHAPES.column_vector_bytes.at(SIZE) / SIZE;
            const B: usize = SHAPES.column_vectors.items as usize;
            scan_column_vectors::<$t, $op, V, B>(inp, out, rows, cols, flags)
        }

        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<batched_rows_ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, rows: u64, cols: u64, flags: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: Tile = SHAPES.rows.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            scan_rows::<$t, $op, { SHAPE.threads }, V, { SHAPE.items as usize / V }>(inp, out, rows, cols, flags)
        }

        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<batched_long_rows_ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, cols: u64, tiles_per_row: u32, flags: u32,
            temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: Tile = SHAPES.single_pass.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            const K: usize = SHAPES.lookback_windows;
            let tile_elems = SHAPE.tile() as u64;
            let place = |tile: u32| {
                let (row, k) = (tile / tiles_per_row, tile % tiles_per_row);
                let start = k as u64 * tile_elems;
                Place { base: row as u64 * cols + start, len: (cols - start).min(tile_elems) as u32, first: k == 0 }
            };
            let aligned = (cols * SIZE as u64).is_multiple_of(VECTOR_BYTES as u64);
            let init = <$op as ScanOp<$t>>::identity();
            let launch = TileLaunch { flags, temp, counter_base, epoch, backoff_ns: 0 };
            single_pass_placed::<$t, $op, { SHAPE.threads }, V, { SHAPE.items as usize / V }, D, K, false>(
                inp, out, place, aligned, init, launch, crate::probe::NoProbe,
            )
        }

        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<batched_short_rows_ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, rows: u64, cols: u64, rows_per_tile: u64, flags: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: Tile = SHAPES.rows.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            scan_short_rows::<$t, $op, { SHAPE.threads }, V, { SHAPE.items as usize / V }>(
                inp, out, rows, cols, rows_per_tile, flags,
            )
        }
    } };
    (@vec $t:ident, $op:ident) => {
        batched_kernels!(@vector_tiles $t, $op, batched_columns_vec_, 1);
        batched_kernels!(@vector_tiles $t, $op, batched_columns_vecw4_, 4);
        batched_kernels!(@bulk_tiles $t, $op, batched_columns_bulk_);
    };
    // The column tiles of 16-byte vectors in registers, looking back `$window` tiles a round.
    (@vector_tiles $t:ident, $op:ident, $prefix:ident, $window:literal) => { paste::paste! {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<$prefix $t _ $op:lower>](
            inp: *const $t, out: *mut $t, rows: u64, cols: u64, tpr: u32, flags: u32,
            temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: Tile = SHAPES.columns_vec;
            const V: usize = VECTOR_BYTES / SIZE;
            scan_columns_vec::<$t, $op, { SHAPE.threads }, { SHAPE.items as usize }, V, $window>(
                inp, out, rows, cols, tpr, flags, temp, counter_base, epoch,
            )
        }
    } };
    // The column tiles in shared memory, `items` rows a thread group, looking back 4 tiles a round,
    // bringing the tile `ahead` after their own into L2.
    (@bulk_tiles $t:ident, $op:ident, $prefix:ident) => { paste::paste! {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<$prefix $t _ $op:lower>](
            inp: *const $t, out: *mut $t, rows: u64, cols: u64, tpr: u32, items: u32, ahead: u32,
            flags: u32, temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const TH: u32 = SHAPES.columns_bulk_threads;
            const V: usize = VECTOR_BYTES / SIZE;
            scan_columns_bulk::<$t, $op, TH, V, 4>(
                inp, out, rows, cols, tpr, items, ahead, flags, temp, counter_base, epoch,
            )
        }
    } };
}
batched_kernels!(u32, i32, u64, i64, f32, f64; vectors: u32, i32, f32, u64, i64, f64);
