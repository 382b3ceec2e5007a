//! The one-tile-per-block deterministic scan's combine order (`single_pass_det_<t>_<op>`). For
//! tiles of `threads × items` elements (the tuning's `single_pass` shape) and vectors of `V`
//! elements (16 bytes):
//!
//! 1. Warp `w` of a tile owns a contiguous segment of `32 × items` elements, cut into chunks of
//!    `32 × V`; lane `l` holds the `V` elements at `l × V` of each chunk. Elements past the end
//!    of the input are the operator's identity.
//! 2. Each lane folds its `V` elements left to right. The lanes' last values are scanned across
//!    the warp by five Kogge-Stone steps (`x[l] = x[l-d] ⊕ x[l]` for `l >= d`, `d = 1, 2, …, 16`).
//!    A lane's prefix within the warp is the running total of the earlier chunks ⊕ the inclusive
//!    value of lane `l-1`; the running total grows by lane 31's inclusive value per chunk.
//! 3. The warps' totals (identity past the last warp) are scanned by the same five steps across
//!    32 lanes; the tile aggregate `a(t)` is the value at the last warp.
//! 4. Tile prefixes are a left fold: `I(0) = init ⊕ a(0)` (just `a(0)` without `init`),
//!    `I(t) = I(t-1) ⊕ a(t)`; tile `t`'s prefix is `I(t-1)`.
//! 5. Element values: `((tile prefix ⊕ warp prefix) ⊕ lane prefix) ⊕ own fold`, where an
//!    absent term (nothing before it) is skipped rather than combined as an identity.

use super::{after, both, warp_scan, WARP};
use crate::element::Element;
use crate::error::Result;
use crate::reference::{run_with_op, ScanFn};
use rayon::prelude::*;
use scan_abi::shape::vector_elems;
use scan_abi::{Op, ScanOp};

/// One tile after its local scan: per element, the lane's own fold and the lane's prefix within
/// the warp; per warp, its prefix within the tile; and the tile aggregate.
struct LocalTile<T> {
    folds: Vec<T>,
    lane_prefix: Vec<Option<T>>,
    warp_prefix: Vec<Option<T>>,
    total: T,
}

struct Shape {
    threads: usize,
    items: usize,
    v: usize,
}

impl Shape {
    fn of<T>() -> Shape {
        let size = std::mem::size_of::<T>();
        // The order is the compiled kernels', whatever tuning a caller passes.
        let s = scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH).shapes.single_pass.at(size);
        Shape { threads: s.threads as usize, items: s.items as usize, v: vector_elems(size) as usize }
    }

    fn tile(&self) -> usize {
        self.threads * self.items
    }

    /// (warp, chunk, lane) of tile position `i`; the lane's vector starts at a multiple of `v`.
    fn place(&self, i: usize) -> (usize, usize, usize) {
        let segment = WARP * self.items;
        let (w, r) = (i / segment, i % segment);
        (w, r / (WARP * self.v), r % (WARP * self.v) / self.v)
    }
}

fn local_tile<T: Copy, O: ScanOp<T>>(s: &Shape, elems: &[T]) -> LocalTile<T> {
    let (tile, warps, chunks) = (s.tile(), s.threads / WARP, s.items / s.v);
    let mut folds = vec![O::identity(); tile];
    folds[..elems.len()].copy_from_slice(elems);
    let mut lane_prefix = vec![None; tile / s.v];
    let mut warp_totals = [O::identity(); WARP];
    for (w, total) in warp_totals.iter_mut().enumerate().take(warps) {
        let mut running: Option<T> = None;
        for c in 0..chunks {
            let base = (w * chunks + c) * WARP * s.v;
            let mut lasts = [O::identity(); WARP];
            for (l, last) in lasts.iter_mut().enumerate() {
                let v = &mut folds[base + l * s.v..base + (l + 1) * s.v];
                for k in 1..s.v {
                    v[k] = O::combine(v[k - 1], v[k]);
                }
                *last = v[s.v - 1];
            }
            warp_scan::<T, O>(&mut lasts);
            for l in 0..WARP {
                let before = (l > 0).then(|| lasts[l - 1]);
                lane_prefix[base / s.v + l] = both::<T, O>(running, before);
            }
            running = Some(after::<T, O>(running, lasts[WARP - 1]));
        }
        *total = running.unwrap_or_else(O::identity);
    }
    warp_scan::<T, O>(&mut warp_totals);
    let warp_prefix = (0..warps).map(|w| (w > 0).then(|| warp_totals[w - 1])).collect();
    LocalTile { folds, lane_prefix, warp_prefix, total: warp_totals[warps - 1] }
}

/// The deterministic single-pass scan of `input` with `O`, computed on the CPU in the GPU's
/// order (see the module documentation).
pub fn single_pass_with<T: Copy + Send + Sync, O: ScanOp<T>>(input: &[T], exclusive: bool, init: Option<T>) -> Vec<T> {
    let mut prefixes = Vec::new();
    let mut inclusive = init;
    for a in tile_aggregates::<T, O>(input) {
        prefixes.push(inclusive);
        inclusive = Some(after::<T, O>(inclusive, a));
    }
    with_tile_prefixes::<T, O>(input, &prefixes, exclusive)
}

/// The tile aggregates `a(t)` of the single-pass order (steps 1 to 3).
pub(crate) fn tile_aggregates<T: Copy + Send + Sync, O: ScanOp<T>>(input: &[T]) -> Vec<T> {
    let s = Shape::of::<T>();
    input.par_chunks(s.tile()).map(|c| local_tile::<T, O>(&s, c).total).collect()
}

/// Elements per tile of the single-pass order for `T`.
#[cfg(test)]
pub(crate) fn tile_elems<T>() -> usize {
    Shape::of::<T>().tile()
}

/// The scan given each tile's exclusive prefix (`None`: nothing before the tile), combined into
/// the tile's elements as the kernel does (step 5). With the prefixes of step 4 this is the
/// deterministic scan; other prefixes stand for other look-back orders.
pub(crate) fn with_tile_prefixes<T: Copy + Send + Sync, O: ScanOp<T>>(
    input: &[T],
    prefixes: &[Option<T>],
    exclusive: bool,
) -> Vec<T> {
    let s = Shape::of::<T>();
    let mut out = vec![O::identity(); input.len()];
    out.par_chunks_mut(s.tile()).zip(input.par_chunks(s.tile())).zip(prefixes).for_each(
        |((out, elems), &tile_prefix)| {
            let t = local_tile::<T, O>(&s, elems);
            for (i, o) in out.iter_mut().enumerate() {
                let (w, _, _) = s.place(i);
                // The kernel combines the tile prefix into the warp's prefix first.
                let warp = both::<T, O>(tile_prefix, t.warp_prefix[w]);
                let prefix = both::<T, O>(warp, t.lane_prefix[i / s.v]);
                *o = match (exclusive, i % s.v) {
                    (false, _) => after::<T, O>(prefix, t.folds[i]),
                    (true, 0) => prefix.unwrap_or_else(O::identity),
                    (true, _) => after::<T, O>(prefix, t.folds[i - 1]),
                };
            }
        },
    );
    out
}

struct Replica;

impl ScanFn for Replica {
    fn scan<T: Copy + Send + Sync, O: ScanOp<T>>(input: &[T], exclusive: bool, init: Option<T>) -> Vec<T> {
        single_pass_with::<T, O>(input, exclusive, init)
    }
}

/// [`single_pass_with`] for the runtime operator `op`.
pub fn single_pass<T: Element>(op: Op, input: &[T], exclusive: bool, init: Option<T>) -> Result<Vec<T>> {
    run_with_op::<T, Replica>(op, input, exclusive, init)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input;
    use crate::reference as cpu;

    /// For exact operators the replica is just a scan: this checks its tile, warp and lane
    /// bookkeeping (a misplaced prefix would show up as a wrong sum).
    #[test]
    fn equals_the_sequential_scan_for_exact_operators() {
        let tile = Shape::of::<u32>().tile();
        for n in [0, 1, 31, 33, 127, 129, 1025, tile - 1, tile, tile + 1, 3 * tile + 77] {
            for (exclusive, init) in [(false, None), (true, None), (true, Some(7)), (false, Some(9))] {
                let x = input::generate::<u32>(Op::Add, n as u64, n);
                assert_eq!(
                    single_pass(Op::Add, &x, exclusive, init).unwrap(),
                    cpu::scan(Op::Add, &x, exclusive, init).unwrap(),
                    "n={n}"
                );
                let a = input::generate::<u64>(Op::Affine, 3, n);
                let want = cpu::scan(Op::Affine, &a, exclusive, init.map(|i| i as u64)).unwrap();
                assert_eq!(single_pass(Op::Affine, &a, exclusive, init.map(|i| i as u64)).unwrap(), want, "n={n}");
            }
        }
        let b = input::generate::<u8>(Op::Xor, 1, 3 * Shape::of::<u8>().tile() + 5);
        assert_eq!(single_pass(Op::Xor, &b, false, None).unwrap(), cpu::scan(Op::Xor, &b, false, None).unwrap());
    }
}
