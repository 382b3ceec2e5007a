//! The single-pass scan of narrow elements into a wider type: each element is read at its own
//! width, converted in registers, and scanned and stored in the wide type, so sums of bytes
//! never overflow a byte and the read traffic stays the narrow type's.
//!
//! The tile is the wide type's single-pass tile and is scanned in the same order as
//! [`single_pass`](crate::kernels::single_pass::single_pass) scans it: a lane's vector is `V`
//! wide elements, read as one access of `V` narrow ones (a warp reads contiguous bytes), so the
//! deterministic kernels give bit for bit what the wide deterministic scan gives on the widened
//! input.

use crate::arch::{f16_to_f32, lane, load_narrow, warp_idx, WARP};
use crate::kernels::single_pass::{block_prefix, Publish, TileSmem};
use crate::kernels::{claim_tile, prefetch_tile_l2, Mode, Place, SHAPES};
use crate::lookback::StatusValue;
use crate::op::{combine_after, combine_opt, ScanOp};
use crate::smem::Carver;
use crate::tile::store_striped;
use crate::warp;
use core::mem::size_of;
use scan_abi::shape::{vector_elems, Tile, VECTOR_BYTES};

/// A narrow element that converts exactly into `T`.
pub trait Widen<T>: Copy {
    fn widen(self) -> T;
}

macro_rules! widen_as {
    ($($from:ty => [$($to:ty),*]),*) => { $($(
        impl Widen<$to> for $from {
            #[inline(always)]
            fn widen(self) -> $to {
                self as $to
            }
        }
    )*)* };
}
widen_as!(u8 => [u32, u64, i64], i8 => [u32, u64, i64], u16 => [u32, u64, i64], i16 => [u32, u64, i64],
    u32 => [u64, i64], i32 => [u64, i64]);

/// An IEEE binary16 element, by its bits.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct F16(pub u16);

/// A bfloat16 element, by its bits: the upper half of an `f32`.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Widen<f32> for F16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        f16_to_f32(self.0)
    }
}

impl Widen<f32> for Bf16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// Scans `n` elements of `I` at `inp` into `T` at `out`: the arguments of
/// [`single_pass`](crate::kernels::single_pass::single_pass), with the input narrower.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn single_pass_widening<
    I: Widen<T>,
    T: StatusValue,
    O: ScanOp<T>,
    const TH: u32,
    const V: usize,
    const VECS: usize,
    const D: usize,
    const K: usize,
    const FIXED: bool,
>(
    inp: *const I,
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
    let mut smem = Carver::new();
    let tile_slot = smem.take::<u32>(1);
    let sh = TileSmem::<T>::take::<TH, D, K>(&mut smem);
    smem.check();
    let publish = Publish { temp, epoch, backoff_ns };
    let (w, l) = (warp_idx(), lane());
    let reads = inp as usize % (V * size_of::<I>()) == 0;
    let writes = out as usize % VECTOR_BYTES == 0;
    let segment = WARP * (V * VECS) as u32;
    let tile_elems = TH as u64 * (V * VECS) as u64;
    let part = |tile: u32| {
        let base = tile as u64 * tile_elems;
        let valid = ((n - base).min(tile_elems) as u32).saturating_sub(w * segment);
        ((base + (w * segment) as u64) as usize, valid)
    };
    let aligned = inp as usize % VECTOR_BYTES == 0;
    prefetch_tile_l2(inp, |tile| Place::flat(tile, n, tile_elems), SHAPES.prefetch_tiles, aligned);
    // Element `k` of this lane's vector `j` within the warp's part.
    let at = |j: usize, k: usize| (j * WARP as usize + l as usize) * V + k;
    let (tile, mut vals) = claim_tile(temp, counter_base, tile_slot, |tile| {
        let (offset, valid) = part(tile);
        let src = inp.wrapping_add(offset);
        let mut vals = [[O::identity(); V]; VECS];
        if reads && valid >= segment {
            for (j, v) in vals.iter_mut().enumerate() {
                *v = load_narrow::<I, V>(src.add(at(j, 0))).map(I::widen);
            }
        } else {
            for (j, v) in vals.iter_mut().enumerate() {
                for (k, x) in v.iter_mut().enumerate() {
                    if (at(j, k) as u32) < valid {
                        *x = (*src.add(at(j, k))).widen();
                    }
                }
            }
        }
        vals
    });

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
    let warp_prefix = block_prefix::<T, O, TH, D, K, FIXED>((w, l), warp_running, tile, mode, init, publish, sh);

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
    let (offset, valid) = part(tile);
    store_striped::<T, V, VECS>(out.wrapping_add(offset), valid, vals, writes);
}

/// `widen_<source>_<type>_add` and, with `det`, `widen_det_<source>_<type>_add`: the wide
/// type's single-pass tile, its look-back free or in fixed order.
macro_rules! widening_kernel {
    ($name:ident, $from:ty, $t:ty, $fixed:expr) => {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            inp: *const $from,
            out: *mut $t,
            n: u64,
            init: $t,
            flags: u32,
            temp: *mut u8,
            counter_base: u32,
            epoch: u32,
            backoff_ns: u32,
        ) {
            const SIZE: usize = size_of::<$t>();
            const SHAPE: Tile = SHAPES.single_pass.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            const K: usize = SHAPES.lookback_windows;
            single_pass_widening::<$from, $t, crate::op::Add, { SHAPE.threads }, V, { SHAPE.items as usize / V }, D, K, $fixed>(
                inp,
                out,
                n,
                crate::kernels::initial(flags, temp, init),
                flags,
                temp,
                counter_base,
                epoch,
                backoff_ns,
            )
        }
    };
}

macro_rules! widening_kernels {
    ($($src:ident: $from:ty => [$($t:ident),*];)*) => { paste::paste! { $($(
        widening_kernel!([<widen_ $src _ $t _add>], $from, $t, false);
    )*)* } };
}
widening_kernels! {
    u8: u8 => [u32, u64, i64];
    i8: i8 => [u32, u64, i64];
    u16: u16 => [u32, u64, i64];
    i16: i16 => [u32, u64, i64];
    u32: u32 => [u64, i64];
    i32: i32 => [u64, i64];
    f16: F16 => [f32];
    bf16: Bf16 => [f32];
}

widening_kernel!(widen_det_f16_f32_add, F16, f32, true);
widening_kernel!(widen_det_bf16_f32_add, Bf16, f32, true);
