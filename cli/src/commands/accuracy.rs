//! `accuracy`: the float sum error study over a sweep of sizes and value ranges.

use crate::args::{parse_range, parse_sizes, Float, Global};
use crate::error_study;
use crate::experiment;
use clap::Args;
use gpu_scan::{Error, Result};
use std::path::PathBuf;

#[derive(Args)]
pub struct AccuracyArgs {
    /// Float types, comma-separated.
    #[arg(long, default_value = "f32", value_delimiter = ',')]
    types: Vec<Float>,
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

pub fn run(args: &AccuracyArgs, global: &Global) -> Result<bool> {
    let sizes = parse_sizes(&args.sizes, args.step)?;
    let gpu = experiment::open(global)?;
    println!("{}", error_study::header());
    let mut rows = Vec::new();
    for &ty in &args.types {
        for &(lo, hi) in &args.ranges {
            for &n in &sizes {
                let n = crate::args::host_len(n, "a size")?;
                let row = match ty {
                    Float::F32 => error_study::study::<f32>(&gpu, n, lo, hi, args.seed, args.deterministic),
                    Float::F64 => error_study::study::<f64>(&gpu, n, lo, hi, args.seed, args.deterministic),
                };
                match row {
                    Ok(r) => {
                        println!("{}", error_study::line(&r));
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
    error_study::write_csv(&path, &rows)?;
    println!("wrote {}", path.display());
    Ok(true)
}
