//! `host`, gpu-scan's command line: a thin layer over the `gpu_scan` library. Every subcommand
//! checks its arguments, output paths and the plan of its request before it opens the GPU, runs
//! one experiment (`experiment`) and prints PASS or FAIL; every error is one line on stderr, with
//! an exit status that says what kind of error it was.

mod args;
mod commands;
mod error_study;
mod experiment;
mod io;
mod memory;
mod out;
mod plot;
mod sweep;

use clap::{Parser, Subcommand};
use commands::*;
use gpu_scan::Error;
use out::out;
use std::process::ExitCode;

/// The exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "\
Exit status:
  0    PASS: every check passed (or, for plot and report, the files were written)
  1    FAIL: a result was wrong, or the GPU failed during the run
  2    usage or bad input: an argument, an input file, an output path, or a request too large
       for the host's or the device's memory
  3    no CUDA driver or no CUDA device (for --gpus, no NCCL)
  130  interrupted (SIGINT, SIGTERM or SIGHUP); temporary output files were removed
  141  standard output was closed before the end (as for SIGPIPE)";

#[derive(Parser)]
#[command(
    name = "host",
    version,
    about = "Parallel prefix sums (scans) on NVIDIA GPUs, kernels written in Rust",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(flatten)]
    global: args::Global,
    #[command(subcommand)]
    command: Option<Command>,
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
    /// non-zero flag (and write the flagged positions).
    Compact(compact::CompactArgs),
    /// LSD radix sort of a file's keys or random ones, ascending or descending, with u32 values or
    /// the stable argsort, against a stable CPU sort.
    Sort(sort::SortArgs),
    /// Histogram of N uniform values in B bins over [lo, hi): counts, bin starts and the stable
    /// counting-sort permutation.
    Histogram(sort::HistogramArgs),
    /// COO -> CSR row offsets of a generated sparse matrix with empty rows, and back to COO.
    Csr(csr::CsrArgs),
    /// Segmented scan of N elements (or a file's) with segments from head flags, start offsets,
    /// runs of equal keys (scan by key) or rows of --rows-of elements.
    Segmented(segmented::SegmentedArgs),
    /// Batched scan of a row-major ROWS x COLS matrix (or a .npy matrix) down every column or
    /// along every row.
    Batched(segmented::BatchedArgs),
    /// Linear recurrence x[t] = a[t]*x[t-1] + b[t] (f32 or f64) as a scan of affine maps.
    Recurrence(recurrence::RecurrenceArgs),
    /// Diagnostic: the u32 add single-pass scan with every tile's timestamps, per phase.
    Timeline(timeline::TimelineArgs),
    /// docs/performance.md, its CSV and plot, from one benchmark run's results (no GPU needed).
    Report(report::ReportArgs),
}

fn main() -> ExitCode {
    if let Err(e) = io::remove_temporaries_on_interrupt() {
        eprintln!("warning: an interrupt will leave temporary output files behind: {e}");
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let g = &cli.global;
    if g.tune_help() {
        out!("{}", args::tune_keys());
        return ExitCode::SUCCESS;
    }
    let Some(command) = &cli.command else {
        eprintln!("error: name a subcommand; `host --help` lists them");
        return ExitCode::from(2);
    };
    let result = match command {
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
            eprintln!("error: {}", one_line(&e.to_string()));
            ExitCode::from(exit_status(&e))
        }
    }
}

/// The exit status of an error (see [`EXIT_STATUS`]).
fn exit_status(e: &Error) -> u8 {
    match e {
        Error::NoDriver | Error::NoDevice(_) | Error::UnsupportedDevice { .. } | Error::NoNccl => 3,
        Error::OutOfMemory { .. } => 2,
        e if e.is_usage() => 2,
        _ => 1,
    }
}

/// `text` on one line: its lines joined (after a colon by a space, else by `; `), blank ones
/// left out.
fn one_line(text: &str) -> String {
    let mut joined = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !joined.is_empty() {
            joined += if joined.ends_with(':') { " " } else { "; " };
        }
        joined += line;
    }
    joined
}

/// Help and version on stdout (status 0); a parse error as one line on stderr (status 2), its
/// hints kept, the usage and the pointer to --help left out.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => match e.print() {
            Err(p) if p.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(out::CLOSED_PIPE as u8),
            _ => ExitCode::SUCCESS,
        },
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(2)
        }
        _ => {
            let text = e.render().to_string();
            let kept: Vec<&str> =
                text.lines().filter(|l| !l.starts_with("Usage:") && !l.starts_with("For more information")).collect();
            eprintln!("{}", one_line(&kept.join("\n")));
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every subcommand, argument and value has help text (flags aside, whose values are
    /// true and false).
    #[test]
    fn every_argument_and_value_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if arg.is_hide_set() || id == "help" || id == "version" {
                    continue;
                }
                let blank = |h: Option<&clap::builder::StyledStr>| h.is_none_or(|h| h.to_string().trim().is_empty());
                if blank(arg.get_help()) && blank(arg.get_long_help()) {
                    missing.push(format!("{path} {id}"));
                }
                if arg.get_action().takes_values() {
                    for v in arg.get_possible_values() {
                        if blank(v.get_help()) {
                            missing.push(format!("{path} {id}={}", v.get_name()));
                        }
                    }
                }
            }
            for sub in cmd.get_subcommands() {
                let name = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() {
                    missing.push(name.clone());
                }
                walk(sub, &name, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "host", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    #[test]
    fn errors_map_to_the_documented_statuses() {
        assert_eq!(exit_status(&Error::NoDriver), 3);
        assert_eq!(exit_status(&Error::NoDevice(String::new())), 3);
        let old = Error::UnsupportedDevice { name: "x".into(), compute_capability: (8, 0), kernel_arch: 90 };
        assert_eq!(exit_status(&old), 3);
        assert_eq!(exit_status(&Error::invalid("x")), 2);
        assert_eq!(exit_status(&Error::out_of_range("N", 0, "at least 1")), 2);
        let oom = Error::OutOfMemory { what: "x".into(), needed: 2, free: 1, total: 1 };
        assert_eq!(exit_status(&oom), 2);
        assert_eq!(exit_status(&Error::Collective { rank: 0, message: "x".into() }), 1);
        for status in
            ["0    PASS", "1    FAIL", "2    usage", "3    no CUDA driver", "130  interrupted", "141  standard output"]
        {
            assert!(EXIT_STATUS.contains(status), "{status}");
        }
    }

    #[test]
    fn several_lines_become_one() {
        assert_eq!(one_line("a\n\n  b\nc "), "a; b; c");
        assert_eq!(one_line("not provided:\n  <N>\n"), "not provided: <N>");
    }
}
