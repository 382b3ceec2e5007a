//! Quicksort's partition step, made stable: the elements below a pivot first, in their order,
//! then the rest, in theirs, and how many came first, in one pass (`Gpu::partition`: each tile
//! counts its two groups, a scan of the counts places every tile's groups, and each element
//! goes to its place). Checked against a stable partition on the CPU.
//!
//!     cargo run --release -p gpu-scan --example quicksort_partition

use gpu_scan::{input, Gpu, PartitionOptions, TempStorage};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<bool> {
    let gpu = Gpu::new(0)?;
    let stream = gpu.stream().clone();
    let data: Vec<u32> = (0..10_000_019u64).map(|i| (input::bits(4, i) % 1_000_000) as u32).collect();
    let pivot = data[data.len() / 2];
    let d_in = gpu.upload(&stream, "input", &data)?;
    let mut d_out = gpu.alloc_zeros::<u32>(&stream, "partitioned", data.len())?;
    let mut count = gpu.alloc_zeros::<u64>(&stream, "count below", 1)?;
    let opts = PartitionOptions::less_than(pivot as f64);
    gpu.partition(&stream, &d_in, &mut d_out, &mut count, &opts, &mut TempStorage::new())?;
    let below = gpu.read_count(&stream, &count)? as usize;
    let got = gpu.download(&stream, &d_out)?;
    let mut want: Vec<u32> = data.iter().copied().filter(|&x| x < pivot).collect();
    let first = want.len();
    want.extend(data.iter().copied().filter(|&x| x >= pivot));
    let pass = below == first && got == want;
    println!("{} elements around pivot {pivot}: {below} below: {}", data.len(), if pass { "PASS" } else { "FAIL" });
    Ok(pass)
}
