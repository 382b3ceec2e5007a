//! The library's API shape on the GPU: buffers held until their kernels are enqueued (two
//! streams), foreign memory on a borrowed stream, views, reduce and partition against the CPU,
//! and the temporary-storage queries against what a call really takes.

use gpu_scan::cudarc::driver::{CudaSlice, DevicePtr};
use gpu_scan::reference as cpu;
use gpu_scan::reference::apps::{segmented as segmented_reference, sort_order};
use gpu_scan::{
    input, CompactOptions, Element, ForeignSlice, Gpu, Keep, Key, Op, PartitionOptions, ReduceOptions, ScanOptions,
    SegmentedKernel, SegmentedOptions, SortOptions, TempStorage,
};
use std::process::ExitCode;
use workspace_tests::checks::assert_none_failed;
use workspace_tests::gpu_test;

fn main() -> ExitCode {
    workspace_tests::main(vec![
        gpu_test("a_write_on_another_stream_waits_for_the_kernel_that_reads", write_waits_for_the_reading_kernel),
        gpu_test("foreign_memory_on_a_borrowed_stream", foreign_memory_on_a_borrowed_stream),
        gpu_test("views_scan_like_slices", views_scan_like_slices),
        gpu_test("reduce_matches_the_cpu", reduce_matches_the_cpu),
        gpu_test("partition_is_stable_and_counts_the_first_part", partition_matches_the_cpu),
        gpu_test("temp_bytes_cover_what_calls_take", temp_bytes_cover_what_calls_take),
        gpu_test("argsort_is_the_stable_cpu_argsort", argsort_is_the_stable_cpu_argsort),
        gpu_test("scan_by_key_scans_every_run_of_equal_keys", scan_by_key_matches_the_cpu),
    ])
}

/// Stream B is kept busy, then compacts by flags that stream A zeroes right after the call
/// returns. The zeroing must wait for the compaction's read (cudarc's read guard recorded after
/// the kernel is enqueued): then every element is kept. A guard dropped before the launch would
/// let the zeroing run first, or under the kernel, and fewer would be kept.
fn write_waits_for_the_reading_kernel(gpu: &Gpu) {
    let n = 1usize << 28;
    let (a, b) = (gpu.new_stream().unwrap(), gpu.new_stream().unwrap());
    let mut flags = a.clone_htod(&vec![1u8; n]).unwrap();
    let data = b.clone_htod(&vec![7u32; n]).unwrap();
    let mut out = b.alloc_zeros::<u32>(n).unwrap();
    let mut count = b.alloc_zeros::<u64>(1).unwrap();
    let mut temp = TempStorage::new();
    let mut busy = b.alloc_zeros::<u32>(n).unwrap();
    a.synchronize().unwrap();
    for _ in 0..8 {
        gpu.scan(&b, &data, &mut busy, &ScanOptions::new(Op::Add), &mut temp).unwrap();
    }
    let opts = CompactOptions::new(Keep::Flags);
    gpu.compact_flagged(&b, &data, &flags, &mut out, &mut count, &opts, &mut temp).unwrap();
    a.memset_zeros(&mut flags).unwrap();
    assert_eq!(gpu.read_count(&b, &count).unwrap(), n as u64, "the flags were zeroed under the kernel");
}

fn foreign_memory_on_a_borrowed_stream(gpu: &Gpu) {
    let owner = gpu.new_stream().unwrap();
    let data: Vec<u64> = input::generate(Op::Add, 5, 1_000_003);
    let src = owner.clone_htod(&data).unwrap();
    let dst = owner.alloc_zeros::<u64>(data.len()).unwrap();
    owner.synchronize().unwrap();
    let (s, _rs) = src.device_ptr(&owner);
    let (d, _rd) = dst.device_ptr(&owner);
    // SAFETY: the owner's stream outlives `stream`; src and dst stay allocated until after the
    // synchronization below, and nothing else touches them meanwhile.
    let stream = unsafe { gpu.borrow_stream(owner.cu_stream()) };
    let input = unsafe { ForeignSlice::<u64>::new(s, data.len(), &stream) }.unwrap();
    let mut output = unsafe { ForeignSlice::<u64>::new(d, data.len(), &stream) }.unwrap();
    let opts = ScanOptions::new(Op::Add).exclusive(true);
    gpu.scan(&stream, &input, &mut output, &opts, &mut TempStorage::new()).unwrap();
    stream.synchronize().unwrap();
    drop((_rs, _rd));
    assert_eq!(owner.clone_dtoh(&dst).unwrap(), cpu::scan(Op::Add, &data, true, None).unwrap());
    let misaligned = unsafe { ForeignSlice::<u64>::new(s + 4, 3, &stream) }.unwrap_err().to_string();
    assert!(misaligned.contains("8-byte boundary"), "{misaligned}");
}

fn views_scan_like_slices(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let data: Vec<u32> = input::generate(Op::Add, 9, 100_000);
    let d = gpu.upload(&stream, "in", &data).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", data.len()).unwrap();
    let mut temp = TempStorage::new();
    for (lo, hi) in [(0, 100_000), (1, 99_999), (4, 70_001), (33, 34)] {
        let view = d.slice(lo..hi);
        let mut out_view = out.slice_mut(lo..hi);
        gpu.scan(&stream, &view, &mut out_view, &ScanOptions::new(Op::Add), &mut temp).unwrap();
        let got = stream.clone_dtoh(&out.slice(lo..hi)).unwrap();
        assert_eq!(got, cpu::scan(Op::Add, &data[lo..hi], false, None).unwrap(), "view {lo}..{hi}");
    }
    let mut keys = gpu.upload(&stream, "keys", &data).unwrap();
    gpu.sort(&stream, &mut keys.slice_mut(10..5000), &SortOptions::new(), &mut temp).unwrap();
    let mut want = data.clone();
    want[10..5000].sort_unstable();
    assert_eq!(gpu.download(&stream, &keys).unwrap(), want);
}

fn reduce_case<T: Element>(gpu: &Gpu, temp: &mut TempStorage, op: Op, n: usize) -> Option<String> {
    let stream = gpu.stream().clone();
    let data: Vec<T> = input::generate(op, n as u64 + 3, n);
    let d = gpu.upload(&stream, "in", &data).unwrap();
    let mut out: CudaSlice<T> = gpu.alloc_zeros(&stream, "out", 1).unwrap();
    gpu.reduce(&stream, &d, &mut out, &ReduceOptions::new(op), temp).unwrap();
    let got = gpu.download(&stream, &out).unwrap()[0];
    let want = match cpu::scan(op, &data, false, None).unwrap().last() {
        Some(&w) => w,
        None => T::identity(op).unwrap(),
    };
    (got.to_bits() != want.to_bits()).then(|| format!("reduce {} {} n={n}: {got} vs {want}", T::TYPE.name(), op.name()))
}

fn reduce_matches_the_cpu(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let tile = gpu.tuning().shapes.hierarchical.tile() as usize;
    for n in [0, 1, 31, 33, tile - 1, tile, tile + 1, 1_000_003, tile * tile + 7] {
        for op in [Op::Add, Op::Max, Op::Min, Op::Xor] {
            failures.extend(reduce_case::<u32>(gpu, &mut temp, op, n));
            failures.extend(reduce_case::<i64>(gpu, &mut temp, op, n));
        }
        for op in [Op::Max, Op::Min] {
            failures.extend(reduce_case::<f32>(gpu, &mut temp, op, n));
            failures.extend(reduce_case::<f64>(gpu, &mut temp, op, n));
        }
    }
    assert_none_failed(&failures);
}

fn partition_case<T: Element>(gpu: &Gpu, temp: &mut TempStorage, n: usize, opts: PartitionOptions) -> Option<String> {
    let stream = gpu.stream().clone();
    let data: Vec<T> = (0..n as u64).map(|i| T::from_bits(input::bits(n as u64, i) % 1000)).collect();
    let d = gpu.upload(&stream, "in", &data).unwrap();
    let mut out = gpu.alloc_zeros::<T>(&stream, "out", n).unwrap();
    let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1).unwrap();
    gpu.partition(&stream, &d, &mut out, &mut count, &opts, temp).unwrap();
    let inside = |x: &T| x.as_f64() >= opts.lo && x.as_f64() < opts.hi;
    let mut want: Vec<T> = data.iter().copied().filter(inside).collect();
    let first = want.len() as u64;
    want.extend(data.iter().copied().filter(|x| !inside(x)));
    let got = gpu.download(&stream, &out).unwrap();
    let kept = gpu.read_count(&stream, &count).unwrap();
    let what = format!("partition {} n={n} {opts:?}", T::TYPE.name());
    if kept != first {
        return Some(format!("{what}: {kept} first, expected {first}"));
    }
    (got.iter().map(|x| x.to_bits()).ne(want.iter().map(|x| x.to_bits()))).then(|| format!("{what}: wrong order"))
}

fn partition_matches_the_cpu(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let tile = gpu.tuning().shapes.partition.tile() as usize;
    for n in [0, 1, 31, 33, tile - 1, tile, tile + 1, 1_000_003] {
        for opts in [PartitionOptions::less_than(500.0), PartitionOptions::within(100.0, 120.0)] {
            failures.extend(partition_case::<u32>(gpu, &mut temp, n, opts));
            failures.extend(partition_case::<u64>(gpu, &mut temp, n, opts));
        }
    }
    assert_none_failed(&failures);
}

/// A fresh storage grows to what each call takes: never more than its query says.
fn temp_bytes_cover_what_calls_take(gpu: &Gpu) {
    let stream = gpu.stream().clone();
    let n = 3_000_017usize;
    let data: Vec<u32> = input::generate(Op::Add, 1, n);
    let d = gpu.upload(&stream, "in", &data).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(&stream, "out", n).unwrap();
    let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1).unwrap();
    let within = |what: &str, temp: &TempStorage, bytes: u64| {
        assert!(temp.capacity() as u64 <= bytes, "{what}: took {} bytes, the query said {bytes}", temp.capacity());
    };
    let mut t = TempStorage::new();
    let opts = ScanOptions::new(Op::Add);
    gpu.scan(&stream, &d, &mut out, &opts, &mut t).unwrap();
    within("scan", &t, gpu.scan_temp_bytes::<u32>(n as u64, &opts).unwrap());
    let mut t = TempStorage::new();
    let keep = CompactOptions::new(Keep::Greater(5u32));
    gpu.compact(&stream, &d, &mut out, &mut count, &keep, &mut t).unwrap();
    within("compact", &t, gpu.compact_temp_bytes::<u32>(n as u64, keep.kernel).unwrap());
    let mut t = TempStorage::new();
    let mut keys = gpu.upload(&stream, "keys", &data).unwrap();
    gpu.sort(&stream, &mut keys, &SortOptions::new(), &mut t).unwrap();
    within("sort", &t, gpu.sort_temp_bytes::<u32>(n as u64, false).unwrap());
    let mut t = TempStorage::new();
    let mut one = gpu.alloc_zeros::<u32>(&stream, "one", 1).unwrap();
    gpu.reduce(&stream, &d, &mut one, &ReduceOptions::new(Op::Add), &mut t).unwrap();
    within("reduce", &t, gpu.reduce_temp_bytes::<u32>(n as u64, &ReduceOptions::new(Op::Add)).unwrap());
    stream.synchronize().unwrap();
}

/// Argsorts `keys` and sorts a copy keys-only (the other pass kernel), both against the CPU's
/// stable sort.
fn argsort_case<T: Element>(gpu: &Gpu, temp: &mut TempStorage, keys: &[T], descending: bool) -> Option<String> {
    let (stream, n) = (gpu.stream().clone(), keys.len());
    let opts = SortOptions::new().descending(descending);
    let mut d_keys = gpu.upload(&stream, "keys", keys).unwrap();
    let mut d_positions = gpu.alloc_zeros::<u32>(&stream, "positions", n).unwrap();
    gpu.argsort(&stream, &mut d_keys, &mut d_positions, &opts, temp).unwrap();
    let mut only = gpu.upload(&stream, "keys", keys).unwrap();
    gpu.sort(&stream, &mut only, &opts, temp).unwrap();
    let mut want: Vec<u32> = (0..n as u32).collect();
    // The promised order on the values, not the kernels' `order_key`, which it checks.
    want.sort_by(|&i, &j| sort_order(keys[i as usize], keys[j as usize], descending));
    let sorted: Vec<u64> = want.iter().map(|&i| keys[i as usize].to_bits()).collect();
    let bits = |d: &CudaSlice<T>| gpu.download(&stream, d).unwrap().iter().map(|k| k.to_bits()).collect::<Vec<_>>();
    let what = format!("argsort {} n={n} descending={descending}", T::TYPE.name());
    if gpu.download(&stream, &d_positions).unwrap() != want {
        return Some(format!("{what}: positions differ"));
    }
    if bits(&d_keys) != sorted {
        return Some(format!("{what}: keys"));
    }
    (bits(&only) != sorted).then(|| format!("{what}: keys-only sort"))
}

fn keys<T: Element>(n: usize, distinct: u64) -> Vec<T> {
    (0..n as u64).map(|i| T::from_bits(input::bits(n as u64 ^ distinct, i) % distinct)).collect()
}

/// Equal keys keep their input order (few distinct keys make that visible), ascending and
/// descending; float keys with both zeros, both infinities and NaNs of either sign; keys whose
/// first digit is the same in all.
fn argsort_is_the_stable_cpu_argsort(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let special = [f64::NAN, -0.0, 0.0, -f64::NAN, 1.5, -1.5, f64::INFINITY, f64::NEG_INFINITY, 2.0, -3.0];
    // The tiles of the passes with values (the argsort's) for 4- and 8-byte keys, less one and one more.
    let tiles = [4, 8].map(|size| gpu.tuning().shapes.sort_pass(size, true).tile() as usize);
    let sizes = [0usize, 1, 31, 33, 4097, 1_000_003, tiles[0] - 1, tiles[0] + 1, tiles[1] - 1, tiles[1] + 1];
    for descending in [false, true] {
        for n in sizes {
            for distinct in [3u64, 1 << 40] {
                failures.extend(argsort_case::<u32>(gpu, &mut temp, &keys(n, distinct), descending));
                failures.extend(argsort_case::<i64>(gpu, &mut temp, &keys(n, distinct), descending));
                failures.extend(argsort_case::<f32>(gpu, &mut temp, &keys(n, distinct), descending));
            }
            let pick = |i: usize| special[input::bits(n as u64, i as u64) as usize % special.len()];
            let doubles: Vec<f64> = (0..n).map(pick).collect();
            let singles: Vec<f32> = doubles.iter().map(|&x| x as f32).collect();
            failures.extend(argsort_case::<f64>(gpu, &mut temp, &doubles, descending));
            failures.extend(argsort_case::<f32>(gpu, &mut temp, &singles, descending));
            failures.extend(argsort_case::<i32>(gpu, &mut temp, &keys(n, 1 << 33), descending));
            failures.extend(argsort_case::<u64>(gpu, &mut temp, &keys(n, 5), descending));
            // One low byte in every key: the first pass, which makes the positions, copies tiles.
            let high: Vec<u32> = keys::<u32>(n, 3).iter().map(|k| k << 8).collect();
            failures.extend(argsort_case::<u32>(gpu, &mut temp, &high, descending));
        }
    }
    assert_none_failed(&failures);
}

/// One scan by key of `n` elements (runs of about `run` equal keys) on `kernel`, the keys and
/// values read from `skip` elements into their buffers (a view off the 16-byte boundary takes
/// the pipelined kernel's element-by-element loads).
/// A key of every [`Key`] type from a small number: `v - 1`, so that signed keys include -1 and
/// unsigned ones their largest value.
trait KeyOf: Key {
    fn of(v: u64) -> Self;
}

macro_rules! key_of {
    ($($t:ty),*) => {$(
        impl KeyOf for $t {
            fn of(v: u64) -> Self {
                (v as i64 - 1) as $t
            }
        }
    )*};
}
key_of!(u8, i8, u16, i16, u32, i32, u64, i64);

#[allow(clippy::too_many_arguments)]
fn scan_by_key_case<K: KeyOf, T: Element>(
    gpu: &Gpu,
    temp: &mut TempStorage,
    n: usize,
    run: u64,
    op: Op,
    exclusive: bool,
    kernel: SegmentedKernel,
    skip: usize,
) -> Option<String> {
    let stream = gpu.stream().clone();
    // Runs of about `run` equal keys; a key may come back after another (a new segment).
    let keys: Vec<K> = (0..(n + skip) as u64).map(|i| K::of((i / run + input::bits(run, i / run) % 2) % 3)).collect();
    let data: Vec<T> = workspace_tests::exact::scan_input(op, n as u64, n + skip);
    let d_keys = gpu.upload(&stream, "keys", &keys).unwrap();
    let d_in = gpu.upload(&stream, "in", &data).unwrap();
    let mut d_out = gpu.alloc_zeros::<T>(&stream, "out", n).unwrap();
    let opts = SegmentedOptions::new(op).exclusive(exclusive).kernel(kernel);
    let (keys, data) = (&keys[skip..], &data[skip..]);
    let (v_keys, v_in) = (d_keys.slice(skip..), d_in.slice(skip..));
    gpu.scan_by_key(&stream, &v_keys, &v_in, &mut d_out, &opts, temp).unwrap();
    let want = segmented_reference(op, data, |i| i == 0 || keys[i] != keys[i - 1], exclusive).unwrap();
    let got = gpu.download(&stream, &d_out).unwrap();
    (got.iter().map(|x| x.to_bits()).ne(want.iter().map(|x| x.to_bits()))).then(|| {
        let (k, t, kernel) = (std::any::type_name::<K>(), T::TYPE.name(), kernel.name());
        format!("scan_by_key {k} keys {t} n={n} run={run} {op:?} exclusive={exclusive} {kernel} skip={skip}")
    })
}

fn scan_by_key_matches_the_cpu(gpu: &Gpu) {
    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let tiles = |size| gpu.tuning().shapes.segmented_pipeline.at(size).tile() as usize;
    let (t4, t8) = (tiles(4), tiles(8));
    let sizes = [0, 1, 31, 33, t8 - 1, t8 + 1, t4 - 1, t4, t4 + 1, 3 * t4 + 7, 100_003, 1_000_003];
    for kernel in [SegmentedKernel::Tiles, SegmentedKernel::Pipelined] {
        for n in sizes {
            for run in [1u64, 16, 1024] {
                for exclusive in [false, true] {
                    let (t, skip) = (&mut temp, 0);
                    failures.extend(scan_by_key_case::<u32, u32>(gpu, t, n, run, Op::Add, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<u8, i64>(gpu, t, n, run, Op::Max, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<i64, u64>(gpu, t, n, run, Op::Min, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<u32, f32>(gpu, t, n, run, Op::Add, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<i32, f64>(gpu, t, n, run, Op::Mul, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<u64, i32>(gpu, t, n, run, Op::Max, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<u16, u32>(gpu, t, n, run, Op::Min, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<i8, u32>(gpu, t, n, run, Op::Add, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<i16, f64>(gpu, t, n, run, Op::Max, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<u32, u32>(gpu, t, n, run, Op::Xor, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<i8, i64>(gpu, t, n, run, Op::Or, exclusive, kernel, skip));
                    failures.extend(scan_by_key_case::<u64, i32>(gpu, t, n, run, Op::And, exclusive, kernel, skip));
                }
            }
        }
        // Views off the 16-byte boundary.
        for skip in [1, 3] {
            for n in [t4 + 1, 100_003] {
                let t = &mut temp;
                failures.extend(scan_by_key_case::<u32, u32>(gpu, t, n, 16, Op::Add, false, kernel, skip));
                failures.extend(scan_by_key_case::<i64, f64>(gpu, t, n, 5, Op::Max, true, kernel, skip));
            }
        }
    }
    assert_none_failed(&failures);
}
