//! `scan`: one checked, timed scan of generated values, a list, or a file; and `--trace`, the
//! shared array of a one-block scan after every round.

use super::multi::{self, Placement};
use super::streamed::{FileScan, HostScan};
use super::widening::{InputType, WideningRun};
use crate::args::{host_len, positive, Algo, Global, Kernel, Operator, OrderingArg, PropagationArg, Runs, WideType};
use crate::experiment::{self, Check, Experiment, Needs};
use crate::io::{self, FileElement};
use crate::memory::{self, bytes_of, total};
use crate::out::outln;
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::plan::scan as planner;
use gpu_scan::reference::verify;
use gpu_scan::{
    input, with_elem_type, Algorithm, BlockAlgo, ElemType, Error, Gpu, Op, Result, ScanOptions, TempStorage, Tuning,
};
use std::path::{Path, PathBuf};

/// How the strategies run: options shared by `scan` and `bench`.
#[derive(Args, Clone, Copy, Debug)]
pub struct Strategy {
    /// How the hierarchical strategy combines tile results.
    #[arg(long, default_value = "reduce-then-scan")]
    pub propagation: PropagationArg,
    /// Single-pass: memory ordering of the tile-status words.
    #[arg(long, default_value = "relaxed")]
    pub status_ordering: OrderingArg,
    /// Single-pass: nanoseconds the look-back sleeps between polls (default: the tuning's).
    #[arg(long)]
    pub backoff_ns: Option<u32>,
    /// Single-pass: one fixed combine order, so float results are bitwise reproducible (and
    /// checked bit for bit against the CPU replica of that order).
    #[arg(long)]
    pub deterministic: bool,
    /// Single-pass: the kernel (auto picks by size, type and operator).
    #[arg(long, default_value = "auto")]
    pub kernel: Kernel,
}

impl Strategy {
    /// The options of a scan with `op` by `algo`.
    pub fn options<T>(&self, op: Op, algo: Algo) -> ScanOptions<T> {
        ScanOptions::new(op)
            .algorithm(algo.algorithm(self.propagation.0))
            .status_ordering(self.status_ordering.0)
            .backoff_ns(self.backoff_ns)
            .deterministic(self.deterministic)
            .kernel(self.kernel.0)
    }
}

#[derive(Args)]
pub struct ScanArgs {
    /// Number of elements: 100000000, 1e8, 1.5e3 or 2^28 (optional when --input gives the data).
    #[arg(value_parser = positive)]
    n: Option<u64>,
    /// Element type (default u32; a .npy input brings its own). With --output-type, the narrow
    /// type read: u8 (the default), i8, u16, i16, u32, i32, f16, bf16 or bool.
    #[arg(long = "type", value_name = "TYPE")]
    ty: Option<InputType>,
    /// Sum into this wider type, reading each element at its own width: u8, i8, u16, i16 and
    /// bool into u32, u64 or i64; u32 and i32 into u64 or i64; f16 and bf16 into f32.
    #[arg(long, value_name = "TYPE")]
    output_type: Option<WideType>,
    /// The operator combining the elements (each is defined for the types it names).
    #[arg(long, default_value = "add")]
    op: Operator,
    /// Exclusive scan (element i gets the combination of elements 0..i).
    #[arg(long)]
    exclusive: bool,
    /// Initial value combined in front of the first element (default: the operator's identity).
    #[arg(long, allow_hyphen_values = true, value_name = "VALUE")]
    init: Option<String>,
    /// Algorithm; a block algorithm name selects the hierarchical strategy with that block scan.
    #[arg(long, default_value = "single-pass")]
    algo: Algo,
    #[command(flatten)]
    strategy: Strategy,
    /// Scan the buffer in place (input and output the same).
    #[arg(long)]
    in_place: bool,
    #[command(flatten)]
    runs: Runs,
    /// Print the shared array after every round of a one-block scan (kogge-stone, blelloch,
    /// brent-kung and their variants; 1 to 1024 elements), read back from the GPU kernel.
    #[arg(long)]
    trace: bool,
    /// Input instead of generated values: a .npy file, a raw little-endian file (with --type),
    /// or comma-separated values. N, when given, must match its length.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE|VALUES")]
    input: Option<String>,
    /// Write the checked result to this .npy or raw file in an existing folder (atomically;
    /// never a partial file).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Replace an existing --output file.
    #[arg(long)]
    force: bool,
    /// With --input FILE --output FILE (a streamed scan, which holds only the chunks in flight):
    /// the most device memory it uses, like 2GiB or 512MiB (default: half of the free memory).
    #[arg(long, value_parser = crate::args::parse_bytes, value_name = "BYTES")]
    device_memory: Option<u64>,
    /// With --input FILE --output FILE (or --stream): skip the check against the CPU.
    #[arg(long)]
    no_check: bool,
    /// Scan N generated elements held in pinned host memory through the streamed pipeline (the
    /// route of data larger than the device), timed like any scan.
    #[arg(long)]
    stream: bool,
    /// With --stream: the host memory is pageable (a plain allocation), staged through pinned
    /// buffers.
    #[arg(long, requires = "stream")]
    pageable: bool,
    /// Scan across these GPUs over NCCL, the array split evenly: `all` or a list like `0,1`
    /// (single-pass kernels; with one GPU the same code path runs with one rank).
    #[arg(long)]
    gpus: Option<super::multi::Gpus>,
    /// Scan across this many simulated ranks (1 to 1024) on one GPU (the steps of --gpus, the
    /// totals shared by device copies): for testing and measuring the carry logic.
    #[arg(long, conflicts_with = "gpus", value_parser = crate::args::count_in::<u32>(1, 1024))]
    ranks: Option<u32>,
}

/// Where the scanned values come from.
pub(crate) enum Source {
    Generated,
    List(String),
    File(PathBuf),
}

impl Source {
    /// `--input` names a file when something exists there, it names a folder, or it ends in
    /// .npy/.bin/.raw; otherwise it is a list of values.
    pub(crate) fn of(input: &Option<String>) -> Source {
        match input {
            None => Source::Generated,
            Some(s) => {
                let p = PathBuf::from(s);
                let file_like = matches!(p.extension().and_then(|e| e.to_str()), Some("npy" | "bin" | "raw"));
                if p.exists() || file_like || s.contains(std::path::MAIN_SEPARATOR) {
                    Source::File(p)
                } else {
                    Source::List(s.clone())
                }
            }
        }
    }
}

pub fn run(args: &ScanArgs, global: &Global) -> Result<bool> {
    if let Some(output_type) = args.output_type {
        return widen(args, output_type.0, global);
    }
    let (tuning, _) = global.resolve()?;
    let source = Source::of(&args.input);
    let requested = args
        .ty
        .map(|t| {
            t.elem().ok_or_else(|| {
                Error::invalid(format!("--type {} is read only by a widening scan: add --output-type", t.0))
            })
        })
        .transpose()?;
    let ty = match &source {
        Source::File(path) => io::input_type(path, requested)?,
        _ => requested.unwrap_or(ElemType::U32),
    };
    if !args.op.0.supports(ty) {
        return Err(gpu_scan::element::unsupported(args.op.0, ty));
    }
    if let Some(out) = &args.output {
        io::check_writable(out, args.force)?;
    }
    if args.trace && !matches!(args.algo, Algo::Hierarchical(Some(_))) {
        return Err(Error::invalid("--trace needs a block algorithm: --algo kogge-stone, blelloch or brent-kung"));
    }
    if args.gpus.is_some() || args.ranks.is_some() {
        let single = args.algo == Algo::SinglePass && !args.strategy.deterministic;
        if !single || args.in_place || args.trace || args.output.is_some() {
            return Err(Error::invalid(
                "--gpus and --ranks run the single-pass scan from N or --input, without --in-place, --trace, --output or --deterministic",
            ));
        }
    }
    if (args.device_memory.is_some() || args.no_check) && !(args.stream || streams(args, &source)) {
        return Err(Error::invalid(
            "--device-memory and --no-check are for the streamed scan: --stream, or --input FILE --output FILE with the single-pass algorithm, without --in-place, --trace, --gpus or --ranks",
        ));
    }
    if args.in_place && args.algo == Algo::Naive {
        return Err(Error::invalid("the naive scan cannot run in place (every thread reads the whole prefix)"));
    }
    with_elem_type!(ty, T => typed::<T>(args, &source, global, &tuning))
}

/// Whether `args` scan a file into a file by streaming it through the device.
fn streams(args: &ScanArgs, source: &Source) -> bool {
    let plain = !(args.in_place || args.trace || args.gpus.is_some() || args.ranks.is_some());
    matches!(source, Source::File(_)) && args.output.is_some() && args.algo == Algo::SinglePass && plain
}

/// `scan --output-type`: a widening sum, which has no other operator or algorithm.
fn widen(args: &ScanArgs, output_type: ElemType, global: &Global) -> Result<bool> {
    let s = &args.strategy;
    let refused = [
        (args.op.0 != Op::Add, "--op (a widening scan is a sum)"),
        (args.algo != Algo::SinglePass, "--algo"),
        (args.in_place, "--in-place (the output is wider than the input)"),
        (args.trace, "--trace"),
        (args.gpus.is_some() || args.ranks.is_some(), "--gpus and --ranks"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(bad, _)| *bad) {
        return Err(Error::invalid(format!("--output-type runs the widening single-pass sum; it takes no {flag}")));
    }
    let run = WideningRun {
        n: args.n,
        ty: args.ty,
        output_type,
        exclusive: args.exclusive,
        init: args.init.as_deref(),
        deterministic: s.deterministic,
        kernel: s.kernel.0,
        values: Source::of(&args.input),
        output: args.output.as_deref(),
        force: args.force,
        seed: args.runs.seed,
        iters: args.runs.iters,
    };
    super::widening::run(&run, global)
}

fn typed<T: FileElement>(args: &ScanArgs, source: &Source, global: &Global, tuning: &Tuning) -> Result<bool> {
    let op = args.op.0;
    let init = args
        .init
        .as_ref()
        .map(|v| {
            v.parse::<T>().map_err(|_| Error::invalid(format!("--init `{v}` is not a valid {} value", T::TYPE.name())))
        })
        .transpose()?;
    let list: Option<Vec<T>> = match source {
        Source::List(s) => Some(input::parse_list::<T>(s).map_err(Error::invalid)?),
        _ => None,
    };
    let given = match (source, &list) {
        (Source::File(path), _) => Some(io::input_len(path, T::TYPE)?),
        (_, Some(v)) => Some(v.len() as u64),
        _ => None,
    };
    let n = match (given, args.n) {
        (Some(g), Some(n)) if g != n => {
            return Err(Error::invalid(format!("N is {n} but --input has {g} values")));
        }
        (Some(g), _) => g,
        (None, Some(n)) => n,
        (None, None) => return Err(Error::invalid("give N, the number of elements, or --input")),
    };
    let opts = args.strategy.options::<T>(op, args.algo).exclusive(args.exclusive).init(init);
    if args.stream {
        let plain = !(args.in_place || args.trace || args.gpus.is_some() || args.ranks.is_some());
        if given.is_some() || args.output.is_some() || args.algo != Algo::SinglePass || !plain {
            return Err(Error::invalid(
                "--stream scans N generated elements with the single-pass algorithm: no --input, --output, --in-place, --trace, --gpus or --ranks (a file streams with --input FILE --output FILE)",
            ));
        }
        let h = HostScan {
            n,
            seed: args.runs.seed,
            iters: args.runs.iters,
            pageable: args.pageable,
            device_memory: args.device_memory,
            check: !args.no_check,
        };
        return super::streamed::run_host::<T>(global, &h, opts);
    }
    if n == 0 && !args.trace {
        return empty::<T>(&format!("a scan of 0 {}", T::TYPE.name()), args.output.as_deref(), args.force);
    }
    if let (Source::File(input), Some(output), true) = (source, &args.output, streams(args, source)) {
        let f = FileScan { input, output, force: args.force, device_memory: args.device_memory, check: !args.no_check };
        return super::streamed::run::<T>(global, &f, opts);
    }
    let len = host_len(n, "N")?;
    // The values: a list as given, a file read or values generated only once the GPU is open
    // and the memory checked.
    let data = move || -> Result<Vec<T>> {
        match (source, list) {
            (_, Some(v)) => Ok(v),
            (Source::File(path), _) => io::read::<T>(path),
            _ => memory::generate::<T>(op, args.runs.seed, len),
        }
    };
    if args.trace {
        let Algo::Hierarchical(Some(block)) = args.algo else {
            return Err(Error::invalid("--trace needs a block algorithm"));
        };
        planner::trace(T::TYPE, op, block, len)?;
        let gpu = experiment::open(global)?;
        return print_trace(&gpu, block, op, &data()?);
    }
    let placement = match (&args.gpus, args.ranks) {
        (Some(g), _) => Some(Placement::Gpus(g.clone())),
        (None, Some(p)) => Some(Placement::Simulated(p as usize)),
        (None, None) => None,
    };
    let what = format!("a scan of {n} {}", T::TYPE.name());
    let bytes = bytes_of(n, T::TYPE.size() as u64, &what)?;
    // The CPU reference of a float sum or product keeps two f64 per element; the deterministic
    // order's replica one more element.
    let reference = if op.order_sensitive(T::TYPE) { bytes_of(n, 16, &what)? } else { bytes };
    let replica = if args.strategy.deterministic { bytes } else { 0 };
    let host = total(&[bytes, bytes, reference, replica], &what)?;
    if let Some(placement) = &placement {
        let temp = multi::plan(tuning, &opts, n, placement.world())?;
        let needs = Needs { device: total(&[2 * bytes, temp], &what)?, host, what };
        return multi::scan(global, placement, args.runs.iters, &needs, opts, data);
    }
    let request = gpu_scan::plan::scan::ScanRequest { in_place: args.in_place, ..opts.request(n) };
    let (state, scratch) = planner::plan(tuning, &request)?.temp_bytes();
    let needs = Needs { device: total(&[bytes, bytes, state, scratch], &what)?, host, what };
    let make = || -> Result<ScanExperiment<T>> {
        Ok(ScanExperiment {
            data: data()?,
            opts,
            in_place: args.in_place,
            buffers: None,
            temp: TempStorage::new(),
            got: Vec::new(),
            // Generated values round at random; a user's may all round one way.
            tolerance: if given.is_some() { verify::Tolerance::WorstCase } else { verify::Tolerance::Statistical },
        })
    };
    let ran = experiment::run(global, args.runs.iters, &needs, make)?;
    let (got, force) = (&ran.exp.got, args.force);
    let outputs = args.output.iter().map(|p| (p.as_path(), Box::new(move |p: &Path| io::write(p, got, force)) as _));
    io::write_outputs(ran.passed, outputs.collect())?;
    Ok(ran.passed)
}

/// The scan of an empty file (`what`): an empty result, which needs no GPU, written as every
/// checked result is (atomically; over an existing file only with `force`).
pub(crate) fn empty<T: FileElement>(what: &str, output: Option<&Path>, force: bool) -> Result<bool> {
    outln!("{what}: the input holds no elements; the result is empty, and no GPU is needed");
    let passed = experiment::verdict(&Check::new("0 elements", None));
    let outputs = output.iter().map(|&p| (p, Box::new(move |p: &Path| io::write::<T>(p, &[], force)) as _));
    io::write_outputs(passed, outputs.collect())?;
    Ok(passed)
}

/// One scan of `data`: on the device, `(input, output)`.
struct ScanExperiment<T: gpu_scan::Element> {
    data: Vec<T>,
    opts: ScanOptions<T>,
    in_place: bool,
    buffers: Option<(CudaSlice<T>, CudaSlice<T>)>,
    temp: TempStorage,
    got: Vec<T>,
    /// The float tolerance its check uses.
    tolerance: verify::Tolerance,
}

impl<T: gpu_scan::Element> Experiment for ScanExperiment<T> {
    fn title(&self) -> String {
        let o = &self.opts;
        format!(
            "scan: n={} {} {} {}{}{}, {}{}",
            self.data.len(),
            T::TYPE.name(),
            o.op.name(),
            if o.exclusive { "exclusive" } else { "inclusive" },
            o.init.map(|v| format!(" init={v}")).unwrap_or_default(),
            if self.in_place { " in place" } else { "" },
            o.algorithm.name(),
            if o.deterministic { " (deterministic)" } else { "" }
        )
    }

    fn traffic(&self) -> (u64, u64) {
        experiment::read_write_once::<T>(self.data.len())
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        self.buffers = Some(experiment::in_and_out(gpu, &self.data)?);
        Ok(())
    }

    fn reset(&mut self, gpu: &Gpu) -> Result<()> {
        if let (true, Some((d_in, d_out))) = (self.in_place, self.buffers.as_mut()) {
            gpu.stream().memcpy_dtod(d_in, d_out)?;
        }
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let (d_in, d_out) = self.buffers.as_mut().expect("prepared");
        if self.in_place {
            gpu.scan_in_place(&stream, d_out, &self.opts, &mut self.temp)
        } else {
            gpu.scan(&stream, d_in, d_out, &self.opts, &mut self.temp)
        }
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, d_out) = self.buffers.as_ref().expect("prepared");
        self.got = gpu.download(gpu.stream(), d_out)?;
        let (verdict, replicated) =
            verify::verify_run_with(self.tolerance, gpu.tuning(), &self.opts, &self.data, &self.got)?;
        Ok(check_of(&verdict, replicated))
    }
}

/// A scan's check from its verdict, saying when it was bit for bit against the replica.
pub fn check_of(verdict: &verify::Verdict, replicated: bool) -> Check {
    let err = verdict.max_rel_error.map(|e| format!(", max error {e:.2e} of the magnitude sum")).unwrap_or_default();
    let replica = if replicated { ", bit-identical to the CPU replica of the deterministic order" } else { "" };
    let wrong = verdict.first.as_ref().map(|f| {
        format!(
            "{} of {} elements wrong, first at {}: expected {}, got {}",
            verdict.wrong, verdict.checked, f.index, f.expected, f.got
        )
    });
    Check::new(format!("{} elements{err}{replica}", verdict.checked), wrong)
}

fn print_trace<T: gpu_scan::Element>(gpu: &Gpu, block: BlockAlgo, op: Op, data: &[T]) -> Result<bool> {
    let trace = gpu.trace(block, op, data)?;
    let list = |v: &[T]| format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "));
    outln!(
        "{} trace of {} ({} {}), read back from the GPU after every round:",
        block.name(),
        list(data),
        T::TYPE.name(),
        op.name()
    );
    let width = block.trace_width(data.len() as u32) as usize;
    if width > data.len() {
        outln!("  (the tree spans {width} entries; entries past {} hold the identity)", data.len());
    }
    for step in &trace.steps {
        let stride = if step.phase == "zero-root" { String::new() } else { format!("stride {}", step.stride) };
        outln!("  {:<9} {:<10} {}", step.phase, stride, list(&step.state));
    }
    outln!("  inclusive: {}", list(&trace.inclusive));
    outln!("  exclusive: {}", list(&trace.exclusive));
    let m = data.len() as u32;
    outln!("  work: {} combines, {} barrier rounds", block.combines(m), block.barriers(m));
    let algorithm = Algorithm::Hierarchical { block, propagation: Default::default() };
    let mut wrong = None;
    for (exclusive, got) in [(false, &trace.inclusive), (true, &trace.exclusive)] {
        let verdict = verify::verify(op, algorithm, data, exclusive, None, got)?;
        if let Some(f) = verdict.first.filter(|_| wrong.is_none()) {
            let form = if exclusive { "exclusive" } else { "inclusive" };
            wrong = Some(format!(
                "{form}: {} wrong, first at {}: expected {}, got {}",
                verdict.wrong, f.index, f.expected, f.got
            ));
        }
    }
    Ok(experiment::verdict(&Check::new(format!("both scans of {} elements", data.len()), wrong)))
}
