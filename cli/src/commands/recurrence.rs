//! `recurrence`: the linear recurrence x[t] = a[t]*x[t-1] + b[t] as a scan of affine maps, of
//! two files' factors and offsets or generated ones, checked against the sequential loop within
//! its rounding bound.

use crate::args::{host_len, parse_range, positive, types_of, Global, Kernel, Outputs, RecurrenceType, Runs};
use crate::experiment::{self, Check, Experiment, Needs};
use crate::io;
use crate::memory::{self, bytes_of, total};
use clap::Args;
use gpu_scan::apps::recurrence::RecurrenceFloat;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::{apps as reference, verify::roundings};
use gpu_scan::{Algorithm, ElemType, Error, Gpu, RecurrenceOptions, Result, TempStorage};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct RecurrenceArgs {
    /// Number of steps t (100000000, 1e8, 2^28; optional with --a and --b).
    #[arg(value_parser = positive)]
    n: Option<u64>,
    /// Float type of a, b and x (default f32; .npy inputs bring their own).
    #[arg(long = "type", value_name = "TYPE")]
    ty: Option<RecurrenceType>,
    /// The factors a[t]: a .npy file of f32 or f64, or raw little-endian binary (with --type).
    #[arg(long, value_name = "FILE", requires = "b")]
    a: Option<PathBuf>,
    /// The offsets b[t], as long as --a and of its type.
    #[arg(long, value_name = "FILE", requires = "a")]
    b: Option<PathBuf>,
    /// --output: x[0..n].
    #[command(flatten)]
    out: Outputs,
    /// x[-1].
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    x0: f64,
    /// Range of the generated factors a[t] (`lo:hi`); the offsets b[t] are uniform in [-1, 1).
    #[arg(long, default_value = "0.9:1", allow_hyphen_values = true, value_parser = parse_range)]
    factors: (f64, f64),
    /// The kernel (auto picks by size).
    #[arg(long, default_value = "auto")]
    kernel: Kernel,
    #[command(flatten)]
    runs: Runs,
}

pub fn run(args: &RecurrenceArgs, global: &Global) -> Result<bool> {
    let requested = args.ty.map(|t| t.0);
    let ty = match (&args.a, &args.b) {
        (Some(a), Some(b)) => {
            let allowed = types_of(scan_abi::Family::Recurrence);
            let ty = io::input_of(a, requested, &allowed, "the recurrence", 1)?;
            io::side_type(b, "--b", &[ty])?;
            ty
        }
        _ => requested.unwrap_or(ElemType::F32),
    };
    match ty {
        ElemType::F32 => typed::<f32>(args, global),
        ElemType::F64 => typed::<f64>(args, global),
        other => Err(Error::invalid(format!("the recurrence is built for f32 and f64, not {}", other.name()))),
    }
}

/// The number of steps: the files' (which must agree with each other and with `n` when given),
/// else `n`.
fn steps(args: &RecurrenceArgs, ty: ElemType) -> Result<u64> {
    let (Some(a), Some(b)) = (&args.a, &args.b) else {
        return args.n.ok_or_else(|| Error::invalid("give N, the number of steps, or --a and --b"));
    };
    let len = io::input_len(a, ty)?;
    io::check_same_len(b, "--b", ty, len)?;
    match args.n {
        Some(n) if n != len => Err(Error::invalid(format!("N is {n} but --a has {len} values"))),
        _ => Ok(len),
    }
}

fn typed<F: RecurrenceFloat + io::FileElement>(args: &RecurrenceArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let count = steps(args, F::TYPE)?;
    args.out.check(&[])?;
    let n = host_len(count, "N")?;
    let plan = gpu_scan::plan::scan::recurrence(&tuning, F::TYPE, count, args.kernel.0, true)?;
    let what = format!("a recurrence of {count} {} steps", F::TYPE.name());
    let (values, maps) =
        (bytes_of(count, F::TYPE.size() as u64, &what)?, bytes_of(count, 2 * F::TYPE.size() as u64, &what)?);
    // a and b, their maps, the maps read back and their x, and the CPU's x and scales in f64.
    let needs = Needs {
        host: total(&[2 * values, maps, maps, values, bytes_of(count, 16, &what)?], &what)?,
        device: total(&[maps, maps, plan.state.bytes()], &what)?,
        what,
    };
    let (lo, hi) = args.factors;
    // Files are read before the GPU opens; generated values are made after.
    let given = match (&args.a, &args.b) {
        (Some(a), Some(b)) => {
            memory::check(&needs.what, needs.host)?;
            Some((io::read::<F>(a)?, io::read::<F>(b)?))
        }
        _ => None,
    };
    let factors = given.as_ref().map(|_| None).unwrap_or(Some(args.factors));
    let make = || -> Result<Recurrence<F>> {
        let (a, b) = match given {
            Some(ab) => ab,
            None => (
                memory::uniform::<F>(args.runs.seed, n, lo, hi)?,
                memory::uniform::<F>(args.runs.seed ^ 1, n, -1.0, 1.0)?,
            ),
        };
        let opts = RecurrenceOptions::new(F::from_f64(args.x0)).kernel(args.kernel.0);
        Ok(Recurrence { a, b, factors, opts, buffers: None, temp: TempStorage::new(), got: Vec::new() })
    };
    let ran = experiment::run(global, args.runs.iters, &needs, make)?;
    let got = &ran.exp.got;
    let force = args.out.force;
    let outputs =
        args.out.output.iter().map(|p| (p.as_path(), Box::new(move |p: &Path| io::write(p, got, force)) as _));
    io::write_outputs(ran.passed, outputs.collect())?;
    Ok(ran.passed)
}

/// The first step whose result is wrong: not finite where the loop's `want[t]` is, or farther
/// from it than `bound(t)` (a NaN error or bound counts as farther); where `want[t]` is not
/// finite, anything but the same value (or NaN for NaN).
fn first_wrong(got: &[f64], want: &[f64], bound: impl Fn(usize) -> f64) -> Option<usize> {
    (0..got.len()).find(|&t| {
        let (g, w) = (got[t], want[t]);
        if w.is_finite() {
            !g.is_finite() || (g - w).abs().partial_cmp(&bound(t)).is_none_or(|o| o.is_gt())
        } else {
            !(g == w || (g.is_nan() && w.is_nan()))
        }
    })
}

type Maps<F> = CudaSlice<<F as RecurrenceFloat>::Map>;

struct Recurrence<F: RecurrenceFloat> {
    a: Vec<F>,
    b: Vec<F>,
    /// The range of generated factors (none for a file's).
    factors: Option<(f64, f64)>,
    opts: RecurrenceOptions<F>,
    /// The maps and the results.
    buffers: Option<[Maps<F>; 2]>,
    temp: TempStorage,
    /// The x the last check read back.
    got: Vec<F>,
}

impl<F: RecurrenceFloat> Experiment for Recurrence<F> {
    fn title(&self) -> String {
        let ranges = match self.factors {
            Some((lo, hi)) => format!(", a in [{lo}, {hi}), b in [-1, 1)"),
            None => String::new(),
        };
        format!(
            "recurrence: n={} {}, x[t] = a[t]*x[t-1] + b[t]{ranges}, x0 = {}",
            self.a.len(),
            F::TYPE.name(),
            self.opts.x0
        )
    }

    fn traffic(&self) -> (u64, u64) {
        let bytes = (self.a.len() * std::mem::size_of::<F::Map>()) as u64;
        (2 * bytes, bytes)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let maps = memory::from_fn(self.a.len(), "the recurrence's maps", |t| F::map(self.a[t], self.b[t]))?;
        let d_maps = gpu.upload(&stream, "recurrence maps", &maps)?;
        let d_out = gpu.alloc_zeros::<F::Map>(&stream, "recurrence output", maps.len())?;
        self.buffers = Some([d_maps, d_out]);
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let [maps, out] = self.buffers.as_mut().expect("prepared");
        gpu.recurrence::<F>(gpu.stream(), maps, out, &self.opts, &mut self.temp)
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let [_, out] = self.buffers.as_ref().expect("prepared");
        let got: Vec<F> = gpu.stream().clone_dtoh(out)?.into_iter().map(F::x).collect();
        let n = got.len();
        let (x, s) = reference::recurrence(&self.a, &self.b, self.opts.x0);
        let eps = if F::TYPE.size() == 4 { f32::EPSILON as f64 } else { f64::EPSILON };
        let bound = |t: usize| 2.0 * roundings(Algorithm::SinglePass, t, n) * eps * s[t];
        let wide: Vec<f64> = got.iter().map(|&g| g.into()).collect();
        let err = |t: usize| (wide[t] - x[t]).abs();
        let worst = (0..n).map(|t| err(t) / s[t].max(f64::MIN_POSITIVE)).fold(0.0, f64::max);
        let wrong = first_wrong(&wide, &x, bound)
            .map(|t| format!("x[{t}] = {}, the loop gives {} (bound {:e})", got[t], x[t], bound(t)));
        let mut check = Check::new(format!("{n} values within the rounding bound"), wrong);
        check.notes.push(format!("largest error: {worst:.2e} of the magnitude |a|-recurrence"));
        self.got = got;
        Ok(check)
    }
}

#[cfg(test)]
mod tests {
    use super::first_wrong;

    #[test]
    fn a_nan_or_infinite_result_fails_where_the_loop_is_finite() {
        let bound = |_| 1e-6;
        assert_eq!(first_wrong(&[1.0, 2.0], &[1.0, 2.0 + 1e-7], bound), None);
        assert_eq!(first_wrong(&[1.0, 2.1], &[1.0, 2.0], bound), Some(1));
        assert_eq!(first_wrong(&[1.0, f64::NAN], &[1.0, 2.0], bound), Some(1));
        assert_eq!(first_wrong(&[f64::INFINITY], &[1.0], |_| f64::INFINITY), Some(0));
        assert_eq!(first_wrong(&[f64::NEG_INFINITY], &[1.0], bound), Some(0));
    }

    #[test]
    fn where_the_loop_overflows_the_result_must_match_it() {
        let bound = |_| 1e-6;
        assert_eq!(first_wrong(&[f64::INFINITY], &[f64::INFINITY], bound), None);
        assert_eq!(first_wrong(&[f64::NAN], &[f64::NAN], bound), None);
        assert_eq!(first_wrong(&[1.0], &[f64::INFINITY], bound), Some(0));
        assert_eq!(first_wrong(&[f64::NEG_INFINITY], &[f64::INFINITY], bound), Some(0));
    }
}
