//! The single-pass scan of narrow elements into a wider type: each element is read at its own
//! width, converted in registers, and scanned and stored in the wide type, so sums of bytes
//! never overflow a byte and the read traffic stays the narrow type's.
//!
//! The tile is the wide type's single-pass tile and is scanned in the same order as
//! [`single_pass`](crate::kernels::single_pass::single_pass) scans it: a lane's vector is `V`
//! wide elements, read as one access of `V` narrow ones (a warp reads contiguous bytes), so the
//! deterministic kernels give bit for bit what the wide deterministic scan gives on the widened
//! input. The pipelined kernels ([`WidenScan`]) stage the narrow tiles in shared memory through
//! [`pipeline`]'s warp roles, in the wide type's pipelined shape with longer tiles
//! (`Shapes::widening_pipeline_of`).

use crate::arch::{f16_to_f32, lane, load_narrow, store_vec16, warp_idx, WARP};
use crate::kernels::pipelined::{pipeline, striped, TileWork};
use crate::kernels::single_pass::{block_prefix, warp_part, TileLaunch};
use crate::kernels::{claim_tile, finish, prefetch_tile_l2, scan_vectors, Mode, Place, SHAPES};
use crate::lookback::StatusValue;
use crate::op::{combine_after, combine_opt, Add, ScanOp};
use crate::smem::{Carver, Smem};
use crate::tile::store_striped;
use crate::warp;
use core::mem::size_of;
use scan_abi::args::{Pipe, ScanArgs};
use scan_abi::shape::{vector_elems, Pipeline, Tile, VECTOR_BYTES};

/// A narrow element that converts exactly into `T`.
pub trait Widen<T>: Copy {
    /// What fills a partial tile's stage: zero.
    const ZERO: Self;
    fn widen(self) -> T;
}

macro_rules! widen_as {
    ($($from:ty => [$($to:ty),*]),*) => { $($(
        impl Widen<$to> for $from {
            const ZERO: $from = 0;
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
    const ZERO: F16 = F16(0);
    #[inline(always)]
    fn widen(self) -> f32 {
        f16_to_f32(self.0)
    }
}

impl Widen<f32> for Bf16 {
    const ZERO: Bf16 = Bf16(0);
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// Scans `n` elements of `I` at `inp` into `T` at `out`: the arguments of
/// [`single_pass`](crate::kernels::single_pass::single_pass), with the input narrower.
#[inline(always)]
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
    launch: TileLaunch,
) {
    let TileLaunch { flags, temp, counter_base, .. } = launch;
    let mode = Mode::from_flags(flags);
    let mut smem = Carver::new();
    let (tile_slot, sh, publish) = launch.begin::<T, TH, D, K>(&mut smem);
    smem.check();
    let (w, l) = (warp_idx(), lane());
    let reads = inp as usize % (V * size_of::<I>()) == 0;
    let writes = out as usize % VECTOR_BYTES == 0;
    let segment = WARP * (V * VECS) as u32;
    let tile_elems = TH as u64 * (V * VECS) as u64;
    let part = |tile: u32| warp_part(tile, n, tile_elems, w, segment);
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

    let (lane_prefix, warp_running) = scan_vectors::<T, O, V, VECS>(&mut vals);
    let warp_prefix = block_prefix::<T, O, TH, D, K, FIXED>((w, l), warp_running, tile, mode, init, publish, sh);
    for (j, v) in vals.iter_mut().enumerate() {
        finish::<T, O, V>(v, combine_opt::<T, O>(warp_prefix, lane_prefix[j]), mode.exclusive);
    }
    let (offset, valid) = part(tile);
    store_striped::<T, V, VECS>(out.wrapping_add(offset), valid, vals, writes);
}

/// The pipelined kernels' work on a tile of narrow `I` staged in shared memory: each lane's
/// vector is `V` of them (one wide 16-byte vector once converted), reduced or scanned in the wide
/// `T` and stored straight from registers, 16 bytes a lane (shared memory holds the narrow tile,
/// so nothing goes out by bulk copy).
#[derive(Clone, Copy)]
pub struct WidenScan<I, T, const V: usize> {
    out: *mut T,
    init: T,
    mode: Mode,
    aligned: bool,
    narrow: core::marker::PhantomData<I>,
}

impl<I: Widen<T>, T: StatusValue, const V: usize> TileWork for WidenScan<I, T, V>
where
    Add: ScanOp<T>,
{
    type T = I;
    type A = T;
    type O = Add;
    type K = ();
    type L = ();
    const V: usize = V;

    #[inline(always)]
    fn start(self) -> Option<T> {
        if self.mode.has_init {
            Some(self.init)
        } else {
            None
        }
    }
    #[inline(always)]
    fn fill(self) -> I {
        I::ZERO
    }
    #[inline(always)]
    unsafe fn reduce(self, part: Smem<I>, _: Smem<()>, _: Smem<()>, rows: core::ops::Range<usize>, _first: u64) -> T {
        let l = lane();
        let mut acc = <Add as ScanOp<T>>::identity();
        for j in rows {
            let v = load_narrow::<I, V>(part.at(striped(j, l, V)));
            for x in v.iter() {
                acc = <Add as ScanOp<T>>::combine(acc, x.widen());
            }
        }
        warp::reduce::<T, Add>(acc)
    }
    #[inline(always)]
    unsafe fn finish(
        self,
        share: Smem<I>,
        _: Smem<()>,
        _: Smem<()>,
        rows: usize,
        running: Option<T>,
        first: u64,
        valid: u32,
    ) -> bool {
        if self.aligned && valid == WARP * (V * rows) as u32 {
            self.scan_rows::<true>(share, rows, running, first, valid);
        } else {
            self.scan_rows::<false>(share, rows, running, first, valid);
        }
        false
    }
}

impl<I: Widen<T>, T: StatusValue, const V: usize> WidenScan<I, T, V>
where
    Add: ScanOp<T>,
{
    /// Each row of the share scanned from what comes before it and stored, by 16-byte vectors
    /// where `FULL` (every element valid, the output aligned), else element by element.
    #[inline(always)]
    unsafe fn scan_rows<const FULL: bool>(
        self,
        share: Smem<I>,
        rows: usize,
        mut running: Option<T>,
        first: u64,
        valid: u32,
    ) {
        let l = lane();
        let dst = self.out.wrapping_add(first as usize);
        for j in 0..rows {
            let at = striped(j, l, V);
            let mut v = load_narrow::<I, V>(share.at(at)).map(I::widen);
            for k in 1..V {
                v[k] = <Add as ScanOp<T>>::combine(v[k - 1], v[k]);
            }
            let (before, through) = warp::scan::<T, Add>(v[V - 1]);
            finish::<T, Add, V>(&mut v, combine_opt::<T, Add>(running, before), self.mode.exclusive);
            running = Some(combine_after::<T, Add>(running, warp::broadcast(through, WARP - 1)));
            if FULL {
                store_vec16::<T, V>(dst.add(at as usize), v);
            } else {
                for (k, &x) in v.iter().enumerate() {
                    if at + (k as u32) < valid {
                        *dst.add(at as usize + k) = x;
                    }
                }
            }
        }
    }
}

/// The pipelined widening sum of `n` elements of `I` at `inp` into `T` at `out`, in the shape `R`
/// reducing warps, `R * S` scanning warps and `VECS` vectors of `V` per reducing thread
/// (`Shapes::widening_pipeline_of`); arguments as the pipelined scan kernels take them.
#[inline(always)]
pub unsafe fn pipelined_widening<
    I: Widen<T>,
    T: StatusValue,
    const V: usize,
    const R: u32,
    const S: u32,
    const VECS: usize,
    const D: usize,
>(
    inp: *const I,
    out: *mut T,
    n: u64,
    init: T,
    flags: u32,
    temp: *mut u8,
    pipe: Pipe,
) where
    Add: ScanOp<T>,
{
    let aligned = (inp as usize | out as usize) % VECTOR_BYTES == 0;
    let work = WidenScan::<I, T, V> { out, init, mode: Mode::from_flags(flags), aligned, narrow: core::marker::PhantomData };
    pipeline::<WidenScan<I, T, V>, R, S, VECS, D, false, false, 0>(
        work,
        inp,
        n,
        n,
        aligned,
        temp,
        pipe,
    )
}

/// One widening kernel `$name` from `$from` into `$t`: `tiles` (`widen_<source>_<type>_add`, and
/// with a fixed-order look-back `widen_det_...`), the wide type's single-pass tile, its arguments
/// one by one; or `pipelined` (`widen_pipe_...`), the shape `Shapes::widening_pipeline_of` gives,
/// its buffers then a [`ScanArgs`].
macro_rules! widening_kernel {
    ($name:ident, $from:ty, $t:ty, tiles $fixed:expr) => {
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
            const TILE: Tile = SHAPES.single_pass.at(SIZE);
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            const K: usize = SHAPES.lookback_windows;
            let init = crate::kernels::initial(flags, temp, init);
            let launch = TileLaunch { flags, temp, counter_base, epoch, backoff_ns };
            single_pass_widening::<$from, $t, Add, { TILE.threads }, V, { TILE.items as usize / V }, D, K, $fixed>(
                inp, out, n, init, launch,
            )
        }
    };
    ($name:ident, $from:ty, $t:ty, pipelined) => {
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(inp: *const $from, out: *mut $t, temp: *mut u8, args: ScanArgs<$t>) {
            const SIZE: usize = size_of::<$t>();
            const P: Pipeline = SHAPES.widening_pipeline_of(size_of::<$from>(), <$t as crate::op::Element>::TYPE);
            const V: usize = vector_elems(SIZE) as usize;
            const D: usize = SHAPES.lookback_depth;
            let ScanArgs { n, flags, pipe, init, .. } = args;
            let init = crate::kernels::initial(flags, temp, init);
            pipelined_widening::<$from, $t, V, { P.warps }, { P.split }, { P.items as usize / V }, D>(
                inp, out, n, init, flags, temp, pipe,
            )
        }
    };
}

macro_rules! widening_kernels {
    ($($src:ident: $from:ty => [$($t:ident),*];)*) => { paste::paste! { $($(
        widening_kernel!([<widen_ $src _ $t _add>], $from, $t, tiles false);
        widening_kernel!([<widen_pipe_ $src _ $t _add>], $from, $t, pipelined);
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

widening_kernel!(widen_det_f16_f32_add, F16, f32, tiles true);
widening_kernel!(widen_det_bf16_f32_add, Bf16, f32, tiles true);
