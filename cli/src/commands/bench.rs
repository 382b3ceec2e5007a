//! `bench`: the scan sweep over types, operators, algorithms and sizes, with the same-run copy
//! and CUB, torch and CuPy baselines; and `plot`, which redraws a sweep without a GPU.

use super::scan::Strategy;
use crate::args::{parse_sizes, positive, Algo, Global, Operator, Runs, Type};
use crate::memory;
use crate::out::{out, outln};
use crate::sweep::{self, Baseline, BenchConfig};
use crate::{experiment, io, plot};
use clap::Args;
use gpu_scan::{Error, Result};
use std::path::PathBuf;

#[derive(Args)]
pub struct BenchArgs {
    /// Element types, comma-separated.
    #[arg(long, default_value = "u32,f32,u64,f64", value_delimiter = ',')]
    types: Vec<Type>,
    /// Operators, comma-separated.
    #[arg(long, default_value = "add", value_delimiter = ',')]
    ops: Vec<Operator>,
    /// Algorithms, comma-separated (as for `scan --algo`).
    #[arg(long, default_value = "single-pass,hierarchical", value_delimiter = ',')]
    algos: Vec<Algo>,
    /// Sizes: a range of powers of two `2^10..2^30` (every --step-th exponent) or a list `1e6,2^20`.
    #[arg(long, default_value = "2^10..2^30")]
    sizes: String,
    /// Exponent step of a `2^a..2^b` size range.
    #[arg(long, default_value_t = 2, value_parser = crate::args::count_in::<u32>(1, 40))]
    step: u32,
    /// Exclusive scans.
    #[arg(long)]
    exclusive: bool,
    #[command(flatten)]
    strategy: Strategy,
    #[command(flatten)]
    runs: Runs,
    /// CSV of the CUB baseline (bench/baselines/cub.cu) from the same run: adds CUB and the ratio.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// CSV of bench/baselines/peers.py (torch, CuPy) from the same run: adds them to the plot.
    #[arg(long, value_name = "FILE")]
    peers: Option<PathBuf>,
    /// The folder bench.csv, bench.json and bench.png go to (created where missing).
    #[arg(long, default_value = "results", value_name = "DIR")]
    out: PathBuf,
    /// Replace existing bench.csv, bench.json and bench.png files.
    #[arg(long)]
    force: bool,
    /// Instead of the sweep: weak and strong scaling of the `u32` add scan across these GPUs
    /// (`all` or a list like `0,1`), from one GPU up to all of them.
    #[arg(long)]
    gpus: Option<super::multi::Gpus>,
    /// Weak scaling: elements on each GPU.
    #[arg(long, default_value = "2^30", value_parser = positive)]
    per_gpu: u64,
    /// Strong scaling: elements in all.
    #[arg(long, default_value = "2^31", value_parser = positive)]
    total: u64,
}

pub fn run(args: &BenchArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    if let Some(gpus) = &args.gpus {
        return super::multi::scaling(global, gpus, args.per_gpu, args.total, args.runs.iters);
    }
    let sizes = parse_sizes(&args.sizes, args.step)?;
    let outputs = ["bench.csv", "bench.json", "bench.png"].map(|f| args.out.join(f));
    for path in &outputs {
        io::check_creatable(path, args.force)?;
    }
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let peers = args.peers.as_deref().map(Baseline::read).transpose()?;
    let scans = args
        .algos
        .iter()
        .map(|&a| (a.name().to_string(), args.strategy.options::<()>(gpu_scan::Op::Add, a).exclusive(args.exclusive)))
        .collect();
    let cfg = BenchConfig {
        types: args.types.iter().map(|t| t.0).collect(),
        ops: args.ops.iter().map(|o| o.0).collect(),
        scans,
        sizes,
        iters: args.runs.iters,
        seed: args.runs.seed,
    };
    let (host, device) = sweep::plan(&tuning, &cfg)?;
    let what = "the sweep's largest row";
    memory::check(what, host)?;
    let gpu = experiment::open(global)?;
    gpu.check_memory(what, device)?;
    let info = gpu.info();
    let bar = indicatif::ProgressBar::new(1);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {msg}")
            .map_err(|e| Error::invalid(e.to_string()))?,
    );
    let rows = sweep::run(&gpu, &cfg, cub.as_ref(), |done, total, label| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(label.to_string());
    });
    bar.finish_and_clear();
    let rows = rows?;
    let title = format!("{} ({} SMs): scan GB/s vs n", info.name, info.multiprocessors);
    let [csv, json, png] = &outputs;
    sweep::write_csv(csv, &rows, args.force)?;
    sweep::write_json(json, &rows, args.force)?;
    plot::write_png(png, args.force, &rows, peers.as_ref(), &title)?;
    out!("{}", sweep::table(&rows));
    for p in &outputs {
        outln!("wrote {}", p.display());
    }
    outln!("command: {}", std::env::args().collect::<Vec<_>>().join(" "));
    Ok(rows.iter().all(|r| r.check == "PASS"))
}

#[derive(Args)]
pub struct PlotArgs {
    /// A bench.csv written by `bench`.
    csv: PathBuf,
    /// torch/CuPy CSV from the same run, to add to the plot.
    #[arg(long, value_name = "FILE")]
    peers: Option<PathBuf>,
    /// Where to write the PNG (its folder is created where missing).
    #[arg(long, default_value = "results/bench.png", value_name = "FILE")]
    out: PathBuf,
    /// Replace an existing PNG.
    #[arg(long)]
    force: bool,
    /// Plot title.
    #[arg(long, default_value = "scan GB/s vs n")]
    title: String,
}

pub fn plot(args: &PlotArgs) -> Result<bool> {
    io::check_creatable(&args.out, args.force)?;
    let rows = sweep::read_csv(&args.csv)?;
    let peers = args.peers.as_deref().map(Baseline::read).transpose()?;
    plot::write_png(&args.out, args.force, &rows, peers.as_ref(), &args.title)?;
    out!("{}", sweep::table(&rows));
    outln!("wrote {}", args.out.display());
    Ok(true)
}
