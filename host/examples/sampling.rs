//! A cumulative distribution and inverse-transform sampling. The deterministic scan of the
//! weights is the distribution's table, bit for bit the same on every run and equal to the CPU
//! replica of its combine order; a uniform draw `u` picks the first entry above `u` times the
//! total. The drawn frequencies are checked against the weights.
//!
//!     cargo run --release -p gpu-scan --example sampling

use gpu_scan::plan::scan::fixed_order;
use gpu_scan::reference::replica;
use gpu_scan::{input, Gpu, Op, ScanOptions};
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<bool> {
    let gpu = Gpu::new(0)?;
    let outcomes = 1_000_000usize;
    let weights: Vec<f32> = input::uniform::<f32>(9, outcomes, 0.0, 1.0).iter().map(|u| u * u).collect();
    let opts = ScanOptions::new(Op::Add).deterministic(true);
    let cdf = gpu.scan_host(&weights, &opts)?;
    let again = gpu.scan_host(&weights, &opts)?;
    let reproducible = cdf.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits());
    let order = fixed_order(gpu.tuning(), &opts.request(outcomes as u64)).expect("a deterministic float sum");
    let replicated = replica::deterministic(order, Op::Add, &weights, false, None)?
        .iter()
        .zip(&cdf)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    let total = *cdf.last().expect("outcomes") as f64;
    // Draw ten million samples and count how often the heaviest tenth of outcomes comes up.
    let draws = 10_000_000u64;
    let heavy: Vec<bool> = weights.iter().map(|&w| w > 0.81).collect();
    let mut hits = 0u64;
    for i in 0..draws {
        let u = (input::bits(11, i) >> 11) as f64 / (1u64 << 53) as f64 * total;
        let k = cdf.partition_point(|&c| (c as f64) <= u).min(outcomes - 1);
        hits += heavy[k] as u64;
    }
    let want: f64 = weights.iter().zip(&heavy).filter(|(_, &h)| h).map(|(&w, _)| w as f64).sum::<f64>() / total;
    let seen = hits as f64 / draws as f64;
    let sigma = (want * (1.0 - want) / draws as f64).sqrt();
    let pass = reproducible && replicated && (seen - want).abs() < 6.0 * sigma;
    println!(
        "table of {outcomes}: reproducible {reproducible}, equal to the replica {replicated}; heavy outcomes drawn {seen:.5}, expected {want:.5}: {}",
        if pass { "PASS" } else { "FAIL" }
    );
    Ok(pass)
}
