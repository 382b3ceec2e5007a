//! Repetition and concurrency: 10,000 back-to-back scans on one `Gpu` leak no device memory and
//! are all correct; two host threads scanning on their own streams at once both get correct
//! results; storage used on a stream that has since been destroyed is freed without it.

use gpu_scan::cudarc::driver::result::stream::{self as raw_stream, StreamKind};
use gpu_scan::{input, with_elem_type, Algorithm, ElemType, Gpu, Op, ScanOptions, TempStorage};
use std::process::ExitCode;
use workspace_tests::checks::{assert_none_failed, check, check_on, Case};
use workspace_tests::gpu_test;

/// One test at a time: the first measures the device's free memory, and the last needs cudarc
/// out of its multi-stream mode (streams of the second running beside it would put it there, and
/// freeing storage of a destroyed stream would then wait on that stream).
fn main() -> ExitCode {
    workspace_tests::main_serial(vec![
        gpu_test("ten_thousand_back_to_back_scans_are_correct_and_leak_nothing", ten_thousand_back_to_back_scans),
        gpu_test("two_threads_on_their_own_streams", two_threads_on_their_own_streams),
        gpu_test("storage_is_freed_after_its_stream_is_destroyed", storage_is_freed_after_its_stream_is_destroyed),
    ])
}

const MIB: u64 = 1 << 20;

fn ten_thousand_back_to_back_scans(gpu: &'static Gpu) {
    let types = [ElemType::U8, ElemType::U32, ElemType::I64, ElemType::F32, ElemType::F64];
    let pick = |i: u64| {
        let b = input::bits(0x7e7, i);
        let ty = types[(b % types.len() as u64) as usize];
        let ops: Vec<Op> = [Op::Add, Op::Max, Op::Min].into_iter().filter(|o| o.supports(ty)).collect();
        let op = ops[((b >> 8) % ops.len() as u64) as usize];
        let n = ((b >> 16) % 40_000) as usize;
        let algorithm = if (b >> 40).is_multiple_of(4) { Algorithm::hierarchical() } else { Algorithm::SinglePass };
        (ty, Case { exclusive: (b >> 48).is_multiple_of(2), seed: i, ..Case::new(op, algorithm, n) })
    };
    // Load every module first: module code stays resident and is not a leak.
    let mut temp = TempStorage::new();
    for i in 0..200 {
        let (ty, case) = pick(i);
        with_elem_type!(ty, T => { check::<T>(gpu, &mut temp, case, None); });
    }
    drop(temp);
    gpu.stream().synchronize().unwrap();
    let (free_before, _) = gpu.memory().unwrap();

    let mut temp = TempStorage::new();
    let mut failures = Vec::new();
    let mut capacity = 0;
    for i in 0..10_000 {
        let (ty, case) = pick(i);
        with_elem_type!(ty, T => failures.extend(check::<T>(gpu, &mut temp, case, None)));
        assert!(temp.capacity() >= capacity);
        capacity = temp.capacity();
    }
    assert_none_failed(&failures);
    drop(temp);
    gpu.stream().synchronize().unwrap();
    let (free_after, _) = gpu.memory().unwrap();
    assert!(
        free_after + 2 * MIB >= free_before,
        "device memory leaked: {free_before} bytes free before, {free_after} after"
    );
}

fn two_threads_on_their_own_streams(gpu: &'static Gpu) {
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2u64)
            .map(|t| {
                s.spawn(move || {
                    let stream = gpu.new_stream().unwrap();
                    let mut temp = TempStorage::new();
                    (0..100u64)
                        .filter_map(|i| {
                            let n = 1000 + (i as usize * 7919) % 3_000_000;
                            let case = Case { seed: t * 1000 + i, ..Case::new(Op::Affine, Algorithm::SinglePass, n) };
                            check_on::<u64>(gpu, &stream, &mut temp, case, None)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    assert_none_failed(&failures);
}

/// A foreign caller's case: a stream another library created and has destroyed since, its
/// storage kept. Repeated calls of one size allocate nothing, and `free` needs no stream.
fn storage_is_freed_after_its_stream_is_destroyed(gpu: &'static Gpu) {
    let n = 1 << 20;
    let mut temp = TempStorage::new();
    gpu.context().bind_to_thread().unwrap();
    // Else cudarc would make the destroyed stream wait for events as `free` gives regions up.
    assert!(!gpu.context().is_in_multi_stream_mode(), "a stream of cudarc's own is still alive");
    let raw = raw_stream::create(StreamKind::NonBlocking).unwrap();
    {
        // SAFETY: `raw` is a stream of this context, destroyed only after everything that
        // holds this wrapper but `temp` is gone.
        let stream = unsafe { gpu.borrow_stream(raw) };
        let x = gpu.upload(&stream, "x", &vec![1u32; n]).unwrap();
        let mut y = gpu.alloc_zeros::<u32>(&stream, "y", n).unwrap();
        let opts = ScanOptions::<u32>::new(Op::Add);
        gpu.scan(&stream, &x, &mut y, &opts, &mut temp).unwrap();
        let allocations = temp.allocations();
        assert!(allocations > 0 && temp.capacity() > 0);
        for _ in 0..10 {
            gpu.scan(&stream, &x, &mut y, &opts, &mut temp).unwrap();
        }
        assert_eq!(temp.allocations(), allocations, "repeated calls of one size allocated");
        assert_eq!(gpu.download(&stream, &y).unwrap()[n - 1], n as u32);
    }
    // SAFETY: only `temp` still refers to the stream, and `free` does not use it.
    unsafe { raw_stream::destroy(raw) }.unwrap();
    temp.free(gpu).unwrap();
    assert_eq!(temp.capacity(), 0);
    temp.free(gpu).unwrap();
}
