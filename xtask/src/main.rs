//! `cargo xtask`: the project's chores.
//!
//! - `build-ptx`: the kernels alone, and, with ptxas, registers and local memory per kernel.
//! - `gpu-bundle`: everything a GPU machine needs (test executables, the CLI, the baselines, the
//!   newest CUB's headers, a runner script), packed into one file to carry there.
//! - `bench`: docs/performance.md, its CSV and plot from a bundle's `bench` results (or, on a
//!   machine with a GPU, from a run it starts).
//! - `sanitize`: compute-sanitizer over every kernel family (on a machine with a GPU).
//! - `package`: `gpu-scan` and `scan-abi` as `.crate` files, the kernels prebuilt inside.

mod bundle;
mod cases;
mod package;

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[derive(Parser)]
#[command(about = "gpu-scan project chores")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the PTX module from gpu/ and report per-kernel registers and spills (with ptxas).
    BuildPtx {
        /// GPU architecture to compile for.
        #[arg(long, default_value = ptx_builder::DEFAULT_ARCH)]
        arch: String,
        /// Only print kernels whose name contains this.
        #[arg(long)]
        filter: Option<String>,
    },
    /// Build the test executables and the CLI in release mode into one folder with a runner
    /// (`run.sh tests|sanitize|bench|compare`), and pack it as `<out>.txz` to carry to a GPU machine.
    GpuBundle(bundle::Options),
    /// Write docs/performance.md, docs/bench.csv and docs/bench.png from a benchmark run's results
    /// (`run.sh bench` writes them); without --results, run the benchmarks here first (needs a GPU).
    Bench {
        #[arg(long)]
        results: Option<PathBuf>,
    },
    /// Run compute-sanitizer (memcheck, racecheck, synccheck) over every kernel family, here
    /// (needs a GPU and compute-sanitizer; on a GPU machine without Rust, run.sh sanitize).
    Sanitize,
    /// Package `gpu-scan` and `scan-abi` as `.crate` files in target/package/, the PTX module
    /// prebuilt and deflated inside, so that a dependent crate builds on stable alone.
    Package,
}

fn main() -> ExitCode {
    let result = match Cli::parse().cmd {
        Cmd::BuildPtx { arch, filter } => build_ptx(arch, filter),
        Cmd::GpuBundle(opts) => bundle::build(&opts).map(drop),
        Cmd::Bench { results } => bench(results),
        Cmd::Sanitize => run_bundle("sanitize", &root().join("target").join("sanitize")),
        Cmd::Package => package::package().map(drop),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_path_buf()
}

/// Runs `cmd`, failing with its name unless it succeeds.
fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !status.success() {
        return Err(format!("{cmd:?} failed ({status})").into());
    }
    Ok(())
}

/// Builds a bundle (without the comparison build) and runs one of its modes here.
fn run_bundle(mode: &str, results: &Path) -> Result<()> {
    let dir = bundle::build(&bundle::Options::default())?;
    std::fs::create_dir_all(results)?;
    run(Command::new("bash").arg(dir.join("run.sh")).arg(mode).env("RESULTS_DIR", results))
}

fn bench(results: Option<PathBuf>) -> Result<()> {
    let results = match results {
        Some(r) => r,
        None => {
            let r = root().join("target").join("bench-results");
            run_bundle("bench", &r)?;
            r
        }
    };
    let docs = root().join("docs");
    run(Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["run", "--release", "-p", "host", "--", "report"])
        .arg(&results)
        .arg("--out")
        .arg(&docs)
        .arg("--force"))
}

fn build_ptx(arch: String, filter: Option<String>) -> Result<()> {
    let opts = ptx_builder::Options { arch: arch.clone(), ..ptx_builder::Options::for_workspace(&root()) };
    let built = ptx_builder::build(&opts)?;
    let text = std::fs::read_to_string(&built.ptx)?;
    let entries = text.lines().filter(|l| l.contains(".entry")).count();
    println!(
        "PTX: {} ({} KiB, {entries} kernels, {arch}, built by {})",
        built.ptx.display(),
        text.len() / 1024,
        built.toolchain
    );
    let Some(ptxas) = ptx_builder::find_ptxas() else {
        println!(
            "ptxas not found (set PTXAS or put it on PATH; `pip install nvidia-cuda-nvcc` has one): no register report"
        );
        return Ok(());
    };
    // Report on the module as the host loads it, with the tuning's launch bounds.
    let arch_number = arch.trim_start_matches("sm_").parse().unwrap_or(scan_abi::tuning::DEFAULT_ARCH);
    let tuning = scan_abi::tuning::for_arch(arch_number);
    let bounds: std::collections::HashMap<String, (u32, u32)> =
        scan_abi::bounds::bounded_kernels(tuning).map(|(k, t, b)| (k.to_string(), (t, b))).collect();
    let mut with_bounds = String::new();
    scan_abi::bounds::insert(&text, |k| bounds.get(k).copied(), &mut with_bounds)?;
    let bounded = built.ptx.with_extension("bounded.ptx");
    std::fs::write(&bounded, with_bounds)?;
    let kernels = ptx_builder::ptxas_report(&ptxas, &bounded, &arch)?;
    println!("{:<44} {:>5} {:>7} {:>8} {:>8}", "kernel", "regs", "stack", "spill-st", "spill-ld");
    for k in kernels.iter().filter(|k| filter.as_ref().is_none_or(|f| k.name.contains(f.as_str()))) {
        println!(
            "{:<44} {:>5} {:>7} {:>8} {:>8}",
            k.name, k.registers, k.stack_bytes, k.spill_store_bytes, k.spill_load_bytes
        );
    }
    let spilling: Vec<_> =
        kernels.iter().filter(|k| k.spill_store_bytes + k.spill_load_bytes + k.stack_bytes > 0).collect();
    let max_regs = kernels.iter().map(|k| k.registers).max().unwrap_or(0);
    println!(
        "ptxas ({}): {} kernels assembled for {arch}, at most {max_regs} registers, {} with local memory{}",
        ptxas.display(),
        kernels.len(),
        spilling.len(),
        if spilling.is_empty() {
            String::new()
        } else {
            format!(": {}", spilling.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", "))
        }
    );
    Ok(())
}
