//! The scan across GPUs: `scan N --gpus all|0,1` (one checked, timed scan of the array split
//! evenly over the GPUs, through the shared experiment) and `bench --gpus` (weak and strong
//! scaling). A group over NCCL; times are medians of the slowest rank's CUDA-event time, after a
//! warm-up.

use crate::args::Global;
use crate::experiment::{self, gbps, share, Check, Experiment, Needs, Ranks, Target};
use crate::out::outln;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::multi::Group;
use gpu_scan::reference::verify;
use gpu_scan::{Algorithm, Element, Error, Gpu, Op, Result, ScanOptions, Tuning};
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
pub enum Placement {
    /// One per GPU, over NCCL.
    Gpus(Gpus),
    /// This many on the one GPU `--device` names, sharing totals by device copies.
    Simulated(usize),
}

impl Placement {
    /// The number of ranks, where known before the driver is asked (`--gpus all` is not).
    pub fn world(&self) -> Option<usize> {
        match self {
            Placement::Gpus(Gpus::All) => None,
            Placement::Gpus(Gpus::List(l)) => Some(l.len()),
            Placement::Simulated(p) => Some(*p),
        }
    }
}

/// The group `placement` describes, with the tuning `global` asks for; prints its devices.
fn group(global: &Global, placement: &Placement) -> Result<Group> {
    match placement {
        Placement::Gpus(gpus) => open(global, &gpus.ordinals()?),
        Placement::Simulated(p) => {
            let gpu = crate::experiment::open(global)?;
            outln!("{p} simulated ranks on device {}", global.device);
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
            // SAFETY: as in `experiment::open`: `--ptx` names a module built from these sources.
            gpu = unsafe { gpu.with_ptx(ptx) }?;
        }
        outln!("rank {}: device {o}: {} ({} SMs)", gpus.len(), gpu.info().name, gpu.info().multiprocessors);
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

/// The shards' results, concatenated, against the CPU scan of `data`.
fn check<T: Element>(group: &Group, shards: &Shards<T>, data: &[T], opts: &ScanOptions<T>) -> Result<Check> {
    let mut got = crate::memory::with_capacity(data.len(), "the result read back")?;
    for (m, out) in group.members().iter().zip(&shards.outputs) {
        got.extend(m.gpu.download(&m.stream, out)?);
    }
    let v = verify::verify(opts.op, Algorithm::SinglePass, data, opts.exclusive, opts.init, &got)?;
    let wrong =
        v.first.map(|f| format!("{} wrong, first at {}: expected {}, got {}", v.wrong, f.index, f.expected, f.got));
    Ok(Check::new(format!("{} elements across {} ranks", data.len(), group.world()), wrong))
}

/// Plans the scan of `n` elements with `opts` across `world` ranks (1 where not yet known)
/// with `tuning`: an error for what the ranks cannot run, else the temporary bytes of every
/// rank together.
pub fn plan<T: Element>(tuning: &Tuning, opts: &ScanOptions<T>, n: u64, world: Option<usize>) -> Result<u64> {
    let world = world.unwrap_or(1);
    let mut temp = 0u64;
    for r in 0..world {
        let req = opts.request(share(n, r, world));
        let p = gpu_scan::plan::multi::plan(tuning, &req, world)?;
        let scan = p.scan.map_or(0, |s| s.state.bytes());
        let (state, scratch) = p.carries.temp_bytes();
        temp = crate::memory::total(&[temp, p.reduce_scratch, scan, state, scratch], "the ranks' temporary storage")?;
    }
    Ok(temp)
}

/// `scan N --gpus` (or `--ranks`): one checked, timed scan across the ranks through the shared
/// experiment (the copy yardstick: every rank copying its shard at once), the input made by
/// `make` once the group is open and its memory checked.
pub fn scan<T: Element>(
    global: &Global,
    placement: &Placement,
    iters: u32,
    needs: &Needs,
    opts: ScanOptions<T>,
    make: impl FnOnce() -> Result<Vec<T>>,
) -> Result<bool> {
    crate::memory::check(&needs.what, needs.host)?;
    let group = group(global, placement)?;
    let ranks = Ranks::of(&group);
    let make = || Ok(MultiScan { data: make()?, group, opts, shards: None });
    Ok(experiment::measure(&ranks, global, iters, needs, make)?.passed)
}

/// One scan of `data` across the ranks of `group`.
struct MultiScan<T: Element> {
    group: Group,
    data: Vec<T>,
    opts: ScanOptions<T>,
    shards: Option<Shards<T>>,
}

impl<T: Element> Experiment<Ranks> for MultiScan<T> {
    fn title(&self) -> String {
        let (p, o) = (self.group.world(), &self.opts);
        format!(
            "scan across {p} rank{}: n={} {} {} {}, shards of about {} elements",
            if p == 1 { "" } else { "s" },
            self.data.len(),
            T::TYPE.name(),
            o.op.name(),
            if o.exclusive { "exclusive" } else { "inclusive" },
            self.data.len() / p
        )
    }

    fn traffic(&self) -> (u64, u64) {
        experiment::read_write_once::<T>(self.data.len())
    }

    fn prepare(&mut self, _: &Ranks) -> Result<()> {
        self.shards = Some(upload(&self.group, &self.data)?);
        Ok(())
    }

    fn run(&mut self, _: &Ranks) -> Result<()> {
        let shards = self.shards.as_mut().expect("prepared");
        self.group.scan(&shards.inputs, &mut shards.outputs, &self.opts)
    }

    fn check(&mut self, _: &Ranks) -> Result<Check> {
        self.group.synchronize()?;
        check(&self.group, self.shards.as_ref().expect("prepared"), &self.data, &self.opts)
    }
}

/// `bench --gpus`: weak scaling (`per_gpu` `u32` elements on each of p GPUs) and strong scaling
/// (`total` elements split over p), p = 1 up to the group's size, every run checked. The host
/// memory of the largest run is checked before any GPU is opened.
pub fn scaling(global: &Global, gpus: &Gpus, per_gpu: u64, total: u64, iters: u32) -> Result<bool> {
    let ordinals = gpus.ordinals()?;
    let largest = per_gpu.saturating_mul(ordinals.len() as u64).max(total);
    // The input, the result read back and the CPU reference, u32 each.
    let what = format!("the scaling runs (up to {largest} u32)");
    crate::memory::check(&what, crate::memory::bytes_of(largest, 12, &what)?)?;
    let opts = ScanOptions::<u32>::new(Op::Add);
    let mut passed = true;
    let mut rows = Vec::new();
    for p in 1..=ordinals.len() {
        let mut group = open(global, &ordinals[..p])?;
        let ranks = Ranks::of(&group);
        for (kind, n) in [("weak", per_gpu * p as u64), ("strong", total)] {
            let n = crate::args::host_len(n, "the scaling size")?;
            ranks.check_memory(&format!("{kind} scaling on {p} GPUs"), 8 * n as u64)?;
            let data = crate::memory::generate::<u32>(Op::Add, 42, n)?;
            let mut shards = upload(&group, &data)?;
            let run = || group.scan(&shards.inputs, &mut shards.outputs, &opts);
            let (ms, _) = experiment::time(&ranks, iters, || Ok(()), run)?;
            group.synchronize()?;
            let check = check(&group, &shards, &data, &opts)?;
            passed &= check.wrong.is_none();
            rows.push((kind, p, n, ms, check.wrong.is_none()));
        }
    }
    for kind in ["weak", "strong"] {
        let base = rows.iter().find(|r| r.0 == kind && r.1 == 1).map_or(f64::NAN, |r| r.3);
        outln!(
            "\n{kind} scaling ({}):",
            if kind == "weak" { format!("{per_gpu} u32 per GPU") } else { format!("{total} u32 in all") }
        );
        outln!(
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
            outln!("{p:>4} {n:>12} {ms:>10.4} {gb:>12.1} {ratio:>10.3}  {}", if ok { "PASS" } else { "FAIL" });
        }
    }
    Ok(passed)
}
