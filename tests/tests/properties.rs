//! Property tests (proptest): the CPU-side planning and references for any size and values, and,
//! where a GPU is present, random sizes and values through both device-wide strategies.

mod common;

use common::{check, gpu, Case};
use gpu_scan::{cpu, replica, temp_bytes, Algorithm, BlockAlgo, ElemType, Op, Propagation, TempStorage};
use proptest::prelude::*;
use scan_abi::op::{Add, Affine, Max};
use scan_abi::{status, tuning};

proptest! {
    /// The single-pass temporary storage holds the counter and one status word per tile, of the
    /// smaller of the two kernels' tiles (the pipelined kernel may run for any type).
    #[test]
    fn single_pass_temp_covers_every_tile(n in 0u64..(1u64 << 40), ty in 0usize..8) {
        let ty = ElemType::ALL[ty];
        let tile = tuning::single_pass(tuning::DEFAULT_ARCH, ty.size())
            .tile()
            .min(tuning::pipeline(tuning::DEFAULT_ARCH, ty.size()).tile()) as u64;
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

    /// The deterministic scan's CPU replica is a scan: for exact operators it equals the
    /// sequential fold, for any size (tile and warp bookkeeping included).
    #[test]
    fn replica_is_a_scan(v in prop::collection::vec(any::<u32>(), 0..100_000), exclusive: bool, init: Option<u32>) {
        let w: Vec<u64> = v.iter().map(|&x| x as u64 * 0x9e37_79b9 + 1).collect();
        prop_assert_eq!(replica::single_pass(Op::Add, &v, exclusive, init).unwrap(), cpu::scan_with::<u32, Add>(&v, exclusive, init));
        prop_assert_eq!(replica::single_pass(Op::Affine, &w, exclusive, None).unwrap(), cpu::scan_with::<u64, Affine>(&w, exclusive, None));
    }

    /// Sort keys order like the values: `order_key` is monotone, with -0.0 before +0.0 and NaN
    /// after everything.
    #[test]
    fn order_keys_are_monotone(a: f64, b: f64, i: i32, j: i32) {
        use scan_abi::Element as _;
        if a < b { prop_assert!(a.order_key() < b.order_key()); }
        if i < j { prop_assert!(i.order_key() < j.order_key()); }
        prop_assert!((-0.0f32).order_key() < 0.0f32.order_key());
        prop_assert!(f64::INFINITY.order_key() < f64::NAN.order_key() && (-f64::NAN).order_key() == f64::NAN.order_key());
    }

    /// Bins: every finite value in range lands in a bin whose interval holds it (up to rounding
    /// at the edges), everything else in the outside bin.
    #[test]
    fn bins_hold_their_values(x: f64, bins in 1u32..5000, lo in -1e6f64..1e6, width in 1e-3f64..1e6) {
        let hi = lo + width;
        let b = scan_abi::partition::bin_of(x, lo, hi, bins);
        if x >= lo && x < hi {
            prop_assert!(b < bins);
            let step = width / bins as f64;
            prop_assert!(x >= lo + step * b as f64 - step * 1e-9 && x < lo + step * (b + 1) as f64 + step * 1e-9);
        } else {
            prop_assert_eq!(b, bins);
        }
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
