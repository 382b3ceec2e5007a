//! Property tests (proptest): the CPU references and planning for any size and values, and, on a
//! GPU, random sizes and values through both device-wide strategies.

use gpu_scan::plan::scan::{plan, ScanRequest};
use gpu_scan::reference::{self as cpu, replica};
use gpu_scan::{Algorithm, BlockAlgo, ElemType, Gpu, Op, Propagation, TempStorage};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use scan_abi::op::{Add, Affine, Max};
use std::process::ExitCode;
use workspace_tests::checks::{check, Case};
use workspace_tests::{gpu_test, Failed, Trial};

fn main() -> ExitCode {
    workspace_tests::main(vec![
        property("hierarchical_scratch_grows_with_n", 256, hierarchical_scratch_grows_with_n),
        property("parallel_reference_equals_sequential", 64, parallel_reference_equals_sequential),
        property("replica_is_a_scan", 64, replica_is_a_scan),
        property("order_keys_are_monotone", 256, order_keys_are_monotone),
        property("bins_hold_their_values", 256, bins_hold_their_values),
        gpu_test("gpu_random_sizes_and_values", gpu_random_sizes_and_values),
    ])
}

/// A property checked over `cases` random cases by `body` (which runs its own strategy).
fn property(name: &str, cases: u32, body: fn(&mut TestRunner) -> Result<(), String>) -> Trial {
    Trial::test(name, move || {
        let mut runner = TestRunner::new(workspace_tests::proptest_config(cases));
        body(&mut runner).map_err(Failed::from)
    })
}

/// Hierarchical scratch holds every level's totals; more elements never need less.
fn hierarchical_scratch_grows_with_n(runner: &mut TestRunner) -> Result<(), String> {
    let t = scan_abi::tuning::for_arch(90);
    let scratch = |ty: ElemType, n: u64| {
        let algorithm =
            Algorithm::Hierarchical { block: BlockAlgo::Blelloch, propagation: Propagation::ReduceThenScan };
        plan(t, &ScanRequest { algorithm, ..ScanRequest::new(ty, Op::Add, n) }).unwrap().temp_bytes().1
    };
    runner
        .run(&(0u64..(1u64 << 40), 0usize..8), |(n, ty)| {
            let ty = ElemType::ALL[ty];
            let tile = t.shapes.hierarchical.tile() as u64;
            let first_level = if n > tile { n.div_ceil(tile) * ty.size() as u64 } else { 0 };
            prop_assert!(scratch(ty, n) >= first_level, "{} < {}", scratch(ty, n), first_level);
            prop_assert!(scratch(ty, n + tile) >= scratch(ty, n));
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// The parallel CPU reference equals the sequential fold, also for a non-commutative operator.
fn parallel_reference_equals_sequential(runner: &mut TestRunner) -> Result<(), String> {
    let strategy = (prop::collection::vec(any::<u64>(), 0..200_000), any::<bool>(), any::<Option<u64>>());
    runner
        .run(&strategy, |(v, exclusive, init)| {
            prop_assert_eq!(
                cpu::scan(Op::Affine, &v, exclusive, init).unwrap(),
                cpu::scan_with::<u64, Affine>(&v, exclusive, init)
            );
            prop_assert_eq!(
                cpu::scan(Op::Max, &v, exclusive, init).unwrap(),
                cpu::scan_with::<u64, Max>(&v, exclusive, init)
            );
            prop_assert_eq!(
                cpu::scan(Op::Add, &v, exclusive, init).unwrap(),
                cpu::scan_with::<u64, Add>(&v, exclusive, init)
            );
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// The deterministic scan's CPU replica is a scan: for exact operators it equals the sequential
/// fold, for any size (tile and warp bookkeeping included).
fn replica_is_a_scan(runner: &mut TestRunner) -> Result<(), String> {
    let strategy = (prop::collection::vec(any::<u32>(), 0..100_000), any::<bool>(), any::<Option<u32>>());
    runner
        .run(&strategy, |(v, exclusive, init)| {
            let w: Vec<u64> = v.iter().map(|&x| x as u64 * 0x9e37_79b9 + 1).collect();
            prop_assert_eq!(
                replica::single_pass(Op::Add, &v, exclusive, init).unwrap(),
                cpu::scan_with::<u32, Add>(&v, exclusive, init)
            );
            prop_assert_eq!(
                replica::single_pass(Op::Affine, &w, exclusive, None).unwrap(),
                cpu::scan_with::<u64, Affine>(&w, exclusive, None)
            );
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// Sort keys order like the values: `order_key` is monotone, with -0.0 before +0.0 and NaN after
/// everything.
fn order_keys_are_monotone(runner: &mut TestRunner) -> Result<(), String> {
    use scan_abi::Element as _;
    runner
        .run(&(any::<f64>(), any::<f64>(), any::<i32>(), any::<i32>()), |(a, b, i, j)| {
            if a < b {
                prop_assert!(a.order_key() < b.order_key());
            }
            if i < j {
                prop_assert!(i.order_key() < j.order_key());
            }
            prop_assert!((-0.0f32).order_key() < 0.0f32.order_key());
            prop_assert!(
                f64::INFINITY.order_key() < f64::NAN.order_key() && (-f64::NAN).order_key() == f64::NAN.order_key()
            );
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// Bins: every finite value in range lands in a bin whose interval holds it (up to rounding at
/// the edges), everything else in the outside bin.
fn bins_hold_their_values(runner: &mut TestRunner) -> Result<(), String> {
    let strategy = (any::<f64>(), 1u32..5000, -1e6f64..1e6, 1e-3f64..1e6);
    runner
        .run(&strategy, |(x, bins, lo, width)| {
            let hi = lo + width;
            let b = scan_abi::partition::bin_of(x, lo, hi, bins);
            if x >= lo && x < hi {
                prop_assert!(b < bins);
                let step = width / bins as f64;
                prop_assert!(x >= lo + step * b as f64 - step * 1e-9 && x < lo + step * (b + 1) as f64 + step * 1e-9);
            } else {
                prop_assert_eq!(b, bins);
            }
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// Random sizes and values on the GPU agree with the CPU reference.
fn gpu_random_sizes_and_values(gpu: &Gpu) {
    let mut runner = TestRunner::new(workspace_tests::proptest_config(48));
    let strategy = (0usize..200_000, any::<u64>(), any::<bool>(), any::<bool>(), any::<bool>(), 0usize..3);
    runner
        .run(&strategy, |(n, seed, exclusive, in_place, hier, op)| {
            let op = [Op::Add, Op::Max, Op::Affine][op];
            let algorithm = if hier {
                Algorithm::Hierarchical { block: BlockAlgo::BrentKung, propagation: Propagation::ScanThenAdd }
            } else {
                Algorithm::SinglePass
            };
            let mut temp = TempStorage::new();
            let case = Case { exclusive, in_place, seed, ..Case::new(op, algorithm, n) };
            let failure = check::<u64>(gpu, &mut temp, case, None);
            prop_assert!(failure.is_none(), "{}", failure.unwrap_or_default());
            Ok::<(), TestCaseError>(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
