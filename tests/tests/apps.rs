//! The applications on the GPU against their CPU references: awkward sizes, every type, every
//! way of choosing, and user mistakes.

mod common;

use common::{assert_none_failed, gpu};
use gpu_scan::apps::compact::{self, Compaction, Keep};
use gpu_scan::{input, Element, Gpu, TempStorage};

/// The compaction's tile (the single-pass tile for 4- and 8-byte elements).
fn tile<T>() -> usize {
    scan_abi::tuning::compact(scan_abi::tuning::DEFAULT_ARCH, std::mem::size_of::<T>()).tile() as usize
}

/// The pipelined compaction's tile.
fn pipe_tile<T>() -> usize {
    scan_abi::tuning::pipeline_compact(scan_abi::tuning::DEFAULT_ARCH, std::mem::size_of::<T>()).tile() as usize
}

fn sizes<T>() -> Vec<usize> {
    let t = tile::<T>();
    vec![0, 1, 31, 33, 1023, t - 1, t, t + 1, 3 * t + 7, 100_003, (1 << 20) + 7, 10_000_019]
}

/// One compaction against the CPU; `pipelined` as `Compaction::pipelined`.
fn compact_case<T: Element>(
    gpu: &Gpu,
    temp: &mut TempStorage,
    n: usize,
    keep: Keep<T>,
    pipelined: Option<bool>,
) -> Option<String> {
    let data: Vec<T> = input::generate::<T>(gpu_scan::Op::Xor, n as u64, n);
    let data: Vec<T> = match keep {
        // Small values, so that a threshold keeps some and drops some.
        Keep::Greater(_) => input::cub_pattern::<T>(n).into_iter().zip(&data).map(|(c, _)| c).collect(),
        _ => data.iter().enumerate().map(|(i, &x)| if i % 3 == 0 { T::zero() } else { x }).collect(),
    };
    compact_data_case(gpu, temp, data, keep, pipelined)
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
    pipelined: Option<bool>,
) -> Option<String> {
    let n = data.len();
    let flags: Vec<u8> = (0..n as u64).map(|i| input::bits(7, i).is_multiple_of(3) as u8).collect();
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "in", &data).unwrap();
    let d_flags = gpu.upload(&stream, "flags", &flags).unwrap();
    let poison = vec![input::value::<T>(gpu_scan::Op::Xor, 99, 0); n];
    let mut d_out = gpu.upload(&stream, "out", &poison).unwrap();
    let how = Compaction { keep, pipelined };
    let kept = gpu.compact(&stream, &d_in, Some(&d_flags), how, &mut d_out, temp).unwrap() as usize;
    let got = gpu.download(&stream, &d_out).unwrap();
    let want = compact::reference(&data, Some(&flags), keep);
    let what = format!("compact {} n={n} {keep:?} pipelined={pipelined:?}", T::TYPE.name());
    if kept != want.len() {
        return Some(format!("{what}: kept {kept}, expected {}", want.len()));
    }
    let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    if bits(&got[kept..]) != bits(&poison[kept..]) {
        return Some(format!("{what}: wrote past the kept elements"));
    }
    (bits(&got[..kept]) != bits(&want)).then(|| format!("{what}: wrong elements"))
}

#[test]
fn compaction_matches_the_cpu() {
    let Some(gpu) = gpu("compaction_matches_the_cpu") else { return };
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            for n in sizes::<$t>() {
                let three: $t = "3".parse().unwrap();
                for keep in [Keep::Greater(three), Keep::NonZero, Keep::Flags] {
                    failures.extend(compact_case::<$t>(gpu, &mut temp, n, keep, None));
                }
            }
        )*};
    }
    each!(u8, u16, u32, i32, u64, i64, f32, f64);
    failures.extend(compact_case::<u32>(gpu, &mut temp, 1 << 28, Keep::Greater(3), None));
    assert_none_failed(&failures);
}

/// The pipelined form of the compaction (the default from 64 MiB for comparisons), at the same
/// sizes and its own tile's edges.
#[test]
fn compaction_pipelined_matches_the_cpu() {
    let Some(gpu) = gpu("compaction_pipelined_matches_the_cpu") else { return };
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            let t = pipe_tile::<$t>();
            for n in sizes::<$t>().into_iter().chain([t - 1, t, t + 1, 7 * t + 3]) {
                let three: $t = "3".parse().unwrap();
                for keep in [Keep::Greater(three), Keep::NonZero, Keep::Flags] {
                    failures.extend(compact_case::<$t>(gpu, &mut temp, n, keep, Some(true)));
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
                    failures.extend(compact_data_case::<$t>(gpu, &mut temp, kept_after(n, dropped), Keep::NonZero, Some(true)));
                }
            }
        )*};
    }
    nearly_all!(u32, u64, f32, f64);
    assert_none_failed(&failures);
}

#[test]
fn compaction_mistakes_are_errors() {
    let Some(gpu) = gpu("compaction_mistakes_are_errors") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let d_in = gpu.upload(&stream, "in", &[1u32, 2, 3]).unwrap();
    let mut short = gpu.alloc_zeros::<u32>(&stream, "out", 2).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", 3).unwrap();
    let flags = gpu.upload(&stream, "flags", &[1u8]).unwrap();
    let e = gpu.compact(&stream, &d_in, None, Keep::NonZero, &mut short, &mut temp).unwrap_err();
    assert!(e.to_string().contains("output holds 2"), "{e}");
    let e = gpu.compact(&stream, &d_in, None, Keep::Flags, &mut out, &mut temp).unwrap_err();
    assert!(e.to_string().contains("needs a flags array"), "{e}");
    let e = gpu.compact(&stream, &d_in, Some(&flags), Keep::Flags, &mut out, &mut temp).unwrap_err();
    assert!(e.to_string().contains("flags array holds 1"), "{e}");
    assert_eq!(gpu.compact(&stream, &d_in, None, Keep::Greater(1), &mut out, &mut temp).unwrap(), 2);
}

fn random_keys<T: Element>(seed: u64, n: usize) -> Vec<T> {
    (0..n as u64).map(|i| T::from_bits(input::bits(seed, i))).collect()
}

#[test]
fn radix_sort_matches_a_stable_cpu_sort() {
    let Some(gpu) = gpu("radix_sort_matches_a_stable_cpu_sort") else { return };
    let stream = gpu.stream().clone();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            // Keys only, in buffers reused from size to size (grown), then once more at a small size.
            let mut bufs = gpu_scan::apps::sort::SortBuffers::<$t>::new();
            for n in [0usize, 1, 31, 33, 2047, 2048, 2049, 3071, 3072, 3073, 4095, 4096, 4097, 100_003, (1 << 20) + 7, 5_000_011] {
                // Few distinct keys at some sizes, so stability is visible through the values.
                let mut keys = random_keys::<$t>(n as u64, n);
                if n % 2 == 1 {
                    keys = keys.into_iter().map(|k| <$t as scan_abi::Element>::from_bits(scan_abi::Element::to_bits(k) & 0x8000_0000_0000_0007)).collect();
                }
                let values: Vec<u32> = (0..n as u32).collect();
                let mut d_keys = gpu.upload(&stream, "keys", &keys).unwrap();
                let mut d_values = gpu.upload(&stream, "values", &values).unwrap();
                gpu.sort(&stream, &mut d_keys, Some(&mut d_values)).unwrap();
                let (want, want_values) = gpu_scan::apps::sort::reference(&keys, Some(&values));
                let got = gpu.download(&stream, &d_keys).unwrap();
                let bits = |v: &[$t]| v.iter().map(|&x| scan_abi::Element::to_bits(x)).collect::<Vec<u64>>();
                if bits(&got) != bits(&want) || gpu.download(&stream, &d_values).unwrap() != want_values.unwrap() {
                    failures.push(format!("sort {} n={n}", stringify!($t)));
                }
                let mut d_keys = gpu.upload(&stream, "keys", &keys).unwrap();
                gpu.sort_with(&stream, &mut d_keys, None, &mut bufs).unwrap();
                if bits(&gpu.download(&stream, &d_keys).unwrap()) != bits(&want) {
                    failures.push(format!("sort {} n={n} keys only, reused buffers", stringify!($t)));
                }
            }
            let keys = random_keys::<$t>(7, 1000);
            let mut d_keys = gpu.upload(&stream, "keys", &keys).unwrap();
            gpu.sort_with(&stream, &mut d_keys, None, &mut bufs).unwrap();
            let bits = |v: &[$t]| v.iter().map(|&x| scan_abi::Element::to_bits(x)).collect::<Vec<u64>>();
            if bits(&gpu.download(&stream, &d_keys).unwrap()) != bits(&gpu_scan::apps::sort::reference(&keys, None).0) {
                failures.push(format!("sort {} n=1000 in grown buffers", stringify!($t)));
            }
        )*};
    }
    each!(u32, i32, u64, i64, f32, f64);
    let keys = random_keys::<u32>(1, 1 << 28);
    let mut d = gpu.upload(&stream, "keys", &keys).unwrap();
    gpu.sort(&stream, &mut d, None).unwrap();
    let mut want = keys;
    want.sort_unstable();
    if gpu.download(&stream, &d).unwrap() != want {
        failures.push("sort u32 n=2^28".into());
    }
    assert_none_failed(&failures);
}

#[test]
fn float_keys_sort_with_negative_zero_first_and_nans_last() {
    let Some(gpu) = gpu("float_keys_sort_order") else { return };
    let stream = gpu.stream().clone();
    let keys = [f32::NAN, 1.0, 0.0, -0.0, f32::NEG_INFINITY, -f32::NAN, f32::INFINITY, -1.0];
    let mut d = gpu.upload(&stream, "keys", &keys).unwrap();
    gpu.sort(&stream, &mut d, None).unwrap();
    let got = gpu.download(&stream, &d).unwrap();
    assert_eq!(
        &got[..6].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        &[f32::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, f32::INFINITY].map(f32::to_bits)
    );
    assert!(got[6].is_nan() && got[7].is_nan());
}

#[test]
fn histogram_counts_starts_and_permutation() {
    let Some(gpu) = gpu("histogram_counts_starts_and_permutation") else { return };
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
            let got = gpu.histogram(&stream, &d, bins, 0.0, 1.0).unwrap();
            if got != gpu_scan::apps::histogram::reference(&data, bins, 0.0, 1.0).unwrap() {
                failures.push(format!("histogram n={n} bins={bins}"));
            }
        }
    }
    let ints: Vec<i64> = (0..1_000_003).map(|i| (input::bits(3, i) % 2000) as i64 - 500).collect();
    let d = gpu.upload(&stream, "ints", &ints).unwrap();
    if gpu.histogram(&stream, &d, 100, 0.0, 1000.0).unwrap()
        != gpu_scan::apps::histogram::reference(&ints, 100, 0.0, 1000.0).unwrap()
    {
        failures.push("histogram i64".into());
    }
    assert_none_failed(&failures);
    let e = gpu.histogram(&stream, &d, 0, 0.0, 1.0).unwrap_err();
    assert!(e.to_string().contains("0 bins"), "{e}");
    let e = gpu.histogram(&stream, &d, 10, 1.0, 1.0).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
}

#[test]
fn coo_to_csr_and_back() {
    let Some(gpu) = gpu("coo_to_csr_and_back") else { return };
    let stream = gpu.stream().clone();
    let mut failures = Vec::new();
    for (nnz, nrows) in
        [(0usize, 1u32), (1, 1), (1, 5), (1000, 7), (100_003, 40_000), (10_000_000, 3_000_000), (1 << 28, 1 << 26)]
    {
        let mut rows: Vec<u32> =
            (0..nnz as u64).map(|i| (input::bits(9, i) % nrows as u64) as u32).filter(|r| r % 50 != 7).collect();
        rows.sort_unstable();
        let d = gpu.upload(&stream, "rows", &rows).unwrap();
        let offsets = gpu.coo_to_csr(&stream, &d, nrows).unwrap();
        if gpu.download(&stream, &offsets).unwrap() != gpu_scan::apps::csr::offsets_reference(&rows, nrows) {
            failures.push(format!("offsets nnz={nnz} rows={nrows}"));
        }
        if gpu.download(&stream, &gpu.csr_to_coo(&stream, &offsets).unwrap()).unwrap() != rows {
            failures.push(format!("round trip nnz={nnz} rows={nrows}"));
        }
    }
    assert_none_failed(&failures);
    let d = gpu.upload(&stream, "rows", &[0u32, 3, 9]).unwrap();
    let e = gpu.coo_to_csr(&stream, &d, 5).unwrap_err();
    assert!(e.to_string().contains("1 of 3 row indices are not below 5"), "{e}");
}

/// The lecture's compaction vectors.
#[test]
fn compaction_lecture_vectors() {
    let Some(gpu) = gpu("compaction_lecture_vectors") else { return };
    let v = common::vectors();
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
            let kept = gpu.compact(&stream, &d_in, Some(&d_flags), keep, &mut d_out, &mut temp).unwrap() as usize;
            assert_eq!(&gpu.download(&stream, &d_out).unwrap()[..kept], &want[..], "{}", case["name"]);
        }
        let scan: Vec<u32> = serde_json::from_value(case["flag_exclusive_scan"].clone()).unwrap();
        let flags32: Vec<u32> = flags.iter().map(|&f| f as u32).collect();
        let opts = gpu_scan::ScanOptions::new(gpu_scan::Op::Add).exclusive(true);
        assert_eq!(gpu.scan_host(&flags32, &opts).unwrap(), scan);
    }
    let large = &v["compaction_large"];
    let n = large["n"].as_u64().unwrap() as usize;
    let input: Vec<i32> = (0..n as i32).map(|i| (i % 10) - 5).collect();
    let d_in = gpu.upload(&stream, "in", &input).unwrap();
    let mut d_out = gpu.alloc_zeros::<i32>(&stream, "out", n).unwrap();
    let kept = gpu.compact(&stream, &d_in, None, Keep::Greater(0), &mut d_out, &mut temp).unwrap();
    assert_eq!(kept, large["kept_count"].as_u64().unwrap());
    assert_eq!(&gpu.download(&stream, &d_out).unwrap()[..kept as usize], &[1, 2, 3, 4].repeat(100)[..]);
}

/// Segmented scans against the per-segment CPU scan: heads at random (sparse and dense), from
/// offsets, and fixed-length rows; every operator; inclusive and exclusive.
#[test]
fn segmented_scans_match_the_cpu() {
    use gpu_scan::apps::segmented::{self, Segments, OPS};
    let Some(gpu) = gpu("segmented_scans_match_the_cpu") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            for n in [0usize, 1, 33, 1023, 4097, 100_003] {
                for mean in [1u64, 3, 50, 5000, 1 << 40] {
                    let heads: Vec<u8> = (0..n as u64).map(|i| (input::bits(mean, i) % mean == 0) as u8).collect();
                    let d_heads = gpu.upload(&stream, "heads", &heads).unwrap();
                    for op in OPS {
                        // Exact operators only: float sums and products round differently per order.
                        if <$t as scan_abi::Element>::TYPE.is_float() && op.order_sensitive(<$t as scan_abi::Element>::TYPE) {
                            continue;
                        }
                        let data: Vec<$t> = input::generate::<$t>(op, n as u64 ^ mean, n);
                        let d_in = gpu.upload(&stream, "in", &data).unwrap();
                        for exclusive in [false, true] {
                            let mut d_out = gpu.alloc_zeros::<$t>(&stream, "out", n).unwrap();
                            gpu.segmented_scan(&stream, &d_in, Segments::Heads(&d_heads), &mut d_out, op, exclusive, &mut temp).unwrap();
                            let want = segmented::reference(op, &data, |i| heads[i] != 0, exclusive).unwrap();
                            let got = gpu.download(&stream, &d_out).unwrap();
                            if got.iter().zip(&want).any(|(g, w)| scan_abi::Element::to_bits(*g) != scan_abi::Element::to_bits(*w)) {
                                failures.push(format!("segmented {} {} n={n} mean={mean} exclusive={exclusive}", stringify!($t), op.name()));
                            }
                            let cols = (mean as usize).clamp(1, 1000);
                            if n % cols == 0 {
                                gpu.scan_rows(&stream, &d_in, cols as u64, &mut d_out, op, exclusive, &mut temp).unwrap();
                                let want = segmented::reference(op, &data, |i| i % cols == 0, exclusive).unwrap();
                                let got = gpu.download(&stream, &d_out).unwrap();
                                if got.iter().zip(&want).any(|(g, w)| scan_abi::Element::to_bits(*g) != scan_abi::Element::to_bits(*w)) {
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
        let data: Vec<i32> = input::generate::<i32>(gpu_scan::Op::Add, 5, n);
        let d_in = gpu.upload(&stream, "in", &data).unwrap();
        let mut d_out = gpu.alloc_zeros::<i32>(&stream, "out", n).unwrap();
        gpu.segmented_scan(&stream, &d_in, Segments::Every(cols), &mut d_out, gpu_scan::Op::Add, false, &mut temp)
            .unwrap();
        let want = segmented::reference(gpu_scan::Op::Add, &data, |i| (i as u64).is_multiple_of(cols), false).unwrap();
        if gpu.download(&stream, &d_out).unwrap() != want {
            failures.push(format!("rows of {cols}, n={n}"));
        }
    }

    // Offsets, and a float sum checked against an f64 sum per segment.
    let n = 1_000_003usize;
    let starts: Vec<u64> = (0..n as u64).step_by(97).chain([5, 6, 7]).collect();
    let d_offsets = gpu.upload(&stream, "offsets", &starts).unwrap();
    let d_heads = gpu.heads_from_offsets(&stream, &d_offsets, n as u64).unwrap();
    let data = input::uniform::<f32>(3, n, -1.0, 1.0);
    let d_in = gpu.upload(&stream, "in", &data).unwrap();
    let mut d_out = gpu.alloc_zeros::<f32>(&stream, "out", n).unwrap();
    gpu.segmented_scan(&stream, &d_in, Segments::Heads(&d_heads), &mut d_out, gpu_scan::Op::Add, false, &mut temp)
        .unwrap();
    let got = gpu.download(&stream, &d_out).unwrap();
    let is_start: std::collections::HashSet<u64> = starts.iter().copied().collect();
    let (mut sum, mut mag) = (0f64, 0f64);
    for i in 0..n {
        if is_start.contains(&(i as u64)) {
            (sum, mag) = (0.0, 0.0);
        }
        sum += data[i] as f64;
        mag += data[i].abs() as f64;
        if (got[i] as f64 - sum).abs() > 64.0 * f32::EPSILON as f64 * mag {
            failures.push(format!("f32 segmented sum by offsets: element {i}: {} vs {sum}", got[i]));
            break;
        }
    }
    assert_none_failed(&failures);
}

#[test]
fn segmented_mistakes_are_errors() {
    use gpu_scan::apps::segmented::Segments;
    let Some(gpu) = gpu("segmented_mistakes_are_errors") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let d_in = gpu.upload(&stream, "in", &[1u32, 2, 3, 4]).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", 4).unwrap();
    let short = gpu.upload(&stream, "heads", &[1u8]).unwrap();
    let e = gpu
        .segmented_scan(&stream, &d_in, Segments::Heads(&short), &mut out, gpu_scan::Op::Add, false, &mut temp)
        .unwrap_err();
    assert!(e.to_string().contains("head flags hold 1"), "{e}");
    let e = gpu
        .segmented_scan(&stream, &d_in, Segments::Every(0), &mut out, gpu_scan::Op::Add, false, &mut temp)
        .unwrap_err();
    assert!(e.to_string().contains("length 0"), "{e}");
    let e = gpu
        .segmented_scan(&stream, &d_in, Segments::Every(2), &mut out, gpu_scan::Op::Xor, false, &mut temp)
        .unwrap_err();
    assert!(e.to_string().contains("not xor on u32"), "{e}");
    let e = gpu.scan_rows(&stream, &d_in, 3, &mut out, gpu_scan::Op::Add, false, &mut temp).unwrap_err();
    assert!(e.to_string().contains("not whole rows of 3"), "{e}");
}

/// The linear recurrence against the sequential f64 loop, within 2 roundings per combine of the
/// magnitude recurrence `s[t] = |a[t]|·s[t-1] + |b[t]|` (the single-pass rounding count of
/// `verify::roundings`).
#[test]
fn linear_recurrence_matches_the_loop() {
    use gpu_scan::apps::recurrence;
    let Some(gpu) = gpu("linear_recurrence_matches_the_loop") else { return };
    let mut failures = Vec::new();
    let tile = tile::<u64>();
    for n in [0usize, 1, 33, tile - 1, tile, tile + 1, 100_003, 3_000_017, 1 << 24] {
        for (lo, hi, x0) in [(0.9f64, 1.0f64, 1.5f32), (-1.0, 1.0, -2.0), (0.999, 1.001, 0.0)] {
            let a = input::uniform::<f32>(n as u64, n, lo, hi);
            let b = input::uniform::<f32>(n as u64 ^ 1, n, -1.0, 1.0);
            let got = gpu.recurrence_host(&a, &b, x0).unwrap();
            let (x, s) = recurrence::reference(&a, &b, x0);
            let bound = |t: usize| {
                2.0 * gpu_scan::verify::roundings(gpu_scan::Algorithm::SinglePass, t, n) * f32::EPSILON as f64 * s[t]
            };
            if let Some(t) = (0..n).find(|&t| (got[t] as f64 - x[t]).abs() > bound(t)) {
                failures.push(format!(
                    "recurrence n={n} a in [{lo},{hi}) at {t}: {} vs {} (bound {:e})",
                    got[t],
                    x[t],
                    bound(t)
                ));
            }
        }
    }
    for n in [1usize, 1025, 100_003, 1 << 22] {
        let a = input::uniform::<f64>(n as u64, n, 0.9, 1.0);
        let b = input::uniform::<f64>(n as u64 ^ 1, n, -1.0, 1.0);
        let got = gpu.recurrence_host(&a, &b, 0.5).unwrap();
        let (x, s) = recurrence::reference(&a, &b, 0.5);
        let bound =
            |t: usize| 2.0 * gpu_scan::verify::roundings(gpu_scan::Algorithm::SinglePass, t, n) * f64::EPSILON * s[t];
        if let Some(t) = (0..n).find(|&t| (got[t] - x[t]).abs() > bound(t)) {
            failures.push(format!("recurrence f64 n={n} at {t}: {} vs {}", got[t], x[t]));
        }
    }
    assert_none_failed(&failures);
    let e = gpu.recurrence_host(&[1.0f32], &[], 0.0).unwrap_err();
    assert!(e.to_string().contains("1 factors but 0 offsets"), "{e}");
}

/// Batched scans of a row-major matrix along either axis, against per-row and per-column CPU
/// scans (exact operators, so bit for bit): every type and operator; shapes that take every path
/// (one row or column, strips narrower and wider than a warp, uneven strips, strips widened for
/// few rows, few rows to the column-vector kernel, rows on 16-byte boundaries to the vector
/// column tiles (strips of one vector, partial last strips, widened for few rows), short rows to
/// the short-row kernel with whole or partial last tiles, few long rows to one single-pass chain
/// per row, many to the row kernel, rows that break 16-byte alignment).
#[test]
fn batched_scans_along_either_axis() {
    use gpu_scan::apps::batched::{
        column_bulk_plan, short_rows_per_tile, uses_column_vectors, uses_columns_pipelined, uses_columns_vec,
        uses_row_kernel,
    };
    use gpu_scan::apps::segmented::{self, OPS};
    use gpu_scan::Op;
    let Some(gpu) = gpu("batched_scans_along_either_axis") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let mut row_kernel_runs = 0;
    let mut short_row_runs = 0;
    let mut column_vector_runs = 0;
    let (mut bulk_tile_runs, mut vector_tile_runs, mut scalar_tile_runs) = (0, 0, 0);
    macro_rules! each {
        ($($t:ty),*) => {$(
            for (rows, cols) in [
                (1usize, 1usize), (7, 3), (33, 1), (1, 33), (1000, 1000), (1 << 17, 8), (8, 1 << 17),
                (3, 100_003), (4097, 2), (100, 65), (50, 200), (2000, 129), (1024, 4096), (1100, 4099),
                (5, 4095), (301, 1365), (1 << 16, 31), (3000, 2048), (2, 16384), (5, 8193), (40, 3000),
                (6, 1001), (8, 2048), (9, 4100), (3000, 52), (20, 1024), (70_000, 4), (5000, 12), (777, 264),
                (9001, 16), (3841, 64), (20_003, 8), (1921, 128),
            ] {
                for op in OPS {
                    if <$t as scan_abi::Element>::TYPE.is_float() && op.order_sensitive(<$t as scan_abi::Element>::TYPE) {
                        continue;
                    }
                    let data: Vec<$t> = input::generate::<$t>(op, (rows * cols) as u64, rows * cols);
                    let d_in = gpu.upload(&stream, "matrix", &data).unwrap();
                    let size = std::mem::size_of::<$t>();
                    let short = short_rows_per_tile(cols as u64, size).is_some();
                    short_row_runs += short as u32;
                    row_kernel_runs += (!short && uses_row_kernel(rows as u64, cols as u64, size)) as u32;
                    let vectors = cols > 1 && uses_column_vectors(rows as u64, size);
                    column_vector_runs += vectors as u32;
                    // Fresh allocations start on 16-byte boundaries.
                    let (r, c) = (rows as u64, cols as u64);
                    let tiles = cols > 1 && !vectors && !uses_columns_pipelined(r, c, size);
                    let bulk = tiles && column_bulk_plan(r, c, size, true).is_some();
                    bulk_tile_runs += bulk as u32;
                    vector_tile_runs += (tiles && !bulk && uses_columns_vec(c, size, true)) as u32;
                    scalar_tile_runs += (tiles && !bulk && !uses_columns_vec(c, size, true)) as u32;
                    for exclusive in [false, true] {
                        let what = format!("{} {} {rows}x{cols} exclusive={exclusive}", stringify!($t), op.name());
                        let mut d_out = gpu.alloc_zeros::<$t>(&stream, "out", rows * cols).unwrap();
                        gpu.scan_rows(&stream, &d_in, cols as u64, &mut d_out, op, exclusive, &mut temp).unwrap();
                        let want = segmented::reference(op, &data, |i| i % cols == 0, exclusive).unwrap();
                        let got = gpu.download(&stream, &d_out).unwrap();
                        if got.iter().zip(&want).any(|(g, w)| scan_abi::Element::to_bits(*g) != scan_abi::Element::to_bits(*w)) {
                            failures.push(format!("rows {what}"));
                        }
                        gpu.scan_columns(&stream, &d_in, rows as u64, &mut d_out, op, exclusive, &mut temp).unwrap();
                        let got = gpu.download(&stream, &d_out).unwrap();
                        for c in 0..cols {
                            let column: Vec<$t> = (0..rows).map(|r| data[r * cols + c]).collect();
                            let want = gpu_scan::cpu::scan(op, &column, exclusive, None).unwrap();
                            if (0..rows).any(|r| scan_abi::Element::to_bits(got[r * cols + c]) != scan_abi::Element::to_bits(want[r])) {
                                failures.push(format!("columns {what}: column {c}"));
                                break;
                            }
                        }
                    }
                }
            }
        )*};
    }
    each!(u32, i32, u64, i64, f32, f64);
    assert!(row_kernel_runs > 0, "no shape took the row kernel");
    assert!(short_row_runs > 0, "no shape took the short-row kernel");
    assert!(column_vector_runs > 0, "no shape took the column-vector kernel");
    assert!(
        bulk_tile_runs > 0 && vector_tile_runs > 0 && scalar_tile_runs > 0,
        "column tiles in shared memory / vector / scalar: {bulk_tile_runs} / {vector_tile_runs} / {scalar_tile_runs}"
    );
    let d = gpu.upload(&stream, "m", &[1.0f32, 5.0, -2.0, 7.0, 3.0, 0.5]).unwrap();
    let mut out = gpu.alloc_zeros::<f32>(&stream, "out", 6).unwrap();
    gpu.scan_columns(&stream, &d, 3, &mut out, Op::Max, false, &mut temp).unwrap();
    assert_eq!(gpu.download(&stream, &out).unwrap(), [1.0, 5.0, 1.0, 7.0, 3.0, 7.0]);
    let e = gpu.scan_columns(&stream, &d, 4, &mut out, Op::Max, false, &mut temp).unwrap_err();
    assert!(e.to_string().contains("not 4 whole rows"), "{e}");
    let e = gpu.scan_rows(&stream, &d, 4, &mut out, Op::Max, false, &mut temp).unwrap_err();
    assert!(e.to_string().contains("not whole rows of 4"), "{e}");
    let mut short = gpu.alloc_zeros::<f32>(&stream, "out", 5).unwrap();
    let e = gpu.scan_columns(&stream, &d, 3, &mut short, Op::Max, false, &mut temp).unwrap_err();
    assert!(e.to_string().contains("output holds 5"), "{e}");
    assert_none_failed(&failures);
}

/// Matrices of 16- and 32-byte rows (4 or 8 columns of 4 bytes, 2 or 4 of 8) large enough for
/// the pipelined kernels are scanned down their columns as one pipelined scan of the rows: every
/// type and exact operator, inclusive and exclusive, with a partial last tile, against per-column
/// CPU scans.
#[test]
fn narrow_columns_scan_as_one_pipelined_scan_of_rows() {
    use gpu_scan::apps::batched::uses_columns_pipelined;
    use gpu_scan::apps::segmented::OPS;
    let Some(gpu) = gpu("narrow_columns_scan_as_one_pipelined_scan_of_rows") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            let size = std::mem::size_of::<$t>();
            for (row_bytes, op) in [16, 32].into_iter().flat_map(|b| OPS.into_iter().map(move |op| (b, op))) {
                let cols = row_bytes / size;
                let rows = (64 << 20) / row_bytes + 3;
                assert!(uses_columns_pipelined(rows as u64, cols as u64, size));
                if <$t as scan_abi::Element>::TYPE.is_float() && op.order_sensitive(<$t as scan_abi::Element>::TYPE) {
                    continue;
                }
                let data: Vec<$t> = input::generate::<$t>(op, rows as u64, rows * cols);
                let d_in = gpu.upload(&stream, "matrix", &data).unwrap();
                let mut d_out = gpu.alloc_zeros::<$t>(&stream, "out", rows * cols).unwrap();
                for exclusive in [false, true] {
                    gpu.scan_columns(&stream, &d_in, rows as u64, &mut d_out, op, exclusive, &mut temp).unwrap();
                    let got = gpu.download(&stream, &d_out).unwrap();
                    for c in 0..cols {
                        let column: Vec<$t> = (0..rows).map(|r| data[r * cols + c]).collect();
                        let want = gpu_scan::cpu::scan(op, &column, exclusive, None).unwrap();
                        if let Some(r) = (0..rows).find(|&r| scan_abi::Element::to_bits(got[r * cols + c]) != scan_abi::Element::to_bits(want[r])) {
                            failures.push(format!("{} {} {rows} x {cols} exclusive={exclusive}: column {c} row {r}", stringify!($t), op.name()));
                            break;
                        }
                    }
                }
            }
        )*};
    }
    each!(u32, i32, f32, u64, i64, f64);
    assert_none_failed(&failures);
}

/// Few long rows of a large enough matrix run as one launch of the pipelined kernel, each row a
/// chain of its own tiles (rows on 16-byte boundaries, the last tile of each row partial), or
/// as chains of one-tile-per-block tiles (a row length that breaks 16-byte alignment); both
/// against the CPU, inclusive and exclusive, with a sum that wraps and a max, 4- and 8-byte.
#[test]
fn few_long_rows_scan_each_row_whole() {
    use gpu_scan::apps::batched::long_rows_pipelined;
    use gpu_scan::apps::segmented;
    use gpu_scan::Op;
    let Some(gpu) = gpu("few_long_rows_scan_each_row_whole") else { return };
    let stream = gpu.stream().clone();
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            let rows = 3;
            let long = ((24 << 20) + 16) / std::mem::size_of::<$t>();
            let ty = <$t as scan_abi::Element>::TYPE;
            assert!(long_rows_pipelined(rows as u64, long as u64, ty, Op::Add) || std::env::var_os("GPU_SCAN_PIPELINED").is_some());
            assert!(!long_rows_pipelined(rows as u64, long as u64 + 1, ty, Op::Add));
            for cols in [long, long + 1] {
                for op in [Op::Add, Op::Max] {
                    let data: Vec<$t> = input::generate::<$t>(op, cols as u64, rows * cols);
                    let d_in = gpu.upload(&stream, "matrix", &data).unwrap();
                    let mut d_out = gpu.alloc_zeros::<$t>(&stream, "out", rows * cols).unwrap();
                    for exclusive in [false, true] {
                        gpu.scan_rows(&stream, &d_in, cols as u64, &mut d_out, op, exclusive, &mut temp).unwrap();
                        let want = segmented::reference(op, &data, |i| i % cols == 0, exclusive).unwrap();
                        let got = gpu.download(&stream, &d_out).unwrap();
                        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                            failures.push(format!(
                                "{} {rows}x{cols} {} exclusive={exclusive}: [{i}] {} != {}",
                                stringify!($t),
                                op.name(),
                                got[i],
                                want[i]
                            ));
                        }
                    }
                }
            }
        )*};
    }
    each!(u32, u64);
    assert_none_failed(&failures);
}
