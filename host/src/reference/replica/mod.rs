//! The deterministic scans' combine orders, written out on the CPU.
//!
//! With `ScanOptions::deterministic` a float sum or product is a fixed function of its input,
//! and these modules are those functions: each performs the same float operations in the same
//! order as its kernel, so its result equals the GPU's bit for bit (tests check exactly that).
//! Which order a scan follows is [`crate::plan::scan::fixed_order`]'s answer: [`tiles`] for the
//! one-tile-per-block kernel, [`pipelined`] for the pipelined one.

pub mod pipelined;
pub mod tiles;

pub use pipelined::{pipelined, pipelined_with};
pub use tiles::{single_pass, single_pass_with};
#[cfg(test)]
pub(crate) use tiles::{tile_aggregates, tile_elems, with_tile_prefixes};

use crate::element::Element;
use crate::error::Result;
use crate::plan::scan::FixedOrder;
use scan_abi::{Op, ScanOp};

const WARP: usize = 32;

/// The deterministic scan of `input` with `op` in the fixed order `order`.
pub fn deterministic<T: Element>(
    order: FixedOrder,
    op: Op,
    input: &[T],
    exclusive: bool,
    init: Option<T>,
) -> Result<Vec<T>> {
    match order {
        FixedOrder::Tiles => single_pass(op, input, exclusive, init),
        FixedOrder::Pipelined => pipelined(op, input, exclusive, init),
    }
}

/// `a ⊕ b`, or `b` when there is no `a` (as `combine_after` in the kernels).
fn after<T: Copy, O: ScanOp<T>>(a: Option<T>, b: T) -> T {
    a.map_or(b, |a| O::combine(a, b))
}

/// `a ⊕ b` where either may be absent (as `combine_opt` in the kernels).
fn both<T: Copy, O: ScanOp<T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(O::combine(a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Five shuffle steps of the warp scan, in place, with the `l >= d` guard.
fn warp_scan<T: Copy, O: ScanOp<T>>(x: &mut [T; WARP]) {
    let mut d = 1;
    while d < WARP {
        let before = *x;
        for l in d..WARP {
            x[l] = O::combine(before[l - d], before[l]);
        }
        d *= 2;
    }
}

/// Five shuffle-down steps of the warp reduction, lane 0's result: `x[l] = x[l] ⊕ x[l+d]` for
/// `l + d < 32`, `d = 1, 2, …, 16`, a balanced tree in lane order.
fn warp_reduce<T: Copy, O: ScanOp<T>>(mut x: [T; WARP]) -> T {
    let mut d = 1;
    while d < WARP {
        let before = x;
        for l in 0..WARP - d {
            x[l] = O::combine(before[l], before[l + d]);
        }
        d *= 2;
    }
    x[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input;
    use crate::reference as cpu;

    /// Float sums in either order are close to the exact sum, and the orders differ from each
    /// other and from the sequential fold.
    #[test]
    fn float_sums_are_accurate_and_each_order_its_own() {
        let x = input::generate::<f32>(Op::Add, 11, 100_000);
        let reference = cpu::float_reference(Op::Add, &x, false, None);
        let mut sums = Vec::new();
        for order in [FixedOrder::Tiles, FixedOrder::Pipelined] {
            let got = deterministic(order, Op::Add, &x, false, None).unwrap();
            let worst = got
                .iter()
                .zip(&reference.value)
                .zip(&reference.scale)
                .map(|((g, v), s)| (*g as f64 - v).abs() / s)
                .fold(0.0, f64::max);
            assert!(worst < 64.0 * f32::EPSILON as f64, "{order:?}: {worst}");
            sums.push(got);
        }
        sums.push(cpu::scan_with::<f32, scan_abi::op::Add>(&x, false, None));
        assert!(sums[0] != sums[1] && sums[0] != sums[2] && sums[1] != sums[2]);
    }
}
