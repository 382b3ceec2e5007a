//! Planning a scan across the ranks of a group (`crate::multi`): each rank reduces its shard to
//! one total (the hierarchical reduce, level after level, the last level into the exchange
//! buffer), the ranks' totals are gathered, a scan of the `world` totals gives every rank its
//! carry, and each rank scans its shard from its carry with the single-pass kernels, the carry
//! read from device memory. Every rank moves its shard three times (read, read, write) and only
//! `world` values cross between devices.

use super::scan::{self, sums_bytes, Buf, HierStep, ScanPlan, ScanRequest, SinglePass};
use super::{check_blocks, per_tile, Grid};
use crate::error::{Error, Result};
use crate::options::Algorithm;
use scan_abi::tuning::Tuning;
use scan_abi::{smem, Family, Kernel};

/// One rank's part of a scan across ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankPlan {
    /// The reduce levels from the shard (`Buf::Input`) to its total (`Buf::Output`: the
    /// exchange buffer); an empty shard's one launch writes the identity.
    pub reduce: Vec<HierStep>,
    /// Scratch bytes of the reduce levels between the first and the last.
    pub reduce_scratch: u64,
    /// The exclusive scan of the gathered totals, from the caller's initial value if any.
    pub carries: ScanPlan,
    /// The shard's scan (none for an empty shard).
    pub scan: Option<SinglePass>,
}

/// Plans rank `rank`'s part of `req` (the rank's shard) in a group of `world` ranks. The shard's
/// scan starts from the carry when there is one: for every rank after the first, and for the
/// first when the caller gave an initial value (`req.has_init`).
pub fn plan(t: &Tuning, req: &ScanRequest, world: usize) -> Result<RankPlan> {
    if req.algorithm != Algorithm::SinglePass {
        return Err(Error::invalid(
            "a scan across GPUs runs the single-pass kernels: leave the algorithm at its default",
        ));
    }
    if req.deterministic {
        return Err(Error::invalid(
            "the deterministic order is not available across GPUs: scan on one GPU for bitwise reproducible floats",
        ));
    }
    if world == 0 {
        return Err(Error::invalid("a group needs at least one rank"));
    }
    check_blocks("the tiles of a shard's reduce", req.n.div_ceil(t.shapes.hierarchical.tile() as u64))?;
    let (reduce, reduce_scratch) = reduce(t, req, req.n);
    let carries = ScanRequest { exclusive: true, n: world as u64, ..ScanRequest::new(req.ty, req.op, 0) };
    let carries = scan::plan(t, &ScanRequest { has_init: req.has_init, ..carries })?;
    let scan = match req.n {
        0 => None,
        _ => match scan::plan(t, &ScanRequest { has_init: false, ..*req })? {
            ScanPlan::SinglePass(s) => Some(s),
            other => unreachable!("a single-pass request planned as {other:?}"),
        },
    };
    Ok(RankPlan { reduce, reduce_scratch, carries, scan })
}

/// The hierarchical reduce of `n` elements down to one, and the scratch its middle levels use.
pub(crate) fn reduce(t: &Tuning, req: &ScanRequest, n: u64) -> (Vec<HierStep>, u64) {
    let tile = t.shapes.hierarchical;
    let smem = smem::tile_reduce(tile.threads, tile.items, req.ty.size() as u32);
    let kernel = Kernel::new(Family::HierReduce, req.ty, req.op);
    let (mut steps, mut input, mut n, mut scratch) = (Vec::new(), Buf::Input, n, 0u64);
    loop {
        let tiles = n.div_ceil(tile.tile() as u64).max(1);
        let sums = if tiles == 1 { Buf::Output } else { Buf::Scratch(scratch) };
        steps.push(HierStep::Reduce { launch: per_tile(kernel, tiles, tile.threads, smem), input, n, sums });
        if tiles == 1 {
            return (steps, scratch);
        }
        (input, n) = (sums, tiles);
        scratch += sums_bytes(tiles, req.ty.size());
    }
}

/// Blocks of a reduce level (for tests and reports).
pub fn blocks(step: &HierStep) -> u64 {
    match step.launch().grid {
        Grid::Blocks(b) => b,
        Grid::Persistent { tiles, .. } => tiles,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ScanKernel;
    use scan_abi::tuning::for_arch;
    use scan_abi::{ElemType, Op};

    const SM90: &Tuning = for_arch(90);

    fn req(n: u64) -> ScanRequest {
        ScanRequest::new(ElemType::U32, Op::Add, n)
    }

    #[test]
    fn the_reduce_ends_in_one_value_written_to_the_exchange_buffer() {
        let tile = SM90.shapes.hierarchical.tile() as u64;
        for n in [0, 1, tile - 1, tile, tile + 1, tile * tile, tile * tile + 1, 1 << 30] {
            let p = plan(SM90, &req(n), 4).unwrap();
            let last = p.reduce.last().unwrap();
            assert!(matches!(last, HierStep::Reduce { sums: Buf::Output, .. }), "n={n}");
            assert_eq!(blocks(last), 1, "n={n}");
            assert!(matches!(p.reduce[0], HierStep::Reduce { input: Buf::Input, n: m, .. } if m == n));
            // Each level reads what the one before wrote: one total per tile.
            for w in p.reduce.windows(2) {
                let (HierStep::Reduce { sums, .. }, HierStep::Reduce { input, n, .. }) = (&w[0], &w[1]) else {
                    unreachable!()
                };
                assert_eq!(sums, input);
                assert_eq!(blocks(&w[0]), *n);
            }
            assert_eq!(p.reduce.len(), scan::levels(n, tile).len() + 1, "n={n}");
            assert_eq!(p.scan.is_some(), n > 0);
        }
    }

    #[test]
    fn the_carries_are_an_exclusive_scan_of_the_world_totals_from_the_initial_value() {
        let with_init = ScanRequest { has_init: true, ..req(1000) };
        for (r, has_init) in [(req(1000), false), (with_init, true)] {
            let ScanPlan::SinglePass(c) = plan(SM90, &r, 8).unwrap().carries else { panic!("single pass") };
            assert_eq!(c.flags & scan_abi::kernel::flags::EXCLUSIVE, scan_abi::kernel::flags::EXCLUSIVE);
            assert_eq!(c.flags & scan_abi::kernel::flags::HAS_INIT != 0, has_init);
        }
    }

    #[test]
    fn the_shard_scan_keeps_the_callers_kernel_and_leaves_the_initial_value_to_the_carry() {
        let r = ScanRequest { has_init: true, kernel: ScanKernel::Pipelined, ..req(1 << 20) };
        let s = plan(SM90, &r, 2).unwrap().scan.unwrap();
        assert_eq!(s.launch.kernel.family, Family::SinglePassPipelined);
        assert_eq!(s.flags & scan_abi::kernel::flags::HAS_INIT, 0);
    }

    #[test]
    fn other_strategies_and_the_deterministic_order_are_refused() {
        let hier = ScanRequest { algorithm: Algorithm::Naive, ..req(10) };
        assert!(plan(SM90, &hier, 2).unwrap_err().to_string().contains("single-pass"));
        let det = ScanRequest { deterministic: true, ty: ElemType::F32, ..req(10) };
        assert!(plan(SM90, &det, 2).unwrap_err().to_string().contains("deterministic"));
        assert!(plan(SM90, &req(10), 0).is_err());
    }
}
