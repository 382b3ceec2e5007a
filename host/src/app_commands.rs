//! The application subcommands (`compact`, `sort`, `histogram`, `csr`): generate an input, run the library function on
//! the GPU, time it against a same-run device copy (and CUB where it has the same operation),
//! and check it against the CPU.

use crate::{parse_count, parse_range, type_values};
use clap::Args;
use gpu_scan::apps::compact::{self, Keep};
use gpu_scan::apps::segmented::{self, Segments};
use gpu_scan::apps::{csr, histogram, recurrence, sort};
use gpu_scan::bench::{median_ms, Baseline};
use gpu_scan::{input, Element, Error, Gpu, TempStorage};
use std::path::PathBuf;

#[derive(Args)]
pub struct CompactArgs {
    /// Number of elements (100000000, 1e8, 2^28). Values follow CUB's benchmark: (i * 2654435761) mod 7.
    #[arg(value_parser = parse_count)]
    pub n: u64,
    #[arg(long = "type", default_value = "u32", value_parser = type_values())]
    pub ty: String,
    /// What to keep: `gt:<threshold>`, `nonzero`, or `flags` (a random byte array, half set).
    #[arg(long, default_value = "gt:3", allow_hyphen_values = true)]
    pub keep: String,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Timed runs (the median is reported), after one warm-up.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
    /// CSV from ../shared/bench/cub_baseline.cu (same run): adds CUB's select_if_gt3 time.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
}

#[derive(Args)]
pub struct SortArgs {
    /// Number of keys (2^28, 1e6, ...).
    #[arg(value_parser = parse_count)]
    pub n: u64,
    #[arg(long = "type", default_value = "u32", value_parser = ["u32", "i32", "u64", "i64", "f32", "f64"])]
    pub ty: String,
    /// Carry u32 values (the keys' input positions) along.
    #[arg(long)]
    pub values: bool,
    /// Random bits per key, the rest zero (default: all): fewer make many equal digits, and
    /// passes above them find one digit in every key.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub key_bits: Option<u32>,
    /// `random` keys, or `cub`: ../shared/bench/cub_baseline.cu's keys, (i * 2654435761) mod 7.
    #[arg(long, default_value = "random", value_parser = ["random", "cub"])]
    pub keys: String,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
    /// CSV of CUB's sort timed in the same run on the same keys: tools/cub_sort.cu's
    /// (random keys, with or without values) or ../shared/bench/cub_baseline.cu's (`--keys cub`).
    #[arg(long)]
    pub baseline: Option<PathBuf>,
}

#[derive(Args)]
pub struct HistogramArgs {
    #[arg(value_parser = parse_count)]
    pub n: u64,
    #[arg(long = "type", default_value = "f32", value_parser = ["u32", "i32", "u64", "i64", "f32", "f64"])]
    pub ty: String,
    /// Number of bins (1 to 1024).
    #[arg(long, default_value_t = 256)]
    pub bins: u32,
    /// Lower end of the binned range.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub lo: f64,
    /// Upper end (exclusive). Values are drawn from [lo - 5%, hi + 5%), so some fall outside.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    pub hi: f64,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
}

#[derive(Args)]
pub struct CsrArgs {
    /// Number of nonzeros.
    #[arg(value_parser = parse_count)]
    pub nnz: u64,
    /// Number of rows (default nnz / 4; about 2% of rows are left empty on purpose).
    #[arg(long)]
    pub rows: Option<u32>,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
}

/// Element types of the segmented and batched scans.
const SEGMENTED_TYPES: [&str; 6] = ["u32", "i32", "u64", "i64", "f32", "f64"];

/// What the segmented and batched scans compute.
#[derive(Args)]
pub struct SegmentedScan {
    #[arg(long, default_value = "add", value_parser = ["add", "mul", "min", "max"])]
    pub op: String,
    #[arg(long)]
    pub exclusive: bool,
}

#[derive(Args)]
pub struct SegmentedArgs {
    #[arg(value_parser = parse_count)]
    pub n: u64,
    #[arg(long = "type", default_value = "f32", value_parser = SEGMENTED_TYPES)]
    pub ty: String,
    #[command(flatten)]
    pub scan: SegmentedScan,
    /// Mean segment length of the random heads.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub mean_length: u64,
    /// Fixed segments of this many elements instead (N must be a multiple): the row-wise batched scan.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rows_of: Option<u64>,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
}

#[derive(Args)]
pub struct RecurrenceArgs {
    #[arg(value_parser = parse_count)]
    pub n: u64,
    #[arg(long = "type", default_value = "f32", value_parser = ["f32", "f64"])]
    pub ty: String,
    /// x[-1].
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub x0: f64,
    /// Range of the factors a[t] (`lo:hi`); the offsets b[t] are uniform in [-1, 1).
    #[arg(long, default_value = "0.9:1", allow_hyphen_values = true, value_parser = parse_range)]
    pub factors: (f64, f64),
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
}

#[derive(Args)]
pub struct BatchedArgs {
    #[arg(value_parser = parse_count)]
    pub rows: u64,
    #[arg(value_parser = parse_count)]
    pub cols: u64,
    /// 1: scan along each row; 0: scan down each column.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub axis: u8,
    #[arg(long = "type", default_value = "f32", value_parser = SEGMENTED_TYPES)]
    pub ty: String,
    #[command(flatten)]
    pub scan: SegmentedScan,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
}

/// The device line every subcommand starts with.
fn open_gpu() -> Result<Gpu, Error> {
    let gpu = Gpu::new(0)?;
    let info = gpu.info();
    println!("device: {} ({} SMs)", info.name, info.multiprocessors);
    Ok(gpu)
}

/// Prints the timing line: median time, GB/s of `bytes` moved, percent of a same-run device copy
/// of `copy_bytes` (timed here), and CUB's time when known.
fn report_time(ms: (f64, f64), iters: u32, bytes: u64, copy_ms: f64, cub_ms: Option<f64>) {
    let (ms, min_ms) = ms;
    let cub = cub_ms.map(|c| format!("; CUB {c:.4} ms, ours {:.2}x its speed", c / ms)).unwrap_or_default();
    println!(
        "time: {ms:.4} ms (median of {iters}, min {min_ms:.4}), {:.1} GB/s moved, {:.1}% of the speed of a same-run copy of the input ({copy_ms:.4} ms){cub}",
        bytes as f64 / (ms * 1e-3) / 1e9,
        100.0 * copy_ms / ms
    );
}

/// Prints the check line; true when `wrong` is empty.
fn report_check(what: &str, wrong: Option<String>) -> bool {
    match &wrong {
        None => println!("check: {what} against the CPU reference: PASS"),
        Some(w) => println!("check: {what}: {w}: FAIL"),
    }
    wrong.is_none()
}

/// Milliseconds of a device copy of `bytes` bytes (median of `iters`).
fn copy_ms(gpu: &Gpu, bytes: usize, iters: u32) -> Result<f64, Error> {
    let stream = gpu.stream().clone();
    let a = gpu.alloc_zeros::<u8>(&stream, "copy yardstick", bytes.max(1))?;
    let mut b = gpu.alloc_zeros::<u8>(&stream, "copy yardstick", bytes.max(1))?;
    Ok(median_ms(iters, || gpu.time_ms(&stream, || Ok(stream.memcpy_dtod(&a, &mut b)?)))?.0)
}

/// The first index where `got` and `want` differ, described.
fn first_difference<T: PartialEq + std::fmt::Display>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let i = got.iter().zip(want).position(|(g, w)| g != w)?;
    Some(format!("first difference at {i}: expected {}, got {}", want[i], got[i]))
}

fn parse_keep<T: Element>(s: &str) -> Result<Keep<T>, Error> {
    match s {
        "nonzero" => Ok(Keep::NonZero),
        "flags" => Ok(Keep::Flags),
        _ => {
            let t = s
                .strip_prefix("gt:")
                .ok_or_else(|| Error::invalid(format!("--keep `{s}`: expected gt:<threshold>, nonzero or flags")))?;
            let t = t
                .parse::<T>()
                .map_err(|_| Error::invalid(format!("--keep `{s}`: `{t}` is not a valid {} value", T::TYPE.name())))?;
            Ok(Keep::Greater(t))
        }
    }
}

pub fn compact<T: Element>(args: &CompactArgs) -> Result<bool, Error> {
    let keep = parse_keep::<T>(&args.keep)?;
    let n = usize::try_from(args.n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let gpu = open_gpu()?;
    let size = T::TYPE.size() as u64;
    gpu.check_memory("the input, flags and output", args.n * (2 * size + 1))?;
    println!("compact: n={n} {} keep {}", T::TYPE.name(), args.keep);
    let data = input::cub_pattern::<T>(n);
    let flags: Option<Vec<u8>> =
        (keep == Keep::Flags).then(|| (0..n as u64).map(|i| (input::bits(args.seed, i) & 1) as u8).collect());
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "compaction input", &data)?;
    let d_flags = flags.as_deref().map(|f| gpu.upload(&stream, "compaction flags", f)).transpose()?;
    let mut d_out = gpu.alloc_zeros::<T>(&stream, "compaction output", n)?;
    let mut temp = TempStorage::new();
    let kept = gpu.compact(&stream, &d_in, d_flags.as_ref(), keep, &mut d_out, &mut temp)? as usize;
    let got = gpu.download(&stream, &d_out)?;
    let times = median_ms(args.iters, || {
        gpu.time_ms(&stream, || gpu.compact_async(&stream, &d_in, d_flags.as_ref(), keep, &mut d_out, &mut temp))
    })?;
    let bytes = args.n * size + kept as u64 * size + flags.as_ref().map_or(0, |f| f.len() as u64);
    let cub_ms = match keep {
        Keep::Greater(t) if "3".parse::<T>().ok() == Some(t) => {
            cub.as_ref().and_then(|c| c.get("select_if_gt3", T::TYPE.name(), args.n))
        }
        _ => None,
    };
    report_time(times, args.iters, bytes, copy_ms(&gpu, n * size as usize, args.iters)?, cub_ms);
    println!("kept: {kept} of {n}");
    let want = compact::reference(&data, flags.as_deref(), keep);
    Ok(report_check(&format!("{kept} kept elements"), first_difference(&got[..kept.min(n)], &want)))
}

/// Random keys: the order-key bits are uniform, so every radix digit is busy (floats include
/// both zeros, infinities and NaNs now and then). With `bits`, only the low `bits` of each key
/// are random and the rest zero.
fn random_keys<T: Element>(seed: u64, n: usize, bits: Option<u32>) -> Vec<T> {
    let mask = bits.map_or(u64::MAX, |b| u64::MAX >> (64 - b));
    (0..n as u64).map(|i| T::from_bits(input::bits(seed, i) & mask)).collect()
}

pub fn sort<T: Element>(args: &SortArgs) -> Result<bool, Error> {
    let n = usize::try_from(args.n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    let width = 8 * T::TYPE.size() as u32;
    if let Some(b) = args.key_bits.filter(|&b| b > width) {
        return Err(Error::invalid(format!("--key-bits {b}: {} keys have {width} bits", T::TYPE.name())));
    }
    let cub_keys = args.keys == "cub";
    if cub_keys && args.key_bits.is_some() {
        return Err(Error::invalid("--key-bits sets random keys' bits; --keys cub has no random bits"));
    }
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let gpu = open_gpu()?;
    let size = T::TYPE.size() as u64 + if args.values { 4 } else { 0 };
    gpu.check_memory("the keys, values and sort buffers", args.n * size * 3)?;
    println!(
        "sort: n={n} {} keys{}{}",
        T::TYPE.name(),
        if cub_keys {
            ", CUB's benchmark keys (i * 2654435761) mod 7".to_string()
        } else {
            args.key_bits.map_or(String::new(), |b| format!(", {b} random bits each"))
        },
        if args.values { " with u32 values" } else { "" }
    );
    let keys = if cub_keys { input::cub_pattern::<T>(n) } else { random_keys::<T>(args.seed, n, args.key_bits) };
    let values: Option<Vec<u32>> = args.values.then(|| (0..n as u32).collect());
    let stream = gpu.stream().clone();
    let d_keys = gpu.upload(&stream, "keys", &keys)?;
    let d_values = values.as_deref().map(|v| gpu.upload(&stream, "values", v)).transpose()?;
    let mut work = d_keys.clone();
    let mut work_values = d_values.clone();
    let mut bufs = sort::SortBuffers::new();
    gpu.sort_with(&stream, &mut work, work_values.as_mut(), &mut bufs)?;
    let got = gpu.download(&stream, &work)?;
    let got_values = work_values.as_ref().map(|v| gpu.download(&stream, v)).transpose()?;
    let times = median_ms(args.iters, || {
        stream.memcpy_dtod(&d_keys, &mut work)?;
        if let (Some(src), Some(dst)) = (d_values.as_ref(), work_values.as_mut()) {
            stream.memcpy_dtod(src, dst)?;
        }
        gpu.time_ms(&stream, || gpu.sort_with(&stream, &mut work, work_values.as_mut(), &mut bufs))
    })?;
    // CUB timed on the same keys: tools/cub_sort.cu's random keys are those of seed 42 with all
    // bits random; cub_baseline.cu times its own keys only, without values.
    let label = match (cub_keys, args.values) {
        (true, false) => Some("radix_sort_keys"),
        (false, _) if args.seed != 42 || args.key_bits.is_some() => None,
        (false, false) => Some("radix_sort_keys_random"),
        (false, true) => Some("radix_sort_pairs_random"),
        (true, true) => None,
    };
    let cub_ms = label.and_then(|l| cub.as_ref().and_then(|c| c.get(l, T::TYPE.name(), args.n)));
    report_time(times, args.iters, 2 * args.n * size, copy_ms(&gpu, n * T::TYPE.size(), args.iters)?, cub_ms);
    let (want, want_values) = sort::reference(&keys, values.as_deref());
    let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let mut wrong = first_difference(&bits(&got), &bits(&want));
    if wrong.is_none() {
        wrong = match (got_values, want_values) {
            (Some(g), Some(w)) => first_difference(&g, &w).map(|d| format!("values: {d}")),
            _ => None,
        };
    }
    Ok(report_check(&format!("{n} keys sorted, stable"), wrong))
}

pub fn histogram<T: Element>(args: &HistogramArgs) -> Result<bool, Error> {
    let n = usize::try_from(args.n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    let gpu = open_gpu()?;
    gpu.check_memory("the values and the permutation", args.n * (2 * T::TYPE.size() as u64 + 12))?;
    let (lo, hi) = (args.lo, args.hi);
    let pad = 0.05 * (hi - lo);
    let data: Vec<T> = input::uniform::<f64>(args.seed, n, lo - pad, hi + pad)
        .into_iter()
        .map(|x| {
            if T::TYPE.is_float() {
                T::from_bits(if T::TYPE.size() == 4 { (x as f32).to_bits() as u64 } else { x.to_bits() })
            } else {
                T::from_bits(x.floor() as i64 as u64)
            }
        })
        .collect();
    println!("histogram: n={n} {} in {} bins over [{lo}, {hi})", T::TYPE.name(), args.bins);
    let stream = gpu.stream().clone();
    let d = gpu.upload(&stream, "histogram input", &data)?;
    let mut bufs = gpu.histogram_buffers::<T>(&stream, args.n, args.bins, lo, hi)?;
    gpu.histogram_async(&stream, &d, &mut bufs)?;
    let h = gpu.histogram_read(&stream, &bufs)?;
    let times = median_ms(args.iters, || gpu.time_ms(&stream, || gpu.histogram_async(&stream, &d, &mut bufs)))?;
    report_time(
        times,
        args.iters,
        args.n * (2 * T::TYPE.size() as u64 + 4),
        copy_ms(&gpu, n * T::TYPE.size(), args.iters)?,
        None,
    );
    let show = |v: &[u64]| v.iter().take(8).map(u64::to_string).collect::<Vec<_>>().join(", ");
    println!(
        "counts: [{}{}], outside the range: {}",
        show(&h.counts),
        if h.counts.len() > 8 { ", ..." } else { "" },
        h.outside
    );
    println!("starts: [{}{}]", show(&h.starts), if h.starts.len() > 8 { ", ..." } else { "" });
    let want = histogram::reference(&data, args.bins, lo, hi)?;
    let wrong = if h.counts != want.counts || h.outside != want.outside {
        Some("counts differ".to_string())
    } else if h.starts != want.starts {
        Some("bin starts differ".to_string())
    } else {
        first_difference(&h.permutation, &want.permutation).map(|d| format!("permutation: {d}"))
    };
    Ok(report_check("counts, starts and the stable permutation", wrong))
}

/// A sorted COO row index array over `nrows` rows with about 2% of the rows empty.
pub fn sparse_rows(seed: u64, nnz: usize, nrows: u32) -> Vec<u32> {
    let mut rows: Vec<u32> = (0..nnz as u64)
        .map(|i| {
            let r = (input::bits(seed, i) % nrows as u64) as u32;
            if r % 50 == 7 {
                (r + 1) % nrows
            } else {
                r
            }
        })
        .collect();
    rows.sort_unstable();
    rows
}

pub fn csr(args: &CsrArgs) -> Result<bool, Error> {
    let nnz = usize::try_from(args.nnz).map_err(|_| Error::invalid("NNZ does not fit this machine's memory"))?;
    let nrows = args.rows.unwrap_or((args.nnz / 4).clamp(1, u32::MAX as u64 - 1) as u32);
    if nrows == 0 {
        return Err(Error::invalid("--rows must be at least 1"));
    }
    if args.nnz >= u32::MAX as u64 {
        return Err(Error::invalid(format!("{nnz} nonzeros: 32-bit offsets hold fewer than 2^32")));
    }
    let gpu = open_gpu()?;
    // Row indices, their round trip and heads, row counts and offsets.
    gpu.check_memory("the sparse matrix's rows, counts and offsets", 4 * (3 * args.nnz + 2 * (nrows as u64 + 1)))?;
    let rows = sparse_rows(args.seed, nnz, nrows);
    println!("csr: {nnz} nonzeros in {nrows} rows");
    let stream = gpu.stream().clone();
    let d_rows = gpu.upload(&stream, "row indices", &rows)?;
    let offsets = gpu.coo_to_csr(&stream, &d_rows, nrows)?;
    let back = gpu.csr_to_coo(&stream, &offsets)?;
    let times = median_ms(args.iters, || gpu.time_ms(&stream, || gpu.coo_to_csr(&stream, &d_rows, nrows).map(|_| ())))?;
    report_time(times, args.iters, 4 * (args.nnz + nrows as u64), copy_ms(&gpu, 4 * nnz, args.iters)?, None);
    let got = gpu.download(&stream, &offsets)?;
    let want = csr::offsets_reference(&rows, nrows);
    let empty = want.windows(2).filter(|w| w[0] == w[1]).count();
    println!("row offsets: {} entries, {empty} empty rows", got.len());
    let round_trip = gpu.download(&stream, &back)?;
    let wrong = first_difference(&got, &want)
        .map(|d| format!("offsets: {d}"))
        .or_else(|| first_difference(&round_trip, &rows).map(|d| format!("round trip: {d}")));
    Ok(report_check("row offsets and the round trip back to COO", wrong))
}

pub fn segmented<T: Element>(args: &SegmentedArgs) -> Result<bool, Error> {
    let op = gpu_scan::Op::parse(&args.scan.op).expect("clap checked the operator");
    let n = usize::try_from(args.n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    if let Some(cols) = args.rows_of {
        if !args.n.is_multiple_of(cols) {
            return Err(Error::invalid(format!("{n} elements are not whole rows of {cols}")));
        }
    }
    let gpu = open_gpu()?;
    let size = T::TYPE.size() as u64;
    gpu.check_memory("the input, heads and output", args.n * (2 * size + 1))?;
    let heads: Vec<u8> = match args.rows_of {
        Some(_) => Vec::new(),
        None => (0..args.n).map(|i| input::bits(args.seed ^ 0x5e9, i).is_multiple_of(args.mean_length) as u8).collect(),
    };
    let what = match args.rows_of {
        Some(c) => format!("{} rows of {c}", args.n / c),
        None => format!("{} segments (mean length {})", heads.iter().filter(|&&h| h != 0).count(), args.mean_length),
    };
    println!(
        "segmented: n={n} {} {} {}, {what}",
        T::TYPE.name(),
        op.name(),
        if args.scan.exclusive { "exclusive" } else { "inclusive" }
    );
    let data = input::generate::<T>(op, args.seed, n);
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "segmented input", &data)?;
    let d_heads = gpu.upload(&stream, "segment heads", &heads)?;
    let mut d_out = gpu.alloc_zeros::<T>(&stream, "segmented output", n)?;
    let mut temp = TempStorage::new();
    let mut run = |d_out: &mut gpu_scan::cudarc::driver::CudaSlice<T>| {
        let segments = match args.rows_of {
            Some(c) => Segments::Every(c),
            None => Segments::Heads(&d_heads),
        };
        gpu.segmented_scan(&stream, &d_in, segments, d_out, op, args.scan.exclusive, &mut temp)
    };
    run(&mut d_out)?;
    let got = gpu.download(&stream, &d_out)?;
    let times = median_ms(args.iters, || gpu.time_ms(&stream, || run(&mut d_out)))?;
    let head_bytes = heads.len() as u64;
    report_time(times, args.iters, 2 * args.n * size + head_bytes, copy_ms(&gpu, n * size as usize, args.iters)?, None);
    let want = match args.rows_of {
        Some(c) => segmented::reference(op, &data, |i| (i as u64).is_multiple_of(c), args.scan.exclusive)?,
        None => segmented::reference(op, &data, |i| heads[i] != 0, args.scan.exclusive)?,
    };
    let head = |i: usize| match args.rows_of {
        Some(c) => (i as u64).is_multiple_of(c),
        None => heads[i] != 0,
    };
    let wrong = segment_check(op, &data, &got, &want, head);
    Ok(report_check(&format!("{n} elements, every segment on its own"), wrong))
}

pub fn recurrence<F: recurrence::RecurrenceFloat + Element>(args: &RecurrenceArgs) -> Result<bool, Error> {
    let n = usize::try_from(args.n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    let gpu = open_gpu()?;
    let map_bytes = std::mem::size_of::<F::Map>() as u64;
    gpu.check_memory("the maps and the output", args.n * 2 * map_bytes)?;
    let (lo, hi) = args.factors;
    let x0: F = F::from_f64(args.x0);
    println!(
        "recurrence: n={n} {}, x[t] = a[t]*x[t-1] + b[t], a in [{lo}, {hi}), b in [-1, 1), x0 = {x0}",
        F::TYPE.name()
    );
    let a = input::uniform::<F>(args.seed, n, lo, hi);
    let b = input::uniform::<F>(args.seed ^ 1, n, -1.0, 1.0);
    let maps: Vec<F::Map> = a.iter().zip(&b).map(|(&a, &b)| F::map(a, b)).collect();
    let stream = gpu.stream().clone();
    let d_maps = gpu.upload(&stream, "recurrence maps", &maps)?;
    let mut d_out = gpu.alloc_zeros::<F::Map>(&stream, "recurrence output", n)?;
    let mut temp = TempStorage::new();
    gpu.recurrence::<F>(&stream, &d_maps, x0, &mut d_out, &mut temp)?;
    let got: Vec<F> = stream.clone_dtoh(&d_out)?.into_iter().map(F::x).collect();
    let times = median_ms(args.iters, || {
        gpu.time_ms(&stream, || gpu.recurrence::<F>(&stream, &d_maps, x0, &mut d_out, &mut temp))
    })?;
    report_time(times, args.iters, 2 * args.n * map_bytes, copy_ms(&gpu, n * map_bytes as usize, args.iters)?, None);
    let (x, s) = recurrence::reference(&a, &b, x0);
    let eps = if F::TYPE.size() == 4 { f32::EPSILON as f64 } else { f64::EPSILON };
    let bound = |t: usize| 2.0 * gpu_scan::verify::roundings(gpu_scan::Algorithm::SinglePass, t, n) * eps * s[t];
    let err = |t: usize| (got[t].into() - x[t]).abs();
    let worst = (0..n).map(|t| err(t) / s[t].max(f64::MIN_POSITIVE)).fold(0.0, f64::max);
    println!("largest error: {worst:.2e} of the magnitude |a|-recurrence");
    let wrong = (0..n)
        .find(|&t| err(t) > bound(t))
        .map(|t| format!("x[{t}] = {}, the loop gives {} (bound {:e})", got[t], x[t], bound(t)));
    Ok(report_check(&format!("{n} values within the rounding bound"), wrong))
}

/// Compares a segmented result with the sequential per-segment one: exactly for exact
/// operators; for float sums within 64 roundings of the segment's sum of magnitudes, for float
/// products within 2·eps per factor.
fn segment_check<T: Element>(
    op: gpu_scan::Op,
    data: &[T],
    got: &[T],
    want: &[T],
    head: impl Fn(usize) -> bool,
) -> Option<String> {
    if !op.order_sensitive(T::TYPE) {
        return first_difference(got, want);
    }
    let eps = if T::TYPE.size() == 4 { f32::EPSILON as f64 } else { f64::EPSILON };
    let (mut mag, mut len) = (0.0f64, 0.0f64);
    for i in 0..data.len() {
        if head(i) {
            (mag, len) = (0.0, 0.0);
        }
        mag += data[i].to_f64().abs();
        len += 1.0;
        let (g, w) = (got[i].to_f64(), want[i].to_f64());
        let bound = if op == gpu_scan::Op::Add { 64.0 * eps * mag } else { 2.0 * eps * len * w.abs() };
        if !(g == w || (g - w).abs() <= bound || (g.is_nan() && w.is_nan())) {
            return Some(format!("element {i}: expected {} within {bound:e}, got {}", want[i], got[i]));
        }
    }
    None
}

pub fn batched<T: Element>(args: &BatchedArgs) -> Result<bool, Error> {
    let op = gpu_scan::Op::parse(&args.scan.op).expect("clap checked the operator");
    let n = args.rows.checked_mul(args.cols).ok_or_else(|| Error::invalid("ROWS x COLS overflows"))?;
    let n = usize::try_from(n).map_err(|_| Error::invalid("ROWS x COLS does not fit this machine's memory"))?;
    let gpu = open_gpu()?;
    let size = T::TYPE.size() as u64;
    gpu.check_memory("the matrix and the result", 2 * n as u64 * size)?;
    let along = if args.axis == 1 { "along each row" } else { "down each column" };
    println!("batched: {} x {} {} {} {along}", args.rows, args.cols, T::TYPE.name(), op.name());
    let data = input::generate::<T>(op, args.seed, n);
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "matrix", &data)?;
    let mut d_out = gpu.alloc_zeros::<T>(&stream, "result", n)?;
    let mut temp = TempStorage::new();
    let mut run = |d_out: &mut gpu_scan::cudarc::driver::CudaSlice<T>| {
        if args.axis == 1 {
            gpu.scan_rows(&stream, &d_in, args.cols, d_out, op, args.scan.exclusive, &mut temp)
        } else {
            gpu.scan_columns(&stream, &d_in, args.rows, d_out, op, args.scan.exclusive, &mut temp)
        }
    };
    run(&mut d_out)?;
    let got = gpu.download(&stream, &d_out)?;
    let times = median_ms(args.iters, || gpu.time_ms(&stream, || run(&mut d_out)))?;
    report_time(times, args.iters, 2 * n as u64 * size, copy_ms(&gpu, n * size as usize, args.iters)?, None);
    // The CPU reference works on segments: rows as they are, columns after a transpose.
    let (r, c) = (args.rows as usize, args.cols as usize);
    let transpose = |v: &[T], rows: usize, cols: usize| -> Vec<T> {
        let mut t = Vec::with_capacity(v.len());
        for j in 0..cols {
            t.extend((0..rows).map(|i| v[i * cols + j]));
        }
        t
    };
    let wrong = if args.axis == 1 {
        let want = segmented::reference(op, &data, |i| i % c == 0, args.scan.exclusive)?;
        segment_check(op, &data, &got, &want, |i| i % c == 0)
    } else {
        let data_t = transpose(&data, r, c);
        let want_t = segmented::reference(op, &data_t, |i| i % r == 0, args.scan.exclusive)?;
        segment_check(op, &data_t, &transpose(&got, r, c), &want_t, |i| i % r == 0)
    };
    Ok(report_check(&format!("{n} elements {along}"), wrong))
}

#[derive(Args)]
pub struct TimelineArgs {
    /// Number of u32 elements (2^28, 1e8, ...).
    #[arg(value_parser = parse_count)]
    pub n: u64,
    /// Recorded runs after one warm-up; the last one is summarized.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Also write every tile's record (nanoseconds from the first tile's start) to this CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Also draw 600 tiles from the middle of the array, phase by phase, into this PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// `timeline`: the `u32` add single-pass scan with every tile's timestamps, summarized per phase.
pub fn timeline(args: &TimelineArgs) -> Result<bool, Error> {
    use gpu_scan::timeline::{summarize, TileRecord};
    use scan_abi::timeline::TIMED;
    let n = usize::try_from(args.n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    let gpu = open_gpu()?;
    gpu.check_memory("the input, output and tile records", 8 * args.n + args.n / 128)?;
    println!("timeline: n={n} u32 add inclusive, single-pass with per-tile timestamps");
    let data: Vec<u32> = input::generate(gpu_scan::Op::Add, args.seed, n);
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "input", &data)?;
    let mut d_out = gpu.alloc_zeros::<u32>(&stream, "output", n)?;
    let mut temp = TempStorage::new();
    let mut records: Vec<TileRecord> = gpu.scan_timeline(&stream, &d_in, &mut d_out, &mut temp)?;
    for _ in 0..args.runs {
        records = gpu.scan_timeline(&stream, &d_in, &mut d_out, &mut temp)?;
    }
    let s = summarize(&records);
    println!(
        "{} tiles in {:.1} us; on average {:.0} tiles between their start and their stores; look-back {:.2} rounds of polls per tile on average, {} at most",
        s.tiles,
        s.span_ns as f64 / 1e3,
        s.mean_in_flight,
        s.mean_polls,
        s.most_polls
    );
    println!("{:<16} {:>9} {:>9} {:>9} {:>9}   (ns per tile)", "phase", "median", "p90", "p99", "max");
    for (name, [p50, p90, p99, max]) in &s.phases {
        println!("{name:<16} {p50:>9} {p90:>9} {p99:>9} {max:>9}");
    }
    println!("what the look-backs waited on (replayed from the records):");
    let c = &s.chain;
    for (name, [p50, p90, p99, max], unit) in [
        (
            "predecessors",
            c.waited,
            "ns after the tile's own aggregate until a prefix and every aggregate after it were out",
        ),
        ("polls", c.after_ready, "ns from then until the look-back had its prefix"),
        ("depth", c.depth, "tiles back to that prefix"),
    ] {
        println!("{name:<16} {p50:>9} {p90:>9} {p99:>9} {max:>9}   ({unit})");
    }
    if let Some(path) = &args.csv {
        let first = records.iter().map(|r| r.times[0]).min().unwrap_or(0);
        let mut text = String::from("tile,");
        text += &TIMED.map(|e| format!("{e:?}").to_lowercase() + "_ns").join(",");
        text += ",polls,sm\n";
        for (i, r) in records.iter().enumerate() {
            let times: Vec<String> = r.times.iter().map(|&t| (t as i64 - first as i64).to_string()).collect();
            text += &format!("{i},{},{},{}\n", times.join(","), r.polls, r.sm);
        }
        std::fs::write(path, text).map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.png {
        const DRAWN: usize = 600;
        gpu_scan::timeline::plot(path, &records, (records.len() / 2).saturating_sub(DRAWN / 2), DRAWN)?;
        println!("wrote {}", path.display());
    }
    let want = gpu_scan::cpu::scan(gpu_scan::Op::Add, &data, false, None)?;
    let got = gpu.download(&stream, &d_out)?;
    Ok(report_check(&format!("{n} elements"), first_difference(&got, &want)))
}
