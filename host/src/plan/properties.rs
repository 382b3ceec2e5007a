//! Every planner, for any tuning that `Tuning::validate` accepts and any request of up to 2^34
//! elements (matrices of up to that many too): a plan or an error, never a panic or an
//! arithmetic overflow (tests build with overflow checks). Persistent launches stay within the
//! kernels' 32-bit tile indices.

use super::batched::{self, BatchedRequest};
use super::scan::{self, ScanRequest};
use super::segmented::Marks;
use super::{compact, multi, partition, segmented, sort, Grid, Launch};
use crate::options::{
    Algorithm, Axis, BatchedKernel, CompactKernel, Matrix, Propagation, ScanKernel, SegmentedKernel, StatusOrdering,
};
use proptest::prelude::*;
use proptest::test_runner::Config;
use scan_abi::block::BlockAlgo;
use scan_abi::kernel::{ARITHMETIC_OPS, WIDE_TYPES};
use scan_abi::partition::{Digit, MAX_BINS};
use scan_abi::shape::BySize;
use scan_abi::tuning::{for_arch, limits, Range, Tuning};
use scan_abi::{ElemType, Family, Op};

/// The largest request.
const MAX_N: u64 = 1 << 34;

/// Sizes from 0 to 2^34, with the edges where products and 32-bit indices break more likely.
fn size() -> impl Strategy<Value = u64> {
    let edges = [0, 1, 2, 255, 256, 257, 32767, 32768, 32769, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 32) + 1];
    prop_oneof![
        2 => 0..=MAX_N,
        2 => 0u64..100_000,
        1 => prop::sample::select(edges.into_iter().chain([(1 << 33) + 3, MAX_N - 1, MAX_N]).collect::<Vec<_>>()),
    ]
}

/// A value `r` accepts, its ends more often.
fn in_range(r: Range) -> BoxedStrategy<u64> {
    if !r.only.is_empty() {
        return prop::sample::select(r.only.to_vec()).boxed();
    }
    prop_oneof![Just(r.min), Just(r.max), r.min..=r.max].boxed()
}

fn small(r: Range) -> BoxedStrategy<u32> {
    in_range(r).prop_map(|v| v as u32).boxed()
}

/// Any threshold: 0 (always), the largest (never), or between.
fn threshold() -> BoxedStrategy<u64> {
    prop_oneof![Just(0), Just(u64::MAX), any::<u64>(), 0u64..(1 << 40)].boxed()
}

fn by_size<T: std::fmt::Debug + Copy + 'static>(s: BoxedStrategy<T>) -> impl Strategy<Value = BySize<T>> {
    [s.clone(), s.clone(), s.clone(), s.clone(), s].prop_map(BySize)
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

/// Tunings whose choices and launch bounds are anything `validate` accepts, on the compiled
/// shapes.
fn tuning() -> impl Strategy<Value = Tuning> {
    let pairs: Vec<(ElemType, Op)> =
        ElemType::ALL.into_iter().flat_map(|ty| Op::ALL.into_iter().map(move |op| (ty, op))).collect();
    let staged = (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(a, b, c)| BySize([false, false, a, b, c]));
    let strips = prop::collection::vec((threshold(), small(limits::COLUMN_STRIPS)), 0..4);
    let thresholds = (by_size(threshold()), threshold(), threshold(), threshold(), threshold(), threshold());
    let pipelines = (
        prop::option::of(small(limits::PIPE_STAGES)),
        prop::option::of(small(limits::PIPE_BLOCKS)),
        small(limits::BACKOFF_NS),
        prop::sample::subsequence(pairs, 0..4),
        staged,
    );
    let columns = (
        strips,
        prop::option::of(small(limits::COLUMN_STRIP)),
        by_size(any::<bool>().boxed()),
        by_size(threshold()),
        prop::option::of(small(limits::COLUMN_WINDOW)),
    );
    let bulk = (in_range(limits::BULK_MAX_VECTORS), small(limits::BULK_ROWS), small(limits::BULK_AHEAD));
    let rows = (in_range(limits::ROW_KERNEL_MIN_ROWS), in_range(limits::ROW_KERNEL_MAX_BLOCKS), any::<bool>());
    (thresholds, pipelines, columns, bulk, rows).prop_map(
        |(
            (pipelined, recurrence, compact, columns32, columns16, long_rows),
            (stages, blocks, backoff, never, staged),
            (strips, strip, vector_tiles, window4, window),
            (bulk_max, bulk_rows, bulk_ahead),
            (min_rows, max_blocks, bounds),
        )| {
            let mut t = *for_arch(90);
            let c = &mut t.choices;
            c.pipelined_min_bytes = pipelined;
            c.never_pipelined = leak(never);
            c.staged = staged;
            c.recurrence_pipelined_min_bytes = recurrence;
            c.compact_pipelined_min_bytes = compact;
            c.pipeline_stages = stages;
            c.pipeline_blocks_per_sm = blocks;
            c.lookback_backoff_ns = backoff;
            c.column_strips = leak(strips);
            c.column_strip = strip;
            c.vector_column_tiles = vector_tiles;
            c.window4_max_strips = window4;
            c.column_window = window;
            c.bulk_max_row_vectors = bulk_max;
            c.bulk_rows = bulk_rows;
            c.bulk_ahead = bulk_ahead;
            c.columns_pipelined_min_bytes = columns32;
            c.columns16_pipelined_min_bytes = columns16;
            c.row_kernel_min_rows = min_rows;
            c.row_kernel_max_blocks = max_blocks;
            c.long_rows_pipelined_min_tiles = long_rows;
            if !bounds {
                t.launch_bounds = &[];
            }
            t
        },
    )
}

fn elem_type() -> impl Strategy<Value = ElemType> {
    prop::sample::select(ElemType::ALL.to_vec())
}

fn op() -> impl Strategy<Value = Op> {
    prop::sample::select(Op::ALL.to_vec())
}

fn algorithm() -> impl Strategy<Value = Algorithm> {
    let hierarchical = (prop::sample::select(BlockAlgo::ALL.to_vec()), prop::sample::select(Propagation::ALL.to_vec()))
        .prop_map(|(block, propagation)| Algorithm::Hierarchical { block, propagation });
    prop_oneof![Just(Algorithm::SinglePass), hierarchical, Just(Algorithm::Naive)]
}

fn scan_request() -> impl Strategy<Value = ScanRequest> {
    let what = (elem_type(), op(), size(), any::<bool>(), any::<bool>());
    let how = (
        algorithm(),
        prop::sample::select(ScanKernel::ALL.to_vec()),
        any::<bool>(),
        prop::sample::select(StatusOrdering::ALL.to_vec()),
        prop::option::of(any::<u32>()),
        any::<bool>(),
        any::<bool>(),
    );
    (what, how).prop_map(
        |(
            (ty, op, n, exclusive, has_init),
            (algorithm, kernel, deterministic, ordering, backoff_ns, aligned, in_place),
        )| {
            ScanRequest {
                ty,
                op,
                n,
                exclusive,
                has_init,
                algorithm,
                kernel,
                deterministic,
                ordering,
                backoff_ns,
                aligned,
                in_place,
            }
        },
    )
}

/// Matrices of at most 2^34 elements: any shape; rows of a few elements (the 16- and 32-byte
/// rows of the pipelined column kernels among them) or of a power of two of them (the column
/// tiles in shared memory) below many rows or few; few rows.
fn matrix() -> impl Strategy<Value = Matrix> {
    let rows_for = |cols: u64| {
        let most = MAX_N / cols.max(1);
        (prop_oneof![0..=most, 0..=most.min(100_000), 0..=most.min(300)], Just(cols))
    };
    let any_shape = size().prop_flat_map(|rows| (Just(rows), 0..=MAX_N / rows.max(1)));
    let narrow = (0u64..=64).prop_flat_map(rows_for);
    let powers = (0u32..=10).prop_flat_map(move |k| rows_for(1 << k));
    let short = (0u64..=300).prop_flat_map(|rows| (Just(rows), 0..=MAX_N / rows.max(1)));
    prop_oneof![any_shape, narrow, powers, short].prop_map(|(rows, cols)| Matrix::new(rows, cols))
}

fn batched_request() -> impl Strategy<Value = BatchedRequest> {
    let kernel = prop::sample::select(BatchedKernel::ALL.to_vec());
    let axis = prop::sample::select(Axis::ALL.to_vec());
    // Mostly what the batched kernels are built for (arithmetic on 32- and 64-bit types).
    let ty = prop_oneof![4 => prop::sample::select(WIDE_TYPES.to_vec()), 1 => elem_type()];
    let op = prop_oneof![4 => prop::sample::select(ARITHMETIC_OPS.to_vec()), 1 => op()];
    (ty, op, any::<bool>(), matrix(), axis, kernel, any::<bool>()).prop_map(
        |(ty, op, exclusive, matrix, axis, kernel, aligned)| BatchedRequest {
            ty,
            op,
            exclusive,
            matrix,
            axis,
            kernel,
            aligned,
        },
    )
}

fn digit() -> impl Strategy<Value = Digit> {
    let bins = prop_oneof![0..=MAX_BINS + 2, Just(u32::MAX)];
    prop_oneof![
        (0u32..64).prop_map(Digit::radix),
        bins.prop_map(|b| Digit::bins(b, -1.0, 1.0)),
        (2u32..u32::MAX).prop_map(|mode| Digit { mode, ..Digit::radix(0) }),
    ]
}

/// What the kernels take of a launch: a block of 1 to 1024 threads, and a persistent grid's
/// tiles within their 32-bit indices (a grid of blocks is checked against the device's limit at
/// launch).
fn launch_fits(l: &Launch) -> Result<(), TestCaseError> {
    prop_assert!(l.threads >= 1 && l.threads <= 1024, "{l:?}");
    if let Grid::Persistent { tiles, per_sm } = l.grid {
        prop_assert!(tiles < super::MAX_TILES, "{l:?}");
        prop_assert!(per_sm.is_none_or(|b| b >= 1), "{l:?}");
    }
    Ok(())
}

fn config() -> Config {
    Config { cases: 2000, failure_persistence: None, ..Config::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_tunings_are_valid(t in tuning()) {
        prop_assert_eq!(t.validate(), Ok(()));
    }

    #[test]
    fn scans_plan_or_refuse(t in tuning(), req in scan_request()) {
        match scan::plan(&t, &req) {
            Ok(plan) => {
                let _ = plan.temp_bytes();
                match &plan {
                    scan::ScanPlan::SinglePass(s) => launch_fits(&s.launch)?,
                    scan::ScanPlan::Hierarchical(h) => {
                        for step in &h.steps {
                            launch_fits(step.launch())?;
                        }
                    }
                    scan::ScanPlan::Naive { launch, .. } => launch_fits(launch)?,
                    scan::ScanPlan::Empty => prop_assert_eq!(req.n, 0),
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        let _ = scan::pipelined_by_default(&t, req.ty, req.op, req.n);
        let _ = scan::timeline(&t, req.n);
        let _ = scan::trace(req.ty, req.op, BlockAlgo::KoggeStone, req.n as usize);
        if let Ok(s) = scan::recurrence(&t, req.ty, req.n, req.kernel, req.aligned) {
            launch_fits(&s.launch)?;
            let _ = s.state.bytes();
        }
    }

    #[test]
    fn batched_scans_plan_or_refuse(t in tuning(), req in batched_request()) {
        if let Ok(plan) = batched::plan(&t, &req) {
            let _ = plan.temp_bytes();
            let _ = plan.family();
        }
        let Matrix { rows, cols } = req.matrix;
        let size = req.ty.size();
        let _ = batched::column_plan(&t, rows, cols, size);
        let _ = batched::column_vec_plan(&t, rows, cols, size);
        let _ = batched::column_bulk_plan(&t, rows, cols, size, req.aligned);
        let _ = batched::uses_columns_pipelined(&t, rows, cols, size);
        let _ = batched::uses_row_kernel(&t, rows, cols, size);
        let _ = batched::long_rows_pipelined(&t, rows, cols, req.ty, req.op);
        let _ = batched::short_rows_per_tile(&t, cols, size);
    }

    #[test]
    fn the_other_planners_plan_or_refuse(
        t in tuning(),
        ty in elem_type(),
        op in op(),
        n in size(),
        pred in 0u32..4,
        kernel in prop::sample::select(CompactKernel::ALL.to_vec()),
        digit in digit(),
        world in 0usize..=16,
        flags in any::<(bool, bool)>(),
    ) {
        if let Ok(p) = compact::plan(&t, ty, n, pred, kernel, flags.0) {
            launch_fits(&p.launch)?;
            let _ = p.state.bytes();
        }
        if let Ok(p) = sort::plan(&t, ty, n, flags.0, flags.1) {
            launch_fits(&p.counting)?;
            let _ = p.state.bytes();
        }
        if let Ok(p) = partition::plan(&t, ty, n, &digit) {
            let _ = p.scan.temp_bytes();
        }
        let _ = partition::helper(&t, Family::CsrCount, n);
        let _ = partition::count_scan(&t, n, flags.1);
        for marks in [Marks::Fixed, Marks::Flags, Marks::Keys(ty)] {
            for kernel in SegmentedKernel::ALL {
                if let Ok(p) = segmented::plan(&t, ty, op, n, flags.1, kernel, marks) {
                    launch_fits(&p.launch)?;
                    let _ = p.temp_bytes(n);
                }
            }
        }
        let _ = segmented::heads(&t, n);
        let req = ScanRequest { exclusive: flags.0, has_init: flags.1, ..ScanRequest::new(ty, op, n) };
        if let Ok(p) = multi::plan(&t, &req, world) {
            prop_assert!(!p.reduce.is_empty());
        }
    }
}
