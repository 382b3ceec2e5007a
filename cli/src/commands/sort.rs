//! `sort` and `histogram`: the radix sort of a file's keys, random keys or CUB's benchmark keys
//! (with values, with the stable argsort, ascending or descending), and the histogram with its
//! counting-sort permutation, both built on stable partitions by digit.

use crate::args::{host_len, positive, types_of, Files, Global, HistogramType, IndexType, Runs, SortType};
use crate::experiment::{self, first_difference, first_difference_bits, Check, Experiment, Needs};
use crate::io;
use crate::memory::{self, bytes_of, total};
use crate::sweep::Baseline;
use clap::{Args, ValueEnum};
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::apps as reference;
use gpu_scan::{
    input, with_elem_type, ElemType, Element, Error, Gpu, HistogramOptions, Result, SortOptions, TempStorage,
};
use rayon::prelude::*;
use scan_abi::partition::Digit;
use std::path::{Path, PathBuf};

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
    /// Number of keys (fewer than 2^32 - 1: 2^28, 1e6, ...; optional with --input).
    #[arg(value_parser = positive)]
    n: Option<u64>,
    /// Key type (default u32; a .npy input brings its own).
    #[arg(long = "type", value_name = "TYPE")]
    ty: Option<SortType>,
    /// Largest key first; equal keys still keep their input order, and NaNs stay last.
    #[arg(long)]
    descending: bool,
    /// Carry u32 values along: a FILE as long as the keys (with --input), or without one the
    /// keys' input positions.
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    values: Option<Option<PathBuf>>,
    /// Write the values in the keys' sorted order to this file (with --values).
    #[arg(long, value_name = "FILE", requires = "values")]
    values_output: Option<PathBuf>,
    /// Write the stable argsort to this file: the input position of every sorted key.
    #[arg(long, value_name = "FILE")]
    indices: Option<PathBuf>,
    /// The type of the --indices positions (default u32: a sort holds fewer than 2^32 keys).
    #[arg(long, value_name = "TYPE", requires = "indices")]
    index_type: Option<IndexType>,
    /// Random bits per key, the rest zero (default: all): fewer make many equal digits.
    #[arg(long, value_parser = crate::args::count_in::<u32>(1, 64), conflicts_with = "input")]
    key_bits: Option<u32>,
    /// Which keys to generate (without --input).
    #[arg(long, default_value = "random", conflicts_with = "input")]
    keys: Keys,
    /// --input: the keys (u32 i32 u64 i64 f32 f64); --output: the sorted keys.
    #[command(flatten)]
    files: Files,
    #[command(flatten)]
    runs: Runs,
    /// CSV of the CUB baseline from the same run: adds CUB's radix sort of the same keys.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

/// The values file, when `--values` names one.
fn values_file(args: &SortArgs) -> Option<&Path> {
    args.values.as_ref().and_then(|v| v.as_deref())
}

pub fn sort(args: &SortArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let ty =
        args.files.elem_type(args.ty.map(|t| t.0), ElemType::U32, &types_of(scan_abi::Family::SortPass), "sort")?;
    let n = args.files.len(ty, args.n)?;
    let width = 8 * ty.size() as u32;
    if let Some(b) = args.key_bits.filter(|&b| b > width) {
        return Err(Error::invalid(format!("--key-bits {b}: {} keys have {width} bits", ty.name())));
    }
    if args.keys == Keys::Cub && args.key_bits.is_some() {
        return Err(Error::invalid("--key-bits sets random keys' bits; --keys cub has no random bits"));
    }
    if let Some(path) = values_file(args) {
        if args.files.input.is_none() {
            return Err(Error::invalid("--values FILE goes with --input, the keys it belongs to"));
        }
        io::side_type(path, "--values", &[ElemType::U32])?;
        io::check_same_len(path, "--values", ElemType::U32, n)?;
    }
    args.files
        .out
        .check(&[("--values-output", args.values_output.as_deref()), ("--indices", args.indices.as_deref())])?;
    let values = args.values.is_some();
    let plan = gpu_scan::plan::sort::plan(&tuning, ty, n, values || args.indices.is_some(), args.descending)?;
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let what = format!("a sort of {n} {} keys", ty.name());
    let keys = bytes_of(n, ty.size() as u64, &what)?;
    let u32s = bytes_of(n, 4, &what)?;
    let (v, p) = (if values { u32s } else { 0 }, if args.indices.is_some() { u32s } else { 0 });
    // With both values and positions, the argsort sorts a second copy of the keys.
    let second = if values && p > 0 { keys } else { 0 };
    let counts = plan.passes as u64 * gpu_scan::plan::sort::DIGITS * 4;
    // Keys, values and positions as given, read back and the CPU's, with the CPU's order.
    let needs = Needs {
        host: total(&[3 * keys, 3 * v, 3 * p, u32s], &what)?,
        device: total(&[3 * keys, second, 2 * v, p, u32s, counts, plan.state.bytes()], &what)?,
        what,
    };
    with_elem_type!(ty, T => sort_typed::<T>(args, n, cub, global, &needs))
}

fn sort_typed<T: io::FileElement>(
    args: &SortArgs,
    count: u64,
    cub: Option<Baseline>,
    global: &Global,
    needs: &Needs,
) -> Result<bool> {
    let n = host_len(count, "N")?;
    let generated = args.files.input.is_none();
    // CUB's timings are of the same keys: the baseline's random keys are seed 42's, all bits.
    let label = match (args.keys, args.values.is_some()) {
        _ if !generated || args.descending || args.indices.is_some() || values_file(args).is_some() => None,
        (Keys::Cub, false) => Some("radix_sort_keys"),
        (Keys::Random, _) if args.runs.seed != 42 || args.key_bits.is_some() => None,
        (Keys::Random, false) => Some("radix_sort_keys_random"),
        (Keys::Random, true) => Some("radix_sort_pairs_random"),
        (Keys::Cub, true) => None,
    };
    let cub_ms = label.and_then(|l| cub.as_ref().and_then(|c| c.get(l, T::TYPE.name(), count)));
    // Files are read before the GPU opens; generated keys are made after.
    let given = match &args.files.input {
        Some(path) => {
            memory::check(&needs.what, needs.host)?;
            Some((io::read::<T>(path)?, values_file(args).map(io::read::<u32>).transpose()?))
        }
        None => None,
    };
    let make = || -> Result<Sort<T>> {
        let (keys, values) = match given {
            Some(given) => given,
            None => {
                let keys = match args.keys {
                    Keys::Cub => memory::cub_pattern::<T>(n)?,
                    Keys::Random => {
                        let mask = args.key_bits.map_or(u64::MAX, |b| u64::MAX >> (64 - b));
                        memory::from_fn(n, "the keys", |i| T::from_bits(input::bits(args.runs.seed, i as u64) & mask))?
                    }
                };
                (keys, None)
            }
        };
        let values = match (values, args.values.is_some()) {
            (None, true) => Some(memory::from_fn(n, "the values", |i| i as u32)?),
            (values, _) => values,
        };
        Ok(Sort {
            keys,
            values,
            positions: args.indices.is_some(),
            opts: SortOptions::new().descending(args.descending),
            cub_ms,
            buffers: None,
            temp: TempStorage::new(),
            what: describe(args),
            got: Sorted::default(),
        })
    };
    let ran = experiment::run(global, args.runs.iters, needs, make)?;
    let got = &ran.exp.got;
    let force = args.files.out.force;
    let index_type = args.index_type.map_or(ElemType::U32, |t| t.0);
    let mut outputs: Vec<io::Output> = Vec::new();
    if let Some(p) = &args.files.out.output {
        outputs.push((p, Box::new(move |p: &Path| io::write(p, &got.keys, force))));
    }
    if let Some(p) = &args.values_output {
        outputs.push((p, Box::new(move |p: &Path| io::write(p, &got.values, force))));
    }
    if let Some(p) = &args.indices {
        outputs.push((p, Box::new(move |p: &Path| write_positions(p, &got.positions, index_type, force))));
    }
    io::write_outputs(ran.passed, outputs)?;
    Ok(ran.passed)
}

/// Writes `positions` to `path` as `ty` (u32, or u64 for readers that index with 64 bits).
fn write_positions(path: &Path, positions: &[u32], ty: ElemType, force: bool) -> Result<()> {
    match ty {
        ElemType::U32 => io::write(path, positions, force),
        _ => {
            let wide = memory::from_fn(positions.len(), "the positions", |i| positions[i] as u64)?;
            io::write(path, &wide, force)
        }
    }
}

fn describe(args: &SortArgs) -> String {
    let keys = match (&args.files.input, args.keys) {
        (Some(path), _) => format!(" from {}", path.display()),
        (None, Keys::Cub) => ", CUB's benchmark keys (i * 2654435761) mod 7".to_string(),
        (None, Keys::Random) => args.key_bits.map_or(String::new(), |b| format!(", {b} random bits each")),
    };
    let order = if args.descending { ", descending" } else { "" };
    let values = if args.values.is_some() { " with u32 values" } else { "" };
    let positions = if args.indices.is_some() { " and their positions" } else { "" };
    format!("{keys}{order}{values}{positions}")
}

/// The stable CPU argsort of `keys` in the order the sort promises (`reference::sort_order`:
/// `-0.0` before `+0.0` and NaNs last, on the values rather than the kernels' key mapping).
pub fn cpu_order<T: Element>(keys: &[T], descending: bool) -> Result<Vec<u32>> {
    let mut order = memory::from_fn(keys.len(), "the CPU's order", |i| i as u32)?;
    order.par_sort_by(|&i, &j| reference::sort_order(keys[i as usize], keys[j as usize], descending));
    Ok(order)
}

struct Sort<T> {
    keys: Vec<T>,
    values: Option<Vec<u32>>,
    /// Whether the stable argsort runs too.
    positions: bool,
    opts: SortOptions,
    cub_ms: Option<f64>,
    buffers: Option<Device<T>>,
    temp: TempStorage,
    what: String,
    got: Sorted<T>,
}

/// What the last check read back.
#[derive(Default)]
struct Sorted<T> {
    keys: Vec<T>,
    values: Vec<u32>,
    positions: Vec<u32>,
}

/// Device keys and values as given, the ones each run sorts, and the argsort's keys and
/// positions.
struct Device<T> {
    keys: CudaSlice<T>,
    values: Option<CudaSlice<u32>>,
    work: CudaSlice<T>,
    work_values: Option<CudaSlice<u32>>,
    /// Keys for the argsort when `work` carries values.
    argsort_keys: Option<CudaSlice<T>>,
    positions: Option<CudaSlice<u32>>,
}

impl<T: Element> Experiment for Sort<T> {
    fn title(&self) -> String {
        format!("sort: n={} {} keys{}", self.keys.len(), T::TYPE.name(), self.what)
    }

    fn traffic(&self) -> (u64, u64) {
        let carried = if self.values.is_some() { 4 } else { 0 } + if self.positions { 4 } else { 0 };
        let n = self.keys.len() as u64;
        (2 * n * (T::TYPE.size() as u64 + carried), n * T::TYPE.size() as u64)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let n = self.keys.len();
        let keys = gpu.upload(&stream, "keys", &self.keys)?;
        let values = self.values.as_deref().map(|v| gpu.upload(&stream, "values", v)).transpose()?;
        let work = gpu.upload(&stream, "keys to sort", &self.keys)?;
        let work_values = self.values.as_deref().map(|v| gpu.upload(&stream, "values to sort", v)).transpose()?;
        let argsort_keys = match self.positions && values.is_some() {
            true => Some(gpu.upload(&stream, "keys to argsort", &self.keys)?),
            false => None,
        };
        let positions = match self.positions {
            true => Some(gpu.alloc_zeros::<u32>(&stream, "positions", n)?),
            false => None,
        };
        self.buffers = Some(Device { keys, values, work, work_values, argsort_keys, positions });
        Ok(())
    }

    fn reset(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream();
        let d = self.buffers.as_mut().expect("prepared");
        stream.memcpy_dtod(&d.keys, &mut d.work)?;
        if let (Some(src), Some(dst)) = (d.values.as_ref(), d.work_values.as_mut()) {
            stream.memcpy_dtod(src, dst)?;
        }
        if let Some(k) = d.argsort_keys.as_mut() {
            stream.memcpy_dtod(&d.keys, k)?;
        }
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let d = self.buffers.as_mut().expect("prepared");
        let (stream, opts, temp) = (gpu.stream(), &self.opts, &mut self.temp);
        match d.work_values.as_mut() {
            Some(v) => gpu.sort_pairs(stream, &mut d.work, v, opts, temp)?,
            None if d.positions.is_none() => gpu.sort(stream, &mut d.work, opts, temp)?,
            None => {}
        }
        if let Some(p) = d.positions.as_mut() {
            gpu.argsort(stream, d.argsort_keys.as_mut().unwrap_or(&mut d.work), p, opts, temp)?;
        }
        Ok(())
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let stream = gpu.stream();
        let d = self.buffers.as_ref().expect("prepared");
        let keys = gpu.download(stream, &d.work)?;
        let values = d.work_values.as_ref().map(|v| gpu.download(stream, v)).transpose()?.unwrap_or_default();
        let positions = d.positions.as_ref().map(|p| gpu.download(stream, p)).transpose()?.unwrap_or_default();
        let order = cpu_order(&self.keys, self.opts.descending)?;
        let want_keys: Vec<T> = order.iter().map(|&i| self.keys[i as usize]).collect();
        let mut wrong = first_difference_bits(&keys, &want_keys);
        if let (None, Some(v)) = (&wrong, &self.values) {
            let want: Vec<u32> = order.iter().map(|&i| v[i as usize]).collect();
            wrong = first_difference(&values, &want).map(|d| format!("values: {d}"));
        }
        if wrong.is_none() && self.positions {
            wrong = first_difference(&positions, &order).map(|d| format!("positions: {d}"));
        }
        if let (None, Some(k)) = (&wrong, &d.argsort_keys) {
            let sorted = gpu.download(stream, k)?;
            wrong = first_difference_bits(&sorted, &want_keys).map(|d| format!("the argsort's keys: {d}"));
        }
        self.got = Sorted { keys, values, positions };
        let order = if self.opts.descending { "descending" } else { "ascending" };
        Ok(Check::new(format!("{} keys sorted {order}, stable", self.keys.len()), wrong))
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
    /// Group the values by bin too (the bin starts and the stable permutation), as --starts and
    /// --permutation do; otherwise only the counts are made, by one kernel.
    #[arg(long)]
    group: bool,
    #[command(flatten)]
    runs: Runs,
}

impl HistogramArgs {
    /// Whether the run groups the values by bin, or only counts them.
    fn grouped(&self) -> bool {
        self.group || self.starts.is_some() || self.permutation.is_some()
    }
}

pub fn histogram(args: &HistogramArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let allowed = types_of(scan_abi::Family::PartitionScatter);
    let ty = args.files.elem_type(args.ty.map(|t| t.0), gpu_scan::ElemType::F32, &allowed, "histogram")?;
    let n = args.files.len(ty, args.n)?;
    reference::check_bins(args.bins, args.lo, args.hi)?;
    gpu_scan::plan::sort::check_len(n)?;
    args.files.out.check(&[("--starts", args.starts.as_deref()), ("--permutation", args.permutation.as_deref())])?;
    let digit = Digit::bins(args.bins, args.lo, args.hi);
    let what = format!("a histogram of {n} {}", ty.name());
    let bytes = bytes_of(n, ty.size() as u64, &what)?;
    let needs = if args.grouped() {
        let plan = gpu_scan::plan::partition::plan(&tuning, ty, n, &digit)?;
        let permutation = bytes_of(n, 4, &what)?;
        let (state, scratch) = plan.scan.temp_bytes();
        // The values, the permutation read back and the CPU's.
        Needs {
            host: total(&[bytes, permutation, permutation], &what)?,
            device: total(&[bytes, bytes, permutation, bytes_of(plan.entries, 8, &what)?, state, scratch], &what)?,
            what,
        }
    } else {
        gpu_scan::plan::partition::histogram_counts(&tuning, ty, n, &digit)?;
        let counts = bytes_of(args.bins as u64 + 1, 4, &what)?;
        Needs { host: total(&[bytes, counts], &what)?, device: total(&[bytes, counts], &what)?, what }
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
        Ok(Histogram { data, opts, grouped: args.grouped(), buffers: None, temp: TempStorage::new(), result: None })
    };
    let ran = experiment::run(global, args.runs.iters, needs, make)?;
    let force = args.files.out.force;
    let mut outputs: Vec<io::Output> = Vec::new();
    if let Some(h) = &ran.exp.result {
        if let Some(p) = &args.files.out.output {
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

/// A histogram's input; the bin starts where grouped, else the counts; the permutation where
/// grouped.
type HistogramBuffers<T> = (CudaSlice<T>, CudaSlice<u32>, Option<CudaSlice<u32>>);

struct Histogram<T> {
    data: Vec<T>,
    opts: HistogramOptions,
    /// Whether the values are grouped by bin as well ([`Gpu::histogram`]), or only counted
    /// ([`Gpu::histogram_counts`]).
    grouped: bool,
    buffers: Option<HistogramBuffers<T>>,
    temp: TempStorage,
    /// The histogram the last check read back.
    result: Option<gpu_scan::apps::histogram::Histogram>,
}

impl<T: Element> Experiment for Histogram<T> {
    fn title(&self) -> String {
        let o = &self.opts;
        let grouped = if self.grouped { ", grouped" } else { "" };
        format!(
            "histogram: n={} {} in {} bins over [{}, {}){grouped}",
            self.data.len(),
            T::TYPE.name(),
            o.bins,
            o.lo,
            o.hi
        )
    }

    fn traffic(&self) -> (u64, u64) {
        let bytes = (self.data.len() * T::TYPE.size()) as u64;
        (if self.grouped { 2 * bytes + 4 * self.data.len() as u64 } else { bytes }, bytes)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let d = gpu.upload(&stream, "histogram input", &self.data)?;
        let entries = self.opts.bins as usize + 1;
        let (bins, permutation) = if self.grouped {
            let starts = gpu.alloc_zeros::<u32>(&stream, "histogram bin starts", entries)?;
            (starts, Some(gpu.alloc_zeros::<u32>(&stream, "histogram permutation", self.data.len())?))
        } else {
            (gpu.alloc_zeros::<u32>(&stream, "histogram counts", entries)?, None)
        };
        self.buffers = Some((d, bins, permutation));
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        match self.buffers.as_mut().expect("prepared") {
            (d, starts, Some(permutation)) => {
                gpu.histogram(gpu.stream(), d, starts, permutation, &self.opts, &mut self.temp)
            }
            (d, counts, None) => gpu.histogram_counts(gpu.stream(), d, counts, &self.opts),
        }
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let o = &self.opts;
        let (starts, permutation) = match self.buffers.as_ref().expect("prepared") {
            (_, starts, Some(permutation)) => (starts, permutation),
            (_, counts, None) => {
                let mut counts: Vec<u64> = gpu.download(gpu.stream(), counts)?.into_iter().map(u64::from).collect();
                let want = reference::bin_counts(&self.data, o.bins, o.lo, o.hi)?;
                let wrong = first_difference(&counts, &want).map(|d| format!("counts: {d}"));
                let outside = counts.pop().unwrap_or(0);
                let mut check = Check::new("the counts", wrong);
                check.notes.push(format!("counts: {}, outside the range: {outside}", show(&counts)));
                self.result = Some(gpu_scan::apps::histogram::Histogram {
                    counts,
                    starts: Vec::new(),
                    outside,
                    permutation: Vec::new(),
                });
                return Ok(check);
            }
        };
        let h = gpu_scan::apps::histogram::Histogram::from_starts(
            &gpu.download(gpu.stream(), starts)?,
            gpu.download(gpu.stream(), permutation)?,
        );
        let want = reference::histogram(&self.data, o.bins, o.lo, o.hi)?;
        let wrong = if h.counts != want.counts || h.outside != want.outside {
            Some("counts differ".to_string())
        } else if h.starts != want.starts {
            Some("bin starts differ".to_string())
        } else {
            first_difference(&h.permutation, &want.permutation).map(|d| format!("permutation: {d}"))
        };
        let mut check = Check::new("counts, starts and the stable permutation", wrong);
        check.notes.push(format!("counts: {}, outside the range: {}", show(&h.counts), h.outside));
        check.notes.push(format!("starts: {}", show(&h.starts)));
        self.result = Some(h);
        Ok(check)
    }
}

/// The first eight of `v`, for a check's notes.
fn show(v: &[u64]) -> String {
    let shown: Vec<String> = v.iter().take(8).map(u64::to_string).collect();
    format!("[{}{}]", shown.join(", "), if v.len() > 8 { ", ..." } else { "" })
}

#[cfg(test)]
mod tests {
    use super::cpu_order;

    #[test]
    fn the_cpu_order_is_stable_with_nans_last_both_ways() {
        let keys = [1.0f32, -0.0, f32::NAN, 0.0, -f32::NAN, 1.0, f32::NEG_INFINITY, f32::INFINITY, -0.0];
        assert_eq!(cpu_order(&keys, false).unwrap(), [6, 1, 8, 3, 0, 5, 7, 2, 4]);
        assert_eq!(cpu_order(&keys, true).unwrap(), [7, 0, 5, 3, 1, 8, 6, 2, 4]);
        let doubles: Vec<f64> = keys.iter().map(|&x| x as f64).collect();
        assert_eq!(cpu_order(&doubles, true).unwrap(), cpu_order(&keys, true).unwrap());
        assert_eq!(cpu_order(&[2i32, -1, 2, -1, i32::MIN], true).unwrap(), [0, 2, 1, 3, 4]);
        assert_eq!(cpu_order(&[u64::MAX, 0, u64::MAX, 1 << 63], false).unwrap(), [1, 3, 0, 2]);
        assert_eq!(cpu_order(&[-1i64, i64::MAX, -1], false).unwrap(), [0, 2, 1]);
    }
}
