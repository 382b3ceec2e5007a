//! The pipelined deterministic scan's combine order (`single_pass_pipe_det_<t>_<op>`). For the
//! tuning's `scan_pipeline` shape: `R` reducing warps, `R × S` scanning warps, `VECS` vectors of
//! `V` elements (16 bytes) per lane of a reducing warp, tiles of `R × 32 × V × VECS` elements.
//!
//! 1. Reducing warp `w` owns the contiguous part `w` of the tile, `32 × V × VECS` elements, cut
//!    into `S` shares of `VECS / S` rows of 32 vectors each, scanning warp `w × S + h` taking share
//!    `h`. Striped shares: lane `l`'s vector of row `j` starts at `(32 j + l) × V`. Blocked shares
//!    (runs of `B` rows): lane `l` holds vectors `l × B … (l + 1) × B - 1`. Elements past the end
//!    of the input are the operator's identity.
//! 2. A share's total: each lane folds its vectors' elements onto the identity in order (for a
//!    commutative operator; otherwise each row's lanes' vector totals are reduced, rows combined
//!    in order), then the lanes are reduced by five shuffle-down steps (`x[l] = x[l] ⊕ x[l+d]`,
//!    lane 0's value). The tile aggregate `a(t)` is the shares' totals folded left in order.
//! 3. Tile prefixes are a left fold: `I(0) = init ⊕ a(0)` (just `a(0)` without `init`),
//!    `I(t) = I(t-1) ⊕ a(t)`; tile `t`'s prefix is `I(t-1)`.
//! 4. Scanning warp `s` starts from the tile's prefix (tile 0: `init`, or nothing) folded with
//!    the totals of the shares before its own, in order. Striped, row by row: each lane scans its
//!    vector in order, the lanes' totals are scanned by five Kogge-Stone steps, a lane's elements
//!    get `(running ⊕ inclusive value of lane l-1)` in front, and the running value grows by lane
//!    31's inclusive value. Blocked: each lane scans its vectors and folds their totals, the lanes'
//!    folds are scanned once, and a lane's vectors follow each other from its prefix. An absent
//!    term (nothing before it) is skipped rather than combined as an identity.

use super::{after, both, warp_reduce, warp_scan, WARP};
use crate::element::{Element, OpVisitor};
use crate::error::Result;
use rayon::prelude::*;
use scan_abi::shape::{vector_elems, Pipeline};
use scan_abi::{Op, ScanOp};

/// Where a tile's elements lie for the kernel's warps.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    /// Reducing warps.
    r: usize,
    /// Scanning warps per reducing warp.
    s: usize,
    /// Elements per vector.
    v: usize,
    /// Rows of 32 vectors in a share.
    rows: usize,
    /// Blocked shares (a run of `rows` vectors per lane) rather than striped ones.
    blocked: bool,
}

impl Geometry {
    fn of(p: Pipeline, elem_size: usize) -> Geometry {
        let v = vector_elems(elem_size) as usize;
        Geometry { r: p.warps as usize, s: p.split as usize, v, rows: p.rows(v as u32) as usize, blocked: p.blocked }
    }

    fn share(&self) -> usize {
        self.rows * WARP * self.v
    }

    fn tile(&self) -> usize {
        self.r * self.s * self.share()
    }

    /// Where lane `l`'s `i`-th vector starts within a share (row `i` where striped).
    fn vector(&self, i: usize, l: usize) -> usize {
        if self.blocked {
            (l * self.rows + i) * self.v
        } else {
            (i * WARP + l) * self.v
        }
    }

    /// The share's total (step 2).
    fn total<T: Copy, O: ScanOp<T>>(&self, share: &[T]) -> T {
        if self.blocked || O::COMMUTATIVE {
            let lanes = std::array::from_fn(|l| {
                let mut acc = O::identity();
                for i in 0..self.rows {
                    let at = self.vector(i, l);
                    for &x in &share[at..at + self.v] {
                        acc = O::combine(acc, x);
                    }
                }
                acc
            });
            return warp_reduce::<T, O>(lanes);
        }
        let mut acc = None;
        for i in 0..self.rows {
            let lanes = std::array::from_fn(|l| {
                let at = self.vector(i, l);
                share[at + 1..at + self.v].iter().fold(share[at], |a, &x| O::combine(a, x))
            });
            acc = Some(after::<T, O>(acc, warp_reduce::<T, O>(lanes)));
        }
        acc.unwrap_or_else(O::identity)
    }

    /// The share's elements scanned after `running` (step 4), into `out`.
    fn scan<T: Copy, O: ScanOp<T>>(&self, share: &[T], mut running: Option<T>, exclusive: bool, out: &mut [T]) {
        let v = self.v;
        // One vector scanned in place; its total.
        let local = |x: &mut [T]| {
            for k in 1..v {
                x[k] = O::combine(x[k - 1], x[k]);
            }
            x[v - 1]
        };
        // A lane's vector (scanned) with `prefix` in front, as the kernel's `finish`.
        let finish = |scanned: &[T], prefix: Option<T>, out: &mut [T]| {
            for k in 0..v {
                out[k] = match (exclusive, k) {
                    (false, _) => after::<T, O>(prefix, scanned[k]),
                    (true, 0) => prefix.unwrap_or_else(O::identity),
                    (true, _) => after::<T, O>(prefix, scanned[k - 1]),
                };
            }
        };
        let mut scanned = share.to_vec();
        if self.blocked {
            let mut totals = [O::identity(); WARP];
            for (l, total) in totals.iter_mut().enumerate() {
                let mut fold = None;
                for i in 0..self.rows {
                    let at = self.vector(i, l);
                    fold = Some(after::<T, O>(fold, local(&mut scanned[at..at + v])));
                }
                *total = fold.unwrap_or_else(O::identity);
            }
            let mut inclusive = totals;
            warp_scan::<T, O>(&mut inclusive);
            for l in 0..WARP {
                let mut prefix = both::<T, O>(running, (l > 0).then(|| inclusive[l - 1]));
                for i in 0..self.rows {
                    let at = self.vector(i, l);
                    finish(&scanned[at..at + v], prefix, &mut out[at..at + v]);
                    prefix = Some(after::<T, O>(prefix, scanned[at + v - 1]));
                }
            }
            return;
        }
        for i in 0..self.rows {
            let mut inclusive = [O::identity(); WARP];
            for (l, t) in inclusive.iter_mut().enumerate() {
                let at = self.vector(i, l);
                *t = local(&mut scanned[at..at + v]);
            }
            warp_scan::<T, O>(&mut inclusive);
            for l in 0..WARP {
                let at = self.vector(i, l);
                let prefix = both::<T, O>(running, (l > 0).then(|| inclusive[l - 1]));
                finish(&scanned[at..at + v], prefix, &mut out[at..at + v]);
            }
            running = Some(after::<T, O>(running, inclusive[WARP - 1]));
        }
    }
}

/// The tile's elements, padded with the identity past the end of the input.
fn padded<T: Copy, O: ScanOp<T>>(g: &Geometry, elems: &[T]) -> Vec<T> {
    let mut tile = vec![O::identity(); g.tile()];
    tile[..elems.len()].copy_from_slice(elems);
    tile
}

/// The deterministic pipelined scan of `input` with `O`, computed on the CPU in the kernel's
/// order (see the module documentation) for tiles of shape `p`.
pub fn pipelined_with<T: Copy + Send + Sync, O: ScanOp<T>>(
    p: Pipeline,
    input: &[T],
    exclusive: bool,
    init: Option<T>,
) -> Vec<T> {
    let g = Geometry::of(p, size_of::<T>());
    let share = g.share();
    let totals: Vec<Vec<T>> = input
        .par_chunks(g.tile())
        .map(|c| padded::<T, O>(&g, c).chunks(share).map(|s| g.total::<T, O>(s)).collect())
        .collect();
    let mut prefixes = Vec::with_capacity(totals.len());
    let mut inclusive = init;
    for t in &totals {
        prefixes.push(inclusive);
        let aggregate = t[1..].iter().fold(t[0], |a, &x| O::combine(a, x));
        inclusive = Some(after::<T, O>(inclusive, aggregate));
    }
    let mut out = vec![O::identity(); input.len()];
    out.par_chunks_mut(g.tile()).zip(input.par_chunks(g.tile())).zip(totals.par_iter().zip(&prefixes)).for_each(
        |((out, elems), (totals, &prefix))| {
            let tile = padded::<T, O>(&g, elems);
            let mut scanned = vec![O::identity(); g.tile()];
            let mut running = prefix;
            for (k, (s, o)) in tile.chunks(share).zip(scanned.chunks_mut(share)).enumerate() {
                g.scan::<T, O>(s, running, exclusive, o);
                running = Some(after::<T, O>(running, totals[k]));
            }
            out.copy_from_slice(&scanned[..out.len()]);
        },
    );
    out
}

/// [`pipelined_with`] for the runtime operator `op`, in the shape the kernels are built with.
pub fn pipelined<T: Element>(op: Op, input: &[T], exclusive: bool, init: Option<T>) -> Result<Vec<T>> {
    struct Visit<'a, T> {
        p: Pipeline,
        input: &'a [T],
        exclusive: bool,
        init: Option<T>,
    }
    impl<T: Element> OpVisitor<T> for Visit<'_, T> {
        type Output = Vec<T>;
        fn visit<O: ScanOp<T>>(self) -> Vec<T> {
            pipelined_with::<T, O>(self.p, self.input, self.exclusive, self.init)
        }
    }
    // The order is the compiled kernels', whatever tuning a caller passes.
    let p = scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH).shapes.scan_pipeline_of(T::TYPE, op);
    T::visit_op(op, Visit { p, input, exclusive, init })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input;
    use crate::reference as cpu;

    fn striped<T>() -> Pipeline {
        scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH).shapes.scan_pipeline.at(size_of::<T>())
    }

    /// For exact operators the order is just a scan: this checks the replica's tile, share, row
    /// and lane bookkeeping, in the shapes the kernels have and in blocked and split ones.
    #[test]
    fn equals_the_sequential_scan_for_exact_operators() {
        let shapes = [
            striped::<u32>(),
            Pipeline::blocked(4, 5, 1, 5),
            Pipeline::blocked(4, 10, 2, 5),
            striped::<u32>().with_split(2),
        ];
        let modes = [(false, None), (true, None), (true, Some(7)), (false, Some(9))];
        for p in shapes {
            let tile = Geometry::of(p, 4).tile();
            for n in [0, 1, 31, 33, 127, 129, tile - 1, tile, tile + 1, 3 * tile + 77] {
                let x = input::generate::<u32>(Op::Add, n as u64, n);
                for (exclusive, init) in modes {
                    let want = cpu::scan(Op::Add, &x, exclusive, init).unwrap();
                    assert_eq!(pipelined_with::<u32, scan_abi::op::Add>(p, &x, exclusive, init), want, "{p:?} n={n}");
                }
            }
        }
        // A non-commutative operator (rows reduced one by one), in the kernels' own shape.
        let tile = Geometry::of(striped::<u64>(), 8).tile();
        for n in [0, 1, 33, tile - 1, tile + 1, 2 * tile + 5] {
            let a = input::generate::<u64>(Op::Affine, 3, n);
            for (exclusive, init) in modes {
                let init = init.map(|i| i as u64);
                let want = cpu::scan(Op::Affine, &a, exclusive, init).unwrap();
                assert_eq!(pipelined(Op::Affine, &a, exclusive, init).unwrap(), want, "affine n={n}");
            }
        }
    }
}
