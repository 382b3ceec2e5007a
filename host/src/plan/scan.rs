//! Planning a device-wide scan: which single-pass kernel (tiles in registers or shared memory,
//! fixed order, pipelined), the hierarchical strategy's levels, or the naive kernel.

use super::{check_blocks, per_tile, scan_flags, Grid, Launch, TileState};
use crate::error::{Error, Result};
use crate::options::{Algorithm, Propagation, ScanKernel, StatusOrdering, NAIVE_MAX_N};
use scan_abi::block::BlockAlgo;
use scan_abi::kernel::flags::ACQ_REL_STATUS;
use scan_abi::shape::{Pipeline, VECTOR_BYTES};
use scan_abi::tuning::Tuning;
use scan_abi::widening::Source;
use scan_abi::{smem, ElemType, Family, Kernel, Op};

/// A scan as the planner sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScanRequest {
    pub ty: ElemType,
    pub op: Op,
    pub n: u64,
    pub exclusive: bool,
    pub has_init: bool,
    pub algorithm: Algorithm,
    pub kernel: ScanKernel,
    pub deterministic: bool,
    pub ordering: StatusOrdering,
    pub backoff_ns: Option<u32>,
    /// Input and output start on 16-byte boundaries.
    pub aligned: bool,
    pub in_place: bool,
}

impl ScanRequest {
    /// An inclusive single-pass scan of `n` aligned elements with the default kernel.
    pub fn new(ty: ElemType, op: Op, n: u64) -> ScanRequest {
        ScanRequest {
            ty,
            op,
            n,
            exclusive: false,
            has_init: false,
            algorithm: Algorithm::SinglePass,
            kernel: ScanKernel::Auto,
            deterministic: false,
            ordering: StatusOrdering::Relaxed,
            backoff_ns: None,
            aligned: true,
            in_place: false,
        }
    }
}

/// One single-pass-style launch (`single_pass_kernel!` or `pipelined_kernel!` in gpu/).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SinglePass {
    pub launch: Launch,
    pub state: TileState,
    pub flags: u32,
    pub backoff_ns: u32,
    /// Tiles in flight per block, the pipelined kernels' last argument.
    pub stages: Option<u32>,
}

/// Where a hierarchical step reads or writes: the caller's buffers, or scratch space at an offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buf {
    Input,
    Output,
    Scratch(u64),
}

/// One launch of the hierarchical strategy (`hierarchical_kernels!` in gpu/).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HierStep {
    /// Scan each tile from its offset (when given), writing its total (when given); `with_init`:
    /// the caller's initial value goes in front.
    TileScan { launch: Launch, input: Buf, output: Buf, n: u64, offsets: Option<Buf>, sums: Option<Buf>, flags: u32 },
    /// Each tile's total.
    Reduce { launch: Launch, input: Buf, n: u64, sums: Buf },
    /// Each tile's offset combined into its elements.
    Add { launch: Launch, output: Buf, n: u64, offsets: Buf },
}

impl HierStep {
    pub fn launch(&self) -> &Launch {
        match self {
            HierStep::TileScan { launch, .. } | HierStep::Reduce { launch, .. } | HierStep::Add { launch, .. } => {
                launch
            }
        }
    }
}

/// The hierarchical strategy's launches in order, and the scratch bytes they use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchical {
    pub steps: Vec<HierStep>,
    pub scratch_bytes: u64,
}

/// A whole scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanPlan {
    /// Nothing to do.
    Empty,
    SinglePass(SinglePass),
    Hierarchical(Hierarchical),
    Naive {
        launch: Launch,
        flags: u32,
    },
}

impl ScanPlan {
    /// The family of the kernel that does the work (the tile scan's, for the hierarchical form;
    /// `None`: nothing to launch).
    pub fn family(&self) -> Option<Family> {
        match self {
            ScanPlan::Empty => None,
            ScanPlan::SinglePass(s) => Some(s.launch.kernel.family),
            ScanPlan::Hierarchical(h) => h.steps.first().map(|s| s.launch().kernel.family),
            ScanPlan::Naive { launch, .. } => Some(launch.kernel.family),
        }
    }

    /// Bytes of temporary storage: (tile state, scratch).
    pub fn temp_bytes(&self) -> (u64, u64) {
        match self {
            ScanPlan::SinglePass(s) => (s.state.bytes(), 0),
            ScanPlan::Hierarchical(h) => (0, h.scratch_bytes),
            ScanPlan::Empty | ScanPlan::Naive { .. } => (0, 0),
        }
    }
}

/// Plans `req`.
pub fn plan(t: &Tuning, req: &ScanRequest) -> Result<ScanPlan> {
    if !req.op.supports(req.ty) {
        return Err(crate::element::unsupported(req.op, req.ty));
    }
    if req.n == 0 {
        return Ok(ScanPlan::Empty);
    }
    match req.algorithm {
        Algorithm::SinglePass => single_pass(t, req).map(ScanPlan::SinglePass),
        Algorithm::Hierarchical { block, propagation } => {
            hierarchical(t, req, block, propagation).map(ScanPlan::Hierarchical)
        }
        Algorithm::Naive => naive(t, req),
    }
}

/// Whether the pipelined scan is the default for `n` elements of `ty` with `op`.
pub fn pipelined_by_default(t: &Tuning, ty: ElemType, op: Op, n: u64) -> bool {
    let c = &t.choices;
    n.saturating_mul(ty.size() as u64) >= c.pipelined_min_bytes.at(ty.size()) && !c.never_pipelined.contains(&(ty, op))
}

/// The fixed combine orders of the deterministic scans: each a fixed function of the input,
/// computed on the CPU by `crate::reference::replica`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixedOrder {
    /// One tile per block (`single_pass_det_<t>_<op>`).
    Tiles,
    /// The pipelined kernel's tiles (`single_pass_pipe_det_<t>_<op>`).
    Pipelined,
}

/// The order a deterministic scan of `req` follows; `None` where the result does not depend on
/// the order (integers, min and max, or no deterministic order asked for) or the strategy is not
/// single-pass. It depends on the size, the operator, the kernel and status ordering asked for,
/// and the tuning's choices (`pipelined_fixed_order`), never on where the buffers lie: the
/// pipelined kernel takes unaligned buffers element by element rather than leaving the order.
pub fn fixed_order(t: &Tuning, req: &ScanRequest) -> Option<FixedOrder> {
    if !(req.deterministic && req.op.order_sensitive(req.ty)) || req.algorithm != Algorithm::SinglePass {
        return None;
    }
    let relaxed = req.ordering == StatusOrdering::Relaxed;
    Some(match req.kernel {
        ScanKernel::Pipelined => FixedOrder::Pipelined,
        ScanKernel::Auto
            if t.choices.pipelined_fixed_order && relaxed && pipelined_by_default(t, req.ty, req.op, req.n) =>
        {
            FixedOrder::Pipelined
        }
        ScanKernel::Auto | ScanKernel::Tiles | ScanKernel::Staged => FixedOrder::Tiles,
    })
}

fn single_pass(t: &Tuning, req: &ScanRequest) -> Result<SinglePass> {
    let (ty, size) = (req.ty, req.ty.size());
    let order = fixed_order(t, req);
    let fixed = order.is_some();
    let relaxed = req.ordering == StatusOrdering::Relaxed;
    let mut flags = scan_flags(req.exclusive, req.has_init);
    if !relaxed {
        flags |= ACQ_REL_STATUS;
    }
    let backoff_ns = req.backoff_ns.unwrap_or(t.choices.lookback_backoff_ns);
    let pipelined = match req.kernel {
        ScanKernel::Pipelined => {
            let why = if !relaxed {
                Some("publishes tile status with relaxed atomics only")
            } else if !req.aligned && !fixed {
                Some("needs input and output on 16-byte boundaries")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(Error::invalid(format!("the pipelined scan kernel {why}")));
            }
            true
        }
        ScanKernel::Auto => match order {
            Some(o) => o == FixedOrder::Pipelined,
            None => relaxed && req.aligned && pipelined_by_default(t, ty, req.op, req.n),
        },
        ScanKernel::Tiles | ScanKernel::Staged => false,
    };
    if pipelined {
        let p = t.shapes.scan_pipeline_of(ty, req.op);
        if fixed {
            let kernel = Kernel::new(Family::SinglePassPipelinedDet, ty, req.op);
            let mut s = pipelined_launch(t, kernel, p, req.n, size, flags, backoff_ns)?;
            s.launch.smem += smem::fixed_lookback(&t.shapes, size);
            return Ok(s);
        }
        let kernel = Kernel::new(Family::SinglePassPipelined, ty, req.op);
        return pipelined_launch(t, kernel, p, req.n, size, flags, backoff_ns);
    }
    let staged = match req.kernel {
        ScanKernel::Staged if fixed => {
            return Err(Error::invalid("the staged scan kernel has no fixed-order look-back; use the tiles kernel"))
        }
        ScanKernel::Staged if !matches!(size, 4 | 8) => {
            return Err(Error::invalid(format!(
                "the staged scan kernel is built for 4- and 8-byte elements, not {}",
                ty.name()
            )))
        }
        ScanKernel::Staged => true,
        ScanKernel::Auto => !fixed && t.choices.staged.at(size),
        _ => false,
    };
    let family = if fixed {
        Family::SinglePassDet
    } else if staged {
        Family::SinglePassStaged
    } else {
        Family::SinglePass
    };
    tiles_launch(t, Kernel::new(family, ty, req.op), req.n, size, flags, backoff_ns)
}

/// A one-tile-per-block single-pass launch of `kernel` over `n` values of `size` bytes (tiles in
/// shared memory for the staged families).
pub fn tiles_launch(
    t: &Tuning,
    kernel: Kernel,
    n: u64,
    size: usize,
    flags: u32,
    backoff_ns: u32,
) -> Result<SinglePass> {
    let staged = matches!(kernel.family, Family::SinglePassStaged | Family::RecurrenceStaged);
    let (tile, smem) = if staged {
        (t.shapes.staged.at(size), smem::single_pass_staged(&t.shapes, size))
    } else {
        (t.shapes.single_pass.at(size), smem::single_pass(&t.shapes, size))
    };
    let tiles = n.div_ceil(tile.tile() as u64);
    let launch = per_tile(kernel, tiles, tile.threads, smem);
    Ok(SinglePass { launch, state: TileState::per_tile(tiles, size)?, flags, backoff_ns, stages: None })
}

/// A persistent pipelined launch of `kernel` in the shape `p` over `n` values of `size` bytes, in
/// one chain of tiles.
pub fn pipelined_launch(
    t: &Tuning,
    kernel: Kernel,
    p: Pipeline,
    n: u64,
    size: usize,
    flags: u32,
    backoff_ns: u32,
) -> Result<SinglePass> {
    persistent_launch(t, kernel, p, n.div_ceil(p.tile() as u64), size, size, flags, backoff_ns)
}

/// A persistent launch of `kernel` in shape `p` (stages as the tuning's choices say) over
/// `tiles` tiles of `elem_size`-byte elements that publish `aggregate_size`-byte aggregates.
#[allow(clippy::too_many_arguments)]
pub fn persistent_launch(
    t: &Tuning,
    kernel: Kernel,
    mut p: Pipeline,
    tiles: u64,
    elem_size: usize,
    aggregate_size: usize,
    flags: u32,
    backoff_ns: u32,
) -> Result<SinglePass> {
    p.stages = t.choices.pipeline_stages.unwrap_or(p.stages);
    let launch = Launch {
        kernel,
        grid: Grid::Persistent { tiles, per_sm: t.choices.pipeline_blocks_per_sm },
        threads: p.threads(),
        smem: smem::pipelined(p, elem_size, aggregate_size),
    };
    let state = TileState::persistent(tiles, aggregate_size)?;
    Ok(SinglePass { launch, state, flags, backoff_ns, stages: Some(p.stages) })
}

/// Tile totals of every level: as many levels as `n` needs.
pub fn levels(n: u64, tile: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut count = n;
    while count > tile {
        count = count.div_ceil(tile);
        v.push(count);
    }
    v
}

/// Bytes of one level's tile totals, aligned for the next.
pub(crate) fn sums_bytes(tiles: u64, elem_size: usize) -> u64 {
    (tiles * elem_size as u64).next_multiple_of(256)
}

fn hierarchical(t: &Tuning, req: &ScanRequest, block: BlockAlgo, propagation: Propagation) -> Result<Hierarchical> {
    let (ty, op, size) = (req.ty, req.op, req.ty.size());
    let tile = t.shapes.hierarchical;
    check_blocks("the tiles of the hierarchical scan's first level", req.n.div_ceil(tile.tile() as u64))?;
    let launch = |family, tiles, smem| per_tile(Kernel::new(family, ty, op), tiles, tile.threads, smem);
    let scan_smem = smem::tile_scan(block, tile.threads, tile.items, size as u32);
    let reduce_smem = smem::tile_reduce(tile.threads, tile.items, size as u32);
    let mut steps = Vec::new();
    // (input, output, n, with init, exclusive, scratch offset): one level, innermost last.
    let mut level = (Buf::Input, Buf::Output, req.n, req.has_init, req.exclusive, 0u64);
    let mut after = Vec::new();
    loop {
        let (input, output, n, with_init, exclusive, scratch) = level;
        let tiles = n.div_ceil(tile.tile() as u64);
        if tiles == 1 {
            let flags = scan_flags(exclusive, with_init);
            let scan = launch(Family::HierTile(block), 1, scan_smem);
            steps.push(HierStep::TileScan { launch: scan, input, output, n, offsets: None, sums: None, flags });
            break;
        }
        let sums = Buf::Scratch(scratch);
        let flags = scan_flags(exclusive, false);
        let scan = launch(Family::HierTile(block), tiles, scan_smem);
        match propagation {
            Propagation::ReduceThenScan => {
                steps.push(HierStep::Reduce { launch: launch(Family::HierReduce, tiles, reduce_smem), input, n, sums });
                after.push(HierStep::TileScan {
                    launch: scan,
                    input,
                    output,
                    n,
                    offsets: Some(sums),
                    sums: None,
                    flags,
                });
            }
            Propagation::ScanThenAdd => {
                steps.push(HierStep::TileScan {
                    launch: scan,
                    input,
                    output,
                    n,
                    offsets: None,
                    sums: Some(sums),
                    flags,
                });
                after.push(HierStep::Add { launch: launch(Family::HierAdd, tiles, 0), output, n, offsets: sums });
            }
        }
        level = (sums, sums, tiles, with_init, true, scratch + sums_bytes(tiles, size));
    }
    let scratch_bytes = levels(req.n, tile.tile() as u64).iter().map(|&l| sums_bytes(l, size)).sum();
    steps.extend(after.into_iter().rev());
    Ok(Hierarchical { steps, scratch_bytes })
}

fn naive(t: &Tuning, req: &ScanRequest) -> Result<ScanPlan> {
    if req.n > NAIVE_MAX_N {
        return Err(Error::invalid(format!(
            "the naive O(n^2) scan is limited to n <= {NAIVE_MAX_N} (about {:.1e} element reads there); \
             n = {} would take about {:.0}x as long: use the single-pass or hierarchical strategy",
            (NAIVE_MAX_N as f64).powi(2) / 2.0,
            req.n,
            (req.n as f64 / NAIVE_MAX_N as f64).powi(2)
        )));
    }
    if req.in_place {
        return Err(Error::invalid("the naive scan cannot run in place (every thread reads the whole prefix)"));
    }
    let threads = t.shapes.naive_threads;
    let launch = per_tile(Kernel::new(Family::Naive, req.ty, req.op), req.n.div_ceil(threads as u64), threads, 0);
    Ok(ScanPlan::Naive { launch, flags: scan_flags(req.exclusive, req.has_init) })
}

/// The linear recurrence over `n` affine maps of the float type `ty` (`f32` or `f64`), starting
/// from the constant map that carries `x0` (see `apps::recurrence`).
pub fn recurrence(t: &Tuning, ty: ElemType, n: u64, kernel: ScanKernel, aligned: bool) -> Result<SinglePass> {
    let map = 2 * ty.size();
    let flags = scan_flags(false, true);
    let backoff = t.choices.lookback_backoff_ns;
    let by_default = n.saturating_mul(map as u64) >= t.choices.recurrence_pipelined_min_bytes;
    let pipelined = match kernel {
        ScanKernel::Pipelined if !aligned => {
            return Err(Error::invalid("the pipelined recurrence needs maps on 16-byte boundaries"))
        }
        ScanKernel::Pipelined => true,
        ScanKernel::Auto => aligned && by_default,
        ScanKernel::Tiles | ScanKernel::Staged => false,
    };
    if pipelined {
        let p = t.shapes.recurrence_pipeline.at(map);
        return pipelined_launch(t, Kernel::typed(Family::RecurrencePipelined, ty), p, n, map, flags, backoff);
    }
    let staged = kernel == ScanKernel::Staged || (kernel == ScanKernel::Auto && t.choices.staged.at(map));
    let family = if staged { Family::RecurrenceStaged } else { Family::Recurrence };
    tiles_launch(t, Kernel::typed(family, ty), n, map, flags, backoff)
}

/// A widening sum as the planner sees it: `n` elements of `src` into the wider `ty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideningRequest {
    pub src: Source,
    pub ty: ElemType,
    pub n: u64,
    pub exclusive: bool,
    pub has_init: bool,
    /// The look-back in fixed order, for float sums (integer sums are exact in any order).
    pub deterministic: bool,
    pub kernel: ScanKernel,
    /// Input and output start on 16-byte boundaries.
    pub aligned: bool,
}

/// Plans a widening sum: the pipelined kernel where the wide scan would take it (by the output's
/// bytes), else one tile per block; the fixed-order look-back for deterministic float sums.
pub fn widening(t: &Tuning, req: &WideningRequest) -> Result<ScanPlan> {
    let (src, ty) = (req.src, req.ty);
    if !src.widens_to(ty) {
        let to: Vec<&str> = ElemType::ALL.into_iter().filter(|&o| src.widens_to(o)).map(|o| o.name()).collect();
        return Err(Error::invalid(format!(
            "no widening scan from {} into {}: {} widens into {}",
            src.name(),
            ty.name(),
            src.name(),
            to.join(", ")
        )));
    }
    let fixed = req.deterministic && src.is_float();
    let pipelined = match req.kernel {
        ScanKernel::Pipelined if fixed => return Err(Error::invalid(
            "the pipelined scan kernel has no fixed-order look-back (deterministic float sums run on the tiles kernel)",
        )),
        ScanKernel::Pipelined if !req.aligned => {
            return Err(Error::invalid("the pipelined scan kernel needs input and output on 16-byte boundaries"))
        }
        ScanKernel::Staged => {
            return Err(Error::invalid("a widening scan has no staged kernel; use tiles or pipelined"))
        }
        ScanKernel::Pipelined => true,
        ScanKernel::Auto => !fixed && req.aligned && pipelined_by_default(t, ty, Op::Add, req.n),
        ScanKernel::Tiles => false,
    };
    if req.n == 0 {
        return Ok(ScanPlan::Empty);
    }
    let flags = scan_flags(req.exclusive, req.has_init);
    let backoff = t.choices.lookback_backoff_ns;
    if pipelined {
        let p = t.shapes.widening_pipeline_of(src.size(), ty);
        let kernel = Kernel::new(Family::WideningPipelined(src), ty, Op::Add);
        let tiles = req.n.div_ceil(p.tile() as u64);
        return persistent_launch(t, kernel, p, tiles, src.size(), ty.size(), flags, backoff).map(ScanPlan::SinglePass);
    }
    let family = if fixed { Family::WideningDet(src) } else { Family::Widening(src) };
    tiles_launch(t, Kernel::new(family, ty, Op::Add), req.n, ty.size(), flags, backoff).map(ScanPlan::SinglePass)
}

/// The `u32` add scan of the diagnostic timeline kernel (one tile per block, in registers).
pub fn timeline(t: &Tuning, n: u64) -> Result<SinglePass> {
    let kernel = Kernel::new(Family::SinglePassTimeline, ElemType::U32, Op::Add);
    tiles_launch(t, kernel, n, 4, scan_flags(false, false), t.choices.lookback_backoff_ns)
}

/// Largest input a traced (one-block, one element per thread) scan accepts.
pub const TRACE_MAX_N: u32 = 1024;

/// A traced scan of `m` elements in one block, one element per thread.
pub fn trace(ty: ElemType, op: Op, algorithm: BlockAlgo, m: usize) -> Result<Launch> {
    if !op.supports(ty) {
        return Err(crate::element::unsupported(op, ty));
    }
    if m == 0 || m > TRACE_MAX_N as usize {
        return Err(Error::invalid(format!(
            "a traced scan runs in one block: give 1 to {TRACE_MAX_N} elements (got {m})"
        )));
    }
    if !algorithm.traceable() {
        return Err(Error::invalid(format!(
            "{} keeps its state in registers; trace kogge-stone, blelloch or brent-kung instead",
            algorithm.name()
        )));
    }
    let smem = smem::trace(algorithm, m as u32, ty.size() as u32);
    Ok(per_tile(Kernel::new(Family::Trace(algorithm), ty, op), 1, m as u32, smem))
}

/// Whether `ptr` starts on a 16-byte boundary.
pub fn aligned(ptr: u64) -> bool {
    ptr.is_multiple_of(VECTOR_BYTES as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::tuning::for_arch;

    const SM90: &Tuning = for_arch(90);
    const MIB: u64 = 1 << 20;

    fn family(plan: &ScanPlan) -> Family {
        match plan {
            ScanPlan::SinglePass(s) => s.launch.kernel.family,
            other => panic!("not single-pass: {other:?}"),
        }
    }

    fn request(ty: ElemType, op: Op, n: u64) -> ScanRequest {
        ScanRequest::new(ty, op, n)
    }

    #[test]
    fn large_inputs_take_the_pipelined_kernel_small_ones_the_tiles() {
        let at =
            |ty: ElemType, op, bytes: u64| family(&plan(SM90, &request(ty, op, bytes / ty.size() as u64)).unwrap());
        assert_eq!(at(ElemType::U32, Op::Add, 4 * MIB), Family::SinglePassPipelined);
        assert_eq!(at(ElemType::U32, Op::Add, 4 * MIB - 4), Family::SinglePass);
        assert_eq!(at(ElemType::F64, Op::Add, 8 * MIB), Family::SinglePassPipelined);
        assert_eq!(at(ElemType::F64, Op::Add, 8 * MIB - 8), Family::SinglePassStaged, "8-byte tiles are staged");
        assert_eq!(at(ElemType::U16, Op::Add, 64 * MIB - 2), Family::SinglePass);
        assert_eq!(at(ElemType::U8, Op::Add, 255 * MIB), Family::SinglePass, "u8 waits for 256 MiB");
        assert_eq!(at(ElemType::U8, Op::Add, 256 * MIB), Family::SinglePassPipelined);
        assert_eq!(at(ElemType::U8, Op::Mul, 1 << 40), Family::SinglePass, "u8 mul never pipelines");
        let unaligned = ScanRequest { aligned: false, ..request(ElemType::U32, Op::Add, 1 << 28) };
        assert_eq!(family(&plan(SM90, &unaligned).unwrap()), Family::SinglePass);
        let det = ScanRequest { deterministic: true, ..request(ElemType::F32, Op::Add, 1 << 28) };
        let mut t = *SM90;
        t.choices.pipelined_fixed_order = false;
        assert_eq!(family(&plan(&t, &det).unwrap()), Family::SinglePassDet, "the tiles order where not chosen");
        t.choices.pipelined_fixed_order = true;
        assert_eq!(family(&plan(&t, &det).unwrap()), Family::SinglePassPipelinedDet);
        let det_small = ScanRequest { n: (4 * MIB - 4) / 4, ..det };
        assert_eq!(family(&plan(&t, &det_small).unwrap()), Family::SinglePassDet);
        let det_unaligned = ScanRequest { aligned: false, ..det };
        assert_eq!(
            family(&plan(&t, &det_unaligned).unwrap()),
            Family::SinglePassPipelinedDet,
            "the fixed order does not depend on where the buffers lie"
        );
        let det_acq = ScanRequest { ordering: StatusOrdering::AcquireRelease, ..det };
        assert_eq!(family(&plan(&t, &det_acq).unwrap()), Family::SinglePassDet);
        let det_max = ScanRequest { deterministic: true, ..request(ElemType::F32, Op::Max, 1 << 28) };
        assert_eq!(family(&plan(SM90, &det_max).unwrap()), Family::SinglePassPipelined, "max is exact in any order");
    }

    #[test]
    fn widening_sums_pipeline_by_the_output_bytes_and_fix_the_order_of_half_floats() {
        let r = |src, ty, n| WideningRequest {
            src,
            ty,
            n,
            exclusive: false,
            has_init: false,
            deterministic: false,
            kernel: ScanKernel::Auto,
            aligned: true,
        };
        let at = |req: WideningRequest| family(&widening(SM90, &req).unwrap());
        let bytes = r(Source::U8, ElemType::U32, 4 * MIB / 4);
        assert_eq!(at(bytes), Family::WideningPipelined(Source::U8), "4 MiB written: pipelined");
        assert_eq!(at(WideningRequest { n: bytes.n - 1, ..bytes }), Family::Widening(Source::U8));
        assert_eq!(at(WideningRequest { aligned: false, ..bytes }), Family::Widening(Source::U8));
        let halves = WideningRequest { deterministic: true, ..r(Source::F16, ElemType::F32, 1 << 28) };
        assert_eq!(at(halves), Family::WideningDet(Source::F16));
        let ints = WideningRequest { deterministic: true, ..bytes };
        assert_eq!(at(ints), Family::WideningPipelined(Source::U8), "integer sums are exact in any order");
        assert_eq!(widening(SM90, &WideningRequest { n: 0, ..bytes }).unwrap(), ScanPlan::Empty);
        let e = |req: WideningRequest| widening(SM90, &req).unwrap_err().to_string();
        assert!(e(r(Source::U32, ElemType::U32, 9)).contains("u32 widens into u64, i64"));
        assert!(e(WideningRequest { kernel: ScanKernel::Pipelined, ..halves }).contains("fixed-order"));
        assert!(e(WideningRequest { kernel: ScanKernel::Staged, ..bytes }).contains("no staged kernel"));
        let unaligned = WideningRequest { kernel: ScanKernel::Pipelined, aligned: false, ..bytes };
        assert!(e(unaligned).contains("16-byte boundaries"));
    }

    #[test]
    fn a_chosen_kernel_runs_or_is_refused_with_the_reason() {
        let r = |kernel| ScanRequest { kernel, ..request(ElemType::U32, Op::Add, 1000) };
        assert_eq!(family(&plan(SM90, &r(ScanKernel::Pipelined)).unwrap()), Family::SinglePassPipelined);
        assert_eq!(family(&plan(SM90, &r(ScanKernel::Staged)).unwrap()), Family::SinglePassStaged);
        assert_eq!(family(&plan(SM90, &r(ScanKernel::Tiles)).unwrap()), Family::SinglePass);
        let e = |req: ScanRequest| plan(SM90, &req).unwrap_err().to_string();
        assert!(e(ScanRequest { aligned: false, ..r(ScanKernel::Pipelined) }).contains("16-byte boundaries"));
        let acq = ScanRequest { ordering: StatusOrdering::AcquireRelease, ..r(ScanKernel::Pipelined) };
        assert!(e(acq).contains("relaxed atomics only"));
        let det =
            ScanRequest { deterministic: true, kernel: ScanKernel::Pipelined, ..request(ElemType::F64, Op::Mul, 9) };
        assert_eq!(family(&plan(SM90, &det).unwrap()), Family::SinglePassPipelinedDet);
        assert_eq!(
            family(&plan(SM90, &ScanRequest { aligned: false, ..det }).unwrap()),
            Family::SinglePassPipelinedDet
        );
        assert!(e(ScanRequest { kernel: ScanKernel::Staged, ..det }).contains("fixed-order"));
        assert!(e(ScanRequest { kernel: ScanKernel::Staged, ..request(ElemType::U16, Op::Add, 9) })
            .contains("4- and 8-byte"));
        assert!(matches!(
            plan(SM90, &request(ElemType::F32, Op::Xor, 9)),
            Err(Error::UnsupportedOp { op: Op::Xor, ty: ElemType::F32, .. })
        ));
    }

    /// The numbers follow from the SM90 table by hand: u32 tiles of 256 threads x 32 items
    /// (8192 elements); f64 pipelines striped over 4 warps of 128-byte lanes (16 items, 2048
    /// elements a tile), 2 scanning warps' worth of threads plus a loader and a look-back warp,
    /// 6 stages.
    #[test]
    fn tiles_state_and_shared_memory_follow_the_tuning() {
        let ScanPlan::SinglePass(s) = plan(SM90, &request(ElemType::U32, Op::Add, 100_000)).unwrap() else { panic!() };
        assert_eq!(s.launch.grid, Grid::Blocks(13), "100,000 elements in tiles of 8192");
        assert_eq!(s.launch.threads, 256);
        // The tile index (16 bytes), two windows of 8 warp values (32 each), and the
        // deterministic look-back's 9 windows of 32 values (1152).
        assert_eq!(s.launch.smem, 1232);
        assert_eq!(s.state.bytes(), 128 + 13 * 8, "the counter's line, then one 8-byte word a tile");
        assert_eq!(s.stages, None);
        let ScanPlan::SinglePass(p) = plan(SM90, &request(ElemType::F64, Op::Max, 1 << 26)).unwrap() else { panic!() };
        assert_eq!(p.launch.grid, Grid::Persistent { tiles: 32768, per_sm: None }, "2^26 elements in tiles of 2048");
        assert_eq!((p.launch.threads, p.stages), (320, Some(6)));
        assert_eq!(p.state.bytes(), 128 + 32768 * 16, "one 16-byte word a tile");
    }

    #[test]
    fn tuning_choices_change_the_pipeline_without_rebuilding() {
        let mut t = *SM90;
        t.choices.pipeline_stages = Some(4);
        t.choices.pipeline_blocks_per_sm = Some(1);
        let ScanPlan::SinglePass(p) = plan(&t, &request(ElemType::U32, Op::Add, 1 << 28)).unwrap() else { panic!() };
        assert_eq!(p.stages, Some(4));
        // 4 stages: their barrier words (128 bytes), tile indices (16), the 16 scanning shares'
        // totals (64), aggregates and prefixes (2 x 16), and 4 tiles of 4096 u32 (65536).
        assert_eq!(p.launch.smem, 128 + 16 + 64 + 32 + 65536);
        assert!(matches!(p.launch.grid, Grid::Persistent { per_sm: Some(1), .. }));
        t.choices.pipelined_min_bytes = scan_abi::shape::BySize::split(u64::MAX, u64::MAX);
        assert_eq!(family(&plan(&t, &request(ElemType::U32, Op::Add, 1 << 28)).unwrap()), Family::SinglePass);
    }

    #[test]
    fn levels_continue_until_one_tile_holds_the_totals() {
        assert!(levels(2048, 2048).is_empty());
        assert_eq!(levels(2049, 2048), vec![2]);
        assert_eq!(levels(1 << 28, 2048), vec![131072, 64]);
        assert_eq!(levels((1 << 33) + 1, 2048), vec![4194305, 2049, 2]);
    }

    /// The steps of each propagation: reduce down, one tile scan at the top, then the rescans (or
    /// the offset additions) back up, each level's totals in their own scratch.
    #[test]
    fn hierarchical_steps_walk_the_levels_down_and_back() {
        let tile = SM90.shapes.hierarchical.tile() as u64;
        let n = tile * tile + 5;
        let algo = |propagation| Algorithm::Hierarchical { block: BlockAlgo::Blelloch, propagation };
        let req = |propagation| ScanRequest {
            algorithm: algo(propagation),
            has_init: true,
            ..request(ElemType::U32, Op::Add, n)
        };
        let ScanPlan::Hierarchical(h) = plan(SM90, &req(Propagation::ReduceThenScan)).unwrap() else { panic!() };
        let names: Vec<&str> = h
            .steps
            .iter()
            .map(|s| match s {
                HierStep::Reduce { .. } => "reduce",
                HierStep::TileScan { .. } => "scan",
                HierStep::Add { .. } => "add",
            })
            .collect();
        assert_eq!(names, ["reduce", "reduce", "scan", "scan", "scan"]);
        let first_level = (tile + 1) * 4;
        assert_eq!(h.scratch_bytes, first_level.next_multiple_of(256) + 256);
        let HierStep::TileScan { flags, input, .. } = h.steps[2] else { panic!() };
        assert_eq!((flags, input), (scan_flags(true, true), Buf::Scratch(first_level.next_multiple_of(256))));
        let HierStep::TileScan { flags, offsets, output, .. } = h.steps[4] else { panic!() };
        assert_eq!((flags, offsets, output), (scan_flags(false, false), Some(Buf::Scratch(0)), Buf::Output));
        let ScanPlan::Hierarchical(h) = plan(SM90, &req(Propagation::ScanThenAdd)).unwrap() else { panic!() };
        assert!(matches!(h.steps.last(), Some(HierStep::Add { output: Buf::Output, offsets: Buf::Scratch(0), .. })));
        assert_eq!(h.steps.len(), 5);
    }

    #[test]
    fn naive_scans_are_limited_and_never_in_place() {
        let req = ScanRequest { algorithm: Algorithm::Naive, ..request(ElemType::U32, Op::Add, NAIVE_MAX_N + 1) };
        assert!(plan(SM90, &req).unwrap_err().to_string().contains("limited to n <= 262144"));
        let req = ScanRequest { n: 10, in_place: true, ..req };
        assert!(plan(SM90, &req).unwrap_err().to_string().contains("in place"));
        assert_eq!(plan(SM90, &request(ElemType::U32, Op::Add, 0)).unwrap(), ScanPlan::Empty);
    }

    #[test]
    fn recurrences_pick_their_kernel_by_size() {
        let f = |ty, n, kernel| recurrence(SM90, ty, n, kernel, true).unwrap().launch.kernel.family;
        assert_eq!(f(ElemType::F32, 1 << 20, ScanKernel::Auto), Family::RecurrenceStaged, "8-byte maps are staged");
        assert_eq!(f(ElemType::F32, 8 << 20, ScanKernel::Auto), Family::RecurrencePipelined);
        assert_eq!(f(ElemType::F64, 1 << 20, ScanKernel::Auto), Family::RecurrenceStaged);
        assert_eq!(f(ElemType::F64, 4 << 20, ScanKernel::Auto), Family::RecurrencePipelined);
        assert_eq!(f(ElemType::F64, 1 << 20, ScanKernel::Tiles), Family::Recurrence);
        assert!(recurrence(SM90, ElemType::F32, 9, ScanKernel::Pipelined, false).is_err());
    }
}
