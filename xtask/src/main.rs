//! `cargo xtask build-ptx`: builds the kernels alone and, when ptxas is available, reports
//! registers and local-memory use per kernel.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

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
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::BuildPtx { arch, filter } => match build_ptx(arch, filter) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn build_ptx(arch: String, filter: Option<String>) -> Result<(), Box<dyn std::error::Error>> {
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_path_buf();
    let opts = ptx_builder::Options { arch: arch.clone(), ..ptx_builder::Options::for_workspace(&root) };
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
    // Report on the module as the host embeds it, with the launch bounds of the tuning table.
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
