//! The scan across GPUs: `scan N --gpus all|0,1` (one checked, timed scan of the array split
//! evenly over the GPUs) and `bench --gpus` (weak and strong scaling). A group over NCCL; times
//! are medians of the slowest rank's CUDA-event time, after a warm-up.

use crate::args::Global;
use crate::experiment::{gbps, median, verdict, Check};
use gpu_scan::cudarc::driver::sys::CUevent_flags;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::multi::Group;
use gpu_scan::reference::verify;
use gpu_scan::{input, Algorithm, Element, Error, Gpu, Op, Result, ScanOptions};
use std::sync::Arc;

/// `all`, or a comma-separated list of distinct device ordinals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gpus {
    All,
    List(Vec<usize>),
}

impl std::str::FromStr for Gpus {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Gpus, String> {
        if s == "all" {
            return Ok(Gpus::All);
        }
        let list: Vec<usize> = s
            .split(',')
            .map(|d| {
                d.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("`{d}` is not a device number (give `all` or a list like 0,1)"))
            })
            .collect::<std::result::Result<_, _>>()?;
        let mut sorted = list.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != list.len() {
            return Err(format!("`{s}` names a device twice"));
        }
        Ok(Gpus::List(list))
    }
}

impl Gpus {
    /// The device ordinals, checked against the devices there are.
    pub fn ordinals(&self) -> Result<Vec<usize>> {
        let count = gpu_scan::device_count()?;
        match self {
            Gpus::All if count == 0 => Err(Error::NoDevice(String::new())),
            Gpus::All => Ok((0..count).collect()),
            Gpus::List(l) => match l.iter().find(|&&d| d >= count) {
                Some(d) => Err(Error::NoDevice(format!(" with ordinal {d} (the driver reports {count})"))),
                None => Ok(l.clone()),
            },
        }
    }
}

/// Where the ranks of a scan across GPUs run.
#[derive(Clone, Debug)]
pub enum Ranks {
    /// One per GPU, over NCCL.
    Gpus(Gpus),
    /// This many on the one GPU `--device` names, sharing totals by device copies.
    Simulated(usize),
}

/// The group `ranks` describes, with the tuning `global` asks for; prints its devices.
fn group(global: &Global, ranks: &Ranks) -> Result<Group> {
    match ranks {
        Ranks::Gpus(gpus) => open(global, &gpus.ordinals()?),
        Ranks::Simulated(p) => {
            let gpu = crate::experiment::open(global)?;
            println!("{p} simulated ranks on device {}", global.device);
            Group::simulated(Arc::new(gpu), *p)
        }
    }
}

/// A group over `ordinals` with the tuning `global` asks for; prints its devices.
fn open(global: &Global, ordinals: &[usize]) -> Result<Group> {
    let (tuning, ptx) = global.resolve()?;
    let mut gpus = Vec::with_capacity(ordinals.len());
    for &o in ordinals {
        let mut gpu = Gpu::new(o)?.with_tuning(tuning)?;
        if let Some(ptx) = &ptx {
            gpu = gpu.with_ptx(ptx)?;
        }
        println!("rank {}: device {o}: {} ({} SMs)", gpus.len(), gpu.info().name, gpu.info().multiprocessors);
        gpus.push(Arc::new(gpu));
    }
    Group::from_gpus(gpus)
}

/// `data` split evenly over the group's ranks, on their devices, and outputs as long.
struct Shards<T: Element> {
    inputs: Vec<CudaSlice<T>>,
    outputs: Vec<CudaSlice<T>>,
}

fn upload<T: Element>(group: &Group, data: &[T]) -> Result<Shards<T>> {
    let p = group.members().len();
    let (mut inputs, mut outputs) = (Vec::with_capacity(p), Vec::with_capacity(p));
    for (r, m) in group.members().iter().enumerate() {
        let part = &data[data.len() * r / p..data.len() * (r + 1) / p];
        inputs.push(m.gpu.upload(&m.stream, "a shard", part)?);
        outputs.push(m.gpu.alloc_zeros::<T>(&m.stream, "a shard's scan", part.len())?);
    }
    Ok(Shards { inputs, outputs })
}

/// Median and minimum over `iters` runs (after one warm-up) of the slowest rank's time.
fn time<T: Element>(
    group: &mut Group,
    shards: &mut Shards<T>,
    opts: &ScanOptions<T>,
    iters: u32,
) -> Result<(f64, f64)> {
    group.scan(&shards.inputs, &mut shards.outputs, opts)?;
    group.synchronize()?;
    let mut times = Vec::with_capacity(iters as usize);
    for _ in 0..iters.max(1) {
        let events = group
            .members()
            .iter()
            .map(|m| {
                let ctx = m.stream.context();
                // Timing events (cudarc's default events record no time).
                let timed = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
                let (start, end) = (timed()?, timed()?);
                start.record(&m.stream)?;
                Ok((start, end))
            })
            .collect::<Result<Vec<_>>>()?;
        group.scan(&shards.inputs, &mut shards.outputs, opts)?;
        let mut slowest = 0f32;
        for (m, (start, end)) in group.members().iter().zip(&events) {
            end.record(&m.stream)?;
            end.synchronize()?;
            slowest = slowest.max(start.elapsed_ms(end)?);
        }
        times.push(slowest as f64);
    }
    Ok(median(&mut times))
}

/// The shards' results, concatenated, against the CPU scan of `data`.
fn check<T: Element>(group: &Group, shards: &Shards<T>, data: &[T], opts: &ScanOptions<T>) -> Result<Check> {
    let mut got = Vec::with_capacity(data.len());
    for (m, out) in group.members().iter().zip(&shards.outputs) {
        got.extend(m.gpu.download(&m.stream, out)?);
    }
    let v = verify::verify(opts.op, Algorithm::SinglePass, data, opts.exclusive, opts.init, &got)?;
    let wrong =
        v.first.map(|f| format!("{} wrong, first at {}: expected {}, got {}", v.wrong, f.index, f.expected, f.got));
    Ok(Check::new(format!("{} elements across {} ranks", data.len(), group.world()), wrong))
}

/// `scan N --gpus` (or `--ranks`): one checked, timed scan of `data` across the ranks.
pub fn scan<T: Element>(global: &Global, ranks: &Ranks, data: &[T], opts: &ScanOptions<T>, iters: u32) -> Result<bool> {
    let mut group = group(global, ranks)?;
    let p = group.world();
    println!(
        "scan across {p} rank{}: n={} {} {} {}, shards of about {} elements",
        if p == 1 { "" } else { "s" },
        data.len(),
        T::TYPE.name(),
        opts.op.name(),
        if opts.exclusive { "exclusive" } else { "inclusive" },
        data.len() / p
    );
    let mut shards = upload(&group, data)?;
    let (ms, min_ms) = time(&mut group, &mut shards, opts, iters)?;
    let bytes = 2 * std::mem::size_of_val(data) as u64;
    println!(
        "time: {ms:.4} ms (median of {iters}, min {min_ms:.4}, the slowest rank's), {:.1} GB/s in all",
        gbps(bytes, ms)
    );
    Ok(verdict(&check(&group, &shards, data, opts)?))
}

/// `bench --gpus`: weak scaling (`per_gpu` `u32` elements on each of p GPUs) and strong scaling
/// (`total` elements split over p), p = 1 up to the group's size, every run checked.
pub fn scaling(global: &Global, gpus: &Gpus, per_gpu: u64, total: u64, iters: u32) -> Result<bool> {
    let ordinals = gpus.ordinals()?;
    let opts = ScanOptions::<u32>::new(Op::Add);
    let mut passed = true;
    let mut rows = Vec::new();
    for p in 1..=ordinals.len() {
        let mut group = open(global, &ordinals[..p])?;
        for (kind, n) in [("weak", per_gpu * p as u64), ("strong", total)] {
            let n = crate::args::host_len(n, "the scaling size")?;
            let data = input::generate::<u32>(Op::Add, 42, n);
            let mut shards = upload(&group, &data)?;
            let (ms, _) = time(&mut group, &mut shards, &opts, iters)?;
            let check = check(&group, &shards, &data, &opts)?;
            passed &= check.wrong.is_none();
            rows.push((kind, p, n, ms, check.wrong.is_none()));
        }
    }
    for kind in ["weak", "strong"] {
        let base = rows.iter().find(|r| r.0 == kind && r.1 == 1).map_or(f64::NAN, |r| r.3);
        println!(
            "\n{kind} scaling ({}):",
            if kind == "weak" { format!("{per_gpu} u32 per GPU") } else { format!("{total} u32 in all") }
        );
        println!(
            "{:>4} {:>12} {:>10} {:>12} {:>10}  check",
            "GPUs",
            "n",
            "ms",
            "GB/s",
            if kind == "weak" { "time/p=1" } else { "speed-up" }
        );
        for &(_, p, n, ms, ok) in rows.iter().filter(|r| r.0 == kind) {
            let ratio = if kind == "weak" { ms / base } else { base / ms };
            let gb = gbps(8 * n as u64, ms);
            println!("{p:>4} {n:>12} {ms:>10.4} {gb:>12.1} {ratio:>10.3}  {}", if ok { "PASS" } else { "FAIL" });
        }
    }
    Ok(passed)
}
