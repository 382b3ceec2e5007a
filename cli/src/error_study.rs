//! How far float sums drift from the exact result: the GPU scan against the double-double
//! reference, with the sequential left fold in the same precision alongside for scale.
//!
//! Two measures per run: the largest pointwise relative error `|got - exact| / |exact|` (large
//! wherever the exact prefix sum is near zero, as it often is for inputs of both signs), and the
//! largest error relative to the sum of magnitudes of the terms, `|got - exact| / Σ|x|`, which is
//! what rounding analysis bounds (see `gpu_scan::reference::verify`).

use gpu_scan::reference as cpu;
use gpu_scan::{Element, Gpu, Op, Result, ScanOptions, TempStorage};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The errors of one scan.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Errors {
    /// Largest `|got - exact| / |exact|` over the elements with `exact != 0`.
    pub max_rel: f64,
    /// Largest `|got - exact| / Σ|x|`.
    pub max_scaled: f64,
}

/// One measured (type, value range, n).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AccuracyRow {
    #[serde(rename = "type")]
    pub ty: String,
    pub lo: f64,
    pub hi: f64,
    pub n: u64,
    pub algorithm: String,
    pub gpu: Errors,
    /// The sequential fold in the same precision (what a CPU loop computes).
    pub sequential: Errors,
}

/// The errors of `got` against the exact inclusive sums of `input`.
pub fn errors<T: Element>(reference: &cpu::FloatReference, got: &[T]) -> Errors {
    got.par_iter()
        .zip(reference.value.par_iter().zip(&reference.scale))
        .map(|(g, (&exact, &scale))| {
            let err = (g.to_f64() - exact).abs();
            let rel = if exact != 0.0 { err / exact.abs() } else { 0.0 };
            Errors { max_rel: rel, max_scaled: if scale > 0.0 { err / scale } else { 0.0 } }
        })
        .reduce(Errors::default, |a, b| Errors {
            max_rel: a.max_rel.max(b.max_rel),
            max_scaled: a.max_scaled.max(b.max_scaled),
        })
}

/// Scans `n` values uniform in `[lo, hi)` with add on the GPU (`opts.algorithm`) and measures
/// its errors and the sequential fold's.
pub fn study<T: Element>(gpu: &Gpu, n: usize, lo: f64, hi: f64, seed: u64, deterministic: bool) -> Result<AccuracyRow> {
    let stream = gpu.stream().clone();
    let bytes = n as u64 * T::TYPE.size() as u64;
    let opts = ScanOptions::new(Op::Add).deterministic(deterministic);
    gpu.check_memory("the error study's buffers", 2 * bytes + gpu.scan_temp_bytes::<T>(n as u64, &opts)?)?;
    let data = crate::memory::uniform::<T>(seed, n, lo, hi)?;
    let d_in = gpu.upload(&stream, "study input", &data)?;
    let mut d_out = gpu.alloc_zeros::<T>(&stream, "study output", n)?;
    gpu.scan(&stream, &d_in, &mut d_out, &opts, &mut TempStorage::new())?;
    let got = gpu.download(&stream, &d_out)?;
    drop((d_in, d_out));
    let reference = cpu::float_reference(Op::Add, &data, false, None);
    let sequential = cpu::scan_with::<T, scan_abi::op::Add>(&data, false, None);
    Ok(AccuracyRow {
        ty: T::TYPE.name().into(),
        lo,
        hi,
        n: n as u64,
        algorithm: if deterministic { "single-pass+det" } else { "single-pass" }.into(),
        gpu: errors(&reference, &got),
        sequential: errors(&reference, &sequential),
    })
}

/// Column names of [`line`] and of the CSV.
pub const COLUMNS: [&str; 9] =
    ["type", "lo", "hi", "n", "algorithm", "max_rel", "max_scaled", "sequential_max_rel", "sequential_max_scaled"];

/// The table header.
pub fn header() -> String {
    format!(
        "{:<4} {:<8} {:>11} {:<16} {:>12} {:>12} {:>14} {:>14}",
        "type", "values", "n", "algorithm", "max rel", "max /Σ|x|", "seq. max rel", "seq. max /Σ|x|"
    )
}

/// One table line.
pub fn line(r: &AccuracyRow) -> String {
    format!(
        "{:<4} {:<8} {:>11} {:<16} {:>12.3e} {:>12.3e} {:>14.3e} {:>14.3e}",
        r.ty,
        format!("[{},{})", r.lo, r.hi),
        r.n,
        r.algorithm,
        r.gpu.max_rel,
        r.gpu.max_scaled,
        r.sequential.max_rel,
        r.sequential.max_scaled
    )
}

/// Writes the rows as CSV (columns [`COLUMNS`]).
pub fn write_csv(path: &std::path::Path, rows: &[AccuracyRow]) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| gpu_scan::Error::invalid(format!("cannot write {}: {e}", path.display()));
    let mut w = csv::Writer::from_path(path).map_err(|e| bad(&e))?;
    w.write_record(COLUMNS).map_err(|e| bad(&e))?;
    for r in rows {
        let f = |v: f64| format!("{v:e}");
        w.write_record([
            r.ty.clone(),
            r.lo.to_string(),
            r.hi.to_string(),
            r.n.to_string(),
            r.algorithm.clone(),
            f(r.gpu.max_rel),
            f(r.gpu.max_scaled),
            f(r.sequential.max_rel),
            f(r.sequential.max_scaled),
        ])
        .map_err(|e| bad(&e))?;
    }
    w.flush().map_err(|e| bad(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequential_f32_fold_drifts_and_the_reference_does_not() {
        let x = gpu_scan::input::uniform::<f32>(3, 1 << 20, 0.0, 1.0);
        assert!(x.iter().all(|v| (0.0..1.0).contains(v)));
        let reference = cpu::float_reference(Op::Add, &x, false, None);
        let exact = errors(
            &reference,
            &x.iter()
                .map(|&v| v as f64)
                .scan(0.0, |a, v| {
                    *a += v;
                    Some(*a)
                })
                .collect::<Vec<f64>>(),
        );
        assert!(exact.max_rel < 1e-12, "{exact:?}");
        let seq = errors(&reference, &cpu::scan_with::<f32, scan_abi::op::Add>(&x, false, None));
        assert!(seq.max_rel > 1e-5 && seq.max_rel < 1e-1, "{seq:?}");
    }
}
