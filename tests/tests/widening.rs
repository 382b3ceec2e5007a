//! Widening scans against the CPU: every narrow type into every wide type it sums into, sizes
//! around the tile, views at odd offsets, inclusive and exclusive, with and without an initial
//! value; half floats integer-valued (exact in any order), random within the error bound, and
//! deterministic equal bit for bit to the CPU replica of the `f32` scan.

use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::{self as cpu, replica, verify::verify};
use gpu_scan::{input, Algorithm, Element, Gpu, Op, ScanKernel, TempStorage, WideningOptions, WidensTo};
use half::{bf16, f16};
use std::process::ExitCode;
use workspace_tests::checks::assert_none_failed;
use workspace_tests::gpu_test;

fn main() -> ExitCode {
    workspace_tests::main(vec![
        gpu_test("integer_widening_scans_are_exact", integers),
        gpu_test("half_float_widening_scans_match_the_cpu", halves),
        gpu_test("widening_scan_errors_name_the_problem", errors),
    ])
}

/// Sizes around the `u32` and `u64` tiles (8192 and 4096 elements) and the pipelined widening's
/// largest (16384), primes, and one of many tiles.
const SIZES: [usize; 14] = [0, 1, 31, 33, 4095, 4097, 8191, 8192, 8193, 16_383, 16_385, 65_537, 100_003, 3_000_017];

/// How the GPU's result must relate to the CPU's.
#[derive(Clone, Copy, PartialEq)]
enum Check {
    /// Equal bit for bit to the reference scan of the widened input.
    Exact,
    /// Within the float error bound of it.
    Bounded,
    /// Equal bit for bit to the replica of the deterministic `f32` scan.
    Replica,
}

/// Scans `data[lo..]` into `out[lo..]` (a view starting `lo` elements in) with `kernel` and
/// checks the result.
#[allow(clippy::too_many_arguments)]
fn case<N: WidensTo<T>, T: Element>(
    gpu: &Gpu,
    temp: &mut TempStorage,
    data: &[N],
    lo: usize,
    exclusive: bool,
    init: Option<T>,
    check: Check,
    kernel: ScanKernel,
) -> Option<String> {
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "in", data).unwrap();
    let mut d_out: CudaSlice<T> = gpu.alloc_zeros(&stream, "out", data.len()).unwrap();
    let opts =
        WideningOptions::new().exclusive(exclusive).init(init).deterministic(check == Check::Replica).kernel(kernel);
    gpu.widening_scan(&stream, &d_in.slice(lo..), &mut d_out.slice_mut(lo..), &opts, temp).unwrap();
    let got = gpu.download(&stream, &d_out).unwrap();
    let wide: Vec<T> = cpu::widened(&data[lo..]);
    let what = format!(
        "{:?} into {} n={} at {lo} exclusive={exclusive} init={init:?} {kernel:?}",
        N::SOURCE,
        T::TYPE.name(),
        data.len() - lo
    );
    if got[..lo].iter().any(|x| x.to_bits() != 0) {
        return Some(format!("{what}: wrote before the view"));
    }
    let got = &got[lo..];
    let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let failed = match check {
        Check::Exact => bits(got) != bits(&cpu::widening(&data[lo..], exclusive, init).unwrap()),
        Check::Replica => bits(got) != bits(&replica::single_pass(Op::Add, &wide, exclusive, init).unwrap()),
        Check::Bounded => !verify(Op::Add, Algorithm::SinglePass, &wide, exclusive, init, got).unwrap().passed(),
    };
    failed.then_some(what)
}

/// Every combination of size, view offset, exclusive and initial value for one pair of types,
/// on the tiles kernel and (where the views are 16-byte aligned and the order may be free) the
/// pipelined one.
fn cases<N: WidensTo<T>, T: Element>(
    gpu: &Gpu,
    temp: &mut TempStorage,
    make: impl Fn(usize) -> Vec<N>,
    init: T,
    check: Check,
    failures: &mut Vec<String>,
) {
    for n in SIZES {
        let data = make(n + 16);
        for lo in [0, 1, 3, 16] {
            let pipelined = lo % 16 == 0 && check != Check::Replica;
            let kernels = [ScanKernel::Tiles, ScanKernel::Pipelined];
            for kernel in kernels.into_iter().filter(|&k| pipelined || k == ScanKernel::Tiles) {
                for exclusive in [false, true] {
                    for init in [None, Some(init)] {
                        let view = &data[..n + lo];
                        failures.extend(case::<N, T>(gpu, temp, view, lo, exclusive, init, check, kernel));
                    }
                }
            }
        }
    }
}

fn bits_of(seed: u64) -> impl Fn(usize) -> Vec<u64> {
    move |n| (0..n as u64).map(|i| input::bits(seed ^ n as u64, i)).collect()
}

/// Random bits (so sums wrap), and a long run of the largest value.
fn integers(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut f = Vec::new();
    let raw = bits_of(7);
    macro_rules! pairs {
        ($($n:ty => [$($t:ty),*]),*) => { $($(
            cases::<$n, $t>(gpu, &mut temp, |n| raw(n).iter().map(|&b| b as $n).collect(), 5 as $t, Check::Exact, &mut f);
        )*)* };
    }
    pairs!(u8 => [u32, u64, i64], i8 => [u32, u64, i64], u16 => [u32, u64, i64], i16 => [u32, u64, i64],
        u32 => [u64, i64], i32 => [u64, i64]);
    cases::<bool, u32>(gpu, &mut temp, |n| raw(n).iter().map(|&b| b & 1 == 1).collect(), 2, Check::Exact, &mut f);
    cases::<bool, i64>(gpu, &mut temp, |n| raw(n).iter().map(|&b| b & 4 == 4).collect(), -2, Check::Exact, &mut f);
    // 2^24 bytes of 255 sum to 2^32 - 2^24: past what a u32 scan of 16-bit words could hold.
    let top = vec![u8::MAX; 1 << 24];
    f.extend(case::<u8, u32>(gpu, &mut temp, &top, 0, false, None, Check::Exact, ScanKernel::Auto));
    f.extend(case::<u8, u64>(gpu, &mut temp, &top, 0, true, Some(u64::MAX), Check::Exact, ScanKernel::Pipelined));
    assert_none_failed(&f);
}

/// Integer values in [-8, 8] (sums stay exact in f32), uniform values in [0, 1), and the
/// deterministic scan of the latter, for both half types.
fn halves(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut f = Vec::new();
    let raw = bits_of(11);
    let small = |n| raw(n).iter().map(|&b| (b % 17) as f32 - 8.0).collect::<Vec<f32>>();
    let unit = |n| raw(n).iter().map(|&b| (b >> 40) as f32 / (1u64 << 24) as f32).collect::<Vec<f32>>();
    let h = |v: Vec<f32>| v.into_iter().map(f16::from_f32).collect::<Vec<_>>();
    let b = |v: Vec<f32>| v.into_iter().map(bf16::from_f32).collect::<Vec<_>>();
    cases::<f16, f32>(gpu, &mut temp, |n| h(small(n)), -3.0, Check::Exact, &mut f);
    cases::<bf16, f32>(gpu, &mut temp, |n| b(small(n)), -3.0, Check::Exact, &mut f);
    cases::<f16, f32>(gpu, &mut temp, |n| h(unit(n)), 0.5, Check::Bounded, &mut f);
    cases::<bf16, f32>(gpu, &mut temp, |n| b(unit(n)), 0.5, Check::Bounded, &mut f);
    cases::<f16, f32>(gpu, &mut temp, |n| h(unit(n)), 0.5, Check::Replica, &mut f);
    cases::<bf16, f32>(gpu, &mut temp, |n| b(unit(n)), 0.5, Check::Replica, &mut f);
    f.extend(conversions::<f16>(gpu, f16::from_bits));
    f.extend(conversions::<bf16>(gpu, bf16::from_bits));
    assert_none_failed(&f);
}

/// Every finite value of a half type converts exactly: each value followed by its negation,
/// so that every partial sum of whole pairs is exactly zero in any order (vectors and tiles hold
/// whole pairs) and the inclusive sum at each value is the value itself.
fn conversions<H: WidensTo<f32> + std::fmt::Display>(gpu: &Gpu, from_bits: fn(u16) -> H) -> Option<String> {
    let finite = (0..=u16::MAX).filter(|&b| from_bits(b).widen().is_finite());
    let pairs: Vec<H> = finite.flat_map(|b| [from_bits(b), from_bits(b ^ 0x8000)]).collect();
    let got = gpu.widening_scan_host::<H, f32>(&pairs, &WideningOptions::new()).unwrap();
    let wrong = pairs.iter().zip(&got).step_by(2).find(|(&x, &g)| g != x.widen());
    wrong.map(|(x, g)| format!("{:?} {x} summed alone became {g}", H::SOURCE))
}

/// A too-short output, an empty input, and the kernels a request cannot have.
fn errors(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let d_in = gpu.upload(&stream, "in", &[1u8, 2, 3]).unwrap();
    let mut short = gpu.alloc_zeros::<u32>(&stream, "out", 2).unwrap();
    let e = gpu.widening_scan(&stream, &d_in, &mut short, &WideningOptions::new(), &mut temp).unwrap_err();
    assert!(e.to_string().contains("output"), "{e}");
    let empty = gpu.upload(&stream, "in", &[0u8; 0]).unwrap();
    gpu.widening_scan(&stream, &empty.slice(0..0), &mut short, &WideningOptions::new(), &mut temp).unwrap();
    assert_eq!(gpu.download(&stream, &short).unwrap(), [0, 0]);
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", 3).unwrap();
    let pipelined = WideningOptions::new().kernel(ScanKernel::Pipelined);
    let e = gpu.widening_scan(&stream, &d_in.slice(1..), &mut out.slice_mut(1..), &pipelined, &mut temp).unwrap_err();
    assert!(e.to_string().contains("16-byte boundaries"), "{e}");
    let staged = WideningOptions::new().kernel(ScanKernel::Staged);
    let e = gpu.widening_scan(&stream, &d_in, &mut out, &staged, &mut temp).unwrap_err();
    assert!(e.to_string().contains("no staged kernel"), "{e}");
    let halves = gpu.upload(&stream, "in", &[f16::ONE; 3]).unwrap();
    let mut sums = gpu.alloc_zeros::<f32>(&stream, "out", 3).unwrap();
    let det = WideningOptions::new().deterministic(true).kernel(ScanKernel::Pipelined);
    let e = gpu.widening_scan(&stream, &halves, &mut sums, &det, &mut temp).unwrap_err();
    assert!(e.to_string().contains("no fixed-order look-back"), "{e}");
}
