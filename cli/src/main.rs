//! `host`, gpu-scan's command line: a thin layer over the `gpu_scan` library. Every subcommand
//! checks its arguments, runs one experiment (`experiment`) and prints PASS or FAIL.

mod args;
mod commands;
mod error_study;
mod experiment;
mod io;
mod plot;
mod sweep;

use clap::{Parser, Subcommand};
use commands::*;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "host", version, about = "Parallel prefix sums (scans) on NVIDIA GPUs, kernels written in Rust")]
struct Cli {
    #[command(flatten)]
    global: args::Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan N seeded elements (or a file's) on the GPU, check against the CPU, print time, GB/s
    /// and percent of a same-run device copy, then PASS or FAIL.
    Scan(scan::ScanArgs),
    /// Sweep sizes, types and algorithms: table, CSV, JSON and PNG plot against the same-run
    /// copy and CUB.
    Bench(bench::BenchArgs),
    /// Redraw the table and plot of a bench.csv (no GPU needed).
    Plot(bench::PlotArgs),
    /// Float sum error study: worst error of the GPU scan and of the sequential CPU fold
    /// against exact sums, for uniform values over a sweep of sizes.
    Accuracy(accuracy::AccuracyArgs),
    /// Stream compaction: keep the elements above a threshold, the non-zero ones, or those with a
    /// non-zero flag.
    Compact(compact::CompactArgs),
    /// LSD radix sort of random keys, optionally with u32 values, against a stable CPU sort.
    Sort(sort::SortArgs),
    /// Histogram of N uniform values in B bins over [lo, hi): counts, bin starts and the stable
    /// counting-sort permutation.
    Histogram(sort::HistogramArgs),
    /// COO -> CSR row offsets of a generated sparse matrix with empty rows, and back to COO.
    Csr(csr::CsrArgs),
    /// Segmented scan of N elements with random segment heads (or rows of --rows-of elements).
    Segmented(segmented::SegmentedArgs),
    /// Batched scan of a row-major ROWS x COLS matrix down every column or along every row.
    Batched(segmented::BatchedArgs),
    /// Linear recurrence x[t] = a[t]*x[t-1] + b[t] (f32 or f64) as a scan of affine maps.
    Recurrence(recurrence::RecurrenceArgs),
    /// Diagnostic: the u32 add single-pass scan with every tile's timestamps, per phase.
    Timeline(timeline::TimelineArgs),
    /// docs/performance.md, its CSV and plot, from one benchmark run's results (no GPU needed).
    Report(report::ReportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let g = &cli.global;
    let result = match &cli.command {
        Command::Scan(a) => scan::run(a, g),
        Command::Bench(a) => bench::run(a, g),
        Command::Plot(a) => bench::plot(a),
        Command::Accuracy(a) => accuracy::run(a, g),
        Command::Compact(a) => compact::run(a, g),
        Command::Sort(a) => sort::sort(a, g),
        Command::Histogram(a) => sort::histogram(a, g),
        Command::Csr(a) => csr::run(a, g),
        Command::Segmented(a) => segmented::segmented(a, g),
        Command::Batched(a) => segmented::batched(a, g),
        Command::Recurrence(a) => recurrence::run(a, g),
        Command::Timeline(a) => timeline::run(a, g),
        Command::Report(a) => report::run(a),
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
