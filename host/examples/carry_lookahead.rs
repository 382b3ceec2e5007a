//! Carry-lookahead addition of two big integers of millions of 32-bit limbs. Each limb position
//! generates a carry (its sum overflows), propagates one (its sum is all ones) or kills it; as
//! maps of the incoming carry these are `c -> 1`, `c -> c` and `c -> 0`, affine maps
//! `c -> a*c + b`, and the exclusive scan of their composition gives every limb its carry in.
//! Checked against schoolbook addition on the CPU.
//!
//!     cargo run --release -p gpu-scan --example carry_lookahead

use gpu_scan::{input, Gpu, Op, ScanOptions};
use scan_abi::op::Affine;
use std::process::ExitCode;

mod common;

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> gpu_scan::Result<bool> {
    let gpu = Gpu::new(0)?;
    let limbs = 4_000_037usize;
    // Random limbs, with runs of all-ones sums so that carries travel far.
    let x: Vec<u32> = (0..limbs as u64).map(|i| input::bits(1, i) as u32).collect();
    let y: Vec<u32> =
        (0..limbs).map(|i| if i % 1000 < 300 { !x[i] } else { input::bits(2, i as u64) as u32 }).collect();
    let maps: Vec<u64> = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| match a.checked_add(b) {
            None => Affine::pack(0, 1),
            Some(u32::MAX) => Affine::pack(1, 0),
            Some(_) => Affine::pack(0, 0),
        })
        .collect();
    let carries = gpu.scan_host(&maps, &ScanOptions::new(Op::Affine).exclusive(true))?;
    // The carry into limb i: the composed map of limbs 0..i applied to carry 0 is its b.
    let sum: Vec<u32> = (0..limbs).map(|i| x[i].wrapping_add(y[i]).wrapping_add((carries[i] >> 32) as u32)).collect();
    let mut want = Vec::with_capacity(limbs);
    let mut carry = 0u64;
    for i in 0..limbs {
        let s = x[i] as u64 + y[i] as u64 + carry;
        want.push(s as u32);
        carry = s >> 32;
    }
    let pass = sum == want;
    println!("{limbs} limbs added with carries from one scan: {}", if pass { "PASS" } else { "FAIL" });
    Ok(pass)
}
