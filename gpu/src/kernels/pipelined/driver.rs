//! The ring of stages, and the warp roles around a [`TileWork`].

use crate::arch::{
    atomic_add_u32, bulk_copy_to_shared, bulk_wait_all, bulk_wait_read_all,
    fence_proxy_async_shared, lane, mbar_arrive, mbar_arrive_expect_bytes, mbar_init, mbar_init_fence,
    mbar_wait, shfl_idx, sync_group, sync_threads, sync_warp, thread_idx, warp_idx,
    WARP,
};
use crate::lookback::TileStatus;
use crate::op::{combine_after, ScanOp};
use crate::smem::Carver;
use core::mem::size_of;
use scan_abi::args::Pipe;
use scan_abi::shape::VECTOR_BYTES;
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};
use super::TileWork;

/// Where a role is in the ring of stages: the stage its next tile uses, and the parity of that
/// use's barrier phase (it flips each time round the ring).
#[derive(Clone, Copy)]
struct Ring {
    stage: u32,
    phase: u32,
}

impl Ring {
    const START: Ring = Ring { stage: 0, phase: 0 };

    #[inline(always)]
    fn next(self, stages: u32) -> Ring {
        if self.stage + 1 == stages {
            Ring { stage: 0, phase: self.phase ^ 1 }
        } else {
            Ring { stage: self.stage + 1, phase: self.phase }
        }
    }
}

/// Elements of a pipeline's second input staged ahead of each tile: one 16-byte vector, so the
/// tile itself stays on a 16-byte boundary for its bulk copy (1 where there is no second input,
/// which takes no bytes).
#[inline(always)]
const fn side_lead<K>() -> u32 {
    if size_of::<K>() == 0 {
        1
    } else {
        (VECTOR_BYTES / size_of::<K>()) as u32
    }
}

/// Tile index of a stage whose claim found no tile left: every role stops there.
const NO_TILE: u32 = u32::MAX;
/// The roles of a pipelined kernel over the `n` elements at `inp`, doing `work` on each tile
/// (full tiles come in by bulk copies where `aligned`, `inp` 16-byte aligned, says so), where
/// `ROWS` as rows of `cols` elements each scanned on its own: tiles never cross a row, and a
/// row's first tile starts from `work.start()` and publishes its inclusive prefix at once, like
/// tile 0, so look-backs stop there (a const parameter: the division that places a tile in its
/// row, done by every role, cost the kernels with two scanning warps per reducing warp 10-14%
/// when it ran for one-row scans too);
/// `R` reducing warps, `R * S` scanning warps (each reducing warp's `VECS` vectors per thread
/// split among `S` of them), `pipe.stages` tiles in flight. `temp` holds the tile counter (its
/// value before this launch `pipe.counter_base`) and the tile status of `pipe.epoch`. The grid is
/// persistent: each block takes tiles until the counter passes the last, so the counter advances
/// by tiles + blocks. `FIXED` makes the look-back fold the aggregates in tile order
/// ([`TileStatus::look_back`]'s fixed order, holding `K` windows), so that a float scan's result is
/// a fixed function of its input; `K` is unused otherwise.
#[inline(always)]
pub unsafe fn pipeline<
    W: TileWork,
    const R: u32,
    const S: u32,
    const VECS: usize,
    const D: usize,
    const ROWS: bool,
    const FIXED: bool,
    const K: usize,
>(
    work: W,
    inp: *const W::T,
    n: u64,
    cols: u64,
    aligned: bool,
    temp: *mut u8,
    pipe: Pipe,
) {
    let Pipe { counter_base, epoch, backoff_ns, stages } = pipe;
    let (w, l) = (warp_idx(), lane());
    let segment = WARP * (W::V * VECS) as u32;
    // A scanning warp's part: `rows` of a reducing warp's vectors.
    let (rows, sub) = (VECS / S as usize, segment / S);
    let tile_elems = R * segment;
    // Where tile `t` lies: its first element, its length, whether it starts a row.
    let row_tiles = if ROWS { cols.div_ceil(tile_elems as u64).max(1) } else { 0 };
    let tiles =
        if ROWS { n.checked_div(cols).map_or(0, |rows| rows * row_tiles) } else { n.div_ceil(tile_elems as u64) };
    // Each role's `if ROWS` keeps the one-row kernels' code as it was (PTX unchanged).
    let place = |t: u32| {
        let (row, k) = (t / row_tiles as u32, t % row_tiles as u32);
        let start = k as u64 * tile_elems as u64;
        (row as u64 * cols + start, (cols - start).min(tile_elems as u64) as u32, k == 0)
    };
    let (load_warp, look_warp) = (R * (1 + S), R * (1 + S) + 1);

    let mut smem = Carver::new();
    let bars = smem.take::<u64>(4 * stages);
    let tile_of = smem.take::<u32>(stages);
    let part_totals = smem.take::<W::A>(stages * R * S);
    let aggregates = smem.take::<W::A>(stages);
    let prefixes = smem.take::<W::A>(stages);
    let bufs = smem.take::<W::T>(stages * tile_elems);
    // The second input's stages (none where `K` is `()`): each its tile after a 16-byte lead whose
    // last element is the one before the tile.
    let side_elems = tile_elems + side_lead::<W::K>();
    let sides = smem.take::<W::K>(stages * side_elems);
    // What each reducing lane leaves its scanning lane, share by share (nothing where `L` is
    // `()`).
    let lefts = smem.take::<W::L>(stages * R * S * WARP);
    // The windows the fixed-order look-back has passed and the one it is in; the free order
    // holds nothing.
    let held = smem.take::<W::A>(if FIXED { ((K + 1) * WARP as usize * D) as u32 } else { 0 });
    smem.check();
    let full = |s: u32| bars.at(s);
    let reduced = |s: u32| bars.at(stages + s);
    let ready = |s: u32| bars.at(2 * stages + s);
    let empty = |s: u32| bars.at(3 * stages + s);
    let buf = |s: u32| bufs.offset(s * tile_elems);
    let side_buf = |s: u32| sides.offset(s * side_elems);
    // The second input of the part or share `at` elements into stage `s`'s tile, from the element
    // before it on.
    let side_at = |s: u32, at: u32| side_buf(s).offset(side_lead::<W::K>() + at - 1);
    // What the lanes of stage `s`'s share `share` (in tile order) left.
    let left_at = |s: u32, share: u32| lefts.offset((s * R * S + share) * WARP);
    let has_side = size_of::<W::K>() != 0;
    let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };

    if thread_idx() == 0 {
        for s in 0..stages {
            mbar_init(full(s), 1);
            mbar_init(reduced(s), 1);
            mbar_init(ready(s), 1);
            mbar_init(empty(s), R * S);
        }
        mbar_init_fence();
    }
    sync_threads();

    if w == load_warp {
        // Load: claim, then copy in (bulk for a full aligned tile; the last, partial one element
        // by element, filled past the end).
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(empty(s), phase ^ 1);
            let mut tile = 0;
            if l == 0 {
                tile = atomic_add_u32(temp as *mut u32, 1).wrapping_sub(counter_base);
            }
            tile = shfl_idx(tile, 0);
            if tile as u64 >= tiles {
                if l == 0 {
                    tile_of.set(s, NO_TILE);
                    mbar_arrive(full(s));
                }
                return;
            }
            let (base, len) = if ROWS {
                let (base, len, _) = place(tile);
                (base, len)
            } else {
                let base = tile as u64 * tile_elems as u64;
                (base, (n - base).min(tile_elems as u64) as u32)
            };
            if l == 0 {
                tile_of.set(s, tile);
            }
            if aligned && len == tile_elems {
                if l == 0 {
                    fence_proxy_async_shared();
                    let bytes = tile_elems * size_of::<W::T>() as u32;
                    // The second input from the lead on, or for the first tile from its start.
                    let lead = if base > 0 { side_lead::<W::K>() } else { 0 };
                    let side_bytes = if has_side { (tile_elems + lead) * size_of::<W::K>() as u32 } else { 0 };
                    mbar_arrive_expect_bytes(full(s), bytes + side_bytes);
                    bulk_copy_to_shared(buf(s).at(0) as *mut u8, inp.add(base as usize) as *const u8, bytes, full(s));
                    if has_side {
                        let to = side_buf(s).at(side_lead::<W::K>() - lead) as *mut u8;
                        let from = work.side().add(base as usize - lead as usize) as *const u8;
                        bulk_copy_to_shared(to, from, side_bytes, full(s));
                    }
                }
            } else {
                let mut i = l;
                while i < tile_elems {
                    buf(s).set(i, if i < len { *inp.add((base + i as u64) as usize) } else { work.fill() });
                    if has_side {
                        // Past the end the last element's, repeated: nothing there starts a segment.
                        let from = work.side().add((base + i.min(len - 1) as u64) as usize);
                        side_buf(s).set(side_lead::<W::K>() + i, *from);
                    }
                    i += WARP;
                }
                if has_side && l == 0 && base > 0 {
                    side_buf(s).set(side_lead::<W::K>() - 1, *work.side().add(base as usize - 1));
                }
                sync_warp();
                if l == 0 {
                    mbar_arrive(full(s));
                }
            }
            ring = ring.next(stages);
        }
    } else if w < R {
        // Reduce: the warp's part of each tile as soon as it has landed, one total per scanning
        // warp's share; the first warp adds them up in order and publishes (tile 0 its inclusive
        // prefix at once).
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(full(s), phase);
            let tile = tile_of.get(s);
            if tile == NO_TILE {
                if w == 0 && l == 0 {
                    mbar_arrive(reduced(s));
                }
                return;
            }
            // Dead (constant) in one-row kernels.
            let placed = if ROWS { place(tile) } else { (0, 0, false) };
            let part = buf(s).offset(w * segment);
            let first = if ROWS { placed.0 } else { tile as u64 * tile_elems as u64 } + (w * segment) as u64;
            for h in 0..S as usize {
                let left = left_at(s, w * S + h as u32);
                let total = work.reduce(part, side_at(s, w * segment), left, h * rows..(h + 1) * rows, first);
                if l == 0 {
                    part_totals.set((s * R + w) * S + h as u32, total);
                }
            }
            sync_group(1, R * WARP);
            if w == 0 && l == 0 {
                let mut tile_total = part_totals.get(s * R * S);
                for v in 1..R * S {
                    tile_total = W::O::combine(tile_total, part_totals.get(s * R * S + v));
                }
                if if ROWS { placed.2 } else { tile == 0 } {
                    let head = if ROWS { tile } else { 0 };
                    let inclusive = combine_after::<W::A, W::O>(work.start(), tile_total);
                    status.publish(head, FLAG_PREFIX, inclusive);
                    work.prefix_known(head, tiles, inclusive);
                } else {
                    let closed = work.closes(tile_total);
                    status.publish(tile, if closed { FLAG_PREFIX } else { FLAG_AGGREGATE }, tile_total);
                    if closed {
                        work.prefix_known(tile, tiles, tile_total);
                    }
                }
                aggregates.set(s, tile_total);
                mbar_arrive(reduced(s));
            }
            ring = ring.next(stages);
        }
    } else if w == look_warp {
        // Look back, tile after tile.
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(reduced(s), phase);
            let tile = tile_of.get(s);
            if if ROWS { tile != NO_TILE && !place(tile).2 } else { tile != 0 && tile != NO_TILE } {
                let prefix = status.look_back::<W::A, W::O, D, K>(tile, backoff_ns, FIXED, held);
                if l == 0 {
                    let inclusive = W::O::combine(prefix, aggregates.get(s));
                    status.publish(tile, FLAG_PREFIX, inclusive);
                    prefixes.set(s, prefix);
                    work.prefix_known(tile, tiles, inclusive);
                }
            }
            sync_warp();
            if l == 0 {
                mbar_arrive(ready(s));
            }
            if tile == NO_TILE {
                return;
            }
            ring = ring.next(stages);
        }
    } else {
        // Finish the warp's share of each tile from the tile's prefix, then free the stage; a
        // stage whose share left by a bulk copy is freed once the copy has read it (the warp waits
        // for that read: freeing it only after the warp's next share kept one stage of five out of
        // use).
        let sw = w - R;
        let mut ring = Ring::START;
        loop {
            let Ring { stage: s, phase } = ring;
            mbar_wait(ready(s), phase);
            mbar_wait(full(s), phase);
            let tile = tile_of.get(s);
            if tile == NO_TILE {
                if l == 0 {
                    bulk_wait_all();
                }
                return;
            }
            let placed = if ROWS { place(tile) } else { (0, 0, false) };
            let head = if ROWS { placed.2 } else { tile == 0 };
            let mut running = if head { work.start() } else { Some(prefixes.get(s)) };
            for v in 0..sw {
                running = Some(combine_after::<W::A, W::O>(running, part_totals.get(s * R * S + v)));
            }
            let (first, valid) = if ROWS {
                let (base, len, _) = placed;
                (base + (sw * sub) as u64, len.saturating_sub(sw * sub).min(sub))
            } else {
                let first = tile as u64 * tile_elems as u64 + (sw * sub) as u64;
                (first, ((n - first.min(n)).min(sub as u64)) as u32)
            };
            let (at, left) = (sw * sub, left_at(s, sw));
            let bulk = work.finish(buf(s).offset(at), side_at(s, at), left, rows, running, first, valid);
            sync_warp();
            if l == 0 {
                if bulk {
                    bulk_wait_read_all();
                }
                mbar_arrive(empty(s));
            }
            ring = ring.next(stages);
        }
    }
}
