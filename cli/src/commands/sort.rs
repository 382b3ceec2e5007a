//! `sort` and `histogram`: the radix sort of random keys (or CUB's benchmark keys), and the
//! histogram with its counting-sort permutation, both built on stable partitions by digit.

use crate::args::{host_len, positive, types_of, Files, Global, HistogramType, Runs, SortType};
use crate::experiment::{self, first_difference, Check, Experiment, Needs};
use crate::io;
use crate::memory::{self, bytes_of, total};
use crate::sweep::Baseline;
use clap::{Args, ValueEnum};
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::apps as reference;
use gpu_scan::{input, with_elem_type, Element, Error, Gpu, HistogramOptions, Result, TempStorage};
use scan_abi::partition::Digit;
use std::path::PathBuf;

/// Which keys to sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Keys {
    /// Uniform random bits.
    Random,
    /// The CUB baseline's keys, (i * 2654435761) mod 7.
    Cub,
}

#[derive(Args)]
pub struct SortArgs {
    /// Number of keys (fewer than 2^32 - 1: 2^28, 1e6, ...).
    #[arg(value_parser = positive)]
    n: u64,
    /// Key type.
    #[arg(long = "type", value_name = "TYPE", default_value = "u32")]
    ty: SortType,
    /// Carry u32 values (the keys' input positions) along.
    #[arg(long)]
    values: bool,
    /// Random bits per key, the rest zero (default: all): fewer make many equal digits.
    #[arg(long, value_parser = crate::args::count_in::<u32>(1, 64))]
    key_bits: Option<u32>,
    /// Which keys to sort.
    #[arg(long, default_value = "random")]
    keys: Keys,
    #[command(flatten)]
    runs: Runs,
    /// CSV of the CUB baseline from the same run: adds CUB's radix sort of the same keys.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

pub fn sort(args: &SortArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let ty = args.ty.0;
    let width = 8 * ty.size() as u32;
    if let Some(b) = args.key_bits.filter(|&b| b > width) {
        return Err(Error::invalid(format!("--key-bits {b}: {} keys have {width} bits", ty.name())));
    }
    if args.keys == Keys::Cub && args.key_bits.is_some() {
        return Err(Error::invalid("--key-bits sets random keys' bits; --keys cub has no random bits"));
    }
    let plan = gpu_scan::plan::sort::plan(&tuning, ty, args.n, args.values, false)?;
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let what = format!("a sort of {} {} keys", args.n, ty.name());
    let per = ty.size() as u64 + if args.values { 4 } else { 0 };
    let pairs = bytes_of(args.n, per, &what)?;
    let counts = plan.passes as u64 * gpu_scan::plan::sort::DIGITS * 4;
    // Keys and values as made, as read back, and the CPU's sort with its order.
    let needs = Needs {
        host: total(&[pairs, pairs, pairs, bytes_of(args.n, 8, &what)?], &what)?,
        device: total(&[pairs, pairs, pairs, counts, plan.state.bytes()], &what)?,
        what,
    };
    with_elem_type!(ty, T => sort_typed::<T>(args, cub, global, &needs))
}

fn sort_typed<T: Element>(args: &SortArgs, cub: Option<Baseline>, global: &Global, needs: &Needs) -> Result<bool> {
    let n = host_len(args.n, "N")?;
    // CUB's timings are of the same keys: the baseline's random keys are seed 42's, all bits.
    let label = match (args.keys, args.values) {
        (Keys::Cub, false) => Some("radix_sort_keys"),
        (Keys::Random, _) if args.runs.seed != 42 || args.key_bits.is_some() => None,
        (Keys::Random, false) => Some("radix_sort_keys_random"),
        (Keys::Random, true) => Some("radix_sort_pairs_random"),
        (Keys::Cub, true) => None,
    };
    let cub_ms = label.and_then(|l| cub.as_ref().and_then(|c| c.get(l, T::TYPE.name(), args.n)));
    let make = || -> Result<Sort<T>> {
        let keys = match args.keys {
            Keys::Cub => memory::cub_pattern::<T>(n)?,
            Keys::Random => {
                let mask = args.key_bits.map_or(u64::MAX, |b| u64::MAX >> (64 - b));
                memory::from_fn(n, "the keys", |i| T::from_bits(input::bits(args.runs.seed, i as u64) & mask))?
            }
        };
        let values = if args.values { Some(memory::from_fn(n, "the values", |i| i as u32)?) } else { None };
        Ok(Sort { keys, values, cub_ms, buffers: None, temp: TempStorage::new(), what: describe(args) })
    };
    Ok(experiment::run(global, args.runs.iters, needs, make)?.passed)
}

fn describe(args: &SortArgs) -> String {
    let keys = match args.keys {
        Keys::Cub => ", CUB's benchmark keys (i * 2654435761) mod 7".to_string(),
        Keys::Random => args.key_bits.map_or(String::new(), |b| format!(", {b} random bits each")),
    };
    format!("{keys}{}", if args.values { " with u32 values" } else { "" })
}

struct Sort<T> {
    keys: Vec<T>,
    values: Option<Vec<u32>>,
    cub_ms: Option<f64>,
    buffers: Option<Device<T>>,
    temp: TempStorage,
    what: String,
}

/// Device keys and values as given, and the ones each run sorts.
struct Device<T> {
    keys: CudaSlice<T>,
    values: Option<CudaSlice<u32>>,
    work: CudaSlice<T>,
    work_values: Option<CudaSlice<u32>>,
}

impl<T: Element> Experiment for Sort<T> {
    fn title(&self) -> String {
        format!("sort: n={} {} keys{}", self.keys.len(), T::TYPE.name(), self.what)
    }

    fn traffic(&self) -> (u64, u64) {
        let per = T::TYPE.size() as u64 + if self.values.is_some() { 4 } else { 0 };
        let n = self.keys.len() as u64;
        (2 * n * per, n * T::TYPE.size() as u64)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let keys = gpu.upload(&stream, "keys", &self.keys)?;
        let values = self.values.as_deref().map(|v| gpu.upload(&stream, "values", v)).transpose()?;
        let work = gpu.upload(&stream, "keys to sort", &self.keys)?;
        let work_values = self.values.as_deref().map(|v| gpu.upload(&stream, "values to sort", v)).transpose()?;
        self.buffers = Some(Device { keys, values, work, work_values });
        Ok(())
    }

    fn reset(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream();
        let d = self.buffers.as_mut().expect("prepared");
        stream.memcpy_dtod(&d.keys, &mut d.work)?;
        if let (Some(src), Some(dst)) = (d.values.as_ref(), d.work_values.as_mut()) {
            stream.memcpy_dtod(src, dst)?;
        }
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let d = self.buffers.as_mut().expect("prepared");
        let opts = gpu_scan::SortOptions::new();
        match d.work_values.as_mut() {
            Some(v) => gpu.sort_pairs(gpu.stream(), &mut d.work, v, &opts, &mut self.temp),
            None => gpu.sort(gpu.stream(), &mut d.work, &opts, &mut self.temp),
        }
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let stream = gpu.stream();
        let d = self.buffers.as_ref().expect("prepared");
        let got = gpu.download(stream, &d.work)?;
        let got_values = d.work_values.as_ref().map(|v| gpu.download(stream, v)).transpose()?;
        let (want, want_values) = reference::sort(&self.keys, self.values.as_deref());
        let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        let mut wrong = first_difference(&bits(&got), &bits(&want));
        if wrong.is_none() {
            wrong = match (got_values, want_values) {
                (Some(g), Some(w)) => first_difference(&g, &w).map(|d| format!("values: {d}")),
                _ => None,
            };
        }
        Ok(Check::new(format!("{} keys sorted, stable", self.keys.len()), wrong))
    }

    fn cub_ms(&self) -> Option<f64> {
        self.cub_ms
    }
}

#[derive(Args)]
pub struct HistogramArgs {
    /// Number of values (fewer than 2^32 - 1: 2^28, 1e6, ...; optional with --input).
    #[arg(value_parser = positive)]
    n: Option<u64>,
    /// Value type (default f32; a .npy input brings its own); generated values are uniform
    /// floats over the range, rounded down for integer types.
    #[arg(long = "type", value_name = "TYPE")]
    ty: Option<HistogramType>,
    /// Number of bins (1 to 1024).
    #[arg(long, default_value_t = 256, value_parser = crate::args::count_in::<u32>(0, u32::MAX as u64))]
    bins: u32,
    /// Lower end of the binned range.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    lo: f64,
    /// Upper end (exclusive). Values are drawn from [lo - 5%, hi + 5%), so some fall outside.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    hi: f64,
    #[command(flatten)]
    files: Files,
    /// Write where each bin's values begin in the permutation (u64, one per bin) to this file.
    #[arg(long, value_name = "FILE")]
    starts: Option<PathBuf>,
    /// Write the stable counting-sort permutation (u32 input positions grouped by bin, values
    /// outside the range last) to this file.
    #[arg(long, value_name = "FILE")]
    permutation: Option<PathBuf>,
    #[command(flatten)]
    runs: Runs,
}

pub fn histogram(args: &HistogramArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let allowed = types_of(scan_abi::Family::PartitionScatter);
    let ty = args.files.elem_type(args.ty.map(|t| t.0), gpu_scan::ElemType::F32, &allowed, "histogram")?;
    let n = args.files.len(ty, args.n)?;
    reference::check_bins(args.bins, args.lo, args.hi)?;
    gpu_scan::plan::sort::check_len(n)?;
    args.files
        .check_outputs(&[("--starts", args.starts.as_deref()), ("--permutation", args.permutation.as_deref())])?;
    let plan = gpu_scan::plan::partition::plan(&tuning, ty, n, &Digit::bins(args.bins, args.lo, args.hi))?;
    let what = format!("a histogram of {n} {}", ty.name());
    let bytes = bytes_of(n, ty.size() as u64, &what)?;
    let permutation = bytes_of(n, 4, &what)?;
    let (state, scratch) = plan.scan.temp_bytes();
    // The values, the permutation read back and the CPU's.
    let needs = Needs {
        host: total(&[bytes, permutation, permutation], &what)?,
        device: total(&[bytes, bytes, permutation, bytes_of(plan.entries, 8, &what)?, state, scratch], &what)?,
        what,
    };
    with_elem_type!(ty, T => histogram_typed::<T>(args, global, n, &needs))
}

fn histogram_typed<T: io::FileElement>(args: &HistogramArgs, global: &Global, n: u64, needs: &Needs) -> Result<bool> {
    let n = host_len(n, "N")?;
    let (lo, hi) = (args.lo, args.hi);
    let pad = 0.05 * (hi - lo);
    // A file is read before the GPU opens; generated values are made after.
    let given = match &args.files.input {
        Some(path) => {
            memory::check(&needs.what, needs.host)?;
            Some(io::read::<T>(path)?)
        }
        None => None,
    };
    let make = || -> Result<Histogram<T>> {
        let generate = || {
            memory::from_fn(n, "the values", |i| {
                let x = memory::uniform_value(args.runs.seed, i as u64, lo - pad, hi + pad);
                match T::TYPE.size() {
                    _ if !T::TYPE.is_float() => T::from_bits(x.floor() as i64 as u64),
                    4 => T::from_bits((x as f32).to_bits() as u64),
                    _ => T::from_bits(x.to_bits()),
                }
            })
        };
        let data = match given {
            Some(data) => data,
            None => generate()?,
        };
        let opts = HistogramOptions::new(args.bins, lo, hi);
        Ok(Histogram { data, opts, buffers: None, temp: TempStorage::new(), result: None })
    };
    let ran = experiment::run(global, args.runs.iters, needs, make)?;
    let force = args.files.force;
    let mut outputs: Vec<io::Output> = Vec::new();
    if let Some(h) = &ran.exp.result {
        if let Some(p) = &args.files.output {
            outputs.push((p, Box::new(move |p: &std::path::Path| io::write(p, &h.counts, force))));
        }
        if let Some(p) = &args.starts {
            outputs.push((p, Box::new(move |p: &std::path::Path| io::write(p, &h.starts, force))));
        }
        if let Some(p) = &args.permutation {
            outputs.push((p, Box::new(move |p: &std::path::Path| io::write(p, &h.permutation, force))));
        }
    }
    io::write_outputs(ran.passed, outputs)?;
    Ok(ran.passed)
}

struct Histogram<T> {
    data: Vec<T>,
    opts: HistogramOptions,
    /// Input, bin starts, permutation.
    buffers: Option<(CudaSlice<T>, CudaSlice<u32>, CudaSlice<u32>)>,
    temp: TempStorage,
    /// The histogram the last check read back.
    result: Option<gpu_scan::apps::histogram::Histogram>,
}

impl<T: Element> Experiment for Histogram<T> {
    fn title(&self) -> String {
        let o = &self.opts;
        format!("histogram: n={} {} in {} bins over [{}, {})", self.data.len(), T::TYPE.name(), o.bins, o.lo, o.hi)
    }

    fn traffic(&self) -> (u64, u64) {
        let bytes = (self.data.len() * T::TYPE.size()) as u64;
        (2 * bytes + 4 * self.data.len() as u64, bytes)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let d = gpu.upload(&stream, "histogram input", &self.data)?;
        let starts = gpu.alloc_zeros::<u32>(&stream, "histogram bin starts", self.opts.bins as usize + 1)?;
        let permutation = gpu.alloc_zeros::<u32>(&stream, "histogram permutation", self.data.len())?;
        self.buffers = Some((d, starts, permutation));
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let (d, starts, permutation) = self.buffers.as_mut().expect("prepared");
        gpu.histogram(gpu.stream(), d, starts, permutation, &self.opts, &mut self.temp)
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, starts, permutation) = self.buffers.as_ref().expect("prepared");
        let h = gpu_scan::apps::histogram::Histogram::from_starts(
            &gpu.download(gpu.stream(), starts)?,
            gpu.download(gpu.stream(), permutation)?,
        );
        let o = &self.opts;
        let want = reference::histogram(&self.data, o.bins, o.lo, o.hi)?;
        let wrong = if h.counts != want.counts || h.outside != want.outside {
            Some("counts differ".to_string())
        } else if h.starts != want.starts {
            Some("bin starts differ".to_string())
        } else {
            first_difference(&h.permutation, &want.permutation).map(|d| format!("permutation: {d}"))
        };
        let show = |v: &[u64]| {
            let shown: Vec<String> = v.iter().take(8).map(u64::to_string).collect();
            format!("[{}{}]", shown.join(", "), if v.len() > 8 { ", ..." } else { "" })
        };
        let mut check = Check::new("counts, starts and the stable permutation", wrong);
        check.notes.push(format!("counts: {}, outside the range: {}", show(&h.counts), h.outside));
        check.notes.push(format!("starts: {}", show(&h.starts)));
        self.result = Some(h);
        Ok(check)
    }
}
