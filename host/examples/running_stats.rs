//! Running-window statistics from prefix sums: with `S` the inclusive scan of `x` and `Q` that
//! of `x²`, the window of `w` ending at `i` has sum `S[i] - S[i-w]`, mean sum/w and variance
//! `(Q[i] - Q[i-w])/w - mean²`. The values are shifted by their first element before squaring
//! (variance does not change with a shift), which keeps the difference of two large sums from
//! cancelling the answer away. Checked against a direct computation per window on the CPU.
//!
//!     cargo run --release -p gpu-scan --example running_stats

use gpu_scan::{input, Gpu, Op, ScanOptions};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<bool> {
    let gpu = Gpu::new(0)?;
    let (n, w) = (2_000_003usize, 1000usize);
    // A slow drift far from zero plus noise: the case where plain sums of squares cancel.
    let x: Vec<f64> =
        input::uniform::<f64>(5, n, -1.0, 1.0).iter().enumerate().map(|(i, e)| 1e4 + i as f64 * 1e-5 + e).collect();
    let shift = x[0];
    let d: Vec<f64> = x.iter().map(|v| v - shift).collect();
    let sq: Vec<f64> = d.iter().map(|v| v * v).collect();
    let opts = ScanOptions::new(Op::Add).exclusive(true);
    // Exclusive scans with one more element: S[i] is the sum of the first i values.
    let s = gpu.scan_host(&[d.as_slice(), &[0.0]].concat(), &opts)?;
    let q = gpu.scan_host(&[sq.as_slice(), &[0.0]].concat(), &opts)?;
    let (mut worst_mean, mut worst_var) = (0f64, 0f64);
    for end in (w..=n).step_by(997) {
        let mean = (s[end] - s[end - w]) / w as f64;
        let var = (q[end] - q[end - w]) / w as f64 - mean * mean;
        let window = &x[end - w..end];
        let m = window.iter().sum::<f64>() / w as f64;
        let v = window.iter().map(|t| (t - m) * (t - m)).sum::<f64>() / w as f64;
        worst_mean = worst_mean.max((mean + shift - m).abs() / m.abs());
        worst_var = worst_var.max((var - v).abs() / v);
    }
    let pass = worst_mean < 1e-9 && worst_var < 1e-6;
    println!(
        "windows of {w} over {n} values: mean within {worst_mean:.1e}, variance within {worst_var:.1e} (relative): {}",
        if pass { "PASS" } else { "FAIL" }
    );
    Ok(pass)
}
