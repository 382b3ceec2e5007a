//! Property tests (proptest): the CPU-side planning and references for any size and values, and,
//! where a GPU is present, random sizes and values through both device-wide strategies.

mod common;

use common::{check, gpu, Case};
use gpu_scan::{cpu, temp_bytes, Algorithm, BlockAlgo, ElemType, Op, Propagation, TempStorage};
use proptest::prelude::*;
use scan_abi::op::{Add, Affine, Max};
use scan_abi::{status, tuning};

proptest! {
    /// The single-pass temporary storage holds the counter and one status word per tile.
    #[test]
    fn single_pass_temp_covers_every_tile(n in 0u64..(1u64 << 40), ty in 0usize..8) {
        let ty = ElemType::ALL[ty];
        let tile = tuning::single_pass(tuning::DEFAULT_ARCH, ty.size()).tile() as u64;
        let bytes = temp_bytes(ty, n, Algorithm::SinglePass);
        prop_assert_eq!(bytes, status::COUNTER_BYTES as u64 + n.div_ceil(tile) * status::word_bytes(ty.size()) as u64);
    }

    /// Hierarchical scratch holds every level's totals; more elements never need less.
    #[test]
    fn hierarchical_temp_grows_with_n(n in 0u64..(1u64 << 40), ty in 0usize..8) {
        let ty = ElemType::ALL[ty];
        let algo = Algorithm::Hierarchical { block: BlockAlgo::Blelloch, propagation: Propagation::ReduceThenScan };
        let tile = tuning::hierarchical(tuning::DEFAULT_ARCH, ty.size()).tile() as u64;
        let bytes = temp_bytes(ty, n, algo);
        let first_level = if n > tile { n.div_ceil(tile) * ty.size() as u64 } else { 0 };
        prop_assert!(bytes >= first_level, "{} < {}", bytes, first_level);
        prop_assert!(temp_bytes(ty, n + tile, algo) >= bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The parallel CPU reference equals the sequential fold, also for a non-commutative operator.
    #[test]
    fn parallel_reference_equals_sequential(v in prop::collection::vec(any::<u64>(), 0..200_000), exclusive: bool, init: Option<u64>) {
        prop_assert_eq!(cpu::scan(Op::Affine, &v, exclusive, init).unwrap(), cpu::scan_with::<u64, Affine>(&v, exclusive, init));
        prop_assert_eq!(cpu::scan(Op::Max, &v, exclusive, init).unwrap(), cpu::scan_with::<u64, Max>(&v, exclusive, init));
        prop_assert_eq!(cpu::scan(Op::Add, &v, exclusive, init).unwrap(), cpu::scan_with::<u64, Add>(&v, exclusive, init));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random sizes and values on the GPU agree with the CPU reference.
    #[test]
    fn gpu_random_sizes_and_values(n in 0usize..200_000, seed: u64, exclusive: bool, in_place: bool, hier: bool, op in 0usize..3) {
        let Some(gpu) = gpu("gpu_random_sizes_and_values") else { return Ok(()) };
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
    }
}
