//! Flag to address: the exclusive scan of keep-flags is each kept element's place in the output,
//! which is all stream compaction needs. Shown step by step, then done by `Gpu::compact`.
//!
//!     cargo run --release -p gpu-scan --example flag_to_address

use gpu_scan::{CompactOptions, Gpu, Keep, Op, ScanOptions, TempStorage};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<()> {
    let gpu = Gpu::new(0)?;
    let input = [5i32, -2, 7, 0, 3, -1, 9];
    let flags: Vec<u32> = input.iter().map(|&x| (x > 0) as u32).collect();
    let address = gpu.scan_host(&flags, &ScanOptions::new(Op::Add).exclusive(true))?;
    println!("input:    {input:?}");
    println!("flags:    {flags:?}  (x > 0)");
    println!("address:  {address:?}  (exclusive scan of the flags)");
    let mut by_hand = vec![0; address.last().map_or(0, |&a| a as usize + flags[flags.len() - 1] as usize)];
    for i in 0..input.len() {
        if flags[i] == 1 {
            by_hand[address[i] as usize] = input[i];
        }
    }
    let stream = gpu.stream().clone();
    let d_in = gpu.upload(&stream, "input", &input)?;
    let mut d_out = gpu.alloc_zeros::<i32>(&stream, "output", input.len())?;
    let opts = CompactOptions::new(Keep::Greater(0));
    let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1)?;
    gpu.compact(&stream, &d_in, &mut d_out, &mut count, &opts, &mut TempStorage::new())?;
    let kept = gpu.read_count(&stream, &count)? as usize;
    let compacted = gpu.download(&stream, &d_out)?;
    println!("scatter:  {by_hand:?}");
    println!("compact:  {:?}  ({kept} kept, Gpu::compact in one pass)", &compacted[..kept]);
    Ok(())
}
