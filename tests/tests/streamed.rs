//! The streamed scan (`Gpu::scan_streamed`) against the CPU: every type, operator and mode through
//! chunks far smaller than the input; every chunk boundary; deterministic floats against the
//! in-memory deterministic scan and the CPU replica; pinned memory with a device cap far below
//! the input; failing sources and sinks; and the mistakes refused before the GPU works.

use gpu_scan::plan::streamed::StreamPlan;
use gpu_scan::reference::{replica, verify};
use gpu_scan::{
    input, with_elem_type, Algorithm, ChunkSink, ChunkSource, ElemType, Element, Error, Gpu, Op, Progress, ScanOptions,
    StreamOptions, TempStorage, WideningOptions, WidensTo,
};
use std::process::ExitCode;
use std::sync::Mutex;
use workspace_tests::checks::assert_none_failed;
use workspace_tests::{exact, gpu_test};

fn main() -> ExitCode {
    workspace_tests::main(vec![
        gpu_test("every_type_operator_and_mode_through_small_chunks", every_type_operator_and_mode),
        gpu_test("integer_valued_floats_are_exact_through_small_chunks", integer_valued_floats_are_exact),
        gpu_test("every_chunk_boundary", every_chunk_boundary),
        gpu_test("deterministic_floats_equal_the_in_memory_scan_and_the_replica", deterministic_floats),
        gpu_test("pinned_4_gib_through_a_64_mib_cap", pinned_through_a_small_cap),
        gpu_test("a_failing_source_or_sink_names_its_chunk_and_stops", failing_source_or_sink),
        gpu_test("mistakes_are_refused_before_the_gpu_works", mistakes_are_refused),
        gpu_test("the_recurrence_streams_exactly_on_integer_valued_inputs", recurrence_streams),
        gpu_test("widening_sums_stream_through_small_chunks", widening_streams),
    ])
}

/// Elements in one tile of the scan kernel for `T`: chunks are multiples of it.
fn tile<T>(g: &Gpu) -> u64 {
    g.tuning().shapes.single_pass.at(size_of::<T>()).tile() as u64
}

/// Stream options with chunks of `tiles` tiles of `T`.
fn chunks_of<'a, T>(g: &Gpu, tiles: u64) -> StreamOptions<'a> {
    StreamOptions::new().max_chunk_bytes(tiles * tile::<T>(g) * size_of::<T>() as u64)
}

fn streamed<T: Element + Send + Sync>(
    g: &Gpu,
    data: &[T],
    opts: &ScanOptions<T>,
    sopts: &StreamOptions,
) -> gpu_scan::Result<(Vec<T>, StreamPlan)> {
    let mut out = vec![input::value::<T>(Op::Xor, 99, 0); data.len()];
    let mut temp = TempStorage::new();
    let plan = g.scan_streamed(g.stream(), data, &mut out, opts, sopts, &mut temp)?;
    Ok((out, plan))
}

fn describe<T: Element>(n: usize, opts: &ScanOptions<T>) -> String {
    format!("{} {} n={n} exclusive={} init={:?}", T::TYPE.name(), opts.op.name(), opts.exclusive, opts.init)
}

/// Bit for bit against the sequential CPU scan.
fn check_exact<T: Element + Send + Sync>(
    g: &Gpu,
    data: &[T],
    opts: &ScanOptions<T>,
    sopts: &StreamOptions,
) -> Option<String> {
    let what = describe(data.len(), opts);
    let want = gpu_scan::reference::scan(opts.op, data, opts.exclusive, opts.init).expect("a supported operator");
    match streamed(g, data, opts, sopts) {
        Err(e) => Some(format!("{what}: {e}")),
        Ok((got, _)) => exact::first_difference(&got, &want).map(|i| {
            let show = |v: &[T]| v.get(i).map_or("nothing".to_string(), |x| x.to_string());
            format!("{what}: first difference at {i}: expected {}, got {}", show(&want), show(&got))
        }),
    }
}

/// Every type and operator, inclusive and exclusive, with and without an initial value, through
/// chunks of two tiles (six chunks and a partial one), checked by the verification rules.
fn every_type_operator_and_mode(g: &Gpu) {
    let mut failures = Vec::new();
    for ty in ElemType::ALL {
        for op in Op::ALL.into_iter().filter(|o| o.supports(ty)) {
            with_elem_type!(ty, T => {
                let sopts = chunks_of::<T>(g, 2);
                let n = (13 * tile::<T>(g) + 7) as usize;
                let data = input::generate::<T>(op, 11, n);
                for exclusive in [false, true] {
                    for with_init in [false, true] {
                        let init = with_init.then(|| input::value::<T>(op, 0xabc, u64::MAX));
                        let opts = ScanOptions::new(op).exclusive(exclusive).init(init);
                        let what = describe(n, &opts);
                        match streamed(g, &data, &opts, &sopts) {
                            Err(e) => failures.push(format!("{what}: {e}")),
                            Ok((_, plan)) if plan.chunks != 7 => failures.push(format!("{what}: {plan:?}")),
                            Ok((got, _)) => match verify::verify(op, Algorithm::SinglePass, &data, exclusive, init, &got) {
                                Ok(v) if v.passed() => {}
                                Ok(v) => failures.push(format!("{what}: {} wrong, first {:?}", v.wrong, v.first)),
                                Err(e) => failures.push(format!("{what}: {e}")),
                            },
                        }
                    }
                }
            })
        }
    }
    assert_none_failed(&failures);
}

/// Float sums and products of integer-valued inputs are exact in any order: bit for bit.
fn integer_valued_floats_are_exact(g: &Gpu) {
    let mut failures = Vec::new();
    for ty in [ElemType::F32, ElemType::F64] {
        for op in [Op::Add, Op::Mul, Op::Min, Op::Max] {
            with_elem_type!(ty, T => {
                let n = (9 * tile::<T>(g) + 1) as usize;
                let data = exact::scan_input::<T>(op, 5, n);
                for exclusive in [false, true] {
                    let opts = ScanOptions::new(op).exclusive(exclusive);
                    failures.extend(check_exact(g, &data, &opts, &chunks_of::<T>(g, 2)));
                }
            })
        }
    }
    assert_none_failed(&failures);
}

/// Chunk size ±1, a final chunk of one element, inputs shorter than one chunk, and nothing.
fn every_chunk_boundary(g: &Gpu) {
    let mut failures = Vec::new();
    let c = 3 * tile::<u32>(g);
    for n in [0, 1, 31, 33, c - 1, c, c + 1, 2 * c, 2 * c + 1, 5 * c - 1, 5 * c + 1] {
        let data = input::generate::<u32>(Op::Add, n, n as usize);
        for exclusive in [false, true] {
            let opts = ScanOptions::new(Op::Add).exclusive(exclusive).init(exclusive.then_some(7));
            failures.extend(check_exact(g, &data, &opts, &chunks_of::<u32>(g, 3)));
        }
    }
    let data = input::generate::<u64>(Op::Max, 3, (2 * tile::<u64>(g) + 1) as usize);
    failures.extend(check_exact(g, &data, &ScanOptions::new(Op::Max), &chunks_of::<u64>(g, 1)));
    assert_none_failed(&failures);
}

/// Deterministic float sums through chunks of three tiles: the same bits run after run, the
/// in-memory deterministic scan's bits, and the CPU replica's.
fn deterministic_floats(g: &Gpu) {
    fn one<T: Element + Send + Sync>(g: &Gpu, op: Op, failures: &mut Vec<String>) {
        let n = (10 * tile::<T>(g) + 5) as usize;
        let data = input::generate::<T>(op, 21, n);
        for exclusive in [false, true] {
            for init in [None, Some(input::value::<T>(op, 3, 1))] {
                let opts = ScanOptions::new(op).exclusive(exclusive).init(init).deterministic(true);
                let what = describe(n, &opts);
                let sopts = chunks_of::<T>(g, 3);
                let (a, b) = match (streamed(g, &data, &opts, &sopts), streamed(g, &data, &opts, &sopts)) {
                    (Ok(a), Ok(b)) => (a.0, b.0),
                    (Err(e), _) | (_, Err(e)) => {
                        failures.push(format!("{what}: {e}"));
                        continue;
                    }
                };
                let whole = g.scan_host(&data, &opts).expect("the in-memory deterministic scan");
                let cpu = replica::single_pass(op, &data, exclusive, init).expect("the replica");
                for (name, want) in [("a second run", &b), ("the in-memory scan", &whole), ("the replica", &cpu)] {
                    if let Some(i) = exact::first_difference(&a, want) {
                        failures.push(format!("{what}: differs from {name} at {i}: {} vs {}", a[i], want[i]));
                    }
                }
            }
        }
    }
    let mut failures = Vec::new();
    one::<f32>(g, Op::Add, &mut failures);
    one::<f64>(g, Op::Add, &mut failures);
    one::<f32>(g, Op::Mul, &mut failures);
    assert_none_failed(&failures);
}

/// 2^30 u32 (4 GiB) in pinned memory through at most 64 MiB of device memory, bit for bit, with
/// the progress reported once per chunk, in order.
fn pinned_through_a_small_cap(g: &Gpu) {
    let n = 1usize << 30;
    let mut input = g.pinned::<u32>(n).expect("4 GiB of pinned memory");
    let mut output = g.pinned::<u32>(n).expect("4 GiB of pinned memory");
    let data = input.as_mut_slice().unwrap();
    let seeded = input::generate::<u32>(Op::Add, 8, n);
    data.copy_from_slice(&seeded);
    let out = output.as_mut_slice().unwrap();
    assert!(g.is_pinned(data) && g.is_pinned(out), "pinned buffers not seen as pinned");
    assert!(!g.is_pinned(&seeded), "a Vec seen as pinned");
    let seen = Mutex::new(Vec::new());
    let record = |p: Progress| seen.lock().unwrap().push(p);
    let cap = 64 << 20;
    let sopts = StreamOptions::new().device_memory(cap).progress(&record);
    let mut temp = TempStorage::new();
    let plan = g.scan_streamed(g.stream(), data, out, &ScanOptions::new(Op::Add), &sopts, &mut temp).unwrap();
    assert!(plan.device_bytes <= cap && plan.staging == 0 && plan.chunks > 16, "{plan:?}");
    let want = gpu_scan::reference::scan(Op::Add, &seeded, false, None).unwrap();
    assert_eq!(exact::first_difference(out, &want), None, "{plan:?}");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len() as u64, plan.chunks);
    assert!(seen
        .iter()
        .enumerate()
        .all(|(i, p)| p.chunk == i as u64 && p.chunks == plan.chunks && p.total == n as u64));
    assert_eq!(seen.last().map(|p| p.done), Some(n as u64));
}

/// A source that fails reading chunk `fail_at`, counting what it read.
struct Failing<'a> {
    data: &'a [u32],
    chunk: u64,
    fail_at: Option<u64>,
    reads: Vec<u64>,
}

impl ChunkSource<u32> for Failing<'_> {
    fn elements(&self) -> u64 {
        self.data.len() as u64
    }
    fn read(&mut self, start: u64, into: &mut [u32]) -> gpu_scan::Result<()> {
        if Some(start / self.chunk) == self.fail_at {
            return Err(Error::Io {
                what: "reading the input".into(),
                source: std::io::ErrorKind::UnexpectedEof.into(),
            });
        }
        self.reads.push(start);
        into.copy_from_slice(&self.data[start as usize..][..into.len()]);
        Ok(())
    }
}

/// A sink that fails taking chunk `fail_at`, keeping what it took.
struct Taking {
    chunk: u64,
    fail_at: Option<u64>,
    taken: Vec<(u64, Vec<u32>)>,
}

impl ChunkSink<u32> for Taking {
    fn write(&mut self, start: u64, from: &[u32]) -> gpu_scan::Result<()> {
        if Some(start / self.chunk) == self.fail_at {
            return Err(Error::Io {
                what: "writing the output".into(),
                source: std::io::ErrorKind::StorageFull.into(),
            });
        }
        self.taken.push((start, from.to_vec()));
        Ok(())
    }
}

fn failing_source_or_sink(g: &Gpu) {
    let c = 2 * tile::<u32>(g);
    let n = 8 * c + 3;
    let data = input::generate::<u32>(Op::Add, 4, n as usize);
    let want = gpu_scan::reference::scan(Op::Add, &data, false, None).unwrap();
    let sopts = chunks_of::<u32>(g, 2);
    let opts = ScanOptions::new(Op::Add);
    let mut temp = TempStorage::new();
    let run = |source: &mut Failing, sink: &mut Taking, temp: &mut TempStorage| {
        g.scan_streamed_from(g.stream(), source, sink, &opts, &sopts, temp)
    };
    // Both work: the chunks arrive in order and make the whole scan.
    let mut source = Failing { data: &data, chunk: c, fail_at: None, reads: vec![] };
    let mut sink = Taking { chunk: c, fail_at: None, taken: vec![] };
    let plan = run(&mut source, &mut sink, &mut temp).unwrap();
    assert_eq!(plan.chunks, 9);
    let whole: Vec<u32> = sink.taken.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    assert_eq!(sink.taken.iter().map(|t| t.0).collect::<Vec<_>>(), (0..9).map(|i| i * c).collect::<Vec<_>>());
    assert_eq!(exact::first_difference(&whole, &want), None);
    // The source fails at chunk 5: the error names it, the sink took chunks before it only.
    let mut source = Failing { data: &data, chunk: c, fail_at: Some(5), reads: vec![] };
    let mut sink = Taking { chunk: c, fail_at: None, taken: vec![] };
    match run(&mut source, &mut sink, &mut temp) {
        Err(Error::Chunk { chunk: 5, chunks: 9, start, .. }) if start == 5 * c => {}
        other => panic!("expected chunk 5 to fail, got {other:?}"),
    }
    assert!(sink.taken.iter().all(|t| t.0 < 5 * c), "{:?}", sink.taken.iter().map(|t| t.0).collect::<Vec<_>>());
    // The sink fails at chunk 2: nothing after it is taken, the reads stop a few slots on.
    let mut source = Failing { data: &data, chunk: c, fail_at: None, reads: vec![] };
    let mut sink = Taking { chunk: c, fail_at: Some(2), taken: vec![] };
    match run(&mut source, &mut sink, &mut temp) {
        Err(Error::Chunk { chunk: 2, .. }) => {}
        other => panic!("expected chunk 2 to fail, got {other:?}"),
    }
    assert_eq!(sink.taken.len(), 2);
    assert!(source.reads.len() < 9, "read {} chunks", source.reads.len());
    // The same storage still scans correctly after the failures.
    let mut source = Failing { data: &data, chunk: c, fail_at: None, reads: vec![] };
    let mut sink = Taking { chunk: c, fail_at: None, taken: vec![] };
    run(&mut source, &mut sink, &mut temp).unwrap();
    let whole: Vec<u32> = sink.taken.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    assert_eq!(exact::first_difference(&whole, &want), None);
}

fn mistakes_are_refused(g: &Gpu) {
    let data = vec![1u32; 1 << 20];
    let mut out = vec![0u32; 1 << 20];
    let mut temp = TempStorage::new();
    let opts = ScanOptions::new(Op::Add);
    let s = g.stream();
    let tiny = StreamOptions::new().device_memory(1000);
    let e = g.scan_streamed(s, &data, &mut out, &opts, &tiny, &mut temp).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("at least"), "{e}");
    let e = g.scan_streamed(s, &data, &mut out[1..], &opts, &StreamOptions::new(), &mut temp).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
    let hier = ScanOptions::new(Op::Add).algorithm(Algorithm::hierarchical());
    let e = g.scan_streamed(s, &data, &mut out, &hier, &StreamOptions::new(), &mut temp).unwrap_err();
    assert!(e.is_usage(), "{e}");
    let e =
        g.scan_streamed(s, &data, &mut out, &opts, &StreamOptions::new().max_chunk_bytes(4), &mut temp).unwrap_err();
    assert!(e.is_usage(), "{e}");
    let floats = vec![1f32; 10];
    let mut fout = vec![0f32; 10];
    let e = g.scan_streamed(s, &floats, &mut fout, &ScanOptions::new(Op::Xor), &StreamOptions::new(), &mut temp);
    assert!(e.unwrap_err().is_usage());
    assert!(out.iter().all(|&x| x == 0), "a refused call wrote output");
}

/// The linear recurrence through chunks of 1024 maps and a partial one: integer-valued inputs
/// (exact in any order) bit for bit against the sequential loop, f32 and f64, and random ones
/// equal to the in-memory recurrence within its bound.
fn recurrence_streams(g: &Gpu) {
    use gpu_scan::apps::recurrence::RecurrenceFloat;
    use gpu_scan::reference::apps as reference;
    use gpu_scan::RecurrenceOptions;
    fn exact_case<F: RecurrenceFloat + Send + Sync>(g: &Gpu, n: usize, x0: F) -> Option<String> {
        let (a, b) = exact::recurrence::<F>(n as u64, n);
        let mut x = vec![F::from_f64(f64::NAN); n];
        let sopts = StreamOptions::new().max_chunk_bytes(1024 * size_of::<F::Map>() as u64);
        let mut temp = TempStorage::new();
        let what = format!("{} n={n} x0={x0}", F::TYPE.name());
        match g.recurrence_streamed(g.stream(), &a, &b, &mut x, &RecurrenceOptions::new(x0), &sopts, &mut temp) {
            Err(e) => return Some(format!("{what}: {e}")),
            Ok(p) if n > 1024 && p.chunks < 2 => return Some(format!("{what}: one chunk {p:?}")),
            Ok(_) => {}
        }
        let want: Vec<F> = reference::recurrence(&a, &b, x0).0.into_iter().map(F::from_f64).collect();
        let t = exact::first_difference(&x, &want)?;
        Some(format!("{what}: x[{t}] = {}, the loop gives {}", x[t], want[t]))
    }
    let mut failures = Vec::new();
    for n in [1usize, 1023, 1024, 1025, 5 * 1024 + 1, 100_003] {
        failures.extend(exact_case::<f32>(g, n, 2.0));
        failures.extend(exact_case::<f64>(g, n, -3.0));
    }
    // Random factors: the streamed result equals the in-memory one within 2 roundings per
    // combine of the magnitude recurrence, as the loop does.
    let n = 1 << 20;
    let a = input::uniform::<f32>(5, n, 0.9, 1.0);
    let b = input::uniform::<f32>(6, n, -1.0, 1.0);
    let mut x = vec![0f32; n];
    let sopts = StreamOptions::new().max_chunk_bytes(1 << 16);
    let opts = RecurrenceOptions::new(1.5f32);
    let p = g.recurrence_streamed(g.stream(), &a, &b, &mut x, &opts, &sopts, &mut TempStorage::new()).unwrap();
    assert!(p.chunks >= 16, "{p:?}");
    let (want, s) = reference::recurrence(&a, &b, 1.5f32);
    let bound = |t: usize| 2.0 * verify::roundings(Algorithm::SinglePass, t, n) * f32::EPSILON as f64 * s[t];
    if let Some(t) = (0..n).find(|&t| (x[t] as f64 - want[t]).abs() > bound(t)) {
        failures.push(format!("random f32 at {t}: {} vs {} (bound {:e})", x[t], want[t], bound(t)));
    }
    assert_none_failed(&failures);
}

/// Widening sums through chunks of two tiles (each slot holds a chunk at both widths): every
/// pair of types bit for bit against the CPU, inclusive and exclusive, with and without an
/// initial value, from pageable and pinned memory; deterministic half-float sums bitwise those
/// of the in-memory deterministic widening scan and a second run.
fn widening_streams(g: &Gpu) {
    fn run<N: WidensTo<T>, T: Element + Send + Sync>(
        g: &Gpu,
        data: &[N],
        opts: &WideningOptions<T>,
    ) -> gpu_scan::Result<Vec<T>> {
        let both = (size_of::<N>() + size_of::<T>()) as u64;
        let sopts = StreamOptions::new().max_chunk_bytes(2 * tile::<T>(g) * both);
        let mut out = vec![T::zero(); data.len()];
        let plan = g.widening_scan_streamed(g.stream(), data, &mut out, opts, &sopts, &mut TempStorage::new())?;
        assert!(data.len() < 4 * tile::<T>(g) as usize || plan.chunks > 2, "{plan:?} is not several chunks");
        Ok(out)
    }
    fn exact<N: WidensTo<T>, T: Element + Send + Sync>(g: &Gpu, data: &[N], init: T, failures: &mut Vec<String>) {
        for (exclusive, init) in [(false, None), (true, None), (false, Some(init)), (true, Some(init))] {
            let opts = WideningOptions::<T>::new().exclusive(exclusive).init(init);
            let what =
                format!("{:?} into {} n={} exclusive={exclusive} init={init:?}", N::SOURCE, T::TYPE.name(), data.len());
            let want = gpu_scan::reference::widening(data, exclusive, init).expect("the CPU widening sum");
            match run(g, data, &opts) {
                Err(e) => failures.push(format!("{what}: {e}")),
                Ok(got) => failures.extend(
                    exact::first_difference(&got, &want)
                        .map(|i| format!("{what}: first difference at {i}: expected {}, got {}", want[i], got[i])),
                ),
            }
        }
    }
    let mut failures = Vec::new();
    let bits = |n: u64| (0..n).map(move |i| input::bits(n, i));
    let c = 2 * tile::<u32>(g);
    for n in [1, 33, c - 1, c + 1, 5 * c + 7] {
        exact::<u8, u32>(g, &bits(n).map(|b| b as u8).collect::<Vec<_>>(), 9, &mut failures);
        exact::<bool, u32>(g, &bits(n).map(|b| b & 1 == 1).collect::<Vec<_>>(), 2, &mut failures);
        exact::<u16, u32>(g, &bits(n).map(|b| b as u16).collect::<Vec<_>>(), 1, &mut failures);
    }
    let c = 2 * tile::<u64>(g);
    for n in [c - 1, c + 1, 4 * c + 3] {
        exact::<i8, i64>(g, &bits(n).map(|b| b as i8).collect::<Vec<_>>(), -5, &mut failures);
        exact::<u16, u64>(g, &bits(n).map(|b| b as u16).collect::<Vec<_>>(), u64::MAX, &mut failures);
        exact::<i32, i64>(g, &bits(n).map(|b| b as i32).collect::<Vec<_>>(), 3, &mut failures);
        exact::<u32, u64>(g, &bits(n).map(|b| b as u32).collect::<Vec<_>>(), 3, &mut failures);
    }
    let n = 9 * tile::<f32>(g) + 3;
    let small: Vec<half::f16> = bits(n).map(|b| half::f16::from_f32((b % 17) as f32 - 8.0)).collect();
    exact::<half::f16, f32>(g, &small, -3.0, &mut failures);
    let small: Vec<half::bf16> = bits(n).map(|b| half::bf16::from_f32((b % 17) as f32 - 8.0)).collect();
    exact::<half::bf16, f32>(g, &small, 0.5, &mut failures);

    // Deterministic: a second run and the in-memory deterministic widening scan, bit for bit.
    let unit: Vec<half::f16> = bits(n).map(|b| half::f16::from_f32((b >> 40) as f32 / (1u64 << 24) as f32)).collect();
    for exclusive in [false, true] {
        let opts = WideningOptions::<f32>::new().exclusive(exclusive).deterministic(true);
        let whole = g.widening_scan_host(&unit, &opts).expect("the in-memory deterministic widening scan");
        for k in 0..2 {
            match run(g, &unit, &opts) {
                Err(e) => failures.push(format!("deterministic f16 run {k}: {e}")),
                Ok(got) => failures.extend(exact::first_difference(&got, &whole).map(|i| {
                    format!(
                        "deterministic f16 exclusive={exclusive} run {k}: at {i}: {} vs the in-memory {}",
                        got[i], whole[i]
                    )
                })),
            }
        }
    }

    // Pinned both ways: transferred directly, no staging.
    let n = 7 * 2 * tile::<u32>(g) as usize + 5;
    let mut pin_in = g.pinned::<u8>(n).expect("pinned memory");
    let mut pin_out = g.pinned::<u32>(n).expect("pinned memory");
    let (x, y) = (pin_in.as_mut_slice().expect("pinned"), pin_out.as_mut_slice().expect("pinned"));
    for (i, v) in x.iter_mut().enumerate() {
        *v = input::bits(77, i as u64) as u8;
    }
    let sopts = StreamOptions::new().max_chunk_bytes(2 * tile::<u32>(g) * 5);
    let opts = WideningOptions::<u32>::new().exclusive(true).init(Some(4));
    match g.widening_scan_streamed(g.stream(), x, y, &opts, &sopts, &mut TempStorage::new()) {
        Err(e) => failures.push(format!("pinned u8 into u32: {e}")),
        Ok(plan) => {
            if plan.staging != 0 {
                failures.push(format!("pinned u8 into u32 was staged: {plan:?}"));
            }
            let want = gpu_scan::reference::widening::<u8, u32>(x, true, Some(4)).expect("the CPU sum");
            failures.extend(exact::first_difference(y, &want).map(|i| format!("pinned u8 into u32: at {i}")));
        }
    }
    assert_none_failed(&failures);
}
