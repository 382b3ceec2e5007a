//! `compact`: stream compaction of CUB's benchmark values, checked and timed (against CUB's
//! DeviceSelect::If with a same-run baseline).

use crate::args::{host_len, positive, CompactKernelArg, CompactType, Global, Runs};
use crate::experiment::{self, first_difference, Check, Experiment, Needs};
use crate::memory::{self, bytes_of, total};
use crate::sweep::Baseline;
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::apps as reference;
use gpu_scan::{input, with_elem_type, CompactOptions, Element, Error, Gpu, Keep, Result, TempStorage};
use scan_abi::kernel::predicate;
use std::path::PathBuf;

#[derive(Args)]
pub struct CompactArgs {
    /// Number of elements (100000000, 1e8, 2^28). Values follow CUB's benchmark: (i * 2654435761) mod 7.
    #[arg(value_parser = positive)]
    n: u64,
    /// Element type.
    #[arg(long = "type", value_name = "TYPE", default_value = "u32")]
    ty: CompactType,
    /// What to keep: `gt:<threshold>`, `nonzero`, or `flags` (a random byte array, half set).
    #[arg(long, default_value = "gt:3", allow_hyphen_values = true)]
    keep: String,
    /// The kernel (auto picks by size, type and what is kept).
    #[arg(long, default_value = "auto")]
    kernel: CompactKernelArg,
    #[command(flatten)]
    runs: Runs,
    /// CSV of the CUB baseline from the same run: adds CUB's select_if_gt3 time.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

fn parse_keep<T: Element>(s: &str) -> Result<Keep<T>> {
    match s {
        "nonzero" => Ok(Keep::NonZero),
        "flags" => Ok(Keep::Flags),
        _ => {
            let t = s
                .strip_prefix("gt:")
                .ok_or_else(|| Error::invalid(format!("--keep `{s}`: expected gt:<threshold>, nonzero or flags")))?;
            let t = t
                .parse::<T>()
                .map_err(|_| Error::invalid(format!("--keep `{s}`: `{t}` is not a valid {} value", T::TYPE.name())))?;
            Ok(Keep::Greater(t))
        }
    }
}

pub fn run(args: &CompactArgs, global: &Global) -> Result<bool> {
    with_elem_type!(args.ty.0, T => typed::<T>(args, global))
}

fn typed<T: Element>(args: &CompactArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let keep = parse_keep::<T>(&args.keep)?;
    let n = host_len(args.n, "N")?;
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let cub_ms = match keep {
        Keep::Greater(t) if "3".parse::<T>().ok() == Some(t) => {
            cub.as_ref().and_then(|c| c.get("select_if_gt3", T::TYPE.name(), args.n))
        }
        _ => None,
    };
    let pred = match keep {
        Keep::Greater(_) => predicate::GREATER,
        Keep::NonZero => predicate::NONZERO,
        Keep::Flags => predicate::FLAGS,
        other => return Err(Error::invalid(format!("the compaction keeping {other:?} has no command-line form"))),
    };
    let plan = gpu_scan::plan::compact::plan(&tuning, T::TYPE, args.n, pred, args.kernel.0, true)?;
    let what = format!("a compaction of {} {}", args.n, T::TYPE.name());
    let bytes = bytes_of(args.n, T::TYPE.size() as u64, &what)?;
    let flags = if keep == Keep::Flags { args.n } else { 0 };
    // The input, the flags, the result read back and the CPU's.
    let needs = Needs {
        host: total(&[bytes, flags, bytes, bytes], &what)?,
        device: total(&[bytes, flags, bytes, plan.state.bytes()], &what)?,
        what,
    };
    let seed = args.runs.seed;
    let make = || -> Result<Compact<T>> {
        let flags = match keep {
            Keep::Flags => Some(memory::from_fn(n, "the flags", |i| (input::bits(seed, i as u64) & 1) as u8)?),
            _ => None,
        };
        Ok(Compact {
            spec: args.keep.clone(),
            data: memory::cub_pattern::<T>(n)?,
            flags,
            opts: CompactOptions::new(keep).kernel(args.kernel.0),
            cub_ms,
            buffers: None,
            temp: TempStorage::new(),
            kept: 0,
        })
    };
    Ok(experiment::run(global, args.runs.iters, &needs, make)?.passed)
}

struct Compact<T> {
    spec: String,
    data: Vec<T>,
    flags: Option<Vec<u8>>,
    opts: CompactOptions<T>,
    cub_ms: Option<f64>,
    buffers: Option<Device<T>>,
    temp: TempStorage,
    kept: u64,
}

/// The compaction's device buffers.
struct Device<T> {
    input: CudaSlice<T>,
    flags: Option<CudaSlice<u8>>,
    output: CudaSlice<T>,
    count: CudaSlice<u64>,
}

impl<T: Element> Experiment for Compact<T> {
    fn title(&self) -> String {
        format!("compact: n={} {} keep {}", self.data.len(), T::TYPE.name(), self.spec)
    }

    fn traffic(&self) -> (u64, u64) {
        let (n, size) = (self.data.len() as u64, T::TYPE.size() as u64);
        let flags = self.flags.as_ref().map_or(0, |f| f.len() as u64);
        (n * size + self.kept * size + flags, n * size)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let d_in = gpu.upload(&stream, "compaction input", &self.data)?;
        let d_flags = self.flags.as_deref().map(|f| gpu.upload(&stream, "compaction flags", f)).transpose()?;
        let d_out = gpu.alloc_zeros::<T>(&stream, "compaction output", self.data.len())?;
        let count = gpu.alloc_zeros::<u64>(&stream, "compaction count", 1)?;
        self.buffers = Some(Device { input: d_in, flags: d_flags, output: d_out, count });
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let d = self.buffers.as_mut().expect("prepared");
        let (stream, t) = (gpu.stream(), &mut self.temp);
        match d.flags.as_ref() {
            Some(f) => gpu.compact_flagged(stream, &d.input, f, &mut d.output, &mut d.count, &self.opts, t),
            None => gpu.compact(stream, &d.input, &mut d.output, &mut d.count, &self.opts, t),
        }
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let stream = gpu.stream().clone();
        let d = self.buffers.as_ref().expect("prepared");
        self.kept = gpu.read_count(&stream, &d.count)?;
        let got = gpu.download(&stream, &d.output)?;
        let want = reference::compact(&self.data, self.flags.as_deref(), self.opts.keep);
        let kept = (self.kept as usize).min(got.len());
        let mut check = Check::new(format!("{} kept elements", self.kept), first_difference(&got[..kept], &want));
        check.notes.push(format!("kept: {} of {}", self.kept, self.data.len()));
        Ok(check)
    }

    fn cub_ms(&self) -> Option<f64> {
        self.cub_ms
    }
}
