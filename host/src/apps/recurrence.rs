//! The linear recurrence `x[t] = a[t]·x[t-1] + b[t]` (f32 and f64), the building block of parallel
//! linear RNN and state-space layers, solved as one single-pass scan over affine maps
//! `x -> a·x + b` (`scan_abi::op::AffineF32` on (a, b) pairs packed in a u64, `AffineF64` on
//! `[a, b]`; both non-commutative).
//!
//! The initial value enters as the constant map `x -> x0`, i.e. the pair (0, x0), in front of
//! the first map: the scan's t-th result is then the pair (0, `x[t]`).

use crate::element::Element;
use crate::error::{exactly, Result};
use crate::launch::scan::{single_pass, Operands};
use crate::options::RecurrenceOptions;
use crate::plan::check_output;
use crate::plan::scan::{aligned, recurrence};
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use scan_abi::op::AffineF32;
use std::sync::Arc;

mod sealed {
    /// Implemented only for `f32` and `f64`: [`super::RecurrenceFloat`] requires it.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A float type the recurrence is built for, with how its maps travel: f32 pairs packed in a
/// u64 (`AffineF32`), f64 pairs as `[a, b]` (`AffineF64`). Sealed: the kernel is picked by the
/// float type and reads maps of its layout, so no other crate can implement it:
///
/// ```compile_fail,E0277
/// use gpu_scan::apps::recurrence::RecurrenceFloat;
///
/// // A wrapper of f32 that would take f64's kernel: it has every other supertrait, but
/// // `Element` is sealed, and so is this trait.
/// #[derive(Clone, Copy)]
/// struct Wide(f32);
///
/// impl From<Wide> for f64 {
///     fn from(w: Wide) -> f64 {
///         w.0 as f64
///     }
/// }
///
/// impl RecurrenceFloat for Wide {
///     type Map = [f64; 2];
///     fn map(a: Wide, b: Wide) -> [f64; 2] { [a.0 as f64, b.0 as f64] }
///     fn start(x0: Wide) -> [f64; 2] { [0.0, x0.0 as f64] }
///     fn identity_map() -> [f64; 2] { [1.0, 0.0] }
///     fn x(m: [f64; 2]) -> Wide { Wide(m[1] as f32) }
///     fn from_f64(v: f64) -> Wide { Wide(v as f32) }
/// }
/// ```
pub trait RecurrenceFloat: sealed::Sealed + Element + Into<f64> {
    type Map: DeviceRepr + ValidAsZeroBits + Copy + Unpin + Send + Sync;
    fn map(a: Self, b: Self) -> Self::Map;
    /// The constant map `x -> x0`, i.e. (0, x0), that starts the scan.
    fn start(x0: Self) -> Self::Map;
    /// The identity map `x -> x`.
    fn identity_map() -> Self::Map;
    /// `x` of a result map (0, x).
    fn x(m: Self::Map) -> Self;
    /// The nearest value to `v`.
    fn from_f64(v: f64) -> Self;
}

impl RecurrenceFloat for f32 {
    type Map = u64;
    fn map(a: f32, b: f32) -> u64 {
        AffineF32::pack(a, b)
    }
    fn start(x0: f32) -> u64 {
        AffineF32::pack(0.0, x0)
    }
    fn identity_map() -> u64 {
        AffineF32::pack(1.0, 0.0)
    }
    fn x(m: u64) -> f32 {
        AffineF32::unpack(m).1
    }
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl RecurrenceFloat for f64 {
    type Map = [f64; 2];
    fn map(a: f64, b: f64) -> [f64; 2] {
        [a, b]
    }
    fn start(x0: f64) -> [f64; 2] {
        [0.0, x0]
    }
    fn identity_map() -> [f64; 2] {
        [1.0, 0.0]
    }
    fn x(m: [f64; 2]) -> f64 {
        m[1]
    }
    fn from_f64(v: f64) -> f64 {
        v
    }
}

impl Gpu {
    /// Solves the recurrence for the maps `F::map(a[t], b[t])` in `maps` as `opts` says:
    /// `out[t]` becomes the map (0, `x[t]`) (read `x[t]` with `F::x`). Asynchronous.
    ///
    /// Requires `out.len() >= maps.len()`.
    pub fn recurrence<F: RecurrenceFloat>(
        &self,
        stream: &Arc<CudaStream>,
        maps: &impl DevicePtr<F::Map>,
        out: &mut impl DevicePtrMut<F::Map>,
        opts: &RecurrenceOptions<F>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = maps.len() as u64;
        check_output(out.len(), n, "maps")?;
        if n == 0 {
            return Ok(());
        }
        let (input, _r) = maps.device_ptr(stream);
        let (output, _w) = out.device_ptr_mut(stream);
        let plan = recurrence(self.tuning(), F::TYPE, n, opts.kernel, aligned(input) && aligned(output))?;
        let ops = Operands { input, output, n, init: F::start(opts.x0), identity: F::identity_map() };
        single_pass(self, stream, &plan, ops, None, temp)
    }

    /// Bytes of temporary storage a recurrence of `n` maps with `opts` needs.
    pub fn recurrence_temp_bytes<F: RecurrenceFloat>(&self, n: u64, opts: &RecurrenceOptions<F>) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        Ok(recurrence(self.tuning(), F::TYPE, n, opts.kernel, true)?.state.bytes())
    }

    /// [`Gpu::recurrence`] from host arrays: returns `x[0..n]` (this waits for the GPU).
    pub fn recurrence_host<F: RecurrenceFloat>(&self, a: &[F], b: &[F], opts: &RecurrenceOptions<F>) -> Result<Vec<F>> {
        exactly("the offsets b", b.len() as u64, a.len() as u64, "values")?;
        let stream = self.stream().clone();
        let maps: Vec<F::Map> = a.iter().zip(b).map(|(&a, &b)| F::map(a, b)).collect();
        let d_maps = self.upload(&stream, "recurrence maps", &maps)?;
        let mut d_out = self.alloc_zeros::<F::Map>(&stream, "recurrence output", maps.len())?;
        self.recurrence::<F>(&stream, &d_maps, &mut d_out, opts, &mut TempStorage::new())?;
        Ok(stream.clone_dtoh(&d_out)?.into_iter().map(F::x).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::apps::recurrence as reference;
    use scan_abi::ScanOp;

    /// The scan with the (0, x0) start computes the loop: checked on the CPU with the same
    /// operator, in two different groupings.
    #[test]
    fn a_scan_of_maps_is_the_recurrence() {
        let a: Vec<f32> = (0..1000).map(|i| 0.9 + (i % 7) as f32 * 0.01).collect();
        let b: Vec<f32> = (0..1000).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
        let maps: Vec<u64> = a.iter().zip(&b).map(|(&a, &b)| AffineF32::pack(a, b)).collect();
        let seq = crate::reference::scan_with::<u64, AffineF32>(&maps, false, Some(AffineF32::pack(0.0, 2.0)));
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
        assert_eq!(f32::identity_map(), <AffineF32 as ScanOp<u64>>::identity());
        assert_eq!(f64::identity_map(), <scan_abi::op::AffineF64 as ScanOp<[f64; 2]>>::identity());
    }

    /// In the GPU's own combine order (the deterministic replica of the single-pass kernel), the
    /// result stays within the bound the GPU test and the subcommand use.
    #[test]
    fn the_single_pass_order_stays_within_the_bound() {
        use crate::options::Algorithm::SinglePass;
        use crate::reference::{replica, verify::roundings};
        for (n, lo, hi) in [(1_000_003usize, 0.9, 1.0), (300_007, -1.0, 1.0), (300_007, 0.999, 1.001)] {
            let a = crate::input::uniform::<f32>(n as u64, n, lo, hi);
            let b = crate::input::uniform::<f32>(n as u64 ^ 1, n, -1.0, 1.0);
            let maps: Vec<u64> = a.iter().zip(&b).map(|(&a, &b)| AffineF32::pack(a, b)).collect();
            let out = replica::single_pass_with::<u64, AffineF32>(&maps, false, Some(f32::start(1.5)));
            let (x, s) = reference(&a, &b, 1.5);
            for t in 0..n {
                let got = AffineF32::unpack(out[t]).1 as f64;
                let bound = 2.0 * roundings(SinglePass, t, n) * f32::EPSILON as f64 * s[t];
                assert!(
                    (got - x[t]).abs() <= bound,
                    "n={n} a in [{lo},{hi}) t={t}: {got} vs {} (bound {bound:e})",
                    x[t]
                );
            }
        }
        // f64 pairs, in their own tile shape.
        let n = 200_003;
        let a = crate::input::uniform::<f64>(7, n, 0.9, 1.0);
        let b = crate::input::uniform::<f64>(8, n, -1.0, 1.0);
        let maps: Vec<[f64; 2]> = a.iter().zip(&b).map(|(&a, &b)| f64::map(a, b)).collect();
        let out = replica::single_pass_with::<[f64; 2], scan_abi::op::AffineF64>(&maps, false, Some(f64::start(-3.0)));
        let (x, s) = reference(&a, &b, -3.0);
        for t in 0..n {
            let bound = 2.0 * roundings(SinglePass, t, n) * f64::EPSILON * s[t];
            assert!((f64::x(out[t]) - x[t]).abs() <= bound, "f64 t={t}");
        }
    }
}
