//! The applications on the GPU against their CPU references: awkward sizes, every type, every
//! kernel path chosen through the public options, and user mistakes.

use gpu_scan::reference::apps as reference;
use gpu_scan::{input, CompactKernel, CompactOptions, Element, Gpu, HistogramOptions, Keep, Op, TempStorage};
use std::process::ExitCode;
use workspace_tests::checks::assert_none_failed;
use workspace_tests::exact as exact_floats;
use workspace_tests::{calls, gpu_test, test, vectors};

fn main() -> ExitCode {
    workspace_tests::main(vec![
        gpu_test("compaction_matches_the_cpu", compaction_matches_the_cpu),
        gpu_test("compaction_pipelined_matches_the_cpu", compaction_pipelined_matches_the_cpu),
        gpu_test("compaction_mistakes_are_errors", compaction_mistakes_are_errors),
        gpu_test("flagged_indices_are_the_flagged_positions", flagged_indices_are_the_flagged_positions),
        gpu_test("kept_flags_mark_what_a_comparison_keeps", kept_flags_mark_what_a_comparison_keeps),
        gpu_test("radix_sort_matches_a_stable_cpu_sort", radix_sort_matches_a_stable_cpu_sort),
        gpu_test("float_keys_sort_with_negative_zero_first_and_nans_last", float_keys_sort_order),
        gpu_test("histogram_counts_starts_and_permutation", histogram_counts_starts_and_permutation),
        gpu_test("histogram_counts_alone_match_the_cpu", histogram_counts_alone_match_the_cpu),
        gpu_test("coo_to_csr_and_back", coo_to_csr_and_back),
        gpu_test("compaction_lecture_vectors", compaction_lecture_vectors),
        gpu_test("segmented_scans_match_the_cpu", segmented_scans_match_the_cpu),
        gpu_test("segmented_mistakes_are_errors", segmented_mistakes_are_errors),
        gpu_test("linear_recurrence_matches_the_loop", linear_recurrence_matches_the_loop),
        gpu_test(
            "linear_recurrence_is_exact_on_integer_valued_inputs",
            linear_recurrence_is_exact_on_integer_valued_inputs,
        ),
        gpu_test("batched_scans_along_either_axis", batched_scans_along_either_axis),
        test("batched_shapes_take_every_default_kernel", batched_shapes_take_every_default_kernel),
        gpu_test("every_batched_kernel_chosen_by_its_options", every_batched_kernel_chosen_by_its_options),
        gpu_test(
            "narrow_columns_scan_as_one_pipelined_scan_of_rows",
            narrow_columns_scan_as_one_pipelined_scan_of_rows,
        ),
        gpu_test("few_long_rows_scan_each_row_whole", few_long_rows_scan_each_row_whole),
    ])
}

fn tuning() -> &'static scan_abi::tuning::Tuning {
    scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH)
}

fn shapes() -> &'static scan_abi::tuning::Shapes {
    &tuning().shapes
}

/// The compaction's tile (the single-pass tile for 4- and 8-byte elements).
fn tile<T>() -> usize {
    shapes().compact.at(std::mem::size_of::<T>()).tile() as usize
}

/// The pipelined compaction's tile.
fn pipe_tile<T>() -> usize {
    shapes().compact_pipeline.at(std::mem::size_of::<T>()).tile() as usize
}

fn sizes<T>() -> Vec<usize> {
    let t = tile::<T>();
    vec![0, 1, 31, 33, 1023, t - 1, t, t + 1, 3 * t + 7, 100_003, (1 << 20) + 7, 10_000_019]
}

/// One compaction against the CPU with `kernel`.
fn compact_case<T: Element>(
    gpu: &Gpu,
    temp: &mut TempStorage,
    n: usize,
    keep: Keep<T>,
    kernel: CompactKernel,
) -> Option<String> {
    let data: Vec<T> = input::generate::<T>(gpu_scan::Op::Xor, n as u64, n);
    let data: Vec<T> = match keep {
        // Small values, so that a threshold keeps some and drops some.
        Keep::Greater(_) => input::cub_pattern::<T>(n).into_iter().zip(&data).map(|(c, _)| c).collect(),
        _ => data.iter().enumerate().map(|(i, &x)| if i % 3 == 0 { T::zero() } else { x }).collect(),
    };
    compact_data_case(gpu, temp, data, keep, kernel)
}

/// `n` elements, the first `dropped` of them zero and the others not.
fn kept_after<T: Element>(n: usize, dropped: usize) -> Vec<T> {
    (0..n).map(|i| if i < dropped { T::zero() } else { T::from_bits(1) }).collect()
}

/// [`compact_case`] of the given `data`.
fn compact_data_case<T: Element>(
    gpu: &Gpu,
    temp: &mut TempStorage,
    data: Vec<T>,
    keep: Keep<T>,
    kernel: CompactKernel,
) -> Option<String> {
    let n = data.len();
    let flags: Vec<u8> = (0..n as u64).map(|i| input::bits(7, i).is_multiple_of(3) as u8).collect();
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "in", &data).unwrap();
    let d_flags = gpu.upload(&stream, "flags", &flags).unwrap();
    let poison = vec![input::value::<T>(gpu_scan::Op::Xor, 99, 0); n];
    let mut d_out = gpu.upload(&stream, "out", &poison).unwrap();
    let opts = CompactOptions::new(keep).kernel(kernel);
    let kept = calls::compact(gpu, &d_in, Some(&d_flags), &mut d_out, &opts, temp).unwrap() as usize;
    let got = gpu.download(&stream, &d_out).unwrap();
    let want = reference::compact(&data, Some(&flags), keep);
    let what = format!("compact {} n={n} {keep:?} {kernel:?}", T::TYPE.name());
    if kept != want.len() {
        return Some(format!("{what}: kept {kept}, expected {}", want.len()));
    }
    let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    if bits(&got[kept..]) != bits(&poison[kept..]) {
        return Some(format!("{what}: wrote past the kept elements"));
    }
    (bits(&got[..kept]) != bits(&want)).then(|| format!("{what}: wrong elements"))
}

fn compaction_matches_the_cpu(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            for n in sizes::<$t>() {
                let three: $t = "3".parse().unwrap();
                for keep in [Keep::Greater(three), Keep::NonZero, Keep::Flags] {
                    failures.extend(compact_case::<$t>(gpu, &mut temp, n, keep, CompactKernel::Auto));
                    failures.extend(compact_case::<$t>(gpu, &mut temp, n, keep, CompactKernel::Tiles));
                }
            }
        )*};
    }
    each!(u8, u16, u32, i32, u64, i64, f32, f64);
    failures.extend(compact_case::<u32>(gpu, &mut temp, 1 << 28, Keep::Greater(3), CompactKernel::Auto));
    assert_none_failed(&failures);
}

/// The pipelined form of the compaction (the default from 64 MiB for comparisons), at the same
/// sizes and its own tile's edges.
fn compaction_pipelined_matches_the_cpu(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            let t = pipe_tile::<$t>();
            for n in sizes::<$t>().into_iter().chain([t - 1, t, t + 1, 7 * t + 3]) {
                let three: $t = "3".parse().unwrap();
                for keep in [Keep::Greater(three), Keep::NonZero, Keep::Flags] {
                    failures.extend(compact_case::<$t>(gpu, &mut temp, n, keep, CompactKernel::Pipelined));
                }
            }
        )*};
    }
    each!(u32, i32, u64, i64, f32, f64);
    // Everything kept but the first element (and, once, a run of three): from the second share
    // on, whole shares of kept elements start off their output's 16-byte alignment, so their last
    // places fall past the share and go straight out.
    macro_rules! nearly_all {
        ($($t:ty),*) => {$(
            let t = pipe_tile::<$t>();
            for n in [t + 1, 7 * t + 3] {
                for dropped in [1usize, 3] {
                    failures.extend(compact_data_case::<$t>(gpu, &mut temp, kept_after(n, dropped), Keep::NonZero, CompactKernel::Pipelined));
                }
            }
        )*};
    }
    nearly_all!(u32, u64, f32, f64);
    assert_none_failed(&failures);
}

fn compaction_mistakes_are_errors(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let d_in = gpu.upload(&stream, "in", &[1u32, 2, 3]).unwrap();
    let mut short = gpu.alloc_zeros::<u32>(&stream, "out", 2).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", 3).unwrap();
    let flags = gpu.upload(&stream, "flags", &[1u8]).unwrap();
    let keep = |k| CompactOptions::new(k);
    let e = calls::compact(gpu, &d_in, None, &mut short, &keep(Keep::NonZero), &mut temp).unwrap_err();
    assert!(e.to_string().contains("output holds 2"), "{e}");
    let e = calls::compact(gpu, &d_in, None, &mut out, &keep(Keep::Flags), &mut temp).unwrap_err();
    assert!(e.to_string().contains("call compact_flagged"), "{e}");
    let e = calls::compact(gpu, &d_in, Some(&flags), &mut out, &keep(Keep::Flags), &mut temp).unwrap_err();
    assert!(e.to_string().contains("the flags holds 1 bytes, but 3 are needed"), "{e}");
    let bytes = gpu.upload(&stream, "in", &[1u8, 2, 3]).unwrap();
    let mut bytes_out = gpu.alloc_zeros::<u8>(&stream, "out", 3).unwrap();
    let pipelined = CompactOptions::new(Keep::NonZero).kernel(CompactKernel::Pipelined);
    let e = calls::compact(gpu, &bytes, None, &mut bytes_out, &pipelined, &mut temp).unwrap_err();
    assert!(e.to_string().contains("4- and 8-byte"), "{e}");
    assert_eq!(calls::compact(gpu, &d_in, None, &mut out, &keep(Keep::Greater(1)), &mut temp).unwrap(), 2);
}

/// The positions of the set flags as `I` with `kernel` against the CPU: none written past the
/// count, and no more temporary storage taken than the query says.
fn flagged_indices_case<I: Element>(gpu: &Gpu, n: usize, kernel: CompactKernel) -> Option<String> {
    let stream = gpu.stream().clone();
    let flags: Vec<u8> = (0..n as u64).map(|i| input::bits(n as u64, i).is_multiple_of(5) as u8 * 7).collect();
    let want: Vec<u64> = (0..n as u64).filter(|&i| flags[i as usize] != 0).collect();
    let d_flags = gpu.upload(&stream, "flags", &flags).unwrap();
    let poison = vec![I::from_bits(0xdead); n];
    let mut d_out = gpu.upload(&stream, "positions", &poison).unwrap();
    let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1).unwrap();
    let mut temp = TempStorage::new();
    let opts = CompactOptions::new(Keep::Flags).kernel(kernel);
    gpu.flagged_indices(&stream, &d_flags, &mut d_out, &mut count, &opts, &mut temp).unwrap();
    let kept = gpu.read_count(&stream, &count).unwrap() as usize;
    let got: Vec<u64> = gpu.download(&stream, &d_out).unwrap().iter().map(|x| x.to_bits()).collect();
    let what = format!("flagged_indices {} n={n} {kernel:?}", I::TYPE.name());
    let bytes = gpu.flagged_indices_temp_bytes::<I>(n as u64, kernel).unwrap();
    if kept != want.len() {
        Some(format!("{what}: counted {kept}, expected {}", want.len()))
    } else if got[..kept] != want[..] {
        Some(format!("{what}: wrong positions"))
    } else if got[kept..].iter().any(|&x| x != 0xdead) {
        Some(format!("{what}: wrote past the count"))
    } else {
        (temp.capacity() as u64 > bytes)
            .then(|| format!("{what}: took {} bytes, the query said {bytes}", temp.capacity()))
    }
}

fn flagged_indices_are_the_flagged_positions(gpu: &Gpu) {
    let mut failures = Vec::new();
    for n in sizes::<u64>().into_iter().chain([pipe_tile::<u32>() + 1, 7 * pipe_tile::<u64>() + 3]) {
        for kernel in [CompactKernel::Auto, CompactKernel::Tiles] {
            failures.extend(flagged_indices_case::<u32>(gpu, n, kernel));
            failures.extend(flagged_indices_case::<u64>(gpu, n, kernel));
        }
    }
    // Tiles of flags begin at every multiple of the byte tile: all set, none, every other.
    let bytes = shapes().compact.at(1).tile() as usize;
    for (n, pattern) in [(3 * bytes + 1, 1usize), (2 * bytes - 1, 0), (4 * bytes, 2)] {
        let flags: Vec<u8> = (0..n).map(|i| (pattern == 1 || (pattern == 2 && i % 2 == 1)) as u8).collect();
        let want: Vec<u64> = (0..n as u64).filter(|&i| flags[i as usize] != 0).collect();
        let stream = gpu.stream().clone();
        let d_flags = gpu.upload(&stream, "flags", &flags).unwrap();
        let mut out = gpu.alloc_zeros::<u64>(&stream, "positions", n).unwrap();
        let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1).unwrap();
        let opts = CompactOptions::new(Keep::Flags);
        gpu.flagged_indices(&stream, &d_flags, &mut out, &mut count, &opts, &mut TempStorage::new()).unwrap();
        let kept = gpu.read_count(&stream, &count).unwrap() as usize;
        let got = gpu.download(&stream, &out).unwrap();
        if kept != want.len() || got[..kept] != want[..] {
            failures.push(format!("flagged_indices of pattern {pattern} n={n}: {kept} kept, want {}", want.len()));
        }
    }
    assert_none_failed(&failures);
    let stream = gpu.stream().clone();
    let flags = gpu.upload(&stream, "flags", &[1u8, 0, 1]).unwrap();
    let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1).unwrap();
    let mut temp = TempStorage::new();
    let mut bytes = gpu.alloc_zeros::<u8>(&stream, "positions", 3).unwrap();
    let e = gpu
        .flagged_indices(&stream, &flags, &mut bytes, &mut count, &CompactOptions::new(Keep::Flags), &mut temp)
        .unwrap_err();
    assert!(e.to_string().contains("it is for u32 u64"), "{e}");
    let mut short = gpu.alloc_zeros::<u32>(&stream, "positions", 2).unwrap();
    let e = gpu
        .flagged_indices(&stream, &flags, &mut short, &mut count, &CompactOptions::new(Keep::Flags), &mut temp)
        .unwrap_err();
    assert!(e.to_string().contains("holds 2"), "{e}");
    let mut out = gpu.alloc_zeros::<u32>(&stream, "positions", 3).unwrap();
    let nonzero = CompactOptions::new(Keep::NonZero);
    let e = gpu.flagged_indices(&stream, &flags, &mut out, &mut count, &nonzero, &mut temp).unwrap_err();
    assert!(e.to_string().contains("keeps by flags"), "{e}");
    let pipelined = CompactOptions::new(Keep::Flags).kernel(CompactKernel::Pipelined);
    let e = gpu.flagged_indices(&stream, &flags, &mut out, &mut count, &pipelined, &mut temp).unwrap_err();
    assert!(e.to_string().contains("one kernel"), "{e}");
}

/// The flags of `n` elements of `T` kept by a comparison, against the CPU's test of each element
/// (whatever the flags held before).
fn kept_flags_case<T: Element>(gpu: &Gpu, n: usize, three: T) -> Vec<String> {
    let stream = gpu.stream().clone();
    let data: Vec<T> = input::generate::<T>(Op::Xor, n as u64, n)
        .into_iter()
        .enumerate()
        .map(|(i, x)| if i % 3 == 0 { T::zero() } else { x })
        .collect();
    let d_in = gpu.upload(&stream, "in", &data).unwrap();
    let mut failures = Vec::new();
    for keep in [Keep::Greater(three), Keep::NonZero] {
        let mut d_flags = gpu.upload(&stream, "flags", &vec![7u8; n]).unwrap();
        gpu.kept_flags(&stream, &d_in, &mut d_flags, &CompactOptions::new(keep)).unwrap();
        let got = gpu.download(&stream, &d_flags).unwrap();
        let want: Vec<u8> = data.iter().map(|&x| keep.keeps(x, 0) as u8).collect();
        if got != want {
            failures.push(format!("kept_flags {} n={n} {keep:?}", T::TYPE.name()));
        }
    }
    failures
}

/// The flags of a comparison on every type, nothing at n = 0, and the mistakes refused.
fn kept_flags_mark_what_a_comparison_keeps(gpu: &Gpu) {
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            for n in [0usize, 1, 255, 257, 100_003] {
                failures.extend(kept_flags_case::<$t>(gpu, n, "3".parse().unwrap()));
            }
        )*};
    }
    each!(u8, u16, u32, i32, u64, i64, f32, f64);
    assert_none_failed(&failures);
    let stream = gpu.stream().clone();
    let data = gpu.upload(&stream, "in", &[1u32, 5, 2]).unwrap();
    let mut short = gpu.alloc_zeros::<u8>(&stream, "flags", 2).unwrap();
    let e = gpu.kept_flags(&stream, &data, &mut short, &CompactOptions::new(Keep::NonZero)).unwrap_err();
    assert!(e.to_string().contains("the flags"), "{e}");
    let mut flags = gpu.alloc_zeros::<u8>(&stream, "flags", 3).unwrap();
    let e = gpu.kept_flags(&stream, &data, &mut flags, &CompactOptions::new(Keep::Flags)).unwrap_err();
    assert!(e.to_string().contains("takes a comparison"), "{e}");
}

fn random_keys<T: Element>(seed: u64, n: usize) -> Vec<T> {
    (0..n as u64).map(|i| T::from_bits(input::bits(seed, i))).collect()
}

fn radix_sort_matches_a_stable_cpu_sort(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            // Keys only, in buffers reused from size to size (grown), then once more at a small size.
            let mut bufs = TempStorage::new();
            let mut sizes = vec![0usize, 1, 31, 33, 2047, 2048, 2049, 3071, 3072, 3073, 4095, 4096, 4097, 100_003, (1 << 20) + 7, 5_000_011];
            // Both pass kernels' tiles, less one, exactly, and one more; two tiles and one more.
            for values in [false, true] {
                let tile = gpu.tuning().shapes.sort_pass(core::mem::size_of::<$t>(), values).tile() as usize;
                sizes.extend([tile - 1, tile, tile + 1, 2 * tile + 1]);
            }
            sizes.sort_unstable();
            sizes.dedup();
            for n in sizes {
                // Few distinct keys at some sizes, so stability is visible through the values.
                let mut keys = random_keys::<$t>(n as u64, n);
                if n % 2 == 1 {
                    keys = keys.into_iter().map(|k| <$t as scan_abi::Element>::from_bits(scan_abi::Element::to_bits(k) & 0x8000_0000_0000_0007)).collect();
                }
                let values: Vec<u32> = (0..n as u32).collect();
                let mut d_keys = gpu.upload(&stream, "keys", &keys).unwrap();
                let mut d_values = gpu.upload(&stream, "values", &values).unwrap();
                calls::sort(gpu, &mut d_keys, Some(&mut d_values)).unwrap();
                let (want, want_values) = reference::sort(&keys, Some(&values));
                let got = gpu.download(&stream, &d_keys).unwrap();
                let bits = |v: &[$t]| v.iter().map(|&x| scan_abi::Element::to_bits(x)).collect::<Vec<u64>>();
                if bits(&got) != bits(&want) || gpu.download(&stream, &d_values).unwrap() != want_values.unwrap() {
                    failures.push(format!("sort {} n={n}", stringify!($t)));
                }
                let mut d_keys = gpu.upload(&stream, "keys", &keys).unwrap();
                calls::sort_in(gpu, &mut d_keys, None, &mut bufs).unwrap();
                if bits(&gpu.download(&stream, &d_keys).unwrap()) != bits(&want) {
                    failures.push(format!("sort {} n={n} keys only, reused buffers", stringify!($t)));
                }
            }
            let keys = random_keys::<$t>(7, 1000);
            let mut d_keys = gpu.upload(&stream, "keys", &keys).unwrap();
            calls::sort_in(gpu, &mut d_keys, None, &mut bufs).unwrap();
            let bits = |v: &[$t]| v.iter().map(|&x| scan_abi::Element::to_bits(x)).collect::<Vec<u64>>();
            if bits(&gpu.download(&stream, &d_keys).unwrap()) != bits(&reference::sort(&keys, None).0) {
                failures.push(format!("sort {} n=1000 in grown buffers", stringify!($t)));
            }
        )*};
    }
    each!(u32, i32, u64, i64, f32, f64);
    let keys = random_keys::<u32>(1, 1 << 28);
    let mut d = gpu.upload(&stream, "keys", &keys).unwrap();
    calls::sort(gpu, &mut d, None).unwrap();
    let mut want = keys;
    want.sort_unstable();
    if gpu.download(&stream, &d).unwrap() != want {
        failures.push("sort u32 n=2^28".into());
    }
    assert_none_failed(&failures);
}

fn float_keys_sort_order(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let keys = [f32::NAN, 1.0, 0.0, -0.0, f32::NEG_INFINITY, -f32::NAN, f32::INFINITY, -1.0];
    let mut d = gpu.upload(&stream, "keys", &keys).unwrap();
    calls::sort(gpu, &mut d, None).unwrap();
    let got = gpu.download(&stream, &d).unwrap();
    assert_eq!(
        &got[..6].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        &[f32::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, f32::INFINITY].map(f32::to_bits)
    );
    assert!(got[6].is_nan() && got[7].is_nan());
}

fn histogram_counts_starts_and_permutation(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let mut failures = Vec::new();
    for n in [0usize, 1, 33, 2049, 100_003, 3_000_017] {
        for bins in [1u32, 7, 256, 1024] {
            let mut data: Vec<f32> = input::uniform::<f32>(n as u64, n, -0.1, 1.1);
            if n > 10 {
                data[3] = f32::NAN;
                data[5] = 1.0;
            }
            let d = gpu.upload(&stream, "data", &data).unwrap();
            let got = calls::histogram(gpu, &d, &HistogramOptions::new(bins, 0.0, 1.0)).unwrap();
            if got != reference::histogram(&data, bins, 0.0, 1.0).unwrap() {
                failures.push(format!("histogram n={n} bins={bins}"));
            }
        }
    }
    let ints: Vec<i64> = (0..1_000_003).map(|i| (input::bits(3, i) % 2000) as i64 - 500).collect();
    let d = gpu.upload(&stream, "ints", &ints).unwrap();
    if calls::histogram(gpu, &d, &HistogramOptions::new(100, 0.0, 1000.0)).unwrap()
        != reference::histogram(&ints, 100, 0.0, 1000.0).unwrap()
    {
        failures.push("histogram i64".into());
    }
    assert_none_failed(&failures);
    let e = calls::histogram(gpu, &d, &HistogramOptions::new(0, 0.0, 1.0)).unwrap_err();
    assert!(e.to_string().contains("0 bins"), "{e}");
    let e = calls::histogram(gpu, &d, &HistogramOptions::new(10, 1.0, 1.0)).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
}

/// The counts-only kernel: every key type, sizes around its tile and its persistent grid, values
/// random, sorted (a warp's lanes in one bin) and all in one bin, NaN and out-of-range values.
fn histogram_counts_alone_match_the_cpu(gpu: &Gpu) {
    fn check<T: Element>(gpu: &Gpu, data: &[T], bins: u32, lo: f64, hi: f64, failures: &mut Vec<String>) {
        let d = gpu.upload(gpu.stream(), "data", data).unwrap();
        let got = calls::histogram_counts(gpu, &d, &HistogramOptions::new(bins, lo, hi)).unwrap();
        if got != reference::bin_counts(data, bins, lo, hi).unwrap() {
            failures.push(format!("counts of {} {} in {bins} bins", data.len(), T::TYPE.name()));
        }
    }
    let mut failures = Vec::new();
    for n in [0usize, 1, 31, 33, 2047, 2049, 100_003, 3_000_017, 40_000_003] {
        for bins in [1u32, 7, 1024] {
            let mut data: Vec<f32> = input::uniform::<f32>(n as u64, n, -0.1, 1.1);
            if n > 10 {
                data[3] = f32::NAN;
                data[5] = 1.0;
                data[7] = f32::NEG_INFINITY;
            }
            check(gpu, &data, bins, 0.0, 1.0, &mut failures);
            if n > 1000 && bins == 1024 {
                data.sort_by(f32::total_cmp);
                check(gpu, &data, bins, 0.0, 1.0, &mut failures);
                check(gpu, &vec![0.5f32; n], bins, 0.0, 1.0, &mut failures);
            }
        }
    }
    let n = 1_000_003;
    let wide = |i: u64| (input::bits(3, i) % 2000) as i64 - 500;
    check(gpu, &(0..n).map(|i| wide(i) as i32).collect::<Vec<_>>(), 100, 0.0, 1000.0, &mut failures);
    check(gpu, &(0..n).map(|i| wide(i) as u32).collect::<Vec<_>>(), 100, 0.0, 1000.0, &mut failures);
    check(gpu, &(0..n).map(wide).collect::<Vec<_>>(), 100, -250.0, 1000.0, &mut failures);
    check(gpu, &(0..n).map(|i| wide(i) as u64).collect::<Vec<_>>(), 3, 0.0, 1e19, &mut failures);
    check(gpu, &input::uniform::<f64>(5, n as usize, -1.0, 1.0), 999, -0.9, 0.9, &mut failures);
    assert_none_failed(&failures);
    let d = gpu.upload(gpu.stream(), "data", &[1.0f32]).unwrap();
    let e = calls::histogram_counts(gpu, &d, &HistogramOptions::new(1025, 0.0, 1.0)).unwrap_err();
    assert!(e.to_string().contains("1025 bins"), "{e}");
    let mut short = gpu.alloc_zeros::<u32>(gpu.stream(), "counts", 4).unwrap();
    let e = gpu.histogram_counts(gpu.stream(), &d, &mut short, &HistogramOptions::new(4, 0.0, 1.0)).unwrap_err();
    assert!(e.to_string().contains("bin counts"), "{e}");
}

fn coo_to_csr_and_back(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let mut failures = Vec::new();
    for (nnz, nrows) in
        [(0usize, 1u32), (1, 1), (1, 5), (1000, 7), (100_003, 40_000), (10_000_000, 3_000_000), (1 << 28, 1 << 26)]
    {
        let mut rows: Vec<u32> =
            (0..nnz as u64).map(|i| (input::bits(9, i) % nrows as u64) as u32).filter(|r| r % 50 != 7).collect();
        rows.sort_unstable();
        let d = gpu.upload(&stream, "rows", &rows).unwrap();
        let offsets = calls::coo_to_csr(gpu, &d, nrows).unwrap();
        if gpu.download(&stream, &offsets).unwrap() != reference::csr_offsets(&rows, nrows) {
            failures.push(format!("offsets nnz={nnz} rows={nrows}"));
        }
        if gpu.download(&stream, &calls::csr_to_coo(gpu, &offsets).unwrap()).unwrap() != rows {
            failures.push(format!("round trip nnz={nnz} rows={nrows}"));
        }
    }
    // Rows in any order: runs of one row inside a warp, rows that stop mid-warp, and scattered rows.
    for (nnz, nrows) in [(33usize, 3u32), (4099, 5), (1_000_003, 1_000), (1_000_003, 900_001)] {
        let rows: Vec<u32> = (0..nnz as u64)
            .map(
                |i| if i % 3 == 0 { (input::bits(11, i) % nrows as u64) as u32 } else { (i / 7 % nrows as u64) as u32 },
            )
            .collect();
        let d = gpu.upload(&stream, "rows", &rows).unwrap();
        let offsets = calls::coo_to_csr(gpu, &d, nrows).unwrap();
        if gpu.download(&stream, &offsets).unwrap() != reference::csr_offsets(&rows, nrows) {
            failures.push(format!("offsets of unsorted rows nnz={nnz} rows={nrows}"));
        }
    }
    assert_none_failed(&failures);
    let d = gpu.upload(&stream, "rows", &[0u32, 3, 9]).unwrap();
    let e = calls::coo_to_csr(gpu, &d, 5).unwrap_err();
    assert!(e.to_string().contains("1 of 3 row indices are not below 5"), "{e}");
}

/// The lecture's compaction vectors.
fn compaction_lecture_vectors(gpu: &Gpu) {
    let v = vectors();
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    for case in v["compaction"].as_array().unwrap() {
        let input: Vec<i32> = serde_json::from_value(case["input"].clone()).unwrap();
        let flags: Vec<u8> = serde_json::from_value(case["flags"].clone()).unwrap();
        let want: Vec<i32> = serde_json::from_value(case["output"].clone()).unwrap();
        let threshold = case["keep_if_greater_than"].as_i64().unwrap() as i32;
        let d_in = gpu.upload(&stream, "in", &input).unwrap();
        let d_flags = gpu.upload(&stream, "flags", &flags).unwrap();
        for keep in [Keep::Greater(threshold), Keep::Flags] {
            let mut d_out = gpu.alloc_zeros::<i32>(&stream, "out", input.len()).unwrap();
            let opts = CompactOptions::new(keep);
            let kept = calls::compact(gpu, &d_in, Some(&d_flags), &mut d_out, &opts, &mut temp).unwrap() as usize;
            assert_eq!(&gpu.download(&stream, &d_out).unwrap()[..kept], &want[..], "{}", case["name"]);
        }
        let scan: Vec<u32> = serde_json::from_value(case["flag_exclusive_scan"].clone()).unwrap();
        let flags32: Vec<u32> = flags.iter().map(|&f| f as u32).collect();
        let opts = gpu_scan::ScanOptions::new(Op::Add).exclusive(true);
        assert_eq!(gpu.scan_host(&flags32, &opts).unwrap(), scan);
    }
    let large = &v["compaction_large"];
    let n = large["n"].as_u64().unwrap() as usize;
    let input: Vec<i32> = (0..n as i32).map(|i| (i % 10) - 5).collect();
    let d_in = gpu.upload(&stream, "in", &input).unwrap();
    let mut d_out = gpu.alloc_zeros::<i32>(&stream, "out", n).unwrap();
    let kept = calls::compact(gpu, &d_in, None, &mut d_out, &CompactOptions::new(Keep::Greater(0)), &mut temp).unwrap();
    assert_eq!(kept, large["kept_count"].as_u64().unwrap());
    assert_eq!(&gpu.download(&stream, &d_out).unwrap()[..kept as usize], &[1, 2, 3, 4].repeat(100)[..]);
}

/// Whether two results hold the same bits (so NaNs compare equal to themselves).
fn same_bits<T: Element>(got: &[T], want: &[T]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.to_bits() == w.to_bits())
}

/// Whether `op` gives the same bits on `T` in any combine order on any input (float sums and
/// products do only on integer-valued inputs: `workspace_tests::exact`).
fn order_free<T: Element>(op: Op) -> bool {
    !op.order_sensitive(T::TYPE)
}

/// Segmented scans against the per-segment CPU scan, bit for bit: heads at random (sparse and
/// dense), from offsets, and fixed-length rows; every operator the segmented kernels have for the
/// type, the bitwise ones of the integers too (float sums and products of integer-valued
/// inputs); inclusive and exclusive. The batched rows alongside, for the arithmetic operators.
fn segmented_scans_match_the_cpu(gpu: &Gpu) {
    use gpu_scan::{Axis, BatchedOptions, Matrix, SegmentedKernel, SegmentedOptions};
    use scan_abi::kernel::ARITHMETIC_OPS;
    use scan_abi::Family;
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let tile = |size| gpu.tuning().shapes.segmented_pipeline.at(size).tile() as usize;
    let sizes = [0usize, 1, 33, 1023, tile(8) + 1, tile(4) - 1, tile(4) + 1, 4097, 100_003];
    macro_rules! each {
        ($($t:ty),*) => {$(
            for n in sizes {
                for mean in [1u64, 3, 50, 5000, 1 << 40] {
                    let heads: Vec<u8> = (0..n as u64).map(|i| (input::bits(mean, i) % mean == 0) as u8).collect();
                    let d_heads = gpu.upload(&stream, "heads", &heads).unwrap();
                    let ty = <$t as scan_abi::Element>::TYPE;
                    for op in Op::ALL.into_iter().filter(|&op| Family::Segmented.built_for(ty, Some(op))) {
                        let data: Vec<$t> = exact_floats::scan_input::<$t>(op, n as u64 ^ mean, n);
                        let d_in = gpu.upload(&stream, "in", &data).unwrap();
                        for exclusive in [false, true] {
                            let mut d_out = gpu.alloc_zeros::<$t>(&stream, "out", n).unwrap();
                            let want = reference::segmented(op, &data, |i| heads[i] != 0, exclusive).unwrap();
                            for kernel in [SegmentedKernel::Tiles, SegmentedKernel::Pipelined] {
                                let opts = SegmentedOptions::new(op).exclusive(exclusive).kernel(kernel);
                                gpu.segmented_scan(&stream, &d_in, &d_heads, &mut d_out, &opts, &mut temp).unwrap();
                                if !same_bits(&gpu.download(&stream, &d_out).unwrap(), &want) {
                                    let (t, k) = (stringify!($t), kernel.name());
                                    failures.push(format!("segmented {t} {} n={n} mean={mean} exclusive={exclusive} {k}", op.name()));
                                }
                            }
                            let cols = (mean as usize).clamp(1, 1000);
                            if n % cols == 0 && ARITHMETIC_OPS.contains(&op) {
                                let matrix = Matrix::new((n / cols) as u64, cols as u64);
                                let opts = BatchedOptions::new(Axis::Rows, op).exclusive(exclusive);
                                gpu.batched_scan(&stream, &d_in, matrix, &mut d_out, &opts, &mut temp).unwrap();
                                let want = reference::segmented(op, &data, |i| i % cols == 0, exclusive).unwrap();
                                if !same_bits(&gpu.download(&stream, &d_out).unwrap(), &want) {
                                    failures.push(format!("rows {} {} n={n} cols={cols} exclusive={exclusive}", stringify!($t), op.name()));
                                }
                            }
                        }
                    }
                }
            }
        )*};
    }
    each!(u32, i32, u64, i64, f32, f64);

    // The shape torch.cumsum is slow on: (1048576, 8) along the rows; and long segments.
    for (n, cols) in [(8usize << 20, 8u64), ((1 << 24) + 7, 1 << 22)] {
        let data: Vec<i32> = input::generate::<i32>(Op::Add, 5, n);
        let d_in = gpu.upload(&stream, "in", &data).unwrap();
        let mut d_out = gpu.alloc_zeros::<i32>(&stream, "out", n).unwrap();
        let opts = SegmentedOptions::new(Op::Add);
        gpu.segmented_scan_fixed(&stream, &d_in, cols, &mut d_out, &opts, &mut temp).unwrap();
        let want = reference::segmented(Op::Add, &data, |i| (i as u64).is_multiple_of(cols), false).unwrap();
        if gpu.download(&stream, &d_out).unwrap() != want {
            failures.push(format!("rows of {cols}, n={n}"));
        }
    }

    // Offsets, and a float sum checked against an f64 sum per segment.
    let n = 1_000_003usize;
    let starts: Vec<u64> = (0..n as u64).step_by(97).chain([5, 6, 7]).collect();
    let d_offsets = gpu.upload(&stream, "offsets", &starts).unwrap();
    let mut d_heads = gpu.alloc_zeros::<u8>(&stream, "heads", n).unwrap();
    gpu.heads_from_offsets(&stream, &d_offsets, &mut d_heads).unwrap();
    let data = input::uniform::<f32>(3, n, -1.0, 1.0);
    let d_in = gpu.upload(&stream, "in", &data).unwrap();
    let mut d_out = gpu.alloc_zeros::<f32>(&stream, "out", n).unwrap();
    let is_start: std::collections::HashSet<u64> = starts.iter().copied().collect();
    for kernel in [SegmentedKernel::Tiles, SegmentedKernel::Pipelined] {
        let opts = SegmentedOptions::new(Op::Add).kernel(kernel);
        gpu.segmented_scan(&stream, &d_in, &d_heads, &mut d_out, &opts, &mut temp).unwrap();
        let got = gpu.download(&stream, &d_out).unwrap();
        let (mut sum, mut mag) = (0f64, 0f64);
        for i in 0..n {
            if is_start.contains(&(i as u64)) {
                (sum, mag) = (0.0, 0.0);
            }
            sum += data[i] as f64;
            mag += data[i].abs() as f64;
            if (got[i] as f64 - sum).abs() > 64.0 * f32::EPSILON as f64 * mag {
                failures.push(format!(
                    "f32 segmented sum by offsets ({}): element {i}: {} vs {sum}",
                    kernel.name(),
                    got[i]
                ));
                break;
            }
        }
    }
    assert_none_failed(&failures);
}

fn segmented_mistakes_are_errors(gpu: &Gpu) {
    use gpu_scan::{Axis, BatchedOptions, Matrix, SegmentedKernel, SegmentedOptions};
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let d_in = gpu.upload(&stream, "in", &[1u32, 2, 3, 4]).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", 4).unwrap();
    let short = gpu.upload(&stream, "heads", &[1u8]).unwrap();
    let add = SegmentedOptions::new(Op::Add);
    let e = gpu.segmented_scan(&stream, &d_in, &short, &mut out, &add, &mut temp).unwrap_err();
    assert!(e.to_string().contains("the head flags holds 1 bytes, but 4 are needed"), "{e}");
    let e = gpu.segmented_scan_fixed(&stream, &d_in, 0, &mut out, &add, &mut temp).unwrap_err();
    assert!(e.to_string().contains("the segment length is 0"), "{e}");
    let floats = gpu.upload(&stream, "floats", &[1f32, 2.0, 3.0, 4.0]).unwrap();
    let mut float_out = gpu.alloc_zeros::<f32>(&stream, "float out", 4).unwrap();
    let xor = SegmentedOptions::new(Op::Xor);
    let e = gpu.segmented_scan_fixed(&stream, &floats, 2, &mut float_out, &xor, &mut temp).unwrap_err();
    assert!(e.to_string().contains("built for add, mul, min, max on f32, not xor on f32"), "{e}");
    let pipelined = add.kernel(SegmentedKernel::Pipelined);
    let e = gpu.segmented_scan_fixed(&stream, &d_in, 2, &mut out, &pipelined, &mut temp).unwrap_err();
    assert!(e.to_string().contains("not segments of a fixed length"), "{e}");
    let rows = BatchedOptions::new(Axis::Rows, Op::Add);
    let e = gpu.batched_scan(&stream, &d_in, Matrix::new(1, 3), &mut out, &rows, &mut temp).unwrap_err();
    assert!(e.to_string().contains("a 1 x 3 matrix is not the input's 4 elements"), "{e}");
}

/// The linear recurrence against the sequential f64 loop, within 2 roundings per combine of the
/// magnitude recurrence `s[t] = |a[t]|·s[t-1] + |b[t]|` (the single-pass rounding count of
/// `verify::roundings`), with every kernel.
fn linear_recurrence_matches_the_loop(gpu: &Gpu) {
    use gpu_scan::apps::recurrence::RecurrenceFloat;
    use gpu_scan::reference::verify::roundings;
    use gpu_scan::{Algorithm, RecurrenceOptions, ScanKernel};
    fn check<F: RecurrenceFloat>(
        gpu: &Gpu,
        n: usize,
        (lo, hi): (f64, f64),
        x0: F,
        kernel: ScanKernel,
    ) -> Option<String> {
        let a = input::uniform::<F>(n as u64, n, lo, hi);
        let b = input::uniform::<F>(n as u64 ^ 1, n, -1.0, 1.0);
        let got = gpu.recurrence_host(&a, &b, &RecurrenceOptions::new(x0).kernel(kernel)).unwrap();
        let (x, s) = reference::recurrence(&a, &b, x0);
        let eps = if F::TYPE.size() == 4 { f32::EPSILON as f64 } else { f64::EPSILON };
        let bound = |t: usize| 2.0 * roundings(Algorithm::SinglePass, t, n) * eps * s[t];
        let t = (0..n).find(|&t| (got[t].into() - x[t]).abs() > bound(t))?;
        Some(format!(
            "{} {kernel:?} n={n} a in [{lo},{hi}) at {t}: {} vs {} (bound {:e})",
            F::TYPE.name(),
            got[t],
            x[t],
            bound(t)
        ))
    }
    let mut failures = Vec::new();
    let tile = tile::<u64>();
    let kernels = [ScanKernel::Auto, ScanKernel::Tiles, ScanKernel::Staged, ScanKernel::Pipelined];
    for n in [0usize, 1, 33, tile - 1, tile, tile + 1, 100_003, 3_000_017, 1 << 24] {
        for (range, x0) in [((0.9, 1.0), 1.5f32), ((-1.0, 1.0), -2.0), ((0.999, 1.001), 0.0)] {
            for kernel in kernels {
                failures.extend(check::<f32>(gpu, n, range, x0, kernel));
            }
        }
    }
    for n in [1usize, 1025, 100_003, 1 << 22] {
        for kernel in kernels {
            failures.extend(check::<f64>(gpu, n, (0.9, 1.0), 0.5, kernel));
        }
    }
    assert_none_failed(&failures);
    let e = gpu.recurrence_host(&[1.0f32], &[], &RecurrenceOptions::new(0.0)).unwrap_err();
    assert!(e.to_string().contains("the offsets b holds 0 values, but 1 are needed"), "{e}");
}

/// The linear recurrence on integer-valued inputs (factors in {-1, 0, 1}, small integer
/// offsets: [`exact_floats::recurrence`]), exact in any combine order: bit for bit against the
/// sequential loop, with every kernel, over tile edges and sizes where zero factors restart it.
fn linear_recurrence_is_exact_on_integer_valued_inputs(gpu: &Gpu) {
    use gpu_scan::apps::recurrence::RecurrenceFloat;
    use gpu_scan::{RecurrenceOptions, ScanKernel};
    fn check<F: RecurrenceFloat>(gpu: &Gpu, n: usize, x0: F, kernel: ScanKernel) -> Option<String> {
        let what = format!("{} {kernel:?} n={n} x0={x0} integer-valued", F::TYPE.name());
        let (a, b) = exact_floats::recurrence::<F>(n as u64, n);
        let got = match gpu.recurrence_host(&a, &b, &RecurrenceOptions::new(x0).kernel(kernel)) {
            Ok(got) => got,
            Err(e) => return Some(format!("{what}: {e}")),
        };
        let want: Vec<F> = reference::recurrence(&a, &b, x0).0.into_iter().map(F::from_f64).collect();
        let t = exact_floats::first_difference(&got, &want)?;
        let show = |v: &[F]| v.get(t).map_or("nothing".to_string(), |x| x.to_string());
        Some(format!("{what}: x[{t}] = {}, the loop gives {}", show(&got), show(&want)))
    }
    let mut failures = Vec::new();
    let tile = tile::<u64>();
    let kernels = [ScanKernel::Auto, ScanKernel::Tiles, ScanKernel::Staged, ScanKernel::Pipelined];
    for n in [0usize, 1, 33, tile - 1, tile, tile + 1, 100_003, 3_000_017, 1 << 24] {
        for kernel in kernels {
            failures.extend(check::<f32>(gpu, n, 3.0, kernel));
            failures.extend(check::<f64>(gpu, n, -2.0, kernel));
        }
    }
    assert_none_failed(&failures);
}

/// Scans a matrix down its columns and along its rows as `kernel` on `axis` (either axis when
/// `Auto`) and checks it against per-row and per-column CPU scans, bit for bit: the failures.
/// Float sums and products scan integer-valued inputs ([`exact_floats::matrix`]), exact in any
/// order.
fn check_batched<T: Element>(
    gpu: &Gpu,
    temp: &mut TempStorage,
    (rows, cols): (usize, usize),
    op: Op,
    axes: &[gpu_scan::Axis],
    kernel: gpu_scan::BatchedKernel,
) -> Vec<String> {
    use gpu_scan::{Axis, BatchedOptions, Matrix};
    let stream = gpu.stream().clone();
    let seed = (rows * cols) as u64;
    let mut failures = Vec::new();
    for &axis in axes {
        let data: Vec<T> = if order_free::<T>(op) {
            input::generate::<T>(op, seed, rows * cols)
        } else {
            exact_floats::matrix::<T>(op, seed, rows, cols, axis == Axis::Rows)
        };
        let d_in = gpu.upload(&stream, "matrix", &data).unwrap();
        for exclusive in [false, true] {
            let what =
                format!("{} {} {rows}x{cols} {axis:?} {kernel:?} exclusive={exclusive}", T::TYPE.name(), op.name());
            let mut d_out = gpu.alloc_zeros::<T>(&stream, "out", rows * cols).unwrap();
            let opts = BatchedOptions::new(axis, op).exclusive(exclusive).kernel(kernel);
            if let Err(e) =
                gpu.batched_scan(&stream, &d_in, Matrix::new(rows as u64, cols as u64), &mut d_out, &opts, temp)
            {
                failures.push(format!("{what}: {e}"));
                continue;
            }
            let got = gpu.download(&stream, &d_out).unwrap();
            let good = match axis {
                Axis::Rows => same_bits(&got, &reference::segmented(op, &data, |i| i % cols == 0, exclusive).unwrap()),
                Axis::Columns => (0..cols).all(|c| {
                    let column: Vec<T> = (0..rows).map(|r| data[r * cols + c]).collect();
                    let want = gpu_scan::reference::scan(op, &column, exclusive, None).unwrap();
                    same_bits(&(0..rows).map(|r| got[r * cols + c]).collect::<Vec<T>>(), &want)
                }),
            };
            if !good {
                failures.push(what);
            }
        }
    }
    failures
}

/// Matrix shapes (rows, cols) that between them take every default batched kernel
/// (`batched_shapes_take_every_default_kernel`).
const BATCHED_SHAPES: [(usize, usize); 33] = [
    (1, 1),
    (7, 3),
    (33, 1),
    (1, 33),
    (1000, 1000),
    (1 << 17, 8),
    (8, 1 << 17),
    (3, 100_003),
    (4097, 2),
    (100, 65),
    (50, 200),
    (2000, 129),
    (1024, 4096),
    (1100, 4099),
    (5, 4095),
    (301, 1365),
    (1 << 16, 31),
    (3000, 2048),
    (2, 16384),
    (5, 8193),
    (40, 3000),
    (6, 1001),
    (8, 2048),
    (9, 4100),
    (3000, 52),
    (20, 1024),
    (70_000, 4),
    (5000, 12),
    (777, 264),
    (9001, 16),
    (3841, 64),
    (20_003, 8),
    (1921, 128),
];

/// [`BATCHED_SHAPES`] take every batched kernel family by default (what the planner chooses for
/// buffers on 16-byte boundaries, as fresh allocations are), and the single-pass scan in
/// registers and staged for one row or column; 8 rows of 2^17 `f32` or more (4 MiB) take the
/// pipelined scan of long rows. The pipelined column kernels, which only large matrices take,
/// are checked by `every_batched_kernel_chosen_by_its_options`.
fn batched_shapes_take_every_default_kernel() {
    use gpu_scan::plan::batched::{plan, BatchedRequest};
    use gpu_scan::{Axis, BatchedKernel, Matrix};
    use scan_abi::kernel::{ARITHMETIC_OPS, WIDE_TYPES};
    use scan_abi::Family::*;
    let tuning = scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH);
    let mut taken = std::collections::BTreeSet::new();
    for ty in WIDE_TYPES {
        for op in ARITHMETIC_OPS {
            for (rows, cols) in BATCHED_SHAPES {
                for axis in Axis::ALL {
                    let matrix = Matrix::new(rows as u64, cols as u64);
                    let req = BatchedRequest {
                        ty,
                        op,
                        exclusive: false,
                        matrix,
                        axis,
                        kernel: BatchedKernel::Auto,
                        aligned: true,
                    };
                    taken.extend(plan(tuning, &req).unwrap().family());
                }
            }
        }
    }
    let expected = [
        SinglePass,
        SinglePassStaged,
        BatchedColumns,
        BatchedColumnVectors,
        BatchedColumnsVec,
        BatchedColumnsVecW4,
        BatchedColumnsBulk,
        BatchedShortRows,
        BatchedRows,
        BatchedLongRows,
        BatchedRowsPipelined,
    ];
    assert_eq!(taken, expected.into_iter().collect(), "the kernel families the default plans take");
}

/// Batched scans of a row-major matrix along either axis with the default kernels, against
/// per-row and per-column CPU scans, bit for bit (float sums and products of integer-valued
/// inputs): every type and operator over [`BATCHED_SHAPES`].
fn batched_scans_along_either_axis(gpu: &Gpu) {
    use gpu_scan::{Axis, BatchedKernel, BatchedOptions, Matrix};
    use scan_abi::kernel::ARITHMETIC_OPS;
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            for (rows, cols) in BATCHED_SHAPES {
                for op in ARITHMETIC_OPS {
                    failures.extend(check_batched::<$t>(gpu, &mut temp, (rows, cols), op, &Axis::ALL, BatchedKernel::Auto));
                }
            }
        )*};
    }
    each!(u32, i32, u64, i64, f32, f64);
    let stream = gpu.stream().clone();
    let d = gpu.upload(&stream, "m", &[1.0f32, 5.0, -2.0, 7.0, 3.0, 0.5]).unwrap();
    let mut out = gpu.alloc_zeros::<f32>(&stream, "out", 6).unwrap();
    let max = BatchedOptions::new(Axis::Columns, Op::Max);
    gpu.batched_scan(&stream, &d, Matrix::new(3, 2), &mut out, &max, &mut temp).unwrap();
    assert_eq!(gpu.download(&stream, &out).unwrap(), [1.0, 5.0, 1.0, 7.0, 3.0, 7.0]);
    let e = gpu.batched_scan(&stream, &d, Matrix::new(4, 2), &mut out, &max, &mut temp).unwrap_err();
    assert!(e.to_string().contains("a 4 x 2 matrix is not the input's 6 elements"), "{e}");
    let mut short = gpu.alloc_zeros::<f32>(&stream, "out", 5).unwrap();
    let e = gpu.batched_scan(&stream, &d, Matrix::new(3, 2), &mut short, &max, &mut temp).unwrap_err();
    assert!(e.to_string().contains("output holds 5"), "{e}");
    assert_none_failed(&failures);
}

/// Every batched kernel chosen through `BatchedOptions::kernel` on shapes it takes (and on some
/// it takes only when chosen), for every type and operator (float sums and products of
/// integer-valued inputs), inclusive and exclusive, bit for bit. The column tiles also take
/// the shapes about their edges: scalar tiles of odd and even widths over one to several row
/// blocks; vector tiles of one vector a row to hundreds; tiles in shared memory one row past one and
/// two tiles, and partial tiles after several, for 1 to 32 vectors a row.
fn every_batched_kernel_chosen_by_its_options(gpu: &Gpu) {
    use gpu_scan::{Axis, BatchedKernel::*};
    use scan_abi::kernel::ARITHMETIC_OPS;
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let scalar = [(1, 2), (7, 3), (1025, 8), (300, 65), (129, 200), (5, 1000), (2000, 2)];
    let vector = [(1, 4), (7, 4), (9, 12), (1025, 8), (300, 64), (129, 200), (5, 1000), (3000, 4), (600, 52)];
    let bulk = scan_abi::shape::Tile::new(shapes().columns_bulk_threads, tuning().choices.bulk_rows);
    let t = |tpr: u32| bulk.tile_rows(tpr) as usize;
    // (rows, 16-byte vectors a row)
    let bulk_shapes = [
        (t(1) + 1, 1),
        (2 * t(1) + 1, 1),
        (t(2) + 1, 2),
        (2 * t(2) + 160, 2),
        (t(8) + 1, 8),
        (4 * t(16) + 40, 16),
        (t(32) + 1, 32),
        (16 * t(32) + 80, 32),
    ];
    let edges = scalar.map(|shape| (ColumnTiles, shape)).into_iter().chain(vector.map(|shape| (VectorTiles, shape)));
    let cases = [
        (ColumnTiles, Axis::Columns, (3000, 64)),
        (ColumnTiles, Axis::Columns, (100, 5)),
        (VectorTiles, Axis::Columns, (3000, 64)),
        (VectorTiles, Axis::Columns, (70_000, 4)),
        (VectorTiles, Axis::Columns, (300, 4096)),
        (BulkTiles, Axis::Columns, (7001, 16)),
        (BulkTiles, Axis::Columns, (20_003, 4)),
        (ColumnVectors, Axis::Columns, (8, 3000)),
        (Pipelined, Axis::Columns, (5000, 8)),
        (Pipelined, Axis::Columns, (5000, 4)),
        (ShortRows, Axis::Rows, (3000, 31)),
        (RowBlocks, Axis::Rows, (3, 100_003)),
        (RowChains, Axis::Rows, (1000, 64)),
        (Pipelined, Axis::Rows, (3, 100_000)),
    ];
    macro_rules! each {
        ($($t:ty),*) => {$(
            let size = std::mem::size_of::<$t>();
            let edge_cases = edges.clone().map(|(kernel, shape)| (kernel, Axis::Columns, shape));
            let bulk_cases = bulk_shapes.map(|(rows, vectors)| (BulkTiles, Axis::Columns, (rows, vectors * 16 / size)));
            for (kernel, axis, (rows, cols)) in cases.into_iter().chain(edge_cases).chain(bulk_cases) {
                // Rows of 16 or 32 bytes: 8 and 4 columns of 4 bytes, 4 and 2 of 8.
                let cols = if kernel == Pipelined && axis == Axis::Columns { cols * 4 / size } else { cols };
                for op in ARITHMETIC_OPS {
                    failures.extend(check_batched::<$t>(gpu, &mut temp, (rows, cols), op, &[axis], kernel));
                }
            }
        )*};
    }
    each!(u32, i32, u64, i64, f32, f64);
    assert_none_failed(&failures);
}

/// Matrices of 16- and 32-byte rows (4 or 8 columns of 4 bytes, 2 or 4 of 8) large enough for
/// the pipelined kernels are scanned down their columns as one pipelined scan of the rows by
/// default: every type and operator (float sums and products of integer-valued inputs),
/// inclusive and exclusive, with a partial last tile.
fn narrow_columns_scan_as_one_pipelined_scan_of_rows(gpu: &Gpu) {
    use gpu_scan::plan::batched::BatchedPlan;
    use gpu_scan::{Axis, BatchedKernel, BatchedOptions, Matrix};
    use scan_abi::kernel::ARITHMETIC_OPS;
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            let size = std::mem::size_of::<$t>();
            for row_bytes in [16, 32] {
                let (cols, rows) = (row_bytes / size, (64 << 20) / row_bytes + 3);
                for op in ARITHMETIC_OPS {
                    let plan = gpu.batched_plan::<$t>(Matrix::new(rows as u64, cols as u64), &BatchedOptions::new(Axis::Columns, op), true);
                    assert!(matches!(plan, Ok(BatchedPlan::ColumnsPipelined(_))), "{rows} x {cols}: {plan:?}");
                    failures.extend(check_batched::<$t>(gpu, &mut temp, (rows, cols), op, &[Axis::Columns], BatchedKernel::Auto));
                }
            }
        )*};
    }
    each!(u32, i32, f32, u64, i64, f64);
    assert_none_failed(&failures);
}

/// Few long rows of a large enough matrix run as one launch of the pipelined kernel by default,
/// each row a chain of its own tiles (rows on 16-byte boundaries, the last tile of each row
/// partial), or as chains of one-tile-per-block tiles (a row length that breaks 16-byte
/// alignment); both against the CPU, inclusive and exclusive, with a sum that wraps and a max,
/// and float sums and products of integer-valued inputs.
fn few_long_rows_scan_each_row_whole(gpu: &Gpu) {
    use gpu_scan::plan::batched::BatchedPlan;
    use gpu_scan::{Axis, BatchedKernel, BatchedOptions, Matrix};
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            let rows = 3;
            let long = ((24 << 20) + 16) / std::mem::size_of::<$t>();
            for (cols, pipelined) in [(long, true), (long + 1, false)] {
                let plan = gpu.batched_plan::<$t>(Matrix::new(rows as u64, cols as u64), &BatchedOptions::new(Axis::Rows, Op::Add), true).unwrap();
                assert_eq!(matches!(plan, BatchedPlan::RowsPipelined(_)), pipelined, "{rows} x {cols}");
                // A sum that wraps and a max; for floats also the product.
                let product = (!order_free::<$t>(Op::Mul)).then_some(Op::Mul);
                for op in [Op::Add, Op::Max].into_iter().chain(product) {
                    failures.extend(check_batched::<$t>(gpu, &mut temp, (rows, cols), op, &[Axis::Rows], BatchedKernel::Auto));
                }
            }
        )*};
    }
    each!(u32, u64, f32, f64);
    assert_none_failed(&failures);
}
