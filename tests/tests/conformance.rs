//! Every strategy, block algorithm, kernel, element type and operator, inclusive and exclusive,
//! against the CPU reference over awkward sizes; user mistakes; NaN and infinities; the
//! temporary storage's reuse and bounds.

use gpu_scan::{with_elem_type, Algorithm, BlockAlgo, ElemType, Gpu, Op, Propagation, ScanKernel, TempStorage};
use std::process::ExitCode;
use workspace_tests::checks::{assert_none_failed, check, check_exact, check_exact_data, Case};
use workspace_tests::exact;
use workspace_tests::gpu_test;

fn main() -> ExitCode {
    workspace_tests::main(vec![
        gpu_test("single_pass_every_type_operator_mode_and_size", single_pass_every_type_operator_mode_and_size),
        gpu_test("staged_tiles_every_type_operator_mode_and_size", staged_every_type_operator_mode_and_size),
        gpu_test("pipelined_every_type_operator_mode_and_size", pipelined_every_type_operator_mode_and_size),
        gpu_test(
            "hierarchical_every_block_algorithm_and_propagation",
            hierarchical_every_block_algorithm_and_propagation,
        ),
        gpu_test("hierarchical_three_levels", hierarchical_three_levels),
        gpu_test("naive_every_type_operator_and_mode", naive_every_type_operator_and_mode),
        gpu_test("naive_refuses_large_inputs_with_a_clear_error", naive_refuses_large_inputs_with_a_clear_error),
        gpu_test("hundred_million_elements", hundred_million_elements),
        gpu_test("in_place", in_place),
        gpu_test(
            "non_commutative_operator_is_combined_in_index_order",
            non_commutative_operator_is_combined_in_index_order,
        ),
        gpu_test("more_than_two_to_the_32_elements", more_than_two_to_the_32_elements),
        gpu_test("temporary_storage_is_reused_across_calls", temporary_storage_is_reused_across_calls),
        gpu_test(
            "kernels_stay_within_the_temporary_storage_their_plans_reserve",
            kernels_stay_within_their_temporary_storage,
        ),
        gpu_test("user_mistakes_are_errors_not_panics", user_mistakes_are_errors_not_panics),
        gpu_test(
            "nan_and_infinities_behave_as_in_the_sequential_scan",
            nan_and_infinities_behave_as_in_the_sequential_scan,
        ),
        gpu_test("timeline_kernel_scans_like_the_default_and_records_every_tile", timeline_kernel_records_every_tile),
        gpu_test("single_pass_float_kernels_are_exact_on_integer_valued_floats", single_pass_floats_exact),
        gpu_test("hierarchical_floats_are_exact_on_integer_valued_floats", hierarchical_floats_exact),
        gpu_test("naive_floats_are_exact_on_integer_valued_floats", naive_floats_exact),
        gpu_test("integer_valued_floats_at_a_hundred_million_are_exact", hundred_million_integer_valued_floats),
    ])
}

fn shapes() -> &'static scan_abi::tuning::Shapes {
    &scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH).shapes
}

fn pairs() -> impl Iterator<Item = (ElemType, Op)> {
    ElemType::ALL.into_iter().flat_map(|t| Op::ALL.into_iter().filter(move |o| o.supports(t)).map(move |o| (t, o)))
}

/// 0, 1, warp and block edges, tile-1/tile/tile+1, primes, and 2^20+7.
fn sizes(tile: usize, largest: usize) -> Vec<usize> {
    let mut v = vec![0, 1, 31, 32, 33, 1023, 1024, 1025, tile - 1, tile, tile + 1, 4099, 65521, 131071, (1 << 20) + 7];
    v.retain(|&n| n <= largest);
    v
}

fn hierarchical(block: BlockAlgo, propagation: Propagation) -> Algorithm {
    Algorithm::Hierarchical { block, propagation }
}

/// Block algorithms that must be correct (the racy teaching variant is excluded on purpose).
fn correct_block_algorithms() -> impl Iterator<Item = BlockAlgo> {
    BlockAlgo::ALL.into_iter().filter(|b| *b != BlockAlgo::KoggeStoneRacy)
}

/// Every (type, operator) the kernel takes, inclusive and exclusive, over `sizes` around each
/// type's tile.
fn run_matrix(
    gpu: &Gpu,
    algorithm: Algorithm,
    tile_of: impl Fn(ElemType) -> usize,
    largest: usize,
    big_ops_only: bool,
    kernel: ScanKernel,
) -> Vec<String> {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    for (ty, op) in pairs().filter(|(ty, _)| kernel != ScanKernel::Staged || matches!(ty.size(), 4 | 8)) {
        for exclusive in [false, true] {
            for (k, n) in sizes(tile_of(ty), largest).into_iter().enumerate() {
                if big_ops_only && n > 65536 && !matches!(op, Op::Add | Op::Max | Op::Affine) {
                    continue;
                }
                let case = Case { exclusive, with_init: k % 3 == 2, kernel, ..Case::new(op, algorithm, n) };
                with_elem_type!(ty, T => failures.extend(check::<T>(gpu, &mut temp, case, None)));
            }
        }
    }
    failures
}

fn single_pass_every_type_operator_mode_and_size(gpu: &Gpu) {
    let tile = |t: ElemType| shapes().single_pass.at(t.size()).tile() as usize;
    assert_none_failed(&run_matrix(gpu, Algorithm::SinglePass, tile, usize::MAX, false, ScanKernel::Tiles));
}

/// The tiles staged in shared memory (by default only for 8-byte elements) for 4 and 8 bytes.
fn staged_every_type_operator_mode_and_size(gpu: &Gpu) {
    let tile = |t: ElemType| shapes().staged.at(t.size()).tile() as usize;
    assert_none_failed(&run_matrix(gpu, Algorithm::SinglePass, tile, usize::MAX, false, ScanKernel::Staged));
}

/// The pipelined kernel (by default only from 64 MiB on) at every size of the matrix.
fn pipelined_every_type_operator_mode_and_size(gpu: &Gpu) {
    let tile = |t: ElemType| shapes().scan_pipeline.at(t.size()).tile() as usize;
    assert_none_failed(&run_matrix(gpu, Algorithm::SinglePass, tile, usize::MAX, false, ScanKernel::Pipelined));
}

fn hierarchical_every_block_algorithm_and_propagation(gpu: &Gpu) {
    let tile = |_| shapes().hierarchical.tile() as usize;
    let mut failures = Vec::new();
    for block in correct_block_algorithms() {
        for propagation in [Propagation::ReduceThenScan, Propagation::ScanThenAdd] {
            failures.extend(run_matrix(
                gpu,
                hierarchical(block, propagation),
                tile,
                usize::MAX,
                true,
                ScanKernel::Auto,
            ));
        }
    }
    assert_none_failed(&failures);
}

fn hierarchical_three_levels(gpu: &Gpu) {
    let tile = shapes().hierarchical.tile() as usize;
    let n = tile * tile + tile + 3;
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    for propagation in [Propagation::ReduceThenScan, Propagation::ScanThenAdd] {
        for exclusive in [false, true] {
            let case = Case {
                exclusive,
                with_init: exclusive,
                ..Case::new(Op::Add, hierarchical(BlockAlgo::Blelloch, propagation), n)
            };
            failures.extend(check::<i32>(gpu, &mut temp, case, None));
            failures.extend(check::<u64>(gpu, &mut temp, Case { op: Op::Affine, ..case }, None));
        }
    }
    assert_none_failed(&failures);
}

fn naive_every_type_operator_and_mode(gpu: &Gpu) {
    assert_none_failed(&run_matrix(gpu, Algorithm::Naive, |_| 256, 65521, false, ScanKernel::Auto));
}

fn naive_refuses_large_inputs_with_a_clear_error(gpu: &Gpu) {
    let data = vec![1u32; gpu_scan::options::NAIVE_MAX_N as usize + 1];
    let e = gpu.scan_host(&data, &gpu_scan::ScanOptions::new(Op::Add).algorithm(Algorithm::Naive)).unwrap_err();
    assert!(e.to_string().contains("limited to n <= 262144"), "{e}");
}

fn hundred_million_elements(gpu: &Gpu) {
    let n = 100_000_000;
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    for ty in ElemType::ALL {
        for exclusive in [false, true] {
            let case = Case { exclusive, ..Case::new(Op::Add, Algorithm::SinglePass, n) };
            with_elem_type!(ty, T => failures.extend(check::<T>(gpu, &mut temp, case, None)));
        }
    }
    for algorithm in [
        hierarchical(BlockAlgo::WarpShuffle, Propagation::ReduceThenScan),
        hierarchical(BlockAlgo::Blelloch, Propagation::ScanThenAdd),
    ] {
        failures.extend(check::<u32>(gpu, &mut temp, Case::new(Op::Add, algorithm, n), None));
        failures.extend(check::<f64>(
            gpu,
            &mut temp,
            Case { exclusive: true, ..Case::new(Op::Add, algorithm, n) },
            None,
        ));
    }
    failures.extend(check::<f32>(gpu, &mut temp, Case::new(Op::Max, Algorithm::SinglePass, n), None));
    failures.extend(check::<u64>(gpu, &mut temp, Case::new(Op::Affine, Algorithm::SinglePass, n), None));
    assert_none_failed(&failures);
}

fn in_place(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let algorithms = [
        Algorithm::SinglePass,
        hierarchical(BlockAlgo::WarpShuffle, Propagation::ReduceThenScan),
        hierarchical(BlockAlgo::KoggeStone, Propagation::ScanThenAdd),
    ];
    for algorithm in algorithms {
        for n in [1, 1025, 4097, (1 << 20) + 7] {
            for exclusive in [false, true] {
                let case = Case { exclusive, in_place: true, ..Case::new(Op::Add, algorithm, n) };
                failures.extend(check::<u32>(gpu, &mut temp, case, None));
                failures.extend(check::<f64>(gpu, &mut temp, case, None));
                failures.extend(check::<u64>(gpu, &mut temp, Case { op: Op::Affine, ..case }, None));
            }
        }
    }
    assert_none_failed(&failures);
}

/// Affine maps do not commute: a kernel that combined out of index order would fail here.
fn non_commutative_operator_is_combined_in_index_order(gpu: &Gpu) {
    let data = gpu_scan::input::generate::<u64>(Op::Affine, 3, (1 << 20) + 7);
    let forward = gpu_scan::reference::scan(Op::Affine, &data, false, None).unwrap();
    let mut reversed_order = data.clone();
    reversed_order.reverse();
    assert_ne!(
        gpu_scan::reference::scan(Op::Affine, &reversed_order, false, None).unwrap().last(),
        forward.last(),
        "the test data must make the order visible"
    );
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let mut algorithms = vec![Algorithm::SinglePass];
    for block in correct_block_algorithms() {
        for propagation in [Propagation::ReduceThenScan, Propagation::ScanThenAdd] {
            algorithms.push(hierarchical(block, propagation));
        }
    }
    for algorithm in algorithms {
        for exclusive in [false, true] {
            let case = Case { exclusive, ..Case::new(Op::Affine, algorithm, data.len()) };
            failures.extend(check::<u64>(gpu, &mut temp, case, Some(&data)));
        }
    }
    let small = &data[..65521];
    failures.extend(check::<u64>(gpu, &mut temp, Case::new(Op::Affine, Algorithm::Naive, small.len()), Some(small)));
    assert_none_failed(&failures);
}

/// 64-bit indexing: more than 2^32 one-byte elements (needs about 9 GB of device memory).
fn more_than_two_to_the_32_elements(gpu: &Gpu) {
    let n = (1usize << 32) + (1 << 20) + 3;
    let (free, _) = gpu.memory().unwrap();
    assert!(free >= 3 * n as u64, "needs {} bytes of device memory, {free} free", 3 * n);
    let data = gpu_scan::input::generate::<u8>(Op::Add, 11, n);
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    for algorithm in [Algorithm::SinglePass, hierarchical(BlockAlgo::WarpShuffle, Propagation::ReduceThenScan)] {
        let case = Case { in_place: true, ..Case::new(Op::Add, algorithm, n) };
        failures.extend(check::<u8>(gpu, &mut temp, case, Some(&data)));
    }
    assert_none_failed(&failures);
}

/// One temporary storage reused by many back-to-back scans of both strategies: the single-pass
/// epochs and tile counter carry over from call to call and must never be mixed up, not even by
/// hierarchical scans using the same storage in between.
fn temporary_storage_is_reused_across_calls(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let mut capacity = 0;
    for i in 0..600u64 {
        let n = (gpu_scan::input::bits(77, i) % 300_000) as usize;
        let algorithm = if i % 5 == 4 {
            hierarchical(BlockAlgo::WarpShuffle, Propagation::ReduceThenScan)
        } else {
            Algorithm::SinglePass
        };
        let case = Case { seed: i, exclusive: i % 2 == 0, ..Case::new(Op::Add, algorithm, n) };
        failures.extend(check::<i64>(gpu, &mut temp, case, None));
        assert!(temp.capacity() >= capacity, "temporary storage shrank");
        capacity = temp.capacity();
    }
    assert_none_failed(&failures);
}

/// The kernels write only inside the tile state and scratch their plans reserve: a fresh
/// guarded storage per launch (so each region is exactly the plan's size) keeps its guard bytes,
/// for every single-pass kernel, the hierarchical scratch, and the applications that keep tile
/// state (compaction, segmented and batched scans).
fn kernels_stay_within_their_temporary_storage(gpu: &Gpu) {
    use gpu_scan::{
        Axis, BatchedKernel, BatchedOptions, CompactKernel, CompactOptions, Keep, Matrix, ScanOptions, SegmentedOptions,
    };
    let stream = gpu.stream().clone();
    let mut failures = Vec::new();
    let mut guarded = |what: String, run: &mut dyn FnMut(&mut TempStorage) -> gpu_scan::Result<()>| {
        let mut temp = TempStorage::guarded(4096);
        let outcome = run(&mut temp).and_then(|()| temp.check_guards(&stream));
        if let Err(e) = outcome {
            failures.push(format!("{what}: {e}"));
        }
    };
    for n in [1usize, 8193, 100_003, (1 << 20) + 7] {
        let x32 = gpu_scan::input::generate::<u32>(Op::Add, 1, n);
        let x64 = gpu_scan::input::generate::<f64>(Op::Add, 1, n);
        let (d32, d64) = (gpu.upload(&stream, "in", &x32).unwrap(), gpu.upload(&stream, "in", &x64).unwrap());
        let (mut o32, mut o64) =
            (gpu.alloc_zeros::<u32>(&stream, "out", n).unwrap(), gpu.alloc_zeros::<f64>(&stream, "out", n).unwrap());
        for kernel in [ScanKernel::Tiles, ScanKernel::Staged, ScanKernel::Pipelined] {
            let opts = ScanOptions::new(Op::Add).kernel(kernel);
            guarded(format!("u32 {kernel:?} n={n}"), &mut |t| gpu.scan(&stream, &d32, &mut o32, &opts, t));
            guarded(format!("f64 {kernel:?} n={n}"), &mut |t| {
                gpu.scan(&stream, &d64, &mut o64, &ScanOptions::new(Op::Add).kernel(kernel), t)
            });
        }
        let det = ScanOptions::new(Op::Add).deterministic(true);
        guarded(format!("f64 deterministic n={n}"), &mut |t| gpu.scan(&stream, &d64, &mut o64, &det, t));
        let hier = ScanOptions::new(Op::Add).algorithm(Algorithm::hierarchical());
        guarded(format!("u32 hierarchical n={n}"), &mut |t| gpu.scan(&stream, &d32, &mut o32, &hier, t));
        let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1).unwrap();
        for kernel in [CompactKernel::Tiles, CompactKernel::Pipelined] {
            let opts = CompactOptions::new(Keep::Greater(0.0)).kernel(kernel);
            guarded(format!("compact {kernel:?} n={n}"), &mut |t| {
                gpu.compact(&stream, &d64, &mut o64, &mut count, &opts, t)
            });
        }
        let seg = SegmentedOptions::new(Op::Add);
        guarded(format!("segmented n={n}"), &mut |t| gpu.segmented_scan_fixed(&stream, &d32, 1000, &mut o32, &seg, t));
    }
    let matrix_kernels = [
        (Matrix::new(70_000, 4), Axis::Columns, BatchedKernel::Pipelined),
        (Matrix::new(70_000, 16), Axis::Columns, BatchedKernel::BulkTiles),
        (Matrix::new(7000, 64), Axis::Columns, BatchedKernel::VectorTiles),
        (Matrix::new(7000, 65), Axis::Columns, BatchedKernel::ColumnTiles),
        (Matrix::new(3, 100_004), Axis::Rows, BatchedKernel::RowChains),
        (Matrix::new(3, 100_004), Axis::Rows, BatchedKernel::Pipelined),
    ];
    for (matrix, axis, kernel) in matrix_kernels {
        let n = (matrix.rows * matrix.cols) as usize;
        let d = gpu.upload(&stream, "matrix", &gpu_scan::input::generate::<u32>(Op::Max, 2, n)).unwrap();
        let mut out = gpu.alloc_zeros::<u32>(&stream, "out", n).unwrap();
        let opts = BatchedOptions::new(axis, Op::Max).kernel(kernel);
        guarded(format!("{matrix:?} {kernel:?}"), &mut |t| gpu.batched_scan(&stream, &d, matrix, &mut out, &opts, t));
    }
    assert_none_failed(&failures);
}

fn user_mistakes_are_errors_not_panics(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let input = stream.clone_htod(&[1u32, 2, 3]).unwrap();
    let mut short = stream.alloc_zeros::<u32>(2).unwrap();
    let mut temp = TempStorage::new();
    let e = gpu.scan(&stream, &input, &mut short, &gpu_scan::ScanOptions::new(Op::Add), &mut temp).unwrap_err();
    assert!(e.to_string().contains("output holds 2 elements"), "{e}");
    let e = gpu.scan_host(&[1.0f32], &gpu_scan::ScanOptions::new(Op::Xor)).unwrap_err();
    assert!(matches!(e, gpu_scan::Error::UnsupportedOp { op: Op::Xor, ty: ElemType::F32, .. }), "{e}");
    let e = gpu.trace(BlockAlgo::WarpShuffle, Op::Add, &[1u32, 2]).unwrap_err();
    assert!(e.to_string().contains("trace kogge-stone, blelloch or brent-kung"), "{e}");
    let e = gpu.trace(BlockAlgo::Blelloch, Op::Add, &vec![1u32; 1025]).unwrap_err();
    assert!(e.to_string().contains("1 to 1024 elements"), "{e}");
    assert!(gpu.scan_host::<u32>(&[], &gpu_scan::ScanOptions::new(Op::Add)).unwrap().is_empty());
}

/// Float min/max follow IEEE minNum/maxNum (a NaN operand is ignored), add propagates NaN and
/// infinities, exactly as the sequential reference does.
fn nan_and_infinities_behave_as_in_the_sequential_scan(gpu: &Gpu) {
    let n = 100_003;
    let mut failures = Vec::new();
    let mut temp = TempStorage::new();
    let special = |i: usize| match i % 9973 {
        17 => Some(f64::NAN),
        4001 => Some(f64::INFINITY),
        8002 => Some(f64::NEG_INFINITY),
        _ => None,
    };
    for op in [Op::Min, Op::Max, Op::Add] {
        let mut d32 = gpu_scan::input::generate::<f32>(op, 1, n);
        let mut d64 = gpu_scan::input::generate::<f64>(op, 1, n);
        for i in 0..n {
            if let Some(v) = special(i) {
                d32[i] = v as f32;
                d64[i] = v;
            }
        }
        for algorithm in [Algorithm::SinglePass, hierarchical(BlockAlgo::Blelloch, Propagation::ReduceThenScan)] {
            for exclusive in [false, true] {
                let case = Case { exclusive, ..Case::new(op, algorithm, n) };
                failures.extend(check::<f32>(gpu, &mut temp, case, Some(&d32)));
                failures.extend(check::<f64>(gpu, &mut temp, case, Some(&d64)));
            }
        }
    }
    assert_none_failed(&failures);
}

fn timeline_kernel_records_every_tile(gpu: &Gpu) {
    use scan_abi::timeline::TIMED;
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let tile = shapes().single_pass.at(4).tile() as usize;
    let mut failures = Vec::new();
    for n in [1usize, 33, tile - 1, tile, tile + 1, 100 * tile + 17, 1 << 22] {
        let data: Vec<u32> = gpu_scan::input::generate(Op::Add, n as u64, n);
        let d_in = gpu.upload(&stream, "input", &data).unwrap();
        let mut d_out = gpu.alloc_zeros::<u32>(&stream, "output", n).unwrap();
        let records = gpu.scan_timeline(&stream, &d_in, &mut d_out, &mut temp).unwrap();
        if gpu.download(&stream, &d_out).unwrap() != gpu_scan::reference::scan(Op::Add, &data, false, None).unwrap() {
            failures.push(format!("timeline scan n={n}"));
        }
        if records.len() != n.div_ceil(tile) {
            failures.push(format!("timeline n={n}: {} records", records.len()));
        }
        for (i, r) in records.iter().enumerate() {
            let ordered = r.times.windows(2).all(|w| w[0] <= w[1]) && r.times[0] > 0;
            let polled = if i == 0 { r.polls == 0 } else { r.polls >= 1 };
            if !ordered || !polled || r.sm >= gpu.info().multiprocessors {
                failures.push(format!("timeline n={n} tile {i}: {r:?} ({} events)", TIMED.len()));
                break;
            }
        }
    }
    assert_none_failed(&failures);
}

/// 0, 1, warp edges, tile-1/tile/tile+1 and primes, for the integer-valued float checks.
fn exact_sizes(tile: usize, largest: usize) -> Vec<usize> {
    let mut v = vec![0, 1, 31, 33, tile - 1, tile, tile + 1, 65521, 1_000_003];
    v.retain(|&n| n <= largest);
    v
}

/// Float sums and products on integer-valued inputs (`workspace_tests::exact`), exact in any
/// order: every (f32, f64) x (add, mul) case of `algorithm` with `kernel`, inclusive and
/// exclusive, with and without an initial value, bit for bit against the sequential scan.
fn exact_matrix(
    gpu: &Gpu,
    algorithm: Algorithm,
    kernel: ScanKernel,
    sizes: &dyn Fn(ElemType) -> Vec<usize>,
) -> Vec<String> {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    for ty in [ElemType::F32, ElemType::F64] {
        for op in [Op::Add, Op::Mul] {
            for (k, n) in sizes(ty).into_iter().enumerate() {
                for exclusive in [false, true] {
                    let with_init = (k + exclusive as usize) % 2 == 1;
                    let case = Case { exclusive, with_init, kernel, ..Case::new(op, algorithm, n) };
                    with_elem_type!(ty, T => failures.extend(check_exact::<T>(gpu, &mut temp, case)));
                }
            }
        }
    }
    failures
}

/// The tiles in registers, staged in shared memory, and the pipelined kernel, each about its own
/// tile, and the deterministic (fixed-order) tiles and pipelined kernel.
fn single_pass_floats_exact(gpu: &Gpu) {
    let mut failures = Vec::new();
    type TileOf = fn(usize) -> u32;
    let kernels: [(ScanKernel, TileOf); 3] = [
        (ScanKernel::Tiles, |size| shapes().single_pass.at(size).tile()),
        (ScanKernel::Staged, |size| shapes().staged.at(size).tile()),
        (ScanKernel::Pipelined, |size| shapes().scan_pipeline.at(size).tile()),
    ];
    for (kernel, tile) in kernels {
        let sizes = |ty: ElemType| exact_sizes(tile(ty.size()) as usize, usize::MAX);
        failures.extend(exact_matrix(gpu, Algorithm::SinglePass, kernel, &sizes));
    }
    let mut temp = TempStorage::new();
    for ty in [ElemType::F32, ElemType::F64] {
        for op in [Op::Add, Op::Mul] {
            for n in exact_sizes(shapes().single_pass.at(ty.size()).tile() as usize, usize::MAX) {
                let case =
                    Case { deterministic: true, with_init: n % 2 == 1, ..Case::new(op, Algorithm::SinglePass, n) };
                with_elem_type!(ty, T => failures.extend(check_exact::<T>(gpu, &mut temp, case)));
            }
            for n in exact_sizes(shapes().scan_pipeline_of(ty, op).tile() as usize, usize::MAX) {
                let pipelined = Case {
                    deterministic: true,
                    kernel: ScanKernel::Pipelined,
                    with_init: n % 2 == 0,
                    exclusive: n % 3 == 0,
                    ..Case::new(op, Algorithm::SinglePass, n)
                };
                with_elem_type!(ty, T => failures.extend(check_exact::<T>(gpu, &mut temp, pipelined)));
            }
        }
    }
    assert_none_failed(&failures);
}

/// Every correct block algorithm with both propagations, about the hierarchical tile, and three
/// levels of it.
fn hierarchical_floats_exact(gpu: &Gpu) {
    let tile = shapes().hierarchical.tile() as usize;
    let mut failures = Vec::new();
    for block in correct_block_algorithms() {
        for propagation in Propagation::ALL {
            let sizes = |_| exact_sizes(tile, usize::MAX);
            failures.extend(exact_matrix(gpu, hierarchical(block, propagation), ScanKernel::Auto, &sizes));
        }
    }
    let mut temp = TempStorage::new();
    for propagation in Propagation::ALL {
        let case = Case {
            with_init: true,
            ..Case::new(Op::Add, hierarchical(BlockAlgo::Blelloch, propagation), tile * tile + tile + 3)
        };
        failures.extend(check_exact::<f32>(gpu, &mut temp, case));
        failures.extend(check_exact::<f64>(gpu, &mut temp, Case { op: Op::Mul, exclusive: true, ..case }));
    }
    assert_none_failed(&failures);
}

fn naive_floats_exact(gpu: &Gpu) {
    assert_none_failed(&exact_matrix(gpu, Algorithm::Naive, ScanKernel::Auto, &|_| exact_sizes(256, 65521)));
}

/// 10^8 integer-valued floats, whose f32 prefix sums wander about ±10^4 and stay exact: the
/// default kernel (pipelined at this size), the tiles, the deterministic tiles and both
/// hierarchical propagations, sums and products.
fn hundred_million_integer_valued_floats(gpu: &Gpu) {
    fn each<T: gpu_scan::Element>(gpu: &Gpu, failures: &mut Vec<String>) {
        let n = 100_000_000;
        let mut temp = TempStorage::new();
        let sums = exact::floats::<T>(Op::Add, 1, n);
        let sum_cases = [
            Case::new(Op::Add, Algorithm::SinglePass, n),
            Case {
                kernel: ScanKernel::Tiles,
                exclusive: true,
                with_init: true,
                ..Case::new(Op::Add, Algorithm::SinglePass, n)
            },
            Case { deterministic: true, ..Case::new(Op::Add, Algorithm::SinglePass, n) },
            Case::new(Op::Add, hierarchical(BlockAlgo::WarpShuffle, Propagation::ReduceThenScan), n),
            Case {
                with_init: true,
                ..Case::new(Op::Add, hierarchical(BlockAlgo::Blelloch, Propagation::ScanThenAdd), n)
            },
        ];
        for case in sum_cases {
            failures.extend(check_exact_data::<T>(gpu, &mut temp, case, &sums));
        }
        let products = exact::floats::<T>(Op::Mul, 2, n);
        for case in [
            Case { exclusive: true, ..Case::new(Op::Mul, Algorithm::SinglePass, n) },
            Case { deterministic: true, with_init: true, ..Case::new(Op::Mul, Algorithm::SinglePass, n) },
        ] {
            failures.extend(check_exact_data::<T>(gpu, &mut temp, case, &products));
        }
    }
    let mut failures = Vec::new();
    each::<f32>(gpu, &mut failures);
    each::<f64>(gpu, &mut failures);
    assert_none_failed(&failures);
}
