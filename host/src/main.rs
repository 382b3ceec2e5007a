//! `gpu-scan` command line: a thin layer over the `gpu_scan` library.

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand};
use gpu_scan::accuracy;
use gpu_scan::bench::{self, Baseline, BenchConfig};
use gpu_scan::{
    input, verify, with_elem_type, Algorithm, BlockAlgo, ElemType, Element, Error, Gpu, Op, Propagation, ScanOptions,
    StatusOrdering, TempStorage,
};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

mod app_commands;

#[derive(Parser)]
#[command(name = "gpu-scan", version, about = "Parallel prefix sums (scans) on NVIDIA GPUs, kernels written in Rust")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan N seeded elements on the GPU, check against the CPU, print time, GB/s and PASS/FAIL.
    Scan(ScanArgs),
    /// Sweep sizes, types and algorithms: table, CSV, JSON and PNG plot against the same-run copy
    /// and CUB.
    Bench(BenchArgs),
    /// Redraw the table and bench.png from a bench.csv (no GPU needed).
    Plot(PlotArgs),
    /// Float sum error study: worst relative error of the GPU scan (and of the sequential CPU
    /// fold) against an exact reference, for uniform values over a sweep of sizes.
    Accuracy(AccuracyArgs),
    /// Stream compaction: keep the elements above a threshold, the non-zero ones, or those with a
    /// non-zero flag; check against the CPU; time against the same-run copy (and CUB's
    /// DeviceSelect::If with --baseline).
    Compact(app_commands::CompactArgs),
    /// LSD radix sort of random keys (u32, i32, u64, i64, f32, f64), optionally with u32 values;
    /// checked against a stable CPU sort, timed against CUB's DeviceRadixSort with --baseline.
    Sort(app_commands::SortArgs),
    /// Histogram of N uniform values in B bins over [lo, hi): counts, bin starts and the stable
    /// counting-sort permutation, checked against the CPU.
    Histogram(app_commands::HistogramArgs),
    /// COO -> CSR row offsets of a generated sparse matrix with empty rows, and back to COO.
    Csr(app_commands::CsrArgs),
    /// Segmented scan of N elements with random segment heads (or rows of --rows-of elements:
    /// the batched scan along the rows of a row-major matrix), checked against the CPU.
    Segmented(app_commands::SegmentedArgs),
    /// Linear recurrence x[t] = a[t]*x[t-1] + b[t] (f32 or f64) as a scan of affine maps, checked
    /// against the sequential loop.
    Recurrence(app_commands::RecurrenceArgs),
    /// Batched scan of a row-major ROWS x COLS matrix along either axis (--axis 1: every row,
    /// --axis 0: down every column), checked against the CPU.
    Batched(app_commands::BatchedArgs),
    /// Diagnostic: the u32 add single-pass scan with every tile's timestamps (claim, loads,
    /// publish, look-back, stores), summarized per phase; checked against the CPU.
    Timeline(app_commands::TimelineArgs),
}

#[derive(Args)]
struct AccuracyArgs {
    /// Float types, comma-separated.
    #[arg(long, default_value = "f32", value_delimiter = ',', value_parser = ["f32", "f64"])]
    types: Vec<String>,
    /// Sizes, as for `bench`.
    #[arg(long, default_value = "2^10..2^30")]
    sizes: String,
    /// Exponent step of a `2^a..2^b` size range.
    #[arg(long, default_value_t = 2)]
    step: u32,
    /// Value ranges `lo:hi` (uniform in [lo, hi)), comma-separated.
    #[arg(long, default_value = "-1:1,0:1", value_delimiter = ',', allow_hyphen_values = true, value_parser = parse_range)]
    ranges: Vec<(f64, f64)>,
    /// Use the deterministic single-pass order instead of the default.
    #[arg(long)]
    deterministic: bool,
    /// Seed of the generated inputs.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Where accuracy.csv goes.
    #[arg(long, default_value = "results")]
    out: PathBuf,
}

/// Parses `lo:hi` with lo < hi, both finite.
pub(crate) fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("`{s}` is not a range lo:hi with lo < hi (example: -1:1)");
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let (a, b): (f64, f64) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
    if a.is_finite() && b.is_finite() && a < b {
        Ok((a, b))
    } else {
        Err(bad())
    }
}

#[derive(Args)]
struct PlotArgs {
    /// A bench.csv written by `bench`.
    csv: std::path::PathBuf,
    /// torch/CuPy CSV from the same run, to add to the plot.
    #[arg(long)]
    peers: Option<std::path::PathBuf>,
    /// Where to write the PNG.
    #[arg(long, default_value = "results/bench.png")]
    out: std::path::PathBuf,
    /// Plot title.
    #[arg(long, default_value = "scan GB/s vs n")]
    title: String,
}

/// How the strategies run: options shared by `scan` and `bench`.
#[derive(Args)]
struct StrategyArgs {
    /// How the hierarchical strategy combines tile results.
    #[arg(long, default_value = "reduce-then-scan", value_parser = ["reduce-then-scan", "scan-then-add"])]
    propagation: String,
    /// Single-pass: memory ordering of the tile-status words (a tuning knob; see README).
    #[arg(long, default_value = "relaxed", value_parser = ["relaxed", "acq-rel"])]
    status_ordering: String,
    /// Single-pass: nanoseconds the look-back sleeps between polls (default: tuning table).
    #[arg(long)]
    backoff_ns: Option<u32>,
    /// Single-pass: one fixed combine order, so float results are bitwise reproducible (and
    /// checked bit for bit against the CPU replica of that order).
    #[arg(long)]
    deterministic: bool,
    /// Single-pass: `on` runs the pipelined kernel (a persistent grid of
    /// warp roles), `off` the one-tile-per-block kernel, `auto` picks by size, type and operator.
    #[arg(long, default_value = "auto", value_parser = ["auto", "on", "off"])]
    pipelined: String,
}

impl StrategyArgs {
    fn pipelined(&self) -> Option<bool> {
        match self.pipelined.as_str() {
            "on" => Some(true),
            "off" => Some(false),
            _ => None,
        }
    }

    fn propagation(&self) -> Propagation {
        Propagation::parse(&self.propagation).expect("clap checked the propagation")
    }

    fn status_ordering(&self) -> StatusOrdering {
        StatusOrdering::parse(&self.status_ordering).expect("clap checked the ordering")
    }
}

#[derive(Args)]
struct BenchArgs {
    /// Element types, comma-separated.
    #[arg(long, default_value = "u32,f32,u64,f64", value_delimiter = ',', value_parser = type_values())]
    types: Vec<String>,
    /// Operators, comma-separated.
    #[arg(long, default_value = "add", value_delimiter = ',', value_parser = op_values())]
    ops: Vec<String>,
    /// Algorithms, comma-separated (as for `scan --algo`).
    #[arg(long, default_value = "single-pass,hierarchical", value_delimiter = ',', value_parser = algo_values())]
    algos: Vec<String>,
    /// Sizes: a range of powers of two `2^10..2^30` (every --step-th exponent) or a list `1e6,2^20`.
    #[arg(long, default_value = "2^10..2^30")]
    sizes: String,
    /// Exponent step of a `2^a..2^b` size range.
    #[arg(long, default_value_t = 2)]
    step: u32,
    /// Timed runs per configuration (the median is reported), after a checked warm-up run.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    iters: u32,
    /// Exclusive scans.
    #[arg(long)]
    exclusive: bool,
    /// CSV written by ../shared/bench/cub_baseline.cu in the same run: adds CUB and the ratio.
    #[arg(long)]
    baseline: Option<std::path::PathBuf>,
    /// CSV written by ../shared/bench/peers.py (torch, CuPy) in the same run: adds them to the plot.
    #[arg(long)]
    peers: Option<std::path::PathBuf>,
    /// Where bench.csv, bench.json and bench.png go.
    #[arg(long, default_value = "results")]
    out: std::path::PathBuf,
    #[command(flatten)]
    strategy: StrategyArgs,
    /// Seed of the generated inputs.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// Parses `2^a..2^b` (every `step`-th exponent) or a comma-separated list of counts.
fn parse_sizes(s: &str, step: u32) -> Result<Vec<u64>, String> {
    if let Some((a, b)) = s.split_once("..") {
        let exp = |t: &str| t.trim().strip_prefix("2^").and_then(|e| e.parse::<u32>().ok());
        let (Some(a), Some(b)) = (exp(a), exp(b)) else {
            return Err(format!("`{s}`: a range is written 2^a..2^b"));
        };
        if a > b || b > 40 || step == 0 {
            return Err(format!("`{s}`: need a <= b <= 40 and --step >= 1"));
        }
        return Ok((a..=b).step_by(step as usize).map(|e| 1u64 << e).collect());
    }
    s.split(',').map(parse_count).collect()
}

pub(crate) fn type_values() -> Vec<PossibleValue> {
    ElemType::ALL.iter().map(|t| PossibleValue::new(t.name())).collect()
}

fn op_values() -> Vec<PossibleValue> {
    Op::ALL.iter().map(|o| PossibleValue::new(o.name()).help(o.describe())).collect()
}

fn algo_values() -> Vec<PossibleValue> {
    Algorithm::choices().into_iter().map(|(name, help)| PossibleValue::new(name).help(help)).collect()
}

#[derive(Args)]
struct ScanArgs {
    /// Number of elements: 100000000, 1e8 or 2^28 (optional when --input gives the data).
    #[arg(value_parser = parse_count)]
    n: Option<u64>,
    /// Element type (default u32; a .npy input brings its own).
    #[arg(long = "type", value_parser = type_values())]
    ty: Option<String>,
    /// Operator.
    #[arg(long, default_value = "add", value_parser = op_values())]
    op: String,
    /// Exclusive scan (element i gets the combination of elements 0..i).
    #[arg(long)]
    exclusive: bool,
    /// Initial value combined in front of the first element (default: the operator's identity).
    #[arg(long, allow_hyphen_values = true)]
    init: Option<String>,
    /// Algorithm. A block algorithm name selects the hierarchical strategy with that block scan.
    #[arg(long, default_value = "single-pass", value_parser = algo_values())]
    algo: String,
    #[command(flatten)]
    strategy: StrategyArgs,
    /// Scan the buffer in place (input and output the same).
    #[arg(long)]
    in_place: bool,
    /// Seed of the generated input.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Timed runs (the median is reported), after one warm-up.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    iters: u32,
    /// Print the shared array after every round of a one-block scan (kogge-stone, blelloch,
    /// brent-kung and their variants; N <= 1024), read back from the GPU kernel.
    #[arg(long)]
    trace: bool,
    /// Input instead of generated values: a .npy file, a raw little-endian file (with --type),
    /// or comma-separated values. N, when given, must match its length.
    #[arg(long, allow_hyphen_values = true)]
    input: Option<String>,
    /// Write the result to this .npy or raw file (only once checked; atomically).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Replace an existing --output file.
    #[arg(long)]
    force: bool,
}

/// Where the scanned values come from.
enum Source {
    Generated,
    List(String),
    File(PathBuf),
}

impl Source {
    /// `--input` names a file when one exists there or it ends in .npy/.bin/.raw; otherwise it
    /// is a list of values.
    fn of(input: &Option<String>) -> Source {
        match input {
            None => Source::Generated,
            Some(s) => {
                let p = PathBuf::from(s);
                let file_like = matches!(p.extension().and_then(|e| e.to_str()), Some("npy" | "bin" | "raw"));
                if p.is_file() || file_like {
                    Source::File(p)
                } else {
                    Source::List(s.clone())
                }
            }
        }
    }
}

/// Parses `100000000`, `1e8`, `2^28` or `1_000_000`.
pub(crate) fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let bad = || format!("`{s}` is not a count (examples: 100000000, 1e8, 2^28)");
    if let Some((b, e)) = t.split_once('^') {
        let (b, e): (u64, u32) = (b.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?);
        return b.checked_pow(e).ok_or_else(bad);
    }
    if let Some((m, e)) = t.split_once(['e', 'E']) {
        let (m, e): (u64, u32) = (m.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?);
        return 10u64.checked_pow(e).and_then(|p| p.checked_mul(m)).ok_or_else(bad);
    }
    t.parse().map_err(|_| bad())
}

/// Calls `f::<T>(&args)` with the element type named by `args.ty`.
macro_rules! typed {
    ($args:expr, $($f:ident)::+) => {{
        let ty = ElemType::parse(&$args.ty).expect("clap checked the type");
        with_elem_type!(ty, T => $($f)::+::<T>(&$args))
    }};
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scan(args) => run_scan(args),
        Command::Bench(args) => run_bench(args),
        Command::Plot(args) => run_plot(args),
        Command::Accuracy(args) => run_accuracy(args),
        Command::Compact(args) => typed!(args, app_commands::compact),
        Command::Sort(args) => typed!(args, app_commands::sort),
        Command::Histogram(args) => typed!(args, app_commands::histogram),
        Command::Csr(args) => app_commands::csr(&args),
        Command::Timeline(args) => app_commands::timeline(&args),
        Command::Recurrence(args) => match args.ty.as_str() {
            "f32" => app_commands::recurrence::<f32>(&args),
            _ => app_commands::recurrence::<f64>(&args),
        },
        Command::Batched(args) => typed!(args, app_commands::batched),
        Command::Segmented(args) => typed!(args, app_commands::segmented),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_scan(args: ScanArgs) -> Result<bool, Error> {
    let requested = args.ty.as_deref().map(|t| ElemType::parse(t).expect("clap checked the type"));
    let op = Op::parse(&args.op).expect("clap checked the operator");
    let algorithm = Algorithm::parse(&args.algo, args.strategy.propagation()).expect("clap checked the algorithm");
    let source = Source::of(&args.input);
    let ty = match &source {
        Source::File(path) => gpu_scan::io::input_type(path, requested)?,
        _ => requested.unwrap_or(ElemType::U32),
    };
    if !op.supports(ty) {
        return Err(gpu_scan::element::unsupported(op, ty));
    }
    if let Some(out) = &args.output {
        gpu_scan::io::check_writable(out, args.force)?;
    }
    with_elem_type!(ty, T => scan_typed::<T>(&args, &source, op, algorithm))
}

fn parse_init<T: Element>(s: &Option<String>) -> Result<Option<T>, Error> {
    s.as_ref()
        .map(|v| {
            v.parse::<T>().map_err(|_| Error::invalid(format!("--init `{v}` is not a valid {} value", T::TYPE.name())))
        })
        .transpose()
}

fn scan_typed<T: Element>(args: &ScanArgs, source: &Source, op: Op, algorithm: Algorithm) -> Result<bool, Error> {
    let init = parse_init::<T>(&args.init)?;
    let given: Option<Vec<T>> = match source {
        Source::Generated => None,
        Source::List(s) => Some(input::parse_list::<T>(s).map_err(Error::invalid)?),
        Source::File(path) => Some(gpu_scan::io::read::<T>(path)?),
    };
    let n = match (&given, args.n) {
        (Some(v), Some(n)) if v.len() as u64 != n => {
            return Err(Error::invalid(format!("N is {n} but --input has {} values", v.len())));
        }
        (Some(v), _) => v.len() as u64,
        (None, Some(n)) => n,
        (None, None) => return Err(Error::invalid("give N, the number of elements, or --input")),
    };
    let n = usize::try_from(n).map_err(|_| Error::invalid("N does not fit this machine's memory"))?;
    if args.trace {
        let block = match algorithm {
            Algorithm::Hierarchical { block, .. } => block,
            _ => {
                return Err(Error::invalid(
                    "--trace needs a block algorithm: --algo kogge-stone, blelloch or brent-kung",
                ))
            }
        };
        let data = given.unwrap_or_else(|| input::generate::<T>(op, args.seed, n));
        return print_trace(&Gpu::new(0)?, block, op, &data);
    }

    let gpu = Gpu::new(0)?;
    let info = gpu.info();
    println!(
        "device: {} ({} SMs, compute {}.{}, {:.0} GiB)",
        info.name,
        info.multiprocessors,
        info.compute_capability.0,
        info.compute_capability.1,
        info.total_memory as f64 / (1u64 << 30) as f64
    );
    let opts = ScanOptions::new(op)
        .exclusive(args.exclusive)
        .init(init)
        .algorithm(algorithm)
        .status_ordering(args.strategy.status_ordering())
        .backoff_ns(args.strategy.backoff_ns)
        .deterministic(args.strategy.deterministic)
        .pipelined(args.strategy.pipelined());
    let kind = if args.exclusive { "exclusive" } else { "inclusive" };
    println!(
        "scan: n={n} {} {} {kind}{}{}, {}{}",
        T::TYPE.name(),
        op.name(),
        init.map(|v| format!(" init={v}")).unwrap_or_default(),
        if args.in_place { " in place" } else { "" },
        algorithm.name(),
        if opts.deterministic { " (deterministic)" } else { "" }
    );

    let bytes = n as u64 * T::TYPE.size() as u64;
    let temp_bytes = gpu.temp_bytes::<T>(n as u64, algorithm);
    let buffers = 2 * bytes;
    gpu.check_memory("the input and output buffers and temporary storage", buffers + temp_bytes)?;

    let started = Instant::now();
    let data = match given {
        Some(v) => v,
        None => input::generate::<T>(op, args.seed, n),
    };
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "scan input", &data)?;
    let mut d_out = gpu.alloc_zeros::<T>(&stream, "scan output", n)?;
    let mut temp = TempStorage::new();
    let prep_s = started.elapsed().as_secs_f64();

    let (copy, _) =
        bench::median_ms(args.iters, || gpu.time_ms(&stream, || Ok(stream.memcpy_dtod(&d_in, &mut d_out)?)))?;
    let (scan, scan_min) = bench::median_ms(args.iters, || {
        if args.in_place {
            stream.memcpy_dtod(&d_in, &mut d_out)?;
            gpu.time_ms(&stream, || gpu.scan_in_place(&stream, &mut d_out, &opts, &mut temp))
        } else {
            gpu.time_ms(&stream, || gpu.scan(&stream, &d_in, &mut d_out, &opts, &mut temp))
        }
    })?;
    let got = gpu.download(&stream, &d_out)?;

    let gbps = |ms: f64| 2.0 * bytes as f64 / (ms * 1e-3) / 1e9;
    println!(
        "time: {scan:.4} ms (median of {}, min {:.4}), {:.1} GB/s, {:.1}% of a device copy of the same bytes ({copy:.4} ms, {:.1} GB/s)",
        args.iters,
        scan_min,
        gbps(scan),
        100.0 * copy / scan,
        gbps(copy)
    );

    let checked = Instant::now();
    let (verdict, replicated) = verify::verify_run(&opts, &data, &got)?;
    let check_s = checked.elapsed().as_secs_f64();
    let err = verdict.max_rel_error.map(|e| format!(", max error {e:.2e} of the magnitude sum")).unwrap_or_default();
    if verdict.passed() {
        println!(
            "check: {} elements against the CPU reference{err}{} (input {prep_s:.1} s, check {check_s:.1} s): PASS",
            verdict.checked,
            if replicated { ", bit-identical to the CPU replica of the deterministic order" } else { "" }
        );
        if let Some(out) = &args.output {
            gpu_scan::io::write(out, &got, args.force)?;
            println!("wrote {}", out.display());
        }
    } else {
        let f = verdict.first.as_ref().expect("a failed check names its first mismatch");
        println!(
            "check: {} of {} elements wrong, first at {}: expected {}, got {}{err}: FAIL",
            verdict.wrong, verdict.checked, f.index, f.expected, f.got
        );
        if let Some(out) = &args.output {
            println!("{} not written: the result failed its check", out.display());
        }
    }
    Ok(verdict.passed())
}

fn run_bench(args: BenchArgs) -> Result<bool, Error> {
    let propagation = args.strategy.propagation();
    let cfg = BenchConfig {
        types: args.types.iter().map(|t| ElemType::parse(t).expect("clap checked the type")).collect(),
        ops: args.ops.iter().map(|o| Op::parse(o).expect("clap checked the operator")).collect(),
        algorithms: args
            .algos
            .iter()
            .map(|a| (a.clone(), Algorithm::parse(a, propagation).expect("clap checked the algorithm")))
            .collect(),
        sizes: parse_sizes(&args.sizes, args.step).map_err(Error::invalid)?,
        iters: args.iters,
        seed: args.seed,
        exclusive: args.exclusive,
        status_ordering: args.strategy.status_ordering(),
        backoff_ns: args.strategy.backoff_ns,
        deterministic: args.strategy.deterministic,
        pipelined: args.strategy.pipelined(),
    };
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let peers = args.peers.as_deref().map(Baseline::read).transpose()?;
    let gpu = Gpu::new(0)?;
    let info = gpu.info();
    println!("device: {} ({} SMs)", info.name, info.multiprocessors);
    let bar = indicatif::ProgressBar::new(1);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {msg}")
            .expect("a valid progress template"),
    );
    let rows = bench::run(&gpu, &cfg, cub.as_ref(), |done, total, label| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(label.to_string());
    });
    bar.finish_and_clear();
    let rows = rows?;
    print!("{}", bench::table(&rows));
    let command: Vec<String> = std::env::args().collect();
    let title = format!("{} ({} SMs): scan GB/s vs n", info.name, info.multiprocessors);
    for p in bench::write(&args.out, &rows, peers.as_ref(), &title)? {
        println!("wrote {}", p.display());
    }
    println!("command: {}", command.join(" "));
    Ok(rows.iter().all(|r| r.check == "PASS"))
}

fn run_accuracy(args: AccuracyArgs) -> Result<bool, Error> {
    let sizes = parse_sizes(&args.sizes, args.step).map_err(Error::invalid)?;
    let gpu = Gpu::new(0)?;
    println!("device: {}", gpu.info().name);
    println!("{}", accuracy::header());
    let mut rows = Vec::new();
    for ty in &args.types {
        for &(lo, hi) in &args.ranges {
            for &n in &sizes {
                let n = usize::try_from(n).map_err(|_| Error::invalid("a size does not fit this machine's memory"))?;
                let row = match ty.as_str() {
                    "f32" => accuracy::study::<f32>(&gpu, n, lo, hi, args.seed, args.deterministic),
                    _ => accuracy::study::<f64>(&gpu, n, lo, hi, args.seed, args.deterministic),
                };
                match row {
                    Ok(r) => {
                        println!("{}", accuracy::line(&r));
                        rows.push(r);
                    }
                    Err(e @ Error::OutOfMemory { .. }) => println!("n={n}: skipped: {e}"),
                    Err(e) => return Err(e),
                }
            }
        }
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Error::invalid(format!("cannot create {}: {e}", args.out.display())))?;
    let path = args.out.join("accuracy.csv");
    accuracy::write_csv(&path, &rows)?;
    println!("wrote {}", path.display());
    Ok(true)
}

fn run_plot(args: PlotArgs) -> Result<bool, Error> {
    let rows = bench::read_csv(&args.csv)?;
    let peers = args.peers.as_deref().map(Baseline::read).transpose()?;
    print!("{}", bench::table(&rows));
    bench::plot_png(&args.out, &rows, peers.as_ref(), &args.title)?;
    println!("wrote {}", args.out.display());
    Ok(true)
}

fn print_trace<T: Element>(gpu: &Gpu, block: BlockAlgo, op: Op, data: &[T]) -> Result<bool, Error> {
    let trace = gpu.trace(block, op, data)?;
    let list = |v: &[T]| format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "));
    println!(
        "{} trace of {} ({} {}), read back from the GPU after every round:",
        block.name(),
        list(data),
        T::TYPE.name(),
        op.name()
    );
    let width = block.trace_width(data.len() as u32) as usize;
    if width > data.len() {
        println!("  (the tree spans {width} entries; entries past {} hold the identity)", data.len());
    }
    for step in &trace.steps {
        let stride = if step.phase == "zero-root" { String::new() } else { format!("stride {}", step.stride) };
        println!("  {:<9} {:<10} {}", step.phase, stride, list(&step.state));
    }
    println!("  inclusive: {}", list(&trace.inclusive));
    println!("  exclusive: {}", list(&trace.exclusive));
    let m = data.len() as u32;
    println!("  work: {} combines, {} barrier rounds", block.combines(m), block.barriers(m));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn counts() {
        assert_eq!(parse_count("100000000"), Ok(100_000_000));
        assert_eq!(parse_count("1e8"), Ok(100_000_000));
        assert_eq!(parse_count("2^28"), Ok(1 << 28));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("abc").is_err());
        assert!(parse_count("2^99").is_err());
    }

    #[test]
    fn sizes() {
        use super::parse_sizes;
        assert_eq!(parse_sizes("2^10..2^16", 2), Ok(vec![1 << 10, 1 << 12, 1 << 14, 1 << 16]));
        assert_eq!(parse_sizes("1e3,2^4", 1), Ok(vec![1000, 16]));
        assert!(parse_sizes("2^20..2^10", 1).is_err());
        assert!(parse_sizes("5..9", 1).is_err());
    }
}
