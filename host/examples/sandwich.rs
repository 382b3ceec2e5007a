//! The lecture's 100-inch sandwich: each guest asks for some inches; an inclusive scan of the
//! demands gives the cut marks, an exclusive scan where each piece starts, and what is left.
//!
//!     cargo run --release -p gpu-scan --example sandwich

use gpu_scan::{Gpu, Op, ScanOptions};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<()> {
    let gpu = Gpu::new(0)?;
    let length = 100u32;
    let demands = [3u32, 5, 2, 7, 28, 4, 3, 0, 8, 1];
    let cuts = gpu.scan_host(&demands, &ScanOptions::new(Op::Add))?;
    let starts = gpu.scan_host(&demands, &ScanOptions::new(Op::Add).exclusive(true))?;
    let used = cuts.last().copied().unwrap_or(0);
    println!("demands (inches):      {demands:?}");
    println!("cut marks (inclusive): {cuts:?}");
    println!("starts (exclusive):    {starts:?}");
    match length.checked_sub(used) {
        Some(left) => println!("{used} of {length} inches handed out, {left} inches left"),
        None => println!("the guests want {used} inches, {} more than the sandwich has", used - length),
    }
    Ok(())
}
