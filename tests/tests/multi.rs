//! Scans across ranks (`gpu_scan::multi`) against the CPU reference of the whole array: p = 1
//! to 8 simulated ranks on one device behind the collective interface, for every type, operator
//! and mode, with uneven and empty shards and every kernel; the compaction across ranks; one
//! rank over NCCL in both ways of forming a group; and the mistakes that must fail on every rank.

use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::multi::Group;
use gpu_scan::reference::{apps as reference, verify};
use gpu_scan::{
    input, with_elem_type, Algorithm, CompactOptions, ElemType, Element, Gpu, Keep, Op, ScanKernel, ScanOptions,
};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use workspace_tests::checks::assert_none_failed;
use workspace_tests::{exact, gpu_test, gpu_test_needing};

fn main() -> ExitCode {
    let nccl = || (!gpu_scan::multi::nccl_present()).then(|| "NCCL is not loadable here (libnccl.so)".to_string());
    workspace_tests::main(vec![
        gpu_test("simulated_ranks_every_type_operator_and_mode", |_| simulated_ranks_every_type_operator_and_mode()),
        gpu_test("simulated_ranks_uneven_and_empty_shards_every_kernel", |_| uneven_and_empty_shards_every_kernel()),
        gpu_test("simulated_ranks_float_sums_and_products_are_exact_on_integer_valued_floats", |_| {
            simulated_ranks_exact_floats()
        }),
        gpu_test("compaction_across_simulated_ranks", |_| compaction_across_simulated_ranks()),
        gpu_test("mistakes_fail_before_any_rank_runs", |_| mistakes_fail_before_any_rank_runs()),
        gpu_test_needing("one_rank_over_nccl_from_devices", nccl(), |_| one_rank_over_nccl_from_devices()),
        gpu_test_needing("one_rank_over_nccl_from_rank", nccl(), |_| one_rank_over_nccl_from_rank()),
    ])
}

/// A GPU of this test executable's own, shared by its groups.
fn gpu() -> Arc<Gpu> {
    static GPU: OnceLock<Arc<Gpu>> = OnceLock::new();
    GPU.get_or_init(|| Arc::new(Gpu::new(0).expect("a GPU (checked by the harness)"))).clone()
}

/// Shard boundaries of `n` elements over `p` ranks: even, and with empty and lopsided shards.
fn splits(n: usize, p: usize, seed: u64) -> Vec<Vec<usize>> {
    let even: Vec<usize> = (0..=p).map(|r| n * r / p).collect();
    let mut random: Vec<usize> = (1..p).map(|r| (input::bits(seed, r as u64) % (n as u64 + 1)) as usize).collect();
    random.sort_unstable();
    let random = [vec![0], random, vec![n]].concat();
    // Everything on the last rank but one (the only one, for one rank), the rest empty.
    let lopsided: Vec<usize> = (0..=p).map(|r| if r == 0 || r + 1 < p { 0 } else { n }).collect();
    vec![even, random, lopsided]
}

/// Runs `opts` over `data` split at `bounds` on `group`, and checks against the CPU reference.
fn check_split<T: Element>(group: &mut Group, data: &[T], bounds: &[usize], opts: &ScanOptions<T>) -> Option<String> {
    let what = describe(group, bounds, opts);
    match run_split(group, data, bounds, opts) {
        Err(e) => Some(format!("{what}: {e}")),
        Ok(got) => match verify::verify(opts.op, Algorithm::SinglePass, data, opts.exclusive, opts.init, &got) {
            Ok(v) if v.passed() => None,
            Ok(v) => {
                let f = v.first.expect("a failed verdict names a mismatch");
                Some(format!("{what}: {} wrong, first at {}: expected {}, got {}", v.wrong, f.index, f.expected, f.got))
            }
            Err(e) => Some(format!("{what}: {e}")),
        },
    }
}

/// [`check_split`] for data exact in any combine order: bit for bit against the sequential scan.
fn check_split_exact<T: Element>(
    group: &mut Group,
    data: &[T],
    bounds: &[usize],
    opts: &ScanOptions<T>,
) -> Option<String> {
    let what = describe(group, bounds, opts);
    let want = gpu_scan::reference::scan(opts.op, data, opts.exclusive, opts.init).expect("a supported operator");
    match run_split(group, data, bounds, opts) {
        Err(e) => Some(format!("{what}: {e}")),
        Ok(got) => exact::first_difference(&got, &want).map(|i| {
            let show = |v: &[T]| v.get(i).map_or("nothing".to_string(), |x| x.to_string());
            format!("{what}: integer-valued, first difference at {i}: expected {}, got {}", show(&want), show(&got))
        }),
    }
}

fn describe<T: Element>(group: &Group, bounds: &[usize], opts: &ScanOptions<T>) -> String {
    format!(
        "{} {} p={} bounds {bounds:?} exclusive={} init={:?} kernel={:?}",
        T::TYPE.name(),
        opts.op.name(),
        group.world(),
        opts.exclusive,
        opts.init,
        opts.kernel
    )
}

/// The whole result of `opts` over `data` split at `bounds` on `group`.
fn run_split<T: Element>(
    group: &mut Group,
    data: &[T],
    bounds: &[usize],
    opts: &ScanOptions<T>,
) -> gpu_scan::Result<Vec<T>> {
    let g = gpu();
    let stream = g.stream().clone();
    let whole = g.upload(&stream, "input", data)?;
    let shards: Vec<_> = bounds.windows(2).map(|w| whole.slice(w[0]..w[1])).collect();
    let poison = input::value::<T>(Op::Xor, 99, 0);
    let mut outs = bounds
        .windows(2)
        .map(|w| g.upload(&stream, "output", &vec![poison; w[1] - w[0]]))
        .collect::<gpu_scan::Result<Vec<CudaSlice<T>>>>()?;
    group.scan(&shards, &mut outs, opts)?;
    group.synchronize()?;
    let mut got = Vec::with_capacity(data.len());
    for o in &outs {
        got.extend(g.download(&stream, o)?);
    }
    Ok(got)
}

/// Every type and operator, inclusive and exclusive, with and without an initial value, over
/// p = 1 to 8 ranks with even shards of a size that leaves partial tiles everywhere.
fn simulated_ranks_every_type_operator_and_mode() {
    let mut failures = Vec::new();
    for p in 1..=8 {
        let mut group = Group::simulated(gpu(), p).unwrap();
        for ty in ElemType::ALL {
            for op in Op::ALL.into_iter().filter(|o| o.supports(ty)) {
                with_elem_type!(ty, T => {
                    let n = 100_003;
                    let data = input::generate::<T>(op, 7 + p as u64, n);
                    let bounds: Vec<usize> = (0..=p).map(|r| n * r / p).collect();
                    for exclusive in [false, true] {
                        for with_init in [false, true] {
                            let init = with_init.then(|| input::value::<T>(op, 0xabc, u64::MAX));
                            let opts = ScanOptions::new(op).exclusive(exclusive).init(init);
                            failures.extend(check_split::<T>(&mut group, &data, &bounds, &opts));
                        }
                    }
                })
            }
        }
    }
    assert_none_failed(&failures);
}

/// Uneven, empty and lopsided shards at awkward sizes, for each single-pass kernel, on a 4- and
/// an 8-byte type (exact and float) and the non-commutative operator. The pipelined kernel takes
/// shards on 16-byte boundaries only (its bulk copies), so its shards start at multiples of four
/// elements; elsewhere it is refused.
fn uneven_and_empty_shards_every_kernel() {
    let mut failures = Vec::new();
    for p in [2, 3, 5, 8] {
        let mut group = Group::simulated(gpu(), p).unwrap();
        for n in [0, 1, 7, 33, 4097, 65521, 1_000_003] {
            for (s, bounds) in splits(n, p, n as u64).into_iter().enumerate() {
                for kernel in [ScanKernel::Auto, ScanKernel::Tiles, ScanKernel::Staged, ScanKernel::Pipelined] {
                    let bounds = match kernel {
                        ScanKernel::Pipelined => bounds.iter().map(|&b| if b == n { n } else { b / 4 * 4 }).collect(),
                        _ => bounds.clone(),
                    };
                    let exclusive = s % 2 == 1;
                    let d = input::generate::<u32>(Op::Add, 3, n);
                    let opts = ScanOptions::new(Op::Add).exclusive(exclusive).kernel(kernel);
                    failures.extend(check_split(&mut group, &d, &bounds, &opts));
                    let d = input::generate::<f64>(Op::Add, 4, n);
                    failures.extend(check_split(
                        &mut group,
                        &d,
                        &bounds,
                        &ScanOptions::new(Op::Add).kernel(kernel).init(Some(0.5)),
                    ));
                    let d = input::generate::<u64>(Op::Affine, 5, n);
                    failures.extend(check_split(
                        &mut group,
                        &d,
                        &bounds,
                        &ScanOptions::new(Op::Affine).exclusive(exclusive).kernel(kernel),
                    ));
                }
            }
        }
    }
    assert_none_failed(&failures);
}

/// Float sums and products of integer-valued inputs (`workspace_tests::exact`) across p = 1 to
/// 8 simulated ranks, bit for bit: even, random and lopsided shards, every single-pass kernel
/// (the pipelined one on shards at multiples of four elements), inclusive and exclusive, with and
/// without an initial value; one large array whose carries cross five ranks.
fn simulated_ranks_exact_floats() {
    fn each<T: Element>(group: &mut Group, n: usize, kernels: &[ScanKernel], failures: &mut Vec<String>) {
        let p = group.world();
        for op in [Op::Add, Op::Mul] {
            let data = exact::floats::<T>(op, 31 + n as u64, n);
            for (s, bounds) in splits(n, p, 3 + n as u64).into_iter().enumerate() {
                for &kernel in kernels {
                    let bounds: Vec<usize> = match kernel {
                        ScanKernel::Pipelined => bounds.iter().map(|&b| if b == n { n } else { b / 4 * 4 }).collect(),
                        _ => bounds.clone(),
                    };
                    let (exclusive, with_init) = (s % 2 == 1, (s + p).is_multiple_of(2));
                    let init = with_init.then(|| exact::init::<T>(op, s as u64));
                    let opts = ScanOptions::new(op).exclusive(exclusive).init(init).kernel(kernel);
                    failures.extend(check_split_exact(group, &data, &bounds, &opts));
                }
            }
        }
    }
    let mut failures = Vec::new();
    for p in 1..=8 {
        let mut group = Group::simulated(gpu(), p).unwrap();
        let sizes: &[usize] =
            if p % 4 == 3 { &[0, 1, 33, 4097, 100_003, 1_000_003] } else { &[0, 1, 33, 4097, 100_003] };
        for &n in sizes {
            each::<f32>(&mut group, n, &ScanKernel::ALL, &mut failures);
            each::<f64>(&mut group, n, &ScanKernel::ALL, &mut failures);
        }
    }
    let mut group = Group::simulated(gpu(), 5).unwrap();
    let kernels = [ScanKernel::Auto, ScanKernel::Pipelined];
    each::<f32>(&mut group, 30_000_001, &kernels, &mut failures);
    each::<f64>(&mut group, 30_000_001, &kernels, &mut failures);
    assert_none_failed(&failures);
}

/// Each rank compacts its shard; the starts are the exclusive scan of the counts, and the
/// shards' kept elements, placed at their starts, are the compaction of the whole.
fn compaction_across_simulated_ranks() {
    let g = gpu();
    let stream = g.stream().clone();
    for p in 2..=8 {
        let mut group = Group::simulated(g.clone(), p).unwrap();
        for n in [0usize, 1, 1000, 300_007] {
            for bounds in splits(n, p, 11 + n as u64) {
                let data = input::generate::<f32>(Op::Add, n as u64, n);
                let keep = Keep::Greater(0.25f32);
                let shards: Vec<CudaSlice<f32>> =
                    bounds.windows(2).map(|w| g.upload(&stream, "in", &data[w[0]..w[1]]).unwrap()).collect();
                let mut outs: Vec<CudaSlice<f32>> =
                    bounds.windows(2).map(|w| g.alloc_zeros(&stream, "out", w[1] - w[0]).unwrap()).collect();
                let placed = group.compact(&shards, None, &mut outs, &CompactOptions::new(keep)).unwrap();
                let want = reference::compact(&data, None, keep);
                let mut got = vec![f32::NAN; want.len()];
                let mut next = 0;
                for ((start, count), out) in placed.iter().zip(&outs) {
                    assert_eq!(*start, next, "p={p} n={n} {bounds:?}: the starts are the exclusive scan of the counts");
                    let kept = g.download(&stream, out).unwrap();
                    got[*start as usize..(*start + *count) as usize].copy_from_slice(&kept[..*count as usize]);
                    next += count;
                }
                assert_eq!(next as usize, want.len(), "p={p} n={n} {bounds:?}");
                assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "p={p} n={n} {bounds:?}");
            }
        }
    }
}

/// Mistakes are refused with a clear error before any rank runs anything.
fn mistakes_fail_before_any_rank_runs() {
    let g = gpu();
    let stream = g.stream().clone();
    let mut group = Group::simulated(g.clone(), 3).unwrap();
    let a = g.upload(&stream, "a", &[1u32, 2, 3]).unwrap();
    let mut outs: Vec<CudaSlice<u32>> = (0..3).map(|_| g.alloc_zeros(&stream, "o", 3).unwrap()).collect();
    let e = group.scan(&[a.slice(0..3)], &mut outs, &ScanOptions::new(Op::Add)).unwrap_err().to_string();
    assert!(e.contains("1 input and 3 output shards for 3 local ranks"), "{e}");
    let shards = [a.slice(0..3), a.slice(0..2), a.slice(0..3)];
    let e = group.scan(&shards, &mut outs, &ScanOptions::new(Op::Add)).unwrap_err().to_string();
    assert!(e.contains("rank 1: the output shard holds 3 elements, the input shard 2"), "{e}");
    let shards = [a.slice(0..3), a.slice(0..3), a.slice(0..3)];
    let naive = ScanOptions::new(Op::Add).algorithm(Algorithm::Naive);
    assert!(group.scan(&shards, &mut outs, &naive).unwrap_err().to_string().contains("single-pass"));
    let f = g.upload(&stream, "f", &[1.0f32, 2.0, 3.0]).unwrap();
    let mut fo: Vec<CudaSlice<f32>> = (0..3).map(|_| g.alloc_zeros(&stream, "o", 3).unwrap()).collect();
    let det = ScanOptions::new(Op::Add).deterministic(true);
    let fs = [f.slice(0..3), f.slice(0..3), f.slice(0..3)];
    assert!(group.scan(&fs, &mut fo, &det).unwrap_err().to_string().contains("deterministic"));
    let odd = [a.slice(0..1), a.slice(1..2), a.slice(2..3)];
    let mut one: Vec<CudaSlice<u32>> = (0..3).map(|_| g.alloc_zeros(&stream, "o", 1).unwrap()).collect();
    let pipelined = ScanOptions::new(Op::Add).kernel(ScanKernel::Pipelined);
    let e = group.scan(&odd, &mut one, &pipelined).unwrap_err().to_string();
    assert!(e.contains("16-byte boundaries"), "{e}");
    // Nothing ran: the outputs are still zero.
    for o in &outs {
        assert_eq!(g.download(&stream, o).unwrap(), [0, 0, 0]);
    }
    assert!(Group::simulated(g, 0).is_err());
}

fn one_rank_over_nccl(mut group: Group) {
    let g = group.members()[0].gpu.clone();
    let stream = group.members()[0].stream.clone();
    let data = input::generate::<f32>(Op::Add, 1, 3_000_017);
    let d = g.upload(&stream, "in", &data).unwrap();
    let mut out = [g.alloc_zeros::<f32>(&stream, "out", data.len()).unwrap()];
    let opts = ScanOptions::new(Op::Add).init(Some(1.5));
    group.scan(&[d], &mut out, &opts).unwrap();
    group.synchronize().unwrap();
    let got = g.download(&stream, &out[0]).unwrap();
    let v = verify::verify(Op::Add, Algorithm::SinglePass, &data, false, Some(1.5), &got).unwrap();
    assert!(v.passed(), "{:?}", v.first);
}

/// p = 1 through NCCL, one process driving its GPUs.
fn one_rank_over_nccl_from_devices() {
    one_rank_over_nccl(Group::from_devices(&[0]).unwrap());
}

/// p = 1 through NCCL, one process per GPU joined by an id.
fn one_rank_over_nccl_from_rank() {
    let id = gpu_scan::multi::NcclId::new().unwrap();
    let id = gpu_scan::multi::NcclId::from_bytes(id.bytes());
    one_rank_over_nccl(Group::from_rank(gpu(), 0, 1, id).unwrap());
}
