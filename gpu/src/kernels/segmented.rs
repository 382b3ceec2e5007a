//! Segmented scan in one pass: every segment (started by a head flag, or every `seg_len`
//! elements, which makes it the row-wise batched scan of a row-major matrix) is scanned on its
//! own, with any operator.
//!
//! It is the single-pass scan over (head, value) pairs with the segmented operator
//! `(fa, a) ⊕ (fb, b) = (fa | fb, fb ? b : a ⊕ b)`, with one change to the look-back: a tile that
//! contains a head already knows what it passes on (the value since its last head), so it
//! publishes that as its inclusive prefix at once, and look-backs stop there. The look-back
//! itself stays the plain one over values.

use crate::arch::{lane, prefetch_l2, sync_threads, warp_idx, WARP};
use crate::kernels::{claim_placed, Mode, Place, SHAPES};
use crate::lookback::{StatusValue, TileStatus};
use crate::op::{combine_after, combine_opt, Add, And, Element, Max, Min, Mul, Or, ScanOp, Seg, SegOp, Xor};
use crate::smem::Carver;
use crate::tile::store_striped;
use crate::warp;
use scan_abi::shape::{vector_elems, Tile, VECTOR_BYTES};
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};

/// Which of a lane's `VECS` vectors of `V` elements start a segment: bit `j * V + k` for element
/// `k` of vector `j`. One register instead of one per element keeps the segmented tiles at the
/// single-pass scan's size without costing them a block per SM.
#[derive(Clone, Copy, Default)]
pub struct Heads(u32);

impl Heads {
    #[inline(always)]
    pub fn at<const V: usize>(self, j: usize, k: usize) -> bool {
        (self.0 >> (j * V + k)) & 1 != 0
    }

    /// Whether vector `j` holds a head.
    #[inline(always)]
    pub fn any<const V: usize>(self, j: usize) -> bool {
        (self.0 >> (j * V)) & ((1 << V) - 1) != 0
    }

    #[inline(always)]
    fn set<const V: usize>(&mut self, j: usize, k: usize, head: bool) {
        self.0 |= (head as u32) << (j * V + k);
    }
}

/// Which of this lane's warp-striped elements start a segment of `seg_len` (`seg_len > 0`), for a
/// warp's part that starts `start` elements into the array and holds `valid` elements.
#[inline(always)]
pub fn fixed_heads<const V: usize, const VECS: usize>(start: u64, seg_len: u64, valid: u32) -> Heads {
    let l = lane();
    let part = WARP * (V * VECS) as u32;
    // One 64-bit division per thread; each vector then needs a 32-bit remainder (short
    // segments) or at most one subtraction (segments longer than the warp's part).
    let base = if (start | seg_len) >> 32 == 0 { (start as u32 % seg_len as u32) as u64 } else { start % seg_len };
    const { assert!(V * VECS <= 32) };
    let mut head = Heads::default();
    for j in 0..VECS {
        let first = (j as u32 * WARP + l) * V as u32;
        let mut into = if seg_len <= part as u64 {
            ((base as u32 + first) % seg_len as u32) as u64
        } else {
            let r = base + first as u64;
            if r >= seg_len {
                r - seg_len
            } else {
                r
            }
        };
        for k in 0..V {
            head.set::<V>(j, k, first + (k as u32) < valid && into == 0);
            into += 1;
            if into == seg_len {
                into = 0;
            }
        }
    }
    head
}

/// Which of this lane's warp-striped elements have a nonzero flag in `flags` (the warp's part,
/// `valid` elements). A vector's flags are one 4- or 2-byte load where they are aligned.
#[inline(always)]
pub unsafe fn flagged_heads<const V: usize, const VECS: usize>(flags: *const u8, valid: u32) -> Heads {
    const { assert!(V * VECS <= 32 && V <= 4) };
    let l = lane();
    let mut head = Heads::default();
    for j in 0..VECS {
        let first = (j as u32 * WARP + l) * V as u32;
        let p = flags.add(first as usize);
        let whole = first + V as u32 <= valid && (p as usize).is_multiple_of(V);
        let bytes = if whole && V == 4 {
            *(p as *const u32)
        } else if whole && V == 2 {
            *(p as *const u16) as u32
        } else {
            let mut b = 0u32;
            for k in 0..V {
                if first + (k as u32) < valid {
                    b |= (*p.add(k) as u32) << (8 * k);
                }
            }
            b
        };
        for k in 0..V {
            head.set::<V>(j, k, (bytes >> (8 * k)) & 0xff != 0);
        }
    }
    head
}

/// Segmented scan of this lane's vectors in place (each vector on its own), then across the
/// warp: (what reaches each vector from the lanes and vectors before it in the warp's part, the
/// whole part).
#[inline(always)]
pub fn scan_part<T: Copy, O: ScanOp<T>, const V: usize, const VECS: usize>(
    vals: &mut [[T; V]; VECS],
    head: Heads,
) -> ([Option<Seg<T>>; VECS], Seg<T>)
where
    SegOp<O>: ScanOp<Seg<T>>,
{
    let mut lane_in = [None; VECS];
    let mut running: Option<Seg<T>> = None;
    for j in 0..VECS {
        let v = &mut vals[j];
        for k in 1..V {
            if !head.at::<V>(j, k) {
                v[k] = O::combine(v[k - 1], v[k]);
            }
        }
        let (before, total) = warp::segmented_scan::<T, O>(v[V - 1], head.any::<V>(j));
        lane_in[j] = combine_opt::<Seg<T>, SegOp<O>>(running, before);
        running = Some(combine_after::<Seg<T>, SegOp<O>>(running, total));
    }
    (lane_in, running.unwrap_or(SegOp::<O>::identity()))
}

/// Finishes [`scan_part`]'s vectors once `incoming[j]` (what precedes vector `j` in the array) is
/// known: it reaches a vector's elements up to its first head; exclusive scans shift by one
/// within each segment, and a segment's first element gets the identity.
#[inline(always)]
pub fn finish_part<T: Copy, O: ScanOp<T>, const V: usize, const VECS: usize>(
    vals: &mut [[T; V]; VECS],
    head: Heads,
    incoming: [Option<T>; VECS],
    exclusive: bool,
) {
    for j in 0..VECS {
        let v = &mut vals[j];
        let mut seen = false;
        let mut prev = incoming[j];
        for k in 0..V {
            seen |= head.at::<V>(j, k);
            let inclusive = if seen { v[k] } else { combine_after::<T, O>(incoming[j], v[k]) };
            v[k] = if !exclusive {
                inclusive
            } else if head.at::<V>(j, k) {
                O::identity()
            } else {
                prev.unwrap_or(O::identity())
            };
            prev = Some(inclusive);
        }
    }
}

/// Scans `inp[..n]` segment by segment into `out`. Segments start where `heads[i] != 0`, or,
/// when `heads` is null, at every multiple of `seg_len`. `flags`: `scan_abi::kernel::flags::EXCLUSIVE`
/// (a segment's first element then gets the identity). The tile state is the single-pass scan's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn segmented<T: Element + StatusValue, O: ScanOp<T>, const TH: u32, const V: usize, const VECS: usize>(
    inp: *const T,
    heads: *const u8,
    seg_len: u64,
    out: *mut T,
    n: u64,
    flags: u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
) {
    let mode = Mode::from_flags(flags);
    let (w, l) = (warp_idx(), lane());
    let warps = TH / WARP;
    let none = SegOp::<O>::identity();

    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    let warp_totals = smem.take::<Seg<T>>(warps);
    let warp_prefixes = smem.take::<Seg<T>>(warps);
    let no_windows = smem.take::<T>(0);
    smem.check();

    let vectors = (inp as usize | out as usize) % VECTOR_BYTES == 0;
    let tile_elems = TH as u64 * (V * VECS) as u64;
    let place = |tile| Place::flat(tile, n, tile_elems);
    // The head flags are asked into L2 with the data loads, while the tile counter answers: read
    // only after it, from memory, they would add a memory round trip to every tile's way to its
    // aggregate. (Loaded there, they would stay live across the barrier and spill.)
    let prefetch_heads = |offset: usize, valid: u32| {
        const LINE: u32 = 128;
        if !heads.is_null() && l * LINE < valid {
            prefetch_l2(heads.wrapping_add(offset + (l * LINE) as usize));
        }
    };
    let (tile, _, offset, valid, mut vals, ()) = claim_placed::<T, TH, V, VECS, ()>(
        inp,
        place,
        O::identity(),
        vectors,
        temp,
        counter_base,
        tile_slot,
        prefetch_heads,
    );
    let head = if heads.is_null() {
        fixed_heads::<V, VECS>(offset as u64, seg_len, valid)
    } else {
        flagged_heads::<V, VECS>(heads.add(offset), valid)
    };

    let (lane_in, running) = scan_part::<T, O, V, VECS>(&mut vals, head);
    if l == 0 {
        warp_totals.set(w, running);
    }
    sync_threads();

    if w == 0 {
        let total = if l < warps { warp_totals.get(l) } else { none };
        let (warp_before, through) = warp::scan::<Seg<T>, SegOp<O>>(total);
        let tile_total = warp::broadcast(through, warps - 1);
        let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: false };
        let carry = if tile == 0 {
            if l == 0 {
                status.publish(0, FLAG_PREFIX, tile_total.v);
            }
            O::identity()
        } else {
            let headed = tile_total.head != 0;
            if l == 0 {
                status.publish(tile, if headed { FLAG_PREFIX } else { FLAG_AGGREGATE }, tile_total.v);
            }
            let p = status.look_back::<T, O, 1, 0>(tile, 0, false, no_windows);
            if l == 0 && !headed {
                status.publish(tile, FLAG_PREFIX, O::combine(p, tile_total.v));
            }
            p
        };
        if l < warps {
            let tile_in = Seg { head: 0, v: carry };
            warp_prefixes.set(l, SegOp::<O>::combine(tile_in, warp_before.unwrap_or(none)));
        }
    }
    sync_threads();

    let warp_in = warp_prefixes.get(w);
    let incoming = lane_in.map(|x| Some(combine_after::<Seg<T>, SegOp<O>>(Some(warp_in), x.unwrap_or(none)).v));
    finish_part::<T, O, V, VECS>(&mut vals, head, incoming, mode.exclusive);
    store_striped::<T, V, VECS>(out.wrapping_add(offset), valid, vals, vectors);
}

/// `segmented_<t>_<op>` for every operator of each type but the affine maps.
macro_rules! segmented_kernels {
    ($($t:ident),*) => { $( segmented_kernels!(@type $t); )* };
    (@type f32) => { segmented_kernels!(@ops f32, [Add, Mul, Min, Max]); };
    (@type f64) => { segmented_kernels!(@ops f64, [Add, Mul, Min, Max]); };
    (@type $t:ident) => { segmented_kernels!(@ops $t, [Add, Mul, Min, Max, And, Or, Xor]); };
    (@ops $t:ident, [$($op:ident),*]) => { $( segmented_kernels!(@one $t, $op); )* };
    (@one $t:ident, $op:ident) => { paste::paste! {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn [<segmented_ $t _ $op:lower>](
            inp: *const $t, heads: *const u8, seg_len: u64, out: *mut $t, n: u64, flags: u32,
            temp: *mut u8, counter_base: u32, epoch: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: Tile = SHAPES.single_pass.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            segmented::<$t, $op, { SHAPE.threads }, V, { SHAPE.items as usize / V }>(
                inp, heads, seg_len, out, n, flags, temp, counter_base, epoch,
            )
        }
    } };
}
segmented_kernels!(u32, i32, u64, i64, f32, f64);

/// `heads[offsets[s]] = 1` for each segment start `offsets[s] < n` (`heads` zeroed first).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segmented_heads_u64(offsets: *const u64, count: u64, n: u64, heads: *mut u8) {
    let s = crate::arch::block_idx() as u64 * crate::arch::block_dim() as u64 + crate::arch::thread_idx() as u64;
    if s < count {
        let at = *offsets.add(s as usize);
        if at < n {
            *heads.add(at as usize) = 1;
        }
    }
}

/// `heads[i] = 1` where key `i` differs from key `i - 1` (and at 0), else 0: the segments of a
/// scan by key.
macro_rules! key_heads_kernels {
    ($($t:ident),*) => {$(
        paste::paste! {
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn [<segmented_key_heads_ $t>](keys: *const $t, n: u64, heads: *mut u8) {
                let i = crate::arch::block_idx() as u64 * crate::arch::block_dim() as u64 + crate::arch::thread_idx() as u64;
                if i < n {
                    let head = i == 0 || *keys.add(i as usize) != *keys.add(i as usize - 1);
                    *heads.add(i as usize) = head as u8;
                }
            }
        }
    )*};
}
key_heads_kernels!(u8, u16, u32, i32, u64, i64);
