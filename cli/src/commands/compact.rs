//! `compact`: stream compaction of a file's values or CUB's benchmark values, and the positions
//! of the kept elements, checked and timed (against CUB's DeviceSelect::If with a same-run
//! baseline).

use crate::args::{host_len, positive, types_of, CompactKernelArg, CompactType, Files, Global, IndexType, Runs};
use crate::experiment::{self, first_difference, first_difference_bits, Check, Experiment, Needs};
use crate::io;
use crate::memory::{self, bytes_of, total};
use crate::sweep::Baseline;
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::apps as reference;
use gpu_scan::{input, with_elem_type, CompactOptions, ElemType, Element, Error, Gpu, Keep, Result, TempStorage};
use scan_abi::kernel::predicate;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct CompactArgs {
    /// Number of elements (100000000, 1e8, 2^28; optional with --input). Generated values follow
    /// CUB's benchmark: (i * 2654435761) mod 7.
    #[arg(value_parser = positive)]
    n: Option<u64>,
    /// Element type (default u32; a .npy input brings its own).
    #[arg(long = "type", value_name = "TYPE")]
    ty: Option<CompactType>,
    /// What to keep: `gt:<threshold>`, `nonzero`, or `flags` (the --flags file's non-zero bytes,
    /// or a random byte array, half set).
    #[arg(long, default_value = "gt:3", allow_hyphen_values = true)]
    keep: String,
    /// With --keep flags and --input: a flag per element of the input, keeping where non-zero: a
    /// u8 file, or a NumPy bool array (`np.save("f.npy", x > 3)`).
    #[arg(long, value_name = "FILE", requires = "input")]
    flags: Option<PathBuf>,
    #[command(flatten)]
    files: Files,
    /// Write the input positions of the kept elements to this file (for a comparison, its flags
    /// are made on the GPU first).
    #[arg(long, value_name = "FILE")]
    indices: Option<PathBuf>,
    /// The type of the --indices positions (default u32 up to 2^32 - 1 elements, u64 beyond).
    #[arg(long, value_name = "TYPE", requires = "indices")]
    index_type: Option<IndexType>,
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
    let allowed = types_of(scan_abi::Family::Compact);
    let ty = args.files.elem_type(args.ty.map(|t| t.0), ElemType::U32, &allowed, "compact")?;
    let count = args.files.len(ty, args.n)?;
    let index_type = match args.index_type.map(|t| t.0) {
        Some(ElemType::U32) if count > 1 << 32 => {
            return Err(Error::invalid(format!("--index-type u32 holds positions below 2^32, not of {count} elements")))
        }
        Some(t) => t,
        None if count > u32::MAX as u64 => ElemType::U64,
        None => ElemType::U32,
    };
    with_elem_type!(ty, T => match index_type {
        ElemType::U32 => typed::<T, u32>(args, global, count),
        _ => typed::<T, u64>(args, global, count),
    })
}

fn typed<T: io::FileElement, I: io::FileElement>(args: &CompactArgs, global: &Global, count: u64) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let keep = parse_keep::<T>(&args.keep)?;
    let n = host_len(count, "N")?;
    match (args.flags.is_some(), keep == Keep::Flags, args.files.input.is_some()) {
        (true, false, _) => return Err(Error::invalid("--flags goes with --keep flags")),
        (false, true, true) => return Err(Error::invalid("--keep flags with --input needs --flags FILE")),
        _ => {}
    }
    if let Some(f) = &args.flags {
        io::check_flags(f, "--flags", count)?;
    }
    args.files.out.check(&[("--indices", args.indices.as_deref())])?;
    let cub = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let cub_ms = match keep {
        Keep::Greater(t) if "3".parse::<T>().ok() == Some(t) && args.files.input.is_none() => {
            cub.as_ref().and_then(|c| c.get("select_if_gt3", T::TYPE.name(), count))
        }
        _ => None,
    };
    let pred = match keep {
        Keep::Greater(_) => predicate::GREATER,
        Keep::NonZero => predicate::NONZERO,
        Keep::Flags => predicate::FLAGS,
        other => return Err(Error::invalid(format!("the compaction keeping {other:?} has no command-line form"))),
    };
    let plan = gpu_scan::plan::compact::plan(&tuning, T::TYPE, count, pred, args.kernel.0, true)?;
    let what = format!("a compaction of {count} {}", T::TYPE.name());
    let bytes = bytes_of(count, T::TYPE.size() as u64, &what)?;
    let flags = if keep == Keep::Flags { count } else { 0 };
    let positions = match args.indices {
        Some(_) => bytes_of(count, 2 * I::TYPE.size() as u64, &what)?,
        None => 0,
    };
    // The positions of a comparison's kept elements are those of its flags, made on the device.
    let made = if args.indices.is_some() && keep != Keep::Flags { count } else { 0 };
    // The input, the flags, the result read back and the CPU's, the positions likewise.
    let needs = Needs {
        host: total(&[bytes, flags, bytes, bytes, positions], &what)?,
        device: total(&[bytes, flags, made, bytes, plan.state.bytes(), positions], &what)?,
        what,
    };
    let seed = args.runs.seed;
    // A file is read before the GPU opens; generated values are made after.
    let given = match &args.files.input {
        Some(path) => {
            memory::check(&needs.what, needs.host)?;
            Some((io::read::<T>(path)?, args.flags.as_deref().map(io::read_flags).transpose()?))
        }
        None => None,
    };
    let make = || -> Result<Compact<T, I>> {
        let (data, flags) = match given {
            Some(given) => given,
            None => {
                let flags = match keep {
                    Keep::Flags => Some(memory::from_fn(n, "the flags", |i| (input::bits(seed, i as u64) & 1) as u8)?),
                    _ => None,
                };
                (memory::cub_pattern::<T>(n)?, flags)
            }
        };
        Ok(Compact {
            spec: args.keep.clone(),
            data,
            flags,
            opts: CompactOptions::new(keep).kernel(args.kernel.0),
            positions: args.indices.is_some(),
            cub_ms,
            buffers: None,
            temp: TempStorage::new(),
            kept: 0,
            got: Vec::new(),
            got_positions: Vec::new(),
        })
    };
    let ran = experiment::run(global, args.runs.iters, &needs, make)?;
    let (kept, positions) = (&ran.exp.got, &ran.exp.got_positions);
    let force = args.files.out.force;
    let mut outputs: Vec<io::Output> = Vec::new();
    if let Some(p) = &args.files.out.output {
        outputs.push((p, Box::new(move |p: &Path| io::write(p, kept, force))));
    }
    if let Some(p) = &args.indices {
        outputs.push((p, Box::new(move |p: &Path| io::write(p, positions, force))));
    }
    io::write_outputs(ran.passed, outputs)?;
    Ok(ran.passed)
}

/// A compaction of `T`, and with `positions` the input positions (as `I`) of the kept elements.
struct Compact<T, I> {
    spec: String,
    data: Vec<T>,
    flags: Option<Vec<u8>>,
    opts: CompactOptions<T>,
    positions: bool,
    cub_ms: Option<f64>,
    buffers: Option<Device<T, I>>,
    temp: TempStorage,
    kept: u64,
    /// The kept elements the last check read back.
    got: Vec<T>,
    /// The kept elements' positions the last check read back.
    got_positions: Vec<I>,
}

/// The compaction's device buffers.
struct Device<T, I> {
    input: CudaSlice<T>,
    /// The flags given (`--keep flags`), or for the positions of a comparison's kept elements,
    /// those made on the GPU.
    flags: Option<CudaSlice<u8>>,
    output: CudaSlice<T>,
    count: CudaSlice<u64>,
    /// The positions and their count.
    positions: Option<(CudaSlice<I>, CudaSlice<u64>)>,
}

impl<T: Element, I: Element> Experiment for Compact<T, I> {
    fn title(&self) -> String {
        let positions = if self.positions { format!(", with {} positions", I::TYPE.name()) } else { String::new() };
        format!("compact: n={} {} keep {}{positions}", self.data.len(), T::TYPE.name(), self.spec)
    }

    fn traffic(&self) -> (u64, u64) {
        let (n, size) = (self.data.len() as u64, T::TYPE.size() as u64);
        let flags = self.flags.as_ref().map_or(0, |f| f.len() as u64);
        // The positions: the flags read and the kept positions written, after a comparison's
        // flags are made (the input read, a byte per element written).
        let made = if self.flags.is_none() { n * size + n } else { 0 };
        let positions = if self.positions { made + n + self.kept * I::TYPE.size() as u64 } else { 0 };
        (n * size + self.kept * size + flags + positions, n * size)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let n = self.data.len();
        let d_in = gpu.upload(&stream, "compaction input", &self.data)?;
        let d_flags = match (self.flags.as_deref(), self.positions) {
            (Some(f), _) => Some(gpu.upload(&stream, "compaction flags", f)?),
            (None, true) => Some(gpu.alloc_zeros::<u8>(&stream, "kept flags", n)?),
            (None, false) => None,
        };
        let d_out = gpu.alloc_zeros::<T>(&stream, "compaction output", n)?;
        let count = gpu.alloc_zeros::<u64>(&stream, "compaction count", 1)?;
        let positions = match self.positions {
            true => Some((
                gpu.alloc_zeros::<I>(&stream, "kept positions", n)?,
                gpu.alloc_zeros::<u64>(&stream, "kept positions' count", 1)?,
            )),
            false => None,
        };
        self.buffers = Some(Device { input: d_in, flags: d_flags, output: d_out, count, positions });
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let d = self.buffers.as_mut().expect("prepared");
        let (stream, t) = (gpu.stream(), &mut self.temp);
        match (self.opts.keep, d.flags.as_ref()) {
            (Keep::Flags, Some(f)) => {
                gpu.compact_flagged(stream, &d.input, f, &mut d.output, &mut d.count, &self.opts, t)?
            }
            _ => gpu.compact(stream, &d.input, &mut d.output, &mut d.count, &self.opts, t)?,
        }
        if let (Some((positions, count)), Some(f)) = (d.positions.as_mut(), d.flags.as_mut()) {
            // The positions have one kernel, which compacts flags: a comparison's are made first.
            if self.opts.keep != Keep::Flags {
                gpu.kept_flags(stream, &d.input, f, &self.opts)?;
            }
            gpu.flagged_indices(stream, f, positions, count, &CompactOptions::new(Keep::Flags), t)?;
        }
        Ok(())
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let stream = gpu.stream().clone();
        let d = self.buffers.as_ref().expect("prepared");
        self.kept = gpu.read_count(&stream, &d.count)?;
        let mut got = gpu.download(&stream, &d.output)?;
        let want = reference::compact(&self.data, self.flags.as_deref(), self.opts.keep);
        got.truncate(self.kept as usize);
        let mut wrong = first_difference_bits(&got, &want);
        if let Some((positions, count)) = &d.positions {
            let mut got = gpu.download(&stream, positions)?;
            got.truncate(gpu.read_count(&stream, count)? as usize);
            // Where the CPU's test of each element keeps it, whatever the GPU's flags were.
            let (keep, flags) = (self.opts.keep, self.flags.as_deref());
            let want: Vec<I> = (0..self.data.len())
                .filter(|&i| keep.keeps(self.data[i], flags.map_or(0, |f| f[i])))
                .map(|i| I::from_bits(i as u64))
                .collect();
            wrong = wrong.or_else(|| first_difference(&got, &want).map(|d| format!("positions: {d}")));
            self.got_positions = got;
        }
        let what = if self.positions { "kept elements and their positions" } else { "kept elements" };
        let mut check = Check::new(format!("{} {what}", self.kept), wrong);
        self.got = got;
        check.notes.push(format!("kept: {} of {}", self.kept, self.data.len()));
        Ok(check)
    }

    fn cub_ms(&self) -> Option<f64> {
        self.cub_ms
    }
}
