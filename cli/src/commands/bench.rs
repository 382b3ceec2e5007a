//! `bench`: the scan sweep over types, operators, algorithms and sizes, with the same-run copy
//! and CUB, torch and CuPy baselines; and `plot`, which redraws a sweep without a GPU.

use super::scan::Strategy;
use crate::args::{parse_count, parse_sizes, Algo, Global, Operator, Runs, Type};
use crate::sweep::{self, Baseline, BenchConfig};
use crate::{experiment, plot};
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
    #[arg(long, default_value_t = 2)]
    step: u32,
    /// Exclusive scans.
    #[arg(long)]
    exclusive: bool,
    #[command(flatten)]
    strategy: Strategy,
    #[command(flatten)]
    runs: Runs,
    /// CSV of the CUB baseline (bench/baselines/cub.cu) from the same run: adds CUB and the ratio.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// CSV of bench/baselines/peers.py (torch, CuPy) from the same run: adds them to the plot.
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Where bench.csv, bench.json and bench.png go.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Instead of the sweep: weak and strong scaling of the `u32` add scan across these GPUs
    /// (`all` or a list like `0,1`), from one GPU up to all of them.
    #[arg(long)]
    gpus: Option<super::multi::Gpus>,
    /// Weak scaling: elements on each GPU.
    #[arg(long, default_value = "2^30", value_parser = parse_count)]
    per_gpu: u64,
    /// Strong scaling: elements in all.
    #[arg(long, default_value = "2^31", value_parser = parse_count)]
    total: u64,
}

pub fn run(args: &BenchArgs, global: &Global) -> Result<bool> {
    if let Some(gpus) = &args.gpus {
        global.resolve()?;
        return super::multi::scaling(global, gpus, args.per_gpu, args.total, args.runs.iters);
    }
    let sizes = parse_sizes(&args.sizes, args.step)?;
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let peers = args.peers.as_deref().map(Baseline::read).transpose()?;
    global.resolve()?;
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
    let gpu = experiment::open(global)?;
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
    print!("{}", sweep::table(&rows));
    let title = format!("{} ({} SMs): scan GB/s vs n", info.name, info.multiprocessors);
    let mut written = sweep::write(&args.out, &rows)?;
    let png = args.out.join("bench.png");
    plot::plot_png(&png, &rows, peers.as_ref(), &title)?;
    written.push(png);
    for p in written {
        println!("wrote {}", p.display());
    }
    println!("command: {}", std::env::args().collect::<Vec<_>>().join(" "));
    Ok(rows.iter().all(|r| r.check == "PASS"))
}

#[derive(Args)]
pub struct PlotArgs {
    /// A bench.csv written by `bench`.
    csv: PathBuf,
    /// torch/CuPy CSV from the same run, to add to the plot.
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Where to write the PNG.
    #[arg(long, default_value = "results/bench.png")]
    out: PathBuf,
    /// Plot title.
    #[arg(long, default_value = "scan GB/s vs n")]
    title: String,
}

pub fn plot(args: &PlotArgs) -> Result<bool> {
    let rows = sweep::read_csv(&args.csv)?;
    let peers = args.peers.as_deref().map(Baseline::read).transpose()?;
    print!("{}", sweep::table(&rows));
    plot::plot_png(&args.out, &rows, peers.as_ref(), &args.title)?;
    println!("wrote {}", args.out.display());
    Ok(true)
}
