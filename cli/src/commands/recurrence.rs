//! `recurrence`: the linear recurrence x[t] = a[t]*x[t-1] + b[t] as a scan of affine maps,
//! checked against the sequential loop within its rounding bound.

use crate::args::{host_len, parse_range, positive, Global, Kernel, RecurrenceType, Runs};
use crate::experiment::{self, Check, Experiment, Needs};
use crate::memory::{self, bytes_of, total};
use clap::Args;
use gpu_scan::apps::recurrence::RecurrenceFloat;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::{apps as reference, verify::roundings};
use gpu_scan::{Algorithm, ElemType, Error, Gpu, RecurrenceOptions, Result, TempStorage};

#[derive(Args)]
pub struct RecurrenceArgs {
    /// Number of steps t (100000000, 1e8, 2^28).
    #[arg(value_parser = positive)]
    n: u64,
    /// Float type of a, b and x.
    #[arg(long = "type", value_name = "TYPE", default_value = "f32")]
    ty: RecurrenceType,
    /// x[-1].
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    x0: f64,
    /// Range of the factors a[t] (`lo:hi`); the offsets b[t] are uniform in [-1, 1).
    #[arg(long, default_value = "0.9:1", allow_hyphen_values = true, value_parser = parse_range)]
    factors: (f64, f64),
    /// The kernel (auto picks by size).
    #[arg(long, default_value = "auto")]
    kernel: Kernel,
    #[command(flatten)]
    runs: Runs,
}

pub fn run(args: &RecurrenceArgs, global: &Global) -> Result<bool> {
    match args.ty.0 {
        ElemType::F32 => typed::<f32>(args, global),
        ElemType::F64 => typed::<f64>(args, global),
        other => Err(Error::invalid(format!("the recurrence is built for f32 and f64, not {}", other.name()))),
    }
}

fn typed<F: RecurrenceFloat>(args: &RecurrenceArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let n = host_len(args.n, "N")?;
    let plan = gpu_scan::plan::scan::recurrence(&tuning, F::TYPE, args.n, args.kernel.0, true)?;
    let what = format!("a recurrence of {} {} steps", args.n, F::TYPE.name());
    let (values, maps) =
        (bytes_of(args.n, F::TYPE.size() as u64, &what)?, bytes_of(args.n, 2 * F::TYPE.size() as u64, &what)?);
    // a and b, their maps, the maps read back and their x, and the CPU's x and scales in f64.
    let needs = Needs {
        host: total(&[2 * values, maps, maps, values, bytes_of(args.n, 16, &what)?], &what)?,
        device: total(&[maps, maps, plan.state.bytes()], &what)?,
        what,
    };
    let (lo, hi) = args.factors;
    let make = || -> Result<Recurrence<F>> {
        let a = memory::uniform::<F>(args.runs.seed, n, lo, hi)?;
        let b = memory::uniform::<F>(args.runs.seed ^ 1, n, -1.0, 1.0)?;
        let opts = RecurrenceOptions::new(F::from_f64(args.x0)).kernel(args.kernel.0);
        Ok(Recurrence { a, b, factors: args.factors, opts, buffers: None, temp: TempStorage::new() })
    };
    Ok(experiment::run(global, args.runs.iters, &needs, make)?.passed)
}

type Maps<F> = CudaSlice<<F as RecurrenceFloat>::Map>;

struct Recurrence<F: RecurrenceFloat> {
    a: Vec<F>,
    b: Vec<F>,
    factors: (f64, f64),
    opts: RecurrenceOptions<F>,
    /// The maps and the results.
    buffers: Option<[Maps<F>; 2]>,
    temp: TempStorage,
}

impl<F: RecurrenceFloat> Experiment for Recurrence<F> {
    fn title(&self) -> String {
        let (lo, hi) = self.factors;
        format!(
            "recurrence: n={} {}, x[t] = a[t]*x[t-1] + b[t], a in [{lo}, {hi}), b in [-1, 1), x0 = {}",
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
        let err = |t: usize| (got[t].into() - x[t]).abs();
        let worst = (0..n).map(|t| err(t) / s[t].max(f64::MIN_POSITIVE)).fold(0.0, f64::max);
        let wrong = (0..n)
            .find(|&t| err(t) > bound(t))
            .map(|t| format!("x[{t}] = {}, the loop gives {} (bound {:e})", got[t], x[t], bound(t)));
        let mut check = Check::new(format!("{n} values within the rounding bound"), wrong);
        check.notes.push(format!("largest error: {worst:.2e} of the magnitude |a|-recurrence"));
        Ok(check)
    }
}
