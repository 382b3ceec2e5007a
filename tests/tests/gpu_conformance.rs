//! Every strategy, block algorithm, element type and operator, inclusive and exclusive, against
//! the CPU reference over awkward sizes. Runs where a CUDA device exists; prints a skip line
//! otherwise (and fails under GPU_SCAN_REQUIRE_DEVICE=1).

mod common;

use common::{assert_none_failed, check, gpu, Case};
use gpu_scan::{with_elem_type, Algorithm, BlockAlgo, ElemType, Op, Propagation, TempStorage};
use scan_abi::tuning;

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

/// Every (type, operator), inclusive and exclusive, over `sizes` around each type's tile, with
/// `ScanOptions::pipelined` set to `pipelined`.
fn run_matrix(
    algorithm: Algorithm,
    tile_of: impl Fn(ElemType) -> usize,
    largest: usize,
    big_ops_only: bool,
    pipelined: Option<bool>,
) -> Vec<String> {
    let Some(gpu) = gpu(&algorithm.name()) else {
        return vec![];
    };
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    for (ty, op) in pairs() {
        for exclusive in [false, true] {
            for (k, n) in sizes(tile_of(ty), largest).into_iter().enumerate() {
                if big_ops_only && n > 65536 && !matches!(op, Op::Add | Op::Max | Op::Affine) {
                    continue;
                }
                let case = Case { exclusive, with_init: k % 3 == 2, pipelined, ..Case::new(op, algorithm, n) };
                with_elem_type!(ty, T => failures.extend(check::<T>(gpu, &mut temp, case, None)));
            }
        }
    }
    failures
}

#[test]
fn single_pass_every_type_operator_mode_and_size() {
    let tile = |t: ElemType| tuning::single_pass(tuning::DEFAULT_ARCH, t.size()).tile() as usize;
    assert_none_failed(&run_matrix(Algorithm::SinglePass, tile, usize::MAX, false, Some(false)));
}

/// The pipelined kernel (by default only from 64 MiB on) at every size of the matrix.
#[test]
fn single_pass_pipelined_every_type_operator_mode_and_size() {
    let tile = |t: ElemType| tuning::pipeline(tuning::DEFAULT_ARCH, t.size()).tile() as usize;
    assert_none_failed(&run_matrix(Algorithm::SinglePass, tile, usize::MAX, false, Some(true)));
}

#[test]
fn hierarchical_every_block_algorithm_and_propagation() {
    let tile = |t: ElemType| tuning::hierarchical(tuning::DEFAULT_ARCH, t.size()).tile() as usize;
    let mut failures = Vec::new();
    for block in correct_block_algorithms() {
        for propagation in [Propagation::ReduceThenScan, Propagation::ScanThenAdd] {
            failures.extend(run_matrix(hierarchical(block, propagation), tile, usize::MAX, true, None));
        }
    }
    assert_none_failed(&failures);
}

#[test]
fn hierarchical_three_levels() {
    let Some(gpu) = gpu("hierarchical_three_levels") else {
        return;
    };
    let tile = tuning::hierarchical(tuning::DEFAULT_ARCH, 4).tile() as usize;
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

#[test]
fn naive_every_type_operator_and_mode() {
    assert_none_failed(&run_matrix(Algorithm::Naive, |_| 256, 65521, false, None));
}

#[test]
fn naive_refuses_large_inputs_with_a_clear_error() {
    let Some(gpu) = gpu("naive_refuses_large_inputs") else {
        return;
    };
    let data = vec![1u32; tuning::NAIVE_MAX_N as usize + 1];
    let e = gpu.scan_host(&data, &gpu_scan::ScanOptions::new(Op::Add).algorithm(Algorithm::Naive)).unwrap_err();
    assert!(e.to_string().contains("limited to n <= 262144"), "{e}");
}

#[test]
fn hundred_million_elements() {
    let Some(gpu) = gpu("hundred_million_elements") else {
        return;
    };
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

#[test]
fn in_place() {
    let Some(gpu) = gpu("in_place") else { return };
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
#[test]
fn non_commutative_operator_is_combined_in_index_order() {
    let Some(gpu) = gpu("non_commutative_operator") else {
        return;
    };
    let data = gpu_scan::input::generate::<u64>(Op::Affine, 3, (1 << 20) + 7);
    let forward = gpu_scan::cpu::scan(Op::Affine, &data, false, None).unwrap();
    let mut reversed_order = data.clone();
    reversed_order.reverse();
    assert_ne!(
        gpu_scan::cpu::scan(Op::Affine, &reversed_order, false, None).unwrap().last(),
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
#[test]
fn more_than_two_to_the_32_elements() {
    let Some(gpu) = gpu("more_than_two_to_the_32_elements") else {
        return;
    };
    let n = (1usize << 32) + (1 << 20) + 3;
    let (free, _) = gpu.memory().unwrap();
    if free < 3 * n as u64 {
        common::skip(&format!("more_than_two_to_the_32_elements: needs {} bytes of device memory, {free} free", 3 * n));
        return;
    }
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
#[test]
fn temporary_storage_is_reused_across_calls() {
    let Some(gpu) = gpu("temporary_storage_is_reused") else { return };
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

#[test]
fn user_mistakes_are_errors_not_panics() {
    let Some(gpu) = gpu("user_mistakes_are_errors") else {
        return;
    };
    let stream = gpu.stream().clone();
    let input = stream.clone_htod(&[1u32, 2, 3]).unwrap();
    let mut short = stream.alloc_zeros::<u32>(2).unwrap();
    let mut temp = TempStorage::new();
    let e = gpu.scan(&stream, &input, &mut short, &gpu_scan::ScanOptions::new(Op::Add), &mut temp).unwrap_err();
    assert!(e.to_string().contains("output holds 2 elements"), "{e}");
    let e = gpu.scan_host(&[1.0f32], &gpu_scan::ScanOptions::new(Op::Xor)).unwrap_err();
    assert!(e.to_string().contains("not defined for f32"), "{e}");
    let e = gpu.trace(BlockAlgo::WarpShuffle, Op::Add, &[1u32, 2]).unwrap_err();
    assert!(e.to_string().contains("trace kogge-stone, blelloch or brent-kung"), "{e}");
    let e = gpu.trace(BlockAlgo::Blelloch, Op::Add, &vec![1u32; 1025]).unwrap_err();
    assert!(e.to_string().contains("1 to 1024 elements"), "{e}");
    assert!(gpu.scan_host::<u32>(&[], &gpu_scan::ScanOptions::new(Op::Add)).unwrap().is_empty());
}

/// Float min/max follow IEEE minNum/maxNum (a NaN operand is ignored), add propagates NaN and
/// infinities, exactly as the sequential reference does.
#[test]
fn nan_and_infinities_behave_as_in_the_sequential_scan() {
    let Some(gpu) = gpu("nan_and_infinities") else { return };
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

#[test]
fn timeline_kernel_scans_like_the_default_and_records_every_tile_in_order() {
    use scan_abi::timeline::TIMED;
    let Some(gpu) = gpu("timeline_kernel") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let tile = tuning::single_pass(tuning::DEFAULT_ARCH, 4).tile() as usize;
    let mut failures = Vec::new();
    for n in [1usize, 33, tile - 1, tile, tile + 1, 100 * tile + 17, 1 << 22] {
        let data: Vec<u32> = gpu_scan::input::generate(Op::Add, n as u64, n);
        let d_in = gpu.upload(&stream, "input", &data).unwrap();
        let mut d_out = gpu.alloc_zeros::<u32>(&stream, "output", n).unwrap();
        let records = gpu.scan_timeline(&stream, &d_in, &mut d_out, &mut temp).unwrap();
        if gpu.download(&stream, &d_out).unwrap() != gpu_scan::cpu::scan(Op::Add, &data, false, None).unwrap() {
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
