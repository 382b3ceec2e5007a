//! Polynomial evaluation at many points by Horner's rule, as one scan of affine maps: step `k` of
//! Horner's rule at point `x` is the map `y -> x*y + c[k]`, and the scan of the maps gives every
//! partial value. Points are laid end to end; each point's first map has factor 0, so it forgets
//! the point before it, and one linear recurrence evaluates every point at once. Checked against
//! Horner's loop on the CPU.
//!
//!     cargo run --release -p gpu-scan --example polynomial

use gpu_scan::{Gpu, RecurrenceOptions};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<bool> {
    let gpu = Gpu::new(0)?;
    // p(x) = sum c[k] x^(n-1-k), coefficients from the highest power down.
    let coeffs: Vec<f64> = (0..64).map(|k| ((k * 37 % 19) as f64 - 9.0) / 8.0).collect();
    let points: Vec<f64> = (0..20_000).map(|i| -1.0 + 2.0 * i as f64 / 19_999.0).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &points {
        for (k, &c) in coeffs.iter().enumerate() {
            a.push(if k == 0 { 0.0 } else { x });
            b.push(c);
        }
    }
    let y = gpu.recurrence_host(&a, &b, &RecurrenceOptions::new(0.0))?;
    let mut worst = 0f64;
    for (i, &x) in points.iter().enumerate() {
        let horner = coeffs.iter().fold(0.0, |acc, &c| acc * x + c);
        let scale: f64 =
            coeffs.iter().enumerate().map(|(k, c)| c.abs() * x.abs().powi((coeffs.len() - 1 - k) as i32)).sum();
        let got = y[(i + 1) * coeffs.len() - 1];
        worst = worst.max((got - horner).abs() / scale.max(f64::MIN_POSITIVE));
    }
    let pass = worst <= 256.0 * f64::EPSILON;
    println!(
        "{} points, degree {}: worst error {worst:.2e} of the terms' magnitude: {}",
        points.len(),
        coeffs.len() - 1,
        if pass { "PASS" } else { "FAIL" }
    );
    Ok(pass)
}
