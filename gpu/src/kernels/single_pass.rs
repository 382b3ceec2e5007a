//! Single-pass scan with decoupled look-back (Merrill & Garland, 2016): one launch, every element
//! read once and written once.
//!
//! Each block takes the next tile index from an atomic counter, loads its tile with 16-byte
//! vectors, scans it in registers (thread, then warp shuffles, then the warp totals), publishes
//! the tile aggregate, looks back for its exclusive prefix (see [`crate::lookback`]), publishes
//! its inclusive prefix, and stores the finished tile.
//!
//! Tiles are claimed with [`claim_striped`], which overlaps the counter's round trip with the
//! loads. (A persistent grid that asks for its next tile early was measured slower: successors
//! then wait on tiles that are claimed but not yet loaded.)

use crate::arch::{lane, sync_threads, warp_idx, WARP};
use crate::kernels::{claim_striped, for_each_type, Mode, ARCH};
use crate::lookback::{StatusValue, TileStatus};
use crate::op::{combine_after, combine_opt, ScanOp};
use crate::smem::Carver;
use crate::tile::store_striped;
use crate::warp;
use scan_abi::status::{COUNTER_BYTES, FLAG_AGGREGATE, FLAG_PREFIX};
use scan_abi::tuning;

/// Scans one tile of `TH` threads × `VECS` vectors of `V` elements.
///
/// `temp` holds the tile counter (first [`COUNTER_BYTES`]) and then one status word per tile;
/// the host passes the counter's value before this launch (`counter_base`) and a fresh `epoch`,
/// so neither needs clearing between calls. `backoff_ns` paces the look-back's polling.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn single_pass<
    T: StatusValue,
    O: ScanOp<T>,
    const TH: u32,
    const V: usize,
    const VECS: usize,
    const D: usize,
    const K: usize,
    const FIXED: bool,
>(
    inp: *const T,
    out: *mut T,
    n: u64,
    init: T,
    flags: u32,
    temp: *mut u8,
    counter_base: u32,
    epoch: u32,
    backoff_ns: u32,
) {
    let mode = Mode::from_flags(flags);
    let (w, l) = (warp_idx(), lane());
    let warps = TH / WARP;

    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    let warp_totals = smem.take::<T>(warps);
    let warp_prefixes = smem.take::<T>(warps);
    let held = smem.take::<T>(((K + 1) * D) as u32 * WARP);
    smem.check();

    let vectors = (inp as usize | out as usize) % tuning::VECTOR_BYTES == 0;
    let (tile, offset, valid, mut vals) =
        claim_striped::<T, TH, V, VECS>(inp, n, O::identity(), vectors, temp, counter_base, tile_slot);

    // Each vector: inclusive scan in the thread, then across the warp's 32 vectors.
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
    if l == 0 {
        warp_totals.set(w, warp_running.unwrap_or(O::identity()));
    }
    sync_threads();

    if w == 0 {
        let total = if l < warps { warp_totals.get(l) } else { O::identity() };
        let (warp_before, through) = warp::scan::<T, O>(total);
        let tile_total = warp::broadcast(through, warps - 1);
        let status = TileStatus { words: temp.add(COUNTER_BYTES), epoch, acq_rel: mode.acq_rel_status };
        let tile_prefix = if tile == 0 {
            let prefix = if mode.has_init { Some(init) } else { None };
            if l == 0 {
                status.publish(0, FLAG_PREFIX, combine_after::<T, O>(prefix, tile_total));
            }
            prefix
        } else {
            if l == 0 {
                status.publish(tile, FLAG_AGGREGATE, tile_total);
            }
            let prefix = status.look_back::<T, O, D, K>(tile, backoff_ns, FIXED, held);
            if l == 0 {
                status.publish(tile, FLAG_PREFIX, O::combine(prefix, tile_total));
            }
            Some(prefix)
        };
        if l < warps {
            let p = combine_opt::<T, O>(tile_prefix, warp_before);
            warp_prefixes.set(l, p.unwrap_or(O::identity()));
        }
    }
    sync_threads();

    // Only the first warp of the first tile, without an initial value, has nothing before it.
    let warp_prefix = if tile > 0 || mode.has_init || w > 0 { Some(warp_prefixes.get(w)) } else { None };
    for (j, v) in vals.iter_mut().enumerate() {
        let prefix = combine_opt::<T, O>(warp_prefix, lane_prefix[j]);
        if mode.exclusive {
            for k in (1..V).rev() {
                v[k] = combine_after::<T, O>(prefix, v[k - 1]);
            }
            v[0] = prefix.unwrap_or(O::identity());
        } else {
            for x in v.iter_mut() {
                *x = combine_after::<T, O>(prefix, *x);
            }
        }
    }
    store_striped::<T, V, VECS>(out.wrapping_add(offset), valid, vals, vectors);
}

/// One kernel per (type, operator): `single_pass_<t>_<op>`, and `single_pass_det_<t>_<op>` with
/// the fixed-order look-back where the order matters (float add and mul). Separate kernels keep
/// the free-order kernel's registers, and so its occupancy, as they are.
macro_rules! single_pass_kernel {
    ($name:ident, $t:ty, $op:ident, $fixed:expr) => {
        #[no_mangle]
        // A `[f64; 2]` initial value is a 16-byte, 8-aligned PTX parameter, as the host passes it.
        #[allow(clippy::too_many_arguments, improper_ctypes_definitions)]
        pub unsafe extern "ptx-kernel" fn $name(
            inp: *const $t,
            out: *mut $t,
            n: u64,
            init: $t,
            flags: u32,
            temp: *mut u8,
            counter_base: u32,
            epoch: u32,
            backoff_ns: u32,
        ) {
            const SIZE: usize = core::mem::size_of::<$t>();
            const SHAPE: tuning::TileShape = tuning::single_pass(ARCH, SIZE);
            const V: usize = tuning::vector_elems(SIZE) as usize;
            const D: usize = tuning::lookback_depth(ARCH, SIZE);
            const K: usize = tuning::lookback_fixed_windows(ARCH, SIZE);
            single_pass::<$t, crate::op::$op, { SHAPE.threads }, V, { SHAPE.items as usize / V }, D, K, $fixed>(
                inp,
                out,
                n,
                init,
                flags,
                temp,
                counter_base,
                epoch,
                backoff_ns,
            )
        }
    };
}

macro_rules! single_pass_kernels {
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        single_pass_kernel!([<single_pass_ $t _ $op:lower>], $t, $op, false);
    )* } };
}
for_each_type!(single_pass_kernels);

macro_rules! single_pass_det_kernels {
    ($($t:ident),*) => { paste::paste! { $(
        single_pass_kernel!([<single_pass_det_ $t _add>], $t, Add, true);
        single_pass_kernel!([<single_pass_det_ $t _mul>], $t, Mul, true);
    )* } };
}
single_pass_det_kernels!(f32, f64);

// The linear recurrence x[t] = a[t]*x[t-1] + b[t]: a scan of affine maps, packed f32 pairs in a
// u64, or f64 pairs.
single_pass_kernel!(recurrence_f32, u64, AffineF32, false);
single_pass_kernel!(recurrence_f64, [f64; 2], AffineF64, false);
