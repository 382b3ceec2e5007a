//! Bracket matching with two scans: `(` is +1 and `)` is -1; the inclusive sum is the nesting
//! depth after each character, and its running minimum shows the first `)` without a partner.
//! Balanced means the depth never drops below 0 and ends at 0.
//!
//!     cargo run --release -p gpu-scan --example brackets

use gpu_scan::{Gpu, Op, ScanOptions};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<()> {
    let gpu = Gpu::new(0)?;
    for text in ["(()(()))()", "(()))(()", "((()", "()()((())())"] {
        let steps: Vec<i32> = text.chars().map(|c| if c == '(' { 1 } else { -1 }).collect();
        let depth = gpu.scan_host(&steps, &ScanOptions::new(Op::Add))?;
        let lowest = gpu.scan_host(&depth, &ScanOptions::new(Op::Min))?;
        let end = depth.last().copied().unwrap_or(0);
        let verdict = match lowest.iter().position(|&d| d < 0) {
            Some(i) => format!("unbalanced: the `)` at {i} closes nothing"),
            None if end > 0 => format!("unbalanced: {end} `(` never closed"),
            None => "balanced".to_string(),
        };
        println!("{text:<14} depth {depth:?}  running min {lowest:?}  -> {verdict}");
    }
    Ok(())
}
