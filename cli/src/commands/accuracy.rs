//! `accuracy`: the float sum error study over a sweep of sizes and value ranges.

use crate::args::{parse_range, parse_sizes, FloatType, Global};
use crate::memory::{self, bytes_of, total};
use crate::out::outln;
use crate::{error_study, experiment, io};
use clap::Args;
use gpu_scan::{ElemType, Error, Result};
use std::path::PathBuf;

#[derive(Args)]
pub struct AccuracyArgs {
    /// Float types, comma-separated.
    #[arg(long, default_value = "f32", value_delimiter = ',')]
    types: Vec<FloatType>,
    /// Sizes, as for `bench`.
    #[arg(long, default_value = "2^10..2^30")]
    sizes: String,
    /// Exponent step of a `2^a..2^b` size range.
    #[arg(long, default_value_t = 2, value_parser = crate::args::count_in::<u32>(1, 40))]
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
    /// The folder accuracy.csv goes to (created where missing).
    #[arg(long, default_value = "results", value_name = "DIR")]
    out: PathBuf,
    /// Replace an existing accuracy.csv.
    #[arg(long)]
    force: bool,
}

pub fn run(args: &AccuracyArgs, global: &Global) -> Result<bool> {
    global.resolve()?;
    let sizes = parse_sizes(&args.sizes, args.step)?;
    let path = args.out.join("accuracy.csv");
    io::check_creatable(&path, args.force)?;
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let widest = args.types.iter().map(|t| t.0.size() as u64).max().unwrap_or(8);
    let what = format!("the error study at n = {largest}");
    // The input, the result read back, the sequential fold, and the exact sums and their scales
    // in f64.
    let bytes = bytes_of(largest, widest, &what)?;
    memory::check(&what, total(&[bytes, bytes, bytes, bytes_of(largest, 16, &what)?], &what)?)?;
    let gpu = experiment::open(global)?;
    gpu.check_memory(&what, 2 * bytes)?;
    outln!("{}", error_study::header());
    let mut rows = Vec::new();
    for &ty in &args.types {
        for &(lo, hi) in &args.ranges {
            for &n in &sizes {
                let n = crate::args::host_len(n, "a size")?;
                let row = match ty.0 {
                    ElemType::F32 => error_study::study::<f32>(&gpu, n, lo, hi, args.seed, args.deterministic)?,
                    ElemType::F64 => error_study::study::<f64>(&gpu, n, lo, hi, args.seed, args.deterministic)?,
                    other => {
                        return Err(Error::invalid(format!("the error study is of float sums, not {}", other.name())))
                    }
                };
                outln!("{}", error_study::line(&row));
                rows.push(row);
            }
        }
    }
    io::write_file(&path, args.force, |tmp| error_study::write_csv(tmp, &rows))?;
    outln!("wrote {}", path.display());
    Ok(true)
}
