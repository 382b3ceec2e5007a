//! The linear recurrence `x[t] = a[t]·x[t-1] + b[t]` (f32), the building block of parallel linear
//! RNN and state-space layers, solved as one single-pass scan over affine maps `x -> a·x + b`
//! (`scan_abi::op::AffineF32`, a non-commutative operator on (a, b) pairs packed in a u64).
//!
//! The initial value enters as the constant map `x -> x0`, i.e. the pair (0, x0), in front of
//! the first map: the scan's t-th result is then the pair (0, x[t]).

use crate::dispatch::{single_pass, Job, ScanOptions, TempStorage};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::op::AffineF32;
use scan_abi::{names, Op};
use std::sync::Arc;

/// The sequential loop in f64, and the magnitude `s[t] = |a[t]|·s[t-1] + |b[t]|` (from |x0|)
/// against which rounding error is bounded.
pub fn reference(a: &[f32], b: &[f32], x0: f32) -> (Vec<f64>, Vec<f64>) {
    let (mut x, mut s) = (x0 as f64, (x0 as f64).abs());
    a.iter()
        .zip(b)
        .map(|(&a, &b)| {
            x = a as f64 * x + b as f64;
            s = (a as f64).abs() * s + (b as f64).abs();
            (x, s)
        })
        .unzip()
}

impl Gpu {
    /// Solves the recurrence for the maps `AffineF32::pack(a[t], b[t])` in `maps`, starting from
    /// `x0`: `out[t]` becomes `AffineF32::pack(0.0, x[t])`.
    pub fn recurrence(
        &self,
        stream: &Arc<CudaStream>,
        maps: &CudaSlice<u64>,
        x0: f32,
        out: &mut CudaSlice<u64>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = maps.len() as u64;
        if (out.len() as u64) < n {
            return Err(Error::invalid(format!("the output holds {} maps, the input {n}", out.len())));
        }
        if n == 0 {
            return Ok(());
        }
        let start = AffineF32::pack(0.0, x0);
        let opts = ScanOptions::new(Op::Affine).init(Some(start));
        let (input, _r) = maps.device_ptr(stream);
        let (output, _w) = out.device_ptr_mut(stream);
        let job = Job { gpu: self, stream, input, output, n, opts: &opts };
        let r = single_pass::launch(&job, names::RECURRENCE_F32, start, temp);
        if r.is_err() {
            temp.poison();
        }
        r
    }

    /// [`Gpu::recurrence`] from host arrays: returns `x[0..n]`.
    pub fn recurrence_host(&self, a: &[f32], b: &[f32], x0: f32) -> Result<Vec<f32>> {
        if a.len() != b.len() {
            return Err(Error::invalid(format!("{} factors but {} offsets", a.len(), b.len())));
        }
        let stream = self.stream().clone();
        let maps: Vec<u64> = a.iter().zip(b).map(|(&a, &b)| AffineF32::pack(a, b)).collect();
        let d_maps = self.upload(&stream, "recurrence maps", &maps)?;
        let mut d_out = self.alloc_zeros::<u64>(&stream, "recurrence output", maps.len())?;
        self.recurrence(&stream, &d_maps, x0, &mut d_out, &mut TempStorage::new())?;
        Ok(self.download(&stream, &d_out)?.into_iter().map(|m| AffineF32::unpack(m).1).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::ScanOp;

    /// The scan with the (0, x0) start computes the loop: checked on the CPU with the same
    /// operator, in two different groupings.
    #[test]
    fn a_scan_of_maps_is_the_recurrence() {
        let a: Vec<f32> = (0..1000).map(|i| 0.9 + (i % 7) as f32 * 0.01).collect();
        let b: Vec<f32> = (0..1000).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
        let maps: Vec<u64> = a.iter().zip(&b).map(|(&a, &b)| AffineF32::pack(a, b)).collect();
        let seq = crate::cpu::scan_with::<u64, AffineF32>(&maps, false, Some(AffineF32::pack(0.0, 2.0)));
        let (x, s) = reference(&a, &b, 2.0);
        for t in 0..1000 {
            let (zero, got) = AffineF32::unpack(seq[t]);
            assert_eq!(zero, 0.0);
            assert!((got as f64 - x[t]).abs() <= 1e-5 * s[t], "t={t}: {got} vs {}", x[t]);
        }
        // Grouped differently (as tiles would), the same within rounding.
        let left = AffineF32::combine(AffineF32::combine(maps[0], maps[1]), maps[2]);
        let right = AffineF32::combine(maps[0], AffineF32::combine(maps[1], maps[2]));
        let (la, lb) = AffineF32::unpack(left);
        let (ra, rb) = AffineF32::unpack(right);
        assert!((la - ra).abs() <= 1e-6 && (lb - rb).abs() <= 1e-5);
    }

    /// In the GPU's own combine order (the deterministic replica of the single-pass kernel), the
    /// result stays within the bound the GPU test and the subcommand use.
    #[test]
    fn the_single_pass_order_stays_within_the_bound() {
        for (n, lo, hi) in [(1_000_003usize, 0.9, 1.0), (300_007, -1.0, 1.0), (300_007, 0.999, 1.001)] {
            let a = crate::input::uniform::<f32>(n as u64, n, lo, hi);
            let b = crate::input::uniform::<f32>(n as u64 ^ 1, n, -1.0, 1.0);
            let maps: Vec<u64> = a.iter().zip(&b).map(|(&a, &b)| AffineF32::pack(a, b)).collect();
            let out = crate::replica::single_pass_with::<u64, AffineF32>(&maps, false, Some(AffineF32::pack(0.0, 1.5)));
            let (x, s) = reference(&a, &b, 1.5);
            for t in 0..n {
                let got = AffineF32::unpack(out[t]).1 as f64;
                let bound =
                    2.0 * crate::verify::roundings(crate::Algorithm::SinglePass, t, n) * f32::EPSILON as f64 * s[t];
                assert!(
                    (got - x[t]).abs() <= bound,
                    "n={n} a in [{lo},{hi}) t={t}: {got} vs {} (bound {bound:e})",
                    x[t]
                );
            }
        }
    }
}
